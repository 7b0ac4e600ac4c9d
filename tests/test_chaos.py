"""The chaos check end to end: swallowed errors, eval, hardcoded credentials, None access."""

from __future__ import annotations

import json
import os

import pytest

from sentinel import engine
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.report import FORMATS, render
from sentinel.sources import Change
from tests.conftest import codes, gate_new_file

# Realistic-looking credentials are assembled at run time so this file never contains one.
AWS_KEY = "AKIA" + "Q3RZ7XW2MPL5VN8T"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "aZ3kL9qW2xV7nB4mP8rT5yU1cH6jD0sF" * 2
SLACK_TOKEN = "xoxb-" + "2145876390-4938271650423-" + "Zq8RwX3vLk5NpT7bYc2HdF9m"
GOOGLE_KEY = "AIza" + "SyD3x9Q2mN7pL4kR8tV1wZ6cB5nH0jF2gX4"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
PEM = ("-----BEGIN " + "RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx7Kp2vQ9" + "Lm3Rt8Wz" * 6 + "\n"
       + "Qk4Zr9Tn" * 8 + "\n-----END RSA PRIVATE KEY-----\n")
# A password that appears in no rule documentation, so any occurrence in a report is a leak.
SECRET = "Zephyr-9-Quokka"


def test_fake_tokens_have_the_real_shapes():
    assert len(AWS_KEY) == 20 and len(GITHUB_TOKEN) == 40 and len(GOOGLE_KEY) == 39


def chaos_codes(verdict) -> list[str]:
    assert not [r for r in verdict.checks if r.check == "chaos" and r.status.value == "error"], verdict.checks
    return [c for c in codes(verdict) if c.startswith("SEN3")]


MUST_FIRE = [
    # (id, path, content, rule)
    ("bare-except", "app.py", "try:\n    x()\nexcept:\n    pass\n", "SEN301"),
    ("bare-except-with-body", "app.py", "try:\n    x()\nexcept:\n    log(1)\n    raise\n", "SEN301"),
    ("except-exception-pass", "app.py", "try:\n    x()\nexcept Exception:\n    pass\n", "SEN302"),
    ("except-exception-as-e", "app.py", "try:\n    x()\nexcept Exception as e:\n    pass\n", "SEN302"),
    ("except-baseexception", "app.py", "try:\n    x()\nexcept BaseException:\n    ...\n", "SEN302"),
    ("except-tuple-continue", "app.py",
     "for i in y:\n    try:\n        x(i)\n    except (ValueError, Exception):\n        continue\n", "SEN302"),
    ("except-return-none", "app.py", "def f():\n    try:\n        return x()\n    except Exception:\n"
                                     "        return None\n", "SEN302"),
    ("js-empty-catch", "app.js", "try { f(); } catch (e) {}\n", "SEN302"),
    ("js-empty-catch-multiline", "app.ts", "try {\n  f();\n} catch (e: unknown) {\n  // ignore\n}\n", "SEN302"),
    ("js-promise-catch", "app.js", "load().catch(() => {});\n", "SEN302"),
    ("eval", "app.py", "def run(user_input):\n    return eval(user_input)\n", "SEN303"),
    ("exec", "app.py", "exec(code)\n", "SEN303"),
    ("js-eval", "app.js", "const v = eval(input);\n", "SEN303"),
    ("js-new-function", "app.ts", "const f = new Function('a', body);\n", "SEN303"),
    ("annotated-password", "app.py", "password: str = 'hunter2'\n", "SEN304"),
    ("dict-password", "app.py", 'CONFIG = {"password": "hunter2"}\n', "SEN304"),
    ("kwarg-password", "app.py", 'db = connect(password="hunter2")\n', "SEN304"),
    ("assign-password", "app.py", 'password = "hunter2"\n', "SEN304"),
    ("attribute-api-key", "app.py", "class C:\n    def __init__(self):\n        self.api_key = 'k9Qz7LmX2a'\n",
     "SEN304"),
    ("param-default", "app.py", 'def connect(host, password="hunter2"):\n    return host\n', "SEN304"),
    ("kwonly-default", "app.py", 'def connect(*, token="hunter2abc"):\n    return token\n', "SEN304"),
    ("github-token-name", "app.py", 'github_token = "hunter2abc"\n', "SEN304"),
    ("environ-subscript", "app.py", 'import os\nos.environ["DB_PASSWORD"] = "hunter2"\n', "SEN304"),
    ("fstring-without-placeholders", "app.py", 'password = f"hunter2"\n', "SEN304"),
    ("url-with-password", "app.py", 'db_password = "postgres://app:s3cr3tpw@db/prod"\n', "SEN304"),
    ("extra-secret-name", "app.py", 'pin_code = "hunter2"\n', "SEN304"),  # see config below
    ("high-entropy-signing-key", "app.py", 'SIGNING_KEY = "q8Xz3LmP0vR7tYb2WnK5sJd9HcF4gA1e"\n', "SEN304"),
    ("aws-in-dotenv", ".env", f"AWS_ACCESS_KEY_ID={AWS_KEY}\n", "SEN304"),
    ("aws-in-yaml", "deploy/config.yaml", f"aws:\n  access_key_id: {AWS_KEY}\n", "SEN304"),
    ("aws-in-json", "config.json", f'{{"id": "{AWS_KEY}"}}\n', "SEN304"),
    ("aws-in-ini", "setup.cfg", f"[aws]\nid = {AWS_KEY}\n", "SEN304"),
    ("github-in-shell", "run.sh", f"curl -H 'Authorization: token {GITHUB_TOKEN}' x\n", "SEN304"),
    ("github-pat-in-python-comment", "app.py", f"x = 1  # {GITHUB_PAT}\n", "SEN304"),
    ("slack-in-js", "app.js", f"const hook = '{SLACK_TOKEN}';\n", "SEN304"),
    ("google-in-toml", "app.toml", f'maps = "{GOOGLE_KEY}"\n', "SEN304"),
    ("stripe-in-go", "pay.go", f'var client = stripe.New("{STRIPE_KEY}")\n', "SEN304"),
    ("private-key-python", "keys.py", f'KEY = """{PEM}"""\n', "SEN304"),
    ("private-key-file", "deploy/key.txt.enc", PEM, "SEN304"),
    ("token-in-example-dir", "examples/config.yaml", f"key: {AWS_KEY}\n", "SEN304"),
    ("password-in-dotenv", ".env", "DB_PASSWORD=hunter2\n", "SEN304"),
    ("password-in-yaml", "docker-compose.yml", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: hunter2\n",
     "SEN304"),
    ("password-in-json", "config.json", '{"password": "hunter2"}\n', "SEN304"),
    ("password-in-ini", "app.ini", "[db]\npassword = hunter2\n", "SEN304"),
    ("password-in-js", "app.js", 'const password = "hunter2";\n', "SEN304"),
    ("api-key-in-ts-object", "app.ts", 'const cfg = { apiKey: "k9Qz7LmX2a" };\n', "SEN304"),
    ("password-in-go", "main.go", 'func f() {\n\tpassword := "hunter2"\n\t_ = password\n}\n', "SEN304"),
    # A password is free text: underscores or the word "secret" in it do not make it a field name.
    ("password-with-underscores", "app.py", 'DB_PASSWORD = "prod_db_pass_2024"\n', "SEN304"),
    ("secret-key-with-secret-word", "app.py", 'app.secret_key = "my_super_secret_value"\n', "SEN304"),
    ("provider-token-in-docs", "docs/setup.md", f"Export the key first: {AWS_KEY}\n", "SEN304"),
    ("url-credentials-in-settings", "settings.py", 'DATABASE_URL = "postgresql://app:pass@db.internal/app"\n',
     "SEN304"),
    ("url-credentials-in-requirements", "requirements.txt",
     "--extra-index-url https://deploy:Xq7mK2pL9vR4@pypi.internal.example.org/simple\n", "SEN304"),
    ("jwt-in-yaml", "config/app.yaml", "auth: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiIsImV4cCI6MTcwMDAwMDAwMH0."
     "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk\n", "SEN304"),
    ("password-in-dotenv-yaml", "deploy/values.yaml", "db_password: Sup3r_S3cret_2024\n", "SEN304"),
    # Outside product code only unmistakable formats count, and those count everywhere.
    ("test-file-real-token", "tests/test_login.py", 'TOKEN = "ghp_' + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5" + '"\n',
     "SEN304"),
    ("unparseable-python-password", "broken.py", 'def f(:\n    password = "hunter2"\n', "SEN304"),
    ("unparseable-python-bare-except", "broken.py", "def f(:\ntry:\n    x()\nexcept:\n    pass\n", "SEN301"),
    ("unparseable-python-swallow", "broken.py", "def f(:\ntry:\n    x()\nexcept Exception:\n    pass\n", "SEN302"),
    ("re-match-group", "app.py", "import re\nv = re.match(r'(\\d+)', s).group(1)\n", "SEN305"),
    ("re-search-span", "app.py", "import re\nv = re.search('a', s).span()\n", "SEN305"),
    ("re-fullmatch-groups", "app.py", "import re\nv = re.fullmatch('(a)', s).groups()\n", "SEN305"),
    ("re-search-subscript", "app.py", "import re\nv = re.search('(a)', s)[1]\n", "SEN305"),
    ("compiled-pattern", "app.py", "import re\nPAT = re.compile('(a)')\nv = PAT.match(s).group()\n", "SEN305"),
    ("re-alias", "app.py", "import re as regexp\nv = regexp.search('(a)', s).groupdict()\n", "SEN305"),
    ("from-re-import", "app.py", "from re import search\nv = search('(a)', s).start()\n", "SEN305"),
    ("dict-get-attr", "app.py", "v = d.get(k).name\n", "SEN305"),
    ("dict-get-subscript", "app.py", "v = d.get(k)[0]\n", "SEN305"),
    ("dict-get-method", "app.py", "v = d.get(k).lower()\n", "SEN305"),
    ("dict-get-none-default", "app.py", "v = d.get(k, None).lower()\n", "SEN305"),
    ("environ-get", "app.py", "import os\nv = os.environ.get('X').lower()\n", "SEN305"),
    ("getenv", "app.py", "import os\nv = os.getenv('X').split(',')\n", "SEN305"),
    ("shutil-which", "app.py", "import shutil\nv = shutil.which('git').strip()\n", "SEN305"),
    ("chained-get", "app.py", "import json\nv = json.loads(s).get('a').get('b')\n", "SEN305"),
]

MUST_NOT_FIRE = [
    # In tests, docs and examples a literal under a secret name is a stand-in unless it has a real format.
    ("test-file-named-literal", "tests/test_login.py", 'password = "hunter2"\n'),
    ("docs-url-placeholders", "docs/database.md",
     "Connect with `postgresql://user:password@localhost/app` or `mysql://root:changeme@db/app`.\n"
     "Set `DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}/app` and `https://user:<token>@host`.\n"),
    ("test-url-placeholders", "tests/test_urls.py",
     'URLS = ["http://user:pass@example.com/", "https://u:password123@host/x", "ftp://a:secret@h/"]\n'),
    ("example-named-literals", "examples/app.py", 'API_KEY = "my-api-key-here"\npassword = "password123"\n'),
    ("except-in-comment-and-string", "app.py", "# try: x()\n# except: pass\ns = 'except: pass'\n"),
    ("except-valueerror-pass", "app.py", "try:\n    x()\nexcept ValueError:\n    pass\n"),
    ("except-exception-logs", "app.py", "try:\n    x()\nexcept Exception as e:\n    log.warning(e)\n"),
    ("except-exception-reraises", "app.py", "try:\n    x()\nexcept Exception:\n    cleanup()\n    raise\n"),
    ("except-exception-returns-value", "app.py",
     "def f():\n    try:\n        return x()\n    except Exception:\n        return []\n"),
    ("js-catch-handles", "app.js", "try { f(); } catch (e) { report(e); }\n"),
    ("js-catch-in-string", "app.js", "const s = 'try {} catch (e) {}';\n// catch (e) {}\n"),
    ("model-eval", "app.py", "model.eval()\nself.exec()\ntorch.eval\n"),
    ("literal-eval", "app.py", "import ast\nv = ast.literal_eval(s)\n"),
    ("shadowed-eval-import", "app.py", "from evaluator import eval\nv = eval(s)\n"),
    ("shadowed-eval-def", "app.py", "def eval(s):\n    return s\n\n\nv = eval(s)\n"),
    ("shadowed-exec-assign", "app.py", "exec = runner.run\nexec(job)\n"),
    ("eval-in-string", "app.py", "s = 'eval(x)'\n# eval(x)\n"),
    ("js-method-eval", "app.js", "window.eval(x);\nconst s = 'eval(x)';\n// eval(x)\nfunction eval(x) { return x }\n"),
    ("format-call", "app.py", 'password = "{}".format(x)\n'),
    ("percent-format", "app.py", 'password = "%s" % x\n'),
    ("fstring-placeholder", "app.py", 'password = f"{prefix}-suffix"\n'),
    ("max-token", "app.py", 'max_token = "5"\n'),
    ("token-count", "app.py", 'token_count = "12"\n'),
    ("token-type", "app.py", 'token_type = "bearer"\n'),
    ("password-field", "app.py", 'password_field = "password"\n'),
    ("qualifier-names", "app.py", 'TOKEN_URL = "https://auth.example.com/token"\nsecret_name = "prod-db-credentials"\n'
                                  'password_hash_algorithm = "argon2id"\npassword_min_length = "12"\n'),
    ("env-lookups", "app.py", 'import os\npassword = os.environ["PW"]\ntoken = os.getenv("TOKEN")\n'
                              'api_key = os.environ.get("API_KEY")\n'),
    ("empty", "app.py", 'api_key = ""\n'),
    ("your-api-key", "app.py", 'API_KEY = "YOUR_API_KEY"\n'),
    ("placeholders", "app.py",
     'a = dict(password="changeme", token="<password>", secret="xxx", pwd="***", api_key="${VAR}",\n'
     '         passwd="{password}", client_secret="dummy", access_token="example", auth_token="test",\n'
     '         credentials="password", private_key="your-private-key-here")\n'),
    ("value-equals-name", "app.py", 'GITHUB_TOKEN = "GITHUB_TOKEN"\n'),
    ("identifiers-as-values", "app.py", 'token = "access_token"\nPASSWORD_ENV = "DB_PASSWORD"\n'
                                        'secret = "AWSSecretKey"\npassword = "passwordField"\n'),
    ("short-and-digits", "app.py", 'password = "abc"\ntoken = "123456789"\n'),
    ("url-without-credentials", "app.py", 'api_key = "https://keys.example.com/v1"\n'),
    ("paths", "app.py", 'secret = "/run/secrets/db"\ntoken = "~/.config/token"\n'),
    ("tokenizer-vocabulary", "app.py", 'pad_token = "[PAD]"\ntok(eos_token="</s>", bos_token="<|begin|>")\n'),
    ("aws-documentation-key", "app.py", 'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"\n'),
    ("regex-value", "app.py", 'token = r"[-!#$%&*+.^_|~0-9A-Za-z]+"\n'),
    ("header-name", "app.py", 'API_KEY_HEADER = "x-api-key"\napi_key = "X-Goog-Api-Key"\n'),
    ("low-entropy-key", "app.py", 'sort_key = "name"\nCACHE_KEY = "users:profile:v2"\npublic_key = "ssh-ed25519"\n'),
    ("public-key-der", "app.py", 'key = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEabcdefghij1234567890ABCDEFGHIJ"\n'),
    ("translation", "locales/de.json", '{"password": "Passwort", "token": "Jeton"}\n'),
    ("lockfile", "package-lock.json", '{\n  "js-tokens": "^4.0.0",\n  "password": "^1.2.3"\n}\n'),
    ("placeholder-dotenv", ".env.example", "DB_PASSWORD=changeme\nAPI_KEY=${API_KEY}\nTOKEN=\n"),
    ("yaml-references", "app.yaml", "password: ${DB_PASSWORD}\ntoken: '{{ vault_token }}'\nsecret: !vault |\n"),
    ("js-comparison", "app.js", 'if (password === "hunter2") { deny(); }\n'),
    ("js-label", "app.js", 'const passwordLabel = "Password";\nconst field = { type: "password" };\n'),
    ("test-file-marker-words", "tests/test_login.py", 'password = "test-password-1"\napi_key = "fake_key_123"\n'),
    ("test-file-fixture-mark", "tests/test_login.py", 'password = "hunter2"  # sentinel: fixture\n'),
    ("fixture-path", "tests/fixtures/creds.py", 'password = "hunter2"\n'),
    ("example-config", "examples/config.yaml", "password: hunter2\n"),
    ("template-file", "deploy/settings.template.py", 'password = "hunter2"\n'),
    # Prose holds no code: a name = value line there is an illustration (real token formats still count).
    ("prose", "README.md", "password = hunter2\nthe api_key: abcdef123456\n"),
    ("dict-get-default", "app.py", "v = d.get(k, {}).x\n"),
    ("match-checked", "app.py", "import re\nm = re.match(p, s)\nif m:\n    v = m.group()\n"),
    ("get-guarded-if", "app.py", "if d.get(k):\n    v = d.get(k).x\n"),
    ("get-guarded-and", "app.py", "v = d.get(k) and d.get(k).x\n"),
    ("get-guarded-ternary", "app.py", "v = d.get(k).x if d.get(k) is not None else None\n"),
    ("get-guarded-earlier-return", "app.py",
     "import re\n\n\ndef f(s):\n    if not re.match('a', s):\n        return None\n"
     "    return re.match('a', s).group()\n"),
    ("get-guarded-try", "app.py", "try:\n    v = d.get(k).x\nexcept AttributeError:\n    v = None\n"),
    ("get-comprehension-filter", "app.py", "v = [d.get(k).x for k in ks if d.get(k)]\n"),
    ("requests-get", "app.py", "import requests\nv = requests.get(url).json()\nw = session.get('/users').json()\n"),
    ("always-matching-pattern", "app.py", "import re\nindent = re.match(r'\\s*', line).group()\n"),
    ("none-access-in-tests", "tests/test_parse.py", "import re\n\n\ndef test_x():\n"
                                                    "    assert re.match('a', 'a').group() == 'a'\n"),
    ("not-re-module", "app.py", "v = parser.match(tokens).group()\n"),
]


def _config_for(case_id: str) -> dict | None:
    if case_id == "extra-secret-name":
        return {"chaos": {"extra-secret-names": ["pin_code"]}}
    return None


@pytest.mark.parametrize("case_id,path,content,rule", MUST_FIRE, ids=[c[0] for c in MUST_FIRE])
def test_must_fire(case_id, path, content, rule):
    verdict = gate_new_file(path, content, _config_for(case_id))
    assert rule in chaos_codes(verdict), f"{case_id}: {chaos_codes(verdict)}"


@pytest.mark.parametrize("case_id,path,content", MUST_NOT_FIRE, ids=[c[0] for c in MUST_NOT_FIRE])
def test_must_not_fire(case_id, path, content):
    verdict = gate_new_file(path, content)
    found = [(f.rule, f.line, f.message) for f in verdict.findings if f.rule.startswith("SEN3")]
    assert found == [], f"{case_id}: {found}"


def test_findings_point_at_the_right_line_with_specific_messages():
    src = ("import re\n\n\ndef f(s):\n    try:\n        g()\n    except:\n        pass\n"
           "    return re.search('x', s).end()\n")
    verdict = gate_new_file("app.py", src)
    got = {(f.rule, f.line) for f in verdict.findings if f.rule.startswith("SEN3")}
    assert got == {("SEN301", 7), ("SEN305", 9)}
    none = next(f for f in verdict.findings if f.rule == "SEN305")
    assert "re.search()" in none.message and ".end" in none.message and none.severity.value == "warning"


def test_one_finding_per_token_line_and_no_duplicate_name_finding():
    verdict = gate_new_file("app.py", f'GITHUB_TOKEN = "{GITHUB_TOKEN}"\n')
    found = [f for f in verdict.findings if f.rule == "SEN304"]
    assert len(found) == 1 and found[0].message == "GitHub token in the change"


# --- redaction: the value never leaves the check ---------------------------------------------------

LEAK_CASES = [
    ("app.py", f'password = "{SECRET}"\n', SECRET),
    ("app.py", f'db = connect(user="app", password="{SECRET}")\n', SECRET),
    ("app.py", f'CONFIG = {{"api_key": "{SECRET}"}}\n', SECRET),
    (".env", f"DB_PASSWORD={SECRET}\nAWS_ACCESS_KEY_ID={AWS_KEY}\n", SECRET),
    (".env", f"AWS_ACCESS_KEY_ID={AWS_KEY}\n", AWS_KEY),
    ("deploy.yaml", f"token: {GITHUB_TOKEN}\n", GITHUB_TOKEN),
    ("app.js", f"const slack = '{SLACK_TOKEN}';\n", SLACK_TOKEN),
    ("app.py", f'DSN = "postgres://app:{SECRET}@db/prod"\ndb_password = "postgres://app:{SECRET}@db/prod"\n', SECRET),
    ("keys.py", f'KEY = """{PEM}"""\n', PEM.split("\n")[1]),
]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("path,content,secret", LEAK_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LEAK_CASES)])
def test_secret_never_appears_in_any_report(fmt, path, content, secret):
    verdict = gate_new_file(path, content)
    assert "SEN304" in codes(verdict)
    for f in verdict.findings:
        assert secret not in f.code and secret not in f.message
    assert secret not in render(verdict, fmt)


def test_redacted_code_keeps_the_shape_of_the_line():
    verdict = gate_new_file("app.py", f'db = connect(user="app", password="{SECRET}")\n')
    (finding,) = [f for f in verdict.findings if f.rule == "SEN304"]
    assert finding.code == 'db = connect(user="app", password="Ze***")'
    data = json.loads(render(verdict, "json"))
    assert data["findings"][0]["code"] == finding.code


def test_multiline_and_escaped_literals_are_still_masked():
    src = f'password = (\n    "{SECRET[:6]}"\n    "{SECRET[6:]}"\n)\ntoken = "\\x41{SECRET}"\n'
    verdict = gate_new_file("app.py", src)
    found = [f for f in verdict.findings if f.rule == "SEN304"]
    assert len(found) == 2
    for f in found:
        assert SECRET not in f.code and SECRET[:6] not in f.code and SECRET[6:] not in f.code


# --- configuration ----------------------------------------------------------------------------------

def test_entropy_threshold_is_configurable():
    # 4.6 bits/char over 32 characters: 92% of the 5 bits a 32-character string can carry
    src = 'SIGNING_KEY = "q8Xz3Lq8Xz3LmP0vR7tYb2WnK5sJd9Hc"\n'
    assert "SEN304" in codes(gate_new_file("app.py", src))
    assert "SEN304" in codes(gate_new_file("app.py", src, {"chaos": {"entropy-threshold": 5.5}}))
    assert "SEN304" not in codes(gate_new_file("app.py", src, {"chaos": {"entropy-threshold": 5.6}}))


def test_fixture_paths_are_configurable():
    src = 'password = "hunter2"\n'
    assert "SEN304" in codes(gate_new_file("seed/creds.py", src))
    assert "SEN304" not in codes(gate_new_file("seed/creds.py", src, {"chaos": {"fixture-paths": ["seed/**"]}}))


def test_chaos_can_be_disabled():
    verdict = gate_new_file("app.py", "eval(x)\n", {"chaos": {"enabled": False}})
    assert "SEN303" not in codes(verdict)


def test_inline_suppression_works_for_chaos_rules():
    src = "try:\n    x()\nexcept Exception:  # sentinel: ignore[SEN302]\n    pass\n"
    verdict = gate_new_file("app.py", src)
    assert "SEN302" not in codes(verdict) and verdict.suppressed == 1


# --- filter modes: only what the change added ---------------------------------------------------------

def _modify_diff() -> str:
    # new-file lines 1-5; line 4 is added, the rest is context
    return ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,5 @@\n"
            " try:\n     g()\n except:\n+password = 'hunter2'\n     pass\n")


def test_added_mode_reports_only_added_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("try:\n    g()\nexcept:\npassword = 'hunter2'\n    pass\n")
    cfg = validate({}, "test")
    got = {}
    for mode in ("added", "diff_context"):
        cs = parse_diff(_modify_diff())
        v = engine.run(Change(cs), cfg, engine.RunOptions(filter_mode=engine.FilterMode(mode)))
        got[mode] = sorted(c for c in codes(v) if c.startswith("SEN3"))
    assert got["added"] == ["SEN304"]
    assert got["diff_context"] == ["SEN301", "SEN304"]


# --- through git and the real CLI -------------------------------------------------------------------------

def test_cli_blocks_a_staged_credential_and_never_prints_it(repo):
    repo.write("app.py", 'import os\n\n\ndef connect():\n    return os.environ["DB_URL"]\n')
    repo.add("app.py")
    repo.commit("init")
    repo.write("app.py", f'import os\n\nDB_PASSWORD = "{SECRET}"\n\n\ndef connect():\n'
                         f'    return os.environ["DB_URL"]\n')
    repo.write(".env", f"AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    repo.add("app.py", ".env")
    for args in (("--format", "text", "--no-color"), ("--format", "json", "--no-memory")):
        proc = repo.sentinel("check", *args)
        assert proc.returncode == 1, proc.stderr
        assert "SEN304" in proc.stdout
        assert SECRET not in proc.stdout + proc.stderr and AWS_KEY not in proc.stdout + proc.stderr
    state = repo.path / ".git" / "sentinel"
    for root, _, files in os.walk(state):
        for name in files:
            data = (os.path.join(root, name))
            with open(data, "rb") as fh:
                blob = fh.read()
            assert SECRET.encode() not in blob and AWS_KEY.encode() not in blob, data


def test_cli_passes_clean_change(repo):
    repo.write("app.py", "import ast\n\n\ndef parse(s):\n    return ast.literal_eval(s)\n")
    repo.add("app.py")
    proc = repo.sentinel("check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SEN30" not in proc.stdout


# --- speed ----------------------------------------------------------------------------------------------

def test_large_added_files_have_no_false_positives():
    # speed is measured in benchmarks/, not asserted here
    py = "".join(f"def f{i}(d, s):\n    v = d.get('k{i}', {{}})\n    return v\n\n\n" for i in range(2000))
    js = "".join(f"const v{i} = compute({i}); // token count {i}\n" for i in range(10000))
    v_py = gate_new_file("big.py", py, only_checks=["chaos"])
    v_js = gate_new_file("big.js", js, only_checks=["chaos"])
    assert chaos_codes(v_py) == [] and chaos_codes(v_js) == []


# --- precision on real code (issue 10) -------------------------------------------------------------------

def test_a_parameter_named_eval_hides_no_other_call():
    src = ("def run(expr, eval=None):\n    return eval(expr) if eval else None\n\n\n"
           "def evaluate(expr):\n    return eval(expr)\n")
    verdict = gate_new_file("app.py", src)
    assert [(f.rule, f.line) for f in verdict.findings if f.rule == "SEN303"] == [("SEN303", 6)]


def test_a_module_level_rebinding_shadows_everywhere():
    src = "from safe import eval\n\n\ndef f(x):\n    return eval(x)\n"
    assert "SEN303" not in chaos_codes(gate_new_file("app.py", src))


@pytest.mark.parametrize("name, src", [
    ("closing a stream", "class F:\n    def close(self):\n        try:\n            self.stream.close()\n"
                         "        except Exception:\n            pass\n"),
    ("removing an env var", "import os\n\n\ndef restore(key):\n    try:\n        del os.environ[key]\n"
                            "    except Exception:\n        pass\n"),
    ("explained in a comment", "def find(obj):\n    try:\n        x = unwrap(obj)\n    except Exception:\n"
                               "        # evil objects raise on attribute access: treat them as not found\n"
                               "        return None\n    return x\n"),
    ("__del__", "class C:\n    def __del__(self):\n        try:\n            self.flush_all()\n"
                "        except Exception:\n            pass\n"),
    ("optional import", "try:\n    import ujson as json\nexcept Exception:\n    pass\n"),
    ("cleanup in finally", "def run(job):\n    try:\n        return job()\n    finally:\n        try:\n"
                           "            job.report()\n        except Exception:\n            pass\n"),
    ("side work after the result", "def get(key):\n    value = compute(key)\n    try:\n        cache.put(key, value)\n"
                                   "    except Exception:\n        pass\n    return value\n"),
])
def test_best_effort_broad_handlers_are_warnings(name, src):
    [f] = [f for f in gate_new_file("app.py", src).findings if f.rule == "SEN302"]
    assert f.severity.value == "warning", name


@pytest.mark.parametrize("name, src", [
    ("the main work", "def load(path):\n    try:\n        return parse(open(path).read())\n    except Exception:\n"
                      "        return None\n"),
    ("a pragma is not an explanation", "def sync():\n    try:\n        push_all()\n"
                                       "    except Exception:  # pragma: no cover\n        pass\n"),
    ("a TODO is not an explanation", "def sync():\n    try:\n        push_all()\n    except Exception:\n"
                                     "        pass  # TODO\n"),
])
def test_swallowing_the_main_work_still_blocks(name, src):
    [f] = [f for f in gate_new_file("app.py", src).findings if f.rule == "SEN302"]
    assert f.severity.value == "error", name


def test_a_bare_except_that_reraises_swallows_nothing():
    src = "def probe(conn):\n    try:\n        v = conn.fetch()\n    except:\n        raise\n    else:\n        return v\n"
    assert [f.severity.value for f in gate_new_file("app.py", src).findings if f.rule == "SEN301"] == ["warning"]
    src = "def probe(conn):\n    try:\n        return conn.fetch()\n    except:\n        if retry:\n            return None\n        raise\n"
    assert [f.severity.value for f in gate_new_file("app.py", src).findings if f.rule == "SEN301"] == ["error"]


def test_swallowing_inside_a_repr_is_best_effort():
    src = ("def generic_repr(obj, names):\n    out = []\n    for n in names:\n        try:\n"
           "            out.append(f'{n}={getattr(obj, n)!r}')\n        except Exception:\n            pass\n"
           "    return ', '.join(out)\n")
    assert [f.severity.value for f in gate_new_file("app.py", src).findings if f.rule == "SEN302"] == ["warning"]


@pytest.mark.parametrize("url, fires", [
    ("postgresql+psycopg://scott:tiger@127.0.0.1:5432/test", False),
    ("mysql://root:hunter22@localhost/test", False),
    ("postgresql://app:Xq7mK2pL9vR4@db.internal:5432/app", True),
    ("postgresql://app:Xq7mK2pL9vR4@localhost.evil.example:5432/app", True),
])
def test_credentials_for_a_local_database_are_not_a_leak(url, fires):
    assert ("SEN304" in chaos_codes(gate_new_file("setup.cfg", f"[db]\ndefault = {url}\n"))) is fires


def test_stand_in_credentials_in_docstrings_and_comments_are_illustrations():
    src = ('def set_proxy(url):\n    """Route through a proxy.\n\n    url: e.g. \'http://user:pass@10.10.1.10:3128/\'\n'
           '    """\n    # or socks5://user:password@proxy.example:1080\n    return url\n')
    assert "SEN304" not in chaos_codes(gate_new_file("pkg/sessions.py", src))
    real = src.replace("user:pass@10", "deploy:Xq7mK2pL9vR4@10")
    assert "SEN304" in chaos_codes(gate_new_file("pkg/sessions.py", real))


def test_bare_except_with_safe_reraise_and_explained_bare_except():
    src = ("def flush(t):\n    try:\n        t.commit()\n    except:\n        with util.safe_reraise():\n"
           "            t.rollback()\n")
    assert [f.severity.value for f in gate_new_file("app.py", src).findings if f.rule == "SEN301"] == ["warning"]
    src = "def f(c):\n    try:\n        s = c.size\n    except:\n        # connection closed\n        pass\n"
    assert [f.severity.value for f in gate_new_file("app.py", src).findings if f.rule == "SEN301"] == ["warning"]


@pytest.mark.parametrize("path, line, fires", [
    # URL-parser test vectors: credentials in URLs are the data under test, not secrets...
    ("tests/models/vectors.json", '{"input": "http://&a:b@d:2/", "href": "http://%25DOMAIN:foo@foodomain.com/"}',
     False),
    ("tests/test_urls.py", 'URL = "https://user:pass2@foo/bar"', False),
    ("examples/proxy.py", 'PROXY = "http://alice:wonderland42@proxy.example:3128"', False),
    # ... unless one looks like a real random key; and product code counts any literal password.
    ("tests/test_urls.py", 'URL = "https://deploy:kT9xQ2mV7bR4nW8zL3pF6hJ1sD5gY0aC9eU2iO7t@db.example/x"', True),
    ("pkg/settings.py", 'URL = "https://deploy:pass2@db.example/x"', True),
])
def test_url_credentials_outside_product_code_must_look_random(path, line, fires):
    assert ("SEN304" in chaos_codes(gate_new_file(path, line + "\n"))) is fires


@pytest.mark.parametrize("path, value, fires", [
    # Outside product code a named literal counts only when it looks like a real random key.
    ("tests/test_api.py", "hunter2", False),
    ("tests/test_api.py", "0123456789abcdef0123456789abcdef01234567", False),  # a hex digest: a test vector
    ("tests/test_api.py", "kT9xQ2mV7bR4nW8zL3pF6hJ1sD5gY0aC9eU2iO7t", True),
    ("docs_src/app.py", "kT9xQ2mV7bR4nW8zL3pF6hJ1sD5gY0aC9eU2iO7t", True),
    ("tests/test_api.py", "test-kT9xQ2mV7bR4nW8zL3pF6hJ1sD5gY0aC9eU2", False),
])
def test_named_secrets_outside_product_code_must_look_random(path, value, fires):
    verdict = gate_new_file(path, f'API_KEY = "{value}"\n')
    assert ("SEN304" in chaos_codes(verdict)) is fires


def test_re_raising_bare_except_in_code_that_does_not_parse():
    """A plain diff gives only fragments of a file: the lexical fallback still sees the re-raise."""
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    diff = ("diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -10,3 +10,8 @@ def wsgi_app(self):\n"
            "             try:\n                 response = self.handle()\n"
            "+            except:\n+                error = sys.exc_info()[1]\n+                raise\n"
            "+            except Exception:\n+                pass\n"
            "             return response\n")
    v = engine.run(Change(parse_diff(diff), content_rev=None), validate({}, "t"), engine.RunOptions())
    assert [(f.rule, f.severity.value) for f in v.findings if f.rule in ("SEN301", "SEN302")] == \
        [("SEN301", "warning"), ("SEN302", "error")]


def test_the_eval_rule_walks_each_scope_once_per_name_however_many_calls_it_holds(monkeypatch):
    # 1,000 calls once walked the module 1,000 times (3 s; 4,000 calls 49 s): the cost must not grow with the
    # number of calls per scope. Counted, not timed.
    from sentinel.checks.chaos import evals

    walks = []
    real = evals._bound_in
    monkeypatch.setattr(evals, "_bound_in", lambda scope, name: walks.append((id(scope), name)) or real(scope, name))
    body = "".join(f"y{i} = eval(x{i})\n" for i in range(300))
    funcs = "".join(f"def f{i}(s):\n    return exec(s) or eval(s)\n" for i in range(50))
    verdict = gate_new_file("m.py", body + funcs)
    assert sum(f.rule == "SEN303" for f in verdict.findings) == 400
    assert len(walks) == len(set(walks)) and len(walks) <= 2 + 50 * 2
    shadowed = gate_new_file("m.py", "from safe import eval\n" + body)
    assert not any(f.rule == "SEN303" for f in shadowed.findings)


def test_get_on_a_dunder_dict_is_a_mapping_lookup_whatever_holds_it():
    src = "def qualname_of(cls, name):\n    return cls.__dict__.get(name).__qualname__\n"
    assert chaos_codes(gate_new_file("pkg/names.py", src)) == ["SEN305"]
    assert chaos_codes(gate_new_file("pkg/names.py", src.replace("cls.__dict__", "vars(cls)"))) == ["SEN305"]
    assert chaos_codes(gate_new_file("pkg/names.py", src.replace(".get(name)", ".get(name, None) or f"))) == []
    # the owner's words still mark HTTP clients and sessions: self.session.get(url) is a request
    assert chaos_codes(gate_new_file("pkg/c.py", "def f(self, k):\n    return self.session.get(k).json()\n")) == []


@pytest.mark.parametrize("comment, severity", [
    # a comment that is about the handler: the failure it tolerates
    ("            # a truncated file holds no complete record: read nothing\n", "warning"),
    ("            # best effort: a broken line must not stop the load\n", "warning"),
    # one that says nothing about failing explains nothing about a bare except
    ("            # the file holds one JSON document per line\n", "error"),
])
def test_a_bare_except_is_excused_only_by_an_explanation_of_it(comment, severity):
    src = ("import json\n\n\ndef load(path):\n    with open(path) as fh:\n        try:\n"
           "            return [json.loads(line) for line in fh]\n        except:\n" + comment + "            return []\n")
    assert [f.severity.value for f in gate_new_file("pkg/m.py", src).findings if f.rule == "SEN301"] == [severity]


def test_a_comment_on_a_statement_that_does_work_does_not_excuse_the_handler():
    src = ("def f(conn):\n    try:\n        conn.send()\n    except:\n"
           "        conn.reset()  # the connection failed: start over\n        return None\n")
    assert [f.severity.value for f in gate_new_file("pkg/m.py", src).findings if f.rule == "SEN301"] == ["error"]


@pytest.mark.parametrize("call, expected", [
    # a command built at run time through a shell: ruff's S602 / S605 / S604 "security issue" cases
    ('subprocess.call(cmd, shell=True)', "error"),
    ('subprocess.run(f"tar czf {name}.tgz {name}", shell=True)', "error"),
    ('subprocess.check_output("git log " + ref, shell=True)', "error"),
    ('subprocess.Popen("git {}".format(ref), shell=True)', "error"),
    ('sp.run(args=cmd, shell=True)', "error"),
    ('run(cmd, shell=True)', "error"),
    ('os.system("rm -rf %s" % path)', "error"),
    ('os.popen(cmd)', "error"),
    ('helper.execute(cmd, shell=True)', "error"),
    # every value quoted: advice; a list with shell=True runs only its first item: a warning
    ('subprocess.run(f"ls {shlex.quote(name)}", shell=True)', "info"),
    ('subprocess.run(["ls", name], shell=True)', "warning"),
    # literal commands, no shell, a shell flag that is off: nothing
    ('subprocess.run("ls -l | sort", shell=True)', None),
    ('subprocess.run(LITERAL, shell=True)', None),
    ('subprocess.run(["git", "log", ref])', None),
    ('subprocess.run(cmd, shell=False)', None),
    ('os.system("make clean")', None),
])
def test_a_shell_given_a_command_built_at_run_time(call, expected):
    src = ("import os\nimport shlex\nimport subprocess\nimport subprocess as sp\nfrom subprocess import run\n\n"
           "LITERAL = 'ls -l'\n\n\ndef f(cmd, name, ref, path, helper):\n    " + call + "\n")
    found = [f.severity.value for f in gate_new_file("pkg/tool.py", src).findings if f.rule == "SEN306"]
    assert found == ([expected] if expected else []), call


def test_shell_calls_in_tests_are_not_reported_and_noqa_maps_to_ruff():
    src = "import subprocess\n\n\ndef test_cli(cmd):\n    subprocess.run(cmd, shell=True)\n"
    assert chaos_codes(gate_new_file("tests/test_cli.py", src)) == []
    noqa = "import subprocess\n\n\ndef go(cmd):\n    subprocess.run(cmd, shell=True)  # noqa: S602\n"
    assert chaos_codes(gate_new_file("pkg/tool.py", noqa)) == []
