"""Candidates from fix records: one JSON object per line with the shape of a closed-loop bug-fix record —
`id, repo, sha, date, subject, body, news, issue_refs, issue_urls, files_changed, diff, test_diff,
test_functions_added, test_functions_modified, truncated` (only id, repo, sha, subject and diff are required).

This is how the bundled cards are governed (the same pipeline as a project's history) and how a team feeds in
records exported from elsewhere: `sentinel memory learn --records FILE.jsonl --license MIT`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.paths import role

_FILE_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$", re.MULTILINE)


def split_diff(diff: str) -> dict[str, str]:
    """{path: diff text} of a multi-file unified diff."""
    out: dict[str, str] = {}
    heads = list(_FILE_HEADER.finditer(diff or ""))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(diff)
        out[m.group(2)] = diff[m.end():end].lstrip("\n")
    return out


def _count(text: str, sign: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith(sign) and not line.startswith(sign * 3))


def candidate_of(rec: dict, license: str | None = None) -> Candidate:
    files: list[FileDiff] = []
    diffs = {**split_diff(rec.get("test_diff") or ""), **split_diff(rec.get("diff") or "")}
    for path in rec.get("files_changed") or list(diffs):
        text = diffs.get(path, "")
        files.append(FileDiff(path=path, role=role(path), diff=text, added=_count(text, "+"),
                              removed=_count(text, "-")))
    refs = [f"#{n}" for n in rec.get("issue_refs") or []]
    tests = list(dict.fromkeys([*(rec.get("test_functions_added") or []),
                                *(rec.get("test_functions_modified") or [])]))
    evidence = rec.get("bugfix_evidence") or []
    reasons = ["fragment" if rec.get("news") else "wording", *(f"record:{e}" for e in evidence)]
    return Candidate(key=str(rec["id"]), origin="record", repository=rec["repo"], sha=rec["sha"],
                     date=rec.get("date") or "", subject=rec.get("subject") or "", body=rec.get("body") or "",
                     fragment=" ".join((rec.get("news") or "").split()), issue_refs=refs,
                     urls=list(rec.get("issue_urls") or []), files=files, tests_added=tests[:10], reasons=reasons,
                     record_id=str(rec["id"]), license=rec.get("license") or license,
                     truncated=bool(rec.get("truncated")))


def read_records(path: str | Path, license: str | None = None) -> Iterator[Candidate]:
    from sentinel.errors import InputError

    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read records {path}: {exc.strerror}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                yield candidate_of(rec, license)
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{path}:{n}: not a fix record ({type(exc).__name__}: {exc})") from None
