"""Markdown report for a CI step summary ($GITHUB_STEP_SUMMARY) or a pull-request comment.

File paths, messages, code and recall text come from the pull request under review, so they
are untrusted: every piece is HTML-escaped and its Markdown-significant characters turned into
numeric entities, so it renders as the literal text it is and cannot open a tag, a link, an
image, a code span, a table cell, ping anyone, become a link (URLs, ``www.``, e-mail addresses) or
cross-reference an issue (``#12``, ``owner/repo#12``). The report never exceeds ``max_bytes``
(GitHub caps a step summary at 1 MiB and a comment at 65,536 characters): past the budget,
findings are cut at a row boundary and a note says how many were left out.
"""

from __future__ import annotations

import html
import re

from sentinel.lazyre import lazy_compile
from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.report.locate import MESSAGE_PATH, is_pseudo_path
from sentinel.redact import scrub_verdict
from sentinel.report.terminal import check_status_parts, counts_phrase, group_by_path, location, redact

DEFAULT_MAX_BYTES = 1_000_000
_OPEN_FILES = 10  # a file with more findings than this gets a collapsed <details>
_NOT_CHECKED_SHOWN = 50
_RECALL_GROUPS = 5
_RECALL_ITEMS = 3
_CODE_WIDTH = 300
_TEXT_WIDTH = 500

_ICON = {Severity.ERROR: "\U0001F534", Severity.WARNING: "\U0001F7E1", Severity.INFO: "\U0001F535"}
_STATUS_ICON = {CheckStatus.PASSED: "\u2705", CheckStatus.FAILED: "\u274C", CheckStatus.SKIPPED: "\u23ED\uFE0F",
                CheckStatus.ERROR: "\U0001F4A5"}

# After html.escape: characters Markdown (GFM) would act on, as numeric entities.
_MD_SPECIAL = {c: f"&#{ord(c)};" for c in "\\`*_[]|~$"}
_MD_RE = lazy_compile("[" + re.escape("".join(_MD_SPECIAL)) + "]")
_CONTROL = lazy_compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MENTION = lazy_compile(r"@(?=[A-Za-z0-9])")
# What GitHub turns into links or cross-references in plain text: a zero-width space breaks each.
_AUTOLINK = lazy_compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)|(?<=#)(?=\d)|(?<=\bgh)(?=-\d)")
_ZWSP = "&#8203;"


def escape(text: str, mentions: bool = True, width: int = _TEXT_WIDTH) -> str:
    """Untrusted text as inert inline Markdown: one line, no HTML, no Markdown syntax, no @mentions."""
    text = redact(text or "")
    text = _CONTROL.sub(" ", text.replace("\r\n", " ").replace("\n", " ").replace("\t", "    "))
    if len(text) > width:
        text = text[: width - 1] + "\u2026"
    if mentions:
        # A zero-width space before '://', after 'www' or '#' stops GitHub from linking a URL or
        # cross-referencing an issue named in the text (inserted before escaping adds entities).
        text = _AUTOLINK.sub("\u200b", text)
    text = _MD_RE.sub(lambda m: _MD_SPECIAL[m.group()], html.escape(text, quote=True))
    if mentions:
        # ... and one after '@' from notifying a user or team.
        text = _MENTION.sub("@" + _ZWSP, text)
    return text


def code(text: str, width: int = _CODE_WIDTH) -> str:
    """Untrusted code inside a table cell: <code> with escaped content (backticks cannot open a span)."""
    body = escape((text or "").strip(), mentions=False, width=width)
    # Markdown collapses runs of spaces in inline HTML; keep indentation visible.
    return f"<code>{body.replace('  ', '&nbsp; ')}</code>" if body else ""


def _headline(verdict: Verdict, title: str) -> str:
    t = escape(title, width=120)
    if verdict.errored:
        return f"## \U0001F4A5 {t}: error \u2014 a check crashed, the change was not fully checked"
    if verdict.passed:
        below = len(verdict.findings)
        tail = f" ({counts_phrase(verdict)} below the fail level)" if below else ""
        return f"## \u2705 {t}: passed{tail}"
    return f"## \u274C {t}: failed \u2014 {counts_phrase(verdict)}"


def _facts(verdict: Verdict) -> str:
    parts = [f"{verdict.files_changed} file(s)", f"{verdict.lines_added} added line(s)",
             f"fail level **{verdict.fail_level.value}**", f"source {escape(verdict.source, width=120)}"]
    if verdict.suppressed:
        parts.append(f"{verdict.suppressed} suppressed inline")
    if verdict.baselined:
        parts.append(f"{verdict.baselined} in baseline")
    return " \u00B7 ".join(parts)


def _checks_line(verdict: Verdict) -> str:
    if not verdict.checks:
        return ""
    phrases = [f"{_STATUS_ICON[status]} {escape(text, width=200)}"
               for status, text in check_status_parts(verdict.checks, verdict.fail_level)]
    return "**Checks:** " + " \u00B7 ".join(phrases)


def _problems(verdict: Verdict) -> list[str]:
    out = []
    for r in verdict.checks:
        if r.status is CheckStatus.ERROR:
            out.append(f"- \U0001F4A5 check **{escape(r.check, width=60)}** crashed: "
                       f"{escape(r.reason) or 'no reason given'}")
    shown = verdict.not_checked[:_NOT_CHECKED_SHOWN]
    for nc in shown:
        out.append(f"- \u26A0\uFE0F not checked: <code>{escape(nc.path, mentions=False)}</code> \u2014 "
                   f"{escape(nc.reason)}")
    if len(verdict.not_checked) > len(shown):
        out.append(f"- \u2026 and {len(verdict.not_checked) - len(shown)} more file(s) not checked")
    return out


class Links:
    """Where a PR comment's findings link to: each file line at the head commit, each rule's docs.

    ``message_label`` names what pseudo-path findings are about (the PR description for a pull
    request, the commit message for a push)."""

    def __init__(self, server: str, repository: str, sha: str, message_label: str = "commit message"):
        self.server = server.rstrip("/")
        self.repository = repository
        self.sha = sha
        self.message_label = message_label

    def file_line(self, path: str, line: int | None) -> str:
        from urllib.parse import quote

        anchor = f"#L{line}" if line else ""
        return (f"{self.server}/{quote(self.repository, safe='/')}/blob/{quote(self.sha, safe='')}/"
                f"{quote(path, safe='/')}{anchor}")


def rule_link(code_: str) -> str:
    from sentinel.report.links import rule_url

    text = escape(code_, width=40)
    if not code_.replace("-", "").isalnum():
        return text
    return f"[{text}]({rule_url(code_)})"


def _row(f: Finding, links: Links | None = None) -> str:
    detail = escape(f.message)
    snippet = code(f.code)
    if snippet:
        detail += f"<br>{snippet}"
    if f.hint:
        detail += f"<br><sub>hint: {escape(f.hint)}</sub>"
    where = location(f)
    rule = escape(f.rule, width=40)
    if links is not None:
        rule = rule_link(f.rule)
        if f.path and not is_pseudo_path(f.path) and f.line:
            where = f"[{where}]({links.file_line(f.path, f.line)})"
    return f"| {where} | {_ICON[f.severity]} {f.severity.value} | {rule} | {detail} |"


_TABLE_HEAD = "| Line | Severity | Rule | Finding |\n| ---: | --- | --- | --- |"


def _file_open(path: str, n: int, links: Links | None = None) -> str:
    if path == MESSAGE_PATH:
        name = f"the {links.message_label if links is not None else 'commit message'}"
    elif not path or is_pseudo_path(path):
        name = "the change as a whole"
    else:
        name = f"<code>{escape(path, mentions=False)}</code>"
    label = f"{name} \u2014 {n} finding{'' if n == 1 else 's'}"
    if n > _OPEN_FILES:
        return f"<details><summary>{label}</summary>\n\n{_TABLE_HEAD}"
    return f"#### {label}\n\n{_TABLE_HEAD}"


def _file_close(n: int) -> str:
    return "\n</details>\n" if n > _OPEN_FILES else ""


def _recall(verdict: Verdict) -> str:
    if not verdict.recall and not verdict.recall_note:
        return ""
    lines = ["### \U0001F9E0 Experience memory"]
    if verdict.recall:
        lines += ["", "<details><summary>Similar past fixes and recurring patterns for these findings</summary>", ""]
        for g in verdict.recall[:_RECALL_GROUPS]:
            lines.append(f"- **{escape(g.rule, width=40)}** {escape(g.title, width=200)} "
                         f"({g.finding_count} finding{'' if g.finding_count == 1 else 's'})")
            for s in g.similar[:_RECALL_ITEMS]:
                fix = f" \u2014 fix: {escape(s.fix_strategy, width=300)}" if s.fix_strategy else ""
                lines.append(f"  - past fix <code>{escape(s.card_id, mentions=False, width=80)}</code> "
                             f"({s.score:.2f}): {escape(s.summary, width=300)}{fix}")
            for p in g.patterns[:_RECALL_ITEMS]:
                res = f"; last resolved in {escape(p.last_resolution, width=120)}" if p.last_resolution else ""
                lines.append(f"  - recurring \\[{escape(p.urgency, width=20)}\\]: seen {p.count}\u00D7 in "
                             f"{p.changes} change(s){res}")
            for a in g.earlier_attempts:
                lines.append(f"  - {_earlier_attempt(a)}")
            hidden = max(0, len(g.similar) - _RECALL_ITEMS) + max(0, len(g.patterns) - _RECALL_ITEMS)
            if hidden:
                lines.append(f"  - \u2026 {hidden} more")
        if len(verdict.recall) > _RECALL_GROUPS:
            lines.append(f"- \u2026 {len(verdict.recall) - _RECALL_GROUPS} more group(s)")
        lines += ["", "</details>"]
    if verdict.recall_note:
        lines += ["", f"<sub>{escape(verdict.recall_note)}</sub>"]
    return "\n".join(lines)


def _earlier_attempt(a) -> str:
    """One line for an earlier attempt at this change: when, where, and the line it wrote, as code."""
    import time

    from sentinel.report.terminal import cut_words

    where = f"{a.path}:{a.line}" if a.line else (a.path or "the change")
    more = f" (+{a.findings - 1} more)" if a.findings > 1 else ""
    tried = code(cut_words(a.code, 160)) if a.code.strip() else escape(cut_words(a.message, 160))
    return (f"tried before ({time.strftime('%Y-%m-%d %H:%M', time.localtime(a.at))}), still failed: "
            f"<code>{escape(where, mentions=False, width=200)}</code>{more}: {tried}")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` UTF-8 bytes, cut at a line break and never inside a character."""
    if _size(text) <= limit:
        return text
    head = text.encode("utf-8")[:max(limit, 0)].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] if "\n" in head else ""


def render(verdict: Verdict, max_bytes: int = DEFAULT_MAX_BYTES, title: str = "Sentinel", links: Links | None = None,
           **_) -> str:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    head = [_headline(verdict, title), "", _facts(verdict)]
    checks = _checks_line(verdict)
    if checks:
        head += ["", checks]
    problems = _problems(verdict)
    if problems:
        head += [""] + problems
    header = "\n".join(head) + "\n"
    recall = _recall(verdict)
    footer = f"\n{recall}\n" if recall else ""

    total = len(verdict.findings)
    note_reserve = 400
    budget = max_bytes - _size(header) - _size(footer) - note_reserve
    body: list[str] = []
    used = 0
    shown = 0
    if total and budget > 0:
        body.append("\n### Findings\n")
        used += _size(body[0])
        for path, items in group_by_path(verdict.findings).items():
            opening = "\n" + _file_open(path, len(items), links) + "\n"
            closing = _file_close(len(items))
            cost = _size(opening) + _size(closing)
            rows = []
            for f in items:
                row = _row(f, links) + "\n"
                if used + cost + _size(row) > budget:
                    break
                rows.append(row)
                cost += _size(row)
            if not rows:
                break
            body.append(opening + "".join(rows) + closing)
            used += cost
            shown += len(rows)
            if len(rows) < len(items):
                break
    elif not total and verdict.passed:
        body.append("\nNo findings on the checked lines.\n")

    text = header + "".join(body)
    if shown < total:
        text += (f"\n> [!WARNING]\n> Report truncated to fit {max_bytes:,} bytes: {shown} of {total} findings shown. "
                 f"Run `sentinel check --format json` (or read the SARIF upload) for all of them.\n")
    if _size(text) + _size(footer) <= max_bytes:
        return text + footer
    if _size(text) <= max_bytes:
        return text
    # Only a tiny limit gets here (the header alone does not fit): keep what fits, say so.
    note = "\n_(report truncated)_\n"
    return _cut(header, max_bytes - _size(note)) + note if _size(note) <= max_bytes else ""
