"""SEN301 and SEN302 on the AST: bare `except:` and broad handlers that swallow every error, graded by
whether swallowing is deliberate (best-effort cleanup, optional imports, an explanation)."""

from __future__ import annotations

import ast
import re

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import BARE_EXCEPT, SWALLOWED
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity

_BROAD = frozenset({"Exception", "BaseException"})


def _is_broad(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _BROAD
    if isinstance(node, ast.Attribute):  # builtins.Exception
        return node.attr in _BROAD and isinstance(node.value, ast.Name) and node.value.id == "builtins"
    if isinstance(node, ast.Tuple):
        return any(_is_broad(e) for e in node.elts)
    return False


def _does_nothing(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Pass, ast.Continue)):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)  # `...` or a docstring
    if isinstance(stmt, ast.Return):
        return stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
    return False


def _describe(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Return):
        return "`return None`" if stmt.value is not None else "`return`"
    if isinstance(stmt, ast.Expr):
        return "`...`" if stmt.value.value is Ellipsis else "a string"
    return f"`{type(stmt).__name__.lower()}`"


def _py_handlers(ctx: FileContext, selected) -> list[Finding]:
    out: list[Finding] = []
    for h in ctx.nodes(ast.ExceptHandler):
        if selected is not None and not selected(h.lineno):
            continue
        if h.type is None:
            f = ctx.finding(BARE_EXCEPT, h.lineno, "bare `except:` also catches KeyboardInterrupt "
                            "and SystemExit", column=h.col_offset + 1)
            if _reraises(h):
                # Everything caught is raised again: nothing is swallowed, the clause only says too little.
                f.severity = Severity.WARNING
                f.message = "bare `except:` (it re-raises, so nothing is swallowed; name what it is for)"
            else:
                why = _best_effort(ctx, h)
                if why:
                    f.severity = Severity.WARNING
                    f.message += f"; {why}"
            out.append(f)
        elif _is_broad(h.type) and all(_does_nothing(s) for s in h.body):
            caught = ast.unparse(h.type)
            why = _best_effort(ctx, h)
            f = ctx.finding(SWALLOWED, h.lineno, f"`except {caught}` swallows every error "
                            f"(body is only {_describe(h.body[0])})" + (f"; {why}" if why else ""),
                            column=h.col_offset + 1)
            if why:
                f.severity = Severity.WARNING  # visible in review, not a block: the failure is not the point
            out.append(f)
    return out


# Calls whose failure does not matter once the real work is done: releasing and removing things.
_CLEANUP_CALLS = frozenset({
    "close", "aclose", "unlink", "remove", "rmtree", "rmdir", "removedirs", "delete", "discard", "kill",
    "terminate", "shutdown", "cancel", "release", "disconnect", "cleanup", "clear", "flush", "stop", "join",
    "unregister", "detach", "dispose", "teardown", "unlock", "wait", "closed", "__exit__", "__aexit__",
    "send_signal", "unsubscribe", "reset", "restore", "setblocking", "settimeout", "collect",
})
# Functions whose failures must not escape: releasing resources, and rendering a representation (a repr that
# raises breaks the very logging and debugging that would have shown the problem).
_CLEANUP_FUNCS = lazy_compile(r"^(?:__del__|__exit__|__aexit__|close|aclose|cleanup|_?clean_?up|teardown|tear_down|"
                              r"shutdown|dispose|release|stop|terminate|finalize|_finalize|__delete__|__repr__|__str__|"
                              r"__format__|__rich_repr__)$|close|cleanup|teardown|shutdown|dispose|repr", re.I)
_NOT_AN_EXPLANATION = lazy_compile(r"^#\s*(?:pragma:|noqa|type:|pyright:|nosec|fmt:|pylint:|sentinel:|"
                                   r"(?:TODO|FIXME|XXX|HACK)\b)", re.I)


def _best_effort(ctx: FileContext, handler: ast.ExceptHandler) -> str | None:
    """Why swallowing is deliberate here, or None when the handler discards the failure of the main work.

    Best-effort work is the idiom broad silent handlers exist for: releasing or removing resources, `__del__`
    and `close()` methods, optional imports, side work after the main result is settled; an author who
    explains the handler in a comment has made the decision visible."""
    if _explained(ctx, handler):
        return "explained in a comment"
    try_node = ctx.parent(handler)
    if _explained_above(ctx, try_node, handler):
        return "explained in a comment"
    body = getattr(try_node, "body", None) or []
    if body and all(_is_cleanup(stmt) for stmt in body):
        return "best-effort cleanup"
    if body and all(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in body):
        return "optional import"
    func = next((a for a in ctx.ancestors(handler) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is not None and _CLEANUP_FUNCS.search(func.name):
        return f"in {func.name}(), whose own failures must not escape"
    documented = next((f for f in ctx.ancestors(handler) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and _DOCUMENTED_SWALLOW.search(ast.get_docstring(f) or "")), None)
    if documented is not None:  # (the function, or the one that makes it: a decorator documents its wrapper)
        return f"{documented.name}() documents that it swallows errors"
    if _after_the_result(ctx, try_node):
        return "side work after the result is settled"
    if isinstance(try_node, ast.Try) and try_node.orelse and len(try_node.handlers) == 1:
        return "the `else:` block runs only when the `try` succeeded"
    if _keeps_defaults(ctx, try_node):
        return "a failure leaves the default set before the `try`"
    return None


# A function's docstring stating its contract: the errors are swallowed on purpose ("Wraps a function so that it
# swallows exceptions", "Errors are ignored", "never raises").
_DOCUMENTED_SWALLOW = lazy_compile(
    r"(?:swallow|ignor|suppress|silenc|discard)\w*\s+(?:\w+\s+){0,3}?(?:errors?|exceptions?|failures?)\b|"
    r"(?:errors?|exceptions?|failures?)\s+(?:are|is|get|will\s+be)\s+(?:silently\s+)?"
    r"(?:swallowed|ignored|suppressed|discarded)|\bnever\s+raises?\b", re.I)


def _explained_above(ctx: FileContext, try_node, handler: ast.ExceptHandler) -> bool:
    """The comment lines right above a `try` with this one handler, when they talk about the failure it
    tolerates ("# ... a permission error when accessing it. Catching a wider exception ...")."""
    if not isinstance(try_node, ast.Try) or len(try_node.handlers) != 1:
        return False
    comments, n, block = ctx.lexed.comments, try_node.lineno - 1, []
    while n >= 1 and comments.get(n) and not ctx.lexed.code_line(n).strip() and len(block) < 12:
        block.append(comments[n])
        n -= 1
    return any(not _NOT_AN_EXPLANATION.match(c) and _ABOUT_FAILURE.search(c) for c in block)


def _keeps_defaults(ctx: FileContext, try_node) -> bool:
    """The `try` only rebinds names set before it in its function (``result = None`` ... ``try: result = f()``):
    a failure leaves the default, which the code after it reads like any other value."""
    if not isinstance(try_node, ast.Try):
        return False
    stored = {n.id for stmt in try_node.body for n in ast.walk(stmt)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if not stored or any(isinstance(n, ast.Expr) for stmt in try_node.body for n in ast.walk(stmt)):
        return False  # nothing kept, or work done for its effects (which a failure leaves half done)
    before: set[str] = set()
    node = try_node
    for parent in ctx.ancestors(try_node):  # the statements before it in its block, then in each enclosing one
        block = next((stmts for name in ("body", "orelse", "finalbody")
                      if isinstance(stmts := getattr(parent, name, None), list) and node in stmts), None)
        if block is not None:
            before |= {t.id for stmt in block[:block.index(node)] if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                       for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                       if isinstance(t, ast.Name)}
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
            break
        node = parent
    return stored <= before


# What an explanation of a handler talks about: the failure it tolerates, or why tolerating it is fine.
_ABOUT_FAILURE = lazy_compile(
    r"ignor|fail|error|exception|raise|throw|crash|catch|best[- ]?effort|optional|swallow|silen|suppress|"
    r"harmless|expected|unavailable|not\s+(?:available|installed|supported|found|present|exist)|missing|absent|"
    r"broken|already|gone|closed|dead|race|compat|legacy|older|python\s*2|py2|platform|windows|macos|interrupt|"
    r"shut(?:ting)?\s*down|clean\s*up|cleanup|whatever|anything|any\s+(?:other\s+)?(?:error|problem|issue)|"
    r"can'?t|cannot|could(?:\s+|n'?)t|may\s+not|might\s+not|doesn'?t|does\s+not|don'?t\s+care|no\s+matter|"
    r"deliberate|intentional|on\s+purpose|fine\b|\bok\b|okay|safe\s+to|invalid|bad\s+|evil|unknown|timeout|"
    r"corrupt|malformed|truncat|incomplete|"
    r"fall\s*back|fallback|default|give\s+up|skip|retry|pass\s+through|propagat", re.I)


def _explained(ctx: FileContext, handler: ast.ExceptHandler) -> bool:
    """Does a comment explain this handler: on its `except` line, on a comment line right above it, before its
    first statement, or on a statement of a body that does nothing, and saying something about the failure it
    tolerates? A comment on a statement that does work explains that statement; one that says nothing about
    failing ("# close the socket") is not about the handler. A bare `except:` also catches Ctrl-C and SystemExit,
    so its comment must name the failure; a broad handler's comment there is enough."""
    comments = ctx.lexed.comments
    body = handler.body
    first = body[0].lineno if body else handler.lineno
    lines = [handler.lineno - 1, *range(handler.lineno, first)]
    if all(_does_nothing(stmt) for stmt in body):
        lines += [n for stmt in body for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)]
    for n in lines:
        comment = comments.get(n)
        if not comment or len(comment) <= 6 or _NOT_AN_EXPLANATION.match(comment):
            continue
        if n == handler.lineno - 1 and ctx.lexed.code_line(n).strip():
            continue  # a trailing comment of the try body's last statement is about that statement
        if handler.type is not None or _ABOUT_FAILURE.search(comment):
            return True
    return False


def explains_failure(comment: str) -> bool:
    """Does this comment (an explanation candidate for a bare `except:`) talk about a failure?"""
    return bool(comment) and len(comment) > 6 and not _NOT_AN_EXPLANATION.match(comment) \
        and _ABOUT_FAILURE.search(comment) is not None


def _reraises(handler: ast.ExceptHandler) -> bool:
    """Does the handler always end by re-raising what it caught (a bare `raise`), with no way out before?"""
    body = handler.body
    if len(body) == 1 and isinstance(body[0], ast.With) and any(
            isinstance(item.context_expr, ast.Call) and "reraise" in ast.unparse(item.context_expr.func).lower()
            for item in body[0].items):
        return True  # `with util.safe_reraise(): ...` raises the caught exception again on exit
    if not body or not (isinstance(body[-1], ast.Raise) and body[-1].exc is None):
        return False
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for stmt in body[:-1] for n in ast.walk(stmt))


def _is_cleanup(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Delete):
        return True
    if isinstance(stmt, (ast.Expr, ast.Await)):
        call = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
        if isinstance(call, ast.Await):
            call = call.value
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            return name in _CLEANUP_CALLS
    return False


def _after_the_result(ctx: FileContext, try_node) -> bool:
    """The try sits in a `finally:` or an error path, or right before `return x` of a value computed earlier."""
    parent = ctx.parent(try_node) if try_node is not None else None
    if isinstance(parent, ast.Try) and try_node in parent.finalbody:
        return True
    if isinstance(parent, ast.ExceptHandler):
        return True
    block = None
    for name in ("body", "orelse", "finalbody"):
        stmts = getattr(parent, name, None)
        if isinstance(stmts, list) and try_node in stmts:
            block = stmts
            break
    if not block:
        return False
    at = block.index(try_node)
    following = block[at + 1] if at + 1 < len(block) else None
    if not (isinstance(following, ast.Return) and isinstance(following.value, ast.Name)):
        return False
    name = following.value.id
    assigned_before = any(isinstance(t, ast.Name) and t.id == name
                          for stmt in block[:at] if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                          for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]))
    assigned_inside = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                          for stmt in try_node.body for n in ast.walk(stmt))
    return assigned_before and not assigned_inside
