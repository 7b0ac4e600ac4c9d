"""SEN305 on the AST: an attribute or item access on a lookup that returns None when nothing is found."""

from __future__ import annotations

import ast
import re

from sentinel.checks.base import FileContext, LineSpans, parent_map
from sentinel.checks.chaos.rules import NONE_ACCESS
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding

_RE_FUNCS = frozenset({"match", "search", "fullmatch"})
_NONE_LITERALS = ("match(", "search(", ".get(", "which(", "getenv(")
# Functions and methods whose result may be None; anything else is skipped before any lookup.
_NONE_ATTRS = frozenset({"match", "search", "fullmatch", "get", "getenv", "which"})
# Receivers whose .get() is an HTTP request, an ORM lookup or a queue/future, not a mapping lookup.
_NOT_MAPPING = frozenset({
    "requests", "httpx", "aiohttp", "urllib", "urllib3", "http", "https", "session", "sess", "client", "api",
    "browser", "driver", "queue", "q", "objects", "pool", "executor", "future", "futures", "result", "results",
    "promise", "celery", "self", "cls", "super", "var", "router", "app",
})
# Receivers that are dicts whatever object they hang off: `cls.__dict__.get(name)` is a mapping lookup.
_KNOWN_MAPPINGS = frozenset({"__dict__", "__annotations__", "__globals__", "vars()", "globals()", "locals()"})
_URLISH_NAME = lazy_compile(r"url|uri|endpoint|path|route|link|href", re.I)
_WORDS = lazy_compile(r"[A-Za-z][a-z]*|[A-Z]+")


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            inner = _dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        else:
            return None


class _Imports:
    """What the module calls re / os / shutil and what it compiled with re.compile, computed once."""

    def __init__(self, ctx: FileContext):
        self.re_modules = {"re", "regex"}
        self.re_funcs: set[str] = set()
        self.getenv: set[str] = {"os.getenv", "os.environ.get"}
        self.which: set[str] = {"shutil.which"}
        for node in ctx.nodes(ast.Import):
            for a in node.names:
                if a.name in ("re", "regex") and a.asname:
                    self.re_modules.add(a.asname)
                elif a.name == "os" and a.asname:
                    self.getenv |= {f"{a.asname}.getenv", f"{a.asname}.environ.get"}
                elif a.name == "shutil" and a.asname:
                    self.which.add(f"{a.asname}.which")
        for node in ctx.nodes(ast.ImportFrom):
            for a in node.names:
                local = a.asname or a.name
                if node.module in ("re", "regex") and a.name in _RE_FUNCS:
                    self.re_funcs.add(local)
                elif node.module == "os" and a.name == "getenv":
                    self.getenv.add(local)
                elif node.module == "os" and a.name == "environ":
                    self.getenv.add(f"{local}.get")
                elif node.module == "shutil" and a.name == "which":
                    self.which.add(local)
        # Names bound to re.compile(...), with the pattern when it is a literal.
        self.compiled: dict[str, ast.expr | None] = {}
        for node in ctx.nodes(ast.Assign):
            if isinstance(node.value, ast.Call) and self._is_compile(node.value.func):
                for t in node.targets:
                    name = _dotted(t)
                    if name:
                        self.compiled[name] = node.value.args[0] if node.value.args else None

    def _is_compile(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Attribute):
            return func.attr == "compile" and isinstance(func.value, ast.Name) and func.value.id in self.re_modules
        return False


def _none_source(call: ast.Call, imports: _Imports) -> str | None:
    """A short description when this call returns None on the unhappy path, else None."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in imports.re_funcs:
            if func.id != "fullmatch" and _always_matches(call.args[0] if call.args else None):
                return None
            return f"{func.id}() returns None when nothing matches"
        if func.id in imports.getenv and _one_arg(call):
            return f"{func.id}() returns None when the variable is unset"
        if func.id in imports.which:
            return f"{func.id}() returns None when the program is not on PATH"
        return None
    if not isinstance(func, ast.Attribute):
        return None
    dotted = _dotted(func)
    if func.attr in _RE_FUNCS:
        owner = _dotted(func.value)
        if owner in imports.re_modules:
            pattern = call.args[0] if call.args else None
        elif owner in imports.compiled:
            pattern = imports.compiled[owner]
        else:
            return None
        if func.attr != "fullmatch" and _always_matches(pattern):
            return None
        return f"{dotted}() returns None when nothing matches"
    if dotted in imports.which:
        return f"{dotted}() returns None when the program is not on PATH"
    if dotted in imports.getenv and _one_arg(call):
        return f"{dotted}() returns None when the variable is unset"
    if func.attr == "get" and _one_arg(call):
        owner = _dotted(func.value)
        if owner is None and not isinstance(func.value, (ast.Subscript, ast.Call)):
            return None
        known = owner is not None and owner.rsplit(".", 1)[-1] in _KNOWN_MAPPINGS
        words = {w.lower() for w in _WORDS.findall(owner or "")}
        if (not known and words & _NOT_MAPPING) or _urlish(call.args[0]):
            return None
        return f"{owner or 'mapping'}.get() returns None when the key is missing"
    return None


# Zero-width assertions make "matches the empty string" say nothing about other strings.
_ASSERTIONS = lazy_compile(r"\$|\\[bBZzA]|\(\?[=!<]|(?<!^)\^")


def _always_matches(pattern: ast.expr | None) -> bool:
    """A literal pattern that matches the empty string without assertions (``r"\\s*"``) matches at
    the start of every string, so match()/search() never return None."""
    if not isinstance(pattern, ast.Constant) or not isinstance(pattern.value, (str, bytes)):
        return False
    text = pattern.value
    probe = text if isinstance(text, str) else text.decode("latin-1")
    if _ASSERTIONS.search(probe):
        return False
    try:
        return re.compile(text).match(text[:0]) is not None
    except (re.error, RecursionError, OverflowError):
        return False


def _one_arg(call: ast.Call) -> bool:
    """A lookup without a usable default: one positional argument, or an explicit default of None."""
    if call.keywords:
        return False
    if len(call.args) == 1:
        return not isinstance(call.args[0], ast.Starred)
    return (len(call.args) == 2 and isinstance(call.args[1], ast.Constant) and call.args[1].value is None)


def _urlish(arg: ast.expr) -> bool:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return "/" in arg.value
    if isinstance(arg, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and "/" in str(v.value) for v in arg.values)
    name = _dotted(arg)
    return bool(name and _URLISH_NAME.search(name.rsplit(".", 1)[-1]))


_TOLERANT = frozenset({"AttributeError", "TypeError", "Exception", "BaseException"})
_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)


def _call_key(call: ast.Call) -> str:
    """Identity of a lookup for guard matching: d.get(k) and d.get(k, None) are the same test."""
    args = list(call.args)
    if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is None:
        args.pop()
    return ast.dump(call.func) + "|" + "|".join(ast.dump(a) for a in args)


def _contains(tree: ast.AST | None, key: str) -> bool:
    if tree is None:
        return False
    return any(isinstance(n, ast.Call) and _call_key(n) == key for n in ast.walk(tree))


class _LocalParents:
    """Parents within the innermost function around a node (or its top-level statement).

    A whole-module parent map costs a second walk of the tree; guards only matter inside the
    enclosing function, so only that subtree is walked, and only for the rare candidates.
    """

    def __init__(self, ctx: FileContext):
        self.ctx = ctx
        self.parents: dict[int, ast.AST] = {}
        self.walked: set[int] = set()
        self._statements: LineSpans | None = None

    def _root(self, node: ast.AST) -> ast.AST | None:
        """The innermost function around the node's line, else the top-level statement holding it: found by
        bisection (a scan of every function for every candidate was quadratic in a file of many)."""
        best = self.ctx.function_at(node.lineno)
        if best is not None:
            return best
        if self._statements is None:
            self._statements = LineSpans(getattr(self.ctx.tree, "body", ()))
        stmt = self._statements.innermost(node.lineno)
        if stmt is not None:
            self.parents[id(stmt)] = self.ctx.tree
        return stmt

    def ancestors(self, node: ast.AST):
        root = self._root(node)
        if root is not None and id(root) not in self.walked:
            self.walked.add(id(root))
            self.parents.update(parent_map(root))
        cur = self.parents.get(id(node))
        while cur is not None:
            yield cur
            cur = self.parents.get(id(cur))


def _guarded(parents: _LocalParents, call: ast.Call) -> bool:
    """Is the result checked first (if/and/ternary/comprehension filter, an earlier if or assert in
    the same block), or is the access inside a try that handles AttributeError/TypeError?"""
    key = _call_key(call)
    child: ast.AST = call
    for anc in parents.ancestors(call):
        if isinstance(anc, (ast.If, ast.While, ast.IfExp)) and child is not anc.test and _contains(anc.test, key):
            return True
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            before = anc.values[:anc.values.index(child)] if child in anc.values else []
            if any(_contains(v, key) for v in before):
                return True
        if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and any(
                _contains(cond, key) for gen in anc.generators for cond in gen.ifs):
            return True
        if isinstance(anc, ast.Try) and child in anc.body:
            for h in anc.handlers:
                if h.type is None or any(isinstance(t, ast.Name) and t.id in _TOLERANT
                                         for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])):
                    return True
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(anc, field, None)
                if isinstance(block, list) and child in block:
                    for prev in block[:block.index(child)]:
                        if isinstance(prev, (ast.If, ast.Assert)) and _contains(prev.test, key):
                            return True
        if isinstance(anc, _SCOPE):
            return False
        child = anc
    return False


def _py_none_access(ctx: FileContext, selected) -> list[Finding]:
    out: list[Finding] = []
    imports: _Imports | None = None
    parents: _LocalParents | None = None
    # Accesses whose object is a call: `<call>.attr` and `<call>[i]` (no parent map needed).
    for parent in ctx.nodes(ast.Attribute, ast.Subscript):
        call = parent.value
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr not in _NONE_ATTRS:
                continue
        elif not isinstance(func, ast.Name):
            continue
        if selected is not None and not selected(call.lineno):
            continue
        if imports is None:
            imports = _Imports(ctx)
        why = _none_source(call, imports)
        if why is None:
            continue
        if parents is None:
            parents = _LocalParents(ctx)
        if _guarded(parents, call):
            continue
        access = f".{parent.attr}" if isinstance(parent, ast.Attribute) else "[...]"
        out.append(ctx.finding(NONE_ACCESS, call.lineno, f"`{access}` on a possible None: {why}",
                               column=call.col_offset + 1))
    return out
