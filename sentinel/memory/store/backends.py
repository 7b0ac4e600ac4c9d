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
        if not readonly:
            _adopt_unborn(store, config_memory, git_dir)
        return store
    from sentinel.memory.store.sqlite import SQLiteStore

    if readonly:
        return SQLiteStore.readonly(where)
    store = SQLiteStore(where, timeout=wait, quick=quick)
    if store.migrated_from is not None:
        from sentinel.memory.store.project import adopt_earlier_names

        try:
            adopt_earlier_names(store, config_memory, git_dir)
        except StoreError:  # (busy: the next opening after a migration does not adopt; the names stay)
            pass
    _adopt_unborn(store, config_memory, git_dir)
    return store


def _adopt_unborn(store, config_memory, git_dir: str | None) -> None:
    """A clone's first commit (or remote) gives it its identity: what it recorded before moves there."""
    from sentinel.memory.store.project import adopt_unborn, pending_unborn

    if pending_unborn(git_dir):
        try:
            adopt_unborn(store, config_memory, git_dir)
        except StoreError:  # busy: the next opening moves them
            pass


def open_learned_store(config_memory, git_dir: str | None, *, wait: float = 10.0, migrate_legacy: bool = True):
    """The project's learned cards (`sentinel.memory.store.cards.LearnedCards`, scoped to the project's identity)
    in the configured store: the team database when memory.database-url / $SENTINEL_DATABASE_URL is a
    postgresql:// URL, else the clone's SQLite store (the hypothesis store's file, or $SENTINEL_LEARNED_STORE).

    Cards of the SQLite file of Sentinel before schema 6 (<git-dir>/sentinel/learned.sqlite3, no project, no
    vectors) are moved in the first time (`migrate_legacy`); that file is kept, renamed *.v1-migrated."""
    from sentinel.memory.store.cards import LearnedCards
    from sentinel.memory.store.location import learned_store_path, store_target
    from sentinel.memory.store.project import project_identity

    root = os.path.dirname(os.path.abspath(git_dir)) if git_dir else None
    project = project_identity(config_memory, root, git_dir)
    kind, _ = store_target(config_memory, git_dir)
    if kind == "postgres":
        return LearnedCards(open_store(config_memory, git_dir, wait=wait), project)
    from sentinel.memory.store.learned import is_legacy_store, migrate_legacy_store
    from sentinel.memory.store.sqlite import SQLiteStore

    separate = learned_store_path(config_memory, git_dir, separate_only=True)
    legacy = separate or learned_store_path(config_memory, git_dir)
    moved = None
    if migrate_legacy and is_legacy_store(legacy):
        moved = legacy + ".v1-migrated"
        os.replace(legacy, moved)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(legacy + suffix):
                os.replace(legacy + suffix, moved + suffix)
    store = SQLiteStore(separate, timeout=wait) if separate else open_store(config_memory, git_dir, wait=wait)
    cards = LearnedCards(store, project)
    if moved:
        migrate_legacy_store(moved, cards)
    return cards
