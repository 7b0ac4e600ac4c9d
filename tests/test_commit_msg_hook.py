"""`sentinel commit-msg MSGFILE` and the `sentinel-commit-msg` pre-commit hook run by the real pre-commit.

The hook blocks a commit only when the staged change or a given report contradicts what the message claims;
a claim nothing backs is shown as advice and the commit goes through.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import GitRepo

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
SRC = "def add(a, b):\n    return a + b\n"
NEW = SRC + "\n\ndef sub(a, b):\n    return a - b\n"
TEST = "from app import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"


@pytest.fixture
def staged(tmp_path, installed_sentinel):
    r = GitRepo(tmp_path / "r", installed_sentinel)
    r.write("app.py", SRC)
    r.add("app.py")
    r.commit("init")
    r.write("app.py", NEW)
    r.add("app.py")
    return r


def _msg(repo: GitRepo, text: str, name: str = "COMMIT_EDITMSG") -> str:
    path = repo.path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _hook(repo: GitRepo, text: str, *args: str, env: dict | None = None):
    """The console script of a non-editable install (conftest), as the hook runs it."""
    return repo.sentinel("commit-msg", _msg(repo, text), *args, env={"SENTINEL_TASK": "", **(env or {})})


def test_contradicted_claim_fails_with_code_and_line(staged):
    out = _hook(staged, "Add sub\n\nAdded unit tests for sub.\n")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "SEN601" in out.stdout and "COMMIT_MSG" in out.stdout and "Added unit tests" in out.stdout
    assert "contradicted" in out.stdout


def test_failing_report_contradicts_tests_pass(staged, tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text('<testsuite tests="3" failures="1" errors="0"/>')
    out = _hook(staged, "Add sub\n\nAll tests pass.\n", "--junit", str(report))
    assert out.returncode == 1 and "SEN601" in out.stdout and "1 failed" in out.stdout, out.stdout + out.stderr


def test_unsupported_claim_is_advice_and_passes(staged):
    out = _hook(staged, "Add sub\n\nAll tests pass.\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SEN601" in out.stdout and "info" in out.stdout and "All tests pass" in out.stdout


def test_squash_message_bullets_are_not_claims(staged):
    text = ("Add sub (#3)\n\n* Add sub\n\n* Make tests pass locally\n\n* Speed up sub\n\n* fix typo\n\n"
            "---------\n\nCo-authored-by: A <a@example.com>\n")
    out = _hook(staged, text, "--format", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    import json
    assert json.loads(out.stdout)["findings"] == []


def test_honest_message_passes(staged):
    out = _hook(staged, "Add sub\n\nA subtraction helper next to add.\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "claims passed" in out.stdout


def test_claim_backed_by_the_staged_change_passes(staged):
    staged.write("tests/test_app.py", TEST)
    staged.add("tests/test_app.py")
    out = _hook(staged, "Add sub\n\nAdded a unit test for sub.\n")
    assert out.returncode == 0, out.stdout + out.stderr


def test_comments_and_scissors_section_are_ignored(staged):
    text = ("Add sub\n\n# All tests pass (a comment: git drops it)\n"
            "# ------------------------ >8 ------------------------\n"
            "diff --git a/app.py b/app.py\n+All tests pass. Production ready.\n")
    out = _hook(staged, text)
    assert out.returncode == 0, out.stdout + out.stderr


def test_custom_comment_char(staged):
    staged.git("config", "core.commentChar", ";")
    out = _hook(staged, "Add sub\n; All tests pass\n")
    assert out.returncode == 0, out.stdout + out.stderr


def test_empty_message_is_left_to_git(staged):
    out = _hook(staged, "# only comments\n\n")
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr


def test_only_intent_checks_run(staged):
    # A bare except in the staged change is the pre-commit hook's business, not the commit-msg hook's.
    staged.write("bad.py", "def f():\n    try:\n        return 1\n    except:\n        pass\n")
    staged.add("bad.py")
    out = _hook(staged, "Add sub and f\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SEN301" not in out.stdout


def test_drift_runs_when_a_task_is_known(staged):
    task = "Fix the login page redirect loop after the OAuth callback returns"
    out = _hook(staged, "Add sub\n", env={"SENTINEL_TASK": task})
    assert out.returncode == 1 and "SEN501" in out.stdout, out.stdout + out.stderr


def test_missing_message_file_is_an_error(staged):
    out = staged.sentinel("commit-msg", str(staged.path / "nope"))
    assert out.returncode == 2 and "cannot read commit message file" in out.stderr


# --- the real pre-commit ---------------------------------------------------------------------------

def _env(home) -> dict:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    for var in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "SENTINEL_TASK"):
        env.pop(var, None)
    return env


def _try_repo(repo: GitRepo, home, project, msgfile: str):
    return subprocess.run([*PRE_COMMIT, "try-repo", str(project), "sentinel-commit-msg", "--verbose",
                           "--hook-stage", "commit-msg", "--commit-msg-filename", msgfile],
                          cwd=repo.path, capture_output=True, text=True, env=_env(home), timeout=900)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is required")
def test_pre_commit_commit_msg_hook(staged, pre_commit_home, project_snapshot):
    bad = _try_repo(staged, pre_commit_home, project_snapshot,
                    _msg(staged, "Add sub\n\nAdded unit tests for sub.\n", "MSG"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "SEN601" in bad.stdout

    ok = _try_repo(staged, pre_commit_home, project_snapshot, _msg(staged, "Add sub\n\nA subtraction helper.\n", "MSG"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
