"""Absolute, calibrated relevance scores for memory search.

A search hit's `score` is an estimate of the probability that the card's fix is relevant to the query — the same
scale for every query and every index, so a threshold means something ("no similar past fix" beats noise) and
hits from the bundled index and a project's learned index can be merged by score.

The score is a logistic model over features that do not depend on the other hits of the query:

    cosine       raw cosine of query and card vectors (absent in lexical mode: the lexical model is used)
    coverage     BM25 of the card / the BM25 the query could reach at most in this index (each query term's best
                 posting weight), in [0, 1]: how much of what the query says the card says too
    identifiers  query identifiers (functions, classes, options, quoted names) the card carries exactly, capped
    exception    1 when an exception type of the query is one of the card's
    mechanism    1 when a mechanism inferred from the query is one of the card's
    area         how much of what the query names (through the project's code map: names -> the files defining
                 them, each name weighed by its specificity) lands on the files the card's fix touched (learned
                 indexes only; sentinel.memory.cards.codemap and retrieval.small.area_rows), in [0, 1]; 1 for a
                 query placed in a file the card's fix touched (a failing finding, retrieval.site)
    heat         the share of the project's fixes that touched the card's most-fixed file (learned indexes only):
                 the prior of a project's own history, which a query that says little falls back on

The coefficients are fitted by `benchmarks/calibrate_scores.py` on fix records of the repositories we tune on
(never those we evaluate on) and ship in sentinel/data/memory-calibration.json; the file records what it was
fitted on. Relevance there means what the evaluation means: the card's fix touched a source file that the
query's fix changed.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from sentinel.record import Record

CALIBRATION_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "memory-calibration.json"
FEATURES = ("cosine", "coverage", "identifiers", "exception", "mechanism", "area", "heat")
IDENT_CAP = 3
# Used only when the shipped calibration file is missing (a broken install): a conservative hand-set model.
_FALLBACK = {
    "hybrid": {"intercept": -6.0, "coef": {"cosine": 6.0, "coverage": 4.0, "identifiers": 0.8, "exception": 0.6,
                                           "mechanism": 0.5, "area": 1.0}},
    "lexical": {"intercept": -4.0, "coef": {"coverage": 5.0, "identifiers": 0.8, "exception": 0.6,
                                            "mechanism": 0.5, "area": 1.0}},
    "fitted_on": [], "note": "fallback coefficients (calibration file missing)",
}
DEFAULT_MIN_SCORE = 0.35


class Calibration(Record, frozen=True):
    """The shipped models: `hybrid`/`lexical` for indexes of other projects' fixes (the bundled index, imported
    corpora), `project` ({"hybrid", "lexical"}) for a project's own learned index, whose cards carry where they were
    fixed (area, heat) — the same label, fitted on different evidence."""

    hybrid: dict
    lexical: dict
    fitted_on: tuple[str, ...] = ()
    note: str = ""
    project: dict | None = None

    def probabilities(self, feats: dict[str, list[float]], lexical: bool, project: bool = False) -> list[float]:
        """The calibrated probability of each candidate: the logistic model over its features."""
        models = self.project if project and self.project else {"hybrid": self.hybrid, "lexical": self.lexical}
        model = models["lexical" if lexical else "hybrid"]
        z = [float(model["intercept"])] * len(next(iter(feats.values())))
        for name, w in model["coef"].items():
            if name in feats:
                w = float(w)
                z = [a + w * b for a, b in zip(z, feats[name])]
        # exp(-z) overflows a float below z = -709: the probability is 0 there, as numpy's inf gives
        return [1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0 for v in z]


@lru_cache(maxsize=4)
def load_calibration(path: str | None = None) -> Calibration:
    file = Path(path) if path else CALIBRATION_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = _FALLBACK
    return Calibration(hybrid=data["hybrid"], lexical=data["lexical"], fitted_on=tuple(data.get("fitted_on", [])),
                       note=data.get("note", ""), project=data.get("project"))


def rank(idx, cands, k: int, min_score: float):
    """Score one index's candidates with the calibrated model and keep the k best at or above min_score (ties:
    the lower row first) as hits; says how many fell below the threshold."""
    from sentinel.memory.retrieval.hits import SearchResults, previews

    if not cands.rows:
        return SearchResults([], mode=cands.mode, note=cands.note, model=cands.model, min_score=min_score,
                             signals=cands.signals)
    n = len(cands.rows)
    project = bool(getattr(idx, "has_heat", False))
    score = load_calibration().probabilities(cands.features, lexical=cands.cosine is None, project=project)
    keep = [j for j in range(n) if score[j] >= min_score] if min_score > 0 else list(range(n))
    below = n - len(keep)
    order = sorted(keep, key=lambda j: (-score[j], cands.rows[j]))
    order = spread(idx, cands, score, order, k) if getattr(idx, "has_heat", False) else order[:k]
    out = previews(idx, cands, score, order)
    note = cands.note
    if not out and below:
        extra = f"no similar past fix: {below} candidate(s) scored below the threshold {min_score:g}"
        note = f"{note}; {extra}" if note else extra
    return SearchResults(out, mode=cands.mode, note=note, model=cands.model, candidates=n, min_score=min_score,
                         signals=cands.signals, below_threshold=below)


COVERED = 0.5  # a hit whose every file an earlier hit already covers ranks as if half as likely


def spread(idx, cands, score: list[float], order: list[int], k: int) -> list[int]:
    """The k hits of a project's index, spread over its files: each next hit is the best by score, a hit whose
    every file an earlier one already touched counting as half as likely. Which past fix is relevant is uncertain;
    k fixes of one file are right or wrong together, k fixes of different files hedge. Scores are not changed."""
    head = order[: max(3 * k, 10)]
    if len(head) <= 1:
        return head[:k]
    cards = idx.cards([cands.rows[j] for j in head])
    files = {j: set(card.get("tags", {}).get("files", ())) for j, card in zip(head, cards)}
    picked: list[int] = []
    covered: set[str] = set()
    rest = list(head)
    while rest and len(picked) < k:
        best = max(rest, key=lambda j: (score[j] * (COVERED if files[j] and files[j] <= covered else 1.0),
                                        -rest.index(j)))
        rest.remove(best)
        picked.append(best)
        covered |= files[best]
    return picked
