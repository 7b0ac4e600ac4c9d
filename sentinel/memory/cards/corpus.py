"""Reading, validating and importing card files.

Sources of cards, in build order:
  1. the reviewed corpus: memory/cards/*.jsonl in a source checkout, else the cards shipped with the index
     (sentinel/data/memory/cards.bin) so an installed Sentinel can rebuild with extra cards;
  2. config.memory.extra_cards: paths (files or directories of *.jsonl) relative to the project root, typically
     written by `sentinel memory import`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from sentinel.lazyre import lazy_compile  # compiled on first use: recall imports this module, never these
from sentinel.memory.cards.index import PACKAGE_DIR, SHIPPED_INDEX_DIR, iter_card_file
from sentinel.record import Record, factory

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook's recall path; annotations are strings
if TYPE_CHECKING:
    from typing import Any

SOURCE_ROOT = PACKAGE_DIR.parent
SOURCE_CARDS_DIR = SOURCE_ROOT / "memory" / "cards"


class Entry(Record):
    """One line of a card file: the parsed card or why it could not be parsed, and its problems."""

    path: str
    line: int
    raw: Any = None
    problems: list[str] = factory(list)

    @property
    def card_id(self) -> str:
        return str(self.raw.get("id", "")) if isinstance(self.raw, dict) else ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def valid(self) -> bool:
        return not self.problems


def in_source_tree() -> bool:
    return SOURCE_CARDS_DIR.is_dir() and (SOURCE_ROOT / "pyproject.toml").is_file()


def default_card_files() -> list[Path]:
    if in_source_tree():
        return sorted(SOURCE_CARDS_DIR.glob("*.jsonl"))
    shipped = SHIPPED_INDEX_DIR / "cards.bin"
    return [shipped] if shipped.is_file() else []


def expand_paths(paths: list[str | Path], root: str | Path | None = None) -> list[Path]:
    """Files from a list of files and directories (directories contribute their *.jsonl, sorted)."""
    out: list[Path] = []
    for p in paths:
        path = Path(os.path.expanduser(str(p)))
        if not path.is_absolute() and root is not None:
            path = Path(root) / path
        if path.is_dir():
            out.extend(sorted(path.glob("*.jsonl")))
        else:
            out.append(path)
    return out


def read_jsonl(path: Path) -> list[Entry]:
    from sentinel.errors import InputError

    if path.suffix == ".bin":  # the cards shipped inside a built index
        try:
            return [Entry(str(path), n, raw=card) for n, card in enumerate(iter_card_file(path), 1)]
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read card file {path}: {exc}") from None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read card file {path}: {exc.strerror}") from None
    entries = []
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        entry = Entry(str(path), n)
        try:
            entry.raw = json.loads(line)
        except ValueError as exc:
            entry.problems.append(f"line is not JSON: {exc}")
        entries.append(entry)
    return entries


def load_entries(files: list[Path]) -> list[Entry]:
    """Every card of the files, checked (checklist + id uniqueness across all files)."""
    from sentinel.memory.cards.model import check_corpus

    entries = [e for f in files for e in read_jsonl(f)]
    parsed = [e for e in entries if not e.problems]
    for entry, problems in zip(parsed, check_corpus([e.raw for e in parsed])):
        entry.problems.extend(problems)
    return entries


def corpus_files(config: Any = None, root: str | Path | None = None, cards: list[str] | None = None) -> list[Path]:
    """The card files an index build reads: --cards, else the default corpus; plus config extra_cards."""
    files = expand_paths(cards, root=os.getcwd()) if cards else default_card_files()
    extra = list(getattr(getattr(config, "memory", None), "extra_cards", None) or [])
    if extra:
        files += expand_paths(extra, root=root or os.getcwd())
    seen: set[Path] = set()
    out = []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Importers. Both return raw card dicts; the caller checks and writes them.

def import_jsonl(path: Path) -> list[Any]:
    return [e.raw for e in read_jsonl(path) if not e.problems]


def import_memgovern(path: Path, license: str | None = None, governed_by: str = "imported") -> list[dict]:
    """MemGovern release shape: {id: {"bug_description": str|dict, "fix_experience": str|dict}, ...}.

    A list of such objects (each with an "id") is accepted too. Structured values are mapped field by field
    (problem_summary/summary, signals/keywords, root_cause, fix_strategy, patch_digest, verification, ...);
    free text is mapped sensibly (the first sentences become the summary, key phrases the signals). The result is
    marked provenance.source = "imported" with the original id as record_id; cards that still miss a required
    field are reported by the checklist and not written.
    """
    from sentinel.errors import InputError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise InputError(f"{path} is not JSON: {exc}") from None
    if isinstance(data, list):
        items = [(str(d.get("id") or d.get("instance_id") or i), d) for i, d in enumerate(data) if isinstance(d, dict)]
    elif isinstance(data, dict):
        items = [(str(k), v) for k, v in data.items()]
    else:
        raise InputError(f"{path}: expected a JSON object keyed by id (MemGovern release shape)")
    return [memgovern_card(key, value, license=license, governed_by=governed_by) for key, value in items]


_SENT_SPLIT_RE = lazy_compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_PHRASE_SPLIT_RE = lazy_compile(r"[,;:()\[\]\n.!?]+|\s+(?:and|or|but|because|when|while|so|then|which|that)\s+")


def _first(d: dict, *keys: str) -> Any:
    norm = {re.sub(r"[^a-z]", "", str(k).lower()): v for k, v in d.items()}
    for key in keys:
        v = norm.get(re.sub(r"[^a-z]", "", key.lower()))
        if v not in (None, "", [], {}):
            return v
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return " ".join(_text(v) for v in value.values())
    return str(value)


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [_text(v) for v in value if _text(v)]
    if isinstance(value, str):
        parts = [p.strip(" -*•\t") for p in re.split(r"\n|;|(?<=[a-z)])\s*,\s*(?=[a-z])", value)]
        return [p for p in parts if p]
    return [_text(value)]


def _summary(text: str) -> str:
    sentences = _SENT_SPLIT_RE.split(text.strip())
    out = sentences[0] if sentences else ""
    if len(sentences) > 1 and len(out) + len(sentences[1]) < 380:
        out = f"{out} {sentences[1]}"
    if len(out) > 400:
        cut = out[:397].rsplit(" ", 1)[0]
        out = cut.rstrip(",;:") + "..."
    return out


def key_phrases(text: str, limit: int = 18) -> list[str]:
    """2-4 word phrases of a text, in order, distinct: the signals of a card written as prose."""
    from sentinel.memory.cards.text import STOP_WORDS

    out: list[str] = []
    seen: set[str] = set()
    for piece in _PHRASE_SPLIT_RE.split(text):
        words = [w for w in re.findall(r"[A-Za-z][\w.+#-]*", piece) if w.lower() not in STOP_WORDS]
        while len(words) >= 2 and len(out) < limit:
            phrase = " ".join(words[:3] if len(words) != 4 else words)
            words = words[3:] if len(words) != 4 else []
            key = phrase.lower()
            if key not in seen and len(phrase) <= 60:
                seen.add(key)
                out.append(phrase)
        if len(out) >= limit:
            break
    return out


def _slug(key: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-")
    return f"mg-{slug}"[:80] or "mg-card"


def memgovern_card(key: str, value: Any, license: str | None = None, governed_by: str = "imported") -> dict:
    value = value if isinstance(value, dict) else {"bug_description": value}
    bug = value.get("bug_description", value.get("index_layer"))
    fix = value.get("fix_experience", value.get("resolution_layer"))
    bug_d = bug if isinstance(bug, dict) else {}
    fix_d = fix if isinstance(fix, dict) else {}
    bug_text = _text(bug) if not bug_d else _text(_first(bug_d, "problem_summary", "summary", "description",
                                                             "problem", "symptom"))
    fix_text = _text(fix) if not fix_d else ""

    summary = _text(_first(bug_d, "problem_summary", "summary", "problem")) if bug_d else ""
    summary = _summary(summary or bug_text)
    signals = _list(_first(bug_d, "signals", "keywords", "key_signals", "symptoms")) if bug_d else []
    if not signals:
        signals = key_phrases(bug_text + " " + _text(_first(bug_d, "signals", "error", "symptoms")))
    tags_in = _first(bug_d, "tags") if bug_d else None
    tags_in = tags_in if isinstance(tags_in, dict) else {}
    language = _text(_first(tags_in, "language") or _first(bug_d, "language") or _first(value, "language")
                     or "python").lower()
    components = _list(_first(tags_in, "components", "component", "modules") or _first(bug_d, "components",
                                                                                          "component", "module"))
    exceptions = _list(_first(tags_in, "exceptions", "errors") or _first(bug_d, "exceptions", "error_type"))

    root_cause = _text(_first(fix_d, "root_cause", "cause", "analysis")) if fix_d else ""
    strategy = _text(_first(fix_d, "fix_strategy", "strategy", "solution", "fix")) if fix_d else ""
    if fix_text and not (root_cause and strategy):
        sentences = _SENT_SPLIT_RE.split(fix_text)
        half = max(1, len(sentences) // 2)
        root_cause = root_cause or " ".join(sentences[:half])
        strategy = strategy or " ".join(sentences[half:]) or fix_text
    digest_in = _first(fix_d, "patch_digest", "patch", "changes") if fix_d else None
    areas: list[str] = []
    chunks: list[dict] = []
    if isinstance(digest_in, dict):
        areas = _list(_first(digest_in, "areas", "files", "modules"))
        for c in digest_in.get("chunks") or []:
            if isinstance(c, dict):
                chunks.append({"what": _text(_first(c, "what", "change")), "why": _text(_first(c, "why", "reason"))})
    elif isinstance(digest_in, list):
        for c in digest_in:
            if isinstance(c, dict):
                chunks.append({"what": _text(_first(c, "what", "change")), "why": _text(_first(c, "why", "reason"))})
            elif _text(c):
                chunks.append({"what": _text(c), "why": "part of the fix strategy"})
    if not areas:
        areas = components[:3]
    verif_in = _first(fix_d, "verification", "validation", "tests") if fix_d else None
    verif_d = verif_in if isinstance(verif_in, dict) else {}
    reproduction = _text(_first(verif_d, "reproduction", "reproduce", "steps")) or (
        _text(verif_in) if isinstance(verif_in, str) else "")
    tests_added = _list(_first(verif_d, "tests_added", "tests", "test_cases")) or (
        _list(verif_in) if isinstance(verif_in, list) else [])
    edge_cases = _list(_first(verif_d, "edge_cases", "edge cases"))

    prov_in = value.get("provenance") if isinstance(value.get("provenance"), dict) else {}
    references = _list(_first(prov_in, "references") or _first(value, "references", "url", "issue_url",
                                                                 "pr_url"))
    provenance = {"source": "imported", "record_id": str(key),
                  "repository": _text(_first(prov_in, "repository") or _first(value, "repo", "repository")) or None,
                  "license": license or _text(_first(prov_in, "license") or _first(value, "license")) or None,
                  "references": references}
    return {
        "id": _slug(key),
        "problem_summary": summary,
        "signals": signals[:18],
        "tags": {"language": language, "components": components[:5], "exceptions": exceptions, "rules": []},
        "root_cause": root_cause,
        "fix_strategy": strategy,
        "patch_digest": {"areas": areas[:6], "chunks": chunks[:8]},
        "verification": {"reproduction": reproduction, "tests_added": tests_added[:10],
                         "edge_cases": edge_cases[:8]},
        "provenance": {k: v for k, v in provenance.items() if v not in (None, "")},
        "quality": {"governed_by": governed_by},
    }


def write_governed(cards: list[dict], path: Path) -> None:
    """Write checked cards as JSONL with their computed checklist scores, atomically."""
    from sentinel.memory.cards.model import check_card, checklist_scores

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for card in cards:
            card = dict(card)
            card["quality"] = {**card.get("quality", {}), "checklist": checklist_scores(card, check_card(card))}
            fh.write(json.dumps(card, ensure_ascii=False, sort_keys=False) + "\n")
    os.replace(tmp, path)
