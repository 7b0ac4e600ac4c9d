"""After a gate run: record it in the hypothesis store and, when the gate failed, recall
similar past fixes (governed cards) and this project's recurring patterns.

Memory is an aid, never a reason for the gate to break: if the store or the index cannot
be used, the verdict carries a note saying so and the gate's own result stands.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from sentinel import gitio
from sentinel.errors import SentinelError
from sentinel.memory import quiet
from sentinel.memory.location import store_location
from sentinel.models import RecallGroup, RecurringPattern, SimilarFix, Verdict

MAX_GROUPS = 3  # noise is what users hate most: a few groups, a few fixes each
RETENTION_EVERY = 50  # runs between retention sweeps


def _git(root: str, *args: str) -> str | None:
    try:
        return gitio.run_git(list(args), cwd=root, check=False).decode("utf-8", "replace").strip() or None
    except SentinelError:
        return None


def _branch(root: str) -> str:
    """The checked-out branch, read from HEAD itself: a process per hook run is worth saving."""
    try:
        with open(os.path.join(gitio.git_dir(root), "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
    except (OSError, SentinelError):
        return _git(root, "symbolic-ref", "--quiet", "--short", "HEAD") or "detached"
    return head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else "detached"


def _head(root: str) -> tuple[str, str, str] | None:
    """(HEAD sha, first parent sha or "", subject) in one git call; None before the first commit."""
    out = _git(root, "log", "-1", "--format=%H%x00%P%x00%s", "HEAD")
    if not out:
        return None
    sha, parents, subject = (out.split("\0") + ["", ""])[:3]
    return sha, parents.split(" ")[0] if parents else "", subject


def _project_and_ref(change) -> tuple[str, str]:
    cs = change.changeset
    root = cs.root
    project = os.environ.get("SENTINEL_PROJECT") or (os.path.basename(root) if root else "default")
    ref = os.environ.get("SENTINEL_CHANGE_REF")
    if not ref and root:
        ref = _branch(root)
    return project, ref or cs.source


def change_identity(change) -> dict:
    """project, change_ref, commit, subject, base (HEAD when the change has no commit yet) for the store."""
    cs = change.changeset
    root = cs.root
    project, ref = _project_and_ref(change)
    ident = {"project": project, "change_ref": ref, "commit": None, "subject": None, "base": None,
             "head": None}
    if cs.head and cs.head != "INDEX":
        ident["commit"] = cs.head
        ident["subject"] = (cs.message or "").strip().split("\n", 1)[0] or None
    elif root:
        ident["head"] = _head(root)
        ident["base"] = ident["head"][0] if ident["head"] else None
    return ident


def after_run(change, config, verdict: Verdict) -> Verdict:
    root = change.changeset.root
    try:
        git_dir = gitio.git_dir(root) if root else None
    except SentinelError:
        git_dir = None
    clean = not verdict.findings and not verdict.errored
    try:
        db_path = store_location(config.memory, git_dir)
    except SentinelError as exc:
        verdict.recall_note = f"experience memory not used: {exc}"
        return verdict
    quiet_key = "\0".join(_project_and_ref(change))
    if clean and quiet.is_quiet(db_path, quiet_key):
        return verdict  # nothing this run could add: see sentinel.memory.quiet
    import sqlite3

    from sentinel.memory.signature import signature
    from sentinel.memory.store import FindingRecord, RunRecord, SQLiteStore

    try:
        store = SQLiteStore(db_path)
    except (SentinelError, sqlite3.Error, OSError) as exc:
        verdict.recall_note = f"experience memory not used: {exc}"
        return verdict
    try:
        ident = change_identity(change)
        _name_pending_resolution(store, ident)
        records = [FindingRecord(f.rule, signature(f.rule, f.message, f.code), f.path, f.message)
                   for f in verdict.findings]
        outcome = "passed" if verdict.passed else ("error" if verdict.errored else "failed")
        run_id = store.record_run(RunRecord(project=ident["project"], change_ref=ident["change_ref"],
                                            outcome=outcome, findings=records, commit_sha=ident["commit"],
                                            subject=ident["subject"], base_sha=ident["base"]))
        if run_id % RETENTION_EVERY == 0:
            store.apply_retention(config.memory.retention_days, config.memory.max_runs)
        if not verdict.passed and verdict.findings:
            recall(verdict, store, ident["project"], config, root)
        clean = clean and not store.has_pending_resolutions(ident["project"])
    except (sqlite3.Error, OSError) as exc:
        verdict.recall_note = f"experience memory not used: {type(exc).__name__}: {exc}"
        clean = False
    finally:
        store.close()
    quiet.note_written(db_path, quiet_key, clean)
    return verdict


def _name_pending_resolution(store, ident: dict) -> None:
    """A staged run that resolved a failure did so before its commit existed: name that commit now."""
    head = ident.get("head")
    if head and head[1]:
        sha, parent, subject = head
        store.fill_pending_resolutions(ident["project"], parent, sha, subject)


def _groups(verdict: Verdict) -> "OrderedDict[str, list]":
    groups: OrderedDict[str, list] = OrderedDict()
    for f in sorted(verdict.findings, key=lambda f: (-f.severity.rank, f.rule)):
        if f.severity.rank >= verdict.fail_level.rank or len(groups) < MAX_GROUPS:
            groups.setdefault(f.rule, []).append(f)
    return OrderedDict(list(groups.items())[:MAX_GROUPS])


def recall(verdict: Verdict, store, project: str, config, root: str | None = None) -> None:
    from sentinel.memory.signature import signature, signature_id

    search = _searcher(verdict, root)
    for rule, findings in _groups(verdict).items():
        sig_ids = list(dict.fromkeys(signature_id(signature(f.rule, f.message, f.code)) for f in findings))
        patterns = [RecurringPattern(signature=p.signature, rule=p.rule, urgency=p.urgency, count=p.count,
                                     changes=p.changes, last_resolution=p.last_resolution)
                    for p in store.patterns(project, sig_ids=sig_ids, limit=3) if p.count >= 2]
        similar = search(rule, findings, config) if search else []
        if similar or patterns:
            verdict.recall.append(RecallGroup(rule=rule, title=findings[0].message[:160], finding_count=len(findings),
                                              similar=similar, patterns=patterns))


def _searcher(verdict: Verdict, root: str | None = None):
    try:
        from sentinel.memory import recall_search
    except ImportError as exc:
        verdict.recall_note = f"similar past fixes unavailable: {exc}"
        return None

    def run(rule, findings, config):
        results, note = recall_search.similar_fixes(rule, findings, config, root=root)
        if note:
            verdict.recall_note = note
        return [SimilarFix(card_id=r.id, score=round(r.score, 3), summary=r.problem_summary,
                           fix_strategy=r.fix_line) for r in results]

    return run
