"""What flows between the stages of a search and what it returns: the candidates of one index with their
features (Candidates: what the small and the dense scorer produce), and the hits (Preview, SearchResults) the
ranking stage makes of them — where a card comes from, its signals worth showing. Imports no numpy."""

from __future__ import annotations

from functools import lru_cache

from sentinel.memory.cards.text import tokenize
from sentinel.record import Record, factory

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

PROJECT_SOURCES = frozenset({"learned", "imported"})


class Candidates(Record):
    """The cards a query reaches in one index (rows ascending) with, by position, the features the calibrated
    model scores, the raw BM25 and cosine, and the exact signals each one matched; mode/note/model say how the
    search ran (a note when it was degraded or found nothing)."""

    rows: list[int] = factory(list)
    features: dict = factory(dict)
    bm25: list[float] = factory(list)
    cosine: list[float] | None = None
    matched: dict = factory(dict)
    terms: list[str] = factory(list)
    signals: Any = None
    mode: str = "hybrid"
    note: str | None = None
    model: str | None = None

    @classmethod
    def empty(cls, mode: str, note: str | None, model: str | None, signals: Any) -> Candidates:
        return cls(mode=mode, note=note, model=model, signals=signals)


class Preview(Record):
    """One search hit: enough to decide whether to browse the card.

    score: calibrated relevance in [0, 1] (absolute: comparable across queries and indexes); cosine and bm25 are
    the raw signals; source is "project" for cards learned from or imported into this project, else "bundled";
    provenance says where the fix comes from; matched lists the query's exact signals the card carries."""

    id: str
    score: float
    problem_summary: str
    top_signals: list[str]
    cosine: float | None = None
    bm25: float = 0.0
    language: str = ""
    source: str = "bundled"
    provenance: dict = factory(dict)
    matched: dict = factory(dict)
    coverage: float = 0.0
    features: dict = factory(dict)  # the calibrated model's inputs, for explanation and fitting

    def to_json(self) -> dict:
        return {name: _copy(getattr(self, name)) for name in self._fields}


def _copy(value):
    """A JSON-shaped value with its containers copied (as dataclasses.asdict copied them)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


class SearchResults(list):
    """list[Preview] plus how it was produced: mode 'hybrid' or 'lexical', a note when degraded or empty, the
    threshold applied and the query's exact signals."""

    def __init__(self, items=(), mode: str = "hybrid", note: str | None = None, model: str | None = None,
                 candidates: int = 0, min_score: float = 0.0, signals: Any = None, below_threshold: int = 0,
                 project_min_score: float | None = None):
        super().__init__(items)
        # the threshold of the project's own hits, when they were searched too (their model's, see ranking)
        self.project_min_score = project_min_score
        self.mode = mode
        self.note = note
        self.model = model
        self.candidates = candidates
        self.min_score = min_score
        self.signals = signals
        self.below_threshold = below_threshold

    def to_json(self) -> dict:
        return {"mode": self.mode, "note": self.note, "model": self.model, "min_score": self.min_score,
                "project_min_score": self.project_min_score, "below_threshold": self.below_threshold,
                "signals": self.signals.to_json() if self.signals is not None else None,
                "results": [p.to_json() for p in self]}


@lru_cache(maxsize=65536)
def terms_of(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def top_signals(signals: list[str], query_terms: set[str], n: int = 4) -> list[str]:
    """The card's signals that share the most terms with the query (ties keep the card's order)."""
    overlaps = [len(terms_of(s) & query_terms) for s in signals]
    ranked = sorted(range(len(signals)), key=lambda i: (-overlaps[i], i))
    return [signals[i] for i in ranked[:n]]


def query_embedder(index: Any, config: Any) -> tuple[Any, str | None]:
    """The embedder for a query, or (None, why not)."""
    if not index.has_vectors:
        return None, "the index has no vectors (built without an embedder)"
    from sentinel.embeddings import EmbedderUnavailable, get_embedder

    try:
        emb = get_embedder(getattr(config, "embeddings", None))
    except EmbedderUnavailable as exc:
        return None, f"embedder unavailable: {exc.reason}; fix: {exc.fix}"
    if emb.name != index.meta.get("model"):
        return None, (f"configured embedder {emb.name} differs from the index's {index.meta.get('model')} "
                      "(run: sentinel memory build-index)")
    return emb, None


def provenance_of(card: dict) -> dict:
    prov = card.get("provenance", {})
    refs = prov.get("references") or []
    return {k: v for k, v in (("kind", prov.get("source")), ("repository", prov.get("repository")),
                              ("commit", prov.get("commit")), ("record_id", prov.get("record_id")),
                              ("date", prov.get("date")), ("url", prov.get("url") or (refs[0] if refs else None)))
            if v}


def source_of(card: dict) -> str:
    return "project" if card.get("provenance", {}).get("source") in PROJECT_SOURCES else "bundled"


def previews(idx: Any, cands: Candidates, score: list[float], order: list[int]) -> list[Preview]:
    """The hits at the candidate positions `order`, each read from the index once."""
    qterms = set(cands.terms)
    c_cos = cands.cosine
    out = []
    for j, card in zip(order, idx.cards([cands.rows[j] for j in order])):
        out.append(Preview(
            id=card["id"], score=round(score[j], 4), problem_summary=card["problem_summary"],
            top_signals=top_signals(card.get("signals", []), qterms),
            cosine=None if c_cos is None else round(c_cos[j], 4), bm25=round(cands.bm25[j], 4),
            language=card.get("tags", {}).get("language", ""), source=source_of(card),
            provenance=provenance_of(card), matched=cands.matched.get(j, {}),
            coverage=round(cands.features["coverage"][j], 4),
            features={name: round(v[j], 4) for name, v in cands.features.items()}))
    return out
