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
    return build_cards_index(list(store.cards()), out, config, root=root, rev=rev,
                             sources=[f"learned store {store.digest()[:16]}"])


def build_cards_index(cards: list[dict], out: Path, config: Any = None, root: str | None = None, rev: str = "HEAD",
                      sources: list[str] | None = None) -> dict:
    """The learned index of these cards (the valid ones) at `out`; no cards: no index (the directory goes)."""
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    from sentinel.memory.cards.build import _rmtree, build_index
    from sentinel.memory.cards.model import check_card

    valid = [c for c in cards if not check_card(c)]
    if not valid:
        if Path(out).exists():
            _rmtree(Path(out))
        return {"count": 0}
    try:
        embedder = get_embedder(getattr(config, "embeddings", None))
    except EmbedderUnavailable:
        embedder = None
    cmap = source_code_map(root, rev) if root else None
    return build_index(valid, out, embedder, sources=sources, codemap=cmap, project=True)


def source_code_map(root: str, rev: str = "HEAD") -> dict[str, list[str]]:
    """The code map (sentinel.memory.cards.codemap) of the source files of the repository's tree at rev: not its
    tests, docs or CI (empty when git cannot read it)."""
    from sentinel.memory.cards import codemap
    from sentinel.memory.learn.paths import role

    return codemap.from_git(root, rev, keep=lambda path: role(path) == "source")
