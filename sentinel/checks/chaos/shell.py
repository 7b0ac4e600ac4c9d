"""SEN306 on the AST: a shell given a command built at run time (bandit/ruff S602, S604, S605).

Only the shape of the command is judged, never where its parts come from: a literal holds nothing from input, a
value quoted with shlex.quote()/shlex.join() is one shell word, and anything else may hold `;` or `$(...)`.
"""

from __future__ import annotations

import ast

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import SHELL_INJECTION
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity

# Files that may hold a shell call at all: one scan of the text decides whether the rule looks further.
SHELL_GATE = lazy_compile(r"\bshell\s*=\s*(?!False\b|None\b|0\b)|\b(?:system|popen|getoutput|getstatusoutput|"
                          r"create_subprocess_shell)\s*\(")

_SUBPROCESS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
                         "subprocess.check_output"})
# Always run their command through a shell.
_ALWAYS_SHELL = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                           "asyncio.create_subprocess_shell", "commands.getoutput", "commands.getstatusoutput"})
_QUOTING = frozenset({"shlex.quote", "shlex.join", "pipes.quote"})
_LITERAL, _QUOTED, _LIST, _DYNAMIC = "literal", "quoted", "list", "dynamic"
_TAILS = frozenset({name.rsplit(".", 1)[-1] for name in _SUBPROCESS | _ALWAYS_SHELL})


def _aliases(ctx: FileContext) -> dict[str, str]:
    """Local name -> what it was imported as (`import subprocess as sp`, `from os import system`)."""
    out: dict[str, str] = {}
    for node in ctx.nodes(ast.Import):
        for a in node.names:
            if a.asname:
                out[a.asname] = a.name
    for node in ctx.nodes(ast.ImportFrom):
        if node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _shell_on(call: ast.Call) -> bool:
    for k in call.keywords:
        if k.arg == "shell":
            return isinstance(k.value, ast.Constant) and bool(k.value.value)
    return False


def _command(call: ast.Call, keyword: str) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


class _Judge:
    """How a command expression is built, with the module's imports and each function's literal names."""

    def __init__(self, ctx: FileContext, aliases: dict[str, str]):
        self.ctx = ctx
        self.aliases = aliases
        self._literal_names: dict[tuple[int, str], bool | None] = {}

    def kind(self, node: ast.expr, call: ast.Call) -> str:
        if isinstance(node, ast.Constant):
            return _LITERAL if isinstance(node.value, (str, bytes)) else _DYNAMIC
        if isinstance(node, ast.JoinedStr):
            return self._combine([self._placeholder(v) for v in node.values if isinstance(v, ast.FormattedValue)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._combine([self.kind(node.left, call), self.kind(node.right, call)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and self.kind(node.left, call) == _LITERAL:
            values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            return self._combine([self._value(v, call) for v in values])
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "format"
                    and isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)):
                return self._combine([self._value(v, call) for v in (*node.args, *(k.value for k in node.keywords))])
            if _qualname(func, self.aliases) in _QUOTING:
                return _QUOTED
            return _DYNAMIC
        if isinstance(node, (ast.List, ast.Tuple)):
            return _LIST if node.elts and self.kind(node.elts[0], call) == _LITERAL else _DYNAMIC
        if isinstance(node, ast.Name) and self._bound_to_literals(node.id, call):
            return _LITERAL
        return _DYNAMIC

    def _value(self, node: ast.expr, call: ast.Call) -> str:
        """A value put into a command: a literal, a quoted value, or anything else."""
        if isinstance(node, ast.Call) and _qualname(node.func, self.aliases) in _QUOTING:
            return _QUOTED
        kind = self.kind(node, call)
        return kind if kind in (_LITERAL, _QUOTED) else _DYNAMIC

    def _placeholder(self, v: ast.FormattedValue) -> str:
        if isinstance(v.value, ast.Call) and _qualname(v.value.func, self.aliases) in _QUOTING:
            return _QUOTED
        if isinstance(v.value, ast.Constant):
            return _LITERAL
        return _DYNAMIC

    @staticmethod
    def _combine(kinds: list[str]) -> str:
        if _DYNAMIC in kinds or _LIST in kinds:
            return _DYNAMIC
        return _QUOTED if _QUOTED in kinds else _LITERAL

    def _bound_to_literals(self, name: str, call: ast.Call) -> bool:
        """Is `name` bound only to string literals: in the call's function when it binds the name there, else at
        module level (a constant)?"""
        for scope in self.ctx.ancestors(call):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                verdict = self._literal_binding(scope, name)
                if verdict is not None:
                    return verdict
        return False

    def _literal_binding(self, scope: ast.AST, name: str) -> bool | None:
        """True/False when the scope binds `name` (only to literals or not); None when it does not bind it."""
        key = (id(scope), name)
        if key not in self._literal_names:
            values = [n.value for n in ast.walk(scope) if isinstance(n, ast.Assign)
                      for t in n.targets if isinstance(t, ast.Name) and t.id == name]
            stores = sum(1 for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name
                         and isinstance(n.ctx, ast.Store))
            params = isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                a.arg == name for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs))
            if not values and not stores and not params:
                verdict = None
            else:  # bound some other way too (augmented, a loop or with target, a parameter): not a constant
                verdict = stores == len(values) and not params and all(
                    isinstance(v, ast.Constant) and isinstance(v.value, (str, bytes)) for v in values)
            self._literal_names[key] = verdict
        return self._literal_names[key]


def py_shell(ctx: FileContext, calls: list[ast.Call]) -> list[Finding]:
    """SEN306 for the calls in scope."""
    candidates = [c for c in calls if _shell_on(c) or (
        (c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", None)) in _TAILS
        or isinstance(c.func, ast.Name))]
    if not candidates:
        return []
    aliases = _aliases(ctx)
    judge = _Judge(ctx, aliases)
    out: list[Finding] = []
    for call in candidates:
        name = _qualname(call.func, aliases)
        if name in _ALWAYS_SHELL:
            command, via = _command(call, "cmd"), f"{name}()"
        elif _shell_on(call):
            command, via = _command(call, "args"), f"{name or 'a call'}(..., shell=True)"
        else:
            continue
        if command is None:
            continue
        kind = judge.kind(command, call)
        if kind == _LITERAL:
            continue
        f = ctx.finding(SHELL_INJECTION, call.lineno, f"{via} runs a command built at run time through a shell",
                        column=call.col_offset + 1)
        if kind == _QUOTED:
            f.severity = Severity.INFO
            f.message = f"{via}: every value put into the command is quoted (an argument list needs no shell)"
        elif kind == _LIST:
            f.severity = Severity.WARNING
            f.message = f"{via} given a list: only its first item runs, the rest become the shell's $0, $1..."
        out.append(f)
    return out
