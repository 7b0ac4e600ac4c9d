"""Versioned schema migrations of the store, one list per dialect.

`MIGRATIONS[dialect][v]` takes a store from version v to v+1 and runs in one transaction with the version
bump. SQLite stores of earlier Sentinel versions (schema 0-2) are migrated in place, their data kept;
PostgreSQL starts at the current layout in one step. A store newer than this Sentinel is refused, never
downgraded. `sentinel memory migrate` applies them explicitly (the hook applies them too, when needed).
"""

from __future__ import annotations

# 5: learned cards versioned per project, so a clone's local cache of them is refreshed by what changed: every
# write bumps card_versions.seq (the row lock orders writers) and stamps the cards it wrote with it; a removal
# leaves a tombstone with its seq. The cards already there become version 1.
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
    4: [*_CARD_VERSIONS],
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
    # the planner's statistics keep the 10,000 most common lexemes of the cards' text (not 1,000): what a hybrid
    # search reads to pick a query's rare words (postgres.PostgresStore._rare_query)
    4: [*_CARD_VERSIONS, "ALTER TABLE cards ALTER COLUMN tsv SET STATISTICS 1000"],
}
# PostgreSQL's first migration creates the layout of version 4 at once.
_POSTGRES_FIRST_TARGET = 4

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
