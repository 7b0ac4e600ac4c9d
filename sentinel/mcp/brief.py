"""What an agent should know before its next attempt, read without writing anything.

``project_brief`` is the one function the MCP server asks. It is the store's own brief
(``sentinel.memory.hypotheses.brief``, the data behind ``sentinel memory brief``) read from a store opened
read-only (``sentinel.memory.store.open_store(readonly=True)``: SQLite ``immutable`` / ``mode=ro``,
never migrated; the team database when one is configured), shaped as this server's tools answer,
with the similar-fix search per rule group done here.
"""

from __future__ import annotations

import time

from sentinel.errors import SentinelError
from sentinel.models import Finding, Severity

MAX_ATTEMPTS = 10
MAX_PATTERNS = 5
EXAMPLES_PER_PATTERN = 2


def _date(ts: float | None) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else None


def identity(root: str | None, config, change_ref: str | None = None) -> tuple[str, str, str]:
    """(project, change_id, change_ref) exactly as the gate records them, so the brief finds the gate's runs."""
    from sentinel.memory.hypotheses import gate_hook

    return gate_hook.current_change(root, config, change_ref, remember=False)


def open_store(config, root: str | None):
    """(store or None, note): the configured store, read-only."""
    from sentinel import gitio
    from sentinel.memory.store.backends import open_store as open_configured

    try:
        git_dir = gitio.git_dir(root) if root else None
        return open_configured(config.memory, git_dir, wait=2.0, readonly=True), None
    except SentinelError as exc:
        return None, f"hypothesis store not used: {exc}"


def project_brief(root: str | None, config, change_ref: str | None = None, k: int = 3) -> dict:
    from sentinel.memory.hypotheses.brief import build_brief
    from sentinel.memory.hypotheses.signature import mechanism_of

    project, change_id, ref = identity(root, config, change_ref)
    store, note = open_store(config, root)
    attempts: list[dict] = []
    out_patterns: list[dict] = []
    if store is not None:
        try:
            brief = build_brief(store, project, change_id, ref, with_cards=False, patterns=MAX_PATTERNS,
                                attempts=MAX_ATTEMPTS)
        except SentinelError as exc:
            note = f"hypothesis store not readable: {exc}"
        else:
            attempts = [{"outcome": a.outcome, "when": _date(a.created_at),
                         "commit": a.commit_sha[:10] if a.commit_sha else None, "subject": a.subject,
                         "findings": [{"rule": f.rule, "path": f.path, "line": f.line, "message": f.message,
                                       "approach": f.code} for f in a.findings], "paths": a.paths}
                        for a in brief.failed_attempts]
            out_patterns = [{"id": p.sig_id, "rule": p.rule, "urgency": p.urgency, "attempts": p.attempts,
                             "changes": p.changes, "last_seen": _date(p.last_seen),
                             "last_resolution": p.last_resolution,
                             "signature": mechanism_of(p.signature),
                             "examples": [{"path": e.path, "line": e.line, "change": e.change,
                                           "seen": _date(e.seen_at), "code": e.code, "subject": e.subject}
                                          for e in p.examples[:EXAMPLES_PER_PATTERN]]}
                            for p in brief.patterns]
        finally:
            store.close()
    similar, search_note = _similar_for(_rule_groups(attempts, out_patterns), config, root, k)
    return {"project": project, "change_ref": ref, "earlier_failed_attempts": attempts,
            "recurring_patterns": out_patterns, "similar_fixes": similar,
            "notes": [n for n in (note, search_note) if n]}


def _rule_groups(attempts: list[dict], patterns: list[dict]) -> dict[str, list[Finding]]:
    """Rule -> stand-in findings (message only) to search similar fixes for: the last attempt's
    failures first, then the recurring patterns."""
    groups: dict[str, list[Finding]] = {}
    recent = attempts[-1]["findings"] if attempts else []
    for item in [*recent, *({"rule": p["rule"], "message": p["signature"]} for p in patterns)]:
        groups.setdefault(item["rule"], []).append(
            Finding(rule=item["rule"], check="", severity=Severity.ERROR, path=item.get("path") or "",
                    line=item.get("line"), message=item.get("message") or ""))
    return dict(list(groups.items())[:3])


def _similar_for(groups: dict[str, list[Finding]], config, root: str | None, k: int) -> tuple[list[dict], str | None]:
    if not groups:
        return [], None
    from sentinel.checks import rule_index
    from sentinel.memory.retrieval import recall as recall_search

    out, note = [], None
    rules = rule_index()
    for rule, findings in groups.items():
        hits, note = recall_search.similar_for_findings(rule, findings, config, root, about=rules.get(rule))
        out.append({"rule": rule, "cards": [recall_search.hit_json(h) for h in hits[:k]]})
    return out, note
