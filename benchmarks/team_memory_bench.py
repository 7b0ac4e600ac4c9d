"""Team memory benchmark: learned-card search at scale on PostgreSQL + pgvector (HNSW + GIN) against SQLite + numpy,
with the recall of the exact top 10 beside every latency, and concurrent writers, in one run.

    python benchmarks/team_memory_bench.py                       # 135,000 then 1,000,000 cards, 8 writers x 100 runs
    python benchmarks/team_memory_bench.py --sizes 20000 --queries 100 --writers 4 --runs 20   # a quick look
    python benchmarks/team_memory_bench.py --database-url postgresql://...   # an existing server instead of pgserver
    python benchmarks/team_memory_bench.py --sizes 1000000 --shards 1   # another layout than the product's (one graph)

Cards: the real cards recombined by scripts/generate_scale_corpus.py (deterministic), embedded with the default
static embedder (256 dims), loaded into both backends through the same tables the product uses (PostgreSQL by
binary COPY, SQLite by executemany). For each size: HNSW (the layout the product creates for that many cards:
one graph, or postgres.wanted_shards partial graphs over a hash of the card id, each postgres.HNSW_M,
HNSW_EF_CONSTRUCTION; pgvector's defaults are m=16, ef_construction=64) and GIN built after the load, then ANALYZE. The same queries, interleaved between the
backends, through the product's own search code: `LearnedCards.search` (hybrid: the nearest by vector and the
best full-text matches among the cards holding the query's rare words, each scored on both, fused) and its
vector half alone (`_vector_candidates`), on PostgreSQL at several `hnsw.ef_search` values (per graph; the
product's for the layout is marked). Query vectors are computed beforehand (embedding a query costs the same on both sides, reported apart).
A `SELECT 1` round trip, interleaved, is the floor of every PostgreSQL latency.

Recall, measured in the same run against exact answers computed here:
- vector: the share of the exact 10 nearest (numpy over the same float32 vectors) that the search returns, and
  beside it ann-benchmarks' k-nn recall (`by distance`: the share of the 10 returned whose exact distance is within
  TIE_EPSILON of the exact 10th, so a card as near as the 10th counts) and how many cards lie that near;
- hybrid: the share of the exact hybrid top 10 — the same fusion over the exact 50 nearest and the exact 50 best
  full-text matches (the product's full-text score of every card matching any query word: no index shortcut,
  no rare-word selection), every candidate
  scored exactly — that the product's hybrid returns (on the first --reference-queries queries: the exact
  full-text ranking reads the whole table);
- SQLite's vector search is an exact scan, and its hybrid ranks every FTS5 match: exact by construction.

Before, in the same run: pgvector's default `hnsw.ef_search` (40) and the 100 of Sentinel before issue 23, and
that Sentinel's hybrid search (`main_hybrid`: its two statements - the vector half at ef_search 100, then
ts_rank_cd over the cards matching every query word and the vector candidates - fused in Python), timed on the
same queries, where the layout is one graph (its SQL walks no shard); its recall is not read against the reference
above, which is today's scoring.

Loading as cheaply as the product's tables allow: binary COPY with no HNSW and no GIN index (both built after
the load, maintenance_work_mem 4 GB so the HNSW graph is built in memory, one parallel worker), then VACUUM
ANALYZE. SQLite is loaded and measured up to --sqlite-max cards only (its hybrid takes seconds per query at 1M,
and its load as long as PostgreSQL's).

Results: a markdown table on stdout and benchmarks/results/team_memory_bench.json. Needs the [postgres] extra and,
without --database-url, pgserver (the test extra). At 1M cards on 2 shared cores, loading and the HNSW build
take most of an hour: run it once.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results" / "team_memory_bench.json"
SHARDS_RESULTS = ROOT / "benchmarks" / "results" / "team_memory_bench-shards.json"
PROJECT = "bench/cards"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


# --- cards --------------------------------------------------------------------------------------------------
def card_stream(count: int, start: int = 0):
    from scripts.generate_scale_corpus import load_real_cards, synthesize

    real = load_real_cards(sorted((ROOT / "memory" / "cards").glob("*.jsonl")))
    for i, card in enumerate(synthesize(real, start + count)):
        if i >= start:
            yield card


def batches(it, n):
    batch = []
    for x in it:
        batch.append(x)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def load(pg, lite, count: int, start: int, embedder, keep: list, lite_upto: int | None = None) -> dict:
    """Append cards [start, start+count) to both stores (SQLite: the first `lite_upto` only), and their normalised
    vectors and ids to `keep` (the exact reference); timings."""
    import numpy as np
    from pgvector.psycopg import register_vector

    from sentinel.memory.store.cards import embed_text, search_text

    register_vector(pg.conn)
    t_embed = t_pg = t_lite = 0.0
    now = time.time()
    for batch in batches(card_stream(count, start), 5000):
        t0 = time.perf_counter()
        vecs = np.asarray(embedder.encode([embed_text(c) for c in batch]), dtype=np.float32)
        t1 = time.perf_counter()
        rows = [(PROJECT, c["id"], json.dumps(c, ensure_ascii=False, sort_keys=True), search_text(c), embedder.name,
                 int(vecs.shape[1]), v, now, 1) for c, v in zip(batch, vecs)]
        with pg.conn.cursor() as cur, cur.copy(
                "COPY cards (project, card_id, body, search_text, model, dim, vector, updated_at, seq) "
                "FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "text", "text", "int4", "vector", "float8", "int8"])
            for r in rows:
                copy.write_row(r)
        t2 = time.perf_counter()
        # keep[1] holds every card loaded so far: its length is this batch's first card's place
        lite_rows = rows if lite_upto is None else rows[:max(0, lite_upto - len(keep[1]))]
        if lite_rows:
            lite.db.execute("BEGIN")
            lite.db.executemany("INSERT INTO cards(project, card_id, body, search_text, model, dim, vector, "
                                "updated_at, seq) VALUES (?,?,?,?,?,?,?,?,?)",
                                [r[:6] + (r[6].astype("<f4").tobytes(), r[7], r[8]) for r in lite_rows])
            lite.db.execute("COMMIT")
        t3 = time.perf_counter()
        t_embed += t1 - t0
        t_pg += t2 - t1
        t_lite += t3 - t2
        keep[0].append(vecs / np.linalg.norm(vecs, axis=1, keepdims=True).clip(1e-12))
        keep[1].extend(c["id"] for c in batch)
    return {"embed_s": round(t_embed, 1), "pg_copy_s": round(t_pg, 1), "sqlite_insert_s": round(t_lite, 1)}


def drop_indexes(pg, dim: int) -> None:
    """Bulk loads go in without the HNSW and GIN indexes (built afterwards: far cheaper than row by row)."""
    for name, *_ in pg._hnsw_indexes(valid_only=False):
        pg.conn.execute(f"DROP INDEX IF EXISTS {name}")
    pg.conn.execute("DROP INDEX IF EXISTS cards_tsv")
    pg._indexed.clear()
    pg._layouts = None


def build_indexes(pg, dim: int, shards: int | None = None) -> dict:
    """The product's indexes (schema: cards_tsv; postgres.ensure_vector_index: the layout it makes for this many
    cards — one graph, or postgres.wanted_shards hash shards — with the product's graph, HNSW_M and
    HNSW_EF_CONSTRUCTION), or `shards` graphs of the same kind (a layout the product would not pick here), then the
    planner's statistics (VACUUM ANALYZE)."""
    from sentinel.memory.store.postgres import HNSW_EF_CONSTRUCTION, HNSW_M, _hnsw_definition, _index_name

    pg.conn.execute("SET maintenance_work_mem = '4GB'")  # the whole HNSW graph in memory while it is built
    pg.conn.execute("SET max_parallel_maintenance_workers = 1")
    t0 = time.perf_counter()
    pg.conn.execute("CREATE INDEX cards_tsv ON cards USING gin (tsv)")
    t1 = time.perf_counter()
    if shards:
        for s in range(shards):
            pg.conn.execute(f"CREATE INDEX {_index_name(dim, shards, s)} ON cards USING hnsw "
                            f"{_hnsw_definition(dim, shards, s)}")
    else:
        with pg._tx():
            pg.ensure_vector_index(dim)
    t2 = time.perf_counter()
    pg.conn.execute("VACUUM ANALYZE cards")
    pg._lexeme_stats = None  # the statistics the hybrid search reads were just made
    pg._layouts = None
    names = [name for name, *_ in pg._hnsw_indexes()]
    size = sum(pg.conn.execute("SELECT pg_relation_size(%s::regclass)", (n,)).fetchone()[0] for n in names)
    return {"hnsw_m": HNSW_M, "hnsw_ef_construction": HNSW_EF_CONSTRUCTION, "shards": pg._shards(dim),
            "gin_build_s": round(t1 - t0, 1), "hnsw_build_s": round(t2 - t1, 1), "hnsw_mb": round(size / 2**20),
            "vacuum_s": round(time.perf_counter() - t2, 1)}


def main_hybrid(pg, query: str, qvec, k: int = 10) -> list[str]:
    """The hybrid search of Sentinel before issue 23 on PostgreSQL (its LearnedCards.search, replicated to be
    timed on the same data in the same run): the 50 nearest at hnsw.ef_search 100 in a transaction of their own,
    ts_rank_cd over the cards matching every query word (at most 2,000) and those 50, fused in Python, then the
    summaries of the k best."""
    from sentinel.memory.store.cards import fuse, query_terms, vector_text

    n, dim = max(50, 5 * k), len(qvec)
    q = vector_text(qvec)
    with pg.conn.transaction():
        pg.conn.execute(f"SET LOCAL hnsw.ef_search = {max(100, 2 * n)}")
        vec = {cid: float(sim) for cid, sim in pg.conn.execute(
            f"SELECT card_id, 1 - (vector::vector({dim}) <=> %(q)s::vector({dim})) FROM cards WHERE dim = {dim} "
            f"AND project = %(p)s ORDER BY vector::vector({dim}) <=> %(q)s::vector({dim}) LIMIT %(n)s",
            {"q": q, "p": PROJECT, "n": n}).fetchall()}
    lex: dict[str, float] = {}
    terms = query_terms(query)
    if terms:
        any_term, all_terms = " | ".join(f"'{t}'" for t in terms), " & ".join(f"'{t}'" for t in terms)
        lex = {cid: float(r) for cid, r in pg.conn.execute(
            "SELECT card_id, ts_rank_cd(tsv, to_tsquery('english', %(any)s)) AS r FROM ("
            "  (SELECT card_id, tsv FROM cards WHERE project = %(p)s AND tsv @@ to_tsquery('english', %(all)s) "
            "   LIMIT 2000) UNION SELECT card_id, tsv FROM cards WHERE project = %(p)s AND card_id = ANY(%(among)s)) c "
            "WHERE tsv @@ to_tsquery('english', %(any)s) ORDER BY r DESC LIMIT %(n)s",
            {"any": any_term, "all": all_terms, "p": PROJECT, "among": list(vec), "n": n}).fetchall()}
    ids = [c for c, *_ in fuse(vec, lex, k)]
    if ids:
        pg.conn.execute("SELECT card_id, body FROM cards WHERE project = %(p)s AND card_id = ANY(%(ids)s)",
                        {"p": PROJECT, "ids": ids}).fetchall()
    return ids


def queries(n: int, embedder) -> tuple[list[str], list]:
    rng = random.Random(11)
    real = list(card_stream(2000))
    out = []
    for i in range(n):
        c = real[rng.randrange(len(real))]
        kind = i % 3
        if kind == 0:
            out.append(" ".join(rng.sample(c["signals"], 4)))
        elif kind == 1:
            words = c["problem_summary"].split()
            out.append(" ".join(words[: max(8, len(words) // 2)]))
        else:
            out.append(c["root_cause"][:240])
    t0 = time.perf_counter()
    vecs = embedder.encode(out)
    embed_ms = (time.perf_counter() - t0) * 1000 / n
    return out, list(vecs), embed_ms


def unit(qvec):
    import numpy as np

    q = np.asarray(qvec, dtype=np.float32)
    return q / (np.linalg.norm(q) or 1.0)


def exact_nearest(matrix, ids: list[str], qvec, n: int) -> dict[str, float]:
    import numpy as np

    sims = np.einsum("ij,j->i", matrix, unit(qvec))
    top = np.argpartition(-sims, n)[:n]
    return {ids[i]: float(sims[i]) for i in top}


TIE_EPSILON = 1e-3  # ann-benchmarks' k-nn recall: a result counts if its distance is within this of the k-th exact one


def exact_vector_truth(matrix, ids: list[str], qvec, k: int) -> tuple[list[str], float, int]:
    """The exact k nearest (by similarity, then id), the k-th one's similarity, and how many cards lie within
    TIE_EPSILON of it - cards a search may return in place of the exact k with no visible difference."""
    import numpy as np

    sims = np.einsum("ij,j->i", matrix, unit(qvec))
    top = np.argpartition(-sims, k)[:k]
    near = sorted(((ids[i], float(sims[i])) for i in top), key=lambda t: (-t[1], t[0]))
    kth = near[-1][1]
    return [c for c, _ in near], kth, int(np.count_nonzero(sims >= kth - TIE_EPSILON))


def within_epsilon(matrix, row_of: dict, qvec, best: list[str], kth: float, k: int) -> float:
    """ann-benchmarks' k-nn recall: the share of the k places that `best` fills with a card whose exact similarity
    (recomputed from the same float32 vectors) is within TIE_EPSILON of the exact k-th."""
    q = unit(qvec)
    return sum(1 for c in best[:k] if float(matrix[row_of[c]] @ q) >= kth - TIE_EPSILON) / k


def summary(times: dict[str, list[float]]) -> dict:
    return {key: {"p50_ms": round(statistics.median(v), 2), "p95_ms": round(pct(v, 0.95), 2), "queries": len(v)}
            for key, v in times.items()}


def exact_hybrid(pg, matrix, ids: list[str], row_of: dict, query: str, qvec, k: int = 10, n: int = 50) -> list[str]:
    """The hybrid top k without approximation: the same fusion (cards.fuse) over the exact n nearest and the exact n
    best full-text matches (every card matching any query word ranked), every candidate scored on both."""
    from sentinel.memory.store.cards import fuse, query_terms
    from sentinel.memory.store.postgres import _quote_lexeme

    near = exact_nearest(matrix, ids, qvec, n)
    weighted = pg.lexical_terms(query_terms(query))
    lex: dict[str, float] = {}
    if weighted:
        score, args = pg.lexical_score(weighted)
        words = " | ".join(_quote_lexeme(t[0]) for t in weighted)
        lex = dict(pg.conn.execute(f"SELECT card_id, {score} AS r FROM cards WHERE project = %(p)s AND tsv @@ "
                                   "%(words)s::tsquery ORDER BY r DESC, card_id LIMIT %(n)s",
                                   {**args, "p": PROJECT, "words": words, "n": n}).fetchall())
        lex.update(pg.conn.execute(f"SELECT card_id, {score} FROM cards WHERE project = %(p)s AND card_id = "
                                   "ANY(%(ids)s)", {**args, "p": PROJECT, "ids": [c for c in near if c not in lex]}
                                   ).fetchall())
    q = unit(qvec)
    cos = {c: float(matrix[row_of[c]] @ q) for c in set(near) | set(lex)}
    return [c for c, *_ in fuse(cos, {c: float(v) for c, v in lex.items()}, k)]


def measure(pg, lite, qs, qvecs, matrix, ids, efs: list[int], budgets: list[int], reference_queries: int,
            sqlite_queries: int, k: int = 10) -> dict:
    import numpy as np

    from sentinel.memory.store.cards import LearnedCards
    from sentinel.memory.store.postgres import EF_SEARCH, LEXICAL_BUDGET, SHARD_EF_SEARCH

    row_of = {c: i for i, c in enumerate(ids)}
    one_graph = pg._shards(matrix.shape[1]) == 1
    default_ef = EF_SEARCH if one_graph else SHARD_EF_SEARCH  # what the product searches with
    team, local = LearnedCards(pg, PROJECT), LearnedCards(lite, PROJECT)
    for s in (team, local):  # warm: SQLite loads its vectors, PostgreSQL's pages come into the cache
        s.search(qs[0], k=k, query_vector=qvecs[0])
    efs = sorted(set(efs) | {default_ef})
    budgets = sorted(set(budgets) - {LEXICAL_BUDGET})  # (the product's is the hybrid at each ef_search)
    times: dict[str, list[float]] = {}
    recall: dict[str, list[float]] = {}
    tie_recall: dict[str, list[float]] = {}

    def timed(key: str, fn):
        t0 = time.perf_counter()
        out = fn()
        times.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
        return out

    def hit(key: str, got: list[str], truth: list[str]) -> None:
        recall.setdefault(key, []).append(len(set(got[:k]) & set(truth[:k])) / k)


    # the exact answers first, in a pass of their own: the full-text reference reads the whole table, which would
    # leave the searches timed after it a cold cache
    exact = [exact_vector_truth(matrix, ids, v, k) for v in qvecs]
    truths = [t for t, _, _ in exact]
    refs = [exact_hybrid(pg, matrix, ids, row_of, q, v, k) if i < reference_queries else None
            for i, (q, v) in enumerate(zip(qs, qvecs))]
    log(f"exact answers ready ({len(truths)} vector, {min(reference_queries, len(qs))} hybrid)")
    for s in (team, local):  # and warm again
        s.search(qs[0], k=k, query_vector=qvecs[0])
    for i, (q, v, (truth, kth, _), ref) in enumerate(zip(qs, qvecs, exact, refs)):
        timed("postgres/floor", lambda: pg.conn.execute("SELECT 1").fetchone())
        for ef in (efs if i % 2 == 0 else efs[::-1]):  # interleaved, alternating the order
            got = timed(f"postgres/vector/ef{ef}", lambda: pg._vector_candidates(PROJECT, v, k, ef_search=ef))
            best = sorted(got, key=lambda c: (-got[c], c))[:k]
            hit(f"postgres/vector/ef{ef}", best, truth)
            tie_recall.setdefault(f"postgres/vector/ef{ef}", []).append(within_epsilon(matrix, row_of, v, best, kth, k))
            hits = timed(f"postgres/hybrid/ef{ef}", lambda: team.search(q, k=k, query_vector=v, ef_search=ef))
            if ref is not None:
                hit(f"postgres/hybrid/ef{ef}", [h.id for h in hits], ref)
        if one_graph:  # its SQL needs the one graph: on shards it would be an exact scan, not what it was
            timed("postgres/hybrid/before", lambda: main_hybrid(pg, q, v, k))
        for budget in (budgets if i % 2 == 0 else budgets[::-1]):
            hits = timed(f"postgres/hybrid/budget{budget}",
                         lambda: team.search(q, k=k, query_vector=v, lexical_budget=budget))
            if ref is not None:
                hit(f"postgres/hybrid/budget{budget}", [h.id for h in hits], ref)
        if i < sqlite_queries:
            got = timed("sqlite/vector", lambda: lite._vector_candidates(PROJECT, v, k))
            hit("sqlite/vector", sorted(got, key=lambda c: (-got[c], c)), truth)
            timed("sqlite/hybrid", lambda: local.search(q, k=k, query_vector=v))
    out = summary(times)
    for key, v in recall.items():
        out[key]["recall_at_10"] = round(float(np.mean(v)), 3)
        out[key]["recall_queries"] = len(v)
    for key, v in tie_recall.items():
        out[key]["recall_at_10_by_distance"] = round(float(np.mean(v)), 3)
    within = [n for _, _, n in exact]
    out["cards_within_epsilon_of_10th"] = {"median": int(statistics.median(within)), "p90": int(pct(within, 0.9)),
                                           "epsilon": TIE_EPSILON}
    out["ef_search_default"] = default_ef
    out["lexical_budget_default"] = LEXICAL_BUDGET
    return out


# --- writers ------------------------------------------------------------------------------------------------
def _writer(arg: str, worker: int, runs: int, q) -> None:
    from sentinel.memory.hypotheses.signature import signature
    from sentinel.memory.store import FindingRecord, RunRecord

    if arg.startswith("sqlite:///"):
        from sentinel.memory.store.sqlite import SQLiteStore

        store = SQLiteStore(arg[len("sqlite:///"):], timeout=120)
    else:
        from sentinel.memory.store.postgres import PostgresStore

        store = PostgresStore.connect(arg, wait=60)
    lat = []
    for i in range(runs):
        findings = [FindingRecord(r, signature(r, f"message {r}"), f"m{worker}.py", "m", i)
                    for r in ("SEN301", "SEN303", "SEN401")]
        t0 = time.perf_counter()
        store.record_run(RunRecord("bench/writers", f"w{worker}", "failed", findings, change_id=f"w{worker}",
                                   content_digest=f"{worker}:{i}"))
        lat.append((time.perf_counter() - t0) * 1000)
    store.close()
    q.put(lat)


def writers(arg: str, n: int, runs: int) -> dict:
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(arg, w, runs, q)) for w in range(n)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    lats = [x for _ in procs for x in q.get(timeout=900)]
    for p in procs:
        p.join()
    wall = time.perf_counter() - t0
    return {"wall_s": round(wall, 2), "write_p50_ms": round(statistics.median(lats), 2),
            "write_p95_ms": round(pct(lats, 0.95), 2), "exit_codes": sorted({p.exitcode for p in procs})}


def count_rows(store) -> dict:
    return {"runs": store.run_count("bench/writers"),
            "findings": int(store._one("SELECT COUNT(*) FROM findings f JOIN runs r ON r.id = f.run_id "
                                       "WHERE r.project = 'bench/writers'")[0]),
            "distinct_run_keys": int(store._one("SELECT COUNT(DISTINCT run_key) FROM runs "
                                                "WHERE project = 'bench/writers'")[0])}


# --- main ---------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="135000,1000000")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--ef", default="40,100,150,200,400", help="hnsw.ef_search values measured, per graph (the "
                                                                "product's for the layout is added)")
    ap.add_argument("--budgets", default="300,3000", help="hybrid: other lexical budgets measured (rows the text "
                                                          "half ranks), at the product's ef_search")
    ap.add_argument("--reference-queries", type=int, default=100,
                    help="queries whose exact hybrid answer is computed (a full-text ranking of every match)")
    ap.add_argument("--sqlite-queries", type=int, default=300, help="queries run on SQLite (its hybrid takes seconds "
                                                                    "at 1M)")
    ap.add_argument("--sqlite-max", type=int, default=135000, help="cards loaded into SQLite (and sizes it is "
                                                                     "measured at): at most this many")
    ap.add_argument("--shards", type=int, default=0,
                    help="instead of the layout the product makes for each size: this many hash-sharded HNSW graphs "
                         "(searched by the product's own code, which finds the layout; no writers; results: "
                         "team_memory_bench-shards.json)")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--database-url", help="an existing PostgreSQL with pgvector (default: pgserver in --workdir)")
    ap.add_argument("--workdir", help="where the databases go (default: a temp dir, removed afterwards)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    work = Path(args.workdir or tempfile.mkdtemp(prefix="sentinel-team-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    server = None
    url = args.database_url
    if not url:
        import pgserver

        server = pgserver.get_server(str(work / "pg"), cleanup_mode="delete")
        url = server.get_uri()
    try:
        return run(args, sizes, url, work)
    finally:
        if server is not None:
            server.cleanup()


def run(args, sizes: list[int], url: str, work: Path) -> int:
    import numpy as np
    import psycopg

    from sentinel.embeddings import get_embedder
    from sentinel.memory.store.postgres import PostgresStore
    from sentinel.memory.store.sqlite import SQLiteStore

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS sentinel_bench")  # sentinel: ignore[SEN105] - the benchmark's own
        c.execute("CREATE DATABASE sentinel_bench")
    head, _, query = url.partition("?")
    bench_url = head.rsplit("/", 1)[0] + "/sentinel_bench" + (f"?{query}" if query else "")
    pg = PostgresStore.connect(bench_url, wait=60)
    lite_path = work / "cards.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(str(lite_path) + suffix).unlink(missing_ok=True)  # sentinel: ignore[SEN103] - its own scratch file
    lite = SQLiteStore(str(lite_path), timeout=60)
    embedder = get_embedder(None)
    report: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                    "pgvector": pg.conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'"
                                                ).fetchone()[0],
                    "postgres": pg.conn.execute("SHOW server_version").fetchone()[0],
                    "shared_buffers": pg.conn.execute("SHOW shared_buffers").fetchone()[0],
                    "embedder": embedder.name, "dim": embedder.dim, "sizes": {}}
    qs, qvecs, embed_ms = queries(args.queries, embedder)
    report["query_embed_ms"] = round(embed_ms, 2)
    loaded = 0
    keep: list = [[], []]
    results = SHARDS_RESULTS if args.shards else RESULTS
    pg.conn.execute("INSERT INTO card_versions (project, seq) VALUES (%s, 1) ON CONFLICT DO NOTHING", (PROJECT,))
    for size in sizes:
        drop_indexes(pg, embedder.dim)
        log(f"loading cards {loaded}..{size}")
        timings = load(pg, lite, size - loaded, loaded, embedder, keep, lite_upto=args.sqlite_max)
        loaded = size
        matrix = np.ascontiguousarray(np.concatenate(keep[0]))
        keep[0] = [matrix]
        log(f"building indexes at {size}: {timings}")
        timings.update(build_indexes(pg, embedder.dim, args.shards or None))
        log(f"measuring at {size}: {timings}")
        lite._vectors = None
        result = measure(pg, lite, qs, qvecs, matrix, keep[1], [int(e) for e in args.ef.split(",")],
                         [int(b) for b in args.budgets.split(",") if b], args.reference_queries,
                         args.sqlite_queries if size <= args.sqlite_max else 0)
        del matrix
        result["load"] = timings
        report["sizes"][str(size)] = result
        log(json.dumps(result))
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(report, indent=2) + "\n")  # what is measured survives a later failure
    pg.close()
    lite.close()
    if args.shards:
        print(render(report))
        return 0

    log(f"writers: {args.writers} x {args.runs}")
    wurl = head.rsplit("/", 1)[0] + "/sentinel_writers" + (f"?{query}" if query else "")
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS sentinel_writers")  # sentinel: ignore[SEN105] - the benchmark's own
        c.execute("CREATE DATABASE sentinel_writers")
    PostgresStore.connect(wurl).close()
    wlite = work / "writers.sqlite3"
    SQLiteStore(str(wlite)).close()
    report["writers"] = {"writers": args.writers, "runs_each": args.runs, "expected_runs": args.writers * args.runs,
                         "expected_findings": args.writers * args.runs * 3}
    for name, arg in (("postgres", wurl), ("sqlite", "sqlite:///" + str(wlite))):
        res = writers(arg, args.writers, args.runs)
        with (PostgresStore.connect(wurl) if name == "postgres" else SQLiteStore(str(wlite))) as s:
            res.update(count_rows(s))
        report["writers"][name] = res
        log(f"{name}: {res}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(render(report))
    return 0


def render(r: dict) -> str:
    lines = [f"Machine: {r['machine']}; PostgreSQL {r['postgres']} (shared_buffers {r.get('shared_buffers', '?')}), "
             f"pgvector {r['pgvector']}; {r['embedder']} ({r['dim']} dims); query embedding {r['query_embed_ms']} ms "
             "(not included below)", "",
             "| cards | search | backend, setting | p50 / p95 | recall@10 of exact | by distance (ann-benchmarks) |",
             "|---|---|---|---|---|---|"]
    for size, res in r["sizes"].items():
        default = res.get("ef_search_default")
        floor = res.get("postgres/floor")
        built = res.get("load", {})
        if "hnsw_m" in built:
            graphs = "one graph" if built.get("shards", 1) == 1 else f"{built['shards']} hash shards"
            lines.append(f"| {int(size):,} | index | HNSW ({graphs}) m={built['hnsw_m']}, ef_construction="
                         f"{built['hnsw_ef_construction']}: built in {built['hnsw_build_s']} s, {built['hnsw_mb']} MB | | | |")
        if floor:
            lines.append(f"| {int(size):,} | floor | PostgreSQL `SELECT 1` | {floor['p50_ms']} / {floor['p95_ms']} ms | | |")
        ties = res.get("cards_within_epsilon_of_10th")
        if ties:
            lines.append(f"| {int(size):,} | ties | cards within {ties['epsilon']} (cosine distance) of the exact 10th: "
                         f"median {ties['median']}, p90 {ties['p90']} | | | |")
        for mode in ("vector", "hybrid"):
            efs = sorted(int(key.rsplit("ef", 1)[1]) for key in res if key.startswith(f"postgres/{mode}/ef"))
            for ef in efs:
                x = res[f"postgres/{mode}/ef{ef}"]
                mark = " **(Sentinel's)**" if ef == default else ""
                rec = f"{x['recall_at_10']:.3f}" if "recall_at_10" in x else ""
                by_distance = f"{x['recall_at_10_by_distance']:.3f}" if "recall_at_10_by_distance" in x else ""
                lines.append(f"| {int(size):,} | {mode} | pgvector HNSW, ef_search {ef}{mark} | {x['p50_ms']} / "
                             f"{x['p95_ms']} ms | {rec} | {by_distance} |")
            if mode == "hybrid" and "postgres/hybrid/before" in res:
                x = res["postgres/hybrid/before"]
                lines.append(f"| {int(size):,} | hybrid | Sentinel before issue 23: two statements, ef_search 100, "
                             f"ts_rank_cd, fused in Python | {x['p50_ms']} / {x['p95_ms']} ms | (other scoring) | |")
            if mode == "hybrid":
                budgets = sorted(int(key.rsplit("budget", 1)[1]) for key in res if key.startswith("postgres/hybrid/budget"))
                for budget in budgets:
                    x = res[f"postgres/hybrid/budget{budget}"]
                    rec = f"{x['recall_at_10']:.3f}" if "recall_at_10" in x else ""
                    lines.append(f"| {int(size):,} | hybrid | ef_search {default}, lexical budget {budget} rows "
                                 f"(Sentinel's: {res.get('lexical_budget_default')}) | {x['p50_ms']} / "
                                 f"{x['p95_ms']} ms | {rec} | |")
            lt = res.get(f"sqlite/{mode}")
            if lt:
                rec = f"{lt['recall_at_10']:.3f}" if "recall_at_10" in lt else "exact by construction"
                lines.append(f"| {int(size):,} | {mode} | SQLite + numpy ({lt['queries']} queries) | {lt['p50_ms']} / "
                             f"{lt['p95_ms']} ms | {rec} | |")
    w = r.get("writers")
    if not w:
        return "\n".join(lines)
    lines += ["", f"Writers: {w['writers']} processes x {w['runs_each']} runs (3 findings each), at once:", "",
              "| backend | wall | write p50 / p95 | runs (expected) | findings (expected) | distinct run keys |",
              "|---|---|---|---|---|---|"]
    for name in ("postgres", "sqlite"):
        x = w[name]
        lines.append(f"| {name} | {x['wall_s']} s | {x['write_p50_ms']} / {x['write_p95_ms']} ms | {x['runs']} "
                     f"({w['expected_runs']}) | {x['findings']} ({w['expected_findings']}) | "
                     f"{x['distinct_run_keys']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
