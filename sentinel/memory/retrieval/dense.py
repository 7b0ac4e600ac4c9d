"""Candidates and features of a search with numpy: every card's BM25 and cosine as arrays (large indexes: a
coarse scan of the head dimensions first). Used above SMALL_MAX_CARDS, and for models without a pure single-text
encoder; gives the same candidates and features as sentinel.memory.retrieval.small."""

from __future__ import annotations

from sentinel.memory.cards.index import _top
from sentinel.memory.cards.text import tokenize
from sentinel.memory.retrieval.hits import Candidates, query_embedder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from sentinel.memory.cards.index import MemoryIndex


def _sorted_union(*arrays: np.ndarray) -> np.ndarray:
    """np.union1d of a few small index arrays, without np.unique: its first call imports numpy.ma
    (~10 ms of every failing hook run that recalls)."""
    import numpy as np

    out: set[int] = set()
    for a in arrays:
        out.update(a.tolist())
    return np.fromiter(sorted(out), dtype=np.int64, count=len(out))


def _exact_pool(idx: MemoryIndex, signals, allowed: np.ndarray | None, limit: int) -> np.ndarray:
    import numpy as np

    from sentinel.memory.retrieval.small import identifier_rows

    rows = [np.asarray(r, dtype=np.int64) for r in identifier_rows(idx, signals)]
    if not rows:
        return np.zeros(0, dtype=np.int64)
    pool = _sorted_union(*rows)
    if allowed is not None:
        pool = np.intersect1d(pool, allowed, assume_unique=True)
    return pool[:limit]


def candidates(idx: MemoryIndex, query: str, k: int, language: str | None, tag: str | None, rule: str | None,
               *, config: Any, candidates: int | None, exact: bool, w_e: float, signals: Any) -> Candidates:
    """The candidates of an index and their features, with numpy (the ranking stage scores them)."""
    import numpy as np

    from sentinel.memory.retrieval.signals import query_signals
    from sentinel.memory.retrieval.small import HOT_POOL, area_rows, exact_matches

    terms = tokenize(query)
    qs = signals if signals is not None else query_signals(query)
    allowed = None
    mask = idx.filter_mask(language, tag, rule)
    empty_mode = "hybrid" if idx.has_vectors else "lexical"
    if mask is not None:
        allowed = np.flatnonzero(mask)
        if allowed.size == 0:
            return Candidates.empty(empty_mode, "no card matches the filters", idx.meta.get("model"), qs)
    lex = idx.bm25(terms)
    bound = idx.bm25_bound(terms)
    emb, why_not = (None, "embedding_weight is 0") if w_e <= 0 else query_embedder(idx, config)
    n_cand = candidates or max(50, 5 * k)

    lex_pool = np.flatnonzero(lex > 0)
    if allowed is not None:
        lex_pool = np.intersect1d(lex_pool, allowed, assume_unique=True)
    exact_pool = _exact_pool(idx, qs, allowed, n_cand)
    areas = area_rows(idx, query, qs)
    if emb is not None:
        qvec = idx.rotate(emb.encode([query])[0])
        cand, cosine_of = idx.cosine_candidates(qvec, n_cand, allowed, exact=exact)
        mode, note, model = "hybrid", None, emb.name
    else:
        cand, cosine_of = np.zeros(0, dtype=np.int64), None
        mode, model = "lexical", None
        note = f"lexical only: {why_not}"
    if lex_pool.size:
        cand = _sorted_union(cand, _top(lex, n_cand, lex_pool))
    if exact_pool.size:
        cand = _sorted_union(cand, exact_pool)
    if areas:
        pool = np.fromiter(sorted(areas, key=lambda r: (-areas[r], r))[:n_cand], dtype=np.int64)
        if allowed is not None:
            pool = np.intersect1d(pool, allowed)
        cand = _sorted_union(cand, pool)
    if idx.has_heat:  # the project's most-fixed files (as the small scorer)
        hot = np.asarray(idx.hot_rows(HOT_POOL), dtype=np.int64)
        if allowed is not None:
            hot = np.intersect1d(hot, allowed)
        cand = _sorted_union(cand, hot)
    cand = np.asarray(cand, dtype=np.int64)
    if not cand.size:
        if emb is None:
            note += "; no card shares a term with the query"
        return Candidates.empty(mode, note, model, qs)
    rows = cand.tolist()
    c_lex = lex[cand]
    c_cos = cosine_of(cand) if cosine_of is not None else None
    ident, exc, mech, matched = exact_matches(idx, qs, rows)  # one implementation for both scorers
    coverage = np.clip(c_lex.astype(np.float64) / bound, 0.0, 1.0) if bound > 0 else np.zeros(cand.size)
    feats = {"coverage": coverage.tolist(), "identifiers": ident, "exception": exc, "mechanism": mech}
    if areas is not None:
        feats["area"] = [min(areas.get(r, 0.0), 1.0) for r in rows]
    if idx.has_heat:
        feats["heat"] = idx.heat_of(rows)
    cosine = None
    if c_cos is not None:
        cosine = feats["cosine"] = np.asarray(c_cos, dtype=np.float64).tolist()
    return Candidates(rows=rows, features=feats, bm25=c_lex.tolist(), cosine=cosine, matched=matched,
                      terms=terms, signals=qs, mode=mode, note=note, model=model)
