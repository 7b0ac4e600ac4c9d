"""SEN303 on the AST: calls of the builtin eval()/exec(), unless the name is rebound where the call sees it.

Running a code object that the code compiled itself (``exec(compile(source, filename, "exec"), ns)``, a name bound
only to compile() results, a parameter typed ``CodeType``) is how code generators, template engines, config
loaders and consoles run the code they build: a warning that says so, not a string evaluated on the spot."""

from __future__ import annotations

import ast

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import EVAL_EXEC
from sentinel.models import Finding, Severity


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


def _is_compile(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Name) and node.func.id == "compile"
        or isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "builtins")


def _typed_code(annotation: ast.AST | None) -> bool:
    return annotation is not None and ast.unparse(annotation).rsplit(".", 1)[-1].strip("'\"") == "CodeType"


def _compiled_code(ctx: FileContext, call: ast.Call) -> bool:
    """Does the call run a code object compiled by this code: compile(...) itself, or a name its function binds
    only to compile() results (and their .replace()), or to a parameter or variable typed CodeType?"""
    if not call.args:
        return False
    arg = call.args[0]
    if _is_compile(arg):
        return True
    if not isinstance(arg, ast.Name):
        return False
    name = arg.id
    scope = next((a for a in ctx.ancestors(call) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if scope is None:
        return False
    params = [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]
    typed = [p for p in params if p.arg == name]
    if typed:
        return _typed_code(typed[0].annotation)
    bound = 0
    todo = list(scope.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # a nested scope binds its own names
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = node.value
                rebuilt = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "replace" and isinstance(value.func.value, ast.Name) \
                    and value.func.value.id == name  # CodeType.replace(co_name=...)
                typed_here = isinstance(node, ast.AnnAssign) and _typed_code(node.annotation)
                if not (_is_compile(value) or rebuilt or typed_here):
                    return False
                bound += 1
                continue  # (its value binds nothing more)
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return False  # bound some other way (a loop, a with, a walrus...)
        todo.extend(ast.iter_child_nodes(node))
    return bound > 0


def _py_eval(ctx: FileContext, calls: list[ast.Call]) -> list[Finding]:
    hits = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id in ("eval", "exec")]
    if not hits:
        return []
    out = []
    bound: dict[tuple[int, str], bool] = {}  # each scope is walked once per name, however many calls it holds
    for c in hits:
        name = c.func.id
        if _shadowed(ctx, c, name, bound):
            continue
        if _compiled_code(ctx, c):
            f = ctx.finding(EVAL_EXEC, c.lineno, f"`{name}()` runs a code object compiled from source: check "
                            "where that source comes from", column=c.col_offset + 1)
            f.severity = Severity.WARNING
            out.append(f)
        else:
            out.append(ctx.finding(EVAL_EXEC, c.lineno, f"`{name}()` runs arbitrary code from a string",
                                   column=c.col_offset + 1))
    return out
