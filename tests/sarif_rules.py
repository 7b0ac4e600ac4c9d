"""What a SARIF file must satisfy to be accepted and shown by GitHub code scanning.

Two layers, both offline:
- the official OASIS SARIF 2.1.0 JSON schema (tests/data/sarif-schema-2.1.0.json, verbatim);
- GitHub's own upload requirements, from "SARIF support for code scanning" and "SARIF results
  exceed limits" (docs.github.com) and the GitHub rules of Microsoft's SARIF multitool validator
  (GH1001 locations with an artifact URI, GH1003 a region with a start line, GH1004 array limits,
  GH1005 relative or file: URIs): every result has a location in a real file of the repository
  with ``region.startLine``, a ``message.text``, a ``ruleId`` that a rule descriptor documents,
  ``partialFingerprints``; at most 20 runs per file, 25,000 results per run, 25,000 rules per
  run, 1,000 locations per result, 20 tags per rule; 10 MB gzipped.
"""

from __future__ import annotations

import functools
import gzip
import json
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jsonschema
from referencing import Registry
from referencing.exceptions import NoSuchResource

DATA = Path(__file__).resolve().parent / "data"


def _no_fetch(uri: str):
    raise NoSuchResource(ref=uri)  # offline: the schema's $refs are all local


@functools.lru_cache(maxsize=1)
def sarif_validator():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, registry=Registry(retrieve=_no_fetch))


def schema_errors(doc: dict) -> list[str]:
    errors = sorted(sarif_validator().iter_errors(doc), key=lambda e: list(e.path))
    return [f"{list(e.path)}: {e.message}" for e in errors]


def github_problems(doc: dict, root: str | Path) -> list[str]:
    """Everything in ``doc`` that GitHub code scanning would reject or not display, for a checkout at ``root``."""
    out: list[str] = []
    raw = json.dumps(doc).encode()
    if len(gzip.compress(raw)) > 10_000_000:
        out.append("file over 10 MB gzipped")
    runs = doc.get("runs") or []
    if not 1 <= len(runs) <= 20:
        out.append(f"{len(runs)} runs (1 to 20)")
    for r, run in enumerate(runs):
        rules = run.get("tool", {}).get("driver", {}).get("rules") or []
        if len(rules) > 25_000:
            out.append(f"run {r}: {len(rules)} rules")
        ids = {}
        for rule in rules:
            ids[rule["id"]] = rule
            if len(rule.get("properties", {}).get("tags", [])) > 20:
                out.append(f"rule {rule['id']}: more than 20 tags")
            if not str(rule.get("helpUri", "")).startswith("https://"):
                out.append(f"rule {rule['id']}: no https helpUri")
            if not (rule.get("shortDescription") or {}).get("text") and not rule.get("name"):
                out.append(f"rule {rule['id']}: no name or short description")
        results = run.get("results")
        if results is None:
            out.append(f"run {r}: no results array")
            continue
        if len(results) > 25_000:
            out.append(f"run {r}: {len(results)} results")
        base = (run.get("originalUriBaseIds") or {}).get("%SRCROOT%", {}).get("uri")
        for i, res in enumerate(results):
            where = f"run {r} result {i} ({res.get('ruleId')})"
            if res.get("ruleId") not in ids:
                out.append(f"{where}: ruleId not among the driver's rules")
            if "ruleIndex" in res and rules and rules[res["ruleIndex"]]["id"] != res.get("ruleId"):
                out.append(f"{where}: ruleIndex points at another rule")
            if not (res.get("message") or {}).get("text"):
                out.append(f"{where}: no message.text")
            if not res.get("partialFingerprints"):
                out.append(f"{where}: no partialFingerprints")
            locations = res.get("locations") or []
            if not locations:
                out.append(f"{where}: no location (GitHub does not display it)")
            if len(locations) > 1000:
                out.append(f"{where}: more than 1,000 locations")
            for loc in locations:
                phys = loc.get("physicalLocation") or {}
                uri = (phys.get("artifactLocation") or {}).get("uri")
                if not uri:
                    out.append(f"{where}: no artifactLocation.uri")
                    continue
                parts = urlsplit(uri)
                if parts.scheme and parts.scheme != "file":
                    out.append(f"{where}: uri {uri!r} is neither relative nor file:")
                    continue
                if parts.scheme == "file":
                    path = Path(unquote(parts.path))
                else:
                    if (phys.get("artifactLocation") or {}).get("uriBaseId") == "%SRCROOT%" and base:
                        if Path(unquote(urlsplit(base).path)).resolve() != Path(root).resolve():
                            out.append(f"{where}: %SRCROOT% is not the checkout")
                    path = Path(root) / unquote(parts.path)
                if not path.is_file():
                    out.append(f"{where}: {uri} is not a file of the repository")
                region = phys.get("region") or {}
                start = region.get("startLine")
                if not isinstance(start, int) or start < 1:
                    out.append(f"{where}: no region.startLine")
                elif path.is_file():
                    lines = path.read_bytes().count(b"\n") + 1
                    if start > lines:
                        out.append(f"{where}: startLine {start} past the end of {uri} ({lines} lines)")
        fps = [json.dumps(res.get("partialFingerprints"), sort_keys=True) for res in results]
        if len(fps) != len(set(fps)):
            out.append(f"run {r}: two results share a fingerprint (GitHub would merge their alerts)")
    return out


def sarif_for(verdict, rules=None, files=None, root=None) -> dict:
    """Render ``verdict`` as SARIF for a checkout holding its files (made in a temp dir when no
    ``root`` is given), and assert the result is valid and acceptable to GitHub."""
    from sentinel.report import render
    from sentinel.report.locate import Locator, is_pseudo_path

    if root is None:
        # a checkout made for this call only: removed again, whatever the assertions say
        with tempfile.TemporaryDirectory(prefix="sarif-repo-") as tmp:
            for f in verdict.findings:
                if not is_pseudo_path(f.path):
                    p = Path(tmp) / f.path
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_text("x\n" * max(f.end_line or 0, f.line or 0, 1))
            return sarif_for(verdict, rules, files, tmp)
    locator = Locator(files, str(root))
    doc = json.loads(render(verdict, "sarif", rules=rules if rules is not None else {}, root=str(root),
                            locator=locator))
    assert not schema_errors(doc), schema_errors(doc)[:5]
    assert not github_problems(doc, root), github_problems(doc, root)[:5]
    return doc
