"""Command line: a thin layer over the API. Exit codes: 0 pass, 1 blocking findings, 2 error."""

from __future__ import annotations

import gc
import importlib
import os
import sys

from sentinel.errors import SentinelError
from sentinel.version import __version__

# Subcommands living in their own modules; each has register(subparsers).
COMMAND_MODULES = ["sentinel.commands.core", "sentinel.commands.memory", "sentinel.commands.recall",
                   "sentinel.commands.intent", "sentinel.commands.ci", "sentinel.commands.mcp"]
# Which module declares a command: the hook path builds only the parser it needs (building
# every subcommand's arguments costs more than a small check).
COMMAND_OWNER = {"check": "sentinel.commands.core", "rules": "sentinel.commands.core",
                 "explain": "sentinel.commands.core", "config": "sentinel.commands.core",
                 "baseline": "sentinel.commands.core", "memory": "sentinel.commands.memory",
                 "recall": "sentinel.commands.recall", "commit-msg": "sentinel.commands.intent",
                 "ci": "sentinel.commands.ci", "mcp": "sentinel.commands.mcp"}


def build_parser(command: str | None = None):
    from sentinel.argparsing import Parser  # not on the bare `sentinel check` path

    parser = Parser(prog="sentinel", description="An audit gate for code changes that remembers.")
    parser.add_argument("--version", action="version", version=f"sentinel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    owner = COMMAND_OWNER.get(command or "")
    for name in ([owner] if owner else COMMAND_MODULES):
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A short-lived process creating millions of AST nodes: the cyclic GC only costs time here
    # (3x on a 600K-line change) and nothing it could free matters before exit.
    gc.disable()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["check"]
    if argv[0] == "check" and not any(a.startswith("-") for a in argv[1:]):
        # What pre-commit runs on every commit: `check` and the file names it selected. Nothing to
        # parse, and argparse with the gettext and locale modules it pulls in costs ~12 ms of a
        # ~90 ms run; the defaults are the parser's own (tests/test_fast_paths.py compares the two).
        from sentinel.commands.core import check_defaults

        args = check_defaults(argv[1:])
    else:
        parser = build_parser(argv[0])
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
    try:
        return int(args.func(args) or 0)
    except SentinelError as exc:
        print(f"sentinel: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("sentinel: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # SIGTERM while workers run (sentinel.parallel), or a command's sys.exit
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except Exception as exc:  # the last line of defence: a clear message, never a traceback
        print(f"sentinel: internal error: {type(exc).__name__}: {exc} "
              f"(set SENTINEL_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("SENTINEL_DEBUG"):
            raise
        return 2


def run() -> None:
    """Console entry point: run main(), flush, and exit without tearing the interpreter down.

    Freeing every object of a run one by one at exit costs 10-15 ms of a ~100 ms hook run, and
    nothing needs it: reports are written, files and the store are closed before main() returns.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (| head): the output is already gone
            code = code or 2
    os._exit(code)
