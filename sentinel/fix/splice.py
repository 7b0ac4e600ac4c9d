"""Edits as character spans of the checked text: applied, turned into whole-line edits and into a unified
diff, each in one pass over the text.

Every fixer says what it changes as ``(start, end, replacement)`` spans of the text as checked, so fixes never
have to be applied one after another to the whole file (which made planning quadratic in the number of
findings: 300 functions with a bare except and a trailing space took 15 s). Spans of different fixes that do
not overlap compose by construction; the planner refuses a fix whose spans overlap another's.
"""

from __future__ import annotations

import bisect
from typing import Iterable

from sentinel.fix.model import Edit

Span = tuple[int, int, str]  # (start, end, replacement) in characters of the checked text


class Lines:
    """The checked text's lines (split on "\\n" only, endings kept) and where each starts."""

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        if starts[-1] == len(text) and len(starts) > 1:
            starts.pop()  # the text ends with a line break: no empty last line
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts) if self.text else 0

    def start(self, n: int) -> int:
        """Offset of line `n` (1-based); one past the last line is the end of the text."""
        return self.starts[n - 1] if n <= len(self.starts) else len(self.text)

    def end(self, n: int) -> int:
        """Offset just past line `n`, its ending included."""
        return self.starts[n] if n < len(self.starts) else len(self.text)

    def line(self, n: int) -> str:
        return self.text[self.start(n):self.end(n)]

    def line_of(self, offset: int) -> int:
        """The 1-based line holding `offset` (the end of the text: the last line)."""
        return max(bisect.bisect_right(self.starts, offset), 1)


def apply(text: str, spans: Iterable[Span]) -> str:
    """`text` with every span replaced; spans must not overlap (insertions at one point keep their order)."""
    out, pos = [], 0
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1])):
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def trimmed(text: str, start: int, end: int, new: str) -> Span:
    """The span `text[start:end]` -> `new` without the characters both share at either end."""
    old = text[start:end]
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return start + head, end - tail, new[head:len(new) - tail]


def difference(before: str, after: str) -> Span:
    """One span that turns `before` into `after` (their common start and end left out)."""
    return trimmed(before, 0, len(before), after)


def line_edits(lines: Lines, spans: list[Span]) -> list[Edit]:
    """Whole-line edits of the checked text for these spans (not overlapping): spans on the same line, or
    joined by a line break one of them removes, become one edit."""
    text = lines.text
    count = len(lines)
    ordered = sorted(spans, key=lambda s: (s[0], s[1]))

    def bounds(span: Span) -> tuple[int, int]:
        start, end, _ = span
        if start == len(text) and (not text or text.endswith("\n")):
            return count + 1, count + 1  # an insertion after the last line
        lo = lines.line_of(start)
        return lo, max(lines.line_of(end - 1), lo) if end > start else lo

    edits: list[Edit] = []
    i = 0
    while i < len(ordered):
        first, last = bounds(ordered[i])
        group = [ordered[i]]
        i += 1
        while True:
            while i < len(ordered) and bounds(ordered[i])[0] <= last:
                group.append(ordered[i])
                last = max(last, bounds(ordered[i])[1])
                i += 1
            begin, stop = lines.start(first), lines.end(last)
            segment = apply(text[begin:stop], ((s - begin, e - begin, new) for s, e, new in group))
            if segment.endswith("\n") or (last >= count and i == len(ordered)):
                break
            if last < count:
                last += 1  # the spans removed this line's break: the next line joins it
            else:  # the last line lost its break: what is inserted after it joins it
                group.extend(ordered[i:])
                i = len(ordered)
        _emit(edits, first, last, _split(text[begin:stop]), _split(segment))
    return edits


def _emit(edits: list[Edit], first: int, last: int, old: list[str], new: list[str]) -> None:
    """The edit replacing lines first..last (`old`) with `new`, without the whole lines both keep."""
    head = 0  # whole lines the spans left as they were (an inserted import before a kept line)
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if head == len(old) == len(new):
        return
    edits.append(Edit(first_line=first + head, last_line=min(last, first + len(old) - 1) - tail,
                      text="".join(new[head:len(new) - tail])))


def _range(start: int, length: int) -> str:
    """A hunk range as difflib writes it (start is 0-based)."""
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def unified_diff(path: str, before: str, after: str, spans: list[Span], context: int = 3) -> str:
    """What ``difflib.unified_diff`` prints for `before` -> `after` (a/`path`, b/`path`), computed from the
    spans that made `after`: linear in the text, however repetitive its lines."""
    if before == after:
        return ""
    old = Lines(before)
    edits = line_edits(old, spans)
    new_lines = _split(after)
    old_lines = _split(before)
    # (first old index, old count, new count) of every replaced run, 0-based.
    runs, shift = [], 0
    for e in edits:
        count = e.last_line - e.first_line + 1
        added = len(_split(e.text))
        runs.append((e.first_line - 1, count, e.first_line - 1 + shift, added))
        shift += added - count
    from sentinel.redact import display_path

    # a name with a tab, a line break or bytes that are not UTF-8 is quoted as git quotes it ("a/c\td.py")
    out = [f"--- {display_path('a/' + path)}\n", f"+++ {display_path('b/' + path)}\n"]
    i = 0
    while i < len(runs):
        j = i
        while j + 1 < len(runs) and runs[j + 1][0] - (runs[j][0] + runs[j][1]) <= 2 * context:
            j += 1
        a0 = max(runs[i][0] - context, 0)
        a1 = min(runs[j][0] + runs[j][1] + context, len(old_lines))
        b0 = a0 + (runs[i][2] - runs[i][0])
        b1 = a1 + (runs[j][2] + runs[j][3] - runs[j][0] - runs[j][1])
        out.append(f"@@ -{_range(a0, a1 - a0)} +{_range(b0, b1 - b0)} @@\n")
        pos = a0
        for k in range(i, j + 1):
            o0, oc, n0, nc = runs[k]
            out.extend(_show(" ", old_lines[pos:o0]))
            out.extend(_show("-", old_lines[o0:o0 + oc]))
            out.extend(_show("+", new_lines[n0:n0 + nc]))
            pos = o0 + oc
        out.extend(_show(" ", old_lines[pos:a1]))
        i = j + 1
    return "".join(out)


def _split(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _show(mark: str, lines: list[str]) -> list[str]:
    return [mark + ln if ln.endswith("\n") else f"{mark}{ln}\n\\ No newline at end of file\n" for ln in lines]
