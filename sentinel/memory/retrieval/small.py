"""Search of a small index in pure Python: the same results as the dense (numpy) scorer, without numpy's import.

A failing pre-commit hook recalls similar past fixes from the bundled index (a few thousand cards) and the
project's learned index (hundreds to thousands). Importing numpy costs ~65 ms of a ~200 ms hook run, more than
scoring a few thousand cards in pure Python: BM25 walks only the query terms' postings, the cosine of the query
with each card is a C-level sum of products over the card's row of the mapped vectors file, and everything after
candidate selection (about a hundred cards) is per candidate anyway. Indexes above SMALL_MAX_CARDS are searched
by the dense scorer (sentinel.memory.retrieval.dense), whose full scan is cheaper than Python's there.

Both scorers compute the same thing (tests/test_search_small.py compares them query by query on the bundled
index and on a learned one): BM25 is accumulated in float32 as numpy does, bit for bit; cosines are computed in
float64 where numpy sums float32 (they agree to ~1e-7); ties at a candidate cut go to the lower row in both.
"""

from __future__ import annotations

import array
import heapq
import math
import struct
from operator import mul

from sentinel.memory.cards.text import tokenize
from sentinel.memory.retrieval.hits import Candidates, query_embedder

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

# Above this many cards the dense scorer's full scan beats a pure-Python one even counting numpy's import
# (a pure cosine costs ~7 us per card of 256 dimensions; numpy's import ~65 ms).
SMALL_MAX_CARDS = 10_000
HOT_POOL = 12  # candidates from the project's most-fixed files, whatever the query says


class NeedsDense(Exception):
    """This query needs the dense scorer (an embedder without a pure single-text path)."""


def is_small(idx: Any) -> bool:
    return idx.count <= SMALL_MAX_CARDS


def top_rows(score, rows, k: int) -> list[int]:
    """The k rows of `rows` (ascending) with the best `score[row]`, best first; ties go to the lower row (the
    selection is stable on the ascending rows)."""
    return heapq.nlargest(k, rows, key=score.__getitem__)


def bm25(idx: Any, terms: list[str]) -> tuple[array.array, list[int]]:
    """(BM25 of every card, accumulated in float32 in term-id order exactly as the dense scorer does; the rows
    with a posting of a query term, ascending)."""
    vocab = idx.vocab
    ids = sorted({vocab[t] for t in terms if t in vocab})
    acc = array.array("f", bytes(4 * idx.count))
    if not ids:
        return acc, []
    indptr = idx._arr("post_indptr").data
    docs = idx._arr("post_docs").data
    weights = idx._arr("post_weights").data
    touched: set[int] = set()
    for i in ids:
        a, b = indptr[i], indptr[i + 1]
        rows = docs[a:b]
        for r, w in zip(rows, weights[a:b]):
            acc[r] += w  # float32 + float32 rounded back to float32: numpy's float32 add
        touched.update(rows)
    return acc, sorted(touched)


def filter_rows(idx: Any, language: str | None = None, tag: str | None = None,
                rule: str | None = None) -> list[int] | None:
    """The rows (ascending) the filters allow, or None without filters."""
    allowed: set[int] | None = None
    if language:
        langs = idx.meta.get("languages", [])
        code = langs.index(language.lower()) if language.lower() in langs else -1
        allowed = {r for r, c in enumerate(idx._arr("lang").data) if c == code}
    for key in ([f"tag:{tag.lower()}"] if tag else []) + ([f"rule:{rule.upper()}"] if rule else []):
        rows = set(idx.facet_list(key))
        allowed = rows if allowed is None else allowed & rows
    return None if allowed is None else sorted(allowed)


def specificity(idx: Any, name: str) -> float:
    """How much a name says, in [0, 1]: the idf of its rarest word among the cards, relative to a word no card
    has. The project's everyday nouns ("request", "response") name the classes every report mentions; a
    name the cards seldom use ("append_slash_redirect") points at its file."""
    n = max(idx.count, 1)
    top = math.log(1.0 + (n + 0.5) / 0.5)
    words = tokenize(name.replace("_", " ")) or [name]
    df = min(idx.doc_freq(w) for w in words)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) / top


def area_rows(idx: Any, query: str, signals) -> dict[int, float] | None:
    """{row: area} for the cards whose fix touched a file the query's names point at through the project's
    code map (sentinel.memory.cards.codemap): over the query's names the project defines, the mean of each name's
    specificity times the share of its defining files the card's fix touched — one specific name pointing at
    one file counts more than many everyday words spread over many; None when the index has no code map.

    A query that knows its place (a failing finding: signals.files) needs no map for it: a card whose fix touched
    that file is in the area (1), one that changed the failing definition itself ranks first in the candidate
    pool (2: the feature is capped at 1, the order is not)."""
    placed = _placed_rows(idx, signals)
    cmap = idx.codemap
    if not cmap:
        return placed or None
    from sentinel.memory.cards.codemap import file_votes, query_names

    voting = [n for n in query_names(query, signals.identifiers) if cmap.get(n)]
    votes = file_votes(cmap, voting, {n: specificity(idx, n) for n in voting})
    total = len(voting)
    rows: dict[int, float] = {}
    for path, vote in votes.items():
        for r in idx.facet_list(f"file:{path}").tolist():
            rows[r] = rows.get(r, 0.0) + vote / total
    for r, v in placed.items():
        rows[r] = max(rows.get(r, 0.0), v)
    return rows


def _placed_rows(idx: Any, signals) -> dict[int, float]:
    """{row: 1 (fix touched the query's file) or 2 (it changed the query's definition)} for a placed query."""
    rows: dict[int, float] = {}
    for path in getattr(signals, "files", ()):
        for r in idx.facet_list(f"file:{path}").tolist():
            rows[r] = 1.0
    for sym in getattr(signals, "symbols", ()):
        for r in idx.facet_list(f"sym:{sym}").tolist():
            rows[r] = 2.0
    return rows


def identifier_rows(idx: Any, signals) -> list[list[int]]:
    """Per query identifier the cards carrying it — only identifiers that identify something (a name a tenth of
    the cards carry identifies nothing)."""
    out = []
    for name in signals.identifiers:
        rows = idx.facet_list(f"ident:{name}")
        if 0 < len(rows) <= max(3, idx.count // 10):
            out.append(rows.tolist())
    return out


def exact_matches(idx: Any, signals, cand: list[int]) -> tuple[list[float], list[float], list[float],
                                                                dict[int, dict]]:
    """Per candidate: identifiers matched (count, capped), exception matched, mechanism matched; and, by
    candidate position, what matched."""
    from sentinel.memory.retrieval.ranking import IDENT_CAP

    pos = {r: j for j, r in enumerate(cand)}
    ident = [0.0] * len(cand)
    exc = [0.0] * len(cand)
    mech = [0.0] * len(cand)
    matched: dict[int, dict] = {}

    def mark(rows, arr, kind, value):
        for r in rows:
            j = pos.get(r)
            if j is not None:
                arr[j] += 1
                matched.setdefault(j, {}).setdefault(kind, []).append(value)

    for name in signals.identifiers:
        rows = idx.facet_list(f"ident:{name}")
        if len(rows) and len(rows) <= max(3, idx.count // 10):
            mark(rows, ident, "identifiers", name)
    for name in signals.exceptions:
        mark(idx.facet_list(f"exc:{name.lower()}"), exc, "exceptions", name)
    for tag in signals.mechanisms:
        mark(idx.facet_list(f"mech:{tag}"), mech, "mechanisms", tag)
    # where a placed query's card was fixed (no feature of its own: `area` scores it; recall says why)
    unused = [0.0] * len(cand)
    for path in getattr(signals, "files", ()):
        mark(idx.facet_list(f"file:{path}"), unused, "files", path)
    for sym in getattr(signals, "symbols", ()):
        mark(idx.facet_list(f"sym:{sym}"), unused, "symbols", sym)
    return [min(v, IDENT_CAP) for v in ident], [min(v, 1) for v in exc], [min(v, 1) for v in mech], matched


def _rotated(idx: Any, qvec: list[float]) -> list[float]:
    """The query in the index's rotated space (its principal axes): component j is the query's dot product
    with column j of the rotation."""
    if not (idx.path / "rotation.npy").is_file():
        return qvec
    rot = idx._arr("rotation")
    if rot.fortran:  # columns are contiguous: each one a tuple at once, q.c = (|c + q|^2 - |c - q|^2) / 4
        q, neg, dist = tuple(qvec), tuple(-v for v in qvec), math.dist
        return [(dist(col, neg) ** 2 - dist(col, q) ** 2) * 0.25
                for col in struct.Struct(f"{rot.shape[0]}f").iter_unpack(rot.data)]
    return [sum(map(mul, rot.column(j), qvec)) for j in range(rot.shape[1])]


def cosines(idx: Any, emb: Any, query: str, rows: list[int] | None = None) -> Any:
    """Cosine of the query with the cards' unit vectors (the vectors are rotated, so is the query): a list over
    every card, or with `rows` a {row: cosine} of those rows (a rule's cards: recall's first search asks for a
    few dozen, not thousands); None when the embedder has no pure single-text encoder. What was computed for
    the last few queries is kept on the index: recall searches one query twice (the rule's cards, then every
    card), and each row's cosine is computed once."""
    memo = idx._cache.setdefault("small-cosines", {})
    key = (emb.name, query)
    entry = memo.get(key)
    if entry is None:
        qvec = emb.encode_one(query)
        if qvec is None:
            return None
        entry = memo[key] = _QueryCosines(idx, tuple(_rotated(idx, qvec)))
        if len(memo) > 4:
            memo.pop(next(iter(memo)))
    return entry.every() if rows is None else entry.some(rows)


class _QueryCosines:
    """One query's cosines, computed per row on demand or for every row at once (the same formula either way,
    so a row's value does not depend on how it was asked for)."""

    def __init__(self, idx: Any, qvec: tuple):
        self.qvec, self.full, self.known = qvec, None, {}
        vectors = idx._arr("vectors")
        self.data, self.n, self.dim = vectors.data, vectors.shape[0], vectors.shape[1]
        self.zero = not any(qvec)  # a query without tokens: similarity 0 to everything, as in the dense scorer
        if (idx.path / "norms.npy").is_file():
            # q.v = (|q|^2 + |v|^2 - |v - q|^2) / 2 with each row's |v|^2 stored by the build: one distance a card
            self.norms, self.neg = idx._arr("norms").data, None
            self.qq = math.fsum(v * v for v in qvec)
        else:  # an index built before norms.npy: q.v = (|v + q|^2 - |v - q|^2) / 4
            self.norms, self.neg = None, tuple(-v for v in qvec)

    def _score(self, vecs, norms) -> list[float]:
        q, dist = self.qvec, math.dist  # a C loop over two tuples of floats, in extended precision
        if self.neg is None:
            qq = self.qq
            return [(qq + vv - dist(row, q) ** 2) * 0.5 for row, vv in zip(vecs, norms)]
        neg = self.neg
        return [(dist(row, neg) ** 2 - dist(row, q) ** 2) * 0.25 for row in vecs]

    def every(self) -> list[float]:
        if self.full is None:
            if self.zero:
                self.full = [0.0] * self.n
            else:
                rows = struct.Struct(f"{self.dim}f").iter_unpack(self.data)  # each row a tuple of floats, in C
                self.full = self._score(rows, self.norms)
        return self.full

    def some(self, rows: list[int]) -> dict[int, float]:
        if self.full is not None:
            return {r: self.full[r] for r in rows}
        known = self.known
        todo = [r for r in rows if r not in known]
        if todo:
            if self.zero:
                known.update(dict.fromkeys(todo, 0.0))
            else:
                unpack, stride, data = struct.Struct(f"{self.dim}f").unpack_from, self.dim * 4, self.data
                vecs = [unpack(data, r * stride) for r in todo]
                norms = [self.norms[r] for r in todo] if self.norms is not None else None
                known.update(zip(todo, self._score(vecs, norms)))
        return {r: known[r] for r in rows}


def candidates(idx: Any, query: str, k: int, language: str | None, tag: str | None, rule: str | None, *,
               config: Any, candidates: int | None, w_e: float, signals: Any) -> Candidates:
    """The candidates of a small index and their features (the ranking stage scores them). Raises NeedsDense
    when the query must go to the dense scorer."""
    from sentinel.memory.retrieval.signals import query_signals

    terms = tokenize(query)
    qs = signals if signals is not None else query_signals(query)
    empty_mode = "hybrid" if idx.has_vectors else "lexical"
    allowed = filter_rows(idx, language, tag, rule)
    if allowed is not None and not allowed:
        return Candidates.empty(empty_mode, "no card matches the filters", idx.meta.get("model"), qs)
    allowed_set = set(allowed) if allowed is not None else None
    lex, lex_pool = bm25(idx, terms)
    bound = idx.bm25_bound(terms)
    emb, why_not = (None, "embedding_weight is 0") if w_e <= 0 else query_embedder(idx, config)
    n_cand = candidates or max(50, 5 * k)
    lex_pool = [r for r in lex_pool if lex[r] > 0 and (allowed_set is None or r in allowed_set)]
    ident_rows = identifier_rows(idx, qs)
    exact_pool = sorted({r for rows in ident_rows for r in rows if allowed_set is None or r in allowed_set})[:n_cand]
    areas = area_rows(idx, query, qs)
    cand_set: set[int] = set()
    cos: Any = None
    if emb is not None:
        cos = cosines(idx, emb, query, allowed)
        if cos is None:
            raise NeedsDense(f"{emb.name} has no pure single-text encoder")
        cand_set.update(top_rows(cos, allowed if allowed is not None else range(len(cos)), n_cand))
        mode, note, model = "hybrid", None, emb.name
    else:
        mode, model = "lexical", None
        note = f"lexical only: {why_not}"
    if lex_pool:
        cand_set.update(top_rows(lex, lex_pool, n_cand))
    cand_set.update(exact_pool)
    if areas:
        pool = sorted(areas, key=lambda r: (-areas[r], r))[:n_cand]
        cand_set.update(r for r in pool if allowed_set is None or r in allowed_set)
    if idx.has_heat:  # the project's most-fixed files: the prior every query of a project's own history has
        cand_set.update(r for r in idx.hot_rows(HOT_POOL) if allowed_set is None or r in allowed_set)
    cand = sorted(cand_set)
    if not cand:
        if emb is None:
            note += "; no card shares a term with the query"
        return Candidates.empty(mode, note, model, qs)
    c_lex = [lex[r] for r in cand]
    c_cos = [cos[r] for r in cand] if cos is not None else None
    ident, exc, mech, matched = exact_matches(idx, qs, cand)
    coverage = [min(max(v / bound, 0.0), 1.0) for v in c_lex] if bound > 0 else [0.0] * len(cand)
    feats: dict[str, list[float]] = {"coverage": coverage, "identifiers": ident, "exception": exc, "mechanism": mech}
    if areas is not None:
        feats["area"] = [min(areas.get(r, 0.0), 1.0) for r in cand]
    if idx.has_heat:
        feats["heat"] = idx.heat_of(cand)
    if c_cos is not None:
        feats["cosine"] = c_cos
    return Candidates(rows=cand, features=feats, bm25=c_lex, cosine=c_cos, matched=matched, terms=terms,
                      signals=qs, mode=mode, note=note, model=model)
