"""argparse, set up for this CLI (imported only when there are arguments to parse)."""

from __future__ import annotations

import argparse
import os
import sys


class _Formatter(argparse.HelpFormatter):
    """argparse builds a formatter for every option it declares, and each asks shutil for the
    terminal width: importing shutil (and the compression modules it pulls in) for that costs
    a few ms of every hook run. Same answer, read directly."""

    def __init__(self, prog: str, **kwargs):
        kwargs.setdefault("width", _terminal_width() - 2)
        super().__init__(prog, **kwargs)


def _terminal_width() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


# --- argument types: a bad value is a usage error (exit 2) naming the option, before any work ----

def positive_int(text: str) -> int:
    """N >= 1 (counts, processes, result limits): 0 or a negative number is never what was meant."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of at least 0, got {text!r}")
    return value


def nonempty_text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def output_file(text: str) -> str:
    """A file to write: its directory must exist (we do not create directories on a typo)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    if text != "-" and os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"directory {os.path.dirname(text) or parent!r} does not exist")
    return text
