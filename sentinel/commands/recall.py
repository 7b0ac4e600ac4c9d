"""`sentinel recall --log FILE`: similar past fixes for a failing test log or a traceback."""

from __future__ import annotations

import json
import sys

from sentinel.commands.formatopt import add_format_option
from sentinel.errors import InputError


def register(sub) -> None:
    p = sub.add_parser("recall", help="similar past fixes for a failing test log or traceback")
    p.add_argument("--log", required=True, metavar="FILE", help="the log or traceback (- for stdin)")
    p.add_argument("-k", type=int, default=5, help="how many fixes (default 5)")
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


def cmd_recall(args) -> int:
    from sentinel.config import Config
    from sentinel.memory.index import IndexMissing, load_index, search, show
    from sentinel.memory.logsignals import extract
    from sentinel.memory.recall_search import fix_line

    signals = extract(_read(args.log))
    if signals.empty:
        raise InputError("no failure signals found in the log (no traceback, exception line or FAILED test)")
    query = signals.query()
    try:
        index = load_index()
    except IndexMissing as exc:
        raise InputError(str(exc)) from None
    hits = search(query, k=max(1, args.k), config=Config(), index=index)
    rows = [{"id": h.id, "score": h.score, "problem_summary": h.problem_summary,
             "fix": fix_line(show(h.id, index=index) or {})} for h in hits]
    if args.json:
        print(json.dumps({"signals": {"exception_types": signals.exception_types, "messages": signals.messages,
                                      "tests": signals.tests, "functions": signals.functions,
                                      "modules": signals.modules},
                          "query": query, "mode": hits.mode, "note": hits.note, "results": rows}, indent=2))
        return 0
    print(f"signals: {', '.join(signals.exception_types) or '-'}"
          f"{' | tests: ' + ', '.join(signals.tests) if signals.tests else ''}")
    if hits.note:
        print(f"({hits.note})")
    for r in rows:
        print(f"\n{r['id']}  ({r['score']:.2f})\n  {r['problem_summary']}\n  fix: {r['fix']}")
    print("\nbrowse one: sentinel memory show ID")
    return 0
