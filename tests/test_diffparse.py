"""The diff parser: the same ChangeSet unidiff gave on real diffs, linear time, and a clear error for a
hunk whose header does not count its lines (which would hide code from the checks)."""

from __future__ import annotations

import subprocess

import pytest

from sentinel.diffparse import _parse_files, parse_diff
from sentinel.errors import InputError
from sentinel.models import FileStatus
from tests.conftest import PROJECT


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
    shas = subprocess.run(["git", "log", "-M", "--format=%H", "-n", "300"], cwd=PROJECT, capture_output=True,
                          text=True).stdout.split()
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
