"""What a fix plan says: per file, the text before and after, and for each fixed finding its own edit."""

from __future__ import annotations

from sentinel.models import Finding
from sentinel.record import Record, factory


class NotFixable(Exception):
    """A fixer declines: the reason says why (shown to the user)."""


class Outcome(Record):
    """What a fixer does for one finding: spans of the checked text it replaces (see fix/splice.py)."""

    spans: list  # [(start, end, replacement)] in characters of the checked text
    description: str  # what the fix does, one line
    safety: str | None = None  # this one fix's safety when it is less than its rule's
    imports: frozenset = frozenset()  # modules it needs imported (added once per file)


class Edit(Record):
    """One hunk of a fix, as a replacement of whole lines of the file as checked."""

    first_line: int  # first replaced line (1-based)
    last_line: int  # last replaced line, inclusive (first_line - 1: an insertion before first_line)
    text: str  # the replacement lines, with their line endings


class Fix(Record):
    finding: Finding
    safety: str  # "safe" or "unsafe"
    description: str  # what the fix does, one line
    edits: list[Edit]  # this fix applied alone to the file as checked, hunk by hunk


class FilePlan(Record):
    path: str
    before: str
    after: str
    fixes: list[Fix] = factory(list)
    # Findings a fixer exists for but that were left as they are, and why.
    not_fixed: list[tuple[Finding, str]] = factory(list)
    # The spans of the checked text the fixes replace, all together (after = before with these applied).
    spans: list = factory(list)
    # The working-tree bytes the plan was made from (None: not read, e.g. a preview): `write` replaces the
    # file only while it still holds exactly these.
    on_disk: bytes | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after


class Plan(Record):
    files: list[FilePlan] = factory(list)
    refused: list[tuple[str, str]] = factory(list)  # (path, why nothing in it may be fixed)
    unsafe_skipped: int = 0  # findings with an unsafe fix, not applied without --unsafe-fixes

    @property
    def fixed(self) -> list[Fix]:
        return [fx for fp in self.files if fp.changed for fx in fp.fixes]

    @property
    def changed_files(self) -> list[FilePlan]:
        return [fp for fp in self.files if fp.changed]
