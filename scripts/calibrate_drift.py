"""Calibrate the task-drift check on real bug-fix records and write the table to docs/intent.md.

Data: ../shared/fixrecords/*.jsonl (bug-fix commits that carry a changelog entry for the bug they fix).
The script skips cleanly (exit 0, a message) when that folder is absent: it is evaluation material,
not part of the project.

Pairs, each a task (the record's changelog text, `news`) against a change (a commit message plus a
digest of a diff, built exactly as the check builds it from a diff without file contents):

  aligned          the record's own fix: its subject + body and the digest of its own diff
  misaligned-easy  a fix from another repository
  misaligned-hard  another fix from the same repository (same vocabulary, different bug)
  decoy            the record's own message with the digest of another same-repository fix: an on-topic
                   description of off-topic code, which a prose-only gate cannot tell from the real fix

For each model (the bundled static model, and all-MiniLM-L6-v2 when sentence-transformers is
installed) and each digest weight it reports ROC AUC (aligned vs each kind) and, at candidate
thresholds, precision / recall of "score < threshold" as a detector of misaligned pairs (aligned and
misaligned in equal numbers) and the share of aligned pairs it would block.

    .venv/bin/python scripts/calibrate_drift.py                       # static model only
    /path/to/venv-with-sentence-transformers/bin/python scripts/calibrate_drift.py --write-docs
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_SHARED = ROOT.parent / "shared" / "fixrecords"
DOC = ROOT / "docs" / "intent.md"
START, END = "<!-- calibration:start -->", "<!-- calibration:end -->"
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 14)]
WEIGHTS = [0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0]
PRECISION_TARGET = 0.9
MAX_BLOCKED = 0.05


def load_records(folder: Path, limit: int | None, seed: int) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.jsonl")):
        rows = []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if (r.get("news") or "").strip() and (r.get("diff") or r.get("test_diff")):
                    rows.append(r)
        if limit:
            random.Random(seed).shuffle(rows)
            rows = rows[:limit]
        records.extend(rows)
    return records


def _parse(diff_text: str):
    from sentinel.diffparse import parse_diff
    from sentinel.errors import InputError
    text = diff_text
    for _ in range(3):
        try:
            return parse_diff(text, source="record").files
        except InputError:
            # A diff cut at N characters may end inside a hunk: drop the last file section.
            cut = text.rfind("\ndiff --git ")
            if cut <= 0:
                return []
            text = text[:cut + 1]
    return []


def digest_text(record: dict) -> str:
    from sentinel.intent.digest import build_digest
    files = _parse(record.get("diff") or "") + _parse(record.get("test_diff") or "")
    return build_digest(files, None).embed_text()


def message_text(record: dict) -> str:
    return f"{record.get('subject', '')}\n\n{record.get('body', '') or ''}".strip()


def build_pairs(records: list[dict], seed: int) -> dict[str, list[tuple[int, int, int]]]:
    """Pairs as (task record, message record, digest record) indices."""
    rng = random.Random(seed)
    by_repo: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_repo.setdefault(r["repo"], []).append(i)
    pairs: dict[str, list[tuple[int, int, int]]] = {"aligned": [], "misaligned-easy": [], "misaligned-hard": [],
                                                    "decoy": []}
    repos = list(by_repo)
    for i, r in enumerate(records):
        same = [j for j in by_repo[r["repo"]] if j != i]
        others = [x for x in repos if x != r["repo"]]
        pairs["aligned"].append((i, i, i))
        if others:
            j = rng.choice(by_repo[rng.choice(others)])
            pairs["misaligned-easy"].append((i, j, j))
        if same:
            j = rng.choice(same)
            pairs["misaligned-hard"].append((i, j, j))
            k = rng.choice(same)
            pairs["decoy"].append((i, i, k))
    return pairs


def auc(pos: list[float], neg: list[float]) -> float:
    """P(score of an aligned pair > score of a misaligned pair), ties count half (Mann-Whitney)."""
    import numpy as np
    a, b = np.asarray(pos), np.asarray(neg)
    allv = np.concatenate([a, b])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    ranks[order] = np.arange(1, len(allv) + 1)
    # average ranks for ties
    sorted_v = allv[order]
    i = 0
    while i < len(sorted_v):
        j = i
        while j + 1 < len(sorted_v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        if j > i:
            ranks[order[i:j + 1]] = (i + j + 2) / 2
        i = j + 1
    return float((ranks[: len(a)].sum() - len(a) * (len(a) + 1) / 2) / (len(a) * len(b)))


def pr_at(aligned: list[float], misaligned: list[float], t: float) -> tuple[float, float, float]:
    """(precision, recall, aligned blocked) of 'score < t' flagging misaligned, classes balanced 1:1."""
    n = min(len(aligned), len(misaligned))
    a, m = aligned[:n], misaligned[:n]
    tp = sum(1 for s in m if s < t)
    fp = sum(1 for s in a if s < t)
    precision = tp / (tp + fp) if tp + fp else 1.0
    return precision, tp / n, fp / n


def evaluate(model: str, records: list[dict], pairs, weights: list[float]) -> dict:
    import numpy as np

    from sentinel.config import EmbeddingsConfig
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    try:
        emb = get_embedder(EmbeddingsConfig(model=model))
    except EmbedderUnavailable as exc:
        return {"model": model, "unavailable": f"{exc.reason} ({exc.fix})"}
    t0 = time.perf_counter()
    news = emb.encode([r["news"] for r in records])
    msgs = emb.encode([message_text(r) for r in records])
    digs = emb.encode([digest_text(r) for r in records])
    encode_s = time.perf_counter() - t0
    out = {"model": model, "name": emb.name, "records": len(records), "encode_seconds": round(encode_s, 1),
           "weights": {}}
    for w in weights:
        scores = {}
        for kind, items in pairs.items():
            vals = []
            for ti, mi, di in items:
                mix = (1 - w) * msgs[mi] + w * digs[di]
                norm = np.linalg.norm(mix)
                vals.append(float(news[ti] @ mix / norm) if norm else 0.0)
            scores[kind] = vals
        aligned = scores["aligned"]
        mis = scores["misaligned-easy"] + scores["misaligned-hard"]
        rng = random.Random(1)
        rng.shuffle(mis)
        res = {
            "auc": {k: round(auc(aligned, v), 3) for k, v in scores.items() if k != "aligned"},
            "median": {k: round(float(np.median(v)), 3) for k, v in scores.items()},
            "pr_hard": {t: pr_at(aligned, scores["misaligned-hard"], t) for t in THRESHOLDS},
            "pr_easy": {t: pr_at(aligned, scores["misaligned-easy"], t) for t in THRESHOLDS},
            "pr_mixed": {t: pr_at(aligned, mis, t) for t in THRESHOLDS},
            "pr_decoy": {t: pr_at(aligned, scores["decoy"], t) for t in THRESHOLDS},
        }
        out["weights"][w] = res
    return out


def threshold_for(res: dict) -> float:
    """The highest candidate threshold whose precision against same-repository misaligned pairs (the hard,
    realistic case) is >= PRECISION_TARGET and which blocks at most MAX_BLOCKED of the aligned pairs."""
    ok = [t for t in THRESHOLDS if res["pr_hard"][t][0] >= PRECISION_TARGET and res["pr_hard"][t][1] > 0
          and res["pr_hard"][t][2] <= MAX_BLOCKED]
    return max(ok) if ok else THRESHOLDS[0]


def choose(result: dict) -> dict:
    """Defaults from the data.

    Threshold (per digest weight): see threshold_for. A drift failure blocks a commit, so a flag must be
    right at least 9 times in 10 and honest changes must rarely be blocked; within that, the highest
    threshold catches the most drift.
    Digest weight: the one whose threshold catches the most of the two kinds of drift the check is for,
    the average recall on misaligned-hard and decoy pairs.
    Bands: the highest thresholds (up to the chosen one) where precision against all misaligned pairs
    reaches 0.99 (critical), 0.97 (high) and 0.95 (medium).
    """
    def value(w):
        res = result["weights"][w]
        t = threshold_for(res)
        return (res["pr_hard"][t][1] + res["pr_decoy"][t][1]) / 2

    best_w = max(result["weights"], key=value)
    res = result["weights"][best_w]
    threshold = threshold_for(res)

    def highest(target: float) -> float:
        mixed = res["pr_mixed"]
        good = [t for t in THRESHOLDS if t <= threshold and mixed[t][0] >= target and mixed[t][1] > 0]
        return max(good) if good else THRESHOLDS[0]

    critical, high, medium = highest(0.99), highest(0.97), highest(0.95)
    high = max(high, critical)
    medium = max(medium, high)
    t = threshold
    return {"digest_weight": best_w, "threshold": threshold, "critical_below": critical, "high_below": high,
            "medium_below": medium, "precision_hard": round(res["pr_hard"][t][0], 3),
            "recall_hard": round(res["pr_hard"][t][1], 3), "recall_decoy": round(res["pr_decoy"][t][1], 3),
            "recall_easy": round(res["pr_easy"][t][1], 3), "blocked": round(res["pr_hard"][t][2], 3)}


def markdown(results: list[dict], chosen: dict | None, n_records: int, pairs) -> str:
    lines = [START, "", f"Generated by `scripts/calibrate_drift.py` on {n_records} bug-fix records from 7 repositories "
             f"({', '.join(f'{len(v)} {k}' for k, v in pairs.items())} pairs). Precision/recall are for "
             "\"similarity < threshold\" as a detector of a misaligned pair, with aligned and misaligned pairs in "
             "equal numbers; *blocked* is the share of aligned (honest) pairs that would fail.", ""]
    for res in results:
        if "unavailable" in res:
            lines += [f"**{res['model']}**: not measured ({res['unavailable']}).", ""]
            continue
        lines += [f"**{res['model']}** (`{res['name']}`, {res['encode_seconds']} s to embed "
                  f"{3 * res['records']} texts)", "",
                  "| digest weight | AUC easy | AUC hard | AUC decoy | median aligned | median hard | median decoy |",
                  "|---|---|---|---|---|---|---|"]
        for w, r in res["weights"].items():
            a, m = r["auc"], r["median"]
            lines.append(f"| {w:.2f} | {a['misaligned-easy']:.3f} | {a['misaligned-hard']:.3f} | {a['decoy']:.3f} | "
                         f"{m['aligned']:.2f} | {m['misaligned-hard']:.2f} | {m['decoy']:.2f} |")
        w = chosen["digest_weight"] if chosen else 0.5
        w = w if w in res["weights"] else next(iter(res["weights"]))
        r = res["weights"][w]
        lines += ["", f"Thresholds at digest weight {w:.2f}:", "",
                  "| threshold | precision (hard) | recall (hard) | precision (easy) | recall (easy) | recall (decoy) "
                  "| aligned blocked |",
                  "|---|---|---|---|---|---|---|"]
        for t in THRESHOLDS:
            ph, rh, bh = r["pr_hard"][t]
            pe, re_, _ = r["pr_easy"][t]
            rd = r["pr_decoy"][t][1]
            lines.append(f"| {t:.2f} | {ph:.2f} | {rh:.2f} | {pe:.2f} | {re_:.2f} | {rd:.2f} | {bh:.1%} |")
        t = threshold_for(r)
        lines += ["", f"By the same rule, this model's threshold at digest weight {w:.2f} would be {t:.2f} "
                  f"(precision {r['pr_hard'][t][0]:.2f}, recall {r['pr_hard'][t][1]:.2f} same-repository, "
                  f"{r['pr_easy'][t][1]:.2f} other-repository, {r['pr_decoy'][t][1]:.2f} decoys; "
                  f"{r['pr_hard'][t][2]:.1%} of aligned pairs blocked)."]
        lines.append("")
    if chosen:
        lines += ["Chosen defaults (static model, the one that ships): "
                  f"`digest_weight = {chosen['digest_weight']}`, `threshold = {chosen['threshold']}`, bands "
                  f"critical < {chosen['critical_below']}, high < {chosen['high_below']}, "
                  f"medium < {chosen['medium_below']}, low up to the threshold. At that threshold: precision "
                  f"{chosen['precision_hard']:.2f} and recall {chosen['recall_hard']:.2f} on same-repository "
                  f"misaligned pairs, recall {chosen['recall_easy']:.2f} on other-repository ones, "
                  f"{chosen['recall_decoy']:.2f} on decoys, and {chosen['blocked']:.1%} of aligned pairs blocked.", ""]
    lines.append(END)
    return "\n".join(lines)


def write_doc(block: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", default=str(DEFAULT_SHARED), help="folder of fixrecords *.jsonl")
    ap.add_argument("--models", default="static,all-MiniLM-L6-v2")
    ap.add_argument("--limit", type=int, default=None, help="at most N records per repository")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write-docs", action="store_true", help="replace the calibration block of docs/intent.md")
    ap.add_argument("--json", metavar="FILE", help="also write the raw results as JSON")
    args = ap.parse_args(argv)
    folder = Path(args.records)
    if not folder.is_dir() or not any(folder.glob("*.jsonl")):
        print(f"calibrate_drift: skipped: no fix records at {folder} (evaluation data, not part of the project)")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    records = load_records(folder, args.limit, args.seed)
    pairs = build_pairs(records, args.seed)
    results = []
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        res = evaluate(model, records, pairs, WEIGHTS)
        results.append(res)
        if "unavailable" in res:
            print(f"{model}: unavailable: {res['unavailable']}")
            continue
        for w, r in res["weights"].items():
            print(f"{model} w={w:.2f} AUC {r['auc']} medians {r['median']}")
    chosen = choose(results[0]) if results and "unavailable" not in results[0] else None
    block = markdown(results, chosen, len(records), pairs)
    print(block)
    if chosen:
        print("chosen:", json.dumps(chosen))
    if args.write_docs:
        write_doc(block)
        print(f"wrote the calibration table to {DOC}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"results": results, "chosen": chosen}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
