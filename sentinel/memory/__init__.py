"""Experience memory: governed cards of past fixes, searchable by symptom, browsable by id.

    from sentinel import memory
    hits = memory.search("multipart body corrupted when base64 chunk splits", k=5, language="python")
    hits.mode, hits.note            # "hybrid" | "lexical", and why when degraded
    card = memory.show(hits[0].id)  # the whole card: root cause, fix strategy, patch digest, verification

Importing this package costs nothing: `sentinel check` imports sentinel.memory.hypotheses.gate_hook, and
numpy, pydantic and the embedder load only when a search, a browse or a build actually runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~4 ms to import on the hook path; annotations are strings here

if TYPE_CHECKING:
    from typing import Any

    from sentinel.memory.cards.build import BuildReport
    from sentinel.memory.cards.index import MemoryIndex
    from sentinel.memory.retrieval.hits import Preview, SearchResults

__all__ = ["BuildReport", "IndexMissing", "MemoryIndex", "Preview", "SearchResults", "build", "load_index", "search",
           "show", "stats"]


def search(query: str, k: int = 10, language: str | None = None, tag: str | None = None, rule: str | None = None,
           **kwargs: Any) -> SearchResults:
    from sentinel.memory.retrieval.search import search as _search

    return _search(query, k=k, language=language, tag=tag, rule=rule, **kwargs)


def show(card_id: str, **kwargs: Any) -> dict | None:
    from sentinel.memory.retrieval.search import show as _show

    return _show(card_id, **kwargs)


def stats(**kwargs: Any) -> dict:
    from sentinel.memory.retrieval.search import stats as _stats

    return _stats(**kwargs)


def build(config: Any = None, root: str | None = None, **kwargs: Any) -> BuildReport:
    from sentinel.memory.cards.build import build as _build

    return _build(config, root=root, **kwargs)


def load_index(path: Any = None, root: str | None = None) -> MemoryIndex:
    from sentinel.memory.cards.index import load_index as _load

    return _load(path, root=root)


def __getattr__(name: str) -> Any:
    if name in ("Preview", "SearchResults"):
        from sentinel.memory.retrieval import hits

        return getattr(hits, name)
    if name in ("MemoryIndex", "IndexMissing"):
        from sentinel.memory.cards import index

        return getattr(index, name)
    if name == "BuildReport":
        from sentinel.memory.cards import build

        return build.BuildReport
    raise AttributeError(f"module 'sentinel.memory' has no attribute {name!r}")
