"""Dedup / merge of near-duplicate cards.

The same fix often lands more than once — a backport, a cherry-pick to a maintenance branch, a revert and its
re-apply, a fix and its follow-up — and would otherwise fill the top results with copies. Two cards are near
duplicates when they share an exact identifier or component and their index layers (summary, signals,
identifiers) overlap by at least THRESHOLD (Jaccard of their terms). The card with the higher confidence stays;
the other's commit joins its provenance references ("commit:<sha>"), so no evidence is lost.
"""

from __future__ import annotations

from sentinel.memory.cards.text import tokenize

THRESHOLD = 0.75
MAX_BLOCK = 200


def _terms(card: dict) -> frozenset[str]:
    tags = card.get("tags", {})
    text = " ".join([card.get("problem_summary", ""), *card.get("signals", []), *tags.get("identifiers", [])])
    return frozenset(tokenize(text))


def _keys(card: dict) -> list[str]:
    tags = card.get("tags", {})
    keys = [f"i:{i.lower()}" for i in tags.get("identifiers", [])[:4]]
    keys += [f"c:{c.lower()}" for c in tags.get("components", [])[:2]]
    return keys


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _conf(card: dict) -> float:
    return float(card.get("quality", {}).get("confidence") or 0.0)


def merge_into(keep: dict, other: dict) -> dict:
    prov = keep.setdefault("provenance", {})
    refs = list(prov.get("references", []))
    sha = other.get("provenance", {}).get("commit")
    for ref in [f"commit:{sha}" if sha else None, *other.get("provenance", {}).get("references", [])]:
        if ref and ref not in refs:
            refs.append(ref)
    prov["references"] = refs[:20]
    # the other fix touched its own files and functions: location-aware recall should find the merged card there
    for key in ("files", "symbols"):
        joined = list(dict.fromkeys([*keep.get("tags", {}).get(key, []), *other.get("tags", {}).get(key, [])]))
        if joined:
            keep.setdefault("tags", {})[key] = joined[:30]
    return keep


def dedup(new: list[dict], existing: list[dict] | None = None,
          threshold: float = THRESHOLD) -> tuple[list[dict], list[dict], int]:
    """(new cards to store, existing cards updated with merged provenance, how many new cards were merged)."""
    existing = existing or []
    pool: list[dict] = list(existing)
    terms = [_terms(c) for c in pool]
    blocks: dict[str, list[int]] = {}
    for i, c in enumerate(pool):
        for k in _keys(c):
            blocks.setdefault(k, []).append(i)
    updated: dict[int, dict] = {}
    kept_new: dict[int, dict] = {}
    merged = 0
    for card in sorted(new, key=lambda c: (-_conf(c), c["id"])):
        t = _terms(card)
        best, best_sim = None, 0.0
        for k in _keys(card):
            for j in blocks.get(k, [])[-MAX_BLOCK:]:
                sim = jaccard(t, terms[j])
                if sim > best_sim:
                    best, best_sim = j, sim
        if best is not None and best_sim >= threshold:
            target = pool[best]
            merge_into(target, card)
            if best < len(existing):
                updated[best] = target
            merged += 1
            continue
        idx = len(pool)
        pool.append(card)
        terms.append(t)
        kept_new[idx] = card
        for k in _keys(card):
            blocks.setdefault(k, []).append(idx)
    return list(kept_new.values()), list(updated.values()), merged
