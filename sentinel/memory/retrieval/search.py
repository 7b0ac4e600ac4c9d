"""Memory search: a query's signals -> the candidates of each index -> calibrated ranking -> hits.

`search` runs one index (the bundled one unless told otherwise); `search_memory` runs the project's learned
index and the bundled one and merges their hits by score (scores are calibrated, so they compare across
indexes). `show` and `stats` browse. A small index is searched in pure Python (sentinel.memory.retrieval.small:
no numpy import on the hook path), a large one with numpy (sentinel.memory.retrieval.dense); both produce the
same candidates and features, which the one ranking stage (sentinel.memory.retrieval.ranking) scores.
"""

from __future__ import annotations

from sentinel.memory.cards.index import learned_index, load_index
from sentinel.memory.retrieval.hits import SearchResults

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

    from sentinel.memory.cards.index import MemoryIndex

# Tests and benchmarks set this to compare the dense scorer with the small one on the same index.
FORCE_DENSE = False


def search(query: str, k: int = 10, language: str | None = None, tag: str | None = None,
           rule: str | None = None, *, config: Any = None, index: MemoryIndex | None = None,
           root: str | None = None, candidates: int | None = None, exact: bool = False,
           min_score: float | None = None, signals: Any = None) -> SearchResults:
    """Search over the index layer, scored by the calibrated model; filters narrow the cards before scoring.

    min_score: hits below it are dropped (None: the configured threshold of the index's model,
    ranking.min_score_for; 0 shows every candidate). signals: the query's exact signals (QuerySignals); inferred from the text when None.
    Without a usable vector model the search is lexical only and says so (results.mode, results.note).
    """
    from sentinel.memory.retrieval import ranking, small

    idx = index if index is not None else load_index(root=root)
    mem_cfg = getattr(config, "memory", None)
    if min_score is None:
        min_score = ranking.min_score_for(idx, config)
    w_e = float(getattr(mem_cfg, "embedding_weight", 0.5))
    k = max(1, int(k))
    cands = None
    if small.is_small(idx) and not FORCE_DENSE:
        try:
            cands = small.candidates(idx, query, k, language, tag, rule, config=config, candidates=candidates,
                                     w_e=w_e, signals=signals)
        except small.NeedsDense:
            pass
    if cands is None:
        from sentinel.memory.retrieval import dense

        cands = dense.candidates(idx, query, k, language, tag, rule, config=config, candidates=candidates,
                                 exact=exact, w_e=w_e, signals=signals)
    return ranking.rank(idx, cands, k, min_score)


def search_memory(query: str, k: int = 10, *, config: Any = None, root: str | None = None,
                  index: MemoryIndex | None = None, project_first: bool = True, **kwargs: Any) -> SearchResults:
    """Search the project's learned cards and the bundled index (or `index`) together.

    Both clear the same threshold; the project's own hits come first (its history is where its bugs were fixed:
    another project's fix is judged by a looser label, "related", and fills the slots the project leaves free);
    project_first=False merges the two by score alone."""
    base = search(query, k=k, config=config, index=index if index is not None else load_index(root=root),
                  **kwargs)
    project = learned_index(root, config) if root else None
    if project is None:
        return base
    mine = search(query, k=k, config=config, index=project, **kwargs)
    key = (lambda h: (h.source != "project", -h.score)) if project_first else (lambda h: -h.score)
    seen: set[str] = set()
    merged = []
    for h in sorted([*mine, *base], key=key):
        if h.id not in seen:
            seen.add(h.id)
            merged.append(h)
    note = base.note or mine.note
    if merged and note and "no similar past fix" in note:
        note = None
    return SearchResults(merged[:k], mode=base.mode if base.mode == mine.mode else "mixed", note=note,
                         model=base.model, candidates=base.candidates + mine.candidates, min_score=base.min_score,
                         signals=base.signals, below_threshold=base.below_threshold + mine.below_threshold,
                         project_min_score=mine.min_score)


def show(card_id: str, *, index: MemoryIndex | None = None, root: str | None = None) -> dict | None:
    """The whole card (index + resolution layer, provenance, quality), or None."""
    idx = index if index is not None else load_index(root=root)
    row = idx.row_of(card_id)
    return None if row is None else idx.card(row)


def stats(*, index: MemoryIndex | None = None, root: str | None = None) -> dict:
    idx = index if index is not None else load_index(root=root)
    meta = idx.meta
    return {
        "path": str(idx.path), "count": idx.count, "by_source": meta.get("by_source", {}),
        "by_language": meta.get("by_language", {}), "model": meta.get("model"), "dim": meta.get("dim"),
        "built_at": meta.get("built_at"), "vocab_size": meta.get("vocab_size"), "digest": meta.get("digest"),
        "sources": meta.get("sources", []),
    }
