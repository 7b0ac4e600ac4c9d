"""Chaos's rules, as data: codes, names, per-role policy, documentation."""

from __future__ import annotations

from sentinel.models import Severity
from sentinel.roles import CI, TEST
from sentinel.rules import EVERYWHERE, INFO, OFF, QUALITY_ROLES, SECURITY_ROLES, Rule

CHECK = "chaos"

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
        mechanisms=("exception-handling",),
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
        roles={**QUALITY_ROLES, TEST: INFO}, mechanisms=("exception-handling",),
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
        mechanisms=("parsing-escaping",),
    ),
    Rule(
        code="SEN304", name="hardcoded-credential", check="chaos", severity=Severity.ERROR,
        summary="A credential written into the change: a known token format, a literal bound to a secret-like "
                "name, or a literal password inside a URL, a connection string or a string template.",
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
                  "marked `# sentinel: fixture` on the line or the line above. Inside a string no name is bound, "
                  "and the string is read as a connection string: a password in a URL's user part "
                  "(scheme://user:<password>@host, whether the host is literal, a template's field or added "
                  "later) and, where names are read, a credential keyword with a literal value (password=, pwd=, "
                  "api_key= in a DSN, a query string or a command line) count, in plain literals, f-strings, "
                  "str.format() and % templates alike, with the template's literal arguments filled in; a "
                  "run-time field ({password}, %s, $PASSWORD) and a stand-in (changeme, <password>, ***) never "
                  "do, nor does a docstring. Values are always redacted.",
        example='import psycopg2\n\nconn = psycopg2.connect(host="db", user="app", password="hunter2")\n'
                'replica = psycopg2.connect(\n'
                '    f"postgresql://app:secret123@{REPLICA_HOST}/app")\n',  # sentinel: ignore[SEN304] the example
        counter_example='import os\n\nimport psycopg2\n\nconn = psycopg2.connect(host="db", user="app", '
                        'password=os.environ["DB_PASSWORD"])\n'
                        'replica = psycopg2.connect(\n'
                        '    f"postgresql://app:{os.environ[\'DB_PASSWORD\']}@{REPLICA_HOST}/app")\n',
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
        roles={**QUALITY_ROLES, TEST: OFF, CI: OFF}, mechanisms=("none-missing-value",),
        noqa=("union-attr", "index", "reportOptionalMemberAccess", "reportOptionalSubscript"),
    ),
    Rule(
        code="SEN306", name="shell-command-injection", check="chaos", severity=Severity.ERROR,
        summary="A shell runs a command built at run time: subprocess.run/call/Popen/check_call/check_output "
                "or any call with `shell=True`, and os.system/os.popen/subprocess.getoutput/"
                "asyncio.create_subprocess_shell, given a command that is not a literal.",
        rationale="The shell parses the string it is given: a value with `;`, `|`, `$(...)` or a space in it becomes "
                  "another command or other arguments (command injection), and the program cannot tell. An "
                  "argument list without shell=True runs exactly the program and arguments given. A literal "
                  "command holds nothing from input and is not reported; one whose every interpolated value goes "
                  "through shlex.quote()/shlex.join() is information only; a list passed with shell=True (only its "
                  "first item runs) is a warning. A name bound only to literals in its function counts as one.",
        example='import subprocess\n\n\ndef archive(name):\n    subprocess.call(f"tar czf {name}.tgz {name}", '
                'shell=True)\n',
        counter_example='import subprocess\n\n\ndef archive(name):\n    subprocess.call(["tar", "czf", '
                        'f"{name}.tgz", name])\n',
        hint="Pass an argument list without shell=True, or shlex.quote() every value put into the command.",
        roles=SECURITY_ROLES, security=True, mechanisms=("parsing-escaping",),
        noqa=("S602", "S604", "S605", "B602", "B604", "B605", "subprocess-popen-with-shell-equals-true",
              "call-with-shell-equals-true", "start-process-with-a-shell"),
    ),
)
BARE_EXCEPT, SWALLOWED, EVAL_EXEC, CREDENTIAL, NONE_ACCESS, SHELL_INJECTION = RULES
