"""`--format` for every command that prints, with `--json` kept as an alias (argparse only: not on the hook path)."""

from __future__ import annotations

import argparse


class _FormatAction(argparse.Action):
    """`--format X` that also keeps the older boolean `args.json` true for X == json."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.json = values == "json"


class _JsonAlias(argparse.Action):
    """`--json`, kept working as an alias of `--format json`."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.format = "json"
        namespace.json = True


def add_format_option(p, choices: tuple[str, ...] = ("text", "json"), default: str = "text") -> None:
    """The one `--format` every printing command takes, with `--json` as an alias of `--format json`."""
    p.add_argument("--format", choices=choices, default=default, action=_FormatAction,
                   help=f"output format: {', '.join(choices)} (default: {default})")
    if "json" in choices:
        p.add_argument("--json", action=_JsonAlias, dest="json", help="same as --format json")
    p.set_defaults(json=default == "json")
