"""The repository and configuration a memory command runs in (shared by `memory`, `memory learn`, `recall`)."""

from __future__ import annotations


def repo_root() -> str | None:
    """The work tree's root, or None outside a git repository (memory commands also run outside one)."""
    from sentinel import gitio
    from sentinel.errors import GitError

    try:
        return gitio.repo_root()
    except GitError:
        return None


def project_config(args, root):
    """The project's configuration (--config when given), cached beside its git dir."""
    from sentinel.api import cache_dir_for
    from sentinel.config import load_config

    return load_config(root, getattr(args, "config", None), cache_dir=cache_dir_for(root))
