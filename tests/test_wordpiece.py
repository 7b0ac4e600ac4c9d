"""sentinel.wordpiece and the numpy-only static embedder give what `tokenizers` and model2vec give.

The default install has neither package (they pull ~20 more into every pre-commit environment),
so the run-time path reimplements the tokenizer; these tests hold it to the reference on a large
sample of real text — every governed card, every text file of this repository, line by line —
and on generated Unicode text. They skip when the reference packages are absent.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel.embeddings import STATIC_MODEL_DIR, get_embedder, read_safetensors
from sentinel.wordpiece import (
    COMPACT_FILE,
    MADE_FROM,
    VOCAB_FILE,
    UnsupportedTokenizer,
    WordPieceTokenizer,
    made_from_bytes,
    tokenizer_json,
    write_compact,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """A copy of the bundled model with the tokenizer.json its compact pair was made from, rebuilt byte for byte: what
    `tokenizers` and model2vec read."""
    out = tmp_path_factory.mktemp("static-model")
    for p in STATIC_MODEL_DIR.iterdir():
        shutil.copy(p, out / p.name)
    (out / "tokenizer.json").write_bytes(tokenizer_json(STATIC_MODEL_DIR))
    return out


def _real_texts() -> list[str]:
    """Lines of every tracked text file (code, docs, cards) plus each card's prose fields whole."""
    texts: list[str] = []
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False).stdout
    for rel in filter(None, listed.decode("utf-8", "replace").split("\0")):
        path = ROOT / rel
        if path.suffix in (".npy", ".safetensors") or not path.is_file() or path.stat().st_size > 3_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if rel.endswith(".jsonl"):
            for line in text.splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                texts.extend(v for v in _strings(record) if len(v) > 3)
        texts.extend(ln for ln in text.splitlines() if ln.strip())
    return texts


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@pytest.fixture(scope="module")
def reference(model_dir):
    tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (tokenizers) is not installed")
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    ref.no_truncation()
    return ref


@pytest.fixture(scope="module")
def ours(model_dir):
    return WordPieceTokenizer.from_file(model_dir / "tokenizer.json")


def _ref_ids(ref, texts):
    return [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]


def test_same_ids_as_tokenizers_on_real_text(reference, ours):
    texts = _real_texts()
    assert len(texts) > 20_000  # a large sample, or the comparison proves little
    non_ascii = [t for t in texts if not t.isascii()]
    assert len(non_ascii) > 50
    expected = _ref_ids(reference, texts)
    mismatches = [(t, e, ours.encode(t, max_length=None)) for t, e in zip(texts, expected)
                  if ours.encode(t, max_length=None) != e]
    assert not mismatches, mismatches[:3]


CORNERS = [
    "", " ", "\t\n\r", "naïve café ÉLAN Ångström", "ΣΟΦΙΑ σοφίας ΟΔΟΣ", "İstanbul DİYARBAKIR", "straße ﬁx",
    "中文字符和日本語のテキスト", "한국어 텍스트", "emoji 🙂👍🏽 text", "zero\u200bwidth\u200djoiner", "a\u00adb soft hyphen",
    "tab\tand\x0bvt\x0cff\x1cfs\x1dgs\x85nel\u2028ls\u3000ideo", "nul\x00and\ufffdreplacement", "[UNK] [PAD][UNK]x",
    "x" * 101, "y" * 100, "don't stop-believing 3.14 $HOME ~user a_b", "«quotes» „low“ ‘single’ — dash … dots",
    "mixed CASE WordPiece Tokenization", "https://example.com/a?b=c&d=e#frag", "def f(x): return x**2  # ok",
    "\u0301leading combining", "ﬀ ﬃ ligatures", "Ⅻ roman ① circled", "𝐛𝐨𝐥𝐝 math", "\u202eRTL override",
]


def test_same_ids_on_unicode_corners(reference, ours):
    for text, expected in zip(CORNERS, _ref_ids(reference, CORNERS)):
        assert ours.encode(text, max_length=None) == expected, text


# Characters assigned since Unicode 3.2: the reference's own Unicode tables are older than
# Python's, and a character one of them does not know cannot be compared.
_OLD = st.characters(codec="utf-8").filter(lambda c: unicodedata.ucd_3_2_0.category(c) not in ("Cn", "Co", "Cs"))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.text(_OLD, max_size=12), st.sampled_from(["foo", "Bar", " ", "##", "é", "[UNK]"])),
                max_size=12).map("".join))
def test_same_ids_on_generated_text(reference, ours, text):
    assert ours.encode(text, max_length=None) == _ref_ids(reference, [text])[0]


def test_bundled_model_matches_model2vec(model_dir):
    model2vec = pytest.importorskip("model2vec", reason="model2vec (the reference implementation) is not installed")
    reference = model2vec.StaticModel.from_pretrained(str(model_dir))
    texts = _real_texts()[::7][:3000] + CORNERS + ["word " * 700, "é" * 5000]
    got = get_embedder(None).encode(texts)
    expected = reference.encode(texts, show_progress_bar=False, use_multiprocessing=False)
    assert got.shape == expected.shape
    assert np.abs(got - expected.astype(np.float32)).max() < 1e-5


def test_truncation_follows_the_tokenizer(ours):
    assert ours.max_length == 512
    assert len(ours.encode("word " * 700)) == 512
    assert len(ours.encode("word " * 700, max_length=None)) == 700


def test_other_tokenizer_families_are_refused_clearly():
    with pytest.raises(UnsupportedTokenizer, match="not a WordPiece"):
        WordPieceTokenizer.from_json({"model": {"type": "BPE", "vocab": {}, "merges": []}})


def test_safetensors_reader_checks_the_layout(tmp_path):
    tensors = read_safetensors(STATIC_MODEL_DIR / "model.safetensors")
    assert tensors["embeddings"].shape == (29525, 256) and tensors["embeddings"].dtype == np.int8
    bad = tmp_path / "bad.safetensors"
    header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    bad.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 8)
    with pytest.raises(ValueError, match="byte range"):
        read_safetensors(bad)
    bad.write_bytes(b"\xff" * 8 + b"{}")
    with pytest.raises(ValueError, match="header length"):
        read_safetensors(bad)


def test_default_embedder_imports_no_tokenizer_package():
    code = ("import sys\nfrom sentinel.embeddings import get_embedder\n"
            "get_embedder(None).encode(['pool leaks sockets'])\n"
            "print(sorted(m for m in ('tokenizers', 'model2vec', 'safetensors', 'huggingface_hub', 'torch') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- the compact pair (wordpiece.json + vocab.txt) the bundled model ships its tokenizer as ----------------------

def _settings(tok: WordPieceTokenizer) -> dict:
    return {k: v for k, v in vars(tok).items() if k not in ("vocab", "_words", "_added_re")}


def test_the_compact_pair_rebuilds_the_tokenizer_json_it_was_made_from(model_dir, tmp_path):
    made = json.loads((STATIC_MODEL_DIR / COMPACT_FILE).read_text(encoding="utf-8"))[MADE_FROM]
    raw = (model_dir / "tokenizer.json").read_bytes()
    assert len(raw) == made["bytes"] == made_from_bytes(STATIC_MODEL_DIR)
    assert hashlib.sha256(raw).hexdigest() == made["sha256"]
    shutil.copy(model_dir / "tokenizer.json", tmp_path / "tokenizer.json")
    write_compact(tmp_path)  # and making the pair again from it gives the shipped files
    for name in (COMPACT_FILE, VOCAB_FILE):
        assert (tmp_path / name).read_bytes() == (STATIC_MODEL_DIR / name).read_bytes()


def test_the_compact_pair_loads_the_tokenizer_tokenizer_json_loads(ours):
    compact = WordPieceTokenizer.from_dir(STATIC_MODEL_DIR)
    assert compact.vocab == ours.vocab and len(compact.vocab) == 29525
    assert _settings(compact) == _settings(ours)
    texts = _real_texts()[::50]
    assert [compact.encode(t) for t in texts] == [ours.encode(t) for t in texts]


def test_the_bundled_model_keeps_the_name_its_index_was_built_with():
    meta = json.loads((ROOT / "sentinel" / "data" / "memory" / "meta.json").read_text(encoding="utf-8"))
    assert get_embedder(None).name == meta["model"]


def test_a_directory_reads_its_compact_pair_before_a_tokenizer_json(model_dir, tmp_path):
    from sentinel.embeddings import StaticEmbedder

    for p in model_dir.iterdir():
        shutil.copy(p, tmp_path / p.name)
    lines = (tmp_path / VOCAB_FILE).read_text(encoding="utf-8").split("\n")
    i, j = lines.index("pool"), lines.index("leak")
    lines[i], lines[j] = lines[j], lines[i]  # two ids swapped in vocab.txt only
    (tmp_path / VOCAB_FILE).write_text("\n".join(lines), encoding="utf-8")
    swapped = StaticEmbedder(tmp_path, "t").tokenizer
    assert swapped.vocab["pool"] == j and swapped.vocab["leak"] == i
    (tmp_path / COMPACT_FILE).unlink()
    plain = StaticEmbedder(tmp_path, "t").tokenizer
    assert plain.vocab["pool"] == i and plain.vocab["leak"] == j


@pytest.mark.parametrize("vocab", ["../vocab.txt", "/etc/hostname", "", "tokens.txt", 7])
def test_a_compact_file_names_the_vocabulary_beside_it_only(tmp_path, vocab):
    data = json.loads((STATIC_MODEL_DIR / COMPACT_FILE).read_text(encoding="utf-8"))
    data["model"]["vocab"] = vocab
    (tmp_path / COMPACT_FILE).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="model.vocab must name vocab.txt beside it"):
        WordPieceTokenizer.from_dir(tmp_path)


def test_a_vocabulary_one_token_a_line_cannot_hold_is_refused(model_dir, tmp_path):
    shutil.copy(STATIC_MODEL_DIR / COMPACT_FILE, tmp_path / COMPACT_FILE)
    (tmp_path / VOCAB_FILE).write_text("[PAD]\n[UNK]\npool\npool\n", encoding="utf-8")
    with pytest.raises(ValueError, match="listed twice"):
        WordPieceTokenizer.from_dir(tmp_path)
    data = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    for vocab, problem in (({"[UNK]": 0, "a\nb": 1}, "line break"), ({"[UNK]": 0, "b": 2}, "0..n-1"),
                           ({"b": 1, "[UNK]": 0}, "0..n-1")):
        data["model"]["vocab"] = vocab
        (tmp_path / "tokenizer.json").write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False),
                                                 encoding="utf-8")
        with pytest.raises(ValueError, match=problem):
            write_compact(tmp_path)
    data["model"]["vocab"] = {"[UNK]": 0, "b": 1}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(ValueError, match="compact form"):
        write_compact(tmp_path)  # a file the pair would not rebuild byte for byte
    data["model"] = {"type": "BPE", "vocab": {"a": 0}, "merges": []}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizer):
        write_compact(tmp_path)
