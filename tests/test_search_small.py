"""The small-index scorer (pure Python, no numpy import) gives the dense scorer's results.

The hook's recall searches the bundled and learned indexes with sentinel.memory.retrieval.small; the dense
scorer (numpy) serves large indexes. Both are run here on the same indexes and queries, hit by hit.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sentinel.config import Config, validate
from sentinel.embeddings import STATIC_MODEL_DIR, get_embedder
from sentinel.memory.cards import index as mindex
from sentinel.memory.cards import npyfile
from sentinel.memory.cards.build import build_index
from sentinel.memory.cards.corpus import SHIPPED_INDEX_DIR
from sentinel.memory.cards.index import load_index
from sentinel.memory.retrieval import search as msearch
from sentinel.memory.retrieval import small as search_small
from sentinel.memory.retrieval.search import search

# --- .npy without numpy ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["<i8", "<i4", "<u2", "<f4", "<f8", "i1", "u1", "?"])
@pytest.mark.parametrize("shape", [(0,), (7,), (5, 3)])
def test_npy_reader_reads_what_numpy_writes(tmp_path, dtype, shape):
    arr = (np.arange(int(np.prod(shape))) * 3 - 4).reshape(shape).astype(dtype)
    np.save(tmp_path / "a.npy", arr)
    got = npyfile.load(tmp_path / "a.npy")
    assert got.shape == shape and got.data.tolist() == arr.ravel().tolist()
    if len(shape) == 2:
        assert [got.row(i).tolist() for i in range(shape[0])] == arr.tolist()
        assert [got.column(j).tolist() for j in range(shape[1])] == arr.T.tolist()


def test_npy_reader_reads_fortran_order_and_version_2(tmp_path):
    arr = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    with open(tmp_path / "f.npy", "wb") as fh:
        np.lib.format.write_array(fh, arr, version=(2, 0))
    got = npyfile.load(tmp_path / "f.npy")
    assert got.fortran and got.shape == (3, 4)
    assert [got.row(i).tolist() for i in range(3)] == arr.tolist()
    assert [got.column(j).tolist() for j in range(4)] == arr.T.tolist()
    big = np.arange(70_000, dtype=np.int32)  # above the size that is mapped rather than read
    np.save(tmp_path / "big.npy", big)
    assert npyfile.load(tmp_path / "big.npy").data[69_999] == 69_999


@pytest.mark.parametrize("make", [
    lambda p: p.write_bytes(b"not an array at all"),
    lambda p: np.save(p, np.zeros((2, 2, 2), dtype=np.float32)),  # 3-D
    lambda p: np.save(p, np.zeros(3, dtype=">f4")),  # big-endian
    lambda p: np.save(p, np.array(["a", "b"])),  # strings
    lambda p: (np.save(p, np.zeros(4, dtype=np.float32)), p.write_bytes(p.read_bytes()[:-4])),  # truncated
    lambda p: p.write_bytes(b"\x93NUMPY\x02\x00" + (1 << 30).to_bytes(4, "little") + b"{"),  # absurd header
])
def test_npy_reader_refuses_what_it_cannot_read_naming_the_file(tmp_path, make):
    path = tmp_path / "bad.npy"
    make(path)
    with pytest.raises(ValueError, match="bad.npy"):
        npyfile.load(path)


# --- one query in pure Python -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["KeyError when the header is missing in parse_options", "", "x", "a " * 3000,
                                  "café naïve 中文 test", "def foo():\n    return bar.baz(1, 2)\n"])
def test_encode_one_equals_encode(text):
    emb = get_embedder(None)
    assert np.allclose(emb.encode_one(text), emb.encode([text])[0], atol=1e-6)


# --- the two scorers agree ------------------------------------------------------------------------------------------


def _both(idx, query, **kw):
    small = search(query, index=idx, **kw)
    msearch.FORCE_DENSE = True
    try:
        dense = search(query, index=idx, **kw)
    finally:
        msearch.FORCE_DENSE = False
    return small, dense


def _assert_same(small, dense, what):
    assert (small.mode, small.note, small.candidates, small.below_threshold) == \
        (dense.mode, dense.note, dense.candidates, dense.below_threshold), what
    assert [h.id for h in small] == [h.id for h in dense], what
    for a, b in zip(small, dense):
        assert abs(a.score - b.score) <= 1e-4 and a.matched == b.matched and a.features.keys() == b.features.keys()
        assert all(abs(a.features[f] - b.features[f]) <= 1e-4 for f in a.features), what
        assert (a.bm25, a.coverage, a.top_signals, a.provenance, a.source) == \
            (b.bm25, b.coverage, b.top_signals, b.provenance, b.source), what


def _queries(idx, every: int) -> list[str]:
    cards = list(idx.iter_cards())[::every]
    return [c["problem_summary"] for c in cards] + [" ".join(c.get("signals", [])) for c in cards[::3]] + [
        "KeyError in parse_options when the header is missing", "subprocess call with shell=True and user input",
        "x", "", "zzqx unknownword"]


def test_small_and_dense_scorers_agree_on_the_bundled_index():
    idx = load_index(SHIPPED_INDEX_DIR)
    assert search_small.is_small(idx)
    queries = _queries(idx, 3)  # every third card: as many queries as every 20th of the 2,190 template-era cards gave
    assert len(queries) > 140
    for i, q in enumerate(queries):
        kw = {"k": 5 if i % 2 else 10, "min_score": 0.0 if i % 3 == 0 else None, "config": Config()}
        if i % 5 == 0:
            kw["rule"] = ("SEN301", "SEN205", "SEN103")[i % 3]
        if i % 7 == 0:
            kw["language"] = "python"
        if i % 11 == 0:
            kw["tag"] = "asyncio"
        _assert_same(*_both(idx, q, **kw), (i, q, kw))


def test_small_and_dense_scorers_agree_with_a_code_map_and_lexical_only(tmp_path):
    cards = list(load_index(SHIPPED_INDEX_DIR).iter_cards())[:400]
    # a learned index: the cards' fixes touched files the code map points at (the "area" feature)
    files = ["src/app/http.py", "src/app/cookies.py", "src/app/routing.py", "src/app/cli.py"]
    for n, card in enumerate(cards):
        card["tags"]["files"] = [files[n % 4]]
    cmap = {"parse_cookie": ["app/cookies.py"], "dispatch": ["app/routing.py", "app/http.py"],
            "header": ["app/http.py"], "main": ["app/cli.py"]}
    build_index(cards, tmp_path / "learned", get_embedder(None), built_at="t", codemap=cmap)
    build_index(cards, tmp_path / "lexical", None, built_at="t")
    learned, lexical = load_index(tmp_path / "learned"), load_index(tmp_path / "lexical")
    queries = _queries(learned, 8) + ["parse_cookie drops the header value in dispatch",
                                      "main exits with a traceback when the header is empty"]
    for q in queries:
        small, dense = _both(learned, q, k=8, min_score=0.0, config=Config())
        _assert_same(small, dense, q)
        _assert_same(*_both(lexical, q, k=8, config=Config()), q)
    assert any("area" in h.features and h.features["area"] > 0
               for h in search("parse_cookie drops the header value", index=learned, k=8, min_score=0.0))
    # an index built before norms.npy existed: the cosine is taken with two distances a card
    shutil.copytree(tmp_path / "learned", tmp_path / "older")
    (tmp_path / "older" / "norms.npy").unlink()
    older = load_index(tmp_path / "older")
    for q in queries[::4]:
        _assert_same(*_both(older, q, k=8, min_score=0.0, config=Config()), q)


def test_cosines_of_some_rows_equal_those_of_every_row_whichever_is_asked_first():
    """Recall's first search asks for the rule's cards only; a row's cosine must not depend on that."""
    idx = load_index(SHIPPED_INDEX_DIR)
    emb = get_embedder(None)
    query = "bare except swallows KeyboardInterrupt in the retry loop"
    every = list(search_small.cosines(idx, emb, query))
    assert len(every) == idx.count and len(set(every)) > idx.count // 2
    idx._cache.clear()
    rows = sorted({0, 1, 7, 300, idx.count // 2, idx.count - 1})
    some = search_small.cosines(idx, emb, query, rows)
    assert list(some) == rows and all(some[r] == every[r] for r in rows)
    late = idx.count * 3 // 4  # a row not asked for yet, whatever the bundle's size
    more = search_small.cosines(idx, emb, query, [2, 7, late])  # partly known: the rest computed
    assert all(more[r] == every[r] for r in (2, 7, late))
    assert search_small.cosines(idx, emb, query) == every  # then every row, the same values
    assert search_small.cosines(idx, emb, "", [3, 4]) == {3: 0.0, 4: 0.0}


def test_a_model_the_pure_path_cannot_read_goes_to_the_dense_scorer(tmp_path):
    # A float16 model2vec model: memoryview has no float16 format, so the query is encoded with numpy
    model = tmp_path / "f16-model"
    model.mkdir()
    for name in ("config.json", "wordpiece.json", "vocab.txt"):
        shutil.copy(STATIC_MODEL_DIR / name, model / name)
    raw = (STATIC_MODEL_DIR / "model.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    info = json.loads(raw[8:8 + n])["embeddings"]
    ints = np.frombuffer(raw, dtype=np.int8, offset=8 + n + info["data_offsets"][0],
                         count=int(np.prod(info["shape"]))).astype(np.float16)
    header = json.dumps({"embeddings": {"dtype": "F16", "shape": info["shape"],
                                        "data_offsets": [0, ints.nbytes]}}).encode()
    (model / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + ints.tobytes())
    cfg = validate({"embeddings": {"model": str(model)}}, "t")
    emb = get_embedder(cfg.embeddings)
    assert emb.encode_one("anything") is None
    cards = list(load_index(SHIPPED_INDEX_DIR).iter_cards())[:200]
    build_index(cards, tmp_path / "idx", emb, built_at="t")
    idx = load_index(tmp_path / "idx")
    for q in [c["problem_summary"] for c in cards[::25]]:
        small, dense = _both(idx, q, k=5, config=cfg, min_score=0.0)
        assert small.mode == "hybrid"
        _assert_same(small, dense, q)


def test_dense_top_breaks_ties_at_the_cut_by_the_lower_row():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1, 0.9, 0.5], dtype=np.float32)
    assert sorted(mindex._top(scores, 3, None).tolist()) == [0, 1, 5]
    assert sorted(mindex._top(scores, 4, np.array([2, 3, 4, 5, 6])).tolist()) == [2, 3, 5, 6]
    assert search_small.top_rows(scores.tolist(), range(7), 3) == [1, 5, 0]


def test_a_failing_hook_recalls_without_importing_numpy(repo):
    repo.write("svc.py", textwrap.dedent("""\
        import subprocess


        def run(cmd):
            try:
                return subprocess.run(cmd, shell=True)
            except:
                pass
        """))
    repo.add("svc.py")
    code = ("import sys, json; sys.argv = ['sentinel', 'check', '--format', 'json']\n"
            "from sentinel.cli import main\nimport io, contextlib\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    rc = main()\n"
            "report = json.loads(out.getvalue())\n"
            "print(rc, sum(len(g['similar']) for g in report['recall']), "
            "sorted(m for m in ('numpy', 'dataclasses', 'inspect', 'hashlib', 'typing') if m in sys.modules))")
    repo.run_python(code)  # the first run parses the config files (pathspec brings dataclasses), later runs not
    proc = repo.run_python(code)
    assert proc.returncode == 0, proc.stderr
    rc, similar, heavy = proc.stdout.strip().splitlines()[-1].split(" ", 2)
    assert rc == "1" and int(similar) > 0 and heavy == "[]"


def test_the_small_scorer_imports_no_numpy():
    code = ("import sys\nfrom sentinel.memory.cards.index import load_index\n"
            "from sentinel.memory.retrieval.search import search\n"
            "hits = search('KeyError when a header is missing', index=load_index())\n"
            "print(len(hits), 'numpy' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    count, numpy_loaded = proc.stdout.split()
    assert int(count) > 0 and numpy_loaded == "False"


def test_a_damaged_index_leaves_the_verdict_and_says_recall_was_unavailable(repo, tmp_path):
    damaged = tmp_path / "index"
    shutil.copytree(SHIPPED_INDEX_DIR, damaged)
    data = (damaged / "vectors.npy").read_bytes()
    (damaged / "vectors.npy").write_bytes(data[: len(data) // 2])  # truncated
    repo.write("svc.py", "def run(cmd):\n    try:\n        return cmd()\n    except:\n        pass\n")
    repo.add("svc.py")
    proc = repo.sentinel("check", "--format", "json", env={"SENTINEL_MEMORY_INDEX": str(damaged)})
    assert proc.returncode == 1, proc.stderr  # the gate's own verdict, not an internal error (exit 2)
    report = json.loads(proc.stdout)
    assert not report["passed"] and report["findings"]
    assert "similar past fixes unavailable" in report["recall_note"] and "vectors.npy" in report["recall_note"]
    assert "Traceback" not in proc.stderr
