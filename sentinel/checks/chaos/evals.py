"""SEN303 on the AST: calls of the builtin eval()/exec(), unless the name is rebound where the call sees it."""

from __future__ import annotations

import ast

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import EVAL_EXEC
from sentinel.models import Finding


def _bound_in(scope: ast.AST, name: str) -> bool:
    """Does `scope` (a module or a function) bind `name` itself: a def, class, import, assignment or parameter
    of its own — not one of a nested function, whose names are its own business."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        if any(arg.arg == name for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg):
            return True
    todo = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
            todo.extend(node.decorator_list)
            continue  # a nested scope
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name).split(".")[0] == name for alias in node.names):
                return True
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _shadowed(ctx: FileContext, call: ast.Call, name: str, bound: dict[tuple[int, str], bool]) -> bool:
    """Is the builtin `name` rebound in a scope the call can see (its functions, then the module)? `bound`
    memoises each scope's answer for the run over one file (without it, 1,000 calls walk the module 1,000
    times)."""
    for scope in ctx.ancestors(call):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            key = (id(scope), name)
            if key not in bound:
                bound[key] = _bound_in(scope, name)
            if bound[key]:
                return True
    return False


def _py_eval(ctx: FileContext, calls: list[ast.Call]) -> list[Finding]:
    hits = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id in ("eval", "exec")]
    if not hits:
        return []
    out = []
    bound: dict[tuple[int, str], bool] = {}  # each scope is walked once per name, however many calls it holds
    for c in hits:
        name = c.func.id
        if not _shadowed(ctx, c, name, bound):
            out.append(ctx.finding(EVAL_EXEC, c.lineno, f"`{name}()` runs arbitrary code from a string",
                                   column=c.col_offset + 1))
    return out
