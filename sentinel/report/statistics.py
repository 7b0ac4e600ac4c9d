"""``--statistics``: how many findings each rule produced, most frequent first (ruff's shape)."""

from __future__ import annotations

import json
from collections import Counter

from sentinel.models import Verdict
from sentinel.redact import scrub_verdict
from sentinel.report.terminal import summary_line


def rows(verdict: Verdict, rules: dict | None = None) -> list[dict]:
    counts = Counter(f.rule for f in verdict.findings)
    severity = {}
    for f in verdict.findings:
        # the highest severity a rule was reported with in this run (config and roles can vary it)
        if f.rule not in severity or f.severity.rank > severity[f.rule].rank:
            severity[f.rule] = f.severity
    out = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = (rules or {}).get(code)
        out.append({"code": code, "name": rule.name if rule is not None else "", "count": n,
                    "severity": severity[code].value})
    return out


def render(verdict: Verdict, rules: dict | None = None, as_json: bool = False, exit_zero: bool = False,
           **_) -> str:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    table = rows(verdict, rules)
    if as_json:
        return json.dumps(table, indent=2) + "\n"
    width = max((len(str(r["count"])) for r in table), default=1)
    out = [f"{r['count']:>{width}}  {r['code']}  {r['severity']:<7}  {r['name']}".rstrip() for r in table]
    out.append(summary_line(verdict, exit_zero))
    return "\n".join(out) + "\n"
