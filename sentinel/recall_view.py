"""What every surface shows of recall — terminal, markdown (PR comment, job summary), MCP, `memory brief` — built
once, so they all say the same thing: for each group of findings, the similar past fixes (this project's own
first, each with why it was chosen and where its fix comes from), at most one piece of general guidance, and the
recurring patterns, each line saying what it is about. The reporters only typeset these parts (escaping,
colour); they decide nothing about what is shown.
"""

from __future__ import annotations

from sentinel.models import EarlierAttempt, RecallGroup, RecurringPattern, SimilarFix, Verdict
from sentinel.record import Record, factory

SUMMARY_WIDTH = 160
FIX_WIDTH = 200

SOURCE_LABEL = {"project": "this project's past fix", "bundled": "past fix elsewhere", "guidance": "general guidance"}


def shorten(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis (never mid-word)."""
    text = text or ""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "\u2026"


def short_sha(sha: str | None) -> str:
    return (sha or "")[:10]


class Item(Record):
    """One line of recall and its details: kind "fix" (a past fix), "guidance" or "pattern"."""

    kind: str
    label: str  # "this project's past fix", "past fix elsewhere", "general guidance", "recurring"
    headline: str  # what it is: the problem the card describes, or the pattern
    why: str = ""  # why it is shown (placement, mechanism, shared names)
    origin: str = ""  # where the fix comes from: "3f2a1bc 2024-05-02" or "pallets/werkzeug 3f2a1bc"
    fix: str = ""  # how it was fixed
    card_id: str = ""
    score: float | None = None  # the calibrated score of a past fix (guidance and patterns have none)
    url: str | None = None


class Group(Record):
    rule: str
    title: str
    finding_count: int
    items: list[Item] = factory(list)
    hidden: int = 0


def origin(s: SimilarFix) -> str:
    bits = []
    if s.source != "project" and s.repository:
        bits.append(s.repository)
    if s.commit:
        bits.append(short_sha(s.commit))
    if s.date:
        bits.append(s.date[:10])
    return " ".join(bits)


def fix_item(s: SimilarFix) -> Item:
    guidance = s.source == "guidance"
    return Item(kind="guidance" if guidance else "fix", label=SOURCE_LABEL.get(s.source, "past fix"),
                headline=shorten(s.summary, SUMMARY_WIDTH), why=s.why, origin=origin(s),
                fix=shorten(s.fix_strategy, FIX_WIDTH), card_id=s.card_id, score=None if guidance else s.score,
                url=s.url)


def pattern_text(p: RecurringPattern) -> str:
    """What a recurring pattern is about: its signature's readable part (the rule is said separately)."""
    parts = [x for x in p.signature.split("|") if x and x != p.rule]
    return " ".join(parts).strip() or p.rule


def pattern_item(p: RecurringPattern) -> Item:
    seen = f"{p.count} attempt{'' if p.count == 1 else 's'} in {p.changes} change{'' if p.changes == 1 else 's'}"
    res = f"; last resolved in {p.last_resolution}" if p.last_resolution else ""
    return Item(kind="pattern", label="recurring", headline=shorten(f"{p.rule} {pattern_text(p)}", SUMMARY_WIDTH),
                why=f"{p.urgency} urgency: {seen}{res}")


def attempt_item(a: EarlierAttempt) -> Item:
    """An earlier attempt at this change that failed on the same rule: the line it wrote (an approach already
    tried), when and where."""
    import time

    where = f"{a.path}:{a.line}" if a.line else (a.path or "the change")
    more = f" (+{a.findings - 1} more)" if a.findings > 1 else ""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(a.at))
    return Item(kind="attempt", label="tried before", headline=shorten(a.code.strip() or a.message, SUMMARY_WIDTH),
                why=f"tried before ({when}), still failed at {where}{more}")


ATTEMPTS_SHOWN = 3
PATTERNS_SHOWN = 2


def groups(verdict: Verdict, max_groups: int, max_items: int,
           max_patterns: int = PATTERNS_SHOWN) -> tuple[list[Group], int]:
    """(the groups shown, how many more groups there are). Within a group, identical lines are shown once."""
    out = []
    for g in verdict.recall[:max_groups]:
        out.append(group(g, max_items, max_patterns))
    return out, max(0, len(verdict.recall) - max_groups)


def group(g: RecallGroup, max_items: int, max_patterns: int = PATTERNS_SHOWN) -> Group:
    """A group's lines: up to `max_items` past fixes (and guidance), then this change's earlier attempts (the
    newest few), then the recurring patterns; identical lines once."""
    shown: list[Item] = []
    hidden = 0
    seen: set[tuple] = set()
    for limit, items in ((max_items, [fix_item(s) for s in g.similar]),
                         (ATTEMPTS_SHOWN, [attempt_item(a) for a in g.earlier_attempts][::-1]),
                         (max_patterns, [pattern_item(p) for p in g.patterns])):
        kept = []
        for it in items:
            key = (it.kind, it.headline, it.why, it.card_id)
            if key not in seen:
                seen.add(key)
                kept.append(it)
        if kept and kept[0].kind == "attempt":
            kept = kept[:limit][::-1]  # the newest few, shown oldest first
            hidden += max(0, len(items) - len(kept))
        else:
            hidden += max(0, len(kept) - limit)
            kept = kept[:limit]
        shown += kept
    return Group(rule=g.rule, title=shorten(g.title, SUMMARY_WIDTH), finding_count=g.finding_count, items=shown,
                 hidden=hidden)


def headline(verdict: Verdict) -> str:
    """"Experience memory: 2 past fixes of this project, 1 elsewhere, general guidance, 1 recurring pattern"."""
    fixes = [s for g in verdict.recall for s in g.similar]
    mine = sum(1 for s in fixes if s.source == "project")
    other = sum(1 for s in fixes if s.source == "bundled")
    guide = sum(1 for s in fixes if s.source == "guidance")
    pats = sum(len(g.patterns) for g in verdict.recall)
    tried = sum(len(g.earlier_attempts) for g in verdict.recall)
    bits = []
    if mine:
        bits.append(f"{mine} past fix{'' if mine == 1 else 'es'} of this project")
    if other:
        bits.append(f"{other} from other projects")
    if guide:
        bits.append("general guidance")
    if pats:
        bits.append(f"{pats} recurring pattern{'' if pats == 1 else 's'}")
    if tried:
        bits.append(f"{tried} earlier attempt{'' if tried == 1 else 's'} of this change")
    if not mine and not other:
        bits.insert(0, "no similar past fix")
    return "Experience memory: " + ", ".join(bits)
