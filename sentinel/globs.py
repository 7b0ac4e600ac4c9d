"""gitignore-style path patterns, with git's own semantics, for `exclude`, `per-path-ignores` and file roles.

The patterns are translated by pathspec (the library git-aware tools use for exactly this: ``src/*.py`` does not
match ``src/a/b.py``, ``dir/`` matches everything below ``dir``, a pattern without a slash matches at any depth,
``!pattern`` re-includes, the last matching pattern wins). Importing pathspec costs ~20 ms, a fifth of a hook run,
so it is imported only to *translate* patterns; the translated regexes are plain strings that the config cache
stores, and the hook path compiles them with :mod:`re` alone.
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
        out.append((regex.replace("(?P<ps_d>/)", "/"), bool(include)))
    return tuple(out)


class Matcher:
    """Matches repository-relative POSIX paths against translated patterns; the last matching pattern wins.

    The patterns are compiled into one regex, and only on the first match: compiling costs ~25 us a pattern, and
    the default role patterns alone are 178 of them on every hook run. Without negations it is their
    alternation (does any match); with negations the alternation runs from the last pattern to the first, one
    named group each, so the alternative that matches is the last matching pattern and its group says whether it
    includes or excludes."""

    __slots__ = ("_translated", "_regex", "_include")

    def __init__(self, translated: Translated | list):
        self._translated = tuple((src, bool(inc)) for src, inc in translated)
        self._regex: re.Pattern | None = None
        self._include: dict[str, bool] | None = None  # group name -> include, when there are negations

    def __bool__(self) -> bool:
        return bool(self._translated)

    def _compile(self) -> re.Pattern:
        if all(inc for _, inc in self._translated):
            self._regex = _compile("|".join(f"(?:{src})" for src, _ in self._translated))
        else:
            last_first = list(enumerate(self._translated))[::-1]
            self._include = {f"_p{i}": inc for i, (_, inc) in last_first}
            self._regex = _compile("|".join(f"(?P<_p{i}>{src})" for i, (src, _) in last_first))
        return self._regex

    def match(self, path: str) -> bool:
        if not self._translated:
            return False
        m = (self._regex or self._compile()).match(path)
        if m is None:
            return False
        return True if self._include is None else self._include[m.lastgroup]


@lru_cache(maxsize=512)
def _compile(source: str) -> re.Pattern:
    return re.compile(source)


@lru_cache(maxsize=256)
def matcher_for(patterns: tuple[str, ...]) -> Matcher:
    """A matcher for patterns that were not translated ahead of time (API callers, defaults)."""
    return Matcher(translate(patterns))


def matches(path: str, patterns) -> bool:
    return bool(patterns) and matcher_for(tuple(patterns)).match(path)
