"""Progress of a long run on a terminal: one line on stderr, redrawn in place and erased when the run ends.

Only a terminal gets it: a pipe, a file, pre-commit's captured hook output and CI logs stay clean (as with
pre-commit and ruff). Only a run that lasts: nothing is drawn in its first half second, so a commit hook never
flickers. ``SENTINEL_PROGRESS_DELAY`` (seconds) changes that wait; ``TERM=dumb`` or ``NO_PROGRESS`` turn it off.
"""

from __future__ import annotations

import os
import sys
import time

_ERASE = "\r\x1b[K"
_DELAY = 0.5
_INTERVAL = 0.1


class Progress:
    """Draws ``sentinel: checking files 120/553`` (or a stage such as ``recalling similar fixes``) on `stream`."""

    def __init__(self, stream, delay: float = _DELAY, interval: float = _INTERVAL):
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.started = time.monotonic()
        self._drawn_at: float | None = None
        self._shown = False

    def files(self, done: int, total: int) -> None:
        if total:
            done = min(done, total)  # a part redone after its worker died is counted twice
            self._draw(f"checking files {done}/{total} ({100 * done // total}%)", last=done >= total)

    def stage(self, text: str) -> None:
        self._draw(text, last=True)

    def _draw(self, text: str, last: bool = False) -> None:
        now = time.monotonic()
        if now - self.started < self.delay:
            return
        if not last and self._drawn_at is not None and now - self._drawn_at < self.interval:
            return
        self._drawn_at = now
        self._draw_line(f"sentinel: {text}")

    def _draw_line(self, line: str) -> None:
        try:
            self.stream.write(_ERASE + line[:_width(self.stream)])
            self.stream.flush()
        except (OSError, ValueError):
            return  # a terminal that went away takes its progress with it
        self._shown = True

    def close(self) -> None:
        """Erase the line (the report comes next, on a clean line)."""
        if self._shown:
            self._shown = False
            try:
                self.stream.write(_ERASE)
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _width(stream) -> int:
    """Columns to draw in: the terminal's (a new pseudo-terminal says 0), else $COLUMNS, else 80; one short of it,
    so the line never wraps."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    if columns <= 0:
        columns = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 80
    return max(20, columns - 1)


def for_terminal(stream=None) -> Progress | None:
    """A Progress on `stream` (stderr) when it is a terminal that can redraw a line, else None."""
    stream = stream if stream is not None else sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return None
    if not tty or os.environ.get("TERM") == "dumb" or os.environ.get("NO_PROGRESS"):
        return None
    try:
        delay = float(os.environ.get("SENTINEL_PROGRESS_DELAY", _DELAY))
    except ValueError:
        delay = _DELAY
    return Progress(stream, delay=max(delay, 0.0))
