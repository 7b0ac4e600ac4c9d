"""The real pre-commit tool runs our hook from this checkout (`pre-commit try-repo`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import GitRepo

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def _env(home) -> dict:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    for var in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "SENTINEL_TASK"):
        env.pop(var, None)
    return env


def _try_repo(repo: GitRepo, home, project, *extra: str, hook: str = "sentinel"):
    return subprocess.run([*PRE_COMMIT, "try-repo", str(project), hook, "--verbose", *extra], cwd=repo.path,
                          capture_output=True, text=True, env=_env(home), timeout=900)


@pytest.fixture
def clean_repo(tmp_path):
    r = GitRepo(tmp_path / "r")
    r.write("app.py", "def add(a, b):\n    return a + b\n")
    r.add("app.py")
    r.commit("init")
    return r


@pytest.mark.skipif(shutil.which("git") is None, reason="git is required")
def test_clean_change_passes_and_bare_except_in_new_file_is_blocked(clean_repo, pre_commit_home, project_snapshot):
    clean_repo.write("app.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    clean_repo.add("app.py")
    ok = _try_repo(clean_repo, pre_commit_home, project_snapshot)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout

    clean_repo.write("new_module.py", "def load():\n    try:\n        return open('x').read()\n    except:\n        pass\n")
    clean_repo.add("new_module.py")
    blocked = _try_repo(clean_repo, pre_commit_home, project_snapshot)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "Failed" in blocked.stdout and "SEN301" in blocked.stdout and "new_module.py" in blocked.stdout


def test_pre_push_checks_the_pushed_range(clean_repo, pre_commit_home, project_snapshot):
    base = clean_repo.git("rev-parse", "HEAD").strip()
    clean_repo.write("pushed.py", "def run(cmd):\n    return eval(cmd)\n")
    clean_repo.add("pushed.py")
    head = clean_repo.commit("add runner")
    out = _try_repo(clean_repo, pre_commit_home, project_snapshot,
                    "--hook-stage", "pre-push", "--from-ref", base, "--to-ref", head)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "SEN303" in out.stdout and "pushed.py" in out.stdout
    # the same range without the problem passes
    clean_repo.write("pushed.py", "import ast\n\n\ndef run(cmd):\n    return ast.literal_eval(cmd)\n")
    clean_repo.add("pushed.py")
    head2 = clean_repo.commit("safer")
    ok = _try_repo(clean_repo, pre_commit_home, project_snapshot,
                   "--hook-stage", "pre-push", "--from-ref", head, "--to-ref", head2)
    assert ok.returncode == 0, ok.stdout + ok.stderr
