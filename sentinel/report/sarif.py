"""SARIF 2.1.0 report, for GitHub code scanning and any other SARIF viewer.

One run; the driver lists every known rule with its documentation (what, why, example, use
instead); results point at repository-relative URIs under ``%SRCROOT%``. Checks that were
skipped or crashed and files that could not be read become tool execution notifications, and
a crashed check makes ``executionSuccessful`` false, so a viewer never shows a silent pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from sentinel.lazyre import lazy_compile
from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.report.terminal import redact

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/diff-sentinel/"
SRCROOT = "%SRCROOT%"
FINGERPRINT_ID = "sentinelFingerprint/v1"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub code scanning reads these to rank alerts.
_PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}
_SECURITY_CHECKS = {"jail"}
_SECURITY_RULES = {"SEN303", "SEN304"}

_FENCE_LANG = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript", ".tsx": "tsx",
               ".go": "go", ".rs": "rust", ".java": "java", ".rb": "ruby", ".sh": "sh", ".bash": "bash",
               ".sql": "sql", ".toml": "toml", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".c": "c",
               ".h": "c", ".cpp": "cpp", ".cs": "csharp", ".php": "php", ".kt": "kotlin", ".swift": "swift"}
_BACKTICKS = lazy_compile(r"`+")
PRETTY_MAX_FINDINGS = 2000


def level(severity: Severity) -> str:
    return LEVELS[severity]


def artifact_uri(path: str) -> str:
    """A repository-relative path as a relative URI reference (spaces, '%', '#' and the like encoded)."""
    return quote(path.replace(os.sep, "/").lstrip("/"), safe="/-._~!$&'()*+,;=@")


def _fence(code: str, path: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    lang = _FENCE_LANG.get(os.path.splitext(path)[1].lower(), "")
    return f"{ticks}{lang}\n{code.strip(chr(10))}\n{ticks}"


def rule_descriptor(rule) -> dict:
    """A reportingDescriptor from a sentinel Rule: its documentation becomes the alert's help."""
    text_parts = [rule.summary, "", f"Why it matters: {rule.rationale}"]
    md_parts = [rule.summary, "", f"**Why it matters.** {rule.rationale}"]
    if rule.example:
        text_parts += ["", "Example (fires):", rule.example.strip("\n")]
        md_parts += ["", "**Example** (fires):", "", _fence(rule.example, rule.example_path)]
    if rule.counter_example:
        text_parts += ["", "Use instead:", rule.counter_example.strip("\n")]
        md_parts += ["", "**Use instead:**", "", _fence(rule.counter_example, rule.example_path)]
    if rule.hint:
        text_parts += ["", f"Hint: {rule.hint}"]
        md_parts += ["", f"**Hint:** {rule.hint}"]
    md_parts += ["", f"Run `sentinel explain {rule.code}` for details; suppress one line with "
                     f"`# sentinel: ignore[{rule.code}]`."]
    tags = [rule.check]
    if rule.check in _SECURITY_CHECKS or rule.code in _SECURITY_RULES:
        tags.append("security")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary} {rule.rationale}".strip()},
        "help": {"text": "\n".join(text_parts), "markdown": "\n".join(md_parts)},
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": {"tags": tags, "check": rule.check, "problem.severity": _PROBLEM_SEVERITY[rule.severity]},
    }


def _fallback_descriptor(f: Finding) -> dict:
    """A rule the index does not know (a plugin, an older report): describe what we have."""
    return {
        "id": f.rule,
        "shortDescription": {"text": f"{f.check} rule {f.rule}"},
        "defaultConfiguration": {"level": level(f.severity)},
        "properties": {"tags": [f.check], "check": f.check},
    }


def _has_location(path: str) -> bool:
    # Change-level findings (the commit message, the task) have no file to point at.
    return bool(path) and not path.startswith("<")


def _location(path: str) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT}}}


def _result(f: Finding, rule_index: int) -> dict:
    from sentinel.baseline import fingerprint

    result: dict = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": level(f.severity),
        "message": {"text": redact(f.message) or f.rule},
    }
    if _has_location(f.path):
        loc = _location(f.path)
        if f.line is not None and f.line >= 1:
            region: dict = {"startLine": f.line}
            if f.column is not None and f.column >= 1:
                region["startColumn"] = f.column
            if f.end_line is not None and f.end_line >= f.line:
                region["endLine"] = f.end_line
            code = redact(f.code)
            if code:
                region["snippet"] = {"text": code}
            loc["physicalLocation"]["region"] = region
        result["locations"] = [loc]
    result["partialFingerprints"] = {FINGERPRINT_ID: fingerprint(f)}
    props: dict = {"check": f.check}
    if f.hint:
        props["hint"] = f.hint
    result["properties"] = props
    return result


def _notification(text: str, lvl: str, descriptor: str, path: str | None = None) -> dict:
    note: dict = {"message": {"text": text}, "level": lvl, "descriptor": {"id": descriptor}}
    if path and _has_location(path):
        note["locations"] = [_location(path)]
    return note


def _notifications(verdict: Verdict) -> list[dict]:
    out = []
    for r in verdict.checks:
        reason = redact(r.reason)
        if r.status is CheckStatus.ERROR:
            out.append(_notification(f"check '{r.check}' crashed: {reason or 'no reason given'}", "error",
                                     "sentinel/check-error"))
        elif r.status is CheckStatus.SKIPPED:
            out.append(_notification(f"check '{r.check}' skipped: {reason or 'no reason given'}", "note",
                                     "sentinel/check-skipped"))
    for nc in verdict.not_checked:
        out.append(_notification(f"{nc.path} not checked: {redact(nc.reason)}", "warning", "sentinel/not-checked",
                                 nc.path))
    return out


def to_dict(verdict: Verdict, rules: dict | None = None, root: str | None = None) -> dict:
    from sentinel import __version__

    known = dict(rules or {})
    descriptors = [rule_descriptor(known[code]) for code in sorted(known)]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    for f in verdict.findings:
        if f.rule not in index:
            index[f.rule] = len(descriptors)
            descriptors.append(_fallback_descriptor(f))

    run: dict = {
        "tool": {"driver": {"name": "sentinel", "informationUri": INFORMATION_URI, "version": __version__,
                            "semanticVersion": __version__, "rules": descriptors}},
        "invocations": [{"executionSuccessful": not verdict.errored,
                         "toolExecutionNotifications": _notifications(verdict)}],
        "results": [_result(f, index[f.rule]) for f in verdict.findings],
        "columnKind": "unicodeCodePoints",
        "properties": {"passed": verdict.passed, "failLevel": verdict.fail_level.value, "source": verdict.source,
                       "filesChanged": verdict.files_changed, "linesAdded": verdict.lines_added,
                       "suppressed": verdict.suppressed, "baselined": verdict.baselined},
    }
    if root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(os.path.abspath(root)).as_uri().rstrip("/") + "/"}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(verdict: Verdict, rules: dict | None = None, root: str | None = None, **_) -> str:
    if rules is None:
        rules = _all_rules()
    # Pretty-printing forces the pure-Python encoder (~20x slower); big logs are written compact.
    indent = 2 if len(verdict.findings) <= PRETTY_MAX_FINDINGS else None
    return json.dumps(to_dict(verdict, rules, root), indent=indent, ensure_ascii=False) + "\n"


def _all_rules() -> dict:
    from sentinel.checks import rule_index
    try:
        return rule_index()
    except ImportError:
        # A check module that cannot be imported already failed the run (it is reported as an
        # errored check); its findings still get a minimal descriptor.
        return {}
