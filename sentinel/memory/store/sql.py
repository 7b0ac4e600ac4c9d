"""The store's behaviour, written once for both backends (SQLite and PostgreSQL run the same statements).

A backend provides a connection, `_tx()` (a write transaction that takes the lock up front), `_all`/`_one`/
`_exec` with `?` placeholders, and `_insert` returning the new row's id. Everything else — attempts, changes,
resolutions, patterns, examples, retention, export and import — is here, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod

from sentinel.memory.hypotheses.signature import signature_id
from sentinel.memory.store import (PATHS_KEPT, SCHEMA_VERSION, Attempt, FindingRecord, Occurrence, Pattern,
                                   RecordResult, RunRecord, StoreError, urgency)
from sentinel.memory.store.schema import rekeyed_signature, steps

MAX_MESSAGE = 500
MAX_CODE = 300
EXAMPLES = 3
EXPORT_FORMAT = "sentinel-memory-export"
# 2: findings carry their line (code), runs their files (paths); signatures are rule|mechanism
# 3: learned cards' learning state (what was seen, the learning runs)
EXPORT_VERSION = 3


def _redact(text: str | None) -> str | None:
    """The one redaction path for anything the store keeps (messages, subjects)."""
    if not text:
        return text
    from sentinel.redact import redact

    return redact(text)


def _path(path: str | None) -> str | None:
    """A path as stored: shown as git quotes it when its bytes are not UTF-8 (the database takes valid
    UTF-8 only; a name that is not would crash the write)."""
    if not path:
        return path
    from sentinel.redact import display_path

    return _redact(display_path(path))


def _paths_json(paths: list[str] | None) -> str | None:
    """The files of an attempt as stored: {"kept": [up to PATHS_KEPT], "total": n}; None when unknown."""
    if paths is None:
        return None
    return json.dumps({"kept": [_path(p) for p in paths[:PATHS_KEPT]], "total": len(paths)}, ensure_ascii=False)


def _paths_read(text: str | None) -> tuple[list[str], int]:
    if not text:
        return [], 0
    try:
        data = json.loads(text)
        return [str(p) for p in data.get("kept") or []], int(data.get("total") or 0)
    except (ValueError, TypeError, AttributeError):
        return [], 0


def _rekeyed_finding(f: dict, rekey: dict[str, str]) -> dict:
    """An exported finding of version 1 with its signature of today (`rekey`: old id -> new id, filled)."""
    sig = rekeyed_signature(f.get("rule") or "", f.get("message") or "", f.get("signature") or "")
    new = signature_id(sig)
    if f.get("sig_id"):
        rekey.setdefault(f["sig_id"], new)
    return {**f, "signature": sig, "sig_id": new}


class SQLStore(ABC):
    dialect = "sql"
    migrated_from: int | None = None  # the schema version found when this store was opened, if migrated
    quick = False  # opened by the commit hook: a migration too long for it is refused (`sentinel memory migrate`)

    # --- provided by a backend --------------------------------------------------------------------
    @abstractmethod
    def _tx(self):
        """A write transaction (a context manager) that takes the write lock up front."""
        ...

    @abstractmethod
    def _all(self, sql: str, args=()) -> list[tuple]:
        ...

    @abstractmethod
    def _exec(self, sql: str, args=()) -> int:
        """Run a statement; the number of rows it changed."""
        ...

    @abstractmethod
    def _insert(self, sql: str, args=()) -> int:
        """Run an INSERT; the new row's id."""
        ...

    @abstractmethod
    def _insert_run(self, sql: str, args) -> int | None:
        """INSERT a run unless its run_key exists; the new id, or None when it existed."""
        ...

    @abstractmethod
    def close(self) -> None:
        ...

    def _one(self, sql: str, args=()) -> tuple | None:
        rows = self._all(sql, args)
        return rows[0] if rows else None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- schema ---------------------------------------------------------------------------------------
    @abstractmethod
    def _version_in_tx(self) -> int:
        """The schema version, read inside the migration's transaction (after taking any migration lock)."""

    @abstractmethod
    def schema_version(self) -> int: ...

    def migrate(self) -> list[int]:
        """Bring the schema to this Sentinel's version; the versions applied (empty: already current)."""
        done: list[int] = []
        with self._tx():
            version = self._version_in_tx()
            if version > SCHEMA_VERSION:
                raise StoreError(f"the hypothesis store {self.describe()} has schema {version}, newer than this "
                                 f"sentinel supports ({SCHEMA_VERSION}); upgrade sentinel")
            if version < SCHEMA_VERSION:
                self.migrated_from = version
            for target, stmts in steps(self.dialect, version, SCHEMA_VERSION):
                for stmt in stmts:
                    stmt(self) if callable(stmt) else self._exec(stmt)  # a function: a step SQL cannot do
                self._set_meta("schema_version", str(target))
                done.append(target)
        return done

    def _set_meta(self, key: str, value: str) -> None:
        self._exec("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (key, value))

    def describe(self) -> str:
        return self.dialect

    # --- writing -----------------------------------------------------------------------------------------
    def record_run(self, run: RunRecord, name_pending: tuple[str, str, str | None] | None = None,
                   rerun: bool = True) -> RecordResult:
        """Record one attempt (idempotent: the same content of the same change is written once) and the
        resolutions it proves. `name_pending` = (parent, commit, subject): name the resolutions a staged run
        recorded on top of `parent` before its commit existed. `rerun` False: a run sent again (from the
        outbox), not run again — an attempt already recorded is left as it is. One write transaction."""
        now = run.created_at or time.time()
        key = run.key()
        change = run.change
        with self._tx():
            if name_pending:
                parent, sha, subject = name_pending
                self._fill_pending(run.project, parent, sha, subject, run.change_ref)
            run_id = self._insert_run(
                "INSERT INTO runs(run_key, project, change_id, change_ref, content_digest, commit_sha, subject, "
                "base_sha, outcome, created_at, last_seen, reruns, paths) VALUES (?,?,?,?,?,?,?,?,?,?,?,0,?)",
                (key, run.project, change, run.change_ref, run.content_digest or key, run.commit_sha,
                 _redact(run.subject), run.base_sha, run.outcome, now, now, _paths_json(run.paths)))
            if run_id is None:  # this attempt is recorded already (a re-run, or another runner sent it)
                existing = self._one("SELECT id FROM runs WHERE run_key=?", (key,))
                if rerun:  # (a run sent late from the outbox may be older than the last one seen)
                    self._exec("UPDATE runs SET last_seen = CASE WHEN last_seen > ? THEN last_seen ELSE ? END, "
                               "reruns = reruns + 1 WHERE id=?", (now, now, existing[0]))
                return RecordResult(int(existing[0]), False)
            self._insert_findings(run_id, run.findings)
            resolved = self._resolve(run, key, now) if run.outcome == "passed" else []
        return RecordResult(run_id, True, resolved)

    def _insert_findings(self, run_id: int, findings: list[FindingRecord]) -> None:
        for f in findings:
            self._exec(
                "INSERT INTO findings(run_id, sig_id, signature, rule, path, message, line, severity, blocking, code) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (run_id, signature_id(f.signature), f.signature, f.rule, _path(f.path),
                 _redact((f.message or "")[:MAX_MESSAGE]), f.line, f.severity, 1 if f.blocking else 0,
                 _redact(" ".join((f.code or "").split())[:MAX_CODE])))

    def _resolve(self, run: RunRecord, key: str, now: float) -> list[str]:
        """Blocking findings of this change's failed attempts since its last passing attempt, gone now."""
        last_pass = self._one(
            "SELECT MAX(created_at) FROM runs WHERE project=? AND change_id=? AND outcome='passed' AND run_key<>?",
            (run.project, run.change, key))
        since = last_pass[0] if last_pass and last_pass[0] is not None else -1.0
        rows = self._all(
            "SELECT DISTINCT f.sig_id, f.path FROM findings f JOIN runs r ON r.id = f.run_id "
            "WHERE r.project=? AND r.change_id=? AND r.outcome='failed' AND f.blocking=1 AND r.created_at>? "
            "AND r.created_at<=? AND r.content_digest<>?",
            (run.project, run.change, since, now, run.content_digest or key))
        still = {signature_id(f.signature) for f in run.findings}
        paths = {_path(p) for p in run.paths} if run.paths is not None else None
        gone = sorted({sig for sig, path in rows
                       if sig not in still and (paths is None or not path or path in paths)})
        for sig in gone:
            self._exec(
                "INSERT INTO resolutions(project, sig_id, change_id, change_ref, run_key, commit_sha, subject, "
                "base_sha, resolved_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (run.project, sig, run.change, run.change_ref, key, run.commit_sha, _redact(run.subject),
                 run.base_sha, now))
        return gone

    def _fill_pending(self, project: str, base_sha: str, commit_sha: str, subject: str | None,
                      change_ref: str) -> int:
        """Name what staged runs on top of `base_sha` left unnamed with the commit made there — only on the same
        branch (`change_ref`): another branch committing on top of the same HEAD did not make that change. The
        change's attempts are named too (their examples then say which commit the work became)."""
        args = (commit_sha, _redact(subject), project, base_sha, change_ref)
        self._exec("UPDATE runs SET commit_sha=?, subject=? WHERE project=? AND commit_sha IS NULL AND base_sha=? "
                   "AND change_ref=?", args)
        return self._exec("UPDATE resolutions SET commit_sha=?, subject=? WHERE project=? AND commit_sha IS NULL "
                          "AND base_sha=? AND change_ref=?", args)

    def fill_pending_resolutions(self, project: str, base_sha: str, commit_sha: str, subject: str | None,
                                 change_ref: str) -> int:
        """A pre-commit run resolves a failure before its commit exists; name it once it does (on the branch
        `change_ref` the resolution was made on)."""
        with self._tx():
            return self._fill_pending(project, base_sha, commit_sha, subject, change_ref)

    def has_pending_resolutions(self, project: str) -> bool:
        """Resolutions recorded before their commit existed, not yet named."""
        return self._one("SELECT 1 FROM resolutions WHERE project=? AND commit_sha IS NULL LIMIT 1",
                         (project,)) is not None

    def adopt_project(self, old: str, new: str) -> int:
        """Re-key the runs of an earlier project name (the directory name of Sentinel before 0.3) to `new`."""
        if old == new:
            return 0
        with self._tx():
            n = self._exec("UPDATE runs SET project=? WHERE project=?", (new, old))
            self._exec("UPDATE resolutions SET project=? WHERE project=? AND NOT EXISTS (SELECT 1 FROM resolutions r "
                       "WHERE r.project=? AND r.sig_id=resolutions.sig_id AND r.run_key=resolutions.run_key)",
                       (new, old, new))
            self._adopt_cards(old, new)
        return n

    def _adopt_cards(self, old: str, new: str) -> None:
        """Move the learned cards and learning state of project `old` to `new` (what `new` has already wins)."""
        if self._one("SELECT 1 FROM cards WHERE project=? LIMIT 1", (old,)):
            seq = self._bump_cards(new)
            self._exec("UPDATE cards SET project=?, seq=? WHERE project=? AND card_id NOT IN "
                       "(SELECT card_id FROM cards WHERE project=?)", (new, seq, old, new))
            self._exec("DELETE FROM cards WHERE project=?", (old,))
            self._bump_cards(old)
        self._exec("UPDATE learn_seen SET project=? WHERE project=? AND NOT EXISTS (SELECT 1 FROM learn_seen s "
                   "WHERE s.project=? AND s.source=learn_seen.source AND s.key=learn_seen.key)", (new, old, new))
        self._exec("DELETE FROM learn_seen WHERE project=?", (old,))
        self._exec("UPDATE learn_runs SET project=? WHERE project=?", (new, old))
        self._cards_changed()

    def forget(self, project: str | None = None, older_than_days: float | None = None,
               sig_id: str | None = None) -> int:
        with self._tx():
            if sig_id:
                scope = " AND run_id IN (SELECT id FROM runs WHERE project=?)" if project else ""
                n = self._exec("DELETE FROM findings WHERE sig_id=?" + scope,
                               (sig_id, project) if project else (sig_id,))
                self._exec("DELETE FROM resolutions WHERE sig_id=?" + (" AND project=?" if project else ""),
                           (sig_id, project) if project else (sig_id,))
                return n
            clauses, args = [], []
            if project:
                clauses.append("project=?")
                args.append(project)
            if older_than_days is not None:
                clauses.append("created_at < ?")
                args.append(time.time() - older_than_days * 86400)
            where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
            # No WHERE is `memory forget --all` without a project: deleting every run is the command's purpose.
            n = self._exec(f"DELETE FROM runs{where}", args)  # sentinel: ignore[SEN105]
            rwhere = where.replace("created_at", "resolved_at")
            self._exec(f"DELETE FROM resolutions{rwhere}", args)  # sentinel: ignore[SEN105]
        return n

    def apply_retention(self, retention_days: float, max_runs: int, project: str | None = None) -> int:
        """Drop runs older than `retention_days` and all but the newest `max_runs` (of `project`, when given:
        a team database holds many projects, each with its own budget)."""
        removed = self.forget(project=project, older_than_days=retention_days)
        newest = "SELECT id FROM runs{} ORDER BY created_at DESC, id DESC LIMIT ?"
        if project:
            sql = "DELETE FROM runs WHERE project=? AND id NOT IN (" + newest.format(" WHERE project=?") + ")"
            args: tuple = (project, project, max_runs)
        else:
            sql, args = "DELETE FROM runs WHERE id NOT IN (" + newest.format("") + ")", (max_runs,)
        with self._tx():
            extra = self._exec(sql, args)
        return removed + extra

    # --- reading ----------------------------------------------------------------------------------------
    def patterns(self, project: str, sig_ids: list[str] | None = None, limit: int = 50,
                 min_changes: int = 1, change_ref: str | None = None) -> list[Pattern]:
        """Failure patterns of the project, the most widespread (distinct changes) first. `change_ref`: the
        branch or PR asking; a resolution made on it is preferred as the pattern's last resolution."""
        sql = ("SELECT f.sig_id, MIN(f.signature), MIN(f.rule), COUNT(DISTINCT r.change_id), "
               "COUNT(DISTINCT r.id), MAX(r.last_seen) FROM findings f JOIN runs r ON r.id = f.run_id "
               "WHERE r.project=?")
        args: list = [project]
        if sig_ids is not None:
            if not sig_ids:
                return []
            sql += f" AND f.sig_id IN ({','.join('?' * len(sig_ids))})"
            args.extend(sig_ids)
        sql += (" GROUP BY f.sig_id HAVING COUNT(DISTINCT r.change_id) >= ? "
                "ORDER BY COUNT(DISTINCT r.change_id) DESC, COUNT(DISTINCT r.id) DESC, MAX(r.last_seen) DESC, "
                "f.sig_id LIMIT ?")
        args += [min_changes, limit]
        out = []
        for sig_id, sig, rule, changes, attempts, last in self._all(sql, args):
            out.append(Pattern(sig_id, sig, rule, int(changes), int(attempts), urgency(int(changes)), float(last),
                               self._last_resolution(project, sig_id, change_ref), self._examples(project, sig_id)))
        return out

    def _last_resolution(self, project: str, sig_id: str, change_ref: str | None = None) -> str | None:
        """`<commit> on <branch>: <subject>` of the newest resolution (the asking branch's own first): which
        branch made the fix is part of it, so a fix on another branch never reads as this one's."""
        res = self._one("SELECT commit_sha, subject, change_ref FROM resolutions WHERE project=? AND sig_id=? "
                        "ORDER BY CASE WHEN change_ref=? THEN 0 ELSE 1 END, resolved_at DESC, id DESC LIMIT 1",
                        (project, sig_id, change_ref or ""))
        if not res:
            return None
        commit, subject, ref = res
        return f"{commit[:10] + ' on ' + ref if commit else 'a commit on ' + ref}: {subject or '(no subject)'}"

    def _examples(self, project: str, sig_id: str) -> list[Occurrence]:
        rows = self._all(
            "SELECT r.change_id, r.change_ref, f.path, f.line, r.commit_sha, r.last_seen, f.code, r.subject, r.paths "
            "FROM findings f JOIN runs r ON r.id = f.run_id WHERE r.project=? AND f.sig_id=? "
            "ORDER BY r.last_seen DESC, f.id DESC LIMIT 200", (project, sig_id))
        seen: set[str] = set()
        out: list[Occurrence] = []
        for change_id, ref, path, line, commit, at, code, subject, paths in rows:
            if change_id in seen:
                continue
            seen.add(change_id)
            kept, total = _paths_read(paths)
            out.append(Occurrence(ref, path or "", line, commit, float(at), change_id, code or "", subject, kept,
                                  total))
            if len(out) == EXAMPLES:
                break
        return out

    def attempts(self, project: str, change_id: str, limit: int = 20) -> list[Attempt]:
        """The attempts at one change, oldest first, each with its findings."""
        return [a for a, _ in self._attempts(project, change_id, limit)]

    def earlier_attempts(self, project: str, change_id: str, but: str | None = None,
                         limit: int = 20) -> list[Attempt]:
        """The failed attempts at one change since it last passed, oldest first, without the attempt whose
        content digest is `but` (the run being shown): what was tried and still failed."""
        out: list[Attempt] = []
        for a, digest in self._attempts(project, change_id, limit):
            if a.outcome == "passed":
                out = []
            elif a.outcome == "failed" and (but is None or digest != but):
                out.append(a)
        return out

    def _attempts(self, project: str, change_id: str, limit: int) -> list[tuple[Attempt, str]]:
        """(attempt, its content digest), oldest first: two queries, whatever the number of attempts (the hook
        asks on every failing run, and a team database may be far away)."""
        rows = self._all(
            "SELECT id, run_key, change_ref, outcome, created_at, commit_sha, subject, paths, content_digest FROM runs "
            "WHERE project=? AND change_id=? ORDER BY created_at DESC, id DESC LIMIT ?", (project, change_id, limit))
        if not rows:
            return []
        by_run: dict[int, list[FindingRecord]] = {}
        for run_id, *f in self._all(
                "SELECT run_id, rule, signature, path, message, line, severity, blocking, code FROM findings "
                f"WHERE run_id IN ({','.join('?' * len(rows))}) ORDER BY run_id, id", [r[0] for r in rows]):
            rule, sig, path, message, line, severity, blocking, code = f
            by_run.setdefault(run_id, []).append(
                FindingRecord(rule, sig, path or "", message or "", line, severity, bool(blocking), code or ""))
        out = []
        for run_id, key, ref, outcome, at, commit, subject, paths, digest in reversed(rows):
            kept, total = _paths_read(paths)
            out.append((Attempt(key, ref, outcome, float(at), commit, subject, by_run.get(run_id, []), kept, total),
                        digest))
        return out

    def run_count(self, project: str | None = None) -> int:
        if project:
            return int(self._one("SELECT COUNT(*) FROM runs WHERE project=?", (project,))[0])
        return int(self._one("SELECT COUNT(*) FROM runs")[0])

    def counts(self, project: str | None = None) -> dict[str, int]:
        """Rows per table (of one project, or all): what export/import and the benchmark compare."""
        if project:
            runs = "SELECT id FROM runs WHERE project=?"
            args: tuple = (project,)
            return {"runs": self.run_count(project),
                    "findings": int(self._one(f"SELECT COUNT(*) FROM findings WHERE run_id IN ({runs})", args)[0]),
                    "resolutions": int(self._one("SELECT COUNT(*) FROM resolutions WHERE project=?", args)[0]),
                    "cards": int(self._one("SELECT COUNT(*) FROM cards WHERE project=?", args)[0]),
                    "learn_seen": int(self._one("SELECT COUNT(*) FROM learn_seen WHERE project=?", args)[0]),
                    "learn_runs": int(self._one("SELECT COUNT(*) FROM learn_runs WHERE project=?", args)[0])}
        return {t: int(self._one(f"SELECT COUNT(*) FROM {t}")[0])
                for t in ("runs", "findings", "resolutions", "cards", "learn_seen", "learn_runs")}

    def projects(self) -> list[str]:
        return [r[0] for r in self._all("SELECT DISTINCT project FROM runs UNION SELECT DISTINCT project FROM cards "
                                        "ORDER BY 1")]

    # --- export / import --------------------------------------------------------------------------------
    _RUN_COLS = ("run_key", "project", "change_id", "change_ref", "content_digest", "commit_sha", "subject",
                 "base_sha", "outcome", "created_at", "last_seen", "reruns", "paths")
    _FINDING_COLS = ("sig_id", "signature", "rule", "path", "message", "line", "severity", "blocking", "code")
    _RES_COLS = ("project", "sig_id", "change_id", "change_ref", "run_key", "commit_sha", "subject", "base_sha",
                 "resolved_at")

    def export_records(self, project: str | None = None):
        """Every row of the store (or of one project) as JSON-able records, runs with their findings."""
        yield {"type": "header", "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "schema": SCHEMA_VERSION,
               "from": self.dialect, "project": project}
        where, args = (" WHERE project=?", (project,)) if project else ("", ())
        cols = ", ".join(self._RUN_COLS)
        for row in self._all(f"SELECT id, {cols} FROM runs{where} ORDER BY created_at, id", args):
            rec = dict(zip(self._RUN_COLS, row[1:]))
            rec["findings"] = [dict(zip(self._FINDING_COLS, f)) for f in self._all(
                f"SELECT {', '.join(self._FINDING_COLS)} FROM findings WHERE run_id=? ORDER BY id", (row[0],))]
            yield {"type": "run", **rec}
        for row in self._all(f"SELECT {', '.join(self._RES_COLS)} FROM resolutions{where} ORDER BY resolved_at, id",
                             args):
            yield {"type": "resolution", **dict(zip(self._RES_COLS, row))}
        for rec in self.export_cards(project):
            yield {"type": "card", **rec}
        for project_, source, key in self._all(
                f"SELECT project, source, key FROM learn_seen{where} ORDER BY project, source, key", args):
            yield {"type": "learn_seen", "project": project_, "source": source, "key": key}
        for project_, body, finished in self._all(
                f"SELECT project, body, finished_at FROM learn_runs{where} ORDER BY finished_at, id", args):
            yield {"type": "learn_run", "project": project_, "run": json.loads(body), "finished_at": finished}

    def import_records(self, records) -> dict[str, int]:
        """Add exported records; what exists already (same run key, resolution, card) is kept, so an import
        can be repeated or resumed. Returns what was added."""
        added = {"runs": 0, "findings": 0, "resolutions": 0, "cards": 0, "learn_seen": 0, "learn_runs": 0}
        batch: list[dict] = []
        # An export of version 1 holds signatures of the old shape (rule|message|line): they are re-keyed as the
        # schema 5 migration re-keys a store, and its resolutions follow their findings' new ids.
        rekey: dict[str, str] | None = None

        def flush() -> None:
            with self._tx():
                for rec in batch:
                    kind = rec.get("type")
                    if kind == "run":
                        run_id = self._insert_run(
                            f"INSERT INTO runs({', '.join(self._RUN_COLS)}) "
                            f"VALUES ({','.join('?' * len(self._RUN_COLS))})",
                            tuple(rec.get(c) for c in self._RUN_COLS))
                        if run_id is None:
                            continue
                        for f in rec.get("findings", []):
                            if rekey is not None:
                                f = _rekeyed_finding(f, rekey)
                            self._exec(f"INSERT INTO findings(run_id, {', '.join(self._FINDING_COLS)}) "
                                       f"VALUES (?,{','.join('?' * len(self._FINDING_COLS))})",
                                       (run_id, *(f.get(c) for c in self._FINDING_COLS)))
                            added["findings"] += 1
                        added["runs"] += 1
                    elif kind == "resolution":
                        if rekey is not None:
                            rec = {**rec, "sig_id": rekey.get(rec.get("sig_id"), rec.get("sig_id"))}
                        added["resolutions"] += self._exec(
                            f"INSERT INTO resolutions({', '.join(self._RES_COLS)}) VALUES ({','.join('?' * 9)}) "
                            "ON CONFLICT DO NOTHING", tuple(rec.get(c) for c in self._RES_COLS))
                    elif kind == "card":
                        added["cards"] += self._import_card(rec)
                    elif kind == "learn_seen":
                        added["learn_seen"] += self._exec(
                            "INSERT INTO learn_seen (project, source, key) VALUES (?,?,?) ON CONFLICT DO NOTHING",
                            (rec["project"], rec["source"], rec["key"]))
                    elif kind == "learn_run":
                        added["learn_runs"] += self._import_learn_run(rec)
            batch.clear()

        for rec in records:
            if rec.get("type") == "header":
                if rec.get("format") != EXPORT_FORMAT or int(rec.get("version", 0)) > EXPORT_VERSION:
                    raise StoreError(f"not a Sentinel memory export this version can read: {rec.get('format')!r} "
                                     f"version {rec.get('version')!r}")
                rekey = {} if int(rec.get("version", 0)) < 2 else None
                continue
            if rekey is not None and rec.get("type") == "run":
                for f in rec.get("findings") or []:  # ids are known before the resolutions that follow need them
                    _rekeyed_finding(f, rekey)
            batch.append(rec)
            if len(batch) >= 500:
                flush()
        if batch:
            flush()
        return added

    def _import_learn_run(self, rec: dict) -> int:
        """One learning run, unless the project has it already (same body and end): imports repeat safely."""
        body = json.dumps(rec.get("run") or {}, sort_keys=True)
        finished = float(rec.get("finished_at") or 0.0)
        if self._one("SELECT 1 FROM learn_runs WHERE project=? AND finished_at=? AND body=?",
                     (rec["project"], finished, body)):
            return 0
        return self._exec("INSERT INTO learn_runs (project, body, finished_at) VALUES (?,?,?)",
                          (rec["project"], body, finished))

    # --- learned cards (see sentinel.memory.store.cards) ------------------------------------------------
    def _bump_cards(self, project: str) -> int:
        """The project's next card version, inside the caller's write transaction: the counter row stays locked
        until it commits, so writers of one project commit in the order of their versions and a reader that has
        seen version v has seen every card stamped v or less."""
        self._exec("INSERT INTO card_versions (project, seq) VALUES (?, 1) "
                   "ON CONFLICT (project) DO UPDATE SET seq = card_versions.seq + 1", (project,))
        return int(self._one("SELECT seq FROM card_versions WHERE project=?", (project,))[0])

    def _write_cards(self, rows, replace: bool = True) -> int:
        """Insert (or replace) card rows (project, id, body, text, model, dim, vector, updated_at), each project's
        stamped with its next version; their tombstones go. Inside the caller's transaction."""
        by_project: dict[str, list] = {}
        for row in rows:
            by_project.setdefault(row[0], []).append(row)
        n = 0
        for project, batch in by_project.items():
            if not replace:
                have = self._existing_cards(project, [r[1] for r in batch])
                batch = [r for r in batch if r[1] not in have]
                if not batch:
                    continue
            seq = self._bump_cards(project)
            for r in batch:
                self._exec("DELETE FROM card_removals WHERE project=? AND card_id=?", (project, r[1]))
            n += self._put_card_rows([(*r, seq) for r in batch])
        return n

    def _existing_cards(self, project: str, card_ids: list[str]) -> set[str]:
        out: set[str] = set()
        for start in range(0, len(card_ids), 500):
            chunk = card_ids[start:start + 500]
            out |= {cid for (cid,) in self._all(
                f"SELECT card_id FROM cards WHERE project=? AND card_id IN ({','.join('?' * len(chunk))})",
                (project, *chunk))}
        return out

    def _remove_cards(self, project: str, card_ids) -> int:
        """Delete cards, leaving a tombstone (with the new version) for each, so caches drop them too."""
        ids = sorted(self._existing_cards(project, list(dict.fromkeys(card_ids))))
        if not ids:
            return 0
        seq = self._bump_cards(project)
        for cid in ids:
            self._exec("DELETE FROM cards WHERE project=? AND card_id=?", (project, cid))
            self._exec("INSERT INTO card_removals (project, card_id, seq) VALUES (?,?,?) "
                       "ON CONFLICT (project, card_id) DO UPDATE SET seq = excluded.seq", (project, cid, seq))
        self._cards_changed()
        return len(ids)

    def _cards_changed(self) -> None:
        """A backend's hook: drop what it keeps in memory about the cards."""

    def card_version(self, project: str, since: int | None = None) -> tuple[str, int, int]:
        """(store id, the project's card version, cards changed after `since`) in one round trip: what a clone's
        cache of the learned cards asks on every run (sentinel.memory.learn.cache). The store id tells one
        database from another (a cache made from another store, or from this one before it was re-created, is
        rebuilt whole); 0 is "no card ever written"."""
        row = self._one(
            "SELECT (SELECT value FROM meta WHERE key='store_id'), (SELECT seq FROM card_versions WHERE project=?), "
            "(SELECT COUNT(*) FROM cards WHERE project=? AND seq > ?) + "
            "(SELECT COUNT(*) FROM card_removals WHERE project=? AND seq > ?)",
            (project, project, int(since or 0), project, int(since or 0)))
        store_id = row[0] if row and row[0] else self._make_store_id()
        return store_id, int(row[1] or 0) if row else 0, int(row[2] or 0) if row else 0

    def _make_store_id(self) -> str:
        import uuid

        with self._tx():
            self._exec("INSERT INTO meta (key, value) VALUES ('store_id', ?) ON CONFLICT (key) DO NOTHING",
                       (uuid.uuid4().hex,))
        return self._one("SELECT value FROM meta WHERE key='store_id'")[0]

    def card_changes(self, project: str, since: int) -> tuple[int, list[dict], list[str]]:
        """(version, cards written after version `since`, ids removed after it) of one project; `since` 0 gives
        every card. The version is read first: a writer commits its cards with its version, so every card up to
        it is seen (a later writer's may be too, and is fetched again next time: applying a change is idempotent)."""
        version = self._one("SELECT seq FROM card_versions WHERE project=?", (project,))
        cards = [json.loads(body) for (body,) in self._all(
            "SELECT body FROM cards WHERE project=? AND seq > ? ORDER BY card_id", (project, int(since)))]
        removed = [cid for (cid,) in self._all(
            "SELECT card_id FROM card_removals WHERE project=? AND seq > ? ORDER BY card_id", (project, int(since)))]
        return int(version[0]) if version else 0, cards, removed

    def export_cards(self, project: str | None = None):
        where, args = (" WHERE project=?", (project,)) if project else ("", ())
        for project_, card_id, body, text, model, dim, vector, updated in self._all(
                f"SELECT project, card_id, body, search_text, model, dim, {self._vector_out()}, updated_at "
                f"FROM cards{where} ORDER BY project, card_id", args):
            yield {"project": project_, "card_id": card_id, "card": json.loads(body), "search_text": text,
                   "model": model, "vector": self._vector_list(vector), "updated_at": updated}

    def _import_card(self, rec: dict) -> int:
        """Add one exported card unless the project already has a card with its id."""
        vec = rec.get("vector")
        return self._write_cards([(rec["project"], rec["card_id"],
                                   json.dumps(rec["card"], ensure_ascii=False, sort_keys=True),
                                   rec.get("search_text") or "", rec.get("model"), len(vec) if vec else None,
                                   vec or None, rec.get("updated_at") or time.time())], replace=False)

    _VECTOR_PARAM = "?"  # how a vector parameter is written in SQL (PostgreSQL casts it)

    def _put_card_rows(self, rows) -> int:
        """Insert or replace card rows (project, id, body, text, model, dim, vector, updated_at, seq)."""
        n = 0
        for project, cid, body, text, model, dim, vec, at, seq in rows:
            n += self._exec("INSERT INTO cards(project, card_id, body, search_text, model, dim, vector, updated_at, seq) "
                            f"VALUES (?,?,?,?,?,?,{self._VECTOR_PARAM},?,?) ON CONFLICT (project, card_id) DO UPDATE SET "
                            "body=excluded.body, search_text=excluded.search_text, model=excluded.model, "
                            "dim=excluded.dim, vector=excluded.vector, updated_at=excluded.updated_at, seq=excluded.seq",
                            (project, cid, body, text, model, dim, None if vec is None else self._vector_in(vec), at,
                             seq))
        self._cards_written({int(r[5]) for r in rows if r[5]})
        return n

    @abstractmethod
    def _vector_in(self, vec):
        """A vector as this backend stores it."""

    def _cards_written(self, dims: set[int]) -> None:
        """A backend's hook after cards of these vector dimensions were written."""
        self._cards_changed()

    def _vector_out(self) -> str:
        return "vector"

    @abstractmethod
    def _vector_list(self, value) -> list[float] | None:
        """A stored vector as canonical floats (see cards.canonical_vector)."""
