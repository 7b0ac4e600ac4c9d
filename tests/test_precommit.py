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


# -- file selection, --all-files, versioning: a real .pre-commit-config.yaml ----------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.conftest import PROJECT  # noqa: E402

BARE = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        return ''\n"
WIPE = "#!/bin/sh\nrm -rf /\n"


def _readme_snippet() -> tuple[str, str]:
    """The README's pre-commit configuration: (its yaml, the rev it names)."""
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(repos:\n.*?)```", text, flags=re.S)
    assert block, "the README has no pre-commit configuration block"
    rev = re.search(r"^\s*rev:\s*(\S+)", block.group(1), flags=re.M)
    return block.group(1), rev.group(1)


def test_one_manifest_for_commit_commit_msg_and_push():
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    assert {"pre-commit", "pre-merge-commit", "pre-push", "manual"} <= set(hooks["sentinel"]["stages"])
    assert hooks["sentinel-commit-msg"]["stages"] == ["commit-msg"]
    assert hooks["sentinel"].get("pass_filenames", True) is True  # pre-commit's file selection reaches us


@pytest.fixture(scope="module")
def snapshot_rev(project_snapshot) -> str:
    """The snapshot's commit: the hook as this checkout has it (the README's own rev is tested in test_readme)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_snapshot, capture_output=True, text=True,
                          check=True).stdout.strip()


def _configured_repo(tmp_path, snapshot, rev: str, hook_options: str = "") -> GitRepo:
    from sentinel.report.links import PROJECT_URL

    snippet, readme_rev = _readme_snippet()
    config = snippet.replace(PROJECT_URL, str(snapshot)).replace(readme_rev, rev)
    if hook_options:
        config = config.replace("      - id: sentinel              ",
                                "      - id: sentinel\n" + hook_options + "        #", 1)
    r = GitRepo(tmp_path / "r")
    r.write(".pre-commit-config.yaml", config)
    r.write("app.py", BARE)
    r.write("legacy/old.py", BARE.replace("load", "old_load"))
    r.write("scripts/wipe.sh", WIPE)
    r.write("clean.py", "def ok():\n    return 1\n")
    r.add(".pre-commit-config.yaml", "app.py", "legacy/old.py", "scripts/wipe.sh", "clean.py")
    r.commit("existing code")
    return r


def _run(repo: GitRepo, home, *args: str):
    return subprocess.run([*PRE_COMMIT, "run", "sentinel", "--verbose", *args], cwd=repo.path, capture_output=True,
                          text=True, env=_env(home), timeout=900)


def test_all_files_checks_the_whole_tree(tmp_path, pre_commit_home, project_snapshot, snapshot_rev):
    repo = _configured_repo(tmp_path, project_snapshot, snapshot_rev)
    plain = _run(repo, pre_commit_home)  # nothing staged: pre-commit has no file to give the hook
    assert plain.returncode == 0 and "no files to check" in plain.stdout.lower(), plain.stdout + plain.stderr
    out = _run(repo, pre_commit_home, "--all-files")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "app.py" in out.stdout and "legacy/old.py" in out.stdout and "SEN301" in out.stdout
    assert "SEN106" in out.stdout and "scripts/wipe.sh" in out.stdout


def test_exclude_files_and_types_are_honoured(tmp_path, pre_commit_home, project_snapshot, snapshot_rev):
    excluded = _configured_repo(tmp_path / "a", project_snapshot, snapshot_rev, "        exclude: ^legacy/\n")
    out = _run(excluded, pre_commit_home, "--all-files")
    assert out.returncode == 1 and "app.py" in out.stdout and "legacy/old.py" not in out.stdout, out.stdout

    only_python = _configured_repo(tmp_path / "b", project_snapshot, snapshot_rev, "        types: [python]\n")
    out = _run(only_python, pre_commit_home, "--all-files")
    assert "SEN301" in out.stdout and "wipe.sh" not in out.stdout and "SEN106" not in out.stdout, out.stdout

    only_scripts = _configured_repo(tmp_path / "c", project_snapshot, snapshot_rev, "        files: ^scripts/\n")
    out = _run(only_scripts, pre_commit_home, "--all-files")
    assert out.returncode == 1 and "SEN106" in out.stdout and "SEN301" not in out.stdout, out.stdout


def test_a_commit_checks_only_the_staged_change(tmp_path, pre_commit_home, project_snapshot, snapshot_rev):
    repo = _configured_repo(tmp_path, project_snapshot, snapshot_rev)
    repo.write("clean.py", "def ok():\n    return 1\n\n\ndef also_ok():\n    return 2\n")
    repo.add("clean.py")
    out = _run(repo, pre_commit_home)
    assert out.returncode == 0, out.stdout + out.stderr  # the old problems in other files are not this commit's
    repo.write("clean.py", "def ok():\n    try:\n        return 1\n    except:\n        pass\n")
    repo.add("clean.py")
    out = _run(repo, pre_commit_home)
    assert out.returncode == 1 and "clean.py" in out.stdout and "app.py" not in out.stdout, out.stdout


def test_named_files_from_the_command_line(tmp_path, installed_sentinel):
    repo = GitRepo(tmp_path / "r", installed_sentinel)
    repo.write("app.py", BARE)
    repo.write("other.py", BARE)
    repo.add("app.py", "other.py")
    repo.commit("init")
    out = repo.sentinel("check", "--no-memory", "--format", "concise", "app.py")
    assert out.returncode == 1 and "app.py:4:5: SEN301" in out.stdout and "other.py" not in out.stdout, out.stdout
    outside = repo.sentinel("check", "--no-memory", "../elsewhere.py")
    assert outside.returncode == 2 and "not a file of the repository" in outside.stderr
    untracked = repo.write("new.py", BARE)
    assert untracked.exists()
    out = repo.sentinel("check", "--no-memory", "new.py")
    assert "new.py: not checked (not in the index)" in out.stdout


def test_bare_check_with_names_skips_argparse_with_the_parsers_own_defaults():
    from sentinel.cli import build_parser
    from sentinel.commands.core import check_defaults

    names = ["a.py", "pkg/b.py"]
    assert vars(build_parser("check").parse_args(["check", *names])) == vars(check_defaults(names))
