"""Runs the store could not take in time, kept in the clone until it can: the outbox.

The hook gives the store ~1 s (a team database far away or overloaded, a SQLite lock held by another process);
past that the verdict is given without memory, but the run is not dropped: it is written here, redacted as
everything stored is (sentinel.redact, through the store's own redaction), and sent later — before its own run
by the next gate run that reaches the store, or by `sentinel memory sync` — with the time it happened, so
patterns, attempts and resolutions come out as if it had never waited. Sending is idempotent: the store writes
an attempt once per run key (sentinel.memory.store.RunRecord.key), so a run sent twice, or recorded by its own
worker after its deadline and also queued, is one attempt.

<git-dir>/sentinel/outbox/<created_ns>-<store>-<run_key>.json, one file per run (written whole, then renamed in),
each for one store (<store>: a digest of its kind and redacted location; a run queued for the team database is
not sent to a SQLite file configured later). No database import here.
"""

from __future__ import annotations

import json
import os
import time

from sentinel.record import Record

OUTBOX_DIR = "outbox"
FORMAT = "sentinel-outbox"
VERSION = 1
MAX_PENDING = 10_000  # a clone that never reaches its store again stops queueing here (and says so)


class FlushResult(Record):
    sent: int = 0  # runs the store took now
    known: int = 0  # runs it had already (recorded by their own worker after all, or sent by another process)
    left: int = 0  # still queued for this store (the deadline came, or the store failed)
    damaged: int = 0  # unreadable entries, moved aside as *.damaged
    error: str | None = None

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}


def outbox_dir(git_dir: str) -> str:
    return os.path.join(git_dir, "sentinel", OUTBOX_DIR)


def target_key(kind: str, where: str) -> str:
    """Which store an entry is for, without its credentials."""
    from sentinel.digest import sha256
    from sentinel.memory.store.dburl import redact_url

    shown = redact_url(where) if kind == "postgres" else os.path.abspath(where)
    return sha256(f"{kind}\0{shown}".encode("utf-8", "surrogateescape")).hexdigest()[:24]


def store_key(config_memory, git_dir: str | None) -> str:
    """The outbox's name for the configured store."""
    from sentinel.memory.store.location import store_target

    return target_key(*store_target(config_memory, git_dir))


def _redacted(run) -> dict:
    """The run as stored: subject, messages and paths through the store's redaction."""
    from sentinel.memory.store.sql import MAX_CODE, MAX_MESSAGE, _path, _redact

    data = {name: getattr(run, name) for name in run._fields if name != "findings"}
    data["subject"] = _redact(run.subject)
    data["paths"] = None if run.paths is None else [_path(p) for p in run.paths]
    data["findings"] = [{**{name: getattr(f, name) for name in f._fields}, "path": _path(f.path),
                         "message": _redact((f.message or "")[:MAX_MESSAGE]),
                         "code": _redact(" ".join((getattr(f, "code", "") or "").split())[:MAX_CODE])}
                        for f in run.findings]
    return data


def _run_of(data: dict):
    from sentinel.memory.store import FindingRecord, RunRecord

    fields = {k: v for k, v in data.items() if k in RunRecord._fields and k != "findings"}
    findings = [FindingRecord(**{k: v for k, v in f.items() if k in FindingRecord._fields})
                for f in data.get("findings") or []]
    return RunRecord(**fields, findings=findings)


def put(git_dir: str, target: str, run, name_pending=None, reason: str = "", maybe_recorded: bool = False
        ) -> str | None:
    """Queue one run for `target`; the entry's path (None when the outbox is full). The run's time is fixed now,
    and so is its key (a run without a content digest gets one). `maybe_recorded`: its worker was still at it
    (the deadline came), so the store may have it after all — sending it then must not count a re-run."""
    if run.created_at is None:
        run.created_at = time.time()
    if not run.content_digest:
        run.content_digest = os.urandom(16).hex()  # its key must stay the same until it is sent
    where = outbox_dir(git_dir)
    os.makedirs(where, exist_ok=True)
    name = f"{int(run.created_at * 1e9):020d}-{target}-{run.key()}.json"
    path = os.path.join(where, name)
    if not os.path.exists(path) and _count(where) >= MAX_PENDING:
        return None
    from sentinel.redact import redact

    entry = {"format": FORMAT, "version": VERSION, "target": target, "queued_at": time.time(),
             "reason": redact(reason or ""), "run": _redacted(run),
             "name_pending": list(name_pending) if name_pending else None, "maybe_recorded": maybe_recorded}
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(entry, fh, ensure_ascii=False, sort_keys=True)
    os.replace(tmp, path)
    return path


def discard(path: str | None) -> None:
    """Drop an entry whose run the store has taken."""
    if path:
        try:
            os.remove(path)  # sentinel: ignore[SEN103] - an outbox entry this module wrote, sent now
        except FileNotFoundError:
            pass


def _count(where: str) -> int:
    try:
        return sum(1 for n in os.listdir(where) if n.endswith(".json"))
    except FileNotFoundError:
        return 0


def has_entries(git_dir: str | None) -> bool:
    """Is any run queued? (A directory listing: the hook asks on every clean run.)"""
    if not git_dir:
        return False
    try:
        with os.scandir(outbox_dir(git_dir)) as it:
            return any(e.name.endswith(".json") for e in it)
    except OSError:
        return False


def entries(git_dir: str | None, target: str | None = None) -> list[str]:
    """Queued entries (of one store, when given), oldest first."""
    if not git_dir:
        return []
    where = outbox_dir(git_dir)
    try:
        names = sorted(n for n in os.listdir(where) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    if target is not None:
        names = [n for n in names if _target_of(n) == target]
    return [os.path.join(where, n) for n in names]


def _target_of(name: str) -> str | None:
    parts = name.split("-")
    return parts[1] if len(parts) == 3 else None


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        entry = json.load(fh)
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or int(entry.get("version", 0)) > VERSION:
        raise ValueError("not an outbox entry this Sentinel reads")
    return entry


def _set_aside(path: str) -> None:
    try:
        os.replace(path, path + ".damaged")
    except OSError:
        pass


def pending(git_dir: str | None) -> dict:
    """What `memory stats` shows: how many runs wait, for which stores, since when (from the names alone)."""
    by_target: dict[str, int] = {}
    oldest = None
    for path in entries(git_dir):
        name = os.path.basename(path)
        target = _target_of(name) or "?"
        by_target[target] = by_target.get(target, 0) + 1
        stamp = name.split("-", 1)[0]
        if stamp.isdigit() and (oldest is None or int(stamp) / 1e9 < oldest):
            oldest = int(stamp) / 1e9
    damaged = 0
    try:
        damaged = sum(1 for n in os.listdir(outbox_dir(git_dir)) if n.endswith(".damaged")) if git_dir else 0
    except FileNotFoundError:
        pass
    return {"runs": sum(by_target.values()), "by_store": by_target, "oldest": oldest, "damaged": damaged}


def flush(store, git_dir: str | None, target: str, deadline: float | None = None, project: str | None = None
          ) -> FlushResult:
    """Send the queued runs of `target` into `store`, oldest first, each in its own transaction and removed once
    written; stops at `deadline` (time.monotonic()) or at the first failure of the store, keeping the rest.
    `project`: the clone's identity now — a run queued before its first commit, under the unborn name whose
    records have moved since (sentinel.memory.store.project.adopt_unborn), is sent under it."""
    from sentinel.errors import SentinelError
    from sentinel.memory.store.project import adopted_unborn

    result = FlushResult()
    unborn = adopted_unborn(git_dir) if project else None
    paths = entries(git_dir, target)
    for i, path in enumerate(paths):
        if deadline is not None and time.monotonic() >= deadline:
            result.left += len(paths) - i
            break
        try:
            entry = _load(path)
        except FileNotFoundError:  # another process sent it
            continue
        except (OSError, ValueError):
            _set_aside(path)
            result.damaged += 1
            continue
        try:
            run = _run_of(entry["run"])
            if unborn and run.project == unborn:
                run.project = project
            pending_name = tuple(entry["name_pending"]) if entry.get("name_pending") else None
        except (KeyError, TypeError, ValueError):
            _set_aside(path)
            result.damaged += 1
            continue
        try:
            done = store.record_run(run, name_pending=pending_name, rerun=not entry.get("maybe_recorded", True))
        except SentinelError as exc:
            result.error = str(exc)
            result.left += len(paths) - i
            break
        discard(path)
        if done.created:
            result.sent += 1
        else:
            result.known += 1
    return result
