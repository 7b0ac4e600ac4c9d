"""The gate's behaviour end to end: filter modes, suppressions, baseline, config, exit codes."""

from __future__ import annotations

import json
import sys
import types

import pytest

from sentinel import engine
from sentinel.checks import CHECK_MODULES
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.errors import ConfigError
from sentinel.sources import Change
from tests.conftest import codes, gate_new_file, new_file_diff

BARE = "def f():\n    try:\n        g()\n    except:\n        pass\n"


def _modify_diff() -> str:
    # line 4 is added; line 2 ("except:") is context inside the hunk
    return ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,5 @@\n"
            " try:\n     g()\n except:\n     pass\n+x = 1\n")


def test_filter_modes_follow_reviewdog_vocabulary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no git repo, no working-tree file: content from the diff only
    cfg = validate({}, "test")
    for mode, expected in (("added", False), ("diff_context", True), ("file", True), ("nofilter", True)):
        cs = parse_diff(_modify_diff())
        v = engine.run(Change(cs), cfg, engine.RunOptions(filter_mode=engine.FilterMode(mode)))
        assert ("SEN301" in codes(v)) is expected, mode


def test_inline_suppression_applies_to_its_own_line_only():
    same = "try:\n    g()\nexcept:  # sentinel: ignore[SEN301]\n    pass\n"
    above = "try:\n    g()\n# sentinel: ignore[SEN301]\nexcept:\n    pass\n"
    other = "try:\n    g()\nexcept:  # sentinel: ignore[SEN999]\n    pass\n"
    in_string = "try:\n    g()\nexcept:\n    s = 'sentinel: ignore[SEN301]'\n"
    for src, suppressed in ((same, True), (above, False), (other, False)):
        v = gate_new_file("s.py", src)
        assert ("SEN301" in codes(v)) is (not suppressed)
        assert v.suppressed == (1 if suppressed else 0)
    assert "SEN301" in codes(gate_new_file("s.py", in_string))
    # A trailing suppression on one line says nothing about the next line.
    two = "try:\n    g()\nexcept:  # sentinel: ignore[SEN301]\n    pass\ntry:\n    h()\nexcept:\n    pass\n"
    v = gate_new_file("s.py", two)
    assert [f.line for f in v.findings if f.rule == "SEN301"] == [7]


@pytest.mark.parametrize("comment, suppressed", [
    ("# noqa", True),  # flake8/ruff blanket form: every rule on the line
    ("# noqa: E722", True),  # pycodestyle's bare-except code
    ("# noqa:E722,F401", True),
    ("# noqa: E7", True),  # flake8 prefix
    ("# NOQA: E722", True),
    ("# noqa: SEN301", True),
    ("# noqa: F401", False),  # another rule
    ("# pylint: disable=bare-except", True),
    ("# pylint: disable=unused-import", False),
    ("# nosec", False),  # bare except is not a security rule
    ("# type: ignore", False),
])
def test_other_linters_suppressions_are_honoured(comment, suppressed):
    v = gate_new_file("s.py", f"try:\n    g()\nexcept:  {comment}\n    pass\n")
    assert ("SEN301" in codes(v)) is (not suppressed)


@pytest.mark.parametrize("comment, suppressed", [
    ("# nosec", True),  # bandit's blanket form covers security rules
    ("# nosec B307", True),  # bandit's eval code
    ("# nosec: B307", True),
    ("# nosec B101", False),
    ("# noqa: S307", True),  # ruff's flake8-bandit code
    ("# noqa: PGH001", True),
    ("# noqa: E501", False),
])
def test_nosec_and_bandit_codes_for_security_rules(comment, suppressed):
    v = gate_new_file("s.py", f"def run(expr):\n    return eval(expr)  {comment}\n")
    assert ("SEN303" in codes(v)) is (not suppressed)


@pytest.mark.parametrize("comment, suppressed", [
    ("# type: ignore[union-attr]", True),  # mypy: the author knows the value may be None here
    ("# type: ignore", True),  # every type error of the line
    ("# pyright: ignore[reportOptionalMemberAccess]", True),
    ("# type: ignore[arg-type]", False),  # another type error
    ("# pyright: ignore[reportGeneralTypeIssues]", False),
])
def test_type_checker_ignores_cover_the_none_access_rule(comment, suppressed):
    v = gate_new_file("s.py", f"import re\nv = re.search('(a)', s).groups()  {comment}\n")
    assert ("SEN305" in codes(v)) is (not suppressed)


def test_severity_override_and_off():
    v = gate_new_file("s.py", BARE, {"severity": {"SEN301": "warning"}})
    assert [f.severity.value for f in v.findings if f.rule == "SEN301"] == ["warning"]
    assert v.passed  # warnings do not fail at the default fail level
    v = gate_new_file("s.py", BARE, {"severity": {"SEN301": "off"}})
    assert "SEN301" not in codes(v)


def test_per_path_ignores_and_exclude():
    assert "SEN301" not in codes(gate_new_file("tests/t.py", BARE, {"per-path-ignores": {"tests/**": ["SEN301"]}}))
    assert "SEN301" not in codes(gate_new_file("tests/t.py", BARE, {"per-path-ignores": {"tests/**": ["chaos"]}}))
    assert "SEN301" in codes(gate_new_file("src/t.py", BARE, {"per-path-ignores": {"tests/**": ["SEN301"]}}))
    assert codes(gate_new_file("vendor/t.py", BARE, {"exclude": ["vendor/**"]})) == []


def test_disabled_check_is_reported_skipped_not_passed():
    v = gate_new_file("s.py", BARE, {"chaos": {"enabled": False}})
    status = {r.check: r for r in v.checks}
    assert status["chaos"].status.value == "skipped" and "disabled" in status["chaos"].reason
    assert "SEN301" not in codes(v)


def test_crashing_check_is_an_error_never_a_pass(monkeypatch):
    crasher = types.ModuleType("sentinel_test_crasher")
    crasher.RULES = ()

    def check_file(ctx):
        raise RuntimeError("boom")

    crasher.check_file = check_file
    monkeypatch.setitem(sys.modules, "sentinel_test_crasher", crasher)
    monkeypatch.setitem(CHECK_MODULES, "crasher", "sentinel_test_crasher")
    v = gate_new_file("ok.py", "x = 1\n")
    res = {r.check: r for r in v.checks}["crasher"]
    assert res.status.value == "error" and "boom" in res.reason and "ok.py" in res.reason
    assert not v.passed and v.errored


def test_config_errors_name_key_and_file(repo):
    repo.write(".sentinel.toml", "[jail]\nbanned-import = ['flask']\n")
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    proc = repo.sentinel("check")
    assert proc.returncode == 2
    assert "jail.banned-import" in proc.stderr and ".sentinel.toml" in proc.stderr and "unknown key" in proc.stderr
    assert "Traceback" not in proc.stderr
    repo.write(".sentinel.toml", "[style]\nline-length = 'wide'\n")
    proc = repo.sentinel("check")
    assert proc.returncode == 2 and "style.line-length" in proc.stderr
    repo.write(".sentinel.toml", "this is = not toml [\n")
    proc = repo.sentinel("check")
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr


def test_config_from_pyproject_and_cache_is_used(repo):
    repo.write("pyproject.toml", "[tool.sentinel]\nfail-level = 'warning'\n[tool.sentinel.severity]\nSEN301 = 'warning'\n")
    repo.write("s.py", BARE)
    repo.add("s.py")
    first = repo.sentinel("check", "--no-memory")
    assert first.returncode == 1 and "SEN301" in first.stdout  # warning, but fail-level is warning
    cache = list((repo.path / ".git" / "sentinel").glob("config*.marshal"))
    assert len(cache) == 1
    second = repo.sentinel("check", "--no-memory")
    assert second.returncode == 1 and second.stdout == first.stdout
    shown = repo.sentinel("config")
    assert shown.returncode == 0 and '"fail_level": "warning"' in shown.stdout and "pyproject.toml" in shown.stdout


def test_invalid_config_value_types():
    with pytest.raises(ConfigError):
        validate({"severity": {"SEN301": "loud"}}, "x")
    with pytest.raises(ConfigError):
        validate({"filter-mode": "everything"}, "x")


def test_exit_codes_and_fail_level(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    assert repo.sentinel("check").returncode == 0
    repo.write("b.py", BARE)
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 1
    repo.write("pyproject.toml", "[tool.sentinel.severity]\nSEN301 = 'info'\n")
    assert repo.sentinel("check").returncode == 0
    assert repo.sentinel("check", "--fail-level", "info").returncode == 1


def test_baseline_survives_line_shifts_but_not_new_copies(repo):
    repo.write("s.py", BARE)
    repo.add("s.py")
    repo.commit()
    out = repo.sentinel("baseline")
    assert out.returncode == 0, out.stderr
    data = json.loads((repo.path / ".sentinel-baseline.json").read_text())
    assert data["version"] == 1 and any(e["rule"] == "SEN301" for e in data["findings"])
    # shift the old problem down and add an unrelated line: still accepted
    repo.write("s.py", "import os\n\n\n" + BARE)
    repo.add("s.py")
    assert repo.sentinel("check", "--filter-mode", "file").returncode == 0
    # a second copy of the same problem is new
    repo.write("s.py", "import os\n" + BARE + "\n\n" + BARE.replace("def f", "def h"))
    repo.add("s.py")
    proc = repo.sentinel("check", "--filter-mode", "file")
    assert proc.returncode == 1 and "SEN301" in proc.stdout
    findings = repo.sentinel("check", "--filter-mode", "file", "--no-baseline", "--format", "concise").stdout
    assert findings.count(": SEN301 ") == 2  # one line per finding (the text format's note also names the code)


def test_rules_and_explain(repo):
    rules = repo.sentinel("rules")
    assert rules.returncode == 0 and "SEN301" in rules.stdout and "SEN401" in rules.stdout
    ex = repo.sentinel("explain", "sen301")
    assert ex.returncode == 0
    for part in ("What it does", "Why it matters", "Example", "Use instead"):
        assert part in ex.stdout
    bad = repo.sentinel("explain", "SEN999")
    assert bad.returncode == 2 and "unknown rule code" in bad.stderr


def test_public_api_returns_typed_verdict(repo):
    import sentinel
    from sentinel.models import Verdict
    repo.write("b.py", BARE)
    repo.add("b.py")
    v = sentinel.check(cwd=str(repo.path))
    assert isinstance(v, Verdict) and not v.passed and "SEN301" in codes(v)
    v2 = sentinel.check(diff="", cwd=str(repo.path))
    assert v2.passed and v2.files_changed == 0


# --- config is validated, not silently accepted (issue 10) --------------------------------------------------

@pytest.mark.parametrize("raw, key", [
    ({"severity": {"SEN999": "off"}}, "severity.SEN999"),
    ({"per-path-ignores": {"**": [""]}}, "per-path-ignores.**"),  # "" would match every rule
    ({"per-path-ignores": {"**": []}}, "per-path-ignores.**"),
    ({"per-path-ignores": {"tests/**": ["chaoss"]}}, "per-path-ignores.tests/**"),
    ({"per-path-ignores": {"tests/**": ["S"]}}, "per-path-ignores.tests/**"),
    ({"style": {"line-length": -1}}, "style.line-length"),
    ({"style": {"line-length": 0}}, "style.line-length"),
    ({"memory": {"retention-days": -5}}, "memory.retention-days"),  # would wipe the store
    ({"jail": {"destructive": ["filesystem", "nuclear"]}}, "jail.destructive"),
    ({"jail": {"banned-imports": [" "]}}, "jail.banned-imports"),
    ({"exclude": ["#comment"]}, "exclude"),
    ({"compiled-globs": {}}, "compiled-globs"),
])
def test_wrong_config_is_an_error_naming_the_key(raw, key):
    with pytest.raises(ConfigError, match=key.replace("*", r"\*")):
        validate(raw, "pyproject.toml")


@pytest.mark.parametrize("raw", [
    {"severity": {"SEN301": "warning"}},
    {"per-path-ignores": {"tests/**": ["SEN3", "chaos", "*", "SEN301"]}},
    {"style": {"line-length": 100}},
])
def test_valid_config_passes(raw):
    validate(raw, "pyproject.toml")


@pytest.mark.parametrize("raw, says", [
    ({"severity": {"sen301": "off"}}, "severity.sen301: unknown rule code; write SEN301"),
    ({"per-path-ignores": {"tests/**": ["sen3"]}}, "'sen3' is not a rule code, a code prefix (\"SEN3\"), a check name "
                                                  "or \"*\" (write 'SEN3')"),
    ({"per-path-ignores": {"tests/**": ["Chaos"]}}, "(write 'chaos')"),
])
def test_rule_codes_and_check_names_are_matched_exactly_as_documented(raw, says):
    """`sen301 = "off"` was accepted silently; rule codes are spelled as `sentinel rules` prints them, and the
    message says what to write."""
    with pytest.raises(ConfigError) as err:
        validate(raw, "pyproject.toml")
    assert says in str(err.value)


@pytest.mark.parametrize("pattern, path, ignored", [
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/sub/a.py", False),  # fnmatch would say True
    ("**/gen", "deep/dir/gen/x.py", True),
    ("build/", "build/x.py", True),
    ("build/", "src/build/x.py", True),  # no slash but the trailing one: matches at any depth
    ("/build/", "src/build/x.py", False),
    ("*.py", "deep/x.py", True),
])
def test_path_patterns_have_gitignore_semantics(pattern, path, ignored):
    v = gate_new_file(path, BARE, {"per-path-ignores": {pattern: ["SEN301"]}})
    assert ("SEN301" not in codes(v)) is ignored
    v = gate_new_file(path, BARE, {"exclude": [pattern]})
    assert ("SEN301" not in codes(v)) is ignored


def test_baseline_does_not_let_a_new_copy_of_a_baselined_problem_through(tmp_path):
    """The hook sees added lines only: the old copy is not reported, but it still holds its baseline entry."""
    from sentinel import baseline
    from sentinel.config import validate as _validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change

    old = "def f():\n    try:\n        g()\n    except:\n        pass\n"
    all_files = parse_diff("diff --git a/m.py b/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/m.py\n"
                           "@@ -0,0 +1,5 @@\n" + "".join("+" + ln + "\n" for ln in old.splitlines()))
    accepted = engine.run(Change(all_files, content_rev=None), _validate({}, "t"),
                          engine.RunOptions(use_baseline=False)).findings
    path = tmp_path / ".sentinel-baseline.json"
    baseline.write(str(path), accepted)
    # The same problem copied into the file: the diff adds a second `except:` below the old one.
    added = ("def h():\n    try:\n        g()\n    except:\n        pass\n")
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,10 @@\n"
            + "".join(" " + ln + "\n" for ln in old.splitlines())
            + "".join("+" + ln + "\n" for ln in added.splitlines()))
    v = engine.run(Change(parse_diff(diff), content_rev=None), _validate({}, "t"),
                   engine.RunOptions(baseline_path=str(path)))
    assert [(f.rule, f.line) for f in v.findings if f.rule == "SEN301"] == [("SEN301", 9)]
    # A change that leaves the accepted copy alone and adds nothing like it stays clean.
    v = engine.run(Change(parse_diff(diff.replace("except:\n        pass\n+", "except:\n        pass\n+", 1)),
                          content_rev=None), _validate({}, "t"), engine.RunOptions(baseline_path=str(path),
                                                                                  filter_mode=engine.FilterMode.FILE))
    assert [(f.rule, f.line) for f in v.findings if f.rule == "SEN301"] == [("SEN301", 9)]


def test_noqa_after_a_multiline_string_covers_its_lines():
    """ruff's convention: the comment after the closing quotes speaks for the whole string."""
    long = "word " * 40
    src = f'README = """\\\n{long}\n{long}\n"""  # noqa: E501\n'
    v = gate_new_file("tests/test_a.py", src, {"style": {"line-length": 100}})
    assert "SEN202" not in codes(v)
    v = gate_new_file("tests/test_a.py", src.replace("  # noqa: E501", ""), {"style": {"line-length": 100}})
    assert "SEN202" in codes(v)


def _modification_diff(path_a: str, before_a: str, after_a: str, path_b: str | None = None,
                       after_b: str | None = None) -> str:
    import difflib
    out = f"diff --git a/{path_a} b/{path_a}\n" + "".join(
        difflib.unified_diff(before_a.splitlines(True), after_a.splitlines(True), f"a/{path_a}", f"b/{path_a}"))
    if path_b:
        out += new_file_diff(path_b, after_b)
    return out


OLD_MODULE = ("import os\n\n\ndef load(path):\n    try:\n        return open(path).read()\n    except:\n"
              "        return None\n\n\ndef other():\n    return 1\n")


def test_code_moved_to_another_file_is_not_the_change_s_own():
    from sentinel.config import validate as _validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    moved_out = "import os\n\n\ndef other():\n    return 1\n"
    new_module = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        return None\n"
    diff = _modification_diff("pkg/a.py", OLD_MODULE, moved_out, "pkg/loading.py", new_module)
    v = engine.run(Change(parse_diff(diff), content_rev=None), _validate({}, "t"), engine.RunOptions())
    [f] = [f for f in v.findings if f.rule == "SEN301"]
    assert f.severity.value == "info" and "moved or restored code" in f.message and v.passed


def test_reindented_code_is_moved_but_an_edit_inside_it_is_new():
    from sentinel.config import validate as _validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    wrapped = OLD_MODULE.replace("def load(path):\n    try:\n        return open(path).read()\n    except:\n"
                                 "        return None\n",
                                 "def load(path):\n    with lock:\n        try:\n            return open(path).read()\n"
                                 "        except:\n            return None\n")
    v = engine.run(Change(parse_diff(_modification_diff("pkg/a.py", OLD_MODULE, wrapped)), content_rev=None),
                   _validate({}, "t"), engine.RunOptions())
    assert [f.severity.value for f in v.findings if f.rule == "SEN301"] == ["info"]
    # A bare except written into moved code is the author's own.
    edited = OLD_MODULE.replace("    except:\n        return None\n", "    except:\n        log()\n        return None\n")
    edited = edited.replace("except:", "except:", 1)
    before = OLD_MODULE.replace("    except:\n", "    except OSError:\n")
    v = engine.run(Change(parse_diff(_modification_diff("pkg/a.py", before, edited)), content_rev=None),
                   _validate({}, "t"), engine.RunOptions())
    assert [f.severity.value for f in v.findings if f.rule == "SEN301"] == ["error"]


def test_moved_security_findings_keep_their_severity():
    from sentinel.config import validate as _validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    old = "def run(expr):\n    value = eval(expr)\n    return value\n\n\ndef keep():\n    return 1\n"
    diff = _modification_diff("pkg/a.py", old, "def keep():\n    return 1\n", "pkg/run.py",
                              "def run(expr):\n    value = eval(expr)\n    return value\n")
    v = engine.run(Change(parse_diff(diff), content_rev=None), _validate({}, "t"), engine.RunOptions())
    assert [f.severity.value for f in v.findings if f.rule == "SEN303"] == ["error"]


def test_a_revert_restores_code_it_did_not_write(repo):
    """`git revert` brings back what a commit removed: its findings are the old code's, shown as information."""
    repo.write(".sentinel.toml", "[drift]\nenabled = false\n")
    repo.write("app.py", "def load(p):\n    try:\n        return read(p)\n    except:\n        return None\n")
    repo.add(".sentinel.toml", "app.py")
    repo.commit("base")
    repo.write("app.py", "def load(p):\n    return read(p)\n")
    repo.add("app.py")
    removed = repo.commit("Simplify load")
    repo.write("app.py", "def load(p):\n    try:\n        return read(p)\n    except:\n        return None\n")
    repo.add("app.py")
    repo.git("commit", "-q", "-m", f'Revert "Simplify load"\n\nThis reverts commit {removed}.\n')
    proc = repo.sentinel("check", "--range", "HEAD^..HEAD", "--no-memory", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [f] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "SEN301"]
    assert f["severity"] == "info" and "restored" in f["message"]


def test_a_revert_message_naming_no_ancestor_restores_nothing(repo):
    repo.write(".sentinel.toml", "[drift]\nenabled = false\n")
    repo.write("app.py", "x = 1\n")
    repo.add(".sentinel.toml", "app.py")
    repo.commit("base")
    repo.write("app.py", "def load(p):\n    try:\n        return read(p)\n    except:\n        return None\n")
    repo.add("app.py")
    repo.git("commit", "-q", "-m", "Revert things\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n")
    proc = repo.sentinel("check", "--range", "HEAD^..HEAD", "--no-memory")
    assert proc.returncode == 1 and "SEN301" in proc.stdout
