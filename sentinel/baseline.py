"""Baseline of accepted findings, fingerprinted so unrelated line shifts do not resurrect them.

A fingerprint is the rule, the path and the whitespace-normalised offending code, never the
line number; identical lines are counted, so adding a second copy of a baselined problem
is still reported.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from sentinel.digest import sha256  # CPython's own SHA-256: hashlib would load OpenSSL
from sentinel.errors import InputError
from sentinel.models import Finding

VERSION = 1


def fingerprint(f: Finding) -> str:
    code = " ".join(f.code.split()) if f.code else f.message
    return sha256(f"{f.rule}\0{f.path}\0{code}".encode("utf-8", "surrogateescape")).hexdigest()[:32]


def write(path: str, findings: list[Finding]) -> int:
    counts = Counter(fingerprint(f) for f in findings)
    first = {}
    for f in findings:
        first.setdefault(fingerprint(f), f)
    entries = [{"fingerprint": fp, "rule": first[fp].rule, "path": first[fp].path, "count": n}
               for fp, n in sorted(counts.items(), key=lambda kv: (first[kv[0]].path, first[kv[0]].rule, kv[0]))]
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"version": VERSION, "tool": "sentinel", "findings": entries}, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)
    return len(findings)


def load(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read baseline {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"baseline {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("findings"), list):
        raise InputError(f"baseline {path} has an unknown format (expected version {VERSION})")
    out: Counter = Counter()
    for e in data["findings"]:
        if isinstance(e, dict) and isinstance(e.get("fingerprint"), str):
            out[e["fingerprint"]] += int(e.get("count", 1))
    return out


def apply(findings: list[Finding], accepted: Counter, unchanged=None) -> tuple[list[Finding], int]:
    """Drop findings the baseline accepts. `unchanged(f)` counts copies of f's code the run did not look at
    (see unchanged_copies): they hold their share of the allowance even though they are not reported."""
    remaining = Counter(accepted)
    if unchanged is not None:
        for fp, first in {fingerprint(f): f for f in reversed(findings)}.items():
            remaining[fp] = max(0, remaining[fp] - unchanged(first))
    kept, dropped = [], 0
    for f in findings:
        fp = fingerprint(f)
        if remaining[fp] > 0:
            remaining[fp] -= 1
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped


def unchanged_copies(contexts: dict, mode) -> "callable":
    """How many copies of a finding's code the file holds *outside* the lines the run looked at.

    In the hook's default filter mode only added lines are checked, so an accepted problem that was left
    alone is not reported again — and must not use up the baseline's allowance: a new copy of a baselined
    problem would otherwise be matched against the old copy's entry and pass. Copies on unchanged lines are
    counted from the post-change file (the same normalised code on a line the run did not select).
    """
    from sentinel.models import FilterMode

    if mode in (FilterMode.FILE, FilterMode.NOFILTER):
        return lambda f: 0
    counts: dict[str, dict[str, int]] = {}

    def count(f: Finding) -> int:
        ctx = contexts.get(f.path)
        if ctx is None or not f.code:
            return 0
        per_file = counts.get(f.path)
        if per_file is None:
            per_file = counts[f.path] = {}
            lines = ctx.lines
            for n in range(1, len(lines)):
                if not ctx.selected(n):
                    key = " ".join(lines[n].split())
                    if key:
                        per_file[key] = per_file.get(key, 0) + 1
        return per_file.get(" ".join(f.code.split()), 0)

    return count
