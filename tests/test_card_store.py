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
