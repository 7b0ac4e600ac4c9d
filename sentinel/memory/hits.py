"""What a memory search returns (Preview, SearchResults) and the parts of a search shared by the dense
(numpy) and the small (pure Python) scorers: where a card comes from, its signals worth showing, and the
embedder a query uses. Imports no numpy."""

from __future__ import annotations

from functools import lru_cache

from sentinel.memory.text import tokenize
from sentinel.record import Record, factory

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

PROJECT_SOURCES = frozenset({"learned", "imported"})


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
                 candidates: int = 0, min_score: float = 0.0, signals: Any = None, below_threshold: int = 0):
        super().__init__(items)
        self.mode = mode
        self.note = note
        self.model = model
        self.candidates = candidates
        self.min_score = min_score
        self.signals = signals
        self.below_threshold = below_threshold

    def to_json(self) -> dict:
        return {"mode": self.mode, "note": self.note, "model": self.model, "min_score": self.min_score,
                "below_threshold": self.below_threshold,
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
