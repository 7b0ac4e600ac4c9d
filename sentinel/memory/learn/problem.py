"""The problem layer in the project's own words: what its news fragment or changelog entry, the issue it closed or
the commit message says went wrong — cleaned of markup and references, never replaced by a template.

Sources, best first: the bug-fix fragment or changelog entry (what the project tells its users); for a pull
request, the issue's title and body; else the commit subject (a squash merge's subject is the PR title) and the
first paragraph of prose in its body. Markup goes (reST roles become the name they show, links their text),
so do issue numbers, people, trailers, URLs and cherry-pick notes; a dotted name under the project's own package
loses the package (`trio.sleep_forever` -> `sleep_forever`).

`summary_safe` makes a summary pass the card checklist without losing what it says: a file path becomes its
module name, an over-long identifier its words, a project name "the library"; at most two sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel.memory.learn.model import Candidate

_ROLE_REF = re.compile(r":(?:issue|issues|pr|pull|user|ghuser|ghissue|bug|commit|ticket|gh|cve|cwe)s?:`[^`]*`",
                       re.IGNORECASE)
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)!?([^`<]*?)(?:\s*<[^>]*>)?`")
_DOUBLE_TICKS = re.compile(r"``([^`]+)``")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)\s]+)\)")
_URL = re.compile(r"<?https?://\S+?>?(?=[\s)\],;]|\.(?:\s|$)|$)")
_REF = re.compile(r"\(\s*(?:#|GH-|gh-)\d+\s*\)|(?<![\w/&])(?:#|GH-|gh-)\d+\b")
_CLOSING = re.compile(r"\b(?:this\s+)?(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see|part of|related to)"
                      r"\s*:?\s*(?:issue\s*)?(?=(?:#|GH-|gh-)\d)", re.IGNORECASE)
_BY = re.compile(r"\s*--\s*by\b[^\n]*|\s+by\s+@[\w-]+|(?<![\w@])@[A-Za-z0-9-]+|[\w.+-]+@[\w-]+\.[\w.-]+")
_TRAILER = re.compile(r"^(?:[A-Z][\w-]*-by|Change-Id|Fixes|Closes|Refs?|See|Issue|Co-authored-by|"
                      r"Signed-off-by|Reviewed-by|Reported-by|Tested-by|Acked-by|Cc|Bug)\s*:.*$",
                      re.IGNORECASE | re.MULTILINE)
_CHERRY = re.compile(r"\(cherry picked from commit [0-9a-f]+\)", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9`\"'(])")
_GENERIC = frozenset("fix fixes fixed fixing bug bugs issue issues test tests typo typos the a an in of for to "
                     "and small minor some error errors problem problems regression wip update updates".split())


@dataclass
class Problem:
    summary: str  # one or two sentences of the project's own description ("" when it has none worth a card)
    detail: str  # the rest of what it says (body prose), for the root cause
    origin: str  # fragment / issue / commit


def clean(text: str, package_words: frozenset[str] = frozenset()) -> str:
    """Prose without markup, references, people, trailers and URLs, on one line."""
    text = _CHERRY.sub(" ", text or "")
    text = _TRAILER.sub(" ", text)
    text = _ROLE_REF.sub(" ", text)
    text = _ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)
    text = _DOUBLE_TICKS.sub(r"`\1`", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    text = _CLOSING.sub(" ", text)
    text = _REF.sub(" ", text)
    text = _BY.sub(" ", text)
    for word in package_words:
        text = re.sub(rf"(?<![\w.]){re.escape(word)}\.(?=[A-Za-z_])", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\(\s*[,;]?\s*\)|\[\s*\]", " ", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", " ".join(text.split()))
    text = re.sub(r"([,;:])(?=[.,;:])", "", text)
    return text.strip(" -*,;:")


_VCS_FOOTER = re.compile(r"^--HG--\s*$|^git-svn-id:|^\[?svn r?\d+\]?", re.MULTILINE)
PROSE_LIMIT = 700


def _prose(body: str) -> str:
    """The prose of a commit body: its paragraphs up to a few hundred characters, a one-line code block as
    inline code; not a list of squashed commits, trailers, tracebacks or version-control footers."""
    m = _VCS_FOOTER.search(body or "")
    body = (body or "")[: m.start()] if m else (body or "")
    out: list[str] = []
    size = 0
    for para in re.split(r"\n\s*\n", body):
        lines = [ln for ln in para.splitlines() if ln.strip()]
        if not lines or all(_TRAILER.match(ln.strip()) for ln in lines):
            continue
        if _BULLET.match(lines[0]) and (out or all(_BULLET.match(ln) for ln in lines)):
            if not out:
                return ""  # a squash merge's list of its commits (and their notes): no description
            break  # the list of squashed commits after the description
        first = lines[0]
        if first.startswith(("    ", "\t")) or first.lstrip().startswith(("```", ">>>", "$ ")):
            code = [ln.strip() for ln in lines if not ln.strip().startswith("```")]
            if out and len(code) == 1 and len(code[0]) <= 80:
                out.append(f"`{code[0]}`")
            continue
        if first.lstrip().startswith("Traceback"):
            continue
        text = " ".join(ln.strip() for ln in lines)
        out.append(text)
        size += len(text)
        if size >= PROSE_LIMIT:
            break
    return " ".join(out)[: PROSE_LIMIT + 200]


def content_words(text: str) -> int:
    return sum(1 for w in re.findall(r"[A-Za-z_][\w.]*", text) if w.lower() not in _GENERIC)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def describe(cand: Candidate, package_words: frozenset[str] = frozenset()) -> Problem:
    subject = clean(re.sub(r"^\s*(?:\[[^\]]{1,40}\]\s*)+", "", cand.subject or ""), package_words)
    body = clean(_prose(cand.body), package_words)
    if body and (body.lower().startswith(subject.lower().rstrip(".")) and len(body) - len(subject) < 12):
        body = ""  # a squash merge repeats its subject as the body
    if cand.origin == "github":
        summary = _sentence(subject)
        return Problem(_join(summary, body), body, "issue")
    fragment = clean(cand.fragment, package_words)
    if fragment and content_words(fragment) >= 2:
        detail = " ".join(x for x in (_sentence(subject) if content_words(subject) >= 3 else "", _sentence(body))
                          if x)
        return Problem(_sentence(fragment), detail, "fragment")
    summary = _sentence(subject) if content_words(subject) >= 1 else ""
    if content_words(subject) < 3 and body:
        summary = _join(summary, body, always=True)
    else:
        summary = _join(summary, body)
    return Problem(summary, _sentence(body), "commit")


def _join(first: str, more: str, always: bool = False) -> str:
    """A summary of the first sentence and, when it is short (or says little: always), the first sentence of
    the rest."""
    if not more:
        return first
    nxt = sentences(more)[0] if sentences(more) else ""
    if first and nxt and (len(first) < 140 or always) and len(first) + len(nxt) < 380:
        return f"{first} {_sentence(nxt)}"
    return first or _sentence(nxt)


def summary_safe(text: str, repository: str | None, limit: int = 400, own_name_ok: bool = True) -> str:
    """The summary made to pass the card checklist (sentinel.memory.cards.model.check_card) with its meaning.
    own_name_ok: the card is of the project's own history, which may name itself."""
    from sentinel.memory.cards.model import (
        HASH_RE,
        URL_RE,
        file_paths_in,
        long_identifiers,
        own_names,
        project_names_in,
    )

    text = _first_sentences(text, 2)
    for path in file_paths_in(text):
        stem = path.rstrip("/").rsplit("/", 1)[-1]
        stem = stem.rsplit(".", 1)[0] if "." in stem else stem
        text = text.replace(path, stem.strip("_") or "module")
    for ident in long_identifiers(text):
        text = text.replace(ident, " ".join(w for w in re.split(r"[_.]+|(?<=[a-z])(?=[A-Z])", ident) if w))
    text = HASH_RE.sub("", text)
    if URL_RE.search(text):
        text = URL_RE.sub("", text)
    for name in project_names_in(text, repository):
        if own_name_ok and name in own_names(repository):
            continue
        text = re.sub(rf"(?<![\w.-]){re.escape(name)}\.(?=[A-Za-z_])", "", text, flags=re.IGNORECASE)  # pkg.name
        text = re.sub(rf"`{re.escape(name)}`|(?<![\w-]){re.escape(name)}(?![\w-])", "the library", text,
                      flags=re.IGNORECASE)
    text = re.sub(r"\s+([,.;:])", r"\1", " ".join(text.split()))
    text = _first_sentences(text, 2)
    if len(text) > limit:
        cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
        text = cut + "…"
    return text


def _first_sentences(text: str, n: int) -> str:
    """The first n sentences as the checklist counts them (sentinel.memory.cards.model.sentence_count)."""
    from sentinel.memory.cards.model import _ABBREV_RE, _SENTENCE_END_RE

    masked = _ABBREV_RE.sub(lambda m: "e" * len(m.group(0)), text)  # same length: positions stay valid
    ends = list(_SENTENCE_END_RE.finditer(masked))
    return text[: ends[n - 1].start() + 1].rstrip() if len(ends) >= n else text
