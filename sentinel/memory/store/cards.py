"""Learned cards in the store: the `LearnedCardStore` interface (`sentinel.memory.store.learned`) on the same two
backends as the hypothesis store, plus a search that runs where the cards are.

- PostgreSQL: each card's vector in a pgvector column with an HNSW index (cosine), its index-layer text as a
  generated `tsvector` with a GIN index; search takes the nearest cards by HNSW and the best full-text matches
  and fuses them (hybrid), in the database, so a team's memory of any size is searched without loading it.
- SQLite: vectors as float32 blobs searched with numpy (loaded once per store), full text with FTS5 — the
  zero-setup default, fine for the thousands of cards one project learns.

Every card is scoped to a project (the normalised remote URL, see `sentinel.memory.store.project`): one team
database holds many projects. Vectors come from the default embedder unless the caller gives them.
Scores: `cosine` (raw, -1..1), `lexical` (ts_rank / FTS5 bm25, on its own scale) and `score`, the hybrid mix
of the cosine and the lexical score normalised by the best lexical score among the candidates; every candidate,
whichever half found it, is scored on both.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Iterator

from sentinel.record import Record

EMBEDDING_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,40}")
_STOP = frozenset("the a an and or of to in on for with is are was were be been it its this that from by as at "
                  "not no when which into than then so if but".split())


def canonical_vector(values) -> list[float]:
    """float32 values written as the shortest decimals that read back to the same float32: what SQLite's blobs
    and pgvector's text give, so an export is identical whichever backend wrote it."""
    import numpy as np

    return [float(str(x)) for x in np.asarray(values, dtype=np.float32)]


def pack_vector(vec) -> bytes:
    """float32 little-endian bytes of a vector (SQLite keeps vectors as blobs)."""
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def unpack_vector(blob: bytes) -> list[float]:
    import numpy as np

    return canonical_vector(np.frombuffer(blob, dtype="<f4"))


def vector_text(vec) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(x) for x in canonical_vector(vec)) + "]"


def search_text(card: dict) -> str:
    """What search sees of a card: its index layer (problem summary, signals, tags)."""
    tags = card.get("tags") or {}
    parts = [card.get("problem_summary") or "", *(card.get("signals") or []), tags.get("language") or "",
             *(tags.get("components") or []), *(tags.get("exceptions") or []), *(tags.get("rules") or [])]
    return "\n".join(p for p in parts if p)


def embed_text(card: dict) -> str:
    tags = card.get("tags") or {}
    return "; ".join(p for p in (card.get("problem_summary") or "", "; ".join(card.get("signals") or []),
                                 ", ".join(tags.get("components") or []), ", ".join(tags.get("exceptions") or [])) if p)


def query_terms(text: str, limit: int = 24) -> list[str]:
    """Distinct content words of a query, for an OR full-text query."""
    out: list[str] = []
    for w in _WORD.findall(text or ""):
        w = w.lower()
        if w not in _STOP and w not in out:
            out.append(w)
    return out[:limit]


class CardHit(Record):
    id: str
    score: float
    cosine: float | None
    lexical: float
    problem_summary: str
    source: str = "project"

    def to_json(self) -> dict:
        return {"id": self.id, "score": self.score, "cosine": self.cosine, "lexical": self.lexical,
                "problem_summary": self.problem_summary, "source": self.source}


def fuse(vector_hits: dict[str, float], lexical_hits: dict[str, float], k: int) -> list[tuple[str, float, float | None,
                                                                                              float]]:
    """[(id, score, cosine, lexical)] best first: w_e * cosine + w_l * lexical / best lexical."""
    best_lex = max(lexical_hits.values(), default=0.0) or 1.0
    out = []
    for cid in set(vector_hits) | set(lexical_hits):
        cos = vector_hits.get(cid)
        lex = lexical_hits.get(cid, 0.0)
        score = (EMBEDDING_WEIGHT * max(cos or 0.0, 0.0) + LEXICAL_WEIGHT * lex / best_lex) / (
            EMBEDDING_WEIGHT + LEXICAL_WEIGHT)
        out.append((cid, round(score, 6), cos, lex))
    out.sort(key=lambda t: (-t[1], t[0]))
    return out[:k]


class LearnedCards:
    """`LearnedCardStore` (sentinel.memory.store.learned) for one project, on a hypothesis-store backend
    (`SQLiteStore` or `PostgresStore`): the `cards`, `learn_seen` and `learn_runs` tables of the same database.
    The backend provides either `hybrid` (the whole search in the database: PostgreSQL) or
    `_vector_candidates`, `_lexical_candidates` and `_cosines` (fused here: SQLite)."""

    def __init__(self, db, project: str, embedder=None):
        self.db = db
        self.project = project
        self.embedder = embedder  # None: the default embedder, loaded on the first put or search

    def _embedder(self):
        if self.embedder is None:
            from sentinel.embeddings import get_embedder

            self.embedder = get_embedder(None)
        return self.embedder

    @property
    def path(self) -> str:
        """Where the cards are (a database URL without its password)."""
        return self.db.describe()

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the LearnedCardStore protocol ------------------------------------------------------------------
    def put(self, cards: Iterable[dict], vectors=None) -> int:
        """Insert or replace cards by id, each with its vector (computed with the default embedder when not
        given; `vectors=False` stores none)."""
        cards = list(cards)
        if not cards:
            return 0
        if vectors is None:
            emb = self._embedder()
            vectors, model = emb.encode([embed_text(c) for c in cards]), emb.name
        elif vectors is False:
            vectors, model = [None] * len(cards), None
        else:
            model = getattr(self.embedder, "name", None) or "given"
        now = time.time()
        rows = [(self.project, c["id"], json.dumps(c, ensure_ascii=False, sort_keys=True), search_text(c), model,
                 None if v is None else len(v), v, now) for c, v in zip(cards, vectors)]
        with self.db._tx():
            self.db._write_cards(rows)
        return len(rows)

    def get(self, card_id: str) -> dict | None:
        row = self.db._one("SELECT body FROM cards WHERE project=? AND card_id=?", (self.project, card_id))
        return json.loads(row[0]) if row else None

    def cards(self) -> Iterator[dict]:
        for (body,) in self.db._all("SELECT body FROM cards WHERE project=? ORDER BY card_id", (self.project,)):
            yield json.loads(body)

    def count(self) -> int:
        return int(self.db._one("SELECT COUNT(*) FROM cards WHERE project=?", (self.project,))[0])

    def remove(self, card_ids: Iterable[str]) -> int:
        with self.db._tx():
            return self.db._remove_cards(self.project, list(card_ids))

    def seen(self, source: str) -> set[str]:
        return {k for (k,) in self.db._all("SELECT key FROM learn_seen WHERE project=? AND source=?",
                                           (self.project, source))}

    def mark_seen(self, source: str, keys: Iterable[str]) -> None:
        with self.db._tx():
            for key in keys:
                self.db._exec("INSERT INTO learn_seen(project, source, key) VALUES (?,?,?) ON CONFLICT DO NOTHING",
                              (self.project, source, key))

    def record_run(self, run) -> None:
        """One learning run (`LearnRun`, or its dict) with its stage counts."""
        data = run.to_json() if hasattr(run, "to_json") else dict(run)
        with self.db._tx():
            self.db._exec("INSERT INTO learn_runs(project, body, finished_at) VALUES (?,?,?)",
                          (self.project, json.dumps(data, sort_keys=True), data.get("finished_at") or time.time()))

    def runs(self, limit: int = 20) -> list:
        rows = [json.loads(b) for (b,) in self.db._all(
            "SELECT body FROM learn_runs WHERE project=? ORDER BY finished_at DESC, id DESC LIMIT ?",
            (self.project, int(limit)))]
        try:
            from sentinel.memory.store.learned import LearnRun  # type: ignore[import-not-found]
        except ImportError:
            return rows
        return [LearnRun(**r) for r in rows]

    def digest(self) -> str:
        """Identity of the card set: changes whenever a card is added, replaced or removed."""
        h = hashlib.sha256()
        for (body,) in self.db._all("SELECT body FROM cards WHERE project=? ORDER BY card_id", (self.project,)):
            h.update(body.encode("utf-8"))
            h.update(b"\n")
        return h.hexdigest()

    # --- search ---------------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, query_vector=None, candidates: int | None = None,
               ef_search: int | None = None, lexical_budget: int | None = None) -> list[CardHit]:
        """Hybrid search of the project's learned cards: the nearest by vector and the best by full text, each
        candidate scored on both (its cosine and its full-text score), fused. On PostgreSQL, `ef_search` (the
        HNSW candidate list) and `lexical_budget` (the rows the text half may rank) default to the tuned values
        (postgres.EF_SEARCH, postgres.LEXICAL_BUDGET)."""
        n = candidates or max(50, 5 * k)
        if query_vector is None and self._has_vectors():
            query_vector = self._embedder().encode([query])[0]
        terms = query_terms(query)
        if hasattr(self.db, "hybrid"):  # the database searches, scores, fuses and cuts in one statement
            rows = self.db.hybrid(self.project, query_vector, terms, n, k, (EMBEDDING_WEIGHT, LEXICAL_WEIGHT),
                                  ef_search=ef_search, lexical_budget=lexical_budget)
            return [CardHit(cid, score, None if cos is None else round(cos, 6), round(lx, 6), summary)
                    for cid, score, cos, lx, summary in rows]
        vec = self.db._vector_candidates(self.project, query_vector, n) if query_vector is not None else {}
        lex = self.db._lexical_candidates(self.project, terms, n, among=list(vec)) if terms else {}
        if query_vector is not None:  # the text's best matches are scored on their vectors too
            vec.update(self.db._cosines(self.project, query_vector, [c for c in lex if c not in vec]))
        fused = fuse(vec, lex, k)
        if not fused:
            return []
        ids = [f[0] for f in fused]
        summaries = {cid: json.loads(body).get("problem_summary", "") for cid, body in self.db._all(
            f"SELECT card_id, body FROM cards WHERE project=? AND card_id IN ({','.join('?' * len(ids))})",
            (self.project, *ids))}
        return [CardHit(cid, score, None if cos is None else round(float(cos), 6), round(float(lx), 6),
                        summaries.get(cid, "")) for cid, score, cos, lx in fused]

    def _has_vectors(self) -> bool:
        return self.db._one("SELECT 1 FROM cards WHERE project=? AND vector IS NOT NULL LIMIT 1",
                            (self.project,)) is not None
