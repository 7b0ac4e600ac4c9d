"""Where the hypothesis store lives (no database import: the hook asks this on every run)."""

from __future__ import annotations

import os

from sentinel.errors import ConfigError

DATABASE_URL_ENV = "SENTINEL_DATABASE_URL"


def database_url(config_memory) -> str | None:
    """$SENTINEL_DATABASE_URL (CI keeps it in a secret) wins over `[tool.sentinel.memory] database-url`."""
    return os.environ.get(DATABASE_URL_ENV) or getattr(config_memory, "database_url", None) or None


def store_target(config_memory, git_dir: str | None) -> tuple[str, str]:
    """("postgres", URL) for a team database, else ("sqlite", PATH) — see :func:`store_location`."""
    from sentinel.memory.store import store_kind

    url = database_url(config_memory)
    if url and store_kind(url) == "postgres":
        return "postgres", url
    return "sqlite", store_location(config_memory, git_dir)


def store_location(config_memory, git_dir: str | None) -> str:
    """The SQLite file of the configured store: sqlite:///PATH (database-url or $SENTINEL_DATABASE_URL),
    store-path (or $SENTINEL_STORE), else <git-dir>/sentinel/hypotheses.sqlite3."""
    url = database_url(config_memory)
    if url and url.startswith("sqlite:///"):
        return os.path.expanduser(url[len("sqlite:///"):])
    path = config_memory.store_path or os.environ.get("SENTINEL_STORE")
    if path:
        return os.path.expanduser(path)
    if not git_dir:
        raise ConfigError("no hypothesis store location: not in a git repository and memory.store-path is not set")
    return os.path.join(git_dir, "sentinel", "hypotheses.sqlite3")
