"""`sentinel check --fix / --unsafe-fixes / --diff-fixes`: what the command prints and returns.

The pre-commit convention: when files were modified the run exits 1, so the commit stops and the user
reviews and re-stages them. The report that follows lists only the findings that are left.
"""

from __future__ import annotations

import sys

from sentinel.fix import planner
from sentinel.fix.model import Plan
from sentinel.models import CheckStatus, Verdict
from sentinel.redact import display_path


def make_plan(change, config, verdict: Verdict, unsafe: bool) -> Plan:
    return planner.plan(change, verdict.findings, config, unsafe=unsafe)


def _say(text: str) -> None:
    sys.stderr.write(f"sentinel: {text}\n")


def _report_refusals(plan: Plan) -> None:
    for path, why in plan.refused:
        _say(f"not fixed: {display_path(path)}: {why}")
    for fp in plan.files:
        for finding, why in fp.not_fixed:
            _say(f"not fixed: {display_path(fp.path)}:{finding.line}: {finding.rule}: {why}")
    if plan.unsafe_skipped:
        _say(f"{plan.unsafe_skipped} more finding(s) have an unsafe fix (behaviour may change): review them "
             "with --diff-fixes --unsafe-fixes, apply with --fix --unsafe-fixes")


def show_diff(plan: Plan) -> bool:
    """Print the fixes as a unified diff (nothing is written); True when there is anything to apply."""
    from sentinel.redact import redact

    for fp in plan.changed_files:
        # Printed like every other output: a secret on a line of the diff is masked (that hunk then no
        # longer applies as is; the credential finding says what to do about the secret itself).
        sys.stdout.write("".join(redact(line) for line in planner.unified_diff(fp).splitlines(keepends=True)))
    _report_refusals(plan)
    fixed = plan.fixed
    if fixed:
        _say(f"{len(fixed)} finding(s) would be fixed in {len(plan.changed_files)} file(s) (nothing written)")
    else:
        _say("no finding to fix")
    return bool(fixed)


def apply(plan: Plan, root: str | None) -> list[str]:
    written = planner.write(plan, root)
    _report_refusals(plan)
    if written:
        count = sum(len(fp.fixes) for fp in plan.changed_files if fp.path in written)
        _say(f"fixed {count} finding(s) in {len(written)} file(s): {', '.join(map(display_path, written))}")
        _say("review the changes and stage them (git add) before committing again")
    return written


def without_fixed(verdict: Verdict, plan: Plan, written: list[str]) -> Verdict:
    """The verdict with the findings that were fixed on disk taken out, outcome recomputed."""
    gone = {id(fx.finding) for fp in plan.changed_files if fp.path in written for fx in fp.fixes}
    if not gone:
        return verdict
    verdict.findings = [f for f in verdict.findings if id(f) not in gone]
    fail = verdict.fail_level.rank
    for r in verdict.checks:
        r.findings = [f for f in r.findings if id(f) not in gone]
        if r.status is CheckStatus.FAILED and not any(f.severity.rank >= fail for f in r.findings):
            r.status = CheckStatus.PASSED
    verdict.passed = not verdict.errored and not any(f.severity.rank >= fail for f in verdict.findings)
    return verdict
