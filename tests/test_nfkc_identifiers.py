"""Python reads identifiers in their NFKC form (PEP 3131): `ｅｖａｌ(x)` is a call of `eval`, `ｏｓ.ｒｅｍｏｖｅ` is
`os.remove`. The gate must see what Python runs: a change spelled with compatibility characters gets the findings
of the same change spelled in ASCII (the keyword prefilters once skipped such files, and they passed). JavaScript
reads identifier escapes the same way: `\\u0065val(s)` calls eval."""

from __future__ import annotations

import json
import unicodedata

import pytest

from tests.harden_util import widen_identifiers

BODY = ("import os\n\n\n"
        "def run(cmd, path):\n"
        "    os.remove(path)\n"
        "    try:\n"
        "        return eval(cmd)\n"
        "    except:\n"
        "        pass\n")


def _findings(repo) -> list[tuple[str, int]]:
    proc = repo.sentinel("check", "--format", "json", "--no-memory")
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((f["rule"], f["line"]) for f in json.loads(proc.stdout)["findings"])


def test_the_wide_spelling_is_python_s_own():
    text = widen_identifiers(BODY)
    assert text != BODY and unicodedata.normalize("NFKC", text) == BODY
    compile(text, "wide.py", "exec")  # valid Python, the same program


@pytest.mark.parametrize("where", ["new file", "lines added to a file"])
def test_a_change_in_fullwidth_identifiers_gets_the_ascii_change_s_findings(repo, where):
    head, tail = "import os\n\n\ndef run(cmd, path):\n", BODY[len("import os\n\n\ndef run(cmd, path):\n"):]
    results = {}
    for spelling in ("ascii", "wide"):
        added = tail if spelling == "ascii" else widen_identifiers(head + tail)[len(widen_identifiers(head)):]
        name = f"{spelling}_mod.py"
        if where == "new file":
            repo.write(name, head + added)
        else:
            repo.write(name, head + "    return None\n")
            repo.add(name)
            repo.commit(f"add {name}")
            repo.write(name, head + added)
        repo.add(name)
        results[spelling] = _findings(repo)
        repo.git("reset", "-q", "--hard") if where != "new file" else repo.git("rm", "-q", "--cached", name)
    assert results["ascii"], "the ASCII change must have findings for this test to mean anything"
    assert {r for r, _ in results["ascii"]} >= {"SEN303", "SEN103"}
    assert results["wide"] == results["ascii"]


def test_javascript_identifier_escapes_are_read_as_the_engine_reads_them(repo):
    # `\u0065val(s)` and `\u{65}val(s)` call eval; the same escape inside a string is text
    repo.write("a.js", "function run(s) {\n"
                       "  return \\u0065val(s);\n"
                       "}\n"
                       "const text = \"\\u0065val(s)\";\n"
                       "const f = new \\u0046unction(\"a\", \"return a\");\n"
                       "\\u{65}val (text);\n")
    repo.add("a.js")
    assert _findings(repo) == [("SEN303", 2), ("SEN303", 5), ("SEN303", 6)]
