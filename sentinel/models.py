"""Typed models that flow through the gate: ChangeSet -> checks -> Verdict.

They are :class:`sentinel.record.Record` classes, not pydantic models, on purpose: the pre-commit
hook must start in well under 100 ms and importing pydantic alone costs about that much. Pydantic
still validates these same classes at the boundaries (config, reading a JSON report back) through
their ``__get_pydantic_core_schema__``, imported only where it is needed.
"""

from __future__ import annotations

import enum

from sentinel.record import Record, factory


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


class FileStatus(str, enum.Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"
    BINARY = "binary"


class CheckStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"


class FilterMode(str, enum.Enum):
    """reviewdog's vocabulary for which findings of a changed file are reported."""

    ADDED = "added"  # only on added/modified lines
    DIFF_CONTEXT = "diff_context"  # anywhere inside the diff hunks
    FILE = "file"  # anywhere in a changed file
    NOFILTER = "nofilter"  # everything the checks report


class Hunk(Record):
    source_start: int
    source_length: int
    target_start: int
    target_length: int
    section_header: str = ""


class FileChange(Record):
    """One file of a change. Line numbers of ``added`` are new-file line numbers."""

    path: str
    old_path: str | None
    status: FileStatus
    language: str
    hunks: list[Hunk] = factory(list)
    added: dict[int, str] = factory(dict)
    removed: list[tuple[int, str]] = factory(list)
    # Unchanged lines shown in the hunks (new-file numbers): lets checks see some surroundings
    # when a plain diff is all there is.
    context: dict[int, str] = factory(dict)
    is_binary: bool = False
    crlf_lines: set[int] = factory(set)  # added lines that ended in CRLF
    # Why the file's content could not be read (non-UTF-8, missing blob...); None when fine.
    unreadable: str | None = None
    # What the file is for (sentinel.roles): product, test, fixture, docs, example, stub, generated, vendored,
    # ci. Decided once by the engine, before any check runs.
    role: str = "product"
    # The file as it is, not a change to it (`--all-files`, or a file named on the command line that the change
    # does not touch): every line counts as added, but none was written by a change (Rule.existing).
    existing: bool = False

    def in_hunks(self, line: int) -> bool:
        return any(h.target_start <= line < h.target_start + max(h.target_length, 1) for h in self.hunks)


class ChangeSet(Record):
    """A change under review: the files it touches, where it came from, and what its author said."""

    files: list[FileChange]
    source: str  # "staged", "range A..B", "diff FILE", "all-files"
    root: str | None = None  # repository root when the change comes from git
    base: str | None = None
    head: str | None = None
    message: str | None = None  # commit message / PR title + body, when known

    @property
    def added_line_count(self) -> int:
        return sum(len(f.added) for f in self.files)

    def file(self, path: str) -> FileChange | None:
        for f in self.files:
            if f.path == path:
                return f
        return None


class Finding(Record):
    rule: str  # stable code, e.g. "SEN301"
    check: str  # check name, e.g. "chaos"
    severity: Severity
    path: str
    line: int | None
    message: str
    column: int | None = None
    code: str = ""  # the offending source line, secrets already redacted
    hint: str = ""
    end_line: int | None = None
    role: str | None = None  # the file's role (None for findings about the change or its message)

    def sort_key(self) -> tuple:
        return (self.path, self.line or 0, self.column or 0, self.rule)


class CheckResult(Record):
    check: str
    status: CheckStatus
    findings: list[Finding] = factory(list)
    reason: str = ""  # why skipped / the error, for honest reporting
    duration_ms: float = 0.0


class NotChecked(Record):
    """A file the gate saw but could not examine, and why: never silently 'passed'."""

    path: str
    reason: str


class SimilarFix(Record):
    """A governed experience card that resembles a failure (from the memory layer).

    source: "project" (learned from or imported into this project: its own past fix), "bundled" (another
    project's fix shipped with Sentinel) or "guidance" (the rule's general story, not a past fix of this code:
    at most one per group, shown only when no relevant past fix fills its slot). why: what ties the card to
    this failure ("fixed this function, Client.send", "fixed this file", "same mechanism: ...")."""

    card_id: str
    score: float
    summary: str
    fix_strategy: str
    source: str = "bundled"
    why: str = ""
    commit: str | None = None  # the fixing commit, when the card comes from one
    date: str | None = None  # when that fix was committed (ISO 8601 date)
    url: str | None = None  # the issue or pull request it closed
    repository: str | None = None


class RecurringPattern(Record):
    """A signature this project has failed on before (from the hypothesis store)."""

    signature: str
    rule: str
    urgency: str  # critical / high / medium / low
    count: int
    changes: int
    last_resolution: str | None = None


class EarlierAttempt(Record):
    """An earlier attempt at the same change that the gate failed on the same rule (from the hypothesis store):
    an approach already tried — the line it wrote — that did not pass."""

    at: float  # when it was checked (epoch seconds)
    path: str
    line: int | None
    code: str  # the offending line of that attempt, redacted
    message: str
    findings: int = 1  # findings of this rule in that attempt
    commit: str | None = None  # the attempt's commit, when it had one
    subject: str | None = None


class RecallGroup(Record):
    """Recall for one group of related findings: similar past fixes, recurring patterns, and the earlier
    attempts at this change that failed on the same rule."""

    rule: str
    title: str
    finding_count: int
    similar: list[SimilarFix] = factory(list)
    patterns: list[RecurringPattern] = factory(list)
    earlier_attempts: list[EarlierAttempt] = factory(list)  # oldest first


class Verdict(Record):
    passed: bool
    fail_level: Severity
    checks: list[CheckResult]
    findings: list[Finding]
    source: str
    files_changed: int
    lines_added: int
    not_checked: list[NotChecked] = factory(list)
    suppressed: int = 0
    baselined: int = 0
    duration_ms: float = 0.0
    # Filled by the memory layer after a failure (similar fixes, recurring patterns).
    recall: list[RecallGroup] = factory(list)
    recall_note: str = ""  # e.g. "lexical search only: no vector model could load"

    @property
    def errored(self) -> bool:
        return any(c.status is CheckStatus.ERROR for c in self.checks)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out
