"""Similar past fixes for a group of findings: a thin, precise layer over card search.

Precision first: cards governed with the finding's rule code are relevant by construction
and are searched first; other cards — the project's learned ones first, then the bundled ones —
are added only when their calibrated score clears the threshold (memory.min-score), never to pad
the list.
"""

from __future__ import annotations

import re

_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")


def _query(rule: str, findings, about=None) -> str:
    """`about`: the rule (sentinel.rules.Rule) when the caller knows it — memory does not import the checks."""
    r = about
    parts = [r.name.replace("-", " "), r.summary] if r else [rule]
    for text in dict.fromkeys(f.message for f in findings[:5]):
        parts.append(text)
    for code in dict.fromkeys(f.code for f in findings[:3] if f.code):
        parts.append(code[:120])
    return ". ".join(parts)


def fix_line(card: dict, limit: int = 180) -> str:
    text = " ".join((card.get("fix_strategy") or "").split())
    m = _FIRST_SENTENCE.match(text)
    line = m.group(1) if m else text
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def similar_fixes(rule: str, findings, config, root: str | None = None, about=None):
    """Return (hits with .id .score .problem_summary .fix_line, note or None). `about`: the rule's declaration
    (sentinel.rules.Rule), whose name and summary say what the findings are about."""
    from sentinel.memory.cards.index import IndexMissing, load_index
    from sentinel.memory.cards.index import learned_index
    from sentinel.memory.retrieval.search import search, search_memory, show

    k = max(1, int(config.memory.recall_k))
    try:
        index = load_index(root=root)
    except IndexMissing as exc:
        return [], f"similar past fixes unavailable: {exc}"
    query = _query(rule, findings, about)
    # rule-class cards are relevant by construction: ranked by score, not cut by the threshold
    hits = list(search(query, k=k, rule=rule, config=config, index=index, min_score=0.0))
    note = None
    if len(hits) < k:
        extra = search_memory(query, k=k, config=config, index=index, root=root, project_first=True)
        if extra.note and "no similar past fix" not in extra.note:
            note = extra.note
        seen = {h.id for h in hits}
        for h in extra:
            if h.id not in seen and len(hits) < k:
                hits.append(h)
    project = learned_index(root) if root else None
    for h in hits:
        card = show(h.id, index=project) if h.source == "project" and project is not None else None
        h.fix_line = fix_line(card or show(h.id, index=index) or {})
    return hits, note
