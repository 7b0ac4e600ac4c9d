"""Retrieval evaluations of the experience memory (benchmarks, not tests; numbers go to the README).

    python benchmarks/eval_retrieval.py time-split --repo DIR --name OWNER/NAME --until DATE [--since DATE]
        (a) learn on a real history before DATE, query with the bug descriptions of the later fixes (their
        news/changelog entry, else the commit subject — the PR title of a squash merge), and count a hit when a
        recalled card's fix touched a source file the later fix changed. Next to it, in the same run: BM25 over
        the earlier commits' messages (every earlier non-merge commit is a document), same relevance rule.
    python benchmarks/eval_retrieval.py fixrecords [--shared ../shared]
        (b) governed cards vs the same records raw, on ../shared/fixrecords, time split inside each repository,
        reported for the repositories we evaluate on (never the ones the scores were calibrated on: TUNED).
    python benchmarks/eval_retrieval.py known-item [--shared ../shared]
        the hand-written symptom queries of benchmarks/data/retrieval_queries.jsonl against the bundled cards.
    python benchmarks/eval_retrieval.py learn-timing --repo DIR --name OWNER/NAME [--commits 5000]
        `memory learn` over the newest N commits with the deterministic standardiser, whole process, 3 runs.

Real histories come from snapshots of public repositories (never committed here); ../shared is optional and
every section that needs it says so and skips cleanly without it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

# The repositories whose fix records the scores were calibrated and the standardiser was tuned on. Evaluation
# numbers are reported for the others only.
TUNED = ("sqlalchemy/sqlalchemy", "pytest-dev/pytest", "pypa/pip")
EVALUATED = ("aio-libs/aiohttp", "tox-dev/tox", "pypa/virtualenv", "pypa/setuptools")
LICENSES = {"sqlalchemy/sqlalchemy": "MIT", "pytest-dev/pytest": "MIT", "aio-libs/aiohttp": "Apache-2.0",
            "pypa/pip": "MIT", "tox-dev/tox": "MIT", "pypa/virtualenv": "MIT", "pypa/setuptools": "MIT"}


# ------------------------------------------------------------------------------------------------------------
# shared pieces

def norm_path(path: str) -> str:
    """A source path as a module: without a leading src/ or lib/ (projects move to a src layout; the same
    module before and after the move is the same code for this evaluation)."""
    parts = path.split("/")
    while parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return "/".join(parts)


def bm25_rank(docs: list[list[str]], k1: float = 1.2, b: float = 0.75):
    """A plain BM25 ranker over tokenised documents: rank(query_terms, n) -> the n best document indexes."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / max(n, 1)
    df: Counter = Counter()
    tfs = []
    for d in docs:
        tf = Counter(d)
        tfs.append(tf)
        df.update(tf.keys())
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
    postings: dict[str, list[int]] = {}
    for i, tf in enumerate(tfs):
        for t in tf:
            postings.setdefault(t, []).append(i)

    def rank(terms: list[str], top: int) -> list[int]:
        scores: Counter = Counter()
        for t in set(terms):
            for i in postings.get(t, ()):
                tf = tfs[i][t]
                norm = k1 * (1 - b + b * len(docs[i]) / (avgdl or 1))
                scores[i] += idf[t] * tf * (k1 + 1) / (tf + norm)
        return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]

    return rank


def build(cards: list[dict], out: Path, lexical: bool = False, codemap: dict | None = None):
    from sentinel.embeddings import get_embedder
    from sentinel.memory.cards.build import build_index
    from sentinel.memory.cards.index import load_index

    build_index(cards, out, None if lexical else get_embedder(None), built_at="eval", codemap=codemap)
    return load_index(out)


def card_commits(card: dict) -> list[str]:
    prov = card.get("provenance", {})
    shas = [prov.get("commit")] + [r.split(":", 1)[1] for r in prov.get("references", []) if r.startswith("commit:")]
    return [s for s in shas if s]


def learned_hits(index, queries, files_of_card, k: int = 3, min_score: float = 0.0):
    """(hits at k, answered, relevant among shown, shown) for the learned memory; files_of_card(card) -> set."""
    from sentinel.config import Config
    from sentinel.memory.retrieval.search import search, show

    hits = answered = rel_shown = shown = 0
    rows = []
    for q in queries:
        res = search(q["query"], k=k, config=Config(), index=index, min_score=min_score)
        rel = [bool(files_of_card(show(h.id, index=index)) & q["files"]) for h in res]
        hits += any(rel)
        answered += bool(res)
        rel_shown += sum(rel)
        shown += len(res)
        rows.append((q, res, rel))
    return {"hit@k": hits, "answered": answered, "relevant_shown": rel_shown, "shown": shown, "rows": rows}


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


# ------------------------------------------------------------------------------------------------------------
# (a) time split on a real history

def history_split(root: str, name: str, until: str, since: str | None = None, tau: float = 0.2):
    """(earlier commits, source files per commit, learn result, later-fix queries, learn seconds, code map of the
    tree at the cutoff: what `memory learn` run at that time would have stored with its index)."""
    from sentinel.memory.learn import gitsource, pipeline
    from sentinel.memory.learn.index import source_code_map
    from sentinel.memory.learn.paths import role
    from sentinel.memory.learn.purify import purify

    before = gitsource.list_commits(root, until=until, since=since)
    after = gitsource.list_commits(root, since=until)
    files = {c.sha: {norm_path(p) for p in c.files if role(p) == "source"} for c in before + after}
    started = time.perf_counter()
    res = pipeline.run(gitsource.candidates_of(root, name, before), pipeline.Options(tau=tau))
    cmap = source_code_map(root, before[0].sha) if before else {}
    learn_s = time.perf_counter() - started
    queries = []
    for cand in gitsource.candidates_of(root, name, after):
        if not purify(cand, tau).keep:
            continue
        qfiles = {norm_path(f.path) for f in cand.role_files("source")}
        text = cand.fragment or cand.subject
        queries.append({"query": text, "files": qfiles, "sha": cand.sha,
                        "kind": "fragment" if cand.fragment else "subject"})
    return before, files, res, queries, learn_s, cmap


def auto_cutoff(root: str, share: float = 0.2) -> str:
    """The date that leaves the newest `share` of the non-merge commits for queries."""
    out = subprocess.run(["git", "log", "--no-merges", "--format=%aI"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[int(len(out) * share)]


def cmd_time_split(args) -> int:
    from sentinel.memory.cards.text import tokenize

    root = args.repo
    if not Path(root).exists():
        print(f"time split skipped: {root} not found")
        return 0
    if args.until == "auto":
        args.until = auto_cutoff(root)
    before, files, res, queries, learn_s, cmap = history_split(root, args.name, args.until, args.since, args.tau)
    cards = res.cards
    with tempfile.TemporaryDirectory() as tmp:
        index = build(cards, Path(tmp) / "learned", codemap=None if args.no_codemap else cmap)

        def files_of_card(card):
            out = set()
            for sha in card_commits(card):
                out |= files.get(sha, set())
            return out

        rank = bm25_rank([tokenize(c.message) for c in before])
        bm_hits = 0
        for q in queries:
            top = rank(tokenize(q["query"]), args.k)
            bm_hits += any(files.get(before[i].sha, set()) & q["files"] for i in top)
        learned = learned_hits(index, queries, files_of_card, k=args.k)
        shown = learned_hits(index, queries, files_of_card, k=args.k, min_score=args.min_score)
    n = len(queries)
    kinds = Counter(q["kind"] for q in queries)
    out = {
        "repository": args.name, "until": args.until, "since": args.since,
        "history_commits": len(before), "learn_seconds": round(learn_s, 1), "stage_counts": res.counts,
        "queries": n, "query_kinds": dict(kinds), "k": args.k,
        "learned_hit_rate": round(learned["hit@k"] / n, 4) if n else None,
        "bm25_commit_messages_hit_rate": round(bm_hits / n, 4) if n else None,
        "with_threshold": {"min_score": args.min_score, "answered": shown["answered"],
                           "hit_rate": round(shown["hit@k"] / n, 4) if n else None,
                           "precision_of_shown": round(shown["relevant_shown"] / shown["shown"], 4)
                           if shown["shown"] else None},
    }
    print(json.dumps(out, indent=2))
    if n:
        print(f"\n{args.name}: learned memory hit-rate@{args.k} {pct(learned['hit@k'], n)} vs BM25 over "
              f"{len(before)} earlier commit messages {pct(bm_hits, n)} ({n} later fixes; "
              f"{len(cards)} cards learned in {learn_s:.1f}s)")
    return 0


# ------------------------------------------------------------------------------------------------------------
# (b) governed vs raw on fix records, split by repository

def read_records(shared: Path) -> dict[str, list[dict]]:
    by_repo: dict[str, list[dict]] = {}
    for path in sorted((shared / "fixrecords").glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    by_repo.setdefault(rec["repo"], []).append(rec)
    return by_repo


def record_split(records: list[dict], share: float = 0.8):
    recs = sorted(records, key=lambda r: r.get("commit_date") or r["date"])
    cut = int(len(recs) * share)
    return recs[:cut], recs[cut:]


def governed_cards(records: list[dict], repo: str) -> list[dict]:
    from sentinel.memory.learn import pipeline
    from sentinel.memory.learn.records import candidate_of

    res = pipeline.run((candidate_of(r, LICENSES.get(repo, "unknown")) for r in records),
                       pipeline.Options(card_source="fixrecord"))
    return res.cards


def raw_cards(records: list[dict]) -> list[dict]:
    """Records as they come, in the card shape so the same index and search code holds them."""
    out = []
    for r in records:
        text = "\n".join(x for x in (r.get("subject"), r.get("news"), r.get("body"), r.get("diff")) if x)
        out.append({"id": f"raw-{r['id'].replace('@', '-').lower()}", "problem_summary": text, "signals": [],
                    "tags": {"language": "python", "components": ["raw"], "exceptions": [], "rules": []},
                    "root_cause": "-", "fix_strategy": "-", "patch_digest": {"areas": ["-"], "chunks": []},
                    "verification": {"reproduction": "-", "tests_added": []},
                    "provenance": {"source": "fixrecord", "record_id": r["id"], "repository": r["repo"],
                                   "commit": r["sha"], "license": "-"},
                    "quality": {"governed_by": "raw"}})
    return out


def record_queries(later: list[dict]) -> list[dict]:
    return [{"query": r["news"], "files": {norm_path(p) for p in r.get("source_files") or []}, "sha": r["sha"]}
            for r in later if r.get("news") and r.get("source_files")]


def cmd_fixrecords(args) -> int:
    shared = Path(args.shared)
    if not (shared / "fixrecords").is_dir():
        print(f"fixrecords evaluation skipped: {shared / 'fixrecords'} not found")
        return 0
    by_repo = read_records(shared)
    rows = []
    for repo in EVALUATED if not args.all else sorted(by_repo):
        earlier, later = record_split(by_repo[repo])
        files = {r["sha"]: {norm_path(p) for p in r.get("source_files") or []} for r in earlier}
        queries = record_queries(later)
        with tempfile.TemporaryDirectory() as tmp:
            for arm, cards in (("governed", governed_cards(earlier, repo)), ("raw", raw_cards(earlier))):
                for mode in ("hybrid", "lexical"):
                    index = build(cards, Path(tmp) / f"{arm}-{mode}", lexical=(mode == "lexical"))
                    r = learned_hits(index, queries, lambda c: set().union(*(files.get(s, set())
                                                                            for s in card_commits(c))), k=args.k)
                    rows.append({"repository": repo, "arm": arm, "search": mode, "cards": len(cards),
                                 "queries": len(queries), "hit_rate": round(r["hit@k"] / len(queries), 4)})
                    print(json.dumps(rows[-1]), flush=True)
    print(f"\n| repository | cards (governed / raw) | queries | governed hybrid | raw hybrid | governed BM25 | "
          f"raw BM25 |\n|---|---|---|---|---|---|---|")
    for repo in dict.fromkeys(r["repository"] for r in rows):
        get = {(r["arm"], r["search"]): r for r in rows if r["repository"] == repo}
        g, w = get[("governed", "hybrid")], get[("raw", "hybrid")]
        print(f"| {repo} | {g['cards']} / {w['cards']} | {g['queries']} | {g['hit_rate']:.3f} | {w['hit_rate']:.3f} "
              f"| {get[('governed', 'lexical')]['hit_rate']:.3f} | {get[('raw', 'lexical')]['hit_rate']:.3f} |")
    return 0


# ------------------------------------------------------------------------------------------------------------
# known-item: hand-written symptom queries against the bundled cards

def cmd_known_item(args) -> int:
    from sentinel.config import Config
    from sentinel.memory.cards.index import load_index
    from sentinel.memory.retrieval.search import search

    queries = [json.loads(line) for line in open(HERE / "data" / "retrieval_queries.jsonl", encoding="utf-8")
               if line.strip()]
    index = load_index()
    by_record = {}
    for card in index.iter_cards():
        rid = card.get("provenance", {}).get("record_id")
        if rid:
            by_record.setdefault(rid, []).append(card["id"])
    ranks, scores_top = [], []
    for q in queries:
        hits = search(q["query"], k=10, config=Config(), index=index, min_score=0.0)
        ids = [h.id for h in hits]
        targets = by_record.get(q["record_id"], [])
        rank = next((i + 1 for i, cid in enumerate(ids) if cid in targets), None)
        ranks.append(rank)
        scores_top.append(hits[0].score if hits else 0.0)
    n = len(ranks)
    print(json.dumps({"queries": n, "cards": index.count,
                      "recall@1": round(sum(1 for r in ranks if r and r <= 1) / n, 3),
                      "recall@3": round(sum(1 for r in ranks if r and r <= 3) / n, 3),
                      "recall@10": round(sum(1 for r in ranks if r and r <= 10) / n, 3),
                      "MRR@10": round(sum(1 / r for r in ranks if r) / n, 3),
                      "median_top_score": round(statistics.median(scores_top), 3)}, indent=2))
    return 0


# ------------------------------------------------------------------------------------------------------------
# learn timing

def cmd_learn_timing(args) -> int:
    import shutil

    if not Path(args.repo).exists():
        print(f"timing skipped: {args.repo} not found")
        return 0
    sentinel = shutil.which("sentinel") or "sentinel"
    times = []
    last = ""
    for _ in range(args.runs):
        store = tempfile.mktemp(suffix=".sqlite3")
        env = {**os.environ, "SENTINEL_LEARNED_STORE": store}
        started = time.perf_counter()
        proc = subprocess.run([sentinel, "memory", "learn", "--max-commits", str(args.commits), "--repo-name",
                               args.name, "--no-index"], cwd=args.repo, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        last = proc.stdout + proc.stderr
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.unlink(store + suffix)  # sentinel: ignore[SEN103] the temporary store this run created
        if proc.returncode:
            print(last)
            return 1
    print(last.strip())
    print(f"memory learn over {args.commits} commits of {args.name}: median {statistics.median(times):.1f}s "
          f"(runs: {', '.join(f'{t:.1f}' for t in times)})")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("time-split")
    p.add_argument("--repo", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--until", required=True, help="a date, or auto: the newest 20%% of commits are the queries")
    p.add_argument("--since")
    p.add_argument("--tau", type=float, default=0.2)
    p.add_argument("-k", type=int, default=3)
    p.add_argument("--min-score", type=float, default=0.35)
    p.add_argument("--no-codemap", action="store_true", help="search the learned index without the code map")
    p.set_defaults(func=cmd_time_split)
    p = sub.add_parser("fixrecords")
    p.add_argument("--shared", default=str(ROOT.parent / "shared"))
    p.add_argument("-k", type=int, default=3)
    p.add_argument("--all", action="store_true", help="every repository, tuned ones included (labelled)")
    p.set_defaults(func=cmd_fixrecords)
    p = sub.add_parser("known-item")
    p.set_defaults(func=cmd_known_item)
    p = sub.add_parser("learn-timing")
    p.add_argument("--repo", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--commits", type=int, default=5000)
    p.add_argument("--runs", type=int, default=3)
    p.set_defaults(func=cmd_learn_timing)
    args = ap.parse_args()
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
