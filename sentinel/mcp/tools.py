"""What each MCP tool does, as plain functions returning JSON-ready data (no MCP SDK import here).

Bad arguments raise :class:`sentinel.errors.InputError` with a message written for the agent that
sent them; the server turns every error into a tool error. Every string that leaves this module
goes through the one redaction path (:mod:`sentinel.redact`), like every other output of the gate.
"""

from __future__ import annotations

import os
import re

from sentinel.errors import GitError, InputError
from sentinel.models import CheckStatus, Finding, Verdict

MAX_DIFF_CHARS = 20 * 1024 * 1024
MAX_QUERY_CHARS = 4000
MAX_TEXT_ARG_CHARS = 100_000
_RULE_CODE = re.compile(r"^[A-Za-z]{3}\d{3}$")
_CARD_ID = re.compile(r"^[\w.:-]{1,200}$")


def redact_text(text: str) -> str:
    """Secrets masked and bytes that were not UTF-8 escaped: the one redaction path (sentinel.redact)."""
    from sentinel.redact import redact

    return redact(text) if text else text


def redact_tree(value):
    """Every string of nested JSON-ready data, redacted (sentinel.redact)."""
    from sentinel.redact import redact_tree as tree

    return tree(value)


class Workspace:
    """The repository the server answers for (fixed at start: tools take no paths)."""

    def __init__(self, start: str | None = None):
        self.start = os.path.abspath(start or os.getcwd())
        self._root: str | None = None

    def root(self) -> str:
        if self._root is None:
            from sentinel import gitio

            try:
                self._root = gitio.repo_root(self.start)
            except GitError as exc:
                raise GitError(f"{exc} (the server answers for {self.start}; start it with "
                               "`sentinel mcp --repo PATH` inside a git repository)") from None
        return self._root

    def root_or_none(self) -> str | None:
        try:
            return self.root()
        except GitError:
            return None

    def config(self, root: str | None):
        from sentinel.config import load_config

        # No cache_dir: the cached config would be written under .git/sentinel.
        return load_config(root, None, cache_dir=None)


# --- the gate ---------------------------------------------------------------------------------------

def _text_arg(name: str, value: str | None, limit: int = MAX_TEXT_ARG_CHARS) -> str | None:
    if value is None:
        return None
    if len(value) > limit:
        raise InputError(f"{name} is {len(value)} characters; the limit is {limit}")
    return value


def _check_range(spec: str) -> str:
    spec = spec.strip()
    if not spec or len(spec) > 500 or "\0" in spec or "\n" in spec:
        raise InputError("range must be one line like 'main...HEAD' or 'HEAD~3..HEAD'")
    if ".." not in spec:
        raise InputError(f"invalid range {spec!r}: expected A..B (plain diff) or A...B (since the merge base)")
    parts = [p for p in re.split(r"\.{2,3}", spec, maxsplit=1) if p]
    if any(p.startswith("-") for p in parts):
        raise InputError(f"invalid range {spec!r}: a revision cannot start with '-'")
    return spec


def get_change(ws: Workspace, range: str | None, diff: str | None):
    from sentinel import api, sources

    root = ws.root()
    if range is not None and diff is not None:
        raise InputError("give either range or diff, not both (neither: the staged change)")
    if diff is not None:
        if not diff.strip():
            raise InputError("diff is empty: pass the text of a unified diff (git diff output)")
        _text_arg("diff", diff, MAX_DIFF_CHARS)
        return api.get_change(diff=diff, cwd=root)
    if range is not None:
        return sources.commit_range(_check_range(range), root)
    return sources.staged(root)


def _run_gate(ws: Workspace, range: str | None, diff: str | None, task: str | None = None,
              message: str | None = None, fail_level: str | None = None, filter_mode: str | None = None):
    from sentinel import engine
    from sentinel.models import FilterMode, Severity

    change = get_change(ws, range, diff)
    config = ws.config(change.changeset.root)
    opts = engine.RunOptions(
        fail_level=Severity(fail_level) if fail_level else None,
        filter_mode=FilterMode(filter_mode) if filter_mode else None,
        task=_text_arg("task", task), message=_text_arg("message", message),
        jobs=1)  # the server is threaded: no forked workers
    return change, config, engine.run(change, config, opts)


def check_change(ws: Workspace, range: str | None = None, diff: str | None = None, task: str | None = None,
                 message: str | None = None, fail_level: str | None = None, filter_mode: str | None = None,
                 max_findings: int = 200, memory: bool = True) -> dict:
    if not 1 <= max_findings <= 5000:
        raise InputError("max_findings must be between 1 and 5000")
    change, config, verdict = _run_gate(ws, range, diff, task, message, fail_level, filter_mode)
    if memory and config.memory.enabled and not verdict.passed and verdict.findings:
        _recall(change, config, verdict)
    return redact_tree(verdict_data(verdict, max_findings))


def _recall(change, config, verdict: Verdict) -> None:
    """Similar past fixes and recurring patterns, as the CLI adds them, without recording the run."""
    from sentinel.checks import rule_index
    from sentinel.mcp import brief
    from sentinel.memory.hypotheses import gate_hook

    store, note = brief.open_store(config, change.changeset.root)
    try:
        project, change_id, ref = brief.identity(change.changeset.root, config)
        gate_hook.recall_from(verdict, store, project, config, change.changeset.root, rules=rule_index,
                              change=(change_id, ref, gate_hook.content_digest(change.changeset)), files_from=change)
    except Exception as exc:  # memory is an aid: the verdict stands without it
        verdict.recall_note = f"experience memory not used: {type(exc).__name__}: {exc}"
    finally:
        if store is not None:
            store.close()
    if note and not verdict.recall_note:
        verdict.recall_note = note


def finding_data(f: Finding, blocking: bool, fix: str = "none") -> dict:
    return {"rule": f.rule, "check": f.check, "severity": f.severity.value, "blocking": blocking,
            "path": f.path, "line": f.line, "column": f.column, "end_line": f.end_line, "message": f.message,
            "hint": f.hint, "code": f.code, "fix": fix}


def verdict_data(verdict: Verdict, max_findings: int = 200) -> dict:
    from sentinel.checks import rule_index

    fail = verdict.fail_level.rank
    rules = rule_index()
    findings = [finding_data(f, f.severity.rank >= fail, rules[f.rule].fix if f.rule in rules else "none")
                for f in verdict.findings]
    findings.sort(key=lambda d: not d["blocking"])  # what blocks first, then file order
    counts = verdict.counts()
    if verdict.errored:
        outcome = "error"
    else:
        outcome = "passed" if verdict.passed else "failed"
    summary = (f"{outcome}: " + ", ".join(f"{n} {sev}" for sev, n in counts.items() if n)
               if verdict.findings else f"{outcome}: no findings")
    return {
        "outcome": outcome, "passed": verdict.passed, "fail_level": verdict.fail_level.value,
        "summary": f"{summary} ({verdict.files_changed} file(s), {verdict.lines_added} added line(s), "
                   f"{verdict.source})",
        "counts": counts, "findings": findings[:max_findings],
        "findings_total": len(findings), "findings_truncated": len(findings) > max_findings,
        "checks": [{"check": r.check, "status": r.status.value, "reason": r.reason, "findings": len(r.findings)}
                   for r in verdict.checks],
        "errors": [f"check '{r.check}' failed to run: {r.reason}" for r in verdict.checks
                   if r.status is CheckStatus.ERROR],
        "not_checked": [{"path": n.path, "reason": n.reason} for n in verdict.not_checked],
        "suppressed": verdict.suppressed, "baselined": verdict.baselined,
        "recall": [{"rule": g.rule, "title": g.title, "findings": g.finding_count,
                    "similar_fixes": [{"card_id": s.card_id, "score": s.score, "summary": s.summary,
                                       "fix": s.fix_strategy, "source": s.source, "why": s.why,
                                       "commit": s.commit, "date": s.date, "url": s.url,
                                       "repository": s.repository} for s in g.similar],
                    "recurring_patterns": [{"rule": p.rule, "urgency": p.urgency, "attempts": p.count,
                                            "changes": p.changes, "last_resolution": p.last_resolution}
                                           for p in g.patterns],
                    "earlier_attempts": [{"at": a.at, "path": a.path, "line": a.line, "code": a.code,
                                          "message": a.message, "findings": a.findings, "commit": a.commit,
                                          "subject": a.subject} for a in g.earlier_attempts]}
                   for g in verdict.recall],
        "recall_note": verdict.recall_note,
    }


def preview_fixes(ws: Workspace, range: str | None = None, diff: str | None = None, unsafe: bool = False) -> dict:
    from sentinel.fix import planner

    change, config, verdict = _run_gate(ws, range, diff)
    plan = planner.plan(change, verdict.findings, config, unsafe=unsafe)
    return redact_tree({
        "diff": "".join(planner.unified_diff(fp) for fp in plan.changed_files),
        "fixes": [{"rule": fx.finding.rule, "path": fp.path, "line": fx.finding.line, "safety": fx.safety,
                   "description": fx.description} for fp in plan.changed_files for fx in fp.fixes],
        "not_fixed": [{"rule": f.rule, "path": fp.path, "line": f.line, "reason": why}
                      for fp in plan.files for f, why in fp.not_fixed]
                     + [{"rule": None, "path": path, "line": None, "reason": why} for path, why in plan.refused],
        "unsafe_fixes_not_shown": plan.unsafe_skipped,
    })


# --- memory -----------------------------------------------------------------------------------------

def _index(ws: Workspace):
    from sentinel.memory.cards.index import IndexMissing, load_index

    try:
        return load_index(root=ws.root_or_none())
    except IndexMissing as exc:
        raise InputError(str(exc)) from None


def search_cards(ws: Workspace, query: str, k: int = 5, language: str | None = None, rule: str | None = None,
                 tag: str | None = None) -> dict:
    from sentinel.memory.cards.index import learned_index
    from sentinel.memory.retrieval.recall import fix_line
    from sentinel.memory.retrieval.search import search_memory, show

    if not query or not query.strip():
        raise InputError("query is empty: describe the symptom (error text, what went wrong)")
    _text_arg("query", query, MAX_QUERY_CHARS)
    if not 1 <= k <= 50:
        raise InputError("k must be between 1 and 50")
    if rule is not None and not _RULE_CODE.match(rule):
        raise InputError(f"rule must be a rule code like SEN301, not {rule!r}")
    root = ws.root_or_none()
    idx = _index(ws)
    from sentinel.memory.learn.cache import stale_note

    config = ws.config(root)
    # the server writes nothing, not even the learned cards' cache: a cache behind the team database is said
    stale = stale_note(root, config)
    # the bundled cards and this project's learned ones, merged by calibrated score (below the threshold: none)
    results = search_memory(query, k=k, language=language or None, tag=tag or None,
                            rule=rule.upper() if rule else None, config=config, index=idx, root=root)
    project = learned_index(root) if root else None
    hits = []
    for h in results:
        card = (show(h.id, index=project) if h.source == "project" and project is not None else None) or \
            show(h.id, index=idx) or {}
        hits.append({"id": h.id, "score": round(h.score, 3), "summary": h.problem_summary, "language": h.language,
                     "signals": list(h.top_signals), "fix": fix_line(card), "source": h.source,
                     "provenance": h.provenance})
    note = "; ".join(n for n in (results.note, stale) if n) or None
    return redact_tree({"query": query, "mode": results.mode, "note": note, "results": hits})


def read_card(ws: Workspace, card_id: str) -> dict:
    from sentinel.commands.memory import render_card
    from sentinel.memory.retrieval.search import show

    card_id = (card_id or "").strip()
    if not _CARD_ID.match(card_id):
        raise InputError("id must be a card id as returned by search_experience, e.g. fx-aiohttp-7b5d54a96c")
    card = show(card_id, index=_index(ws))
    if card is None:
        from sentinel.memory.cards.index import learned_index

        project = learned_index(ws.root_or_none())
        card = show(card_id, index=project) if project is not None else None
    if card is None:
        raise InputError(f"no card with id {card_id!r}; search_experience returns the ids that exist")
    return redact_tree({"card": card, "text": render_card(card)})


def project_brief(ws: Workspace, change_ref: str | None = None) -> dict:
    from sentinel.mcp.brief import project_brief as brief

    if change_ref is not None and (not change_ref.strip() or len(change_ref) > 300 or "\0" in change_ref):
        raise InputError("change_ref must be a branch name or PR ref such as 'feature/x' or 'pr/12'")
    root = ws.root()
    return redact_tree(brief(root, ws.config(root), change_ref=change_ref))


# --- rules ------------------------------------------------------------------------------------------

def explain_rule(code: str) -> dict:
    from sentinel.checks import rule_index

    key = (code or "").strip().upper()
    rules = rule_index()
    rule = rules.get(key)
    if rule is None:
        raise InputError(f"unknown rule code {code!r}; known codes: {', '.join(sorted(rules))}")
    return {"code": rule.code, "name": rule.name, "check": rule.check, "default_severity": rule.severity.value,
            "summary": rule.summary, "rationale": rule.rationale, "example": rule.example,
            "use_instead": rule.counter_example, "hint": rule.hint, "example_path": rule.example_path,
            "fix": rule.fix,
            "example_message": rule.example_message or None, "example_task": rule.example_task or None}
