"""SEN304 inside Python strings: a credential written into a connection string or a string template.

A DSN, a URL or a command line is often a template whose other parts come at run time
(``f"mysql://root:<literal>@{host}/app"``, ``"host={} password=<literal>".format(h)``,
``"mysql://%s:%s@%s" % ("root", "<literal>", h)``): the password is as literal as in ``password = "..."``, but
no name is bound to it. Each string of the change — a literal, an f-string, a ``str.format()`` template with
its arguments, a ``%`` template with its operand — is rendered with its literal arguments in place and every
run-time value as an opaque field, then read as a connection string is read: a password in a URL's user part,
or a credential keyword (``password=``, ``pwd=``, ``api_key=``...) given a literal value. A value that is, or
holds, a run-time field is not literal. Docstrings are documentation and are not read.

The policy is SEN304's: URL passwords in every role (stand-ins skipped in tests, docs and examples, and only
random-looking keys there), keywords where names are read (product code and CI) and elsewhere only when the
value looks like a real random key."""

from __future__ import annotations

import ast
import re
import string

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.credentials import (
    _STRICT_NAMES,
    _STRICT_URLS,
    _URL_PASSWORD_GATE,
    _masked_code,
    _random_key,
)
from sentinel.checks.chaos.rules import CREDENTIAL
from sentinel.checks.chaos.scope import _fixture_marked, _line_filter, _matching_lines
from sentinel.checks.secrets import (
    NOT_SECRET,
    assess_value,
    classify_name,
    find_url_credentials,
    secret_binding_pattern,
)
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding

# What a run-time value is rendered as: a field, which no password or keyword value may contain.
_FIELD = "{}"

# A keyword of a connection string, a query string or a command line, and its value: "password=x",
# "Pwd=x;", "?api_key=x&", "--password=x", "password='x y'" (libpq quotes values with spaces). The key starts
# the string or follows a separator, so "x.password=" in a code snippet is not a keyword of a DSN.
_KEYWORD = lazy_compile(r"""(?<![^\s;&?,({|])(?:--?)?(?P<key>[A-Za-z][\w.\-]{0,63})[ \t]*=(?!=)[ \t]*"""
                        r"""(?:'(?P<quoted>(?:[^'\\\n]|\\.){1,256})'|(?P<bare>[^\s;&,'"`()<>\[\]{}|]{1,256}))""")
# Values that are themselves templates of some other formatter: "{password}", "%(pw)s", "%s", "$PASSWORD".
_TEMPLATE_IN_VALUE = lazy_compile(r"[{}]|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|\$\{?[A-Za-z_]")
# One conversion of a %-template: %s, %(name)s, %-10.3f, %%.
_PERCENT = lazy_compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>.)",
                        re.DOTALL)

_Pieces = list  # [(text or None for a run-time field, the node the text is written in)]


def _str_constant(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _fstring_pieces(node: ast.JoinedStr) -> _Pieces:
    pieces: _Pieces = []
    for part in node.values:
        if _str_constant(part):
            pieces.append((part.value, node))  # before 3.12 the parts carry only the f-string's position
        elif (isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion in (-1, 115)
              and _str_constant(part.value)):
            pieces.append((part.value.value, part.value))  # f"{'literal'}"
        else:
            pieces.append((None, node))
    return pieces


def _format_pieces(template: ast.Constant, call: ast.Call) -> _Pieces | None:
    """str.format(): each field filled with its argument when that is a plain string literal."""
    try:
        parsed = list(string.Formatter().parse(template.value))
    except ValueError:
        return None  # not a valid template: Python raises at run time, nothing to render
    args = call.args if not any(isinstance(a, ast.Starred) for a in call.args) else None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    pieces: _Pieces = []
    auto = 0
    for literal, field, spec, conversion in parsed:
        if literal:
            pieces.append((literal, template))
        if field is None:
            continue
        head = field.split(".", 1)[0].split("[", 1)[0]
        arg = None
        if head == "" or head.isdigit():
            index = auto if head == "" else int(head)
            auto += head == ""
            if args is not None and index < len(args):
                arg = args[index]
        else:
            arg = keywords.get(head)
        whole = head == field and not spec and conversion in (None, "s")
        pieces.append((arg.value, arg) if whole and _str_constant(arg) else (None, template))
    return pieces


def _percent_pieces(template: ast.Constant, operand: ast.AST) -> _Pieces:
    """The % operator: each conversion filled with its operand's item when that is a plain string literal."""
    text = template.value
    positional: list | None = None
    mapping: dict = {}
    if isinstance(operand, ast.Tuple):
        positional = None if any(isinstance(e, ast.Starred) for e in operand.elts) else list(operand.elts)
    elif isinstance(operand, ast.Dict):
        mapping = {k.value: v for k, v in zip(operand.keys, operand.values) if _str_constant(k)}
    else:
        positional = [operand]  # one value (a tuple at run time only fills nothing: it is then a field)
    pieces: _Pieces = []
    last = used = 0
    conversions = [m for m in _PERCENT.finditer(text) if m.group("conv") != "%"]
    if positional is not None and not isinstance(operand, ast.Tuple) and len(conversions) != 1:
        positional = None
    for m in _PERCENT.finditer(text):
        if m.start() > last:
            pieces.append((text[last:m.start()], template))
        last = m.end()
        if m.group("conv") == "%":
            pieces.append(("%", template))
            continue
        if m.group("key") is not None:
            arg = mapping.get(m.group("key"))
        elif positional is not None and m.group("width") != "*" and used < len(positional):
            arg = positional[used]
            used += 1
        else:
            arg, positional = None, None  # a width taken from the operand: the items no longer line up
        pieces.append((arg.value, arg) if m.group("conv") == "s" and _str_constant(arg) else (None, template))
    if last < len(text):
        pieces.append((text[last:], template))
    return pieces


def _rendered(pieces: _Pieces) -> tuple[str, list[tuple[int, int, str | None, ast.AST]]]:
    text: list[str] = []
    spans = []
    pos = 0
    for piece, node in pieces:
        shown = _FIELD if piece is None else piece
        spans.append((pos, pos + len(shown), piece, node))
        text.append(shown)
        pos += len(shown)
    return "".join(text), spans


def _literal_node(spans, start: int, end: int) -> ast.AST | None:
    """The node a rendered span is written in, or None when any of it is a run-time field."""
    node = None
    for s, e, piece, n in spans:
        if e <= start or s >= end:
            continue
        if piece is None:
            return None
        node = node or n
    return node


def _templates(ctx: FileContext, candidates: set[int]):
    """(how, pieces) for every string of the file on a candidate line, as the program builds it."""
    for node in ctx.nodes(ast.JoinedStr):
        if _on(node, candidates):
            yield "an f-string", _fstring_pieces(node)
    for node in ctx.nodes(ast.Constant):
        if not isinstance(node.value, str) or not _on(node, candidates):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, (ast.JoinedStr, ast.Expr)):
            continue  # an f-string's part (rendered above), or a docstring
        if isinstance(parent, ast.Attribute) and parent.attr == "format":
            call = ctx.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                pieces = _format_pieces(node, call)
                if pieces is not None:
                    yield "a str.format() template", pieces
                continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mod) and parent.left is node:
            yield "a %-format template", _percent_pieces(node, parent.right)
            continue
        yield "a string", [(node.value, node)]


def _on(node: ast.AST, candidates: set[int]) -> bool:
    end = node.end_lineno or node.lineno
    return node.lineno in candidates or (end > node.lineno and any(n in candidates for n in range(node.lineno,
                                                                                                    end + 1)))


def _where(ctx: FileContext, node: ast.AST, value: str) -> tuple[int, tuple[int, int] | None]:
    """The line of `node` that holds `value`, and its span there when it is found as written."""
    first, last = node.lineno, node.end_lineno or node.lineno
    for n in range(first, min(last, first + 200) + 1):
        at = ctx.line(n).find(value)
        if at >= 0:
            return n, (at, at + len(value))
    return first, None


def _py_string_credentials(ctx: FileContext, names_on, extra: tuple[str, ...], in_test,
                           token_lines: set[int]) -> list[Finding]:
    candidates = set(_matching_lines(ctx, secret_binding_pattern(extra), lowered=True))
    if "://" in ctx.text:
        candidates.update(_matching_lines(ctx, _URL_PASSWORD_GATE))
    candidates -= token_lines
    if not candidates:
        return []
    threshold = ctx.config.chaos.entropy_threshold
    selected = _line_filter(ctx)
    out: list[Finding] = []
    seen: set[int] = set(token_lines)
    for how, pieces in _templates(ctx, candidates):
        text, spans = _rendered(pieces)
        found: list[tuple[ast.AST, str, str]] = []  # (node, value, message)
        if how != "a string":  # a plain literal's URL is the line scan's (credentials._token_findings)
            for start, end in find_url_credentials(text, in_test):
                node = _literal_node(spans, start, end)
                pw = text[start:end]
                if node is not None and not (ctx.memo.get(_STRICT_URLS) and not _random_key(pw)):
                    found.append((node, pw, f"password inside a URL in {how}"))
        for m in _KEYWORD.finditer(text):
            group = "quoted" if m.group("quoted") is not None else "bare"
            value = m.group(group)
            node = _literal_node(spans, *m.span(group))
            if node is None or _TEMPLATE_IN_VALUE.search(value):
                continue
            key = m.group("key")
            level = classify_name(key, extra)
            if level == NOT_SECRET:
                continue
            if not names_on:
                break
            reason = assess_value(value, level, key, threshold, in_test)
            if reason is None or reason == "url" or (ctx.memo.get(_STRICT_NAMES) and not _random_key(value)):
                continue
            kind = "high-entropy value" if reason == "entropy" else "hardcoded credential"
            found.append((node, value, f"{kind} '{key}=' inside {how}"))
        for node, value, message in found:
            line, span = _where(ctx, node, value)
            if line in seen or (selected is not None and not selected(line)):
                continue
            if in_test and _fixture_marked(ctx, line):
                continue
            seen.add(line)
            out.append(ctx.finding(CREDENTIAL, line, message, column=span[0] + 1 if span else None,
                                   code=_masked_code(ctx.line(line), value, extra, span)))
    return out
