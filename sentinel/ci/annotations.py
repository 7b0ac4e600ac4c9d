"""Workflow-command annotations under GitHub's cap.

GitHub shows at most 10 annotations of each kind (error, warning, notice) per step and drops
the rest without a word, so we choose which 10: highest severity first (kinds are separate
budgets), then the order of the diff (file order, then line). One plain line says how many
more there are and that the step summary lists them all.
"""

from __future__ import annotations

from sentinel.models import CheckStatus, Verdict
from sentinel.report.github import COMMANDS, annotation, command
from sentinel.redact import display_path, scrub_verdict
from sentinel.report.terminal import redact

PER_KIND = 10


def _diff_order(verdict: Verdict, file_order: list[str]):
    index = {p: i for i, p in enumerate(file_order)}
    return lambda f: (-f.severity.rank, index.get(f.path, len(index)), f.path, f.line or 0, f.column or 0, f.rule)


def render(verdict: Verdict, file_order: list[str] | None = None, rules: dict | None = None,
           per_kind: int = PER_KIND) -> tuple[str, int]:
    """(workflow commands to print, number of items left out)."""
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    items: list[tuple[str, str]] = []
    # A crashed check matters more than any single finding: it goes first in the error budget.
    for r in verdict.checks:
        if r.status is CheckStatus.ERROR:
            items.append(("error", command("error", f"check '{r.check}' crashed: {redact(r.reason) or 'no reason'}",
                                           title=f"sentinel: {r.check} crashed")))
    order = [display_path(p) for p in file_order or []]  # as the scrubbed verdict shows them
    for f in sorted(verdict.findings, key=_diff_order(verdict, order)):
        items.append((COMMANDS[f.severity], annotation(f, rules)))
    for nc in verdict.not_checked:
        items.append(("warning", command("warning", f"not checked: {redact(nc.reason)}", file=nc.path,
                                         title="sentinel: file not checked")))
    used = {"error": 0, "warning": 0, "notice": 0}
    out: list[str] = []
    left_out = 0
    for kind, text in items:
        if used[kind] >= per_kind:
            left_out += 1
            continue
        used[kind] += 1
        out.append(text)
    if left_out:
        out.append(f"sentinel: {left_out} more finding(s) not annotated (GitHub shows at most {per_kind} "
                   "annotations of each severity per step): the job summary lists them all")
    return ("\n".join(out) + "\n") if out else "", left_out
