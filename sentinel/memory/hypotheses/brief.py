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
    """A similar past fix as the brief shows it: the recall hit of the gate (sentinel.memory.retrieval.recall)."""

    card_id: str
    score: float
    summary: str
    fix: str = ""
    source: str = ""
    why: str = ""
    commit: str | None = None
    date: str | None = None
    url: str | None = None
    repository: str | None = None

    def to_json(self) -> dict:
        return {"id": self.card_id, "score": self.score, "summary": self.summary, "fix": self.fix,
                "source": self.source, "why": self.why, "commit": self.commit, "date": self.date, "url": self.url,
                "repository": self.repository}

    def item(self):
        """The line every surface shows for this fix (sentinel.recall_view)."""
        from sentinel import recall_view
        from sentinel.models import SimilarFix

        return recall_view.fix_item(SimilarFix(self.card_id, self.score, self.summary, self.fix, source=self.source,
                                               why=self.why, commit=self.commit, date=self.date, url=self.url,
                                               repository=self.repository))


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


def _findings_for(attempt: Attempt | None, patterns: list[Pattern]) -> tuple[str, list] | None:
    """(rule, the findings to recall for): the latest failed attempt's blocking findings of its first rule, with
    their files and lines (recall places them), else the top pattern's examples."""
    from sentinel.models import Finding, Severity

    if attempt and attempt.findings:
        blocking = [f for f in attempt.findings if f.blocking] or attempt.findings
        rule = blocking[0].rule
        return rule, [Finding(rule=rule, check="", severity=Severity.ERROR, path=f.path or "", line=f.line,
                              message=f.message) for f in blocking if f.rule == rule][:3]
    if patterns:
        top = patterns[0]
        text = mechanism_of(top.signature)
        examples = top.examples or [None]
        return top.rule, [Finding(rule=top.rule, check="", severity=Severity.ERROR,
                                  path=(e.path if e else "") or "", line=e.line if e else None, message=text)
                          for e in examples[:3]]
    return None


def similar_cards(rule: str, findings: list, config, root: str | None, k: int = 3,
                  rules=None) -> tuple[list[CardHint], str]:
    """The gate's own recall for these findings (the same hits, why and origin as a failing run shows);
    (hints, note when unavailable). `rules`: a function returning the rule declarations by code
    (sentinel.checks.rule_index; memory does not import the checks)."""
    try:
        from sentinel.memory.retrieval import recall
    except ImportError as exc:
        return [], f"similar past fixes unavailable: {exc}"
    about = rules().get(rule) if rules is not None else None
    hits, note = recall.similar_for_findings(rule, findings, config, root, about=about)
    out = []
    for h in hits[:k]:
        j = recall.hit_json(h)
        out.append(CardHint(h.id, j["score"], h.problem_summary, h.fix_line, h.source, h.why, j["commit"], j["date"],
                            j["url"], j["repository"]))
    return out, note or ""


def build_brief(store, project: str, change_id: str, change_ref: str, *, config=None, root: str | None = None,
                with_cards: bool = True, patterns: int = PATTERNS, attempts: int = ATTEMPTS, rules=None) -> Brief:
    brief = Brief(project, change_ref, change_id)
    brief.attempts = store.attempts(project, change_id, limit=attempts)
    brief.patterns = store.patterns(project, limit=patterns, min_changes=2)
    if with_cards:
        failed = brief.failed_attempts
        q = _findings_for(failed[-1] if failed else None, brief.patterns)
        if q:
            brief.similar, note = similar_cards(q[0], q[1], config, root, rules=rules)
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
        it = c.item()
        score = f" {it.score:.2f}" if it.score is not None else ""
        origin = f" {esc(it.origin)}" if it.origin else ""
        lines.append(f"- {esc(it.label)}{origin} [{esc(it.card_id)}{score}]: {esc(it.headline)}")
        if it.why:
            lines.append(f"  why: {esc(it.why)}")
        if it.fix:
            lines.append(f"  fix: {esc(it.fix)}")
    return "\n".join(lines).rstrip() + "\n"
