"""Markdown report for a CI step summary ($GITHUB_STEP_SUMMARY) or a pull-request comment.

File paths, messages, code and recall text come from the pull request under review, so they are untrusted:
code is shown in code spans and prose escaped (sentinel.report.mdsafe), so each renders as the literal text it
is and cannot open a tag, a link, an image, a table cell, ping anyone, become a link (URLs, ``www.``, e-mail
addresses) or cross-reference an issue (``#12``, ``owner/repo#12``). The findings in files come first, then
those about the PR description or commit message, then those about the change as a whole; a last line says how
to silence a finding, with its real code. The report never exceeds ``max_bytes`` (GitHub caps a step summary at
1 MiB and a comment at 65,536 characters): past the budget, findings are cut at a row boundary and a note says
how many were left out.
"""

from __future__ import annotations

from sentinel.lazyre import lazy_compile
from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.redact import scrub_verdict
from sentinel.report.locate import MESSAGE_PATH, is_pseudo_path
from sentinel.report.mdsafe import CODE_WIDTH as _CODE_WIDTH, code_html, code_span, escape, inline
from sentinel.report.terminal import check_status_parts, counts_phrase, group_by_path, location

DEFAULT_MAX_BYTES = 1_000_000
_OPEN_FILES = 10  # a file with more findings than this gets a collapsed <details>
_NOT_CHECKED_SHOWN = 50
_RECALL_GROUPS = 5
_RECALL_ITEMS = 3

_ICON = {Severity.ERROR: "\U0001F534", Severity.WARNING: "\U0001F7E1", Severity.INFO: "\U0001F535"}
_STATUS_ICON = {CheckStatus.PASSED: "\u2705", CheckStatus.FAILED: "\u274C", CheckStatus.SKIPPED: "\u23ED\uFE0F",
                CheckStatus.ERROR: "\U0001F4A5"}
_SHA = lazy_compile(r"\b[0-9a-f]{40}\b")
SHORT_SHA = 7  # as GitHub shows a commit


def code(text: str, width: int = _CODE_WIDTH) -> str:
    """Untrusted code as a code span, as the findings show it (the recall block, the memory brief): no link, no
    mention, a redacted line as in every other output (sentinel.report.mdsafe)."""
    return code_span(text, width=width)


def _headline(verdict: Verdict, title: str, exit_zero: bool = False) -> str:
    t = escape(title, width=120)
    if verdict.errored:
        return f"## \U0001F4A5 {t}: error \u2014 a check crashed, the change was not fully checked"
    if verdict.passed:
        below = len(verdict.findings)
        tail = f" ({counts_phrase(verdict)} below the fail level)" if below else ""
        return f"## \u2705 {t}: passed{tail}"
    state = "failed (exit 0: --exit-zero)" if exit_zero else "failed"
    return f"## \u274C {t}: {state} \u2014 {counts_phrase(verdict)}"


def short_shas(escaped: str, links: Links | None = None) -> str:
    """Full commit SHAs in already-escaped text shortened as GitHub shows them, linked to the commit when the
    repository is known."""
    def short(m) -> str:
        sha = m.group()
        return f"[{sha[:SHORT_SHA]}]({links.commit(sha)})" if links is not None else sha[:SHORT_SHA]
    return _SHA.sub(short, escaped)


def _facts(verdict: Verdict, links: Links | None = None) -> str:
    source = short_shas(escape(verdict.source, width=200), links)
    parts = [f"{verdict.files_changed} file(s)", f"{verdict.lines_added} added line(s)",
             f"fail level **{verdict.fail_level.value}**", f"source {source}"]
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
        out.append(f"- \u26A0\uFE0F not checked: {code_span(nc.path)} \u2014 {escape(nc.reason)}")
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

    def commit(self, sha: str) -> str:
        from urllib.parse import quote

        return f"{self.server}/{quote(self.repository, safe='/')}/commit/{quote(sha, safe='')}"


def rule_link(code_: str) -> str:
    from sentinel.report.links import rule_url

    text = escape(code_, width=40)
    if not code_.replace("-", "").isalnum():
        return text
    return f"[{text}]({rule_url(code_)})"


def _row(f: Finding, links: Links | None = None) -> str:
    detail = inline(f.message, table=True)
    snippet = code_span(f.code, table=True)
    if snippet:
        detail += f"<br>{snippet}"
    if f.hint:
        detail += f"<br><sub>hint: {inline(f.hint, table=True)}</sub>"
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
        # a <summary> is HTML, where GitHub renders no Markdown; a heading is Markdown
        name = code_html(path) if n > _OPEN_FILES else code_span(path)
    label = f"{name} \u2014 {n} finding{'' if n == 1 else 's'}"
    if n > _OPEN_FILES:
        return f"<details><summary>{label}</summary>\n\n{_TABLE_HEAD}"
    return f"#### {label}\n\n{_TABLE_HEAD}"


def _reading_order(verdict: Verdict) -> list[tuple[str, list[Finding]]]:
    """The findings per file in the files' order, then those about the message (claims), then those about the
    change as a whole (drift): what the code does first."""
    groups = group_by_path(verdict.findings)
    rank = {MESSAGE_PATH: 1}
    return sorted(groups.items(), key=lambda kv: rank.get(kv[0], 2 if is_pseudo_path(kv[0]) else 0))


def silence_line(verdict: Verdict) -> str:
    """How to silence a finding, with the real code of the first one shown, and where to read why it matters."""
    if not verdict.findings:
        return ""
    from sentinel.report.links import rule_url
    from sentinel.report.silence import config_line, inline_pragma

    first = _reading_order(verdict)[0][1][0]
    pragma = inline_pragma(first)
    inline_way = f"add {code_span(pragma)} to its line (with its own rule code); " if pragma else ""
    rule = escape(first.rule, width=40)
    return (f"<sub>To silence a finding: {inline_way}{code_span(config_line(first))} under "
            f"{code_span('[tool.sentinel.severity]')} turns a rule off, and {code_span('sentinel baseline')} accepts "
            f"what is there today. Why {rule} matters: [{code_span('sentinel explain ' + first.rule)}]"
            f"({rule_url(first.rule)}).</sub>")


def _file_close(n: int) -> str:
    return "\n</details>\n" if n > _OPEN_FILES else ""


def _recall(verdict: Verdict) -> str:
    """The memory block: what sentinel.recall_view shows on every surface, typeset as inert markdown."""
    if not verdict.recall and not verdict.recall_note:
        return ""
    from sentinel import recall_view

    lines = [f"### \U0001F9E0 {escape(recall_view.headline(verdict), width=200)}"]
    if verdict.recall:
        shown, more = recall_view.groups(verdict, _RECALL_GROUPS, _RECALL_ITEMS)
        lines += ["", "<details><summary>Similar past fixes and recurring patterns for these findings</summary>", ""]
        for g in shown:
            lines.append(f"- **{escape(g.rule, width=40)}** {escape(g.title, width=200)} "
                         f"({g.finding_count} finding{'' if g.finding_count == 1 else 's'})")
            for it in g.items:
                lines.extend(_recall_item(it))
            if g.hidden:
                lines.append(f"  - \u2026 {g.hidden} more")
        if more:
            lines.append(f"- \u2026 {more} more group(s)")
        lines += ["", "</details>"]
    if verdict.recall_note:
        lines += ["", f"<sub>{escape(verdict.recall_note)}</sub>"]
    return "\n".join(lines)


def _recall_item(it) -> list[str]:
    if it.kind == "pattern":
        return [f"  - recurring: {escape(it.headline, width=200)} \u2014 {escape(it.why, width=200)}"]
    if it.kind == "attempt":
        return [f"  - {escape(it.why, width=200)}: {code(it.headline, width=200)}"]
    score = f" {it.score:.2f}" if it.score is not None else ""
    origin = f" {escape(it.origin, width=80)}" if it.origin else ""
    head = (f"  - {escape(it.label, width=40)}{origin} \u00b7 {code_span(it.card_id, width=80)}{score}: "
            f"{escape(it.headline, width=300)}")
    out = [head]
    if it.why:
        out.append(f"    <br>why: {escape(it.why, width=300)}")
    if it.fix:
        out.append(f"    <br>fix: {escape(it.fix, width=300)}")
    return out


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` UTF-8 bytes, cut at a line break and never inside a character."""
    if _size(text) <= limit:
        return text
    head = text.encode("utf-8")[:max(limit, 0)].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] if "\n" in head else ""


def render(verdict: Verdict, max_bytes: int = DEFAULT_MAX_BYTES, title: str = "Sentinel", links: Links | None = None,
           exit_zero: bool = False, **_) -> str:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    head = [_headline(verdict, title, exit_zero), "", _facts(verdict, links)]
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
    silence = f"\n{silence_line(verdict)}\n" if total else ""
    note_reserve = 400
    budget = max_bytes - _size(header) - _size(footer) - _size(silence) - note_reserve
    body: list[str] = []
    used = 0
    shown = 0
    if total and budget > 0:
        body.append("\n### Findings\n")
        used += _size(body[0])
        for path, items in _reading_order(verdict):
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

    text = header + "".join(body) + (silence if shown else "")
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
