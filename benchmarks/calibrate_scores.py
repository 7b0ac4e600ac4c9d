"""Fit the calibrated relevance model of memory search (sentinel/data/memory-calibration.json) and validate it on
projects left out of the fit.

The data are judgements written by `eval_retrieval.py time-split --judgements FILE`: for each later bug fix of a
real history (its news entry, else its PR title, as the query) every candidate the installed `sentinel memory
search` returned from the project's learned index, with the search features and the label *the card's fix touched
a source file the query's fix changed*. The fit pools the histories eval_retrieval.HISTORIES marks "tuned"; the
held-out histories are only scored. A logistic regression over the search features (ranking.FEATURES; the lexical
model without cosine) is fitted by Newton's method with a small L2 penalty, weights kept non-negative (a feature
that makes a hit less likely given the others is left out of the score rather than made a penalty). Printed, for
the fit and for the held-out projects: AUC, and precision and recall of the shown threshold (memory.min-score:
the share of shown hits that are relevant, and the share of relevant candidates shown), and reliability per score
bucket.

    python benchmarks/eval_retrieval.py time-split --judgements tuned.jsonl   [--only ... the tuned histories]
    python benchmarks/eval_retrieval.py time-split --judgements held.jsonl    [--only ... the held-out ones]
    python benchmarks/calibrate_scores.py --fit tuned.jsonl --validate held.jsonl [--threshold 0.35] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from sentinel.memory.retrieval.ranking import DEFAULT_MIN_SCORE, FEATURES  # noqa: E402

LABEL = "the card's fix touched a source file the query's fix changed"


def read_judgements(paths: list[str]) -> list[dict]:
    """Judgements of the project's own cards (the label says nothing about other projects' fixes)."""
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                j = json.loads(line)
                if j.get("source") == "project":
                    out.append(j)
    return out


def matrix(judgements: list[dict], names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray([[float(j["features"].get(f, 0.0)) for f in names] for j in judgements], dtype=np.float64)
    y = np.asarray([1.0 if j["label"] else 0.0 for j in judgements], dtype=np.float64)
    return X.reshape(len(judgements), len(names)), y


def fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 60) -> np.ndarray:
    """Logistic regression (intercept first) by Newton's method with step halving and an L2 penalty on the
    weights (not the intercept)."""
    A = np.hstack([np.ones((len(X), 1)), X])
    w = np.zeros(A.shape[1])
    reg = np.full(A.shape[1], l2)
    reg[0] = 0.0

    def loss(v: np.ndarray) -> float:
        z = A @ v
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(reg * v * v))

    current = loss(w)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(A @ w, -500, 500)))
        grad = A.T @ (p - y) + reg * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6 and loss(w - t * step) > current:
            t /= 2
        w = w - t * step
        current = loss(w)
        if np.abs(t * step).max() < 1e-8:
            break
    return w


def fit_non_negative(X: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict:
    keep = list(range(len(names)))
    while True:
        w = fit(X[:, keep], y)
        neg = [keep[i] for i, v in enumerate(w[1:]) if v < 0]
        if not neg:
            break
        keep = [i for i in keep if i not in neg]
    coef = {n: 0.0 for n in names}
    coef.update({names[i]: round(float(v), 4) for i, v in zip(keep, w[1:])})
    return {"intercept": round(float(w[0]), 4), "coef": coef, "samples": int(len(y)), "positives": int(y.sum())}


def probabilities(model: dict, X: np.ndarray, names: tuple[str, ...], curve: dict | None = None) -> np.ndarray:
    w = np.asarray([model["coef"].get(n, 0.0) for n in names])
    raw = 1 / (1 + np.exp(-(model["intercept"] + X @ w)))
    return np.interp(raw, curve["x"], curve["y"]) if curve else raw


def isotonic_curve(raw: np.ndarray, y: np.ndarray, per_bin: int = 100) -> dict:
    """A monotone map from the logistic model's output to the observed share of relevant candidates (isotonic
    regression by pool-adjacent-violators over bins of `per_bin` candidates, knots at each block's mean): the
    logistic model ranks, the curve makes its number mean what it says. Interpolated linearly between knots, so
    the order of candidates is kept between the first and the last knot."""
    order = np.argsort(raw, kind="mergesort")
    xs, ys = raw[order], y[order]
    bins = [(float(xs[i:i + per_bin].mean()), float(ys[i:i + per_bin].sum()), len(xs[i:i + per_bin]))
            for i in range(0, len(xs), per_bin)]
    blocks: list[list[float]] = []  # [sum of x * n, sum of y, n]
    for x, ysum, n in bins:
        blocks.append([x * n, ysum, n])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            b2, b1 = blocks.pop(), blocks.pop()
            blocks.append([b1[0] + b2[0], b1[1] + b2[1], b1[2] + b2[2]])
    return {"x": [round(b[0] / b[2], 4) for b in blocks], "y": [round(b[1] / b[2], 4) for b in blocks],
            "per_bin": per_bin}


def auc(p: np.ndarray, y: np.ndarray) -> float:
    """The probability that a random relevant candidate outscores a random irrelevant one (ties count half)."""
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    values = np.concatenate([pos, neg])[order]
    i = 0
    while i < len(values):  # average ranks of ties
        j = i
        while j + 1 < len(values) and values[j + 1] == values[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def at_threshold(p: np.ndarray, y: np.ndarray, t: float) -> dict:
    shown = p >= t
    tp = float((shown & (y == 1)).sum())
    return {"threshold": t, "shown": int(shown.sum()), "precision": round(tp / max(float(shown.sum()), 1.0), 3),
            "recall": round(tp / max(float((y == 1).sum()), 1.0), 3)}


def reliability(p: np.ndarray, y: np.ndarray) -> list[tuple[str, int, float, float]]:
    rows = []
    for lo in np.arange(0, 1, 0.1):
        sel = (p >= lo) & (p < lo + 0.1 + (1e-9 if lo >= 0.9 else 0))
        if sel.sum():
            rows.append((f"{lo:.1f}-{lo + 0.1:.1f}", int(sel.sum()), float(p[sel].mean()), float(y[sel].mean())))
    return rows


def report(label: str, model: dict, judgements: list[dict], names: tuple[str, ...], threshold: float,
           curve: dict | None = None) -> dict:
    X, y = matrix(judgements, names)
    p = probabilities(model, X, names, curve)
    by_history: dict[str, dict] = {}
    for h in sorted({j["history"] for j in judgements}):
        sel = np.asarray([j["history"] == h for j in judgements])
        by_history[h] = {"auc": round(auc(p[sel], y[sel]), 3), **at_threshold(p[sel], y[sel], threshold)}
    out = {"candidates": int(len(y)), "relevant": int(y.sum()), "auc": round(auc(p, y), 3),
           **at_threshold(p, y, threshold), "by_history": by_history}
    print(f"\n{label}: {len(y)} candidates, {int(y.sum())} relevant, AUC {out['auc']}, at {threshold}: precision "
          f"{out['precision']}, recall {out['recall']} ({out['shown']} shown)")
    for h, r in by_history.items():
        print(f"  {h}: AUC {r['auc']}, precision {r['precision']}, recall {r['recall']} ({r['shown']} shown)")
    print("  bucket    n     predicted  observed")
    for b, n, pm, ym in reliability(p, y):
        print(f"  {b}  {n:5d}  {pm:.3f}      {ym:.3f}")
    return out


def outside(cal: dict, data: str, threshold: float) -> dict:
    """The bundled model on bug reports of projects outside the bundle (benchmarks/data/outside_*.jsonl,
    judged by bundle_transfer.py): every judged (report, card) pair the shipped bundle still holds, scored by the
    installed search; relevant = the card transfers or is related. Printed per split."""
    from sentinel.config import Config
    from sentinel.memory.cards.index import load_index
    from sentinel.memory.retrieval.search import search

    queries = {q["id"]: q for q in map(json.loads, Path(data, "outside_queries.jsonl").read_text().splitlines())}
    verdicts = {}
    for j in map(json.loads, Path(data, "outside_judgements.jsonl").read_text().splitlines()):
        verdicts[(j["query"], j["card"])] = j["verdict"] in ("transfers", "related")
    index = load_index()
    rows = {"dev": ([], []), "held-out": ([], [])}
    for qid, q in queries.items():
        for h in search(q["query"], k=30, config=Config(), index=index, min_score=0.0):
            if (qid, h.id) in verdicts:
                rows[q["split"]][0].append(h.score)
                rows[q["split"]][1].append(1.0 if verdicts[(qid, h.id)] else 0.0)
    out = {}
    for split, (p, y) in rows.items():
        p, y = np.asarray(p), np.asarray(y)
        out[split] = {"pairs": int(len(y)), "relevant": int(y.sum()), "auc": round(auc(p, y), 3),
                      **at_threshold(p, y, threshold)}
        print(f"\nbundled model on outside reports ({split}): {out[split]}")
    return out


def hit_rates(model: dict, judgements: list[dict], names: tuple[str, ...], curve: dict | None) -> dict:
    """Per threshold: the share of queries with a relevant card among the (at most) three best shown, and the
    precision of what is shown — the project's cards only, ranked by score (the order `memory search` shows them
    in before it spreads them over files)."""
    X, y = matrix(judgements, names)
    p = probabilities(model, X, names, curve)
    by_query: dict = {}
    for j, pj, yj in zip(judgements, p, y):
        by_query.setdefault((j["history"], j["query"]), []).append((float(pj), float(yj)))
    out = {}
    for t in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
        hit = shown = rel = 0
        for cands in by_query.values():
            top = [c for c in sorted(cands, key=lambda c: -c[0]) if c[0] >= t][:3]
            hit += any(c[1] for c in top)
            shown += len(top)
            rel += sum(c[1] for c in top)
        out[str(t)] = {"hit@3": round(hit / max(len(by_query), 1), 3), "precision": round(rel / max(shown, 1), 3)}
    print(f"\nheld out, by threshold: {out}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", nargs="+", required=True, metavar="JSONL", help="judgements of the tuned histories")
    ap.add_argument("--validate", nargs="*", default=[], metavar="JSONL", help="judgements of held-out histories")
    ap.add_argument("--threshold", type=float, default=DEFAULT_MIN_SCORE)
    ap.add_argument("--out", default=str(ROOT / "sentinel" / "data" / "memory-calibration.json"))
    ap.add_argument("--dry-run", action="store_true", help="print, do not write the calibration")
    ap.add_argument("--outside", metavar="DIR", nargs="?", const=str(HERE / "data"),
                    help="validate the bundled model on the judged bug reports of projects outside the bundle "
                         "(outside_queries.jsonl + outside_judgements.jsonl; default benchmarks/data)")
    args = ap.parse_args()
    train = read_judgements(args.fit)
    held = read_judgements(args.validate)
    overlap = {j["history"] for j in train} & {j["history"] for j in held}
    if overlap:
        raise SystemExit(f"histories both fitted and validated on: {sorted(overlap)}")
    if not train:
        print("calibration skipped: no judgements of a project's own cards")
        return 0
    # The model of other projects' fixes (the bundled index) is kept as shipped: these judgements are of a project's
    # own cards; --outside validates it on bug reports of projects outside the bundle.
    current = json.loads(Path(args.out).read_text(encoding="utf-8")) if Path(args.out).is_file() else {}
    out = {k: v for k, v in current.items() if k in ("hybrid", "lexical", "fitted_on", "held_weights", "note")}
    project = {"label": LABEL, "fitted_on": sorted({j["history"] for j in train}),
               "validated_on": sorted({j["history"] for j in held}),
               "note": "fitted by benchmarks/calibrate_scores.py on time-split judgements of the tuned histories"}
    for mode, names in (("hybrid", FEATURES), ("lexical", tuple(f for f in FEATURES if f != "cosine"))):
        X, y = matrix(train, names)
        project[mode] = fit_non_negative(X, y, names)
        print(f"\nproject {mode}: {project[mode]}")
    for mode, names in (("hybrid", FEATURES), ("lexical", tuple(f for f in FEATURES if f != "cosine"))):
        X, y = matrix(train, names)
        project[mode]["curve"] = isotonic_curve(probabilities(project[mode], X, names), y)
    curve = project["hybrid"]["curve"]
    print(f"\nproject hybrid curve: {list(zip(curve['x'], curve['y']))}")
    project["fit"] = report("fit (tuned histories)", project["hybrid"], train, FEATURES, args.threshold, curve)
    if held:
        project["validation"] = report("validation (held-out histories)", project["hybrid"], held, FEATURES,
                                       args.threshold, curve)
        project["hit_rate"] = hit_rates(project["hybrid"], held, FEATURES, curve)
    out["project"] = project
    out["label"] = LABEL
    if args.outside and out.get("hybrid"):
        out["outside"] = outside(out, args.outside, args.threshold)
    if not args.dry_run:
        Path(args.out).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
