"""Fit the calibrated relevance model of memory search (sentinel/data/memory-calibration.json).

Training data comes only from the repositories we tune on (eval_retrieval.TUNED): their fix records in
../shared/fixrecords, each split in time (cards from the earlier 80%, queries = the news fragments of the later
20%), and, when given, time splits of their real git histories (--history DIR NAME SINCE UNTIL). For each query
the 30 best candidates of the search are labelled relevant when the card's fix touched a source file that the
query's fix changed — the same rule the evaluation uses — and a logistic regression over the search features
(scoring.FEATURES; the lexical model without cosine) is fitted by Newton's method with a small L2 penalty.
Reliability (predicted vs observed relevance per score bucket) is printed for the training data; the
evaluation repositories are never used here.

    python benchmarks/calibrate_scores.py [--shared ../shared] \
        [--history /tmp/pt pytest-dev/pytest 2016-01-01 2022-01-01] [--hold-weights OLD.json]

--hold-weights keeps the weights and intercept of an earlier calibration and fits only the features it lacks on
top of them: how the code-map feature `area` was added, so every index without a code map (the
bundled one) ranks exactly as before.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import eval_retrieval as ev  # noqa: E402

from sentinel.memory.retrieval.ranking import FEATURES  # noqa: E402


def collect(index, queries, files_of_card, lexical: bool, k: int = 30):
    from sentinel.config import Config, validate
    from sentinel.memory.retrieval.search import search, show

    cfg = validate({"memory": {"embedding-weight": 0}}, "t") if lexical else Config()
    X, y = [], []
    for q in queries:
        for h in search(q["query"], k=k, config=cfg, index=index, min_score=0.0):
            X.append([h.features.get(f, 0.0) for f in FEATURES])
            y.append(1.0 if files_of_card(show(h.id, index=index)) & q["files"] else 0.0)
    return X, y


def fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50,
        offset: np.ndarray | None = None, intercept: float | None = 0.0) -> np.ndarray:
    """Logistic regression (intercept first) by Newton's method with an L2 penalty on the weights; offset: a
    fixed part of each sample's log-odds (the features whose weights are held). intercept: its starting value,
    or None to hold it at 0 (an offset then carries the held intercept); the result still starts with it."""
    A = np.hstack([np.ones((len(X), 1)), X]) if intercept is not None else X
    w = np.zeros(A.shape[1])
    reg = np.full(A.shape[1], l2)
    if intercept is not None:
        w[0] = intercept
        reg[0] = 0.0
    off = np.zeros(len(X)) if offset is None else offset

    def loss(v: np.ndarray) -> float:
        z = A @ v + off
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(reg * v * v))

    current = loss(w)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(A @ w + off, -500, 500)))
        grad = A.T @ (p - y) + reg * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        # Newton with step halving: far from the optimum a full step can overshoot and diverge
        t = 1.0
        while t > 1e-6 and loss(w - t * step) > current:
            t /= 2
        w = w - t * step
        current = loss(w)
        if np.abs(t * step).max() < 1e-8:
            break
    return w if intercept is not None else np.concatenate([[0.0], w])


def reliability(X, y, w) -> list[tuple[str, int, float, float]]:
    A = np.hstack([np.ones((len(X), 1)), X])
    p = 1 / (1 + np.exp(-(A @ w)))
    rows = []
    for lo in np.arange(0, 1, 0.1):
        sel = (p >= lo) & (p < lo + 0.1)
        if sel.sum():
            rows.append((f"{lo:.1f}-{lo + 0.1:.1f}", int(sel.sum()), float(p[sel].mean()), float(y[sel].mean())))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--history", nargs=4, action="append", metavar=("DIR", "NAME", "SINCE", "UNTIL"), default=[])
    ap.add_argument("--out", default=str(ROOT / "sentinel" / "data" / "memory-calibration.json"))
    ap.add_argument("--hold-weights", metavar="FILE",
                    help="a calibration whose weights and intercept are kept: only features it lacks "
                         "are fitted, on top of them, so adding a feature leaves every existing ranking as it was")
    args = ap.parse_args()
    shared = Path(args.shared)
    if not (shared / "fixrecords").is_dir():
        print(f"calibration skipped: {shared / 'fixrecords'} not found")
        return 0
    data = {"hybrid": ([], []), "lexical": ([], [])}
    fitted_on = []
    by_repo = ev.read_records(shared)
    with tempfile.TemporaryDirectory() as tmp:
        sets = []
        for repo in ev.TUNED:
            earlier, later = ev.record_split(by_repo[repo])
            files = {r["sha"]: {ev.norm_path(p) for p in r.get("source_files") or []} for r in earlier}
            sets.append((f"fixrecords:{repo}", ev.governed_cards(earlier, repo), ev.record_queries(later), files))
        for root, name, since, until in args.history:
            if name not in ev.TUNED:
                raise SystemExit(f"{name} is not a tuning repository ({', '.join(ev.TUNED)})")
            before, files, res, queries, _, cmap = ev.history_split(root, name, until, since)
            sets.append((f"history:{name}:{since}..{until}", res.cards, queries, files, cmap))
        for label, cards, queries, files, *rest in sets:
            def files_of_card(card, files=files):
                return set().union(*(files.get(s, set()) for s in ev.card_commits(card)))

            for mode in ("hybrid", "lexical"):
                index = ev.build(cards, Path(tmp) / f"{len(fitted_on)}-{mode}", lexical=(mode == "lexical"),
                                 codemap=rest[0] if rest else None)
                X, y = collect(index, queries, files_of_card, lexical=(mode == "lexical"))
                data[mode][0].extend(X)
                data[mode][1].extend(y)
            fitted_on.append(f"{label} ({len(cards)} cards, {len(queries)} queries)")
            print(f"collected {label}: {len(cards)} cards, {len(queries)} queries", flush=True)
    out = {"fitted_on": fitted_on, "label": "the card's fix touched a source file the query's fix changed",
           "note": "fitted by benchmarks/calibrate_scores.py; evaluation repositories never used"}
    held = json.loads(Path(args.hold_weights).read_text(encoding="utf-8")) if args.hold_weights else None
    if held:
        out["held_weights"] = "weights and intercept of the earlier calibration kept; fitted on top: " + ", ".join(
            n for n in FEATURES if n not in held["hybrid"]["coef"])
    for mode, (X, y) in data.items():
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        names = FEATURES if mode == "hybrid" else FEATURES[1:]
        if mode == "lexical":
            X = X[:, 1:]
        old = held[mode]["coef"] if held else {}
        fixed = [i for i, n in enumerate(names) if n in old]
        # held: the old intercept too, so an index without the new feature (the bundled one: no code map)
        # scores exactly as before — absent is not the same as zero evidence
        offset = (X[:, fixed] @ np.asarray([float(old[names[i]]) for i in fixed]) + float(held[mode]["intercept"])
                  if held else None)
        # Non-negative weights: a feature that makes a hit *less* likely given the others (exception and
        # mechanism matches do, on this file-locality label: they find fixes of the same mistake elsewhere) is
        # left out of the score rather than made a penalty; it still explains hits (`matched`).
        keep = [i for i in range(len(names)) if i not in fixed]
        while True:
            w = fit(X[:, keep], y, offset=offset, intercept=None if held else 0.0)
            neg = [keep[i] for i, v in enumerate(w[1:]) if v < 0]
            if not neg:
                break
            keep = [i for i in keep if i not in neg]
        coef = {n: 0.0 for n in names}
        coef.update({names[i]: float(old[names[i]]) for i in fixed})
        coef.update({names[i]: round(float(v), 4) for i, v in zip(keep, w[1:])})
        intercept = float(held[mode]["intercept"]) if held else round(float(w[0]), 4)
        out[mode] = {"intercept": intercept, "coef": coef, "samples": int(len(y)),
                     "positives": int(y.sum())}
        w = np.asarray([intercept, *(coef[n] for n in names)])
        print(f"\n{mode}: {out[mode]}")
        print("  bucket   n   predicted  observed")
        for b, n, pm, ym in reliability(X, y, w):
            print(f"  {b}  {n:5d}  {pm:.3f}  {ym:.3f}")
    Path(args.out).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
