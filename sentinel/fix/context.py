"""What a fixer knows about the file it repairs, and helpers every fixer shares."""

from __future__ import annotations

import ast
from typing import Callable

from sentinel.fix.model import NotFixable

BOM = "\ufeff"


class FixContext:
    def __init__(self, path: str, language: str, added: set[int], config=None, root: str | None = None,
                 read: Callable[[str], str | None] | None = None, unsafe: bool = False):
        self.path = path
        self.language = language
        self.added = added  # line numbers the change added (the rest existed before)
        self.config = config
        self.root = root
        self._read = read
        self.unsafe = unsafe  # --unsafe-fixes: a fixer may choose a variant that is unsafe here
        self._sources: dict[str, str | None] = {}
        self._memo: dict[str, object] = {}

    def memo(self, key: str, compute: Callable[[], object]):
        """What `compute` returns for this file, computed once: facts every fix of the file shares (its
        tree, its layout), so that planning is linear in the file however many findings it has. A reason
        not to fix (NotFixable) is kept as well and raised again."""
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except NotFixable as exc:
                self._memo[key] = exc
        value = self._memo[key]
        if isinstance(value, NotFixable):
            raise value
        return value

    def read(self, path: str) -> str | None:
        """Another file of the repository, from the same snapshot as the checked content (None: absent)."""
        if path not in self._sources:
            self._sources[path] = self._read(path) if self._read is not None else None
        return self._sources[path]


def lines_of(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (a lone "\\r" stays inside its line, as git sees it)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def body_and_ending(line: str) -> tuple[str, str]:
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""


def python_tree(text: str) -> ast.AST | None:
    try:
        return ast.parse(text[1:] if text.startswith(BOM) else text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def finding_lines(finding, count: int) -> range:
    first = finding.line or 0
    last = finding.end_line or first
    return range(max(first, 1), min(last, count) + 1)
