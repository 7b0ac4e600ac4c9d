"""Regular expressions compiled on first use.

A check module declares dozens of patterns as data; compiling them all at import costs
more than checking a small commit. A LazyPattern behaves like the compiled pattern (its
methods are bound on first access, so later calls cost a plain attribute lookup).
"""

from __future__ import annotations

import re


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0):
        self._source = (pattern, flags)
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return self._compiled

    def __getattr__(self, name: str):
        value = getattr(self.compiled(), name)
        setattr(self, name, value)  # cache the bound method/attribute on the instance
        return value


def lazy_compile(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
