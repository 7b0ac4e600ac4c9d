"""Learned cards on both backends (parity): the LearnedCardStore interface, hybrid search (pgvector HNSW +
tsvector on PostgreSQL, numpy + FTS5 on SQLite), export/import of cards with their vectors unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sentinel.memory.store.cards import LearnedCards, canonical_vector
from tests.pgfixture import BACKENDS, open_backend, pg_server  # noqa: F401 - the session's server fixture


def _card(cid: str, summary: str, signals: list[str], components=("http",)) -> dict:
    return {"id": cid, "problem_summary": summary, "signals": signals,
            "tags": {"language": "python", "components": list(components), "exceptions": [], "rules": []},
            "root_cause": "r", "fix_strategy": "f", "provenance": {"repository": "acme/x", "commit": cid * 3}}


CARDS = [
    _card("pool", "Connections were returned to the pool twice after a timeout, so two requests shared one "
                  "socket and read each other's responses.", ["connection returned to pool twice", "timeout"]),
    _card("tz", "Naive datetimes compared with aware ones raised TypeError when the scheduler computed the next "
                "run across a daylight saving change.", ["naive and aware datetime", "TypeError compare"],
          components=("scheduler",)),
    _card("mutable", "A mutable default list argument was shared across calls, so options added by one request "
                     "leaked into the next.", ["mutable default argument", "shared list across calls"]),
    _card("enc", "Bytes and str were mixed when decoding a multipart body whose base64 chunk split a character, "
                 "corrupting uploaded files.", ["bytes vs str", "base64 chunk split", "multipart corrupted"]),
]


@pytest.fixture(scope="module")
def embedder():
    from sentinel.embeddings import get_embedder

    return get_embedder(None)


@pytest.fixture(params=BACKENDS)
def cards(request, tmp_path, embedder):
    if request.param == "postgres":
        request.getfixturevalue("pg_server")
    with open_backend(request.param, tmp_path) as db:
        yield LearnedCards(db, "github.com/acme/x", embedder=embedder)


def test_the_learned_card_store_interface(cards):
    assert cards.put(CARDS) == 4 and cards.count() == 4
    assert [c["id"] for c in cards.cards()] == ["enc", "mutable", "pool", "tz"]
    assert cards.get("tz")["problem_summary"].startswith("Naive datetimes")
    before = cards.digest()
    changed = dict(CARDS[0], problem_summary=CARDS[0]["problem_summary"] + " Twice.")
    assert cards.put([changed]) == 1 and cards.count() == 4 and cards.digest() != before
    assert cards.remove(["tz", "missing"]) == 1 and cards.get("tz") is None
    cards.mark_seen("git:acme/x", ["a1", "b2"])
    cards.mark_seen("git:acme/x", ["b2", "c3"])  # idempotent
    assert cards.seen("git:acme/x") == {"a1", "b2", "c3"} and cards.seen("github:acme/x") == set()
    cards.record_run({"source": "git:acme/x", "standardiser": "deterministic", "counts": {"merged": 3},
                      "started_at": 1.0, "finished_at": 2.0})
    [run] = cards.runs()
    counts = run["counts"] if isinstance(run, dict) else run.counts
    assert counts == {"merged": 3}


def test_projects_do_not_see_each_others_cards(cards):
    cards.put(CARDS)
    other = LearnedCards(cards.db, "github.com/acme/other", embedder=cards.embedder)
    assert other.count() == 0 and other.search("connection pool timeout") == []
    other.put([CARDS[1]])
    assert [h.id for h in other.search("datetime naive aware")] == ["tz"]


@pytest.mark.parametrize("query, expected", [
    ("the same socket was handed to two requests after a pool timeout", "pool"),
    ("TypeError comparing naive and aware datetime at DST", "tz"),
    ("default list argument shared between calls leaks options", "mutable"),
    ("uploaded file corrupted: base64 multipart decoding bytes str", "enc"),
])
def test_hybrid_search_finds_the_right_card(cards, query, expected):
    cards.put(CARDS)
    hits = cards.search(query, k=3)
    assert hits[0].id == expected, [(h.id, h.score) for h in hits]
    assert hits[0].cosine is not None and hits[0].lexical > 0 and 0 < hits[0].score <= 1


def test_both_backends_rank_alike(tmp_path, embedder, pg_server):
    ranked = {}
    for kind in BACKENDS:
        with open_backend(kind, tmp_path / kind) as db:
            store = LearnedCards(db, "p", embedder=embedder)
            store.put(CARDS)
            ranked[kind] = [(h.id, round(h.cosine, 4)) for h in store.search("pool connection timeout socket", k=4)]
    assert ranked["sqlite"][0] == ranked["postgres"][0]
    assert {i for i, _ in ranked["sqlite"]} == {i for i, _ in ranked["postgres"]}


def test_cards_travel_between_backends_with_their_vectors(tmp_path, embedder, pg_server):
    with open_backend("sqlite", tmp_path / "a") as db:
        LearnedCards(db, "p", embedder=embedder).put(CARDS)
        exported = list(db.export_records())
    with open_backend("postgres", tmp_path / "b") as pg:
        assert pg.import_records(iter(exported))["cards"] == 4
        version = pg.card_version("p")[1]
        assert pg.import_records(iter(exported))["cards"] == 0
        assert pg.card_version("p")[1] == version  # a repeated import changes nothing a cache would fetch again
        back = list(pg.export_records())
        moved = LearnedCards(pg, "p", embedder=embedder)
        assert moved.search("naive aware datetime", k=1)[0].id == "tz"
    strip = [{k: v for k, v in r.items() if k != "from"} for r in exported]
    assert strip == [{k: v for k, v in r.items() if k != "from"} for r in back]
    vec = next(r for r in exported if r["type"] == "card")["vector"]
    original = embedder.encode([_embed(CARDS)])[0]
    assert vec == canonical_vector(original) and len(vec) == embedder.dim
    assert json.loads(json.dumps(vec)) == vec


def _embed(cards):
    from sentinel.memory.store.cards import embed_text

    return embed_text(next(c for c in cards if c["id"] == "enc"))


def test_a_vector_free_card_is_found_by_text(cards):
    cards.put([CARDS[0]], vectors=False)
    hits = cards.search("connection pool twice", k=2, query_vector=np.ones(cards.embedder.dim))
    assert [h.id for h in hits] == ["pool"] and hits[0].cosine is None


def test_every_write_bumps_the_card_version_and_changes_come_back_by_version(cards):
    db, project = cards.db, cards.project
    store_id, version, changed = db.card_version(project)
    assert (version, changed) == (0, 0) and store_id
    cards.put(CARDS)
    assert db.card_version(project)[1:] == (1, 4)
    assert db.card_version(project, since=1) == (store_id, 1, 0)  # the cache's one question: nothing new
    cards.put([dict(CARDS[0], problem_summary=CARDS[0]["problem_summary"] + " Again.")])
    assert cards.remove(["tz", "not-there"]) == 1
    assert db.card_version(project, since=1)[1:] == (3, 2)  # one card replaced, one removed
    version, written, removed = db.card_changes(project, 1)
    assert version == 3 and [c["id"] for c in written] == ["pool"] and removed == ["tz"]
    assert [c["id"] for c in db.card_changes(project, 0)[1]] == ["enc", "mutable", "pool"]
    cards.put([CARDS[1]])  # learned again: its tombstone goes
    version, written, removed = db.card_changes(project, 3)
    assert (version, [c["id"] for c in written], removed) == (4, ["tz"], [])
    assert cards.remove([]) == 0 and db.card_version(project)[1] == 4  # nothing removed: no new version
    other = LearnedCards(db, "github.com/acme/other", embedder=cards.embedder)
    assert db.card_version(other.project)[1:] == (0, 0)  # versions are per project


def test_the_learned_cards_of_an_earlier_sentinel_are_moved_into_the_store(tmp_path, embedder):
    from sentinel.config import MemoryConfig
    from sentinel.memory.store.backends import open_learned_store
    from sentinel.memory.store.learned import LearnRun, SQLiteLearnedCardStore

    git_dir = tmp_path / "repo" / ".git"
    (git_dir / "sentinel").mkdir(parents=True)
    legacy = git_dir / "sentinel" / "learned.sqlite3"
    with SQLiteLearnedCardStore(str(legacy)) as old:  # what `memory learn` kept before store schema 6
        old.put(CARDS[:2])
        old.mark_seen("git:acme/x", ["a1", "b2"])
        old.record_run(LearnRun(source="git:acme/x", standardiser="deterministic", counts={"cards": 2},
                                finished_at=5.0))
    memory = MemoryConfig(project="acme/x")
    with open_learned_store(memory, str(git_dir)) as moved:
        assert sorted(c["id"] for c in moved.cards()) == ["pool", "tz"]
        assert moved.seen("git:acme/x") == {"a1", "b2"} and moved.runs()[0].counts == {"cards": 2}
        assert moved.path.endswith("hypotheses.sqlite3") and moved.db.card_version("acme/x")[1] >= 1
    assert not legacy.exists() and (git_dir / "sentinel" / "learned.sqlite3.v1-migrated").exists()
    with open_learned_store(memory, str(git_dir)) as again:  # once only
        assert again.count() == 2 and len(again.runs()) == 1
