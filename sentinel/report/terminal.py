"""Human terminal output: findings grouped by file, colour only when asked, one summary line last.

The other reporters reuse the phrasing helpers here (``redact``, ``check_status_parts``,
``summary_line``) so every format says the same thing in the same words.
"""

from __future__ import annotations

import re

from sentinel.lazyre import lazy_compile
from sentinel.models import CheckResult, CheckStatus, Finding, Severity, Verdict
# The one redaction path of every output (secrets masked, bytes that were not UTF-8 escaped, paths
# shown as git quotes them): reporters scrub the verdict first; `redact` is re-exported for them.
from sentinel.redact import redact, scrub_verdict  # noqa: F401

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_GREEN = "\033[32m"
_RED = "\033[31m"
_YELLOW = "\033[33m"
_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"

_CODE_WIDTH = 160
# Recall is a reminder, not a report: a few lines at most.
_RECALL_GROUPS = 3
_RECALL_ITEMS = 2
_REASON_WIDTH = 70

# Control characters (ANSI escapes included) and bidi overrides from a changed file must not
# drive the terminal or reorder what the reader sees.
_UNSAFE = lazy_compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

def clean(text: str) -> str:
    """Redacted, single-line, free of terminal control sequences."""
    text = redact(text)
    if "\t" in text:
        text = text.replace("\t", "    ")
    if text.isascii() and text.isprintable():
        return text  # the common case, without compiling the pattern
    return _UNSAFE.sub(_visible, text)


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "\u2026"


def cut_words(text: str, width: int) -> str:
    """At most `width` characters on one line, cut at a word boundary with an ellipsis (sentinel.recall_view)."""
    from sentinel.recall_view import shorten

    return shorten(text, width)


def location(f: Finding) -> str:
    if not f.line:
        return "-"
    return f"{f.line}:{f.column}" if f.column else str(f.line)


def group_by_path(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings per file, files in first-seen order, each file's findings by line."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f)
    for items in groups.values():
        items.sort(key=Finding.sort_key)
    return groups


def check_status_parts(checks: list[CheckResult], fail_level: Severity) -> list[tuple[CheckStatus, str]]:
    """One short phrase per check: 'chaos failed (2)', 'drift skipped (no task)'."""
    parts = []
    for r in checks:
        n = len(r.findings)
        if r.status is CheckStatus.FAILED:
            text = f"{r.check} failed ({n})"
        elif r.status is CheckStatus.PASSED:
            below = sum(1 for f in r.findings if f.severity.rank < fail_level.rank)
            text = f"{r.check} passed" + (f" ({below} below fail-level)" if below else "")
        elif r.status is CheckStatus.SKIPPED:
            # the reason up to its parenthesised fix: the status line stays one line; JSON has it whole
            reason = shorten(clean(r.reason).split(" (", 1)[0], _REASON_WIDTH)
            text = f"{r.check} skipped" + (f" ({reason})" if reason else "")
        else:
            text = f"{r.check} crashed"
        parts.append((r.status, text))
    return parts


def verdict_state(verdict: Verdict, exit_zero: bool = False) -> str:
    """passed, failed or error; with ``exit_zero`` (``--exit-zero``) a failed gate says it exits 0 anyway."""
    if verdict.errored:
        return "error"
    if verdict.passed:
        return "passed"
    return "failed (exit 0: --exit-zero)" if exit_zero else "failed"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def counts_phrase(verdict: Verdict) -> str:
    counts = verdict.counts()
    parts = [_plural(counts[s.value], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
             if counts[s.value]]
    return ", ".join(parts) or "no findings"


def summary_line(verdict: Verdict, exit_zero: bool = False) -> str:
    """The one line every format ends with (the CLI echoes it when the report goes to a file)."""
    # "file(s)"/"added line(s)" wording is relied on by scripts and tests: keep it stable.
    text = (f"sentinel: {verdict_state(verdict, exit_zero)} - {counts_phrase(verdict)} in "
            f"{verdict.files_changed} file(s), {verdict.lines_added} added line(s) "
            f"[{clean(verdict.source)}, fail-level {verdict.fail_level.value}]")
    extra = []
    if verdict.suppressed:
        extra.append(f"{verdict.suppressed} suppressed inline")
    if verdict.baselined:
        extra.append(f"{verdict.baselined} in baseline")
    if verdict.not_checked:
        extra.append(f"{len(verdict.not_checked)} file(s) not checked")
    errored = sum(1 for r in verdict.checks if r.status is CheckStatus.ERROR)
    if errored:
        extra.append(f"{_plural(errored, 'check')} crashed")
    if extra:
        text += " (" + ", ".join(extra) + ")"
    return text


def recall_lines(verdict: Verdict) -> list[tuple[str, str]]:
    """The recall section as (kind, text) lines, trimmed to a few; kind is 'head', 'item' or 'dim'. What it
    shows is sentinel.recall_view's, as on every other surface."""
    if not verdict.recall and not verdict.recall_note:
        return []
    from sentinel import recall_view

    out: list[tuple[str, str]] = []
    if verdict.recall:
        out.append(("head", recall_view.headline(verdict)))
    shown, more = recall_view.groups(verdict, _RECALL_GROUPS, _RECALL_ITEMS, max_patterns=1)
    for group in shown:
        # The title already names the problem (the first finding's message); repeating the rule
        # code would make `grep -c SEN301` on the output count recall lines as findings.
        out.append(("item", f"{clean(group.title)} ({_plural(group.finding_count, 'finding')})"))
        for it in group.items:
            out.extend(_recall_item(it))
        if group.hidden:
            out.append(("dim", f"  ... {group.hidden} more (--format json has them all)"))
    if more:
        out.append(("dim", f"  ... {more} more group(s) (--format json has them all)"))
    if verdict.recall_note:
        out.append(("dim", f"  ({clean(verdict.recall_note)})"))
    return out


_RECALL_WIDTH = 132  # a recall line, indentation included


def _recall_item(it) -> list[tuple[str, str]]:
    """A past fix in three lines: why it is shown and where it comes from; the problem; the fix and the card to
    open. An earlier attempt and a pattern in one."""
    from sentinel.recall_view import shorten as cut

    if it.kind == "pattern":
        return [("item", cut(f"  recurring: {clean(it.headline)} ({clean(it.why)})", _RECALL_WIDTH))]
    if it.kind == "attempt":
        return [("item", cut(f"  {clean(it.why)}: {clean(it.headline)}", _RECALL_WIDTH))]
    lead = it.why if it.kind == "fix" and it.why else it.label
    if it.kind == "fix" and it.label != "this project's past fix":
        lead = f"{it.label}: {it.why}" if it.why else it.label
    where = f" ({clean(it.origin)})" if it.origin else ""
    score = f" {it.score:.2f}" if it.score is not None else ""
    tail = f" [{clean(it.card_id)}{score}]"
    lines = [("item", cut(f"  {clean(lead)}{where}", _RECALL_WIDTH)),
             ("dim", cut(f"    problem: {clean(it.headline)}", _RECALL_WIDTH))]
    fix = cut(f"    fix: {clean(it.fix)}", _RECALL_WIDTH - len(tail)) if it.fix else "   "
    return lines + [("dim", fix + tail)]


def suppression_hint(f: Finding) -> str:
    """How to silence a rule, shown once per rule and run (and comment syntax): the pragma for its line, in
    the file's comment syntax, else the config line."""
    from sentinel.report.silence import phrase

    return phrase(f)


def render(verdict: Verdict, color: bool = False, exit_zero: bool = False, **_) -> str:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    def c(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    out: list[str] = []
    seen: set[str] = set()
    for path, items in group_by_path(verdict.findings).items():
        out.append(c(clean(path) or "(whole change)", _BOLD))
        for f in items:
            sev = f.severity.value
            out.append(f"  {location(f):>8}  {c(sev, _COLORS[f.severity])}{' ' * (7 - len(sev))}  {f.rule}  "
                       f"{clean(f.message)}")
            code = clean(f.code).strip()
            if code:
                out.append(c(f"{'':12}| {shorten(code, _CODE_WIDTH)}", _DIM))
            if f.hint:
                out.append(c(f"{'':12}hint: {clean(f.hint)}", _DIM))
            note = suppression_hint(f)
            if note not in seen:  # once per rule and comment syntax
                seen.add(note)
                out.append(c(f"{'':12}{note}", _DIM))

    recall = recall_lines(verdict)
    if recall:
        if out:
            out.append("")
        styles = {"head": _BOLD, "dim": _DIM}
        out.extend(c(text, styles[kind]) if kind in styles else text for kind, text in recall)

    if out:
        out.append("")
    if verdict.checks:
        colors = {CheckStatus.PASSED: _GREEN, CheckStatus.FAILED: _RED, CheckStatus.SKIPPED: _YELLOW,
                  CheckStatus.ERROR: _RED}
        phrases = [c(text, colors[status]) for status, text in check_status_parts(verdict.checks, verdict.fail_level)]
        out.append("checks: " + ", ".join(phrases))
    for r in verdict.checks:
        if r.status is CheckStatus.ERROR:
            out.append(c(f"error: check '{r.check}' crashed: {clean(r.reason) or 'no reason given'}", _RED))
    for nc in verdict.not_checked:
        out.append(c(f"{clean(nc.path)}: not checked ({clean(nc.reason)})", _YELLOW))
    color_summary = _GREEN if verdict.passed else _RED
    out.append(c(summary_line(verdict, exit_zero), _BOLD + color_summary))
    return "\n".join(out) + "\n"
