"""Team memory benchmark: learned-card search at scale on PostgreSQL + pgvector (HNSW) against SQLite + numpy, and
concurrent writers, in one run.

    python benchmarks/team_memory_bench.py                       # 135,000 then 1,000,000 cards, 8 writers x 100 runs
    python benchmarks/team_memory_bench.py --sizes 20000 --queries 100 --writers 4 --runs 20   # a quick look
    python benchmarks/team_memory_bench.py --database-url postgresql://...   # an existing server instead of pgserver

Cards: the real cards recombined by scripts/generate_scale_corpus.py (deterministic), embedded with the default
static embedder (256 dims), loaded into both backends through the same tables the product uses (PostgreSQL by
binary COPY, SQLite by executemany). For each size: HNSW (m=16, ef_construction=64) and GIN built after the load;
then the same queries, interleaved between the backends, through the product's own search code
(`LearnedCards.search`: vector candidates + full-text candidates, fused) and its vector half alone. Query vectors
are computed beforehand (embedding a query costs the same on both sides, reported apart). HNSW's recall of the
exact top 10 (numpy over the same vectors) is reported beside its latency. Writers: N processes, each recording R
runs (3 findings each) at once into each backend; rows counted afterwards.

Results: a markdown table on stdout and benchmarks/results/team_memory_bench.json. Needs the [postgres] extra and,
without --database-url, pgserver (the test extra). Runs for tens of minutes at 1M cards on 2 cores (the HNSW
build dominates).
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


def load(pg, lite, count: int, start: int, embedder) -> dict:
    """Append cards [start, start+count) to both stores; timings."""
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
                 int(vecs.shape[1]), v, now) for c, v in zip(batch, vecs)]
        with pg.conn.cursor() as cur, cur.copy(
                "COPY cards (project, card_id, body, search_text, model, dim, vector, updated_at) "
                "FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "text", "text", "int4", "vector", "float8"])
            for r in rows:
                copy.write_row(r)
        t2 = time.perf_counter()
        lite.db.execute("BEGIN")
        lite.db.executemany("INSERT INTO cards(project, card_id, body, search_text, model, dim, vector, updated_at) "
                            "VALUES (?,?,?,?,?,?,?,?)", [r[:6] + (r[6].astype("<f4").tobytes(), r[7]) for r in rows])
        lite.db.execute("COMMIT")
        t3 = time.perf_counter()
        t_embed += t1 - t0
        t_pg += t2 - t1
        t_lite += t3 - t2
    return {"embed_s": round(t_embed, 1), "pg_copy_s": round(t_pg, 1), "sqlite_insert_s": round(t_lite, 1)}


def build_indexes(pg, dim: int) -> dict:
    t0 = time.perf_counter()
    pg.conn.execute(f"DROP INDEX IF EXISTS cards_hnsw_{dim}")
    pg.conn.execute("SET maintenance_work_mem = '4GB'")
    pg.conn.execute("SET max_parallel_maintenance_workers = 1")
    pg.conn.execute(f"CREATE INDEX cards_hnsw_{dim} ON cards USING hnsw ((vector::vector({dim})) vector_cosine_ops) "
                    f"WITH (m = 16, ef_construction = 64) WHERE dim = {dim}")
    t1 = time.perf_counter()
    pg.conn.execute("VACUUM ANALYZE cards")
    size = pg.conn.execute(f"SELECT pg_relation_size('cards_hnsw_{dim}')").fetchone()[0]
    return {"hnsw_build_s": round(t1 - t0, 1), "hnsw_mb": round(size / 2**20), "vacuum_s": round(
        time.perf_counter() - t1, 1)}


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


def measure(pg, lite, qs, qvecs, k: int = 10) -> dict:
    import numpy as np

    from sentinel.memory.store.cards import LearnedCards

    stores = {"postgres": LearnedCards(pg, PROJECT), "sqlite": LearnedCards(lite, PROJECT)}
    for s in stores.values():  # warm: SQLite loads its vectors, PostgreSQL's pages come into the cache
        s.search(qs[0], k=k, query_vector=qvecs[0])
    times = {f"{b}/{m}": [] for b in stores for m in ("hybrid", "vector")}
    found: dict[str, list[list[str]]] = {"postgres": [], "sqlite": []}
    for q, v in zip(qs, qvecs):
        for name, s in stores.items():  # interleaved, alternating who goes first
            t0 = time.perf_counter()
            s.search(q, k=k, query_vector=v)
            t1 = time.perf_counter()
            cands = s.db._vector_candidates(PROJECT, v, k)
            t2 = time.perf_counter()
            times[f"{name}/hybrid"].append((t1 - t0) * 1000)
            times[f"{name}/vector"].append((t2 - t1) * 1000)
            found[name].append(sorted(cands, key=lambda c: -cands[c]))
        stores = dict(reversed(list(stores.items())))
    # HNSW recall of the exact top 10 (the SQLite side is an exact scan of the same vectors)
    rec = [len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found["postgres"], found["sqlite"])]
    out = {key: {"p50_ms": round(statistics.median(v), 2), "p95_ms": round(pct(v, 0.95), 2)}
           for key, v in times.items()}
    out["hnsw_recall_at_10"] = round(float(np.mean(rec)), 3)
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
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--database-url", help="an existing PostgreSQL with pgvector (default: pgserver in --workdir)")
    ap.add_argument("--workdir", help="where the databases go (default: a temp dir, removed afterwards)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    from sentinel.embeddings import get_embedder
    from sentinel.memory.store.postgres import PostgresStore
    from sentinel.memory.store.sqlite import SQLiteStore

    work = Path(args.workdir or tempfile.mkdtemp(prefix="sentinel-team-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    server = None
    url = args.database_url
    if not url:
        import pgserver

        server = pgserver.get_server(str(work / "pg"), cleanup_mode="delete")
        url = server.get_uri()
    import psycopg

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
                    "embedder": embedder.name, "dim": embedder.dim, "sizes": {}}
    qs, qvecs, embed_ms = queries(args.queries, embedder)
    report["query_embed_ms"] = round(embed_ms, 2)
    loaded = 0
    for size in sizes:
        # bulk loads go in without the HNSW index (built afterwards: far faster than row-by-row inserts)
        pg.conn.execute(f"DROP INDEX IF EXISTS cards_hnsw_{embedder.dim}")
        log(f"loading cards {loaded}..{size}")
        timings = load(pg, lite, size - loaded, loaded, embedder)
        loaded = size
        log(f"building indexes at {size}: {timings}")
        timings.update(build_indexes(pg, embedder.dim))
        log(f"measuring at {size}: {timings}")
        lite._vectors = None
        result = measure(pg, lite, qs, qvecs)
        result["load"] = timings
        report["sizes"][str(size)] = result
        log(json.dumps(result))
    pg.close()
    lite.close()

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
    if server is not None:
        server.cleanup()
    return 0


def render(r: dict) -> str:
    lines = [f"Machine: {r['machine']}; PostgreSQL {r['postgres']}, pgvector {r['pgvector']}; {r['embedder']} "
             f"({r['dim']} dims); query embedding {r['query_embed_ms']} ms (not included below)", "",
             "| cards | search | pgvector HNSW p50 / p95 | SQLite + numpy p50 / p95 | HNSW recall@10 |",
             "|---|---|---|---|---|"]
    for size, res in r["sizes"].items():
        for mode in ("vector", "hybrid"):
            pg, lt = res[f"postgres/{mode}"], res[f"sqlite/{mode}"]
            lines.append(f"| {int(size):,} | {mode} | {pg['p50_ms']} / {pg['p95_ms']} ms | {lt['p50_ms']} / "
                         f"{lt['p95_ms']} ms | {res['hnsw_recall_at_10'] if mode == 'vector' else ''} |")
    w = r["writers"]
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
