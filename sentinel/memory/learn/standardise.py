"""The deterministic offline standardiser: a governed card from a candidate, with no model.

The card is read from the fix itself. The resolution layer comes from the diff read with the AST
(resolution.of: which functions changed and how — a guard added, a handler narrowed, a call replaced, a bound
moved... —, the key lines before and after, the regression test and the assertion that pins the bug), written
out as clauses from that code (phrases). The problem layer is the project's own description (problem.describe:
its news fragment or changelog entry, the issue, the commit message), cleaned and redacted, never a template.
The mechanism tags come from what the code changes did (taxonomy.from_change), the signals from the same facts
and the description's technical terms, without tool chatter.

Cards of other projects' material (fix records: provenance source `fixrecord`, `imported`) are written in our
own words instead: the problem from the facts (symptom, exception, function, what the fix did), no excerpt of
their code, and QC checks that no run of their text was copied.
"""

from __future__ import annotations

import re

from sentinel.memory.cards import identifiers as ids
from sentinel.memory.cards import taxonomy
from sentinel.memory.cards.text import STOP_WORDS
from sentinel.memory.learn import phrases, problem, resolution
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.paths import component_of
from sentinel.memory.learn.purify import _strip_refs

STANDARDISER = "deterministic"
GOVERNED_BY = "sentinel memory learn (deterministic standardiser)"
OWN_WORDS_SOURCES = frozenset({"fixrecord", "imported"})  # other projects' material: our words, no code
_LANG = {"py": "python", "pyx": "cython", "pxd": "cython", "pyi": "python", "js": "javascript", "mjs": "javascript",
         "cjs": "javascript", "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "go": "go", "rs": "rust",
         "java": "java", "kt": "kotlin", "rb": "ruby", "php": "php", "c": "c", "h": "c", "cc": "c++", "cpp": "c++",
         "hpp": "c++", "cs": "c#", "swift": "swift", "sh": "shell", "sql": "sql", "scala": "scala", "lua": "lua"}
_RAISE = re.compile(r"^\s*raise\s+([A-Z]\w+)", re.MULTILINE)
_EXCEPT = re.compile(r"^\s*except\s+\(?([A-Z]\w+(?:\s*,\s*[A-Z]\w+)*)", re.MULTILINE)
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
_SYMPTOM = {
    "hang": ("A hang or endless loop", "process hangs"), "leak": ("A resource leak", "resource leak"),
    "warning": ("A spurious or missing warning", "unexpected warning"),
    "slow": ("Needlessly slow behaviour", "slow operation"), "crash": ("An unexpected exception", "crash on input"),
    "message": ("A misleading error report", "misleading error message"),
    "regression": ("A regression", "behaviour regression"), "wrong": ("Wrong behaviour", "incorrect result"),
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
# words that are about the project's tooling, process or people, never about the bug: no signal carries them
JUNK_WORDS = frozenset("""
ruff flake8 pylint mypy pyright pyflakes pycodestyle black isort yapf autopep8 lint linter linting noqa pragma
typeshed typing stub stubs annotation annotations pre-commit precommit ci github gitlab actions workflow workflows
tox nox towncrier newsfragment newsfragments changelog changes news docs doc documentation readme sphinx
pr prs merge merged rebase review reviewer reviewed contributor contributors thanks thank co-authored author
bot dependabot renovate codecov coverage release released version versions bump bumps pin pinned upstream
downstream patch patches commit commits backport backports cherry-pick cherry picked squash wip todo fixme
""".split())
GENERIC_WORDS = frozenset("fix fixed fixes fixing bug bugs issue issues regression error errors problem crash "
                          "incorrect wrong correctly properly now case cases work works working handle handling "
                          "support allow added removed change changed use used using new old also previously "
                          "instead would could should raised raises raise".split())
_LEADING = frozenset("never always using use uses raise raises raising better make makes making allow allows "
                     "avoid avoids ensure ensures prevent prevents add adds added remove removes removed update "
                     "updates updated return returns get gets set sets handle handles skip skips support supports "
                     "implement implements implemented introduce introduces introduced fixed fix fixes correct "
                     "corrects corrected change changes changed".split())
_FILLER = frozenset("fix fixed fixes fixing bug bugs issue issues now previously properly correctly instead "
                    "would could should caused causing cause small minor various some little few slight more less "
                    "better certain several".split())


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


def _exceptions(problem_text: str, cand: Candidate, analysis: resolution.Analysis) -> list[str]:
    """Exception types the fix is about: named in its description, raised or caught by its changes, expected by
    its regression test."""
    out = list(ids.exception_names(problem_text))
    for fact in analysis.facts(limit=12):
        if fact.startswith(("raise:", "except:")):
            for name in re.split(r"\s*,\s*", fact.split(":", 1)[1].strip("()")):
                name = name.rsplit(".", 1)[-1]
                if _BUILTIN_EXC.search(name):
                    out.append(name)
    test = analysis.test()
    if test and test.assertion:
        out += [m.group(1) for m in re.finditer(r"raises\(\s*([A-Z]\w+)", test.assertion)]
    if not analysis.python:  # not Python: the diff's raise and except lines
        plus, minus = _split(cand.source_diff)
        for rx, text in ((_RAISE, plus), (_EXCEPT, plus), (_RAISE, minus)):
            for m in rx.finditer(text):
                out += [n for n in re.split(r"\s*,\s*", m.group(1)) if _BUILTIN_EXC.search(n)]
    seen: set[str] = set()
    res = []
    for e in out:
        if e.lower() not in seen and len(e) <= 40:
            seen.add(e.lower())
            res.append(e)
    return res[:5]


def key_terms(text: str, banned: set[str], limit: int = 8) -> list[str]:
    """2-3 word technical terms of a text (short terms, never a sentence), in order of appearance; no term of
    tooling or process (JUNK_WORDS)."""
    from sentinel.memory.cards.model import file_paths_in, long_identifiers

    out: list[str] = []
    seen: set[str] = set()
    for piece in _PHRASE_SPLIT.split(text):
        words = [w for w in _WORDS.findall(piece) if "'" not in w and w.lower() not in STOP_WORDS
                 and w.lower() not in banned and w.lower() not in _FILLER]
        while words and (words[0].lower() in _LEADING or words[0].lower().endswith("ly")):
            words = words[1:]
        while len(words) >= 2 and len(out) < limit:
            take = words[:3] if len(words) != 4 else words[:2]
            words = words[len(take):]
            phrase = " ".join(take)
            low = phrase.lower()
            if (low in seen or all(w.lower() in GENERIC_WORDS for w in take) or file_paths_in(phrase)
                    or long_identifiers(phrase) or any(len(w) > 30 for w in take)
                    or any(w.lower() in JUNK_WORDS for w in take) or any(w.isdigit() for w in take)):
                continue
            seen.add(low)
            out.append(phrase)
        if len(out) >= limit:
            break
    return out


def _symptom(text: str, exceptions: list[str]) -> str:
    if exceptions and not re.search(r"warning$", exceptions[0], re.I):
        return "crash"
    for name, rx in _SYMPTOM_RULES:
        if rx.search(text):
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

    return {p for p in re.split(r"[/\s_.-]+", repository.lower()) if len(p) >= 3 and p not in LANGUAGES}


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


def changed_files(cand: Candidate, limit: int = 30) -> list[str]:
    """The source files the fix changed, the most changed first (what the code map points queries at)."""
    from sentinel.memory.cards.model import REL_PATH_RE

    ranked = sorted(cand.role_files("source"), key=lambda f: (-(f.added + f.removed), f.path))
    out = [f.path for f in ranked if REL_PATH_RE.match(f.path) and ".." not in f.path.split("/")
           and len(f.path) <= 300]
    return list(dict.fromkeys(out))[:limit]


def _package_words(cand: Candidate, banned: set[str]) -> frozenset[str]:
    """The project's import names: the top-level packages of its changed files, and its repository's name."""
    words = set(banned)
    for f in cand.role_files("source"):
        parts = [p for p in f.path.split("/") if p]
        while parts and parts[0] in ("src", "lib"):
            parts = parts[1:]
        if len(parts) >= 2 and re.fullmatch(r"[A-Za-z_]\w*", parts[0]):
            words.add(parts[0].lower())
    return frozenset(w for w in words if len(w) >= 3)


def facts(cand: Candidate) -> dict:
    """Everything the card (and the LLM prompt) is written from, read from the candidate."""
    from sentinel.memory.cards.model import PROJECT_NAMES, project_names_in

    banned = project_words(cand.repository) | set(PROJECT_NAMES)
    analysis = resolution.of(cand)
    prob = problem.describe(cand, _package_words(cand, banned))
    text = _strip_refs(cand.problem_text)
    exceptions = _exceptions(text, cand, analysis)
    text_excs = [e for e in ids.exception_names(text) if len(e) <= 40]
    comps: list[str] = []
    areas: list[str] = []
    for f in sorted(cand.role_files("source"), key=lambda f: -(f.added + f.removed)):
        comp = component_of(f.path, frozenset(banned))
        if comp and project_names_in(comp, cand.repository):
            comp = ""
        if comp and comp not in comps:
            comps.append(comp)
        fc = next((x for x in analysis.files if x.path == f.path), None)
        names = [s.qualname for s in fc.symbols if s.qualname][:3] if fc else ids.from_diff(f.diff, limit=3)
        label = comp or f.path.rsplit("/", 1)[-1]
        areas.append(f"{label}: {', '.join(names)}" if names else label)
    mechs = taxonomy.from_change(analysis.facts(), text=text, exceptions=text_excs)
    if not analysis.python and not mechs:  # no Python to read: the diff's lines as the cues (as strong as text)
        plus, minus = _split(cand.source_diff)
        mechs = taxonomy.infer(text, code=plus + "\n" + minus, exceptions=exceptions, threshold=2.5, limit=2)
    return {"analysis": analysis, "problem": prob, "text": text, "exceptions": exceptions, "text_exceptions":
            text_excs, "identifiers": _identifiers(cand, analysis, text, exceptions, banned), "files":
            changed_files(cand), "symbols": analysis.symbols(), "components": comps[:5], "areas": areas[:6],
            "mechanisms": mechs, "language": _language(cand), "banned": banned,
            "terms": key_terms(prob.summary or text, banned | {e.lower() for e in exceptions}, limit=12)}


def _identifiers(cand: Candidate, analysis: resolution.Analysis, text: str, exceptions: list[str],
                 banned: set[str]) -> list[str]:
    """What the fix touched, exactly spelled: its changed functions (qualified and short), the names its key
    changes involve, the description's identifiers that the diff also has."""
    out: list[str] = []
    for sym in analysis.symbols():
        q = sym.split("::", 1)[1]
        out += [q, q.rsplit(".", 1)[-1]] if "." in q else [q]
    for x in analysis.specific()[:6]:
        for fact in x.change.facts:
            if fact.startswith(("call:", "kw:", "with:", "name:")):
                name = fact.split(":", 1)[1].rsplit(".", 1)[-1]
                if len(name) >= 4 and name.lower() not in ids.COMMON:
                    out.append(name)
    diff_words = {w.lower() for w in re.findall(r"[A-Za-z_]\w+", cand.source_diff)}
    out += [i for i in ids.from_text(text) if i.lower().rsplit(".", 1)[-1] in diff_words]
    if not analysis.python:  # the code-shaped names on the changed lines of another language
        out += ids.from_diff(cand.source_diff, limit=8)
        plus, minus = _split(cand.source_diff)
        counts: dict[str, int] = {}
        for w in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,40}\b", plus + "\n" + minus):
            if ids.is_codeish(w) and w.lower() not in ids.COMMON:
                counts[w] = counts.get(w, 0) + 1
        out += sorted(counts, key=lambda w: -counts[w])[:6]
    exc = {e.lower() for e in exceptions}
    res: list[str] = []
    for i in out:
        low = i.lower()
        if (re.fullmatch(r"[A-Za-z_][\w.-]*", i) and len(i) <= 60 and low not in exc and low not in banned
                and low not in {r.lower() for r in res} and not low.startswith("test_")):
            res.append(i)
    return res[:16]


def confidence(cand: Candidate, f: dict, relevance: float) -> float:
    """How much the evidence supports the card (0-1): a fragment or issue describing the bug, a regression test
    with its assertion, the code read with the AST, exact signals, relevance of the text to the code, a diff
    that was not cut."""
    analysis = f.get("analysis")
    score = 0.1
    score += 0.2 if cand.fragment else 0.0
    score += 0.05 if (cand.issue_refs or cand.urls) else 0.0
    score += 0.1 if cand.tests_added or (analysis and analysis.tests) else 0.0
    score += 0.05 if analysis and analysis.test() and analysis.test().assertion else 0.0
    score += 0.1 if analysis and analysis.specific() else 0.0
    score += 0.05 if f["exceptions"] else 0.0
    score += 0.1 if f["mechanisms"] else 0.0
    score += 0.05 if f["identifiers"] else 0.0
    score += min(0.15, relevance * 0.3)
    score -= 0.1 if cand.truncated else 0.0
    return round(max(0.05, min(0.95, score)), 2)


def _short(symbol: str) -> str:
    """`Cart.remove_item` from "src/shop/cart.py::Cart.remove_item"."""
    return symbol.split("::", 1)[1] if "::" in symbol else symbol


def _distinct_changes(analysis: resolution.Analysis, limit: int) -> list[resolution.Located]:
    out, seen = [], set()
    for x in analysis.specific() or analysis.ranked():
        key = (x.path, x.qualname, x.change.kind)
        if key not in seen:
            seen.add(key)
            out.append(x)
        if len(out) >= limit:
            break
    return out


def _where(x: resolution.Located) -> str:
    """The changed function, or the module for module-level code."""
    return x.qualname or f"{x.path.rsplit('/', 1)[-1].rsplit('.', 1)[0]} module"


def _before_text(changes: list[resolution.Located]) -> str:
    clauses = list(dict.fromkeys(phrases.before(x.change, _where(x)) for x in changes[:3]))
    return ("Before the fix, " + "; ".join(clauses) + ".") if clauses else ""


def _after_text(changes: list[resolution.Located], own_words: bool) -> str:
    if not changes:
        return ""
    if all(x.change.kind == "function-added" for x in changes):
        return f"The fix adds {_join([f'`{_where(x)}`' for x in changes[:4]])}."
    first = changes[0]
    same = [x for x in changes[:4] if (x.path, x.qualname) == (first.path, first.qualname)]
    where = f"`{_where(first)}`" + (f" ({first.path})" if not own_words else "")
    text = f"In {where}, the fix {_join([phrases.after(x.change) for x in same])}."
    others = [x for x in changes[:5] if (x.path, x.qualname) != (first.path, first.qualname)]
    if others:
        text += " It also " + "; ".join(phrases.after(x.change) if x.change.kind == "function-added" else
                                        f"{phrases.after(x.change)} in `{_where(x)}`" for x in others[:2]) + "."
    return text


def standardise(cand: Candidate, relevance: float = 0.0, source: str = "learned") -> dict:
    """The card for a purified candidate (checked and refined by qc afterwards)."""
    f = facts(cand)
    analysis: resolution.Analysis = f["analysis"]
    prob: problem.Problem = f["problem"]
    own_words = source in OWN_WORDS_SOURCES
    comps = f["components"] or ["core logic"]
    comp = comps[0]
    excs = f["exceptions"]
    changes = _distinct_changes(analysis, 6)
    key = changes[0] if changes else None
    test = analysis.test()
    mech_labels = [taxonomy.label(m) for m in f["mechanisms"]]
    symptom = _symptom(prob.summary or f["text"], f["text_exceptions"])
    head = f"An unexpected {f['text_exceptions'][0]}" if symptom == "crash" and f["text_exceptions"] else \
        _SYMPTOM[symptom][0]

    # the problem layer: the project's words, or (other projects' material, or nothing usable) the facts
    summary = ""
    if not own_words and prob.summary and problem.content_words(prob.summary) >= 4 and len(prob.summary) >= 60:
        summary = problem.summary_safe(prob.summary, cand.repository)
    elif not own_words and prob.summary and key is not None:  # few words of its own: with what the fix did
        where = "" if key.change.kind == "function-added" else f"in `{_where(key)}`, "
        summary = problem.summary_safe(f"{prob.summary.rstrip('.')}: {where}the fix {phrases.after(key.change)}.",
                                       cand.repository)
    elif not own_words and prob.summary:
        summary = problem.summary_safe(prob.summary, cand.repository)
    if len(summary) < 40:
        where = f" in `{_where(key)}`" if key and key.change.kind != "function-added" else (
            "" if key else f" in the {comp} code")
        what = f"; the fix {phrases.after(key.change)}" if key else ""
        about = f", involving {_join(f['terms'][:2])}" if own_words and f["terms"] else ""
        summary = problem.summary_safe(f"{head}{where}{about}{what}.", cand.repository, own_name_ok=not own_words)
        if len(summary) < 40:
            summary = summary.rstrip(".") + f" ({comp})."

    signals = _signals(f, changes, comp, symptom, test)

    # the resolution layer: what the code did before, what the fix does, the test that pins it
    before = _before_text(changes)
    root_parts = []
    if not own_words and prob.detail and prob.detail not in summary:
        root_parts.append(problem.summary_safe(prob.detail, cand.repository, limit=600))
    elif not own_words and prob.summary:
        root_parts.append(problem.summary_safe(prob.summary, cand.repository, limit=400))
    root_parts.append(before)
    if mech_labels:
        root_parts.append(f"Mechanism: {_join(mech_labels[:2])}.")
    if "revert" in cand.reasons:
        root_parts.append("The change undoes an earlier commit that introduced the problem.")
    root = " ".join(p for p in root_parts if p)
    if len(root) < 80:
        root += f" The fix changes {len(cand.role_files('source'))} source file(s) of the {comp} code" + (
            f" ({_join([_short(s) for s in f['symbols'][:3]])})." if f["symbols"] else ".")

    sources = cand.role_files("source")
    added, removed = sum(x.added for x in sources), sum(x.removed for x in sources)
    strategy = _after_text(changes, own_words) or f"The fix changes the {comp} code."
    if test is not None:
        strategy += f" Regression test `{test.name}`" + (f" asserts `{test.assertion}`." if test.assertion
                                                          else " covers it.")
    elif cand.tests_added:
        strategy += f" It adds {len(cand.tests_added)} test(s) ({_join(cand.tests_added[:3])})."
    strategy += f" ({added} line(s) added, {removed} removed in {len(sources)} source file(s).)"

    chunks = []
    for x in changes[:5]:
        chunks.append({"what": _cut(f"`{_where(x)}`: {phrases.after(x.change)}", 200),
                       "why": _cut(phrases.before(x.change, ""), 95) or "part of the fix"})
    if test is not None and len(chunks) < 8:
        what = f"Add test `{test.name}`" if test.new else f"Extend test `{test.name}`"
        chunks.append({"what": _cut(what + (f" asserting `{test.assertion}`" if test.assertion else ""), 200),
                       "why": "it fails before the fix and passes after it"})
    for path in f["files"]:
        if len(chunks) >= 3:
            break
        if not any(x.path == path for x in changes):
            chunks.append({"what": _cut(f"Also change {component_of(path, frozenset(f['banned'])) or 'module'} "
                                        f"code", 200), "why": "part of the same fix"})
    if len(chunks) < 3 and key is not None:
        chunks.append({"what": _cut(f"Keep the rest of `{_where(key)}` as it was", 200),
                       "why": "the fix is limited to the failing case"})
    while len(chunks) < 3:
        chunks.append({"what": ["Keep the other code paths unchanged", "Check the neighbouring callers"][
            len(chunks) % 2], "why": "limits the fix to the failing case"})

    if test is not None:
        repro = f"Run `{test.name}` ({test.file}) on the code before the fix: " + (
            f"`{test.assertion}` fails; it passes after the fix." if test.assertion else
            "it fails, and passes after the fix.")
        named = [t.name for t in analysis.tests if t.new] + [t.name for t in analysis.tests]
        leaves = {n.rsplit(".", 1)[-1] for n in named}
        tests = list(dict.fromkeys(named + [t for t in cand.tests_added if t not in leaves]))[:10]
    else:
        target = f"`{_where(key)}`" if key else f"the {comp} code"
        repro = f"No test came with the fix: exercise {target} as the problem describes and compare with the " \
                f"behaviour after the fix."
        tests = cand.tests_added[:10] or [f"none in the change: exercise {comp} by hand"]
    edges = []
    for m in f["mechanisms"]:
        edges += _EDGE.get(m, [])
    provenance = {"source": source, "repository": cand.repository, "commit": cand.sha, "date": cand.date or None,
                  "url": (cand.urls[0] if cand.urls else None), "references": cand.urls[:5]}
    if cand.record_id:
        provenance["record_id"] = cand.record_id
    if cand.license:
        provenance["license"] = cand.license
    digest = {"areas": f["areas"] or [comp], "chunks": chunks[:8], "changes": code_changes(analysis)}
    verification = {"reproduction": repro, "tests_added": tests, "edge_cases": edges[:8]}
    if not own_words:
        excerpt = excerpt_of(analysis)
        if excerpt:
            digest["excerpt"] = excerpt
    if test is not None:
        verification["regression_test"] = {"name": test.name, "file": test.file, "assertion": test.assertion}
    return {
        "id": card_id(cand),
        "problem_summary": summary,
        "signals": signals,
        "tags": {"language": f["language"], "components": comps[:5], "exceptions": excs, "rules": [],
                 "mechanisms": f["mechanisms"], "identifiers": f["identifiers"], "files": f["files"],
                 "symbols": f["symbols"]},
        "root_cause": root[:1200],
        "fix_strategy": strategy[:1200],
        "patch_digest": digest,
        "verification": verification,
        "provenance": {k: v for k, v in provenance.items() if v not in (None, "", [])} | {"source": source},
        "quality": {"governed_by": GOVERNED_BY, "standardiser": STANDARDISER,
                    "confidence": confidence(cand, f, relevance), "relevance": round(relevance, 3)},
    }


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def code_changes(analysis: resolution.Analysis, limit: int = 8) -> list[dict]:
    """patch_digest.changes: the fix's changes as the AST saw them, most telling first."""
    out = []
    for x in _distinct_changes(analysis, limit):
        out.append({"symbol": f"{x.path}::{x.qualname}" if x.qualname else x.path, "kind": x.change.kind,
                    "detail": _cut(x.change.detail, 280)})
    return out


def excerpt_of(analysis: resolution.Analysis) -> dict | None:
    """patch_digest.excerpt: the key lines before and after, through the one redaction path."""
    from sentinel.redact import redact

    ex = analysis.excerpt()
    if not ex:
        return None
    out = {"file": ex["file"], "symbol": ex["symbol"], "before": redact(ex["before"])[:600],
           "after": redact(ex["after"])[:600]}
    return {k: v for k, v in out.items() if v or k == "file"}


def _signals(f: dict, changes: list[resolution.Located], comp: str, symptom: str, test) -> list[str]:
    """10-18 signals from the facts: what each change did where, the exceptions, the mechanisms, the
    description's technical terms (no tooling or process words), the component."""
    signals: list[str] = []

    def sig(s: str) -> None:
        s = " ".join(s.split())
        n = len([w for w in s.split() if any(ch.isalnum() for ch in w)])
        if 2 <= n <= 4 and s.lower() not in {x.lower() for x in signals} and len(signals) < 18:
            signals.append(s)

    for x in changes[:4]:
        leaf = x.qualname.rsplit(".", 1)[-1]
        phrase = taxonomy.CHANGE_KINDS[x.change.kind][0]
        if leaf and len(leaf) <= 30:
            sig(f"{leaf} {phrase}")
        else:
            sig(phrase)
    caught = {fact.split(":", 1)[1] for fact in f["analysis"].facts(limit=12) if fact.startswith("except:")}
    for e in f["exceptions"][:3]:
        sig(f"{e} caught" if e in caught and e not in f["text_exceptions"] else f"{e} raised")
    terms = f["terms"]
    for t in terms[:6]:
        sig(t)
    for m in f["mechanisms"]:
        for s in taxonomy.BY_TAG[m].signals[:3]:
            sig(s)
    for x in changes[:6]:
        sig(taxonomy.CHANGE_KINDS[x.change.kind][0])
    sig(f"{comp} module" if len(comp.split()) <= 3 else comp)
    for t in terms[6:12]:
        sig(t)
    sig(_SYMPTOM[symptom][1])
    for c in f["components"][1:3]:
        sig(f"{c} module")
    for m in f["mechanisms"]:
        for s in taxonomy.BY_TAG[m].signals[3:]:
            sig(s)
    for i in f["identifiers"][:6]:
        if len(i) <= 30 and "." not in i and len(signals) < 10:
            sig(f"{i} code path")
    if test is not None and len(signals) < 10:
        sig("regression test added")
    for pad in (f"{comp} bug fix", f"{comp} edge case", "source code fix", "input edge case"):
        if len(signals) >= 10:
            break
        sig(pad)
    return signals[:18]
