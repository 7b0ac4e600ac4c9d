"""What an agent should know before its next attempt, read without writing anything.

``project_brief`` is the one function the MCP server asks; it is built on the hypothesis store's
schema and the card search as they are today, and is the single place to switch to the store's own
brief API (``sentinel memory brief``) once that exists.

Read-only means read-only: the SQLite store is opened ``immutable`` when no write-ahead log is
present (a plain read-only connection would create ``-wal``/``-shm`` files beside it) and
``mode=ro`` when a writer is active (the log then already exists).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from sentinel.errors import SentinelError
from sentinel.memory.store import SQLiteStore
from sentinel.models import Finding, Severity

MAX_ATTEMPTS = 10
MAX_PATTERNS = 5
EXAMPLES_PER_PATTERN = 2


class ReadOnlyStore:
    """The hypothesis store, opened so that nothing on disk changes."""

    def __init__(self, path: str):
        self.path = path
        uri = Path(path).resolve().as_uri()
        mode = "mode=ro" if os.path.exists(path + "-wal") else "mode=ro&immutable=1"
        self.db = sqlite3.connect(f"{uri}?{mode}", uri=True)

    def close(self) -> None:
        self.db.close()

    # The store's own query for recurring patterns, run on this read-only connection.
    patterns = SQLiteStore.patterns

    def examples(self, project: str, sig_id: str, limit: int) -> list[dict]:
        rows = self.db.execute(
            "SELECT f.path, f.message, r.change_ref, r.created_at FROM findings f JOIN runs r ON r.id = f.run_id "
            "WHERE r.project=? AND f.sig_id=? GROUP BY f.path, f.message ORDER BY MAX(r.created_at) DESC LIMIT ?",
            (project, sig_id, limit)).fetchall()
        return [{"path": p, "message": m, "change_ref": ref, "seen": _date(t)} for p, m, ref, t in rows]

    def attempts(self, project: str, change_ref: str, limit: int) -> list[dict]:
        """The failed runs of this change since its last passing run, oldest first."""
        rows = self.db.execute(
            "SELECT id, outcome, created_at, commit_sha, subject FROM runs WHERE project=? AND change_ref=? "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (project, change_ref, limit * 3)).fetchall()
        streak = []
        for run_id, outcome, created, commit, subject in rows:
            if outcome == "passed":
                break
            streak.append((run_id, outcome, created, commit, subject))
        streak = streak[:limit][::-1]
        out = []
        for run_id, outcome, created, commit, subject in streak:
            found = self.db.execute("SELECT rule, path, message FROM findings WHERE run_id=? ORDER BY id",
                                    (run_id,)).fetchall()
            out.append({"outcome": outcome, "when": _date(created), "commit": commit[:10] if commit else None,
                        "subject": subject, "findings": [{"rule": r, "path": p, "message": m} for r, p, m in found]})
        return out


class NoStore:
    """Stands in when no store exists yet: no patterns, no attempts."""

    def patterns(self, project: str, sig_ids=None, limit: int = 50) -> list:
        return []

    def close(self) -> None:
        pass  # nothing was opened


def _date(ts: float | None) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else None


def identity(root: str | None, change=None) -> tuple[str, str]:
    """(project, change_ref) exactly as the gate records them, so the brief finds the gate's runs."""
    from types import SimpleNamespace

    from sentinel.memory import gate_hook

    change = change or SimpleNamespace(changeset=SimpleNamespace(root=root, source="staged"))
    return gate_hook._project_and_ref(change)


def open_store(config, root: str | None):
    """(store, note): the configured store read-only, or NoStore and why."""
    from sentinel import gitio

    try:
        git_dir = gitio.git_dir(root) if root else None
        from sentinel.memory.location import store_location

        path = store_location(config.memory, git_dir)
    except SentinelError as exc:
        return NoStore(), f"hypothesis store not used: {exc}"
    if not os.path.exists(path):
        return NoStore(), "no gate run recorded yet in this repository (the hypothesis store is empty)"
    try:
        store = ReadOnlyStore(path)
        store.db.execute("SELECT 1 FROM runs LIMIT 1")
    except sqlite3.Error as exc:
        return NoStore(), f"hypothesis store not readable: {exc}"
    return store, None


def project_brief(root: str | None, config, change_ref: str | None = None, k: int = 3) -> dict:
    project, ref = identity(root)
    ref = change_ref or ref
    store, note = open_store(config, root)
    try:
        patterns = store.patterns(project, limit=MAX_PATTERNS)
        out_patterns = []
        for p in patterns:
            out_patterns.append({
                "id": p.sig_id, "rule": p.rule, "urgency": p.urgency, "runs": p.count, "changes": p.changes,
                "last_seen": _date(p.last_seen), "last_resolution": p.last_resolution,
                "examples": store.examples(project, p.sig_id, EXAMPLES_PER_PATTERN)})
        attempts = store.attempts(project, ref, MAX_ATTEMPTS) if isinstance(store, ReadOnlyStore) else []
    except sqlite3.Error as exc:
        out_patterns, attempts, note = [], [], f"hypothesis store not readable: {exc}"
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
    for item in [*recent, *(ex | {"rule": p["rule"]} for p in patterns for ex in p["examples"])]:
        groups.setdefault(item["rule"], []).append(
            Finding(rule=item["rule"], check="", severity=Severity.ERROR, path=item.get("path") or "", line=None,
                    message=item.get("message") or ""))
    return dict(list(groups.items())[:3])


def _similar_for(groups: dict[str, list[Finding]], config, root: str | None, k: int) -> tuple[list[dict], str | None]:
    if not groups:
        return [], None
    from sentinel.memory import recall_search

    out, note = [], None
    for rule, findings in groups.items():
        hits, note = recall_search.similar_fixes(rule, findings, config, root=root)
        out.append({"rule": rule, "cards": [{"id": h.id, "score": round(h.score, 3), "summary": h.problem_summary,
                                             "fix": h.fix_line} for h in hits[:k]]})
    return out, note
