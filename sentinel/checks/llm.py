"""LLM review: an adversarial reviewer reads the diff against the task (opt-in, never by default).

Runs only when enabled in config (llm.enabled and llm.model) and only after the deterministic checks
passed (the engine gates it), so a change that is already blocked is never sent anywhere. The call
goes through litellm (imported here, lazily: it is the [llm] extra), trying the model and then each
fallback model in order. The reply must parse into the Review schema; an unparsable or failed reply
is a check error when llm.fail_closed (the default) - never a silent pass - else a SEN702 warning.
"""

from __future__ import annotations

import json
import re

from sentinel.lazyre import lazy_compile
from sentinel.llmclient import import_litellm
from sentinel.models import CheckResult, CheckStatus, FileStatus, Finding, Severity
from sentinel.rules import Rule

CHECK = "llm"
_CONFIG = {"llm": {"enabled": True, "model": "openai/test-model"}}

RULES: tuple[Rule, ...] = (
    Rule("SEN701", "llm-review-gap", CHECK, Severity.ERROR,
         "An adversarial LLM reviewer found a gap between the change and its task (completeness, correctness, "
         "edge cases, security); the finding has the reviewer's severity.",
         "Deterministic checks see patterns, not intent: a reviewer reading the task catches the half-done "
         "change that is clean code.",
         "def valid_port(value: int) -> bool:\n    return value > 0\n",
         "def valid_port(value: int) -> bool:\n    return 0 < value <= 65535\n",
         hint="address the gap, or explain in the message why it is not one",
         example_path="net/ports.py", example_config=_CONFIG,
         example_task="Validate TCP port numbers: reject anything outside 1-65535",
         example_message="Validate port numbers"),
    Rule("SEN702", "llm-review-failed", CHECK, Severity.WARNING,
         "The LLM review could not be completed (no reply, an error, or a reply that is not the review schema) "
         "and llm.fail_closed is off.",
         "A review that did not happen must not read as a review that passed.",
         "def valid_port(value: int) -> bool:\n    return 0 < value <= 65535\n",
         "def valid_port(value: int) -> bool:\n    return 0 < value <= 65535\n",
         hint="check the model name, api_base and key; set llm.fail_closed = true to make this an error",
         example_path="net/ports.py",
         example_config={"llm": {"enabled": True, "model": "openai/test-model", "fail_closed": False}},
         example_task="Validate TCP port numbers: reject anything outside 1-65535",
         example_message="Validate port numbers"),
)
_RULE = {r.code: r for r in RULES}

SYSTEM_PROMPT = """You are an adversarial code reviewer. Your job is to find where a change fails its task.
Check, against the task: completeness (is every part of the task done?), correctness (does the code do what
it claims, including off-by-one and wrong conditions?), edge cases (empty, None, zero, huge, unicode,
concurrency, errors), and security (injection, secrets, unsafe calls, missing validation).
Report only real gaps you can point to in the diff; do not praise, do not restate the change.
Answer with JSON only, exactly this schema:
{"verdict": "PASS" | "FAIL", "gaps": [{"severity": "error" | "warning" | "info", "description": "...",
"file": "path or null", "line": number or null}]}
Use FAIL when any gap has severity "error"."""

_SEVERITY_WORDS = {"error": "error", "critical": "error", "high": "error", "blocker": "error", "major": "error",
                   "warning": "warning", "medium": "warning", "moderate": "warning", "minor": "info",
                   "info": "info", "low": "info", "note": "info", "suggestion": "info"}


def _schema():
    """The typed reply schema (pydantic imported only when a review actually runs)."""
    from typing import Literal, Optional

    from pydantic import BaseModel, ConfigDict, field_validator

    class Gap(BaseModel):
        model_config = ConfigDict(extra="ignore")
        severity: Literal["error", "warning", "info"] = "warning"
        description: str
        file: Optional[str] = None
        line: Optional[int] = None

        @field_validator("severity", mode="before")
        @classmethod
        def _severity(cls, v):
            word = str(v or "warning").strip().lower()
            if word not in _SEVERITY_WORDS:
                raise ValueError(f"unknown severity {v!r}")
            return _SEVERITY_WORDS[word]

        @field_validator("line", mode="before")
        @classmethod
        def _line(cls, v):
            if v in (None, "", "null"):
                return None
            return int(v)

    class Review(BaseModel):
        model_config = ConfigDict(extra="ignore")
        verdict: Literal["PASS", "FAIL"]
        gaps: list[Gap] = []

        @field_validator("verdict", mode="before")
        @classmethod
        def _verdict(cls, v):
            return str(v).strip().upper()

    return Review


_FENCED = lazy_compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def parse_review(text: str):
    """The reply as a Review; raises ValueError naming what is wrong. Accepts a ```json fenced reply."""
    from pydantic import ValidationError
    if not text or not text.strip():
        raise ValueError("empty reply")
    candidates = [m.group(1) for m in _FENCED.finditer(text)] + [text]
    last = "no JSON object"
    for cand in candidates:
        cand = cand.strip()
        start, end = cand.find("{"), cand.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(cand[start:end + 1])
        except json.JSONDecodeError as exc:
            last = f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
            continue
        try:
            return _schema().model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "reply"
            last = f"not the review schema ({where}: {err['msg']})"
    raise ValueError(last)


# --- the diff sent for review -------------------------------------------------------------------

def _file_diff(fc) -> str:
    """A unified diff of one file rebuilt from the parsed change (hunks, added, removed, context)."""
    old = fc.old_path or fc.path
    head = [f"--- {'/dev/null' if fc.status is FileStatus.ADDED else 'a/' + old}",
            f"+++ {'/dev/null' if fc.status is FileStatus.DELETED else 'b/' + fc.path}"]
    if fc.is_binary or fc.status is FileStatus.BINARY:
        return "\n".join(head + ["Binary file"])
    removed = dict(fc.removed)
    out = list(head)
    for h in fc.hunks:
        out.append(f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
                   + (f" {h.section_header}" if h.section_header else ""))
        o, n = h.source_start, h.target_start
        o_end, n_end = h.source_start + h.source_length, h.target_start + h.target_length
        guard = 0
        while (o < o_end or n < n_end) and guard < 1_000_000:
            guard += 1
            if o < o_end and o in removed:
                out.append("-" + removed[o])
                o += 1
            elif n < n_end and n in fc.added:
                out.append("+" + fc.added[n])
                n += 1
            elif n < n_end and n in fc.context:
                out.append(" " + fc.context[n])
                o += 1
                n += 1
            else:
                o += 1  # a line we know nothing about (should not happen with a parsed diff)
                n += 1
    return "\n".join(out)


def build_diff(files) -> str:
    return "\n".join(_file_diff(fc) for fc in files) + "\n"


def build_messages(task: str | None, message: str | None, diff: str, cut_note: str) -> list[dict]:
    """The prompt. Everything in it leaves the machine, so it goes through sentinel.redact first: a
    provider is never sent a secret (the deterministic checks already report it)."""
    from sentinel.redact import redact

    parts = []
    parts.append("## Task\n" + (task.strip() if task else "(no task given: review against the commit message)"))
    if message and message.strip():
        parts.append("## Commit message / PR description\n" + message.strip())
    parts.append("## Diff" + (f" ({cut_note})" if cut_note else "") + "\n```diff\n" + diff + "```")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": redact("\n\n".join(parts))}]


# --- calling the model ---------------------------------------------------------------------------

def _usage_and_cost(litellm, response) -> tuple[int, int, float | None]:
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    try:
        cost = float(litellm.completion_cost(completion_response=response))
    except Exception:  # an unknown model has no price: cost is then reported as unknown, not guessed
        cost = None
    return prompt, completion, cost


def _call(litellm, cfg, messages) -> tuple[object | None, str | None, list[str]]:
    """(response, model that answered, errors of the models that failed) trying model then fallbacks."""
    errors = []
    for model in [cfg.model, *cfg.fallback_models]:
        if not model:
            continue
        kwargs = {"model": model, "messages": messages, "timeout": cfg.timeout, "temperature": 0,
                  "num_retries": 0, "max_retries": 0}
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        try:
            return litellm.completion(**kwargs), model, errors
        except Exception as exc:  # any provider failure moves on to the next model; all are reported
            errors.append(f"{model}: {type(exc).__name__}: {_first_line(str(exc))}")
    return None, None, errors


def _first_line(text: str, width: int = 160) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: width - 1] + "\u2026"


def _failure(cfg, reason: str, extra: str) -> CheckResult:
    text = reason + (f" [{extra}]" if extra else "")
    if cfg.fail_closed:
        return CheckResult(CHECK, CheckStatus.ERROR, reason=text + " (llm.fail_closed)")
    rule = _RULE["SEN702"]
    return CheckResult(CHECK, CheckStatus.PASSED, reason=text,
                       findings=[Finding(rule.code, CHECK, rule.severity, "", None, f"LLM review failed: {reason}",
                                         hint=rule.hint)])


def check_change(cctx) -> CheckResult:
    cfg = cctx.config.llm
    if not cfg.enabled:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason="disabled (set llm.enabled and llm.model)")
    if not cfg.model:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason="no model configured (set llm.model)")
    from sentinel.intent.task import resolve_task
    task = resolve_task(cctx)
    if task is None and not (cctx.message or "").strip():
        return CheckResult(CHECK, CheckStatus.SKIPPED,
                           reason="no task or message to review against (use --task or --message)")
    files = [fc for fc in cctx.files if fc.added or fc.removed or fc.is_binary]
    if not files:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason="the change has no lines to review")
    diff = build_diff(files)
    cut_note = ""
    if len(diff) > cfg.max_diff_chars:
        cut_note = f"cut to the first {cfg.max_diff_chars} of {len(diff)} characters"
        diff = diff[: cfg.max_diff_chars].rsplit("\n", 1)[0] + "\n"
    try:
        litellm = import_litellm()
    except ImportError:
        return _failure(cfg, "litellm is not installed", "pip install 'diff-sentinel[llm]'")
    messages = build_messages(task.text if task else None, cctx.message, diff, cut_note)
    response, model, errors = _call(litellm, cfg, messages)
    notes = ([f"diff {cut_note}"] if cut_note else [])
    if response is None:
        return _failure(cfg, "no model answered", "; ".join(errors))
    prompt_t, completion_t, cost = _usage_and_cost(litellm, response)
    usage = f"{model}: {prompt_t}+{completion_t} tokens, cost " + (f"${cost:.4f}" if cost is not None else "unknown")
    notes = [usage] + notes + ([f"failed first: {'; '.join(errors)}"] if errors else [])
    try:
        content = response.choices[0].message.content or ""
    except (AttributeError, IndexError):
        content = ""
    try:
        review = parse_review(content)
    except ValueError as exc:
        return _failure(cfg, f"unparsable review reply: {exc}", "; ".join(notes))
    findings = []
    rule = _RULE["SEN701"]
    for gap in review.gaps:
        path, line = _locate(cctx, gap.file, gap.line)
        findings.append(Finding(rule.code, CHECK, Severity(gap.severity), path, line,
                                f"review gap: {_first_line(gap.description, 300)}", hint=rule.hint))
    if review.verdict == "FAIL" and not any(f.severity is Severity.ERROR for f in findings):
        findings.append(Finding(rule.code, CHECK, Severity.ERROR, "", None,
                                "reviewer verdict FAIL" + ("" if review.gaps else " without listing gaps"),
                                hint=rule.hint))
    reason = f"verdict {review.verdict}, {len(review.gaps)} gap(s); " + "; ".join(notes)
    return CheckResult(CHECK, CheckStatus.PASSED, findings=findings, reason=reason)


def _locate(cctx, file: str | None, line: int | None) -> tuple[str, int | None]:
    """A gap's location, kept only when it names a file of the change (and a line the filter shows)."""
    if not file:
        return "", None
    path = file.strip().removeprefix("a/").removeprefix("b/").lstrip("./")
    ctx = cctx.file_contexts.get(path)
    if ctx is None:
        return "", None
    if line is not None and not ctx.selected(line):
        line = None  # a gap on an unchanged line would be filtered out by the mode; keep it file-level
    return path, line
