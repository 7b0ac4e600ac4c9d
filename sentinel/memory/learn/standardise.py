"""The deterministic offline standardiser: a governed card from a candidate, with no model.

It reads facts, not prose: the exception types named in the problem text and the fix, identifiers the text and
the diff share, the components (from the changed source files), the mechanism the cues point at (the taxonomy),
what the diff does (guards, handlers, conversions, locks, conditions... from its added and removed lines), the
tests the fix added, and 2-3 word technical terms of the problem text. The card is then written from templates in
our own words: no sentence of the commit message, fragment or diff is copied (QC checks it), only identifiers,
exception names and short technical terms. How much the facts support the card is its `confidence`.
"""

from __future__ import annotations

import re
from collections import Counter

from sentinel.memory.cards import identifiers as ids
from sentinel.memory.cards import taxonomy
from sentinel.memory.cards.text import STOP_WORDS
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.paths import component_of
from sentinel.memory.learn.purify import _strip_refs

STANDARDISER = "deterministic"
GOVERNED_BY = "sentinel memory learn (deterministic standardiser)"
_LANG = {"py": "python", "pyx": "cython", "pxd": "cython", "pyi": "python", "js": "javascript", "mjs": "javascript",
         "cjs": "javascript", "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "go": "go", "rs": "rust",
         "java": "java", "kt": "kotlin", "rb": "ruby", "php": "php", "c": "c", "h": "c", "cc": "c++", "cpp": "c++",
         "hpp": "c++", "cs": "c#", "swift": "swift", "sh": "shell", "sql": "sql", "scala": "scala", "lua": "lua"}
_RAISE = re.compile(r"^\s*raise\s+([A-Z]\w+)", re.MULTILINE)
_EXCEPT = re.compile(r"^\s*except\s+\(?([A-Z]\w+(?:\s*,\s*[A-Z]\w+)*)", re.MULTILINE)
_RAISES = re.compile(r"raises\(\s*([A-Z]\w+)")
_BUILTIN_EXC = re.compile(r"(?:Error|Exception|Warning|Exit|Interrupt|StopIteration|StopAsyncIteration)$")
_PHRASE_SPLIT = re.compile(r"[,;:()\[\]\n.!?`'\"]+|\s+(?:and|or|but|because|when|while|so|then|which|that|if|"
                           r"with|without|for|from|into|on|in|of|to|by|as|at)\s+", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9+#'-]*")
_SYMPTOM_RULES = (
    ("hang", re.compile(r"\bhang|\bdeadlock|\binfinite|\bstuck|\bfreez|never (?:returns|finishes)", re.I)),
    ("leak", re.compile(r"\bleak|\bunclosed|\bnot (?:closed|released)|resourcewarning", re.I)),
    ("warning", re.compile(r"\bwarning|\bwarns?\b", re.I)),
    ("slow", re.compile(r"\bslow|\bperformance|\bquadratic|\bmemory usage", re.I)),
    ("crash", re.compile(r"\bcrash|\btraceback|\bsegfault|\bexception\b|\braised?\b|\bfails? with", re.I)),
    ("message", re.compile(r"\berror message|\bmessage\b|\bconfusing|\bunclear", re.I)),
    ("regression", re.compile(r"\bregression|\bno longer|\bused to\b|\bbroke\b|\bbroken\b", re.I)),
)
_SYMPTOM_TEXT = {
    "hang": ("A hang or endless loop", "process hangs", "never terminates"),
    "leak": ("A resource leak", "resource leak", "missing cleanup"),
    "warning": ("A spurious or missing warning", "unexpected warning", "warning behaviour"),
    "slow": ("Needlessly slow or memory-hungry behaviour", "slow operation", "wasted work"),
    "crash": ("An unexpected exception", "unexpected exception", "crash on input"),
    "message": ("A misleading error report", "misleading error message", "error reporting"),
    "regression": ("A regression", "behaviour regression", "previously working case"),
    "wrong": ("Incorrect behaviour", "incorrect result", "wrong behaviour"),
}
_EDGE = {
    "none-missing-value": ["value is None or absent", "empty mapping or missing key"],
    "off-by-one": ["first and last element", "length exactly at the limit"],
    "bytes-str-encoding": ["non-ASCII text", "bytes given where text is expected"],
    "mutable-shared-state": ["two calls or instances in a row", "caller mutates the returned object"],
    "async-cancellation": ["task cancelled mid-operation", "timeout while awaiting"],
    "resource-leak": ["error raised before close", "many repeated uses"],
    "race-concurrency": ["two threads at once", "interleaved tasks"],
    "time-zone": ["naive versus aware datetime", "daylight saving transition"],
    "path-handling": ["Windows separators", "relative path and symlink"],
    "exception-handling": ["error raised inside the handler", "nested failure"],
    "type-handling": ["subclass of the expected type", "int where float is expected"],
    "parsing-escaping": ["quotes and special characters", "leading or trailing whitespace"],
    "stale-cache": ["data changed after first use", "cache reused across inputs"],
    "ordering-determinism": ["different iteration order", "duplicate entries"],
    "hang-recursion": ["self-referencing input", "very deep input"],
    "compat-version": ["oldest supported version", "other platform"],
    "config-option-ignored": ["option set explicitly", "option left at default"],
    "numeric-precision": ["very large values", "fractional values"],
    "lifecycle-reuse": ["use after close", "second use of the same object"],
    "signature-arguments": ["keyword-only arguments", "extra positional arguments"],
    "inheritance-override": ["subclass overriding the method", "mixin order"],
    "performance": ["large input", "many repeated calls"],
    "http-status-retry": ["retry after 429 or 5xx", "timeout on the first attempt"],
    "empty-input": ["empty string", "empty collection"],
    "equality-hashing": ["equal but not identical objects", "objects used as dict keys"],
    "warning-noise": ["warnings turned into errors", "repeated warning"],
}
# What a diff does, recognised from its added (+) and removed (-) lines: (name, added-side regex, what, why).
_ACTIONS = (
    ("guard", r"\bif\b[^\n]*\b(?:is None|is not None|not \w+:)|\.get\(|\bor \{\}|\bor \[\]",
     "adds a guard for an absent or None value", "the code assumed the value was always there"),
    ("handler", r"^\s*except\b", "adds or widens an exception handler", "the failure escaped to the caller"),
    ("raise", r"^\s*raise\s+[A-Z]\w+", "raises a specific error for the bad case",
     "bad input was not reported where it starts"),
    ("encoding", r"\.encode\(|\.decode\(|\bencoding\s*=", "converts between bytes and text explicitly",
     "bytes and text were mixed or decoded with the wrong codec"),
    ("lock", r"\bLock\(|\bRLock\(|\bwith self\.\w*lock", "serialises access with a lock",
     "concurrent callers interleaved on shared state"),
    ("cleanup", r"\.close\(\)|^\s*finally:|\.release\(\)", "releases the resource on every path",
     "an early return or error skipped the cleanup"),
    ("copy", r"\.copy\(\)|\bdeepcopy\(|\bcopy\.copy\(", "copies the object instead of sharing it",
     "a shared mutable object was changed by another user"),
    ("order", r"\bsorted\(|\.sort\(", "makes the order explicit", "the result depended on iteration order"),
    ("typecheck", r"\bisinstance\(", "checks the value's type before using it",
     "a value of another type took the wrong branch"),
    ("async", r"\bawait\b|\bCancelledError\b|\.cancel\(\)", "changes how the coroutine awaits or cancels",
     "cancellation or awaiting order left state inconsistent"),
    ("warn", r"\bwarnings\.warn\(|\bwarn\(", "changes when a warning is emitted", "the warning was wrong or missing"),
    ("pattern", r"\bre\.(?:compile|match|search|sub|split|fullmatch)\(", "adjusts a regular expression",
     "the pattern accepted or rejected the wrong input"),
    ("compat", r"\bsys\.version_info\b|\bsys\.platform\b|\bos\.name\b", "adds a version or platform branch",
     "the behaviour differs between versions or platforms"),
)
_ACTIONS_RE = [(n, re.compile(rx, re.MULTILINE), what, why) for n, rx, what, why in _ACTIONS]
_COND = re.compile(r"^\s*(?:el)?if\b|^\s*while\b|\breturn\b.*\b(?:and|or|not)\b", re.MULTILINE)
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(", re.MULTILINE)


def _split(diff: str) -> tuple[str, str]:
    plus, minus = [], []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            plus.append(line[1:])
        elif line.startswith("-"):
            minus.append(line[1:])
    return "\n".join(plus), "\n".join(minus)


def _hunk_functions(diff: str) -> list[str]:
    return ids.from_diff(diff, limit=8)


def _exceptions(problem: str, cand: Candidate) -> list[str]:
    from sentinel.memory.cards.identifiers import exception_names

    out = list(exception_names(problem))
    src_plus, src_minus = _split(cand.source_diff)
    for rx, text in ((_RAISE, src_plus), (_EXCEPT, src_plus), (_RAISE, src_minus), (_RAISES, cand.test_diff)):
        for m in rx.finditer(text):
            for name in re.split(r"\s*,\s*", m.group(1)):
                if _BUILTIN_EXC.search(name):
                    out.append(name)
    seen: set[str] = set()
    res = []
    for e in out:
        if e.lower() not in seen and len(e) <= 40:
            seen.add(e.lower())
            res.append(e)
    return res[:5]


def _clean_words(words: list[str], banned: set[str]) -> list[str]:
    return [w for w in words if w.lower() not in STOP_WORDS and w.lower() not in banned]


def key_terms(text: str, banned: set[str], limit: int = 8) -> list[str]:
    """2-3 word technical terms of a text (short terms, never a sentence), in order of appearance."""
    from sentinel.memory.cards.model import file_paths_in, long_identifiers

    out: list[str] = []
    seen: set[str] = set()
    for piece in _PHRASE_SPLIT.split(text):
        words = _clean_words([w for w in _WORDS.findall(piece) if "'" not in w], banned)
        words = [w for w in words if w.lower() not in _FILLER]
        while words and (words[0].lower() in _LEADING or words[0].lower().endswith("ly")):
            words = words[1:]
        while len(words) >= 2 and len(out) < limit:
            take = words[:3] if len(words) != 4 else words[:2]
            words = words[len(take):]
            phrase = " ".join(take)
            low = phrase.lower()
            if (low in seen or all(w.lower() in GENERIC_WORDS for w in take) or file_paths_in(phrase)
                    or long_identifiers(phrase) or any(len(w) > 30 for w in take)):
                continue
            seen.add(low)
            out.append(phrase)
        if len(out) >= limit:
            break
    return out


GENERIC_WORDS = frozenset("fix fixed fixes fixing bug bugs issue issues regression error errors problem crash "
                          "incorrect wrong correctly properly now case cases work works working handle handling "
                          "support allow added removed change changed use used using new old also previously "
                          "instead would could should raised raises raise".split())
# verbs and adverbs that start a clause, not a technical term
_LEADING = frozenset("never always using use uses raise raises raising better make makes making allow allows "
                     "avoid avoids ensure ensures prevent prevents add adds remove removes update updates "
                     "return returns get gets set sets handle handles skip skips support supports".split())
_FILLER = frozenset("fix fixed fixes fixing bug bugs issue issues now previously properly correctly instead "
                    "would could should caused causing cause".split())


def _symptom(problem: str, exceptions: list[str]) -> str:
    """exceptions: the ones the problem text itself names."""
    if exceptions and not re.search(r"warning$", exceptions[0], re.I):
        return "crash"
    for name, rx in _SYMPTOM_RULES:
        if rx.search(problem):
            return name
    return "wrong"


def _language(cand: Candidate) -> str:
    counts: dict[str, int] = {}
    for f in cand.role_files("source"):
        ext = f.path.rsplit(".", 1)[-1].lower() if "." in f.path else ""
        lang = _LANG.get(ext)
        if lang:
            counts[lang] = counts.get(lang, 0) + f.added + f.removed + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else "python"


def project_words(repository: str) -> set[str]:
    from sentinel.memory.cards.model import LANGUAGES

    words = {p for p in re.split(r"[/\s_.-]+", repository.lower()) if len(p) >= 3 and p not in LANGUAGES}
    return words


def _join(items: list[str], conj: str = "and") -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def card_id(cand: Candidate) -> str:
    name = cand.repository.rsplit("/", 1)[-1] or "project"
    key = cand.sha[:10] if cand.sha else _slug(cand.key)[-16:]
    return f"lx-{_slug(name)[:30]}-{key}"


def facts(cand: Candidate) -> dict:
    """Everything the templates (and the LLM prompt) use, extracted from the candidate."""
    from sentinel.memory.cards.model import PROJECT_NAMES, project_names_in

    banned = project_words(cand.repository) | set(PROJECT_NAMES)
    problem = _strip_refs(cand.problem_text)
    problem_main = _strip_refs(cand.fragment or cand.subject + "\n" + cand.body)
    exceptions = _exceptions(problem, cand)
    exc_low = {e.lower() for e in exceptions}
    text_idents = [i for i in ids.from_text(problem) if i.lower() not in exc_low]
    diff_idents = []
    comps: list[str] = []
    areas: list[str] = []
    per_file = []
    for f in sorted(cand.role_files("source"), key=lambda f: -(f.added + f.removed)):
        funcs = _hunk_functions(f.diff)
        diff_idents += funcs
        comp = component_of(f.path, frozenset(banned))
        if comp and project_names_in(comp, cand.repository):
            comp = ""
        if comp and comp not in comps:
            comps.append(comp)
        plus, minus = _split(f.diff)
        per_file.append((f, comp, funcs, plus, minus))
        label_ = comp or f.path.rsplit("/", 1)[-1]
        areas.append(f"{label_}: {', '.join(funcs[:3])}" if funcs else label_)
    # code-shaped names on the changed lines themselves (attributes, options, helpers the fix is about)
    line_names: Counter = Counter()
    for _, _, _, plus, minus in per_file:
        for w in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,40}\b", plus + "\n" + minus):
            if ids.is_codeish(w) and w.lower() not in ids.COMMON and not w.startswith("test_"):
                line_names[w] += 1
    diff_idents += [w for w, _ in line_names.most_common(8)]
    diff_low = {d.lower() for d in diff_idents}
    both = [i for i in text_idents if i.lower() in diff_low or i.lower().rsplit(".", 1)[-1] in diff_low]
    idents = []
    for i in [*both, *text_idents, *diff_idents]:
        if i.lower() not in {x.lower() for x in idents} and len(i) <= 60 and i.lower() not in banned:
            idents.append(i)
    code_text = "\n".join(p + "\n" + m for _, _, _, p, m in per_file)
    mechs = taxonomy.infer(problem, code=code_text, exceptions=exceptions, threshold=1.5, limit=3)
    from sentinel.memory.cards.identifiers import exception_names

    text_excs = [e for e in exception_names(problem) if len(e) <= 40]
    symptom = _symptom(problem_main, text_excs)
    terms = key_terms(problem_main, banned | exc_low | {i.lower() for i in idents}, limit=12) or key_terms(
        problem, banned, limit=12)
    actions = []
    for f, comp, funcs, plus, minus in per_file:
        where = funcs[0] if funcs else (comp or "the module")
        found = False
        for name, rx, what, why in _ACTIONS_RE:
            if rx.search(plus) and len(rx.findall(plus)) > len(rx.findall(minus)):
                actions.append((name, where, comp, what, why))
                found = True
        if _COND.search(plus) and _COND.search(minus) and not found:
            actions.append(("condition", where, comp, "corrects a condition",
                            "the old test did not match the cases it was meant to"))
            found = True
        new_defs = [d for d in _DEF.findall(plus) if d not in _DEF.findall(minus)]
        if new_defs and not found:
            actions.append(("helper", new_defs[0], comp, "adds the helper",
                            "the corrected logic gets a place of its own"))
            found = True
        if not found:
            actions.append(("adjust", where, comp, "adjusts the logic",
                            "the faulty behaviour is corrected where it arises"))
    seen_actions: set[tuple[str, str]] = set()
    unique = []
    for a in actions:
        if (a[0], a[1]) not in seen_actions:
            seen_actions.add((a[0], a[1]))
            unique.append(a)
    actions = unique
    return {"problem": problem, "exceptions": exceptions, "text_exceptions": text_excs, "identifiers": idents[:16],
            "files": changed_files(cand),
            "components": comps[:5],
            "areas": areas[:6], "mechanisms": mechs, "symptom": symptom, "terms": terms, "actions": actions,
            "language": _language(cand), "banned": banned}


def changed_files(cand: Candidate, limit: int = 30) -> list[str]:
    """The source files the fix changed, the most changed first (what the code map points queries at)."""
    from sentinel.memory.cards.model import REL_PATH_RE

    ranked = sorted(cand.role_files("source"), key=lambda f: (-(f.added + f.removed), f.path))
    out = [f.path for f in ranked if REL_PATH_RE.match(f.path) and ".." not in f.path.split("/")
           and len(f.path) <= 300]
    return list(dict.fromkeys(out))[:limit]


def confidence(cand: Candidate, f: dict, relevance: float) -> float:
    """How much the evidence supports the card (0-1): a fragment or issue describing the bug, tests added,
    exact signals found, relevance of text to code, a diff that was not cut."""
    score = 0.1
    score += 0.2 if cand.fragment else 0.0
    score += 0.1 if (cand.issue_refs or cand.urls) else 0.0
    score += 0.15 if cand.tests_added else 0.0
    score += 0.1 if f["exceptions"] else 0.0
    score += 0.1 if f["mechanisms"] else 0.0
    score += 0.1 if f["identifiers"] else 0.0
    score += min(0.15, relevance * 0.3)
    score -= 0.1 if cand.truncated else 0.0
    return round(max(0.05, min(0.95, score)), 2)


def standardise(cand: Candidate, relevance: float = 0.0, source: str = "learned") -> dict:
    """The card for a purified candidate (checked and refined by qc afterwards)."""
    f = facts(cand)
    comps = f["components"] or ["core logic"]
    comp = comps[0]
    excs = f["exceptions"]
    idents_short = []
    for i in f["identifiers"]:
        short = i.rsplit(".", 1)[-1] if any(w in i.lower().split(".") for w in f["banned"]) else i
        if len(short) <= 24 and short not in idents_short:
            idents_short.append(short)
    idents_short = idents_short[:2]
    sym_head, sym_sig1, sym_sig2 = _SYMPTOM_TEXT[f["symptom"]]
    if f["symptom"] == "crash" and f["text_exceptions"]:
        sym_head = f"An unexpected {f['text_exceptions'][0]}"
    terms = f["terms"]
    mech_labels = [taxonomy.label(m) for m in f["mechanisms"]]

    summary = f"{sym_head} in the {comp} component"
    if idents_short:
        summary += f" around {_join(idents_short)}"
    if terms:
        summary += f", involving {_join(terms[:2])}"
    summary += "."
    if mech_labels:
        summary += f" Likely mechanism: {_join(mech_labels[:2])}."

    signals: list[str] = []

    def sig(s: str) -> None:
        s = " ".join(s.split())
        n = len([w for w in s.split() if any(ch.isalnum() for ch in w)])
        if 2 <= n <= 4 and s.lower() not in {x.lower() for x in signals}:
            signals.append(s)

    for t in terms[:8]:
        sig(t)
    for e in excs[:2]:
        sig(f"{e} raised")
    for i in f["identifiers"][:3]:
        if len(i) <= 30:
            sig(f"{i} behaviour")
    sig(f"{comp} component")
    for m in f["mechanisms"]:
        sig(taxonomy.BY_TAG[m].signals[0])
    sig(sym_sig1)
    for c in comps[1:3]:
        sig(f"{c} component")
    for t in terms[8:12]:
        sig(t)
    for m in f["mechanisms"]:
        sig(taxonomy.BY_TAG[m].signals[1])
    sig(sym_sig2)
    if cand.tests_added:
        sig("regression test added")
    for pad in (f"{comp} bug fix", f"{comp} edge case", "source code fix", "input edge case"):
        if len(signals) >= 10:
            break
        sig(pad)
    signals = signals[:18]

    sources = cand.role_files("source")
    funcs = [a[1] for a in f["actions"] if a[1] and a[1] != "the module"]
    why_parts = [a[4] for a in f["actions"] if a[0] != "adjust"]
    mech_desc = [taxonomy.BY_TAG[m].description for m in f["mechanisms"][:2]]
    trigger = f" when it meets {_join(terms[:2])}" if terms else ""
    root = f"{sym_head} surfaced in the {comp} component{trigger}."
    if mech_desc:
        root += f" The cues point at {mech_desc[0]}" + (f"; also {mech_desc[1]}" if len(mech_desc) > 1 else "") + "."
    if why_parts:
        root += f" In the old code {why_parts[0]}."
    if funcs:
        root += f" The faulty assumption sat in {_join(list(dict.fromkeys(funcs))[:3])}."
    if "revert" in cand.reasons:
        root += " The change undoes an earlier commit that introduced the problem."
    if len(root) < 80:
        root += f" The fix changes {len(sources)} source file(s) to remove the cause rather than the symptom."

    act_text = [f"{a[3]} {a[1]}" if a[0] == "helper" else f"{a[3]} in {a[1]}" for a in f["actions"][:4]]
    strategy = f"The fix {_join(act_text)}." if act_text else "The fix corrects the logic at its source."
    if cand.tests_added:
        strategy += f" It adds {len(cand.tests_added)} regression test(s) ({_join(cand.tests_added[:3])})."
    added = sum(x.added for x in sources)
    removed = sum(x.removed for x in sources)
    strategy += (f" The change is {'small' if added + removed <= 40 else 'sizeable'}: {added} line(s) added and "
                 f"{removed} removed in {len(sources)} source file(s).")
    if len(strategy) < 80:
        strategy += " Behaviour outside the failing case is meant to stay the same."

    chunks = []
    for name, where, c, what, why in f["actions"][:6]:
        w = f"{what[0].upper()}{what[1:]} {'' if name == 'helper' else 'in '}{where}" + (
            f" ({c})" if c and c != where else "")
        chunks.append({"what": w[:180], "why": why[:110]})
    if cand.tests_added and len(chunks) < 8:
        chunks.append({"what": f"Add regression test {cand.tests_added[0]}"[:180],
                       "why": "pins the corrected behaviour"})
    if cand.fragment and len(chunks) < 8:
        chunks.append({"what": "Describe the fix in a changelog entry", "why": "users can tell what changed"})
    for x in sources:
        if len(chunks) >= 3:
            break
        chunks.append({"what": f"Update {component_of(x.path, frozenset(f['banned'])) or 'module'} code",
                       "why": "part of the same correction"})
    while len(chunks) < 3:
        chunks.append({"what": ["Keep the other code paths unchanged", "Check the neighbouring callers"][
            len(chunks) % 2], "why": "limits the fix to the failing case"})

    if cand.tests_added:
        repro = (f"Run {cand.tests_added[0]} against the code before the fix: it fails "
                 f"({'with ' + excs[0] if excs else 'wrong outcome'}) and passes after it.")
        tests = cand.tests_added[:10]
    else:
        target = idents_short[0] if idents_short else f"the {comp} component"
        repro = f"Exercise {target}{trigger or ' with the input from the problem summary'} and compare with the " \
                f"intended behaviour."
        tests = [f"none in the change: exercise {comp} by hand"]
    edges = []
    for m in f["mechanisms"]:
        edges += _EDGE.get(m, [])
    provenance = {"source": source, "repository": cand.repository, "commit": cand.sha, "date": cand.date or None,
                  "url": (cand.urls[0] if cand.urls else None), "references": cand.urls[:5]}
    if cand.record_id:
        provenance["record_id"] = cand.record_id
    if cand.license:
        provenance["license"] = cand.license
    return {
        "id": card_id(cand),
        "problem_summary": summary,
        "signals": signals,
        "tags": {"language": f["language"], "components": comps[:5], "exceptions": excs, "rules": [],
                 "mechanisms": f["mechanisms"],
                 "identifiers": [i for i in f["identifiers"] if re.fullmatch(r"[A-Za-z_][\w.-]*", i)][:16],
                 "files": f["files"]},
        "root_cause": root[:1200],
        "fix_strategy": strategy[:1200],
        "patch_digest": {"areas": f["areas"] or [comp], "chunks": chunks[:8]},
        "verification": {"reproduction": repro, "tests_added": tests, "edge_cases": edges[:8]},
        "provenance": {k: v for k, v in provenance.items() if v not in (None, "", [])} | {"source": source},
        "quality": {"governed_by": GOVERNED_BY, "standardiser": STANDARDISER,
                    "confidence": confidence(cand, f, relevance), "relevance": round(relevance, 3)},
    }
