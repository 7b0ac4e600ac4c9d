"""The gateconfig check: a change to Sentinel's own configuration is shown setting by setting, loosening
settings as warnings (SEN801), tightening ones as information (SEN802)."""

from __future__ import annotations

import difflib

from hypothesis import given
from hypothesis import strategies as st

from sentinel.checks.gateconfig import reconstruct_before
from sentinel.configdiff import apply_diff
from sentinel.diffparse import parse_diff
from tests.conftest import GitRepo

BASE = '[tool.black]\nline-length = 100\n\n[tool.sentinel]\nfail-level = "error"\nexclude = []\n'


def _diff(path: str, before: str, after: str):
    body = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=1))
    return parse_diff(f"diff --git a/{path} b/{path}\n{body}").files[0]


@given(st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=12),
       st.lists(st.sampled_from(["a", "b", "x", "y", ""]), max_size=12))
def test_before_and_after_rebuild_each_other_from_the_diff(before, after):
    b, a = "".join(f"{x}\n" for x in before), "".join(f"{x}\n" for x in after)
    if b == a:
        return
    fc = _diff("f.toml", b, a)
    assert reconstruct_before(a.splitlines(), fc) == b.splitlines()
    assert apply_diff(b.splitlines(), fc) == a.splitlines()


def _repo(tmp_path, script) -> GitRepo:
    r = GitRepo(tmp_path / "r", script)
    r.write("pyproject.toml", BASE)
    r.write("app.py", "x = 1\n")
    r.add("pyproject.toml", "app.py")
    r.commit("base")
    return r


def test_a_staged_loosening_is_a_warning_on_the_changed_line(tmp_path, installed_sentinel):
    r = _repo(tmp_path, installed_sentinel)
    r.write("pyproject.toml", BASE.replace("exclude = []", 'exclude = ["app.py"]\n\n[tool.sentinel.severity]\n'
                                                           'SEN301 = "off"\nSEN202 = "error"'))
    r.add("pyproject.toml")
    out = r.sentinel("check", "--no-memory", "--format", "concise")
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("pyproject.toml:")]
    assert any(":6:1: SEN801 [warning] exclude: [] -> [\"app.py\"] loosens" in ln for ln in lines), out.stdout
    assert any("SEN801 [warning] severity.SEN301: (unset) -> \"off\" loosens" in ln for ln in lines)
    assert any("SEN802 [info] severity.SEN202: (unset) -> \"error\" tightens" in ln for ln in lines)
    assert out.returncode == 0  # warnings and infos: below the default fail level


def test_edits_outside_tool_sentinel_are_not_about_the_gate(tmp_path, installed_sentinel):
    r = _repo(tmp_path, installed_sentinel)
    r.write("pyproject.toml", BASE.replace("line-length = 100", "line-length = 110"))
    r.add("pyproject.toml")
    out = r.sentinel("check", "--no-memory")
    assert "SEN80" not in out.stdout and "gateconfig passed" in out.stdout


def test_the_check_knows_the_same_config_files_as_the_comparison():
    from sentinel.checks import gateconfig
    from sentinel.configdiff import CONFIG_FILES

    assert gateconfig._CONFIG_FILES == CONFIG_FILES


def _diff_only_verdict(context_lines: int, checks: dict | None = None):
    """A pyproject.toml edit given as a diff alone (no content to read), with `context_lines` of context."""
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.sources import Change

    before = BASE + "".join(f"[tool.other{i}]\nkey = {i}\n\n" for i in range(6))
    after = before.replace("exclude = []", 'exclude = ["app.py"]')
    body = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/pyproject.toml", "b/pyproject.toml", n=context_lines))
    cs = parse_diff(f"diff --git a/pyproject.toml b/pyproject.toml\n{body}", source="test")
    config = {name: {"enabled": on} for name, on in (checks or {}).items()}
    return engine.run(Change(cs, content_rev=None), validate(config, "test"), engine.RunOptions())


def _gateconfig(verdict):
    return next(c for c in verdict.checks if c.check == "gateconfig")


def test_a_diff_that_shows_the_whole_file_is_judged_whatever_ran_before():
    # the file's text is the diff's lines: judged the same whether or not another check read the text first
    for checks in (None, {"style": False, "chaos": False, "placeholder": False, "jail": False}):
        result = _gateconfig(_diff_only_verdict(100_000, checks))
        assert [f.rule for f in result.findings] == ["SEN801"], (checks, result)


def test_a_diff_with_gaps_in_the_config_file_is_skipped_and_says_why():
    result = _gateconfig(_diff_only_verdict(1))
    assert result.status.value == "skipped" and not result.findings
    assert "pyproject.toml after the change is not available" in result.reason
