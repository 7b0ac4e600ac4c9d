"""Governed cards vs the same records ingested raw: recall@1/3/10 and MRR on symptom queries.

The paper's governed-vs-raw ablation, on our data:
- queries: benchmarks/data/retrieval_queries.jsonl — one symptom query per held-out fix record
  (aiohttp, tox, virtualenv, setuptools), phrased as a developer sees the failure (failing test,
  exception, wrong behaviour) and written without reading the cards. Search weights and the
  tokenizer were fixed before these queries existed; nothing was tuned on them.
- (a) governed: the bundled fix-record cards (index layer: summary, signals, tags).
- (b) raw: the same records as subject + changelog description + commit body + diff, no governance.
Both arms index exactly the same records with the same search code and the default embedder.

Needs ../shared/fixrecords for arm (b); skips cleanly without it.

    python benchmarks/eval_retrieval.py [--shared ../shared] [--model static]
"""

from __future__ import annotations

import argparse
import glob
import json
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def load_cards() -> list[dict]:
    cards = []
    for path in sorted(glob.glob(str(ROOT / "memory" / "cards" / "fixrecords-*.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            cards.extend(json.loads(line) for line in fh if line.strip())
    return cards


def raw_card(card: dict, record: dict) -> dict:
    """The record as it comes, wrapped in the card shape so the same index code can hold it."""
    text = "\n".join(x for x in (record.get("subject"), record.get("news"), record.get("body"),
                                 record.get("diff")) if x)
    raw = json.loads(json.dumps(card))
    raw["problem_summary"] = text
    raw["signals"] = []
    raw["tags"] = {"language": "python", "components": [], "exceptions": [], "rules": []}
    return raw


def evaluate(index, queries, target_of, config) -> dict:
    from sentinel.memory.index import search

    ranks = []
    mode = None
    for q in queries:
        hits = search(q["query"], k=10, config=config, index=index)
        mode = hits.mode
        ids = [h.id for h in hits]
        target = target_of[q["record_id"]]
        ranks.append(ids.index(target) + 1 if target in ids else None)
    n = len(ranks)
    return {"queries": n, "mode": mode,
            "recall@1": sum(1 for r in ranks if r and r <= 1) / n,
            "recall@3": sum(1 for r in ranks if r and r <= 3) / n,
            "recall@10": sum(1 for r in ranks if r and r <= 10) / n,
            "MRR@10": sum(1.0 / r for r in ranks if r) / n}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--model", default="static", help="embeddings model (config embeddings.model)")
    args = ap.parse_args()
    fixrecords = Path(args.shared) / "fixrecords"
    if not fixrecords.is_dir():
        print(f"evaluation skipped: {fixrecords} not found")
        return 0
    from sentinel.config import Config
    from sentinel.embeddings import get_embedder
    from sentinel.memory.index import build_index, load_index

    config = Config()
    config.embeddings.model = args.model
    embedder = get_embedder(config.embeddings)
    cards = load_cards()
    by_record = {c["provenance"]["record_id"]: c for c in cards}
    records = {}
    for path in fixrecords.glob("*.jsonl"):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec["id"] in by_record:
                    records[rec["id"]] = rec
    with open(HERE / "data" / "retrieval_queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    queries = [q for q in queries if q["record_id"] in by_record]
    target_of = {rid: c["id"] for rid, c in by_record.items()}
    raw_cards = [raw_card(c, records[c["provenance"]["record_id"]]) for c in cards
                 if c["provenance"]["record_id"] in records]
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, corpus in (("governed cards", cards), ("raw records", raw_cards)):
            for arm, emb, weights in (("hybrid", embedder, (0.5, 0.5)), ("lexical (BM25)", None, (0.0, 1.0)),
                                      ("embedding", embedder, (1.0, 0.0))):
                out = Path(tmp) / f"{name}-{arm}".replace(" ", "_")
                build_index(corpus, out, emb if emb is not None else None)
                config.memory.embedding_weight, config.memory.lexical_weight = weights
                rows[(name, arm)] = evaluate(load_index(out), queries, target_of, config)
    print(f"corpus: {len(cards)} fix-record cards / the same {len(raw_cards)} records raw; "
          f"{len(queries)} held-out symptom queries; embedder {embedder.name}\n")
    print("| corpus | search | recall@1 | recall@3 | recall@10 | MRR@10 |")
    print("|---|---|---|---|---|---|")
    for (name, arm), r in rows.items():
        cells = " | ".join(f"{r[m]:.3f}" for m in ("recall@1", "recall@3", "recall@10", "MRR@10"))
        print(f"| {name} | {arm} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
