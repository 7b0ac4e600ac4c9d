"""How often redaction masks ordinary text: every line of real commit messages, changelog fragments and code that
redaction changes, on text that holds no secret (well-kept projects' histories, where a credential in a
message is all but unheard of, so nearly every mask is a false one).

Reads ../shared (commit messages and news fragments of the fix records, the noise corpus's messages and its
files' added lines, the corpus's commit messages); skips cleanly without it. Prints, per source, lines read
and lines masked, and every masked message line (code lines: the first 40), so each can be looked at. Run it
on two checkouts to compare (PYTHONPATH=/path/to/other/checkout python benchmarks/redact_prose.py).

    python benchmarks/redact_prose.py [--shared ../shared] [--show 40]
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def messages(shared: Path):
    """(source, line) of every line of every commit message and news fragment."""
    for path in sorted((shared / "fixrecords").glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for raw in fh:
                rec = json.loads(raw)
                for field in ("subject", "body", "news"):
                    for line in (rec.get(field) or "").split("\n"):
                        yield "fixrecords", line
    commits = shared / "corpus" / "commits.jsonl"
    if commits.exists():
        with commits.open(encoding="utf-8") as fh:
            for raw in fh:
                rec = json.loads(raw)
                for line in (rec.get("subject", "") + "\n" + (rec.get("body") or "")).split("\n"):
                    yield "corpus", line
    for rec in _noise(shared):
        for line in (rec.get("subject", "") + "\n" + (rec.get("body") or "")).split("\n"):
            yield "noise", line


def code_lines(shared: Path):
    """Every line a noise-corpus commit adds to a text file (what findings quote)."""
    for rec in _noise(shared):
        for f in rec.get("files", []):
            before, after = f.get("before") or "", f.get("after")
            if after is None:
                continue
            old = before.split("\n")
            for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, after.split("\n"), autojunk=False).get_opcodes() \
                    if len(old) < 3000 else [("insert", 0, 0, 0, len(after.split("\n")))]:
                if tag in ("insert", "replace"):
                    for line in after.split("\n")[j1:j2]:
                        yield f"noise code ({rec['repo'].split('/')[-1]})", line


def _noise(shared: Path):
    for path in sorted((shared / "corpus" / "noise").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for raw in fh:
                yield json.loads(raw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared")
    ap.add_argument("--show", type=int, default=40, help="masked code lines to print")
    args = ap.parse_args()
    if not (args.shared / "fixrecords").is_dir():
        print(f"skipped: {args.shared} holds no fixrecords/ (shared data is not part of a clone)")
        return 0
    from sentinel.redact import redact_line

    for kind, source in (("message", messages(args.shared)), ("code", code_lines(args.shared))):
        read: dict[str, int] = {}
        masked: dict[str, list[tuple[str, str]]] = {}
        for name, line in source:
            read[name] = read.get(name, 0) + 1
            out = redact_line(line)
            if out != line:
                masked.setdefault(name, []).append((line, out))
        total = sum(read.values())
        hits = sum(len(v) for v in masked.values())
        print(f"== {kind} lines: {total:,} read, {hits} masked ({hits / max(total, 1):.4%})")
        for name in sorted(read):
            print(f"   {name}: {read[name]:,} read, {len(masked.get(name, []))} masked")
        shown = 0
        for name in sorted(masked):
            for line, out in masked[name]:
                if kind == "code" and shown >= args.show:
                    break
                shown += 1
                print(f"   [{name}] {line.strip()[:150]}\n      -> {out.strip()[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
