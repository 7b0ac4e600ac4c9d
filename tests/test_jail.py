"""The dependency jail: banned imports/dependencies, destructive operations, protected paths."""

from __future__ import annotations

import copy
import functools
import json

import pytest

from sentinel import engine
from sentinel.checks import jail
from sentinel.checks.base import FileContext
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.models import FilterMode, Severity
from sentinel.sources import Change
from tests.conftest import gate_new_file, new_file_diff

BAN = {"jail": {"banned_imports": ["flask"], "banned_dependencies": ["flask"]}}
JAIL_CODES = {r.code for r in jail.RULES}


@functools.cache
def _validated(config_json: str):
    return validate(json.loads(config_json), "test")


def _config(config: dict | None):
    """Validating a config costs tens of ms (pydantic); hundreds of cases share a few configs."""
    return copy.deepcopy(_validated(json.dumps(config or {}, sort_keys=True)))


def jail_gate(path: str, content: str, config: dict | None = None):
    """The whole gate (jail only) on a diff adding one file, like conftest.gate_new_file."""
    cs = parse_diff(new_file_diff(path, content), source="test")
    verdict = engine.run(Change(cs, content_rev=None), _config(config), engine.RunOptions(only_checks=["jail"]))
    assert all(c.status.value != "error" for c in verdict.checks), [c.reason for c in verdict.checks]
    return verdict


def jail_codes(path: str, content: str, config: dict | None = None) -> list[str]:
    return [f.rule for f in jail_gate(path, content, config).findings if f.rule in JAIL_CODES]


def jail_findings(path: str, content: str, config: dict | None = None):
    return [f for f in jail_gate(path, content, config).findings if f.rule in JAIL_CODES]


def run_diff(diff: str, config: dict | None = None, mode: str | None = None, files: dict | None = None,
             root=None):
    """Gate a diff; ``files`` are the post-change contents, written under ``root`` (the diff's tree)."""
    cs = parse_diff(diff, source="test")
    if files:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        cs.root = str(root)
    opts = engine.RunOptions(only_checks=["jail"], filter_mode=FilterMode(mode) if mode else None)
    return engine.run(Change(cs, content_rev=None), _config(config), opts)


# --------------------------------------------------------------------------- must fire
MUST_FIRE_PY = [
    # banned imports, every spelling
    ("import os, flask\n", "SEN101"),
    ("__import__('flask')\n", "SEN101"),
    ("import importlib\nimportlib.import_module('flask')\n", "SEN101"),
    ("from importlib import import_module\nimport_module('flask.views')\n", "SEN101"),
    ("import flask.json as fj\n", "SEN101"),
    ("from flask import Flask\n", "SEN101"),
    ("from flask.views import View\n", "SEN101"),
    ("def make():\n    if True:\n        import flask\n    return flask\n", "SEN101"),
    ("import os; import flask\n", "SEN101"),
    ("from flask import (\n    Flask,\n    request,\n)\n", "SEN101"),
    # destructive filesystem
    ("import shutil\nshutil.rmtree(p)\n", "SEN103"),
    ("import os\nos.unlink(p)\n", "SEN103"),
    ("import os\nos.remove(p)\n", "SEN103"),
    ("import os\nos.rmdir(p)\n", "SEN103"),
    ("import os\nos.removedirs(p)\n", "SEN103"),
    ("from shutil import rmtree\nrmtree(p)\n", "SEN103"),
    ("import shutil as sh\nsh.rmtree(p)\n", "SEN103"),
    ("from os import remove as rm_file\nrm_file(p)\n", "SEN103"),
    ("from pathlib import Path\nPath(p).unlink()\n", "SEN103"),
    ("from pathlib import Path\nPath(p).unlink(missing_ok=True)\n", "SEN103"),
    ("def clean(tmp):\n    tmp.rmdir()\n", "SEN103"),
    ("from pathlib import Path\nPath.unlink(p)\n", "SEN103"),
    # destructive process
    ("import subprocess\nsubprocess.run(['rm', '-rf', path])\n", "SEN104"),
    ("import subprocess\nsubprocess.run(['rm', '-r', path])\n", "SEN104"),
    ("import subprocess\nsubprocess.Popen(['/bin/rm', '-fr', path])\n", "SEN104"),
    ("import subprocess\nsubprocess.check_call(['sudo', 'rm', '-r', '-f', path])\n", "SEN104"),
    ("import subprocess\nsubprocess.call('rm -rf build', shell=True)\n", "SEN104"),
    ("import subprocess\nsubprocess.check_output(f'rm -rf {path}', shell=True)\n", "SEN104"),
    ("import os\nos.system('cd /srv && rm -rf cache')\n", "SEN104"),
    ("import os\nos.popen('rm --recursive --force ' + d)\n", "SEN104"),
    ("import subprocess\ncmd = ['rm', '-rf', path]\nsubprocess.run(cmd)\n", "SEN104"),
    ("import subprocess\nsubprocess.run(['bash', '-c', 'rm -rf /data'])\n", "SEN104"),
    ("import subprocess\nsubprocess.run(['git', 'push', '--force', 'origin', 'main'])\n", "SEN104"),
    ("import os, signal\nos.kill(pid, signal.SIGKILL)\n", "SEN104"),
    ("import os, signal\nos.killpg(pgid, signal.SIGTERM)\n", "SEN104"),
    # destructive SQL
    ('cursor.execute("DROP TABLE users")\n', "SEN105"),
    ('cur.execute("drop database prod")\n', "SEN105"),
    ('cur.execute("DROP SCHEMA public CASCADE")\n', "SEN105"),
    ('cur.execute("TRUNCATE TABLE sessions")\n', "SEN105"),
    ('cur.execute("DELETE FROM users")\n', "SEN105"),
    ('cur.execute("""\n    DELETE FROM users\n""")\n', "SEN105"),
    ('cur.executemany("DELETE FROM t", rows)\n', "SEN105"),
    ('cur.executescript("CREATE TABLE a(x); DELETE FROM a;")\n', "SEN105"),
    ('cur.execute(f"DROP TABLE {name}")\n', "SEN105"),
    ('def reset(cur):\n    sql = "DELETE FROM users"\n    cur.execute(sql)\n', "SEN105"),
    ('WIPE = "TRUNCATE audit_log"\n\n\ndef reset(cur):\n    cur.execute(WIPE)\n', "SEN105"),
    ('from sqlalchemy import text\nconn.execute(text("DROP TABLE users"))\n', "SEN105"),
    ('import sqlalchemy as sa\nstmt = sa.text("DELETE FROM users -- WHERE id = 1")\n', "SEN105"),
    # protected writes
    ('import os\nopen(os.path.expanduser("~/.ssh/authorized_keys"), "a")\n', "SEN108"),
    ('with open(".env", "w") as fh:\n    fh.write(x)\n', "SEN108"),
    ('with open("config/.env.production", mode="w") as fh:\n    pass\n', "SEN108"),
    ('open("/home/dev/.ssh/id_rsa", "wb")\n', "SEN108"),
    ('open(".git/hooks/pre-commit", "r+")\n', "SEN108"),
    ('from pathlib import Path\nPath("~/.aws/credentials").expanduser().write_text(x)\n', "SEN108"),
    ('from pathlib import Path\n(Path.home() / ".ssh" / "config").write_bytes(b)\n', "SEN108"),
    ('from pathlib import Path\nPath(".env").open("a")\n', "SEN108"),
    ('import os\nos.open("deploy/server.pem", os.O_WRONLY | os.O_CREAT)\n', "SEN108"),
    ('import os\nopen(os.path.join(os.environ["HOME"], ".ssh", "authorized_keys"), "a")\n', "SEN108"),
    ('import shutil\nshutil.copy("id_rsa.new", ".ssh/id_rsa")\n', "SEN108"),
    ('open(f"{home}/.ssh/authorized_keys", "a")\n', "SEN108"),
]


@pytest.mark.parametrize("content,code", MUST_FIRE_PY, ids=[c[0].split("\n")[-2][:50] for c in MUST_FIRE_PY])
def test_python_must_fire_in_new_file(content, code):
    assert code in jail_codes("app/service.py", content, BAN)
    # the same through conftest's one-call gate with every check enabled
    if code == "SEN101" and content.startswith("import os, flask"):
        assert code in [f.rule for f in gate_new_file("app/service.py", content, BAN).findings]


MUST_NOT_FIRE_PY = [
    "cache.clear()\n",
    "items.remove(x)\n",
    "df.drop(columns=c)\n",
    "proc.terminate()\n",
    "proc.kill()\n",
    "session.delete(obj)\n",
    '@app.delete("/items/{id}")\ndef remove_item(id):\n    return None\n',
    "requests.delete(url)\n",
    "# call delete() once the upload finished\nx = 1\n",
    'cursor.execute("DELETE FROM users WHERE id = ?", (user_id,))\n',
    'cursor.execute("""\n    DELETE FROM users\n    WHERE id = %s\n""", (uid,))\n',
    "# rm -rf /\nx = 1\n",
    'def clean():\n    """Runs rm -rf on the build dir, like `shutil.rmtree(p)`."""\n',
    'HELP = "use rm -rf build to start over"\n',
    "from . import flask\nfrom .flask import app\nfrom ..flask.views import v\n",
    "import flasky\nimport flask_login\nfrom flaskext import x\n",
    "import os, signal\nos.kill(pid, 0)\n",
    "redis.unlink('session:1')\nsftp.unlink(path)\n",
    "from multiprocessing import shared_memory\nshm.unlink()\n",
    "import subprocess\nsubprocess.run(['rm', 'file.txt'])\n",
    "import subprocess\nsubprocess.run(['git', 'push', '--force-with-lease'])\n",
    "import subprocess\nsubprocess.run(['ls', '-rf'])\n",
    'cur.execute("SELECT TRUNCATE(price, 2) FROM items")\n',
    'cur.execute("DROP TEMPORARY TABLE scratch")\n',
    'cur.execute("DELETE FROM t " + where_clause, args)\n',
    'log.info("DROP TABLE users")\n',
    'open(".env")\nopen(".env", "r")\nopen(".env", encoding="utf-8")\n',
    'open(".env.example", "w")\nopen("build/report.txt", "w")\nopen(".gitignore", "a")\n',
    'from pathlib import Path\nPath(".github/workflows/ci.yml").write_text(x)\n',
    'import gzip\ngzip.open("data.gz", "wb")\n',
    "remove = items.pop\nremove(0)\n",
]


@pytest.mark.parametrize("content", MUST_NOT_FIRE_PY, ids=[c.split("\n")[0][:50] for c in MUST_NOT_FIRE_PY])
def test_python_must_not_fire(content):
    assert jail_codes("app/service.py", content, BAN) == []


def test_modified_file_reports_only_added_lines(tmp_path):
    # line 2 (an old rmtree) is context; only the new line 4 is in scope in "added" mode
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,4 @@\n"
            " import shutil, os\n shutil.rmtree(old)\n x = 1\n+os.unlink(new)\n")
    files = {"m.py": "import shutil, os\nshutil.rmtree(old)\nx = 1\nos.unlink(new)\n"}
    verdict = run_diff(diff, files=files, root=tmp_path)
    assert [(f.rule, f.line) for f in verdict.findings] == [("SEN103", 4)]
    verdict = run_diff(diff, mode="diff_context", files=files, root=tmp_path)
    assert sorted((f.rule, f.line) for f in verdict.findings) == [("SEN103", 2), ("SEN103", 4)]


def test_multiline_call_reported_on_its_added_line(tmp_path):
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,4 @@\n"
            " import subprocess\n subprocess.run(\n-    ['ls', path],\n+    ['rm', '-rf', path],\n )\n")
    files = {"m.py": "import subprocess\nsubprocess.run(\n    ['rm', '-rf', path],\n)\n"}
    assert [(f.rule, f.line) for f in run_diff(diff, files=files, root=tmp_path).findings] == [("SEN104", 3)]


def test_sql_literal_changed_away_from_its_execute_call(tmp_path):
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n"
            " def reset(cur):\n-    sql = 'DELETE FROM users WHERE id = 1'\n+    sql = 'DELETE FROM users'\n"
            "     cur.execute(sql)\n")
    files = {"m.py": "def reset(cur):\n    sql = 'DELETE FROM users'\n    cur.execute(sql)\n"}
    assert [(f.rule, f.line) for f in run_diff(diff, files=files, root=tmp_path).findings] == [("SEN105", 2)]


def test_severities_warn_on_deletion_and_block_on_data_loss():
    by_code = {r.code: r.severity for r in jail.RULES}
    assert by_code["SEN103"] is Severity.WARNING and by_code["SEN104"] is Severity.WARNING
    assert all(by_code[c] is Severity.ERROR for c in ("SEN101", "SEN102", "SEN105", "SEN106", "SEN107", "SEN108"))
    verdict = jail_gate("a.py", "import shutil\nshutil.rmtree(p)\n")
    assert verdict.passed and [f.rule for f in verdict.findings] == ["SEN103"]
    assert not jail_gate("a.py", "cur.execute('DROP TABLE users')\n").passed


def test_destructive_classes_can_be_disabled():
    src = "import shutil, os\nshutil.rmtree(p)\nos.kill(pid, 9)\ncur.execute('DROP TABLE t')\n"
    assert sorted(jail_codes("a.py", src)) == ["SEN103", "SEN104", "SEN105"]
    assert jail_codes("a.py", src, {"jail": {"destructive": ["database"]}}) == ["SEN105"]
    assert jail_codes("a.py", src, {"jail": {"destructive": []}}) == []
    assert jail_codes("s.sh", "rm -rf /\n", {"jail": {"destructive": ["filesystem"]}}) == []


def test_messages_name_the_operation_and_target():
    [f] = jail_findings("a.py", "import shutil\n\n\ndef go(build_dir):\n    shutil.rmtree(build_dir)\n")
    assert f.message == "shutil.rmtree() deletes a directory tree: build_dir" and f.line == 5 and f.column == 5
    [f] = jail_findings("a.py", "import subprocess\nsubprocess.run(['rm', '-rf', path])\n")
    assert "rm -rf" in f.message and f.hint
    [f] = jail_findings("a.py", "import os, flask\n", BAN)
    assert f.message == "imports banned module 'flask'"
    [f] = jail_findings("a.py", "from flask.views import View\n", BAN)
    assert f.message == "imports 'flask.views' from banned module 'flask'"


def test_unparsable_python_still_gets_lexical_rules():
    src = "def broken(:\n    import flask\n    shutil.rmtree(x)\n    s = 'import flask'\n"
    verdict = jail_gate("b.py", src, BAN)
    assert sorted((f.rule, f.line) for f in verdict.findings) == [("SEN101", 2), ("SEN103", 3)]


def test_inline_suppression_works_for_jail_rules():
    src = "import shutil\nshutil.rmtree(p)  # sentinel: ignore[SEN103] scratch dir we created\n"
    verdict = jail_gate("a.py", src)
    assert verdict.findings == [] and verdict.suppressed == 1


# --------------------------------------------------------------------------- JS / TS
JS_FIRE = [
    "import x from 'flask';\n",
    'import { a, b } from "flask/sub";\n',
    "import 'flask';\n",
    "import * as f from 'flask'\n",
    "export { x } from 'flask';\n",
    "export * from \"flask\";\n",
    "const f = require('flask');\n",
    "const f = await import('flask');\n",
    "import {\n  a,\n  b,\n} from 'flask';\n",
    "import type { T } from '@acme/flask';\n",
    "import fs from 'node:fs';\n",
]


@pytest.mark.parametrize("content", JS_FIRE)
@pytest.mark.parametrize("path", ["web/app.ts", "web/app.js"])
def test_js_imports_must_fire(path, content):
    cfg = {"jail": {"banned_imports": ["flask", "@acme/flask", "fs"]}}
    assert jail_codes(path, content, cfg) == ["SEN101"]


JS_CLEAN = [
    "import x from './flask';\n",
    "import x from '../flask/util';\n",
    "import x from 'flask-extra';\n",
    "import x from 'flasks';\n",
    "// import x from 'flask';\n",
    "/* require('flask') */\n",
    "const s = \"import x from 'flask'\";\n",
    "const flask = 1; // flask\n",
    "const a = Array.from('flask');\n",
    "import x from '@acme/flask-ui';\n",
]


@pytest.mark.parametrize("content", JS_CLEAN)
def test_js_imports_must_not_fire(content):
    assert jail_codes("web/app.ts", content, {"jail": {"banned_imports": ["flask", "@acme/flask"]}}) == []


# --------------------------------------------------------------------------- shell-like files
SHELL_FIRE = [
    ("scripts/x.sh", 'rm -rf "$PREFIX/"\n'),
    ("scripts/x.sh", "rm -rf $DIR/*\n"),
    ("scripts/x.sh", "rm -rf /\n"),
    ("scripts/x.sh", "sudo rm -rf /usr\n"),
    ("scripts/x.sh", "rm -fr ~\n"),
    ("scripts/x.sh", "rm -r -f $HOME\n"),
    ("scripts/x.sh", "rm --recursive --force .\n"),
    ("scripts/x.sh", "rm -rf *\n"),
    ("scripts/x.sh", "rm -rf --no-preserve-root /\n"),
    ("scripts/x.sh", "if [ -d x ]; then rm -rf \"$X\"/*; fi\n"),
    ("scripts/x.sh", "rm -rf \\\n  /\n"),
    ("scripts/x.sh", "git push --force origin main\n"),
    ("scripts/x.sh", "git push -f\n"),
    ("scripts/x.sh", "git push origin +main\n"),
    ("scripts/x.sh", "git -C repo reset --hard origin/main\n"),
    ("scripts/x.sh", "git clean -fdx\n"),
    ("scripts/x.sh", "cd repo && git clean -xdf && make\n"),
    ("Makefile", "clean:\n\t@rm -rf $(BUILD)/\n"),
    ("Makefile", "publish:\n\tgit push --force\n"),
    ("Dockerfile", "FROM alpine\nRUN rm -rf /etc\n"),
    ("Dockerfile", "FROM alpine\nRUN apk add x && \\\n    rm -rf /\n"),
    ("Dockerfile", 'FROM alpine\nRUN ["rm", "-rf", "/home"]\n'),
    (".github/workflows/ci.yml", "jobs:\n  b:\n    steps:\n      - run: |\n          make\n          rm -rf ~/\n"),
    (".github/workflows/ci.yml", "jobs:\n  b:\n    steps:\n      - run: git push --force\n"),
    (".gitlab-ci.yml", "test:\n  script:\n    - rm -rf \"$CI_PROJECT_DIR/\"\n"),
    (".gitlab-ci.yml", "test:\n  script:\n  - make\n  - git clean -ffdx\n"),
    (".circleci/config.yml", ("jobs:\n  b:\n    steps:\n      - run:\n          name: wipe\n"
                              "          command: git reset --hard\n")),
    ("deploy/compose.yaml", "services:\n  app:\n    command: rm -rf /data\n"),
]


@pytest.mark.parametrize("path,content", SHELL_FIRE, ids=[f"{p}:{c.strip()[-30:]}" for p, c in SHELL_FIRE])
def test_shell_must_fire(path, content):
    assert "SEN106" in jail_codes(path, content)


SHELL_CLEAN = [
    ("scripts/x.sh", "rm -rf build dist *.egg-info\n"),
    ("scripts/x.sh", 'rm -rf "$BUILD_DIR"\n'),
    ("scripts/x.sh", 'rm -rf "${PREFIX:?}/"*\n'),
    ("scripts/x.sh", "rm -rf /tmp/build-cache /var/lib/apt/lists/*\n"),
    ("scripts/x.sh", "rm -rf ~/.cache/pip $HOME/.npm\n"),
    ("scripts/x.sh", "rm -f /etc/motd\n"),
    ("scripts/x.sh", "# rm -rf /\necho ok\n"),
    ("scripts/x.sh", "echo 'rm -rf /'\n"),
    ("scripts/x.sh", "git push --force-with-lease\ngit push origin main\n"),
    ("scripts/x.sh", "git reset --soft HEAD~1\ngit clean -n\ngit clean -dn\n"),
    ("scripts/x.sh", "git log --format=%H | grep reset\n"),
    ("Makefile", "clean:\n\trm -rf build/ dist/\n"),
    ("Dockerfile", "FROM alpine\nRUN apt-get update && \\\n    rm -rf /var/lib/apt/lists/*\n"),
    ("Dockerfile", "FROM alpine\n# RUN rm -rf /\nENV X=1\n"),
    (".github/workflows/ci.yml", "jobs:\n  b:\n    steps:\n      - name: rm -rf / is bad\n        run: make\n"),
    (".github/workflows/ci.yml",
     "jobs:\n  b:\n    steps:\n      - run: |\n          # rm -rf /\n          rm -rf dist\n"),
    ("config/settings.yml", "description: never run rm -rf /\n"),
    (".gitlab-ci.yml", "test:\n  script:\n  - make\ndeploy:\n  - rm -rf /\n"),
    ("docs/guide.md", "Run `rm -rf /` to lose everything.\n"),
]


@pytest.mark.parametrize("path,content", SHELL_CLEAN, ids=[f"{p}:{c.strip()[-30:]}" for p, c in SHELL_CLEAN])
def test_shell_must_not_fire(path, content):
    assert jail_codes(path, content) == []


def test_shell_finding_lands_on_the_command_line():
    [f] = jail_findings("scripts/x.sh", "#!/bin/sh\nset -e\nrm -rf \\\n  /usr\n")
    assert f.rule == "SEN106" and f.line == 3 and "/usr" in f.message


@pytest.mark.parametrize("word,dangerous", [
    ("/", True), ("/*", True), ("//", True), ("~", True), ("~/", True), ("$HOME", True), ('"${HOME}"/*', True),
    (".", True), ("./", True), ("..", True), ("*", True), ("/usr", True), ("/etc/", True), ('"$X/"', True),
    ("$X/*", True), ("$(OUT)/", True),
    ("$X", False), ('"${X:?}/"', False), ("build", False), ("/tmp", False), ("/tmp/*", False),
    ("/usr/local/lib/x", False), ("~/.cache", False), ("$HOME/.m2", False), ("./dist", False), ("", False),
])
def test_dangerous_rm_target(word, dangerous):
    assert jail.dangerous_rm_target(word) is dangerous


# --------------------------------------------------------------------------- manifests
def test_requirements_banned_and_normalized_names():
    cfg = {"jail": {"banned_dependencies": ["Flask_Login", "requests"]}}
    src = ("# deps\nflask-login==0.6\nFLASK.LOGIN[extra] >= 1 ; python_version > '3.8'\n-r base.txt\n-e .\n"
           "--hash=sha256:abc\ngit+https://example.com/requests.git#egg=requests\nrequests-oauthlib\n"
           "Requests @ https://example.com/r.whl\n")
    findings = jail_findings("requirements.txt", src, cfg)
    assert [(f.rule, f.line) for f in findings] == [("SEN102", 2), ("SEN102", 3), ("SEN102", 9)]
    assert findings[0].message == "adds banned dependency 'flask-login'"
    for path in ("requirements-dev.txt", "requirements/test.txt", "constraints.txt", "sub/requirements.in"):
        assert jail_codes(path, "flask_login\n", cfg) == ["SEN102"], path
    assert jail_codes("docs/requirements.md", "flask_login\n", cfg) == []


def test_allowlist_reports_unlisted_dependencies():
    cfg = {"jail": {"allowed_dependencies": ["requests", "Flask"]}}
    findings = jail_findings("requirements.txt", "requests>=2\nflask\nleft_pad==1\n", cfg)
    assert [(f.line, f.message) for f in findings] == [
        (3, "adds dependency 'left_pad' that is not on jail.allowed-dependencies")]


def test_pyproject_dependency_tables():
    src = ('[project]\nname = "app"\nkeywords = ["flask"]\ndependencies = [\n    "requests>=2",\n'
           '    "Flask[async]>=2.3",\n]\n\n[project.optional-dependencies]\nweb = ["flask-cors", "flask"]\n\n'
           '[dependency-groups]\ndev = ["flask"]\n\n[tool.poetry.dependencies]\npython = "^3.10"\n'
           'flask = { version = "^2", extras = ["async"] }\n\n[tool.poetry.group.test.dependencies]\n'
           '"Flask" = "*"\n\n[tool.mypy]\nmodules = ["flask"]\n')
    findings = jail_findings("pyproject.toml", src, BAN)
    assert [f.line for f in findings] == [6, 10, 13, 17, 20]
    assert all(f.rule == "SEN102" for f in findings)


def test_package_json_dependency_sections():
    src = ('{\n  "name": "web",\n  "scripts": {"left-pad": "echo"},\n  "dependencies": {\n'
           '    "react": "^18",\n    "left-pad": "1.3.0"\n  },\n  "devDependencies": {"Left-Pad": "1"},\n'
           '  "peerDependencies": {"@acme/ui": "2"}\n}\n')
    cfg = {"jail": {"banned_dependencies": ["left-pad", "@acme/ui"]}}
    assert [(f.rule, f.line) for f in jail_findings("web/package.json", src, cfg)] == [
        ("SEN102", 6), ("SEN102", 8), ("SEN102", 9)]


@pytest.mark.parametrize("path,content", [
    ("pyproject.toml", "[project\ndependencies = ['flask'\n"),
    ("pyproject.toml", "[project]\ndependencies = 'flask'\n"),
    ("package.json", '{"dependencies": {"flask": "1"'),
    ("package.json", '["flask"]\n'),
    ("requirements.txt", "flask ===\n[[[\nflask >= \nflask[x\n"),
    ("Pipfile", "[packages\nflask = '*'\n"),
])
def test_malformed_manifests_are_skipped_without_findings(path, content):
    assert jail_codes(path, content, BAN) == []


def test_manifest_only_reports_added_entries(tmp_path):
    diff = ("diff --git a/requirements.txt b/requirements.txt\n--- a/requirements.txt\n+++ b/requirements.txt\n"
            "@@ -1,2 +1,3 @@\n flask==2.0\n requests\n+httpx\n")
    files = {"requirements.txt": "flask==2.0\nrequests\nhttpx\n"}
    assert run_diff(diff, BAN, files=files, root=tmp_path).findings == []
    diff = ("diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
            '@@ -1,5 +1,6 @@\n {\n   "dependencies": {\n+    "flask": "1",\n     "react": "18"\n   }\n }\n')
    files = {"package.json": '{\n  "dependencies": {\n    "flask": "1",\n    "react": "18"\n  }\n}\n'}
    assert [(f.rule, f.line) for f in run_diff(diff, BAN, files=files, root=tmp_path).findings] == [("SEN102", 3)]


@pytest.mark.parametrize("line,name", [
    ("flask", "flask"), ("Flask>=2.0", "Flask"), ("flask[async] ==2; python_version<'3.12'", "flask"),
    ("zope.interface~=5.0  # pinned", "zope.interface"), ("pkg @ https://x/y.whl", "pkg"),
    ("requests (>=2.0)", "requests"), ("a-b_c.d\\", "a-b_c.d"), ("flask==2.0 --hash=sha256:ab12", "flask"),
    ("flask >=2, <3 ; os_name == 'nt'", "flask"), ("flask ===", None), ("flask >=", None), ("flask[x", None),
    ("-r base.txt", None), ("--index-url https://x", None), ("-e git+https://x", None), ("# comment", None),
    ("https://x/y.whl", None), ("git+ssh://git@x/y.git", None), ("./local/pkg", None), ("", None),
])
def test_parse_requirement_line(line, name):
    assert jail.parse_requirement_line(line) == name


def test_normalize_dist_pep503():
    assert jail.normalize_dist("Flask_Login") == jail.normalize_dist("flask.login") == "flask-login"
    assert jail.normalize_dist("A--B__c") == "a-b-c"


# --------------------------------------------------------------------------- protected paths
def test_protected_path_added_and_exceptions():
    [f] = jail_findings(".env", "API_KEY=abc123\n")
    assert (f.rule, f.line, f.code, f.message) == ("SEN107", 1, "", "adds protected path .env")
    assert jail_codes("deploy/id_rsa", "x\n") == ["SEN107"]
    assert jail_codes("services/api/.env.local", "A=1\n") == ["SEN107"]
    assert jail_codes(".env.example", "A=\n") == []
    assert jail_codes("keys/deploy.pub", "ssh-ed25519 AAAA\n") == []
    assert jail_codes("config/app.yml", "a: 1\n") == []
    assert jail_codes("config/app.yml", "a: 1\n", {"jail": {"extra_protected_paths": ["config/**"]}}) == ["SEN107"]
    assert jail_codes(".env", "A=1\n", {"jail": {"protected_exceptions": [".env"]}}) == []


def test_protected_path_deleted_renamed_and_binary():
    diff = ("diff --git a/.env b/.env\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/.env\n+++ /dev/null\n"
            "@@ -1 +0,0 @@\n-A=1\n"
            "diff --git a/notes.txt b/config/.env\nsimilarity index 100%\n"
            "rename from notes.txt\nrename to config/.env\n"
            "diff --git a/id_rsa b/key.txt\nsimilarity index 100%\nrename from id_rsa\nrename to key.txt\n"
            "diff --git a/certs/client.p12 b/certs/client.p12\nnew file mode 100644\nindex 0000000..1234567\n"
            "Binary files /dev/null and b/certs/client.p12 differ\n")
    found = {(f.path, f.line, f.message) for f in run_diff(diff).findings}
    assert found == {
        (".env", None, "deletes protected path .env"),
        ("config/.env", None, "renames notes.txt to protected path config/.env"),
        ("key.txt", None, "renames protected path id_rsa to key.txt"),
        ("certs/client.p12", None, "changes protected path certs/client.p12"),
    }


def test_protected_path_finding_can_be_suppressed_inline():
    src = "# sentinel: ignore[SEN107] placeholder values only\ntoken: changeme\n"
    verdict = jail_gate("config/secrets.yml", src)
    assert verdict.findings == [] and verdict.suppressed == 1


@pytest.mark.parametrize("text,exact,protected", [
    ("~/.ssh/authorized_keys", True, True), ("/root/.ssh/config", True, True), (".git/config", True, True),
    ("\0/.ssh/known_hosts", False, True), ("app/.env", True, True), ("\0/.env.prod", False, True),
    ("deploy/server.pem", True, True), ("~/.aws/credentials", True, True), ("keys/id_rsa_new", True, True),
    (".env.example", True, False), (".gitignore", True, False), (".github/ci.yml", True, False),
    ("build/out.txt", True, False), ("\0/server.pem", False, False), ("C:\\Users\\me\\.ssh\\id_rsa", True, True),
])
def test_protected_write_target(text, exact, protected):
    s = jail._settings(_config(None).jail)
    assert (jail.protected_write_target(text, exact, s) is not None) is protected


# --------------------------------------------------------------------------- helpers
@pytest.mark.parametrize("sql,what", [
    ("DROP TABLE users", "DROP TABLE"), ("  drop\n table x", "DROP TABLE"), ("DROP DATABASE app;", "DROP DATABASE"),
    ("TRUNCATE users", "TRUNCATE"), ("DELETE FROM users", "DELETE without WHERE"),
    ("SELECT 1; DELETE FROM t", "DELETE without WHERE"), ("DELETE FROM t -- WHERE id=1", "DELETE without WHERE"),
    ("DELETE FROM \0", "DELETE without WHERE"),
    ("DELETE FROM users WHERE id = ?", None), ("delete from t where x in (select 1)", None),
    ("SELECT * FROM t WHERE note = 'DROP TABLE x'", None), ("DELETE FROM t \0", None),
    ("SELECT TRUNCATE(1.5, 0)", None), ("DROP INDEX ix", None), ("UPDATE t SET a = 1", None),
    ("WITH old AS (SELECT id FROM t) DELETE FROM t WHERE id IN (SELECT id FROM old)", None),
])
def test_destructive_sql(sql, what):
    assert jail.destructive_sql(sql) == what


def test_banned_module_matches_submodules_not_prefixes():
    assert jail.banned_module("flask", ("flask",)) == "flask"
    assert jail.banned_module("flask.json", ("flask",)) == "flask"
    assert jail.banned_module("flaskext", ("flask",)) is None
    assert jail.banned_module("@org/pkg/sub", ("@org/pkg",), sep="/") == "@org/pkg"
    assert jail.banned_module("@org/pkg-x", ("@org/pkg",), sep="/") is None


def test_manifest_kind():
    assert jail.manifest_kind("requirements.txt") == "requirements"
    assert jail.manifest_kind("a/requirements/prod.txt") == "requirements"
    assert jail.manifest_kind("constraints-3.11.txt") == "requirements"
    assert jail.manifest_kind("pkg/pyproject.toml") == "pyproject"
    assert jail.manifest_kind("Pipfile") == "pipfile"
    assert jail.manifest_kind("web/package.json") == "package"
    assert jail.manifest_kind("notes.txt") is None and jail.manifest_kind("package-lock.json") is None


def test_probe_confirms_keyword_on_its_own_lines():
    probes = ((("remove", jail._PROBES_FS[-1][1], 0)),)
    assert jail.probe("x = 1\nitems.remove(a)\n", probes) is False
    assert jail.probe("x = 1\nos.remove(a)\n", probes) is True
    assert jail.probe("items.remove(a)\nremove(b)\n", probes) is True


# --------------------------------------------------------------------------- speed: gates before parsing
def _context(path: str, content: str, config: dict | None = None) -> FileContext:
    cs = parse_diff(new_file_diff(path, content))
    return FileContext(cs.files[0], _config(config), FilterMode.ADDED, content)


def test_innocent_python_is_never_parsed():
    body = "def f(items, path):\n    items.remove(path)\n    data = open(path).read()\n    return data\n" * 2000
    ctx = _context("big.py", "import os\n" + body, BAN)
    assert jail.check_file(ctx) == [] and ctx._parsed is False


def test_big_suspicious_file_finds_the_one_call():
    body = ("import shutil\n" + "def f(p):\n    x = [i for i in range(10)]\n    return x\n" * 1500
            + "shutil.rmtree(p)\n")
    ctx = _context("big.py", body)
    findings = jail.check_file(ctx)
    assert [f.rule for f in findings] == ["SEN103"]


# --------------------------------------------------------------------------- through real git and the CLI
ISOLATE = "[style]\nenabled = false\n[chaos]\nenabled = false\n[placeholder]\nenabled = false\n"


def test_cli_ban_flag_blocks_staged_import(repo):
    repo.write(".sentinel.toml", ISOLATE)
    repo.write("app.py", "x = 1\n")
    repo.add(".sentinel.toml", "app.py")
    repo.commit("base")
    repo.write("app.py", "x = 1\nimport flask\n")
    repo.add("app.py")
    proc = repo.sentinel("check", "--no-memory", "--ban", "flask")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SEN101" in proc.stdout and "flask" in proc.stdout
    proc = repo.sentinel("check", "--no-memory")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_cli_config_ban_and_protected_and_destructive_shell(repo):
    repo.write(".sentinel.toml", ISOLATE + "[jail]\nbanned-dependencies = ['left-pad']\n")
    repo.add(".sentinel.toml")
    repo.commit("base")
    repo.write(".env", "TOKEN=abc\n")
    repo.write("deploy.sh", "#!/bin/sh\ngit push --force origin main\n")
    repo.write("requirements.txt", "left_pad==1.0\n")
    repo.add(".env", "deploy.sh", "requirements.txt")
    proc = repo.sentinel("check", "--no-memory", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    rules = sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])
    assert rules == ["SEN102", "SEN106", "SEN107"]
    assert "TOKEN=abc" not in proc.stdout  # a secret file's content is never echoed


# --- ORM and schema APIs destroy data as surely as SQL text (issue 10) ----------------------------------------

@pytest.mark.parametrize("src", [
    "from app import db\n\n\ndef reset():\n    db.drop_all()\n",
    "from sqlalchemy import MetaData\n\nmetadata = MetaData()\n\n\ndef reset(engine):\n    metadata.drop_all(engine)\n",
    "def reset(users, engine):\n    users.drop(engine)\n",
    "def reset(users, engine):\n    users.drop(bind=engine, checkfirst=True)\n",
    "def purge(session, User):\n    session.query(User).delete()\n",
    "from sqlalchemy import delete\n\n\ndef purge(session, User):\n    session.execute(delete(User))\n",
    "def purge(Order):\n    Order.objects.all().delete()\n",
])
def test_orm_and_schema_destruction(src):
    assert "SEN105" in jail_codes("app/models.py", src)


@pytest.mark.parametrize("src", [
    "def clean(df):\n    return df.drop(columns=['a'])\n",
    "def clean(df):\n    return df.drop('a', axis=1)\n",
    "def purge(session, User, uid):\n    session.query(User).filter(User.id == uid).delete()\n",
    "from sqlalchemy import delete\n\n\ndef purge(session, User, uid):\n    session.execute(delete(User).where(User.id == uid))\n",
    "def purge(cache, key):\n    cache.delete(key)\n",
    "def purge(resp):\n    return requests.delete(resp.url)\n",
])
def test_narrow_or_unrelated_drops_and_deletes(src):
    assert "SEN105" not in jail_codes("app/models.py", src)


def test_destructive_git_in_a_ci_workflow_blocks():
    # CI run blocks run unattended with push rights: SEN106 keeps its error severity there (ci role)
    wf = "on: push\njobs:\n  r:\n    runs-on: ubuntu-latest\n    steps:\n      - run: git push --force origin HEAD:main\n"
    [f] = jail_findings(".github/workflows/release.yml", wf)
    assert (f.rule, f.severity.value) == ("SEN106", "error")
    safe = wf.replace("--force", "--force-with-lease")
    assert jail_findings(".github/workflows/release.yml", safe) == []
    # a bot's own update branch is replaced, not shared history rewritten: a warning
    [f] = jail_findings(".github/workflows/bump.yml", wf.replace("HEAD:main", '"$branch"'))
    assert (f.severity.value, f.message) == ("warning", "`git push --force` rewrites the history of branch $branch "
                                                        "(use --force-with-lease)")
    [f] = jail_findings(".github/workflows/bump.yml", wf.replace(" origin HEAD:main", ""))
    assert f.severity.value == "error"  # the current branch, which may be the default one
