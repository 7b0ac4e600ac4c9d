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
import time
from contextlib import contextmanager

from sentinel.memory.store import SCHEMA_VERSION, StoreBusy, StoreError, StoreUnavailable, within
from sentinel.memory.store.dburl import redact_text, redact_url
from sentinel.memory.store.sql import SQLStore

_MIGRATION_LOCK = 0x5E47_1E1  # advisory lock id: one migrating runner at a time
_EXTRA = "pip install 'diff-sentinel[postgres]'"
# Tuned by benchmarks/team_memory_bench.py (recall of the exact top 10 beside each latency, same run): see
# docs/evaluation.md#team-memory-at-scale.
# HNSW candidate list (pgvector's default is 40) of one graph: recall@10 of exact 0.99 at 135K cards (p50 3.8 ms);
# 200 gave 0.97, 800 0.997. One graph flattens as it grows: at 1M cards 0.88 at 400, 0.92 at 800 (12 ms).
EF_SEARCH = 400
# So a graph holds at most about SHARD_CARDS cards: above that a dimension's vectors are split by a stable hash of
# the card id into partial indexes ("shards"), each searched with its own (smaller) candidate list and merged in
# the same statement. At 1M cards, 8 shards: recall@10 0.976 at SHARD_EF_SEARCH 200 (p50 15 ms; 150: 0.968, 12 ms).
SHARD_CARDS = 125_000
SHARD_GROWTH = 1.25  # `memory migrate` re-splits once a graph holds this many times SHARD_CARDS (or < a quarter)
SHARD_EF_SEARCH = 200
# The HNSW graph: with pgvector's defaults (m=16, ef_construction=64) recall@10 at 135K cards is 0.90 at ef_search
# 200, 0.93 at 400; this denser graph, built with a wider candidate list, 0.98 / 0.99 for 2.7x the build time.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
_GRAPH = {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION}  # as vector_indexes reads a graph's parameters
HNSW_BUILD_MEMORY_KB = 1 << 20  # maintenance_work_mem raised to 1 GB for a build: a shard's graph fits in memory
ITERATIVE_MAX_TUPLES = 20_000  # pgvector >= 0.8: how far an iterative scan may go to fill a filtered list
LEXICAL_BUDGET = 1000  # expected rows of the rare words' matches that a hybrid search ranks (2x at most)
LAYOUT_TTL = 60.0  # seconds a connection trusts what it read of the vector indexes (a migrate may swap them)
_INDEX_NAME = re.compile(r"cards_hnsw_(\d+)(?:_(\d+)of(\d+))?(_next)?")


def shard_of(shards: int) -> str:
    """The SQL expression that puts a card in one of `shards` graphs: a stable hash of its id, evaluated by the
    server both when a row enters an index and in the search's predicate, so the two always agree."""
    return f"mod(abs(hashtext(card_id)::bigint), {int(shards)})"


def wanted_shards(cards: int, shard_cards: int = SHARD_CARDS) -> int:
    """How many graphs a dimension with this many cards is split into (one below shard_cards)."""
    return max(1, math.ceil(cards / max(1, shard_cards)))


def _index_name(dim: int, shards: int, s: int) -> str:
    return f"cards_hnsw_{dim}" if shards == 1 else f"cards_hnsw_{dim}_{s}of{shards}"


def _hnsw_definition(dim: int, shards: int = 1, s: int = 0) -> str:
    where = f"dim = {dim}" + (f" AND {shard_of(shards)} = {s}" if shards > 1 else "")
    return (f"((vector::vector({dim})) vector_cosine_ops) WITH (m = {HNSW_M}, ef_construction = "
            f"{HNSW_EF_CONSTRUCTION}) WHERE {where}")


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
        self._layouts: tuple[float, dict[int, int]] | None = None  # (read at, {dim: shards searched})
        self._indexed: set[int] = set()  # dimensions this connection has seen an HNSW index of
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

    def _hnsw_indexes(self, valid_only: bool = True) -> list[tuple[str, int, int, int, bool, dict[str, int]]]:
        """[(name, dim, shards, shard, building, params)] of the cards' HNSW indexes: `building` for a layout's
        successor (`_next`), params the graph's m and ef_construction (pgvector's defaults where none is named)."""
        out = []
        for name, options in self._all("SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_index i ON "
                                       "i.indexrelid = c.oid WHERE i.indrelid = 'cards'::regclass"
                                       + (" AND i.indisvalid" if valid_only else "")):
            match = _INDEX_NAME.fullmatch(name)
            if not match:
                continue
            params = {"m": 16, "ef_construction": 64}
            for opt in options or []:
                key, _, value = opt.partition("=")
                if key in params and value.isdigit():
                    params[key] = int(value)
            dim, s, shards, building = match.groups()
            out.append((name, int(dim), int(shards or 1), int(s or 0), bool(building), params))
        return out

    def _layout(self, indexes) -> dict[int, tuple[int, dict[str, int]]]:
        """{dim: (shards, params)} of the layouts a search can use: for each dimension, the complete set of valid
        graphs with the most shards (while a migrate swaps layouts, both may be complete for a moment)."""
        sets: dict[tuple[int, int], dict[int, dict[str, int]]] = {}
        for _, dim, shards, s, building, params in indexes:
            if not building:
                sets.setdefault((dim, shards), {})[s] = params
        out: dict[int, tuple[int, dict[str, int]]] = {}
        for (dim, shards), members in sorted(sets.items()):
            if set(members) == set(range(shards)):
                out[dim] = (shards, members[0])
        return out

    def _shards(self, dim: int) -> int:
        """How many graphs a search of this dimension walks (1: one graph, or no index at all), read at most once
        per LAYOUT_TTL seconds per connection."""
        now = time.monotonic()
        if self._layouts is None or now - self._layouts[0] > LAYOUT_TTL:
            self._layouts = (now, {d: shards for d, (shards, _) in self._layout(self._hnsw_indexes()).items()})
        return self._layouts[1].get(int(dim), 1)

    def _card_counts(self) -> dict[int, int]:
        return {int(d): int(n) for d, n in self._all("SELECT dim, COUNT(*) FROM cards WHERE dim IS NOT NULL "
                                                     "GROUP BY dim")}

    def _raise_build_memory(self, local: bool) -> None:
        """maintenance_work_mem up to HNSW_BUILD_MEMORY_KB for this session (or transaction), never down: a graph
        that outgrows it is built on disk, several times slower."""
        row = self._one("SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'")
        if row and int(row[0]) < HNSW_BUILD_MEMORY_KB:
            self._exec(f"SET {'LOCAL ' if local else ''}maintenance_work_mem = '{HNSW_BUILD_MEMORY_KB}kB'")

    def ensure_vector_index(self, dim: int, shard_cards: int = SHARD_CARDS) -> None:
        """The HNSW index (cosine) for vectors of one dimension, made when the first such cards arrive (an HNSW
        index needs a fixed dimension; a partial index per dimension lets models differ between projects): one
        graph, or as many shards as the cards already there need (a first import of many). Cheap when it exists
        (what this connection read of the indexes)."""
        dim = int(dim)
        if dim in self._indexed:
            return
        for attempt in range(2):
            self._indexed.update(d for _, d, *_ in self._hnsw_indexes(valid_only=False))
            if dim in self._indexed:
                return
            if not attempt:  # then again under the lock: another runner may be making it
                self._exec("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK + dim,))
        shards = wanted_shards(self._card_counts().get(dim, 0), shard_cards)
        self._raise_build_memory(local=True)
        for s in range(shards):
            self._exec(f"CREATE INDEX IF NOT EXISTS {_index_name(dim, shards, s)} ON cards USING hnsw "
                       f"{_hnsw_definition(dim, shards, s)}")
        self._layouts = None
        self._indexed.add(dim)

    def vector_indexes(self, shard_cards: int = SHARD_CARDS) -> dict[int, dict]:
        """The HNSW layout of the cards, by dimension: its shards, the graph parameters they were built with, the
        cards, the shards this version wants for them, and whether the layout is current (this version's graph,
        no graph grown past SHARD_GROWTH x shard_cards or shrunk below a quarter of it)."""
        counts = self._card_counts()
        out: dict[int, dict] = {}
        for dim, (shards, params) in sorted(self._layout(self._hnsw_indexes()).items()):
            cards = counts.get(dim, 0)
            per_graph = cards / shards
            sized = per_graph <= SHARD_GROWTH * shard_cards and (shards == 1 or per_graph >= shard_cards / 4)
            out[dim] = {"shards": shards, **params, "cards": cards,
                        "wanted_shards": shards if sized else wanted_shards(cards, shard_cards),
                        "current": sized and params == _GRAPH}
        return out

    def rebuild_vector_indexes(self, shard_cards: int = SHARD_CARDS) -> list[dict[str, int]]:
        """Rebuild, without blocking searches or writes, every vector layout that is not current (see
        vector_indexes): an earlier version's graph, or graphs the cards have outgrown. The new graphs are built
        concurrently beside the old ones (as `<name>_next`), which searches keep using until all of their
        successors are valid; then, in one transaction, the old are dropped and the new take their names.
        Explicit (`sentinel memory migrate`), never on the hook path: at a million cards this takes minutes.
        Returns [{dim, shards, from_shards}] of what was rebuilt."""
        done = []
        for dim, layout in self.vector_indexes(shard_cards).items():
            if layout["current"]:
                continue

            def rebuild(dim=dim) -> dict[str, int] | None:
                # a session lock (CREATE INDEX CONCURRENTLY runs outside any transaction): one rebuilder at a time
                self.conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK + dim,))
                try:
                    now = self.vector_indexes(shard_cards).get(dim)
                    if now is None or now["current"]:  # another runner rebuilt it meanwhile
                        return None
                    shards = now["wanted_shards"]
                    successors = {f"{_index_name(dim, shards, s)}_next" for s in range(shards)}
                    built = {name for name, d, *_, building, params in self._hnsw_indexes()
                             if d == dim and building and params == _GRAPH}
                    for name, d, *_, building, _ in self._hnsw_indexes(valid_only=False):
                        if d == dim and building and not (name in successors and name in built):
                            self.conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")  # an interrupted attempt's
                    self._raise_build_memory(local=False)
                    for s in range(shards):  # (an earlier attempt's valid successors are kept: its swap had failed)
                        if f"{_index_name(dim, shards, s)}_next" not in built:
                            self.conn.execute(f"CREATE INDEX CONCURRENTLY {_index_name(dim, shards, s)}_next ON "
                                              f"cards USING hnsw {_hnsw_definition(dim, shards, s)}")
                    with self.conn.transaction():
                        for name, d, *_, building, _ in self._hnsw_indexes(valid_only=False):
                            if d == dim and not building:
                                self.conn.execute(f"DROP INDEX {name}")
                        for s in range(shards):
                            name = _index_name(dim, shards, s)
                            self.conn.execute(f"ALTER INDEX {name}_next RENAME TO {name}")
                    self.conn.execute("RESET maintenance_work_mem")
                    return {"dim": dim, "shards": shards, "from_shards": now["shards"]}
                finally:
                    self.conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK + dim,))

            rebuilt = self._call(rebuild)
            if rebuilt:
                done.append(rebuilt)
        self._layouts = None
        return done

    # --- search ------------------------------------------------------------------------------------------
    def _pgvector(self) -> tuple[int, ...]:
        """The installed pgvector's version (read once per connection)."""
        if self._extversion is None:
            row = self._one("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            self._extversion = tuple(int(p) for p in re.findall(r"\d+", row[0] if row else "0")[:3])
        return self._extversion

    def _search_settings(self, n: int, ef_search: int) -> None:
        """hnsw.ef_search for a candidate list of n, and iterative index scans where pgvector has them (0.8.0 on:
        the index keeps scanning until n rows pass the project filter, instead of handing back ef_search rows of
        which another project's may be most). Session settings of this connection, sent only when they change:
        a search is then one round trip."""
        ef = max(int(ef_search), int(n))
        if self._ef_search == ef:
            return
        statements = [f"SET hnsw.ef_search = {ef}"]
        if self._ef_search is None and self._pgvector() >= (0, 8, 0):
            statements += ["SET hnsw.iterative_scan = strict_order",
                           f"SET hnsw.max_scan_tuples = {ITERATIVE_MAX_TUPLES}"]
        self._call(lambda: self.conn.execute("; ".join(statements)))
        self._ef_search = ef

    def _nearest(self, dim: int, ef_search: int | None, n: int) -> str:
        """The SQL of the project's n nearest cards to %(q)s (card_id, cos), nearest first, through this
        dimension's layout: one graph, or each shard's n nearest through its own graph, merged; with the
        candidate list set for it (EF_SEARCH, or SHARD_EF_SEARCH per shard, unless `ef_search` is given)."""
        shards = self._shards(dim)
        self._search_settings(n, ef_search or (EF_SEARCH if shards == 1 else SHARD_EF_SEARCH))
        distance = f"vector::vector({dim}) <=> %(q)s::vector({dim})"
        if shards == 1:
            return (f"SELECT card_id, 1 - ({distance}) AS cos FROM cards WHERE dim = {dim} AND project = %(p)s "
                    f"ORDER BY {distance} LIMIT %(n)s")
        arms = " UNION ALL ".join(
            f"(SELECT card_id, {distance} AS d FROM cards WHERE dim = {dim} AND {shard_of(shards)} = {s} "
            f"AND project = %(p)s ORDER BY {distance} LIMIT %(n)s)" for s in range(shards))
        return f"SELECT card_id, 1 - d AS cos FROM ({arms}) u ORDER BY d, card_id LIMIT %(n)s"

    def _vector_candidates(self, project: str, qvec, n: int, ef_search: int | None = None) -> dict[str, float]:
        from sentinel.memory.store.cards import vector_text

        dim = len(qvec)
        args = {"q": vector_text(qvec), "p": project, "n": int(n)}
        nearest = self._nearest(dim, ef_search, n)
        rows = self._call(lambda: self.conn.execute(nearest, args, prepare=True).fetchall())
        if len(rows) < n and self._pgvector() < (0, 8, 0):
            # the index's ef_search nearest were mostly other projects': this project's are ranked exactly (a scan
            # of its own rows, which are few when this happens)
            order = f"vector::vector({dim}) <=> %(q)s::vector({dim})"
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
            near = self._nearest(dim, ef_search, n)
            cosine = f"CASE WHEN k.dim = {dim} THEN 1 - (k.vector::vector({dim}) <=> %(q)s::vector({dim})) END"
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
        # planned with its values each time: the rare words decide how the text half is best read
        rows = self._call(lambda: self.conn.execute(sql, args).fetchall())
        return [(cid, float(score), None if cos is None else float(cos), float(lex), summary or "")
                for cid, score, cos, lex, summary in rows]


def _quote_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery operand (quoted, so no character of it is an operator)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
