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
                 indexes only; sentinel.memory.codemap and index._area_rows), in [0, 1]

The coefficients are fitted by `benchmarks/calibrate_scores.py` on fix records of the repositories we tune on
(never those we evaluate on) and ship in sentinel/data/memory-calibration.json; the file records what it was
fitted on. Relevance there means what the evaluation means: the card's fix touched a source file that the
query's fix changed.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from sentinel.record import Record, factory

CALIBRATION_FILE = Path(__file__).resolve().parent.parent / "data" / "memory-calibration.json"
FEATURES = ("cosine", "coverage", "identifiers", "exception", "mechanism", "area")
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

_EXC_RE = re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Za-z]\w*?(?:error|exception|warning|exit|interrupt))\b",
                     re.IGNORECASE)
_NOT_EXC = frozenset({"error", "exception", "warning", "exit", "interrupt", "anyerror", "noerror", "terror",
                      "mirror", "errors"})


class QuerySignals(Record):
    """What a query says exactly: identifiers, exception types and the mechanisms it points at."""

    identifiers: list[str] = factory(list)
    exceptions: list[str] = factory(list)
    mechanisms: list[str] = factory(list)

    def to_json(self) -> dict:
        return {"identifiers": self.identifiers, "exceptions": self.exceptions, "mechanisms": self.mechanisms}


def exception_names(text: str) -> list[str]:
    """Exception type names in text, case-insensitively (`keyerror`, `KeyError`, `http.cookies.CookieError`)."""
    out: list[str] = []
    for m in _EXC_RE.finditer(text):
        name = m.group(1).rsplit(".", 1)[-1]
        if name.lower() in _NOT_EXC or len(name) < 6:
            continue
        if name.lower() not in {o.lower() for o in out}:
            out.append(name)
    return out


def query_signals(text: str, extra_identifiers: list[str] | None = None,
                  exceptions: list[str] | None = None) -> QuerySignals:
    from sentinel.memory import identifiers, taxonomy

    excs = list(dict.fromkeys([*(exceptions or []), *exception_names(text)]))
    idents = identifiers.from_text(text) + list(extra_identifiers or [])
    # an exception name is an exception signal, not an identifier signal
    exc_low = {e.lower() for e in excs}
    idents = [i for i in identifiers.normalise(idents) if i not in exc_low]
    mechs = taxonomy.infer(text, exceptions=excs, limit=3)
    return QuerySignals(identifiers=idents[:20], exceptions=excs[:6], mechanisms=mechs)


class Calibration(Record, frozen=True):
    hybrid: dict
    lexical: dict
    fitted_on: tuple[str, ...] = ()
    note: str = ""

    def probability(self, feats: dict, lexical: bool) -> "np.ndarray":  # noqa: F821
        import numpy as np

        model = self.lexical if lexical else self.hybrid
        z = np.full(len(next(iter(feats.values()))), float(model["intercept"]), dtype=np.float64)
        for name, w in model["coef"].items():
            if name in feats:
                z += float(w) * np.asarray(feats[name], dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-z))

    def probabilities(self, feats: dict[str, list[float]], lexical: bool) -> list[float]:
        """probability() over lists, without numpy (the small scorer): the same sums in the same order."""
        model = self.lexical if lexical else self.hybrid
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
                       note=data.get("note", ""))
