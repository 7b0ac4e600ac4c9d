"""Python: the gate that spares the parse, the AST rules in order, and the lexical fallback for a
module that does not parse."""

from __future__ import annotations

import ast

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.credentials import _URL_PASSWORD_GATE
from sentinel.checks.chaos.credentials_lexical import _lexical_credentials
from sentinel.checks.chaos.credentials_python import _py_credentials
from sentinel.checks.chaos.credentials_strings import _py_string_credentials
from sentinel.checks.chaos.evals import _py_eval
from sentinel.checks.chaos.handlers import _py_handlers, explains_failure
from sentinel.checks.chaos.none_access import _NONE_LITERALS, _py_none_access
from sentinel.checks.chaos.rules import BARE_EXCEPT, EVAL_EXEC, SWALLOWED
from sentinel.checks.chaos.scope import _line_filter, _matching_lines
from sentinel.checks.chaos.shell import SHELL_GATE, py_shell
from sentinel.checks.secrets import secret_binding_pattern
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity

# Gates: which lines in scope could matter at all, before any parsing.
# A selected line that could start a Python finding: an except clause, an eval/exec call, a
# lookup whose result is used on the same line (or a closing parenthesis that is).
_PY_GATE = lazy_compile(r"^\s*except\b|\b(?:eval|exec)\s*\(|(?:\.get|match|search|which|getenv)\(.*\)\s*[.\[]|"
                        r"^\s*\)\s*[.\[]")

_PY_LITERALS = ("except", "eval", "exec", ".get(", "match(", "search(", "which(", "getenv(")


def _py_worth_parsing(ctx: FileContext, extra: tuple[str, ...]) -> bool:
    """Could any AST rule fire on a line in scope? Parsing is the expensive part of this check."""
    binding = secret_binding_pattern(extra)
    if SHELL_GATE.search(ctx.scan_text):
        return True  # SEN306: a shell call's keyword may sit on a line other than the one in scope
    if ctx.whole_file_in_scope:
        text = ctx.scan_text  # Python's NFKC identifiers: `ｅｖａｌ(x)` is a call of eval
        if any(lit in text for lit in _PY_LITERALS):
            return True
        return binding.search(ctx.lower_text) is not None or ("://" in text and _URL_PASSWORD_GATE.search(text)
                                                              is not None)
    for n in ctx.selected_lines():
        line = ctx.scan_line(n)
        if _PY_GATE.search(line) or binding.search(line.lower()) or ("://" in line
                                                                      and _URL_PASSWORD_GATE.search(line)):
            return True  # SEN304 also reads the URLs of string templates ("mysql://%s:%s@%s" % (...))
    return False


def _python(ctx: FileContext, names_on, extra: tuple[str, ...], in_test,
            token_lines: set[int]) -> list[Finding]:
    if not _py_worth_parsing(ctx, extra):
        return []
    tree = ctx.tree
    if tree is None:
        out = _python_lexical(ctx)
        out.extend(_lexical_credentials(ctx, names_on, extra, in_test, token_lines))
        return out
    selected = _line_filter(ctx)
    text = ctx.scan_text
    out = _py_handlers(ctx, selected) if "except" in text else []
    want_eval = "eval" in text or "exec" in text
    want_none = any(lit in text for lit in _NONE_LITERALS)
    want_shell = SHELL_GATE.search(text) is not None
    if want_eval or want_none or want_shell:
        calls = ctx.nodes(ast.Call)
        if selected is not None:
            calls = [c for c in calls if selected(c.lineno)]
        if want_eval:
            out.extend(_py_eval(ctx, calls))
        if want_shell:
            out.extend(py_shell(ctx, calls))
        if want_none and not in_test:  # in a test the AttributeError is the failure report
            out.extend(_py_none_access(ctx, selected))
    named = _py_credentials(ctx, names_on, extra, in_test, token_lines)
    out.extend(named)
    out.extend(_py_string_credentials(ctx, names_on, extra, in_test, token_lines | {f.line for f in named}))
    return out


_PY_LEXICAL_GATE = lazy_compile(r"\bexcept\b|\beval\b|\bexec\b")
_PY_BARE_EXCEPT = lazy_compile(r"^\s*except\s*:")
_PY_BROAD_EXCEPT = lazy_compile(r"^(\s*)except\s*\(?\s*(?:Exception|BaseException)\b[^:]*:\s*(\S.*)?$")
_PY_EVAL_LEX = lazy_compile(r"(?<![\w.])(eval|exec)\s*\(")
_PY_DEF_BEFORE = lazy_compile(r"\b(?:def|class)\s+$")
_NOOP_BODY = frozenset({"pass", "...", "continue", "return", "return None"})


def _python_lexical(ctx: FileContext) -> list[Finding]:
    """A module that does not parse still gets the rules a code line can decide."""
    out: list[Finding] = []
    lexed = ctx.lexed
    for n in _matching_lines(ctx, _PY_LEXICAL_GATE):
        code = lexed.code_line(n)
        if _PY_BARE_EXCEPT.match(code):
            f = ctx.finding(BARE_EXCEPT, n, "bare `except:` also catches KeyboardInterrupt and SystemExit")
            body = _lexical_body(lexed, n, len(code) - len(code.lstrip()))
            if body and (body[-1][1] == "raise" or (len(body) >= 1 and "reraise" in body[0][1]
                                                    and body[0][1].startswith("with "))) \
                    and not any(t.split()[0] in ("return", "break", "continue") for _, t in body[:-1] if t.split()):
                f.severity = Severity.WARNING
                f.message = "bare `except:` (it re-raises, so nothing is swallowed; name what it is for)"
            elif any(explains_failure(lexed.comments.get(i, ""))
                     for i in range(n, (body[0][0] if body else n) + 1)):
                f.severity = Severity.WARNING
                f.message += "; explained in a comment"
            out.append(f)
            continue
        m = _PY_BROAD_EXCEPT.match(code)
        if m and _lexical_noop_body(lexed, n, len(m.group(1)), m.group(2)):
            out.append(ctx.finding(SWALLOWED, n, "broad `except` swallows every error"))
            continue
        for em in _PY_EVAL_LEX.finditer(code):
            if not _PY_DEF_BEFORE.search(code[:em.start()]):
                out.append(ctx.finding(EVAL_EXEC, n, f"`{em.group(1)}()` runs arbitrary code from a string",
                                       column=em.start() + 1))
                break
    return out


def _lexical_body(lexed, n: int, indent: int) -> list[tuple[int, str]]:
    """(line, stripped code) of the block under line n, by indentation (for code that does not parse)."""
    body: list[tuple[int, str]] = []
    i = n + 1
    while i < len(lexed.code):
        text = lexed.code_line(i)
        if text.strip():
            if len(text) - len(text.lstrip()) <= indent:
                break
            body.append((i, text.strip()))
        i += 1
    return body


def _lexical_noop_body(lexed, n: int, indent: int, inline: str | None) -> bool:
    if inline is not None:
        return inline.strip() in _NOOP_BODY
    body = [text for _, text in _lexical_body(lexed, n, indent)]
    return bool(body) and all(b in _NOOP_BODY for b in body)
