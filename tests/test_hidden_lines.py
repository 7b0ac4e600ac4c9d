"""Code hidden behind line breaks git does not count (a lone CR, U+2028 in JavaScript) is checked
on the line Python (or the JS engine) runs it on; characters Python does not break at hide nothing."""

from __future__ import annotations

import json

from sentinel import engine
from sentinel.config import Config
from sentinel.diffparse import parse_diff
from sentinel.linebreaks import LineMap, hides_lines, logical_change
from sentinel.models import FileChange, FileStatus, Hunk
from sentinel.sources import Change
from tests.conftest import new_file_diff
from tests.harden_util import assert_clean_exit, run_sentinel

# Each statement on its own line for Python, one line for git.
HIDDEN = "x = 1\ry = eval(data)\rtry:\r    g()\rexcept:\r    pass\r"


def _findings(proc) -> list[tuple[str, int]]:
    return sorted((f["rule"], f["line"]) for f in json.loads(proc.stdout)["findings"])


def test_lone_cr_in_a_staged_file_hides_nothing(repo):
    repo.write("hidden.py", "import os\n" + HIDDEN + "\n")
    repo.add("hidden.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    found = _findings(proc)
    # Python's line numbers: line 1 "import os", line 3 the eval, line 6 the bare except.
    assert ("SEN303", 3) in found and ("SEN301", 6) in found, found


def test_lone_cr_in_a_diff_without_file_content(tmp_path):
    diff = new_file_diff("hidden.py", HIDDEN + "\n")
    proc = run_sentinel("check", "--diff", "-", "--format", "json", "--no-memory", cwd=tmp_path, input=diff)
    assert_clean_exit(proc, 1)
    found = _findings(proc)
    assert ("SEN303", 2) in found and ("SEN301", 5) in found, found


def test_lone_cr_above_the_change_shifts_python_line_numbers(repo):
    # The unchanged part of the file holds lone CRs: git numbers the added line 2, Python 4.
    repo.write("mod.py", "a = 1\rb = 2\rc = 3\n")
    repo.add("mod.py")
    repo.commit("base")
    repo.write("mod.py", "a = 1\rb = 2\rc = 3\nresult = eval(data)\n")
    repo.add("mod.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert ("SEN303", 4) in _findings(proc)


def test_unchanged_code_behind_a_lone_cr_is_not_blamed_on_the_change(repo):
    # The eval was there before; the change only appends a harmless line.
    repo.write("old.py", "a = 1\rb = eval(data)\n")
    repo.add("old.py")
    repo.commit("base")
    repo.write("old.py", "a = 1\rb = eval(data)\nc = 3\n")
    repo.add("old.py")
    proc = run_sentinel("check", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 0)


def test_line_separator_ends_a_javascript_comment():
    # For JavaScript U+2028 ends the // comment: the eval after it is code.
    cs = parse_diff(new_file_diff("app.js", "// harmless note\u2028eval(userInput);\n"))
    verdict = engine.run(Change(cs), Config())
    assert "SEN303" in [f.rule for f in verdict.findings]


def test_characters_python_does_not_break_at_hide_nothing():
    # \f, \v, \x1c-\x1e, \x85 and U+2028 are not line breaks for Python: in a comment they are comment
    # text (nothing to report, and nothing runs), in code they make the file fail to parse.
    for ch in ("\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"):
        cs = parse_diff(new_file_diff("c.py", f"# a note{ch}eval(data)\nx = 1\n"))
        verdict = engine.run(Change(cs), Config())
        assert not verdict.errored and verdict.passed, (repr(ch), verdict.findings)
        assert compile(f"# a note{ch}eval(data)\nx = 1\n", "c.py", "exec").co_names == ("x",)
    for ch in ("\v", "\x1c", "\u2028"):
        cs = parse_diff(new_file_diff("d.py", f"x = 1{ch}eval(data)\n"))
        verdict = engine.run(Change(cs), Config())
        assert not verdict.errored
        assert any("does not parse" in nc.reason for nc in verdict.not_checked), verdict.not_checked


def test_all_files_counts_lines_as_git_and_python_do(repo):
    # str.splitlines() would split at \f and shift every later line number.
    repo.write("f.py", "x = 1  # page\fbreak\ny = eval(data)\n")
    repo.add("f.py")
    repo.commit()
    proc = run_sentinel("check", "--all-files", "--format", "json", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert ("SEN303", 2) in _findings(proc)


def test_logical_change_renumbers_hunks_and_crlf_lines():
    text = "a\rb\nc\r\nd\re\rf\ng\n"
    assert hides_lines(text, "python") and not hides_lines("a\r\nb\n", "python")
    lmap = LineMap(text, "python")
    assert list(lmap.pieces(1)) == [1, 2] and list(lmap.pieces(2)) == [3]
    assert list(lmap.pieces(3)) == [4, 5, 6] and lmap.first(4) == 7
    fc = FileChange(path="m.py", old_path=None, status=FileStatus.MODIFIED, language="python",
                    hunks=[Hunk(1, 2, 2, 3)], added={2: "c", 3: "d\re\rf"}, context={4: "g"}, crlf_lines={2})
    out = logical_change(fc, text, "python")
    assert out.added == {3: "c", 4: "d", 5: "e", 6: "f"} and out.context == {7: "g"}
    assert out.crlf_lines == {3}
    assert [(h.target_start, h.target_length) for h in out.hunks] == [(3, 5)]
