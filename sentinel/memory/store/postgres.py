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
import math
import re
import threading
from contextlib import contextmanager

from sentinel.memory.store import SCHEMA_VERSION, StoreBusy, StoreError, StoreUnavailable, within
from sentinel.memory.store.dburl import redact_text, redact_url
from sentinel.memory.store.sql import SQLStore

_MIGRATION_LOCK = 0x5E47_1E1  # advisory lock id: one migrating runner at a time
_EXTRA = "pip install 'diff-sentinel[postgres]'"
# Tuned by benchmarks/team_memory_bench.py (recall of the exact top 10 beside each latency, same run): see
# docs/evaluation.md#team-memory-at-scale.
# HNSW candidate list (pgvector's default is 40): recall@10 of exact 0.99 at 135K cards (p50 3.8 ms), 0.88 at 1M
# (4.2 ms); 200 gave 0.97 / 0.85, 800 0.997 / 0.92 at 12 ms (one graph flattens at 1M: see the sharded figures).
EF_SEARCH = 400
# The HNSW graph: with pgvector's defaults (m=16, ef_construction=64) recall@10 at 135K cards is 0.90 at ef_search
# 200, 0.93 at 400; this denser graph, built with a wider candidate list, 0.98 / 0.99 for 2.7x the build time.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
ITERATIVE_MAX_TUPLES = 20_000  # pgvector >= 0.8: how far an iterative scan may go to fill a filtered list
LEXICAL_BUDGET = 1000  # expected rows of the rare words' matches that a hybrid search ranks (2x at most)


def _hnsw_definition(dim: int) -> str:
    return (f"((vector::vector({dim})) vector_cosine_ops) WITH (m = {HNSW_M}, ef_construction = "
            f"{HNSW_EF_CONSTRUCTION}) WHERE dim = {dim}")


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
        self._extversion: tuple[int, ...] | None = None
        self._lexeme_stats: tuple[dict[str, float], float, float] | None = None
        self._ef_search: int | None = None  # this session's hnsw.ef_search, once set
        self._stems: dict[str, list[str]] = {}  # query word -> its lexemes (English)

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

    _VECTOR_PARAM = "?::vector"

    def _vector_in(self, vec) -> str:
        from sentinel.memory.store.cards import vector_text

        return vector_text(vec)

    def _cards_written(self, dims: set[int]) -> None:
        for dim in sorted(dims):
            self.ensure_vector_index(dim)

    def ensure_vector_index(self, dim: int) -> None:
        """The HNSW index (cosine) for vectors of one dimension, made when the first such card arrives (an HNSW
        index needs a fixed dimension; a partial index per dimension lets models differ between projects)."""
        dim = int(dim)
        if self._one("SELECT to_regclass(?)", (f"cards_hnsw_{dim}",))[0] is not None:
            return
        self._exec("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK + dim,))
        self._exec(f"CREATE INDEX IF NOT EXISTS cards_hnsw_{dim} ON cards USING hnsw {_hnsw_definition(dim)}")

    def vector_indexes(self) -> dict[int, dict[str, int]]:
        """The HNSW indexes of the cards, by dimension, with the graph parameters they were built with (pgvector's
        defaults where the index names none)."""
        out: dict[int, dict[str, int]] = {}
        for name, options in self._all("SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_index i ON "
                                       "i.indexrelid = c.oid WHERE i.indrelid = 'cards'::regclass"):
            head, _, tail = name.rpartition("_")
            if head != "cards_hnsw" or not tail.isdigit():
                continue
            params = {"m": 16, "ef_construction": 64}
            for opt in options or []:
                key, _, value = opt.partition("=")
                if key in params and value.isdigit():
                    params[key] = int(value)
            out[int(tail)] = params
        return out

    def rebuild_vector_indexes(self) -> list[int]:
        """Rebuild, without blocking searches or writes, every HNSW index built with other graph parameters than
        this version's (an index made by an earlier Sentinel): the new index is built concurrently beside the old
        one, which is dropped only once its successor is valid. Explicit (`sentinel memory migrate`), never on the
        hook path: at a million cards this takes tens of minutes. Returns the dimensions rebuilt."""
        wanted = {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION}
        done = []
        for dim, params in sorted(self.vector_indexes().items()):
            if params == wanted:
                continue
            name, fresh = f"cards_hnsw_{dim}", f"cards_hnsw_{dim}_rebuilt"

            def rebuild():
                # a session lock (CREATE INDEX CONCURRENTLY runs outside any transaction): one rebuilder at a time
                self.conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK + dim,))
                try:
                    if self.vector_indexes().get(dim) == wanted:  # another runner rebuilt it meanwhile
                        return
                    self.conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {fresh}")  # an interrupted attempt's
                    self.conn.execute(f"CREATE INDEX CONCURRENTLY {fresh} ON cards USING hnsw "
                                      f"{_hnsw_definition(dim)}")
                    with self.conn.transaction():
                        self.conn.execute(f"DROP INDEX {name}")
                        self.conn.execute(f"ALTER INDEX {fresh} RENAME TO {name}")
                finally:
                    self.conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK + dim,))

            self._call(rebuild)
            done.append(dim)
        return done

    # --- search ------------------------------------------------------------------------------------------
    def _pgvector(self) -> tuple[int, ...]:
        """The installed pgvector's version (read once per connection)."""
        if self._extversion is None:
            row = self._one("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            self._extversion = tuple(int(p) for p in re.findall(r"\d+", row[0] if row else "0")[:3])
        return self._extversion

    def _search_settings(self, n: int, ef_search: int | None = None) -> None:
        """hnsw.ef_search for a candidate list of n, and iterative index scans where pgvector has them (0.8.0 on:
        the index keeps scanning until n rows pass the project filter, instead of handing back ef_search rows of
        which another project's may be most). Session settings of this connection, sent only when they change:
        a search is then one round trip."""
        ef = max(int(ef_search or EF_SEARCH), int(n))
        if self._ef_search == ef:
            return
        statements = [f"SET hnsw.ef_search = {ef}"]
        if self._ef_search is None and self._pgvector() >= (0, 8, 0):
            statements += ["SET hnsw.iterative_scan = strict_order",
                           f"SET hnsw.max_scan_tuples = {ITERATIVE_MAX_TUPLES}"]
        self._call(lambda: self.conn.execute("; ".join(statements)))
        self._ef_search = ef

    def _vector_candidates(self, project: str, qvec, n: int, ef_search: int | None = None) -> dict[str, float]:
        from sentinel.memory.store.cards import vector_text

        dim = len(qvec)
        q = vector_text(qvec)
        order = f"vector::vector({dim}) <=> %(q)s::vector({dim})"
        self._search_settings(n, ef_search)
        args = {"q": q, "p": project, "n": int(n)}
        rows = self._call(lambda: self.conn.execute(
            f"SELECT card_id, 1 - ({order}) FROM cards WHERE dim = {dim} AND project = %(p)s ORDER BY {order} "
            "LIMIT %(n)s", args, prepare=True).fetchall())
        if len(rows) < n and self._pgvector() < (0, 8, 0):
            # the index's ef_search nearest were mostly other projects': this project's are ranked exactly (a scan
            # of its own rows, which are few when this happens)
            rows = self._call(lambda: self.conn.execute(
                f"WITH mine AS MATERIALIZED (SELECT card_id, vector FROM cards WHERE project = %(p)s AND dim = {dim}) "
                f"SELECT card_id, 1 - ({order}) FROM mine ORDER BY {order} LIMIT %(n)s", args).fetchall())
        return {cid: float(sim) for cid, sim in rows}

    def _cosines(self, project: str, qvec, card_ids: list[str]) -> dict[str, float]:
        from sentinel.memory.store.cards import vector_text

        if not card_ids:
            return {}
        dim = len(qvec)
        return {cid: float(c) for cid, c in self._all(
            f"SELECT card_id, 1 - (vector::vector({dim}) <=> ?::vector({dim})) FROM cards WHERE project = ? "
            f"AND dim = {dim} AND card_id = ANY(?)", (vector_text(qvec), project, list(card_ids)))}

    def _lexemes(self, terms: list[str]) -> list[str]:
        """The query's words as the full-text index keeps them (English stems, stop words gone), asked of the
        database for the words this connection has not seen yet (a long-lived process asks once per word)."""
        unknown = [t for t in dict.fromkeys(terms) if t not in self._stems]
        if unknown:
            for word, stems in self._all("SELECT w, tsvector_to_array(to_tsvector('english', w)) "
                                         "FROM unnest(?::text[]) AS w", (unknown,)):
                self._stems[word] = list(stems or [])
            if len(self._stems) > 100_000:
                self._stems.clear()
        return list(dict.fromkeys(x for t in terms for x in self._stems.get(t, [])))

    def _lexeme_rows(self) -> tuple[dict[str, float], float, float]:
        """(frequency of the most common lexemes, the frequency below them, rows): the planner's statistics of
        the cards' full text (pg_stats), read once per connection, to tell a query's rare words from its common
        ones without scanning anything."""
        if self._lexeme_stats is None:
            row = self._one("SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples "
                            "FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename AND c.relkind = 'r' "
                            "WHERE s.tablename = 'cards' AND s.attname = 'tsv' LIMIT 1")
            if row and row[0]:
                freqs = dict(zip(row[0], row[1][:len(row[0])]))
                self._lexeme_stats = (freqs, min(freqs.values()) / 2, max(float(row[2] or 0), 0.0))
            else:  # never analysed (a small, new table): every word counts as rare, the scan limit bounds it
                rows = self._one("SELECT reltuples FROM pg_class WHERE relname = 'cards' AND relkind = 'r'")
                self._lexeme_stats = ({}, 0.0, max(float(rows[0] if rows else 0), 0.0))
        return self._lexeme_stats

    def lexical_terms(self, terms: list[str]) -> list[tuple[str, float, float]]:
        """The query's lexemes with their weight (BM25's idf, from the planner's frequency of each) and the rows
        expected to hold each, rarest first."""
        freqs, rare_freq, rows = self._lexeme_rows()
        out = []
        for lexeme in dict.fromkeys(self._lexemes(terms) if terms else []):
            df = max(1.0, freqs.get(lexeme, rare_freq) * rows)
            out.append((lexeme, math.log(1.0 + (max(rows, df) - df + 0.5) / (df + 0.5)), df))
        return sorted(out, key=lambda t: (t[2], t[0]))

    @staticmethod
    def lexical_score(terms: list[tuple[str, float, float]], column: str = "tsv") -> tuple[str, dict]:
        """(SQL, parameters) of a card's full-text score: the weights of the query's lexemes it holds — BM25 with
        term frequency left out, so the best cards are those that hold the query's rare words, which the GIN
        index finds without ranking the rest (see hybrid)."""
        if not terms:
            return "0::float8", {}
        parts, args = [], {}
        for i, (lexeme, weight, _) in enumerate(terms):
            args[f"lx{i}"], args[f"lw{i}"] = _quote_lexeme(lexeme), weight
            parts.append(f"CASE WHEN {column} @@ %(lx{i})s::tsquery THEN %(lw{i})s::float8 ELSE 0 END")
        return "(" + " + ".join(parts) + ")", args

    @staticmethod
    def rare_terms(terms: list[tuple[str, float, float]], budget: int | None = None) -> list[tuple[str, float, float]]:
        """The rarest lexemes whose matches together stay within `budget` rows (LEXICAL_BUDGET; at least one). A
        card that holds none of them scores at most the weights of the others: below what the rare words give,
        mostly (benchmarks/team_memory_bench.py measures how often)."""
        budget = LEXICAL_BUDGET if budget is None else budget
        picked: list[tuple[str, float, float]] = []
        total = 0.0
        for term in terms:
            if picked and total + term[2] > budget:
                break
            picked.append(term)
            total += term[2]
        return picked

    def hybrid(self, project: str, qvec, terms: list[str], n: int, k: int, weights: tuple[float, float],
               ef_search: int | None = None, lexical_budget: int | None = None
               ) -> list[tuple[str, float, float | None, float, str]]:
        """[(id, score, cosine, lexical, problem summary)] of the k best cards, in one statement: the n nearest by
        HNSW and the n best full-text matches (lexical_score) among the cards holding the query's rare words
        (GIN), each then scored on what it lacks (the cosine of a text match, the text score of a near card),
        fused as sentinel.memory.store.cards.fuse does and cut to k in the database."""
        weighted = self.lexical_terms(terms)
        budget = LEXICAL_BUDGET if lexical_budget is None else int(lexical_budget)
        rare = " | ".join(_quote_lexeme(t[0]) for t in self.rare_terms(weighted, budget)) or None
        if qvec is None and not rare:
            return []
        score, args = self.lexical_score(weighted, "m.tsv")
        near_score, _ = self.lexical_score(weighted, "k.tsv")
        w_e, w_l = weights
        args.update({"p": project, "n": int(n), "k": int(k), "we": float(w_e), "wl": float(w_l), "rare": rare,
                     "scan": 2 * budget})
        if qvec is not None:
            from sentinel.memory.store.cards import vector_text

            dim = len(qvec)
            args["q"] = vector_text(qvec)
            distance = f"vector::vector({dim}) <=> %(q)s::vector({dim})"
            near = (f"SELECT card_id, 1 - ({distance}) AS cos FROM cards WHERE dim = {dim} AND project = %(p)s "
                    f"ORDER BY {distance} LIMIT %(n)s")
            cosine = f"CASE WHEN k.dim = {dim} THEN 1 - (k.{distance}) END"
        else:
            near, cosine = "SELECT NULL::text AS card_id, NULL::float8 AS cos WHERE false", "NULL::float8"
        text = (f"SELECT card_id, {score} AS lex FROM (SELECT card_id, tsv FROM cards WHERE project = %(p)s "
                "AND tsv @@ %(rare)s::tsquery LIMIT %(scan)s) m ORDER BY lex DESC, card_id LIMIT %(n)s"
                if rare else "SELECT NULL::text AS card_id, NULL::float8 AS lex WHERE false")
        sql = (f"WITH near AS MATERIALIZED ({near}), text AS MATERIALIZED ({text}), "
               "c AS (SELECT card_id, near.cos, text.lex FROM near FULL JOIN text USING (card_id)), "
               f"s AS (SELECT c.card_id, COALESCE(c.cos, {cosine}) AS cos, COALESCE(c.lex, {near_score}) AS lex "
               "FROM c JOIN cards k ON k.project = %(p)s AND k.card_id = c.card_id), "
               "f AS (SELECT card_id, cos, lex, round(((%(we)s * GREATEST(COALESCE(cos, 0), 0) + %(wl)s * lex / "
               "COALESCE(NULLIF(MAX(lex) OVER (), 0), 1)) / (%(we)s + %(wl)s))::numeric, 6) AS score FROM s "
               "ORDER BY score DESC, card_id LIMIT %(k)s) "
               "SELECT f.card_id, f.score, f.cos, f.lex, k.body::json ->> 'problem_summary' FROM f "
               "JOIN cards k ON k.project = %(p)s AND k.card_id = f.card_id ORDER BY f.score DESC, f.card_id")
        if qvec is not None:
            self._search_settings(n, ef_search)
        # planned with its values each time: the rare words decide how the text half is best read
        rows = self._call(lambda: self.conn.execute(sql, args).fetchall())
        return [(cid, float(score), None if cos is None else float(cos), float(lex), summary or "")
                for cid, score, cos, lex, summary in rows]


def _quote_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery operand (quoted, so no character of it is an operator)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
