"""Where a line of source ends, decided once for every check: where the language ends it.

git, diffs and their line numbers know one line break, ``"\\n"``. Python's tokenizer knows
three: ``"\\n"``, ``"\\r\\n"`` and a lone ``"\\r"`` (CPython translates both ``"\\r\\n"`` and ``"\\r"``
to ``"\\n"`` before tokenizing). A file whose lines git sees as ``x = 1\\reval(data)`` is, to
Python, two lines, the second one a call of ``eval``; checks that split at ``"\\n"`` only would
see one harmless line, and a rule that starts at the start of a line, or an AST finding whose
line number no longer matches the diff's, would miss it. JavaScript and TypeScript also end a
line at U+2028 and U+2029 (so a ``//`` comment ends there and the rest is code).

So a file whose text holds such a *hidden* break is presented to the checks in *logical*
lines: the text with each hidden break written as ``"\\n"``, and its change (added and
context lines, hunks, CRLF lines) renumbered to match. Findings carry logical line numbers —
the ones Python's tracebacks and editors show. Files without a hidden break (all but hostile
or damaged ones) are untouched, and finding out costs one ``in`` test per file.

Deliberately *not* line breaks, although ``str.splitlines()`` splits there: ``\\v``, ``\\f``,
``\\x1c``-``\\x1e``, ``\\x85`` (and U+2028/U+2029 outside JS). Python does not end a line at
them: inside a comment they are comment text, in code they are a syntax error (the file is
then reported as not parsed), and ``\\f`` is whitespace. Keeping them inside the line is
exactly what Python runs, so nothing can hide behind them; splitting there would turn what
Python reads as a comment into a line of code. Nothing in Sentinel may use ``splitlines()``
on source text for that reason.
"""

from __future__ import annotations

import bisect

from sentinel.lazyre import LazyPattern, lazy_compile
from sentinel.models import FileChange, Hunk

# A "\r" not followed by "\n" (a "\r" before "\n" belongs to a CRLF ending).
_LONE_CR = lazy_compile(r"\r(?!\n)")
_LONE_CR_OR_SEPARATOR = lazy_compile("\r(?!\n)|[\u2028\u2029]")
_SEPARATOR_LANGUAGES = frozenset({"javascript", "typescript"})


def _pattern(language: str) -> LazyPattern:
    return _LONE_CR_OR_SEPARATOR if language in _SEPARATOR_LANGUAGES else _LONE_CR


def hides_lines(text: str, language: str) -> bool:
    """Does `text` hold a line break the language honours but "\\n"-splitting would miss?"""
    if "\r" in text:
        if _LONE_CR.search(text):
            return True
    if language in _SEPARATOR_LANGUAGES and ("\u2028" in text or "\u2029" in text):
        return True
    return False


def change_hides_lines(change: FileChange, language: str) -> bool:
    """The same question for the lines a diff shows (when no file content is available)."""
    for lines in (change.added, change.context):
        for value in lines.values():
            if hides_lines(value, language):
                return True
    return False


def logical_text(text: str, language: str) -> str:
    """The text with every hidden line break written as "\\n" (CRLF endings are kept)."""
    return _pattern(language).sub("\n", text)


class LineMap:
    """git line numbers ("\\n"-separated) -> logical line numbers of the same text."""

    def __init__(self, git_text: str, language: str):
        # Per git line holding hidden breaks: how many. Found from the breaks themselves,
        # so a large file with one hidden break costs one scan, not a list of its lines.
        extra: dict[int, int] = {}
        line, pos = 1, 0
        count = git_text.count
        for m in _pattern(language).finditer(git_text):
            line += count("\n", pos, m.start())
            pos = m.start()
            extra[line] = extra.get(line, 0) + 1
        self._lines = sorted(extra)
        self._extra = [extra[n] for n in self._lines]
        self._before: list[int] = []  # breaks on git lines before self._lines[i]
        total = 0
        for n in self._extra:
            self._before.append(total)
            total += n

    def first(self, git_line: int) -> int:
        """The logical number of the first piece of a git line."""
        i = bisect.bisect_left(self._lines, git_line)
        shift = self._before[i] if i < len(self._lines) else (self._before[-1] + self._extra[-1] if self._lines else 0)
        return git_line + shift

    def pieces(self, git_line: int) -> range:
        """The logical line numbers a git line became."""
        i = bisect.bisect_left(self._lines, git_line)
        n = self._extra[i] if i < len(self._lines) and self._lines[i] == git_line else 0
        start = self.first(git_line)
        return range(start, start + n + 1)


def logical_change(change: FileChange, git_text: str, language: str) -> FileChange:
    """`change` renumbered into the logical lines of `git_text` (the file's text, or the stand-in
    built from the diff's lines at their git positions)."""
    lmap = LineMap(git_text, language)
    lines = logical_text(git_text, language).split("\n")

    def value(n: int) -> str:
        return lines[n - 1].rstrip("\r") if 0 < n <= len(lines) else ""

    def renumber(by_line: dict[int, str]) -> dict[int, str]:
        out: dict[int, str] = {}
        for git_line in by_line:
            for n in lmap.pieces(git_line):
                out[n] = value(n)
        return out

    hunks = []
    for h in change.hunks:
        start = lmap.first(h.target_start) if h.target_start > 0 else h.target_start
        end = lmap.first(h.target_start + h.target_length) if h.target_length else start
        hunks.append(Hunk(h.source_start, h.source_length, start, end - start, h.section_header))
    return FileChange(path=change.path, old_path=change.old_path, status=change.status, language=change.language,
                      hunks=hunks, added=renumber(change.added), removed=list(change.removed),
                      context=renumber(change.context), is_binary=change.is_binary,
                      crlf_lines={lmap.pieces(n)[-1] for n in change.crlf_lines}, unreadable=change.unreadable,
                      role=change.role, existing=change.existing)
