"""What the gate shows at a failure: this project's own past fixes first, placed where the failure is.

For a group of findings (one rule) recall asks, in order:

1. the project's learned cards (and the team's, when the learned index holds them), with the query placed at the
   failing file and definitions (sentinel.memory.retrieval.site): a past fix of the failing function comes first,
   then one of its class, then one of its file — each before the others when it was about the rule's mechanism —
   then the project's other fixes that clear the threshold;
2. the bundled fixes of other projects that clear the threshold;
3. when a slot is still free, one rule card: the rule's general story, labelled as general guidance and never
   shown instead of a past fix that cleared the threshold.

Every hit carries why it was chosen (`why`) and where its fix comes from (commit, date, url). Scores are the
calibrated probabilities of the search (sentinel.memory.retrieval.ranking); every past fix shown cleared its
model's threshold (memory.project-min-score for the project's own, memory.min-score for others'); guidance is not a past fix and carries none of its claims.
"""

from __future__ import annotations

import re

from sentinel.oneline import shorten
from sentinel.record import Record, factory

_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")
GUIDANCE = "guidance"
RULE_CARD = "rule-class"  # provenance.source of the bundled rule stories


class RecallHit(Record):
    """One card recall shows, with why and where from (what sentinel.models.SimilarFix carries)."""

    id: str
    score: float
    problem_summary: str
    fix_line: str = ""
    source: str = "bundled"  # "project", "bundled" or "guidance"
    why: str = ""
    provenance: dict = factory(dict)
    tier: int = 9


def _query(rule: str, findings, about=None, sites=()) -> str:
    """`about`: the rule (sentinel.rules.Rule) when the caller knows it — memory does not import the checks."""
    r = about
    parts = [r.name.replace("-", " "), r.summary] if r else [rule]
    for text in dict.fromkeys(f.message for f in findings[:5]):
        parts.append(text)
    for code in dict.fromkeys(f.code for f in findings[:3] if f.code):
        parts.append(code[:120])
    scopes = list(dict.fromkeys(q for s in sites for q in s.scope[:1]))
    if scopes:
        parts.append("in " + ", ".join(scopes[:3]))
    return ". ".join(parts)


def fix_line(card: dict, limit: int = 180) -> str:
    text = " ".join((card.get("fix_strategy") or "").split())
    m = _FIRST_SENTENCE.match(text)
    return shorten(m.group(1) if m else text, limit)


def _signals(query: str, about, sites):
    from sentinel.memory.cards import taxonomy
    from sentinel.memory.retrieval.signals import query_signals

    names = [*(q for s in sites for q in s.scope[:1]), *(n for s in sites for n in s.names)]
    qs = query_signals(query, extra_identifiers=names)
    declared = [m for m in getattr(about, "mechanisms", ()) if m in taxonomy.BY_TAG]
    qs.mechanisms = list(dict.fromkeys([*declared, *qs.mechanisms]))[:4]
    qs.files = list(dict.fromkeys(s.key_path for s in sites))[:4]
    qs.symbols = list(dict.fromkeys(sym for s in sites for sym in s.symbols()))[:8]
    return qs, declared


def _placed(hit, sites, mechanisms) -> tuple[int, str]:
    """(tier, why) of a project hit: 0-1 the failing definition, 2-3 an enclosing one, 4-5 the file (the even
    tier when the fix was about the rule's mechanism), 6 elsewhere in the project."""
    from sentinel.memory.cards import taxonomy

    matched = hit.matched or {}
    mech = [m for m in matched.get("mechanisms", []) if m in mechanisms]
    same = f"; same mechanism: {taxonomy.label(mech[0])}" if mech else ""
    syms = set(matched.get("symbols", []))
    for s in sites:
        for depth, sym in enumerate(s.symbols()):
            if sym in syms:
                qual = sym.split("::", 1)[1]
                where = f"this function, {qual}" if depth == 0 else f"{qual}, around this code"
                return (0 if depth == 0 else 2) + (0 if mech else 1), f"past fix of {where}{same}"
    if matched.get("files"):
        # a card without symbols (learned before they were recorded) that names the failing definition
        names = {n.lower() for n in matched.get("identifiers", [])}
        for s in sites:
            if s.scope and s.scope[0].lower() in names:
                return (0 if mech else 1), f"past fix of this function, {s.scope[0]}{same}"
        return (4 if mech else 5), f"past fix of this file, {matched['files'][0]}{same}"
    return 6, _matched_why(matched, mechanisms)


def _matched_why(matched: dict, mechanisms) -> str:
    from sentinel.memory.cards import taxonomy

    mech = [m for m in matched.get("mechanisms", []) if m in mechanisms] or matched.get("mechanisms", [])
    idents = matched.get("identifiers", [])
    bits = []
    if mech:
        bits.append(f"same mechanism: {taxonomy.label(mech[0])}")
    if idents:
        bits.append("shares the names " + ", ".join(idents[:3]))
    return "; ".join(bits) or "similar description"


def similar_fixes(rule: str, findings, config, root: str | None = None, about=None, sites=()):
    """(hits: list[RecallHit], note or None) for one group of findings. `about`: the rule's declaration
    (sentinel.rules.Rule: name, summary, mechanisms); `sites`: where the findings are (FailureSite)."""
    from sentinel.memory.cards.index import IndexMissing, learned_index, load_index
    from sentinel.memory.retrieval.search import search

    mem = getattr(config, "memory", None)
    k = max(1, int(getattr(mem, "recall_k", 3)))
    query = _query(rule, findings, about, sites)
    signals, mechanisms = _signals(query, about, sites)
    notes: list[str] = []
    picked: list[RecallHit] = []

    # with the config: checked against the store that holds the learned cards first (one version check)
    project = learned_index(root, config) if root else None
    if project is not None:
        res = search(query, k=max(4 * k, 12), config=config, index=project, signals=signals)
        if res.note and "no similar past fix" not in res.note:
            notes.append(res.note)
        placed = []
        for h in res:
            tier, why = _placed(h, sites, mechanisms)
            placed.append(RecallHit(id=h.id, score=h.score, problem_summary=h.problem_summary, source="project",
                                    why=why, provenance=h.provenance, tier=tier))
        placed.sort(key=lambda h: (h.tier, -h.score, _newest_first(h)))
        picked += placed[:k]
    try:
        bundled = load_index(root=root)
    except IndexMissing as exc:
        bundled = None
        if not picked:
            return [], f"similar past fixes unavailable: {exc}"
    guidance = None
    if bundled is not None:
        if len(picked) < k:
            res = search(query, k=3 * k, config=config, index=bundled, signals=signals)
            if res.note and "no similar past fix" not in res.note and not notes:
                notes.append(res.note)
            for h in res:
                if len(picked) >= k:
                    break
                if h.provenance.get("kind") == RULE_CARD or any(p.id == h.id for p in picked):
                    continue
                picked.append(RecallHit(id=h.id, score=h.score, problem_summary=h.problem_summary,
                                        source="bundled", why=_matched_why(h.matched or {}, mechanisms),
                                        provenance=h.provenance))
        if len(picked) < k:
            stories = search(query, k=3, rule=rule, config=config, index=bundled, min_score=0.0, signals=signals)
            story = next((h for h in stories if h.provenance.get("kind") == RULE_CARD), None)
            if story is not None:
                guidance = RecallHit(id=story.id, score=story.score, problem_summary=story.problem_summary,
                                     source=GUIDANCE, why=f"general guidance for {rule}, not a past fix of this code",
                                     provenance=story.provenance)
    if guidance is not None:
        picked.append(guidance)
    for h in picked:
        index = project if h.source == "project" else bundled
        card = index.card(index.row_of(h.id)) if index is not None and index.row_of(h.id) is not None else {}
        h.fix_line = fix_line(card or {})
    return picked, ("; ".join(notes) or None)


def _newest_first(hit: RecallHit) -> str:
    """A sort key putting the most recent fix first among equals (ISO dates sort as text)."""
    date = hit.provenance.get("date") or ""
    return "".join(chr(0x10FFFF - ord(c)) for c in date[:25])


def similar_for_findings(rule: str, findings, config, root: str | None, about=None):
    """similar_fixes for findings read back from the store (`memory brief`, the MCP brief): they are placed in
    the working tree's current files, which is where the next attempt will be made."""
    return similar_fixes(rule, findings, config, root=root, about=about, sites=worktree_sites(findings, root))


def worktree_sites(findings, root: str | None) -> list:
    """FailureSites of findings with a path and a line, from the working tree's files (inside `root` only)."""
    from sentinel.errors import SentinelError
    from sentinel.filecache import read_files
    from sentinel.languages import detect_language
    from sentinel.memory.retrieval.site import sites
    from sentinel.sources import MAX_FILE_BYTES, inside

    from sentinel.memory.retrieval.site import FailureSite

    if not root:
        return []
    placed = [f for f in findings if getattr(f, "path", None) and getattr(f, "line", None)]
    if not placed:  # known by their files only
        return [FailureSite(path=p) for p in dict.fromkeys(f.path for f in findings if getattr(f, "path", None))][:3]
    out = []
    by_path: dict[str, list] = {}
    for f in placed[:3]:
        by_path.setdefault(f.path, []).append(f)
    for path, fs in by_path.items():
        try:
            full = inside(root, path)
            data = read_files([full], limit=MAX_FILE_BYTES).get(full)
        except (SentinelError, OSError):
            data = None
        text = data.decode("utf-8", "replace") if data is not None else None
        out += sites(fs, text, detect_language(path))
    return out


def hit_json(hit: RecallHit) -> dict:
    """A recall hit as the JSON surfaces (MCP, `memory brief --json`) give it."""
    prov = hit.provenance or {}
    return {"id": hit.id, "score": round(hit.score, 3), "summary": hit.problem_summary, "fix": hit.fix_line,
            "source": hit.source, "why": hit.why, "commit": prov.get("commit"),
            "date": (prov.get("date") or "")[:10] or None, "url": prov.get("url"),
            "repository": prov.get("repository")}
