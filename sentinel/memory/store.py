"""The hypothesis store: what this project's gate runs failed on, recurring patterns, and
how they were resolved.

SQLite by default (WAL, one IMMEDIATE transaction per run, a schema version with
migrations); the `HypothesisStore` interface is what a PostgreSQL backend would implement.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Protocol

from sentinel.errors import ConfigError
from sentinel.memory.location import store_location
from sentinel.memory.signature import signature_id
from sentinel.record import Record, factory

SCHEMA_VERSION = 2

# Each migration takes the schema from version i to i+1.
_MIGRATIONS: dict[int, list[str]] = {
    0: [
        """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE runs (
               id INTEGER PRIMARY KEY, project TEXT NOT NULL, change_ref TEXT NOT NULL,
               commit_sha TEXT, subject TEXT, outcome TEXT NOT NULL, created_at REAL NOT NULL)""",
        """CREATE TABLE findings (
               id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
               sig_id TEXT NOT NULL, signature TEXT NOT NULL, rule TEXT NOT NULL, path TEXT, message TEXT)""",
        """CREATE INDEX findings_sig ON findings(sig_id)""",
        """CREATE INDEX runs_project ON runs(project, change_ref, created_at)""",
    ],
    1: [
        """CREATE TABLE resolutions (
               id INTEGER PRIMARY KEY, project TEXT NOT NULL, sig_id TEXT NOT NULL, change_ref TEXT NOT NULL,
               commit_sha TEXT, subject TEXT, base_sha TEXT, resolved_at REAL NOT NULL)""",
        """CREATE INDEX resolutions_sig ON resolutions(project, sig_id, resolved_at)""",
    ],
}


class FindingRecord(Record):
    rule: str
    signature: str
    path: str = ""
    message: str = ""


class RunRecord(Record):
    project: str
    change_ref: str  # branch, PR ("pr/12") or range
    outcome: str  # passed / failed / error
    findings: list[FindingRecord] = factory(list)
    commit_sha: str | None = None  # the change's commit when known (None before a commit exists)
    subject: str | None = None
    base_sha: str | None = None  # HEAD when the run happened (to learn the resolving commit later)
    created_at: float | None = None


class Pattern(Record):
    sig_id: str
    signature: str
    rule: str
    count: int  # runs in which it appeared
    changes: int  # distinct changes in which it appeared
    urgency: str
    last_seen: float
    last_resolution: str | None = None


def urgency(count: int, changes: int) -> str:
    if count >= 5 or changes >= 3:
        return "critical"
    if count >= 3 or changes >= 2:
        return "high"
    if count >= 2:
        return "medium"
    return "low"


class HypothesisStore(Protocol):
    def record_run(self, run: RunRecord) -> int: ...

    def patterns(self, project: str, sig_ids: list[str] | None = None, limit: int = 50) -> list[Pattern]: ...

    def forget(self, project: str | None = None, older_than_days: float | None = None,
               sig_id: str | None = None) -> int: ...

    def apply_retention(self, retention_days: float, max_runs: int) -> int: ...

    def fill_pending_resolutions(self, project: str, base_sha: str, commit_sha: str, subject: str) -> int: ...

    def has_pending_resolutions(self, project: str) -> bool: ...


class SQLiteStore:
    def __init__(self, path: str, timeout: float = 30.0):
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open hypothesis store {path}: {exc}") from None
        self.db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        self.db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a commit is atomic and survives a crash of the process; only an OS crash can
        # lose the last run, which is fine for a memory of runs and saves an fsync per commit hook.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        if self.schema_version() != SCHEMA_VERSION:  # the common case takes no write lock
            self._migrate()

    def close(self) -> None:
        self.db.close()

    # --- schema ---------------------------------------------------------------
    def schema_version(self) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:
            return 0
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.schema_version()
            if version > SCHEMA_VERSION:
                raise ConfigError(f"hypothesis store {self.path} has schema {version}, newer than this "
                                  f"sentinel supports ({SCHEMA_VERSION}); upgrade sentinel")
            while version < SCHEMA_VERSION:
                for stmt in _MIGRATIONS[version]:
                    self.db.execute(stmt)
                version += 1
                self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                                (str(version),))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # --- writing ---------------------------------------------------------------
    def record_run(self, run: RunRecord) -> int:
        now = run.created_at or time.time()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            prev = self.db.execute(
                "SELECT id FROM runs WHERE project=? AND change_ref=? ORDER BY created_at DESC, id DESC LIMIT 1",
                (run.project, run.change_ref)).fetchone()
            cur = self.db.execute(
                "INSERT INTO runs(project, change_ref, commit_sha, subject, outcome, created_at) VALUES (?,?,?,?,?,?)",
                (run.project, run.change_ref, run.commit_sha, run.subject, run.outcome, now))
            run_id = cur.lastrowid
            self.db.executemany(
                "INSERT INTO findings(run_id, sig_id, signature, rule, path, message) VALUES (?,?,?,?,?,?)",
                [(run_id, signature_id(f.signature), f.signature, f.rule, f.path, f.message[:500])
                 for f in run.findings])
            if prev is not None:
                before = {r[0] for r in self.db.execute("SELECT DISTINCT sig_id FROM findings WHERE run_id=?",
                                                        (prev[0],))}
                now_sigs = {signature_id(f.signature) for f in run.findings}
                for sig in sorted(before - now_sigs):
                    self.db.execute(
                        "INSERT INTO resolutions(project, sig_id, change_ref, commit_sha, subject, base_sha, "
                        "resolved_at) VALUES (?,?,?,?,?,?,?)",
                        (run.project, sig, run.change_ref, run.commit_sha, run.subject, run.base_sha, now))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return int(run_id)

    def has_pending_resolutions(self, project: str) -> bool:
        """Resolutions recorded before their commit existed, not yet named (see fill_pending_resolutions)."""
        return self.db.execute("SELECT 1 FROM resolutions WHERE project=? AND commit_sha IS NULL LIMIT 1",
                               (project,)).fetchone() is not None

    def fill_pending_resolutions(self, project: str, base_sha: str, commit_sha: str, subject: str) -> int:
        """A pre-commit run resolves a failure before its commit exists; name it once it does."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                "UPDATE resolutions SET commit_sha=?, subject=? WHERE project=? AND commit_sha IS NULL AND base_sha=?",
                (commit_sha, subject, project, base_sha))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return cur.rowcount

    def forget(self, project: str | None = None, older_than_days: float | None = None,
               sig_id: str | None = None) -> int:
        clauses, args = [], []
        if project:
            clauses.append("project=?")
            args.append(project)
        if older_than_days is not None:
            clauses.append("created_at < ?")
            args.append(time.time() - older_than_days * 86400)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if sig_id:
                n = self.db.execute("DELETE FROM findings WHERE sig_id=?", (sig_id,)).rowcount
                self.db.execute("DELETE FROM resolutions WHERE sig_id=?", (sig_id,))
            else:
                where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
                # No WHERE is `memory forget --all`: deleting every run is the command's purpose.
                n = self.db.execute(f"DELETE FROM runs{where}", args).rowcount  # sentinel: ignore[SEN105]
                rwhere = where.replace("created_at", "resolved_at")
                self.db.execute(f"DELETE FROM resolutions{rwhere}", args)  # sentinel: ignore[SEN105]
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return n

    def apply_retention(self, retention_days: float, max_runs: int) -> int:
        removed = self.forget(older_than_days=retention_days)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            extra = self.db.execute(
                "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY created_at DESC, id DESC LIMIT ?)",
                (max_runs,)).rowcount
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return removed + extra

    # --- reading ---------------------------------------------------------------
    def patterns(self, project: str, sig_ids: list[str] | None = None, limit: int = 50) -> list[Pattern]:
        sql = ("SELECT f.sig_id, MIN(f.signature), MIN(f.rule), COUNT(DISTINCT r.id), COUNT(DISTINCT r.change_ref), "
               "MAX(r.created_at) FROM findings f JOIN runs r ON r.id = f.run_id WHERE r.project=?")
        args: list = [project]
        if sig_ids is not None:
            if not sig_ids:
                return []
            sql += f" AND f.sig_id IN ({','.join('?' * len(sig_ids))})"
            args.extend(sig_ids)
        sql += " GROUP BY f.sig_id ORDER BY COUNT(DISTINCT r.id) DESC, MAX(r.created_at) DESC LIMIT ?"
        args.append(limit)
        out = []
        for sig_id, sig, rule, count, changes, last in self.db.execute(sql, args).fetchall():
            res = self.db.execute(
                "SELECT commit_sha, subject, change_ref FROM resolutions WHERE project=? AND sig_id=? "
                "ORDER BY resolved_at DESC, id DESC LIMIT 1", (project, sig_id)).fetchone()
            last_res = None
            if res:
                commit, subject, ref = res
                last_res = f"{commit[:10] if commit else 'a commit on ' + ref}: {subject or '(no subject)'}"
            out.append(Pattern(sig_id, sig, rule, count, changes, urgency(count, changes), last, last_res))
        return out

    def run_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def open_store(config_memory, git_dir: str | None) -> SQLiteStore:
    """Open the configured store (see :func:`sentinel.memory.location.store_location`)."""
    return SQLiteStore(store_location(config_memory, git_dir))
