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

import bisect
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
DEFAULT_PROJECT_MIN_SCORE = 0.25


def min_score_for(idx, config) -> float:
    """The configured threshold of the model that scores `idx`: memory.project-min-score for a project's own
    learned index (it carries where its fixes were made), memory.min-score for other projects' fixes."""
    mem = getattr(config, "memory", None)
    if getattr(idx, "has_heat", False):
        return float(getattr(mem, "project_min_score", DEFAULT_PROJECT_MIN_SCORE))
    return float(getattr(mem, "min_score", DEFAULT_MIN_SCORE))


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
        return self.scored(feats, lexical, project)[0]

    def scored(self, feats: dict[str, list[float]], lexical: bool,
               project: bool = False) -> tuple[list[float], list[float]]:
        """(calibrated probabilities, the logistic model's raw ones): a model may carry an isotonic `curve` that
        maps its raw output to the observed share of relevant candidates; the raw value orders what the curve
        ties (beyond its end knots)."""
        models = self.project if project and self.project else {"hybrid": self.hybrid, "lexical": self.lexical}
        model = models["lexical" if lexical else "hybrid"]
        raw = self._logistic(model, feats)
        curve = model.get("curve")
        return ([_interp(v, curve["x"], curve["y"]) for v in raw] if curve else raw), raw

    @staticmethod
    def _logistic(model: dict, feats: dict[str, list[float]]) -> list[float]:
        z = [float(model["intercept"])] * len(next(iter(feats.values())))
        for name, w in model["coef"].items():
            if name in feats:
                w = float(w)
                z = [a + w * b for a, b in zip(z, feats[name])]
        # exp(-z) overflows a float below z = -709: the probability is 0 there, as numpy's inf gives
        return [1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0 for v in z]


def _interp(v: float, xs: list[float], ys: list[float]) -> float:
    """numpy.interp of one value: linear between knots, the end values beyond them."""
    if v <= xs[0]:
        return ys[0]
    if v >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, v)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (v - x0) / (x1 - x0) if x1 > x0 else y1


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
    score, raw = load_calibration().scored(cands.features, lexical=cands.cosine is None, project=project)
    keep = [j for j in range(n) if score[j] >= min_score] if min_score > 0 else list(range(n))
    if project and min_score > 0:
        keep = [j for j in keep if _about_the_query(cands.features, j)]
    below = n - len(keep)
    order = sorted(keep, key=lambda j: (-score[j], -raw[j], cands.rows[j]))
    order = spread(idx, cands, score, order, k) if getattr(idx, "has_heat", False) else order[:k]
    out = previews(idx, cands, score, order)
    note = cands.note
    if not out and below:
        extra = f"no similar past fix: {below} candidate(s) scored below the threshold {min_score:g}"
        note = f"{note}; {extra}" if note else extra
    return SearchResults(out, mode=cands.mode, note=note, model=cands.model, candidates=n, min_score=min_score,
                         signals=cands.signals, below_threshold=below)


SHARED_WORDS_COSINE = 0.25  # shared words alone are evidence when the meaning is close too


def _about_the_query(feats: dict, j: int) -> bool:
    """A project's card is shown only with evidence that it is about the query — an identifier or a code area it
    shares, or shared words with a close meaning — not on the strength of its file's fix history (heat) alone:
    the prior orders what the query reaches, it does not answer a query that says nothing about the project
    ("kubernetes helm chart values" and a cart fix sharing the word "values")."""
    if feats.get("identifiers", [0.0] * (j + 1))[j] > 0 or ("area" in feats and feats["area"][j] > 0):
        return True
    if feats.get("coverage", [0.0] * (j + 1))[j] <= 0:
        return False
    return "cosine" not in feats or feats["cosine"][j] >= SHARED_WORDS_COSINE


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
