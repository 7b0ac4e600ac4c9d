"""Intent checks' shared parts: what the change was asked to do (task), what the change is (digest),
what its author says about it (claims) and the evidence that can back those words (evidence)."""

import re as _re


class lazy_re:  # noqa: N801 - used like re.compile
    """A regex compiled on first use: the commit-msg hook is a fresh process each time, and most of these
    patterns are needed only when a message holds the words they look for."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled = None

    @property
    def compiled(self) -> _re.Pattern:
        if self._compiled is None:
            self._compiled = _re.compile(*self._args)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._args[0]

    def search(self, *args):
        return self.compiled.search(*args)

    def match(self, *args):
        return self.compiled.match(*args)

    def finditer(self, *args):
        return self.compiled.finditer(*args)

    def findall(self, *args):
        return self.compiled.findall(*args)

    def sub(self, *args):
        return self.compiled.sub(*args)
