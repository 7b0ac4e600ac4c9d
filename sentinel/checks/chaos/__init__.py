"""Chaos: the happy-path bias of generated code.

Code written to pass the demo swallows every error, evals whatever it is given, pastes the
credential it was testing with and assumes every lookup finds something. Python is read
through its AST (so ``except:`` in a comment or ``model.eval()`` never count); other
languages are matched on code lines with strings and comments stripped, and credentials in
config files (.env, YAML, JSON, INI, shell) are found line by line.


Secrets never leave this package: every SEN304 finding carries its line with the value masked.

The rules are declared as data in ``rules``; one module per family: ``handlers`` (SEN301/302), ``evals``
(SEN303), ``credentials`` / ``credentials_python`` / ``credentials_strings`` / ``credentials_lexical`` (SEN304),
``none_access`` (SEN305), ``shell`` (SEN306) and ``js`` (JavaScript/TypeScript); ``python`` runs the Python rules
over one parse.
"""

from __future__ import annotations

from sentinel import roles
from sentinel.checks.base import FileContext
from sentinel.checks.chaos.credentials import (
    _NAMES_ROLES,
    _NO_NAMES_ROLES,
    _SECRET_LINE_GATE,
    _STRICT_NAMES,
    _STRICT_URL_ROLES,
    _STRICT_URLS,
    _TEMPLATE_FILE,
    _TRUSTED_ROLES,
    _secret_lines,
    _token_findings,
)
from sentinel.checks.chaos.credentials_lexical import _lexical_credentials
from sentinel.checks.chaos.credentials_python import _KEY_NAME, _LITERAL_NODES, _bindings, _literal, _target_name
from sentinel.checks.chaos.js import _js
from sentinel.checks.chaos.python import _python
from sentinel.checks.chaos.rules import (
    BARE_EXCEPT,
    CHECK,
    CREDENTIAL,
    EVAL_EXEC,
    NONE_ACCESS,
    RULES,
    SHELL_INJECTION,
    SWALLOWED,
)
from sentinel.checks.chaos.scope import _LazyFlag, _matching_lines
from sentinel.languages import PROSE
from sentinel.models import Finding

__all__ = ["BARE_EXCEPT", "CHECK", "CREDENTIAL", "EVAL_EXEC", "NONE_ACCESS", "RULES", "SHELL_INJECTION", "SWALLOWED",
           "check_file",
           "_KEY_NAME", "_LITERAL_NODES", "_SECRET_LINE_GATE", "_bindings", "_literal", "_matching_lines",
           "_secret_lines", "_target_name"]

_JS = frozenset({"javascript", "typescript"})


def check_file(ctx: FileContext) -> list[Finding]:
    role = ctx.change.role
    cfg = ctx.config.chaos
    extra = tuple(cfg.extra_secret_names)
    if cfg.fixture_paths and ctx.config.matcher(cfg.fixture_paths).match(ctx.path):
        role = roles.FIXTURE
    # Outside product code, values that look like test data are stand-ins (a token containing "test").
    in_test = role not in _TRUSTED_ROLES
    out: list[Finding] = []
    token_lines: set[int] = set()
    if role in _STRICT_URL_ROLES:
        ctx.memo[_STRICT_URLS] = True
    out.extend(_token_findings(ctx, in_test, token_lines))
    if ctx.language in PROSE:
        return out  # prose holds no code: only unmistakable secret formats are looked for
    names_on = _LazyFlag(lambda: role not in _NO_NAMES_ROLES and not _TEMPLATE_FILE.search(ctx.path))
    if role not in _NAMES_ROLES:
        ctx.memo[_STRICT_NAMES] = True  # outside product code a named literal must look like a real random key
    if ctx.language == "python":
        out.extend(_python(ctx, names_on, extra, in_test, token_lines))
    else:
        if ctx.language in _JS:
            out.extend(_js(ctx))
        out.extend(_lexical_credentials(ctx, names_on, extra, in_test, token_lines))
    return out
