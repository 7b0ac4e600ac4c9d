"""sentinel.wordpiece and the numpy-only static embedder give what `tokenizers` and model2vec give.

The default install has neither package (they pull ~20 more into every pre-commit environment),
so the run-time path reimplements the tokenizer; these tests hold it to the reference on a large
sample of real text — every governed card, every text file of this repository, line by line —
and on generated Unicode text. They skip when the reference packages are absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel.embeddings import STATIC_MODEL_DIR, get_embedder, read_safetensors
from sentinel.wordpiece import UnsupportedTokenizer, WordPieceTokenizer

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER = STATIC_MODEL_DIR / "tokenizer.json"


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
def reference():
    tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (tokenizers) is not installed")
    ref = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    ref.no_truncation()
    return ref


@pytest.fixture(scope="module")
def ours():
    return WordPieceTokenizer.from_file(TOKENIZER)


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


def test_bundled_model_matches_model2vec():
    model2vec = pytest.importorskip("model2vec", reason="model2vec (the reference implementation) is not installed")
    reference = model2vec.StaticModel.from_pretrained(str(STATIC_MODEL_DIR))
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
