"""Versioned schema migrations of the store, one list per dialect.

`MIGRATIONS[dialect][v]` takes a store from version v to v+1 and runs in one transaction with the version
bump: SQL statements, or a function given the store for what SQL cannot do (re-keying signatures). SQLite
stores of earlier Sentinel versions (schema 0-5) are migrated in place, their data kept; PostgreSQL starts at
the layout of version 4 in one step, then takes the same steps as SQLite (with one more statement at 6). A
store newer than this Sentinel is refused, never downgraded. `sentinel memory migrate` applies them explicitly (the hook applies them too, when needed).
"""

from __future__ import annotations

# Schema 6: learned cards versioned per project, so a clone's local cache of them is refreshed by what changed:
# every write bumps card_versions.seq (the row lock orders writers) and stamps the cards it wrote with it; a
# removal leaves a tombstone with its seq. The cards already there become version 1.
_CARD_VERSIONS = [
    "CREATE TABLE card_versions (project TEXT PRIMARY KEY, seq BIGINT NOT NULL)",
    "ALTER TABLE cards ADD COLUMN seq BIGINT NOT NULL DEFAULT 0",
    "UPDATE cards SET seq = 1",
    "INSERT INTO card_versions (project, seq) SELECT DISTINCT project, 1 FROM cards",
    "CREATE INDEX cards_seq ON cards (project, seq)",
    "CREATE TABLE card_removals (project TEXT NOT NULL, card_id TEXT NOT NULL, seq BIGINT NOT NULL, "
    "PRIMARY KEY (project, card_id))",
]

_SQLITE = {
    0: [
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE runs (
               id INTEGER PRIMARY KEY, project TEXT NOT NULL, change_ref TEXT NOT NULL,
               commit_sha TEXT, subject TEXT, outcome TEXT NOT NULL, created_at REAL NOT NULL)""",
        """CREATE TABLE findings (
               id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
               sig_id TEXT NOT NULL, signature TEXT NOT NULL, rule TEXT NOT NULL, path TEXT, message TEXT)""",
        "CREATE INDEX findings_sig ON findings(sig_id)",
        "CREATE INDEX runs_project ON runs(project, change_ref, created_at)",
    ],
    1: [
        """CREATE TABLE resolutions (
               id INTEGER PRIMARY KEY, project TEXT NOT NULL, sig_id TEXT NOT NULL, change_ref TEXT NOT NULL,
               commit_sha TEXT, subject TEXT, base_sha TEXT, resolved_at REAL NOT NULL)""",
        "CREATE INDEX resolutions_sig ON resolutions(project, sig_id, resolved_at)",
    ],
    # 3: attempts keyed by content (idempotent re-runs), changes apart from branches, examples, resolutions
    # only by a passing attempt. Runs of version 2 each stay one attempt of the change named by their branch.
    2: [
        "ALTER TABLE runs ADD COLUMN run_key TEXT",
        "ALTER TABLE runs ADD COLUMN change_id TEXT",
        "ALTER TABLE runs ADD COLUMN content_digest TEXT",
        "ALTER TABLE runs ADD COLUMN base_sha TEXT",
        "ALTER TABLE runs ADD COLUMN last_seen REAL",
        "ALTER TABLE runs ADD COLUMN reruns INTEGER NOT NULL DEFAULT 0",
        "UPDATE runs SET run_key = 'v2-' || id, change_id = change_ref, content_digest = 'v2-' || id, "
        "last_seen = created_at",
        "CREATE UNIQUE INDEX runs_key ON runs(run_key)",
        "CREATE INDEX runs_change ON runs(project, change_id, created_at)",
        "ALTER TABLE findings ADD COLUMN line INTEGER",
        "ALTER TABLE findings ADD COLUMN severity TEXT NOT NULL DEFAULT 'error'",
        "ALTER TABLE findings ADD COLUMN blocking INTEGER NOT NULL DEFAULT 1",
        "CREATE INDEX findings_run ON findings(run_id)",
        "ALTER TABLE resolutions ADD COLUMN change_id TEXT",
        "ALTER TABLE resolutions ADD COLUMN run_key TEXT",
        "UPDATE resolutions SET change_id = change_ref, run_key = 'v2-' || id",
        "CREATE UNIQUE INDEX resolutions_key ON resolutions(project, sig_id, run_key)",
    ],
    # 4: learned cards with their vectors (float32 blobs searched with numpy) and full text (FTS5, kept in
    # step by triggers), what learning has seen, and its runs
    3: [
        """CREATE TABLE cards (
               project TEXT NOT NULL, card_id TEXT NOT NULL, body TEXT NOT NULL, search_text TEXT NOT NULL,
               model TEXT, dim INTEGER, vector BLOB, updated_at REAL NOT NULL, PRIMARY KEY (project, card_id))""",
        "CREATE VIRTUAL TABLE cards_fts USING fts5(search_text, content='cards', content_rowid='rowid', "
        "tokenize='porter unicode61')",
        "CREATE TRIGGER cards_ai AFTER INSERT ON cards BEGIN "
        "INSERT INTO cards_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END",
        "CREATE TRIGGER cards_ad AFTER DELETE ON cards BEGIN "
        "INSERT INTO cards_fts(cards_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text); END",
        "CREATE TRIGGER cards_au AFTER UPDATE ON cards BEGIN "
        "INSERT INTO cards_fts(cards_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text); "
        "INSERT INTO cards_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END",
        "CREATE TABLE learn_seen (project TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL, "
        "PRIMARY KEY (project, source, key))",
        "CREATE TABLE learn_runs (id INTEGER PRIMARY KEY, project TEXT NOT NULL, body TEXT NOT NULL, "
        "finished_at REAL NOT NULL)",
    ],
    4: [],  # filled below: the same step on both dialects
}

_POSTGRES = {
    0: [
        "CREATE EXTENSION IF NOT EXISTS vector",
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE runs (
               id BIGSERIAL PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, project TEXT NOT NULL,
               change_id TEXT NOT NULL, change_ref TEXT NOT NULL, content_digest TEXT NOT NULL,
               commit_sha TEXT, subject TEXT, base_sha TEXT, outcome TEXT NOT NULL,
               created_at DOUBLE PRECISION NOT NULL, last_seen DOUBLE PRECISION NOT NULL,
               reruns INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX runs_project ON runs(project, change_ref, created_at)",
        "CREATE INDEX runs_change ON runs(project, change_id, created_at)",
        """CREATE TABLE findings (
               id BIGSERIAL PRIMARY KEY, run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
               sig_id TEXT NOT NULL, signature TEXT NOT NULL, rule TEXT NOT NULL, path TEXT, message TEXT,
               line INTEGER, severity TEXT NOT NULL DEFAULT 'error', blocking INTEGER NOT NULL DEFAULT 1)""",
        "CREATE INDEX findings_sig ON findings(sig_id)",
        "CREATE INDEX findings_run ON findings(run_id)",
        """CREATE TABLE resolutions (
               id BIGSERIAL PRIMARY KEY, project TEXT NOT NULL, sig_id TEXT NOT NULL, change_ref TEXT NOT NULL,
               change_id TEXT, run_key TEXT, commit_sha TEXT, subject TEXT, base_sha TEXT,
               resolved_at DOUBLE PRECISION NOT NULL)""",
        "CREATE INDEX resolutions_sig ON resolutions(project, sig_id, resolved_at)",
        "CREATE UNIQUE INDEX resolutions_key ON resolutions(project, sig_id, run_key)",
        # Learned cards: pgvector column (one HNSW index per dimension, made when cards of that dimension
        # first arrive: an HNSW index needs a fixed dimension) and full text as a generated tsvector.
        """CREATE TABLE cards (
               project TEXT NOT NULL, card_id TEXT NOT NULL, body TEXT NOT NULL, search_text TEXT NOT NULL,
               model TEXT, dim INTEGER, vector vector, updated_at DOUBLE PRECISION NOT NULL,
               tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', search_text)) STORED,
               PRIMARY KEY (project, card_id))""",
        "CREATE INDEX cards_tsv ON cards USING gin (tsv)",
        """CREATE TABLE learn_seen (project TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL,
               PRIMARY KEY (project, source, key))""",
        """CREATE TABLE learn_runs (id BIGSERIAL PRIMARY KEY, project TEXT NOT NULL, body TEXT NOT NULL,
               finished_at DOUBLE PRECISION NOT NULL)""",
    ],
}
# PostgreSQL's first migration creates the layout of version 4 at once.
_POSTGRES_FIRST_TARGET = 4


def rekeyed_signature(rule: str, message: str, old: str) -> str:
    """Today's signature of a finding stored with a signature of schema 4 or before (`rule|message|line`, the
    line's shape in it): from its rule, its stored message and that normalized line — which says no more than
    the raw line would, so the new signature is the one a new run computes for the same finding."""
    from sentinel.memory.hypotheses.signature import normalize_text, signature

    parts = old.split("|", 2)
    if len(parts) < 3:
        code = ""
    elif "|" not in message:  # the message's part holds no bar: the line is the third part
        code = parts[2]
    else:
        prefix = f"{rule}|{normalize_text(message)}|"
        code = old[len(prefix):] if old.startswith(prefix) else parts[2]
    return signature(rule, message, code)


_BATCH = 200  # rows per INSERT: a team database far away gets a few statements, not one per finding
QUICK_REKEY = 1000  # distinct signatures a hook may re-key (~0.7 s on a busy 2-core machine); more: memory migrate


def rekey_signatures(store) -> None:
    """Schema 5: a signature is the rule and the tokens that name the mechanism, not the line's shape. Every
    stored finding is re-keyed from what it kept (rule, message, its normalized line); the patterns that only
    the line's shape kept apart become one, and resolutions follow their findings to the new ids (two that
    now name one pattern for one attempt are kept once). Computed per distinct (signature, message), written
    through a temporary table in a few statements, so a large team database migrates in its hook's time."""
    from sentinel.memory.hypotheses.signature import signature_id

    if store.quick:
        [(n,)] = store._all("SELECT COUNT(*) FROM (SELECT DISTINCT sig_id, signature, rule, message FROM findings) d")
        if int(n) > QUICK_REKEY:
            from sentinel.memory.store import StoreError

            raise StoreError(f"the hypothesis store {store.describe()} needs its schema 5 migration, which re-keys "
                             f"{n} signatures: too long for a commit hook; run `sentinel memory migrate` once")
    changed = []
    for sig_id, old, rule, message in store._all(
            "SELECT DISTINCT sig_id, signature, rule, COALESCE(message, '') FROM findings"):
        new = rekeyed_signature(rule, message, old)
        if new != old:
            changed.append((sig_id, old, rule, message, signature_id(new), new))
    if not changed:
        return
    store._exec("CREATE TEMPORARY TABLE sentinel_rekey (old_id TEXT, old_sig TEXT, rule TEXT, message TEXT, "
                "new_id TEXT, new_sig TEXT)")
    store._exec("CREATE INDEX sentinel_rekey_old ON sentinel_rekey(old_id)")
    for at in range(0, len(changed), _BATCH):
        batch = changed[at:at + _BATCH]
        store._exec("INSERT INTO sentinel_rekey VALUES " + ",".join(["(?,?,?,?,?,?)"] * len(batch)),
                    [v for row in batch for v in row])
    match = ("FROM sentinel_rekey k WHERE k.old_id = findings.sig_id AND k.old_sig = findings.signature "
             "AND k.rule = findings.rule AND k.message = COALESCE(findings.message, '')")
    store._exec(f"UPDATE findings SET sig_id = (SELECT k.new_id {match}), signature = (SELECT k.new_sig {match}) "
                f"WHERE EXISTS (SELECT 1 {match})")
    # an old id whose findings went different ways follows the first of them (ids are what resolutions keep)
    moved = {}
    for old_id, new_id in store._all("SELECT old_id, new_id FROM sentinel_rekey ORDER BY old_id, new_id"):
        moved.setdefault(old_id, new_id)
    store._exec("DELETE FROM sentinel_rekey")
    pairs = list(moved.items())
    for at in range(0, len(pairs), _BATCH):
        batch = pairs[at:at + _BATCH]
        store._exec("INSERT INTO sentinel_rekey(old_id, new_id) VALUES " + ",".join(["(?,?)"] * len(batch)),
                    [v for row in batch for v in row])
    new_of = "COALESCE((SELECT k.new_id FROM sentinel_rekey k WHERE k.old_id = {t}.sig_id), {t}.sig_id)"
    store._exec("DELETE FROM resolutions WHERE EXISTS (SELECT 1 FROM resolutions r2 WHERE r2.project = "
                "resolutions.project AND COALESCE(r2.run_key, '') = COALESCE(resolutions.run_key, '') AND "
                f"r2.id < resolutions.id AND {new_of.format(t='r2')} = {new_of.format(t='resolutions')})")
    store._exec("UPDATE resolutions SET sig_id = (SELECT k.new_id FROM sentinel_rekey k WHERE k.old_id = "
                "resolutions.sig_id) WHERE sig_id IN (SELECT old_id FROM sentinel_rekey)")
    store._exec("DROP TABLE sentinel_rekey")


# 5: findings keep their line (what the attempt did) and runs their files; signatures re-keyed (above)
_V5 = ["ALTER TABLE findings ADD COLUMN code TEXT", "ALTER TABLE runs ADD COLUMN paths TEXT", rekey_signatures]
_SQLITE[4] = _V5
_POSTGRES[4] = _V5
# 6: learned cards versioned per project (_CARD_VERSIONS, above); on PostgreSQL the planner's statistics also keep
# the 10,000 most common lexemes of the cards' text (not 1,000): what a hybrid search reads to tell a query's
# rare words (postgres.PostgresStore.lexical_terms)
_SQLITE[5] = list(_CARD_VERSIONS)
_POSTGRES[5] = [*_CARD_VERSIONS, "ALTER TABLE cards ALTER COLUMN tsv SET STATISTICS 1000"]

MIGRATIONS = {"sqlite": _SQLITE, "postgres": _POSTGRES}


def steps(dialect: str, current: int, target: int) -> list[tuple[int, list[str]]]:
    """[(version after the step, statements)] from `current` to `target`."""
    table = MIGRATIONS[dialect]
    out = []
    version = current
    while version < target:
        stmts = table[version]
        version = _POSTGRES_FIRST_TARGET if dialect == "postgres" and version == 0 else version + 1
        out.append((version, stmts))
    return out
