"""`--format` for every command that prints, with `--json` kept as an alias (argparse only: not on the hook path).

`--format` always names what the command prints. A command that also reads or writes a file of its own
format names that separately (`memory import --input-format`); `tests/test_cli_format_audit.py` walks
every subcommand and fails on a printing command without `--format`."""

from __future__ import annotations

import argparse
import sys


class _FormatAction(argparse.Action):
    """`--format X` that also keeps the older boolean `args.json` true for X == json."""

    # older values of a `--format` that meant something else: value -> (destination, value, message)
    legacy: dict[str, tuple[str, str, str]] = {}

    def __call__(self, parser, namespace, values, option_string=None):
        if values in self.legacy:
            dest, value, message = self.legacy[values]
            setattr(namespace, dest, value)
            sys.stderr.write(f"sentinel: warning: {message}\n")
            return
        setattr(namespace, self.dest, values)
        namespace.json = values == "json"


class _JsonAlias(argparse.Action):
    """`--json`, kept working as an alias of `--format json`."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.format = "json"
        namespace.json = True


def add_format_option(p, choices: tuple[str, ...] = ("text", "json"), default: str = "text",
                      help: str | None = None, legacy: dict[str, tuple[str, str, str]] | None = None) -> None:
    """The one `--format` every printing command takes, with `--json` as an alias of `--format json`.

    `legacy` keeps old values of an option that used to be spelled `--format` working (hidden from the help,
    with a warning naming the new spelling): value -> (destination, value, warning)."""
    action = type("_Format", (_FormatAction,), {"legacy": dict(legacy)}) if legacy else _FormatAction
    p.add_argument("--format", choices=tuple(choices) + tuple(legacy or ()), default=default, action=action,
                   metavar="{" + ",".join(choices) + "}",
                   help=help or f"output format: {', '.join(choices)} (default: {default})")
    if "json" in choices:
        p.add_argument("--json", action=_JsonAlias, dest="json", help="same as --format json")
    p.set_defaults(json=default == "json")
