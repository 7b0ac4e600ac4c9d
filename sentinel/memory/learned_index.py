"""The project's learned index: the cards of the LearnedCardStore, built into a searchable index.

It lives beside the store, in <git-dir>/sentinel/learned-index/, in the same format as the bundled index, and is
rebuilt from the store after each `sentinel memory learn` that changed the cards (its meta.json keeps the
store's digest). Search opens it next to the bundled index and merges hits by their calibrated scores.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

LEARNED_INDEX_NAME = "learned-index"


def learned_index_dir(root: str | None) -> Path | None:
    if not root:
        return None
    from sentinel.api import cache_dir_for

    cache = cache_dir_for(root)
    return Path(cache) / LEARNED_INDEX_NAME if cache else None


def learned_index(root: str | None):
    """The project's learned index, or None when it has none."""
    from sentinel.memory.index import IndexMissing, load_index

    where = learned_index_dir(root)
    if where is None or not (where / "meta.json").is_file():
        return None
    try:
        return load_index(where)
    except IndexMissing:
        return None


def rebuild(store, out: Path, config: Any = None, root: str | None = None, rev: str = "HEAD") -> dict:
    """Build the learned index from the store's cards (valid ones; invalid ones are reported by the caller),
    with the code map of the repository at root (its tree at rev) so queries can point at the cards' files."""
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    from sentinel.memory import codemap
    from sentinel.memory.cards import check_card
    from sentinel.memory.index import build_index

    cards = [c for c in store.cards() if not check_card(c)]
    try:
        embedder = get_embedder(getattr(config, "embeddings", None))
    except EmbedderUnavailable:
        embedder = None
    cmap = codemap.from_git(root, rev) if root else None
    return build_index(cards, out, embedder, sources=[f"learned store {store.digest()[:16]}"], codemap=cmap)
