"""A file's added lines as one string: the `FileChange.added` of a file the change adds whole.

A dict of one string per line costs about four times the text it holds (a string object and a dict entry of
some 160 bytes for a 40-character line); a change adding a whole tree holds every line of it, and a forked
worker inherits all of them. :class:`LineMap` keeps lines ``first..first+count-1`` as one text, each line
ended by "\\n" — the very string that stands in for the file's content (``stand_in_text``), or the content read
from git itself, shared — and answers as the dict did (``added[n]``, ``n in added``, ``items()``...). The first
change made to it turns it into a plain dict inside (diffparse strips a byte order mark, recoding rewrites
lines): writes are rare and never on the large paths.
"""

from __future__ import annotations

from array import array
from collections.abc import MutableMapping
from itertools import accumulate, repeat

# Below this many lines a dict is as small as it matters and faster to ask.
MIN_LINES = 32


# What a dict entry and its line's string object cost beyond the line's characters (64-bit CPython).
_PER_LINE = 130


def _smaller_joined(lines: list[str]) -> bool:
    """Is one string of these lines smaller than a string per line? Always for ASCII; a string takes as many
    bytes a character as its widest character needs, so one emoji in a large ASCII file would make the joined
    text four times its length, more than the lines apart."""
    chars = sum(map(len, lines)) + len(lines)
    wide = [line for line in lines if not line.isascii()]
    if not wide:
        return True
    top = max(map(ord, map(max, wide)))
    width = 1 if top < 0x100 else 2 if top < 0x10000 else 4
    return width * chars < chars + _PER_LINE * len(lines)


class LineMap(MutableMapping):
    __slots__ = ("first", "count", "text", "_starts", "_dict")

    def __init__(self, text: str, count: int, first: int = 1):
        self.first, self.count = first, count
        self.text: str | None = text  # every line ended by "\n"; None once the map was changed
        self._starts: array | None = None
        self._dict: dict[int, str] | None = None

    @classmethod
    def of_lines(cls, lines: list[str], first: int = 1) -> LineMap:
        return cls("\n".join(lines) + "\n" if lines else "", len(lines), first)

    @classmethod
    def shrink(cls, table: dict[int, str]) -> dict[int, str] | LineMap:
        """`table` as a LineMap when it holds consecutive lines enough to be worth it, else as it is."""
        if len(table) < MIN_LINES or isinstance(table, LineMap):
            return table
        first, last = next(iter(table)), next(reversed(table))
        lines = list(table.values())
        if last - first + 1 != len(table) or any("\n" in line for line in lines) or not _smaller_joined(lines):
            return table
        return cls.of_lines(lines, first)

    # -- reading ---------------------------------------------------------------------------------
    def _offsets(self) -> array:
        if self._starts is None:
            lengths = map(len, self.values())
            # line i starts after the lines before it and their line breaks (4 bytes a line: a text is < 4 GiB)
            self._starts = array("I", accumulate(map(int.__add__, lengths, repeat(1)), initial=0))
        return self._starts

    def __getitem__(self, n: int) -> str:
        if self._dict is not None:
            return self._dict[n]
        i = n - self.first if type(n) is int else -1
        if not 0 <= i < self.count:
            raise KeyError(n)
        starts = self._offsets()
        return self.text[starts[i]:starts[i + 1] - 1]

    def get(self, n, default=None):
        if self._dict is not None:
            return self._dict.get(n, default)
        i = n - self.first if type(n) is int else -1
        if not 0 <= i < self.count:
            return default
        starts = self._offsets()
        return self.text[starts[i]:starts[i + 1] - 1]

    def __contains__(self, n) -> bool:
        if self._dict is not None:
            return n in self._dict
        return type(n) is int and self.first <= n < self.first + self.count

    def __iter__(self):
        return iter(self._dict) if self._dict is not None else iter(range(self.first, self.first + self.count))

    def __reversed__(self):
        return reversed(self._dict) if self._dict is not None else \
            iter(range(self.first + self.count - 1, self.first - 1, -1))

    def __len__(self) -> int:
        return len(self._dict) if self._dict is not None else self.count

    def values(self):
        if self._dict is not None:
            return self._dict.values()
        return self.text.split("\n")[:self.count] if self.count else []

    def items(self):
        if self._dict is not None:
            return self._dict.items()
        return zip(range(self.first, self.first + self.count), self.values())

    def __eq__(self, other) -> bool:
        if isinstance(other, LineMap) and self._dict is None and other._dict is None:
            return (self.first, self.count, self.text) == (other.first, other.count, other.text)
        return isinstance(other, MutableMapping | dict) and dict(self.items()) == dict(other.items())

    __hash__ = None

    def __repr__(self) -> str:
        return f"LineMap({dict(self.items())!r})"

    def __reduce__(self):
        if self._dict is not None:
            return dict, (self._dict,)
        return LineMap, (self.text, self.count, self.first)

    # -- writing (rare): from then on a dict ------------------------------------------------------
    def _writable(self) -> dict[int, str]:
        if self._dict is None:
            self._dict = dict(self.items())
            self.text = self._starts = None
        return self._dict

    def __setitem__(self, n: int, line: str) -> None:
        self._writable()[n] = line

    def __delitem__(self, n: int) -> None:
        del self._writable()[n]

    def update(self, other=(), **kw) -> None:
        self._writable().update(other, **kw)
