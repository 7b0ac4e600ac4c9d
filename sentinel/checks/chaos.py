"""Chaos: the happy-path bias of generated code.

Code written to pass the demo swallows every error, evals whatever it is given, pastes the
credential it was testing with and assumes every lookup finds something. Python is read
through its AST (so ``except:`` in a comment or ``model.eval()`` never count); other
languages are matched on code lines with strings and comments stripped, and credentials in
config files (.env, YAML, JSON, INI, shell) are found line by line.

Secrets never leave this module: every SEN304 finding carries its line with the value masked.
"""

from __future__ import annotations

import ast
import re

from sentinel import roles
from sentinel.checks.base import FileContext, parent_map
from sentinel.checks.secrets import (
    NOT_SECRET,
    PRIVATE_KEY_BEGIN,
    TOKEN_GATE,
    assess_value,
    classify_name,
    find_aws_secret,
    find_tokens,
    find_url_credentials,
    is_high_entropy,
    is_placeholder,
    private_key_at,
    redact_line,
    redact_value,
    secret_binding_pattern,
)
from sentinel.languages import HASH_COMMENT, PROSE, SLASH_COMMENT
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity
from sentinel.roles import CI, TEST
from sentinel.rules import EVERYWHERE, INFO, OFF, QUALITY_ROLES, SECURITY_ROLES, Rule

RULES: tuple[Rule, ...] = (
    Rule(
        code="SEN301", name="bare-except", check="chaos", severity=Severity.ERROR,
        summary="A Python `except:` clause with no exception type.",
        rationale="A bare except also catches KeyboardInterrupt, SystemExit and GeneratorExit, so Ctrl-C and "
                  "clean shutdowns are swallowed, and every bug in the try block looks like the one failure the "
                  "author expected.",
        example="def load(path):\n    try:\n        return open(path).read()\n    except:\n        return ''\n",
        counter_example="def load(path):\n    try:\n        return open(path).read()\n"
                        "    except FileNotFoundError:\n        return ''\n",
        hint="Catch the specific exceptions you expect (e.g. `except (OSError, ValueError):`).",
        roles=QUALITY_ROLES, noqa=("E722", "B001", "bare-except", "W0702"), fix="safe",
    ),
    Rule(
        code="SEN302", name="swallowed-broad-except", check="chaos", severity=Severity.ERROR,
        summary="`except Exception` / `except BaseException` (or JS `catch {}`) whose body does nothing.",
        rationale="A broad handler whose body is only `pass`, `continue`, `...`, a docstring or a bare "
                  "`return` / `return None` makes every failure silent: the caller gets a None it cannot tell "
                  "from a result and nobody learns that anything went wrong. A handler that logs, re-raises, "
                  "returns a value or does any work is not reported. In JavaScript/TypeScript an empty "
                  "`catch (e) {}` block and `.catch(() => {})` are the same pattern.",
        example="def refresh(cache):\n    try:\n        cache.reload()\n    except Exception:\n        pass\n",
        counter_example="import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef refresh(cache):\n    try:\n"
                        "        cache.reload()\n    except Exception:\n"
                        "        log.warning('cache reload failed', exc_info=True)\n",
        hint="Catch the specific exception, or log / re-raise it instead of discarding it.",
        roles={**QUALITY_ROLES, TEST: INFO},
        noqa=("BLE001", "S110", "S112", "B110", "B112", "SIM105", "broad-except", "broad-exception-caught", "W0703",
              "W0718"),
    ),
    Rule(
        code="SEN303", name="eval-exec", check="chaos", severity=Severity.ERROR,
        summary="A call of the builtin `eval()` / `exec()` (or JS `eval(` / `new Function(`).",
        rationale="Evaluating a string runs whatever code it contains: one unvalidated input is remote code "
                  "execution, and the code cannot be linted, type-checked or reviewed. Methods that happen to "
                  "be called eval (`model.eval()`, `ast.literal_eval`) and names rebound in the module "
                  "(`from x import eval`) are not reported.",
        example="def compute(expression):\n    return eval(expression)\n",
        counter_example="import ast\n\n\ndef compute(expression):\n    return ast.literal_eval(expression)\n",
        hint="Parse the data instead (ast.literal_eval, json.loads) or dispatch on a dict of allowed operations.",
        roles={**SECURITY_ROLES, TEST: INFO},
        noqa=("S307", "S102", "B307", "B102", "PGH001", "eval-used", "exec-used", "W0123", "W0122"), security=True,
        fix="unsafe",
    ),
    Rule(
        code="SEN304", name="hardcoded-credential", check="chaos", severity=Severity.ERROR,
        summary="A credential written into the change: a known token format, or a literal bound to a "
                "secret-like name.",
        rationale="A committed secret is leaked for good: it lives in history, forks and CI logs. Known token "
                  "formats (AWS, GitHub, Slack, Google, Stripe, OpenAI, Anthropic, PEM private keys with key "
                  "material) are reported in any non-prose file, comments included. Otherwise a literal counts "
                  "when its name's last word is a credential word (password, secret, api_key, github_token; "
                  "not token_count, password_field, max_token) and the value is not a placeholder (changeme, "
                  "YOUR_API_KEY, ${VAR}, <password>, xxx, the name itself), not shorter than 6 characters, "
                  "digits only, a URL without credentials, a path or an identifier-like word. Names such as "
                  "signing_key, salt or Authorization count only with a long high-entropy value: raw entropy "
                  "alone flags every hash, id and test vector, so it is never used without a name. Skipped: "
                  "files under chaos.fixture-paths; name-based literals in examples/samples/templates and "
                  "lockfiles; in test files, literals containing test/fake/dummy/example/mock/sample/stub or "
                  "marked `# sentinel: fixture` on the line or the line above. Values are always redacted.",
        example='import psycopg2\n\nconn = psycopg2.connect(host="db", user="app", password="hunter2")\n',
        counter_example='import os\n\nimport psycopg2\n\nconn = psycopg2.connect(host="db", user="app", '
                        'password=os.environ["DB_PASSWORD"])\n',
        hint="Read it from the environment or a secret manager, and rotate the value that was exposed.",
        roles=EVERYWHERE, noqa=("S105", "S106", "S107", "B105", "B106", "B107"), security=True,
    ),
    Rule(
        code="SEN305", name="unguarded-none-access", check="chaos", severity=Severity.WARNING,
        summary="An attribute or item access on a call that returns None when nothing is found "
                "(re.match/search, dict.get(k), os.environ.get, os.getenv, shutil.which).",
        rationale="`re.match(p, s).group(1)` is the happy path written down: the first input that does not "
                  "match raises `AttributeError: 'NoneType' object has no attribute 'group'` far from the "
                  "cause. A `.get()` with a default, a check of the result first (if/and/ternary, an early "
                  "return, try/except AttributeError), a pattern that always matches (`\\s*`), HTTP clients' "
                  ".get(url) and test files (where the AttributeError is the failure report) are not reported.",
        example='import re\n\n\ndef major(version):\n    return re.match(r"(\\d+)\\.", version).group(1)\n',
        counter_example='import re\n\n\ndef major(version):\n    m = re.match(r"(\\d+)\\.", version)\n'
                        '    if m is None:\n        raise ValueError(f"not a version: {version!r}")\n'
                        '    return m.group(1)\n',
        hint="Check the result for None first (or pass a default to .get()).",
        roles={**QUALITY_ROLES, TEST: OFF, CI: OFF},
        noqa=("union-attr", "index", "reportOptionalMemberAccess", "reportOptionalSubscript"),
    ),
)
BARE_EXCEPT, SWALLOWED, EVAL_EXEC, CREDENTIAL, NONE_ACCESS = RULES

_JS = frozenset({"javascript", "typescript"})
# Languages where name-based credentials are read lexically; config languages allow unquoted values.
_CONFIG_LANGS = frozenset({"dotenv", "yaml", "toml", "ini", "shell", "make", "docker", "unknown"})
_CODE_LANGS = frozenset(SLASH_COMMENT | {"ruby", "perl", "lua", "json", "python"})
_LEXED_LANGS = frozenset(HASH_COMMENT | SLASH_COMMENT | {"sql", "rust"})
# Configuration templates committed as such (settings.example.py, .env.sample, config.template.yaml): the
# values under secret names there are stand-ins; token formats still count. Folders of examples have a role.
_TEMPLATE_FILE = lazy_compile(r"[._-](?:example|sample|template|dist)s?(?:[._-][^/]*)?$", re.IGNORECASE)
_FIXTURE_MARK = lazy_compile(r"(?:#|//|/\*|--).*sentinel:\s*fixture")

# Gates: which lines in scope could matter at all, before any parsing.
# A selected line that could start a Python finding: an except clause, an eval/exec call, a
# lookup whose result is used on the same line (or a closing parenthesis that is).
_PY_GATE = lazy_compile(r"^\s*except\b|\b(?:eval|exec)\s*\(|(?:\.get|match|search|which|getenv)\(.*\)\s*[.\[]|"
                        r"^\s*\)\s*[.\[]")


# --- scope helpers ------------------------------------------------------------------------------

def _line_filter(ctx: FileContext):
    """ctx.selected, or None when every line is in scope (saves a call per AST node)."""
    return None if ctx.whole_file_in_scope else ctx.selected


def _matching_lines(ctx: FileContext, pattern: re.Pattern, lowered: bool = False):
    """Line numbers in scope where the pattern matches (one regex pass over the text when the whole
    file is in scope, so a 600K-line added file costs a C-level scan, not a Python loop per line).
    ``lowered``: the pattern is written for lowercased text (see secrets.secret_binding_pattern)."""
    if ctx.whole_file_in_scope:
        text = ctx.lower_text if lowered else ctx.text
        # One search per matching line, then jump to the next line: a minified one-line file
        # with thousands of matches costs one search, not one Python iteration per match.
        pos, line = 0, 1
        search, count, find = pattern.search, text.count, text.find
        while True:
            m = search(text, pos)
            if m is None:
                return
            start = m.start()
            line += count("\n", pos, start)
            yield line
            end = find("\n", start)
            if end == -1:
                return
            pos, line = end + 1, line + 1
    else:
        for n in ctx.selected_lines():
            text = ctx.line(n)
            if pattern.search(text.lower() if lowered else text):
                yield n


# Roles whose files hold real configuration: a literal under a secret name there is a credential. Elsewhere
# (tests, fixtures, docs, examples, stubs, generated and vendored files) only unmistakable secret formats count.
_NAMES_ROLES = frozenset({roles.PRODUCT, roles.CI})
# Generated files (lock files above all) hold package names and hashes under key-like names, never credentials.
_NO_NAMES_ROLES = frozenset({roles.GENERATED})
_STRICT_NAMES = "chaos.strict-names"
_RANDOM_KEY_MIN = 32


def _random_key(value: str) -> bool:
    """A real key, not a stand-in: long, mixed-case base64 (hex digests are test vectors far more often than
    keys), random by its entropy, and free of the words test values are made of."""
    v = value.strip()
    if len(v) < _RANDOM_KEY_MIN or not (any(c.isupper() for c in v) and any(c.islower() for c in v)
                                        and any(c.isdigit() for c in v)):
        return False
    return is_high_entropy(v, 4.5) and not is_placeholder(v, "", True)
_TRUSTED_ROLES = frozenset({roles.PRODUCT, roles.CI, roles.GENERATED, roles.VENDORED})
# Tests, their data and examples hold only stand-in credentials unless one looks like a real random key; docs
# keep the looser stand-in list (a connection string in a README is as likely a real one pasted as a sample).
_STRICT_URL_ROLES = frozenset({roles.TEST, roles.FIXTURE, roles.EXAMPLE})
_STRICT_URLS = "chaos.strict-urls"


class _LazyFlag:
    """A per-file fact computed on first use: most files never need to know."""

    __slots__ = ("_decide", "_value")

    def __init__(self, decide):
        self._decide = decide
        self._value: bool | None = None

    def __bool__(self) -> bool:
        if self._value is None:
            self._value = bool(self._decide())
        return self._value


def _fixture_marked(ctx: FileContext, line: int) -> bool:
    return any(_FIXTURE_MARK.search(ctx.line(n)) for n in (line, line - 1) if n > 0)


# --- entry point --------------------------------------------------------------------------------

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


# --- SEN304: token formats (any file) -----------------------------------------------------------

# Lines that could hold a token format, a password inside a URL, or an AWS secret key.
_URL_PASSWORD_SOURCE = r"://[^\s/@]{0,128}:[^\s/@]{1,256}@"
_AWS_SECRET_SOURCE = r"[Aa][Ww][Ss].{0,40}[Ss][Ee][Cc][Rr][Ee][Tt]"
_SECRET_LINE_GATE = lazy_compile(f"{TOKEN_GATE.pattern}|{_URL_PASSWORD_SOURCE}|{_AWS_SECRET_SOURCE}")
_URL_PASSWORD_GATE = lazy_compile(_URL_PASSWORD_SOURCE)
_AWS_SECRET_GATE = lazy_compile(_AWS_SECRET_SOURCE)


def _secret_lines(ctx: FileContext) -> list[int]:
    """The lines in scope where _SECRET_LINE_GATE matches, ascending.

    Over a whole file its three parts scan apart, each only when the text holds what it needs: the one
    alternation costs twice as much in C (its first characters include most lowercase letters, so the engine
    tries every alternative at a third of all offsets), and it is the costliest scan of a whole-tree run. No
    match of any part spans a line, so a line matches the alternation exactly when it matches one part."""
    if not ctx.whole_file_in_scope:
        return list(_matching_lines(ctx, _SECRET_LINE_GATE))
    lines = list(_matching_lines(ctx, TOKEN_GATE))
    text = ctx.text
    more: list[int] = []
    if "://" in text:
        more.extend(_matching_lines(ctx, _URL_PASSWORD_GATE))
    low = ctx.lower_text  # a match has "aws" and "secret" in some case: both in the lowered text
    if "aws" in low and "secret" in low:
        more.extend(_matching_lines(ctx, _AWS_SECRET_GATE))
    return sorted(set(lines).union(more)) if more else lines


def _token_findings(ctx: FileContext, in_test, token_lines: set[int]) -> list[Finding]:
    """Unmistakable secret formats, in every file and every role (a real key in a test still leaks)."""
    out: list[Finding] = []
    for n in _secret_lines(ctx):
        if in_test and _fixture_marked(ctx, n):
            continue
        raw = ctx.line(n)
        found = next(iter(find_tokens(raw, in_test)), None)
        if found is not None:
            kind, column = found[2], found[0] + 1
        elif PRIVATE_KEY_BEGIN.search(raw) and private_key_at(ctx.lines, n, in_test):
            kind, column = "private key block", None
        else:
            url = next(iter(find_url_credentials(raw, in_test)), None)
            if url is not None and ctx.memo.get(_STRICT_URLS) and not _random_key(raw[url[0]:url[1]]):
                url = None  # test vectors of URL parsers: "user:pass@host", "%25DOMAIN:pass@..." are data
            if url is not None and not in_test and _documentation_at(ctx, n, url[0]):
                # A connection string in a docstring or comment illustrates usage: stand-ins do not count there.
                url = next(iter(find_url_credentials(raw, True)), None)
            aws = find_aws_secret(raw, in_test) if url is None else None
            if url is not None:
                kind, column = "password inside a URL", url[0] + 1
            elif aws is not None:
                kind, column = "AWS secret access key", aws[0] + 1
            else:
                continue
        token_lines.add(n)
        out.append(ctx.finding(CREDENTIAL, n, f"{kind} in the change", column=column,
                               code=_redacted_line(raw)))
    return out


_DOC_QUOTES = ('"""', "'''")


def _documentation_at(ctx: FileContext, n: int, column: int) -> bool:
    """Is this position in a comment, or in a multi-line string (a docstring, a usage text)?"""
    if ctx.language not in _LEXED_LANGS and ctx.language != "python":
        return False
    lexed = ctx.lexed
    comment = lexed.comments.get(n)
    raw = ctx.line(n)
    if comment is not None and column >= len(raw) - len(comment):
        return True
    return n in lexed.string_inner or (n in lexed.string_lines and any(q in raw for q in _DOC_QUOTES))


def _redacted_line(raw: str) -> str:
    code = redact_line(raw.strip())
    aws = find_aws_secret(code)
    if aws is not None:
        code = code[:aws[0]] + redact_value(code[aws[0]:aws[1]]) + code[aws[1]:]
    return code


def _cred_message(name: str, reason: str) -> str:
    shown = name if len(name) <= 40 else name[:37] + "..."
    if reason == "url":
        return f"password inside a URL assigned to '{shown}'"
    if reason == "entropy":
        return f"high-entropy literal assigned to '{shown}' looks like a secret"
    return f"hardcoded credential assigned to '{shown}'"


def _masked_code(raw: str, value: str, extra: tuple[str, ...], span: tuple[int, int] | None = None) -> str:
    """The line with the value masked; '<redacted>' when masking cannot be proven complete."""
    code = raw
    if span is not None:
        code = code[:span[0]] + redact_value(value) + code[span[1]:]
    elif value and value in code:
        code = code.replace(value, redact_value(value))
    code = redact_line(code.strip(), extra)
    if len(value) >= 4 and value in code:
        return "<redacted>"
    return code


# --- Python -------------------------------------------------------------------------------------

_PY_LITERALS = ("except", "eval", "exec", ".get(", "match(", "search(", "which(", "getenv(")


def _py_worth_parsing(ctx: FileContext, extra: tuple[str, ...]) -> bool:
    """Could any AST rule fire on a line in scope? Parsing is the expensive part of this check."""
    binding = secret_binding_pattern(extra)
    if ctx.whole_file_in_scope:
        text = ctx.scan_text  # Python's NFKC identifiers: `ｅｖａｌ(x)` is a call of eval
        if any(lit in text for lit in _PY_LITERALS):
            return True
        return binding.search(ctx.lower_text) is not None
    for n in ctx.selected_lines():
        line = ctx.scan_line(n)
        if _PY_GATE.search(line) or binding.search(line.lower()):
            return True
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
    if want_eval or want_none:
        calls = ctx.nodes(ast.Call)
        if selected is not None:
            calls = [c for c in calls if selected(c.lineno)]
        if want_eval:
            out.extend(_py_eval(ctx, calls))
        if want_none and not in_test:  # in a test the AttributeError is the failure report
            out.extend(_py_none_access(ctx, selected))
    out.extend(_py_credentials(ctx, names_on, extra, in_test, token_lines))
    return out


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
    comments = ctx.lexed.comments
    last = max(getattr(handler, "end_lineno", None) or handler.lineno, handler.lineno)
    for n in range(handler.lineno, last + 1):
        comment = comments.get(n)
        if comment and len(comment) > 6 and not _NOT_AN_EXPLANATION.match(comment):
            return "explained in a comment"
    try_node = ctx.parent(handler)
    body = getattr(try_node, "body", None) or []
    if body and all(_is_cleanup(stmt) for stmt in body):
        return "best-effort cleanup"
    if body and all(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in body):
        return "optional import"
    func = next((a for a in ctx.ancestors(handler) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is not None and _CLEANUP_FUNCS.search(func.name):
        return f"in {func.name}(), whose own failures must not escape"
    if _after_the_result(ctx, try_node):
        return "side work after the result is settled"
    return None


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
            elif any(lexed.comments.get(i) and not _NOT_AN_EXPLANATION.match(lexed.comments[i])
                     and len(lexed.comments[i]) > 6 for i in range(n, (body[-1][0] if body else n) + 1)):
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


# --- SEN305: unguarded None access (Python) -----------------------------------------------------

_RE_FUNCS = frozenset({"match", "search", "fullmatch"})
_NONE_LITERALS = ("match(", "search(", ".get(", "which(", "getenv(")
# Functions and methods whose result may be None; anything else is skipped before any lookup.
_NONE_ATTRS = frozenset({"match", "search", "fullmatch", "get", "getenv", "which"})
# Receivers whose .get() is an HTTP request, an ORM lookup or a queue/future, not a mapping lookup.
_NOT_MAPPING = frozenset({
    "requests", "httpx", "aiohttp", "urllib", "urllib3", "http", "https", "session", "sess", "client", "api",
    "browser", "driver", "queue", "q", "objects", "pool", "executor", "future", "futures", "result", "results",
    "promise", "celery", "self", "cls", "super", "var", "router", "app",
})
_URLISH_NAME = lazy_compile(r"url|uri|endpoint|path|route|link|href", re.I)
_WORDS = lazy_compile(r"[A-Za-z][a-z]*|[A-Z]+")


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            inner = _dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        else:
            return None


class _Imports:
    """What the module calls re / os / shutil and what it compiled with re.compile, computed once."""

    def __init__(self, ctx: FileContext):
        self.re_modules = {"re", "regex"}
        self.re_funcs: set[str] = set()
        self.getenv: set[str] = {"os.getenv", "os.environ.get"}
        self.which: set[str] = {"shutil.which"}
        for node in ctx.nodes(ast.Import):
            for a in node.names:
                if a.name in ("re", "regex") and a.asname:
                    self.re_modules.add(a.asname)
                elif a.name == "os" and a.asname:
                    self.getenv |= {f"{a.asname}.getenv", f"{a.asname}.environ.get"}
                elif a.name == "shutil" and a.asname:
                    self.which.add(f"{a.asname}.which")
        for node in ctx.nodes(ast.ImportFrom):
            for a in node.names:
                local = a.asname or a.name
                if node.module in ("re", "regex") and a.name in _RE_FUNCS:
                    self.re_funcs.add(local)
                elif node.module == "os" and a.name == "getenv":
                    self.getenv.add(local)
                elif node.module == "os" and a.name == "environ":
                    self.getenv.add(f"{local}.get")
                elif node.module == "shutil" and a.name == "which":
                    self.which.add(local)
        # Names bound to re.compile(...), with the pattern when it is a literal.
        self.compiled: dict[str, ast.expr | None] = {}
        for node in ctx.nodes(ast.Assign):
            if isinstance(node.value, ast.Call) and self._is_compile(node.value.func):
                for t in node.targets:
                    name = _dotted(t)
                    if name:
                        self.compiled[name] = node.value.args[0] if node.value.args else None

    def _is_compile(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Attribute):
            return func.attr == "compile" and isinstance(func.value, ast.Name) and func.value.id in self.re_modules
        return False


def _none_source(call: ast.Call, imports: _Imports) -> str | None:
    """A short description when this call returns None on the unhappy path, else None."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in imports.re_funcs:
            if func.id != "fullmatch" and _always_matches(call.args[0] if call.args else None):
                return None
            return f"{func.id}() returns None when nothing matches"
        if func.id in imports.getenv and _one_arg(call):
            return f"{func.id}() returns None when the variable is unset"
        if func.id in imports.which:
            return f"{func.id}() returns None when the program is not on PATH"
        return None
    if not isinstance(func, ast.Attribute):
        return None
    dotted = _dotted(func)
    if func.attr in _RE_FUNCS:
        owner = _dotted(func.value)
        if owner in imports.re_modules:
            pattern = call.args[0] if call.args else None
        elif owner in imports.compiled:
            pattern = imports.compiled[owner]
        else:
            return None
        if func.attr != "fullmatch" and _always_matches(pattern):
            return None
        return f"{dotted}() returns None when nothing matches"
    if dotted in imports.which:
        return f"{dotted}() returns None when the program is not on PATH"
    if dotted in imports.getenv and _one_arg(call):
        return f"{dotted}() returns None when the variable is unset"
    if func.attr == "get" and _one_arg(call):
        owner = _dotted(func.value)
        if owner is None and not isinstance(func.value, (ast.Subscript, ast.Call)):
            return None
        words = {w.lower() for w in _WORDS.findall(owner or "")}
        if words & _NOT_MAPPING or _urlish(call.args[0]):
            return None
        return f"{owner or 'mapping'}.get() returns None when the key is missing"
    return None


# Zero-width assertions make "matches the empty string" say nothing about other strings.
_ASSERTIONS = lazy_compile(r"\$|\\[bBZzA]|\(\?[=!<]|(?<!^)\^")


def _always_matches(pattern: ast.expr | None) -> bool:
    """A literal pattern that matches the empty string without assertions (``r"\\s*"``) matches at
    the start of every string, so match()/search() never return None."""
    if not isinstance(pattern, ast.Constant) or not isinstance(pattern.value, (str, bytes)):
        return False
    text = pattern.value
    probe = text if isinstance(text, str) else text.decode("latin-1")
    if _ASSERTIONS.search(probe):
        return False
    try:
        return re.compile(text).match(text[:0]) is not None
    except (re.error, RecursionError, OverflowError):
        return False


def _one_arg(call: ast.Call) -> bool:
    """A lookup without a usable default: one positional argument, or an explicit default of None."""
    if call.keywords:
        return False
    if len(call.args) == 1:
        return not isinstance(call.args[0], ast.Starred)
    return (len(call.args) == 2 and isinstance(call.args[1], ast.Constant) and call.args[1].value is None)


def _urlish(arg: ast.expr) -> bool:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return "/" in arg.value
    if isinstance(arg, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and "/" in str(v.value) for v in arg.values)
    name = _dotted(arg)
    return bool(name and _URLISH_NAME.search(name.rsplit(".", 1)[-1]))


_TOLERANT = frozenset({"AttributeError", "TypeError", "Exception", "BaseException"})
_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)


def _call_key(call: ast.Call) -> str:
    """Identity of a lookup for guard matching: d.get(k) and d.get(k, None) are the same test."""
    args = list(call.args)
    if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is None:
        args.pop()
    return ast.dump(call.func) + "|" + "|".join(ast.dump(a) for a in args)


def _contains(tree: ast.AST | None, key: str) -> bool:
    if tree is None:
        return False
    return any(isinstance(n, ast.Call) and _call_key(n) == key for n in ast.walk(tree))


class _LocalParents:
    """Parents within the innermost function around a node (or its top-level statement).

    A whole-module parent map costs a second walk of the tree; guards only matter inside the
    enclosing function, so only that subtree is walked, and only for the rare candidates.
    """

    def __init__(self, ctx: FileContext):
        self.ctx = ctx
        self.parents: dict[int, ast.AST] = {}
        self.walked: set[int] = set()

    def _root(self, node: ast.AST) -> ast.AST | None:
        line = node.lineno
        best = None
        for fn in self.ctx.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            if fn.lineno <= line <= (fn.end_lineno or fn.lineno) and (best is None or fn.lineno >= best.lineno):
                best = fn
        if best is not None:
            return best
        tree = self.ctx.tree
        for stmt in getattr(tree, "body", ()):
            if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                self.parents[id(stmt)] = tree
                return stmt
        return None

    def ancestors(self, node: ast.AST):
        root = self._root(node)
        if root is not None and id(root) not in self.walked:
            self.walked.add(id(root))
            self.parents.update(parent_map(root))
        cur = self.parents.get(id(node))
        while cur is not None:
            yield cur
            cur = self.parents.get(id(cur))


def _guarded(parents: _LocalParents, call: ast.Call) -> bool:
    """Is the result checked first (if/and/ternary/comprehension filter, an earlier if or assert in
    the same block), or is the access inside a try that handles AttributeError/TypeError?"""
    key = _call_key(call)
    child: ast.AST = call
    for anc in parents.ancestors(call):
        if isinstance(anc, (ast.If, ast.While, ast.IfExp)) and child is not anc.test and _contains(anc.test, key):
            return True
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            before = anc.values[:anc.values.index(child)] if child in anc.values else []
            if any(_contains(v, key) for v in before):
                return True
        if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and any(
                _contains(cond, key) for gen in anc.generators for cond in gen.ifs):
            return True
        if isinstance(anc, ast.Try) and child in anc.body:
            for h in anc.handlers:
                if h.type is None or any(isinstance(t, ast.Name) and t.id in _TOLERANT
                                         for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])):
                    return True
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(anc, field, None)
                if isinstance(block, list) and child in block:
                    for prev in block[:block.index(child)]:
                        if isinstance(prev, (ast.If, ast.Assert)) and _contains(prev.test, key):
                            return True
        if isinstance(anc, _SCOPE):
            return False
        child = anc
    return False


def _py_none_access(ctx: FileContext, selected) -> list[Finding]:
    out: list[Finding] = []
    imports: _Imports | None = None
    parents: _LocalParents | None = None
    # Accesses whose object is a call: `<call>.attr` and `<call>[i]` (no parent map needed).
    for parent in ctx.nodes(ast.Attribute, ast.Subscript):
        call = parent.value
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr not in _NONE_ATTRS:
                continue
        elif not isinstance(func, ast.Name):
            continue
        if selected is not None and not selected(call.lineno):
            continue
        if imports is None:
            imports = _Imports(ctx)
        why = _none_source(call, imports)
        if why is None:
            continue
        if parents is None:
            parents = _LocalParents(ctx)
        if _guarded(parents, call):
            continue
        access = f".{parent.attr}" if isinstance(parent, ast.Attribute) else "[...]"
        out.append(ctx.finding(NONE_ACCESS, call.lineno, f"`{access}` on a possible None: {why}",
                               column=call.col_offset + 1))
    return out


# --- SEN304: Python names bound to literals -----------------------------------------------------

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


# --- JavaScript / TypeScript --------------------------------------------------------------------

_JS_GATE = lazy_compile(r"\beval\b|\bFunction\b|\bcatch\b")
_JS_EVAL = lazy_compile(r"(?<![\w$.])(?<!function )eval\s*\(|\bnew\s+Function\s*\(")
_JS_EMPTY_CATCH = lazy_compile(r"\bcatch\s*(?:\(\s*[\w$]*\s*(?::\s*[\w$]+\s*)?\)\s*)?\{\s*\}")
_JS_OPEN_CATCH = lazy_compile(r"\bcatch\s*(?:\(\s*[\w$]*\s*(?::\s*[\w$]+\s*)?\)\s*)?\{\s*$")
_JS_PROMISE_CATCH = lazy_compile(r"\.catch\(\s*(?:\(\s*[\w$]*\s*\)|[\w$]+)\s*=>\s*(?:\{\s*\}|null|undefined)\s*\)")


# An identifier may be spelled with escapes, which the engine reads as the characters: `\u0065val(s)` calls eval.
_JS_ESCAPE = lazy_compile(r"\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})")
_JS_GATE_ESCAPED = lazy_compile(r"\beval\b|\bFunction\b|\bcatch\b|\\u")


def _js_identifiers(code: str) -> str:
    """A code line (strings and comments already removed) with its identifier escapes decoded."""
    if "\\u" not in code:
        return code

    def decode(m: re.Match) -> str:
        point = int(m.group(1) or m.group(2), 16)
        return chr(point) if point <= 0x10FFFF else m.group(0)
    return _JS_ESCAPE.sub(decode, code)


def _js(ctx: FileContext) -> list[Finding]:
    out: list[Finding] = []
    lexed = ctx.lexed
    for n in _matching_lines(ctx, _JS_GATE_ESCAPED if "\\u" in ctx.text else _JS_GATE):
        code = _js_identifiers(lexed.code_line(n))
        if len(code) > _MINIFIED_LINE:
            continue
        m = _JS_EVAL.search(code)
        if m:
            what = "eval()" if m.group().startswith("eval") else "new Function()"
            out.append(ctx.finding(EVAL_EXEC, n, f"`{what}` runs arbitrary code from a string",
                                   column=m.start() + 1))
        m = _JS_EMPTY_CATCH.search(code) or _JS_PROMISE_CATCH.search(code)
        if m is None:
            m = _JS_OPEN_CATCH.search(code)
            if m is not None and not _next_code_closes(lexed, n):
                m = None
        if m is not None:
            out.append(ctx.finding(SWALLOWED, n, "empty catch swallows every error", column=m.start() + 1))
    return out


def _next_code_closes(lexed, n: int) -> bool:
    for i in range(n + 1, min(n + 50, len(lexed.code))):
        text = lexed.code_line(i).strip()
        if text:
            return text.startswith("}")
    return False


# --- SEN304: names bound to literals, lexically (other languages) --------------------------------

_Q = (r"""(?:"(?P<v1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"|'(?P<v2>[^'\\\n]*(?:\\.[^'\\\n]*)*)'|"""
      r"""`(?P<v3>[^`\\\n]*(?:\\.[^`\\\n]*)*)`)""")
# A type annotation between a name and "=" (TypeScript, Kotlin, Python): string, Map<K, V>, T[] | null.
_TYPE = r"[A-Za-z_][\w.]*(?:<[^<>=\n]*>)?(?:\[\])*(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:<[^<>=\n]*>)?(?:\[\])*)*\??"
_CODE_KV = lazy_compile(
    r"""(?P<key>(?<![\w$.\-])[A-Za-z_$@][\w$.\-]*|"[\w.\-]{1,80}"|'[\w.\-]{1,80}'|(?<![\w:]):[A-Za-z_]\w*)"""
    r"""\]?[ \t]*(?::[ \t]*""" + _TYPE + r"""[ \t]*=|:=|=>|=|:)(?!=)[ \t]*(?P<val>""" + _Q + ")")
_CFG_KV = lazy_compile(
    r"""^[ \t]*(?:(?:export|ENV|ARG|set|setenv|declare(?:[ \t]+-\w+)?)[ \t]+|-[ \t]+|--?)?"""
    r"""(?P<key>"[\w.\-]{1,80}"|'[\w.\-]{1,80}'|[A-Za-z_][\w.\-]*)[ \t]*(?:[:?+]?=|:(?=[ \t]|$))[ \t]*"""
    r"""(?P<rest>.*)$""")
_QUOTED_START = lazy_compile(_Q)
_UNQUOTED_OK = lazy_compile(r"""^[^\s'"`$!&*|>{\[(%@<][^\s'"`]*$""")
_DOTENV_COMMENT = lazy_compile(r"[ \t]+#.*$")
# Longer lines are minified or generated code: names there are mangled, values are data.
_MINIFIED_LINE = 500


def _lexical_credentials(ctx: FileContext, names_on, extra: tuple[str, ...], in_test,
                         token_lines: set[int]) -> list[Finding]:
    lang = ctx.language
    config_style = lang in _CONFIG_LANGS
    if not config_style and lang not in _CODE_LANGS:
        return []
    gate = secret_binding_pattern(extra)
    threshold = ctx.config.chaos.entropy_threshold
    lexed = ctx.lexed if lang in _LEXED_LANGS else None
    out: list[Finding] = []
    for n in _matching_lines(ctx, gate, lowered=True):
        if n in token_lines:
            continue
        raw = ctx.line(n)
        if len(raw) > _MINIFIED_LINE:
            continue
        code = lexed.code_line(n) if lexed is not None else raw
        pairs = _config_pairs(raw, code, lang, lexed is not None) if config_style else []
        if not pairs:
            pairs = _code_pairs(raw, code, lexed is not None)
        for key, value, start, end in pairs:
            level = classify_name(key, extra)
            if level == NOT_SECRET:
                continue
            if not names_on:
                return []
            reason = assess_value(value, level, key, threshold, in_test)
            if reason is None or (in_test and _fixture_marked(ctx, n)):
                continue
            if ctx.memo.get(_STRICT_NAMES) and not _random_key(value):
                continue
            out.append(ctx.finding(CREDENTIAL, n, _cred_message(key, reason), column=start + 1,
                                   code=_masked_code(raw, value, extra, (start, end))))
            break
    return out


def _key_name(key: str) -> str:
    return key.strip("\"'").lstrip("$@:")


def _code_pairs(raw: str, code: str, lexed: bool) -> list[tuple[str, str, int, int]]:
    pairs = []
    for m in _CODE_KV.finditer(raw):
        ks, ke = m.span("key")
        vs, ve = m.span("val")
        if lexed and not (_is_code(raw, code, ks, ke) and _is_string(code, vs, ve)):
            continue
        group = "v1" if m.group("v1") is not None else ("v2" if m.group("v2") is not None else "v3")
        pairs.append((_key_name(m.group("key")), m.group(group), *m.span(group)))
    return pairs


def _config_pairs(raw: str, code: str, lang: str, lexed: bool) -> list[tuple[str, str, int, int]]:
    m = _CFG_KV.match(raw)
    if m is None:
        return []
    ks, ke = m.span("key")
    if lexed and not _is_code(raw, code, ks, ke):
        return []
    rs = m.start("rest")
    q = _QUOTED_START.match(raw, rs)
    if q is not None:
        group = "v1" if q.group("v1") is not None else ("v2" if q.group("v2") is not None else "v3")
        return [(_key_name(m.group("key")), q.group(group), *q.span(group))]
    if lexed:
        end = len(code.rstrip())  # comments are blanked in the code line
    else:
        end = rs + len(_DOTENV_COMMENT.sub("", raw[rs:]).rstrip())
    value = raw[rs:end].strip()
    if not value or not _UNQUOTED_OK.match(value) or "${" in value or "$(" in value:
        return []
    start = raw.index(value, rs)
    return [(_key_name(m.group("key")), value, start, start + len(value))]


def _is_code(raw: str, code: str, start: int, end: int) -> bool:
    """Is raw[start:end] code: an identifier outside strings/comments, or one whole string token?"""
    if raw[start] in "\"'":
        return _is_string(code, start, end)
    return code[start:end] == raw[start:end]


def _is_string(code: str, start: int, end: int) -> bool:
    """In the lexed line a whole literal keeps its quotes and has its contents blanked."""
    if end - start < 2 or end > len(code):
        return False
    return code[start] in "\"'`" and code[end - 1] == code[start] and not code[start + 1:end - 1].strip()
