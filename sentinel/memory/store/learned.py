"""Where learned cards live: the `LearnedCardStore` interface, and the SQLite file of Sentinel before schema 6.

This module is the seam between the learning pipeline (sentinel.memory.learn, owned by `learn`) and the storage
backends (owned by `store`): the pipeline and the project's learned index talk only to the protocol below. Its
implementation is `sentinel.memory.store.cards.LearnedCards`, on either backend of the store (the clone's SQLite
file or the team's PostgreSQL database), returned by `sentinel.memory.store.backends.open_learned_store`. Keep
the protocol small and typed.

What a backend keeps:
  - cards: governed card dicts (docs/card-format.md), by id, insert-or-replace, versioned per project (a clone's
    cache of them follows the versions: sentinel.memory.learn.cache);
  - seen keys per source: what has been processed (commit shas, "gh:OWNER/NAME#N", record ids), so a re-run
    learns only what is new (kept for rejected candidates too: they are not re-examined);
  - runs: one `LearnRun` per `sentinel memory learn`, with the stage counts (for `memory stats`).

`SQLiteLearnedCardStore` is the file Sentinel kept before (<git-dir>/sentinel/learned.sqlite3: one project, no
vectors, no versions). `migrate_legacy_store` moves its contents into the store the first time the learned cards
are opened. sqlite3 is imported only when a store is opened.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Protocol

from sentinel.errors import ConfigError
from sentinel.memory.store.location import is_legacy_store  # noqa: F401 (where it was)

SCHEMA_VERSION = 1


@dataclass
class LearnRun:
    """One learning run: where from, which standardiser, and the count of each stage."""

    source: str  # "git:<repository>", "github:OWNER/NAME", "records:<file>"
    standardiser: str  # "deterministic" or "llm:MODEL"
    counts: dict = field(default_factory=dict)  # commits, candidates, purified, standardised, qc_passed, merged...
    started_at: float = 0.0
    finished_at: float = 0.0
    head: str | None = None
    cost: float | None = None  # LLM cost in USD when known

    def to_json(self) -> dict:
        return asdict(self)


class LearnedCardStore(Protocol):
    """Storage of a project's learned cards and learning state. Implementations: SQLiteLearnedCardStore."""

    def put(self, cards: Iterable[dict]) -> int:
        """Insert or replace cards by id; returns how many were written."""
        ...

    def get(self, card_id: str) -> dict | None: ...

    def cards(self) -> Iterator[dict]:
        """Every card, in id order (the order the learned index is built in)."""
        ...

    def count(self) -> int: ...

    def remove(self, card_ids: Iterable[str]) -> int: ...

    def seen(self, source: str) -> set[str]:
        """Keys already processed for this source."""
        ...

    def mark_seen(self, source: str, keys: Iterable[str]) -> None: ...

    def record_run(self, run: LearnRun) -> None: ...

    def runs(self, limit: int = 20) -> list[LearnRun]:
        """The latest runs, newest first."""
        ...

    def digest(self) -> str:
        """Identity of the card set: changes whenever a card is added, replaced or removed."""
        ...

    def close(self) -> None: ...


class SQLiteLearnedCardStore:
    """LearnedCardStore on one SQLite file (WAL; one transaction per write call)."""

    def __init__(self, path: str, timeout: float = 30.0):
        import sqlite3

        self.path = path
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise ConfigError(f"learned card store {self.path} has schema {version}, newer than this Sentinel "
                                  f"({SCHEMA_VERSION}): upgrade Sentinel")
            if version < 1:
                db.execute("CREATE TABLE cards (id TEXT PRIMARY KEY, json TEXT NOT NULL, commit_sha TEXT, "
                           "repository TEXT, updated_at REAL NOT NULL)")
                db.execute("CREATE TABLE seen (source TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (source, key))")
                db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, json TEXT NOT NULL, finished_at REAL)")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def put(self, cards: Iterable[dict]) -> int:
        now = time.time()
        rows = [(c["id"], json.dumps(c, ensure_ascii=False, sort_keys=True), c.get("provenance", {}).get("commit"),
                 c.get("provenance", {}).get("repository"), now) for c in cards]
        with self._tx():
            self._db.executemany("INSERT OR REPLACE INTO cards VALUES (?, ?, ?, ?, ?)", rows)
        return len(rows)

    def get(self, card_id: str) -> dict | None:
        row = self._db.execute("SELECT json FROM cards WHERE id = ?", (card_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def cards(self) -> Iterator[dict]:
        for (text,) in self._db.execute("SELECT json FROM cards ORDER BY id"):
            yield json.loads(text)

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM cards").fetchone()[0])

    def remove(self, card_ids: Iterable[str]) -> int:
        ids = [(i,) for i in card_ids]
        with self._tx():
            cur = self._db.executemany("DELETE FROM cards WHERE id = ?", ids)
        return cur.rowcount if cur.rowcount >= 0 else len(ids)

    def seen(self, source: str) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM seen WHERE source = ?", (source,))}

    def mark_seen(self, source: str, keys: Iterable[str]) -> None:
        with self._tx():
            self._db.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?)", [(source, k) for k in keys])

    def record_run(self, run: LearnRun) -> None:
        with self._tx():
            self._db.execute("INSERT INTO runs (json, finished_at) VALUES (?, ?)",
                             (json.dumps(run.to_json(), sort_keys=True), run.finished_at))

    def runs(self, limit: int = 20) -> list[LearnRun]:
        rows = self._db.execute("SELECT json FROM runs ORDER BY id DESC LIMIT ?", (int(limit),)).fetchall()
        return [LearnRun(**json.loads(r[0])) for r in rows]

    def digest(self) -> str:
        h = hashlib.sha256()
        for (text,) in self._db.execute("SELECT json FROM cards ORDER BY id"):
            h.update(text.encode("utf-8"))
            h.update(b"\n")
        return h.hexdigest()

    def close(self) -> None:
        self._db.close()

    def _tx(self):
        db = self._db

        class _Tx:
            def __enter__(self_inner):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, exc_type, exc, tb):
                db.execute("ROLLBACK" if exc_type else "COMMIT")
                return False

        return _Tx()

    def __enter__(self) -> SQLiteLearnedCardStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def migrate_legacy_store(path: str, cards) -> dict[str, int]:
    """Copy a legacy learned-card file into `cards` (a LearnedCards): its cards (with vectors of the default
    embedder), seen keys and runs. Repeatable: cards replace by id, seen keys and runs are added once."""
    legacy = SQLiteLearnedCardStore(path)
    try:
        moved = list(legacy.cards())
        sources = [s for (s,) in legacy._db.execute("SELECT DISTINCT source FROM seen ORDER BY source")]
        runs = list(reversed(legacy.runs(limit=1_000_000)))
        if moved:
            cards.put(moved)
        for source in sources:
            cards.mark_seen(source, legacy.seen(source))
        have = {(r.get("finished_at") if isinstance(r, dict) else r.finished_at) for r in cards.runs(limit=1_000_000)}
        for run in runs:
            if run.finished_at not in have:
                cards.record_run(run)
    finally:
        legacy.close()
    return {"cards": len(moved), "sources": len(sources), "runs": len(runs)}
