"""A clone's cache of the project's learned cards, kept in step with the store that holds them.

The store (the team's PostgreSQL database, or the clone's SQLite file) is the source of truth; what search and
recall read is the learned index (<git-dir>/sentinel/learned-index/, the format of the bundled index, see
sentinel.memory.cards.index), built from the store's cards. Every write of a project's cards bumps its card
version (sentinel.memory.store.sql: `card_versions`, each card stamped with the version that wrote it, a
tombstone for each removal), and the cache remembers the version it was built from (learned-sync.json beside
the index), so:

- **a reader asks one cheap question**: `card_version` — the store's id, the project's version and how many
  cards changed since the cached one, in one round trip (:func:`ensure_fresh`: the gate's recall, the MCP
  server; at most once per process every RECHECK_SECONDS);
- **a stale cache is refreshed by what changed**: the cards written and removed after the cached version are
  fetched and applied to the cached ones, then the index is rebuilt locally (:func:`sync`: `memory sync`,
  `memory search` and the other commands run it in the foreground). A cache of another store or project, or none
  at all, is fetched whole;
- **the hook never waits for a download**: when the cache is stale, :func:`ensure_fresh` starts
  `sentinel memory sync --cards` on its own (detached: it outlives a short-lived hook) and gives it up to the
  hook's wait; a sync that takes longer serves the next run, this one reads the cache it has.

One sync at a time per clone (a lock file beside the state). Nothing here imports a database driver unless
the configured store is a database.
"""

from __future__ import annotations

import json
import os
import time

from sentinel.errors import SentinelError
from sentinel.record import Record

STATE_FILE = "learned-sync.json"
LOCK_FILE = "learned-sync.lock"
RECHECK_SECONDS = 30.0
LOCK_WAIT = 120.0  # a foreground sync waits this long for another one in the same clone
_CHECKED: dict[str, float] = {}  # root -> monotonic time of this process's last version check
_EXPECTED: dict[str, "_Answer"] = {}  # root -> the version check the gate's store phase makes on its connection


class _Answer:
    """A version check another thread makes: (store id, version, changed since the cache) or None."""

    def __init__(self):
        import threading

        self.ready = threading.Event()
        self.value: tuple[str, int, int] | None = None

    def give(self, value) -> None:
        self.value = value
        self.ready.set()


def install() -> None:
    """Have the learned index checked against the store whenever it is read with the project's config
    (sentinel.memory.cards.index.learned_index(root, config): search_memory, the gate's recall). The cards
    layer does not know where cards are stored; this layer tells it."""
    from sentinel.memory.cards import index

    index.set_refresher(ensure_fresh)


def expect_check(root: str | None) -> None:
    """The gate's store phase will ask the store for the card version on the connection it opens anyway (see
    answer_check): the recall of the same run waits for that answer instead of connecting again."""
    install()
    if root:
        _EXPECTED[root] = _Answer()


def answer_check(root: str | None, db, project: str) -> None:
    """On the store phase's connection: the project's card version against this clone's cache (or "no answer"
    when `db` is None, or not the store of the learned cards). Never raises."""
    answer = _EXPECTED.get(root) if root else None
    if answer is None:
        return
    value = None
    try:
        if db is not None:
            state = read_state(_cache_dir(root)) or {}
            value = db.card_version(project, state.get("version"))
    except Exception:  # the recall then serves the cache as it is
        value = None
    answer.give(value)


class SyncResult(Record):
    version: int  # the store's card version the cache now reflects
    cards: int  # cards in the cache (the valid ones: the index holds nothing else)
    fetched: int = 0  # cards read from the store by this sync
    removed: int = 0  # tombstones applied
    rebuilt: bool = False
    whole: bool = False  # fetched every card (no usable cache before)
    store: str = ""  # where the cards are (a database URL without its password)

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}


def _cache_dir(root: str) -> str | None:
    from sentinel.api import cache_dir_for

    return cache_dir_for(root)


def read_state(cache_dir: str | None) -> dict | None:
    if not cache_dir:
        return None
    try:
        with open(os.path.join(cache_dir, STATE_FILE), encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and isinstance(state.get("version"), int) else None


def _write_state(cache_dir: str, state: dict) -> None:
    path = os.path.join(cache_dir, STATE_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, sort_keys=True)
    os.replace(tmp, path)


class _Lock:
    """An exclusive lock on a file beside the cache (fcntl; where there is none, no lock)."""

    def __init__(self, cache_dir: str, wait: float):
        os.makedirs(cache_dir, exist_ok=True)
        self.path = os.path.join(cache_dir, LOCK_FILE)
        self.wait = wait
        self.fh = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # not POSIX: the atomic replace of the index and its state is what protects readers
            return self
        self.fh = open(self.path, "a+")
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError:
                if time.monotonic() >= deadline:
                    self.fh.close()
                    raise SentinelError(f"another `sentinel memory sync` of this clone holds {self.path}") from None
                time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            self.fh.close()  # closing releases the lock


def _usable(state: dict | None, store_id: str, project: str, index_dir) -> bool:
    """Was the cache built from this store's cards of this project (and is it still there)?"""
    if not (state and state.get("store") == store_id and state.get("project") == project and index_dir is not None):
        return False
    return (index_dir / "meta.json").is_file() or not state.get("cards")  # no valid card: no index


def sync(root: str, config, *, whole: bool = False, wait: float = 10.0, cards=None) -> SyncResult:
    """Bring this clone's learned index to the store's card version: fetch what changed since the cached version
    (everything when there is no usable cache, or `whole`) and rebuild the index. `cards`: an open LearnedCards
    (else the configured store is opened, and closed afterwards). Raises StoreError when the store cannot be
    reached."""
    from sentinel import gitio
    from sentinel.memory.cards.index import learned_index_dir

    cache = _cache_dir(root)
    index_dir = learned_index_dir(root)
    if not cache or index_dir is None:
        raise SentinelError("no cache for learned cards: not in a git repository")
    own = cards is None
    if own:
        from sentinel.memory.store.backends import open_learned_store

        cards = open_learned_store(config.memory, gitio.git_dir(root), wait=wait)
    try:
        with _Lock(cache, LOCK_WAIT):
            _CHECKED[root] = time.monotonic()
            state = read_state(cache)
            store_id, version, _ = cards.db.card_version(cards.project)
            usable = not whole and _usable(state, store_id, cards.project, index_dir)
            if usable and state["version"] == version:
                return SyncResult(version, int(state.get("cards", 0)), store=cards.path)
            if not usable and version == 0 and not (index_dir / "meta.json").is_file():
                _write_state(cache, _state(store_id, cards.project, 0, 0))
                return SyncResult(0, 0, store=cards.path)
            since = state["version"] if usable else 0
            version, changed, removed = cards.db.card_changes(cards.project, since)
            if usable and (index_dir / "meta.json").is_file():
                from sentinel.memory.cards.index import CARDS_FILE, iter_card_file

                current = {c["id"]: c for c in iter_card_file(index_dir / CARDS_FILE)}
                for cid in removed:
                    current.pop(cid, None)
            else:
                current = {}
            current.update((c["id"], c) for c in changed)
            from sentinel.memory.learn.index import build_cards_index

            meta = build_cards_index([current[k] for k in sorted(current)], index_dir, config, root=root,
                                     sources=[f"learned cards of {cards.project} at version {version}"])
            from sentinel.memory.cards.index import forget_index

            forget_index(index_dir)
            _write_state(cache, _state(store_id, cards.project, version, int(meta["count"])))
            return SyncResult(version, int(meta["count"]), len(changed), len(removed), True, not usable,
                              store=cards.path)
    finally:
        if own:
            cards.close()


def _state(store_id: str, project: str, version: int, count: int) -> dict:
    return {"store": store_id, "project": project, "version": version, "cards": count, "synced_at": time.time()}


def status(root: str, cards) -> dict:
    """What `memory stats` shows of the cache: its version and how far the store (`cards`, an open
    LearnedCards) is ahead of it."""
    state = read_state(_cache_dir(root)) or {}
    store_id, version, changed = cards.db.card_version(cards.project, state.get("version"))
    same = state.get("store") == store_id and state.get("project") == cards.project
    return {"cached_version": state.get("version"), "cached_cards": state.get("cards"), "store_version": version,
            "behind": changed if same else None}


def refresh(root: str, config, *, wait: float = 10.0) -> str | None:
    """For commands that read the learned cards (`memory search`, `memory show`): the cache brought up to the
    store first, in the foreground. A note when it could not be (the cache then serves as it is)."""
    try:
        if _behind(root, config, wait):
            sync(root, config, wait=wait)
    except Exception as exc:  # the store away, of another schema, a driver missing: the cache serves as it is
        from sentinel.redact import redact

        return redact(f"learned cards: searched this clone's cache, not refreshed from the store "
                      f"({type(exc).__name__}: {exc})")
    return None


def store_exists(config, git_dir: str) -> bool:
    """Is there a store of learned cards to read (a database, a SQLite file, or an earlier Sentinel's file)?"""
    from sentinel.memory.store.location import is_legacy_store, learned_store_path, store_target

    kind, where = store_target(config.memory, git_dir)
    if kind == "postgres":
        return True
    if is_legacy_store(learned_store_path(config.memory, git_dir)):
        return True
    return os.path.exists(learned_store_path(config.memory, git_dir, separate_only=True) or where)


def ensure_fresh(root: str | None, config, *, wait: float | None = None) -> str | None:
    """For readers on the hook path: one version check (bounded by `wait`, default the hook's); when the cache is
    behind, a detached `sentinel memory sync --cards`, given up to `wait` to finish. Returns a note when the
    cache could not be brought up to date in time, else None. Never raises."""
    if not root or config is None:
        return None
    now = time.monotonic()
    if now - _CHECKED.get(root, -RECHECK_SECONDS) < RECHECK_SECONDS:
        return None
    _CHECKED[root] = now
    if wait is None:
        from sentinel.memory.store import hook_wait

        wait = hook_wait()
    try:
        # (taken from the table only once answered: the store phase gives its answer to what it finds there)
        answer = _EXPECTED.get(root)
        if answer is not None:
            ready = answer.ready.wait(wait)
            _EXPECTED.pop(root, None)
            if not ready or answer.value is None:  # the store phase could not ask: no second connection
                return "learned cards: the cache was not checked against the store (it did not answer in time)"
        behind = _behind(root, config, wait, answer.value if answer is not None else None)
    except Exception as exc:  # the store away, of another schema, a driver missing: the cache serves as it is
        from sentinel.redact import redact

        return redact(f"learned cards: the cache was not checked against the store ({type(exc).__name__}: {exc})")
    if not behind:
        return None
    started = time.monotonic()
    proc = _spawn_sync(root)
    if proc is None:
        return "learned cards: the cache is behind the store and no `sentinel memory sync` could be started"
    try:
        proc.wait(timeout=max(0.0, wait - (time.monotonic() - started)))
    except Exception:  # subprocess.TimeoutExpired: it goes on without us, for the next run
        return (f"learned cards: {behind} change(s) of the store are being cached by `sentinel memory sync` "
                "(this run searched the cards cached before)")
    return None


_STALE: dict[str, tuple[float, str | None]] = {}  # root -> (when checked, the note) for stale_note


def stale_note(root: str | None, config, *, wait: float | None = None) -> str | None:
    """For readers that promise to write nothing (the MCP server): one version check against the team database
    (at most once per process every RECHECK_SECONDS), and a note when this clone's cache is behind it — the
    cache is left as it is. (A SQLite store's cards are learned in this clone, and its cache refreshed then.)"""
    if not root or config is None:
        return None
    from sentinel import gitio
    from sentinel.memory.store.location import store_target

    now = time.monotonic()
    seen = _STALE.get(root)
    if seen is not None and now - seen[0] < RECHECK_SECONDS:
        return seen[1]
    note = None
    try:
        if store_target(config.memory, gitio.git_dir(root))[0] == "postgres":
            if wait is None:
                from sentinel.memory.store import hook_wait

                wait = hook_wait()
            behind = _behind(root, config, wait)
            if behind:
                note = (f"learned cards: this clone's cache is {behind} card change(s) behind the team database "
                        "(run `sentinel memory sync`)")
    except Exception as exc:  # the store away, a driver missing: the cache serves as it is
        from sentinel.redact import redact

        note = redact(f"learned cards: the cache was not checked against the store ({type(exc).__name__}: {exc})")
    _STALE[root] = (now, note)
    return note


def _behind(root: str, config, wait: float, answered: tuple[str, int, int] | None = None) -> int:
    """How many cards of the store the cache lacks (0: up to date, or nothing learned anywhere). `answered`: the
    store's (id, version, changed) already asked on another connection of this run."""
    from sentinel import gitio
    from sentinel.memory.cards.index import learned_index_dir
    from sentinel.memory.store import within
    from sentinel.memory.store.location import learned_store_path, store_target
    from sentinel.memory.store.project import project_identity

    git_dir = gitio.git_dir(root)
    kind, where = store_target(config.memory, git_dir)
    state = read_state(_cache_dir(root))
    if kind == "sqlite":
        from sentinel.memory.store.location import is_legacy_store

        if is_legacy_store(learned_store_path(config.memory, git_dir)):
            return 1  # the cards of an earlier Sentinel, not yet moved into the store
        where = learned_store_path(config.memory, git_dir, separate_only=True) or where
        if not os.path.exists(where):
            return 0
    project = project_identity(config.memory, root, git_dir, remember=False)  # (readers: the MCP server too)
    index_dir = learned_index_dir(root)

    def check():
        if kind == "postgres":
            from sentinel.memory.store.postgres import PostgresStore

            db = PostgresStore.connect(where, wait=wait, migrate=False)
        else:
            from sentinel.memory.store.sqlite import SQLiteStore

            db = SQLiteStore(where, timeout=wait, quick=True)
        try:
            return db.card_version(project, state.get("version") if state else 0)
        finally:
            db.close()

    store_id, version, changed = answered or within(check, wait, "the store of learned cards")
    if _usable(state, store_id, project, index_dir):
        return changed if state["version"] != version else 0
    if version == 0 and not (index_dir is not None and (index_dir / "meta.json").is_file()):
        return 0
    return max(1, changed)


def _spawn_sync(root: str):
    import subprocess
    import sys

    try:
        return subprocess.Popen([sys.executable, "-m", "sentinel", "memory", "sync", "--cards", "--quiet"], cwd=root,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError:
        return None
