"""Code a change moves, or restores by reverting, is not code it introduces.

Refactors move blocks between files, re-indent them under a new ``with``, split a module in two. Every moved
line is an "added line" of the diff, so without care the gate reports the old code's findings as the author's
new work. A finding is on moved code when the added lines around it (its own contiguous block, up to two lines
either side) appear, whitespace-normalised and in the same order, among the lines the same change removed —
from any file. The removed lines prove the code was already in the base; the context makes a coincidental
match of one short line (``except:``, ``pass``) count for nothing.

A revert restores what an earlier commit removed: when the message says "This reverts commit <sha>" and that
commit is in the history being checked (an ancestor of the head), its removed lines count as the change's own
removed lines. Saying so proves nothing by itself — the reverted commit's diff must hold the lines.

The engine grades such findings as information, never hides them, and leaves security rules alone: a moved
``eval()`` or credential is still there to be seen.
"""

from __future__ import annotations

import re

from sentinel.models import FileChange

_CONTEXT = 2  # added lines taken on either side of the finding's line
_MIN_SINGLE = 12  # a lone changed line must be at least this long (normalised) to count as moved
_MAX_REMOVED = 200_000  # beyond this many removed lines the index is not worth its memory


def _norm(text: str) -> str:
    return " ".join(text.split())


class MovedCode:
    """Index of the change's removed lines, built on first use."""

    def __init__(self, files: list[FileChange], restored=None):
        self._files = files
        self._restored = restored  # a callable giving the reverted commits' files, asked only when needed
        self._grams: set[tuple[str, ...]] | None = None

    def _index(self) -> set[tuple[str, ...]]:
        if self._grams is None:
            if self._restored is not None:
                self._files = [*self._files, *self._restored()]
            grams: set[tuple[str, ...]] = set()
            total = sum(len(f.removed) for f in self._files)
            if 0 < total <= _MAX_REMOVED:
                width = 2 * _CONTEXT + 1
                for fc in self._files:
                    run: list[str] = []
                    last = None
                    for number, text in fc.removed:
                        if last is not None and number != last + 1:
                            _add_grams(grams, run, width)
                            run = []
                        norm = _norm(text)
                        if norm:
                            run.append(norm)
                        last = number
                    _add_grams(grams, run, width)
            self._grams = grams
        return self._grams

    def is_moved(self, fc: FileChange, line: int | None) -> bool:
        if line is None or line not in fc.added:
            return False
        added = fc.added
        first = line
        while first - 1 in added and line - (first - 1) <= _CONTEXT:
            first -= 1
        last = line
        while last + 1 in added and (last + 1) - line <= _CONTEXT:
            last += 1
        window = tuple(n for n in (_norm(added[i]) for i in range(first, last + 1)) if n)
        if not window or (len(window) == 1 and len(window[0]) < _MIN_SINGLE):
            return False
        return window in self._index()


_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


def reverted_files(root: str | None, message: str | None, head: str | None) -> list[FileChange]:
    """The files of the commits a revert message names, when they are ancestors of the checked head."""
    if not root or not message or "This reverts commit" not in message:
        return []
    from sentinel import gitio
    from sentinel.diffparse import parse_diff
    from sentinel.errors import SentinelError

    out: list[FileChange] = []
    for sha in dict.fromkeys(_REVERTS.findall(message)[:5]):
        try:
            gitio.run_git(["merge-base", "--is-ancestor", sha, head or "HEAD"], cwd=root)
            text = gitio.run_git(["show", "--format=", "--no-color", "--no-ext-diff", "--no-renames", sha], cwd=root)
            out.extend(parse_diff(text.decode("utf-8", "surrogateescape")).files)
        except (SentinelError, ValueError):
            continue  # not in this history, or not a diff we can read: nothing is restored
    return out


def _add_grams(grams: set, run: list[str], width: int) -> None:
    for size in range(1, width + 1):
        for start in range(len(run) - size + 1):
            grams.add(tuple(run[start:start + size]))
