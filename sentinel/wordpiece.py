"""BERT WordPiece tokenization in plain Python, as the Hugging Face `tokenizers` package does it.

The bundled static embedding model (``sentinel/data/static-model``) is a lookup table over the
token ids of all-MiniLM-L6-v2's uncased WordPiece tokenizer; applying it needs only the ids.
Loading the `tokenizers` package costs ~30 ms and, with model2vec, drags huggingface-hub and a
dozen more packages into every pre-commit environment, so this module reproduces what its
``BertNormalizer`` + ``BertPreTokenizer`` + ``WordPiece`` pipeline computes from the same
``tokenizer.json``:

1. added tokens with ``normalized: false`` (``[PAD]``, ``[UNK]``...) are matched in the raw text
   first and become their own ids;
2. normalizer: drop NUL, U+FFFD and control characters, turn whitespace into spaces, put spaces
   around CJK ideographs, strip accents (NFD, then drop non-spacing marks) when lower-casing,
   lower-case character by character (no final-sigma rule);
3. pre-tokenizer: split on whitespace and isolate every punctuation character (Unicode P* and
   all ASCII punctuation);
4. WordPiece: greedy longest match with the ``##`` continuation prefix; a word with no match or
   longer than ``max_input_chars_per_word`` characters is one unknown token.

``tests/test_wordpiece.py`` compares the ids with `tokenizers` on a large sample of real text
when that package is installed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

# Rust's char::is_whitespace (the Unicode White_Space property), which `tokenizers` uses. Python's
# str.isspace() also counts U+001C..U+001F, which are control characters there.
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                        "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
# ASCII fast path: after cleaning, a text is runs of [0-9a-z] and single punctuation characters.
_ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_SPACE = re.compile("[\t\n\r]")
_ASCII_WORDS = re.compile(r"[0-9a-z]+|[^ 0-9a-z]")


# A model directory may carry its tokenizer as this pair instead of tokenizer.json: the same settings with
# `model.vocab` naming a file of one token a line (line i is id i, BERT's own vocab.txt format). Reading ~30K tokens
# from lines costs about half of decoding them from tokenizer.json's JSON object (the failing hook loads the
# tokenizer for every recall), and the pair is half tokenizer.json's size. It re-encodes a tokenizer.json without
# loss — tokenizer_json() rebuilds the original bytes, and write_compact refuses one it could not rebuild — and
# records that file's size and SHA-256 (`made_from`): the bundled model's name (sentinel.embeddings) is a
# fingerprint that counts tokenizer.json's size.
COMPACT_FILE = "wordpiece.json"
VOCAB_FILE = "vocab.txt"
MADE_FROM = "made_from"


class UnsupportedTokenizer(ValueError):
    """The tokenizer.json uses a model, normalizer or pre-tokenizer this module does not implement."""


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch)[0] == "C"  # Cc, Cf, Cn, Co, Cs: `is_other` in tokenizers


def _is_cjk(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in _CJK)


def _is_punctuation(ch: str) -> bool:
    if ch.isascii():
        return not ch.isalnum() and not ch.isspace() and ch.isprintable()
    return unicodedata.category(ch)[0] == "P"


class WordPieceTokenizer:
    """Token ids of a BERT-style WordPiece ``tokenizer.json``, without special tokens or padding."""

    def __init__(self, vocab: dict[str, int], unk_token: str = "[UNK]", prefix: str = "##",
                 max_input_chars_per_word: int = 100, lowercase: bool = True, strip_accents: bool | None = None,
                 clean_text: bool = True, handle_chinese_chars: bool = True,
                 added_tokens: dict[str, int] | None = None, max_length: int | None = None):
        self.vocab = vocab
        self.unk_id = vocab.get(unk_token)
        self.prefix = prefix
        self.max_chars = max_input_chars_per_word
        self.lowercase = lowercase
        # `strip_accents: null` follows `lowercase`, as in the BertNormalizer.
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.added = dict(added_tokens or {})
        self._added_re = (re.compile("|".join(re.escape(t) for t in sorted(self.added, key=len, reverse=True)))
                          if self.added else None)
        self.max_length = max_length
        self._words: dict[str, tuple[int, ...]] = {}

    # -- loading --------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        with open(path, encoding="utf-8") as fh:
            return cls.from_json(json.load(fh))

    @classmethod
    def from_dir(cls, path: Path) -> WordPieceTokenizer:
        """The tokenizer of a model directory: from its compact pair when it has one, else its tokenizer.json."""
        if (path / COMPACT_FILE).is_file():
            return cls.from_json(read_compact(path))
        return cls.from_file(path / "tokenizer.json")

    @classmethod
    def from_json(cls, data: dict) -> WordPieceTokenizer:
        model = data.get("model") or {}
        if model.get("type") != "WordPiece":
            raise UnsupportedTokenizer(f"not a WordPiece tokenizer (model type {model.get('type')!r})")
        norm = data.get("normalizer") or {}
        if norm and norm.get("type") != "BertNormalizer":
            raise UnsupportedTokenizer(f"unsupported normalizer {norm.get('type')!r} (only BertNormalizer)")
        pre = data.get("pre_tokenizer") or {}
        if pre.get("type") != "BertPreTokenizer":
            raise UnsupportedTokenizer(f"unsupported pre-tokenizer {pre.get('type')!r} (only BertPreTokenizer)")
        added = {t["content"]: int(t["id"]) for t in data.get("added_tokens") or ()
                 if not t.get("normalized", True) and t.get("content")}
        if any(t.get("normalized", False) for t in data.get("added_tokens") or ()):
            raise UnsupportedTokenizer("unsupported: added tokens matched after normalization")
        trunc = data.get("truncation") or {}
        return cls(model["vocab"], unk_token=model.get("unk_token", "[UNK]"),
                   prefix=model.get("continuing_subword_prefix", "##"),
                   max_input_chars_per_word=int(model.get("max_input_chars_per_word", 100)),
                   lowercase=bool(norm.get("lowercase", False)) if norm else False,
                   strip_accents=norm.get("strip_accents") if norm else False,
                   clean_text=bool(norm.get("clean_text", True)) if norm else False,
                   handle_chinese_chars=bool(norm.get("handle_chinese_chars", True)) if norm else False,
                   added_tokens=added, max_length=trunc.get("max_length"))

    # -- the pipeline ---------------------------------------------------------------------------
    def normalize(self, text: str) -> str:
        if text.isascii():
            if self.clean_text:
                if not text.isprintable():
                    text = _ASCII_SPACE.sub(" ", _ASCII_CONTROL.sub("", text))
            return text.lower() if self.lowercase else text
        out = []
        for ch in text:
            if self.clean_text:
                if ch == "\x00" or ch == "\ufffd" or _is_control(ch):
                    continue
                if ch in _WHITESPACE:
                    ch = " "
            if self.handle_chinese_chars and _is_cjk(ord(ch)):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        text = "".join(out)
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        if self.lowercase:
            # Character by character: str.lower() would apply the final-sigma rule, tokenizers does not.
            text = "".join(c.lower() for c in text) if "\u03a3" in text else text.lower()
        return text

    def pre_tokenize(self, text: str) -> list[str]:
        """Words and single punctuation characters of a normalized text."""
        if text.isascii() and self.clean_text:
            return _ASCII_WORDS.findall(text)  # cleaned: spaces are the only whitespace left
        words: list[str] = []
        current: list[str] = []
        for ch in text:
            if ch in _WHITESPACE:
                if current:
                    words.append("".join(current))
                    current = []
            elif _is_punctuation(ch):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(ch)
            else:
                current.append(ch)
        if current:
            words.append("".join(current))
        return words

    def word_ids(self, word: str) -> tuple[int, ...]:
        hit = self._words.get(word)
        if hit is not None:
            return hit
        ids = self._wordpiece(word)
        if len(self._words) < 200_000:
            self._words[word] = ids
        return ids

    def _wordpiece(self, word: str) -> tuple[int, ...]:
        unk = (self.unk_id,) if self.unk_id is not None else ()
        if len(word) > self.max_chars:
            return unk
        vocab, prefix = self.vocab, self.prefix
        whole = vocab.get(word)
        if whole is not None:
            return (whole,)
        ids: list[int] = []
        start, n = 0, len(word)
        while start < n:
            end = n
            found = None
            while start < end:
                piece = word[start:end]
                if start > 0:
                    piece = prefix + piece
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return unk
            ids.append(found)
            start = end
        return tuple(ids)

    def _encode_plain(self, text: str, out: list[int]) -> None:
        for word in self.pre_tokenize(self.normalize(text)):
            out.extend(self.word_ids(word))

    def encode(self, text: str, max_length: int | None = -1) -> list[int]:
        """Token ids of one text, truncated to ``max_length`` (default: the tokenizer's own)."""
        limit = self.max_length if max_length == -1 else max_length
        ids: list[int] = []
        if self._added_re is not None and self._added_re.search(text):
            pos = 0
            for m in self._added_re.finditer(text):
                self._encode_plain(text[pos:m.start()], ids)
                ids.append(self.added[m.group()])
                pos = m.end()
            self._encode_plain(text[pos:], ids)
        else:
            self._encode_plain(text, ids)
        return ids[:limit] if limit is not None else ids


def has_compact(model_dir: Path) -> bool:
    return (model_dir / COMPACT_FILE).is_file() and (model_dir / VOCAB_FILE).is_file()


def read_compact(model_dir: Path, provenance: bool = False) -> dict:
    """The tokenizer.json data of a directory's compact pair, its vocabulary read back into `model.vocab` (and
    `made_from` dropped unless asked for). Raises ValueError on a pair that does not hold one together."""
    compact = model_dir / COMPACT_FILE
    data = json.loads(compact.read_text(encoding="utf-8"))
    model = data.get("model") if isinstance(data, dict) else None
    name = model.get("vocab") if isinstance(model, dict) else None
    if name != VOCAB_FILE:
        raise ValueError(f"{compact}: model.vocab must name {VOCAB_FILE} beside it, not {name!r}")
    with open(model_dir / VOCAB_FILE, encoding="utf-8", newline="\n") as fh:
        tokens = fh.read().split("\n")
    if tokens[-1] == "":
        tokens.pop()
    vocab = dict(zip(tokens, range(len(tokens))))
    if len(vocab) != len(tokens):
        raise ValueError(f"{model_dir / VOCAB_FILE}: a token is listed twice")
    data["model"] = {**model, "vocab": vocab}
    if not provenance:
        data.pop(MADE_FROM, None)
    return data


def tokenizer_json(model_dir: Path) -> bytes:
    """The tokenizer.json the directory's compact pair was made from, byte for byte (for `tokenizers`, model2vec)."""
    return _encode(read_compact(model_dir))


def made_from_bytes(model_dir: Path) -> int | None:
    """The size of the tokenizer.json a compact pair was made from, read from its small file only."""
    try:
        made = json.loads((model_dir / COMPACT_FILE).read_text(encoding="utf-8")).get(MADE_FROM) or {}
        return int(made["bytes"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _encode(data: dict) -> bytes:
    # The form `tokenizers` writes tokenizer.json in (compact separators, UTF-8 as it is).
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_compact(model_dir: Path) -> None:
    """Write a model directory's compact pair (COMPACT_FILE and VOCAB_FILE) from its tokenizer.json, which the caller
    may then remove. Refuses a tokenizer the pair cannot hold exactly: not WordPiece, ids that are not 0..n-1 in
    order, a token holding a line break, or a file the pair would not rebuild byte for byte."""
    raw = (model_dir / "tokenizer.json").read_bytes()
    data = json.loads(raw)
    WordPieceTokenizer.from_json(data)  # UnsupportedTokenizer for other families (model2vec applies those)
    vocab = data["model"]["vocab"]
    tokens = list(vocab)
    if list(vocab.values()) != list(range(len(tokens))):
        raise ValueError("the vocabulary's ids are not 0..n-1 in file order")
    if any("\n" in t or "\r" in t or not t for t in tokens):
        raise ValueError("a token is empty or holds a line break: one token a line cannot hold it")
    if _encode(data) != raw:
        raise ValueError("tokenizer.json is not in the compact form the pair rebuilds it in")
    from sentinel.digest import sha256

    data["model"] = {**data["model"], "vocab": VOCAB_FILE}
    data[MADE_FROM] = {"bytes": len(raw), "sha256": sha256(raw).hexdigest()}
    (model_dir / VOCAB_FILE).write_text("\n".join(tokens) + "\n", encoding="utf-8", newline="\n")
    (model_dir / COMPACT_FILE).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8",
                                          newline="\n")
