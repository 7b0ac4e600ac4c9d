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
