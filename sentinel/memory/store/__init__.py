"""The hypothesis store: what this project's gate runs failed on, its recurring patterns, and how they were
resolved — one interface, two backends with the same behaviour:

- SQLite (`sentinel.memory.store.sqlite`), the zero-setup default, a file under the clone's `.git/sentinel/`;
- PostgreSQL (`sentinel.memory.store.postgres`, extra `diff-sentinel[postgres]`), one memory for a whole team,
  chosen by `$SENTINEL_DATABASE_URL` or `[tool.sentinel.memory] database-url = "postgresql://..."`.

The semantics live once, in `sentinel.memory.store.sql.SQLStore`:

- an **attempt** is one content of one change: re-running the gate on the same staged content (or the same
  PR head) is the same attempt, written once (idempotent, keyed by `run_key`);
- a **change** is what an author is trying to land: a PR, a pushed branch, or, for the commit hook, the
  staged work on a branch on top of one HEAD; pattern counts are distinct changes;
- a **resolution** is recorded only when a blocking finding of a failed attempt is gone from a later
  *passing* attempt of the same change that still touches the finding's file, and is named only by a commit of
  the same change's lineage (its branch, on top of the HEAD the work started from): a fix on one branch is
  never credited to another branch's failure;
- an **earlier attempt** is a failed attempt of the same change since it last passed: what was tried (each
  finding's redacted line, the change's files) and still failed.

This module imports no database driver: the hook imports it on every failing run.
"""

from __future__ import annotations

import os
import threading

from sentinel.errors import SentinelError
from sentinel.record import Record, factory

SCHEMA_VERSION = 6
HOOK_WAIT = 1.0  # seconds the hook may wait for the store (a lock, the network) before its run is queued
WAIT_ENV = "SENTINEL_MEMORY_WAIT"  # another bound, in seconds (a CI runner far from its team database)


def hook_wait() -> float:
    """How long the hook's store phase may wait for a lock or the network ($SENTINEL_MEMORY_WAIT, 0.1-60 s)."""
    try:
        return min(60.0, max(0.1, float(os.environ[WAIT_ENV])))
    except (KeyError, ValueError):
        return HOOK_WAIT


class StoreError(SentinelError):
    """The store cannot be used now; the gate's verdict stands and says memory was skipped."""


class StoreBusy(StoreError):
    """Another process holds the store's write lock longer than this run may wait."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (in time), or its driver is not installed."""


class FindingRecord(Record):
    rule: str
    signature: str
    path: str = ""
    message: str = ""
    line: int | None = None
    severity: str = "error"
    blocking: bool = True  # at or above the run's fail level: only these can be "resolved"
    code: str = ""  # the offending line as the finding showed it (redacted before it is stored): what was tried


class RunRecord(Record):
    project: str
    change_ref: str  # what a person calls the change: branch, "pr-12", range
    outcome: str  # passed / failed / error
    findings: list[FindingRecord] = factory(list)
    commit_sha: str | None = None  # the change's commit when known (None before a commit exists)
    subject: str | None = None
    base_sha: str | None = None  # HEAD when the run happened (to name the resolving commit later)
    created_at: float | None = None
    change_id: str | None = None  # the change's identity (default: change_ref)
    content_digest: str | None = None  # the attempt's content; None: every call is a new attempt
    paths: list[str] | None = None  # the files of the change; None: unknown (any file may resolve)

    @property
    def change(self) -> str:
        return self.change_id or self.change_ref

    def key(self) -> str:
        """The attempt's identity: project, change and content. Writes are idempotent on it."""
        digest = self.content_digest or os.urandom(16).hex()
        raw = "\0".join((self.project, self.change, digest))
        from sentinel.digest import sha256

        return sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class Occurrence(Record):
    """One example of a pattern: where it was seen and what the attempt did there."""

    change_ref: str
    path: str
    line: int | None
    commit_sha: str | None = None
    seen_at: float = 0.0
    change_id: str = ""  # e.g. "main@4f2a9c1d7e01": the branch and the commit the work started from
    code: str = ""  # the offending line (redacted)
    subject: str | None = None  # the change's subject, once it has a commit (redacted)
    paths: list[str] = factory(list)  # the files the attempt changed (up to PATHS_KEPT)
    paths_total: int = 0  # how many it changed

    @property
    def change(self) -> str:
        return self.change_id or self.change_ref

    def to_json(self) -> dict:
        return {"change": self.change, "ref": self.change_ref, "file": self.path, "line": self.line,
                "commit": self.commit_sha, "seen_at": self.seen_at, "code": self.code, "subject": self.subject,
                "paths": self.paths, "paths_total": self.paths_total}


class Pattern(Record):
    sig_id: str
    signature: str
    rule: str
    changes: int  # distinct changes in which it appeared: the count that makes a pattern recurring
    attempts: int  # distinct attempts (contents) in which it appeared
    urgency: str
    last_seen: float
    last_resolution: str | None = None
    examples: list[Occurrence] = factory(list)  # up to 3, one per change, most recent first

    @property
    def recurring(self) -> bool:
        return self.changes >= 2

    def to_json(self) -> dict:
        return {"id": self.sig_id, "rule": self.rule, "urgency": self.urgency, "changes": self.changes,
                "attempts": self.attempts, "signature": self.signature, "last_seen": self.last_seen,
                "last_resolution": self.last_resolution, "examples": [e.to_json() for e in self.examples]}


class Attempt(Record):
    """One attempt at a change, as the brief shows it."""

    run_key: str
    change_ref: str
    outcome: str
    created_at: float
    commit_sha: str | None = None
    subject: str | None = None
    findings: list[FindingRecord] = factory(list)
    paths: list[str] = factory(list)  # the files the attempt changed (up to PATHS_KEPT)
    paths_total: int = 0

    def to_json(self) -> dict:
        from sentinel.memory.hypotheses.signature import mechanism_of

        return {"outcome": self.outcome, "at": self.created_at, "change": self.change_ref,
                "commit": self.commit_sha, "subject": self.subject, "paths": self.paths,
                "paths_total": self.paths_total,
                "findings": [{"rule": f.rule, "file": f.path, "line": f.line, "severity": f.severity,
                              "blocking": f.blocking, "message": f.message, "approach": f.code,
                              "mechanism": mechanism_of(f.signature)} for f in self.findings]}


class RecordResult(Record):
    run_id: int
    created: bool  # False: this attempt was already recorded (a re-run on the same content)
    resolved: list[str] = factory(list)  # sig ids this run resolved


class Background:
    """`fn()` running on a worker thread from now on, while the caller does other work: the hook records its
    run in the store (a git process, SQLite's commit and checkpoint: mostly waiting) while it searches the
    cards. A worker that has not answered by its deadline is left to end on its own (its connection is
    closed by it, or by the process's exit)."""

    def __init__(self, fn, name: str = "sentinel-memory"):
        import time

        self._box: dict = {}
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=True)
        self._thread.start()

    def _run(self, fn) -> None:
        try:
            self._box["value"] = fn()
        except BaseException as exc:  # handed to the caller
            self._box["error"] = exc

    def result(self, seconds: float, what: str = "the team database"):
        """`fn`'s result, or StoreUnavailable when it has not answered `seconds` after it started."""
        import time

        self._thread.join(max(0.0, seconds - (time.monotonic() - self._started)))
        if self._thread.is_alive():
            raise StoreUnavailable(f"{what} did not answer within {seconds:.1f}s")
        if "error" in self._box:
            raise self._box["error"]
        return self._box.get("value")


def within(fn, seconds: float, what: str = "the team database"):
    """Run `fn()` on a worker thread; its result, or StoreUnavailable after `seconds` (the thread is left to
    end on its own: its connection is closed by it, or by the process's exit)."""
    return Background(fn).result(seconds, what)


PATHS_KEPT = 20  # files of an attempt kept with it (the count is kept too)


def urgency(changes: int) -> str:
    """By distinct changes: one change is a mistake, several are a habit of the project."""
    if changes >= 4:
        return "critical"
    if changes == 3:
        return "high"
    if changes == 2:
        return "medium"
    return "low"
