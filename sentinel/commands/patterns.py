"""The hypothesis store from the command line: `sentinel memory patterns | brief | forget | migrate | export`
(and the store side of `memory import`)."""

from __future__ import annotations

import json
import os
import sys
import time

from sentinel.commands.formatopt import add_format_option
from sentinel.errors import InputError

EXPORT_MARK = '"format": "sentinel-memory-export"'


def register_into(msub) -> None:
    from sentinel.argparsing import non_negative_float, output_file, positive_int

    def common(q, project: bool = True) -> None:
        if project:
            q.add_argument("--project", help="default: the normalised URL of the clone's remote "
                                             "(memory.project / $SENTINEL_PROJECT override it)")
        q.add_argument("--config", metavar="PATH")
        q.add_argument("--database-url", metavar="URL",
                       help="the store to use (default: $SENTINEL_DATABASE_URL, memory.database-url, else the "
                            "clone's SQLite file); sqlite:///PATH or postgresql://...")

    q = msub.add_parser("patterns", help="recurring failure patterns of this project, with urgency and examples, "
                                         "and the earlier failed attempts at this change")
    q.add_argument("--limit", type=positive_int, default=20)
    q.add_argument("--change", metavar="REF", help="whose earlier attempts to list: a PR (pr-12) or a branch "
                                                   "(default: the work in progress on the current branch)")
    add_format_option(q)
    common(q)
    q.set_defaults(func=cmd_patterns)

    q = msub.add_parser("brief", help="before the next attempt: this change's failed attempts, the project's "
                                      "recurring patterns, similar past fixes")
    add_format_option(q, choices=("text", "markdown", "json"))
    q.add_argument("--change", metavar="REF", help="another change: a PR (pr-12) or a branch (default: the work "
                                                   "in progress on the current branch, as the hook records it)")
    q.add_argument("--no-cards", action="store_true", help="skip the similar-fix search")
    common(q)
    q.set_defaults(func=cmd_brief)

    q = msub.add_parser("forget", help="delete recorded runs (all, older than N days, or one signature)")
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--all", action="store_true", help="every run of the project")
    g.add_argument("--older-than", type=non_negative_float, metavar="DAYS", help="runs older than DAYS")
    g.add_argument("--signature", metavar="SIG_ID", help="one pattern (its id from `memory patterns`)")
    common(q)
    add_format_option(q)
    q.set_defaults(func=cmd_forget)

    q = msub.add_parser("migrate", help="bring the store's schema to this version (versioned migrations; on "
                                         "PostgreSQL, also an HNSW index built by an earlier version)")
    q.add_argument("--adopt-project", metavar="NAME",
                   help="also move what was recorded and learned under project NAME (e.g. the directory name "
                        "store schemas before 6 used for a clone without a remote) to this clone's project")
    add_format_option(q)
    common(q, project=False)
    q.set_defaults(func=cmd_migrate)

    q = msub.add_parser("export", help="write the project's memory (runs, findings, resolutions, learned cards) "
                                       "as JSON lines, to move it to another backend with `memory import`",
                        description="Writes the store's records as JSON Lines to -o FILE or stdout, then a "
                                    "summary of what was exported (--format text or json).")
    q.add_argument("-o", "--output", metavar="FILE", default="-", type=output_file,
                   help="where the export goes: always JSON Lines, a header record then one record per run, "
                        "resolution and learned card (default: stdout)")
    q.add_argument("--all-projects", action="store_true", help="every project in the store")
    add_format_option(q, help="the summary of what was exported (counts, file): text or json (default: text). "
                              "It goes to stdout when -o names a file, to stderr when the export is on stdout; "
                              "json needs -o FILE so stdout holds one document. Not the export's own format "
                              "(always JSON Lines)")
    common(q)
    q.set_defaults(func=cmd_export)


# --- helpers ------------------------------------------------------------------------------------------------
def _context(args):
    """(config, root, git_dir)"""
    from sentinel import gitio
    from sentinel.api import cache_dir_for
    from sentinel.config import load_config
    from sentinel.errors import GitError

    try:
        root = gitio.repo_root()
    except GitError:
        root = None
    cfg = load_config(root, getattr(args, "config", None), cache_dir=cache_dir_for(root))
    if getattr(args, "database_url", None):
        os.environ.pop("SENTINEL_DATABASE_URL", None)
        cfg.memory.database_url = args.database_url
    git_dir = gitio.git_dir(root) if root else None
    return cfg, root, git_dir


def _store(args, cfg, git_dir):
    from sentinel.memory.store.backends import open_store

    return open_store(cfg.memory, git_dir, wait=10.0)


def _project(args, cfg, root, git_dir) -> str:
    from sentinel.memory.store.project import project_identity

    return getattr(args, "project", None) or project_identity(cfg.memory, root, git_dir)


# --- commands ---------------------------------------------------------------------------------------------
def cmd_patterns(args) -> int:
    from sentinel.memory.hypotheses.gate_hook import current_change
    from sentinel.redact import redact

    cfg, root, git_dir = _context(args)
    project = _project(args, cfg, root, git_dir)
    _, change_id, ref = current_change(root, cfg, args.change)
    with _store(args, cfg, git_dir) as store:
        pats = store.patterns(project, limit=max(1, args.limit), change_ref=ref)
        earlier = store.earlier_attempts(project, change_id)
    for p in pats:  # a store written by a version before sentinel.redact may still hold a secret
        p.signature = redact(p.signature)
        p.last_resolution = redact(p.last_resolution) if p.last_resolution else p.last_resolution
    if args.json:
        print(json.dumps({"project": project, "change": ref, "change_id": change_id,
                          "earlier_attempts": [a.to_json() for a in earlier],
                          "patterns": [p.to_json() for p in pats]}, indent=2))
        return 0
    if not pats and not earlier:
        print(f"no recorded failures for project {project!r}")
        return 0
    from sentinel.memory.hypotheses.signature import mechanism_of
    from sentinel.report.terminal import cut_words

    for p in pats:
        seen = time.strftime("%Y-%m-%d", time.localtime(p.last_seen))
        print(f"[{p.urgency:8}] {p.rule}  in {p.changes} change(s), {p.attempts} attempt(s), last {seen}  "
              f"id {p.sig_id}")
        print(f"           {cut_words(mechanism_of(p.signature), 150)}")
        for e in p.examples:
            where = f"{e.path}:{e.line}" if e.line else e.path
            print(f"           e.g. {e.change}{' ' + e.commit_sha[:10] if e.commit_sha else ''}: {where}"
                  + (f"  {cut_words(redact(e.code), 80)}" if e.code else ""))
            did = [f'"{cut_words(redact(e.subject), 70)}"'] if e.subject else []
            if e.paths:
                more = f" +{e.paths_total - len(e.paths)}" if e.paths_total > len(e.paths) else ""
                did.append("files " + cut_words(", ".join(e.paths), 70) + more)
            if did:
                print(f"                {'; '.join(did)}")
        if p.last_resolution:
            print(f"           resolved before in {p.last_resolution}")
    if earlier:
        print(f"\nearlier failed attempts at this change ({ref}): approaches tried that the gate still failed")
        for n, a in enumerate(earlier, 1):
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(a.created_at))
            what = f' {a.commit_sha[:10]} "{cut_words(redact(a.subject or ""), 60)}"' if a.commit_sha else ""
            print(f"  {n}. {when}{what}")
            for f in [f for f in a.findings if f.blocking][:6]:
                where = f"{f.path}:{f.line}" if f.line else (f.path or "(whole change)")
                tried = f"  {cut_words(redact(f.code), 80)}" if f.code else ""
                print(f"     {f.rule} {where}{tried}")
    return 0


def cmd_brief(args) -> int:
    from sentinel.memory.hypotheses.brief import build_brief

    from sentinel.memory.hypotheses.gate_hook import current_change

    cfg, root, git_dir = _context(args)
    project, change_id, ref = current_change(root, cfg, args.change)
    project = args.project or project
    with _store(args, cfg, git_dir) as store:
        from sentinel.checks import rule_index

        brief = build_brief(store, project, change_id, ref, config=cfg, root=root, with_cards=not args.no_cards,
                            rules=rule_index)
    if args.format == "json":
        print(json.dumps(brief.to_json(), indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        from sentinel.report.markdown import code, escape

        sys.stdout.write(brief.to_markdown(escape, code))
    else:
        sys.stdout.write(brief.to_text())
    return 0


def cmd_forget(args) -> int:
    cfg, root, git_dir = _context(args)
    project = _project(args, cfg, root, git_dir)
    with _store(args, cfg, git_dir) as store:
        if args.signature:
            n = store.forget(project=project, sig_id=args.signature)
            what = f"{n} finding record(s) of pattern {args.signature}"
        else:
            n = store.forget(project=project, older_than_days=args.older_than)
            what = f"{n} run(s) of project {project!r}"
    if args.format == "json":
        import json

        print(json.dumps({"project": project, "forgot": n,
                          "unit": "finding records" if args.signature else "runs"}))
    else:
        print(f"sentinel: forgot {what}")
    return 0


def graphs(shards: int) -> str:
    """A vector layout in words (migrate's and stats' lines)."""
    return "one graph" if shards == 1 else f"{shards} shards"


def cmd_migrate(args) -> int:
    from sentinel.memory.store import SCHEMA_VERSION

    cfg, root, git_dir = _context(args)
    adopted = None
    with _store(args, cfg, git_dir) as store:  # opening applies what is missing
        before = store.migrated_from
        applied = store.migrate()  # nothing left: reports the current version
        rebuild = getattr(store, "rebuild_vector_indexes", None)  # PostgreSQL: graphs not of this version's layout
        rebuilt = rebuild() if rebuild else []
        where = store.describe()
        version = store.schema_version()
        if args.adopt_project:
            project = _project(args, cfg, root, git_dir)
            adopted = {"from": args.adopt_project, "to": project,
                       "runs": store.adopt_project(args.adopt_project, project)}
    if args.json:
        print(json.dumps({"store": where, "from": before if before is not None else version, "to": version,
                          "current": SCHEMA_VERSION, "adopted": adopted, "rebuilt_vector_indexes": rebuilt}))
        return 0
    if before is not None or applied:
        print(f"migrated {where} from schema {before if before is not None else '?'} to {version}")
    else:
        print(f"{where} is at schema {version} (current)")
    if rebuilt:
        from sentinel.memory.store.postgres import HNSW_EF_CONSTRUCTION, HNSW_M

        for r in rebuilt:
            print(f"rebuilt the HNSW index of {r['dim']}-dimension card vectors: {graphs(r['from_shards'])} -> "
                  f"{graphs(r['shards'])}, m={HNSW_M}, ef_construction={HNSW_EF_CONSTRUCTION} (searches kept "
                  "the old one meanwhile)")
    if adopted:
        print(f"moved {adopted['runs']} run(s), with their resolutions and the learned cards, of project "
              f"{adopted['from']!r} to {adopted['to']!r}")
    return 0


def cmd_export(args) -> int:
    to_stdout = args.output == "-"
    if to_stdout and args.format == "json":
        raise InputError("--format json prints the export's summary on stdout, where the export itself goes: "
                         "write the export to a file with -o FILE")
    cfg, root, git_dir = _context(args)
    project = None if args.all_projects else _project(args, cfg, root, git_dir)
    counts = {"run": 0, "finding": 0, "resolution": 0, "card": 0}
    path = args.output
    try:
        fh = sys.stdout if to_stdout else open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with _store(args, cfg, git_dir) as store:
            for rec in store.export_records(project):
                fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
                if rec["type"] in counts:
                    counts[rec["type"]] += 1
                if rec["type"] == "run":
                    counts["finding"] += len(rec.get("findings") or ())
            store_name = store.describe()
    finally:
        if not to_stdout:
            fh.close()
    if args.format == "json":
        print(json.dumps({"path": os.path.abspath(path), "format": "jsonl", "store": store_name, "project": project,
                          "runs": counts["run"], "findings": counts["finding"],
                          "resolutions": counts["resolution"], "cards": counts["card"]}))
        return 0
    what = f"project {project!r}" if project else "every project"
    where = "" if to_stdout else f" to {path}"
    # the export owns stdout when it is written there: the summary is then a note on stderr
    print(f"sentinel: exported {counts['run']} run(s) ({counts['finding']} finding(s)), {counts['resolution']} "
          f"resolution(s) and {counts['card']} learned card(s) of {what}{where}",
          file=sys.stderr if to_stdout else sys.stdout)
    return 0


def is_export(path: str) -> bool:
    """Is this file a `memory export` (rather than cards for `memory import`)?"""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return EXPORT_MARK in first


def cmd_import_export(args) -> int:
    """`sentinel memory import FILE` where FILE is a `memory export`: add it to the configured store."""
    cfg, root, git_dir = _context(args)

    def records():
        with open(args.file, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{args.file}:{n}: not a JSON line: {exc.msg}") from None

    with _store(args, cfg, git_dir) as store:
        added = store.import_records(records())
        where = store.describe()
        layouts = getattr(store, "vector_indexes", None)  # PostgreSQL: a large import may outgrow one graph
        stale = sorted(d for d, v in layouts().items() if not v["current"]) if layouts and added["cards"] else []
    if args.format == "json":
        print(json.dumps({"store": where, "added": added, "vector_indexes_to_rebuild": stale}))
    else:
        print(f"imported into {where}: {added['runs']} run(s), {added['findings']} finding(s), "
              f"{added['resolutions']} resolution(s), {added['cards']} learned card(s) "
              "(records already there were kept)")
        if stale:
            print(f"the vector index of {', '.join(f'{d}-dimension' for d in stale)} cards is no longer the layout "
                  "this version searches best: `sentinel memory migrate` rebuilds it (searches go on meanwhile)")
    return 0
