"""The experience-memory index: build it from governed cards, load it lazily, search and browse it.

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
    norms.npy            float64 (n,) squared length of each stored vector (sentinel.memory.search_small)
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

Search (primitive 1) scores the union of the best candidates by cosine, by BM25 and by exact identifier or
exception match with a calibrated model (sentinel.memory.scoring): the score is an absolute estimate of
relevance, and hits under the threshold are not shown. Browse (primitive 2) returns a whole card.

Cosine candidates are exact below APPROX_MIN_CARDS. Above it a coarse scan over the head dimensions (the
principal axes carry most of the variance) keeps the best RERANK candidates, which are then scored exactly:
about a fifth of the memory traffic of a full scan, with recall of the exact top results measured by
benchmarks/memory_bench.py (search(..., exact=True) forces the full scan).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

from sentinel.digest import sha256  # CPython's own SHA-256: hashlib would load OpenSSL
from sentinel.memory.codemap import norm_path
from sentinel.memory.corpus import SHIPPED_INDEX_DIR
from sentinel.memory.hits import (
    Preview,
    SearchResults,
    provenance_of,
    query_embedder,
    source_of,
    top_signals,
)
from sentinel.memory.text import tokenize
from sentinel.record import Record, factory

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

FORMAT = 3
CARDS_FILE = "cards.bin"
APPROX_MIN_CARDS = 30_000
HEAD_DIMS = 48
RERANK = 2000
BM25_K1 = 1.2
BM25_B = 0.75
INDEX_ENV = "SENTINEL_MEMORY_INDEX"
LOCAL_INDEX_NAME = "memory-index"


class IndexMissing(Exception):
    """No index where one was expected."""


class BuildReport(Record):
    path: str
    count: int
    skipped: list[tuple[str, str, list[str]]] = factory(list)  # (where, id, problems)
    model: str | None = None
    note: str | None = None
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------------------------
# Build

def _canonical(card: dict) -> bytes:
    return (json.dumps(card, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def corpus_digest(cards: list[dict]) -> str:
    """sha256 of the cards' canonical JSON lines: the identity of an index's content."""
    h = sha256()
    for card in cards:
        h.update(_canonical(card))
    return h.hexdigest()


def _lexical_terms(card) -> list[str]:
    return [t for text in card.lexical_fields() for t in tokenize(text)]


def _csr(rows: dict[str, list[int]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    import numpy as np

    keys = sorted(rows)
    indptr = np.zeros(len(keys) + 1, dtype=np.int64)
    for i, k in enumerate(keys):
        indptr[i + 1] = indptr[i] + len(rows[k])
    docs = np.fromiter((d for k in keys for d in rows[k]), dtype=np.int32, count=int(indptr[-1]))
    return keys, indptr, docs


def build_index(cards: list[dict], out_dir: str | Path, embedder: Any = None, *, built_at: str | None = None,
                sources: list[str] | None = None, batch: int = 4096, timings: dict | None = None,
                codemap: dict[str, list[str]] | None = None) -> dict:
    """Write an index of already-checked raw cards to out_dir (replaced atomically). Returns meta.

    embedder None -> a lexical-only index. built_at defaults to SOURCE_DATE_EPOCH or now (UTC).
    timings, when given, receives the seconds spent in each phase. codemap: the project's code map
    (sentinel.memory.codemap), stored beside a learned index so queries can point at the cards' files.
    """
    import numpy as np

    from sentinel.memory.cards import CHECKLIST_VERSION, parse_card

    timings = {} if timings is None else timings
    clock = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[phase] = timings.get(phase, 0.0) + now - clock
        clock = now

    out_dir = Path(out_dir)
    typed = [parse_card(c) for c in cards]
    lap("parse")
    n = len(typed)
    tmp = out_dir.with_name(f".{out_dir.name}.build-{os.getpid()}")
    if tmp.exists():
        _rmtree(tmp)
    tmp.mkdir(parents=True)

    # cards + offsets: canonical JSON (sorted keys) so identical corpora give identical bytes
    offsets = np.zeros(n + 1, dtype=np.int64)
    digest = sha256()
    import zlib

    with open(tmp / CARDS_FILE, "wb") as fh:
        for i, card in enumerate(cards):
            line = _canonical(card)
            blob = zlib.compress(line, 9)
            fh.write(blob)
            digest.update(line)
            offsets[i + 1] = offsets[i] + len(blob)
    np.save(tmp / "offsets.npy", offsets)
    (tmp / "ids.txt").write_text("".join(f"{c.id}\n" for c in typed), encoding="utf-8")
    lap("cards")

    # BM25: document-frequency, lengths, then precomputed per-posting weights
    postings: dict[str, list[int]] = {}
    tfs: dict[str, list[int]] = {}
    lengths = np.zeros(n, dtype=np.float64)
    for row, card in enumerate(typed):
        terms = _lexical_terms(card)
        lengths[row] = len(terms)
        for term, tf in Counter(terms).items():
            postings.setdefault(term, []).append(row)
            tfs.setdefault(term, []).append(tf)
    avgdl = float(lengths.mean()) if n else 0.0
    vocab = sorted(postings)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    for i, term in enumerate(vocab):
        indptr[i + 1] = indptr[i] + len(postings[term])
    docs = np.empty(int(indptr[-1]), dtype=np.int32)
    weights = np.empty(int(indptr[-1]), dtype=np.float32)
    term_max = np.zeros(len(vocab), dtype=np.float32)
    for i, term in enumerate(vocab):
        rows = np.asarray(postings[term], dtype=np.int64)
        tf = np.asarray(tfs[term], dtype=np.float64)
        df = len(rows)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[rows] / (avgdl or 1.0))
        docs[indptr[i]:indptr[i + 1]] = rows
        w = idf * tf * (BM25_K1 + 1.0) / (tf + norm)
        weights[indptr[i]:indptr[i + 1]] = w
        term_max[i] = w.max()
    (tmp / "vocab.txt").write_text("".join(f"{t}\n" for t in vocab), encoding="utf-8")
    np.save(tmp / "post_indptr.npy", indptr)
    np.save(tmp / "post_docs.npy", docs)
    np.save(tmp / "post_weights.npy", weights)
    np.save(tmp / "term_max.npy", term_max)
    lap("bm25")

    # filters
    languages = sorted({c.tags.language.lower() for c in typed})
    lang_code = {lang: i for i, lang in enumerate(languages)}
    np.save(tmp / "lang.npy", np.fromiter((lang_code[c.tags.language.lower()] for c in typed), dtype=np.uint16,
                                          count=n))
    facets: dict[str, list[int]] = {}
    for row, c in enumerate(typed):
        keys = {f"tag:{t.lower()}" for t in (*c.tags.components, *c.tags.exceptions, *c.tags.rules)}
        keys |= {f"rule:{r.upper()}" for r in c.tags.rules}
        mechs, idents = exact_signals(c)
        keys |= {f"mech:{m}" for m in mechs} | {f"ident:{i}" for i in idents}
        keys |= {f"exc:{e.lower().rsplit('.', 1)[-1]}" for e in c.tags.exceptions}
        keys |= {f"file:{norm_path(p)}" for p in c.tags.files}
        for key in sorted(keys):
            facets.setdefault(key, []).append(row)
    fkeys, findptr, fdocs = _csr(facets)
    (tmp / "facet_keys.txt").write_text("".join(f"{k}\n" for k in fkeys), encoding="utf-8")
    np.save(tmp / "facet_indptr.npy", findptr)
    np.save(tmp / "facet_docs.npy", fdocs)
    lap("filters")

    # vectors of the default embedder
    model = dim = head_dims = None
    if embedder is not None:
        vecs = np.zeros((n, embedder.dim), dtype=np.float32)
        texts = [c.index_text() for c in typed]
        for start in range(0, n, batch):
            vecs[start:start + batch] = embedder.encode(texts[start:start + batch])
        rotation = _principal_axes(vecs)
        vecs = np.ascontiguousarray(vecs @ rotation, dtype=np.float32)
        np.save(tmp / "rotation.npy", rotation)
        np.save(tmp / "vectors.npy", vecs)
        # each stored row's squared length, exact in float64: the small scorer's cosine is one distance a card
        np.save(tmp / "norms.npy", np.einsum("ij,ij->i", vecs.astype(np.float64), vecs.astype(np.float64)))
        if n >= APPROX_MIN_CARDS and embedder.dim > HEAD_DIMS:
            head_dims = HEAD_DIMS
            np.save(tmp / "head.npy", np.ascontiguousarray(vecs[:, :head_dims]))
        model, dim = embedder.name, int(embedder.dim)
    lap("vectors")

    if built_at is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        ts = time.gmtime(int(epoch)) if epoch and epoch.isdigit() else time.gmtime()
        built_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", ts)
    meta = {
        "format": FORMAT, "built_at": built_at, "count": n, "model": model, "dim": dim, "head_dims": head_dims,
        "by_source": dict(sorted(Counter(c.provenance.source for c in typed).items())),
        "by_language": dict(sorted(Counter(c.tags.language.lower() for c in typed).items())),
        "languages": languages, "vocab_size": len(vocab), "avgdl": avgdl, "bm25": {"k1": BM25_K1, "b": BM25_B},
        "checklist_version": CHECKLIST_VERSION, "digest": digest.hexdigest(), "sources": sources or [],
    }
    if codemap:
        from sentinel.memory import codemap as codemap_mod

        codemap_mod.write(codemap, tmp)
        meta["codemap_names"] = len(codemap)
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    if old.exists():
        _rmtree(old)
    _INDEXES.pop(str(out_dir.resolve()), None)
    return meta


def exact_signals(card) -> tuple[list[str], list[str]]:
    """A typed card's mechanisms and exact-match identifier keys. Cards written before the taxonomy carry
    none: they are derived from the card's own text (the same code a query goes through)."""
    from sentinel.memory import identifiers, taxonomy

    t = card.tags
    mechs = list(t.mechanisms)
    if not mechs:
        text = " ".join([card.problem_summary, *card.signals, card.root_cause])
        mechs = taxonomy.infer(text, exceptions=t.exceptions, threshold=2.0, limit=3)
    idents = list(t.identifiers)
    if not idents:
        digest = card.patch_digest
        text = " ".join([card.root_cause, card.fix_strategy, *digest.areas,
                         *(f"{c.what} {c.why}" for c in digest.chunks)])
        idents = identifiers.from_text(text, limit=12)
    return mechs, identifiers.normalise(idents)


def build(config: Any = None, root: str | None = None, cards: list[str] | None = None,
          out: str | Path | None = None, lexical_only: bool = False) -> BuildReport:
    """Check every card of the corpus (+ extra_cards), skip the invalid ones, and write the index.

    Default output: the package's shipped index in a source checkout, else the project's own
    <git-dir>/sentinel/memory-index (so extra cards never write into site-packages).
    """
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    from sentinel.memory.corpus import corpus_files, in_source_tree, load_entries

    started = time.perf_counter()
    files = corpus_files(config, root=root, cards=cards)
    entries = load_entries(files)
    valid = [e.raw for e in entries if e.valid]
    skipped = [(e.where, e.card_id, e.problems) for e in entries if not e.valid]
    if out is None:
        local = local_index_dir(root)
        out = SHIPPED_INDEX_DIR if in_source_tree() or local is None else local
    embedder, note = None, None
    if not lexical_only:
        try:
            # The shipped index holds vectors of the default (bundled) model; a project's own build uses the
            # project's configured model so its queries and cards share one vector space.
            shipped = Path(out).resolve() == SHIPPED_INDEX_DIR.resolve()
            embedder = get_embedder(None if shipped else getattr(config, "embeddings", None))
        except EmbedderUnavailable as exc:
            note = f"built lexical only: {exc.reason} ({exc.fix})"
    base = Path(root) if root else Path.cwd()
    shown = []
    for f in files:
        try:
            shown.append(os.path.relpath(f, base) if not os.path.relpath(f, base).startswith("..") else f.name)
        except ValueError:
            shown.append(f.name)
    meta = build_index(valid, out, embedder, sources=shown)
    return BuildReport(path=str(out), count=meta["count"], skipped=skipped, model=meta["model"], note=note,
                       seconds=time.perf_counter() - started)


def _principal_axes(vecs: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the vectors' principal axes, by decreasing variance, with a fixed sign per axis."""
    import numpy as np

    dim = vecs.shape[1]
    if len(vecs) < 2:
        return np.eye(dim, dtype=np.float32)
    x = vecs.astype(np.float64)
    values, axes = np.linalg.eigh(x.T @ x)
    axes = axes[:, np.argsort(-values, kind="stable")]
    signs = np.sign(axes[np.argmax(np.abs(axes), axis=0), np.arange(dim)])
    return (axes * np.where(signs == 0, 1.0, signs)).astype(np.float32)


def _rmtree(path: Path) -> None:
    import shutil

    # only build-temporary and replaced index directories, named by build_index itself
    shutil.rmtree(path, ignore_errors=True)  # sentinel: ignore[SEN103]


# ---------------------------------------------------------------------------------------------------------------
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
        """The array `name` read without numpy (sentinel.memory.npyfile): for lookups and the small scorer."""
        key = "raw:" + name
        arr = self._cache.get(key)
        if arr is None:
            from sentinel.memory import npyfile

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
            from sentinel.memory import codemap

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
        from sentinel.memory.search_small import bm25_bound

        return bm25_bound(self, terms)

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


# ---------------------------------------------------------------------------------------------------------------
# Search and browse

def _matvec(matrix: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """matrix @ vec without BLAS threads: for one query vector a single SIMD pass is as fast as a BLAS call on
    an idle machine, and much faster when the cores are busy (threaded BLAS spins waiting for its helpers)."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vec)


def _top(scores: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
    """Rows of the k best scores (unordered), restricted to allowed rows when given; ties at the k-th score go
    to the lower rows (as in sentinel.memory.search_small), never to whichever a partition left in front."""
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


def _sorted_union(*arrays: np.ndarray) -> np.ndarray:
    """np.union1d of a few small index arrays, without np.unique: its first call imports numpy.ma
    (~10 ms of every failing hook run that recalls)."""
    import numpy as np

    out: set[int] = set()
    for a in arrays:
        out.update(a.tolist())
    return np.fromiter(sorted(out), dtype=np.int64, count=len(out))


def _exact_pool(idx: MemoryIndex, signals, allowed: np.ndarray | None, limit: int) -> np.ndarray:
    import numpy as np

    from sentinel.memory.search_small import identifier_rows

    rows = [np.asarray(r, dtype=np.int64) for r in identifier_rows(idx, signals)]
    if not rows:
        return np.zeros(0, dtype=np.int64)
    pool = _sorted_union(*rows)
    if allowed is not None:
        pool = np.intersect1d(pool, allowed, assume_unique=True)
    return pool[:limit]


def search(query: str, k: int = 10, language: str | None = None, tag: str | None = None,
           rule: str | None = None, *, config: Any = None, index: MemoryIndex | None = None,
           root: str | None = None, candidates: int | None = None, exact: bool = False,
           min_score: float | None = None, signals: Any = None) -> SearchResults:
    """Search over the index layer, scored by the calibrated model; filters narrow the cards before scoring.

    min_score: hits below it are dropped (None: config memory.min_score, else the default threshold; 0 shows
    every candidate). signals: the query's exact signals (QuerySignals); inferred from the text when None.
    Without a usable vector model the search is lexical only and says so (results.mode, results.note).
    A small index is searched in pure Python (sentinel.memory.search_small: same results, no numpy import).
    """
    from sentinel.memory import search_small
    from sentinel.memory.scoring import DEFAULT_MIN_SCORE

    idx = index if index is not None else load_index(root=root)
    mem_cfg = getattr(config, "memory", None)
    if min_score is None:
        min_score = float(getattr(mem_cfg, "min_score", DEFAULT_MIN_SCORE))
    w_e = float(getattr(mem_cfg, "embedding_weight", 0.5))
    k = max(1, int(k))
    if search_small.is_small(idx) and not _FORCE_DENSE:
        try:
            return search_small.search(idx, query, k, language, tag, rule, config=config, candidates=candidates,
                                       min_score=min_score, w_e=w_e, signals=signals)
        except search_small.NeedsDense:
            pass
    return _search_dense(idx, query, k, language, tag, rule, config=config, candidates=candidates, exact=exact,
                         min_score=min_score, w_e=w_e, signals=signals)


# Tests and benchmarks set this to compare the dense scorer with the small one on the same index.
_FORCE_DENSE = False


def _search_dense(idx: MemoryIndex, query: str, k: int, language: str | None, tag: str | None, rule: str | None,
                  *, config: Any, candidates: int | None, exact: bool, min_score: float, w_e: float,
                  signals: Any) -> SearchResults:
    """search() with numpy: every card's BM25 and cosine as arrays (large indexes: a coarse scan first)."""
    import numpy as np

    from sentinel.memory.scoring import load_calibration, query_signals
    from sentinel.memory.search_small import area_rows, exact_matches

    terms = tokenize(query)
    qs = signals if signals is not None else query_signals(query)
    allowed = None
    mask = idx.filter_mask(language, tag, rule)
    empty_mode = "hybrid" if idx.has_vectors else "lexical"
    if mask is not None:
        allowed = np.flatnonzero(mask)
        if allowed.size == 0:
            return SearchResults([], mode=empty_mode, note="no card matches the filters",
                                 model=idx.meta.get("model"), min_score=min_score, signals=qs)
    lex = idx.bm25(terms)
    bound = idx.bm25_bound(terms)
    emb, why_not = (None, "embedding_weight is 0") if w_e <= 0 else query_embedder(idx, config)
    n_cand = candidates or max(50, 5 * k)

    lex_pool = np.flatnonzero(lex > 0)
    if allowed is not None:
        lex_pool = np.intersect1d(lex_pool, allowed, assume_unique=True)
    exact_pool = _exact_pool(idx, qs, allowed, n_cand)
    areas = area_rows(idx, query, qs)
    if emb is not None:
        qvec = idx.rotate(emb.encode([query])[0])
        cand, cosine_of = idx.cosine_candidates(qvec, n_cand, allowed, exact=exact)
        mode, note, model = "hybrid", None, emb.name
    else:
        cand, cosine_of = np.zeros(0, dtype=np.int64), None
        mode, model = "lexical", None
        note = f"lexical only: {why_not}"
    if lex_pool.size:
        cand = _sorted_union(cand, _top(lex, n_cand, lex_pool))
    if exact_pool.size:
        cand = _sorted_union(cand, exact_pool)
    if areas:
        pool = np.fromiter(sorted(areas, key=lambda r: (-areas[r], r))[:n_cand], dtype=np.int64)
        if allowed is not None:
            pool = np.intersect1d(pool, allowed)
        cand = _sorted_union(cand, pool)
    cand = np.asarray(cand, dtype=np.int64)
    if not cand.size:
        if emb is None:
            note += "; no card shares a term with the query"
        return SearchResults([], mode=mode, note=note, model=model, min_score=min_score, signals=qs)
    c_lex = lex[cand]
    c_cos = cosine_of(cand) if cosine_of is not None else None
    ident, exc, mech, matched = exact_matches(idx, qs, cand.tolist())  # one implementation for both scorers
    ident, exc, mech = (np.asarray(v, dtype=np.float64) for v in (ident, exc, mech))
    coverage = np.clip(c_lex.astype(np.float64) / bound, 0.0, 1.0) if bound > 0 else np.zeros(cand.size)
    feats = {"coverage": coverage, "identifiers": ident, "exception": exc, "mechanism": mech}
    if areas is not None:
        feats["area"] = np.minimum(np.fromiter((areas.get(int(r), 0.0) for r in cand), dtype=np.float64,
                                               count=cand.size), 1.0)
    if c_cos is not None:
        feats["cosine"] = np.asarray(c_cos, dtype=np.float64)
    score = load_calibration().probability(feats, lexical=c_cos is None)
    keep = np.flatnonzero(score >= min_score) if min_score > 0 else np.arange(cand.size)
    below = int(cand.size - keep.size)
    order = keep[np.lexsort((cand[keep], -score[keep]))][:k]
    qterms = set(terms)
    out = []
    for j, card in zip(order, idx.cards([int(cand[j]) for j in order])):
        out.append(Preview(
            id=card["id"], score=round(float(score[j]), 4), problem_summary=card["problem_summary"],
            top_signals=top_signals(card.get("signals", []), qterms),
            cosine=None if c_cos is None else round(float(c_cos[j]), 4), bm25=round(float(c_lex[j]), 4),
            language=card.get("tags", {}).get("language", ""), source=source_of(card),
            provenance=provenance_of(card), matched=matched.get(int(j), {}),
            coverage=round(float(coverage[j]), 4),
            features={name: round(float(v[j]), 4) for name, v in feats.items()}))
    if not out and below:
        extra = f"no similar past fix: {below} candidate(s) scored below the threshold {min_score:g}"
        note = f"{note}; {extra}" if note else extra
    return SearchResults(out, mode=mode, note=note, model=model, candidates=int(cand.size), min_score=min_score,
                         signals=qs, below_threshold=below)


def search_memory(query: str, k: int = 10, *, config: Any = None, root: str | None = None,
                  index: MemoryIndex | None = None, project_first: bool = False, **kwargs: Any) -> SearchResults:
    """Search the bundled index (or `index`) and the project's learned cards together, merged by score.

    Scores are calibrated, so hits of both indexes compare directly; with project_first the project's own
    hits above the threshold come before bundled ones (what recall does: this project's history first)."""
    from sentinel.memory.learned_index import learned_index

    base = search(query, k=k, config=config, index=index if index is not None else load_index(root=root),
                  **kwargs)
    project = learned_index(root) if root else None
    if project is None:
        return base
    mine = search(query, k=k, config=config, index=project, **kwargs)
    key = (lambda h: (h.source != "project", -h.score)) if project_first else (lambda h: -h.score)
    seen: set[str] = set()
    merged = []
    for h in sorted([*mine, *base], key=key):
        if h.id not in seen:
            seen.add(h.id)
            merged.append(h)
    note = base.note or mine.note
    if merged and note and "no similar past fix" in note:
        note = None
    return SearchResults(merged[:k], mode=base.mode if base.mode == mine.mode else "mixed", note=note,
                         model=base.model, candidates=base.candidates + mine.candidates, min_score=base.min_score,
                         signals=base.signals, below_threshold=base.below_threshold + mine.below_threshold)


def show(card_id: str, *, index: MemoryIndex | None = None, root: str | None = None) -> dict | None:
    """The whole card (index + resolution layer, provenance, quality), or None."""
    idx = index if index is not None else load_index(root=root)
    row = idx.row_of(card_id)
    return None if row is None else idx.card(row)


def stats(*, index: MemoryIndex | None = None, root: str | None = None) -> dict:
    idx = index if index is not None else load_index(root=root)
    meta = idx.meta
    return {
        "path": str(idx.path), "count": idx.count, "by_source": meta.get("by_source", {}),
        "by_language": meta.get("by_language", {}), "model": meta.get("model"), "dim": meta.get("dim"),
        "built_at": meta.get("built_at"), "vocab_size": meta.get("vocab_size"), "digest": meta.get("digest"),
        "sources": meta.get("sources", []),
    }
