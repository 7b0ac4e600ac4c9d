"""The project's code map: which source files define which names, so a query can point at code areas.

Names are the functions, classes and types a file defines and the module's own name (its file name).

A bug report names code far more often than it names files: "fix append_slash_redirect when ...", "`NetRCAuth`
ignores ...", "proxy fallback for __class__". The learned memory knows which files each past fix touched
(`tags.files`); the code map closes the loop from the words of the query to those files. It is read once, when
the project's learned index is built, from the repository tree at the learned revision (one `git ls-tree` and
one `git cat-file --batch`, however many files), and stored beside the index (`codemap.json`).

At search time every query name — identifiers, and plain words of four letters or more — that the project
defines votes for the files defining it, each file getting 1/(number of files defining the name); names defined
in more than MAX_FILES files identify nothing and are skipped. Search weighs each name by how specific it is among
the cards (sentinel.memory.retrieval.small: a card's `area` is the mean over the query's defined names of specificity
times the share of the name's files the card's fix touched). Pure Python, cheap to import.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from sentinel.gitio import feed_stdin
from sentinel.lazyre import lazy_compile  # compiled on first use: recall imports this module, never these

CODEMAP_FILE = "codemap.json"
MAX_FILES = 3  # a name defined in more files than this points nowhere in particular
MAX_SOURCE_FILES = 20_000
MAX_FILE_BYTES = 1_000_000
MIN_NAME = 4
# definitions of the common languages: def/class (Python, Ruby), function/class (JS/TS, PHP), func (Go),
# fn/struct/enum/trait (Rust), class/interface/enum (Java, Kotlin, C#, Swift)
_DEFINITION = lazy_compile(
    r"^[ \t]*(?:(?:export|pub(?:\([\w:]+\))?|public|private|protected|internal|static|abstract|final|open|"
    r"default|async|override|data|sealed)\s+)*"
    r"(?:def|class|function\*?|func|fn|struct|enum|trait|interface|module|object|type)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_]\w*)(?=\s*[(:<{=\[;]|\s*$|\s+(?:extends|implements)\b)", re.MULTILINE)
_WORD = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")


def norm_path(path: str) -> str:
    """A source path as a module path: POSIX, without a leading src/ or lib/ (a project that moves to a src
    layout keeps its modules)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    while len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return "/".join(parts)


def symbol_key(symbol: str) -> str:
    """A card symbol ("src/pkg/client.py::Client.send") as the index keys it: its path as norm_path spells it."""
    path, _, qual = symbol.partition("::")
    return f"{norm_path(path)}::{qual}"


def definitions(text: str) -> set[str]:
    """Names a source file defines (lower-cased, at least MIN_NAME characters, not private dunders)."""
    out = set()
    for m in _DEFINITION.finditer(text):
        name = m.group(1)
        if len(name.strip("_")) >= MIN_NAME and not (name.startswith("__") and name.endswith("__")):
            out.add(name.lower())
    return out


def module_names(path: str) -> set[str]:
    """A module is a name too ("the multipart parser", "ASGI raw_path"): its file name without extension and
    underscores, when it has MIN_NAME characters (package markers such as __init__ are not)."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if stem.startswith("__") and stem.endswith("__"):
        return set()
    stem = stem.strip("_").lower()
    return {stem} if len(stem) >= MIN_NAME else set()


def build(files: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """{name: [paths defining it]} from (path, text) pairs; names defined in more than MAX_FILES files dropped."""
    where: dict[str, set[str]] = {}
    for path, text in files:
        p = norm_path(path)
        for name in definitions(text) | module_names(p):
            where.setdefault(name, set()).add(p)
    return {name: sorted(paths) for name, paths in sorted(where.items()) if len(paths) <= MAX_FILES}


def from_git(root: str, rev: str = "HEAD", keep=None) -> dict[str, list[str]]:
    """The code map of the repository tree at rev, over the files `keep(path)` accepts (default: every file; the
    learner passes its source-file test); empty when git cannot read it."""
    try:
        listing = subprocess.run(["git", "-c", "core.quotepath=off", "ls-tree", "-r", "-z", "-l", rev], cwd=root,
                                 capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    if listing.returncode != 0:
        return {}
    blobs: list[tuple[str, str]] = []
    for entry in listing.stdout.split(b"\0"):
        if not entry or b"\t" not in entry:
            continue
        meta, path_b = entry.split(b"\t", 1)
        parts = meta.split()
        if len(parts) < 4 or parts[1] != b"blob" or not parts[3].isdigit() or int(parts[3]) > MAX_FILE_BYTES:
            continue
        path = path_b.decode("utf-8", "replace")
        if keep is None or keep(path):
            blobs.append((path, parts[2].decode()))
        if len(blobs) >= MAX_SOURCE_FILES:
            break
    if not blobs:
        return {}
    return build(_read_blobs(root, blobs))


def _read_blobs(root: str, blobs: list[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    """(path, text) of each blob, from one `git cat-file --batch` process (input written up front: the object
    names are small, the contents are read as they come)."""
    proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    writer = feed_stdin(proc, "".join(f"{sha}\n" for _, sha in blobs).encode())
    try:
        for path, _ in blobs:
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                continue
            data = proc.stdout.read(int(header[2]) + 1)[:-1]
            yield path, data.decode("utf-8", "replace")
    finally:
        proc.stdout.close()
        proc.wait()
        writer.join()


def write(codemap: dict[str, list[str]], out_dir: str | Path) -> None:
    Path(out_dir, CODEMAP_FILE).write_text(json.dumps(codemap, sort_keys=True, separators=(",", ":")) + "\n",
                                           encoding="utf-8")


def load(index_dir: str | Path) -> dict[str, list[str]] | None:
    try:
        data = json.loads(Path(index_dir, CODEMAP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    # a damaged file degrades to "no code map" for the names it garbles, never to a failed search
    return {k: [p for p in v if isinstance(p, str)] for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list)}


def query_names(text: str, identifiers: Iterable[str] = ()) -> list[str]:
    """The names of a query the code map is asked about: its identifiers (a dotted one by its last part) and
    its plain words of MIN_NAME letters or more, lower-cased, first occurrence first."""
    from sentinel.memory.cards.text import STOP_WORDS

    names = [i.rsplit(".", 1)[-1].lower() for i in identifiers]
    names += [w.lower() for w in _WORD.findall(text) if len(w) >= MIN_NAME]
    return [n for n in dict.fromkeys(names) if n not in STOP_WORDS]


def file_votes(codemap: dict[str, list[str]], names: Iterable[str],
               weights: dict[str, float] | None = None) -> dict[str, float]:
    """{path: vote}: each name the project defines gives each defining file weight/(files defining it)
    (weight 1 unless given: search weighs a name by how specific it is among the cards)."""
    votes: dict[str, float] = {}
    for name in names:
        paths = codemap.get(name)
        if not paths:
            continue
        share = (1.0 if weights is None else weights.get(name, 1.0)) / len(paths)
        for p in paths:
            votes[p] = votes.get(p, 0.0) + share
    return votes
