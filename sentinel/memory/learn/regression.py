"""The regression test a fix added, and the assertion that pins the bug, read from the test diff with the AST.

A test function (`test_*`, also as a method of a `Test*` class) whose lines the fix added or changed is a
regression test of the fix; new tests come before changed ones. Its pinning assertion is one of the checks on
the lines the fix added — an `assert`, a `with pytest.raises(...)` / `pytest.warns(...)` block, a
`self.assertEqual(...)`-style call — preferring one that names what the fix changed (a changed function, an
exception it raises or catches), then an expected exception, then the last check added. Without the test file's
versions (fix records, pull-request patches) the added lines of the diff are read instead.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from sentinel.memory.learn import astchange, codechange

_ASSERT_CALL = re.compile(r"(?:^|\.)(?:assert\w*|fail\w*)$")
_RAISES_CALL = re.compile(r"(?:^|\.)(?:raises|warns|deprecated_call|assertRaises\w*|assertWarns\w*|assertLogs)$")
_TEST_NAME = re.compile(r"^test|^Test")
_LINE_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)")
_LINE_CHECK = re.compile(r"^\s*(?:assert\b|with\s+(?:pytest\.)?(?:raises|warns)\(|self\.assert\w*\(|"
                         r"pytest\.(?:raises|warns|fail)\()")
MAX_ASSERTION = 200


@dataclass
class RegressionTest:
    name: str  # `test_x` or `TestCase.test_x`
    file: str
    new: bool  # added by the fix (False: an existing test it changed)
    assertion: str = ""  # the check that pins the bug, one line


def _checks(node: ast.AST) -> list[tuple[int, ast.AST]]:
    """(line, node) of each check in a test function, in source order: an `assert`, a `with pytest.raises()`
    block, an assertion call."""
    out = []
    for sub in _statements(node):
        if isinstance(sub, ast.Assert):
            out.append((sub.lineno, sub))
        elif isinstance(sub, (ast.With, ast.AsyncWith)):
            if any(isinstance(i.context_expr, ast.Call) and _RAISES_CALL.search(astchange.dotted(i.context_expr.func))
                   for i in sub.items):
                out.append((sub.lineno, sub))
        elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call):
            name = astchange.dotted(sub.value.func)
            if _ASSERT_CALL.search(name.rsplit(".", 1)[-1]) or _RAISES_CALL.search(name):
                out.append((sub.lineno, sub))
    return sorted(out, key=lambda x: x[0])


def _statements(node: ast.AST) -> list[ast.AST]:
    """Every statement under a function, nested blocks included (checks are statements: no need to visit every
    expression node)."""
    out: list[ast.AST] = []
    stack = list(getattr(node, "body", []))
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, name, None) or [])
        for h in getattr(stmt, "handlers", None) or []:
            stack.extend(h.body)
        for case in getattr(stmt, "cases", None) or []:
            stack.extend(case.body)
    return out


def _check_text(node: ast.AST) -> str:
    if isinstance(node, (ast.With, ast.AsyncWith)):
        expr = next(i.context_expr for i in node.items if isinstance(i.context_expr, ast.Call))
        body = astchange.text(node.body[0], 90) if node.body else ""
        return f"with {astchange.text(expr, 90)}: {body}".strip()
    if isinstance(node, ast.Expr):
        return astchange.text(node.value, MAX_ASSERTION)
    return astchange.text(node, MAX_ASSERTION)


def _words(node: ast.AST) -> set[str]:
    out = set()
    for x in ast.walk(node):
        if isinstance(x, ast.Name):
            out.add(x.id.lower())
        elif isinstance(x, ast.Attribute):
            out.add(x.attr.lower())
    return out


def _pick_node(checks: list[tuple[int, ast.AST]], names: set[str]) -> str:
    """The check that names what the fix changed, else one that expects an exception, else the last."""
    if not checks:
        return ""
    low = {n.lower() for n in names if len(n) >= 3}

    def score(item):
        line, node = item
        raises = isinstance(node, (ast.With, ast.AsyncWith)) or "raises" in " ".join(_words(node))
        return (bool(_words(node) & low), raises, line)

    return _check_text(max(checks, key=score)[1])


def _pick(checks: list[tuple[int, str]], names: set[str]) -> str:
    """The same choice among checks known by their text alone (the diff's lines)."""
    if not checks:
        return ""
    low = {n.lower() for n in names if len(n) >= 3}

    def score(item):
        line, text = item
        words = {w.lower() for w in re.findall(r"[A-Za-z_]\w+", text)}
        raises = text.startswith("with ") or "raises" in text.lower()
        return (bool(words & low), raises, line)

    return max(checks, key=score)[1]


def from_file(path: str, diff: str, after: str | None, fetched: bool, names: set[str]) -> list[RegressionTest]:
    """The tests of one test file the fix added or changed. names: identifiers of what the fix changed (its
    functions, the exceptions it raises or catches), which a pinning assertion tends to name."""
    hunks = codechange.read_hunks(diff)
    added = {n for h in hunks for n, _ in h.added}
    new_tree = codechange.parse_near(after, added) if fetched and after is not None and added else None
    if new_tree is None:
        return _from_lines(path, hunks, names)
    out = []
    for d in codechange.defs_of(new_tree):
        leaf = d.qualname.rsplit(".", 1)[-1]
        if not isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not leaf.startswith("test"):
            continue
        if not all(_TEST_NAME.match(p) for p in d.qualname.split(".")[:-1]):
            continue  # a helper nested in a test, or a method of a class that is not a test case
        lines = set(range(d.start, d.end + 1))
        if not lines & added:
            continue
        new = d.node.lineno in added  # its `def` line is the fix's: a new test
        every = _checks(d.node)
        checks = [(n, c) for n, c in every if n in added] or (every if new else [])
        out.append(RegressionTest(d.qualname, path, new, _pick_node(checks, names)))
    return out


def _from_lines(path: str, hunks: list[codechange.Hunk], names: set[str]) -> list[RegressionTest]:
    out: list[RegressionTest] = []
    for h in hunks:
        current: RegressionTest | None = None
        checks: list[tuple[int, str]] = []
        header = _LINE_DEF.match(h.header)
        if header:
            current = RegressionTest(header.group(1), path, False)
        for i, (sign, body) in enumerate(h.lines):
            m = _LINE_DEF.match(body)
            if m:
                if current is not None and (checks or current.new):
                    current.assertion = _pick(checks, names)
                    out.append(current)
                current, checks = RegressionTest(m.group(1), path, sign == "+"), []
                continue
            if current is not None and sign == "+" and _LINE_CHECK.match(body):
                checks.append((i, " ".join(body.split())[:MAX_ASSERTION]))
        if current is not None and (checks or current.new):
            current.assertion = _pick(checks, names)
            out.append(current)
    return out


def choose(tests: list[RegressionTest]) -> RegressionTest | None:
    """The regression test a card names: a new test with an assertion, else any with one, else the first."""
    for cond in (lambda t: t.new and t.assertion, lambda t: t.assertion, lambda t: t.new, lambda t: True):
        for t in tests:
            if cond(t):
                return t
    return None
