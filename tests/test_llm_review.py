"""LLM review through litellm's real HTTP path, against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sentinel import engine
from sentinel.checks import llm
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.models import CheckStatus, Severity
from sentinel.sources import Change
from tests.conftest import new_file_diff

# litellm must never reach the network: the cost map is read from the package, telemetry is off.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

PASS = json.dumps({"verdict": "PASS", "gaps": []})
FAIL = json.dumps({"verdict": "FAIL", "gaps": [
    {"severity": "high", "description": "ports above 65535 are accepted", "file": "net/ports.py", "line": 2},
    {"severity": "info", "description": "no test for port 0", "file": None, "line": None}]})

# Replies for the rule documentation examples (tests/test_rule_docs.py).
RULE_DOC_REPLIES = {
    "SEN701": {"example": {"content": FAIL}, "counter": {"content": PASS}},
    "SEN702": {"example": {"content": "I think it looks fine!"}, "counter": {"content": PASS}},
}


class FakeLLM:
    """POST /v1/chat/completions -> a chat.completion with usage. Replies are consumed in order; a reply
    is {"content": str} with optional "status" (HTTP error code) and "delay" (seconds before answering).
    `by_model` answers a given model name (as the server sees it) the same way every time."""

    def __init__(self):
        self.replies: list[dict] = []
        self.by_model: dict[str, dict] = {}
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                return

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"path": self.path, "body": body})
                model = body.get("model", "")
                reply = outer.by_model.get(model) or (outer.replies.pop(0) if outer.replies else {"content": PASS})
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                status = reply.get("status", 200)
                if status != 200:
                    payload = {"error": {"message": f"status {status}", "type": "rate_limit_error", "code": status}}
                else:
                    payload = {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": reply["content"]}}],
                               "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client timed out and went away

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.api_base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    with FakeLLM() as server:
        yield server


CLEAN = "def valid_port(value: int) -> bool:\n    return value > 0\n"
TASK = "Validate TCP port numbers: reject anything outside 1-65535"


def review(server, content=CLEAN, path="net/ports.py", task=TASK, message="Validate port numbers", **llm_cfg):
    cfg = {"enabled": True, "model": "openai/test-model", "api_base": server.api_base, "timeout": 20, **llm_cfg}
    cs = parse_diff(new_file_diff(path, content), source="test")
    verdict = engine.run(Change(cs, content_rev=None), validate({"llm": cfg}, "test"),
                         engine.RunOptions(task=task, message=message))
    return verdict, next(r for r in verdict.checks if r.check == "llm")


def test_pass_reply(llm_server):
    llm_server.replies = [{"content": PASS}]
    verdict, r = review(llm_server)
    assert r.status is CheckStatus.PASSED and r.findings == [] and verdict.passed
    assert "verdict PASS" in r.reason and "120+30 tokens" in r.reason and "cost" in r.reason
    [req] = llm_server.requests
    assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "test-model"
    user = req["body"]["messages"][1]["content"]
    assert TASK in user and "+    return value > 0" in user and "Validate port numbers" in user
    assert "adversarial" in req["body"]["messages"][0]["content"]


def test_fail_reply_with_gaps_becomes_findings_with_their_severity(llm_server):
    llm_server.replies = [{"content": FAIL}]
    verdict, r = review(llm_server)
    got = sorted((f.rule, f.severity, f.path, f.line) for f in r.findings)
    assert got == [("SEN701", Severity.ERROR, "net/ports.py", 2), ("SEN701", Severity.INFO, "", None)]
    assert not verdict.passed and r.status is CheckStatus.FAILED
    assert any("65535" in f.message for f in r.findings)


def test_reply_in_a_code_fence(llm_server):
    llm_server.replies = [{"content": "Here is my review:\n```json\n" + FAIL + "\n```\n"}]
    _, r = review(llm_server)
    assert len(r.findings) == 2


def test_malformed_reply_is_an_error_when_fail_closed(llm_server):
    llm_server.replies = [{"content": '{"verdict": "PASS", "gaps": ['}]
    verdict, r = review(llm_server)
    assert r.status is CheckStatus.ERROR and "unparsable" in r.reason and verdict.errored and not verdict.passed


def test_malformed_reply_is_a_warning_when_fail_open(llm_server):
    llm_server.replies = [{"content": '{"verdict": "MAYBE"}'}]
    verdict, r = review(llm_server, fail_closed=False)
    [f] = r.findings
    assert (f.rule, f.severity) == ("SEN702", Severity.WARNING) and "not the review schema" in f.message
    assert verdict.passed  # a warning, visible, not blocking


def test_timeout_is_an_error_not_a_pass(llm_server):
    llm_server.replies = [{"content": PASS, "delay": 4}]
    t0 = time.perf_counter()
    verdict, r = review(llm_server, timeout=1)
    assert time.perf_counter() - t0 < 4
    assert r.status is CheckStatus.ERROR and "no model answered" in r.reason and "Timeout" in r.reason
    assert not verdict.passed


def test_rate_limited_model_falls_back_to_the_next(llm_server):
    llm_server.by_model = {"busy-model": {"status": 429}}
    llm_server.replies = [{"content": PASS}]
    _, r = review(llm_server, model="openai/busy-model", fallback_models=["openai/test-model"])
    assert r.status is CheckStatus.PASSED, r.reason
    assert "openai/test-model: 120+30 tokens" in r.reason and "failed first: openai/busy-model" in r.reason
    assert [q["body"]["model"] for q in llm_server.requests] == ["busy-model", "test-model"]


def test_known_model_reports_cost(llm_server):
    _, r = review(llm_server, model="openai/gpt-4o-mini")
    assert "$0.0" in r.reason, r.reason


def test_long_diff_is_cut_and_says_so(llm_server):
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    _, r = review(llm_server, content=body, path="pkg/many.py", max_diff_chars=500)
    assert "cut to the first 500" in r.reason
    user = llm_server.requests[0]["body"]["messages"][1]["content"]
    assert "cut to the first 500" in user and "def f199" not in user


def test_not_sent_when_deterministic_checks_fail(llm_server):
    src = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        pass\n"
    verdict, r = review(llm_server, content=src, path="app.py")
    assert r.status is CheckStatus.SKIPPED and "not run" in r.reason
    assert llm_server.requests == []


def test_never_sent_unless_enabled(llm_server):
    cs = parse_diff(new_file_diff("net/ports.py", CLEAN), source="test")
    cfg = {"llm": {"model": "openai/test-model", "api_base": llm_server.api_base}}
    verdict = engine.run(Change(cs, content_rev=None), validate(cfg, "test"), engine.RunOptions(task=TASK))
    r = next(r for r in verdict.checks if r.check == "llm")
    assert r.status is CheckStatus.SKIPPED and llm_server.requests == []


def test_parse_review_schema():
    reply = '{"verdict": "fail", "gaps": [{"severity": "Critical", "description": "x", "line": "3"}]}'
    rv = llm.parse_review(f"```\n{reply}\n```")
    assert rv.verdict == "FAIL" and rv.gaps[0].severity == "error" and rv.gaps[0].line == 3
    with pytest.raises(ValueError, match="empty reply"):
        llm.parse_review("  ")
    with pytest.raises(ValueError, match="schema"):
        llm.parse_review('{"gaps": []}')


def test_rebuilt_diff_keeps_order():
    import difflib
    before = "a\nb\nc\nd\n"
    after = "a\nB\nc\nd\ne\n"
    body = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/x.txt", "b/x.txt"))
    fc = parse_diff("diff --git a/x.txt b/x.txt\n" + body).files[0]
    text = llm.build_diff([fc])
    assert "-b\n+B\n c\n d\n+e" in text
