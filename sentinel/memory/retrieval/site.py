"""Where a failure sits, as recall at the moment of failure sees it: the file, the enclosing function and class,
and the names on and around the failing lines.

The project's own past fixes are the most useful memory there is, and the most telling thing about one is *where*
it was: a past fix of the very function that fails now comes first, then one of the same file (each better when it
was about the same mechanism). A finding knows its file and line; this module reads the rest from the file's text:
the enclosing definitions from Python's AST (exact, decorators included), and code-shaped names from the lines
around the finding. Other languages, and Python that does not parse, get the file, the names and the function the
diff's hunk header names, but no scope: a "same function" claim is made only where it can be exact.
"""

from __future__ import annotations

import re

from sentinel.memory.cards.codemap import norm_path
from sentinel.record import Record, factory

AROUND = 2  # lines above and below a finding whose names describe it
MAX_NAMES = 12
MAX_PARSE_BYTES = 2_000_000  # a larger file is not parsed for its scopes (recall stays cheap)

_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_KEYWORDS = frozenset("""
and as assert async await break class continue def del elif else except finally for from global if import in is
lambda nonlocal not or pass raise return try while with yield true false none self cls
var let const function new this typeof instanceof null undefined catch throw case switch default public private
""".split())


class FailureSite(Record):
    """What a failing finding knows about its place.

    path: repository-relative POSIX path. scope: the enclosing definitions' qualified names, innermost first
    (["Client.send", "Client"]), empty when unknown. names: code-shaped names on and around the failing lines
    and of the enclosing definitions, most specific first."""

    path: str
    line: int | None = None
    scope: list[str] = factory(list)
    names: list[str] = factory(list)

    @property
    def key_path(self) -> str:
        """The path as the index's facets spell it (no leading src/ or lib/)."""
        return norm_path(self.path)

    def symbols(self) -> list[str]:
        """The scope as card symbols spell them: "path::Qualname", innermost first."""
        return [f"{self.key_path}::{q}" for q in self.scope]


def python_scopes(text: str, lines: list[int]) -> dict[int, list[str]]:
    """{line: enclosing qualified names, innermost first} for each line, from the AST; {} when the text does
    not parse. A definition spans its decorators, its signature and its body."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    spans: list[tuple[int, int, str]] = []

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((first, child.end_lineno or child.lineno, qual))
                walk(child, qual + ".")
            elif isinstance(child, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)) \
                    or type(child).__name__ in ("TryStar", "Match", "match_case"):
                walk(child, prefix)  # definitions under a module-level `if TYPE_CHECKING:` keep their names

    walk(tree, "")
    out: dict[int, list[str]] = {}
    for line in lines:
        inside = [(b - a, q) for a, b, q in spans if a <= line <= b]
        out[line] = [q for _, q in sorted(inside)]
    return out


def _names(text_lines: list[str], line: int | None) -> list[str]:
    if not line:
        return []
    lo, hi = max(0, line - 1 - AROUND), min(len(text_lines), line + AROUND)
    at = text_lines[line - 1] if 0 < line <= len(text_lines) else ""
    seen: dict[str, int] = {}
    for n, text in enumerate(text_lines[lo:hi], lo + 1):
        code = text.split("#", 1)[0] if text.lstrip()[:1] != "#" else ""
        for m in _NAME.finditer(code):
            word = m.group(0)
            if word.lower() in _KEYWORDS or word.isdigit():
                continue
            # the failing line's own names first, then the closest lines'
            rank = 0 if text is at else abs(n - line)
            seen[word] = min(seen.get(word, rank), rank)
    return [w for w, _ in sorted(seen.items(), key=lambda kv: (kv[1], -len(kv[0])))]


_HUNK_DEF = re.compile(r"\b(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")


def sites(findings, text: str | None, language: str = "", hunk_header: str = "") -> list[FailureSite]:
    """A FailureSite per finding of one file, from the file's post-change text (None: not readable, then the
    hunk header's definition name stands in for the names)."""
    findings = [f for f in findings if f.path]
    if not findings:
        return []
    lines = [f.line for f in findings if f.line]
    text_lines = text.splitlines() if text else []
    scopes: dict[int, list[str]] = {}
    if text and language == "python" and len(text) <= MAX_PARSE_BYTES:
        scopes = python_scopes(text, lines)
    out = []
    for f in findings:
        scope = scopes.get(f.line, []) if f.line else []
        names = _names(text_lines, f.line)
        own = [q.rsplit(".", 1)[-1] for q in scope]
        if not scope and hunk_header:
            m = _HUNK_DEF.search(hunk_header)
            own = [m.group(1)] if m else []
        names = list(dict.fromkeys([*own, *names]))[:MAX_NAMES]
        out.append(FailureSite(path=f.path, line=f.line, scope=scope, names=names))
    return out
