"""Retrieval evaluations of the experience memory (benchmarks, not tests; numbers go to docs/memory.md).

    python benchmarks/eval_retrieval.py time-split [--data /work/data] [--only OWNER/NAME ...] [--out FILE]
        (a) as shipped, on real histories (HISTORIES: which were tuned on and which are held out): split each
        history before its last 24 bug fixes (benchmarks/histories.py), run the installed `sentinel memory learn`
        in a checkout of the split, then the installed `sentinel memory search --json` with each later fix's
        description (its news fragment or changelog entry, else its subject: the PR title). Relevant: a shown
        card's fix touched a source file the later fix changed. Per history and pooled (held out / tuned / all):
        learned as shown (the default threshold), learned as ranked (the top k with --min-score 0), BM25 over the
        earlier fixes' messages and news entries, and a baseline that ignores the query (the newest card of each
        of the k files most cards' fixes touched). --judgements FILE keeps every candidate's features and
        relevance for calibrate_scores.py.
    python benchmarks/eval_retrieval.py fixrecords [--shared ../shared]
        (b) governed cards vs the same records raw, on ../shared/fixrecords, time split inside each repository,
        reported for the repositories we evaluate on (never the ones the scores were calibrated on: TUNED).
    python benchmarks/eval_retrieval.py known-item [--shared ../shared]
        the hand-written symptom queries of benchmarks/data/retrieval_queries.jsonl against the bundled cards.
    python benchmarks/eval_retrieval.py learn-timing --repo DIR --name OWNER/NAME [--commits 5000]
        `memory learn` over the newest N commits with the deterministic standardiser, whole process, 3 runs.

Real histories come from snapshots of public repositories cloned under --data (never committed here); a history
that is absent is skipped and said so, as is every section that needs ../shared without it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
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
sys.path.insert(0, str(HERE))

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
# (a) time split on real histories, as shipped: the installed `sentinel` learns and searches

# The histories the evaluation runs on (directory under --data: the repository's name). "tuned": the scores were
# calibrated on them (calibrate_scores.py), the code map's variants were chosen on werkzeug and httpx, and other
# engineers may tune on them; "held-out": never used for tuning anything — their figures are the ones that count.
HISTORIES = {
    "pallets/werkzeug": "tuned", "encode/httpx": "tuned", "pallets/flask": "tuned", "encode/starlette": "tuned",
    "pallets/click": "tuned", "aio-libs/yarl": "tuned", "aio-libs/multidict": "tuned",
    "python-attrs/attrs": "tuned", "Textualize/rich": "tuned",
    "python-trio/trio": "held-out", "pypa/twine": "held-out", "pytest-dev/pytest-xdist": "held-out",
    "pypa/pipx": "held-out", "hynek/structlog": "held-out", "pallets/jinja": "held-out",
}
ARMS = ("shown", "ranked", "bm25", "most_fixed")
ARM_LABELS = {"shown": "learned as shown", "ranked": "learned as ranked", "bm25": "BM25 over earlier fixes",
              "most_fixed": "3 most-fixed files"}


def _sentinel_env() -> dict:
    """The environment a user has: none of Sentinel's overrides of this shell leak into the runs."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=_sentinel_env(), capture_output=True, text=True)


def _search(sentinel: str, cwd: Path, query: str, k: int, min_score: float | None = None,
            index: Path | None = None) -> dict:
    cmd = [sentinel, "memory", "search", "-k", str(k), "--json"]
    if min_score is not None:
        cmd += ["--min-score", str(min_score)]
    if index is not None:
        cmd += ["--index", str(index)]
    proc = _run([*cmd, "--", query], cwd)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def _learned_cards(git_dir: Path) -> list[dict]:
    """The cards `memory learn` stored: the clone's SQLite store (<git-dir>/sentinel/hypotheses.sqlite3, its `cards`
    table), or the separate learned.sqlite3 of Sentinel before store schema 6."""
    import sqlite3

    path = git_dir / "sentinel" / "hypotheses.sqlite3"
    query = "SELECT body FROM cards ORDER BY card_id"
    if not path.is_file():
        path, query = git_dir / "sentinel" / "learned.sqlite3", "SELECT json FROM cards ORDER BY id"
    if not path.is_file():
        raise RuntimeError(f"no learned cards under {git_dir / 'sentinel'}: where does `memory learn` keep them now?")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [json.loads(row[0]) for row in db.execute(query)]
    finally:
        db.close()


def words(text: str) -> list[str]:
    """BM25 terms: lower-cased words, identifiers also split into their parts, no stop words."""
    out = []
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = [p for p in re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", w) if p]
        for t in {w, *parts}:
            t = t.lower()
            if len(t) > 1 and t not in STOP:
                out.append(t)
    return out


STOP = frozenset("a an and are as at be by can for from has have in into is it its not of on or that the this to "
                 "was were when which will with".split())


def judge(hits: list[dict], files_of: dict[str, set[str]], qfiles: set[str], name: str) -> list[bool]:
    """A shown card is relevant when its fix touched a source file the later fix changed. A bundled card is
    another project's fix: never relevant here (one of this project's own is a leak, and fails the run)."""
    out = []
    for h in hits:
        if h.get("source") == "project":
            out.append(bool(files_of.get(h["id"], set()) & qfiles))
        else:
            if (h.get("provenance") or {}).get("repository", "").lower() == name.lower():
                raise RuntimeError(f"{name}: a bundled card ({h['id']}) comes from this very project — its later "
                                   "fixes are in the bundle; evaluate on another history")
            out.append(False)
    return out


def run_history(name: str, repo: Path, work: Path, *, sentinel: str, n_fixes: int, k: int,
                judgements: list[dict] | None = None, log=print) -> dict:
    """Split the history, learn at the split with the installed CLI, ask the later fixes; one row per arm."""
    import histories

    started = time.perf_counter()
    sp = histories.split(str(repo), n_fixes)
    clone = work / name.replace("/", "+")
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(clone)], check=True)
    for args in (["checkout", "-q", "--detach", sp.sha], ["remote", "set-url", "origin",
                                                          f"https://github.com/{name}.git"]):
        subprocess.run(["git", *args], cwd=clone, check=True)
    t0 = time.perf_counter()
    proc = _run([sentinel, "memory", "learn", "--json"], clone)
    if proc.returncode:
        raise RuntimeError(f"{name}: memory learn failed: {proc.stderr.strip()[-800:]}")
    learn_s = time.perf_counter() - t0
    counts = json.loads(proc.stdout)["runs"][0]["counts"]
    cards = _learned_cards(clone / ".git")
    src_of = {c.sha: c.source for c in sp.history}
    files_of = {c["id"]: set().union(*(src_of.get(s, set()) for s in card_commits(c))) for c in cards}
    project_index = clone / ".git" / "sentinel" / "learned-index"

    # the baseline that ignores the query: the newest card of each of the 3 files most cards' fixes touched
    per_file: Counter = Counter(f for c in cards for f in files_of[c["id"]])
    newest = sorted(cards, key=lambda c: (c.get("provenance", {}).get("date") or "", c["id"]), reverse=True)
    most_fixed: list[str] = []
    for f, _ in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:k]:
        card = next((c["id"] for c in newest if f in files_of[c["id"]] and c["id"] not in most_fixed), None)
        if card:
            most_fixed.append(card)
    # BM25 over the earlier fixes: each fix's commit message and its news entry is a document
    docs = [c for c in sp.history if c.kind and c.source]
    rank = bm25_rank([words(f"{c.message}\n{c.description}") for c in docs])

    tally = {arm: Counter() for arm in ARMS}
    per_query = []
    for q in sp.queries:
        qfiles = q.source
        shown = _search(sentinel, clone, q.description, k)
        ranked = _search(sentinel, clone, q.description, 10, min_score=0)
        rel = {"shown": judge(shown["results"], files_of, qfiles, name),
               "ranked": judge(ranked["results"][:k], files_of, qfiles, name),
               "bm25": [bool(docs[i].source & qfiles) for i in rank(words(q.description), k)],
               "most_fixed": [bool(files_of[c] & qfiles) for c in most_fixed]}
        for arm, r in rel.items():
            tally[arm].update(hit=any(r), answered=bool(r), shown=len(r), relevant=sum(r))
        per_query.append({"sha": q.sha, "kind": q.kind, "query": q.description, "files": sorted(qfiles),
                          "hits": {arm: any(r) for arm, r in rel.items()},
                          "shown": [{"id": h["id"], "score": h["score"], "source": h.get("source"),
                                     "relevant": x} for h, x in zip(shown["results"], rel["shown"])]})
        if judgements is not None:
            seen = set()
            project = _search(sentinel, clone, q.description, 30, min_score=0, index=project_index) \
                if project_index.is_dir() else {"results": []}
            for origin, res in (("merged", ranked), ("project", project)):
                for h in res["results"]:
                    if h["id"] in seen:
                        continue
                    seen.add(h["id"])
                    judgements.append({"history": name, "query": q.sha, "card": h["id"], "source": h.get("source"),
                                       "origin": origin, "score": h["score"], "features": h.get("features", {}),
                                       "min_score_shipped": shown["min_score"],
                                       "label": judge([h], files_of, qfiles, name)[0]})
    out = {"repository": name, "role": HISTORIES.get(name, "held-out"), "split": sp.sha, "split_date": sp.date,
           "history_commits": len(sp.history), "later_commits": len(sp.later), "query_kind": sp.kind,
           "queries": len(sp.queries), "repeats_dropped": sp.repeats, "cards": len(cards),
           "earlier_fixes": len(docs), "learn_counts": counts, "learn_seconds": round(learn_s, 1),
           "min_score": shown["min_score"] if sp.queries else None, "k": k,
           "arms": {arm: dict(t) for arm, t in tally.items()}, "per_query": per_query,
           "seconds": round(time.perf_counter() - started, 1)}
    n = len(sp.queries)
    log(f"{name} ({out['role']}): {n} queries, {len(cards)} cards, split {sp.sha[:10]} {sp.date[:10]}: "
        + ", ".join(f"{ARM_LABELS[a]} {tally[a]['hit']}/{n}" for a in ARMS) + f" ({out['seconds']} s)")
    shutil.rmtree(clone, ignore_errors=True)
    return out


def table(rows: list[dict]) -> str:
    """Markdown: per history, then pooled over the held-out ones, the tuned ones and all."""
    head = ("| history | role | queries | cards | " + " | ".join(ARM_LABELS[a] for a in ARMS)
            + " | precision as shown | answered |\n|---|---|---|---|" + "---|" * (len(ARMS) + 2))
    lines = [head]

    def line(label: str, role: str, group: list[dict]) -> str:
        n = sum(r["queries"] for r in group)
        t = {a: Counter() for a in ARMS}
        for r in group:
            for a in ARMS:
                t[a].update(r["arms"][a])
        cells = [f"{t[a]['hit']}/{n} ({pct(t[a]['hit'], n)})" for a in ARMS]
        return (f"| {label} | {role} | {n} | {sum(r['cards'] for r in group) if len(group) == 1 else ''} | "
                + " | ".join(cells) + f" | {pct(t['shown']['relevant'], t['shown']['shown'])} | "
                f"{t['shown']['answered']}/{n} |")

    for r in rows:
        lines.append(line(r["repository"], r["role"], [r]))
    for role in ("held-out", "tuned"):
        group = [r for r in rows if r["role"] == role]
        if group:
            lines.append(line(f"**pooled, {role}**", role, group))
    lines.append(line("**pooled, all**", "", rows))
    return "\n".join(lines)


def cmd_time_split(args) -> int:
    sentinel = args.sentinel or shutil.which("sentinel")
    if not sentinel:
        print("time split skipped: no `sentinel` on PATH (install Sentinel: pip install -e .)")
        return 0
    if args.repo:
        targets = [(args.name or Path(args.repo).name, Path(args.repo))]
    else:
        names = args.only or list(HISTORIES)
        targets = [(n, Path(args.data) / n.split("/")[1]) for n in names]
    missing = [str(p) for _, p in targets if not (p / ".git").exists()]
    targets = [(n, p) for n, p in targets if (p / ".git").exists()]
    for m in missing:
        print(f"skipped: {m} not found (clone the history there)")
    if not targets:
        return 0
    judgements: list[dict] | None = [] if args.judgements else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="sentinel-eval-") as tmp:
        for name, path in targets:
            rows.append(run_history(name, path, Path(tmp), sentinel=sentinel, n_fixes=args.fixes, k=args.k,
                                    judgements=judgements))
    print("\n" + table(rows))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"sentinel": sentinel_revision(), "rows": rows}, indent=1) + "\n",
                                  encoding="utf-8")
        print(f"\nwrote {args.out}")
    if judgements is not None:
        with open(args.judgements, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(j) + "\n" for j in judgements)
        print(f"wrote {len(judgements)} judgements to {args.judgements}")
    return 0


def sentinel_revision() -> str:
    proc = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip()


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
    p = sub.add_parser("time-split", help="learn at a split of real histories and ask the later fixes, through the "
                                          "installed sentinel; per history and pooled, against two baselines")
    p.add_argument("--data", default="/work/data", help="directory holding the histories (one clone per "
                                                        "repository, named like it; default /work/data)")
    p.add_argument("--only", action="append", metavar="OWNER/NAME", help="only this history (repeatable)")
    p.add_argument("--repo", help="one history at this path instead (with --name OWNER/NAME)")
    p.add_argument("--name")
    p.add_argument("--fixes", type=int, default=24, help="later fixes to ask (default 24)")
    p.add_argument("-k", type=int, default=3)
    p.add_argument("--sentinel", help="the sentinel to run (default: the one on PATH)")
    p.add_argument("--out", help="write every row and query as JSON here")
    p.add_argument("--judgements", metavar="FILE", help="also write each query's candidates with their "
                                                        "features and relevance (JSONL, for calibrate_scores.py)")
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
