"""The last stage of learning: the project's learned cards into its learned index.

It lives beside the store, in <git-dir>/sentinel/learned-index/ (sentinel.memory.cards.index.learned_index_dir), in
the same format as the bundled index, and is rebuilt from the store after each `sentinel memory learn` that changed
the cards (its meta.json keeps the store's digest), with the code map of the repository so queries can point at the
cards' files. Search opens it next to the bundled index and merges hits by their calibrated scores.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def rebuild(store, out: Path, config: Any = None, root: str | None = None, rev: str = "HEAD") -> dict:
    """Build the learned index from the store's cards (valid ones; invalid ones are reported by the caller),
    with the code map of the repository at root (its tree at rev: its source files)."""
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    from sentinel.memory.cards.build import build_index
    from sentinel.memory.cards.model import check_card

    cards = [c for c in store.cards() if not check_card(c)]
    try:
        embedder = get_embedder(getattr(config, "embeddings", None))
    except EmbedderUnavailable:
        embedder = None
    cmap = source_code_map(root, rev) if root else None
    return build_index(cards, out, embedder, sources=[f"learned store {store.digest()[:16]}"], codemap=cmap,
                       project=True)


def source_code_map(root: str, rev: str = "HEAD") -> dict[str, list[str]]:
    """The code map (sentinel.memory.cards.codemap) of the source files of the repository's tree at rev: not its
    tests, docs or CI (empty when git cannot read it)."""
    from sentinel.memory.cards import codemap
    from sentinel.memory.learn.paths import role

    return codemap.from_git(root, rev, keep=lambda path: role(path) == "source")
