"""A file's added lines as one string: the `FileChange.added` of a file the change adds whole.

A dict of one string per line costs about four times the text it holds (a string object and a dict entry of
some 160 bytes for a 40-character line); a change adding a whole tree holds every line of it, and a forked
worker inherits all of them. :class:`LineMap` keeps lines ``first..first+count-1`` as one text, each line
ended by "\\n" — the very string that stands in for the file's content (``stand_in_text``), or the content read
from git itself, shared — and answers as the dict did (``added[n]``, ``n in added``, ``items()``...). The first
change made to it turns it into a plain dict inside (diffparse strips a byte order mark, recoding rewrites
lines): writes are rare and never on the large paths.

A text that is not ASCII is held as its UTF-8 bytes (:func:`pack`): CPython stores a string at the width of its
widest character, so one em dash makes a file's text 2 bytes a character and one emoji 4, where UTF-8 takes
about 1. Lines are decoded as they are asked for, the whole text only by whoever asks for ``text`` (one file at
a time: see FileContext.drop_views).
"""

from __future__ import annotations

from array import array
from collections.abc import MutableMapping
from itertools import accumulate, repeat

# Below this many lines a dict is as small as it matters and faster to ask.
MIN_LINES = 32


# The error handler of the packed form: it encodes every str, lone surrogates included (a diff's bytes that are
# not UTF-8 arrive as surrogates), and decodes what it encoded back to the very same str.
_ERRORS = "surrogatepass"
_BLOCK = 4096  # lines joined at once by LineMap.of_lines


def pack(text: str) -> str | bytes:
    """`text` as it is cheapest to hold: itself when one byte a character does (ASCII, Latin-1: its UTF-8 form
    would be no smaller), else its UTF-8 bytes. :func:`unpack` gives the text back, equal to it. The same text is
    always held the same way (engine._share compares held forms)."""
    if text.isascii() or max(text) < "\u0100":
        return text
    return text.encode("utf-8", _ERRORS)


def unpack(held: str | bytes) -> str:
    return held.decode("utf-8", _ERRORS) if type(held) is bytes else held


def held_head(held: str | bytes, chars: int) -> str:
    """The first `chars` characters of the packed text, decoding no more than a few times that."""
    if type(held) is not bytes:
        return held[:chars]
    cut = held.rfind(b"\n", 0, 4 * chars)  # "\n" is never inside a character's UTF-8 sequence
    return unpack(held if cut < 0 else held[:cut + 1])[:chars]


def held_lines(held: str | bytes) -> int:
    """How many "\n" the packed text holds (the same in its UTF-8 form)."""
    return held.count(b"\n" if type(held) is bytes else "\n")


class LineMap(MutableMapping):
    __slots__ = ("first", "count", "held", "_starts", "_dict")

    def __init__(self, text: str | bytes, count: int, first: int = 1):
        """`text`: every line ended by "\n", as a str or as :func:`pack` gave it."""
        self.first, self.count = first, count
        self.held: str | bytes | None = text if type(text) is bytes else pack(text)  # None once changed
        self._starts: array | None = None
        self._dict: dict[int, str] | None = None

    @property
    def text(self) -> str | None:
        """The lines as one text (decoded anew on each call when held as bytes); None once the map was changed."""
        return None if self.held is None else unpack(self.held)

    @classmethod
    def of_lines(cls, lines: list[str], first: int = 1) -> LineMap:
        """The lines joined and packed as :func:`pack` packs their text, a block at a time: one wide character
        never makes a str of the whole file at 4 bytes a character, not even for a moment."""
        if not any(line and not line.isascii() and max(line) >= "\u0100" for line in lines):
            return cls("\n".join([*lines, ""]), len(lines), first)  # (one copy of the text, not two)
        data = b"".join([("\n".join(lines[i:i + _BLOCK]) + "\n").encode("utf-8", _ERRORS)
                         for i in range(0, len(lines), _BLOCK)])
        return cls(data, len(lines), first)

    @classmethod
    def shrink(cls, table: dict[int, str]) -> dict[int, str] | LineMap:
        """`table` as a LineMap when it holds consecutive lines enough to be worth it, else as it is."""
        if len(table) < MIN_LINES or isinstance(table, LineMap):
            return table
        first, last = next(iter(table)), next(reversed(table))
        lines = list(table.values())
        if last - first + 1 != len(table) or any("\n" in line for line in lines):
            return table  # (joined, the lines are always smaller than apart: see pack)
        return cls.of_lines(lines, first)

    # -- reading ---------------------------------------------------------------------------------
    def _offsets(self) -> array:
        if self._starts is None:
            held = self.held
            lengths = map(len, held.split(b"\n")[:self.count] if type(held) is bytes else self.values())
            # line i starts after the lines before it and their line breaks (4 bytes a line: a text is < 4 GiB)
            self._starts = array("I", accumulate(map(int.__add__, lengths, repeat(1)), initial=0))
        return self._starts

    def _line(self, i: int) -> str:
        """The i-th line (from 0), decoded from the packed text."""
        starts = self._offsets()
        return unpack(self.held[starts[i]:starts[i + 1] - 1])

    def __getitem__(self, n: int) -> str:
        if self._dict is not None:
            return self._dict[n]
        i = n - self.first if type(n) is int else -1
        if not 0 <= i < self.count:
            raise KeyError(n)
        return self._line(i)

    def get(self, n, default=None):
        if self._dict is not None:
            return self._dict.get(n, default)
        i = n - self.first if type(n) is int else -1
        if not 0 <= i < self.count:
            return default
        return self._line(i)

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
        return unpack(self.held).split("\n")[:self.count] if self.count else []

    def items(self):
        if self._dict is not None:
            return self._dict.items()
        return zip(range(self.first, self.first + self.count), self.values())

    def __eq__(self, other) -> bool:
        if isinstance(other, LineMap) and self._dict is None and other._dict is None:
            return (self.first, self.count, self.held) == (other.first, other.count, other.held)
        return isinstance(other, MutableMapping | dict) and dict(self.items()) == dict(other.items())

    __hash__ = None

    def __repr__(self) -> str:
        return f"LineMap({dict(self.items())!r})"

    def __reduce__(self):
        if self._dict is not None:
            return dict, (self._dict,)
        return LineMap, (self.held, self.count, self.first)

    # -- writing (rare): from then on a dict ------------------------------------------------------
    def _writable(self) -> dict[int, str]:
        if self._dict is None:
            self._dict = dict(self.items())
            self.held = self._starts = None
        return self._dict

    def __setitem__(self, n: int, line: str) -> None:
        self._writable()[n] = line

    def __delitem__(self, n: int) -> None:
        del self._writable()[n]

    def update(self, other=(), **kw) -> None:
        self._writable().update(other, **kw)
