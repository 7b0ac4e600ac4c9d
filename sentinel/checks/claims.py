"""Claims: what the commit message or PR body asserts about the change, checked against evidence.

Each claim (see sentinel/intent/claims.py for the table) is judged supported, partially supported
or unsupported from evidence the gate can see: test reports (--junit), coverage (--coverage), what
the change touches (tests, benchmarks, docs), a digest of its code, CI check runs, and the other
checks' findings. Unsupported claims are findings at the rule's severity (error), partially supported
ones the same code as warnings; supported claims are listed in the check's summary.
"""

from __future__ import annotations

import ast
import re

from sentinel.intent import lazy_re
from sentinel.models import CheckResult, CheckStatus, Finding, Severity
from sentinel.record import Record, factory
from sentinel.rules import Rule

CHECK = "claims"
MESSAGE_PATH = "COMMIT_MSG"

_SRC = "def parse_port(text):\n    return int(text)\n"
_TEST = ("from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') == 8080\n")


def _rule(code, name, summary, rationale, message, counter_message, hint, example=_SRC, counter=None,
          counter_path=None, example_path="app.py", before=None) -> Rule:
    counter = counter if counter is not None else example
    return Rule(code, name, CHECK, Severity.ERROR, summary, rationale, example, counter,
                hint=hint, example_path=example_path, example_message=message,
                counter_example_message=counter_message, counter_example_path=counter_path, example_before=before)


RULES: tuple[Rule, ...] = (
    _rule("SEN601", "claim-tests",
          "The message says tests pass / were added / the code is tested, and no evidence backs it.",
          "A claim that tests pass is how unverified changes get merged: it must come with a test report or tests.",
          "Add port parsing\n\nAll tests pass.", "Add port parsing\n\nAdded a unit test for parse_port.",
          "attach the test report (--junit) or add the tests, or drop the claim",
          counter=_TEST, counter_path="tests/test_app.py"),
    _rule("SEN602", "claim-production-ready",
          "The message says the change is production ready or robust while tests are missing or other checks "
          "found problems.",
          "'Production ready' is the strongest claim a change can make; it must at least be tested and clean.",
          "Add port parsing, production ready.", "Add port parsing with a unit test; production ready.",
          "add tests and fix the findings of the other checks, or drop the claim",
          counter=_TEST, counter_path="tests/test_app.py"),
    _rule("SEN603", "claim-fixed",
          "The message says a bug is fixed and the change has no regression test (or the test report fails).",
          "A fix without a test that reproduces the bug is a guess; the bug tends to come back.",
          "Fixed #42.", "Fixed #42 with a regression test.",
          "add a test that fails without the fix and passes with it",
          counter=_TEST, counter_path="tests/test_app.py"),
    _rule("SEN604", "claim-done",
          "The message says the work is done or complete while the change still has placeholders (TODO, stubs).",
          "A change declared complete with placeholders in it ships the missing part silently.",
          "Port parsing is done.", "Port parsing is done.",
          "finish the placeholders the placeholder check reported, or say what is left",
          example="def parse_port(text):\n    raise NotImplementedError\n",
          counter="def parse_port(text):\n    return int(text)\n"),
    _rule("SEN605", "claim-behaviour-unchanged",
          "The message says behaviour is unchanged (or a pure refactor) while existing tests were rewritten or fail.",
          "Rewriting the tests in a refactor is how behaviour changes slip in under a 'no functional change' label.",
          "Pure refactor, no functional change.",
          "Reject ports above 65535; the test now expects the new error.",
          "keep the existing tests as they were (they prove behaviour is kept), or describe the behaviour change",
          example_path="tests/test_app.py",
          before="from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') == 8080\n",
          example="from app import parse_port\n\n\ndef test_parse_port():\n    assert parse_port('8080') is None\n"),
    _rule("SEN606", "claim-performance",
          "The message says the change is faster or optimized without a benchmark or measurement.",
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
          "The message says the change is backward compatible while it removes public API or adds a required "
          "parameter.",
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


class Status:
    SUPPORTED = "supported"
    PARTIAL = "partially supported"
    UNSUPPORTED = "unsupported"


class Judgement(Record):
    status: str
    found: list[str] = factory(list)
    missing: list[str] = factory(list)


# --- evidence -------------------------------------------------------------------------------------

_FINDING_CHECKS = ("jail", "style", "chaos", "placeholder")


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
        """The check's findings on this change (after suppressions), or None when it did not and cannot run."""
        return self._get(("findings", check), lambda: self._findings(check))

    def _findings(self, check: str) -> list[Finding] | None:
        from sentinel import engine
        from sentinel.checks import CHECK_MODULES, load_check
        cctx = self.cctx
        ran = cctx.options.get("checks_run")
        if ran is None or check in ran:
            if ran is None and not cctx.config.section_enabled(check):
                return None
            raw = [f for f in cctx.findings_so_far if f.check == check]
        else:
            # Not run in this invocation (e.g. the commit-msg hook runs only the intent checks): run it
            # here, on the same file contexts, when the project has it enabled.
            if check not in CHECK_MODULES or not cctx.config.section_enabled(check):
                return None
            try:
                module = load_check(check)
            except ModuleNotFoundError:
                return None
            check_file = getattr(module, "check_file", None)
            if check_file is None:
                return None
            raw = []
            for ctx in cctx.file_contexts.values():
                raw.extend(check_file(ctx))
        kept, _ = engine._postprocess(list(raw), cctx.file_contexts, cctx.config, cctx.mode)
        return kept


def _where(f: Finding) -> str:
    return f"{f.rule} {f.path}:{f.line}" if f.line else f"{f.rule} {f.path}"


def _names(paths: list[str], limit: int = 3) -> str:
    more = f" +{len(paths) - limit}" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def _blocking(findings: list[Finding] | None) -> list[Finding]:
    return [f for f in findings or [] if f.severity.rank >= Severity.WARNING.rank]


# --- judgements per claim kind --------------------------------------------------------------------

def _judge_tests_pass(claim, ev: Evidence) -> Judgement:
    state, found = ev.test_run()
    facts = ev.facts
    if state == "fail":
        return Judgement(Status.UNSUPPORTED, found)
    if state == "pass":
        skipped = ev.skipped_tests()
        if skipped and re.search(r"\ball\b", claim.text, re.I):
            return Judgement(Status.PARTIAL, found, [f"{skipped} tests were skipped"])
        return Judgement(Status.SUPPORTED, found)
    problems = [r.describe() for r in ev.junit if r.problem]
    if facts.test_files:
        return Judgement(Status.PARTIAL, [f"tests changed: {_names(facts.test_files)}"] + problems,
                         ["a test report (--junit) or CI run showing they pass"])
    return Judgement(Status.UNSUPPORTED, problems, ["a test report (--junit)", "tests in the change"])


def _judge_tests_added(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    if facts.test_files:
        return Judgement(Status.SUPPORTED, [f"tests changed: {_names(facts.test_files)}"])
    found = [f"tests deleted: {_names(facts.tests_deleted)}"] if facts.tests_deleted else []
    return Judgement(Status.UNSUPPORTED, found, ["a test file added or changed in this change"])


def _judge_tested(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Status.UNSUPPORTED, found)
    cov = [c for c in ev.coverage if c.problem is None]
    found = list(found) + [c.describe() for c in cov]
    ran = state == "pass" or bool(cov)
    if facts.test_files:
        found.insert(0, f"tests changed: {_names(facts.test_files)}")
        if ran:
            return Judgement(Status.SUPPORTED, found)
        return Judgement(Status.PARTIAL, found, ["a test report (--junit) or coverage (--coverage)"])
    if ran:
        return Judgement(Status.PARTIAL, found, ["tests for this change"])
    return Judgement(Status.UNSUPPORTED, found, ["tests in the change", "a test report (--junit)"])


def _judge_coverage(claim, ev: Evidence) -> Judgement:
    cov = [c for c in ev.coverage if c.problem is None]
    if cov:
        rate = min(c.line_rate for c in cov)
        found = [c.describe() for c in cov]
        if rate >= 0.995:
            return Judgement(Status.SUPPORTED, found)
        return Judgement(Status.UNSUPPORTED, found, ["line coverage of 100%"])
    if ev.facts.test_files:
        return Judgement(Status.PARTIAL, [f"tests changed: {_names(ev.facts.test_files)}"],
                         ["a coverage report (--coverage)"])
    return Judgement(Status.UNSUPPORTED, [], ["a coverage report (--coverage)"])


def _check_findings(ev: Evidence, checks: tuple[str, ...]) -> tuple[list[Finding], list[str]]:
    """(blocking findings of these checks, checks that could not run)."""
    bad, absent = [], []
    for check in checks:
        found = ev.findings(check)
        if found is None:
            absent.append(check)
        else:
            bad.extend(_blocking(found))
    return bad, absent


def _judge_production_ready(claim, ev: Evidence) -> Judgement:
    bad, absent = _check_findings(ev, ("placeholder", "chaos", "jail"))
    state, run_found = ev.test_run()
    facts = ev.facts
    if bad or state == "fail":
        return Judgement(Status.UNSUPPORTED, [_names([_where(f) for f in bad])] if bad else run_found,
                         ["a change without placeholder/chaos/jail findings"] if bad else ["passing tests"])
    tested = bool(facts.test_files) or state == "pass"
    found = run_found + ([f"tests changed: {_names(facts.test_files)}"] if facts.test_files else [])
    found.append("no placeholder/chaos/jail findings" if not absent else "")
    found = [x for x in found if x]
    if not tested:
        return Judgement(Status.UNSUPPORTED, found, ["tests in the change or a test report (--junit)"])
    if absent:
        return Judgement(Status.PARTIAL, found, [f"the {', '.join(absent)} check(s) (disabled)"])
    return Judgement(Status.SUPPORTED, found)


def _judge_robust(claim, ev: Evidence) -> Judgement:
    bad, absent = _check_findings(ev, ("chaos",))
    if bad:
        return Judgement(Status.UNSUPPORTED, [_names([_where(f) for f in bad])],
                         ["error handling without chaos findings"])
    if absent:
        return Judgement(Status.PARTIAL, [], ["the chaos check (disabled)"])
    return Judgement(Status.SUPPORTED, ["no chaos findings"])


def _judge_fixed(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Status.UNSUPPORTED, found, ["passing tests"])
    if not ev.cctx.files:
        return Judgement(Status.UNSUPPORTED, [], ["a change"])
    if facts.test_files:
        return Judgement(Status.SUPPORTED, [f"regression test: {_names(facts.test_files)}"] + found)
    touched = facts.code_files or facts.doc_files
    return Judgement(Status.PARTIAL, [f"changed: {_names(touched)}"] + found if touched else found,
                     ["a regression test in the change"])


def _judge_done(claim, ev: Evidence) -> Judgement:
    found = ev.findings("placeholder")
    if found is None:
        return Judgement(Status.PARTIAL, [], ["the placeholder check (disabled)"])
    bad = _blocking(found)
    if bad:
        return Judgement(Status.UNSUPPORTED, [f"placeholders: {_names([_where(f) for f in bad])}"],
                         ["a change without placeholders"])
    return Judgement(Status.SUPPORTED, ["no placeholder findings"])


def _judge_refactored(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Status.UNSUPPORTED, found, ["passing tests"])
    rewritten = facts.tests_modified + facts.tests_deleted
    if rewritten:
        return Judgement(Status.PARTIAL, [f"existing tests rewritten: {_names(rewritten)}"] + found,
                         ["existing tests left as they were"])
    return Judgement(Status.SUPPORTED, ["existing tests not rewritten"] + found)


def _judge_behaviour_unchanged(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    state, found = ev.test_run()
    if state == "fail":
        return Judgement(Status.UNSUPPORTED, found, ["passing tests"])
    rewritten = facts.tests_modified + facts.tests_deleted
    if rewritten:
        found = [f"existing tests rewritten: {_names(rewritten)}"] + found
        if state == "pass":
            return Judgement(Status.PARTIAL, found, ["existing tests left as they were"])
        return Judgement(Status.UNSUPPORTED, found, ["existing tests left as they were", "a test report (--junit)"])
    if state == "pass":
        return Judgement(Status.SUPPORTED, ["existing tests not rewritten"] + found)
    return Judgement(Status.PARTIAL, ["existing tests not rewritten"], ["a test report (--junit) showing they pass"])


_MEASURE = lazy_re(r"\b\d+(?:\.\d+)?\s*(?:x|\u00d7|%|ms|\u00b5s|us|ns|s|secs?|seconds|minutes|min|[KMG]i?B|ops/s|req/s|"
                      r"rps|qps|allocations)(?![\w])", re.I)


def _judge_performance(claim, ev: Evidence) -> Judgement:
    facts = ev.facts
    numbers = _MEASURE.findall(ev.cctx.message or "")
    found = [f"measurements in the message: {', '.join(numbers[:3])}"] if numbers else []
    if facts.bench_files:
        return Judgement(Status.SUPPORTED, [f"benchmark: {_names(facts.bench_files)}"] + found)
    if numbers:
        return Judgement(Status.PARTIAL, found, ["a benchmark in the change (benchmarks/, bench_*, asv)"])
    return Judgement(Status.UNSUPPORTED, [], ["a benchmark in the change or measured numbers in the message"])


def _judge_secure(claim, ev: Evidence) -> Judgement:
    bad, absent = _check_findings(ev, ("jail", "chaos"))
    if bad:
        return Judgement(Status.UNSUPPORTED, [_names([_where(f) for f in bad])],
                         ["a change without jail/chaos findings"])
    found = ["no jail/chaos findings"] if not absent else []
    if absent:
        return Judgement(Status.PARTIAL, found, [f"the {', '.join(absent)} check(s) (disabled)"])
    if ev.facts.test_files:
        return Judgement(Status.SUPPORTED, found + [f"tests changed: {_names(ev.facts.test_files)}"])
    return Judgement(Status.PARTIAL, found, ["a test for the security fix"])


_SYNC = lazy_re(r"\b(?:R?Lock|Semaphore|BoundedSemaphore|Condition|Barrier)\s*\(|\bwith\s+[\w.]*lock\w*\b"
                   r"|\.acquire\s*\(|\b(?:Mutex|RwLock|RWMutex|AtomicU?\w+|atomic\.\w+|sync\.(?:Once|Mutex|RWMutex)|"
                   r"synchronized|lock_guard|unique_lock|std::mutex|ConcurrentHashMap|threading\.local|ContextVar|"
                   r"queue\.Queue|asyncio\.Queue)\b", re.I)
_CONCURRENT_TEST = lazy_re(r"\bThread\s*\(|ThreadPoolExecutor|ProcessPoolExecutor|multiprocessing|asyncio\.gather|"
                              r"\bBarrier\s*\(|\bconcurren|\brace\b|\bgo\s+func\b|t\.Parallel\(\)|Promise\.all", re.I)


def _added_code(ev: Evidence, fc) -> list[str]:
    ctx = ev.cctx.file_contexts.get(fc.path)
    if ctx is None or not ctx.has_content:
        return list(fc.added.values())
    return [ctx.lexed.code_line(n) for n in sorted(fc.added)]


def _judge_thread_safe(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.digest import is_test_path
    sync, tests = [], []
    for fc in ev.cctx.content_files():
        if is_test_path(fc.path) and any(_CONCURRENT_TEST.search(t) for t in fc.added.values()):
            tests.append(fc.path)
        if any(_SYNC.search(t) for t in _added_code(ev, fc)):
            sync.append(fc.path)
    found = ([f"synchronization in {_names(sync)}"] if sync else []) + \
            ([f"concurrency test: {_names(tests)}"] if tests else [])
    if sync and tests:
        return Judgement(Status.SUPPORTED, found)
    missing = ([] if sync else ["synchronization (lock, queue, atomic) in the added code"]) + \
              ([] if tests else ["a concurrency test"])
    return Judgement(Status.PARTIAL if found else Status.UNSUPPORTED, found, missing)


def _params(signature: str) -> tuple[list[str], set[str], bool] | None:
    """(positional names, names with a default, has *args/**kwargs) of one Python def line."""
    text = signature.strip()
    text = re.sub(r"^\s*async\s+", "", text)
    if not text.endswith(":"):
        text = re.sub(r":\s*(?:#.*)?$", ":", text)
    try:
        node = ast.parse(text + " pass").body[0]
    except (SyntaxError, IndexError, ValueError):
        return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return _node_params(node)


def _node_params(node) -> tuple[list[str], set[str], bool]:
    a = node.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    defaults = set(positional[len(positional) - len(a.defaults):]) if a.defaults else set()
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        positional.append(p.arg)
        if d is not None:
            defaults.add(p.arg)
    return positional, defaults, bool(a.vararg or a.kwarg)


def _judge_backward_compatible(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.digest import is_test_path
    digest = ev.digest
    breaks = []
    for s in digest.symbols:
        if is_test_path(s.path) or not s.public:
            continue
        if s.action == "removed":
            breaks.append(f"removed {s.kind} {s.name} ({s.path})")
        elif s.kind == "function" and s.old_signature and isinstance(s.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            old = _params(s.old_signature)
            if old is None:
                continue
            new_pos, new_defaults, new_var = _node_params(s.node)
            old_pos, _old_defaults, _ = old
            gone = [p for p in old_pos if p not in new_pos and p not in ("self", "cls")]
            required = [p for p in new_pos if p not in old_pos and p not in new_defaults]
            if gone and not new_var:
                breaks.append(f"{s.name}() lost parameter {', '.join(gone)}")
            if required:
                breaks.append(f"{s.name}() needs new argument {', '.join(required)}")
    for fc in ev.cctx.files:
        if fc.status.value == "deleted" and fc.language == "python" and not is_test_path(fc.path) \
                and not fc.path.rsplit("/", 1)[-1].startswith("_"):
            breaks.append(f"deleted module {fc.path}")
    if breaks:
        return Judgement(Status.UNSUPPORTED, [_names(breaks, 2)], ["public API kept (defaults for new parameters)"])
    found = ["no public API removed or made stricter"]
    rewritten = ev.facts.tests_modified + ev.facts.tests_deleted
    if rewritten:
        return Judgement(Status.PARTIAL, found + [f"existing tests rewritten: {_names(rewritten)}"],
                         ["existing tests left as they were"])
    return Judgement(Status.SUPPORTED, found)


_OS_EFFECTS = {"remove", "unlink", "rename", "replace", "makedirs", "mkdir", "rmdir", "removedirs", "system", "popen",
               "chdir", "chmod", "chown", "kill", "killpg", "putenv", "unsetenv", "write", "symlink", "link",
               "truncate", "utime", "startfile", "fork", "execv", "execve", "execvp", "spawnl", "spawnv"}
_MODULE_EFFECTS = {"subprocess", "socket", "requests", "httpx", "urllib", "shutil", "smtplib", "ftplib", "aiohttp"}
_METHOD_EFFECTS = {"write", "writelines", "write_text", "write_bytes", "unlink", "mkdir", "rmdir", "touch", "rename",
                   "send", "sendall", "sendto", "commit", "execute", "executemany", "urlopen", "post", "put"}
_BUILTIN_EFFECTS = {"open", "print", "input", "exec", "eval", "setattr", "delattr", "__import__", "breakpoint"}


def _root_name(node) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _side_effects(fn) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    method = fn.name not in ("__init__", "__post_init__", "__new__", "__set_name__", "setUp")
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.append((f"{type(node).__name__.lower()} {', '.join(node.names)}", node.lineno))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in _BUILTIN_EFFECTS:
                out.append((f"{f.id}()", node.lineno))
            elif isinstance(f, ast.Attribute):
                root = _root_name(f)
                if root == "os" and isinstance(f.value, ast.Name) and f.attr in _OS_EFFECTS:
                    out.append((f"os.{f.attr}()", node.lineno))
                elif root in _MODULE_EFFECTS:
                    out.append((f"{root}.{f.attr}()", node.lineno))
                elif root == "os" and isinstance(f.value, ast.Attribute) and f.value.attr == "environ" \
                        and f.attr in ("update", "pop", "setdefault", "clear", "popitem"):
                    out.append((f"os.environ.{f.attr}()", node.lineno))
                elif f.attr in _METHOD_EFFECTS:
                    out.append((f".{f.attr}()", node.lineno))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, (ast.Subscript, ast.Attribute)) else None
                if isinstance(t, ast.Subscript) and isinstance(base, ast.Attribute) and base.attr == "environ":
                    out.append(("writes os.environ", node.lineno))
                elif method and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out.append((f"mutates self.{t.attr}", node.lineno))
    return out


def _judge_no_side_effects(claim, ev: Evidence) -> Judgement:
    from sentinel.intent.digest import is_test_path
    digest = ev.digest
    effects, analysed = [], 0
    for s in digest.symbols:
        if s.action == "removed" or is_test_path(s.path):
            continue
        if isinstance(s.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            analysed += 1
            for what, line in _side_effects(s.node):
                effects.append(f"{what} in {s.name} ({s.path}:{line})")
    if effects:
        return Judgement(Status.UNSUPPORTED, [_names(effects, 2)], ["functions without I/O or global mutation"])
    if analysed:
        return Judgement(Status.SUPPORTED, [f"{analysed} changed function(s) without I/O or global mutation"])
    return Judgement(Status.PARTIAL, [], ["a changed Python function to analyse"])


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


def _checklist_contradiction(item, ev: Evidence) -> str | None:
    text = item.text
    facts = ev.facts
    if _CL_PLACEHOLDER.search(text):
        bad = _blocking(ev.findings("placeholder"))
        if bad:
            return f"placeholders in the change: {_names([_where(f) for f in bad])}"
    if _CL_SECRETS.search(text):
        bad = [f for f in (ev.findings("chaos") or []) if f.rule == "SEN304"]
        if bad:
            return f"credentials in the change: {_names([_where(f) for f in bad])}"
    if _CL_TESTS_PASS.search(text):
        state, found = ev.test_run()
        if state == "fail":
            return f"tests fail: {'; '.join(found)}"
    elif _CL_TESTS_ADDED.search(text) and not facts.test_files:
        return "no test file is added or changed in this change"
    if _CL_DOCS.search(text) and not facts.doc_files:
        return "no documentation file is changed"
    if _CL_NEWS.search(text) and not facts.news_files:
        return "no changelog or news file is changed"
    if _CL_STYLE.search(text):
        bad = _blocking(ev.findings("style"))
        if bad:
            return f"style findings: {_names([_where(f) for f in bad])}"
    if _CL_ERRORS.search(text):
        bad = _blocking(ev.findings("chaos"))
        if bad:
            return f"chaos findings: {_names([_where(f) for f in bad])}"
    if _CL_SAFE.search(text):
        bad = _blocking(ev.findings("jail"))
        if bad:
            return f"jail findings: {_names([_where(f) for f in bad])}"
    return None


# --- the check ----------------------------------------------------------------------------------------

# When two claims of one rule sit on the same line, the stronger one speaks for both.
_SUBSUMED = {"refactored": "behaviour_unchanged", "tested": "tests_pass"}


def _finding(code: str, severity: Severity, line: int, message: str, sentence: str) -> Finding:
    rule = _RULE[code]
    return Finding(rule=code, check=CHECK, severity=severity, path=MESSAGE_PATH, line=line, message=message,
                   code=sentence[:200], hint=rule.hint)


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def check_change(cctx) -> CheckResult:
    message = cctx.message
    if not message or not message.strip():
        return CheckResult(CHECK, CheckStatus.SKIPPED,
                           reason="no commit message or PR body to read claims from (use --message TEXT|@FILE)")
    from sentinel.intent.claims import extract
    claims, checklist = extract(message)
    on_line = {(c.kind.key, c.line) for c in claims}
    claims = [c for c in claims if (_SUBSUMED.get(c.kind.key), c.line) not in on_line]
    ticked = [i for i in checklist if i.ticked]
    if not claims and not ticked:
        return CheckResult(CHECK, CheckStatus.PASSED, reason="no checkable claims in the message")
    ev = Evidence(cctx)
    findings: list[Finding] = []
    supported: list[str] = []
    for claim in claims:
        j = _JUDGES[claim.kind.key](claim, ev)
        quoted = _clip(claim.text)
        if j.status == Status.SUPPORTED:
            supported.append(f"'{quoted}' ({_clip('; '.join(j.found), 80) or 'consistent'})")
            continue
        detail = []
        if j.found:
            detail.append("found " + "; ".join(j.found))
        if j.missing:
            detail.append("missing " + ", ".join(j.missing))
        severity = Severity.ERROR if j.status == Status.UNSUPPORTED else Severity.WARNING
        msg = f"claim '{quoted}' ({claim.kind.label}) is {j.status}" + (f": {'; '.join(detail)}" if detail else "")
        findings.append(_finding(claim.kind.code, severity, claim.line, msg, claim.sentence))
    for item in ticked:
        why = _checklist_contradiction(item, ev)
        if why:
            findings.append(_finding("SEN611", _RULE["SEN611"].severity, item.line,
                                     f"ticked '{_clip(item.text)}' is contradicted: {why}", f"- [x] {item.text}"))
        else:
            supported.append(f"[x] '{_clip(item.text, 40)}'")
    total = len(claims) + len(ticked)
    reason = f"{total} claim(s): {len(supported)} supported"
    if supported:
        reason += " - " + "; ".join(supported[:4]) + (f"; +{len(supported) - 4}" if len(supported) > 4 else "")
    return CheckResult(CHECK, CheckStatus.PASSED, findings=findings, reason=reason)
