"""Fast comment/string positions by language, with one C-level regex pass per file.

Python's own ``tokenize`` is pure Python on 3.10/3.11 and costs ~20 us per line: too slow
for a hook on large files. This lexer gives the same comment and string boundaries for
well-formed code (the test suite checks it against ``tokenize`` on real files) and
degrades gracefully on fragments (an unterminated string just ends the line).

Speed comes from two choices: every pattern starts with a one-character lookahead, which
lets ``re`` skip plain code with a C-level scan instead of trying every alternative at
every offset, and string bodies are written "unrolled" (``[^"\\]*(?:\\.[^"\\]*)*``) so
the engine consumes runs of characters instead of one alternation per character.
"""

from __future__ import annotations

import re

from sentinel.languages import HASH_COMMENT, SLASH_COMMENT
from sentinel.record import Record, factory

# String prefixes (r, b, f, u...) are ordinary code characters here: they never change where
# a literal starts or ends, and matching from the quote also lexes ``if"x"`` correctly.
_DQ = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SQ = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
_TDQ = r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_TSQ = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_BACKTICK = r"`[^`\\]*(?:\\.[^`\\]*)*`"



class _Syntax:
    """A language's comment and string tokens, tried in order at each position, as one regex.

    Linear time on hostile lines: an unterminated literal makes the regex scan to the end of its
    line (or of the file, for kinds that span lines) and fail, and a naive search then retries
    from every later opener — quadratic on ``\\"\\"\\"...``. But when a literal fails at p,
    every later opener of the same kind up to where the failed scan stopped fails too (the scan
    consumed each of them in the same state a scan starting there would be in), so that kind is
    switched off until then: the tokens found are exactly the naive search's.

    Each kind is (group, regex, opener, scope): ``scope`` "line" or "file" is how far a failure
    switches the kind off; None for kinds that cannot fail expensively."""

    def __init__(self, kinds: list[tuple[str, str, str | None, str | None]], flags: int = re.S):
        self.kinds = kinds
        self.flags = flags
        self.groups = {f"k{i}": kind[0] for i, kind in enumerate(kinds)}  # regex group -> "c" / "s"
        self._patterns: dict[frozenset, re.Pattern] = {}

    def pattern(self, off: frozenset) -> re.Pattern:
        pat = self._patterns.get(off)
        if pat is None:
            alts, firsts, openers = [], set(), set()
            for i, (_, regex, opener, scope) in enumerate(self.kinds):
                if i in off:
                    continue
                alts.append(f"(?P<k{i}>{regex})")
                firsts.add(_first_char(regex))
                if scope:
                    openers.add(opener[0])
            if openers:  # every alternative failed here: note which kinds, move on one character
                alts.append(f"(?P<u>[{re.escape(''.join(sorted(openers)))}])")
            lookahead = re.escape("".join(sorted(firsts | openers)))
            pat = self._patterns[off] = re.compile(f"(?=[{lookahead}])(?:{'|'.join(alts)})", self.flags)
        return pat

    def tokens(self, text: str, pos: int = 0):
        """(start, end, group) of each comment ("c") and string ("s") from `pos` on, in order."""
        groups = self.groups
        off: dict[int, int] = {}  # kind index -> offset where it is tried again
        n = len(text)
        while pos < n:
            if not off:  # the common case: one C-level scan until something fails to close
                for m in self.pattern(_NONE_OFF).finditer(text, pos):
                    name = m.lastgroup
                    if name == "u":
                        pos = self._switch_off(text, m.start(), off)
                        break
                    yield m.start(), m.end(), groups[name]
                else:
                    return
                continue
            off = {k: until for k, until in off.items() if until > pos}
            m = self.pattern(frozenset(off)).search(text, pos)
            back = min(off.values()) if off else n
            if m is None or m.start() >= back:
                if back >= n:
                    return
                pos = back  # a kind is tried again from there: look again with it
                continue
            if m.lastgroup == "u":
                pos = self._switch_off(text, m.start(), off)
                continue
            yield m.start(), m.end(), groups[m.lastgroup]
            pos = m.end()

    def _switch_off(self, text: str, start: int, off: dict[int, int]) -> int:
        """Every kind opening at `start` failed there: off until its scan's reach. Next position."""
        for i, (_, _, opener, scope) in enumerate(self.kinds):
            if scope and i not in off and text.startswith(opener, start):
                line_end = text.find("\n", start)
                off[i] = len(text) if scope == "file" or line_end < 0 else line_end
        return start + 1


_NONE_OFF: frozenset = frozenset()


def _first_char(regex: str) -> str:
    """The literal character every match of one of our token regexes starts with."""
    if regex.startswith("(?<!"):
        regex = regex[regex.index(")") + 1:]
    return regex[1] if regex[0] == "\\" else regex[0]


_PY = _Syntax([("c", r"#[^\r\n]*", None, None), ("s", _TDQ, '"""', "file"), ("s", _TSQ, "'''", "file"),
               ("s", _DQ, '"', "line"), ("s", _SQ, "'", "line")])
# Shell-like: "#" starts a comment only at a word start ($#, ${#x}, a#b are code); single
# quotes have no escapes.
_HASH = _Syntax([("c", r"(?<![^\s])#[^\r\n]*", None, None), ("s", _DQ, '"', "line"), ("s", r"'[^'\n]*'", None, None)])
_BLOCK = r"/\*.*?\*/"
_SLASH = _Syntax([("c", r"//[^\r\n]*", None, None), ("c", _BLOCK, "/*", "file"), ("s", _DQ, '"', "line"),
                  ("s", _SQ, "'", "line"), ("s", _BACKTICK, "`", "file")])
# Rust: 'a is a lifetime, so a quote starts a literal only when it closes one character later.
_RUST_CHAR = r"""'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.)|[^'\\\n])'"""
_RUST = _Syntax([("c", r"//[^\r\n]*", None, None), ("c", _BLOCK, "/*", "file"), ("s", _DQ, '"', "line"),
                 ("s", _RUST_CHAR, None, None)])
# SQL doubles a quote to escape it: a failed literal does not make later ones fail (no switch-off
# needed, nor is the retry expensive: the next quote closes at once).
_SQL = _Syntax([("c", r"--[^\r\n]*", None, None), ("c", _BLOCK, "/*", "file"), ("s", r"'(?:''|[^'])*'", None, None)])


class Lexed(Record):
    """Per line (1-based): the code with strings blanked and comments removed, and comments."""

    code: list[str]  # index 0 unused
    comments: dict[int, str]  # line -> comment text including its leading marker
    string_lines: set[int]  # lines covered by a string literal
    # Lines that begin inside a string literal opened on an earlier line: their leading and
    # trailing whitespace is the string's content, not the file's layout.
    string_inner: set[int] = factory(set)

    def code_line(self, line: int) -> str:
        return self.code[line] if 0 < line < len(self.code) else ""


def _pattern(language: str) -> _Syntax | None:
    if language == "python":
        return _PY
    if language == "rust":
        return _RUST
    if language in HASH_COMMENT:
        return _HASH
    if language in SLASH_COMMENT:
        return _SLASH
    if language == "sql":
        return _SQL
    return None


def lex(text: str, language: str) -> Lexed:
    syntax = _pattern(language)
    if syntax is None:
        return Lexed(code=[""] + text.split("\n"), comments={}, string_lines=set())
    comments: dict[int, str] = {}
    string_lines: set[int] = set()
    string_inner: set[int] = set()
    pieces: list[str] = []
    pos = 0
    line = 1  # line number at offset ``pos``; matches arrive in order, so count incrementally
    count = text.count

    def take(start: int, end: int, group: str) -> None:
        nonlocal pos, line
        line += count("\n", pos, start)
        pieces.append(text[pos:start])
        token = text[start:end]
        newlines = token.count("\n")
        if group == "c":
            if newlines:  # block comment spanning lines
                parts = token.split("\n")
                for i, part in enumerate(parts):
                    comments[line + i] = part
                pieces.append(_spaces(parts))
            else:
                comments[line] = token
                pieces.append(" " * len(token))
        else:
            string_lines.update(range(line, line + newlines + 1))
            if newlines:
                string_inner.update(range(line + 1, line + newlines + 1))
            pieces.append(_blank_string(token, newlines))
        line += newlines
        pos = end

    # The common case in one C-level scan; from the first literal that fails to close on, the
    # linear-time search of _Syntax.tokens (see there) takes over. A token on one line (nearly all of
    # them) is taken right here, as `take` would: this loop runs once per comment and string of a file.
    kinds = syntax.groups
    append, add_string_line = pieces.append, string_lines.add
    for m in syntax.pattern(_NONE_OFF).finditer(text):
        name = m.lastgroup
        if name == "u":
            for start, end, group in syntax.tokens(text, m.start()):
                take(start, end, group)
            break
        start, end = m.span()
        token = m.group()
        if "\n" in token:
            take(start, end, kinds[name])
            continue
        line += count("\n", pos, start)
        append(text[pos:start])
        if kinds[name] == "c":
            comments[line] = token
            append(" " * (end - start))
        else:
            add_string_line(line)
            q = 3 if end - start >= 6 and token.startswith(_TRIPLE) else 1
            append(token[:q] + " " * (end - start - 2 * q) + token[-q:])
        pos = end
    pieces.append(text[pos:])
    masked = "".join(pieces)
    return Lexed(code=[""] + masked.split("\n"), comments=comments, string_lines=string_lines,
                 string_inner=string_inner)


_TRIPLE = ('"""', "'''")


def _blank_string(token: str, newlines: int) -> str:
    """Blank a literal's contents, keeping its quotes so code columns still line up."""
    q = 3 if token.startswith(_TRIPLE) and len(token) >= 6 else 1
    inner = token[q:-q]
    inner = _spaces(inner.split("\n")) if newlines else " " * len(inner)
    return token[:q] + inner + token[-q:]


def _spaces(parts: list[str]) -> str:
    return "\n".join([" " * len(p) for p in parts])
