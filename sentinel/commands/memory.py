"""`sentinel memory ...`: search, show, stats, build-index, validate, import. Heavy imports stay in handlers."""

from __future__ import annotations

import json
import os
import sys
import time

from sentinel.commands.context import project_config as _config
from sentinel.commands.context import repo_root as _root
from sentinel.commands.formatopt import add_format_option
from sentinel.errors import InputError

DEFAULT_IMPORT_DIR = os.path.join(".sentinel", "cards")


def register(sub) -> None:
    from sentinel.argparsing import nonempty_text, positive_int

    p = sub.add_parser("memory", help="experience memory: search and browse governed cards of past fixes")
    msub = p.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    def common(q, index=True):
        q.add_argument("--config", metavar="PATH", help="config file (default: .sentinel.toml or [tool.sentinel])")
        if index:
            q.add_argument("--index", metavar="DIR", help="index directory (default: the project's build, else "
                                                          "the index shipped with Sentinel)")

    q = msub.add_parser("search", help="find cards whose symptoms match a description")
    q.add_argument("query", type=nonempty_text, help="symptoms, error text, what went wrong")
    q.add_argument("-k", type=positive_int, default=10, help="number of results (default 10)")
    q.add_argument("--language", help="only cards of this language")
    q.add_argument("--tag", help="only cards with this component, exception or rule tag")
    q.add_argument("--rule", help="only cards linked to this Sentinel rule code")
    q.add_argument("--min-score", type=float, default=None,
                   help="hide hits whose calibrated score is below this (default: memory.min-score, 0.35, for "
                        "other projects' fixes, memory.project-min-score, 0.25, for the project's own; 0 shows "
                        "every candidate)")
    add_format_option(q)
    common(q)
    q.set_defaults(func=cmd_search)

    q = msub.add_parser("show", help="the whole card: root cause, fix strategy, patch digest, verification")
    q.add_argument("id")
    add_format_option(q)
    common(q)
    q.set_defaults(func=cmd_show)

    q = msub.add_parser("stats", help="cards by source, index model, build date, dims")
    add_format_option(q)
    common(q)
    q.set_defaults(func=cmd_stats)

    q = msub.add_parser("build-index", help="check the cards and build the search index")
    q.add_argument("--cards", action="append", metavar="PATH",
                   help="card file or directory (repeatable; default: memory/cards or the shipped cards)")
    q.add_argument("--out", metavar="DIR", help="where to write the index (default: the package's index in a "
                                                "Sentinel checkout, else <git-dir>/sentinel/memory-index)")
    q.add_argument("--lexical-only", action="store_true", help="no vectors (BM25 only)")
    q.add_argument("--check", action="store_true",
                   help="do not write: exit 1 if the existing index is out of date with the cards")
    common(q, index=False)
    add_format_option(q)
    q.set_defaults(func=cmd_build)

    q = msub.add_parser("validate", help="run the card checklist; exit 1 if any card is invalid")
    q.add_argument("files", nargs="*", metavar="FILE", help="card files or directories (default: the corpus "
                                                            "+ extra-cards)")
    add_format_option(q)
    common(q, index=False)
    q.set_defaults(func=cmd_validate)

    q = msub.add_parser("import", help="import cards (MemGovern release or JSONL) as governed JSONL, or a "
                                       "`memory export` into the configured store")
    q.add_argument("file")
    q.add_argument("--database-url", metavar="URL", help="for a `memory export`: the store to import into "
                                                         "(default: $SENTINEL_DATABASE_URL, memory.database-url, "
                                                         "else the clone's SQLite file)")
    q.add_argument("--input-format", choices=("memgovern", "jsonl"), default=None,
                   help="what FILE holds: a MemGovern release or card JSONL (default: by extension, .jsonl -> "
                        "jsonl; a `memory export` is recognised by its header)")
    q.add_argument("--into", metavar="DIR", default=None,
                   help=f"directory for the governed JSONL (default: {DEFAULT_IMPORT_DIR} in the project)")
    q.add_argument("--license", help="license of the imported material (recorded in provenance)")
    q.add_argument("--governed-by", default="imported", help="who reviewed the import (quality.governed_by)")
    add_format_option(q, help="what it prints (cards written, or what the store gained): text or json "
                              "(default: text)",
                      legacy={v: ("input_format", v, f"`memory import --format {v}` is now "
                                                     f"`--input-format {v}` (--format names what is printed)")
                              for v in ("memgovern", "jsonl")})
    common(q, index=False)
    q.set_defaults(func=cmd_import)

    from sentinel.commands.learn import register_into as register_learn
    from sentinel.commands.memsync import register_into as register_sync
    from sentinel.commands.patterns import register_into

    register_learn(msub, common)
    register_sync(msub, common)
    register_into(msub)


def _index(args, root):
    from sentinel.memory.cards.index import IndexMissing, load_index

    try:
        return load_index(getattr(args, "index", None), root=root)
    except IndexMissing as exc:
        raise InputError(str(exc)) from None


def _print_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _refresh_learned(args, root, cfg) -> str | None:
    """Bring the learned cards' cache up to the store before reading it; a note when that could not be done."""
    if root is None or getattr(args, "index", None):
        return None
    from sentinel.memory.learn.cache import refresh

    return refresh(root, cfg)


def cmd_search(args) -> int:
    from sentinel.memory.retrieval.search import search_memory

    root = _root()
    cfg = _config(args, root)
    idx = _index(args, root)
    stale = _refresh_learned(args, root, cfg)
    if args.min_score is not None and not 0.0 <= args.min_score <= 1.0:
        raise InputError(f"--min-score must be between 0 and 1, not {args.min_score}")
    results = search_memory(args.query, k=args.k, language=args.language, tag=args.tag, rule=args.rule,
                            config=cfg, index=idx, root=None if getattr(args, "index", None) else root,
                            min_score=args.min_score)
    if stale:
        results.note = "; ".join(n for n in (results.note, stale) if n)
    if args.json:
        _print_json({"query": args.query, **results.to_json()})
        return 0
    head = f"mode: {results.mode}" + (f" ({results.model})" if results.model else "")
    print(head)
    if results.note:
        print(f"note: {results.note}")
    if not results:
        print("no similar past fix (nothing cleared memory.min-score / memory.project-min-score; --min-score 0 "
              "shows weaker matches)")
    for n, hit in enumerate(results, 1):
        print(f"{n:2d}. {hit.score:.2f}  {hit.id}  [{hit.source}, {hit.language}]")
        print(f"    {hit.problem_summary}")
        print(f"    signals: {'; '.join(hit.top_signals)}")
        if hit.matched:
            print("    matched: " + "; ".join(f"{k} {', '.join(v)}" for k, v in hit.matched.items()))
        where = " ".join(x for x in (hit.provenance.get("repository"), (hit.provenance.get("commit") or "")[:12],
                                     hit.provenance.get("url")) if x)
        if where:
            print(f"    from: {where}")
    return 0


def cmd_show(args) -> int:
    from sentinel.memory.cards.index import learned_index
    from sentinel.memory.retrieval.search import show

    root = _root()
    card = show(args.id, index=_index(args, root))
    if card is None and not getattr(args, "index", None):
        _refresh_learned(args, root, _config(args, root))
        project = learned_index(root)
        card = show(args.id, index=project) if project is not None else None
    if card is None:
        print(f"sentinel: no card with id {args.id!r} (try: sentinel memory search ...)", file=sys.stderr)
        return 1
    if args.json:
        _print_json(card)
        return 0
    from sentinel.redact import display_text

    # cards quote commit text and code: nothing a terminal would act on (escapes, bidi overrides) is shown raw
    print(display_text(render_card(card), multiline=True))
    return 0


def render_card(card: dict) -> str:
    tags = card.get("tags", {})
    digest = card.get("patch_digest", {})
    ver = card.get("verification", {})
    prov = card.get("provenance", {})
    lines = [card["id"], "=" * len(card["id"]), card.get("problem_summary", ""), ""]
    lines.append(f"language: {tags.get('language', '')}   components: {', '.join(tags.get('components', []))}")
    if tags.get("exceptions"):
        lines.append(f"exceptions: {', '.join(tags['exceptions'])}")
    if tags.get("rules"):
        lines.append(f"rules: {', '.join(tags['rules'])}")
    if tags.get("mechanisms"):
        lines.append(f"mechanisms: {', '.join(tags['mechanisms'])}")
    if tags.get("identifiers"):
        lines.append(f"identifiers: {', '.join(tags['identifiers'])}")
    lines.append(f"signals: {'; '.join(card.get('signals', []))}")
    lines += ["", "Root cause", "----------", card.get("root_cause", ""), "",
              "Fix strategy", "------------", card.get("fix_strategy", ""), "", "Patch digest", "------------"]
    for area in digest.get("areas", []):
        lines.append(f"  area: {area}")
    for chunk in digest.get("chunks", []):
        lines.append(f"  - {chunk.get('what', '')}  (why: {chunk.get('why', '')})")
    for change in digest.get("changes", []):
        lines.append(f"  change: {change.get('kind', '')} in {change.get('symbol', '')}: {change.get('detail', '')}")
    excerpt = digest.get("excerpt") or {}
    if excerpt:
        where = excerpt.get("file", "") + (f"::{excerpt['symbol']}" if excerpt.get("symbol") else "")
        lines.append(f"  excerpt ({where}):")
        for side in ("before", "after"):
            code = excerpt.get(side) or ""
            lines += [f"    {side}:"] + [f"      {ln}" for ln in (code.splitlines() or ["(nothing)"])]
    if tags.get("symbols"):
        lines.append(f"  symbols: {', '.join(tags['symbols'])}")
    lines += ["", "Verification", "------------", f"  reproduction: {ver.get('reproduction', '')}"]
    reg = ver.get("regression_test") or {}
    if reg:
        lines.append(f"  regression test: {reg.get('name', '')}" + (f" ({reg['file']})" if reg.get("file") else ""))
        if reg.get("assertion"):
            lines.append(f"    pins: {reg['assertion']}")
    lines += [f"  test: {t}" for t in ver.get("tests_added", [])]
    lines += [f"  edge case: {e}" for e in ver.get("edge_cases", [])]
    src = prov.get("source", "")
    where = " ".join(x for x in (prov.get("repository"), prov.get("commit", "")[:12], prov.get("license")) if x)
    lines += ["", f"provenance: {src} {where}".rstrip()]
    if prov.get("date"):
        lines.append(f"  date: {prov['date']}")
    lines += [f"  reference: {r}" for r in prov.get("references", [])]
    quality = card.get("quality", {})
    if quality.get("confidence") is not None:
        lines.append(f"confidence: {quality['confidence']:.2f} ({quality.get('standardiser', '')})")
    return "\n".join(lines)


def _learned_stats(root, cfg) -> dict | None:
    """The project's learned memory: cards in the store, the last runs' stage counts, the clone's cache of them
    and the runs queued for the store (None outside a repository)."""
    if root is None:
        return None
    from sentinel import gitio
    from sentinel.errors import SentinelError
    from sentinel.memory.store import outbox
    from sentinel.memory.learn.cache import read_state, status

    try:
        git_dir = gitio.git_dir(root)
    except SentinelError:  # no git dir: nothing learned to show
        return None
    out: dict = {"outbox": outbox.pending(git_dir)}
    try:
        from sentinel.memory.store.backends import open_learned_store
        from sentinel.memory.learn.cache import store_exists

        if not store_exists(cfg, git_dir):
            out.update(path=None, cards=0, runs=[], cache={})
            return out
        with open_learned_store(cfg.memory, git_dir) as store:
            out.update(path=store.path, cards=store.count(), runs=[r.to_json() for r in store.runs(10)],
                       cache=status(root, store))
            indexes = getattr(store.db, "vector_indexes", None)  # PostgreSQL: the HNSW layout of each dimension
            if indexes:
                out["vector_indexes"] = [{"dim": dim, **layout} for dim, layout in indexes().items()]
    except SentinelError as exc:
        state = read_state(os.path.join(git_dir, "sentinel")) or {}
        out.update(path=None, cards=None, runs=[], error=str(exc),
                   cache={"cached_version": state.get("version"), "cached_cards": state.get("cards")})
    return out


def cmd_stats(args) -> int:
    from sentinel.memory.retrieval.search import stats

    root = _root()
    data = stats(index=_index(args, root))
    data["learned"] = _learned_stats(root, _config(args, root))
    if args.json:
        _print_json(data)
        return 0
    by_source = ", ".join(f"{k}: {v}" for k, v in data["by_source"].items()) or "none"
    print(f"index: {data['path']}")
    print(f"cards: {data['count']} ({by_source})")
    print(f"languages: {', '.join(f'{k}: {v}' for k, v in data['by_language'].items()) or 'none'}")
    print(f"model: {data['model'] or 'none (lexical only)'}" + (f", {data['dim']} dims" if data["dim"] else ""))
    print(f"built: {data['built_at']}")
    print(f"vocabulary: {data['vocab_size']} terms")
    learned = data.get("learned")
    if learned is not None:
        _print_learned(learned)
    return 0


def _vector_layout(index: dict) -> str:
    from sentinel.commands.patterns import graphs
    from sentinel.memory.store.postgres import HNSW_EF_CONSTRUCTION, HNSW_M

    now = "one HNSW graph" if index["shards"] == 1 else f"{index['shards']} HNSW shards"
    line = f"{now}, m={index['m']}, ef_construction={index['ef_construction']}"
    if index["current"]:
        return line
    each = index["cards"] // index["shards"]
    why = ("an earlier version's graph" if (index["m"], index["ef_construction"]) != (HNSW_M, HNSW_EF_CONSTRUCTION)
           else f"grown past what one graph searches well ({each} cards each)" if index["wanted_shards"] > index["shards"]
           else f"more shards than its cards need ({each} cards each)")
    return (f"{line} ({why}: `sentinel memory migrate` rebuilds it as {graphs(index['wanted_shards'])} for this "
            "version's recall)")


def _print_learned(learned: dict) -> None:
    cache = learned.get("cache") or {}
    if learned.get("error"):
        print(f"learned (this project): the store cannot be read: {learned['error']}")
    else:
        print(f"learned (this project): {learned['cards']} cards" + (f" in {learned['path']}" if learned["path"]
                                                                      else ""))
    if cache.get("cached_version") is not None:
        behind = cache.get("behind")
        state = ("up to date" if behind == 0 else f"{behind} change(s) behind: `sentinel memory sync` fetches them"
                 if behind else "not compared with the store")
        print(f"  this clone's cache: {cache.get('cached_cards')} cards at version {cache['cached_version']} "
              f"({state})")
    for index in learned.get("vector_indexes", []):
        cards = f"{index['cards']} card" + ("" if index["cards"] == 1 else "s")
        print(f"  vector index ({index['dim']} dims, {cards}): " + _vector_layout(index))
    from sentinel.memory.learn.pipeline import stage_line

    for run in learned.get("runs", [])[:5]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.get("finished_at") or 0))
        print(f"  {when} {run['source']} [{run['standardiser']}]: {stage_line(run['counts'])}")
    queued = learned["outbox"]
    if queued["runs"] or queued["damaged"]:
        oldest = time.strftime("%Y-%m-%d %H:%M", time.localtime(queued["oldest"])) if queued["oldest"] else "?"
        print(f"queued runs (outbox): {queued['runs']} waiting for the store since {oldest}"
              + (f", {queued['damaged']} unreadable" if queued["damaged"] else "")
              + "; `sentinel memory sync` sends them")
    else:
        print("queued runs (outbox): none")


def cmd_build(args) -> int:
    root = _root()
    cfg = _config(args, root)
    if args.check:
        return _build_check(args, cfg, root)
    from sentinel.memory.cards.build import build

    report = build(cfg, root=root, cards=args.cards, out=args.out, lexical_only=args.lexical_only)
    for where, card_id, problems in report.skipped:
        print(f"skipped {where} {card_id or '(no id)'}: {'; '.join(problems)}", file=sys.stderr)
    if report.note:
        print(f"note: {report.note}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps({"path": str(report.path), "cards": report.count, "skipped": len(report.skipped),
                          "model": report.model, "seconds": round(report.seconds, 3)}))
    else:
        print(f"indexed {report.count} cards ({len(report.skipped)} invalid skipped) into {report.path} "
              f"[{report.model or 'lexical only'}] in {report.seconds:.1f}s")
    return 0


def _build_check(args, cfg, root) -> int:
    from sentinel.memory.cards.build import corpus_digest
    from sentinel.memory.cards.corpus import corpus_files, load_entries
    from sentinel.memory.cards.index import IndexMissing, load_index

    entries = load_entries(corpus_files(cfg, root=root, cards=args.cards))
    digest = corpus_digest([e.raw for e in entries if e.valid])
    try:
        idx = load_index(args.out, root=root)
    except IndexMissing as exc:
        print(f"sentinel: {exc}", file=sys.stderr)
        return 1
    current = idx.meta.get("digest") == digest
    if args.format == "json":
        print(json.dumps({"path": str(idx.path), "cards": idx.count, "up_to_date": current}))
    elif not current:
        print(f"memory index at {idx.path} is out of date with the cards (run: sentinel memory build-index)")
    else:
        print(f"memory index at {idx.path} is up to date ({idx.count} cards)")
    return 0 if current else 1


def cmd_validate(args) -> int:
    from sentinel.memory.cards.corpus import corpus_files, expand_paths, load_entries

    root = _root()
    if args.files:
        files = expand_paths(args.files, root=os.getcwd())
    else:
        files = corpus_files(_config(args, root), root=root)
    entries = load_entries(files)
    invalid = [e for e in entries if not e.valid]
    if args.json:
        _print_json({"files": [str(f) for f in files], "cards": len(entries), "invalid": len(invalid),
                     "problems": [{"where": e.where, "id": e.card_id, "problems": e.problems} for e in invalid]})
    else:
        for e in invalid:
            for problem in e.problems:
                print(f"{e.where}: {e.card_id or '(no id)'}: {problem}")
        print(f"{len(entries)} cards in {len(files)} files, {len(invalid)} invalid")
    return 1 if invalid else 0


def cmd_import(args) -> int:
    from pathlib import Path

    from sentinel.memory.cards.corpus import import_jsonl, import_memgovern, write_governed
    from sentinel.memory.cards.model import check_corpus

    src = Path(args.file)
    if not src.is_file():
        raise InputError(f"no such file: {src}")
    from sentinel.commands import patterns

    if patterns.is_export(str(src)):
        return patterns.cmd_import_export(args)
    fmt = args.input_format or ("jsonl" if src.suffix == ".jsonl" else "memgovern")
    if fmt == "memgovern":
        cards = import_memgovern(src, license=args.license, governed_by=args.governed_by)
    else:
        cards = import_jsonl(src)
        if args.license:
            for c in cards:
                if isinstance(c, dict) and isinstance(c.get("provenance"), dict):
                    c["provenance"].setdefault("license", args.license)
    problems = check_corpus(cards)
    good = [c for c, p in zip(cards, problems) if not p]
    bad = [(c, p) for c, p in zip(cards, problems) if p]
    root = _root()
    into = Path(args.into) if args.into else Path(root or os.getcwd()) / DEFAULT_IMPORT_DIR
    out = into / f"{src.stem}.jsonl"
    if good:
        write_governed(good, out)
    if args.json:
        _print_json({"written": len(good), "path": str(out) if good else None, "invalid": [
            {"id": c.get("id") if isinstance(c, dict) else None, "problems": p} for c, p in bad]})
    else:
        for c, p in bad:
            print(f"invalid {c.get('id') if isinstance(c, dict) else '?'}: {'; '.join(p)}", file=sys.stderr)
        if good:
            rel = os.path.relpath(into, root) if root else str(into)
            print(f"wrote {len(good)} governed cards to {out}; {len(bad)} invalid skipped")
            print(f'add to your config: [tool.sentinel.memory] extra-cards = ["{rel}"], then run: '
                  "sentinel memory build-index")
        else:
            print(f"no valid card in {src}; {len(bad)} invalid")
    return 1 if bad else 0
