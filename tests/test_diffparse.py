"""The diff parser: the same ChangeSet unidiff gave on real diffs, linear time, and git's format read as
strictly as `git apply` reads it — odd but valid paths parse, anything malformed (a hunk whose header does not
count its lines, junk after a hunk, a path leaving the repository, absurd line numbers) is exit 2 naming the
line: never an internal error, never code hidden from the checks."""

from __future__ import annotations

import json
import subprocess

import pytest

from sentinel.diffparse import MAX_LINE_NUMBER, _parse_files, parse_diff, unquote_c_style
from sentinel.errors import InputError
from sentinel.models import FileStatus
from tests.conftest import PROJECT, new_file_diff
from tests.harden_util import assert_clean_exit, run_sentinel


def _unidiff_files(text: str):
    """The ChangeSet the previous, unidiff-based parser built (kept here as the reference)."""
    unidiff = pytest.importorskip("unidiff", reason="unidiff (the reference parser) is not installed")
    out = []
    for pf in unidiff.PatchSet(text):
        added, context, removed, crlf = {}, {}, [], set()
        for h in pf:
            for line in h:
                if line.line_type == "+":
                    value = line.value[:-1] if line.value.endswith("\n") else line.value
                    if value.endswith("\r"):
                        value = value[:-1]
                        crlf.add(line.target_line_no)
                    added[line.target_line_no] = value
                elif line.line_type == " ":
                    context[line.target_line_no] = line.value.rstrip("\r\n")
                elif line.line_type == "-":
                    removed.append((line.source_line_no, line.value.rstrip("\r\n")))
        hunks = [(h.source_start, h.source_length, h.target_start, h.target_length, (h.section_header or "").strip())
                 for h in pf]
        out.append((pf.is_binary_file, hunks, added, context, removed, crlf))
    return out


def _ours(text: str):
    return [(f.is_binary, [(h.source_start, h.source_length, h.target_start, h.target_length, h.section_header)
                           for h in f.hunks], f.added, f.context, f.removed, f.crlf_lines)
            for f in _parse_files(text, "test")]


def test_same_result_as_unidiff_on_this_repositorys_history():
    # merges show as combined diffs (--cc), which neither parser takes: their parents' commits are compared
    shas = subprocess.run(["git", "log", "-M", "--no-merges", "--format=%H", "-n", "300"], cwd=PROJECT,
                          capture_output=True, text=True).stdout.split()
    if len(shas) < 20:
        pytest.skip("the checkout has too little history to compare on")
    compared = 0
    for sha in shas:
        diff = subprocess.run(["git", "show", "-M", "--format=", "--no-color", sha], cwd=PROJECT,
                              capture_output=True).stdout.decode("utf-8", "surrogateescape")
        if not diff.strip():
            continue
        assert _ours(diff) == _unidiff_files(diff), sha
        compared += 1
    assert compared >= 20


DIFF = """diff --git a/Plan b/notes.py b/Plan b/notes.py
index 1111111..2222222 100644
--- a/Plan b/notes.py
+++ b/Plan b/notes.py
@@ -1,2 +1,3 @@ def f():
 a = 1
-b = 2
+b = 3
+c = 4
diff --git a/Plan b/logo.png b/Plan b/logo.png
index 3333333..4444444 100644
Binary files a/Plan b/logo.png and b/Plan b/logo.png differ
diff --git a/old name.py b/new name.py
similarity index 100%
rename from old name.py
rename to new name.py
"""


def test_paths_with_a_space_b_slash_binaries_and_pure_renames():
    files = parse_diff(DIFF, "test").files
    assert [(f.path, f.old_path, f.status) for f in files] == [
        ("Plan b/notes.py", None, FileStatus.MODIFIED), ("Plan b/logo.png", None, FileStatus.BINARY),
        ("new name.py", "old name.py", FileStatus.RENAMED)]
    assert files[0].added == {2: "b = 3", 3: "c = 4"} and files[0].removed == [(2, "b = 2")]
    assert files[0].hunks[0].section_header == "def f():"


def test_lines_past_the_hunk_count_are_refused_naming_the_line():
    hidden = DIFF.split("diff --git a/Plan b/logo.png")[0] + "+eval(input())\n"
    with pytest.raises(InputError, match=r"line 10: '\+eval\(input\(\)\)' follows a complete hunk"):
        parse_diff(hidden, "test")


def test_a_hunk_that_ends_early_is_refused():
    short = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,3 @@\n a\n+b\n"
    with pytest.raises(InputError, match="ends early"):
        parse_diff(short, "test")
    with pytest.raises(InputError, match="a hunk before any file header"):
        parse_diff("@@ -1 +1 @@\n-a\n+b\n", "test")


def test_mail_headers_and_a_format_patch_signature_are_not_code():
    patch = ("From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n x.py | 1 +\n\n"
             "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+x = 1\n-- \n2.39.5\n\n")
    files = parse_diff(patch, "test").files
    assert [(f.path, f.added) for f in files] == [("x.py", {1: "x = 1"})]


def test_crlf_lines_and_no_newline_markers():
    text = ("--- a/w.txt\n+++ b/w.txt\n@@ -1 +1,2 @@\n-old\r\n\\ No newline at end of file\n+new\r\n+last\n"
            "\\ No newline at end of file\n")
    f = parse_diff(text, "test").files[0]
    assert f.added == {1: "new", 2: "last"} and f.crlf_lines == {1} and f.removed == [(1, "old")]


BARE = "try:\n    g()\nexcept:\n    pass\n"


def _rules(proc) -> list[tuple[str, str]]:
    return sorted((f["path"], f["rule"]) for f in json.loads(proc.stdout)["findings"])


def _malformed(text: str, *needles: str) -> str:
    with pytest.raises(InputError) as info:
        parse_diff(text)
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    return message


# --- valid but unusual ---------------------------------------------------------------------------

def test_directory_named_plan_b(repo):
    # " b/" inside a name: the 'diff --git' line splits where both halves are the same name.
    repo.write("Plan b/x.py", BARE)
    repo.write("Plan b/ok.py", "x = 1\n")
    repo.add("Plan b/x.py", "Plan b/ok.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert _rules(proc) == [("Plan b/x.py", "SEN301")]


def test_renamed_across_directories_with_spaces(repo):
    repo.write("new b/a file.py", "x = 1\n")
    repo.add("new b/a file.py")
    repo.commit()
    (repo.path / "other b").mkdir()
    repo.git("mv", "new b/a file.py", "other b/z.py")
    cs = parse_diff(repo.git("diff", "--cached", "-M"))
    fc = cs.files[0]
    assert (fc.path, fc.old_path, fc.status) == ("other b/z.py", "new b/a file.py", FileStatus.RENAMED)


def test_git_quoted_paths_with_escapes_are_read_and_checked(repo):
    # Quotes and tabs in names: git C-quotes them; the gate reads the staged blob under the exact
    # name and checks it. (Names that are not UTF-8: tests/test_odd_paths.py.)
    names = ['q"uote.py', "tab\there.py", "sp ace.py"]
    for name in names:
        (repo.path / name).write_bytes(b"eval(data)\n")
    repo.git("add", "-A")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert len(json.loads(proc.stdout)["findings"]) == 3


def test_unquote_c_style_is_gits():
    assert unquote_c_style('"a/caf\\303\\251.py"')[0] == "a/café.py"
    assert unquote_c_style('"t\\tq\\"b\\\\.py" rest') == ('t\tq"b\\.py', 14)
    assert unquote_c_style('"\\351"')[0] == "\udce9"  # not UTF-8: carried as a surrogate


def test_format_patch_with_preamble_and_signature(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("a.py", "x = 1\n" + BARE)
    repo.add("a.py")
    repo.commit("add a bare except\n\n--- not a diff header\n+++ nor this\n")
    patch = repo.git("format-patch", "-1", "--stdout")
    assert patch.rstrip().splitlines()[-2] == "-- "
    cs = parse_diff(patch)
    assert [f.path for f in cs.files] == ["a.py"] and len(cs.files[0].added) == 4


def test_plain_diff_r_output():
    text = ("Only in old: gone.txt\n"
            "diff -ru old/a.py new/a.py\n--- old/a.py\t2024-01-01 10:00:00\n+++ new/a.py\t2024-01-02 10:00:00\n"
            "@@ -1 +1,2 @@\n x = 1\n+eval(data)\n"
            "Binary files old/img.png and new/img.png differ\n")
    cs = parse_diff(text)
    assert [(f.path, f.status) for f in cs.files] == [("new/a.py", FileStatus.MODIFIED),
                                                      ("new/img.png", FileStatus.BINARY)]
    assert cs.files[0].added == {2: "eval(data)"}


def test_no_newline_marker_after_a_line_ending_in_cr():
    # The line's "\r" is not half of a CRLF: there is no "\n" after it. For Python it is a line break.
    text = new_file_diff("a.py", "x = 1\n").replace("+x = 1\n", "+x = 1\r\n\\ No newline at end of file\n")
    fc = parse_diff(text).files[0]
    assert fc.added == {1: "x = 1\r"} and not fc.crlf_lines
    crlf = parse_diff(new_file_diff("b.py", "x = 1\r\n")).files[0]
    assert crlf.added == {1: "x = 1"} and crlf.crlf_lines == {1}


def test_mode_change_and_binary_patch_sections():
    text = ("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
            "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\n"
            "literal 3\nKcmZ?wbN>JW00IC2\n\nliteral 0\nHcmV?d00001\n\n"
            + new_file_diff("a.py", "x = 1\n"))
    cs = parse_diff(text)
    assert [(f.path, f.status) for f in cs.files] == [("run.sh", FileStatus.MODIFIED), ("img.png", FileStatus.BINARY),
                                                      ("a.py", FileStatus.ADDED)]


# --- malformed: exit 2 naming the line ------------------------------------------------------------

def test_junk_after_a_complete_hunk_is_refused(repo):
    hidden = new_file_diff("a.py", "x = 1\n") + "+eval(data)\n"
    proc = run_sentinel("check", "--diff", "-", cwd=repo.path, input=hidden)
    assert_clean_exit(proc, 2)
    assert "line 7" in proc.stderr and "follows a complete hunk" in proc.stderr
    _malformed(new_file_diff("a.py", "x = 1\n") + "some prose\n", "line 7", "follows a complete hunk")


def test_truncated_and_overrun_hunks():
    _malformed("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,9 @@\n+only one line\n",
               "line 4", "truncated")
    _malformed("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1 @@\n+b\n+c\n-d\n", "line 5", "beyond what the hunk")
    _malformed("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n*b\n", "line 5", "inside the hunk")


def test_overlapping_hunks_and_duplicate_sections_cannot_overwrite_lines():
    # The second hunk would replace the first one's added line 1 in the parsed change.
    text = "--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+eval(data)\n@@ -0,0 +1 @@\n+x = 1\n"
    _malformed(text, "line 5", "overlaps")
    twice = new_file_diff("x.py", "eval(data)\n") + new_file_diff("x.py", "x = 1\n")
    _malformed(twice, "x.py", "two file sections")


def test_nul_absolute_and_dotdot_paths_are_refused():
    _malformed(new_file_diff("x.py", "x = 1\n").replace("b/x.py", '"b/x\\000y.py"'), "NUL")
    _malformed(new_file_diff("x\0y.py", "x = 1\n"), "line 1", "NUL")
    _malformed("--- /dev/null\n+++ /etc/cron.d/x\n@@ -0,0 +1 @@\n+x\n", "line 2", "absolute path")
    _malformed(new_file_diff("../../outside.py", "x = 1\n"), "line 1", "leaves the repository")


def test_absurd_hunk_numbers_are_refused_quickly(repo):
    for header in ("@@ -1 +99999999 @@", "@@ -1 +1,99999999 @@", "@@ -1 +999999999999999999999 @@",
                   "@@ -1 +\u0661\u0662 @@"):
        text = f"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n{header}\n+x\n"
        proc = run_sentinel("check", "--diff", "-", cwd=repo.path, input=text, timeout=30)
        assert_clean_exit(proc, 2)
        assert "line 4" in proc.stderr, proc.stderr
    assert MAX_LINE_NUMBER >= 1_000_000


def test_hunk_before_any_file_and_combined_diffs():
    _malformed("@@ -1 +1 @@\n-a\n+b\n", "line 1", "before any file header")
    _malformed("diff --cc a.py\n--- a/a.py\n+++ b/a.py\n@@@ -1,1 -1,1 +1,1 @@@\n", "line 4", "combined diff")


def test_every_git_diff_of_a_real_history_parses(repo):
    # A smoke test over what git itself writes: renames, copies, deletions, modes, binary, CRLF.
    repo.git("config", "core.autocrlf", "false")
    repo.write("a.py", "x = 1\n" * 20)
    repo.write("b.txt", "hello\r\nworld\r\n")
    repo.write("bin.dat", b"\0\1\2")
    repo.add("a.py", "b.txt", "bin.dat")
    first = repo.commit("one")
    repo.git("mv", "a.py", "moved.py")
    repo.write("moved.py", "x = 1\n" * 19 + "y = 2\n")
    repo.write("b.txt", "hello\r\nthere\r\n")
    repo.git("rm", "-q", "bin.dat")
    repo.git("update-index", "--chmod=+x", "b.txt")
    repo.add("moved.py", "b.txt")
    repo.commit("two")
    out = subprocess.run(["git", "diff", "-M", "-C", "--binary", first, "HEAD"], cwd=repo.path,
                         capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    cs = parse_diff(out)
    by_path = {f.path: f for f in cs.files}
    assert by_path["moved.py"].old_path == "a.py" and by_path["moved.py"].added == {20: "y = 2"}
    assert by_path["b.txt"].added == {2: "there"} and by_path["b.txt"].crlf_lines == {2}
    assert by_path["bin.dat"].status in (FileStatus.DELETED, FileStatus.BINARY)
