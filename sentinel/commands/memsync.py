"""`sentinel memory sync`: send the runs the outbox holds to the store, and bring this clone's cache of the
learned cards up to the store's version (sentinel.memory.store.outbox, sentinel.memory.learn.cache)."""

from __future__ import annotations

import json
import os

from sentinel.errors import InputError, SentinelError


def register_into(msub, common) -> None:
    from sentinel.argparsing import non_negative_float

    q = msub.add_parser("sync", help="send the runs queued while the store was away, and refresh this clone's "
                                     "cache of the learned cards",
                        description="Sends the runs the outbox holds (queued when the store did not answer in "
                                    "time), oldest first, then brings the cache of the project's learned cards "
                                    "(what search and recall read) up to the store's version. Exit 1 when runs "
                                    "are still queued or the store cannot be reached.")
    part = q.add_mutually_exclusive_group()
    part.add_argument("--runs", action="store_true", help="only send the queued runs")
    part.add_argument("--cards", action="store_true", help="only refresh the learned cards' cache")
    q.add_argument("--whole", action="store_true", help="fetch every learned card again, not only what changed")
    q.add_argument("--wait", type=non_negative_float, default=30.0, metavar="SECONDS",
                   help="how long the store may take to answer (default 30)")
    q.add_argument("--database-url", metavar="URL", help="the store (default: $SENTINEL_DATABASE_URL, "
                                                         "memory.database-url, else the clone's SQLite file)")
    q.add_argument("--quiet", action="store_true", help="print nothing (the exit code says how it went)")
    from sentinel.commands.formatopt import add_format_option

    add_format_option(q)
    common(q, index=False)
    q.set_defaults(func=cmd_sync)


def _context(args):
    from sentinel import gitio
    from sentinel.commands.context import project_config, repo_root

    root = repo_root()
    if root is None:
        raise InputError("sentinel memory sync: not in a git repository")
    cfg = project_config(args, root)
    if getattr(args, "database_url", None):
        os.environ.pop("SENTINEL_DATABASE_URL", None)
        cfg.memory.database_url = args.database_url
    return cfg, root, gitio.git_dir(root)


def send_queued(cfg, git_dir: str, wait: float) -> dict:
    """Send the outbox's runs for the configured store: {sent, known, left, damaged, error, store}."""
    from sentinel.memory.store import outbox
    from sentinel.memory.store.backends import open_store

    out = {"sent": 0, "known": 0, "left": 0, "damaged": 0, "error": None, "store": None}
    key = outbox.store_key(cfg.memory, git_dir)
    if not outbox.entries(git_dir, key):
        return out
    try:
        store = open_store(cfg.memory, git_dir, wait=wait)
    except SentinelError as exc:
        out.update(error=str(exc), left=outbox.pending(git_dir)["by_store"].get(key, 0))
        return out
    try:
        from sentinel.memory.store.project import project_identity, root_of

        project = project_identity(cfg.memory, root_of(git_dir), git_dir)
        out.update(outbox.flush(store, git_dir, key, project=project).to_json(), store=store.describe())
    finally:
        store.close()
    out["left"] = outbox.pending(git_dir)["by_store"].get(key, 0)
    return out


def cmd_sync(args) -> int:
    cfg, root, git_dir = _context(args)
    report: dict = {}
    status = 0
    if not args.cards:
        runs = send_queued(cfg, git_dir, args.wait)
        report["runs"] = runs
        status = 1 if runs["left"] or runs["error"] else 0
    if not args.runs:
        from sentinel.memory.learn.cache import sync

        try:
            report["cards"] = sync(root, cfg, whole=args.whole, wait=args.wait).to_json()
        except SentinelError as exc:
            report["cards"] = {"error": str(exc)}
            status = 1
    if args.quiet:
        return status
    if args.json:
        print(json.dumps(report, indent=2))
        return status
    runs = report.get("runs")
    if runs is not None:
        if runs["error"]:
            print(f"queued runs: {runs['left']} still wait: {runs['error']}")
        elif runs["sent"] or runs["known"] or runs["left"]:
            print(f"queued runs: sent {runs['sent'] + runs['known']} to {runs['store']}"
                  + (f" ({runs['known']} it had already)" if runs["known"] else "")
                  + (f"; {runs['left']} still wait" if runs["left"] else ""))
        else:
            print("queued runs: none")
        if runs["damaged"]:
            print(f"  {runs['damaged']} unreadable outbox entries set aside (*.damaged)")
    cards = report.get("cards")
    if cards is not None:
        if "error" in cards:
            print(f"learned cards: the cache was not refreshed: {cards['error']}")
        elif cards["rebuilt"]:
            how = "every card" if cards["whole"] else f"{cards['fetched']} changed, {cards['removed']} removed"
            print(f"learned cards: {cards['cards']} cached at version {cards['version']} of {cards['store']} "
                  f"({how}); index rebuilt")
        else:
            print(f"learned cards: the cache is up to date ({cards['cards']} cards, version {cards['version']} "
                  f"of {cards['store']})")
    return status
