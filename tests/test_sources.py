"""The change model and its sources, against real git repositories."""

from __future__ import annotations

from sentinel import sources
from sentinel.diffparse import parse_diff
from sentinel.models import FileStatus
from tests.conftest import new_file_diff

BARE = "def f():\n    try:\n        g()\n    except:\n        pass\n"


def test_staged_includes_new_files_with_new_line_numbers(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit()
    repo.write("a.py", "x = 1\ny = 2\n")
    repo.write("new.py", "print('hi')\n")
    repo.add("a.py", "new.py")
    cs = sources.staged(str(repo.path)).changeset
    by = {f.path: f for f in cs.files}
    assert by["new.py"].status is FileStatus.ADDED
    assert by["new.py"].added == {1: "print('hi')"}
    assert by["a.py"].status is FileStatus.MODIFIED
    assert by["a.py"].added == {2: "y = 2"}
    assert by["a.py"].language == "python"


def test_staged_works_before_the_first_commit(repo):
    repo.write("first.py", BARE)
    repo.add("first.py")
    cs = sources.staged(str(repo.path)).changeset
    assert [f.path for f in cs.files] == ["first.py"]
    assert len(cs.files[0].added) == 5


def test_content_comes_from_the_index_not_the_working_tree(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit()
    repo.write("a.py", BARE)
    repo.add("a.py")
    repo.write("a.py", "clean = True\n")  # unstaged edit must not hide the staged problem
    proc = repo.sentinel("check")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SEN301" in proc.stdout


def test_range_two_dot_and_three_dot(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feat.py", "y = 2\n")
    repo.add("feat.py")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write("main_only.py", "z = 3\n")
    repo.add("main_only.py")
    repo.commit("main moves on")
    two = sources.commit_range("feature..main", str(repo.path)).changeset
    three = sources.commit_range("main...feature", str(repo.path)).changeset
    # A..B is the plain diff of the two trees; A...B only what B did since the merge base
    assert {f.path for f in two.files} == {"feat.py", "main_only.py"}
    assert {f.path for f in three.files} == {"feat.py"}
    assert three.base and three.head and three.message.strip() == "feature"
    assert base


def test_rename_delete_binary(repo):
    repo.write("old.py", "a = 1\nb = 2\nc = 3\n")
    repo.write("gone.txt", "bye\n")
    repo.add("old.py", "gone.txt")
    repo.commit()
    repo.git("mv", "old.py", "new.py")
    repo.git("rm", "-q", "gone.txt")
    repo.write("img.png", b"\x89PNG\r\n\x1a\n\0\0\0binary")
    repo.add("img.png")
    cs = sources.staged(str(repo.path)).changeset
    by = {f.path: f for f in cs.files}
    assert by["new.py"].status is FileStatus.RENAMED and by["new.py"].old_path == "old.py"
    assert by["gone.txt"].status is FileStatus.DELETED
    assert by["img.png"].status is FileStatus.BINARY and by["img.png"].is_binary


def test_crlf_lines_are_recorded(repo):
    repo.git("config", "core.autocrlf", "false")
    repo.write("w.py", b"a = 1\r\nb = 2\r\n")
    repo.add("w.py")
    f = sources.staged(str(repo.path)).changeset.files[0]
    assert f.added == {1: "a = 1", 2: "b = 2"}
    assert f.crlf_lines == {1, 2}


def test_all_files_treats_tracked_tree_as_added(repo):
    repo.write("a.py", "x = 1\n")
    repo.write("pkg/b.py", "y = 2\nz = 3\n")
    repo.add("a.py", "pkg/b.py")
    repo.commit()
    cs = sources.all_files(str(repo.path)).changeset
    assert {f.path: len(f.added) for f in cs.files} == {"a.py": 1, "pkg/b.py": 2}
    assert all(f.status is FileStatus.ADDED for f in cs.files)


def test_parse_quoted_unicode_path():
    diff = new_file_diff("café.py", "x = 1\n").replace("a/café.py b/café.py", '"a/caf\\303\\251.py" "b/caf\\303\\251.py"')
    diff = diff.replace("+++ b/café.py", '+++ "b/caf\\303\\251.py"')
    cs = parse_diff(diff)
    assert cs.files[0].path == "café.py"


def test_pre_push_env_range(monkeypatch):
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "abc")
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "def")
    assert sources.pre_push_range() == "abc...def"


def test_whole_files_are_the_lines_a_diff_of_their_addition_gives(repo):
    # A whole file (--all-files, or a file pre-commit names that the change does not touch) is the same change as
    # its addition staged: the same lines, the same CRLF lines, CR-free files included (built in C there).
    texts = {"lf.py": "a = 1\n\nb = 2\n", "crlf.py": "a = 1\r\nb = 2\r\n", "mixed.py": "a = 1\r\nb = 2\nc\r\n",
             "lone_cr.py": "a = 1\rb = 2\n", "no_eol.py": "x = 1\ny = 2", "empty.py": "", "blank.py": "\n\n"}
    for name, text in texts.items():
        repo.write(name, text.encode())
    repo.add(*texts)
    staged = {f.path: f for f in sources.staged(str(repo.path)).changeset.files}
    whole = {f.path: f for f in sources.whole_files(str(repo.path), sorted(texts))}
    for name in texts:
        assert (whole[name].added, whole[name].crlf_lines) == (staged[name].added, staged[name].crlf_lines), name


def test_whole_files_hand_their_bytes_to_the_checks_instead_of_reading_them_again(repo, monkeypatch):
    repo.write("a.py", "x = 1\n")
    repo.write("b.py", "y = 2\n")
    repo.add("a.py", "b.py")
    repo.commit()
    change = sources.all_files(str(repo.path))
    assert set(change.preread) == {"a.py", "b.py"}

    def no_git(*args, **kwargs):
        raise AssertionError("read from git again")

    monkeypatch.setattr(sources.gitio, "read_blobs", no_git)
    assert change.read(["a.py", "b.py"]) == {"a.py": b"x = 1\n", "b.py": b"y = 2\n"}
    assert not change.preread  # handed out once
    monkeypatch.undo()
    assert change.read(["a.py"]) == {"a.py": b"x = 1\n"}  # then from git, as any other read


def test_the_bytes_of_a_binary_whole_file_are_not_kept(repo):
    repo.write("a.py", "x = 1\n")
    repo.write("blob.bin", b"\0" * 50_000)
    repo.add("a.py", "blob.bin")
    change = sources.all_files(str(repo.path))
    assert set(change.preread) == {"a.py"}
    assert {f.path: f.status for f in change.changeset.files}["blob.bin"] is FileStatus.BINARY
