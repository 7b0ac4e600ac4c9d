"""Which lines of a file are in scope, found fast, and the per-file facts the rules share."""

from __future__ import annotations

import re

from sentinel.checks.base import FileContext
from sentinel.languages import HASH_COMMENT, SLASH_COMMENT
from sentinel.lazyre import lazy_compile

# Languages the lexer reads (comments and strings told apart from code).
_LEXED_LANGS = frozenset(HASH_COMMENT | SLASH_COMMENT | {"sql", "rust"})

_FIXTURE_MARK = lazy_compile(r"(?:#|//|/\*|--).*sentinel:\s*fixture")
# Longer lines are minified or generated code: names there are mangled, values are data.
_MINIFIED_LINE = 500


def _line_filter(ctx: FileContext):
    """ctx.selected, or None when every line is in scope (saves a call per AST node)."""
    return None if ctx.whole_file_in_scope else ctx.selected


def _matching_lines(ctx: FileContext, pattern: re.Pattern, lowered: bool = False):
    """Line numbers in scope where the pattern matches (one regex pass over the text when the whole
    file is in scope, so a 600K-line added file costs a C-level scan, not a Python loop per line).
    ``lowered``: the pattern is written for lowercased text (see secrets.secret_binding_pattern)."""
    if ctx.whole_file_in_scope:
        text = ctx.lower_text if lowered else ctx.text
        # One search per matching line, then jump to the next line: a minified one-line file
        # with thousands of matches costs one search, not one Python iteration per match.
        pos, line = 0, 1
        search, count, find = pattern.search, text.count, text.find
        while True:
            m = search(text, pos)
            if m is None:
                return
            start = m.start()
            line += count("\n", pos, start)
            yield line
            end = find("\n", start)
            if end == -1:
                return
            pos, line = end + 1, line + 1
    else:
        for n in ctx.selected_lines():
            text = ctx.line(n)
            if pattern.search(text.lower() if lowered else text):
                yield n


class _LazyFlag:
    """A per-file fact computed on first use: most files never need to know."""

    __slots__ = ("_decide", "_value")

    def __init__(self, decide):
        self._decide = decide
        self._value: bool | None = None

    def __bool__(self) -> bool:
        if self._value is None:
            self._value = bool(self._decide())
        return self._value


def _fixture_marked(ctx: FileContext, line: int) -> bool:
    return any(_FIXTURE_MARK.search(ctx.line(n)) for n in (line, line - 1) if n > 0)
