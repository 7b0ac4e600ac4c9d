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
_RECALL_TEXT = 110
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
    """At most `width` characters on one line, cut at a word boundary (a single word longer than that is cut
    inside it), with an ellipsis when anything was cut."""
    text = " ".join((text or "").split())
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    return (head[:space] if space > width // 3 else head).rstrip(" ,;:") + "\u2026"


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


def verdict_state(verdict: Verdict) -> str:
    if verdict.errored:
        return "error"
    return "passed" if verdict.passed else "failed"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def counts_phrase(verdict: Verdict) -> str:
    counts = verdict.counts()
    parts = [_plural(counts[s.value], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
             if counts[s.value]]
    return ", ".join(parts) or "no findings"


def summary_line(verdict: Verdict) -> str:
    """The one line every format ends with (the CLI echoes it when the report goes to a file)."""
    # "file(s)"/"added line(s)" wording is relied on by scripts and tests: keep it stable.
    text = (f"sentinel: {verdict_state(verdict)} - {counts_phrase(verdict)} in {verdict.files_changed} file(s), "
            f"{verdict.lines_added} added line(s) [{clean(verdict.source)}, fail-level {verdict.fail_level.value}]")
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
    """The recall section as (kind, text) lines, trimmed to a few; kind is 'head', 'item' or 'dim'."""
    if not verdict.recall and not verdict.recall_note:
        return []
    out: list[tuple[str, str]] = []
    n_similar = sum(len(g.similar) for g in verdict.recall)
    n_patterns = sum(len(g.patterns) for g in verdict.recall)
    if verdict.recall:
        fixes = f"{n_similar} similar past fix{'' if n_similar == 1 else 'es'}"
        n_tried = sum(len(g.earlier_attempts) for g in verdict.recall)
        tried = f", {_plural(n_tried, 'earlier attempt')} of this change" if n_tried else ""
        out.append(("head", f"Experience memory: {fixes}, {_plural(n_patterns, 'recurring pattern')}{tried}"))
    for group in verdict.recall[:_RECALL_GROUPS]:
        # The title already names the problem (the first finding's message); repeating the rule
        # code would make `grep -c SEN301` on the output count recall lines as findings.
        out.append(("item", f"{shorten(clean(group.title), _RECALL_TEXT)} ({_plural(group.finding_count, 'finding')})"))
        for s in group.similar[:_RECALL_ITEMS]:
            out.append(("item", f"  past fix {clean(s.card_id)} ({s.score:.2f}): "
                                f"{shorten(clean(s.summary), _RECALL_TEXT)}"))
            if s.fix_strategy:
                out.append(("dim", f"    fix: {shorten(clean(s.fix_strategy), _RECALL_TEXT)}"))
        for p in group.patterns[:_RECALL_ITEMS]:
            res = f"; last resolved in {shorten(clean(p.last_resolution), 40)}" if p.last_resolution else ""
            out.append(("item", f"  recurring [{clean(p.urgency)}] seen {p.count}x in "
                                f"{_plural(p.changes, 'change')}{res}"))
        for a in group.earlier_attempts:
            out.append(("item", "  " + earlier_attempt_line(a, clean)))
        hidden = max(0, len(group.similar) - _RECALL_ITEMS) + max(0, len(group.patterns) - _RECALL_ITEMS)
        if hidden:
            out.append(("dim", f"  ... {hidden} more"))
    if len(verdict.recall) > _RECALL_GROUPS:
        out.append(("dim", f"  ... {len(verdict.recall) - _RECALL_GROUPS} more group(s) (--format json has them all)"))
    if verdict.recall_note:
        out.append(("dim", f"  ({clean(verdict.recall_note)})"))
    return out


def earlier_attempt_line(a, text=lambda s: s, width: int = _RECALL_TEXT) -> str:
    """One line for an earlier attempt at this change (sentinel.models.EarlierAttempt): when, where, the line
    it wrote (cut at a word boundary). `text` makes a stored string fit for the output."""
    import time

    where = f"{a.path}:{a.line}" if a.line else (a.path or "the change")
    more = f" (+{a.findings - 1} more)" if a.findings > 1 else ""
    tried = cut_words(text(a.code).strip() or text(a.message), width)
    return f"tried before ({time.strftime('%Y-%m-%d %H:%M', time.localtime(a.at))}), still failed: " \
           f"{text(where)}{more}: {tried}"


def suppression_hint(f: Finding) -> str:
    """How to silence a rule, shown once per rule and run: inline for a line of code, else config.

    It names the rule as ``<code>`` (the code is on the line above): `grep -c SEN301` on the output
    keeps counting findings."""
    if f.line and f.path and f.path != "COMMIT_MSG":
        how = 'add "# sentinel: ignore[<code>]" to the line to silence it'
    else:
        how = 'turn the rule off with <code> = "off" under [tool.sentinel.severity]'
    return f'note: {how}; "sentinel explain <code>" says why it matters'


def render(verdict: Verdict, color: bool = False, **_) -> str:
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
            if f.rule not in seen:
                seen.add(f.rule)
                out.append(c(f"{'':12}{suppression_hint(f)}", _DIM))

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
    out.append(c(summary_line(verdict), _BOLD + color_summary))
    return "\n".join(out) + "\n"
