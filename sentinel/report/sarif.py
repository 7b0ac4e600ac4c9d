"""SARIF 2.1.0 report, for GitHub code scanning and any other SARIF viewer.

One run; the driver lists every known rule with its documentation (what, why, example, use
instead) and a help URI to its section of docs/rules.md. Code scanning rejects or hides results
that do not point at a real file of the repository with a start line, so every result gets one:
its own file and line, or — for findings about the change as a whole (drift), the commit message
(claims) or a deleted file — the first added line of the change, with the message saying what
the finding is about (sentinel.report.locate). A finding that cannot be placed at all (a change
that only deletes files) becomes a notification instead of a result GitHub would reject.

Every result carries a stable ``partialFingerprints`` entry (rule, path and normalised code, never
the line, plus an occurrence number for identical lines), so an alert survives unrelated edits
and two identical problems stay two alerts. GitHub's upload limits (25,000 results per run, 20
tags per rule) are kept: past them, the most severe results are kept and a notification says so.
Checks that were skipped or crashed and files that could not be read become tool execution
notifications, and a crashed check makes ``executionSuccessful`` false.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.report import ruledoc
from sentinel.report.links import PROJECT_URL, rule_url, semantic_version
from sentinel.report.locate import Locator, is_pseudo_path
from sentinel.redact import display_path, safe_to_post, scrub_verdict
from sentinel.report.terminal import redact

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = PROJECT_URL
SRCROOT = "%SRCROOT%"
FINGERPRINT_ID = "sentinelFingerprint/v1"
MAX_RESULTS = 25_000  # GitHub rejects a run with more
MAX_TAGS = 20

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub code scanning reads these to rank alerts.
_PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}
_SECURITY_SEVERITY = {Severity.ERROR: "7.5", Severity.WARNING: "5.0", Severity.INFO: "2.0"}
_SECURITY_CHECKS = {"jail"}
_SECURITY_RULES = {"SEN303", "SEN304"}
PRETTY_MAX_FINDINGS = 2000


def level(severity: Severity) -> str:
    return LEVELS[severity]


def artifact_uri(path: str) -> str:
    """A repository-relative path as a relative URI reference (spaces, '%', '#' and the like encoded)."""
    # Bytes of a name that is not UTF-8 (carried as surrogates) are percent-encoded as they are.
    return quote(path.replace(os.sep, "/").lstrip("/"), safe="/-._~!$&'()*+,;=@", errors="surrogateescape")


def rule_descriptor(rule) -> dict:
    """A reportingDescriptor from a sentinel Rule: its documentation becomes the alert's help."""
    text = ruledoc.text(rule).rstrip("\n")
    tags = [rule.check]
    props: dict = {"check": rule.check, "problem.severity": _PROBLEM_SEVERITY[rule.severity]}
    if rule.check in _SECURITY_CHECKS or rule.code in _SECURITY_RULES:
        tags.append("security")
        props["security-severity"] = _SECURITY_SEVERITY[rule.severity]
    props["tags"] = tags[:MAX_TAGS]
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary} {rule.rationale}".strip()},
        "helpUri": rule_url(rule.code),
        "help": {"text": text, "markdown": ruledoc.markdown_body(rule)},
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": props,
    }


def _fallback_descriptor(f: Finding) -> dict:
    """A rule the index does not know (a plugin, an older report): describe what we have."""
    return {
        "id": f.rule,
        "shortDescription": {"text": f"{f.check} rule {f.rule}"},
        "helpUri": rule_url(f.rule),
        "defaultConfiguration": {"level": level(f.severity)},
        "properties": {"tags": [f.check], "check": f.check},
    }


def _location(path: str) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT}}}


def fingerprints(findings: list[Finding]) -> list[str]:
    """A stable identity per finding: rule, path and normalised code (a change-level finding: its
    rule and kind, not its wording, which carries scores), and the occurrence among equals."""
    from sentinel.baseline import fingerprint

    seen: Counter = Counter()
    out = []
    for f in findings:
        if is_pseudo_path(f.path):
            base = hashlib.sha256(f"{f.rule}\0{f.path}\0{' '.join(f.code.split())}".encode(
                "utf-8", "surrogateescape")).hexdigest()[:32]
        else:
            base = fingerprint(f)
        seen[base] += 1
        out.append(base if seen[base] == 1 else f"{base}:{seen[base]}")
    return out


def _result(f: Finding, rule_index: int, place, fp: str) -> dict:
    message = redact(f.message) or f.rule
    if place.anchored:
        message = f"About {place.about}: {message}"
    loc = _location(place.path)
    region: dict = {"startLine": place.line}
    if not place.anchored:
        if f.column is not None and f.column >= 1 and f.line:
            region["startColumn"] = f.column
        if f.end_line is not None and f.line and f.end_line >= f.line:
            region["endLine"] = f.end_line
        code = redact(f.code)
        if code and f.line:
            region["snippet"] = {"text": code}
    loc["physicalLocation"]["region"] = region
    props: dict = {"check": f.check}
    if f.hint:
        props["hint"] = f.hint
    if place.anchored:
        props["about"] = place.about
    return {"ruleId": f.rule, "ruleIndex": rule_index, "level": level(f.severity), "message": {"text": message},
            "locations": [loc], "partialFingerprints": {FINGERPRINT_ID: fp}, "properties": props}


def _notification(text: str, lvl: str, descriptor: str, path: str | None = None) -> dict:
    note: dict = {"message": {"text": text}, "level": lvl, "descriptor": {"id": descriptor}}
    if path and not is_pseudo_path(path):
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


def to_dict(verdict: Verdict, rules: dict | None = None, root: str | None = None,
            locator: Locator | None = None, fixes: dict | None = None, paths: dict | None = None) -> dict:
    """``fixes``: id(finding) -> SARIF fix objects for its result (sentinel.fix.export.sarif_fixes).
    ``paths``: id(finding) -> its real path, for findings of a scrubbed copy whose path is quoted for display
    (a name with a tab or bytes that are not UTF-8): the result points at the real file."""
    from sentinel.version import __version__

    locator = locator or Locator(None, root)
    known = dict(rules or {})
    descriptors = [rule_descriptor(known[code]) for code in sorted(known)]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    for f in verdict.findings:
        if f.rule not in index:
            index[f.rule] = len(descriptors)
            descriptors.append(_fallback_descriptor(f))

    notes = _notifications(verdict)
    results = []
    unplaced = []
    for f, fp in zip(verdict.findings, fingerprints(verdict.findings)):
        place = locator.place(f, (paths or {}).get(id(f)))
        if place is None:
            unplaced.append(f)
            continue
        results.append(_result(f, index[f.rule], place, fp))
        if fixes and id(f) in fixes and not place.anchored:
            results[-1]["fixes"] = fixes[id(f)]
    for f in unplaced:
        notes.append(_notification(f"{f.rule} ({f.check}) has no file of the repository to point at: "
                                   f"{redact(f.message)}", level(f.severity), "sentinel/unplaced-finding"))
    if len(results) > MAX_RESULTS:
        rank = {"error": 0, "warning": 1, "note": 2}
        order = sorted(range(len(results)), key=lambda i: rank[results[i]["level"]])
        keep = sorted(order[:MAX_RESULTS])
        notes.append(_notification(f"{len(results) - MAX_RESULTS} of {len(results)} results left out: GitHub code "
                                   f"scanning accepts at most {MAX_RESULTS:,} per run (the most severe are kept)",
                                   "warning", "sentinel/results-capped"))
        results = [results[i] for i in keep]

    run: dict = {
        "tool": {"driver": {"name": "sentinel", "informationUri": INFORMATION_URI, "version": __version__,
                            "semanticVersion": semantic_version(__version__), "rules": descriptors}},
        "invocations": [{"executionSuccessful": not verdict.errored, "toolExecutionNotifications": notes}],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"passed": verdict.passed, "failLevel": verdict.fail_level.value, "source": verdict.source,
                       "filesChanged": verdict.files_changed, "linesAdded": verdict.lines_added,
                       "suppressed": verdict.suppressed, "baselined": verdict.baselined},
    }
    if root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(os.path.abspath(root)).as_uri().rstrip("/") + "/"}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(verdict: Verdict, rules: dict | None = None, root: str | None = None, locator: Locator | None = None,
           fixes: dict | None = None, **_) -> str:
    copies: dict[int, object] = {}
    originals = verdict.findings
    verdict = scrub_verdict(verdict, copies)  # sentinel.redact: the one output path
    if fixes:  # keyed by id(finding): re-key to the scrubbed copies; a fix that would carry a secret is dropped
        fixes = {id(copies[k]): v for k, v in fixes.items() if k in copies and safe_to_post(v)}
    paths = {id(copy): original.path for original in originals  # quoted only, never a path that held a secret
             if (copy := copies.get(id(original))) is not None and copy.path != original.path
             and redact(display_path(original.path)) == display_path(original.path)}
    if rules is None:
        rules = _all_rules()
    # Pretty-printing forces the pure-Python encoder (~20x slower); big logs are written compact.
    indent = 2 if len(verdict.findings) <= PRETTY_MAX_FINDINGS else None
    return json.dumps(to_dict(verdict, rules, root, locator, fixes, paths), indent=indent, ensure_ascii=False) + "\n"


def _all_rules() -> dict:
    from sentinel.checks import rule_index
    try:
        return rule_index()
    except ImportError:
        # A check module that cannot be imported already failed the run (it is reported as an
        # errored check); its findings still get a minimal descriptor.
        return {}
