"""The experience-memory index on disk, opened lazily: what search reads (sentinel.memory.cards.build writes it).

Layout of an index directory (all written by build_index; numpy arrays are loaded with mmap, so opening an
index costs a few file reads, not a parse of the corpus):

    meta.json            format, build date, embedder name and dims, counts, BM25 parameters, corpus digest
    cards.bin            the cards themselves in index order, each its canonical JSON line compressed on its own
                         (zlib), so browse decompresses single cards and the shipped index stays small
    offsets.npy          int64 byte offset of each card in cards.bin, plus the end
    ids.txt              card ids in index order (read only by show())
    vectors.npy          float32 (n, dim) L2-normalised vectors of the default embedder (absent: lexical only),
                         rotated onto the corpus's principal axes (rotation.npy; cosines are unchanged)
    rotation.npy         float32 (dim, dim) orthonormal rotation applied to card and query vectors
    norms.npy            float64 (n,) squared length of each stored vector (sentinel.memory.retrieval.small)
    head.npy             large corpora only: the first head_dims rotated dimensions, contiguous, for the coarse
                         scan of approximate search (exact re-ranking of its best candidates uses vectors.npy)
    vocab.txt            BM25 terms, line i = term i
    post_indptr.npy      CSR over terms: postings of term i are [indptr[i], indptr[i+1])
    post_docs.npy        int32 card rows
    post_weights.npy     float32 precomputed BM25 weight of (term, card), idf included
    lang.npy             uint16 language code per card (meta.languages)
    term_max.npy         float32 best posting weight of each term: the most a query term can add to BM25
    facet_keys.txt       "tag:<lower>" / "rule:<CODE>" filter keys and the exact-signal keys "ident:<lower>",
                         "exc:<lower>", "mech:<tag>", CSR like the postings
    facet_indptr.npy, facet_docs.npy

Where an index lives: the bundled one in the package (sentinel/data/memory), a project's own build with extra
cards in <git-dir>/sentinel/memory-index, the project's learned cards in <git-dir>/sentinel/learned-index (a
cache of the cards in the store, kept in step with it by sentinel.memory.learn.cache).

Cosine candidates of the dense scorer are exact below build.APPROX_MIN_CARDS. Above it a coarse scan over the
head dimensions (the principal axes carry most of the variance) keeps the best RERANK candidates, which are then scored exactly:
about a fifth of the memory traffic of a full scan, with recall of the exact top results measured by
benchmarks/memory_bench.py (search(..., exact=True) forces the full scan).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

FORMAT = 3
CARDS_FILE = "cards.bin"
RERANK = 2000
INDEX_ENV = "SENTINEL_MEMORY_INDEX"
LOCAL_INDEX_NAME = "memory-index"
LEARNED_INDEX_NAME = "learned-index"
PACKAGE_DIR = Path(__file__).resolve().parent.parent.parent
SHIPPED_INDEX_DIR = PACKAGE_DIR / "data" / "memory"


class IndexMissing(Exception):
    """No index where one was expected."""


# Load

class MemoryIndex:
    """A built index, opened lazily: each part is read the first time a query needs it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        meta_file = self.path / "meta.json"
        try:
            self.meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise IndexMissing(f"no memory index at {self.path} (run: sentinel memory build-index)") from None
        if self.meta.get("format") != FORMAT:
            raise IndexMissing(f"memory index at {self.path} has format {self.meta.get('format')}, expected "
                               f"{FORMAT} (run: sentinel memory build-index)")
        self.count = int(self.meta["count"])
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}

    def _arr(self, name: str):
        """The array `name` read without numpy (sentinel.memory.cards.npyfile): for lookups and the small scorer."""
        key = "raw:" + name
        arr = self._cache.get(key)
        if arr is None:
            from sentinel.memory.cards import npyfile

            arr = self._cache[key] = npyfile.load(self.path / f"{name}.npy")
        return arr

    def _npy(self, name: str) -> np.ndarray:
        import numpy as np

        arr = self._cache.get(name)
        if arr is None:
            file = self.path / f"{name}.npy"
            # mmap: pages are read on first touch, so opening a 135K-card index is a few metadata reads
            if file.stat().st_size > 1 << 16:
                # a plain ndarray view of the map: results of slicing it skip np.memmap's per-op bookkeeping
                arr = np.load(file, mmap_mode="r").view(np.ndarray)
            else:
                arr = np.load(file)
            self._cache[name] = arr
        return arr

    def _lines(self, name: str) -> list[str]:
        lines = self._cache.get(name)
        if lines is None:
            lines = (self.path / name).read_text(encoding="utf-8").splitlines()
            self._cache[name] = lines
        return lines

    @property
    def codemap(self) -> dict[str, list[str]] | None:
        """The project's code map stored with a learned index (None for an index without one)."""
        if "codemap" not in self._cache:
            from sentinel.memory.cards import codemap

            self._cache["codemap"] = codemap.load(self.path) if self.meta.get("codemap_names") else None
        return self._cache["codemap"]

    @property
    def vocab(self) -> dict[str, int]:
        v = self._cache.get("vocab")
        if v is None:
            v = {t: i for i, t in enumerate(self._lines("vocab.txt"))}
            self._cache["vocab"] = v
        return v

    @property
    def has_heat(self) -> bool:
        """A project's own index: each card's files' share of the project's fixes (sentinel.memory.cards.build)."""
        has = self._cache.get("has_heat")
        if has is None:
            has = self._cache["has_heat"] = (self.path / "heat.npy").is_file() and (self.path / "hot.npy").is_file()
        return has

    def heat_of(self, rows: list[int]) -> list[float]:
        data = self._arr("heat").data
        return [float(data[r]) for r in rows]

    def hot_rows(self, n: int) -> list[int]:
        """The n rows whose files the project fixed most often, newest first among equals."""
        return self._arr("hot").data[:n].tolist()

    @property
    def has_vectors(self) -> bool:
        return bool(self.meta.get("model")) and (self.path / "vectors.npy").is_file()

    @property
    def vectors(self) -> np.ndarray:
        return self._npy("vectors")

    def rotate(self, qvec: np.ndarray) -> np.ndarray:
        import numpy as np

        if not (self.path / "rotation.npy").is_file():
            return qvec
        return np.ascontiguousarray(qvec @ self._npy("rotation"), dtype=np.float32)

    def cosine_candidates(self, qvec: np.ndarray, n: int, allowed: np.ndarray | None,
                          exact: bool = False):
        """(rows, cosine_of): the n best rows by cosine among allowed, and a function giving the exact cosine of
        any rows. qvec is already rotated. Large indexes rank a coarse head-dimension scan first and score only
        its RERANK best rows exactly, unless exact."""
        import numpy as np

        head_dims = self.meta.get("head_dims")
        vectors = self.vectors
        pool_size = self.count if allowed is None else allowed.size
        if exact or not head_dims or pool_size <= RERANK:
            cos = _matvec(vectors, qvec)
            return _top(cos, n, allowed), lambda rows: cos[rows]
        coarse = _matvec(self._npy("head"), qvec[:head_dims])
        pool = np.sort(_top(coarse, RERANK, allowed))
        pool_cos = _matvec(vectors[pool], qvec)
        return pool[_top(pool_cos, n, None)], lambda rows: _matvec(vectors[np.asarray(rows)], qvec)

    def row_of(self, card_id: str) -> int | None:
        ids = self._cache.get("id_rows")
        if ids is None:
            ids = {c: i for i, c in enumerate(self._lines("ids.txt"))}
            self._cache["id_rows"] = ids
        return ids.get(card_id)

    def card(self, row: int) -> dict:
        return self.cards([row])[0]

    def cards(self, rows: list[int]) -> list[dict]:
        """Cards by row from cards.bin (one open, one seek and one decompression per card)."""
        import zlib

        offsets = self._arr("offsets").data
        out = []
        with open(self.path / CARDS_FILE, "rb") as fh:
            for row in rows:
                start, end = int(offsets[row]), int(offsets[row + 1])
                fh.seek(start)
                out.append(json.loads(zlib.decompress(fh.read(end - start))))
        return out

    def iter_cards(self):
        yield from iter_card_file(self.path / CARDS_FILE)

    # -- scoring -------------------------------------------------------------------------------------------------

    def bm25(self, terms: list[str]) -> np.ndarray:
        """BM25 of every card for the (deduplicated) query terms."""
        import numpy as np

        vocab = self.vocab
        ids = sorted({vocab[t] for t in terms if t in vocab})
        if not ids:
            return np.zeros(self.count, dtype=np.float32)
        indptr = self._npy("post_indptr")
        docs = self._npy("post_docs")
        weights = self._npy("post_weights")
        out = np.zeros(self.count, dtype=np.float32)
        for i in ids:
            a, b = int(indptr[i]), int(indptr[i + 1])
            # a term's postings hold each card once, so a fancy-index add is exact (no np.add.at needed)
            out[docs[a:b]] += weights[a:b]
        return out

    def doc_freq(self, term: str) -> int:
        """How many cards hold the (tokenized) term in their index layer."""
        i = self.vocab.get(term)
        if i is None:
            return 0
        indptr = self._arr("post_indptr").data
        return indptr[i + 1] - indptr[i]

    def bm25_bound(self, terms: list[str]) -> float:
        """The most BM25 any card could score for these query terms: each distinct known term's best posting
        weight, plus, for each term no card has, the weight of a term found in a single card (an unknown word is
        part of what the query says, and no card says it)."""
        import math

        vocab = self.vocab
        distinct = set(terms)
        known = sorted({vocab[t] for t in distinct if t in vocab})
        unknown = len(distinct) - len(known)
        term_max = self._arr("term_max").data
        bound = math.fsum(term_max[i] for i in known)
        if unknown:
            n = max(self.count, 1)
            bound += unknown * math.log(1.0 + (n - 0.5) / 1.5)
        return bound

    def facet_list(self, key: str) -> memoryview:
        """The rows (ascending) of the cards with a facet key, read without numpy."""
        i = self._facet_index().get(key)
        if i is None:
            return memoryview(b"").cast("i")
        indptr = self._arr("facet_indptr").data
        return self._arr("facet_docs").data[indptr[i]:indptr[i + 1]]

    def _facet_index(self) -> dict[str, int]:
        keys = self._cache.get("facet_index")
        if keys is None:
            keys = {k: i for i, k in enumerate(self._lines("facet_keys.txt"))}
            self._cache["facet_index"] = keys
        return keys

    def facet_rows(self, key: str) -> np.ndarray:
        import numpy as np

        i = self._facet_index().get(key)
        if i is None:
            return np.zeros(0, dtype=np.int32)
        indptr = self._npy("facet_indptr")
        return self._npy("facet_docs")[indptr[i]:indptr[i + 1]]

    def filter_mask(self, language: str | None = None, tag: str | None = None,
                    rule: str | None = None) -> np.ndarray | None:
        import numpy as np

        mask = None
        if language:
            langs = self.meta.get("languages", [])
            code = langs.index(language.lower()) if language.lower() in langs else -1
            mask = self._npy("lang") == code
        for key in ([f"tag:{tag.lower()}"] if tag else []) + ([f"rule:{rule.upper()}"] if rule else []):
            sel = np.zeros(self.count, dtype=bool)
            sel[self.facet_rows(key)] = True
            mask = sel if mask is None else (mask & sel)
        return mask


def iter_card_file(path: str | Path):
    """The cards of an index's cards.bin, in order (the offsets beside it say where each one ends)."""
    import zlib

    import numpy as np

    path = Path(path)
    offsets = np.load(path.with_name("offsets.npy"))
    with open(path, "rb") as fh:
        data = fh.read()
    for i in range(len(offsets) - 1):
        yield json.loads(zlib.decompress(data[int(offsets[i]):int(offsets[i + 1])]))


_INDEXES: dict[str, MemoryIndex] = {}
_INDEX_LOCK = threading.Lock()


def local_index_dir(root: str | None) -> Path | None:
    """<git-dir>/sentinel/memory-index of a project, where a project-specific build (extra cards) goes."""
    if not root:
        return None
    from sentinel.api import cache_dir_for

    cache = cache_dir_for(root)
    return Path(cache) / LOCAL_INDEX_NAME if cache else None


def resolve_index_dir(path: str | Path | None = None, root: str | None = None) -> Path:
    """Explicit path > $SENTINEL_MEMORY_INDEX > the project's own build > the index shipped in the package."""
    if path:
        return Path(path)
    env = os.environ.get(INDEX_ENV)
    if env:
        return Path(env)
    local = local_index_dir(root)
    if local is not None and (local / "meta.json").is_file():
        return local
    return SHIPPED_INDEX_DIR


def load_index(path: str | Path | None = None, root: str | None = None) -> MemoryIndex:
    """The index (cached per process and directory; a rebuilt index is picked up by its meta.json mtime)."""
    where = resolve_index_dir(path, root).resolve()
    key = str(where)
    try:
        stamp = (where / "meta.json").stat().st_mtime_ns
    except FileNotFoundError:
        raise IndexMissing(f"no memory index at {where} (run: sentinel memory build-index)") from None
    with _INDEX_LOCK:
        idx = _INDEXES.get(key)
        if idx is None or idx._cache.get("stamp") != stamp:
            idx = MemoryIndex(where)
            idx._cache["stamp"] = stamp
            _INDEXES[key] = idx
        return idx



def forget_index(path: str | Path) -> None:
    """Drop a loaded index from the per-process cache (its directory was just rebuilt)."""
    _INDEXES.pop(str(Path(path).resolve()), None)


def learned_index_dir(root: str | None) -> Path | None:
    """<git-dir>/sentinel/learned-index: the project's learned cards, built by `sentinel memory learn`."""
    if not root:
        return None
    from sentinel.api import cache_dir_for

    cache = cache_dir_for(root)
    return Path(cache) / LEARNED_INDEX_NAME if cache else None


_REFRESH: list = []  # what checks the learned index against the store of the cards (set_refresher)


def set_refresher(refresh) -> None:
    """`refresh(root, config)` runs before the learned index is read with a config: the layer that knows where
    the cards are stored sets it (sentinel.memory.learn.cache.install); this one knows only the index."""
    _REFRESH[:] = [refresh]


def learned_index(root: str | None, config: Any = None) -> MemoryIndex | None:
    """The project's learned index, or None when it has none. With the project's `config`, the index is first
    checked against the store that holds the cards, and refreshed when behind (one version check, at most once
    per process every few seconds: sentinel.memory.learn.cache.ensure_fresh, once installed)."""
    if config is not None and root and _REFRESH:
        _REFRESH[0](root, config)
    where = learned_index_dir(root)
    if where is None or not (where / "meta.json").is_file():
        return None
    try:
        return load_index(where)
    except IndexMissing:
        return None


# ---------------------------------------------------------------------------------------------------------------
# Array helpers of the dense (numpy) cosine scan

def _matvec(matrix: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """matrix @ vec without BLAS threads: for one query vector a single SIMD pass is as fast as a BLAS call on
    an idle machine, and much faster when the cores are busy (threaded BLAS spins waiting for its helpers)."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vec)


def _top(scores: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
    """Rows of the k best scores (unordered), restricted to allowed rows when given; ties at the k-th score go
    to the lower rows (as in sentinel.memory.retrieval.small), never to whichever a partition left in front."""
    import numpy as np

    if allowed is not None:
        if allowed.size <= k:
            return allowed
        return allowed[_top_positions(scores[allowed], k)]
    if scores.size <= k:
        return np.arange(scores.size)
    return _top_positions(scores, k)


def _top_positions(scores: np.ndarray, k: int) -> np.ndarray:
    import numpy as np

    kth = np.partition(scores, scores.size - k)[scores.size - k]
    above = np.flatnonzero(scores > kth)
    return np.concatenate((above, np.flatnonzero(scores == kth)[:k - above.size]))
