"""Evidence readers for claims: test reports, coverage, what the change touches, CI check runs."""

from __future__ import annotations

import ast
import os
import re
import xml.etree.ElementTree as ET

from sentinel.intent import lazy_re
from sentinel.intent.digest import NEWS_PATH, is_doc_path, is_test_path
from sentinel.models import FileChange, FileStatus
from sentinel.record import Record, factory


class TestReport(Record):
    path: str
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    problem: str | None = None  # unreadable / not JUnit XML

    @property
    def ok(self) -> bool:
        return self.problem is None and self.tests > 0 and not self.failures and not self.errors

    def describe(self) -> str:
        if self.problem:
            return f"{self.path}: {self.problem}"
        text = f"{self.tests} tests, {self.failures} failed, {self.errors} errors"
        if self.skipped:
            text += f", {self.skipped} skipped"
        return f"{os.path.basename(self.path)}: {text}"


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value not in (None, "") else None
    except ValueError:
        return None


def _xml_root(path: str):
    """(root element, None) or (None, the problem) for an evidence report file."""
    try:
        return ET.parse(path).getroot(), None
    except OSError as exc:
        return None, f"cannot read ({exc.strerror or exc})"
    except ET.ParseError as exc:
        return None, f"not XML ({exc})"


def read_junit(path: str) -> TestReport:
    """Counts from a JUnit XML report (<testsuites> or <testsuite> root, pytest/surefire/jest flavours)."""
    report = TestReport(path)
    root, report.problem = _xml_root(path)
    if root is None:
        return report
    if root.tag not in ("testsuites", "testsuite"):
        report.problem = f"not a JUnit report (root element <{root.tag}>)"
        return report
    suites = [root] if root.tag == "testsuite" else root.findall(".//testsuite")
    if not suites and root.tag == "testsuites":
        # An empty <testsuites> may still carry totals.
        suites = [root]
    for suite in suites:
        if suite.find("testsuite") is not None and suite is not root:
            continue  # nested suites are counted through their children
        cases = suite.findall("testcase")
        tests = _int(suite.get("tests"))
        if tests is None:
            tests = len(cases)
        failures = _int(suite.get("failures"))
        errors = _int(suite.get("errors"))
        skipped = _int(suite.get("skipped"))
        if skipped is None:
            skipped = _int(suite.get("disabled"))
        if failures is None:
            failures = sum(1 for c in cases if c.find("failure") is not None)
        if errors is None:
            errors = sum(1 for c in cases if c.find("error") is not None)
        if skipped is None:
            skipped = sum(1 for c in cases if c.find("skipped") is not None)
        report.tests += tests
        report.failures += failures
        report.errors += errors
        report.skipped += skipped
    return report


class CoverageReport(Record):
    path: str
    line_rate: float | None = None
    problem: str | None = None

    def describe(self) -> str:
        if self.problem:
            return f"{self.path}: {self.problem}"
        return f"{os.path.basename(self.path)}: line coverage {self.line_rate:.0%}"


def read_coverage(path: str) -> CoverageReport:
    """Line rate of a Cobertura (coverage.py `coverage xml`) or JaCoCo XML report."""
    report = CoverageReport(path)
    root, report.problem = _xml_root(path)
    if root is None:
        return report
    if root.tag == "coverage" and root.get("line-rate") is not None:
        try:
            report.line_rate = float(root.get("line-rate"))
        except ValueError:
            report.problem = "line-rate is not a number"
        return report
    if root.tag == "report":  # JaCoCo
        for counter in root.findall("counter"):
            if counter.get("type") == "LINE":
                missed, covered = _int(counter.get("missed")) or 0, _int(counter.get("covered")) or 0
                report.line_rate = covered / (missed + covered) if missed + covered else 0.0
                return report
    report.problem = f"not a Cobertura or JaCoCo coverage report (root element <{root.tag}>)"
    return report


_BENCH_PATH = lazy_re(r"(?:^|/)(?:benchmarks?|bench|perf|asv_bench)/|(?:^|/)bench_[^/]+$|_bench(?:mark)?s?\.[a-z]+$"
                         r"|(?:^|/)asv\.conf\.json$|(?:^|/)test_[^/]*(?:perf|bench)[^/]*\.py$|\.bench\.[jt]s$"
                         r"|_benchmark_test\.go$", re.I)
_BENCH_CODE = lazy_re(r"\bbenchmark\s*\(|@pytest\.mark\.benchmark|\bfunc\s+Benchmark\w+\s*\(\s*b\s+\*testing\.B"
                         r"|\btimeit\.|#\[bench\]|criterion_group!")


# Test code inside a file of any role: Rust's #[test], Go's func TestX, a def test_ in a module, JS it()/test().
_TEST_CODE = lazy_re(r"#\[(?:cfg\()?test\b|^\s*(?:async\s+)?def\s+test(?:_\w*|[A-Z]\w*)?\s*\("
                     r"|\bfunc\s+Test\w*\s*\(|@Test\b|^\s*(?:it|test|describe)\s*\(\s*['\"`]|^\s*>>>\s", re.M)
# A line that states what an existing test expects.
_ASSERTION = lazy_re(r"^\s*(?:assert\b|self\.assert\w*\s*\(|(?:pytest|self)\.(?:raises|warns)\s*\(|expect\s*\("
                     r"|assert_\w+\s*\(|assert[A-Z]\w*\s*\(|[\w.]*\.should\b)")
# A news fragment's type as towncrier and friends name it: the project's own label for the change.
_DOC_FRAGMENT = lazy_re(r"\.(?:docs?|documentation)(?:\.\w+)?$", re.I)

# Build, packaging and CI configuration (MANIFEST.in and other extension-less files are "unknown").
_CONFIG_LANGUAGES = frozenset({"yaml", "toml", "json", "ini", "make", "docker", "unknown"})
_NAMES_TESTS = lazy_re(r"\btests?\b", re.I)

TEST, DOCS, CODE = "test", "docs", "code"
_ROLE_KIND = {"test": TEST, "fixture": TEST, "docs": DOCS, "example": DOCS}


def file_kind(fc: FileChange) -> str:
    """test, docs or code: the file's role when the engine decided one, else what its path says."""
    role = getattr(fc, "role", None)
    if role is not None:
        return _ROLE_KIND.get(role, CODE)
    if is_test_path(fc.path):
        return TEST
    if is_doc_path(fc.path) or NEWS_PATH.search(fc.path) or fc.path.rsplit("/", 1)[-1].upper() in _META_FILES:
        return DOCS
    return CODE


_META_FILES = {"AUTHORS", "CONTRIBUTORS", "LICENSE", "COPYING", "NOTICE", "CHANGES", "MAINTAINERS", "CODEOWNERS"}


class ChangeFacts(Record):
    """What the change itself shows: tests, benchmarks, docs, changelog."""

    test_files: list[str] = factory(list)  # added or modified test files
    tests_modified: list[str] = factory(list)  # test files with removed lines (existing tests edited)
    tests_deleted: list[str] = factory(list)
    # test files where an existing assertion was removed or changed (not only reformatted or moved)
    assertions_rewritten: list[str] = factory(list)
    test_code: list[str] = factory(list)  # non-test files that add test code (Rust #[test], doctests...)
    code_files: list[str] = factory(list)  # every other file: code, config, build, data
    doc_files: list[str] = factory(list)
    news_files: list[str] = factory(list)
    doc_fragments: list[str] = factory(list)  # news fragments the project typed as documentation
    bench_files: list[str] = factory(list)
    # build, packaging and CI files whose added lines name tests ("tests/" in an sdist include, a test job):
    # "add tests to the sdist" may be about them, so "no test in the change" no longer contradicts the claim
    config_naming_tests: list[str] = factory(list)

    @property
    def has_tests(self) -> bool:
        return bool(self.test_files or self.test_code)


def _normal(text: str) -> str:
    return "".join(text.split())


def _rewritten_assertions(fc: FileChange) -> bool:
    removed = [t for _, t in fc.removed if _ASSERTION.search(t)]
    if not removed:
        return False
    # Kept when it is still there, reflowed or not (a formatter may split it over lines).
    added = _normal("".join(fc.added[n] for n in sorted(fc.added)))
    return any(_normal(t) not in added for t in removed)


def change_facts(files: list[FileChange]) -> ChangeFacts:
    facts = ChangeFacts()
    for fc in files:
        p = fc.path
        kind = file_kind(fc)
        if NEWS_PATH.search(p):
            facts.news_files.append(p)
            if _DOC_FRAGMENT.search(p):
                facts.doc_fragments.append(p)
        if kind == TEST:
            if fc.status is FileStatus.DELETED:
                facts.tests_deleted.append(p)
            else:
                facts.test_files.append(p)
                if fc.removed:
                    facts.tests_modified.append(p)
                    if _rewritten_assertions(fc):
                        facts.assertions_rewritten.append(p)
        elif kind == DOCS:
            facts.doc_files.append(p)
        else:  # anything else can change behaviour: code, config, data, even a mode change
            facts.code_files.append(p)
        if kind != TEST and fc.added and any(_TEST_CODE.search(t) for t in fc.added.values()):
            facts.test_code.append(p)
        if _BENCH_PATH.search(p) or (fc.added and any(_BENCH_CODE.search(t) for t in fc.added.values())):
            facts.bench_files.append(p)
        if kind == CODE and fc.added and fc.language in _CONFIG_LANGUAGES \
                and any(_NAMES_TESTS.search(t) for t in fc.added.values()):
            facts.config_naming_tests.append(p)
    return facts


def resolve_paths(paths: list[str], root: str | None) -> list[str]:
    out = []
    for p in paths:
        if os.path.isabs(p) or os.path.exists(p) or not root:
            out.append(p)
        else:
            out.append(os.path.join(root, p))
    return list(dict.fromkeys(out))


_TEST_CI = lazy_re(r"test|pytest|unit|integration|\bci\b|check|build|tox|nox", re.I)


def ci_test_runs(ci_checks: list | None) -> tuple[list[str], list[str]]:
    """(succeeded, failed) names of CI check runs that look like test runs."""
    ok, bad = [], []
    for run in ci_checks or []:
        if not isinstance(run, dict):
            continue
        name = str(run.get("name", ""))
        conclusion = str(run.get("conclusion") or "").lower()
        if not _TEST_CI.search(name):
            continue
        if conclusion == "success":
            ok.append(name)
        elif conclusion in ("failure", "timed_out", "cancelled", "action_required", "startup_failure"):
            bad.append(name)
    return ok, bad


# --- what the change's code shows (Python ast), for claims about its API, effects and synchronization -----

MEASUREMENT = lazy_re(r"\b\d+(?:\.\d+)?\s*(?:x|\u00d7|%|ms|\u00b5s|us|ns|s|secs?|seconds|minutes|min|[KMG]i?B|ops/s"
                      r"|req/s|rps|qps|allocations)(?![\w])", re.I)
SYNC = lazy_re(r"\b(?:R?Lock|Semaphore|BoundedSemaphore|Condition|Barrier)\s*\(|\bwith\s+[\w.]*lock\w*\b"
               r"|\.acquire\s*\(|\b(?:Mutex|RwLock|RWMutex|AtomicU?\w+|atomic\.\w+|sync\.(?:Once|Mutex|RWMutex)|"
               r"synchronized|lock_guard|unique_lock|std::mutex|ConcurrentHashMap|threading\.local|ContextVar|"
               r"queue\.Queue|asyncio\.Queue)\b", re.I)
CONCURRENT_TEST = lazy_re(r"\bThread\s*\(|ThreadPoolExecutor|ProcessPoolExecutor|multiprocessing|asyncio\.gather|"
                          r"\bBarrier\s*\(|\bconcurren|\brace\b|\bgo\s+func\b|t\.Parallel\(\)|Promise\.all", re.I)


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


class ApiBreaks(Record):
    signatures: list[str] = factory(list)  # a public function lost a parameter or needs a new one
    removals: list[str] = factory(list)  # a public name or module is gone (it may live on elsewhere)


def api_breaks(digest, files: list[FileChange]) -> ApiBreaks:
    """How the change's Python code breaks its callers: signatures made stricter, public names removed."""
    out = ApiBreaks()
    kinds = {fc.path: file_kind(fc) for fc in files}
    added_names = {s.name.rsplit(".", 1)[-1] for s in digest.symbols if s.action != "removed"}
    for s in digest.symbols:
        if kinds.get(s.path, CODE) != CODE or not s.public:
            continue
        if s.action == "removed":
            if s.name.rsplit(".", 1)[-1] not in added_names:  # not moved to another file of the change
                out.removals.append(f"removed {s.kind} {s.name} ({s.path})")
        elif s.kind == "function" and s.old_signature and isinstance(s.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            old = _params(s.old_signature)
            if old is None:
                continue
            new_pos, new_defaults, new_var = _node_params(s.node)
            old_pos, _old_defaults, _ = old
            gone = [p for p in old_pos if p not in new_pos and p not in ("self", "cls")]
            required = [p for p in new_pos if p not in old_pos and p not in new_defaults]
            if gone and not new_var:
                out.signatures.append(f"{s.name}() lost parameter {', '.join(gone)}")
            if required:
                out.signatures.append(f"{s.name}() needs new argument {', '.join(required)}")
    for fc in files:
        if fc.status is FileStatus.DELETED and fc.language == "python" and kinds[fc.path] == CODE \
                and not fc.path.rsplit("/", 1)[-1].startswith("_"):
            out.removals.append(f"deleted module {fc.path}")
    return out


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


def side_effects(fn) -> list[tuple[str, int]]:
    """(what, line) of the I/O, process, network, global and environment effects of one Python function."""
    out: list[tuple[str, int]] = []
    method = fn.name not in ("__init__", "__post_init__", "__new__", "__set_name__", "setUp")
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.append((f"{type(node).__name__.lower()} {', '.join(node.names)}", node.lineno))
        elif isinstance(node, ast.Call):
            out.extend(_call_effect(node))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, (ast.Subscript, ast.Attribute)) else None
                if isinstance(t, ast.Subscript) and isinstance(base, ast.Attribute) and base.attr == "environ":
                    out.append(("writes os.environ", node.lineno))
                elif method and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out.append((f"mutates self.{t.attr}", node.lineno))
    return out


def _call_effect(node) -> list[tuple[str, int]]:
    f = node.func
    if isinstance(f, ast.Name) and f.id in _BUILTIN_EFFECTS:
        return [(f"{f.id}()", node.lineno)]
    if not isinstance(f, ast.Attribute):
        return []
    root = _root_name(f)
    if root == "os" and isinstance(f.value, ast.Name) and f.attr in _OS_EFFECTS:
        return [(f"os.{f.attr}()", node.lineno)]
    if root in _MODULE_EFFECTS:
        return [(f"{root}.{f.attr}()", node.lineno)]
    if root == "os" and isinstance(f.value, ast.Attribute) and f.value.attr == "environ" \
            and f.attr in ("update", "pop", "setdefault", "clear", "popitem"):
        return [(f"os.environ.{f.attr}()", node.lineno)]
    if f.attr in _METHOD_EFFECTS:
        return [(f".{f.attr}()", node.lineno)]
    return []
