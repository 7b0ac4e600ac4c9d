"""`sentinel memory learn`: learn governed cards from this project's history (or GitHub, or fix records)."""

from __future__ import annotations

import json
import os
import re
import sys
import time

from sentinel.errors import InputError


def register_into(msub, common) -> None:
    q = msub.add_parser("learn", help="learn cards of past fixes from this project's history (governance pipeline)")
    src = q.add_argument_group("sources (default: the local git history)")
    src.add_argument("--github", action="append", metavar="OWNER/NAME",
                     help="closed issues linked to merged PRs of a GitHub repository (repeatable; token from "
                          "$GITHUB_TOKEN, API from $GITHUB_API_URL)")
    src.add_argument("--records", action="append", metavar="FILE",
                     help="fix records (JSONL, one bug-fix record per line) instead of the git history")
    src.add_argument("--rev", default="HEAD", help="history to learn from (default HEAD)")
    src.add_argument("--since", help="only commits after this date (git --since)")
    src.add_argument("--until", help="only commits before this date (git --until): a time split")
    src.add_argument("--max-commits", type=int, help="at most this many of the newest commits")
    src.add_argument("--max-prs", type=int, default=200, help="GitHub: pull requests read per repository "
                                                             "(default 200)")
    src.add_argument("--min-repo-score", type=float, default=0.0,
                     help="GitHub: skip repositories whose selection score is below this (default 0)")
    q.add_argument("--repo-name", metavar="OWNER/NAME",
                   help="repository named in provenance (default: from the origin remote, else the directory)")
    q.add_argument("--tau", type=float, help="purification threshold: relevance of the problem text to the "
                                             "changed code (default: memory.learn-tau, 0.2)")
    q.add_argument("--llm", metavar="MODEL", help="standardise with this model through litellm (default: the "
                                                  "deterministic offline standardiser)")
    q.add_argument("--api-base", help="--llm: the API base URL (e.g. a local OpenAI-compatible server)")
    q.add_argument("--license", help="license of the learned material (recorded in provenance)")
    q.add_argument("--card-source", choices=("learned", "fixrecord"), default=None,
                   help="provenance.source of the cards (default: learned; fixrecord for --records into --out)")
    q.add_argument("--out", metavar="FILE",
                   help="write the cards to this JSONL file instead of the project's learned store")
    q.add_argument("--no-index", action="store_true", help="do not rebuild the project's learned index")
    q.add_argument("--progress", action="store_true", help="progress lines on stderr (default: when a terminal)")
    from sentinel.commands.formatopt import add_format_option

    add_format_option(q)
    common(q, index=False)
    q.set_defaults(func=cmd_learn)


def _repository_name(root: str) -> str:
    from sentinel.memory.learn.gitsource import _git

    from sentinel.errors import GitError

    try:
        url = _git(root, ["config", "--get", "remote.origin.url"]).decode().strip()
    except GitError:  # no origin remote: the directory name stands in
        url = ""
    m = re.search(r"[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", url)
    return m.group(1) if m else os.path.basename(os.path.abspath(root))


def _report(res, source: str, standardiser: str, args, extra: list[str] | None = None) -> dict:
    from sentinel.memory.learn.pipeline import stage_line

    data = {"source": source, "standardiser": standardiser, "counts": res.counts, "seconds": round(res.seconds, 2),
            "cost": res.cost}
    if not args.json:
        for line in extra or []:
            print(line)
        print(f"{source}: {stage_line(res.counts)}")
        dropped = res.counts.get("dropped") or {}
        if dropped:
            print("  dropped by purification: " + "; ".join(f"{v} {k}" for k, v in sorted(
                dropped.items(), key=lambda kv: -kv[1])))
        failed = res.counts.get("qc_failed") or {}
        if failed:
            print("  failed QC after refining: " + "; ".join(f"{k} ({v})" for k, v in sorted(
                failed.items(), key=lambda kv: -kv[1])))
        if standardiser.startswith("llm:"):
            cost = "unknown (no price for this model)" if res.cost is None else f"${res.cost:.4f}"
            print(f"  standardiser {standardiser}: cost {cost}")
    return data


def cmd_learn(args) -> int:
    from sentinel.commands.context import project_config as _config
    from sentinel.commands.context import repo_root as _root
    from sentinel.memory.learn import pipeline

    root = _root()
    cfg = _config(args, root)
    tau = args.tau if args.tau is not None else float(getattr(cfg.memory, "learn_tau", 0.2))
    if not 0.0 <= tau <= 1.0:
        raise InputError(f"--tau must be between 0 and 1, not {tau}")
    llm = None
    if args.llm:
        from sentinel.memory.learn.llm import LLMStandardiser

        llm = LLMStandardiser(args.llm, api_base=args.api_base)
    standardiser = llm.name if llm else "deterministic"
    card_source = args.card_source or ("fixrecord" if args.records and args.out else "learned")
    if card_source == "fixrecord" and not args.license:
        raise InputError("--card-source fixrecord needs --license (the license of the records)")
    show_progress = args.progress or (sys.stderr.isatty() and not args.json)
    progress = pipeline.Progress(show_progress)
    opts = pipeline.Options(tau=tau, card_source=card_source, llm=llm, progress=progress)

    store = None
    if not args.out:
        if root is None:
            raise InputError("sentinel memory learn: not in a git repository (use --out FILE to write cards "
                             "elsewhere)")
        from sentinel import gitio
        from sentinel.memory.store.backends import open_learned_store

        store = open_learned_store(cfg.memory, gitio.git_dir(root))
    reports = []
    all_new: list[dict] = []
    try:
        existing = list(store.cards()) if store is not None else []
        for source, cands, extra, on_done, source_counts in _sources(args, root, store, progress):
            started = time.time()
            res = pipeline.run(cands, opts, existing=existing, source_counts=source_counts)
            progress(f"{source}: {res.counts['candidates']} candidates read, {res.counts['cards']} new cards",
                     force=True)
            on_done()
            if llm is not None:
                from sentinel.memory.learn.llm import strip

                res.cards = [strip(c) for c in res.cards]
            reports.append(_report(res, source, standardiser, args, extra))
            all_new += res.cards
            existing += res.cards
            if store is not None:
                from sentinel.memory.store.learned import LearnRun

                store.put(res.cards + res.updated)
                store.record_run(LearnRun(source=source, standardiser=standardiser, counts=res.counts,
                                          started_at=started, finished_at=time.time(), cost=res.cost))
        if args.out:
            from pathlib import Path

            from sentinel.memory.cards.corpus import write_governed

            write_governed(sorted(all_new, key=lambda c: c["id"]), Path(args.out))
            if not args.json:
                print(f"wrote {len(all_new)} cards to {args.out}")
        elif store is not None:
            rebuilt = None
            if not args.no_index:  # this clone's cache of the store's cards (the team's, on a team database)
                from sentinel.memory.learn.cache import sync

                synced = sync(root, cfg, cards=store)
                rebuilt = synced if synced.rebuilt else None
            if not args.json:
                total = store.count()
                print(f"learned cards: {total} in {getattr(store, 'path', 'the store')}"
                      + (f"; index rebuilt ({rebuilt.cards} cards)" if rebuilt else ""))
    finally:
        if store is not None:
            store.close()
    if args.json:
        print(json.dumps({"runs": reports, "written": len(all_new)}, indent=2))
    return 0


def _sources(args, root, store, progress):
    """(source name, candidates iterable, lines to print first, callback when the source is done)."""
    if args.records:
        from sentinel.memory.learn.records import read_records

        for path in args.records:
            key = f"records:{os.path.basename(path)}"
            seen = store.seen(key) if store is not None else set()
            taken: list[str] = []

            def gen(path=path, seen=seen, taken=taken):
                for cand in read_records(path, license=args.license):
                    if cand.key in seen:
                        continue
                    taken.append(cand.key)
                    yield cand

            yield key, gen(), [], (lambda key=key, taken=taken: store.mark_seen(key, taken) if store else None), {}
        return
    if args.github:
        from sentinel.memory.learn import github_source as ghs

        gh = ghs.client()
        names = list(dict.fromkeys(args.github))
        lines: list[str] = []
        if len(names) > 1:
            scores = sorted((ghs.score_repository(gh, n) for n in names), key=lambda s: (-s.score, s.name))
            lines = [s.line() for s in scores]
            names = []
            for s in scores:
                if s.score >= args.min_repo_score:
                    names.append(s.name)
                else:
                    lines.append(f"{s.name}: skipped (selection score {s.score:.2f} < {args.min_repo_score:g})")
        for name in names:
            key = f"github:{name}"
            seen = store.seen(key) if store is not None else set()
            before = set(seen)
            counts: dict = {}
            cands = ghs.candidates(gh, name, max_prs=args.max_prs, seen=seen, counts=counts, progress=progress)
            yield key, cands, lines, (lambda key=key, seen=seen, before=before:
                                      store.mark_seen(key, seen - before) if store else None), counts
            lines = []
        return
    from sentinel.memory.learn import gitsource

    repository = args.repo_name or _repository_name(root)
    key = f"git:{repository}"
    seen = store.seen(key) if store is not None else set()
    counts: dict = {}
    listed: list[str] = []
    commits = gitsource.list_commits(root, rev=args.rev, since=args.since, until=args.until,
                                     max_commits=args.max_commits, exclude=seen)
    listed += [c.sha for c in commits]

    def prog(stage, i, n):
        progress(f"{stage}: {i}/{n} candidate commits read")

    cands = gitsource.candidates_of(root, repository, commits, counts=counts, progress=prog)
    lines = [f"{len(commits)} new commit(s) in the history of {repository}"
             + (f" ({len(seen)} learned before)" if seen else "")]
    yield key, cands, lines, (lambda: store.mark_seen(key, listed) if store else None), counts
