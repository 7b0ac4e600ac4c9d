"""Building an index from governed cards (the layout is described in sentinel.memory.cards.index).

`build_index` writes any list of checked cards; `build` reads the corpus (memory/cards or the shipped cards, plus
extra-cards) for the bundled or the project's own index. A project's learned index is built by the last stage of
learning (sentinel.memory.learn.index).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

from sentinel.digest import sha256  # CPython's own SHA-256: hashlib would load OpenSSL
from sentinel.memory.cards.codemap import norm_path, symbol_key
from sentinel.memory.cards.index import (
    CARDS_FILE,
    FORMAT,
    SHIPPED_INDEX_DIR,
    forget_index,
    local_index_dir,
)
from sentinel.memory.cards.text import tokenize
from sentinel.record import Record, factory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

APPROX_MIN_CARDS = 30_000  # from this many cards on, a head.npy for the coarse scan of approximate search
HEAD_DIMS = 48
BM25_K1 = 1.2
BM25_B = 0.75


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
                codemap: dict[str, list[str]] | None = None, project: bool = False) -> dict:
    """Write an index of already-checked raw cards to out_dir (replaced atomically). Returns meta.

    embedder None -> a lexical-only index. built_at defaults to SOURCE_DATE_EPOCH or now (UTC).
    timings, when given, receives the seconds spent in each phase. codemap: the project's code map
    (sentinel.memory.cards.codemap), stored beside a learned index so queries can point at the cards' files.
    project: the cards are one project's own history (a learned index; implied by a codemap): each card also
    gets its files' share of the project's fixes (heat.npy, and hot.npy: the rows hottest first), the prior a
    search weighs its evidence against.
    """
    import numpy as np

    from sentinel.memory.cards.model import CHECKLIST_VERSION, parse_card

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
        keys |= {f"sym:{symbol_key(s)}" for s in c.tags.symbols if "::" in s}
        for key in sorted(keys):
            facets.setdefault(key, []).append(row)
    if project or codemap is not None:
        _write_heat(tmp, typed, facets)
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
        from sentinel.memory.cards import codemap as codemap_mod

        codemap_mod.write(codemap, tmp)
        meta["codemap_names"] = len(codemap)
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    if old.exists():
        _rmtree(old)
    forget_index(out_dir)
    return meta


HEAT_PRIOR = 20


def _write_heat(tmp: Path, typed: list, facets: dict[str, list[int]]) -> None:
    """heat.npy: per card, the share of the project's cards whose fix touched the card's most-fixed file (0 for a
    card without files), shrunk towards 0 by HEAT_PRIOR cards a project has not had yet — in a history of a few
    fixes every file looks hot; hot.npy: the rows by heat, then newest first. In a project's own history the files
    fixed most often are the likeliest to be fixed again: a query that says little still lands near them."""
    import numpy as np

    n = len(typed) + HEAT_PRIOR
    heat = np.zeros(len(typed), dtype=np.float32)
    for row, c in enumerate(typed):
        counts = [len(facets.get(f"file:{norm_path(p)}", ())) for p in c.tags.files]
        heat[row] = max(counts, default=0) / n
    dates = [c.provenance.date or "" for c in typed]
    order = sorted(range(len(typed)), key=lambda r: (-float(heat[r]), not dates[r], _descending(dates[r]), r))
    np.save(tmp / "heat.npy", heat)
    np.save(tmp / "hot.npy", np.asarray(order, dtype=np.int32))


def _descending(text: str) -> tuple:
    return tuple(-ord(ch) for ch in text)


def exact_signals(card) -> tuple[list[str], list[str]]:
    """A typed card's mechanisms and exact-match identifier keys. Cards written before the taxonomy carry
    none: they are derived from the card's own text (the same code a query goes through)."""
    from sentinel.memory.cards import identifiers
    from sentinel.memory.cards import taxonomy

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
    from sentinel.memory.cards.corpus import corpus_files, in_source_tree, load_entries

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
