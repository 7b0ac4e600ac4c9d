"""Command line: a thin layer over the API. Exit codes: 0 pass, 1 blocking findings, 2 error."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from sentinel import __version__
from sentinel.errors import SentinelError

# Subcommands living in their own modules; each has register(subparsers). Missing ones are skipped.
COMMAND_MODULES = ["sentinel.commands.core", "sentinel.commands.memory", "sentinel.commands.recall", "sentinel.commands.intent",
                   "sentinel.commands.ci"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentinel", description="An audit gate for code changes that remembers.")
    parser.add_argument("--version", action="version", version=f"sentinel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A short-lived process creating millions of AST nodes: the cyclic GC only costs time here
    # (3x on a 600K-line change) and nothing it could free matters before exit.
    gc.disable()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        argv = ["check"]
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
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except Exception as exc:  # the last line of defence: a clear message, never a traceback
        print(f"sentinel: internal error: {type(exc).__name__}: {exc} "
              f"(set SENTINEL_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("SENTINEL_DEBUG"):
            raise
        return 2
