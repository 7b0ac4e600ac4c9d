"""The resolution layer of a fix, read from the fix itself: the symbols it changed and how, the key lines before
and after, and the regression test it added with the assertion that pins the bug.

`of(cand)` analyses a candidate once (the result is kept on it: purification and the standardiser both read
it). Python source files are read with the AST (codechange); other source files count as changed code whose
symbols are unknown, so a fix written in C or shell is never called a pure addition from what Python shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sentinel.memory.learn import codechange, regression
from sentinel.memory.learn.astchange import KINDS, VAGUE, Change
from sentinel.memory.learn.codechange import FileChanges, SymbolChange
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.regression import RegressionTest

MAX_SYMBOLS = 30


@dataclass
class Located:
    """One change, where it is."""

    path: str
    symbol: SymbolChange
    change: Change

    @property
    def qualname(self) -> str:
        return self.symbol.qualname


@dataclass
class Analysis:
    files: list[FileChanges] = field(default_factory=list)  # Python source files, most changed first
    other_sources: list[str] = field(default_factory=list)  # changed source files that are not Python
    test_files: list = field(default_factory=list)  # the changed test files (FileDiff), read on first use
    _tests: list[RegressionTest] | None = None

    @property
    def tests(self) -> list[RegressionTest]:
        """The tests the fix added or changed (read when a card is written: most candidates never need them)."""
        if self._tests is None:
            names = self.names()
            self._tests = [t for f in self.test_files
                           for t in regression.from_file(f.path, f.diff, f.after, f.fetched, names)]
        return self._tests

    @property
    def complete(self) -> bool:
        """Every changed source file is Python and was read with the AST (both versions)."""
        return bool(self.files) and not self.other_sources and all(f.parsed for f in self.files)

    @property
    def python(self) -> bool:
        """Some changed source file is Python."""
        return len(self.files) > len(self.other_sources)

    @property
    def behaviour_changed(self) -> bool:
        return any(f.behaviour_changed for f in self.files) or bool(self.other_sources)

    @property
    def existing_changed(self) -> bool:
        return any(f.existing_changed for f in self.files) or bool(self.other_sources)

    def symbols(self) -> list[str]:
        """"path::Qualname" of every function, method or class whose code the fix changed or added."""
        out = []
        for f in self.files:
            for s in f.symbols:
                if s.qualname and s.status != "removed":
                    out.append(f"{f.path}::{s.qualname}")
        return list(dict.fromkeys(out))[:MAX_SYMBOLS]

    def ranked(self) -> list[Located]:
        """Every change, the most telling kind first; changes to existing functions before module-level code
        and additions, files in the order of their size of change."""
        out = [Located(f.path, s, c) for f in self.files for s in f.symbols for c in s.changes]
        order = {id(x): i for i, x in enumerate(out)}
        # functions and classes first: module-level code is mostly imports and compatibility shims
        return sorted(out, key=lambda x: (x.symbol.status == "added", not x.qualname, KINDS[x.change.kind][1],
                                          order[id(x)]))

    def specific(self) -> list[Located]:
        return [x for x in self.ranked() if x.change.kind not in VAGUE]

    @property
    def key(self) -> Located | None:
        ranked = self.ranked()
        return ranked[0] if ranked else None

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(x.change.kind for x in self.ranked()))

    def facts(self, limit: int = 8) -> list[str]:
        """What the taxonomy's change cues read, the most telling change first: each change's kind, its facts,
        and the function it is in (`in:__eq__`)."""
        out = []
        for x in self.specific()[:limit]:
            out.append(x.change.kind)
            out += x.change.facts
            if x.qualname:
                out.append("in:" + x.qualname.rsplit(".", 1)[-1])
        return list(dict.fromkeys(out))

    def test(self) -> RegressionTest | None:
        return regression.choose(self.tests)

    def excerpt(self) -> dict | None:
        """{file, symbol, before, after} of the key change (before is empty for an addition)."""
        key = self.key
        if key is None:
            return None
        before, after = codechange.excerpt(key.symbol, key.change)
        if not before and not after:
            return None
        return {"file": key.path, "symbol": key.qualname, "before": before, "after": after}

    def names(self) -> set[str]:
        """Identifiers of what the fix changed: its symbols' names, and the exceptions and callees its changes
        involve."""
        out: set[str] = set()
        for f in self.files:
            for s in f.symbols:
                if s.qualname:
                    out.add(s.qualname.rsplit(".", 1)[-1])
                for c in s.changes:
                    for fact in c.facts:
                        if ":" in fact:
                            out.add(fact.split(":", 1)[1].rsplit(".", 1)[-1])
        return {n for n in out if n and n != "*"}


def of(cand: Candidate) -> Analysis:
    if isinstance(cand.analysis, Analysis):
        return cand.analysis
    res = Analysis()
    sources = sorted(cand.role_files("source"), key=lambda f: -(f.added + f.removed))
    for f in sources:
        if codechange.PY_FILE.search(f.path):
            res.files.append(codechange.analyse(f.path, f.diff, f.before, f.after, f.fetched))
        else:
            res.other_sources.append(f.path)
            res.files.append(codechange.from_text(f.path, f.diff))
    res.test_files = [f for f in cand.role_files("test") if codechange.PY_FILE.search(f.path)]
    cand.analysis = res
    return res
