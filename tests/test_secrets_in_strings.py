"""SEN304 inside strings: passwords in URLs and connection strings, in plain literals, f-strings, str.format()
and % templates (issue 26: `f"mysql://root:<literal>@{host}/app"` was let through), and the value redacted in
every output."""

from __future__ import annotations

import json

import pytest

from sentinel.redact import redact_line
from sentinel.report import FORMATS, render
from tests.conftest import gate_new_file

# A password that appears in no rule documentation, so any occurrence in a report is a leak.
SECRET = "Kx9vTq2Lm"
KEY = "Zt7QmW2xLp9KvR4nB8cY3dFh6jN1sGq5"  # long, mixed, random: a real key even in a test


def _credentials(path: str, content: str):
    verdict = gate_new_file(path, content)
    assert not [r for r in verdict.checks if r.check == "chaos" and r.status.value == "error"], verdict.checks
    return verdict, [f for f in verdict.findings if f.rule == "SEN304"]


FIRES = [
    # (id, source of pkg/db.py, line of the finding)
    ("fstring-url-host-field", f'def dsn(host):\n    return f"mysql://root:{SECRET}@{{host}}/app"\n', 2),
    ("format-url-host-field", f'def dsn(host):\n    return "postgresql://app:{SECRET}@{{}}/app".format(host)\n', 2),
    ("percent-url-host-field", f'def dsn(host):\n    return "postgresql://app:{SECRET}@%s/app" % host\n', 2),
    ("percent-mapping-url", f'def dsn(h):\n    return "redis://:{SECRET}@%(host)s:6379/0" % {{"host": h}}\n', 2),
    ("concatenated-host", f'def dsn(host):\n    return "amqp://guest:{SECRET}@" + host\n', 2),
    ("percent-literal-arguments",
     f'def dsn(host, db):\n    return "mysql://%s:%s@%s/%s" % ("root", "{SECRET}", host, db)\n', 2),
    ("format-positional-arguments",
     f'def dsn(host):\n    return "{{}}://{{}}:{{}}@{{}}/app".format("postgresql", "app", "{SECRET}", host)\n', 2),
    ("format-keyword-argument-on-its-own-line",
     (f'def dsn(host):\n    return "redis://app:{{pw}}@{{host}}".format(\n        pw="{SECRET}",\n'
     f'        host=host,\n    )\n'), 3),
    ("fstring-literal-field", f'def dsn(host):\n    return f"mysql://root:{{\'{SECRET}\'}}@{{host}}/app"\n', 2),
    ("libpq-keywords-plain", f'import psycopg2\n\nconn = psycopg2.connect("host=db user=app password={SECRET}")\n', 3),
    ("libpq-keywords-fstring", f'def dsn(host):\n    return f"host={{host}} user=app password={SECRET}"\n', 2),
    ("libpq-quoted-value", f"def dsn(host):\n    return f\"host={{host}} password='{SECRET}'\"\n", 2),
    ("odbc-keywords-format", f'def dsn(h):\n    return "Server={{}};Uid=sa;Pwd={SECRET};".format(h)\n', 2),
    ("implicit-concatenation",
     (f'def dsn(host):\n    return (\n        f"host={{host}} "\n        "user=app "\n        "password={SECRET}"\n'
     f'    )\n'), 5),
    ("query-string-api-key", f'def url(base):\n    return f"{{base}}/v1/items?api_key={KEY}&limit=10"\n', 2),
    ("command-line-password", f'def cmd(db):\n    return f"mysql --user=root --password={SECRET} {{db}}"\n', 2),
]


@pytest.mark.parametrize("case_id,source,line", FIRES, ids=[c[0] for c in FIRES])
def test_a_literal_credential_inside_a_string_is_an_error(case_id, source, line):
    _, found = _credentials("pkg/db.py", source)
    assert [(f.line, f.severity.value) for f in found] == [(line, "error")], found
    assert SECRET not in found[0].code and KEY not in found[0].code
    assert "***" in found[0].code


@pytest.mark.parametrize("path,source", [
    ("app.js", f"const url = `postgres://app:{SECRET}@${{host}}/app`;\n"),
    ("deploy/run.sh", f'psql "postgresql://app:{SECRET}@$DB_HOST/app"\n'),
    ("settings.toml", f'replica = "postgresql://app:{SECRET}@%(host)s/app"\n'),
])
def test_a_url_password_before_a_templated_host_in_other_languages(path, source):
    _, found = _credentials(path, source)
    assert [f.severity.value for f in found] == ["error"] and SECRET not in found[0].code


CLEAN = [
    # run-time values, however the template is written
    ("fstring-fields", 'def dsn(host, pw):\n    return f"mysql://root:{pw}@{host}/app"\n'),
    ("format-fields", 'def dsn(h, u, p):\n    return "{}://{}:{}@{}/app".format("postgresql", u, p, h)\n'),
    ("percent-fields",
     'import os\n\n\ndef dsn(h):\n    return "postgresql://%s:%s@%s" % ("app", os.environ["PW"], h)\n'),
    ("fstring-environ",
     'import os\n\n\ndef dsn(host):\n    return f"host={host} password={os.environ[\'PGPASSWORD\']}"\n'),
    ("repr-conversion", 'def dsn(pw):\n    return "postgresql://app:{!r}@db".format(pw)\n'),
    ("percent-width-from-operand", 'def dsn(w, pw):\n    return "postgresql://app:%*s@db" % (w, pw)\n'),
    # templates of other formatters and declared stand-ins
    ("placeholders-in-keywords",
     ('A = "password={password}"\nB = "password=%s"\nC = "password=%(pw)s"\nD = "password=$PASSWORD"\n'
     'E = "password=${DB_PASSWORD} user=changeme token=<token> secret=***"\nF = "Pwd=changeme;"\n')),
    ("placeholders-in-urls",
     ('def urls(host):\n    return [f"mysql://user:changeme@{host}", f"redis://:<password>@{host}",\n'
     '            f"amqp://guest:***@{host}", "postgresql://app:{password}@{}".format(host),\n'
     '            "postgresql://app:$PASSWORD@%s" % host, f"https://user:xxxxxxxx@{host}"]\n')),
    ("comparisons-and-identifiers",
     'A = "password==x"\nB = "password != y"\nC = "password=DB_PASSWORD"\nD = "password=PASSWORD"\n'),
    ("url-patterns", 'import re\n\nA = re.compile(r"^(\\w+)://(\\w+):(\\w+)@")\nB = "[a-z]+://[^:]+:[^@]+@"\n'),
    ("docstring", f'def connect(dsn):\n    """Connect, e.g. to ``host=db password={SECRET}``."""\n    return dsn\n'),
    ("docstring-url-of-names", '"""Connect with ``azureservicebus://SAS_POLICY_NAME:SAS_KEY@NAMESPACE``."""\n'),
    ("short-and-spaced-values", 'A = "password=abc"\nB = "user=%s password=%s" % ("a", "b")\n'),
    ("keywords-that-are-not-credentials",
     'A = "password_length=123456 max_token=abcdefgh"\nB = "tokenizer=word-piece"\n'),
]


@pytest.mark.parametrize("case_id,source", CLEAN, ids=[c[0] for c in CLEAN])
def test_templates_placeholders_and_run_time_values_are_not_credentials(case_id, source):
    _, found = _credentials("pkg/db.py", source)
    assert found == [], [(f.line, f.message) for f in found]


@pytest.mark.parametrize("path", ["tests/test_db.py", "tests/conftest.py", "docs/examples/connect.py",
                                  "examples/connect.py"])
def test_stand_in_credentials_of_tests_and_examples_do_not_count(path):
    source = (f'def dsn(host="db"):\n    a = f"postgresql://app:{SECRET}@{{host}}/test"\n'
              f'    b = "mysql://%s:%s@%s" % ("root", "{SECRET}", host)\n'
              f'    c = f"host={{host}} password={SECRET}"\n    return a, b, c\n')
    _, found = _credentials(path, source)
    assert found == [], [(f.line, f.message) for f in found]


@pytest.mark.parametrize("path,source", [
    ("tests/fixtures/db.yaml", f"url: postgres://app:{SECRET}@${{DB_HOST}}/app\ndsn: host=db password={SECRET}\n"),
    ("tests/data/settings.toml", f'url = "mysql://root:{SECRET}@%(host)s/app"\n'),
])
def test_fixture_files_under_tests_do_not_count(path, source):
    _, found = _credentials(path, source)
    assert found == [], [(f.line, f.message) for f in found]


def test_a_random_key_in_a_test_template_still_counts():
    _, found = _credentials("tests/test_api.py", f'def url(base):\n    return f"{{base}}/v1?api_key={KEY}"\n')
    assert len(found) == 1 and KEY not in found[0].code


def test_one_finding_per_line_when_the_line_scan_and_the_template_both_see_it():
    source = f'def dsn(host):\n    return f"mysql://root:{SECRET}@{{host}}/app?password={SECRET}"\n'
    _, found = _credentials("pkg/db.py", source)
    assert len(found) == 1


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_value_never_appears_in_any_report(fmt):
    source = (f'def dsn(host, db):\n    a = f"mysql://root:{SECRET}@{{host}}/app"\n'
              f'    b = "mysql://%s:%s@%s/%s" % ("root", "{SECRET}", host, db)\n'
              f'    c = f"host={{host}} password={SECRET}"\n'
              f'    d = "redis://app:{{pw}}@{{h}}".format(\n        pw="{SECRET}", h=host)\n    return a, b, c, d\n')
    verdict, found = _credentials("pkg/db.py", source)
    assert sorted(f.line for f in found) == [2, 3, 4, 6]
    assert SECRET not in render(verdict, fmt)


@pytest.mark.parametrize("line,visible", [
    (f'return f"mysql://root:{SECRET}@{{host}}/app"', 'f"mysql://root:Kx***@{host}/app"'),
    (f'"postgresql://app:{SECRET}@%s/app" % host', '"postgresql://app:Kx***@%s/app"'),
    (f'url = "amqp://guest:{SECRET}@" + host', '"amqp://guest:Kx***@" + host'),
    (f"const url = `postgres://app:{SECRET}@${{host}}`", "`postgres://app:Kx***@${host}`"),
])
def test_redaction_masks_a_url_password_whatever_follows_the_at(line, visible):
    out = redact_line(line)
    assert SECRET not in out and visible in out


def test_the_installed_gate_blocks_the_issue_example_and_never_prints_the_password(repo):
    """The issue's case through the console script in a real repository: the f-string DSN blocks in product
    code, in the CI view and the hook view, in every output; the same DSN in a test fixture does not."""
    repo.write("pkg/__init__.py", "")
    repo.add("pkg/__init__.py")
    repo.commit("init")
    repo.write("pkg/db.py", f'def dsn(host):\n    return f"mysql://root:{SECRET}@{{host}}/app"\n')
    repo.write("tests/test_db.py", f'def test_dsn():\n    assert f"mysql://root:{SECRET}@{{0}}/app"\n')
    repo.add("pkg/db.py", "tests/test_db.py")
    hook = repo.sentinel("check", "--format", "json", "--no-memory")
    assert hook.returncode == 1, hook.stderr
    findings = json.loads(hook.stdout)["findings"]
    assert [(f["rule"], f["path"], f["line"], f["severity"]) for f in findings] == [
        ("SEN304", "pkg/db.py", 2, "error")]
    assert SECRET not in hook.stdout + hook.stderr
    repo.commit("db: connection string")
    for fmt in ("text", "sarif", "github", "markdown"):
        ci = repo.sentinel("check", "--range", "HEAD^..HEAD", "--format", fmt, "--no-memory")
        assert ci.returncode == 1, (fmt, ci.stderr)
        assert "SEN304" in ci.stdout and SECRET not in ci.stdout + ci.stderr, fmt
