"""Evidence readers for claims: test reports, coverage, what the change touches, CI check runs."""

from __future__ import annotations

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


class ChangeFacts(Record):
    """What the change itself shows: tests, benchmarks, docs, changelog."""

    test_files: list[str] = factory(list)  # added or modified test files
    tests_modified: list[str] = factory(list)  # test files with removed lines (existing tests edited)
    tests_deleted: list[str] = factory(list)
    code_files: list[str] = factory(list)  # non-test, non-doc files with content changes
    doc_files: list[str] = factory(list)
    news_files: list[str] = factory(list)
    bench_files: list[str] = factory(list)


def change_facts(files: list[FileChange]) -> ChangeFacts:
    facts = ChangeFacts()
    for fc in files:
        p = fc.path
        if NEWS_PATH.search(p):
            facts.news_files.append(p)
        if is_test_path(p):
            if fc.status is FileStatus.DELETED:
                facts.tests_deleted.append(p)
            else:
                facts.test_files.append(p)
                if fc.removed:
                    facts.tests_modified.append(p)
        elif is_doc_path(p):
            facts.doc_files.append(p)
        elif fc.added or fc.removed or fc.status in (FileStatus.ADDED, FileStatus.DELETED, FileStatus.RENAMED):
            facts.code_files.append(p)
        if _BENCH_PATH.search(p) or (fc.added and any(_BENCH_CODE.search(t) for t in fc.added.values())):
            facts.bench_files.append(p)
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
