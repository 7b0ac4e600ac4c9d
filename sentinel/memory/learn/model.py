"""The typed candidate every source produces and every stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FileDiff:
    """One changed file of a fix: its path, role and the unified diff text of its hunks (possibly cut)."""

    path: str
    role: str  # source / test / fragment / changelog / docs / deps / ci / other
    diff: str = ""
    added: int = 0
    removed: int = 0
    # The file before and after the fix (Python source and test files of the git history): None on the side
    # where it does not exist. fetched=False: not read (fix records, pull-request patches), the diff is all.
    before: str | None = None
    after: str | None = None
    fetched: bool = False


@dataclass
class Candidate:
    """A possible fix: the problem as people described it, and the change that fixed it."""

    key: str  # what the store remembers as processed: a commit sha, "gh:OWNER/NAME#N", a record id
    origin: str  # "git", "github" or "record"
    repository: str
    sha: str
    date: str
    subject: str
    body: str = ""
    fragment: str = ""  # news fragment / changelog entry / issue text: the human description of the bug
    issue_refs: list[str] = field(default_factory=list)  # "#12", "GH-12"
    urls: list[str] = field(default_factory=list)  # issue / PR URLs
    files: list[FileDiff] = field(default_factory=list)
    tests_added: list[str] = field(default_factory=list)  # test function names the fix added or changed
    reasons: list[str] = field(default_factory=list)  # why it is a candidate: fragment, wording, ref, revert
    record_id: str | None = None
    license: str | None = None
    truncated: bool = False
    # what resolution.of() read from the fix, kept so that purification and standardisation read it once
    analysis: object | None = field(default=None, repr=False, compare=False)

    @property
    def problem_text(self) -> str:
        """What the fix says about the problem: fragment first (the clearest), then subject and body."""
        return "\n".join(x for x in (self.fragment, self.subject, self.body) if x)

    def role_files(self, *roles: str) -> list[FileDiff]:
        return [f for f in self.files if f.role in roles]

    @property
    def source_diff(self) -> str:
        return "\n".join(f.diff for f in self.role_files("source"))

    @property
    def test_diff(self) -> str:
        return "\n".join(f.diff for f in self.role_files("test"))
