"""Experience-memory benchmark at scale: build time, load time, peak memory, query latency p50/p95.

    python benchmarks/memory_bench.py                # 135,000 cards (generated once, then reused)
    python benchmarks/memory_bench.py --count 20000 --queries 200
    python benchmarks/memory_bench.py --index sentinel/data/memory --index OTHER_DIR --rounds 5
        an existing index (the shipped one, or an older bundle's): its size on disk, load time and query latency,
        rounds interleaved across the indexes given, medians reported; queries are made from each index's cards

The corpus comes from scripts/generate_scale_corpus.py (deterministic recombination of the real cards), written
with its index under benchmarks/results/scale/ (git-ignored). Each phase runs in a fresh subprocess so its peak
RSS is its own. Above 30,000 cards the cosine side is approximate (coarse scan of the 48 principal dimensions, exact
re-rank of the best 2,000); the benchmark reports it next to the exact full scan and measures its recall of the
exact top-10 over the same queries. Results: a markdown table on stdout and benchmarks/results/memory_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCALE_DIR = ROOT / "benchmarks" / "results" / "scale"

BUILD_DRIVER = r"""
import json, resource, sys, time
from pathlib import Path
from sentinel.embeddings import get_embedder
from sentinel.memory.cards.build import build_index
from sentinel.memory.cards.corpus import load_entries
cards_file, out = Path(sys.argv[1]), Path(sys.argv[2])
t0 = time.perf_counter()
entries = load_entries([cards_file])
valid = [e.raw for e in entries if e.valid]
t1 = time.perf_counter()
emb = get_embedder(None)
t2 = time.perf_counter()
phases = {}
build_index(valid, out, emb, timings=phases)
t3 = time.perf_counter()
print(json.dumps({"cards": len(entries), "indexed": len(valid), "check_s": t1 - t0, "model_s": t2 - t1,
                  "index_s": t3 - t2, "total_s": t3 - t0, "phases": phases,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

QUERY_DRIVER = r"""
import itertools, json, random, resource, sys, time
from pathlib import Path
import numpy as np
t_import = time.perf_counter()
from sentinel.config import Config, validate
from sentinel.memory.cards.index import load_index
from sentinel.memory.retrieval.search import search
index_dir, cards_file, n_queries = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
idx = load_index(index_dir)
# touch every part a query needs: vocabulary, postings, vectors (mmap), filters
idx.bm25(["pool"]); idx.vectors.shape; idx.filter_mask("python"); idx._npy("offsets")
load_s = time.perf_counter() - t0
t0 = time.perf_counter()
from sentinel.embeddings import get_embedder
get_embedder(None)
model_s = time.perf_counter() - t0

rng = random.Random(11)
with open(cards_file, encoding="utf-8") as fh:
    real = [json.loads(l) for l in itertools.islice(fh, 2000)]
def make_query(i):
    c = real[rng.randrange(len(real))]
    kind = i % 3
    if kind == 0:
        return " ".join(rng.sample(c["signals"], 4))
    if kind == 1:
        words = c["problem_summary"].split()
        return " ".join(words[: max(8, len(words) // 2)])
    return c["root_cause"][:240]
queries = [make_query(i) for i in range(n_queries)]

def recall(cfg, **kw):
    # share of the exact search's top-10 ids that the default (approximate on large indexes) search returns
    got = []
    for q in queries:
        exact = [h.id for h in search(q, k=10, config=cfg, index=idx, exact=True, **kw)]
        approx = {h.id for h in search(q, k=10, config=cfg, index=idx, **kw)}
        got.append(len(approx.intersection(exact)) / max(1, len(exact)))
    return float(np.mean(got)), float(np.min(got))

def run(cfg, **kw):
    wall, cpu = [], []
    t = time.perf_counter()
    first = search(queries[0], k=10, config=cfg, index=idx, **kw)
    cold = time.perf_counter() - t
    for q in queries:
        w0, c0 = time.perf_counter(), time.process_time()
        res = search(q, k=10, config=cfg, index=idx, **kw)
        wall.append(time.perf_counter() - w0); cpu.append(time.process_time() - c0)
    w = np.array(wall) * 1000; c = np.array(cpu) * 1000
    return {"mode": first.mode, "first_query_ms": cold * 1000, "p50_ms": float(np.percentile(w, 50)),
            "p95_ms": float(np.percentile(w, 95)), "mean_ms": float(w.mean()),
            "cpu_p50_ms": float(np.percentile(c, 50)), "cpu_p95_ms": float(np.percentile(c, 95))}

out = {"count": idx.count, "dim": idx.meta.get("dim"), "vocab": idx.meta.get("vocab_size"),
       "load_s": load_s, "model_load_s": model_s,
       "head_dims": idx.meta.get("head_dims"),
       "hybrid": run(Config()),
       "hybrid_exact": run(Config(), exact=True),
       "hybrid_filtered": run(Config(), language="go"),
       "lexical": run(validate({"embeddings": {"model": "/nonexistent/model"}}, "bench")),
       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
out["recall_at_10"], out["recall_at_10_min"] = recall(Config())
out["recall_at_10_filtered"], _ = recall(Config(), language="go")
print(json.dumps(out))
"""


def _run(driver: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", driver, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ensure_corpus(count: int, regen: bool) -> Path:
    cards = SCALE_DIR / f"cards-{count}.jsonl"
    if regen or not cards.is_file():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_scale_corpus.py"), "--count", str(count),
                        "--out", str(cards)], check=True, cwd=ROOT)
    return cards


def table(build: dict, q: dict) -> str:
    def row(name, r):
        return (f"| {name} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['cpu_p50_ms']:.1f} | "
                f"{r['first_query_ms']:.0f} |")

    phases = ", ".join(f"{k} {v:.1f} s" for k, v in build.get("phases", {}).items())
    lines = [
        (f"Corpus: {q['count']:,} cards ({build['cards']:,} generated, {build['indexed']:,} passed the "
         f"checklist), {q['dim']} dims, {q['vocab']:,} BM25 terms. Machine: {os.cpu_count()} cores, Python "
         f"{platform.python_version()}."),
        "",
        "| phase | result |",
        "| --- | --- |",
        f"| build: checklist over all cards | {build['check_s']:.1f} s |",
        f"| build: index ({phases}) | {build['index_s']:.1f} s |",
        f"| build: total (incl. model load {build['model_s']:.1f} s) | {build['total_s']:.1f} s |",
        f"| build: peak memory | {build['peak_rss_mb']:.0f} MB |",
        f"| load index (mmap, vocabulary, filters) | {q['load_s'] * 1000:.0f} ms |",
        f"| load static embedding model | {q['model_load_s'] * 1000:.0f} ms |",
        f"| query process peak memory | {q['peak_rss_mb']:.0f} MB |",
        "",
        "| query (k=10) | p50 ms | p95 ms | CPU p50 ms | first query ms |",
        "| --- | --- | --- | --- | --- |",
        row(("hybrid (cosine + BM25)" + (f", approximate: {q['head_dims']}-dim scan + exact re-rank"
                                         if q.get("head_dims") else "")), q["hybrid"]),
        row("hybrid, exact full cosine scan", q["hybrid_exact"]),
        row("hybrid, language filter", q["hybrid_filtered"]),
        row("lexical only (no model)", q["lexical"]),
        "",
        (f"Recall of the exact top-10 by the default search: {q['recall_at_10']:.4f} mean, "
         f"{q['recall_at_10_min']:.2f} worst query; with the language filter {q['recall_at_10_filtered']:.4f}."),
    ]
    return "\n".join(lines)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file())


def compare_indexes(dirs: list[Path], n_queries: int, rounds: int) -> int:
    """Size, load time and query latency of existing indexes, each round in fresh processes, interleaved."""
    import statistics
    import tempfile

    from sentinel.memory.cards.index import load_index

    with tempfile.TemporaryDirectory() as tmp:
        cards = {}
        for d in dirs:
            cards[d] = Path(tmp) / f"{len(cards)}.jsonl"
            cards[d].write_text("".join(json.dumps(c) + "\n" for c in load_index(d).iter_cards()), encoding="utf-8")
        runs: dict[Path, list[dict]] = {d: [] for d in dirs}
        for _ in range(rounds):
            for d in dirs:
                runs[d].append(_run(QUERY_DRIVER, str(d), str(cards[d]), str(n_queries)))
    print("| index | cards | size on disk | load ms | hybrid p50 ms | hybrid p95 ms | lexical p50 ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for d in dirs:
        med = lambda f: statistics.median(f(r) for r in runs[d])  # noqa: E731
        print(f"| {d} | {runs[d][0]['count']:,} | {dir_size(d) / 1e6:.2f} MB | {med(lambda r: r['load_s']) * 1000:.1f} | "
              f"{med(lambda r: r['hybrid']['p50_ms']):.2f} | {med(lambda r: r['hybrid']['p95_ms']):.2f} | "
              f"{med(lambda r: r['lexical']['p50_ms']):.2f} |")
    print(f"\n(medians of {rounds} interleaved rounds, {n_queries} queries each; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=135_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--regen", action="store_true", help="regenerate the corpus")
    ap.add_argument("--skip-build", action="store_true", help="reuse the index from a previous run")
    ap.add_argument("--index", action="append", type=Path, metavar="DIR",
                    help="measure this existing index instead of a generated corpus (repeatable: compared)")
    ap.add_argument("--rounds", type=int, default=5, help="with --index: interleaved rounds (default 5)")
    args = ap.parse_args(argv)
    if args.index:
        return compare_indexes(args.index, args.queries, args.rounds)

    cards = ensure_corpus(args.count, args.regen)
    index_dir = SCALE_DIR / f"index-{args.count}"
    result_file = ROOT / "benchmarks" / "results" / "memory_bench.json"
    if args.skip_build and result_file.is_file() and (index_dir / "meta.json").is_file():
        build = json.loads(result_file.read_text())["build"]
    else:
        print(f"building the index of {cards.name} ...", file=sys.stderr)
        build = _run(BUILD_DRIVER, str(cards), str(index_dir))
    print("querying ...", file=sys.stderr)
    queries = _run(QUERY_DRIVER, str(index_dir), str(cards), str(args.queries))
    result_file.parent.mkdir(parents=True, exist_ok=True)
    result_file.write_text(json.dumps({"build": build, "query": queries, "at": time.strftime("%Y-%m-%d %H:%M"),
                                       "loadavg": os.getloadavg()}, indent=2))
    print(table(build, queries))
    print(f"\n(load average during the run: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
