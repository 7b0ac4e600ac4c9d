"""The fixer cannot be turned against its user (docs/security.md, "The fixer"): no write through a link, none
in .git, none over content that changed since the check.

The first test is the attack as reported: a cloned repository commits links named like the fixer's old
temporary files (`<file>.sentinel-fix.<pid>`) pointing at `.git/hooks/pre-commit`, and the user runs the
installed `sentinel check --fix --all-files`."""

from __future__ import annotations

import os
import stat

import pytest

from sentinel.fix import planner, safewrite
from tests.test_fix import fix_staged, stage

TRAILING = "def f():   \n    return 1\n"


def test_committed_links_named_like_temporary_files_never_install_a_git_hook(repo):
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    repo.write("build.sh", "#!/bin/sh\necho built   \n")
    os.chmod(repo.path / "build.sh", 0o755)
    repo.add("build.sh")
    # links for a wide range of pids, and for the name the fixer uses now without its random part
    for pid in range(1, 4000):
        os.symlink(".git/hooks/pre-commit", repo.path / f"build.sh.sentinel-fix.{pid}")
    os.symlink(".git/hooks/pre-commit", repo.path / ".build.sh.sentinel-fix-")
    repo.git("add", "--", *[f"build.sh.sentinel-fix.{pid}" for pid in range(1, 4000)], ".build.sh.sentinel-fix-")
    repo.commit("a repository someone else wrote")
    out = repo.sentinel("check", "--fix", "--all-files", "--no-memory")
    assert not hook.exists(), "the fixer wrote a git hook"
    assert out.returncode == 1, out.stdout + out.stderr  # the fix was made: re-stage
    fixed = repo.path / "build.sh"
    assert fixed.read_text() == "#!/bin/sh\necho built\n" and not fixed.is_symlink()
    assert stat.S_IMODE(fixed.stat().st_mode) == 0o755  # the mode is kept, set through the descriptor
    leftovers = [p.name for p in repo.path.iterdir() if ".sentinel-fix-" in p.name and not p.is_symlink()]
    assert leftovers == []


def test_a_file_replaced_by_a_link_after_the_check_is_refused_and_the_link_target_untouched(repo, tmp_path):
    stage(repo, {"m.py": TRAILING})
    plan, _ = fix_staged(repo)
    victim = tmp_path / "victim.py"
    victim.write_text(TRAILING)
    (repo.path / "m.py").unlink()
    (repo.path / "m.py").symlink_to(victim)
    assert planner.write(plan, str(repo.path)) == []
    assert "symbolic link" in plan.refused[-1][1]
    assert victim.read_text() == TRAILING and (repo.path / "m.py").is_symlink()


def test_a_file_edited_after_the_check_is_refused(repo):
    stage(repo, {"m.py": TRAILING})
    plan, _ = fix_staged(repo)
    assert plan.changed_files
    repo.write("m.py", TRAILING + "# typed while the fix was planned\n")
    assert planner.write(plan, str(repo.path)) == []
    assert plan.refused[-1] == ("m.py", "it changed since it was checked: run again")
    assert (repo.path / "m.py").read_text().endswith("# typed while the fix was planned\n")


def test_a_directory_link_on_the_path_is_refused_at_planning(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "m.py").write_text(TRAILING)
    stage(repo, {"pkg/m.py": TRAILING})
    (repo.path / "pkg" / "m.py").unlink()
    (repo.path / "pkg").rmdir()
    (repo.path / "pkg").symlink_to(outside)
    plan, _ = fix_staged(repo)
    assert plan.files == [] and plan.refused and "symbolic link" in plan.refused[0][1]
    assert (outside / "m.py").read_text() == TRAILING


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", "sub/.GIT/config", "../x.py", "/etc/passwd", "a/./b.py",
                                  "a//b.py", ""])
def test_paths_in_git_or_outside_the_tree_are_never_read_or_written(repo, path):
    with pytest.raises(safewrite.Refused):
        safewrite.read(str(repo.path), path)
    with pytest.raises(safewrite.Refused):
        safewrite.replace(str(repo.path), path, b"", b"x")


def test_a_temporary_name_that_exists_is_never_opened_and_another_is_chosen(repo, monkeypatch, tmp_path):
    target = tmp_path / "target"
    target.write_text("untouched\n")
    os.chmod(target, 0o600)
    repo.write("m.py", TRAILING)
    os.chmod(repo.path / "m.py", 0o755)
    names = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(safewrite.secrets, "token_hex", lambda n: next(names))
    os.symlink(target, repo.path / ".m.py.sentinel-fix-aaaa")
    safewrite.replace(str(repo.path), "m.py", TRAILING.encode(), b"def f():\n    return 1\n")
    assert target.read_text() == "untouched\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # no chmod through the link either
    assert (repo.path / "m.py").read_text() == "def f():\n    return 1\n"
    assert stat.S_IMODE((repo.path / "m.py").stat().st_mode) == 0o755
    assert (repo.path / ".m.py.sentinel-fix-aaaa").is_symlink()
    assert not (repo.path / ".m.py.sentinel-fix-bbbb").exists()


def test_set_id_bits_are_not_carried_onto_the_fixed_file(repo):
    repo.write("s.sh", "echo hi   \n")
    os.chmod(repo.path / "s.sh", 0o4755)
    safewrite.replace(str(repo.path), "s.sh", b"echo hi   \n", b"echo hi\n")
    assert stat.S_IMODE((repo.path / "s.sh").stat().st_mode) == 0o755


def test_a_fifo_or_a_directory_is_not_a_file_to_fix(repo):
    os.mkfifo(repo.path / "pipe.py")
    (repo.path / "dir.py").mkdir()
    for name in ("pipe.py", "dir.py"):
        with pytest.raises(safewrite.Refused, match="not a regular file"):
            safewrite.read(str(repo.path), name)


@pytest.mark.parametrize("how", ["edited", "same-bytes-new-file", "link"])
def test_a_file_changed_while_the_fix_is_written_is_refused_and_left_as_it_became(repo, monkeypatch, tmp_path, how):
    # the re-read right before the rename: the file changes after the first check, while the temporary
    # file is written (an editor saving, a checkout, a link swapped in)
    victim = tmp_path / "victim.py"
    victim.write_text(TRAILING)
    repo.write("m.py", TRAILING)
    create = safewrite._create_exclusive

    def and_meanwhile(dir_fd, name):
        made = create(dir_fd, name)
        path = repo.path / "m.py"
        if how == "edited":
            path.write_text(TRAILING + "# saved meanwhile\n")
        elif how == "same-bytes-new-file":  # another file now (the checked one kept aside, so its inode lives)
            path.rename(tmp_path / "aside.py")
            path.write_text(TRAILING)
        else:
            path.unlink()
            path.symlink_to(victim)
        return made

    monkeypatch.setattr(safewrite, "_create_exclusive", and_meanwhile)
    with pytest.raises(safewrite.Refused) as exc:
        safewrite.replace(str(repo.path), "m.py", TRAILING.encode(), b"def f():\n    return 1\n")
    assert "changed while the fix was written" in str(exc.value) or "symbolic link" in str(exc.value)
    assert victim.read_text() == TRAILING
    after = repo.path / "m.py"
    assert after.is_symlink() if how == "link" else after.read_text().startswith(TRAILING)
    assert [p.name for p in repo.path.iterdir() if ".sentinel-fix-" in p.name] == []  # its temporary file removed
