"""JSON report: the Verdict as documented in docs/json-schema.md (schema version 1).

Serialised with the stdlib (no pydantic import on the CLI path); ``from_json`` validates a
report back into a typed Verdict with pydantic, for consumers such as the GitHub Action.
"""

from __future__ import annotations

import json
from enum import Enum

from sentinel.baseline import fingerprint
from sentinel.models import Finding, Verdict
from sentinel.record import Record
from sentinel.redact import scrub_verdict
from sentinel.report.terminal import redact

SCHEMA_VERSION = 1

_SCALARS = frozenset({str, int, float, bool})


class _Encoder:
    """Verdict -> plain JSON data, every model field included (a generic deep conversion is ~10x
    slower on large reports). Finding text is redacted and each finding gets its fingerprint,
    once per finding object even though it is listed both at the top and under its check."""

    def __init__(self) -> None:
        self.findings: dict[int, dict] = {}

    def value(self, v):
        if v is None or type(v) in _SCALARS:
            return v
        if isinstance(v, Finding):
            return self.finding(v)
        if isinstance(v, Enum):
            return v.value
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, Record):
            return {name: self.value(getattr(v, name)) for name in v._fields}
        return v

    def finding(self, f: Finding) -> dict:
        done = self.findings.get(id(f))
        if done is None:
            done = {name: self.value(getattr(f, name)) for name in Finding._fields}
            done["message"] = redact(f.message)
            done["code"] = redact(f.code)
            done["fingerprint"] = fingerprint(f)
            self.findings[id(f)] = done
        return dict(done)


def to_dict(verdict: Verdict) -> dict:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    from sentinel.version import __version__

    body = _Encoder().value(verdict)
    for r in body["checks"]:
        r["reason"] = redact(r["reason"])
    for g in body["recall"]:
        for s in g["similar"]:
            s["summary"] = redact(s["summary"])
            s["fix_strategy"] = redact(s["fix_strategy"])
            s["why"] = redact(s["why"])
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "sentinel", "version": __version__},
        "passed": body.pop("passed"),
        "errored": verdict.errored,
        "fail_level": body.pop("fail_level"),
        "counts": verdict.counts(),
        **body,
    }


# Pretty-printing forces the pure-Python encoder (~20x slower); big reports are written compact.
PRETTY_MAX_FINDINGS = 2000


def render(verdict: Verdict, **_) -> str:
    indent = 2 if len(verdict.findings) <= PRETTY_MAX_FINDINGS else None
    return json.dumps(to_dict(verdict), indent=indent, ensure_ascii=False) + "\n"


def from_json(text: str) -> Verdict:
    """Parse and validate a JSON report back into a Verdict (extra report-only keys are ignored)."""
    from sentinel.record_schema import adapter

    data = json.loads(text)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise ValueError(f"unsupported sentinel report schema_version {version!r} (expected {SCHEMA_VERSION})")
    return adapter(Verdict).validate_python(data)
