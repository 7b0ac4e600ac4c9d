"""Where the stores live: the hypothesis store and the learned cards (SQLite files under the clone's git dir,
or the team database). No database import: the hook asks this on every run."""

from __future__ import annotations

import os

from sentinel.errors import ConfigError
from sentinel.memory.store import StoreError

DATABASE_URL_ENV = "SENTINEL_DATABASE_URL"
LEARNED_ENV = "SENTINEL_LEARNED_STORE"


def database_url(config_memory) -> str | None:
    """$SENTINEL_DATABASE_URL (CI keeps it in a secret) wins over `[tool.sentinel.memory] database-url`."""
    return os.environ.get(DATABASE_URL_ENV) or getattr(config_memory, "database_url", None) or None


def store_target(config_memory, git_dir: str | None) -> tuple[str, str]:
    """("postgres", URL) for a team database, else ("sqlite", PATH) — see :func:`store_location`."""
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


def store_kind(url: str | None) -> str:
    """'postgres' or 'sqlite' for a configured database URL (None: the default SQLite file)."""
    if not url:
        return "sqlite"
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
        return "postgres"
    if scheme == "sqlite":
        return "sqlite"
    from sentinel.memory.store.dburl import redact_url

    raise StoreError(f"memory.database-url: unsupported scheme {scheme!r} in {redact_url(url)} "
                     "(use postgresql://... or sqlite:///PATH)")


def learned_store_path(config_memory, git_dir: str | None, *, separate_only: bool = False) -> str | None:
    """Where the learned cards of a SQLite store are: $SENTINEL_LEARNED_STORE (a SQLite file of their own) when
    set, else, as the path of Sentinel before schema 6 (<git-dir>/sentinel/learned.sqlite3, moved into the
    hypothesis store when first opened), or None with `separate_only`."""
    path = getattr(config_memory, "learned_path", None) or os.environ.get(LEARNED_ENV)
    if path:
        return os.path.expanduser(path)
    if separate_only:
        return None
    if not git_dir:
        raise ConfigError("no place for learned cards: not in a git repository (set $SENTINEL_LEARNED_STORE)")
    return os.path.join(git_dir, "sentinel", "learned.sqlite3")


# Here, not in store.learned: the hook asks it on every run, and store.learned's models cost ~20 ms of imports.
def is_legacy_store(path: str | None) -> bool:
    """Is `path` a learned-card file of Sentinel before schema 6 (its `cards` table keeps a `json` column)?"""
    if not path or not os.path.isfile(path):
        return False
    import sqlite3
    from pathlib import Path

    try:
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            cols = {row[1] for row in db.execute("PRAGMA table_info(cards)")}
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return "json" in cols
