"""Opening the configured stores — the hypothesis store and the learned cards: SQLite files (the default) or the
team's PostgreSQL database."""

from __future__ import annotations

import os

from sentinel.memory.store import SCHEMA_VERSION, StoreError


def open_store(config_memory, git_dir: str | None, *, wait: float = 10.0, readonly: bool = False,
               quick: bool = False):
    """Open the configured store (see :func:`sentinel.memory.store.location.store_target`).

    `wait` bounds how long a lock or the network may hold this call up: the hook passes ~1 s. `readonly`:
    never write, not even a migration (a store of another schema is a StoreError). `quick` (the hook): a
    migration step too long for a hook is refused with a StoreError that says to run `sentinel memory migrate`."""
    from sentinel.memory.store.location import store_target

    kind, where = store_target(config_memory, git_dir)
    if kind == "postgres":
        from sentinel.memory.store.postgres import PostgresStore

        store = PostgresStore.connect(where, wait=wait, migrate=not readonly, quick=quick)
        if readonly and store.schema_version() != SCHEMA_VERSION:
            store.close()
            raise StoreError(f"the team database {store.describe()} is not at schema {SCHEMA_VERSION} "
                             "(run `sentinel memory migrate`)")
        return store
    from sentinel.memory.store.sqlite import SQLiteStore

    return SQLiteStore.readonly(where) if readonly else SQLiteStore(where, timeout=wait, quick=quick)


def open_learned_store(config_memory, git_dir: str | None):
    """The configured backend: the team database (`sentinel.memory.store.cards.LearnedCards` on PostgreSQL +
    pgvector, scoped to the project's identity) when memory.database-url / $SENTINEL_DATABASE_URL is a
    postgresql:// URL, else the SQLite file."""
    from sentinel.memory.store.learned import SQLiteLearnedCardStore
    from sentinel.memory.store.location import database_url, learned_store_path, store_kind

    url = database_url(config_memory)
    if url and store_kind(url) == "postgres":
        from sentinel.memory.store.cards import LearnedCards
        from sentinel.memory.store.project import project_identity

        root = os.path.dirname(os.path.abspath(git_dir)) if git_dir else None
        return LearnedCards(open_store(config_memory, git_dir, wait=10.0),
                            project_identity(config_memory, root, git_dir))
    return SQLiteLearnedCardStore(learned_store_path(config_memory, git_dir))
