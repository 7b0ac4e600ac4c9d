"""After a gate run: record it in the hypothesis store and, when the gate failed, recall similar past fixes
(governed cards) and this project's recurring patterns.

Memory is an aid, never a reason for the gate to break or stall: the store is given ~1 s (`HOOK_WAIT`) for a
lock held by another process or a team database on the network; past that, or if the store cannot be used at
all, the verdict carries a note and the gate's own result stands — and the run waits in the clone's outbox for
the next run that reaches the store (sentinel.memory.hypotheses.recording). A corrupted SQLite store is moved
aside and recreated, with a note.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from sentinel import gitio
from sentinel.errors import SentinelError
from sentinel.memory.hypotheses import quiet
from sentinel.memory.store import HOOK_WAIT, WAIT_ENV, hook_wait  # noqa: F401 - the hook's bound, named here too
from sentinel.models import EarlierAttempt, RecallGroup, RecurringPattern, SimilarFix, Verdict

MAX_GROUPS = 3  # noise is what users hate most: a few groups, a few fixes each


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


def _ref(change) -> str:
    cs = change.changeset
    ref = os.environ.get("SENTINEL_CHANGE_REF")
    if not ref and cs.root:
        ref = _branch(cs.root)
    return ref or cs.source


def content_digest(changeset) -> str:
    """The attempt's content: every file's path, status and changed lines. The same staged content gives the
    same digest, so re-running the gate on it is one attempt."""
    if sum(len(f.added) + len(f.removed) for f in changeset.files) > _OPENSSL_FROM_LINES:
        import hashlib  # (its import costs a hook ~2.7 ms; on a whole tree OpenSSL's SHA-256 is ~5x faster)

        h = hashlib.sha256()
    else:
        from sentinel.digest import sha256

        h = sha256()
    for f in sorted(changeset.files, key=lambda f: f.path):
        h.update(f"\0F{f.path}\0{f.old_path or ''}\0{f.status.value}\0{int(f.is_binary)}".encode(
            "utf-8", "surrogateescape"))
        # A file's lines hashed as one piece, joined by C-level iterators: the digest of pieces fed in turn is the
        # digest of their concatenation, and per-line formatting and updates took a whole tree's digest ~0.2 s.
        numbers = sorted(f.added)
        h.update(_numbered("+", numbers, map(f.added.__getitem__, numbers)))
        h.update(_numbered("-", [n for n, _ in f.removed], [text for _, text in f.removed]))
    return h.hexdigest()


def _numbered(marker: str, numbers: list[int], texts) -> bytes:
    """b"".join of "\\0{marker}{n}\\0{text}" for each line, encoded as content_digest always encoded it. The pieces
    are interleaved by slice assignment into one list (C-level, a whole tree's 1.3M pieces in ~half the time a
    chain of zipped iterators took)."""
    if not numbers:
        return b""
    top = max(numbers)
    if top < _PREFIXES_UP_TO:
        cache = _PREFIXES[marker]
        if len(cache) <= top:
            cache.extend(f"\0{marker}{n}\0" for n in range(len(cache), top + 1))
        prefixes = map(cache.__getitem__, numbers)
    else:  # a line number far down a huge file: no table that large
        prefixes = (f"\0{marker}{n}\0" for n in numbers)
    pieces: list = [None] * (2 * len(numbers))
    pieces[0::2] = list(prefixes)
    pieces[1::2] = list(texts)
    return "".join(pieces).encode("utf-8", "surrogateescape")


_PREFIXES: dict[str, list[str]] = {"+": [], "-": []}  # "\0+{n}\0" by n, made as needed
_PREFIXES_UP_TO = 200_000
_OPENSSL_FROM_LINES = 50_000


def change_identity(change, project: str) -> dict:
    """What the store needs to know about this run's change.

    change_ref: branch or PR; change_id: the change itself — `$SENTINEL_CHANGE_REF` (CI: one PR is one change
    across pushes), else the branch on top of the commit the work started from (HEAD for staged work, the
    range's base for a range), so an abandoned attempt is never the same change as the next piece of work."""
    cs = change.changeset
    root = cs.root
    ref = _ref(change)
    ident = {"project": project, "change_ref": ref, "change_id": ref, "commit": None, "subject": None,
             "base": None, "head": None, "digest": content_digest(cs), "paths": [f.path for f in cs.files]}
    pinned = bool(os.environ.get("SENTINEL_CHANGE_REF"))
    if cs.head and cs.head != "INDEX":
        ident["commit"] = cs.head
        ident["subject"] = (cs.message or "").strip().split("\n", 1)[0] or None
        if not pinned:
            ident["change_id"] = f"{ref}@{(cs.base or 'root')[:12]}"
    elif root:
        ident["head"] = _head(root)
        ident["base"] = ident["head"][0] if ident["head"] else None
        if not pinned:
            ident["change_id"] = f"{ref}@{(ident['base'] or 'root')[:12]}"
    return ident


def _project(config, root: str | None, git_dir: str | None, remember: bool = True) -> str:
    from sentinel.memory.store.project import project_identity

    return project_identity(config.memory, root, git_dir, remember=remember)


def _quiet_path(config, git_dir: str | None) -> str | None:
    """The file the quiet note sits beside: the SQLite store, or for a team database a local name."""
    from sentinel.memory.store.location import store_target

    kind, where = store_target(config.memory, git_dir)
    if kind == "sqlite":
        return where
    if not git_dir:
        return None
    from sentinel.digest import sha256

    # Nothing is ever written at this path, so the note is trusted until this clone records a run again.
    return os.path.join(git_dir, "sentinel", "team-" + sha256(where.encode()).hexdigest()[:16])


def after_run(change, config, verdict: Verdict, rules=None) -> Verdict:
    """Record the run; on a failure, recall. `rules`: a function returning the rule declarations by code
    (sentinel.checks.rule_index; memory does not import the checks), read only when recall runs."""
    root = change.changeset.root
    try:
        git_dir = gitio.git_dir(root) if root else None
    except SentinelError:
        git_dir = None
    clean = not verdict.findings and not verdict.errored
    try:
        note_path = _quiet_path(config, git_dir)
    except SentinelError as exc:
        verdict.recall_note = f"memory skipped: {exc}"
        return verdict
    quiet_key = "\0".join((_ref(change), root or ""))
    if clean and note_path and quiet.is_quiet(note_path, quiet_key) and not _queued_runs(git_dir):
        return verdict  # nothing this run could add: see sentinel.memory.hypotheses.quiet
    project = _project(config, root, git_dir)
    groups = _groups(verdict) if not verdict.passed and verdict.findings else OrderedDict()
    sig_ids = _group_sig_ids(groups)
    earlier: list = []  # this change's earlier failed attempts, read by the store phase (see _earlier)

    def read_memory(store, ident):
        """What recall shows from the store (on the store phase's connection, after the run is recorded): the
        recurring patterns by sig id, and this change's earlier failed attempts."""
        wanted = sorted({s for ids in sig_ids.values() for s in ids})
        found = store.patterns(project, sig_ids=wanted, limit=3 * len(wanted), min_changes=2,
                               change_ref=ident["change_ref"]) if wanted else []
        earlier[:] = _earlier(store, project, ident["change_id"], ident["digest"], groups)
        return {p.sig_id: p for p in found}

    from sentinel.memory.hypotheses.recording import StorePhase

    seconds, what = _deadline(config, git_dir)
    # The store phase is mostly waiting (a git process, SQLite's commit, the checkpoint at close: ~25 ms of a
    # hook run, ~3 ms of CPU): it runs while this thread searches the cards, which need nothing from it. A run
    # it cannot record in time waits in the outbox (sentinel.memory.hypotheses.recording).
    _prepare_store(config, git_dir)
    stored = StorePhase(change, verdict, config, git_dir, root, project, sig_ids, seconds,
                        identify=lambda: change_identity(change, project), read=read_memory)
    similar = None
    try:
        if groups:
            similar = _similar_fixes(verdict, groups, config, root, rules, change)
    finally:  # the run is recorded (or queued) before anything leaves this function
        patterns, notes, settled = stored.finish(seconds, what)
    if groups:
        _add_groups(verdict, groups, sig_ids, patterns, similar, earlier if patterns is not None else [])
    if notes:
        verdict.recall_note = "; ".join(dict.fromkeys(n for n in notes + [verdict.recall_note] if n))
    if note_path and (patterns is not None or stored.queued):
        # a queued run is not in the store yet: the next clean run must not take this branch as settled
        quiet.note_written(note_path, quiet_key, clean and settled and patterns is not None)
    return verdict


def _queued_runs(git_dir) -> bool:
    """Runs wait in the outbox: a run that reaches the store sends them, so no run is quiet meanwhile."""
    from sentinel.memory.store.outbox import has_entries

    return has_entries(git_dir)


def _prepare_store(config, git_dir) -> None:
    """Import what the store phase needs on this thread, before it starts: two threads importing at once
    wait on each other's module locks, and the worker then only waits on git and SQLite."""
    import sentinel.digest  # noqa: F401 - content_digest
    from sentinel.memory.store.location import store_target

    try:
        if store_target(config.memory, git_dir)[0] == "sqlite":
            import sentinel.memory.store.sqlite  # noqa: F401
        else:  # the driver's import is most of the store phase's CPU (~0.3 s): a worker that has to share the
            # process with the card search while importing it missed its deadline on a loaded machine
            from sentinel.memory.store.postgres import _driver

            _driver()
    except (SentinelError, ImportError):
        return  # the store phase reports it, as memory skipped


def _deadline(config, git_dir) -> tuple[float, str]:
    """(the most the store phase may take, what to call the store): a lock or a connection gets the hook's
    wait, the work a little more."""
    from sentinel.memory.store.location import store_target

    kind, where = store_target(config.memory, git_dir)
    if kind == "postgres":
        from sentinel.memory.store.dburl import redact_url

        return hook_wait() + 0.5, f"the team database ({redact_url(where)})"
    return hook_wait() + 2.0, "the hypothesis store"


def _open(config, git_dir, root, project):
    """(store or None, notes): a store the hook may use, within HOOK_WAIT."""
    from sentinel.memory.hypotheses.recording import open_store_for_hook

    return open_store_for_hook(config, git_dir, root, project)


def _groups(verdict: Verdict) -> "OrderedDict[str, list]":
    groups: OrderedDict[str, list] = OrderedDict()
    for f in sorted(verdict.findings, key=lambda f: (-f.severity.rank, f.rule)):
        if f.severity.rank >= verdict.fail_level.rank or len(groups) < MAX_GROUPS:
            groups.setdefault(f.rule, []).append(f)
    return OrderedDict(list(groups.items())[:MAX_GROUPS])


def _group_sig_ids(groups) -> dict[str, list[str]]:
    from sentinel.memory.hypotheses.signature import signature, signature_id

    return {rule: list(dict.fromkeys(signature_id(signature(f.rule, f.message, f.code)) for f in findings))
            for rule, findings in groups.items()}


def recall(verdict: Verdict, groups, sig_ids: dict[str, list[str]], patterns: dict | None, config,
           root: str | None = None, rules=None, earlier=(), files_from=None) -> None:
    """Add recall groups: similar past fixes, and the recurring patterns with the same signatures
    (`patterns`: by sig id, from the store; None when memory was skipped), and the earlier failed attempts at
    this change (`earlier`: `Attempt`s, oldest first). `files_from`: the Change whose files place the findings."""
    _add_groups(verdict, groups, sig_ids, patterns, _similar_fixes(verdict, groups, config, root, rules, files_from),
                earlier)


EARLIER_ATTEMPTS = 5  # per group: the most recent ones, shown oldest first


def _earlier(store, project: str, change_id: str, digest: str | None, groups) -> list:
    """This change's failed attempts since it last passed, but the one being shown (its content `digest`), when
    the run failed: the approaches already tried (see `_earlier_for`)."""
    if not groups:
        return []
    return store.earlier_attempts(project, change_id, but=digest)


def _earlier_for(rule: str, attempts) -> list[EarlierAttempt]:
    """The earlier attempts that failed on `rule`, one entry each: the first blocking finding of the rule in
    it (its line: what was tried), and how many there were."""
    out: list[EarlierAttempt] = []
    for a in attempts:
        hits = [f for f in a.findings if f.rule == rule and f.blocking]
        if hits:
            f = hits[0]
            out.append(EarlierAttempt(at=a.created_at, path=f.path, line=f.line, code=f.code, message=f.message,
                                      findings=len(hits), commit=a.commit_sha, subject=a.subject))
    return out[-EARLIER_ATTEMPTS:]


def _similar_fixes(verdict: Verdict, groups, config, root: str | None = None,
                   rules=None, change=None) -> dict[str, list[SimilarFix]]:
    """The similar past fixes of each group (rule), searched in group order, each placed where its findings
    are (`change`: reads the files' post-change text for the enclosing definitions)."""
    search = _searcher(verdict, root)
    declared = rules() if rules is not None and groups else {}
    placed = _sites(groups, change)
    return {rule: search(rule, findings, config, declared.get(rule), placed.get(rule, [])) if search else []
            for rule, findings in groups.items()}


SITE_FINDINGS = 3  # per group: the findings whose places recall ranks with


def _sites(groups, change) -> dict[str, list]:
    """{rule: [FailureSite]} for the first findings of each group in a file of the change (a message or the
    change as a whole has no place). A file that cannot be read still gives its path."""
    try:
        from sentinel.memory.retrieval.site import sites
    except ImportError:
        return {}
    files = {f.path: f for f in change.changeset.files} if change is not None else {}
    chosen = {rule: [f for f in findings if f.path in files][:SITE_FINDINGS] for rule, findings in groups.items()}
    wanted = sorted({f.path for fs in chosen.values() for f in fs})
    texts: dict[str, bytes | None] = {}
    if wanted:
        try:
            texts = change.read(wanted)
        except Exception:  # a place without its text is still a place: the path and line are known
            texts = {}
    out: dict[str, list] = {}
    for rule, findings in chosen.items():
        by_path: dict[str, list] = {}
        for f in findings:
            by_path.setdefault(f.path, []).append(f)
        for path, fs in by_path.items():
            fc = files[path]
            data = texts.get(path)
            text = data.decode("utf-8", "replace") if data is not None else None
            header = next((h.section_header for h in fc.hunks
                           if fs[0].line and h.target_start <= fs[0].line < h.target_start + h.target_length), "")
            out.setdefault(rule, []).extend(sites(fs, text, fc.language, header))
    return out


def _add_groups(verdict: Verdict, groups, sig_ids: dict[str, list[str]], patterns: dict | None,
                similar: dict[str, list[SimilarFix]], earlier=()) -> None:
    for rule, findings in groups.items():
        found = [patterns[s] for s in sig_ids[rule] if patterns and s in patterns][:3]
        recurring = [RecurringPattern(signature=p.signature, rule=p.rule, urgency=p.urgency, count=p.attempts,
                                      changes=p.changes, last_resolution=p.last_resolution) for p in found]
        tried = _earlier_for(rule, earlier)
        if similar[rule] or recurring or tried:
            verdict.recall.append(RecallGroup(rule=rule, title=findings[0].message[:160], finding_count=len(findings),
                                              similar=similar[rule], patterns=recurring, earlier_attempts=tried))


def _searcher(verdict: Verdict, root: str | None = None):
    try:
        from sentinel.memory.retrieval import recall as recall_search
    except ImportError as exc:
        verdict.recall_note = f"similar past fixes unavailable: {exc}"
        return None

    def run(rule, findings, config, about=None, sites=()):
        try:
            results, note = recall_search.similar_fixes(rule, findings, config, root=root, about=about, sites=sites)
        except Exception as exc:  # a damaged index or a defect in search must not take the gate's verdict with it
            verdict.recall_note = f"similar past fixes unavailable: {type(exc).__name__}: {exc}"
            return []
        if note:
            verdict.recall_note = note
        return [similar_fix(r) for r in results]

    return run


def similar_fix(hit) -> SimilarFix:
    """The model every surface shows (terminal, JSON, markdown, MCP, memory brief) of a recall hit."""
    prov = hit.provenance or {}
    date = (prov.get("date") or "")[:10] or None
    return SimilarFix(card_id=hit.id, score=round(hit.score, 3), summary=hit.problem_summary,
                      fix_strategy=hit.fix_line, source=hit.source, why=hit.why, commit=prov.get("commit"),
                      date=date, url=prov.get("url"), repository=prov.get("repository"))


def brief_for_change(change, config, *, with_cards: bool = True, rules=None):
    """The brief (`sentinel.memory.hypotheses.brief.Brief`) for this change, or None when memory is unavailable.
    For reporters that show it (the PR comment shows it when a pattern recurs)."""
    from sentinel.memory.hypotheses.brief import build_brief

    root = change.changeset.root
    try:
        git_dir = gitio.git_dir(root) if root else None
    except SentinelError:
        git_dir = None
    project = _project(config, root, git_dir)
    store, _ = _open(config, git_dir, root, project)
    if store is None:
        return None
    try:
        ident = change_identity(change, project)
        return build_brief(store, project, ident["change_id"], ident["change_ref"], config=config, root=root,
                           with_cards=with_cards, rules=rules)
    except SentinelError:
        return None
    finally:
        store.close()


def current_change(root: str | None, config, change_ref: str | None = None, *, remember: bool = True
                   ) -> tuple[str, str, str]:
    """(project, change_id, change_ref) of the work in progress, as the commit hook records it — for readers
    such as `memory brief` and the MCP server. `change_ref`: another change (a PR "pr-12", a branch other than
    the current one); the current branch name means the work in progress on it. `remember=False`: write
    nothing, not even the git dir's note of the root commit (the MCP server)."""
    try:
        git_dir = gitio.git_dir(root) if root else None
    except SentinelError:
        git_dir = None
    project = _project(config, root, git_dir, remember)
    pinned = os.environ.get("SENTINEL_CHANGE_REF")
    branch = _branch(root) if root else None
    if change_ref and change_ref != branch:
        return project, change_ref, change_ref
    if pinned or not root:
        ref = pinned or change_ref or "staged"
        return project, ref, ref
    head = _head(root)
    return project, f"{branch}@{(head[0] if head else 'root')[:12]}", branch


def recall_from(verdict: Verdict, store, project: str, config, root: str | None = None, rules=None,
                change: tuple[str, str, str | None] | None = None, files_from=None) -> None:
    """Recall for a verdict without recording it (readers such as the MCP server): `store` may be None.
    `change`: (change_id, change_ref, content digest) of the change checked, for its earlier attempts;
    `files_from`: the Change whose files place the findings."""
    if verdict.passed or not verdict.findings:
        return
    groups = _groups(verdict)
    sig_ids = _group_sig_ids(groups)
    patterns = None
    earlier: list = []
    if store is not None:
        wanted = sorted({s for ids in sig_ids.values() for s in ids})
        try:
            found = store.patterns(project, sig_ids=wanted, limit=3 * len(wanted), min_changes=2,
                                   change_ref=change[1] if change else None)
            patterns = {p.sig_id: p for p in found}
            if change:
                earlier = _earlier(store, project, change[0], change[2], groups)
        except SentinelError as exc:
            verdict.recall_note = f"memory skipped: {exc}"
    recall(verdict, groups, sig_ids, patterns, config, root, rules, earlier, files_from)
