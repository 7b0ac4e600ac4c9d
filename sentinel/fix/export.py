"""Fixes in other tools' shapes: SARIF ``fixes`` and GitHub review suggestion blocks.

Both describe one fix alone against the content that was checked (``Fix.edits``), so a viewer can offer
each one independently. Built from a :class:`~sentinel.fix.model.Plan` made with
``require_worktree=False``: a report describes the checked content, whatever the working tree holds.
"""

from __future__ import annotations

import re

from sentinel.fix.context import body_and_ending, lines_of
from sentinel.fix.model import Edit, Fix, Plan
from sentinel.fix.splice import Lines
from sentinel.record import Record
from sentinel.report.sarif import artifact_uri

_BACKTICKS = re.compile(r"`{3,}")


def _region(edit: Edit, lines: Lines) -> dict:
    """The replaced lines as a SARIF region (columns in code points, line endings included)."""
    first, last = edit.first_line, edit.last_line
    count = len(lines)
    if last < first:  # an insertion before line `first`: an empty region at its start
        if first <= count:
            return {"startLine": first, "startColumn": 1, "endLine": first, "endColumn": 1}
        end = len(lines.line(count)) + 1 if count else 1
        return {"startLine": max(count, 1), "startColumn": end, "endLine": max(count, 1), "endColumn": end}
    if last < count:
        return {"startLine": first, "startColumn": 1, "endLine": last + 1, "endColumn": 1}
    return {"startLine": first, "startColumn": 1, "endLine": last, "endColumn": len(lines.line(last)) + 1}


def sarif_fix(fix: Fix, path: str, before: str | Lines) -> dict:
    lines = before if isinstance(before, Lines) else Lines(before)
    replacements = [{"deletedRegion": _region(e, lines), "insertedContent": {"text": e.text}} for e in fix.edits]
    text = fix.description + (" [unsafe: review before applying]" if fix.safety == "unsafe" else "")
    return {"description": {"text": text},
            "artifactChanges": [{"artifactLocation": {"uri": artifact_uri(path), "uriBaseId": "%SRCROOT%"},
                                 "replacements": replacements}]}


def carries_secret(fix: Fix) -> bool:
    """Would showing this fix's new text print a secret? Such fixes are left out of reports and reviews
    (a redacted replacement would put the mask into the code)."""
    from sentinel.redact import redact

    return any(redact(line) != line for e in fix.edits for line in e.text.split("\n"))


def sarif_fixes(plan: Plan) -> dict[int, list[dict]]:
    """id(finding) -> the SARIF ``fixes`` of its result (none for a fix whose text holds a secret)."""
    out = {}
    for fp in plan.files:
        lines = Lines(fp.before)  # once per file: a file's thousands of fixes share it
        for fx in fp.fixes:
            if not carries_secret(fx):
                out[id(fx.finding)] = [sarif_fix(fx, fp.path, lines)]
    return out


class Suggestion(Record):
    """A GitHub review suggestion: comment on lines start_line..line (RIGHT side) with this body part."""

    start_line: int
    line: int
    block: str  # the ```suggestion fenced block
    description: str = ""


def suggestion(fix: Fix) -> Suggestion | None:
    """The fix as a suggestion GitHub can commit, when it is one replacement of whole lines that covers the
    finding's line (a suggestion replaces exactly the lines its comment is on)."""
    if len(fix.edits) != 1 or carries_secret(fix):
        return None
    edit = fix.edits[0]
    line = fix.finding.line or 0
    if edit.last_line < edit.first_line or not edit.first_line <= line <= edit.last_line:
        return None
    new = "".join(body_and_ending(ln)[0] + "\n" for ln in lines_of(edit.text))
    longest = max((len(m) for m in _BACKTICKS.findall(new)), default=2)
    fence = "`" * max(3, longest + 1)
    return Suggestion(start_line=edit.first_line, line=edit.last_line, block=f"{fence}suggestion\n{new}{fence}",
                      description=fix.description)


def suggestions(plan: Plan) -> dict[int, Suggestion]:
    """id(finding) -> its suggestion, for every fixed finding that has one."""
    out = {}
    for fp in plan.files:
        for fx in fp.fixes:
            s = suggestion(fx)
            if s is not None:
                out[id(fx.finding)] = s
    return out
