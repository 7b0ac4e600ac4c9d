"""Arguments that cannot mean anything useful are usage errors (exit 2, naming the option) before any
work is done — never an internal error, never a run that checks nothing and passes."""

from __future__ import annotations

import pytest

from tests.harden_util import assert_clean_exit, run_sentinel


@pytest.fixture
def committed(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("a.py", "x = 2\n")
    repo.add("a.py")
    repo.commit("next")
    return repo


@pytest.mark.parametrize("args, needle", [
    (["check", "--jobs", "0"], "--jobs"),
    (["check", "--jobs", "-3"], "--jobs"),
    (["check", "-j", "two"], "-j"),
    (["check", "--ban", ""], "--ban"),
    (["memory", "search", "connection reset", "-k", "0"], "-k"),
    (["memory", "search", "connection reset", "-k", "-1"], "-k"),
    (["memory", "search", "   "], "query"),
    (["memory", "patterns", "--limit", "0"], "--limit"),
    (["memory", "forget", "--older-than", "-5"], "--older-than"),
    (["memory", "forget", "--older-than", "nan"], "--older-than"),
    (["recall", "--log", "-", "-k", "0"], "-k"),
])
def test_nonsense_numbers_and_empty_text_are_usage_errors(committed, args, needle):
    proc = run_sentinel(*args, cwd=committed.path, input="")
    assert_clean_exit(proc, 2)
    assert needle in proc.stderr and "usage:" in proc.stderr, proc.stderr


@pytest.mark.parametrize("spec", ["..", "...", " .. ", "--output=x..HEAD", "HEAD..-p"])
def test_ranges_that_name_no_commit_or_look_like_options(committed, spec):
    proc = run_sentinel("check", "--range", spec, cwd=committed.path)
    assert_clean_exit(proc, 2)
    assert "range" in proc.stderr or "revision" in proc.stderr, proc.stderr


def test_a_range_with_one_side_still_means_head(committed):
    proc = run_sentinel("check", "--range", "HEAD~1..", "--no-memory", cwd=committed.path)
    assert_clean_exit(proc, 0)
    assert "1 file(s)" in proc.stdout


def test_output_into_a_missing_directory_is_refused_before_running(committed, tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "report.json"
    proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--format", "json", "--output", str(target),
                        cwd=committed.path)
    assert_clean_exit(proc, 2)
    assert "does not exist" in proc.stderr and not target.parent.exists()
    proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--output", str(tmp_path), cwd=committed.path)
    assert_clean_exit(proc, 2)
    assert "is a directory" in proc.stderr


def test_output_that_cannot_be_written_is_a_clear_error(committed, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        probe = locked / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:
            pytest.skip("running as a user who can write anywhere")
        proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--output", str(locked / "r.txt"),
                            cwd=committed.path)
        assert_clean_exit(proc, 2)
        assert "cannot write the report" in proc.stderr
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("args, needle", [
    (["check", "--range", "HEAD~1..HEAD", "--junit", "reports/junit.xml"], "--junit reports/junit.xml: does not exist"),
    (["check", "--range", "HEAD~1..HEAD", "--coverage", "coverage.xml"], "--coverage coverage.xml: does not exist"),
    (["check", "--range", "HEAD~1..HEAD", "--junit", "."], "--junit .: is a directory"),
])
def test_a_missing_evidence_report_is_a_usage_error(committed, args, needle):
    """A --junit file that is not there was a mistyped path or a test step that did not run: exit 2 naming it,
    not a claims check that quietly has no evidence."""
    proc = run_sentinel(*args, cwd=committed.path)
    assert_clean_exit(proc, 2)
    assert needle in proc.stderr, proc.stderr


def test_an_evidence_report_relative_to_the_root_is_found_from_a_subdirectory(committed):
    committed.write("reports/junit.xml", '<testsuite tests="1" failures="0" errors="0"><testcase name="t"/></testsuite>')
    committed.write("pkg/x.txt", "")
    proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--junit", "reports/junit.xml", "--no-memory",
                        cwd=committed.path / "pkg")
    assert_clean_exit(proc, 0)
