"""Do the bundled cards earn their slots on bug reports of projects the bundle has never seen?

    python benchmarks/bundle_transfer.py search --arm before=2e007df --arm after=WORKTREE
        build an index of each arm's memory/cards (a git ref, or WORKTREE for the files on disk), ask it every
        report of benchmarks/data/outside_queries.jsonl and keep the top 3 as ranked (--min-score 0) with their
        scores (benchmarks/results/bundle/<arm>.hits.json)
    python benchmarks/bundle_transfer.py pool [--out FILE]
        the (report, card) pairs of every arm's top 3 that have no judgement yet, in a seeded shuffled order and
        without the arm that found them, with each card's problem, root cause and fix: what a judge reads
    python benchmarks/bundle_transfer.py report [--json]
        per arm and split: reports with a transferring card in the top 3 (as ranked), reports with a related one
        as shown (the default threshold, up to 3), the shown slots by kind of card and how many were relevant,
        and how well the score separates relevant from irrelevant (AUC over the judged top 3)

The reports (benchmarks/data/outside_queries.jsonl) come from the changelogs of projects whose fixes no bundled
card was written from (werkzeug, flask, httpx, starlette: "dev", looked at while the bundle was rewritten; click,
jinja, trio, attrs, rich, structlog, yarl, multidict, twine, pipx, pytest-xdist: "held-out"), taken by a rule
(the newest bug-fix entries of each, typing/docs/packaging entries skipped) and written as a user reports the
bug. Judgements (benchmarks/data/outside_judgements.jsonl, one per report and card): "transfers" = the card's fix
strategy, applied to the reported project, would fix the reported bug; "related" = same mechanism or area, a
useful pointer but not the fix; "no" otherwise. Criteria and method: benchmarks/data/outside_README.md.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

QUERIES = HERE / "data" / "outside_queries.jsonl"
JUDGEMENTS = HERE / "data" / "outside_judgements.jsonl"
RESULTS = HERE / "results" / "bundle"
TOP = 3
VERDICTS = ("transfers", "related", "no")


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def arm_cards(ref: str) -> list[dict]:
    """The valid cards of memory/cards at a git ref (WORKTREE: the files on disk), checked as the build checks."""
    from sentinel.memory.cards.corpus import load_entries

    if ref == "WORKTREE":
        files = sorted((ROOT / "memory" / "cards").glob("*.jsonl"))
        return [e.raw for e in load_entries(files) if e.valid]
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{ref}:memory/cards"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name in sorted(n for n in names if n.endswith(".jsonl")):
            blob = subprocess.run(["git", "show", f"{ref}:memory/cards/{name}"], cwd=ROOT, check=True,
                                  capture_output=True).stdout
            path = Path(tmp) / name
            path.write_bytes(blob)
            files.append(path)
        return [e.raw for e in load_entries(files) if e.valid]


def kind(card: dict) -> str:
    if card.get("provenance", {}).get("source") == "rule-class":
        return "rule-class"
    if card.get("quality", {}).get("standardiser") == "deterministic":
        return "template"
    return "hand-written"


def cmd_search(args) -> int:
    from sentinel.config import Config
    from sentinel.embeddings import get_embedder
    from sentinel.memory.cards.build import build_index
    from sentinel.memory.cards.index import load_index
    from sentinel.memory.retrieval import ranking
    from sentinel.memory.retrieval.search import search

    queries = read_jsonl(QUERIES)
    RESULTS.mkdir(parents=True, exist_ok=True)
    for spec in args.arm:
        name, _, ref = spec.partition("=")
        cards = arm_cards(ref or name)
        out = RESULTS / f"{name}.index"
        build_index(cards, out, get_embedder(None), built_at="bundle-transfer")
        index = load_index(out)
        rows = []
        for q in queries:
            hits = search(q["query"], k=TOP, config=Config(), index=index, min_score=0.0)
            rows.append({"id": q["id"], "hits": [{"card": h.id, "score": round(h.score, 4)} for h in hits]})
        (RESULTS / f"{name}.hits.json").write_text(json.dumps({
            "arm": name, "ref": ref or name, "cards": len(cards), "min_score": ranking.DEFAULT_MIN_SCORE,
            "kinds": {c["id"]: kind(c) for c in cards}, "rows": rows}, indent=1), encoding="utf-8")
        (RESULTS / f"{name}.cards.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cards), encoding="utf-8")
        print(f"{name}: {len(cards)} cards, {len(rows)} reports -> {RESULTS / (name + '.hits.json')}")
    return 0


def load_arms() -> list[dict]:
    arms = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RESULTS.glob("*.hits.json"))]
    if not arms:
        raise SystemExit("no arms searched yet: run `bundle_transfer.py search --arm NAME=REF` first")
    order = {"before": 0, "after": 1}
    return sorted(arms, key=lambda a: (order.get(a["arm"], 2), a["arm"]))


def judged() -> dict[tuple[str, str], str]:
    out = {}
    for j in read_jsonl(JUDGEMENTS):
        if j["verdict"] not in VERDICTS:
            raise SystemExit(f"{JUDGEMENTS.name}: unknown verdict {j['verdict']!r} for {j['query']} / {j['card']}")
        out[(j["query"], j["card"])] = j["verdict"]
    return out


def cmd_pool(args) -> int:
    queries = {q["id"]: q for q in read_jsonl(QUERIES)}
    done = judged()
    cards = {}
    for p in sorted(RESULTS.glob("*.cards.jsonl")):
        for c in read_jsonl(p):
            cards.setdefault(c["id"], c)
    pairs = sorted({(row["id"], h["card"]) for arm in load_arms() for row in arm["rows"] for h in row["hits"]}
                   - set(done))
    random.Random(22).shuffle(pairs)
    with open(args.out, "w", encoding="utf-8") as f:
        for qid, cid in pairs:
            c = cards[cid]
            f.write(json.dumps({"query": qid, "report": queries[qid]["query"], "card": cid,
                                "problem": c["problem_summary"], "root_cause": c["root_cause"],
                                "fix": c["fix_strategy"]}) + "\n")
    print(f"{len(pairs)} pairs to judge -> {args.out} ({len(done)} already judged)")
    return 0


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def tally(arm: dict, queries: list[dict], verdicts: dict, split: str | None) -> dict:
    rows = {r["id"]: r for r in arm["rows"]}
    chosen = [q for q in queries if split is None or q["split"] == split]
    threshold = arm["min_score"]
    transfer3 = related_shown = any_shown = 0
    slots: dict[str, list[int]] = {}
    pos, neg = [], []
    for q in chosen:
        hits = rows[q["id"]]["hits"][:TOP]
        marks = [verdicts[(q["id"], h["card"])] for h in hits]
        transfer3 += "transfers" in marks
        shown = [(h, m) for h, m in zip(hits, marks) if h["score"] >= threshold]
        any_shown += bool(shown)
        related_shown += any(m != "no" for _, m in shown)
        for h, m in shown:
            got = slots.setdefault(arm["kinds"][h["card"]], [0, 0])
            got[0] += 1
            got[1] += m != "no"
        for h, m in zip(hits, marks):
            (pos if m != "no" else neg).append(h["score"])
    n = len(chosen)
    shown_total = sum(v[0] for v in slots.values())
    relevant_total = sum(v[1] for v in slots.values())
    return {"reports": n, "transfer_top3": transfer3, "related_shown": related_shown, "any_shown": any_shown,
            "shown_slots": shown_total, "shown_relevant": relevant_total,
            "slots_by_kind": {k: {"shown": v[0], "relevant": v[1]} for k, v in sorted(slots.items())},
            "auc": None if auc(pos, neg) is None else round(auc(pos, neg), 3), "threshold": threshold}


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"


def cmd_report(args) -> int:
    queries = read_jsonl(QUERIES)
    verdicts = judged()
    arms = load_arms()
    missing = sorted({(r["id"], h["card"]) for a in arms for r in a["rows"] for h in r["hits"]} - set(verdicts))
    if missing:
        print(f"{len(missing)} (report, card) pairs are not judged yet: run `bundle_transfer.py pool` and judge them",
              file=sys.stderr)
        return 1
    out = {a["arm"]: {"cards": a["cards"], **{s or "all": tally(a, queries, verdicts, s)
                                            for s in ("dev", "held-out", None)}} for a in arms}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for name, res in out.items():
        print(f"{name} ({res['cards']} cards, shown = score >= {res['all']['threshold']}, top {TOP})")
        for split in ("dev", "held-out", "all"):
            t = res[split]
            kinds = ", ".join(f"{k} {v['relevant']}/{v['shown']}" for k, v in t["slots_by_kind"].items())
            print(f"  {split:9} transfers in top 3 {pct(t['transfer_top3'], t['reports'])}; related as shown "
                  f"{pct(t['related_shown'], t['reports'])}; shown slots {t['shown_slots']}, relevant "
                  f"{t['shown_relevant']} ({kinds or 'none'}); AUC {t['auc']}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("search")
    p.add_argument("--arm", action="append", required=True, metavar="NAME=REF",
                   help="an arm and the git ref of its memory/cards (WORKTREE: the files on disk); repeatable")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("pool")
    p.add_argument("--out", default=str(RESULTS / "to-judge.jsonl"))
    p.set_defaults(func=cmd_pool)
    p = sub.add_parser("report")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)
    args = ap.parse_args()
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
