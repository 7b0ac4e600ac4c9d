"""Claims: what a message asserts, checked against the evidence the gate can see."""

from __future__ import annotations

import difflib

import pytest

from sentinel import engine
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.intent.claims import extract
from sentinel.intent.evidence import ci_test_runs, read_coverage, read_junit
from sentinel.intent.message import clean_commit_message, mask_message
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


# --- extraction: what is a claim ---------------------------------------------------------------------

@pytest.mark.parametrize("message,kind", [
    ("All tests pass.", "tests_pass"),
    ("Tests were slow, but all tests pass now", "tests_pass"),
    ("The test suite is green", "tests_pass"),
    ("Added unit tests for the parser", "tests_added"),
    ("Fully tested", "tested"),
    ("100% coverage", "coverage"),
    ("This is production ready.", "production_ready"),
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


def test_all_tests_pass_without_evidence_is_unsupported():
    v = gate("Add port parsing\n\nAll tests pass.")
    [f] = claim_findings(v)
    assert (f.rule, f.severity, f.path, f.line) == ("SEN601", Severity.ERROR, "COMMIT_MSG", 3)
    assert "unsupported" in f.message and "--junit" in f.message and not v.passed


def test_all_tests_pass_with_passing_junit_is_supported(tmp_path):
    v = gate("All tests pass.", junit=[_junit(tmp_path)])
    assert claim_findings(v) == []
    assert "supported" in claims_result(v).reason and "12 tests" in claims_result(v).reason


def test_all_tests_pass_with_failing_junit_is_unsupported(tmp_path):
    v = gate("All tests pass.", junit=[_junit(tmp_path, failures=2)])
    [f] = claim_findings(v)
    assert f.severity is Severity.ERROR and "2 failed" in f.message


def test_all_tests_pass_with_skipped_tests_is_partial(tmp_path):
    v = gate("All tests pass.", junit=[_junit(tmp_path, skipped=3)])
    [f] = claim_findings(v)
    assert f.severity is Severity.WARNING and "3 tests were skipped" in f.message


def test_tests_pass_with_tests_in_change_but_no_report_is_partial():
    v = gate("All tests pass.", {"app.py": SRC, "tests/test_app.py": TEST})
    [f] = claim_findings(v)
    assert (f.rule, f.severity) == ("SEN601", Severity.WARNING) and "tests/test_app.py" in f.message
    assert v.passed  # a warning does not block at the default fail level


def test_ci_checks_support_tests_pass():
    v = gate("All tests pass.", ci_checks=[{"name": "tests", "conclusion": "success"}])
    assert claim_findings(v) == []


def test_tests_added_needs_a_test_file():
    assert [f.rule for f in claim_findings(gate("Added unit tests for parse_port."))] == ["SEN601"]
    assert claim_findings(gate("Added unit tests for parse_port.", {"app.py": SRC, "tests/test_app.py": TEST})) == []


def test_full_coverage_claim_against_coverage_report(tmp_path):
    low = tmp_path / "low.xml"
    low.write_text('<coverage line-rate="0.62"/>')
    full = tmp_path / "full.xml"
    full.write_text('<coverage line-rate="1.0"/>')
    [f] = claim_findings(gate("100% coverage.", coverage=[str(low)]))
    assert f.severity is Severity.ERROR and "62%" in f.message
    assert claim_findings(gate("100% coverage.", coverage=[str(full)])) == []


def test_done_with_placeholder_in_change_is_unsupported():
    v = gate("Port parsing is done.", {"app.py": "def parse_port(text):\n    raise NotImplementedError\n"})
    assert "SEN604" in [f.rule for f in v.findings]
    assert claim_findings(gate("Port parsing is done.")) == []


def test_done_claim_checked_even_when_placeholder_check_did_not_run():
    # The commit-msg hook runs only drift and claims: claims runs the placeholder check itself.
    cs = parse_diff(_diff({"app.py": "def parse_port(text):\n    raise NotImplementedError\n"}), source="test")
    v = engine.run(Change(cs, content_rev=None), validate({}, "test"),
                   engine.RunOptions(message="All done.", only_checks=["claims"]))
    assert [f.rule for f in v.findings] == ["SEN604"]


def test_done_claim_is_partial_when_placeholder_check_is_disabled():
    v = gate("Port parsing is done.", config={"placeholder": {"enabled": False}})
    [f] = claim_findings(v)
    assert f.severity is Severity.WARNING and "disabled" in f.message


def test_secure_claim_against_jail_and_chaos_findings():
    v = gate("Harden the config loader.", {"app.py": "def load(text):\n    return eval(text)\n"})
    assert "SEN607" in [f.rule for f in claim_findings(v)]
    assert next(f for f in claim_findings(v) if f.rule == "SEN607").severity is Severity.ERROR


def test_robust_claim_against_chaos_findings():
    src = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        pass\n"
    assert "SEN602" in [f.rule for f in claim_findings(gate("Loader now handles all errors.", {"app.py": src}))]


def test_fix_without_regression_test_is_a_warning_and_with_one_is_supported():
    [f] = claim_findings(gate("Fixes #42"))
    assert (f.rule, f.severity) == ("SEN603", Severity.WARNING) and "regression test" in f.message
    assert claim_findings(gate("Fixes #42", {"app.py": SRC, "tests/test_app.py": TEST})) == []


def test_performance_claim_needs_benchmark_or_numbers():
    assert claim_findings(gate("Speed up port parsing."))[0].severity is Severity.ERROR
    [f] = claim_findings(gate("Speed up port parsing: 2.1 ms -> 0.4 ms per call."))
    assert f.severity is Severity.WARNING and "2.1 ms" in f.message
    bench = "import timeit\n\n\ndef bench_parse():\n    return timeit.timeit(lambda: int('1'), number=10)\n"
    assert claim_findings(gate("Speed up port parsing.", {"app.py": SRC, "benchmarks/bench_parse.py": bench})) == []


def test_behaviour_unchanged_with_rewritten_tests_is_unsupported():
    before = TEST
    after = TEST.replace("== 8080", "is None")
    [f] = claim_findings(gate("No functional change.", {"tests/test_app.py": (before, after)}))
    assert (f.rule, f.severity) == ("SEN605", Severity.ERROR) and "rewritten" in f.message


def test_behaviour_unchanged_with_passing_report_and_untouched_tests_is_supported(tmp_path):
    assert claim_findings(gate("Pure refactor, no functional change.", junit=[_junit(tmp_path)])) == []
    # a bare "refactor" with untouched tests is consistent
    assert claim_findings(gate("refactor: extract parse_port")) == []


def test_thread_safe_needs_sync_and_concurrent_test():
    plain = "class Counter:\n    def incr(self):\n        self.n += 1\n"
    assert claim_findings(gate("Make the counter thread-safe.", {"app.py": plain}))[0].severity is Severity.ERROR
    locked = ("import threading\n\n\nclass Counter:\n    def __init__(self):\n        self._lock = threading.Lock()\n"
              "        self.n = 0\n\n    def incr(self):\n        with self._lock:\n            self.n += 1\n")
    [f] = claim_findings(gate("Make the counter thread-safe.", {"app.py": locked}))
    assert f.severity is Severity.WARNING and "concurrency test" in f.message
    test = ("import threading\nfrom app import Counter\n\n\ndef test_incr_from_threads():\n    c = Counter()\n"
            "    ts = [threading.Thread(target=c.incr) for _ in range(4)]\n")
    both = {"app.py": locked, "tests/test_counter.py": test}
    assert claim_findings(gate("Make the counter thread-safe.", both)) == []


def test_backward_compatible_against_signature_and_removals():
    before = "def fetch(url):\n    return url\n\n\ndef helper():\n    return 1\n"
    required = "def fetch(url, timeout):\n    return url\n\n\ndef helper():\n    return 1\n"
    [f] = claim_findings(gate("Backward compatible.", {"api.py": (before, required)}))
    assert f.rule == "SEN609" and "timeout" in f.message
    removed = "def fetch(url):\n    return url\n"
    [f] = claim_findings(gate("No breaking changes.", {"api.py": (before, removed)}))
    assert "removed function helper" in f.message
    optional = "def fetch(url, timeout=10):\n    return url\n\n\ndef helper():\n    return 1\n"
    assert claim_findings(gate("Backward compatible.", {"api.py": (before, optional)})) == []
    private_gone = "def fetch(url):\n    return url\n\n\ndef _helper():\n    return 1\n"
    assert "helper" in claim_findings(gate("Backward compatible.", {"api.py": (before, private_gone)}))[0].message


def test_backward_compatible_against_deleted_module():
    [f] = claim_findings(gate("No breaking changes.", {"pkg/api.py": None}))
    assert "deleted module pkg/api.py" in f.message


def test_no_side_effects_against_io():
    src = "import os\n\n\ndef render(rows):\n    os.remove('cache')\n    return '\\n'.join(rows)\n"
    [f] = claim_findings(gate("Pure function, no side effects.", {"app.py": src}))
    assert f.rule == "SEN610" and "os.remove()" in f.message
    assert claim_findings(gate("No side effects.", {"app.py": "def render(rows):\n    return ', '.join(rows)\n"})) == []


@pytest.mark.parametrize("item,files,contradicted", [
    ("Tests added", {"app.py": SRC}, True),
    ("Tests added", {"app.py": SRC, "tests/test_app.py": TEST}, False),
    ("No placeholders or TODOs", {"app.py": "def f():\n    pass  # TODO: write it\n"}, True),
    ("No placeholders or TODOs", {"app.py": SRC}, False),
    ("Docs updated", {"app.py": SRC}, True),
    ("Docs updated", {"app.py": SRC, "docs/ports.md": "# Ports\n"}, False),
    ("Changelog entry added", {"app.py": SRC}, True),
    ("Changelog entry added", {"app.py": SRC, "CHANGELOG.md": "- ports\n"}, False),
    ("No hard-coded secrets", {"app.py": 'API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"\n'}, True),
])
def test_checklist_items_cross_checked(item, files, contradicted):
    v = gate(f"Add port parsing\n\n- [x] {item}\n- [ ] Something else", files)
    found = [f for f in claim_findings(v) if f.rule == "SEN611"]
    assert bool(found) is contradicted, found
    if contradicted:
        assert found[0].line == 3 and found[0].severity is Severity.ERROR


def test_unticked_checklist_items_are_not_checked():
    assert claim_findings(gate("Add parser\n\n- [ ] Tests added\n- [ ] Docs updated")) == []


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
    out = repo.sentinel("check", "--message", "Add port parsing\n\nAll tests pass.", "--no-memory")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "SEN601" in out.stdout and "COMMIT_MSG" in out.stdout
    ok = repo.sentinel("check", "--message", "Add port parsing\n\nAll tests pass.", "--junit",
                       _junit(tmp_path), "--no-memory")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_commit_message_of_a_range_is_read(repo):
    repo.write("app.py", SRC)
    repo.add("app.py")
    base = repo.commit("init")
    repo.write("app.py", SRC + "\n\ndef other():\n    return 2\n")
    repo.add("app.py")
    repo.commit("Add other\n\nProduction ready.")
    out = repo.sentinel("check", "--range", f"{base}..HEAD", "--no-memory")
    assert out.returncode == 1 and "SEN602" in out.stdout, out.stdout + out.stderr
