"""How one function (or class body, or module body) changed between two versions, read with the AST.

A fix is compared as what its code *does*: the conditions it tests, the exceptions it catches and raises, the
calls it makes (and with which keywords), the context managers it enters, what it returns, the constants it
uses, its signature. Each of these is a sequence in source order on both sides; difflib aligns the old and the
new sequence, and every insertion, deletion or replacement is a change of a named kind (KINDS) with a short
before -> after detail written from the code itself (`ast.unparse`, cut short). Nested functions and classes are
their own symbols and are not looked into here.

The same comparison runs on whole functions (both versions of the file parsed) and, when only a diff is known
(fix records, pull-request patches, a file that does not parse), on the statements of the removed and added
lines parsed one by one (`line_nodes`).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass, field

from sentinel.memory.cards.taxonomy import CHANGE_KINDS as KINDS

# kinds that say nothing specific on their own (QC does not count them as what the fix did)
VAGUE = frozenset({"logic-changed"})
_TEXT = 90  # the longest code text kept in a detail
_MAX_PER_KIND = 2
_LOCKISH = re.compile(r"(?i)lock|mutex|semaphore|condition\(|_cond\b|guard")
_CLEANUP = re.compile(r"(?:^|\.)(?:a?close|release|shutdown|terminate|kill|unlink|cleanup|dispose|aclose|"
                      r"wait_closed|__exit__|__aexit__)$")
_RAISERS = re.compile(r"(?:^|\.)(?:raises|assertRaises\w*|warns|assertWarns\w*)$")
_CASTS = frozenset({"cast", "typing.cast", "t.cast", "assert_type", "typing.assert_type", "reveal_type"})


@dataclass
class Change:
    kind: str
    detail: str  # short, from the code: "`except Exception` -> `except KeyError`"
    facts: tuple[str, ...] = ()  # what the taxonomy's change cues read: "call:sorted", "kw:encoding", "lock"
    line: int = 0  # where it is in the new version (the old one for removals), 0 when unknown
    old: str = ""  # the code before (empty for an addition)
    new: str = ""  # the code after (empty for a removal)


def text(node: ast.AST | None, limit: int = _TEXT) -> str:
    """The code of a node on one line, cut at `limit`; a backtick in it becomes a quote (details quote code in
    backticks)."""
    if node is None:
        return ""
    try:
        out = ast.unparse(node)
    except Exception:  # ast.unparse has no stable error type; a node it cannot write has no text
        return ""
    out = " ".join(out.split()).replace("`", "'")
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"


def pair(old: str, new: str, limit: int = 70) -> tuple[str, str]:
    """Two long versions of a line cut to where they differ (common head and tail become "…"), so that a
    detail shows the change and not two identical beginnings."""
    if len(old) <= limit and len(new) <= limit:
        return old, new
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - 15)
    o, n = old[start:len(old) - max(0, tail - 15)], new[start:len(new) - max(0, tail - 15)]
    pre = "…" if start else ""
    post = "…" if tail > 15 else ""
    return (pre + o[:limit] + post, pre + n[:limit] + post)


def dotted(node: ast.AST) -> str:
    """`os.path.join`, `self._sock.close`, `.close` (unknown base), "" for calls of calls and lambdas."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else f".{node.attr}"
    return ""


def _is_docstring(stmt: ast.AST) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def own_nodes(root: ast.AST | list[ast.AST], touched: set[int] | None = None) -> list[ast.AST]:
    """Nodes of a scope in source order (pre-order), without nested functions and classes, docstrings and
    annotations (an annotation changes no behaviour); `typing.cast(T, x)` is its value. touched: only the
    statements on these lines (a compound statement by its header: `if`, `for`, `with`, `except` lines)."""
    out: list[ast.AST] = []
    stmts = list(root) if isinstance(root, list) else _body_items(root)
    for stmt in stmts:
        _statement(stmt, touched, out)
    return out


def _body_items(node: ast.AST) -> list[ast.AST]:
    return [item for name in _BODIES for item in _body_items_of(node, name)]


def _body_items_of(node: ast.AST, name: str) -> list[ast.AST]:
    value = getattr(node, name, None)
    items: list[ast.AST] = []
    if isinstance(value, list):
        for i, item in enumerate(value):
            if name == "body" and i == 0 and _is_docstring(item):
                continue
            if isinstance(item, ast.If) and _is_type_checking(item.test):
                items += [x for x in item.orelse if isinstance(x, ast.AST)]  # what runs at run time
                continue
            if isinstance(item, ast.AST):
                items.append(item)
    return items


def _is_type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _header_lines(stmt: ast.AST) -> range:
    first = getattr(stmt, "lineno", 0) or getattr(getattr(stmt, "pattern", None), "lineno", 0) or 0
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and hasattr(body[0], "lineno"):
        last = max(first, body[0].lineno - 1)
    else:
        last = getattr(stmt, "end_lineno", first) or first
    return range(first, last + 1)


def _statement(stmt: ast.AST, touched: set[int] | None, out: list[ast.AST], where: str = "") -> None:
    if isinstance(stmt, _SCOPES) or (isinstance(stmt, ast.AnnAssign) and stmt.value is None):
        return  # nested scopes are their own symbols; a bare annotation does nothing
    compound = any(isinstance(getattr(stmt, n, None), list) for n in _BODIES)
    stmt._sentinel_where = where  # which block holds it: `if` -> `elif` moves a statement, not its text
    if touched is None or any(n in touched for n in _header_lines(stmt)):
        out.append(stmt)
        for name, value in ast.iter_fields(stmt):
            if name in _BODIES and compound:
                continue
            _expressions(value, out)
    if compound:
        for name in _BODIES:
            value = getattr(stmt, name, None)
            if isinstance(value, list):
                inner = f"{where}.{name}" if where else name
                for child in _body_items_of(stmt, name):
                    _statement(child, touched, out, inner)


def _expressions(value, out: list[ast.AST]) -> None:
    """The expression nodes under a field of a statement, in pre-order."""
    stack = [v for v in reversed(value if isinstance(value, list) else [value]) if isinstance(v, ast.AST)]
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) or isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Call) and dotted(node.func) in _CASTS and node.args:
            stack.append(node.args[-1])  # cast(T, x) is x at run time
            continue
        out.append(node)
        stack.extend(reversed(_children(node)))


def _children(node: ast.AST) -> list[ast.AST]:
    out = []
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "type_comment", "type_params"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                out.append(item)
    return out


def _exits(body: list[ast.stmt]) -> str:
    last = body[-1] if body else None
    if isinstance(last, ast.Return):
        return "return"
    if isinstance(last, ast.Raise):
        return "raise"
    if isinstance(last, (ast.Continue, ast.Break)):
        return type(last).__name__.lower()
    return ""


def classify_test(test: ast.AST) -> str:
    """The guard kind a condition is: none-guard, type-guard, membership-guard, length-guard, version-guard,
    falsy-guard, or guard."""
    src = text(test, 400)
    if re.search(r"\bsys\.(?:version_info|platform)\b|\bos\.name\b|\bplatform\.", src):
        return "version-guard"
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) and (
                        _is_none(right) or _is_none(node.left)):
                    return "none-guard"
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and dotted(node.func) in ("isinstance", "issubclass", "callable"):
            return "type-guard"
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            return "membership-guard"
        if isinstance(node, ast.Call) and dotted(node.func) == "hasattr":
            return "membership-guard"
        if isinstance(node, ast.Call) and dotted(node.func) == "len":
            return "length-guard"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(
            test.operand, (ast.Name, ast.Attribute, ast.Subscript)):
        return "falsy-guard"  # `if not x:` (a positive `if self.closed:` tests a state, not a missing value)
    return "guard"


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


@dataclass
class Items:
    """What a scope does, each a list in source order: (text, node) pairs."""

    conds: list[tuple[str, ast.AST]] = field(default_factory=list)
    handlers: list[tuple[str, ast.AST]] = field(default_factory=list)
    raises: list[tuple[str, ast.AST]] = field(default_factory=list)
    calls: list[tuple[str, ast.AST]] = field(default_factory=list)
    withs: list[tuple[str, ast.AST]] = field(default_factory=list)
    returns: list[tuple[str, ast.AST]] = field(default_factory=list)
    consts: list[tuple[str, ast.AST]] = field(default_factory=list)
    awaits: list[tuple[str, ast.AST]] = field(default_factory=list)
    subscripts: list[tuple[str, ast.AST]] = field(default_factory=list)
    fallbacks: list[tuple[str, ast.AST]] = field(default_factory=list)
    loops: list[tuple[str, ast.AST]] = field(default_factory=list)
    finals: list[tuple[str, ast.AST]] = field(default_factory=list)
    stmts: list[tuple[str, ast.AST]] = field(default_factory=list)
    imports: list[tuple[str, ast.AST]] = field(default_factory=list)


def items_of(nodes: list[ast.AST]) -> Items:
    it = Items()
    # `raise X(f"... {type(v)}")`: the raise is the change, not the calls that build its exception
    raised = {id(x) for n in nodes if isinstance(n, ast.Raise) and n.exc is not None for x in ast.walk(n.exc)
              if isinstance(x, ast.Call)}
    for node in nodes:
        if id(node) in raised:
            continue  # `raise X(...)`: the raise is the change, not a call of X
        if isinstance(node, (ast.If, ast.While)):
            it.conds.append((text(node.test, 400), node))
        elif isinstance(node, ast.IfExp):
            it.conds.append((text(node.test, 400), node))
        elif isinstance(node, ast.ExceptHandler):
            it.handlers.append((text(node.type) if node.type is not None else "", node))
        elif isinstance(node, ast.Raise):
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            it.raises.append((dotted(exc) if exc is not None else "", node))
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name:
                it.calls.append((name, node))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for w in node.items:
                it.withs.append((text(w.context_expr), node))
        elif isinstance(node, ast.Return):
            it.returns.append((text(node.value, 400), node))
        elif isinstance(node, ast.Constant) and node.value is not Ellipsis:
            it.consts.append((repr(node.value)[:200].replace("`", "'"), node))
        elif isinstance(node, ast.Await):
            it.awaits.append((text(node.value), node))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            it.subscripts.append((text(node), node))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and isinstance(
                node.values[-1], (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.Set, ast.Call)):
            it.fallbacks.append((text(node), node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            it.loops.append((f"{text(node.target)} in {text(node.iter)}", node))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and node.finalbody:
            it.finals.append((text(node.finalbody[0]), node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            it.imports.append((text(node, 200), node))
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.If, ast.While, ast.For, ast.AsyncFor, ast.Try,
                                                                ast.With, ast.AsyncWith, *_SCOPES)):
            it.stmts.append((text(node, 400), node))
    return it


def _align(old: list[tuple[str, ast.AST]], new: list[tuple[str, ast.AST]]):
    """(replaced pairs, inserted, deleted, equal pairs) of two sequences aligned on their texts."""
    sm = difflib.SequenceMatcher(a=[t for t, _ in old], b=[t for t, _ in new], autojunk=False)
    rep, ins, dele, eq = [], [], [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            eq += list(zip(old[i1:i2], new[j1:j2]))
        elif tag == "replace":
            n = min(i2 - i1, j2 - j1)
            rep += list(zip(old[i1:i1 + n], new[j1:j1 + n]))
            dele += old[i1 + n:i2]
            ins += new[j1 + n:j2]
        elif tag == "insert":
            ins += new[j1:j2]
        else:
            dele += old[i1:i2]
    return rep, ins, dele, eq


def _line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0) or 0


def _q(code: str) -> str:
    return f"`{code}`" if code else "nothing"


def _breadth(types: str) -> tuple[int, set[str]]:
    if not types:
        return 3, {"*"}
    names = {n.strip().rsplit(".", 1)[-1] for n in types.strip("()").split(",") if n.strip()}
    if names & {"BaseException"}:
        return 3, names
    if names & {"Exception"}:
        return 2, names
    return 1, names


def _handler_change(old: str, new: str) -> str:
    (ro, no), (rn, nn) = _breadth(old), _breadth(new)
    if rn > ro or (rn == ro and nn > no):
        return "exception-widened"
    if rn < ro or (rn == ro and nn < no):
        return "exception-narrowed"
    return "exception-changed"


def _except(types: str) -> str:
    return f"except {types}" if types else "except"


def _bound_change(o: ast.AST, n: ast.AST) -> bool:
    """Did a comparison move its bound by one: `<` <-> `<=`, `>` <-> `>=`, or a constant by exactly 1?"""
    swaps = {(ast.Lt, ast.LtE), (ast.LtE, ast.Lt), (ast.Gt, ast.GtE), (ast.GtE, ast.Gt)}
    co = [x for x in ast.walk(o) if isinstance(x, ast.Compare)]
    cn = [x for x in ast.walk(n) if isinstance(x, ast.Compare)]
    for a, b in zip(co, cn):
        for oa, ob in zip(a.ops, b.ops):
            if (type(oa), type(ob)) in swaps:
                return True
    ints_o = [x.value for x in ast.walk(o) if isinstance(x, ast.Constant) and type(x.value) is int]
    ints_n = [x.value for x in ast.walk(n) if isinstance(x, ast.Constant) and type(x.value) is int]
    if len(ints_o) == len(ints_n) and sum(abs(a - b) for a, b in zip(ints_o, ints_n)) == 1:
        return True
    # `x - 1` added or dropped on one side of a comparison
    return bool(co) and abs(len(ints_n) - len(ints_o)) == 1 and set(ints_o) ^ set(ints_n) <= {1}


def _kwargs(call: ast.Call) -> dict[str, str]:
    return {(k.arg or "**"): text(k.value, 40) for k in call.keywords}


def _arg_detail(o: ast.Call, n: ast.Call) -> tuple[str, tuple[str, ...]]:
    ko, kn = _kwargs(o), _kwargs(n)
    facts = []
    parts = []
    for k in kn:
        if k not in ko:
            parts.append(f"adds `{k}={kn[k]}`" if k != "**" else f"adds `**{kn[k]}`")
            facts.append(f"kw:{k}")
            if kn[k] == k or kn[k] == f"self.{k}":  # `timeout=timeout`: an option passed on
                facts.append(f"passthrough:{k}")
        elif ko[k] != kn[k]:
            parts.append(f"`{k}={ko[k]}` -> `{k}={kn[k]}`")
            facts.append(f"kw:{k}")
    for k in ko:
        if k not in kn:
            parts.append(f"drops `{k}={ko[k]}`")
            facts.append(f"kw:{k}")
    if not parts:
        parts.append(f"{_q(text(o, 60))} -> {_q(text(n, 60))}")
    return "; ".join(parts), tuple(facts)


def _sig(node: ast.AST | None) -> list[tuple[str, str]]:
    """(name, default text) of each parameter of a function node (defaults aligned right, as Python does)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    a = node.args
    pos = [*a.posonlyargs, *a.args]
    defaults = [""] * (len(pos) - len(a.defaults)) + [text(d, 40) for d in a.defaults]
    out = [(p.arg, d) for p, d in zip(pos, defaults)]
    if a.vararg:
        out.append(("*" + a.vararg.arg, ""))
    out += [(p.arg, text(d, 40) if d is not None else "") for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append(("**" + a.kwarg.arg, ""))
    return out


def _signature_changes(old: ast.AST | None, new: ast.AST | None) -> list[Change]:
    so, sn = _sig(old), _sig(new)
    if not so and not sn or old is None or new is None:
        return []
    out = []
    do, dn = dict(so), dict(sn)
    for name, default in sn:
        if name in do and do[name] != default:
            kind = "default-changed"
            facts = ("default", f"kw:{name}") + (("mutable-default",) if do[name] in ("[]", "{}", "set()", "dict()",
                                                                                      "list()") else ())
            out.append(Change(kind, f"`{name}={do[name] or '…'}` -> `{name}={default or '…'}`", facts, _line(new),
                              f"{name}={do[name]}", f"{name}={default}"))
    added = [n for n, _ in sn if n not in do]
    removed = [n for n, _ in so if n not in dn]
    if added or removed:
        bits = [f"adds parameter `{n}`" for n in added] + [f"drops parameter `{n}`" for n in removed]
        facts = tuple(f"param:{n}" for n in added + removed)
        out.append(Change("signature-changed", "; ".join(bits), facts + ("signature",), _line(new),
                          ", ".join(n for n, _ in so), ", ".join(n for n, _ in sn)))
    return out


def _decorators(node: ast.AST | None) -> list[tuple[str, ast.AST]]:
    if not isinstance(node, _SCOPES):
        return []
    return [(text(d), d) for d in node.decorator_list]


def compare(old_nodes: list[ast.AST], new_nodes: list[ast.AST], old_def: ast.AST | None = None,
            new_def: ast.AST | None = None) -> list[Change]:
    """The changes from one version of a scope's own nodes to the other, most telling first."""
    o, n = items_of(old_nodes), items_of(new_nodes)
    out: list[Change] = []
    out += _signature_changes(old_def, new_def)
    rep, ins, dele, _ = _align(_decorators(old_def), _decorators(new_def))
    for (ot, _), (nt, node) in rep:
        out.append(Change("decorator-changed", f"`@{ot}` -> `@{nt}`", (f"decorator:{nt}",), _line(node), ot, nt))
    for nt, node in ins:
        out.append(Change("decorator-changed", f"adds `@{nt}`", (f"decorator:{nt}",), _line(node), "", nt))
    for ot, node in dele:
        out.append(Change("decorator-changed", f"drops `@{ot}`", (f"decorator:{ot}",), _line(node), ot, ""))

    # exception handlers: narrowed, widened, added, removed
    rep, ins, dele, _ = _align(o.handlers, n.handlers)
    for (ot, _), (nt, node) in rep:
        kind = _handler_change(ot, nt)
        out.append(Change(kind, f"`{_except(ot)}` -> `{_except(nt)}`", ("except:" + (nt or "*"), "handler"),
                          _line(node), _except(ot), _except(nt)))
    for nt, node in ins:
        guarded = _try_body_call(node, new_nodes)
        where = f" around `{guarded}`" if guarded else ""
        out.append(Change("handler-added", f"adds `{_except(nt)}`{where}", ("except:" + (nt or "*"), "handler"),
                          _line(node), "", _except(nt)))
    for ot, node in dele:
        out.append(Change("handler-removed", f"drops `{_except(ot)}`", ("except:" + (ot or "*"), "handler"),
                          _line(node), _except(ot), ""))

    # conditions: guards added, bounds moved, conditions changed or removed
    rep, ins, dele, eq = _align(o.conds, n.conds)
    for (ot, onode), (nt, nnode) in eq:  # the same test in another block: `if` became `elif` (or back)
        ow, nw = getattr(onode, "_sentinel_where", ""), getattr(nnode, "_sentinel_where", "")
        if isinstance(onode, ast.If) and ow != nw and (ow.endswith("orelse") or nw.endswith("orelse")):
            old_kw, new_kw = ("elif", "if") if ow.endswith("orelse") else ("if", "elif")
            out.append(Change("condition-changed", f"`{old_kw} {ot[:60]}` -> `{new_kw} {nt[:60]}`", ("condition",),
                              _line(nnode), f"{old_kw} {ot[:60]}", f"{new_kw} {nt[:60]}"))
    # the calls inside a changed condition: the condition change names them
    tests = [c for _, c in ins + dele] + [c for pair in rep for _, c in pair]
    described = {id(x) for c in tests for x in ast.walk(c.test)}
    for (ot, onode), (nt, nnode) in rep:
        ot_s, nt_s = pair(text(onode.test, 400), text(nnode.test, 400))
        if _bound_change(onode.test, nnode.test):
            out.append(Change("bound-changed", f"`{ot_s}` -> `{nt_s}`", ("bound",), _line(nnode), ot_s, nt_s))
        else:
            kinds = {classify_test(onode.test), classify_test(nnode.test)} - {"guard", "falsy-guard"}
            facts = ("condition",) + (tuple(sorted(kinds)) if len(kinds) == 1 else ())
            out.append(Change("condition-changed", f"`{ot_s}` -> `{nt_s}`", facts, _line(nnode), ot_s, nt_s))
    for nt, node in ins:
        if isinstance(node, ast.While):
            out.append(Change("loop-changed", f"adds `while {text(node.test)}:`", ("loop",), _line(node), "",
                              f"while {text(node.test)}:"))
            continue
        kind = classify_test(node.test)
        exit_ = _exits(node.body) if isinstance(node, ast.If) else ""
        if kind in ("falsy-guard", "length-guard", "membership-guard") and not exit_ and not _defaults(node):
            kind = "guard"  # a new branch that does something else, not a guard against the value
        shown = f"if {text(node.test)}:" if isinstance(node, ast.If) else text(node)
        then = ""
        if exit_ == "raise":
            then = f" raising `{_raised(node.body[-1])}`" if _raised(node.body[-1]) else " raising"
        elif exit_:
            then = f" then `{text(node.body[-1], 50)}`"
        if kind == "guard" and exit_ in ("return", "continue", "break"):
            out.append(Change("early-return", f"`{text(node.body[-1], 50)}` when `{text(node.test)}`",
                              ("early-return",), _line(node), "", shown))
        else:
            facts = (kind, "early-return") if exit_ in ("return", "continue", "break") else (kind,)
            out.append(Change(kind, f"adds `{shown}`{then}", facts, _line(node), "", shown))
    for ot, node in dele:
        out.append(Change("condition-removed", f"drops `{text(node.test)}`", ("condition",), _line(node),
                          text(node.test), ""))

    # raises
    rep, ins, dele, _ = _align(o.raises, n.raises)
    for (ot, _), (nt, node) in rep:
        if ot != nt:
            out.append(Change("raise-changed", f"`raise {ot}` -> `raise {nt}`", (f"raise:{nt}",), _line(node),
                              f"raise {ot}", f"raise {nt}"))
    for nt, node in ins:
        if not any(c.kind in ("none-guard", "type-guard", "membership-guard", "length-guard", "falsy-guard",
                              "guard", "version-guard") and f"`{nt}`" in c.detail for c in out):
            out.append(Change("raise-added", f"raises `{nt or 'again'}`", (f"raise:{nt}",), _line(node), "",
                              text(node)))
    for ot, node in dele:
        out.append(Change("raise-removed", f"no longer raises `{ot or 'again'}`", (f"raise:{ot}",), _line(node),
                          text(node), ""))

    # d[k] -> d.get(k)
    gets = [(t, node) for t, node in n.calls if t.endswith(".get")]
    old_subs = {text(node.value) for _, node in o.subscripts} - {text(node.value) for _, node in n.subscripts}
    for t, node in gets:
        base = t[: -len(".get")]
        if base in old_subs and not any(x == t for x, _ in o.calls):
            old_sub = next(s for s, sn in o.subscripts if text(sn.value) == base)
            out.append(Change("lookup-default", f"`{old_sub}` -> `{text(node, 60)}`", ("lookup-default",),
                              _line(node), old_sub, text(node, 60)))
    for nt, node in _align(o.fallbacks, n.fallbacks)[1]:
        out.append(Change("default-fallback", f"adds `{text(node, 60)}`", ("default-fallback",), _line(node), "",
                          text(node, 60)))

    # context managers and locks
    rep, ins, dele, _ = _align(o.withs, n.withs)
    for nt, node in ins + [nw for _, nw in rep]:
        kind = "lock-added" if _LOCKISH.search(nt) else "context-added"
        facts = ("lock",) if kind == "lock-added" else (f"with:{_callee(nt)}",)
        out.append(Change(kind, f"wraps code in `with {nt}:`", facts, _line(node), "", f"with {nt}:"))
    for nt, node in _align(o.finals, n.finals)[1]:
        out.append(Change("cleanup-added", f"adds `finally: {nt}`", ("finally", "cleanup"), _line(node), "",
                          f"finally: {nt}"))

    # calls: replaced callee, arguments changed, added, removed
    calls_o = [(t, c) for t, c in o.calls if t not in _CASTS and not _RAISERS.search(t) and id(c) not in described]
    calls_n = [(t, c) for t, c in n.calls if t not in _CASTS and not _RAISERS.search(t) and id(c) not in described]
    rep, ins, dele, eq = _align(calls_o, calls_n)
    for (ot, oc), (nt, nc) in rep:
        out.append(Change("call-replaced", f"`{ot}()` -> `{nt}()`", (f"call:{ot}", f"call:{nt}"), _line(nc),
                          text(oc, 60), text(nc, 60)))
    for (ot, oc), (nt, nc) in eq:
        if text(oc, 400) != text(nc, 400) and (_kwargs(oc) != _kwargs(nc) or [text(a) for a in oc.args] !=
                                               [text(a) for a in nc.args]):
            detail, facts = _arg_detail(oc, nc)
            out.append(Change("argument-changed", f"`{nt}()`: {detail}", (f"call:{nt}",) + facts, _line(nc),
                              text(oc, 60), text(nc, 60)))
    for nt, nc in ins:
        if nt.endswith(".get") and any(c.kind == "lookup-default" for c in out):
            continue
        kind = "cleanup-added" if _CLEANUP.search(nt) else "call-added"
        out.append(Change(kind, f"calls `{text(nc, 60)}`", (f"call:{nt}",) + (("cleanup",) if kind != "call-added"
                                                                              else ()), _line(nc), "", text(nc, 60)))
    for ot, oc in dele:
        out.append(Change("call-removed", f"no longer calls `{text(oc, 60)}`", (f"call:{ot}",), _line(oc),
                          text(oc, 60), ""))

    # awaits
    rep, ins, dele, _ = _align(o.awaits, n.awaits)
    for nt, node in ins:
        out.append(Change("await-added", f"awaits `{nt}`", ("await",), _line(node), "", f"await {nt}"))
    for ot, node in dele:
        out.append(Change("await-removed", f"no longer awaits `{ot}`", ("await",), _line(node), f"await {ot}", ""))

    # what it returns, the loops, the constants
    for (ot, _), (nt, node) in _align(o.returns, n.returns)[0]:
        a, b = pair(ot, nt, 60)
        out.append(Change("return-changed", f"`return {a}` -> `return {b}`", ("return",), _line(node),
                          f"return {a}", f"return {b}"))
    for (ot, _), (nt, node) in _align(o.loops, n.loops)[0]:
        out.append(Change("loop-changed", f"`for {ot}` -> `for {nt}`", ("loop",), _line(node), f"for {ot}",
                          f"for {nt}"))
    if not any(c.kind in ("bound-changed", "condition-changed", "argument-changed", "call-replaced",
                          "default-changed", "return-changed") for c in out):
        for (ot, _), (nt, node) in _align(o.consts, n.consts)[0][:_MAX_PER_KIND]:
            a, b = pair(ot, nt, 60)
            out.append(Change("value-changed", f"`{a}` -> `{b}`", ("constant",), _line(node), a, b))
    lines = {c.line for c in out}
    rep, ins, dele, _ = _align(o.stmts, n.stmts)
    # an assignment to the same name with another value, wherever the alignment put it
    olds = {_assigned(node): (t, node) for t, node in [x for x, _ in rep] + dele if _assigned(node)}
    vague = []
    for nt, node in [y for _, y in rep] + ins:
        target = _assigned(node)
        if _line(node) in lines or not target or target not in olds:
            continue
        ot, onode = olds.pop(target)
        kind = "bound-changed" if _offset_by_one(onode, node) else "assignment-changed"
        a, b = pair(ot, nt)
        out.append(Change(kind, f"`{a}` -> `{b}`", ("bound" if kind == "bound-changed" else
                                                               "assignment", f"name:{target.split(' = ')[0]}"),
                          _line(node), ot[:90], nt[:90]))
    # a value computed and dropped that is now returned: the missing `return`
    dropped = {t for t, node in [x for x, _ in rep] + dele if isinstance(node, ast.Expr)}
    for nt, node in [y for _, y in rep] + ins:
        if isinstance(node, ast.Return) and node.value is not None and text(node.value, 400) in dropped:
            out.append(Change("return-added", f"returns `{text(node.value, 70)}`", ("return-added",), _line(node),
                              text(node.value, 90), nt[:90]))
    rep_i, ins_i, dele_i, _ = _align(o.imports, n.imports)
    for (ot, _), (nt, node) in rep_i[:_MAX_PER_KIND]:
        out.append(Change("import-changed", f"`{ot[:70]}` -> `{nt[:70]}`", ("import",), _line(node), ot, nt))
    for nt, node in ins_i[:1] if dele_i or rep_i else []:
        out.append(Change("import-changed", f"adds `{nt[:70]}`", ("import",), _line(node), "", nt))
    added_at = {c.line for c in out}
    for nt, node in ins[:_MAX_PER_KIND]:  # a value now set (a reset, a flag) where nothing was before
        if _assigned(node) and _assigned(node) not in olds and _line(node) not in added_at:
            out.append(Change("assignment-added", f"sets `{nt[:80]}`", ("assignment",
                                                                      f"name:{_assigned(node).split(' = ')[0]}"),
                              _line(node), "", nt[:90]))
    for (ot, onode), (nt, node) in rep:  # the same value assigned to another name: a misspelt name fixed
        if _assigned(onode) and _assigned(node) and _assigned(onode) != _assigned(node) and \
                text(getattr(onode, "value", None), 400) == text(getattr(node, "value", None), 400):
            out.append(Change("target-changed", f"`{_assigned(onode)}` -> `{_assigned(node)}`", ("assignment",),
                              _line(node), ot[:90], nt[:90]))
            break
    if not any(KINDS[c.kind][1] < 8 for c in out):
        for (ot, _), (nt, node) in rep[:1]:
            a, b = pair(ot, nt)
            vague.append(Change("logic-changed", f"`{a}` -> `{b}`", (), _line(node), a, b))
    out += _moved_handlers(old_def, new_def)
    out += _bases_changed(old_def, new_def)
    return _rank(out + vague)


def _handler_paths(scope: ast.AST | None) -> list[tuple[str, str]]:
    """(handler types, the loops and with-blocks around its try) of each handler of a function, in order."""
    out: list[tuple[str, str]] = []
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        _walk_handlers(scope.body, (), out)
    return out


def _walk_handlers(body: list, around: tuple[str, ...], out: list[tuple[str, str]]) -> None:
    for stmt in body:
        if isinstance(stmt, _SCOPES):
            continue
        if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            for h in stmt.handlers:
                out.append((text(h.type) if h.type is not None else "", " > ".join(around)))
        inner = around
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            inner = around + (f"for {text(stmt.target)} in {text(stmt.iter)}" if not isinstance(stmt, ast.While)
                              else f"while {text(stmt.test)}",)
        for name in ("body", "orelse", "finalbody"):
            value = getattr(stmt, name, None)
            if isinstance(value, list):
                _walk_handlers([v for v in value if isinstance(v, ast.stmt)], inner, out)
        for h in getattr(stmt, "handlers", []) or []:
            _walk_handlers(h.body, inner, out)


def _moved_handlers(old_def: ast.AST | None, new_def: ast.AST | None) -> list[Change]:
    """The same handlers around other code: a try moved into (or out of) a loop catches per item (or once)."""
    po, pn = _handler_paths(old_def), _handler_paths(new_def)
    if not po or sorted(t for t, _ in po) != sorted(t for t, _ in pn) or po == pn:
        return []
    out = []
    for (t, a), (_, b) in zip(po, pn):
        if a != b:
            where = f"inside `{b.rsplit(' > ', 1)[-1]}`" if len(b) > len(a) else \
                (f"outside `{a.rsplit(' > ', 1)[-1]}`" if a else "elsewhere")
            out.append(Change("handler-moved", f"moves `{_except(t)}` {where}", ("except:" + (t or "*"), "handler"),
                              _line(new_def), _except(t), _except(t)))
    return out[:1]


def _bases_changed(old_def: ast.AST | None, new_def: ast.AST | None) -> list[Change]:
    if not (isinstance(old_def, ast.ClassDef) and isinstance(new_def, ast.ClassDef)):
        return []
    ob, nb = [text(b) for b in old_def.bases], [text(b) for b in new_def.bases]
    if ob == nb:
        return []
    return [Change("bases-changed", f"`class {old_def.name}({', '.join(ob)})` -> "
                                    f"`class {new_def.name}({', '.join(nb)})`", ("bases",), _line(new_def),
                   ", ".join(ob), ", ".join(nb))]


def _assigned(stmt: ast.AST) -> str:
    """The target text of an assignment statement ("" for other statements)."""
    if isinstance(stmt, ast.Assign):
        return " = ".join(text(t) for t in stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return text(stmt.target)
    return ""


def _offset_by_one(o: ast.AST, n: ast.AST) -> bool:
    """An assignment whose value gained or lost a `+ 1` / `- 1` (an index or length moved by one)."""
    def ones(node):
        return sum(1 for x in ast.walk(node) if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Add, ast.Sub))
                   and isinstance(x.right, ast.Constant) and x.right.value == 1)
    return ones(o) != ones(n)


def _defaults(node: ast.AST) -> bool:
    """Does a new `if` give a value its default (`if not x: x = []`)?"""
    if not isinstance(node, ast.If):
        return False
    tested = {text(x) for x in ast.walk(node.test) if isinstance(x, (ast.Name, ast.Attribute))}
    return any(isinstance(s, ast.Assign) and any(text(t) in tested for t in s.targets) for s in node.body)


def _raised(stmt: ast.AST) -> str:
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return dotted(exc)
    return ""


def _callee(code: str) -> str:
    m = re.match(r"[\w.]+", code)
    return m.group(0) if m else ""


def _try_body_call(handler: ast.AST, nodes: list[ast.AST]) -> str:
    """The first call inside the try block a handler belongs to: what the new handler guards."""
    for node in nodes:
        if isinstance(node, ast.Try) and handler in node.handlers:
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Call) and dotted(sub.func):
                        return dotted(sub.func) + "()"
    return ""


def _rank(changes: list[Change]) -> list[Change]:
    """Most telling kind first (stable within a kind), at most _MAX_PER_KIND of each."""
    per: dict[str, int] = {}
    out = []
    for c in sorted(changes, key=lambda c: KINDS[c.kind][1]):
        per[c.kind] = per.get(c.kind, 0) + 1
        if per[c.kind] <= _MAX_PER_KIND:
            out.append(c)
    return out


def line_nodes(lines: list[str]) -> list[ast.AST]:
    """The nodes of code lines parsed one by one (a diff's removed or added lines without their file): a
    compound statement's header is completed with a body, `except`/`finally` with their `try`. Lines that do
    not parse alone (continuations) are skipped."""
    out: list[ast.AST] = []
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s or s.startswith("#") or s in ("else:", "try:"):
            continue
        candidates = []
        if re.match(r"(?:el)?if\b.*:$", s):
            head = re.sub(r"^elif\b", "if", s)
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if re.match(r"(?:return|raise|continue|break)\b", nxt):
                candidates.append(f"{head}\n {nxt}")  # a guard's exit is the line after it
            candidates.append(head + " pass")
        elif re.match(r"(?:except\b.*|finally):$", s):
            candidates.append(f"try:\n pass\n{s} pass")
        elif re.match(r"(?:async\s+)?(?:with|for|while)\b.*:$", s):
            candidates.append(f"async def _():\n {s} pass" if s.startswith("async") else f"{s} pass")
        elif re.match(r"(?:async\s+)?def\b|class\b|@", s):
            continue
        else:
            candidates.append(s)
            if "await " in s:
                candidates.append(f"async def _():\n {s}")
        for src in candidates:
            try:
                tree = ast.parse(src)
            except (SyntaxError, ValueError):
                continue
            body = tree.body
            if len(body) == 1 and isinstance(body[0], ast.AsyncFunctionDef) and body[0].name == "_":
                body = body[0].body
            for stmt in body:
                if isinstance(stmt, ast.Try) and s.startswith(("except", "finally")):
                    out += own_nodes(stmt.handlers[:1]) if stmt.handlers else [stmt]
                else:
                    out += [n for n in own_nodes([stmt]) if not isinstance(n, ast.Pass)]
            break
    return out
