"""`sentinel recall --log FILE`: similar past fixes for a failing test log or a traceback."""

from __future__ import annotations

import json
import sys

from sentinel.commands.formatopt import add_format_option
from sentinel.errors import InputError


def register(sub) -> None:
    from sentinel.argparsing import positive_int

    p = sub.add_parser("recall", help="similar past fixes for a failing test log or traceback")
    p.add_argument("--log", required=True, metavar="FILE", help="the log or traceback (- for stdin)")
    p.add_argument("-k", type=positive_int, default=5, help="how many fixes (default 5)")
    p.add_argument("--min-score", type=float, default=None,
                   help="hide fixes scored below this (default: memory.min-score, 0.35; the project's own learned "
                        "cards: memory.project-min-score, 0.25)")
    p.add_argument("--config", metavar="PATH", help="config file (default: .sentinel.toml or [tool.sentinel])")
    add_format_option(p)
    p.set_defaults(func=cmd_recall)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", "replace")
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError as exc:
        raise InputError(f"cannot read log {path!r}: {exc.strerror}") from None


def log_query(signals):
    """The search query and exact signals of a log: identifiers from the stack and the quoted names, exception
    types, and the mechanisms the text points at (an HTTP status points at status/retry handling)."""
    from sentinel.memory.cards import taxonomy
    from sentinel.memory.retrieval.signals import query_signals, QuerySignals

    query = signals.query()
    inferred = query_signals(query, extra_identifiers=signals.identifiers(), exceptions=signals.exception_types)
    mechs = list(inferred.mechanisms)
    if signals.http_statuses and "http-status-retry" not in mechs:
        mechs.insert(0, "http-status-retry")
    mechs += [m for m in taxonomy.infer(" ".join(signals.messages), exceptions=signals.exception_types)
              if m not in mechs]
    return query, QuerySignals(identifiers=inferred.identifiers, exceptions=inferred.exceptions,
                               mechanisms=mechs[:3])


def cmd_recall(args) -> int:
    from sentinel.commands.context import project_config as _config
    from sentinel.commands.context import repo_root as _root
    from sentinel.memory.cards.index import IndexMissing, load_index
    from sentinel.memory.cards.index import learned_index
    from sentinel.memory.retrieval.logsignals import extract
    from sentinel.memory.retrieval.recall import fix_line
    from sentinel.memory.retrieval.search import search_memory, show

    signals = extract(_read(args.log))
    if signals.empty:
        raise InputError("no failure signals found in the log (no traceback, exception line, FAILED test or HTTP "
                         "error status)")
    query, qsig = log_query(signals)
    root = _root()
    cfg = _config(args, root)
    try:
        index = load_index(root=root)
    except IndexMissing as exc:
        raise InputError(str(exc)) from None
    if root:
        from sentinel.memory.learn.cache import refresh

        refresh(root, cfg)  # the team's learned cards first (a note of its own is not worth printing here)
    hits = search_memory(query, k=max(1, args.k), config=cfg, index=index, root=root, project_first=True,
                         signals=qsig, min_score=args.min_score)
    project = learned_index(root)

    def card_of(h):
        return (show(h.id, index=project) if h.source == "project" and project is not None else None) or \
            show(h.id, index=index) or {}

    rows = [{"id": h.id, "score": h.score, "source": h.source, "provenance": h.provenance,
             "problem_summary": h.problem_summary, "matched": h.matched, "fix": fix_line(card_of(h))}
            for h in hits]
    if args.json:
        print(json.dumps({"signals": signals.to_json(), "query": query, "exact": qsig.to_json(),
                          "mode": hits.mode, "note": hits.note, "min_score": hits.min_score,
                          "project_min_score": hits.project_min_score, "results": rows},
                         indent=2))
        return 0
    print(f"signals ({signals.format}): {', '.join(signals.exception_types) or '-'}"
          f"{' | HTTP ' + ', '.join(signals.http_statuses) if signals.http_statuses else ''}"
          f"{' | tests: ' + ', '.join(signals.tests) if signals.tests else ''}")
    if hits.note:
        print(f"({hits.note})")
    if not rows:
        print("no similar past fix above the threshold")
    for r in rows:
        print(f"\n{r['id']}  ({r['score']:.2f}, {r['source']})\n  {r['problem_summary']}\n  fix: {r['fix']}")
    if rows:
        print("\nbrowse one: sentinel memory show ID")
    return 0
