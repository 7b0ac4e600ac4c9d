"""Checklist QC with a refine loop (at most 3 rounds).

A card passes when the deterministic checklist (docs/card-format.md) finds nothing and it copies no run of
COPY_RUN or more consecutive words from the candidate's commit message, fragment or diff (the card is written in
our own words; identifiers, exception names and short technical terms are fine). A failing card goes back to a
refiner with the list of problems — the deterministic refiner below repairs what it can mechanically, the LLM
standardiser rewrites — and is checked again, at most MAX_ROUNDS times; a card still failing is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sentinel.memory.cards.model import (
    LIMITS,
    check_card,
    file_paths_in,
    long_identifiers,
    own_names,
    project_names_in,
    signal_words,
)
from sentinel.memory.learn.astchange import VAGUE
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.standardise import OWN_WORDS_SOURCES

MAX_ROUNDS = 3
COPY_RUN = 7
# identifiers (snake_case, dotted) are one token: naming the same test or function is not copying prose
_TOKEN = re.compile(r"[a-z0-9_.]*[a-z0-9]")


def _shingles(text: str, n: int = COPY_RUN) -> set[tuple[str, ...]]:
    toks = _TOKEN.findall(text.lower())
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def copied_runs(card: dict, cand: Candidate) -> list[str]:
    """Card fields that repeat COPY_RUN+ consecutive words of the candidate's own texts."""
    source = _shingles("\n".join([cand.subject, cand.body, cand.fragment, cand.source_diff, cand.test_diff]))
    if not source:
        return []
    out = []
    fields = {"problem_summary": card.get("problem_summary", ""), "root_cause": card.get("root_cause", ""),
              "fix_strategy": card.get("fix_strategy", ""),
              "verification.reproduction": card.get("verification", {}).get("reproduction", "")}
    for i, chunk in enumerate(card.get("patch_digest", {}).get("chunks", [])):
        fields[f"patch_digest.chunks[{i}]"] = f"{chunk.get('what', '')} {chunk.get('why', '')}"
    for name, text in fields.items():
        if _shingles(text) & source:
            out.append(f"{name}: copies {COPY_RUN}+ consecutive words of the commit, fragment or diff")
    return out


def visible(card: dict) -> dict:
    """The card without the refiner's private working keys (e.g. the LLM conversation)."""
    return {k: v for k, v in card.items() if not k.startswith("_")}


def problems_of(card: dict, cand: Candidate | None) -> list[str]:
    problems = check_card(visible(card))
    if cand is not None:
        problems += unspecific(card, cand)
        # other projects' material is written in our own words; a project's own history may be quoted
        if card.get("provenance", {}).get("source") in OWN_WORDS_SOURCES:
            problems += copied_runs(card, cand)
    return problems


def unspecific(card: dict, cand: Candidate) -> list[str]:
    """A card must name something the fix's diff changed and say how the code changed (a change kind the AST
    read, or a mechanism); one with neither tells a reader nothing a commit title would not."""
    tags = card.get("tags", {})
    words = set(re.findall(r"[A-Za-z_]\w*", cand.source_diff))
    names = [str(n) for n in tags.get("identifiers", [])]
    out = []
    # a symbol was read from the diff (the function around its lines); an identifier must occur in it
    if not tags.get("symbols") and not any(p in words for n in names for p in n.split(".") if len(p) >= 3):
        out.append("specificity: names no identifier of the fix's diff")
    kinds = [c.get("kind") for c in card.get("patch_digest", {}).get("changes", []) if isinstance(c, dict)]
    if not tags.get("mechanisms") and not [k for k in kinds if k not in VAGUE]:
        out.append("specificity: no mechanism and no change kind of the code")
    return out


def refine_deterministic(card: dict, problems: list[str], cand: Candidate | None) -> dict:
    """Mechanical repairs for the checklist's problems; what it cannot repair stays and fails QC."""
    card = _copy(card)
    repo = card.get("provenance", {}).get("repository")
    summary = card.get("problem_summary", "")
    own = own_names(repo) if card.get("provenance", {}).get("source") == "learned" else set()
    for name in [n for n in project_names_in(summary, repo) if n not in own]:
        summary = re.sub(rf"(?i)(?<![\w-]){re.escape(name)}(?![\w-])", "", summary)
    for path in file_paths_in(summary):
        summary = summary.replace(path, path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    for ident in long_identifiers(summary):
        summary = summary.replace(ident, "a helper")
    summary = re.sub(r"\s+", " ", re.sub(r"\s+([,.])", r"\1", summary)).strip()
    summary = re.sub(r"(?:around|involving)\s*(?:and\s*)?(?=[,.])", "", summary)
    summary = re.sub(r",\s*,", ",", summary).replace(" ,", ",")
    lo, hi = LIMITS["problem_summary"]
    if len(summary) > hi:
        first = summary.split(". ")[0].rstrip(".")
        summary = (first[: hi - 1].rsplit(" ", 1)[0] + ".") if len(first) >= hi else first + "."
    if len(summary) < lo:
        summary = summary.rstrip(".") + " in code changed by a past fix."
    card["problem_summary"] = summary

    signals = []
    for s in card.get("signals", []):
        words = s.split()
        if signal_words(s) > 4:
            s = " ".join(words[:4])
        if signal_words(s) >= 2 and s.lower() not in {x.lower() for x in signals}:
            signals.append(s)
    pads = ["bug fix change", "source code fix", "input edge case", "unexpected behaviour", "regression risk",
            "code path fix", "faulty assumption", "behaviour change", "corrected logic", "defect fix"]
    for pad in pads:
        if len(signals) >= LIMITS["signals"][0]:
            break
        if pad.lower() not in {x.lower() for x in signals}:
            signals.append(pad)
    card["signals"] = signals[: LIMITS["signals"][1]]

    tags = card.setdefault("tags", {})
    comps = [c for c in tags.get("components", []) if c.strip()][: LIMITS["components"][1]]
    tags["components"] = comps or ["core logic"]
    for name in ("root_cause", "fix_strategy"):
        text = card.get(name, "")
        lo, hi = LIMITS[name]
        if len(text) < lo:
            text = (text + " The fix removes the cause in the code that misbehaved, leaving other behaviour "
                           "unchanged.").strip()
        card[name] = text[:hi]
    digest = card.setdefault("patch_digest", {"areas": [], "chunks": []})
    digest["areas"] = [a[:200] for a in digest.get("areas", []) if a][: LIMITS["areas"][1]] or tags["components"][:1]
    chunks = []
    for ch in digest.get("chunks", []):
        what, why = str(ch.get("what", "")).strip(), str(ch.get("why", "")).strip()
        what = re.sub(r"^[-+@]+\s*", "", what)
        if len(what) + len(why) > LIMITS["chunk_chars"]:
            what, why = what[:180], why[: LIMITS["chunk_chars"] - 181]
        if what and why:
            chunks.append({"what": what, "why": why})
    while len(chunks) < LIMITS["chunks"][0]:
        chunks.append({"what": "Keep the other code paths unchanged", "why": "limits the fix to the failing case"})
    digest["chunks"] = chunks[: LIMITS["chunks"][1]]
    ver = card.setdefault("verification", {})
    ver["tests_added"] = [t for t in ver.get("tests_added", []) if t][: LIMITS["tests_added"][1]] or [
        "none in the change: exercise the fixed path by hand"]
    ver["edge_cases"] = list(dict.fromkeys(ver.get("edge_cases", [])))[: LIMITS["edge_cases"][1]]
    if not ver.get("reproduction"):
        ver["reproduction"] = "Exercise the fixed code path with the input from the problem summary."
    if any("copies" in p for p in problems) and cand is not None:
        card = _reword_copied(card, cand)
    return card


def _reword_copied(card: dict, cand: Candidate) -> dict:
    """Drop the copied terms from the summary (they came through the key terms of the problem text) and long
    code quoted from the diff from any field that copies."""
    source = _shingles("\n".join([cand.subject, cand.body, cand.fragment, cand.source_diff, cand.test_diff]))
    text = card.get("problem_summary", "")
    if _shingles(text) & source:
        card["problem_summary"] = re.sub(r", involving [^.;]*", "", text)

    def unquote(value: str) -> str:
        if not _shingles(value) & source:
            return value
        return re.sub(r"`[^`]{25,}`", "the code", value)

    for name in ("problem_summary", "root_cause", "fix_strategy"):
        card[name] = unquote(card.get(name, ""))
    ver = card.get("verification", {})
    if "reproduction" in ver:
        ver["reproduction"] = unquote(ver["reproduction"])
    for chunk in card.get("patch_digest", {}).get("chunks", []):
        chunk["what"], chunk["why"] = unquote(chunk.get("what", "")), unquote(chunk.get("why", ""))
    return card


def _copy(card: dict) -> dict:
    import copy

    return copy.deepcopy(card)


def qc(card: dict, cand: Candidate | None,
       refine: Callable[[dict, list[str], Candidate | None], dict] = refine_deterministic,
       max_rounds: int = MAX_ROUNDS) -> tuple[dict | None, list[str], int]:
    """(the passing card or None, the remaining problems, refine rounds used)."""
    problems = problems_of(card, cand)
    rounds = 0
    while problems and rounds < max_rounds:
        rounds += 1
        card = refine(card, problems, cand)
        problems = problems_of(card, cand)
    return (None if problems else visible(card)), problems, rounds
