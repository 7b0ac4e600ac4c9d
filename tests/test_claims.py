"""Claims: what a message asserts about its change, checked against the evidence the gate can see.

Only evidence that contradicts a claim blocks; an unsupported claim is advice (info). What a message quotes of
other commits (a squash merge's commit list, a reverted subject, hash-led commit lists) is not a claim.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel import engine
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.intent.claims import extract, message_topics
from sentinel.intent.evidence import ci_test_runs, read_coverage, read_junit
from sentinel.intent.message import clean_commit_message, mask_history, mask_message
from sentinel.models import CheckStatus, Severity
from sentinel.sources import Change
from tests.conftest import new_file_diff

SRC = "def parse_port(text):\n    return int(text)\n"
TEST = "from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') == 8080\n"


def _diff(files: dict) -> str:
    """path -> new content (an added file) or (before, after) (a modification) or None (a deletion)."""
    out = []
    for path, content in files.items():
        if isinstance(content, tuple):
            before, after = content
            body = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                f"a/{path}", f"b/{path}", n=100000))
            out.append(f"diff --git a/{path} b/{path}\n{body}")
        elif content is None:
            out.append(f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
                       f"@@ -1 +0,0 @@\n-x = 1\n")
        else:
            out.append(new_file_diff(path, content))
    return "".join(out)


def gate(message: str, files: dict | None = None, config: dict | None = None, **extra):
    cs = parse_diff(_diff(files if files is not None else {"app.py": SRC}), source="test")
    return engine.run(Change(cs, content_rev=None), validate(config or {}, "test"),
                      engine.RunOptions(message=message, extra=extra))


def claim_findings(verdict):
    return [f for f in verdict.findings if f.check == "claims"]


def claims_result(verdict):
    return next(r for r in verdict.checks if r.check == "claims")


def kinds(message: str) -> list[str]:
    return [c.kind.key for c in extract(message)[0]]


def severities(verdict) -> list[tuple[str, Severity]]:
    return [(f.rule, f.severity) for f in claim_findings(verdict)]


def sentinel_cli(repo, *args: str):
    """The console script of a non-editable install (conftest): what users and hooks run."""
    return repo.sentinel(*args, env={"SENTINEL_TASK": ""})


# --- extraction: what is a claim ---------------------------------------------------------------------

@pytest.mark.parametrize("message,kind", [
    ("All tests pass.", "tests_pass"),
    ("Tests were slow, but all tests pass now", "tests_pass"),
    ("The test suite is green", "tests_pass"),
    ("Added unit tests for the parser", "tests_added"),
    ("Fully tested", "tested"),
    ("100% coverage", "coverage"),
    ("This is production ready.", "production_ready"),
    ("Bug-free now.", "production_ready"),
    ("No known bugs.", "production_ready"),
    ("Handles all errors gracefully", "robust"),
    ("Fixes #123", "fixed"),
    ("The bug is fixed.", "fixed"),
    ("Fixed the crash on empty input", "fixed"),
    ("Port parsing is done.", "done"),
    ("It's done.", "done"),
    ("No TODOs left", "done"),
    ("Implementation is complete", "done"),
    ("No functional change.", "behaviour_unchanged"),
    ("refactor: split the module", "refactored"),
    ("Speed up parsing by 2x", "performance"),
    ("Optimize the query builder", "performance"),
    ("Harden the config loader", "secure"),
    ("Make the cache thread-safe", "thread_safe"),
    ("This fixes a race condition", "thread_safe"),
    ("No breaking changes.", "backward_compatible"),
    ("Fully backward compatible", "backward_compatible"),
    ("No side effects.", "no_side_effects"),
])
def test_claim_is_recognised(message, kind):
    assert kind in kinds(message)


@pytest.mark.parametrize("message", [
    "This is not production ready yet",
    "Untested.",
    "Add a done callback to the future",
    "Use a fixed-size buffer",
    "Fixed-size buffers for `all tests pass` parsing",
    "This backend seems to run from the start against the resolved\nversions, so pin them.",
    "Read the fixed\nheader first",
    "```\nall tests pass\n```",
    'The issue says "production ready" but it is not',
    "> all tests pass",
    "Once tests pass we can merge",
    "Tests should pass after the next change",
    "Is this thread-safe?",
    "This helper is not thread-safe",
    "non-thread-safe helper, callers lock",
    "This is not backward compatible",
    "Breaks backward compatibility on purpose",
    "Set the secure flag on cookies",
    "When done, call close()",
    "autocomplete support for paths",
    "Fix issue with tests on Windows",
    "Add test data files",
    "Signed-off-by: All Tests Pass <tests@example.com>",
    "See https://example.com/all-tests-pass-production-ready",
    "fix: handle empty input",
    "## Known issues\nThe cache is thread-safe only on CPython",
])
def test_not_a_claim(message):
    assert kinds(message) == []


@pytest.mark.parametrize("message", [
    # a condition the product handles, not the state of the change
    "Add --max-warnings\n\nWhen the warning count exceeds the limit and all tests pass, the run\nexits with 6.",
    "If the suite is green and the budget is spent, stop early.",
    # a test, not the suite
    "Count a test passing but failing in teardown once",
    # an adjective about what the change uses
    "Delegate argument decoding to well-tested stdlib helpers",
    "Switch to a battle-tested parser library",
    # someone else's fix the change relies on, or a hedge
    "Pin the driver to 0.2.12\n\nthey seem to have fixed the BIT issue",
    "Upstream fixed the leak, so drop the workaround",
    "The flaky run appears to be fixed by the new runner",
])
def test_descriptions_of_something_else_are_not_claims(message):
    assert kinds(message) == []


def test_unconditional_claims_next_to_conditions_still_count():
    assert kinds("Add a retry.\n\nIf the server is down we retry. All tests pass.") == ["tests_pass"]
    assert kinds("This module is well-tested.") == ["tested"]
    assert kinds("- Fast path added\n- All tests pass") == ["tests_pass"]
    assert kinds("They reported it and we fixed the crash") == ["fixed"]


SQUASH = ("Warn when a fixture is wrapped (#812)\n\n"
          "* Warn when a fixture is wrapped\n\n"
          "* Make tests pass locally\n\n"
          "* Speed up the wrapper walk\n\n"
          "Walks the chain once; handles edge cases. Production ready.\n\n"
          "* fix typo\n\n"
          "---------\n\n"
          "Co-authored-by: Someone <someone@example.com>\n")


def test_squash_merge_commit_list_is_history_not_claims():
    assert kinds(SQUASH) == []
    masked = mask_history(SQUASH)
    assert masked.split("\n")[0] == "Warn when a fixture is wrapped (#812)"
    assert "Speed up" not in masked and "Production ready" not in masked and len(masked) == len(SQUASH)


def test_squash_title_claim_is_read_once():
    message = "Fix #12: speed up the parser (#40)\n\n* Fix #12: speed up the parser\n\n* Add benchmark\n"
    claims = extract(message)[0]
    assert [(c.kind.key, c.line) for c in claims] == [("fixed", 1), ("performance", 1)]


def test_single_commit_squash_keeps_the_commit_body():
    # One commit: the bullet repeats the title (not a second claim); its body describes the change.
    message = "Parse ports (#7)\n\n* Parse ports\n\nAll tests pass.\n"
    assert [(c.kind.key, c.line) for c in extract(message)[0]] == [("tests_pass", 5)]


def test_bullet_lists_written_by_hand_are_read():
    message = "Parse ports\n\nChanges:\n* a faster parser\n* all tests pass\n"
    assert kinds(message) == ["performance", "tests_pass"]


@pytest.mark.parametrize("message", [
    'Revert "Speed up parsing, all tests pass"\n\nThis reverts commit 1a2b3c4d5e6f.\n',
    'Revert "Revert "Optimize the parser (#12)"" (#13)\n\nThis reverts commit 0123abc.\n',
    "Release 2.1\n\n1a2b3c4 Speed up the parser\n- 9f8e7d6 make all tests pass\n",
    "Backport the parser fix\n\n(cherry picked from commit 1a2b3c4d5e6f7a8b)\n",
    "Merge branch 'fast'\n\n* 'fast' of github.com:org/repo:\n  Speed up the parser\n  All tests pass\n",
    "Squash the parser work\n\nSquashed commit of the following:\n\ncommit 1a2b3c4d\nAuthor: A <a@b>\n\n"
    "    Speed up the parser\n",
])
def test_other_commits_quoted_in_the_message_are_not_claims(message):
    assert kinds(message) == []


def test_revert_keeps_the_reverters_own_words():
    message = 'Revert "Speed up parsing"\n\nThis reverts commit 1a2b3c4d5e6f.\n\nAll tests pass.\n'
    assert [(c.kind.key, c.line) for c in extract(message)[0]] == [("tests_pass", 5)]


@pytest.mark.parametrize("message,rate", [
    ("100% coverage", 1.0), ("Full test coverage.", 1.0), ("95% line coverage", 0.95),
    ("Coverage is now 87.5%", 0.875), ("Raise coverage to 90%", 0.9),
])
def test_coverage_claims_carry_their_rate(message, rate):
    [claim] = extract(message)[0]
    assert claim.kind.key == "coverage" and claim.rate == pytest.approx(rate)


def test_message_topics():
    assert message_topics("docs: clarify the hook order\n\nFixes #3") == {"docs"}
    assert message_topics("Fix a flaky test on Windows") == {"tests"}
    assert message_topics("Fix the crash on empty input.\n\nFixes #3") == set()
    assert message_topics("Fix crash\n\n`see the docs`") == set()  # code spans are not the author's words


def test_checklist_items_are_not_free_text_claims():
    claims, items = extract("Add parser\n\n- [x] Tests added\n- [ ] All tests pass\n* [X] No placeholders")
    assert claims == []
    assert [(i.ticked, i.text, i.line) for i in items] == [(True, "Tests added", 3), (False, "All tests pass", 4),
                                                           (True, "No placeholders", 5)]


def test_claim_line_numbers_are_message_lines():
    claims, _ = extract("Add parser\n\nSome context.\nAll tests pass.")
    assert [(c.kind.key, c.line) for c in claims] == [("tests_pass", 4)]


def test_mask_keeps_positions():
    text = "a `code` b\n```\nx\n```\nc \"q\" d"
    masked = mask_message(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert "code" not in masked and "q" not in masked and masked.startswith("a ") and masked.endswith(" d")


def test_clean_commit_message_strips_comments_and_scissors():
    raw = ("Subject\n\nBody line\n# Please enter the commit message\n# ------------------------ >8 "
           "------------------------\ndiff --git a/x b/x\n+all tests pass\n")
    assert clean_commit_message(raw) == "Subject\n\nBody line"
    assert clean_commit_message("Subject\n; comment\n", ";") == "Subject"


# --- evidence readers -----------------------------------------------------------------------------------

def test_read_junit_pytest_and_surefire_flavours(tmp_path):
    p = tmp_path / "pytest.xml"
    p.write_text('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="5" failures="1" errors="0" '
                 'skipped="2"><testcase name="a"/></testsuite></testsuites>')
    r = read_junit(str(p))
    assert (r.tests, r.failures, r.errors, r.skipped, r.ok) == (5, 1, 0, 2, False)
    q = tmp_path / "plain.xml"  # no counts on the suite: count the test cases
    q.write_text('<testsuite><testcase name="a"/><testcase name="b"><failure message="x"/></testcase>'
                 '<testcase name="c"><skipped/></testcase><testcase name="d"><error/></testcase></testsuite>')
    r = read_junit(str(q))
    assert (r.tests, r.failures, r.errors, r.skipped) == (4, 1, 1, 1)


def test_read_junit_problems_are_reported_not_raised(tmp_path):
    assert "cannot read" in read_junit(str(tmp_path / "missing.xml")).problem
    bad = tmp_path / "bad.xml"
    bad.write_text("<testsuite><oops")
    assert "not XML" in read_junit(str(bad)).problem
    other = tmp_path / "other.xml"
    other.write_text("<coverage line-rate='1'/>")
    assert "not a JUnit report" in read_junit(str(other)).problem


def test_read_coverage_cobertura_and_jacoco(tmp_path):
    c = tmp_path / "coverage.xml"
    c.write_text('<?xml version="1.0" ?><coverage version="7" line-rate="0.8125" branch-rate="0"></coverage>')
    assert read_coverage(str(c)).line_rate == pytest.approx(0.8125)
    j = tmp_path / "jacoco.xml"
    j.write_text('<report name="x"><counter type="LINE" missed="1" covered="3"/></report>')
    assert read_coverage(str(j)).line_rate == pytest.approx(0.75)
    assert read_coverage(str(tmp_path / "none.xml")).problem


def test_ci_test_runs():
    ok, bad = ci_test_runs([{"name": "tests (3.12)", "conclusion": "success"},
                            {"name": "lint", "conclusion": "failure"},
                            {"name": "pytest", "conclusion": "failure"}, "junk"])
    assert ok == ["tests (3.12)"] and bad == ["pytest"]


# --- judgements through the whole gate -----------------------------------------------------------------

def _junit(tmp_path, failures=0, skipped=0, tests=12) -> str:
    p = tmp_path / f"junit-{failures}-{skipped}.xml"
    p.write_text(f'<testsuites><testsuite tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}"/>'
                 "</testsuites>")
    return str(p)


def _coverage(tmp_path, rate: float) -> str:
    p = tmp_path / f"coverage-{rate}.xml"
    p.write_text(f'<coverage line-rate="{rate}"/>')
    return str(p)


# --- no evidence either way: advice, never a block or a warning -------------------------------------------

def test_all_tests_pass_without_evidence_is_advice():
    v = gate("Add port parsing\n\nAll tests pass.")
    [f] = claim_findings(v)
    assert (f.rule, f.severity, f.path, f.line) == ("SEN601", Severity.INFO, "COMMIT_MSG", 3)
    assert "not backed by evidence" in f.message and "--junit" in f.message and v.passed


def test_tests_pass_with_tests_in_change_but_no_report_is_advice():
    v = gate("All tests pass.", {"app.py": SRC, "tests/test_app.py": TEST})
    [f] = claim_findings(v)
    assert (f.rule, f.severity) == ("SEN601", Severity.INFO) and "tests/test_app.py" in f.message
    assert v.passed


@pytest.mark.parametrize("message", ["Optimize the port parser", "Speed up the CI", "Make parsing faster"])
def test_performance_without_numbers_is_advice(message):
    v = gate(message)
    assert severities(v) == [("SEN606", Severity.INFO)] and v.passed


def test_fix_without_regression_test_is_advice_and_with_one_is_supported():
    [f] = claim_findings(gate("Fixes #42"))
    assert (f.rule, f.severity) == ("SEN603", Severity.INFO) and "regression test" in f.message
    assert claim_findings(gate("Fixes #42", {"app.py": SRC, "tests/test_app.py": TEST})) == []


@pytest.mark.parametrize("message", [
    "Make the counter thread-safe.", "This is production ready.", "Well tested.", "Pure refactor.",
    "Harden the loader.",
])
def test_other_unsupported_claims_are_advice(message):
    v = gate(message)
    assert [s for _, s in severities(v)] == [Severity.INFO] and v.passed


# --- the same claim twice is judged once ------------------------------------------------------------------

def test_a_claim_repeated_in_the_body_is_one_finding():
    v = gate("Fixes #42: parse ports\n\nParse ports as integers.\n\nFixes #42")
    [f] = claim_findings(v)
    assert f.line == 1 and "also line 5" in f.message


def test_a_stronger_claim_speaks_for_a_weaker_one_anywhere_in_the_message():
    v = gate("[refactor] Extract parse_port\n\nPure refactor: no functional change.")
    assert [f.rule for f in claim_findings(v)] == ["SEN605"]
    assert "Pure refactor" in claim_findings(v)[0].message


# --- evidence that contradicts a claim blocks --------------------------------------------------------------

def test_all_tests_pass_with_passing_junit_is_supported(tmp_path):
    v = gate("All tests pass.", junit=[_junit(tmp_path)])
    assert claim_findings(v) == []
    assert "supported" in claims_result(v).reason and "12 tests" in claims_result(v).reason


@pytest.mark.parametrize("message", ["All tests pass.", "The task is complete.", "Done.", "Fully tested.",
                                     "Make the tests pass again", "Production ready.", "No functional change."])
def test_failing_junit_contradicts_the_claim(tmp_path, message):
    v = gate(message, junit=[_junit(tmp_path, failures=2)])
    [f] = claim_findings(v)
    assert f.severity is Severity.ERROR and "contradicted" in f.message and "2 failed" in f.message
    assert not v.passed


def test_failing_ci_run_contradicts_tests_pass():
    v = gate("All tests pass.", ci_checks=[{"name": "tests (3.12)", "conclusion": "failure"}])
    assert severities(v) == [("SEN601", Severity.ERROR)]


def test_all_tests_pass_with_skipped_tests_is_advice(tmp_path):
    v = gate("All tests pass.", junit=[_junit(tmp_path, skipped=3)])
    [f] = claim_findings(v)
    assert f.severity is Severity.INFO and "3 skipped" in f.message


def test_ci_checks_support_tests_pass():
    v = gate("All tests pass.", ci_checks=[{"name": "tests", "conclusion": "success"}])
    assert claim_findings(v) == []


def test_tests_added_without_any_test_is_contradicted():
    v = gate("Added unit tests for parse_port.")
    assert severities(v) == [("SEN601", Severity.ERROR)] and "no test in the change" in claim_findings(v)[0].message
    assert claim_findings(gate("Added unit tests for parse_port.", {"app.py": SRC, "tests/test_app.py": TEST})) == []


def test_tests_added_to_a_package_or_ci_config_is_not_contradicted():
    """"Add tests to the sdist" edits packaging that names tests: no test file, but no contradiction either."""
    pyproject = '[tool.hatch.build.targets.sdist]\ninclude = ["src/", "tests/", "requirements.txt"]\n'
    v = gate("Add tests and requirements.txt to sdist", {"pyproject.toml": pyproject})
    assert severities(v) == [("SEN601", Severity.INFO)] and "names tests" in claim_findings(v)[0].message
    # Config that does not name tests is no excuse.
    v = gate("Add tests and requirements.txt to sdist", {"pyproject.toml": '[project]\nname = "x"\n'})
    assert severities(v) == [("SEN601", Severity.ERROR)]


def test_tests_added_inside_a_source_file_count():
    rust = "pub fn port(s: &str) -> u16 { s.parse().unwrap() }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n" \
           "    fn parses() { assert_eq!(super::port(\"80\"), 80); }\n}\n"
    assert claim_findings(gate("Add tests for port parsing", {"src/lib.rs": rust})) == []


@pytest.mark.parametrize("claimed,rate,contradicted", [
    ("100% coverage.", 0.60, True), ("100% coverage.", 1.0, False), ("90% coverage", 0.92, False),
    ("90% coverage", 0.85, True), ("Full test coverage", 0.997, False),
])
def test_coverage_claim_against_coverage_report(tmp_path, claimed, rate, contradicted):
    v = gate(claimed, coverage=[_coverage(tmp_path, rate)])
    if contradicted:
        [f] = claim_findings(v)
        assert f.severity is Severity.ERROR and f"{rate:.0%}" in f.message and not v.passed
    else:
        assert claim_findings(v) == []


def test_coverage_claim_without_report_is_advice():
    assert severities(gate("100% coverage.")) == [("SEN601", Severity.INFO)]


DOC = "# Ports\n\nA port is a number from 1 to 65535.\n"


@pytest.mark.parametrize("message", [
    "Fixes #12",
    "Fix the crash on an empty port.\n\nFixes #12",
    "The bug is fixed.",
])
def test_fix_claim_on_a_change_without_code_is_contradicted(message):
    v = gate(message, {"docs/ports.md": DOC, "CHANGELOG.md": "- ports\n"})
    [f] = claim_findings(v)
    assert (f.rule, f.severity) == ("SEN603", Severity.ERROR) and "touches only docs" in f.message
    assert not v.passed


def test_fix_claim_on_tests_only_is_contradicted_unless_it_fixes_tests():
    assert severities(gate("Fix the crash on an empty port. Fixes #12", {"tests/test_app.py": TEST})) == \
        [("SEN603", Severity.ERROR)]
    assert claim_findings(gate("Fix a flaky port test. Fixes #12", {"tests/test_app.py": TEST})) == []


@pytest.mark.parametrize("message,files", [
    ("docs: clarify the port range\n\nFixes #12", {"docs/ports.md": DOC}),
    ("Fix code block markup\n\nfixes #12", {"docs/ports.md": DOC}),
    ("Fix ports.md. Fixes #12", {"docs/ports.md": DOC}),  # names the file it changes
    ("Fix writing_ports. Fixes #12", {"docs/writing_ports.rst": DOC}),
    ("Fix the port range (#14)\n\nFixes #12", {"docs/ports.md": DOC, "changelog/12.doc.rst": "Port range.\n"}),
])
def test_fix_claim_on_docs_the_message_presents_as_docs_is_supported(message, files):
    assert claim_findings(gate(message, files)) == []


def test_closes_on_a_docs_change_is_advice_not_a_block():
    # "Closes #12" may close any issue (a docs request); only fix wording is held against a change without code.
    assert severities(gate("Add the port range\n\nCloses #12", {"docs/ports.md": DOC})) == \
        [("SEN603", Severity.INFO)]


def test_fix_claim_on_config_or_code_is_never_contradicted_by_what_it_touches():
    v = gate("Pin the parser below 2.0. Fixes #12", {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert [s for _, s in severities(v)] in ([], [Severity.INFO])


def test_done_with_placeholder_in_change_is_doubtful_and_the_placeholder_blocks():
    v = gate("Port parsing is done.", {"app.py": "def parse_port(text):\n    raise NotImplementedError\n"})
    assert ("SEN604", Severity.WARNING) in severities(v)
    assert not v.passed and any(f.check == "placeholder" for f in v.findings)
    assert claim_findings(gate("Port parsing is done.")) == []


def test_done_claim_checked_even_when_placeholder_check_did_not_run():
    # The commit-msg hook runs only drift and claims: the engine runs the placeholder check for claims.
    cs = parse_diff(_diff({"app.py": "def parse_port(text):\n    raise NotImplementedError\n"}), source="test")
    v = engine.run(Change(cs, content_rev=None), validate({}, "test"),
                   engine.RunOptions(message="All done.", only_checks=["claims"]))
    assert [(f.rule, f.severity) for f in v.findings] == [("SEN604", Severity.WARNING)]


def test_done_claim_is_advice_when_placeholder_check_is_disabled():
    v = gate("Port parsing is done.", config={"placeholder": {"enabled": False}})
    [f] = claim_findings(v)
    assert f.severity is Severity.INFO and "disabled" in f.message


def test_production_ready_with_other_checks_blocking_is_a_warning():
    v = gate("Add the loader, production ready.", {"app.py": "def load(text):\n    return eval(text)\n",
                                                    "tests/test_app.py": TEST})
    assert ("SEN602", Severity.WARNING) in severities(v) and not v.passed  # eval blocks on its own


def test_secure_claim_against_jail_and_chaos_findings():
    v = gate("Harden the config loader.", {"app.py": "def load(text):\n    return eval(text)\n"})
    assert ("SEN607", Severity.WARNING) in severities(v)


def test_robust_claim_against_chaos_findings():
    src = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        pass\n"
    assert ("SEN602", Severity.WARNING) in severities(gate("Loader now handles all errors.", {"app.py": src}))


def test_performance_claim_with_benchmark_or_numbers_is_supported():
    assert claim_findings(gate("Speed up port parsing: 2.1 ms -> 0.4 ms per call.")) == []
    bench = "import timeit\n\n\ndef bench_parse():\n    return timeit.timeit(lambda: int('1'), number=10)\n"
    assert claim_findings(gate("Speed up port parsing.", {"app.py": SRC, "benchmarks/bench_parse.py": bench})) == []


def test_behaviour_unchanged_with_rewritten_assertions_is_doubtful():
    after = TEST.replace("== 8080", "is None")
    [f] = claim_findings(gate("No functional change.", {"tests/test_app.py": (TEST, after)}))
    assert (f.rule, f.severity) == ("SEN605", Severity.WARNING) and "assertions rewritten" in f.message


def test_refactor_that_only_reshapes_test_calls_keeps_its_assertions():
    before = TEST
    after = TEST.replace("from app import parse_port", "from app import parse_port, Budget").replace(
        "parse_port('8080')", "parse_port(\n        '8080'\n    )")
    v = gate("Pure refactor: behaviour unchanged.", {"tests/test_app.py": (before, after)})
    assert [s for _, s in severities(v)] == [Severity.INFO]  # no report: advice, and no doubt


def test_behaviour_unchanged_with_passing_report_and_untouched_tests_is_supported(tmp_path):
    assert claim_findings(gate("Pure refactor, no functional change.", junit=[_junit(tmp_path)])) == []
    # a bare "refactor" with untouched tests is consistent
    assert claim_findings(gate("refactor: extract parse_port")) == []


def test_thread_safe_needs_sync_and_concurrent_test():
    plain = "class Counter:\n    def incr(self):\n        self.n += 1\n"
    assert severities(gate("Make the counter thread-safe.", {"app.py": plain})) == [("SEN608", Severity.INFO)]
    locked = ("import threading\n\n\nclass Counter:\n    def __init__(self):\n        self._lock = threading.Lock()\n"
              "        self.n = 0\n\n    def incr(self):\n        with self._lock:\n            self.n += 1\n")
    [f] = claim_findings(gate("Make the counter thread-safe.", {"app.py": locked}))
    assert f.severity is Severity.INFO and "concurrency test" in f.message
    test = ("import threading\nfrom app import Counter\n\n\ndef test_incr_from_threads():\n    c = Counter()\n"
            "    ts = [threading.Thread(target=c.incr) for _ in range(4)]\n")
    both = {"app.py": locked, "tests/test_counter.py": test}
    assert claim_findings(gate("Make the counter thread-safe.", both)) == []


def test_backward_compatible_against_signature_and_removals():
    before = "def fetch(url):\n    return url\n\n\ndef helper():\n    return 1\n"
    required = "def fetch(url, timeout):\n    return url\n\n\ndef helper():\n    return 1\n"
    [f] = claim_findings(gate("Backward compatible.", {"api.py": (before, required)}))
    assert (f.rule, f.severity) == ("SEN609", Severity.ERROR) and "timeout" in f.message
    removed = "def fetch(url):\n    return url\n"
    [f] = claim_findings(gate("No breaking changes.", {"api.py": (before, removed)}))
    assert f.severity is Severity.WARNING and "removed function helper" in f.message
    optional = "def fetch(url, timeout=10):\n    return url\n\n\ndef helper():\n    return 1\n"
    assert claim_findings(gate("Backward compatible.", {"api.py": (before, optional)})) == []
    moved = {"api.py": (before, removed), "util.py": "def helper():\n    return 1\n"}
    assert claim_findings(gate("Backward compatible.", moved)) == []


def test_backward_compatible_against_deleted_module():
    [f] = claim_findings(gate("No breaking changes.", {"pkg/api.py": None}))
    assert f.severity is Severity.WARNING and "deleted module pkg/api.py" in f.message


def test_no_side_effects_against_io():
    src = "import os\n\n\ndef render(rows):\n    os.remove('cache')\n    return '\\n'.join(rows)\n"
    [f] = claim_findings(gate("Pure function, no side effects.", {"app.py": src}))
    assert (f.rule, f.severity) == ("SEN610", Severity.WARNING) and "os.remove()" in f.message
    assert claim_findings(gate("No side effects.", {"app.py": "def render(rows):\n    return ', '.join(rows)\n"})) == []


def test_no_side_effects_about_named_functions_judges_those():
    src = ("import os\n\n\ndef render(rows):\n    return ', '.join(rows)\n\n\n"
           "def save(rows):\n    os.remove('cache')\n")
    assert claim_findings(gate("`render` is pure, so call it twice.", {"app.py": src})) == []
    assert severities(gate("`save` is pure, so call it twice.", {"app.py": src})) == [("SEN610", Severity.WARNING)]
    assert claim_findings(gate("`helper` is pure: hoist it.", {"app.py": src})) == []  # not in this change


@pytest.mark.parametrize("item,files,severity", [
    ("Tests added", {"app.py": SRC}, Severity.ERROR),
    ("Tests added", {"app.py": SRC, "tests/test_app.py": TEST}, None),
    ("No placeholders or TODOs", {"app.py": "def f():\n    pass  # TODO: write it\n"}, Severity.WARNING),
    ("No placeholders or TODOs", {"app.py": SRC}, None),
    ("Docs updated", {"app.py": SRC}, Severity.WARNING),
    ("Docs updated", {"app.py": SRC, "docs/ports.md": "# Ports\n"}, None),
    ("Changelog entry added", {"app.py": SRC}, Severity.WARNING),
    ("Changelog entry added", {"app.py": SRC, "CHANGELOG.md": "- ports\n"}, None),
    ("No hard-coded secrets", {"app.py": 'API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"\n'}, Severity.WARNING),
])
def test_checklist_items_cross_checked(item, files, severity):
    v = gate(f"Add port parsing\n\n- [x] {item}\n- [ ] Something else", files)
    found = [f for f in claim_findings(v) if f.rule == "SEN611"]
    assert [f.severity for f in found] == ([severity] if severity else []), found
    if severity:
        assert found[0].line == 3


def test_ticked_tests_pass_against_failing_report_blocks(tmp_path):
    v = gate("Add port parsing\n\n- [x] All tests pass", junit=[_junit(tmp_path, failures=1)])
    assert severities(v) == [("SEN611", Severity.ERROR)] and not v.passed


def test_unticked_checklist_items_are_not_checked():
    assert claim_findings(gate("Add parser\n\n- [ ] Tests added\n- [ ] Docs updated")) == []


def test_claims_check_does_not_import_the_engine():
    code = ("import sys\nimport sentinel.checks.claims, sentinel.intent.claims, sentinel.intent.evidence\n"
            "print('sentinel.engine' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    source = (Path(__file__).resolve().parent.parent / "sentinel" / "checks" / "claims.py").read_text()
    assert "sentinel.engine" not in source and "from sentinel import engine" not in source


def test_no_message_is_skipped_with_a_reason():
    cs = parse_diff(_diff({"app.py": SRC}), source="test")
    v = engine.run(Change(cs, content_rev=None), validate({}, "test"), engine.RunOptions())
    r = claims_result(v)
    assert r.status is CheckStatus.SKIPPED and "--message" in r.reason


def test_message_without_claims_passes_with_a_reason():
    r = claims_result(gate("Add port parsing"))
    assert r.status is CheckStatus.PASSED and r.reason == "no checkable claims in the message"


def test_supported_claims_are_listed_in_the_summary(tmp_path):
    v = gate("Added unit tests.\n\nAll tests pass.", {"app.py": SRC, "tests/test_app.py": TEST},
             junit=[_junit(tmp_path)])
    r = claims_result(v)
    assert claim_findings(v) == [] and r.reason.startswith("2 claim(s): 2 supported")


def test_through_a_real_git_repo(repo, tmp_path):
    repo.write("app.py", SRC)
    repo.add("app.py")
    advice = sentinel_cli(repo, "check", "--message", "Add port parsing\n\nAll tests pass.", "--no-memory")
    assert advice.returncode == 0, advice.stdout + advice.stderr
    assert "SEN601" in advice.stdout and "COMMIT_MSG" in advice.stdout
    bad = sentinel_cli(repo, "check", "--message", "Add port parsing\n\nAll tests pass.", "--junit",
                       _junit(tmp_path, failures=1), "--no-memory")
    assert bad.returncode == 1 and "SEN601" in bad.stdout, bad.stdout + bad.stderr
    ok = sentinel_cli(repo, "check", "--message", "Add port parsing\n\nAll tests pass.", "--junit",
                      _junit(tmp_path), "--no-memory")
    assert ok.returncode == 0 and "SEN601" not in ok.stdout, ok.stdout + ok.stderr


def test_commit_message_of_a_range_is_read(repo):
    repo.write("app.py", SRC)
    repo.add("app.py")
    base = repo.commit("init")
    repo.write("docs/ports.md", DOC)
    repo.add("docs/ports.md")
    repo.commit("Fix the crash on an empty value\n\nFixes #12")
    out = sentinel_cli(repo, "check", "--range", f"{base}..HEAD", "--no-memory")
    assert out.returncode == 1 and "SEN603" in out.stdout, out.stdout + out.stderr


def test_squash_merge_of_a_range_is_not_read_as_claims(repo):
    repo.write("app.py", SRC)
    repo.add("app.py")
    base = repo.commit("init")
    repo.write("app.py", SRC + "\n\ndef other():\n    return 2\n")
    repo.add("app.py")
    repo.commit(SQUASH)
    out = sentinel_cli(repo, "check", "--range", f"{base}..HEAD", "--no-memory", "--format", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    import json
    assert [f for f in json.loads(out.stdout)["findings"] if f["rule"].startswith("SEN6")] == []


# --- whose words a claim is ------------------------------------------------------------------------------

DEPENDABOT = """Bump fastjson from 1.2.0 to 1.3.0

Bumps [fastjson](https://github.com/example/fastjson) from 1.2.0 to 1.3.0.
<details>
<summary>Release notes</summary>
<p><em>Sourced from fastjson's releases.</em></p>
<blockquote>
<h2>1.3.0</h2>
<ul>
<li>Adds unit tests for the decoder</li>
<li>All tests pass on Python 3.13</li>
</ul>
</blockquote>
</details>
<details>
<summary>Commits</summary>
<ul>
<li>Fixes the crash on empty input</li>
</ul>
</details>
"""


def test_quoted_release_notes_and_details_blocks_are_not_the_authors_claims():
    assert kinds(DEPENDABOT) == []
    v = gate(DEPENDABOT, {"requirements.txt": ("fastjson==1.2.0\n", "fastjson==1.3.0\n")})
    assert claim_findings(v) == [] and v.passed
    # the author's own words around the blocks still count, and an unclosed block runs to the end
    assert kinds("Add parser\n\n<details><summary>log</summary>\nAll tests pass\n</details>\n\nAdded unit tests.\n") \
        == ["tests_added"]
    assert kinds("Add parser\n\nAdded unit tests.\n<blockquote>\nAll tests pass\n") == ["tests_added"]
    masked = mask_message(DEPENDABOT)
    assert len(masked) == len(DEPENDABOT) and masked.count("\n") == DEPENDABOT.count("\n")


def test_a_body_signed_off_by_a_bot_is_not_a_claim():
    message = ("Bump fastjson from 1.2.0 to 1.3.0\n\nAdds unit tests and fixes the crash.\n\n"
               "Signed-off-by: dependabot[bot] <support@github.com>\n")
    assert kinds(message) == []
    human = message.replace("dependabot[bot]", "Ada Lovelace")
    assert kinds(human) != []


def test_deleting_test_modules_contradicts_all_tests_pass():
    v = gate("Drop the old parser\n\nRemoved the obsolete tests; all tests pass.\n",
             {"app.py": (SRC, SRC + "\n"), "tests/test_old.py": None})
    [f] = [f for f in claim_findings(v) if f.rule == "SEN601"]
    assert f.severity is Severity.ERROR and "tests deleted: tests/test_old.py" in f.message and not v.passed
    # tests deleted beside tests added or changed: doubtful, not contradicted
    v = gate("Move the parser tests\n\nAll tests pass.\n",
             {"app.py": (SRC, SRC + "\n"), "tests/test_old.py": None, "tests/test_app.py": TEST})
    [f] = [f for f in claim_findings(v) if f.rule == "SEN601"]
    assert f.severity is Severity.WARNING
