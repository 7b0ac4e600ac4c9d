"""`sentinel memory brief`: what an author or a coding agent should know before the next attempt at a change.

- **Earlier attempts** at this change, in order, and what failed in each: the approaches already tried and
  rejected by the gate (the "forbidden approaches": the offending line as written, redacted, file and line).
- **Recurring patterns** of the project (seen in two changes or more), each with up to three examples and what
  the attempt did there (its line, the change's subject).
- **Similar past fixes**: the cards the memory search finds for what failed (this change's latest failure,
  else the project's top patterns).

As data (`Brief.to_json()`), markdown (`to_markdown()`, what the PR comment embeds) and text (`to_text()`).
Everything shown comes from the store, where messages were redacted before they were written.
"""

from __future__ import annotations

import time

from sentinel.memory.hypotheses.signature import mechanism_of
from sentinel.memory.store import Attempt, Pattern
from sentinel.record import Record, factory

PATTERNS = 5
ATTEMPTS = 10


class CardHint(Record):
    card_id: str
    score: float
    summary: str
    fix: str = ""
    source: str = ""

    def to_json(self) -> dict:
        return {"id": self.card_id, "score": self.score, "summary": self.summary, "fix": self.fix,
                "source": self.source}


class Brief(Record):
    project: str
    change_ref: str
    change_id: str
    attempts: list[Attempt] = factory(list)  # this change's attempts, oldest first (failed and passed)
    patterns: list[Pattern] = factory(list)  # the project's recurring patterns
    similar: list[CardHint] = factory(list)
    notes: list[str] = factory(list)

    @property
    def failed_attempts(self) -> list[Attempt]:
        """The failed attempts since the change last passed, oldest first."""
        out: list[Attempt] = []
        for a in self.attempts:
            out = [] if a.outcome == "passed" else out + [a]
        return out

    @property
    def empty(self) -> bool:
        return not self.failed_attempts and not self.patterns and not self.similar

    def to_json(self) -> dict:
        return {"project": self.project, "change": self.change_ref, "change_id": self.change_id,
                "failed_attempts": [a.to_json() for a in self.failed_attempts],
                "recurring_patterns": [p.to_json() for p in self.patterns],
                "similar_fixes": [c.to_json() for c in self.similar], "notes": self.notes}

    def to_text(self) -> str:
        return _render(self, None, None)

    def to_markdown(self, escape, code, heading: str = "###") -> str:
        """Markdown with every stored text passed through the reporter's `escape` / `code` (PR text is
        untrusted: no HTML, no markdown syntax, no @mentions); the caller hands them in, since memory does
        not import the reporters."""
        return _render(self, escape, code, heading=heading)


def _query_for(attempt: Attempt | None, patterns: list[Pattern]) -> tuple[str, str | None] | None:
    if attempt and attempt.findings:
        blocking = [f for f in attempt.findings if f.blocking] or attempt.findings
        rule = blocking[0].rule
        msgs = list(dict.fromkeys(f.message for f in blocking if f.rule == rule))[:3]
        return ". ".join(msgs), rule
    if patterns:
        top = patterns[0]
        return mechanism_of(top.signature), top.rule
    return None


def similar_cards(query: str, rule: str | None, config, root: str | None, k: int = 3) -> tuple[list[CardHint], str]:
    """Cards for `query` through the memory search API; (hints, note when unavailable)."""
    try:
        from sentinel import memory
        from sentinel.memory.cards.index import IndexMissing
    except ImportError as exc:
        return [], f"similar past fixes unavailable: {exc}"
    kwargs = {"config": config} if config is not None else {}
    try:
        index = memory.load_index(root=root)
        hits = list(memory.search(query, k=k, rule=rule, index=index, **kwargs))
        if not hits:
            hits = list(memory.search(query, k=k, index=index, **kwargs))
    except IndexMissing as exc:
        return [], f"similar past fixes unavailable: {exc}"
    out = []
    for h in hits[:k]:
        card = memory.show(h.id, index=index) or {}
        fix = " ".join((card.get("fix_strategy") or "").split())
        out.append(CardHint(h.id, round(float(h.score), 3), h.problem_summary, fix[:240], getattr(h, "source", "")))
    return out, ""


def build_brief(store, project: str, change_id: str, change_ref: str, *, config=None, root: str | None = None,
                with_cards: bool = True, patterns: int = PATTERNS, attempts: int = ATTEMPTS) -> Brief:
    brief = Brief(project, change_ref, change_id)
    brief.attempts = store.attempts(project, change_id, limit=attempts)
    brief.patterns = store.patterns(project, limit=patterns, min_changes=2)
    if with_cards:
        failed = brief.failed_attempts
        q = _query_for(failed[-1] if failed else None, brief.patterns)
        if q:
            brief.similar, note = similar_cards(q[0], q[1], config, root)
            if note:
                brief.notes.append(note)
    return brief


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _render(brief: Brief, escape, code_span, heading: str = "###") -> str:
    markdown = escape is not None

    def esc(text: str) -> str:
        return escape(text, width=1000) if markdown else text

    def code(text: str) -> str:
        return code_span(text, width=300) if markdown else text

    def head(title: str) -> str:
        return f"{heading} {title}" if markdown else f"{title}\n{'-' * len(title)}"

    lines: list[str] = []
    failed = brief.failed_attempts
    lines.append(head(f"Earlier attempts at this change ({esc(brief.change_ref)})"))
    if not failed:
        lines.append("No failed attempt recorded for this change.")
    for n, a in enumerate(failed, 1):
        what = f" — commit {a.commit_sha[:10]}: {esc(a.subject or '')}" if a.commit_sha else ""
        lines.append(f"{n}. attempt of {_when(a.created_at)}{what}: {a.outcome}")
        for f in a.findings[:6]:
            where = f"{f.path}:{f.line}" if f.line else (f.path or "(whole change)")
            tail = f" — tried: {code(f.code)}" if f.code else ""
            lines.append(f"   - {f.rule} {esc(where)}: {esc(f.message[:160])}{tail}"
                         + ("" if f.blocking else " (warning)"))
        if len(a.findings) > 6:
            lines.append(f"   - ... {len(a.findings) - 6} more")
    if failed:
        lines.append("Do not repeat these approaches; each was rejected by the gate.")
    lines.append("")
    lines.append(head("Recurring patterns in this project"))
    if not brief.patterns:
        lines.append("None: no failure has been seen in two changes or more.")
    for p in brief.patterns:
        text = mechanism_of(p.signature)
        res = f"; last resolved in {esc(p.last_resolution)}" if p.last_resolution else ""
        lines.append(f"- [{p.urgency}] {p.rule} in {p.changes} changes ({p.attempts} attempts): {esc(text[:160])}{res}")
        for e in p.examples:
            where = f"{e.path}:{e.line}" if e.line else e.path
            commit = f" ({e.commit_sha[:10]})" if e.commit_sha else ""
            did = f" — {code(e.code)}" if e.code else ""
            subject = f" — “{esc(e.subject[:120])}”" if e.subject else ""
            lines.append(f"  - {esc(e.change)}{commit}: {esc(where)}{did}{subject}")
    lines.append("")
    lines.append(head("Similar past fixes"))
    if not brief.similar:
        lines.append("None found." if not brief.notes else esc(brief.notes[0]))
    for c in brief.similar:
        lines.append(f"- {esc(c.card_id)} ({c.score:.2f}): {esc(c.summary[:200])}")
        if c.fix:
            lines.append(f"  fix: {esc(c.fix)}")
    return "\n".join(lines).rstrip() + "\n"
