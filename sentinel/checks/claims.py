"""Claims: what the commit message or PR body asserts about this change, checked against evidence.

Each claim (the table is in sentinel/intent/claims.py; what is not a claim, in sentinel/intent/message.py) is
judged from the evidence the gate can see: test reports (--junit), coverage (--coverage), CI check runs, what
the change touches (tests, docs, benchmarks), a digest of its code, and the other checks' findings. A claim of
one kind is judged once per message (a title repeated in the body is one claim). The judgement decides the
severity, not the rule — see OUTCOMES:

- **contradicted** (error, blocks): the evidence shows the claim is false — a failing test report against
  "all tests pass" or "done", test modules deleted (and none added or changed) under "tests pass", coverage
  under the rate claimed, "fixes #N" on a change of docs or tests only that the message does not present as a
  docs or test fix, "added tests" with no test in the change, a public
  signature made stricter under "backward compatible";
- **doubtful** (warning): evidence that usually means the claim is not quite true — existing assertions
  rewritten under "no functional change", blocking findings of the other checks under "production ready",
  "done", "handles all errors" or "hardened" (those findings block on their own), I/O under "no side effects";
- **unverified** (info, advice): nothing offered backs it, nothing contradicts it ("Optimize X" with no
  numbers, "Fixes #12" with no regression test);
- **supported**: not a finding; listed in the check's summary.

The check never imports the engine: other checks' findings come from ``cctx.findings_of``.
"""

from __future__ import annotations

import re

from sentinel.intent import lazy_re
from sentinel.models import CheckResult, CheckStatus, Finding, Severity
from sentinel.redact import redact
from sentinel.record import Record, factory
from sentinel.rules import Rule

CHECK = "claims"
MESSAGE_PATH = "COMMIT_MSG"


class Outcome:
    SUPPORTED = "supported"
    UNVERIFIED = "unverified"
    DOUBTFUL = "doubtful"
    CONTRADICTED = "contradicted"


# How sure the gate is that a claim is false decides how loud it is.
OUTCOMES: dict[str, Severity] = {
    Outcome.UNVERIFIED: Severity.INFO,
    Outcome.DOUBTFUL: Severity.WARNING,
    Outcome.CONTRADICTED: Severity.ERROR,
}
_WORDING = {Outcome.UNVERIFIED: "is not backed by evidence", Outcome.DOUBTFUL: "is doubtful",
            Outcome.CONTRADICTED: "is contradicted"}

_SRC = "def parse_port(text):\n    return int(text)\n"
_TEST = ("from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') == 8080\n")
_SEVERITY_NOTE = " Contradicted: error; doubtful: warning; no evidence either way: info."


def _rule(code, name, summary, rationale, message, counter_message, hint, example=_SRC, counter=None,
          counter_path=None, example_path="app.py", before=None) -> Rule:
    counter = counter if counter is not None else example
    return Rule(code, name, CHECK, Severity.ERROR, summary + _SEVERITY_NOTE, rationale, example, counter,
                hint=hint, example_path=example_path, example_message=message,
                counter_example_message=counter_message, counter_example_path=counter_path, example_before=before)


RULES: tuple[Rule, ...] = (
    _rule("SEN601", "claim-tests",
          "The message says tests pass, were added or cover the change, and the evidence says otherwise: a failing "
          "test report, no test in the change, coverage under the rate claimed.",
          "A claim that tests pass or exist is how unverified changes get merged; a report that fails or a change "
          "without the tests it announces makes it false.",
          "Add port parsing\n\nAdded unit tests for parse_port.",
          "Add port parsing\n\nAdded unit tests for parse_port.",
          "attach the test report (--junit), add the tests it announces, or drop the claim",
          counter=_TEST, counter_path="tests/test_app.py"),
    _rule("SEN602", "claim-production-ready",
          "The message says the change is production ready or robust while tests fail, none back it, or other "
          "checks found problems in it.",
          "'Production ready' is the strongest claim a change can make; it must at least be tested and clean.",
          "Add port parsing, production ready.", "Add port parsing with a unit test; production ready.",
          "add tests and fix the findings of the other checks, or drop the claim",
          example="def parse_port(text):\n    raise NotImplementedError\n",
          counter=_TEST, counter_path="tests/test_app.py"),
    _rule("SEN603", "claim-fixed",
          "The message says a bug is fixed while tests fail, or the change touches no code (only docs or tests) "
          "and the message does not say it fixes docs or tests; a fix without a regression test is advice.",
          "A fix that changes no code fixes nothing; a fix without a test that reproduces the bug tends to come back.",
          "Fix the crash on an empty value.\n\nFixes #42.", "Document the accepted port syntax.\n\nFixes #42.",
          "add the code change and a test that fails without it, or say what the change really does",
          example="# Ports\n\nA port is a number from 1 to 65535.\n", example_path="docs/ports.md"),
    _rule("SEN604", "claim-done",
          "The message says the work is done or complete while tests fail or the change still has placeholders "
          "(TODO, stubs).",
          "A change declared complete with placeholders in it ships the missing part silently.",
          "Port parsing is done.", "Port parsing is done.",
          "finish the placeholders the placeholder check reported, or say what is left",
          example="def parse_port(text):\n    raise NotImplementedError\n",
          counter="def parse_port(text):\n    return int(text)\n"),
    _rule("SEN605", "claim-behaviour-unchanged",
          "The message says behaviour is unchanged (or a pure refactor) while tests fail or existing assertions "
          "were rewritten.",
          "Rewriting what the tests expect in a refactor is how behaviour changes slip in under a 'no functional "
          "change' label.",
          "Pure refactor, no functional change.",
          "Reject ports above 65535; the test now expects the new error.",
          "keep the existing assertions as they were (they prove behaviour is kept), or describe the behaviour change",
          example_path="tests/test_app.py",
          before="from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') == 8080\n",
          example="from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') is None\n"),
    _rule("SEN606", "claim-performance",
          "The message says the change is faster or optimized with no benchmark or measurement (advice only: "
          "nothing the gate sees can contradict it).",
          "Performance claims without a measurement are often wrong and hide the cost of the change.",
          "Speed up port parsing.", "Speed up port parsing: 2.1 ms -> 0.4 ms per call (bench_parse.py).",
          "add or update a benchmark, or put the measured numbers in the message",
          counter=("import timeit\n\n\ndef bench_parse_port():\n"
                   "    return timeit.timeit(lambda: int('8080'), number=1000)\n"),
          counter_path="benchmarks/bench_parse.py"),
    _rule("SEN607", "claim-security",
          "The message says the change is secure or hardened while other checks found dangerous code in it.",
          "A security claim on code with eval, shell=True or hard-coded credentials gives false assurance.",
          "Harden the config loader.", "Harden the config loader.",
          "fix the jail/chaos findings, add a test for the attack, or drop the claim",
          example="def load(text):\n    return eval(text)\n",
          counter=("import ast\n\n\ndef load(text):\n    return ast.literal_eval(text)\n\n\n"
                   "def test_load_rejects_code():\n    try:\n        load('__import__(\"os\")')\n"
                   "    except ValueError:\n        return\n    raise AssertionError('code was evaluated')\n"),
          counter_path="tests/test_loader.py"),
    _rule("SEN608", "claim-thread-safe",
          "The message says the code is thread-safe with no synchronization or concurrency test in the change.",
          "Thread safety is not visible in a diff unless the diff adds the synchronization and a test that races.",
          "Make the counter thread-safe.", "Make the counter thread-safe.",
          "show the synchronization (lock, queue, atomic) and add a concurrent test",
          example=("class Counter:\n    def __init__(self):\n        self.n = 0\n\n"
                   "    def incr(self):\n        self.n += 1\n"),
          counter=("import threading\n\n\nclass Counter:\n    def __init__(self):\n        self.n = 0\n"
                   "        self._lock = threading.Lock()\n\n    def incr(self):\n        with self._lock:\n"
                   "            self.n += 1\n\n\ndef test_concurrent_incr():\n    c = Counter()\n"
                   "    threads = [threading.Thread(target=c.incr) for _ in range(8)]\n"
                   "    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n"
                   "    assert c.n == 8\n"),
          counter_path="tests/test_counter.py"),
    _rule("SEN609", "claim-backward-compatible",
          "The message says the change is backward compatible while it adds a required parameter to a public "
          "function or removes one (error), or removes public names (warning).",
          "Callers break on removed names and new required arguments, whatever the message says.",
          "Backward compatible: add a timeout to fetch.", "Backward compatible: add a timeout to fetch.",
          "give new parameters a default and keep removed names as deprecated aliases",
          before="def fetch(url):\n    return url, 10\n",
          example="def fetch(url, timeout):\n    return url, timeout\n",
          counter="def fetch(url, timeout=10):\n    return url, timeout\n"),
    _rule("SEN610", "claim-no-side-effects",
          "The message says the code has no side effects while the added functions do I/O or mutate global state.",
          "Callers rely on 'no side effects' to cache, retry or reorder calls; hidden I/O breaks that.",
          "Add a pure function to format the report, no side effects.",
          "Add a pure function to format the report, no side effects.",
          "move the I/O to the caller, or drop the claim",
          example="def format_report(rows):\n    text = '\\n'.join(rows)\n    print(text)\n    return text\n",
          counter="def format_report(rows):\n    return '\\n'.join(rows)\n"),
    _rule("SEN611", "checklist-contradicted",
          "A ticked PR-template checklist item ('- [x] Tests added', '- [x] No placeholders') is contradicted by "
          "the change.",
          "Ticked boxes are read as facts by reviewers; a false tick is worse than an empty one.",
          "Add port parsing\n\n- [x] Tests added\n- [ ] Docs updated",
          "Add port parsing\n\n- [ ] Tests added\n- [ ] Docs updated",
          "untick the item or do what it says"),
)
_RULE = {r.code: r for r in RULES}


class Judgement(Record):
    outcome: str
    found: list[str] = factory(list)
    missing: list[str] = factory(list)


# --- evidence -------------------------------------------------------------------------------------


class Evidence:
    """Evidence for one change, each piece computed on first use."""

    def __init__(self, cctx):
        self.cctx = cctx
        self._cache: dict = {}

    def _get(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def facts(self):
        from sentinel.intent.evidence import change_facts
        return self._get("facts", lambda: change_facts(self.cctx.files))

    @property
    def digest(self):
        from sentinel.intent.digest import build_digest
        return self._get("digest", lambda: build_digest(self.cctx.files, self.cctx.file_contexts))

    @property
    def topics(self) -> set[str]:
        from sentinel.intent.claims import message_topics
        return self._get("topics", lambda: message_topics(self.cctx.message))

    @property
    def junit(self):
        def load():
            from sentinel.intent.evidence import read_junit, resolve_paths
            paths = list(self.cctx.options.get("junit") or []) + list(self.cctx.config.claims.junit)
            return [read_junit(p) for p in resolve_paths(paths, self.cctx.root)]
        return self._get("junit", load)

    @property
    def coverage(self):
        def load():
            from sentinel.intent.evidence import read_coverage, resolve_paths
            paths = list(self.cctx.options.get("coverage") or []) + list(self.cctx.config.claims.coverage)
            return [read_coverage(p) for p in resolve_paths(paths, self.cctx.root)]
        return self._get("coverage", load)

    def test_run(self) -> tuple[str, list[str]]:
        """('pass' | 'fail' | 'none', descriptions) from JUnit reports and CI check runs."""
        def compute():
            from sentinel.intent.evidence import ci_test_runs
            found = []
            state = "none"
            for r in self.junit:
                found.append(r.describe())
                if r.problem:
                    continue
                if r.failures or r.errors:
                    state = "fail"
                elif r.tests and state == "none":
                    state = "pass"
            ok, bad = ci_test_runs(self.cctx.options.get("ci_checks"))
            if bad:
                state = "fail"
                found.append("CI failed: " + ", ".join(bad[:3]))
            elif ok:
                state = "pass" if state == "none" else state
                found.append("CI passed: " + ", ".join(ok[:3]))
            return state, found
        return self._get("test_run", compute)

    def skipped_tests(self) -> int:
        return sum(r.skipped for r in self.junit if not r.problem)

    def findings(self, check: str) -> list[Finding] | None:
        """The check's findings on this change as the verdict keeps them, or None when it is disabled."""
        findings_of = self.cctx.findings_of
        return findings_of(check) if findings_of is not None else None

    def blocking(self, checks: tuple[str, ...]) -> tuple[list[Finding], list[str]]:
        """(the findings of these checks that block on their own, the checks that could not run); once per set of
        checks: every claim of a message may ask (a message of thousands of claims made this quadratic)."""
        def compute():
            level = self.cctx.config.fail_level
            bad, absent = [], []
            for check in checks:
                found = self.findings(check)
                if found is None:
                    absent.append(check)
                else:
                    bad.extend(f for f in found if f.severity.rank >= level.rank)
            return bad, absent

        return self._get(("blocking", checks), compute)


def _where(f: Finding) -> str:
    from sentinel.redact import display_path

    return f"{f.rule} {display_path(f.path)}:{f.line}" if f.line else f"{f.rule} {display_path(f.path)}"


def _where_all(findings: list[Finding], limit: int = 3) -> str:
    """The first findings named (as _names lists them), the rest counted: never every finding formatted."""
    more = f" +{len(findings) - limit}" if len(findings) > limit else ""
    return ", ".join(_where(f) for f in findings[:limit]) + more


def _names(paths: list[str], limit: int = 3) -> str:
    from sentinel.redact import display_path  # names quoted as git quotes them, like every path shown

    more = f" +{len(paths) - limit}" if len(paths) > limit else ""
    return ", ".join(display_path(p) for p in paths[:limit]) + more


def _tests_found(facts) -> list[str]:
    return [f"tests changed: {_names(facts.test_files or facts.test_code)}"] if facts.has_tests else []


# --- judgements per claim kind --------------------------------------------------------------------
# Each returns the outcome and what was found / what would back the claim. Only evidence that shows the claim
# false makes it CONTRADICTED; weaker evidence against it, DOUBTFUL; no evidence either way, UNVERIFIED.

def _judge_tests_pass(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found)
    if state == "pass":
        skipped = ev.skipped_tests()
        if skipped and re.search(r"\ball\b", claim.text, re.I):
            return Judgement(Outcome.UNVERIFIED, found, [f"the {skipped} skipped tests run"])
        return Judgement(Outcome.SUPPORTED, found)
    problems = [r.describe() for r in ev.junit if r.problem]
    deleted = ev.facts.tests_deleted
    if deleted:
        # Tests removed under "tests pass": the removed ones no longer run, so nothing shown passes for them.
        # With no test added or changed beside them the claim rests on the deletion: contradicted.
        outcome = Outcome.DOUBTFUL if ev.facts.test_files else Outcome.CONTRADICTED
        return Judgement(outcome, [f"tests deleted: {_names(deleted)}"] + problems,
                         ["the deleted tests kept, or a test report (--junit) or CI run showing the rest pass"])
    return Judgement(Outcome.UNVERIFIED, _tests_found(ev.facts) + problems,
                     ["a test report (--junit) or CI run showing they pass"])


def _judge_tests_added(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    if facts.has_tests:
        return Judgement(Outcome.SUPPORTED, _tests_found(facts))
    if not ev.cctx.files:
        return Judgement(Outcome.UNVERIFIED, [], ["a change to look at"])
    if facts.config_naming_tests and not facts.tests_deleted:
        return Judgement(Outcome.UNVERIFIED, [f"no test file, but {_names(facts.config_naming_tests)} names tests"],
                         ["a test added or changed in this change"])
    found = [f"tests deleted: {_names(facts.tests_deleted)}"] if facts.tests_deleted else \
        [f"no test in the change ({ev._get('files named', lambda: _names([f.path for f in ev.cctx.files]))})"]
    return Judgement(Outcome.CONTRADICTED, found, ["a test added or changed in this change"])


def _judge_tested(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found)
    cov = [c for c in ev.coverage if c.problem is None]
    found = _tests_found(ev.facts) + list(found) + [c.describe() for c in cov]
    if ev.facts.has_tests and (state == "pass" or cov):
        return Judgement(Outcome.SUPPORTED, found)
    return Judgement(Outcome.UNVERIFIED, found, ["tests in the change and a test report (--junit) or coverage"])


def _judge_coverage(claim, ev: Evidence) -> Judgement:
    claimed = claim.rate if claim.rate is not None else 1.0
    cov = [c for c in ev.coverage if c.problem is None]
    if cov:
        rate = min(c.line_rate for c in cov)
        found = [c.describe() for c in cov]
        if rate + 0.005 >= claimed:
            return Judgement(Outcome.SUPPORTED, found)
        return Judgement(Outcome.CONTRADICTED, found, [f"line coverage of {claimed:.0%}"])
    return Judgement(Outcome.UNVERIFIED, _tests_found(ev.facts), ["a coverage report (--coverage)"])


def _judge_production_ready(claim, ev: Evidence) -> Judgement:
    state, run_found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, run_found, ["passing tests"])
    bad, absent = ev.blocking(("placeholder", "chaos", "jail"))
    if bad:
        return Judgement(Outcome.DOUBTFUL, [_where_all(bad)],
                         ["a change without blocking placeholder/chaos/jail findings"])
    found = run_found + _tests_found(ev.facts)
    if not (ev.facts.has_tests or state == "pass"):
        return Judgement(Outcome.UNVERIFIED, found, ["tests in the change or a test report (--junit)"])
    if absent:
        return Judgement(Outcome.UNVERIFIED, found, [f"the {', '.join(absent)} check(s) (disabled)"])
    return Judgement(Outcome.SUPPORTED, found + ["no placeholder/chaos/jail findings"])


def _judge_robust(claim, ev: Evidence) -> Judgement:
    bad, absent = ev.blocking(("chaos",))
    if bad:
        return Judgement(Outcome.DOUBTFUL, [_where_all(bad)],
                         ["error handling without blocking chaos findings"])
    if absent:
        return Judgement(Outcome.UNVERIFIED, [], ["the chaos check (disabled)"])
    return Judgement(Outcome.SUPPORTED, ["no chaos findings"])


# "Fixes #12", "fixed the crash": a fix of behaviour. "Closes #12" / "resolves #12" may close any issue (a docs
# request, a question), so only the fix wording is held against a change that touches no code.
_FIX_WORDING = lazy_re(r"\bfix", re.I)


def _judge_fixed(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found, ["passing tests"])
    if not ev.cctx.files:
        return Judgement(Outcome.UNVERIFIED, [], ["a change to look at"])
    if not facts.code_files:
        tests = facts.test_files + facts.tests_deleted
        touched = " and ".join(k for k, files in (("docs", facts.doc_files), ("tests", tests)) if files)
        said = ev._get("says-what-it-touches", lambda: _says_what_it_touches(ev))  # the message's, not the claim's
        if said:
            return Judgement(Outcome.SUPPORTED, [f"a fix of the {touched} ({said})"])
        only = [f"the change touches only {touched}: {_names(facts.doc_files + tests)}"]
        wanted = [f"a code change, or a message that says what the change fixes in the {touched}"]
        if _FIX_WORDING.search(claim.text):
            return Judgement(Outcome.CONTRADICTED, only, wanted)
        return Judgement(Outcome.UNVERIFIED, only, wanted)
    if facts.has_tests:
        return Judgement(Outcome.SUPPORTED, [f"regression test: {_names(facts.test_files or facts.test_code)}"]
                         + found)
    touched = facts.code_files or facts.doc_files
    return Judgement(Outcome.UNVERIFIED, ([f"changed: {_names(touched)}"] if touched else []) + found,
                     ["a regression test in the change"])


def _says_what_it_touches(ev: Evidence) -> str:
    """Why the message presents a change without code as what it is (empty when it does not)."""
    facts = ev.facts
    if facts.doc_files and "docs" in ev.topics:
        return "the message speaks of docs"
    if facts.has_tests and "tests" in ev.topics:
        return "the message speaks of tests"
    if facts.doc_fragments:
        return f"changelog entry typed as documentation: {_names(facts.doc_fragments, 1)}"
    message = ev.cctx.message or ""
    for path in facts.doc_files + facts.test_files:
        name = path.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        # the file's name, or a stem no prose word looks like (writing_hook_functions, how-to, conftest2)
        named = re.search(rf"(?<![\w/.-]){re.escape(name)}\b", message, re.I) or (
            len(stem) >= 4 and re.search(r"[_\d-]", stem) and re.search(rf"\b{re.escape(stem)}\b", message, re.I))
        if named:
            return f"the message names {path}"
    return ""


def _judge_done(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found, ["passing tests"])
    bad, absent = ev.blocking(("placeholder",))
    if bad:
        return Judgement(Outcome.DOUBTFUL, [f"placeholders: {_where_all(bad)}"],
                         ["a change without placeholders"])
    if absent:
        return Judgement(Outcome.UNVERIFIED, found, ["the placeholder check (disabled)"])
    return Judgement(Outcome.SUPPORTED, ["no placeholder findings"] + found)


def _judge_refactored(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found, ["passing tests"])
    rewritten = ev.facts.assertions_rewritten + ev.facts.tests_deleted
    if rewritten:
        return Judgement(Outcome.UNVERIFIED, [f"existing assertions rewritten: {_names(rewritten)}"] + found,
                         ["existing assertions left as they were"])
    return Judgement(Outcome.SUPPORTED, ["existing assertions kept"] + found)


def _judge_behaviour_unchanged(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Outcome.CONTRADICTED, found, ["passing tests"])
    rewritten = ev.facts.assertions_rewritten + ev.facts.tests_deleted
    if rewritten:
        return Judgement(Outcome.DOUBTFUL, [f"existing assertions rewritten: {_names(rewritten)}"] + found,
                         ["existing assertions left as they were"])
    if state == "pass":
        return Judgement(Outcome.SUPPORTED, ["existing assertions kept"] + found)
    return Judgement(Outcome.UNVERIFIED, ["existing assertions kept"], ["a test report (--junit) showing they pass"])


def _judge_performance(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.evidence import MEASUREMENT
    from sentinel.intent.message import mask_message
    numbers = MEASUREMENT.findall(mask_message(ev.cctx.message or ""))
    found = [f"measurements in the message: {', '.join(numbers[:3])}"] if numbers else []
    if ev.facts.bench_files:
        return Judgement(Outcome.SUPPORTED, [f"benchmark: {_names(ev.facts.bench_files)}"] + found)
    if numbers:
        return Judgement(Outcome.SUPPORTED, found)
    return Judgement(Outcome.UNVERIFIED, [], ["a benchmark in the change or measured numbers in the message"])


def _judge_secure(claim, ev: Evidence) -> Judgement:
    bad, absent = ev.blocking(("jail", "chaos"))
    if bad:
        return Judgement(Outcome.DOUBTFUL, [_where_all(bad)],
                         ["a change without blocking jail/chaos findings"])
    if absent:
        return Judgement(Outcome.UNVERIFIED, [], [f"the {', '.join(absent)} check(s) (disabled)"])
    if ev.facts.has_tests:
        return Judgement(Outcome.SUPPORTED, ["no jail/chaos findings"] + _tests_found(ev.facts))
    return Judgement(Outcome.UNVERIFIED, ["no jail/chaos findings"], ["a test for the security fix"])


def _added_code(ev: Evidence, fc) -> list[str]:
    ctx = ev.cctx.file_contexts.get(fc.path)
    if ctx is None:
        return list(fc.added.values())
    # the code of each added line, comments and strings left out (from the diff's lines when nothing was read)
    return [ctx.lexed.code_line(n) for n in sorted(fc.added)]


def _judge_thread_safe(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.evidence import CONCURRENT_TEST, SYNC, TEST, file_kind
    sync, tests = [], []
    for fc in ev.cctx.content_files():
        if file_kind(fc) == TEST and any(CONCURRENT_TEST.search(t) for t in fc.added.values()):
            tests.append(fc.path)
        if any(SYNC.search(t) for t in _added_code(ev, fc)):
            sync.append(fc.path)
    found = ([f"synchronization in {_names(sync)}"] if sync else []) + \
            ([f"concurrency test: {_names(tests)}"] if tests else [])
    if sync and tests:
        return Judgement(Outcome.SUPPORTED, found)
    missing = ([] if sync else ["synchronization (lock, queue, atomic) in the added code"]) + \
              ([] if tests else ["a concurrency test"])
    return Judgement(Outcome.UNVERIFIED, found, missing)


def _judge_backward_compatible(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.evidence import api_breaks
    breaks = ev._get("api_breaks", lambda: api_breaks(ev.digest, ev.cctx.files))
    if breaks.signatures:
        return Judgement(Outcome.CONTRADICTED, [_names(breaks.signatures + breaks.removals, 2)],
                         ["defaults for new parameters, removed ones still accepted"])
    if breaks.removals:
        return Judgement(Outcome.DOUBTFUL, [_names(breaks.removals, 2)],
                         ["removed public names kept as deprecated aliases"])
    found = ["no public API removed or made stricter"]
    rewritten = ev.facts.assertions_rewritten + ev.facts.tests_deleted
    if rewritten:
        return Judgement(Outcome.UNVERIFIED, found + [f"existing assertions rewritten: {_names(rewritten)}"],
                         ["existing assertions left as they were"])
    return Judgement(Outcome.SUPPORTED, found)


def _side_effects(ev: Evidence) -> dict[str, list[tuple[int, list[str]]]]:
    """Name -> (its place among the changed symbols, its side effects) of every changed function of code files."""
    import ast

    from sentinel.intent.evidence import CODE, file_kind, side_effects
    kinds = {fc.path: file_kind(fc) for fc in ev.cctx.files}
    out: dict[str, list[tuple[int, list[str]]]] = {}
    for i, s in enumerate(ev.digest.symbols):
        if s.action == "removed" or kinds.get(s.path, CODE) != CODE:
            continue
        if isinstance(s.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            texts = [f"{what} in {s.name} ({s.path}:{line})" for what, line in side_effects(s.node)]
            out.setdefault(s.name.rsplit(".", 1)[-1], []).append((i, texts))
    return out


def _judge_no_side_effects(claim, ev: Evidence) -> Judgement:
    # "`render` is pure": a claim about the functions it names, when it names some
    named = {n.rsplit(".", 1)[-1] for n in re.findall(r"`+\s*([A-Za-z_][\w.]*)\s*(?:\(\))?\s*`+", claim.sentence)}
    if not named:  # about every changed function: the same judgement for every such claim, made once
        return ev._get("no side effects", lambda: _side_effects_judgement(ev, named))
    return _side_effects_judgement(ev, named)


def _side_effects_judgement(ev: Evidence, named: set[str]) -> Judgement:
    functions = ev._get("side effects", lambda: _side_effects(ev))  # once for every claim of the message
    chosen = sorted(f for name in named for f in functions.get(name, ())) if named else \
        sorted(f for group in functions.values() for f in group)
    analysed = len(chosen)
    effects = [text for _, texts in chosen for text in texts]
    if effects:
        return Judgement(Outcome.DOUBTFUL, [_names(effects, 2)], ["functions without I/O or global mutation"])
    if analysed:
        return Judgement(Outcome.SUPPORTED, [f"{analysed} changed function(s) without I/O or global mutation"])
    if named:
        return Judgement(Outcome.SUPPORTED, [f"about {', '.join(sorted(named)[:3])}, not changed here"])
    return Judgement(Outcome.UNVERIFIED, [], ["a changed Python function to analyse"])


_JUDGES = {
    "tests_pass": _judge_tests_pass, "tests_added": _judge_tests_added, "tested": _judge_tested,
    "coverage": _judge_coverage, "production_ready": _judge_production_ready, "robust": _judge_robust,
    "fixed": _judge_fixed, "done": _judge_done, "refactored": _judge_refactored,
    "behaviour_unchanged": _judge_behaviour_unchanged, "performance": _judge_performance, "secure": _judge_secure,
    "thread_safe": _judge_thread_safe, "backward_compatible": _judge_backward_compatible,
    "no_side_effects": _judge_no_side_effects,
}

# --- checklist (SEN611) -----------------------------------------------------------------------------

_CL_TESTS_ADDED = lazy_re(r"\b(?:unit\s+|regression\s+)?tests?\b.*\b(?:added|included|written|updated|cover)"
                          r"|\b(?:add(?:ed)?|wrote|write|include[sd]?|updated?)\b.*\btests?\b", re.I)
_CL_TESTS_PASS = lazy_re(r"\btests?\b.*\bpass|\bCI\b.*\b(?:green|pass)", re.I)
_CL_PLACEHOLDER = lazy_re(r"\bno\s+(?:[\w-]+\s+)?(?:placeholders?|todos?|stubs?|fixmes?)\b"
                          r"|\bplaceholders?\b.*\bremoved\b", re.I)
_CL_SECRETS = lazy_re(r"\bno\s+(?:[\w-]+\s+)?(?:secrets?|credentials?|passwords?|api\s+keys?|tokens?|keys)\b", re.I)
_CL_DOCS = lazy_re(r"\b(?:docs?|documentation|readme)\b.*\b(?:updated|added|written)\b"
                   r"|\b(?:updated?|added?|wrote)\s+(?:the\s+)?(?:docs?|documentation|readme)\b", re.I)
_CL_NEWS = lazy_re(r"\b(?:changelog|change\s+log|news\s+(?:entry|fragment)|release\s+notes?)\b", re.I)
_CL_STYLE = lazy_re(r"\b(?:lint(?:er|ed|s|ing)?|code\s+style|style\s+guide|formatt(?:ed|ing)|pre-commit)\b", re.I)
_CL_ERRORS = lazy_re(r"\berror\s+handling\b|\bhandles?\s+(?:all\s+)?errors\b|\bno\s+(?:swallowed|bare)\s+except", re.I)
_CL_SAFE = lazy_re(r"\bno\s+(?:dangerous|destructive|unsafe)\b|\bsecurity\s+(?:reviewed|checked)\b", re.I)
_CREDENTIAL_RULES = ("SEN304",)


def _checklist_contradiction(item, ev: Evidence) -> tuple[str, str] | None:
    """(outcome, why) when a ticked item is contradicted: facts of the change or a failing report contradict it;
    another check's blocking findings (which block on their own) make it doubtful."""
    text = item.text
    facts = ev.facts
    if _CL_TESTS_PASS.search(text):
        state, found = ev.test_run()
        if state == "fail":
            return Outcome.CONTRADICTED, f"tests fail: {'; '.join(found)}"
    elif _CL_TESTS_ADDED.search(text) and not facts.has_tests and ev.cctx.files:
        return Outcome.CONTRADICTED, "no test file is added or changed in this change"
    checks = ((_CL_PLACEHOLDER, "placeholder", "placeholders in the change"),
              (_CL_STYLE, "style", "style findings"),
              (_CL_ERRORS, "chaos", "chaos findings"),
              (_CL_SAFE, "jail", "jail findings"))
    for pattern, check, what in checks:
        if pattern.search(text):
            bad, _ = ev.blocking((check,))
            if bad:
                return Outcome.DOUBTFUL, f"{what}: {_where_all(bad)}"
    if _CL_SECRETS.search(text):
        bad = ev._get("credentials", lambda: [f for f in (ev.findings("chaos") or []) if f.rule in _CREDENTIAL_RULES])
        if bad:
            return Outcome.DOUBTFUL, f"credentials in the change: {_where_all(bad)}"
    if _CL_DOCS.search(text) and not facts.doc_files:
        return Outcome.DOUBTFUL, "no documentation file is changed"
    if _CL_NEWS.search(text) and not facts.news_files:
        return Outcome.DOUBTFUL, "no changelog or news file is changed"
    return None


# --- the check ----------------------------------------------------------------------------------------

# A weaker claim that a stronger one of the same rule speaks for, anywhere in the message.
_SUBSUMED = {"refactored": "behaviour_unchanged", "tested": "tests_pass"}
_RANK = {Outcome.SUPPORTED: 0, Outcome.UNVERIFIED: 1, Outcome.DOUBTFUL: 2, Outcome.CONTRADICTED: 3}


def _finding(code: str, severity: Severity, line: int, message: str, sentence: str) -> Finding:
    rule = _RULE[code]
    # Commit messages and PR bodies carry pasted tokens and passwords: masked before anything is clipped.
    return Finding(rule=code, check=CHECK, severity=severity, path=MESSAGE_PATH, line=line, message=redact(message),
                   code=redact(sentence)[:200], hint=rule.hint)


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _one_per_kind(claims: list) -> list[tuple[object, list]]:
    """(the claim that speaks for its kind, the other claims of that kind): one judgement per kind and message."""
    kinds = {c.kind.key for c in claims}
    groups: dict[str, list] = {}
    for c in claims:
        if _SUBSUMED.get(c.kind.key) in kinds:
            continue
        groups.setdefault(c.kind.key, []).append(c)
    return [(group[0], group[1:]) for group in groups.values()]


# The judges that read the claim itself (its words, a rate, the names it quotes); every other judge reads only the
# evidence of the change, so each claim of its kind gets the same judgement (tests/test_claims_linear.py holds
# this list to the judges' code).
_READS_CLAIM = frozenset({"tests_pass", "coverage", "fixed", "no_side_effects"})


def _judge(group: tuple[object, list], ev: Evidence) -> tuple[object, Judgement, list]:
    """The group's judgement: the most severe of its claims' (they share the evidence, but not their words). A
    judge that reads only the evidence judges the group once: judged for each claim, a message repeating a claim
    N times cost N scans of the change (SEN606 and SEN608 were quadratic in the message)."""
    first, rest = group
    if first.kind.key not in _READS_CLAIM:
        return first, _JUDGES[first.kind.key](first, ev), list(rest)
    judged = [(c, _JUDGES[c.kind.key](c, ev)) for c in [first, *rest]]
    claim, j = max(judged, key=lambda cj: _RANK[cj[1].outcome])  # first of the most severe
    return claim, j, [c for c in (first, *rest) if c is not claim]


def check_change(cctx) -> CheckResult:
    message = cctx.message
    if not message or not message.strip():
        return CheckResult(CHECK, CheckStatus.SKIPPED,
                           reason="no commit message or PR body to read claims from (use --message TEXT|@FILE)")
    from sentinel.intent.claims import extract
    claims, checklist = extract(message)
    ticked = [i for i in checklist if i.ticked]
    if not claims and not ticked:
        return CheckResult(CHECK, CheckStatus.PASSED, reason="no checkable claims in the message")
    ev = Evidence(cctx)
    findings: list[Finding] = []
    supported: list[str] = []
    groups = _one_per_kind(claims)
    for group in groups:
        claim, j, others = _judge(group, ev)
        quoted = _clip(claim.text)
        if j.outcome == Outcome.SUPPORTED:
            supported.append(f"'{quoted}' ({_clip('; '.join(j.found), 80) or 'consistent'})")
            continue
        also = f" (also line {', '.join(str(c.line) for c in others[:3])})" if others else ""
        msg = f"claim '{quoted}' ({claim.kind.label}) {_WORDING[j.outcome]}{also}"
        if j.found:
            msg += ": " + ("found " if j.outcome == Outcome.UNVERIFIED else "") + "; ".join(j.found)
        if j.missing:
            msg += ("; " if j.found else ": ") + (
                f"{', '.join(j.missing)} would back it" if j.outcome == Outcome.UNVERIFIED
                else f"expected {', '.join(j.missing)}")
        findings.append(_finding(claim.kind.code, OUTCOMES[j.outcome], claim.line, msg, claim.sentence))
    for item in ticked:
        contradiction = _checklist_contradiction(item, ev)
        if contradiction:
            outcome, why = contradiction
            findings.append(_finding("SEN611", OUTCOMES[outcome], item.line,
                                     f"ticked '{_clip(item.text)}' {_WORDING[outcome]}: {why}", f"- [x] {item.text}"))
        else:
            supported.append(f"[x] '{_clip(item.text, 40)}'")
    total = len(groups) + len(ticked)
    reason = f"{total} claim(s): {len(supported)} supported"
    if supported:
        reason += " - " + "; ".join(supported[:4]) + (f"; +{len(supported) - 4}" if len(supported) > 4 else "")
    return CheckResult(CHECK, CheckStatus.PASSED, findings=findings, reason=reason)
