"""Memory search (hybrid + lexical fallback), filters, browse, stats, the CLI, and the shipped/installed index."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sentinel.config import Config, validate
from sentinel.memory.cards import build as mbuild
from sentinel.memory.cards import index as mindex
from sentinel.memory.cards.build import build_index, corpus_digest
from sentinel.memory.cards.corpus import SHIPPED_INDEX_DIR, load_entries
from sentinel.memory.cards.index import IndexMissing, load_index
from sentinel.memory.retrieval import search as msearch
from sentinel.memory.retrieval.search import search, show, stats

PROJECT = Path(__file__).resolve().parent.parent
CARD_FILES = sorted((PROJECT / "memory" / "cards").glob("*.jsonl"))


def _real_cards() -> list[dict]:
    return [e.raw for e in load_entries(CARD_FILES) if e.valid]


def _variant(base: dict, card_id: str, **tags) -> dict:
    c = copy.deepcopy(base)
    c["id"] = card_id
    c["tags"].update(tags)
    return c


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    cards = _real_cards()
    if len(cards) < 20:
        pytest.skip("needs the card corpus in memory/cards")
    # A few relabelled copies so language / rule filters have something to choose between.
    cards.append(_variant(cards[0], "fx-test-go-variant", language="go", rules=["SEN999"]))
    cards.append(_variant(cards[1], "fx-test-rust-variant", language="rust", components=["ring buffer"]))
    return cards


@pytest.fixture(scope="module")
def built(tmp_path_factory, corpus):
    from sentinel.embeddings import get_embedder

    out = tmp_path_factory.mktemp("idx") / "index"
    build_index(corpus, out, get_embedder(None), built_at="2026-01-01T00:00:00Z")
    return load_index(out)


@pytest.fixture(scope="module")
def lexical_built(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("lex") / "index"
    build_index(corpus, out, None)
    return load_index(out)


def _symptom_query(card: dict) -> str:
    return " ".join(card["signals"][:4])


def _sample(corpus: list[dict], n: int = 40) -> list[dict]:
    real = [c for c in corpus if not c["id"].startswith("fx-test-")]
    step = max(1, len(real) // n)
    return real[::step][:n]


def test_search_finds_the_card_from_its_own_symptom_words(built, corpus):
    sample = _sample(corpus)
    top1 = top5 = 0
    for c in sample:
        hits = search(_symptom_query(c), k=5, config=Config(), index=built)
        assert hits.mode == "hybrid" and hits.note is None
        ids = [h.id for h in hits]
        top1 += ids[0] == c["id"] or ids[0].endswith("variant")
        top5 += c["id"] in ids
    assert top5 == len(sample)
    assert top1 >= 0.9 * len(sample)


def test_search_from_summary_paraphrase_words(built, corpus):
    # Content words of the problem summary, shuffled: no exact phrase to lean on.
    hits_at_3 = 0
    sample = _sample(corpus)
    for c in sample:
        words = [w for w in c["problem_summary"].split() if len(w) > 4][:12]
        q = " ".join(sorted(words, key=len))
        hits_at_3 += c["id"] in [h.id for h in search(q, k=3, config=Config(), index=built)]
    assert hits_at_3 >= 0.9 * len(sample)


def test_preview_shape_and_scores(built, corpus):
    c = corpus[5]
    hits = search(_symptom_query(c), k=10, config=Config(), index=built, min_score=0)
    assert len(hits) == 10
    top = hits[0]
    assert top.id == c["id"] and top.problem_summary == c["problem_summary"]
    assert set(top.top_signals) <= set(c["signals"]) and len(top.top_signals) == 4
    # the signals that share words with the query come first
    assert top.top_signals[0] in c["signals"][:4]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and 0 <= scores[-1] <= scores[0] <= 1
    assert top.cosine is not None and top.bm25 > 0
    # absolute scores: the best hit of a card's own symptoms is confident, the tenth is not scaled up to 1
    assert top.score >= 0.5 and scores[-1] < top.score
    data = hits.to_json()
    assert data["mode"] == "hybrid" and data["results"][0]["id"] == c["id"]
    first = data["results"][0]
    assert first["source"] == "bundled" and first["score"] == top.score
    assert first["provenance"]["repository"] == c["provenance"]["repository"]
    assert first["provenance"]["commit"] == c["provenance"]["commit"]
    assert set(first["features"]) >= {"cosine", "coverage", "identifiers"}


def test_weights_come_from_config(built, corpus):
    q = _symptom_query(corpus[7])
    only_lex = search(q, k=5, config=validate({"memory": {"embedding-weight": 0, "lexical-weight": 1}}, "t"),
                      index=built)
    assert only_lex.mode == "lexical" and "embedding_weight is 0" in only_lex.note
    only_vec = search(q, k=5, config=validate({"memory": {"embedding-weight": 1, "lexical-weight": 0}}, "t"),
                      index=built)
    assert only_vec.mode == "hybrid" and only_vec[0].cosine is not None


def test_filters(built, corpus):
    q = _symptom_query(corpus[0])
    go = search(q, k=10, language="go", config=Config(), index=built)
    assert [h.id for h in go] == ["fx-test-go-variant"]
    assert all(h.language == "python" for h in search(q, k=10, language="Python", config=Config(), index=built))
    ruled = search("anything at all", k=10, rule="sen999", config=Config(), index=built, min_score=0)
    assert [h.id for h in ruled] == ["fx-test-go-variant"]
    real_rule = next((c["tags"]["rules"][0] for c in corpus if c["tags"]["rules"] and
                      not c["id"].startswith("fx-test-")), None)
    if real_rule:
        hits = search("error handling", k=50, rule=real_rule, config=Config(), index=built, min_score=0)
        assert hits and all(real_rule in show(h.id, index=built)["tags"]["rules"] for h in hits)
    tag = corpus[3]["tags"]["components"][0]
    tagged = search(q, k=50, tag=tag.upper(), config=Config(), index=built, min_score=0)
    assert tagged and all(tag in show(h.id, index=built)["tags"]["components"] for h in tagged)
    none = search(q, k=10, tag="no-such-component", config=Config(), index=built)
    assert list(none) == [] and "filters" in none.note
    combined = search(q, k=10, language="rust", tag="ring buffer", config=Config(), index=built, min_score=0)
    assert [h.id for h in combined] == ["fx-test-rust-variant"]


def test_lexical_fallback_when_the_embedder_is_unavailable(built, corpus, tmp_path):
    cfg = validate({"embeddings": {"model": str(tmp_path / "missing-model")}}, "t")
    c = corpus[11]
    hits = search(_symptom_query(c), k=5, config=cfg, index=built)
    assert hits.mode == "lexical"
    assert "lexical only" in hits.note and "does not exist" in hits.note
    assert hits[0].id == c["id"] and hits[0].cosine is None
    assert hits.to_json()["note"] == hits.note


def test_lexical_only_index(lexical_built, corpus):
    hits = search(_symptom_query(corpus[2]), k=3, config=Config(), index=lexical_built)
    assert hits.mode == "lexical" and "no vectors" in hits.note
    assert hits[0].id == corpus[2]["id"]
    nothing = search("zzzz qqqq", k=3, config=Config(), index=lexical_built)
    assert list(nothing) == [] and "no card shares a term" in nothing.note


def test_embedder_mismatch_falls_back_to_lexical(tmp_path, corpus):
    out = tmp_path / "index"
    build_index(corpus[:30], out, None)
    meta = json.loads((out / "meta.json").read_text())
    meta["model"] = "static:another-model"
    (out / "meta.json").write_text(json.dumps(meta))
    np.save(out / "vectors.npy", np.zeros((30, 256), dtype=np.float32))
    hits = search(_symptom_query(corpus[4]), k=3, config=Config(), index=load_index(out))
    assert hits.mode == "lexical" and "differs" in hits.note


def test_browse_returns_the_whole_card(built, corpus):
    c = corpus[9]
    full = show(c["id"], index=built)
    assert full == json.loads(json.dumps(c))
    for key in ("root_cause", "fix_strategy", "patch_digest", "verification", "provenance"):
        assert full[key] == c[key]
    assert show("no-such-card", index=built) is None


def test_stats(built, corpus):
    s = stats(index=built)
    assert s["count"] == len(corpus) and s["dim"] == 256 and s["model"].startswith("static:")
    assert s["built_at"] == "2026-01-01T00:00:00Z"
    from collections import Counter

    assert s["by_source"] == dict(Counter(c["provenance"]["source"] for c in corpus))
    assert s["by_language"]["go"] == 1


def test_build_is_reproducible(tmp_path, corpus):
    from sentinel.embeddings import get_embedder

    a, b = tmp_path / "a", tmp_path / "b"
    build_index(corpus[:40], a, get_embedder(None), built_at="x")
    build_index(corpus[:40], b, get_embedder(None), built_at="x")
    for f in sorted(p.name for p in a.iterdir()):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_builder_skips_invalid_cards_and_merges_extra_cards(tmp_path, corpus):
    good = _variant(corpus[0], "fx-extra-card")
    bad = _variant(corpus[1], "fx-bad-card")
    bad["signals"] = ["x"]
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    cfg = validate({"memory": {"extra-cards": ["extra"]}}, "t")
    report = mbuild.build(cfg, root=str(tmp_path), out=tmp_path / "index", lexical_only=True)
    assert [s[1] for s in report.skipped] == ["fx-bad-card"]
    idx = load_index(tmp_path / "index")
    assert show("fx-extra-card", index=idx) is not None and show("fx-bad-card", index=idx) is None
    assert any(s.endswith("more.jsonl") for s in idx.meta["sources"])


def test_rebuilt_index_is_picked_up(tmp_path, corpus):
    out = tmp_path / "index"
    build_index(corpus[:10], out, None)
    assert load_index(out).count == 10
    time.sleep(0.01)
    build_index(corpus[:12], out, None)
    assert load_index(out).count == 12


def test_missing_index(tmp_path):
    with pytest.raises(IndexMissing):
        load_index(tmp_path / "nothing")


# --- the shipped index --------------------------------------------------------------------------------------------

def test_shipped_index_is_up_to_date_with_the_cards():
    if not CARD_FILES:
        pytest.skip("no cards")
    meta = json.loads((SHIPPED_INDEX_DIR / "meta.json").read_text())
    assert meta["digest"] == corpus_digest(_real_cards()), \
        "sentinel/data/memory is stale: run `sentinel memory build-index` and commit it"
    assert meta["model"] and meta["model"].startswith("static:")


def test_shipped_index_maps_its_large_arrays_instead_of_reading_them():
    # How fast it loads is benchmarks/memory_bench.py's to measure (a timed test fails on a busy machine); what makes
    # it fast is a behaviour: the large arrays are memory-mapped (pages read on first touch), and every part of
    # the index answers.
    code = ("import numpy as np\n"
            "from sentinel.memory.cards.index import load_index\n"
            "idx = load_index()\n"
            "idx.bm25(['pool']); idx.vectors.sum(); idx.row_of('x'); idx.filter_mask('python', 'x', 'SEN101')\n"
            "v = idx.vectors\n"
            "print(v.nbytes > 1 << 16, isinstance(v.base, np.memmap) or isinstance(getattr(v.base, 'base', None), "
            "np.memmap))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]


def test_importing_memory_is_free_for_the_hook():
    code = ("import sys\nimport sentinel.memory\n"
            "print(sorted(m for m in ('numpy', 'pydantic', 'model2vec', 'sentinel.memory.cards.index')"
            " if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


# --- CLI ------------------------------------------------------------------------------------------------------------

def _cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "sentinel", "memory", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def test_cli_search_show_stats(built, corpus, tmp_path):
    c = corpus[13]
    proc = _cli("search", _symptom_query(c), "-k", "3", "--json", "--index", str(built.path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "hybrid" and data["results"][0]["id"] == c["id"]
    assert set(data["results"][0]) >= {"id", "score", "problem_summary", "top_signals"}

    text = _cli("search", _symptom_query(c), "--language", "python", "--index", str(built.path), cwd=tmp_path)
    assert text.returncode == 0 and c["id"] in text.stdout and "mode: hybrid" in text.stdout

    shown = _cli("show", c["id"], "--index", str(built.path), cwd=tmp_path)
    assert shown.returncode == 0 and "Root cause" in shown.stdout and c["root_cause"] in shown.stdout
    as_json = _cli("show", c["id"], "--json", "--index", str(built.path), cwd=tmp_path)
    assert json.loads(as_json.stdout)["fix_strategy"] == c["fix_strategy"]
    missing = _cli("show", "no-such-card", "--index", str(built.path), cwd=tmp_path)
    assert missing.returncode == 1 and "no card" in missing.stderr

    st = _cli("stats", "--json", "--index", str(built.path), cwd=tmp_path)
    assert json.loads(st.stdout)["count"] == len(corpus)
    st_text = _cli("stats", "--index", str(built.path), cwd=tmp_path)
    assert "256 dims" in st_text.stdout and "fixrecord" in st_text.stdout


def test_cli_lexical_fallback_says_so(built, corpus, tmp_path):
    (tmp_path / ".sentinel.toml").write_text('[embeddings]\nmodel = "./no-model-here"\n')
    proc = _cli("search", _symptom_query(corpus[3]), "--json", "--index", str(built.path),
                "--config", str(tmp_path / ".sentinel.toml"), cwd=tmp_path)
    data = json.loads(proc.stdout)
    assert data["mode"] == "lexical" and "lexical only" in data["note"]
    assert data["results"][0]["id"] == corpus[3]["id"]


def test_cli_build_index_and_check(tmp_path, corpus):
    cards = tmp_path / "cards.jsonl"
    cards.write_text("".join(json.dumps(c) + "\n" for c in corpus[:15]))
    out = tmp_path / "idx"
    proc = _cli("build-index", "--cards", str(cards), "--out", str(out), "--lexical-only", cwd=tmp_path)
    assert proc.returncode == 0 and "indexed 15 cards" in proc.stdout, proc.stderr
    assert _cli("build-index", "--cards", str(cards), "--out", str(out), "--check", cwd=tmp_path).returncode == 0
    cards.write_text("".join(json.dumps(c) + "\n" for c in corpus[:16]))
    stale = _cli("build-index", "--cards", str(cards), "--out", str(out), "--check", cwd=tmp_path)
    assert stale.returncode == 1 and "out of date" in stale.stdout


def test_cli_missing_index_is_an_error(tmp_path):
    proc = _cli("stats", "--index", str(tmp_path / "none"), cwd=tmp_path)
    assert proc.returncode == 2 and "build-index" in proc.stderr


def test_index_env_and_project_index(tmp_path, corpus, monkeypatch):
    out = tmp_path / "envidx"
    build_index(corpus[:5], out, None)
    monkeypatch.setenv(mindex.INDEX_ENV, str(out))
    assert load_index().count == 5


# --- non-editable install (what pre-commit does) ------------------------------------------------------------------

def test_index_loads_from_a_non_editable_install(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        if (PROJECT / name).exists():
            shutil.copy(PROJECT / name, src / name)
    shutil.copytree(PROJECT / "sentinel", src / "sentinel", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                          str(src)], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0 and "setuptools" in pip.stderr and "Could not" in pip.stderr:
        pytest.skip("cannot build a wheel here (no setuptools available to pip)")
    assert pip.returncode == 0, pip.stderr[-2000:]
    code = ("import sentinel, json\n"
            "from sentinel.memory.cards.index import load_index\nfrom sentinel.memory.retrieval.search import search\n"
            "idx = load_index()\n"
            "hits = search('connection pool', k=3)\n"
            "print(json.dumps({'pkg': sentinel.__file__, 'index': str(idx.path), 'count': idx.count,"
            " 'mode': hits.mode, 'n': len(hits)}))\n")
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop(mindex.INDEX_ENV, None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["pkg"].startswith(str(target)) and data["index"].startswith(str(target))
    assert data["count"] == json.loads((SHIPPED_INDEX_DIR / "meta.json").read_text())["count"]
    assert data["mode"] == "hybrid" and data["n"] == 3


def test_approximate_cosine_matches_exact(tmp_path, corpus, monkeypatch):
    from sentinel.embeddings import get_embedder

    # Force the large-index path on the real corpus: head scan + exact re-rank of a small pool.
    monkeypatch.setattr(mbuild, "APPROX_MIN_CARDS", 10)
    monkeypatch.setattr(mindex, "RERANK", 120)
    # an index this small is otherwise searched by the small scorer, which is always exact
    monkeypatch.setattr(msearch, "FORCE_DENSE", True)
    out = tmp_path / "index"
    build_index(corpus, out, get_embedder(None))
    idx = load_index(out)
    assert idx.meta["head_dims"] == mbuild.HEAD_DIMS and (out / "head.npy").is_file()
    agree = total = 0
    for c in _sample(corpus, 30):
        q = c["root_cause"][:200]
        exact = [h.id for h in search(q, k=10, config=Config(), index=idx, exact=True, min_score=0)]
        approx = [h.id for h in search(q, k=10, config=Config(), index=idx, min_score=0)]
        agree += len(set(exact) & set(approx))
        total += len(exact)
        assert approx[0] == exact[0]
    assert agree / total >= 0.97
    go = search(_symptom_query(corpus[0]), k=5, language="go", config=Config(), index=idx)
    assert [h.id for h in go] == ["fx-test-go-variant"]


def test_rotation_preserves_cosines(built, corpus):
    from sentinel.embeddings import get_embedder
    from sentinel.memory.cards.model import parse_card

    emb = get_embedder(None)
    query = emb.encode(["timeout while the upload body is still being written"])[0]
    card_vec = emb.encode([parse_card(corpus[0]).index_text()])[0]
    rotated = built.rotate(query)
    assert np.isclose(np.linalg.norm(rotated), 1.0, atol=1e-5)
    stored = built.vectors[built.row_of(corpus[0]["id"])]
    assert np.isclose(float(stored @ rotated), float(card_vec @ query), atol=1e-4)
