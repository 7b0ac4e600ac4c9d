"""The store phase of a gate run: record the run, send what waits in the outbox, read the patterns recall shows.

It runs on a worker thread while the hook searches the cards (sentinel.memory.hypotheses.gate_hook.after_run),
with a deadline: the verdict never waits for the store more than ~1 s. What the deadline or a store that cannot
be used would have dropped goes to the outbox instead (sentinel.memory.store.outbox) and is sent, before the
run's own record, by the next run that reaches the store, or by `sentinel memory sync`:

- the run is built (its change's identity, one git process) first and handed to the caller, so a worker stuck
  on the network still leaves the caller something to queue;
- the caller queues it when the worker has not recorded it by the deadline; the worker, if it records it after
  all, drops the entry again (under one lock, so one of the two always holds the run);
- queued runs are sent oldest first, with their own time, within the same deadline.
"""

from __future__ import annotations

import threading
import time

from sentinel.errors import SentinelError

RETENTION_EVERY = 50  # runs between retention sweeps
RECORD_RESERVE = 0.3  # seconds of the deadline kept for the run's own record when queued runs are sent first
FINISH_GRACE = 0.5  # seconds the verdict may still wait for the store phase once the gate's own work is done


class StorePhase:
    """Start with the run's pieces; `finish(seconds, what)` gives (patterns by sig id or None, notes, settled)."""

    def __init__(self, change, verdict, config, git_dir, root, project, sig_ids, seconds: float, identify,
                 read=None):
        """`identify()`: the change's identity (gate_hook.change_identity: a git process); `read(store, ident)`:
        what recall shows from the store (patterns by sig id), read once the run is recorded, on the same
        connection (sentinel.memory.hypotheses.gate_hook.after_run gives both)."""
        from sentinel.memory.store import Background

        self.identify = identify
        self.change, self.verdict, self.config = change, verdict, config
        self.git_dir, self.root, self.project, self.sig_ids = git_dir, root, project, sig_ids
        self.read = read or (lambda store, ident: {})
        self._lock = threading.Lock()
        self._run = None  # (RunRecord, name_pending) once built
        self._recorded = False
        self._queued: str | None = None
        self.queued = False  # this run went to the outbox
        self._deadline = time.monotonic() + seconds
        self._cards_in_store = bool(sig_ids) and _cards_live_in_the_store(config, git_dir)
        if self._cards_in_store:  # recall will run: it asks for the learned cards' version on this connection
            from sentinel.memory.learn.cache import expect_check

            expect_check(root)
        self._worker = Background(self._work)

    # --- the worker --------------------------------------------------------------------------------------
    def _work(self):
        store = None
        try:
            ident = self.identify()
            built = run_record(ident, self.verdict)
            with self._lock:
                self._run = built
            store, notes = open_store_for_hook(self.config, self.git_dir, self.root, self.project)
        finally:
            if self._cards_in_store:  # the recall waits for this answer: it gets one, whatever happened
                from sentinel.memory.learn.cache import answer_check

                answer_check(self.root, store, self.project)
        if store is None:
            return None, notes, False
        try:
            sent, behind = self._send_queued(store)
            if sent:
                notes.append(sent)
            if behind:  # runs keep their order: this one goes to the outbox after those still waiting
                return None, notes + [f"memory skipped: {behind} earlier run(s) still wait to be sent first"], False
            record(store, built, self.config)
            with self._lock:
                self._recorded = True
                queued, self._queued = self._queued, None
            if queued:  # the caller gave up on this worker and queued the run: it is in the store after all
                from sentinel.memory.store.outbox import discard

                discard(queued)
            return self.read(store, ident), notes, not store.has_pending_resolutions(self.project)
        except SentinelError as exc:
            return None, notes + [f"memory skipped: {exc}"], False
        finally:
            store.close()

    def _send_queued(self, store) -> tuple[str | None, int]:
        """(a note, how many queued runs of this store still wait): send them within the deadline, leaving the
        time the run's own record needs."""
        from sentinel.memory.store import outbox

        if not self.git_dir or not outbox.has_entries(self.git_dir):
            return None, 0
        result = outbox.flush(store, self.git_dir, store_key(self.config, self.git_dir),
                              deadline=self._deadline - RECORD_RESERVE, project=self.project)
        note = None
        if result.sent or result.known:
            note = f"memory: sent {result.sent + result.known} run(s) queued earlier"
        if result.damaged:
            note = (note + "; " if note else "memory: ") + (
                f"{result.damaged} unreadable outbox entr{'y' if result.damaged == 1 else 'ies'} set aside")
        return note, result.left

    # --- the caller ---------------------------------------------------------------------------------------
    def finish(self, seconds: float, what: str):
        """Wait for the worker until `seconds` after it started, or FINISH_GRACE after this call when the
        caller's own work took longer (on a loaded machine the worker shared the process's CPU with it)."""
        from sentinel.memory.store import StoreUnavailable

        bound = max(seconds, time.monotonic() - self._worker._started + FINISH_GRACE)
        try:
            patterns, notes, settled = self._worker.result(bound, what)
        except StoreUnavailable as exc:
            patterns, notes, settled = None, [f"memory skipped: {exc}"], False
        except Exception as exc:  # a defect in the memory layer must not take the gate's verdict with it
            patterns, notes, settled = None, [f"memory skipped: internal error {type(exc).__name__}: {exc}"], False
        if patterns is None:
            notes = self._queue(notes)
        return patterns, notes, settled

    def _queue(self, notes: list[str]) -> list[str]:
        """Keep the run in the outbox unless the worker recorded it; the notes, saying so."""
        from sentinel.memory.store import outbox

        if not self.git_dir:
            return notes
        with self._lock:
            if self._recorded:
                return _late(notes)
            built = self._run
        if built is None:  # the worker is still in git: build the run here
            try:
                built = run_record(self.identify(), self.verdict)
            except SentinelError:
                return notes
        reason = "; ".join(n.removeprefix("memory skipped: ") for n in notes if n.startswith("memory skipped: "))
        try:
            target = store_key(self.config, self.git_dir)
            with self._lock:
                if self._recorded:
                    return _late(notes)
                path = outbox.put(self.git_dir, target, built[0], built[1], reason,
                                  maybe_recorded=self._worker_alive())
                self._queued = path
                self.queued = path is not None
        except (OSError, SentinelError) as exc:
            return notes + [f"memory skipped: the run could not be queued either ({exc})"]
        if path is None:
            return notes + [f"memory skipped: the outbox is full ({outbox.MAX_PENDING} runs wait for the store; "
                            "run `sentinel memory sync`)"]
        waiting = len(outbox.entries(self.git_dir))
        return [n.replace("memory skipped: ", "memory queued: ", 1) for n in notes] + [
            f"memory: this run waits in the outbox ({waiting} queued) for the next run that reaches the store, "
            "or `sentinel memory sync`"]

    def _worker_alive(self) -> bool:
        return self._worker._thread.is_alive()


def _late(notes: list[str]) -> list[str]:
    """The notes of a run its worker recorded just after the verdict stopped waiting: nothing was skipped, only
    this verdict's recurring patterns."""
    return [n.replace("memory skipped: ", "memory recorded late (no recurring patterns in this verdict): ", 1)
            for n in notes]


def _cards_live_in_the_store(config, git_dir) -> bool:
    """Are the learned cards in the store this phase opens (not in a SQLite file of their own)?"""
    from sentinel.memory.store.location import learned_store_path

    try:
        return learned_store_path(config.memory, git_dir, separate_only=True) is None
    except SentinelError:
        return False


def store_key(config, git_dir) -> str:
    from sentinel.memory.store.outbox import store_key as key

    return key(config.memory, git_dir)


def open_store_for_hook(config, git_dir, root=None, project=None):
    """(store or None, notes): a store the hook may use, within the hook's wait."""
    from sentinel.memory.store import hook_wait
    from sentinel.memory.store.backends import open_store

    notes: list[str] = []
    try:
        store = open_store(config.memory, git_dir, wait=hook_wait(), quick=True)
    except SentinelError as exc:
        return None, [f"memory skipped: {exc}"]
    except OSError as exc:
        return None, [f"memory skipped: {type(exc).__name__}: {exc}"]
    recovered = getattr(store, "recovered", None)
    if recovered:
        notes.append(f"warning: the hypothesis store was corrupted; moved aside to {recovered} and started anew")
    return store, notes


def run_record(ident: dict, verdict):
    """(RunRecord, name_pending) of this run."""
    from sentinel.memory.hypotheses.signature import signature
    from sentinel.memory.store import FindingRecord, RunRecord

    fail_rank = verdict.fail_level.rank
    records = [FindingRecord(f.rule, signature(f.rule, f.message, f.code), f.path, f.message, f.line,
                             f.severity.value, f.severity.rank >= fail_rank, f.code)
               for f in verdict.findings]
    outcome = "passed" if verdict.passed else ("error" if verdict.errored else "failed")
    head = ident.get("head")
    pending = (head[1], head[0], head[2]) if head and head[1] else None
    run = RunRecord(project=ident["project"], change_ref=ident["change_ref"], outcome=outcome, findings=records,
                    commit_sha=ident["commit"], subject=ident["subject"], base_sha=ident["base"],
                    change_id=ident["change_id"], content_digest=ident["digest"], paths=ident["paths"],
                    created_at=time.time())
    return run, pending


def record(store, built, config) -> None:
    run, pending = built
    result = store.record_run(run, name_pending=pending)
    if result.created and result.run_id % RETENTION_EVERY == 0:
        store.apply_retention(config.memory.retention_days, config.memory.max_runs, project=run.project)

