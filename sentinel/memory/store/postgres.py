"""The PostgreSQL backend (psycopg 3 + pgvector): one memory for every clone and CI runner of a project.

Chosen by `$SENTINEL_DATABASE_URL` or `[tool.sentinel.memory] database-url = "postgresql://..."`; install the
extra `diff-sentinel[postgres]`. psycopg is imported here only, never on the hook path of a SQLite store.

- **Same behaviour as SQLite**: the statements are those of `sentinel.memory.store.sql`; only the connection,
  transactions and the card search differ.
- **Concurrency**: every write is one transaction; an attempt is inserted with `ON CONFLICT (run_key) DO
  NOTHING`, so runners re-sending the same run never duplicate it and never fail on each other; migrations
  take a transaction-scoped advisory lock, so two runners upgrading at once apply each step once.
- **Never stall the hook**: libpq will not time a connection out below 2 s, so :meth:`PostgresStore.connect`
  gives up after `wait` seconds itself (the attempt is left to finish and is closed in the background);
  `lock_timeout` bounds waits for row locks. Callers that need a hard bound on a whole exchange run it with
  :func:`sentinel.memory.store.postgres.within` (the hook does).
- **Credentials**: every message that names the database is redacted (`sentinel.memory.store.dburl`).
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager

from sentinel.memory.store import SCHEMA_VERSION, StoreBusy, StoreError, StoreUnavailable, within
from sentinel.memory.store.dburl import redact_text, redact_url
from sentinel.memory.store.sql import SQLStore

_MIGRATION_LOCK = 0x5E47_1E1  # advisory lock id: one migrating runner at a time
_EXTRA = "pip install 'diff-sentinel[postgres]'"
LEXICAL_SCAN = 2000  # cards matching every query term that are ranked (see _lexical_candidates)


def _driver():
    try:
        import psycopg
    except ImportError:
        raise StoreUnavailable(f"the PostgreSQL store needs psycopg: {_EXTRA}") from None
    return psycopg


class PostgresStore(SQLStore):
    dialect = "postgres"

    def __init__(self, conn, url: str):
        self.conn = conn
        self.url = url
        self.recovered = None

    @classmethod
    def connect(cls, url: str, wait: float = 10.0, migrate: bool = True, quick: bool = False) -> "PostgresStore":
        psycopg = _driver()
        lock_ms = max(100, int(wait * 1000))
        state: dict = {"abandoned": False}
        lock = threading.Lock()

        def attempt():
            conn = psycopg.connect(url, autocommit=True, connect_timeout=max(2, int(wait + 0.999)),
                                   options=f"-c lock_timeout={lock_ms}", application_name="sentinel")
            with lock:
                if state["abandoned"]:  # the caller has moved on: do not leak the connection
                    conn.close()
                    return None
            return conn

        try:
            conn = within(attempt, wait)
        except StoreUnavailable:
            with lock:
                state["abandoned"] = True
            raise StoreUnavailable(f"the team database did not answer within {wait:.1f}s "
                                   f"({redact_url(url)})") from None
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot reach the team database {redact_url(url)}: "
                                   f"{redact_text(str(exc).strip(), url)}") from None
        store = cls(conn, url)
        store.quick = quick
        if migrate:
            try:
                if store.schema_version() != SCHEMA_VERSION:
                    store.migrate()
            except BaseException:
                conn.close()
                raise
        return store

    def describe(self) -> str:
        return redact_url(self.url)

    def close(self) -> None:
        self.conn.close()  # psycopg's close never raises, even on a broken connection

    # --- the backend primitives --------------------------------------------------------------------------
    def _call(self, fn):
        psycopg = _driver()
        try:
            return fn()
        except psycopg.errors.LockNotAvailable:
            raise StoreBusy(f"the team database kept a row locked too long ({self.describe()})") from None
        except psycopg.errors.QueryCanceled:
            raise StoreBusy(f"the team database did not answer in time ({self.describe()})") from None
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"lost the team database {self.describe()}: "
                                   f"{redact_text(str(exc).strip(), self.url)}") from None
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"the team database refused ({self.describe()}): "
                             f"{redact_text(str(exc).strip(), self.url)}") from None

    @contextmanager
    def _tx(self):
        with self.conn.transaction():
            yield

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("?", "%s")

    def _all(self, sql: str, args=()) -> list[tuple]:
        return self._call(lambda: self.conn.execute(self._sql(sql), tuple(args)).fetchall())

    def _exec(self, sql: str, args=()) -> int:
        return self._call(lambda: self.conn.execute(self._sql(sql), tuple(args)).rowcount)

    def _insert(self, sql: str, args=()) -> int:
        return int(self._call(lambda: self.conn.execute(self._sql(sql) + " RETURNING id", tuple(args)).fetchone()[0]))

    def _insert_run(self, sql: str, args) -> int | None:
        row = self._call(lambda: self.conn.execute(self._sql(sql) + " ON CONFLICT (run_key) DO NOTHING RETURNING id",
                                                   tuple(args)).fetchone())
        return int(row[0]) if row else None

    def _version_in_tx(self) -> int:
        self._exec("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        return self.schema_version()

    def schema_version(self) -> int:
        if self._one("SELECT to_regclass('meta')")[0] is None:
            return 0
        row = self._one("SELECT value FROM meta WHERE key='schema_version'")
        return int(row[0]) if row else 0

    def migrate(self) -> list[int]:
        psycopg = _driver()
        try:
            return super().migrate()
        except (psycopg.errors.FeatureNotSupported, psycopg.errors.UndefinedFile) as exc:
            raise StoreError(f"the team database has no pgvector extension ({self.describe()}): install pgvector "
                             f"on the server ({redact_text(str(exc).strip(), self.url)})") from None
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"cannot create Sentinel's tables in {self.describe()}: "
                             f"{redact_text(str(exc).strip(), self.url)} (a superuser must run "
                             "`CREATE EXTENSION vector` once, or run `sentinel memory migrate` as the owner)"
                             ) from None

    # --- learned cards ---------------------------------------------------------------------------------
    def _vector_out(self) -> str:
        return "vector::text"

    def _vector_list(self, value) -> list[float] | None:
        from sentinel.memory.store.cards import canonical_vector

        return canonical_vector(json.loads(value)) if value is not None else None

    def _import_card(self, rec: dict) -> int:
        vec = rec.get("vector")
        return self._put_card_rows([(rec["project"], rec["card_id"],
                                     json.dumps(rec["card"], ensure_ascii=False, sort_keys=True),
                                     rec.get("search_text") or "", rec.get("model"), len(vec) if vec else None,
                                     vec or None, rec.get("updated_at") or time.time())], replace=False)

    def _put_card_rows(self, rows, replace: bool = True) -> int:
        from sentinel.memory.store.cards import vector_text

        tail = ("ON CONFLICT (project, card_id) DO UPDATE SET body=excluded.body, search_text=excluded.search_text, "
                "model=excluded.model, dim=excluded.dim, vector=excluded.vector, updated_at=excluded.updated_at"
                if replace else "ON CONFLICT DO NOTHING")
        n = 0
        dims = set()
        for project, cid, body, text, model, dim, vec, at in rows:
            n += self._exec("INSERT INTO cards(project, card_id, body, search_text, model, dim, vector, updated_at) "
                            f"VALUES (?,?,?,?,?,?,?::vector,?) {tail}",
                            (project, cid, body, text, model, dim, None if vec is None else vector_text(vec), at))
            if dim:
                dims.add(int(dim))
        for dim in sorted(dims):
            self.ensure_vector_index(dim)
        return n

    def ensure_vector_index(self, dim: int) -> None:
        """The HNSW index (cosine) for vectors of one dimension, made when the first such card arrives (an HNSW
        index needs a fixed dimension; a partial index per dimension lets models differ between projects)."""
        dim = int(dim)
        if self._one("SELECT to_regclass(?)", (f"cards_hnsw_{dim}",))[0] is not None:
            return
        self._exec("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK + dim,))
        self._exec(f"CREATE INDEX IF NOT EXISTS cards_hnsw_{dim} ON cards USING hnsw "
                   f"((vector::vector({dim})) vector_cosine_ops) WHERE dim = {dim}")

    def _vector_candidates(self, project: str, qvec, n: int) -> dict[str, float]:
        from sentinel.memory.store.cards import vector_text

        dim = len(qvec)
        q = vector_text(qvec)
        with self._tx():
            # the index returns ef_search neighbours before the project filter: ask for enough
            self._exec(f"SET LOCAL hnsw.ef_search = {max(100, 2 * int(n))}")
            rows = self._all(f"SELECT card_id, 1 - (vector::vector({dim}) <=> ?::vector({dim})) FROM cards "
                             f"WHERE dim = {dim} AND project = ? ORDER BY vector::vector({dim}) <=> ?::vector({dim}) "
                             "LIMIT ?", (q, project, q, int(n)))
        return {cid: float(sim) for cid, sim in rows}

    def _lexical_candidates(self, project: str, terms: list[str], n: int,
                            among: list[str] | None = None) -> dict[str, float]:
        """Full-text scores (ts_rank_cd of an OR query) of the cards that match every term (the GIN index finds
        them; at most LEXICAL_SCAN are ranked) and of `among` (the vector candidates). Ranking every card that
        shares one word with the query would read most of a large table; these two sets keep it bounded."""
        any_term = " | ".join(f"'{t}'" for t in terms)  # terms are [A-Za-z0-9_] words (cards.query_terms)
        all_terms = " & ".join(f"'{t}'" for t in terms)
        rows = self._all(
            "SELECT card_id, ts_rank_cd(tsv, to_tsquery('english', ?)) AS r FROM ("
            "  (SELECT card_id, tsv FROM cards WHERE project = ? AND tsv @@ to_tsquery('english', ?) LIMIT ?)"
            "  UNION SELECT card_id, tsv FROM cards WHERE project = ? AND card_id = ANY(?)) c "
            "WHERE tsv @@ to_tsquery('english', ?) ORDER BY r DESC LIMIT ?",
            (any_term, project, all_terms, LEXICAL_SCAN, project, list(among or []), any_term, int(n)))
        return {cid: float(score) for cid, score in rows}
