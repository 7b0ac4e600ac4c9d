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
