"""Where the hypothesis store lives (no SQLite import: the hook asks this on every run)."""

from __future__ import annotations

import os

from sentinel.errors import ConfigError


def store_location(config_memory, git_dir: str | None) -> str:
    """The SQLite file of the configured store: database-url (or $SENTINEL_DATABASE_URL), store-path
    (or $SENTINEL_STORE), else <git-dir>/sentinel/hypotheses.sqlite3."""
    url = config_memory.database_url or os.environ.get("SENTINEL_DATABASE_URL")
    if url:
        if url.startswith("sqlite:///"):
            return url[len("sqlite:///"):]
        scheme = url.split(":", 1)[0]
        raise ConfigError(f"memory.database-url: the {scheme!r} backend is not available in this version "
                          "(only sqlite:///PATH); the store interface is ready for it")
    path = config_memory.store_path or os.environ.get("SENTINEL_STORE")
    if path:
        return os.path.expanduser(path)
    if not git_dir:
        raise ConfigError("no hypothesis store location: not in a git repository and memory.store-path is not set")
    return os.path.join(git_dir, "sentinel", "hypotheses.sqlite3")
