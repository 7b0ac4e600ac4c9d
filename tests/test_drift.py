"""Task drift: the change (message + code digest) against the task, with the bundled static model."""

from __future__ import annotations

import os

import pytest

from sentinel import engine
from sentinel.checks import drift
from sentinel.checks.base import ChangeContext
from sentinel.config import Config, DriftConfig, validate
from sentinel.diffparse import parse_diff
from sentinel.intent.digest import build_digest, identifier_words, path_words
from sentinel.intent.task import issue_numbers, resolve_task
from sentinel.models import CheckStatus, FilterMode, Severity
from sentinel.sources import Change
from tests.conftest import new_file_diff

TASK = "Add retries with exponential backoff to the HTTP client when the server answers 503"
RETRY = ("import time\n\n\ndef get_with_retry(session, url, attempts=5):\n    delay = 0.5\n"
         "    for _ in range(attempts):\n        response = session.get(url)\n"
         "        if response.status_code != 503:\n            return response\n"
         "        time.sleep(delay)\n        delay *= 2\n    return response\n")
INVOICES = ("import csv\n\n\ndef export_invoices(rows, path):\n    with open(path, 'w', newline='') as fh:\n"
            "        csv.writer(fh).writerows(rows)\n")


def _run(files: dict, message: str | None, task: str | None, config: dict | None = None, **opts):
    diff = "".join(new_file_diff(p, c) for p, c in files.items())
    cs = parse_diff(diff, source="test")
    return engine.run(Change(cs, content_rev=None), validate(config or {}, "test"),
                      engine.RunOptions(message=message, task=task, only_checks=["drift"], **opts))


def _result(verdict):
    return next(r for r in verdict.checks if r.check == "drift")


def test_unrelated_change_is_drift_with_band_and_basis():
    v = _run({"billing/export.py": INVOICES}, "Export invoices as CSV files", TASK)
    [f] = v.findings
    assert (f.rule, f.severity, f.path, f.line) == ("SEN501", Severity.ERROR, "", None)
    assert any(f"(band: {b})" in f.message for b in ("critical", "high", "medium", "low"))
    assert "task from --task" in f.message and "export_invoices" in f.message
    assert not v.passed


def test_related_change_passes_with_score_in_reason():
    v = _run({"http_client/retry.py": RETRY}, "Retry HTTP requests with exponential backoff on 503 responses", TASK)
    assert v.findings == [] and v.passed
    r = _result(v)
    assert r.status is CheckStatus.PASSED and r.reason.startswith("similarity 0.") and "model static" in r.reason


def test_on_topic_message_cannot_carry_off_topic_code():
    # The reference gate compared prose only: the same on-topic message scores lower over unrelated code.
    message = "Retry HTTP requests with exponential backoff on 503 responses"
    on = float(_result(_run({"http_client/retry.py": RETRY}, message, TASK)).reason.split()[1])
    off = float(_result(_run({"billing/export.py": INVOICES}, message, TASK)).reason.split()[1])
    assert on - off > 0.05, (on, off)


def test_borderline_is_info_and_does_not_block():
    v = _run({"http_client/headers.py": "def parse_header(value):\n    return value.split(';')[0].strip()\n"},
             "Parse the HTTP content type header", TASK,
             {"drift": {"threshold": 0.10, "borderline_margin": 0.85}})
    [f] = v.findings
    assert (f.rule, f.severity) == ("SEN502", Severity.INFO) and v.passed


def test_no_task_is_skipped_with_how_to_give_one(monkeypatch):
    monkeypatch.delenv("SENTINEL_TASK", raising=False)
    r = _result(_run({"a.py": "x = 1\n"}, "msg", None))
    assert r.status is CheckStatus.SKIPPED
    assert r.reason == "no task given (use --task, SENTINEL_TASK or .sentinel/task.md)"


def test_no_model_is_skipped_with_reason_and_fix(tmp_path):
    r = _result(_run({"a.py": "x = 1\n"}, "msg", TASK, {"embeddings": {"model": str(tmp_path / "nope")}}))
    assert r.status is CheckStatus.SKIPPED and "no embedding model" in r.reason and "fix:" in r.reason


def test_task_from_environment(monkeypatch):
    monkeypatch.setenv("SENTINEL_TASK", TASK)
    v = _run({"billing/export.py": INVOICES}, "Export invoices as CSV files", None)
    assert [f.rule for f in v.findings] == ["SEN501"] and "SENTINEL_TASK" in v.findings[0].message


# --- task resolution ---------------------------------------------------------------------------------

def _cctx(root, message=None, task=None, options=None, config=None):
    return ChangeContext(files=[], config=config or Config(), mode=FilterMode.ADDED, root=str(root) if root else None,
                         message=message, task=task, options=options or {})


def test_task_resolution_order(tmp_path, monkeypatch):
    monkeypatch.delenv("SENTINEL_TASK", raising=False)
    (tmp_path / ".sentinel" / "issues").mkdir(parents=True)
    (tmp_path / ".sentinel" / "issues" / "12.md").write_text("Issue twelve text\n")
    assert resolve_task(_cctx(tmp_path, "Fixes #12")).source == "issue #12"
    assert resolve_task(_cctx(tmp_path, "Fixes #12")).text == "Issue twelve text"
    (tmp_path / ".sentinel" / "task.md").write_text("Task file text\n")
    assert resolve_task(_cctx(tmp_path, "Fixes #12")).source == ".sentinel/task.md"
    monkeypatch.setenv("SENTINEL_TASK", "env task")
    assert resolve_task(_cctx(tmp_path, "Fixes #12")).text == "env task"
    assert resolve_task(_cctx(tmp_path, "Fixes #12", task="cli task")).source == "--task"


def test_task_from_issues_provided_by_ci(monkeypatch):
    monkeypatch.delenv("SENTINEL_TASK", raising=False)
    issues = {"issues": {7: "Login loops", "9": "Logout"}}
    task = resolve_task(_cctx(None, "Fix login (#7), see also #9", options=issues))
    assert task.source == "issue #7, #9" and "Login loops" in task.text and "Logout" in task.text
    assert resolve_task(_cctx(None, "No refs here")) is None


def test_issue_numbers():
    assert issue_numbers("Fixes #12, closes GH-7; see org/repo#99 and &#123; and a#1") == [12, 7]


# --- digest ------------------------------------------------------------------------------------------

def _files(diff: str):
    return parse_diff(diff, source="test").files


def test_digest_python_added_modified_removed():
    from sentinel.checks.base import FileContext
    before = "class Client:\n    def get(self, url):\n        return url\n\n\ndef old_helper():\n    return 1\n"
    after = ("class Client:\n    def get(self, url):\n        return self.retry(url)\n\n"
             "    def retry(self, url):\n        return url\n")
    import difflib
    body = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/c.py", "b/c.py", n=1000))
    files = _files("diff --git a/c.py b/c.py\n" + body)
    ctx = FileContext(files[0], Config(), FilterMode.ADDED, after)
    d = build_digest(files, {"c.py": ctx})
    got = {(s.action, s.name) for s in d.symbols}
    assert got == {("modified", "Client.get"), ("added", "Client.retry"), ("removed", "old_helper")}
    assert d.parsed == {"c.py"}
    assert "retry" in d.embed_text() and "old helper" in d.embed_text()


def test_digest_without_content_uses_patterns_and_headers():
    diff = ("diff --git a/web/app.js b/web/app.js\n--- a/web/app.js\n+++ b/web/app.js\n"
            "@@ -10,3 +10,4 @@ function renderInvoiceTable(rows) {\n"
            "   const x = 1;\n+  const y = 2;\n   return x;\n }\n"
            "@@ -40,2 +41,5 @@ class Cart {\n"
            "   a();\n+export async function fetchWithRetry(url) {\n+  return url;\n+}\n b();\n")
    d = build_digest(_files(diff), None)
    got = {(s.action, s.name) for s in d.symbols}
    assert {("added", "fetchWithRetry"), ("modified", "renderInvoiceTable"), ("modified", "Cart")} <= got
    assert "render invoice table" in d.embed_text()


def test_identifier_and_path_words():
    assert identifier_words("_read_pycHeader2") == "read pyc header"
    assert identifier_words("HTTPRetryPolicy") == "http retry policy"
    assert path_words("src/_pytest/assertion/rewrite.py") == "pytest assertion rewrite"


def test_bands():
    cfg = DriftConfig(critical_below=0.1, high_below=0.2, medium_below=0.3)
    assert [drift.band(s, cfg) for s in (0.05, 0.15, 0.25, 0.35)] == ["critical", "high", "medium", "low"]


def _score(verdict) -> float:
    import re

    return float(re.search(r"similarity (\d\.\d+)", verdict.findings[0].message).group(1))


def _band_configs(score: float) -> dict:
    """Band limits that put `score` (shown to 2 decimals) in each band, the threshold above it."""
    lo, hi = score - 0.03, score + 0.03
    return {"critical": {"critical_below": hi, "high_below": hi + 0.01, "medium_below": hi + 0.02},
            "high": {"critical_below": lo, "high_below": hi, "medium_below": hi + 0.01},
            "medium": {"critical_below": lo - 0.01, "high_below": lo, "medium_below": hi},
            "low": {"critical_below": lo - 0.02, "high_below": lo - 0.01, "medium_below": lo}}


def test_advice_is_graded_by_band():
    files, message = {"billing/export.py": INVOICES}, "Export invoices as CSV files"
    score = _score(_run(files, message, TASK, {"drift": {"threshold": 0.99}}))
    hints = {}
    for level, limits in _band_configs(score).items():
        [f] = _run(files, message, TASK, {"drift": {"threshold": 0.99, **limits}}).findings
        assert f"(band: {level})" in f.message
        hints[level] = f.hint
    assert len(set(hints.values())) == 4, hints  # a low and a critical score get different advice
    assert "--task" in hints["critical"] and "branch" in hints["critical"]  # the wrong task or the wrong change
    assert "unrelated" in hints["high"] and "own change" in hints["medium"]
    assert "message" in hints["low"] and "update the task" in hints["low"]


THREE_FILES = {"http_client/retry.py": RETRY, "billing/export.py": INVOICES,
               "http_client/backoff.py": "def backoff_delay(attempt, base=0.5):\n    return base * 2 ** attempt\n"}
ON_TOPIC = "Retry HTTP requests with exponential backoff on 503 responses"


@pytest.mark.parametrize("level", ["medium", "high"])
def test_medium_and_high_advice_name_the_files_furthest_from_the_task(level):
    score = _score(_run(THREE_FILES, ON_TOPIC, TASK, {"drift": {"threshold": 0.99}}))
    [f] = _run(THREE_FILES, ON_TOPIC, TASK, {"drift": {"threshold": 0.99, **_band_configs(score)[level]}}).findings
    assert f"(band: {level})" in f.message
    assert "(least related: billing/export.py, " in f.hint


def test_a_one_file_change_or_a_critical_score_names_no_file():
    cases = [(THREE_FILES, ON_TOPIC, "critical"), ({"billing/export.py": INVOICES}, "Export invoices", "high")]
    for files, message, level in cases:
        score = _score(_run(files, message, TASK, {"drift": {"threshold": 0.99}}))
        [f] = _run(files, message, TASK, {"drift": {"threshold": 0.99, **_band_configs(score)[level]}}).findings
        assert f"(band: {level})" in f.message and "least related" not in f.hint


def test_message_does_not_print_raw_floats():
    v = _run({"billing/export.py": INVOICES}, "Export invoices as CSV files", TASK)
    import re
    assert not re.search(r"\d\.\d{3,}", v.findings[0].message)


# --- end to end ---------------------------------------------------------------------------------------

def test_through_a_real_git_repo(repo):
    repo.write("billing/export.py", INVOICES)
    repo.add("billing/export.py")
    out = repo.sentinel("check", "--task", TASK, "--message", "Export invoices as CSV files", "--no-memory",
                        env={"SENTINEL_TASK": ""})
    assert out.returncode == 1, out.stdout + out.stderr
    assert "SEN501" in out.stdout


def test_task_file_in_repo(repo):
    os.makedirs(repo.path / ".sentinel", exist_ok=True)
    repo.write(".sentinel/task.md", TASK + "\n")
    repo.write("http_client/retry.py", RETRY)
    repo.add("http_client/retry.py")
    out = repo.sentinel("check", "--message", "Retry HTTP requests with exponential backoff on 503 responses",
                        "--no-memory", "--format", "json", env={"SENTINEL_TASK": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert ".sentinel/task.md" in out.stdout


@pytest.mark.parametrize("threshold", [0.0])
def test_threshold_zero_never_fails(threshold):
    v = _run({"billing/export.py": INVOICES}, "Export invoices", TASK, {"drift": {"threshold": threshold,
                                                                              "borderline_margin": 0.0}})
    assert v.findings == []
