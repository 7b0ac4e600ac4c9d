"""Commit message / PR body handling: git's comment stripping and masking of text that is not a claim.

Masking replaces text that is not the author's own assertion about this change with spaces of the same
length, so claim patterns never match inside it and the positions of everything else (line numbers in
findings) stay those of the message. Not the author's assertion about this change:

- quoted or code text: code spans, fenced and indented blocks, quotes, `>` block quotes, URLs, and the HTML
  blocks that carry text from elsewhere (`<blockquote>`, collapsed `<details>`: a dependency bot's release notes
  and commit lists, a pasted log);
- text a bot wrote: the body of a message signed off by a `[bot]` account (a dependency bump quoting the
  upstream's release notes), whose subject alone says what the change is;
- attributions and references: trailers (`Co-authored-by:`, `Signed-off-by:`...), `This reverts commit <sha>`,
  `(cherry picked from commit <sha>)`, the subject of a reverted commit (`Revert "..."`);
- history: the commit list of a squash merge (GitHub's `* subject` paragraphs, one per commit of the pull
  request, or git's `Squashed commit of the following:`), the commit list of a merge (`merge.log`), and lists
  of other commits (lines that start with a commit hash). A squash body of a single commit is that commit's
  message: only its bullet, the title repeated, is masked.
"""

from __future__ import annotations

import re

from sentinel.intent import lazy_re

MESSAGE_PATH = "COMMIT_MSG"  # pseudo-path of findings about the message

# A fence opens a block up to the same fence or the end of the text (a fence on the last line opens nothing).
_FENCE_LINE = lazy_re(r"[ \t]{0,3}(`{3,}|~{3,})")
_BACKTICKS = lazy_re(r"`+")
# Straight double quotes and typographic quotes; single quotes only when they clearly open and close
# a quotation (not an apostrophe as in "it's").
_QUOTES = lazy_re(r"\"[^\"\n]{1,300}\"|\u201c[^\u201d\n]{1,300}\u201d|\u2018[^\u2019\n]{1,300}\u2019"
                     r"|(?<![\w'])'[^'\n]{1,300}'(?![\w'])")
_BLOCKQUOTE = lazy_re(r"^[ \t]*>.*$", re.M)
_URL = lazy_re(r"\b(?:https?|ftp)://\S+")
# Trailers (Signed-off-by:, Co-authored-by:, Reviewed-by:...) are attributions, not claims.
_TRAILER = lazy_re(r"^[A-Z][A-Za-z0-9-]*-by:.*$|^(?:Change-Id|Cc|Bug|Link|Ref|Refs):.*$", re.M)
_INDENTED_CODE = lazy_re(r"(?:^(?: {4}|\t)[^\n]*\n?)+", re.M)
# HTML elements whose content is someone else's text: quoted release notes, collapsed logs and commit lists.
_HTML_QUOTING = lazy_re(r"<(/?)(blockquote|details)\b[^>]*>", re.I)
# A sign-off by a bot account (dependabot[bot], renovate[bot], pre-commit-ci[bot]): the message is generated.
_BOT_SIGNOFF = lazy_re(r"^Signed-off-by:[^\n<]*\[bot\]", re.M | re.I)


def clean_commit_message(text: str, comment_char: str = "#") -> str:
    """What git keeps of an edited message (cleanup=strip): comment lines and the scissors section removed.

    Comment lines become empty lines instead of disappearing so that line numbers in findings are the
    lines of the file the author is editing.
    """
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    out: list[str] = []
    scissors = f"{comment_char} ------------------------ >8 ------------------------"
    for line in lines:
        if line.rstrip() == scissors:
            break
        out.append("" if comment_char and line.startswith(comment_char) else line.rstrip())
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _mask_fences(text: str) -> str:
    """Fenced code blocks blanked, in one pass over the lines (a regex with a back-reference to the fence
    backtracks over a long run of backticks or tildes: quadratic on a hostile message)."""
    lines = text.split("\n")
    fence = None
    for i, line in enumerate(lines):
        m = _FENCE_LINE.match(line)
        if fence is None:
            if m is not None and i + 1 < len(lines):
                fence = m.group(1)
                lines[i] = _spaces(line)
        else:
            lines[i] = _spaces(line)
            if m is not None and m.group(1) == fence and not line[m.end():].strip(" \t"):
                fence = None
    return "\n".join(lines)


def _mask_code_spans(text: str) -> str:
    """Code spans blanked: a run of backticks up to the next run of the same length on the same line
    (CommonMark's rule), found with one scan of the runs — linear on a line of a thousand backticks."""
    out = []
    for line in text.split("\n"):
        runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)] if "`" in line else []
        if len(runs) < 2:
            out.append(line)
            continue
        following: dict[int, int] = {}  # run index -> index of the next run of the same length
        last: dict[int, int] = {}
        for j in range(len(runs) - 1, -1, -1):
            size = runs[j][1] - runs[j][0]
            if size in last:
                following[j] = last[size]
            last[size] = j
        pieces, pos, j = [], 0, 0
        while j < len(runs):
            k = following.get(j)
            if k is None:
                j += 1
                continue
            start, end = runs[j][0], runs[k][1]
            pieces.append(line[pos:start])
            pieces.append(" " * (end - start))
            pos, j = end, k + 1
        pieces.append(line[pos:])
        out.append("".join(pieces))
    return "\n".join(out)


def _mask_body(text: str) -> str:
    """Everything after the subject line blanked."""
    subject, sep, body = text.partition("\n")
    return subject + sep + re.sub(r"[^\n]", " ", body)


def _mask_html_quoting(text: str) -> str:
    """`<blockquote>` and `<details>` elements blanked from their opening tag to the matching closing one (nesting
    counted; an element left open runs to the end of the text), in one pass over the tags."""
    pieces, pos, depth, start = [], 0, 0, 0
    for m in _HTML_QUOTING.finditer(text):
        if not m.group(1):
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                pieces.append(text[pos:start])
                pieces.append(re.sub(r"[^\n]", " ", text[start:m.end()]))
                pos = m.end()
    if depth:
        pieces.append(text[pos:start])
        pieces.append(re.sub(r"[^\n]", " ", text[start:]))
        pos = len(text)
    pieces.append(text[pos:])
    return "".join(pieces)


def _spaces(text: str) -> str:
    return " " * len(text)


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def mask_message(text: str) -> str:
    """The message with everything that is not the author's claim about this change replaced by spaces
    (same length, same lines)."""
    if not text:
        return ""
    text = mask_history(text.replace("\r\n", "\n"))
    if "[bot]" in text and _BOT_SIGNOFF.search(text):
        text = _mask_body(text)
    if "<" in text:
        text = _mask_html_quoting(text)
    # Each pattern runs (and is compiled) only when its marker is in the text at all.
    if "```" in text or "~~~" in text:
        text = _mask_fences(text)
    if "\n    " in text or "\n\t" in text:
        text = _INDENTED_CODE.sub(_indented_code, text)
    if "`" in text:
        text = _mask_code_spans(text)
    if "://" in text:
        text = _URL.sub(_blank, text)
    if any(q in text for q in "\"'\u201c\u2018"):
        text = _QUOTES.sub(_blank, text)
    if ">" in text:
        text = _BLOCKQUOTE.sub(_blank, text)
    if ":" in text:
        text = _TRAILER.sub(_blank, text)
    return text


# GitHub's squash body: one paragraph per commit of the pull request, starting "* <subject>" at column 0.
_SQUASH_BULLET = lazy_re(r"^\* \S")
_SEPARATOR = lazy_re(r"^-{3,}\s*$")  # GitHub puts it between the commit list and the co-author trailers
_PR_REF = lazy_re(r"\s*\((?:[\w.-]+/[\w.-]+)?#\d+\)\s*$")
# A line that lists another commit by its hash (at least one digit: not a word made of the letters a-f).
_COMMIT_LINE = lazy_re(r"^[ \t]*(?:[-*+][ \t]+)?(?=[0-9a-f]{0,39}[0-9])[0-9a-f]{7,40}\b[ \t:-]+\S.*$", re.M)
_REFERENCE_LINE = lazy_re(r"^[ \t]*(?:This reverts commit [0-9a-f]{7,40}\b.*"
                          r"|\(cherry picked from commit [0-9a-f]{7,40}\))[ \t]*$", re.M | re.I)
# git's merge.log: "* 'branch' of url:" (or "* branch:") followed by the merged subjects, indented.
_MERGE_LOG = lazy_re(r"^\* (?:'[^'\n]+'|[\w./-]+)(?: of \S+)?:[ \t]*\n(?:[ \t]+\S.*(?:\n|$)|[ \t]*\.\.\..*(?:\n|$))+",
                     re.M)
_REVERT_TITLE = lazy_re(r'^(Revert\s+)(".*")(.*)$')


def _normal_subject(text: str) -> str:
    return " ".join(_PR_REF.sub("", text).lower().split()).rstrip(".")


def _blank_lines(lines: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        lines[i] = " " * len(lines[i])


def mask_history(text: str) -> str:
    """Blank what the message quotes of other commits: squash and merge commit lists, reverted subjects,
    hash-led commit lists, revert / cherry-pick / squash references (same length, same lines)."""
    lines = text.split("\n")
    title = _REVERT_TITLE.match(lines[0]) if lines[0].startswith("Revert") else None
    if title:  # Revert "Speed up X" / Revert "Revert "Speed up X"": the reverted subject is not a claim
        lines[0] = title.group(1) + " " * len(title.group(2)) + title.group(3)
    _mask_squash(lines)
    squashed = next((i for i, line in enumerate(lines) if line.strip().lower() == "squashed commit of the following:"),
                    None)
    if squashed is not None:  # git merge --squash: the rest is the squashed commits' log
        _blank_lines(lines, squashed, len(lines))
    text = "\n".join(lines)
    if "* " in text and ":" in text:
        text = _MERGE_LOG.sub(_blank, text)
    if re.search(r"[0-9a-f]{7}", text):
        text = _REFERENCE_LINE.sub(_blank, text)
        text = _COMMIT_LINE.sub(_blank, text)
    return text


def _mask_squash(lines: list[str]) -> None:
    """A squash merge's body lists the pull request's commits: history, not claims about the change."""
    first = next((i for i in range(1, len(lines)) if lines[i].strip()), None)
    if first is None or not _SQUASH_BULLET.match(lines[first]):
        return  # GitHub's squash body starts with the first commit's bullet
    end = next((i for i in range(first, len(lines)) if _SEPARATOR.match(lines[i])), len(lines))
    bullets = [i for i in range(first, end)
               if _SQUASH_BULLET.match(lines[i]) and (i == first or not lines[i - 1].strip())]
    repeats_title = _normal_subject(lines[first][2:]) == _normal_subject(lines[0])
    if len(bullets) >= 2:
        _blank_lines(lines, first, end)  # several commits: their subjects and bodies are the PR's history
    elif repeats_title or end < len(lines):
        _blank_lines(lines, first, first + 1)  # one commit: its body is the change's description


def _indented_code(match: re.Match) -> str:
    # Markdown treats 4-space indented lines as code only after a blank line; a list item's
    # continuation is also indented, so keep indented bullets and prose that follows prose.
    block = match.group(0)
    if re.search(r"^\s*(?:[-*+]|\d+[.)])\s", block, re.M):
        return block
    start = match.start()
    before = match.string[:start]
    if before and not before.endswith("\n\n") and before.strip():
        return block
    return _blank(match)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
