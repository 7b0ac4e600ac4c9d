"""gitignore-style path patterns, with git's own semantics, for `exclude`, `per-path-ignores` and file roles.

The patterns are translated by pathspec (the library git-aware tools use for exactly this: ``src/*.py`` does not
match ``src/a/b.py``, ``dir/`` matches everything below ``dir``, a pattern without a slash matches at any depth,
``!pattern`` re-includes, the last matching pattern wins). Importing pathspec costs ~20 ms, a fifth of a hook run,
so it is imported only to *translate* patterns; the translated regexes are plain strings that the config cache
stores, and the hook path compiles them with :mod:`re` alone.

Compiling is itself the cost of a hook run: Python's regex compiler is pure Python, ~50 us a pattern, and the
default role patterns are 178 of them (~9 ms). Most patterns people write — a name anywhere (``conftest.py``), a
directory anywhere (``docs/``), an extension (``*.md``), a fixed prefix (``.github/workflows/``), ``tests/**/data/``
— are answered with string operations on the path's components (:func:`fast_pattern`); only the others (``?``,
``[...]``, escapes, ...) are compiled, and only when a path gets that far. tests/test_globs.py proves the two
give pathspec's answers on many generated patterns and paths.
"""

from __future__ import annotations

import re
from functools import lru_cache

# (regex source, include?) per pattern, in order.
Translated = tuple[tuple[str, bool], ...]


def translate(patterns: list[str] | tuple[str, ...]) -> Translated:
    """gitignore patterns -> regex sources (pathspec); raises ValueError naming a malformed pattern."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    out = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError(f"empty pattern {pattern!r}")
        try:
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(pattern)
        except Exception as exc:  # pathspec raises several types for malformed globs
            raise ValueError(f"invalid pattern {pattern!r}: {exc}") from None
        if regex is None:  # a comment or blank line in gitignore terms
            raise ValueError(f"pattern {pattern!r} matches nothing (a gitignore comment?)")
        # One named group per pattern is pathspec's; we only need whether it matched.
        regex = regex.replace("(?P<ps_d>/)", "/")
        if not regex.startswith("^"):
            # pathspec looks for its regex anywhere in the path (re.search); ours are tried from the path's start
            # (re.match): an unanchored one ('*/', '**/' -> "/") may start anywhere
            regex = f"[\\s\\S]*?(?:{regex})"
        out.append((regex, bool(include)))
    return tuple(out)


# --- string-operation answers for the common shapes -------------------------------------------------------------

# Characters a segment of a fast pattern may hold besides '*': no glob syntax ('?', '[', '\\'), no whitespace
# (gitignore strips trailing blanks), no '!' or '#' (negation, comment).
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+@~=,%")
_ANY = object()  # the segment "**": zero or more directories


class FastPattern:
    """One gitignore pattern as segments matched against a path's components, with pathspec's semantics:
    a pattern without an inner slash matches at any depth; one with a slash is anchored at the root; a
    trailing slash (or ``/**``) needs something below what it matched; otherwise what it matched may be a
    file or a directory whose contents then match too; ``**`` is zero or more directories; ``*`` any part of
    one segment."""

    __slots__ = ("segments", "anchored", "dir_only", "needle")

    def __init__(self, segments: tuple, anchored: bool, dir_only: bool):
        # a segment: a plain string, _ANY, or a tuple of the parts between its stars
        self.segments = segments
        self.anchored = anchored
        self.dir_only = dir_only
        # the longest text every matching path contains: most paths are turned away by one `in`
        texts = [t for seg in segments if seg is not _ANY for t in ((seg,) if seg.__class__ is str else seg)]
        self.needle = max(texts, key=len)

    def match(self, parts: list[str]) -> bool:
        limit = len(parts) - 1 if self.dir_only else len(parts)  # the last component it may end on
        if self.anchored:
            return _match_from(self.segments, 0, parts, 0, limit)
        return any(_match_from(self.segments, 0, parts, start, limit) for start in range(limit))


def _match_from(segments: tuple, si: int, parts: list[str], pi: int, limit: int) -> bool:
    while si < len(segments):
        seg = segments[si]
        if seg is _ANY:
            return any(_match_from(segments, si + 1, parts, p, limit) for p in range(pi, limit + 1))
        if pi >= limit:
            return False
        if not (parts[pi] == seg if seg.__class__ is str else _star_match(seg, parts[pi])):
            return False
        si += 1
        pi += 1
    return True


def _star_match(pieces: tuple[str, ...], name: str) -> bool:
    """Does `name` match the segment ``pieces[0]*pieces[1]*...*pieces[-1]`` ('*': any run of characters)?"""
    head, tail = pieces[0], pieces[-1]
    end = len(name) - len(tail)
    if end < len(head) or not name.startswith(head) or not name.endswith(tail):
        return False
    pos = len(head)
    for middle in pieces[1:-1]:  # leftmost placement of each middle piece leaves the most room for the rest
        found = name.find(middle, pos, end)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


def fast_pattern(pattern: str) -> tuple[FastPattern, bool] | None:
    """(the pattern's string-operation form, include?) for the shapes it covers, else None (use the regex)."""
    if not isinstance(pattern, str):
        return None
    include = not pattern.startswith("!")
    body = pattern if include else pattern[1:]
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    anchored = body.startswith("/")
    if anchored:
        body = body[1:]
    raw = body.split("/")
    if len(raw) > 1:
        anchored = True  # a slash inside: relative to the root...
        if raw[0] == "**" and not pattern.startswith(("/", "!/")):
            anchored = False  # ...unless it starts with "**/": any depth
            raw = raw[1:]
    if raw[-1] == "**" and len(raw) > 1 and not dir_only:
        raw = raw[:-1]  # "a/**": everything below a
        dir_only = True
    segments: list = []
    for seg in raw:
        if seg == "**":
            if not segments or segments[-1] is _ANY:
                return None
            segments.append(_ANY)
            continue
        if seg == "*" and len(raw) > 1:
            segments.append(("", ""))  # one whole (non-empty) component
            continue
        if not seg or not _PLAIN.issuperset(seg.replace("*", "")) or "**" in seg or seg.strip("*") == "":
            return None
        segments.append(tuple(seg.split("*")) if "*" in seg else seg)
    if not segments or segments[-1] is _ANY:
        return None
    return FastPattern(tuple(segments), anchored, dir_only), include


def _components(path: str) -> list[str] | None:
    """The path's components when string operations answer exactly as the regexes do: no empty component
    (a leading, trailing or doubled slash) and no newline (which '.' and '$' treat specially)."""
    if "\n" in path:
        return None
    parts = path.split("/")
    return None if "" in parts else parts


class Matcher:
    """Matches repository-relative POSIX paths against translated patterns; the last matching pattern wins.

    Patterns of a common shape are answered with string operations; the rest are compiled into one regex,
    and only on the first path that needs it. Without negations it is their alternation (does any match);
    with negations the alternation runs from the last pattern to the first, one named group each, so the
    alternative that matches is the last matching pattern and its group says whether it includes or
    excludes. A path string operations cannot answer exactly (see :func:`_components`) uses the regex of
    every pattern."""

    __slots__ = ("_translated", "_patterns", "_includes", "_fast", "_slow", "_negations", "_regex", "_include",
                 "_slow_regex", "_slow_include")

    def __init__(self, translated: Translated | list | None, patterns: list[str] | tuple[str, ...] | None = None):
        """`translated` None: every pattern has a string-operation form (see :func:`matcher_for`), and the
        patterns are translated (pathspec, ~20 ms to import) only if a path needs the regexes."""
        self._patterns = tuple(patterns) if patterns is not None else None
        if translated is None:
            fast = [fast_pattern(p) for p in self._patterns]
            self._translated = None
            self._includes = tuple(found[1] for found in fast)
        else:
            self._translated = tuple((src, bool(inc)) for src, inc in translated)
            self._includes = tuple(inc for _, inc in self._translated)
            fast = [fast_pattern(p) for p in patterns] if patterns is not None and len(patterns) == len(
                self._translated) else [None] * len(self._translated)
        self._negations = not all(self._includes)
        self._fast: list[tuple[int, FastPattern]] = []  # (index, pattern), last first
        self._slow: list[int] = []  # indexes of the patterns only the regex answers
        for i, found in enumerate(fast):
            if found is not None and found[1] == self._includes[i]:
                self._fast.append((i, found[0]))
            else:
                self._slow.append(i)
        self._fast.reverse()
        self._regex: re.Pattern | None = None
        self._include: dict[str, bool] | None = None  # group name -> include, when there are negations
        self._slow_regex: re.Pattern | None = None
        self._slow_include: dict[str, int] | None = None  # group name -> pattern index

    def __bool__(self) -> bool:
        return bool(self._includes)

    def _sources(self) -> Translated:
        if self._translated is None:
            self._translated = translate(self._patterns)
        return self._translated

    def _compile(self) -> re.Pattern:
        if not self._negations:
            self._regex = _compile("|".join(f"(?:{src})" for src, _ in self._sources()))
        else:
            last_first = list(enumerate(self._sources()))[::-1]
            self._include = {f"_p{i}": inc for i, (_, inc) in last_first}
            self._regex = _compile("|".join(f"(?P<_p{i}>{src})" for i, (src, _) in last_first))
        return self._regex

    def _compile_slow(self) -> re.Pattern:
        last_first = self._slow[::-1]
        self._slow_include = {f"_p{i}": i for i in last_first}
        self._slow_regex = _compile("|".join(f"(?P<_p{i}>{self._sources()[i][0]})" for i in last_first))
        return self._slow_regex

    def _last_slow(self, path: str) -> int:
        """The index of the last slow pattern matching the path, or -1."""
        m = (self._slow_regex or self._compile_slow()).match(path)
        return -1 if m is None else self._slow_include[m.lastgroup]

    def match(self, path: str) -> bool:
        if not self._includes:
            return False
        parts = _components(path) if self._fast else None
        if parts is None:
            m = (self._regex or self._compile()).match(path)
            if m is None:
                return False
            return True if self._include is None else self._include[m.lastgroup]
        last = -1  # the last fast pattern that matches
        for i, pattern in self._fast:
            if pattern.needle in path and pattern.match(parts):
                last = i
                break
        if last >= 0 and not self._negations:
            return True
        if self._slow and self._slow[-1] > last:
            last = max(last, self._last_slow(path))
        return last >= 0 and self._includes[last]


@lru_cache(maxsize=512)
def _compile(source: str) -> re.Pattern:
    return re.compile(source)


@lru_cache(maxsize=256)
def matcher_for(patterns: tuple[str, ...]) -> Matcher:
    """A matcher for patterns that were not translated ahead of time (API callers, a linter's per-file ignores):
    patterns string operations answer need no translation, and no pathspec import, until a path needs it."""
    if patterns and all(fast_pattern(p) is not None for p in patterns):
        return Matcher(None, patterns)
    return Matcher(translate(patterns), patterns)


def matches(path: str, patterns) -> bool:
    return bool(patterns) and matcher_for(tuple(patterns)).match(path)
