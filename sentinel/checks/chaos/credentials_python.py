"""SEN304 in Python, on the AST: names bound to secret-looking literals."""

from __future__ import annotations

import ast

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.credentials import _STRICT_NAMES, _cred_message, _masked_code, _random_key
from sentinel.checks.chaos.rules import CREDENTIAL
from sentinel.checks.chaos.scope import _fixture_marked, _line_filter
from sentinel.checks.secrets import NOT_SECRET, assess_value, classify_name
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, str):
            return v
        if isinstance(v, bytes):
            try:
                return v.decode("ascii")
            except UnicodeDecodeError:
                return None
        return None
    if isinstance(node, ast.JoinedStr) and all(isinstance(p, ast.Constant) for p in node.values):
        return "".join(str(p.value) for p in node.values)  # an f-string without placeholders
    return None


def _target_name(t: ast.AST) -> str | None:
    if isinstance(t, ast.Name):
        return t.id
    if isinstance(t, ast.Attribute):
        return t.attr
    if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
        return t.slice.value if _KEY_NAME.match(t.slice.value) else None  # os.environ["API_KEY"] = "..."
    return None


_LITERAL_NODES = (ast.Constant, ast.JoinedStr)
# Keys that name a setting ("password", "db.password", "api-key"), not data ("AWS::IAM::AccessKey").
_KEY_NAME = lazy_compile(r"[A-Za-z_][\w.\-]{0,79}$")


def _textual(node: ast.AST) -> bool:
    """Could _literal read this node as text? Only a str or bytes constant or an f-string: a default of None,
    a number or a boolean never is, and those are most of a file's bindings (keyword arguments, defaults)."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, _TEXT))


_TEXT = (str, bytes)


def _bindings(ctx: FileContext):
    """(name, value node) for every place a name is bound to a literal that _literal may read as text (the
    others are skipped here rather than by the caller: this runs over every binding of the file)."""
    textual = _textual
    for node in ctx.nodes(ast.Assign):
        value = node.value
        if isinstance(value, _LITERAL_NODES):
            if textual(value):
                for t in node.targets:
                    yield _target_name(t), value
        elif isinstance(value, (ast.Tuple, ast.List)):
            for t in node.targets:
                if isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(value.elts):
                    for te, ve in zip(t.elts, value.elts):
                        if textual(ve):
                            yield _target_name(te), ve
    for node in ctx.nodes(ast.AnnAssign):
        if node.value is not None and textual(node.value):
            yield _target_name(node.target), node.value
    for node in ctx.nodes(ast.keyword):
        if node.arg and textual(node.value):
            yield node.arg, node.value
    for node in ctx.nodes(ast.Dict):
        for k, v in zip(node.keys, node.values):
            if (textual(v) and isinstance(k, ast.Constant) and isinstance(k.value, str)
                    and _KEY_NAME.match(k.value)):
                yield k.value, v
    for node in ctx.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
        a = node.args
        positional = a.posonlyargs + a.args
        for arg, default in zip(positional[len(positional) - len(a.defaults):], a.defaults):
            if textual(default):
                yield arg.arg, default
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            if default is not None and textual(default):
                yield arg.arg, default


def _py_credentials(ctx: FileContext, names_on, extra: tuple[str, ...], in_test,
                    token_lines: set[int]) -> list[Finding]:
    """Names bound to secret-looking literals. `names_on` (lock files and examples are exempt)
    is asked only once there is a candidate."""
    threshold = ctx.config.chaos.entropy_threshold
    out: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    selected = _line_filter(ctx)
    for name, value_node in _bindings(ctx):
        if not name or not isinstance(value_node, _LITERAL_NODES):
            continue
        line = value_node.lineno
        if line in token_lines or (selected is not None and not selected(line)):
            continue
        value = _literal(value_node)
        if not value:
            continue
        level = classify_name(name, extra)
        if level == NOT_SECRET:
            continue
        if not names_on:
            return []
        reason = assess_value(value, level, name, threshold, in_test)
        if reason is None or (in_test and _fixture_marked(ctx, line)):
            continue
        if ctx.memo.get(_STRICT_NAMES) and not _random_key(value):
            continue
        key = (line, value_node.col_offset)
        if key in seen:
            continue
        seen.add(key)
        raw = ctx.line(line)
        span = _char_span(raw, value_node)
        code = _masked_code(raw, value, extra, span)
        out.append(ctx.finding(CREDENTIAL, line, _cred_message(name, reason),
                               column=(span[0] + 1) if span else None, code=code))
    return out


def _char_span(raw: str, node: ast.AST) -> tuple[int, int] | None:
    """Character span of a single-line literal (ast offsets are UTF-8 byte offsets)."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    data = raw.encode("utf-8")
    start = len(data[:node.col_offset].decode("utf-8", "replace"))
    end = len(data[:node.end_col_offset].decode("utf-8", "replace"))
    # Keep the prefix and quotes visible: mask only what is between them.
    m = _LITERAL_QUOTES.match(raw, start, end)
    if m and end - m.end() >= len(m.group(1)):
        return m.end(), end - len(m.group(1))
    return start, end


_LITERAL_QUOTES = lazy_compile("[A-Za-z]{0,2}(\"\"\"|'''|\"|')")
