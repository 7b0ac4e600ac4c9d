"""The SQLite backend: one file per clone (WAL, one IMMEDIATE transaction per write).

Two failures must never stall or break the gate:

- **another writer holds the lock** (a long `memory forget`, a stuck process): waits are bounded by `timeout`
  (the hook passes ~1 s) and then raise :class:`StoreBusy`, so the verdict is given and says memory was
  skipped;
- **a corrupted file** (disk trouble, a half-copied cache, a file that is not SQLite at all): it is moved
  aside as `<name>.corrupt-<time>` (its -wal/-shm with it) and a new store is created; `self.recovered` says
  so, for the warning.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager

from sentinel.memory.store import StoreBusy, StoreError
from sentinel.memory.store.sql import SQLStore

_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_CORRUPT_WORDS = ("malformed", "not a database", "file is encrypted", "disk image")


def is_corruption(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.IntegrityError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    return any(w in str(exc).lower() for w in _CORRUPT_WORDS)


def is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    return "locked" in str(exc).lower() or "busy" in str(exc).lower()


class SQLiteStore(SQLStore):
    dialect = "sqlite"

    def __init__(self, path: str, timeout: float = 10.0, quick: bool = False):
        self.path = path
        self.timeout = timeout
        self.quick = quick
        self.recovered: str | None = None  # where a corrupted file was moved, when that happened
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self._open()
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise StoreBusy(self._busy_message()) from None
            if not is_corruption(exc):
                raise StoreError(f"cannot open the hypothesis store {path}: {exc}") from None
            self._quarantine()
            try:
                self._open()
            except sqlite3.Error as exc2:
                raise StoreError(f"cannot recreate the hypothesis store {path}: {exc2}") from None

    @classmethod
    def readonly(cls, path: str) -> "SQLiteStore":
        """The store opened so that nothing on disk changes (for readers such as the MCP server): `immutable`
        when no write-ahead log exists (a plain read-only connection would create -wal/-shm files), `mode=ro`
        when a writer is active. Never migrates: a store of another schema is a StoreError."""
        from pathlib import Path

        from sentinel.memory.store import SCHEMA_VERSION

        if not os.path.exists(path):
            raise StoreError("no gate run recorded yet in this repository (the hypothesis store is empty)")
        self = cls.__new__(cls)
        self.path, self.timeout, self.recovered = path, 1.0, None
        mode = "mode=ro" if os.path.exists(path + "-wal") else "mode=ro&immutable=1"
        try:
            self.db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?{mode}", uri=True, isolation_level=None)
            version = self.schema_version()
        except sqlite3.Error as exc:
            raise StoreError(f"the hypothesis store is not readable: {exc}") from None
        if version != SCHEMA_VERSION:
            self.db.close()
            raise StoreError(f"the hypothesis store has schema {version}, this sentinel reads {SCHEMA_VERSION} "
                             "(the next `sentinel check` or `sentinel memory migrate` upgrades it)")
        return self

    def _open(self) -> None:
        self.db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            self.db.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            if self.db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                self.db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit is atomic and survives a crash of the process; only an OS crash can lose
            # the last run, which is fine for a memory of runs and saves an fsync per commit hook.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            if self.schema_version() != self._current():  # the common case takes no write lock
                self.migrate()
        except BaseException:
            self.db.close()
            raise

    @staticmethod
    def _current() -> int:
        from sentinel.memory.store import SCHEMA_VERSION

        return SCHEMA_VERSION

    def _quarantine(self) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        dest = f"{self.path}.corrupt-{stamp}-{os.getpid()}"
        for suffix in ("", "-wal", "-shm"):
            try:
                os.replace(self.path + suffix, dest + suffix)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(f"the hypothesis store {self.path} is corrupted and cannot be moved aside: "
                                 f"{exc}") from None
        self.recovered = dest

    def _busy_message(self) -> str:
        return (f"the hypothesis store is locked by another process (waited {self.timeout:.1f}s): "
                f"{self.path}")

    def describe(self) -> str:
        return self.path

    def close(self) -> None:
        self.db.close()

    # --- the backend primitives --------------------------------------------------------------------------
    def _call(self, fn, *args):
        try:
            return fn(*args)
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise StoreBusy(self._busy_message()) from None
            if is_corruption(exc):
                self.db.close()
                self._quarantine()
                self._open()
                raise StoreError(f"the hypothesis store was corrupted ({exc}): moved aside to {self.recovered} "
                                 "and a new one created") from None
            raise

    @contextmanager
    def _tx(self):
        self._call(self.db.execute, "BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self._call(self.db.execute, "COMMIT")

    def _all(self, sql: str, args=()) -> list[tuple]:
        return self._call(lambda: self.db.execute(sql, tuple(args)).fetchall())

    def _exec(self, sql: str, args=()) -> int:
        return self._call(lambda: self.db.execute(sql, tuple(args)).rowcount)

    def _insert(self, sql: str, args=()) -> int:
        return int(self._call(lambda: self.db.execute(sql, tuple(args)).lastrowid))

    def _insert_run(self, sql: str, args) -> int | None:
        # writers are serialised by BEGIN IMMEDIATE: a plain look-up cannot race
        cur = self._call(lambda: self.db.execute(sql + " ON CONFLICT (run_key) DO NOTHING", tuple(args)))
        return int(cur.lastrowid) if cur.rowcount == 1 else None

    def _version_in_tx(self) -> int:
        return self.schema_version()

    def schema_version(self) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise
        return int(row[0]) if row else 0

    # --- learned cards (sentinel.memory.store.cards) ------------------------------------------------------
    def _vector_in(self, vec) -> bytes:
        from sentinel.memory.store.cards import pack_vector

        return pack_vector(vec)

    def _cards_changed(self) -> None:
        self._vectors = None

    _vectors = None  # (project, data_version, ids, matrix): the project's vectors, loaded once

    def _vector_candidates(self, project: str, qvec, n: int) -> dict[str, float]:
        import numpy as np

        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        cache = self._vectors
        if cache is None or cache[0] != project or cache[1] != version:
            rows = self._all("SELECT card_id, vector FROM cards WHERE project=? AND vector IS NOT NULL "
                             "ORDER BY card_id", (project,))
            q = np.asarray(qvec, dtype=np.float32)
            rows = [(cid, blob) for cid, blob in rows if len(blob) == 4 * len(q)]
            ids = [cid for cid, _ in rows]
            matrix = (np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), len(q))
                      if rows else np.zeros((0, len(q)), dtype=np.float32))
            norms = np.linalg.norm(matrix, axis=1)
            matrix = matrix / np.where(norms == 0, 1, norms)[:, None]
            cache = self._vectors = (project, version, ids, matrix)
        _, _, ids, matrix = cache
        if not ids:
            return {}
        q = np.asarray(qvec, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        sims = np.einsum("ij,j->i", matrix, q)  # no BLAS threads: they spin on a busy machine
        top = np.argpartition(-sims, min(n, len(ids)) - 1)[:n] if len(ids) > n else np.arange(len(ids))
        return {ids[i]: float(sims[i]) for i in top}

    def _cosines(self, project: str, qvec, card_ids: list[str]) -> dict[str, float]:
        import numpy as np

        self._vector_candidates(project, qvec, 1)  # (loads the project's vectors once)
        _, _, ids, matrix = self._vectors
        rows = {cid: i for i, cid in enumerate(ids)}
        q = np.asarray(qvec, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        return {cid: float(matrix[rows[cid]] @ q) for cid in card_ids if cid in rows}

    def _lexical_candidates(self, project: str, terms: list[str], n: int,
                            among: list[str] | None = None) -> dict[str, float]:
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self._all("SELECT c.card_id, -bm25(cards_fts) FROM cards_fts JOIN cards c ON c.rowid = cards_fts.rowid "
                         "WHERE cards_fts MATCH ? AND c.project=? ORDER BY bm25(cards_fts) LIMIT ?",
                         (match, project, n))
        return {cid: float(score) for cid, score in rows}

    def _vector_list(self, value) -> list[float] | None:
        from sentinel.memory.store.cards import unpack_vector

        return unpack_vector(value) if value is not None else None
