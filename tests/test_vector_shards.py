"""The HNSW layout of learned cards on a real PostgreSQL + pgvector (pgserver): one graph while a dimension's cards
are few, hash-sharded partial graphs once they outgrow it (`sentinel memory migrate`), searched together in one
statement.

A small table and a small `shard_cards` stand in for a million cards (the benchmark measures recall and latency
at that size: benchmarks/team_memory_bench.py): what is checked here is the mechanism — every shard's index is
used, the merged answer is the exact one, writes after the split are found, a half-built successor is ignored by
searches and cleaned up by the next migrate, and the layout goes back to one graph when the cards shrink."""

from __future__ import annotations

import random

import pytest

from tests.pgfixture import new_database, pg_server, psql  # noqa: F401

DIM = 16
PROJECT = "team/shards"


def _unit(v: list[float]) -> list[float]:
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def _cards(rng: random.Random, n: int, start: int = 0) -> tuple[list[dict], list[list[float]]]:
    cards = [{"id": f"card-{i:05d}", "problem_summary": f"fix number {i} of the parser"} for i in range(start, start + n)]
    return cards, [_unit([rng.gauss(0, 1) for _ in range(DIM)]) for _ in cards]


def _exact(vectors: dict[str, list[float]], q: list[float], k: int = 10) -> list[str]:
    return sorted(vectors, key=lambda c: (-sum(a * b for a, b in zip(vectors[c], q)), c))[:k]


def _nearest(db, q: list[float], k: int = 10) -> list[str]:
    got = db._vector_candidates(PROJECT, q, k)
    return sorted(got, key=lambda c: (-got[c], c))[:k]


def _indexes(url: str) -> list[str]:
    return psql(url, "SELECT c.relname || CASE WHEN i.indisvalid THEN '' ELSE ' (invalid)' END FROM pg_class c "
                     "JOIN pg_index i ON i.indexrelid = c.oid WHERE i.indrelid = 'cards'::regclass AND c.relname "
                     "LIKE 'cards_hnsw%' ORDER BY 1").splitlines()


def _plan(db, q: list[float]) -> str:
    """The search statement's plan with sequential and bitmap scans priced out (600 cards are cheaper to sort than
    to walk): whichever HNSW index its predicates allow."""
    from sentinel.memory.store.cards import vector_text

    sql = db._nearest(DIM, None, 10)
    with db.conn.transaction():
        db.conn.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
        rows = db.conn.execute("EXPLAIN " + sql, {"q": vector_text(q), "p": PROJECT, "n": 10}).fetchall()
    return "\n".join(r[0] for r in rows)


@pytest.fixture
def team(pg_server):
    from sentinel.memory.store.cards import LearnedCards
    from sentinel.memory.store.postgres import PostgresStore

    url = new_database(pg_server)
    db = PostgresStore.connect(url)
    rng = random.Random(23)
    cards, vecs = _cards(rng, 600)
    LearnedCards(db, PROJECT).put(cards, vectors=vecs)
    psql(url, "ANALYZE cards")  # the planner's estimates of a table this size (autovacuum's, in time)
    yield url, db, rng, {c["id"]: v for c, v in zip(cards, vecs)}
    db.close()


def test_cards_that_outgrow_one_graph_are_split_into_shards_and_searched_exactly(team):
    from sentinel.memory.store.cards import LearnedCards
    from sentinel.memory.store.postgres import HNSW_EF_CONSTRUCTION, HNSW_M, PostgresStore

    url, db, rng, vectors = team
    assert _indexes(url) == [f"cards_hnsw_{DIM}"]  # few cards: one graph, made with the first of them
    layout = db.vector_indexes(shard_cards=100)[DIM]
    assert layout == {"shards": 1, "m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION, "cards": 600,
                      "wanted_shards": 6, "current": False}
    assert db.vector_indexes()[DIM]["current"]  # at the shipped size, 600 cards are well within one graph

    assert db.rebuild_vector_indexes(shard_cards=100) == [{"dim": DIM, "shards": 6, "from_shards": 1}]
    assert _indexes(url) == [f"cards_hnsw_{DIM}_{s}of6" for s in range(6)]  # the one graph gone, no leftovers
    assert db.vector_indexes(shard_cards=100)[DIM]["current"]
    assert db.rebuild_vector_indexes(shard_cards=100) == []  # nothing twice

    fresh = PostgresStore.connect(url)  # a connection that never read the old layout
    try:
        q = _unit([rng.gauss(0, 1) for _ in range(DIM)])
        plan = _plan(fresh, q)
        assert all(f"cards_hnsw_{DIM}_{s}of6" in plan for s in range(6)), plan  # each shard through its own graph
        for _ in range(20):
            q = _unit([rng.gauss(0, 1) for _ in range(DIM)])
            assert _nearest(fresh, q) == _exact(vectors, q)
        # a card written after the split goes into its shard's graph and is found, by vector and by hybrid search
        new, new_vec = _cards(rng, 1, start=600)
        LearnedCards(fresh, PROJECT).put(new, vectors=new_vec)
        assert _nearest(fresh, new_vec[0])[0] == "card-00600"
        hits = LearnedCards(fresh, PROJECT).search("parser fix", k=3, query_vector=new_vec[0])
        assert hits[0].id == "card-00600" and hits[0].cosine == pytest.approx(1.0, abs=1e-5)
    finally:
        fresh.close()


def test_a_half_built_layout_is_ignored_by_searches_and_replaced_by_the_next_migrate(team):
    from sentinel.memory.store.postgres import PostgresStore, _hnsw_definition

    url, db, rng, vectors = team
    # what an interrupted `memory migrate` leaves: two of six successors built, the one graph still in place
    for s in (0, 3):
        psql(url, f"CREATE INDEX cards_hnsw_{DIM}_{s}of6_next ON cards USING hnsw {_hnsw_definition(DIM, 6, s)}")
    reader = PostgresStore.connect(url)
    try:
        q = _unit([rng.gauss(0, 1) for _ in range(DIM)])
        assert reader._shards(DIM) == 1 and f"cards_hnsw_{DIM} " in _plan(reader, q) + " "
        assert _nearest(reader, q) == _exact(vectors, q)
    finally:
        reader.close()
    assert db.rebuild_vector_indexes(shard_cards=100) == [{"dim": DIM, "shards": 6, "from_shards": 1}]
    assert _indexes(url) == [f"cards_hnsw_{DIM}_{s}of6" for s in range(6)]


def test_shards_go_back_to_one_graph_when_they_hold_too_few_cards(team):
    url, db, rng, vectors = team
    db.rebuild_vector_indexes(shard_cards=100)
    assert db.vector_indexes(shard_cards=10_000)[DIM] | {"current": None} == {
        "shards": 6, "m": db.vector_indexes()[DIM]["m"], "ef_construction": db.vector_indexes()[DIM]["ef_construction"],
        "cards": 600, "wanted_shards": 1, "current": None}
    assert db.rebuild_vector_indexes(shard_cards=10_000) == [{"dim": DIM, "shards": 1, "from_shards": 6}]
    assert _indexes(url) == [f"cards_hnsw_{DIM}"]
    q = _unit([rng.gauss(0, 1) for _ in range(DIM)])
    assert _nearest(db, q) == _exact(vectors, q)


def test_the_first_index_of_cards_already_there_is_made_with_the_shards_they_need(team):
    """A dimension's first index, made after its cards (a bulk load, an index dropped by hand), is built as the
    layout their number wants, not as one graph to be split later."""
    from sentinel.memory.store.postgres import PostgresStore

    url, db, rng, vectors = team
    psql(url, f"DROP INDEX cards_hnsw_{DIM}")
    loader = PostgresStore.connect(url)  # a connection that has not seen the dropped index
    try:
        with loader._tx():
            loader.ensure_vector_index(DIM, shard_cards=250)
        assert _indexes(url) == [f"cards_hnsw_{DIM}_{s}of3" for s in range(3)]
        with loader._tx():
            loader.ensure_vector_index(DIM, shard_cards=50)  # there is one: nothing more, whatever it would want
        assert len(_indexes(url)) == 3
        q = _unit([rng.gauss(0, 1) for _ in range(DIM)])
        assert _nearest(loader, q) == _exact(vectors, q)
    finally:
        loader.close()
