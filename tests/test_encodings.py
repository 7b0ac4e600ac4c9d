"""File names and contents that are not UTF-8: names are carried faithfully and shown as git quotes
them in every output (no crash, no surrogate in any report or in the store); contents are read as
Python reads them (PEP 263), or reported once as not checked."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from sentinel.diffparse import parse_diff
from sentinel.redact import display_path, redact, scrub_verdict
from tests.conftest import new_file_diff
from tests.harden_util import assert_clean_exit, run_sentinel

LATIN1_NAME = b"caf\xe9.py"  # not UTF-8
QUOTED = '"caf\\351.py"'  # how git shows it


@pytest.fixture
def odd_names(repo):
    if os.uname().sysname == "Darwin":
        pytest.skip("macOS file systems refuse names that are not UTF-8")
    repo.write("ok.py", "x = 1\n")
    repo.add("ok.py")
    repo.commit()
    with open(os.path.join(os.fsencode(repo.path), LATIN1_NAME), "wb") as fh:
        fh.write(b"eval(data)\n")
    with open(os.path.join(os.fsencode(repo.path), b"esc\x1b[2Jape.py"), "wb") as fh:
        fh.write(b"eval(data)\n")
    repo.git("add", "-A")
    return repo


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github", "markdown"])
def test_every_report_format_survives_a_name_that_is_not_utf8(odd_names, fmt):
    # memory on: the store too; a message with a claim: the claims check names the changed files in its text
    proc = run_sentinel("check", "--format", fmt, "--message", "Fixed the parser bug", cwd=odd_names.path)
    assert_clean_exit(proc, 1)
    assert "\\udc" not in proc.stdout and "\x1b" not in proc.stdout
    if fmt in ("json", "sarif"):
        data = json.loads(proc.stdout)  # valid JSON, valid UTF-8
        if fmt == "json":
            assert QUOTED in {f["path"] for f in data["findings"]}
    if fmt in ("text", "concise"):
        assert QUOTED in proc.stdout, proc.stdout[-1500:]


def test_the_store_and_memory_patterns_take_such_names(odd_names):
    for _ in range(2):  # twice: the second run recalls the recurring pattern
        proc = run_sentinel("check", cwd=odd_names.path)
        assert_clean_exit(proc, 1)
    proc = run_sentinel("memory", "patterns", "--json", cwd=odd_names.path)
    assert_clean_exit(proc, 0)
    json.loads(proc.stdout)
    db = odd_names.path / ".git" / "sentinel"
    stores = list(db.glob("hypotheses.sqlite3")) if db.exists() else []
    assert stores, "the run recorded nothing: this test would prove nothing"
    with sqlite3.connect(stores[0]) as con:
        paths = [r[0] for r in con.execute("SELECT path FROM findings")]
    assert QUOTED in paths


def test_names_are_carried_faithfully_for_git():
    # The parsed path is the name git knows (its bytes survive), only its display is quoted.
    text = new_file_diff("x.py", "x = 1\n").replace("a/x.py b/x.py", '"a/caf\\351.py" "b/caf\\351.py"')
    text = text.replace("+++ b/x.py", '+++ "b/caf\\351.py"')
    path = parse_diff(text).files[0].path
    assert path.encode("utf-8", "surrogateescape") == LATIN1_NAME
    assert display_path(path) == QUOTED
    assert display_path("tab\there.py") == '"tab\\there.py"' and display_path("plain/ü.py") == "plain/ü.py"
    assert "\\xe9" in redact("caf\udce9") and "\udce9" not in redact("caf\udce9")


def test_scrub_verdict_keeps_shared_findings_shared():
    from sentinel.models import CheckResult, CheckStatus, Finding, Severity, Verdict

    f = Finding("SEN301", "chaos", Severity.ERROR, "caf\udce9.py", 1, "m", code="password = 'Zq7-s3cret'")
    v = Verdict(passed=False, fail_level=Severity.ERROR, checks=[CheckResult("chaos", CheckStatus.FAILED, [f])],
                findings=[f], source="staged", files_changed=1, lines_added=1)
    out = scrub_verdict(v)
    assert out.findings[0] is out.checks[0].findings[0]
    assert out.findings[0].path == QUOTED and "Zq7-s3cret" not in out.findings[0].code
    assert v.findings[0].path == "caf\udce9.py"  # the caller's verdict is untouched


# --- contents -------------------------------------------------------------------------------------

def _findings(proc):
    data = json.loads(proc.stdout)
    return [(f["path"], f["rule"], f["line"]) for f in data["findings"]], data["not_checked"]


def test_declared_encoding_is_how_python_reads_the_file(repo):
    repo.write("latin.py", "# -*- coding: latin-1 -*-\nname = 'café'\neval(name)\n".encode("latin-1"))
    repo.write("plain.py", "name = 'café'\neval(name)\n".encode("latin-1"))  # declares nothing: not UTF-8
    repo.add("latin.py", "plain.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    findings, not_checked = _findings(proc)
    assert ("latin.py", "SEN303", 3) in findings
    assert [nc["path"] for nc in not_checked] == ["plain.py"]  # once, and not also checked
    assert not [f for f in findings if f[0] == "plain.py"]


def test_utf7_declaration_cannot_hide_code(repo):
    # Valid UTF-8 bytes, but Python decodes by the declaration: this line is eval(data).
    repo.write("u7.py", b"# coding: utf-7\n+AGUAdgBhAGw-(data)\n")
    repo.add("u7.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert ("u7.py", "SEN303", 2) in _findings(proc)[0]
    # The same file as a diff on its own (no repository content to read).
    proc = run_sentinel("check", "--diff", "-", "--format", "json", "--no-memory", cwd=repo.path,
                        input=new_file_diff("n7.py", "# coding: utf-7\n+AGUAdgBhAGw-(data)\n"))
    assert_clean_exit(proc, 1)
    assert ("n7.py", "SEN303", 2) in _findings(proc)[0]


def test_a_declared_encoding_that_makes_hidden_line_breaks_is_refused(repo):
    # "+AAo-" is a line break in UTF-7: Python runs eval(x) on a line git does not have.
    repo.write("nl.py", b"# coding: utf-7\nx = 1 +AAo-eval(x)\n")
    repo.add("nl.py")
    proc = run_sentinel("check", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 2)
    assert "nl.py" in proc.stderr and "line breaks" in proc.stderr


def test_an_encoding_python_refuses_is_not_checked_and_says_why(repo):
    repo.write("bogus.py", b"# coding: no-such-codec\nx = 1\n")
    repo.add("bogus.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 0)
    assert [nc["path"] for nc in _findings(proc)[1]] == ["bogus.py"]


def test_a_config_file_diff_with_bytes_that_are_not_utf8_is_no_crash():
    # Found by benchmarks/fuzz.py: the gate-config check rebuilt pyproject.toml from diff lines holding
    # surrogates and crashed encoding them.
    from sentinel import engine
    from sentinel.config import Config
    from sentinel.sources import Change

    text = ("diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n"
            "@@ -1,2 +1,2 @@\n [tool.sentinel]\n-fail-level = \"error\" # caf\udce9\n+fail-level = \"warning\"\n")
    verdict = engine.run(Change(parse_diff(text), content_rev=None), Config())
    assert not verdict.errored, [c.reason for c in verdict.checks if c.reason]
