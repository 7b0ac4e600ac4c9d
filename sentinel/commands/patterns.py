"""`sentinel memory patterns` and `sentinel memory forget`: the hypothesis store from the command line."""

from __future__ import annotations

import json
import time

from sentinel.commands.formatopt import add_format_option


def register_into(msub) -> None:
    q = msub.add_parser("patterns", help="recurring failure patterns of this project, with urgency")
    q.add_argument("--limit", type=int, default=20)
    q.add_argument("--project", help="default: the repository's directory name")
    q.add_argument("--config", metavar="PATH")
    add_format_option(q)
    q.set_defaults(func=cmd_patterns)

    q = msub.add_parser("forget", help="delete recorded runs (all, older than N days, or one signature)")
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--all", action="store_true", help="every run of the project")
    g.add_argument("--older-than", type=float, metavar="DAYS", help="runs older than DAYS")
    g.add_argument("--signature", metavar="SIG_ID", help="one pattern (its id from `memory patterns`)")
    q.add_argument("--project", help="default: the repository's directory name")
    q.add_argument("--config", metavar="PATH")
    q.set_defaults(func=cmd_forget)


def _store(args):
    import os

    from sentinel import gitio
    from sentinel.api import cache_dir_for
    from sentinel.config import load_config
    from sentinel.errors import GitError
    from sentinel.memory.store import open_store

    try:
        root = gitio.repo_root()
    except GitError:
        root = None
    cfg = load_config(root, args.config, cache_dir=cache_dir_for(root))
    git_dir = gitio.git_dir(root) if root else None
    project = args.project or os.environ.get("SENTINEL_PROJECT") or (os.path.basename(root) if root else "default")
    return open_store(cfg.memory, git_dir), project


def cmd_patterns(args) -> int:
    store, project = _store(args)
    try:
        pats = store.patterns(project, limit=max(1, args.limit))
    finally:
        store.close()
    if args.json:
        print(json.dumps([{"id": p.sig_id, "rule": p.rule, "urgency": p.urgency, "count": p.count,
                           "changes": p.changes, "signature": p.signature, "last_seen": p.last_seen,
                           "last_resolution": p.last_resolution} for p in pats], indent=2))
        return 0
    if not pats:
        print(f"no recorded failures for project {project!r}")
        return 0
    for p in pats:
        seen = time.strftime("%Y-%m-%d", time.localtime(p.last_seen))
        print(f"[{p.urgency:8}] {p.rule}  seen {p.count}x in {p.changes} change(s), last {seen}  id {p.sig_id}")
        print(f"           {p.signature.split('|', 1)[-1][:150]}")
        if p.last_resolution:
            print(f"           resolved before in {p.last_resolution}")
    return 0


def cmd_forget(args) -> int:
    store, project = _store(args)
    try:
        if args.signature:
            n = store.forget(sig_id=args.signature)
            what = f"{n} finding record(s) of pattern {args.signature}"
        else:
            n = store.forget(project=project, older_than_days=args.older_than)
            what = f"{n} run(s) of project {project!r}"
    finally:
        store.close()
    print(f"sentinel: forgot {what}")
    return 0
