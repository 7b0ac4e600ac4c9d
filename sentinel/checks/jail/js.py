"""JavaScript/TypeScript imports of banned modules (SEN101), on the lexer's code view."""

from __future__ import annotations

from sentinel.checks.base import FileContext
from sentinel.checks.jail.python import _import_msg, _quoted_at, banned_module
from sentinel.checks.jail.rules import SEN101
from sentinel.checks.jail.settings import _lazy, _Out, _Settings

_JS_IMPORT = _lazy(r"""(?:\bfrom\s*|(?:^|[;{}])\s*import\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(['"`])""")


def _check_js_imports(ctx: FileContext, s: _Settings, out: _Out, scope: str) -> None:
    banned = [b for b in s.banned_imports if b in scope]
    if not banned:
        return
    lexed = ctx.lexed
    for n in ctx.selected_lines():
        raw = ctx.line(n)
        if not any(b in raw for b in banned):
            continue
        code = lexed.code_line(n)
        for m in _JS_IMPORT.finditer(code):
            module = _quoted_at(code, raw, m.end() - 1)
            if not module or "${" in module or module.startswith((".", "/")):
                continue
            module = module.removeprefix("node:")
            b = banned_module(module, s.banned_imports, sep="/")
            if b:
                out.add(SEN101, n, _import_msg(module, b), column=m.start(1) + 1)
