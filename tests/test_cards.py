"""The card model, the deterministic checklist (docs/card-format.md), the importers and `memory validate/import`."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel.memory.cards.model import (
    check_card,
    check_corpus,
    checklist_scores,
    file_paths_in,
    parse_card,
    project_names_in,
    sentence_count,
    signal_words,
)
from sentinel.memory.cards.corpus import import_memgovern, key_phrases, load_entries, memgovern_card, write_governed

PROJECT = Path(__file__).resolve().parent.parent

VALID = {
    "id": "fx-demo-0001",
    "problem_summary": "Multipart reader decoded base64 parts incorrectly when chunk boundaries split a "
                       "4-character quantum, corrupting the body.",
    "signals": ["base64 decoding", "multipart body part", "chunk boundary", "partial quantum", "padding handling",
                "over-read body", "corrupted payload", "content transfer encoding", "streaming reader",
                "NPE / null pointer"],
    "tags": {"language": "python", "components": ["multipart", "http body reader"],
             "exceptions": ["binascii.Error"], "rules": []},
    "root_cause": "The reader decoded each network chunk on its own, but base64 only decodes whole four-character "
                  "groups, so a group split across two reads was decoded wrongly.",
    "fix_strategy": "Keep the bytes that do not complete a group and prepend them to the next read; decode only "
                    "whole groups and flush the remainder at the end of the part.",
    "patch_digest": {"areas": ["multipart reader: chunked read path"],
                     "chunks": [{"what": "Carry leftover bytes to the next read", "why": "decode whole quanta"},
                                {"what": "Flush the remainder at end of part", "why": "no data lost"},
                                {"what": "Decode only complete groups", "why": "avoid corrupt output"}]},
    "verification": {"reproduction": "Read a base64 part in 3-byte chunks and compare with the original.",
                     "tests_added": ["small chunk base64 read returns the original bytes"],
                     "edge_cases": ["padding split across chunks"]},
    "provenance": {"source": "fixrecord", "record_id": "demo@abc", "repository": "example/demo",
                   "commit": "2d9c5c1062eff0034fb3ab120897a6c1b3ff7041", "license": "Apache-2.0",
                   "references": []},
    "quality": {"governed_by": "sentinel-maintainers"},
}


def card(**changes) -> dict:
    """VALID with dotted-path changes; a value of ... deletes the key."""
    out = copy.deepcopy(VALID)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = out
        for p in parents:
            node = node[p]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return out


def test_valid_card_passes_and_parses():
    assert check_card(VALID) == []
    c = parse_card(VALID)
    assert c.tags.components == ["multipart", "http body reader"]
    assert "chunk boundary" in c.index_text()
    assert "binascii.Error" in c.lexical_fields()


SUMMARY_OK = "A reader decoded base64 parts incorrectly when chunk boundaries split a quantum, corrupting data."

VIOLATIONS = [
    # all fields present and non-empty
    (card(root_cause=...), "root_cause: missing"),
    (card(tags__components=...), "tags.components: missing"),
    (card(problem_summary=""), "problem_summary: empty"),
    (card(verification__reproduction="  "), "verification.reproduction: empty"),
    (card(quality__governed_by=""), "quality.governed_by: empty"),
    (card(extra_field=1), "extra_field: unknown field"),
    (card(signals="one string"), "signals"),
    # id
    (card(id="FX_Demo"), "id: 'FX_Demo' must be lowercase"),
    # problem_summary
    (card(problem_summary="Too short."), "problem_summary: 10 characters, expected 40-400"),
    (card(problem_summary="x " * 201), "expected 40-400"),
    (card(problem_summary="First sentence here is fine. Second one too. Third one breaks the rule now."),
     "3 sentences"),
    (card(problem_summary="The pytest runner reported warnings at the wrong line for unknown markers."),
     "names a repository or project (pytest)"),
    (card(problem_summary="Using the requests library, redirects dropped the auth header on a new host."),
     "(requests)"),
    (card(problem_summary="The demo client leaked sockets when the peer closed early during a long download."),
     "(demo)"),  # the card's own repository name
    (card(problem_summary="Regression from commit 2d9c5c1 broke decoding of multipart bodies in chunked mode."),
     "commit hash (2d9c5c1)"),
    (card(problem_summary="Decoding broke as described on https://example.com/issue for chunked multipart bodies."),
     "contains a URL"),
    (card(problem_summary="The reader in aio/web/multipart.py decoded base64 parts incorrectly when split."),
     "file path"),
    (card(problem_summary="Editing setup.cfg options had no effect because the reader ignored the section."),
     "file path (setup.cfg)"),
    (card(problem_summary="The helper read_multipart_body_with_base64_decoding corrupted data on split reads."),
     "over-specific identifier"),
    (card(problem_summary="MultipartBase64IncrementalDecoderReader corrupted data when chunks split quanta."),
     "over-specific identifier"),
    # signals
    (card(signals=VALID["signals"][:9]), "signals: 9 entries, expected 10-18"),
    (card(signals=VALID["signals"] + [f"extra signal {c}" for c in "abcdefghi"]), "19 entries"),
    (card(signals=VALID["signals"][:9] + ["corruption"]), "'corruption' has 1 words"),
    (card(signals=VALID["signals"][:9] + ["one two three four five"]), "has 5 words"),
    (card(signals=VALID["signals"][:9] + ["Base64  Decoding"]), "duplicate entry"),
    # tags
    (card(tags__language="snake-oil"), "not a language name"),
    (card(tags__components=[]), "tags.components: 0 entries, expected 1-5"),
    (card(tags__components=list("abcdef")), "6 entries"),
    (card(tags__rules=["E501"]), "not a Sentinel rule code"),
    # root cause / fix strategy
    (card(root_cause="Too short to explain anything."), "root_cause: 30 characters, expected 80-1200"),
    (card(fix_strategy="y" * 1201), "fix_strategy: 1201 characters"),
    # patch digest
    (card(patch_digest__areas=[]), "patch_digest.areas: 0 entries, expected 1-6"),
    (card(patch_digest__areas=list("abcdefg")), "7 entries"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"][:2]), "patch_digest.chunks: 2 entries"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"] * 3), "9 entries"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"][:2] + [{"what": "w" * 200, "why": "y" * 120}]),
     "320 characters, at most 300"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"][:2] + [{"what": "+    decode(buf)", "why": "x"}]),
     "pasted diff"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"][:2] + [{"what": "@@ -1,3 +1,4 @@", "why": "x"}]),
     "pasted diff"),
    (card(patch_digest__areas=["diff --git a/x b/x"]), "pasted diff"),
    (card(patch_digest__chunks=VALID["patch_digest"]["chunks"][:2] + [{"what": "something"}]),
     "chunks[2].why: missing"),
    # verification
    (card(verification__tests_added=[]), "verification.tests_added: 0 entries, expected 1-10"),
    (card(verification__tests_added=[f"t{i}" for i in range(11)]), "11 entries"),
    (card(verification__edge_cases=[f"e{i}" for i in range(9)]), "verification.edge_cases: 9 entries"),
    # provenance
    (card(provenance__commit=...), "provenance.commit: required when source is fixrecord"),
    (card(provenance__license=""), "provenance.license: required when source is fixrecord"),
    (card(provenance={"source": "rule-class", "references": []}), "provenance.references: required"),
    (card(provenance={"source": "imported", "license": "MIT"}), "provenance.record_id: required"),
    (card(provenance__source="blog"), "provenance.source"),
]


@pytest.mark.parametrize("raw,expected", VIOLATIONS, ids=[v[1][:40] for v in VIOLATIONS])
def test_checklist_catches_each_violation(raw, expected):
    problems = check_card(raw)
    assert any(expected in p for p in problems), problems


ALLOWED = [
    card(problem_summary="Concurrent HTTP requests were dropped when the pool reached its limit under load."),
    card(problem_summary="The server answered requests on a Node.js style event loop with stale headers, "
                         "e.g. Content-Length. Clients then hung."),
    card(problem_summary="Reading and writing the same file through read/write handles lost 1048576 bytes."),
    card(problem_summary="The defaced cache entry, about 4096 bytes, was served to every later reader."),
    card(problem_summary="A black box proxy rewrote the header and a rich text body got truncated."),
    card(problem_summary="Environments built after an sdist-then-wheel package used a stale source copy."),
    card(tags__exceptions=[], tags__rules=["SEN301"], verification__edge_cases=[]),
    card(provenance={"source": "rule-class", "references": ["CWE-79"]}),
    card(provenance={"source": "imported", "record_id": "mg-1", "license": "CC-BY-4.0"}),
]


@pytest.mark.parametrize("raw", ALLOWED, ids=range(len(ALLOWED)))
def test_checklist_allows_ordinary_text(raw):
    assert check_card(raw) == []


def test_helpers():
    assert sentence_count("One. Two, e.g. Three here. Four") == 3
    assert sentence_count("Version 1.5 broke it.") == 1
    assert signal_words("NPE / null pointer") == 3
    assert project_names_in("HTTP requests failed") == []
    assert project_names_in("the Requests package", None) == ["requests"]
    assert file_paths_in("Node.js and index.js") == ["index.js"]


def test_ids_must_be_unique_across_the_corpus():
    a, b = card(), card()
    problems = check_corpus([a, b])
    assert problems[0] == []
    assert any("not unique" in p for p in problems[1])


def test_non_object_card():
    assert check_card(["not", "a", "card"]) == ["card: must be a JSON object"]


def test_checklist_scores():
    ok = checklist_scores(VALID, [])
    assert ok["passed"] == ok["total"] and ok["score"] == 1.0
    bad = card(signals=["x"], root_cause="short")
    scores = checklist_scores(bad, check_card(bad))
    assert scores["failed"] == ["root_cause", "signals"]


def test_repository_corpus_is_valid():
    files = sorted((PROJECT / "memory" / "cards").glob("*.jsonl"))
    if not files:
        pytest.skip("no cards in memory/cards")
    bad = [(e.where, e.problems) for e in load_entries(files) if not e.valid]
    assert not bad, bad[:5]


def test_bundled_cards_are_written_for_their_case_with_full_provenance():
    """Each bundled card explains its own case: no card is template output (the deterministic standardiser's cards
    open 100+ root causes and fixes with the same words), and every card written from a fix record names the
    record, repository, commit and license it rests on; rule-class cards cite public references."""
    files = sorted((PROJECT / "memory" / "cards").glob("*.jsonl"))
    if not files:
        pytest.skip("no cards in memory/cards")
    cards = [e.raw for e in load_entries(files)]
    assert not [c["id"] for c in cards if c.get("quality", {}).get("standardiser") == "deterministic"]
    openings: dict[tuple[str, str], list[str]] = {}
    for c in cards:
        for field in ("root_cause", "fix_strategy"):
            openings.setdefault((field, " ".join(c[field].lower().split()[:5])), []).append(c["id"])
    shared = {k: v for k, v in openings.items() if len(v) > 3}
    assert not shared, list(shared.items())[:3]
    for c in cards:
        prov = c["provenance"]
        if prov["source"] == "fixrecord":
            repo_name, _, sha = prov["record_id"].partition("@")
            assert prov["repository"].split("/")[-1] == repo_name and prov["commit"].startswith(sha), c["id"]
            assert len(prov["commit"]) == 40 and int(prov["commit"], 16) >= 0 and prov["license"], c["id"]
        else:
            assert prov["source"] == "rule-class" and prov["references"] and prov["license"], c["id"]


# --- importers ------------------------------------------------------------------------------------------------

STRUCTURED = {
    "bug_description": {
        "problem_summary": "Closing a pooled connection twice returned it to the pool twice, so two callers later "
                           "shared one socket and read each other's responses.",
        "signals": ["double release", "connection pool", "shared socket", "crossed responses", "pool checkin",
                    "idempotent close", "race on close", "response mix-up", "keep-alive reuse", "pool corruption"],
        "tags": {"language": "python", "components": ["connection pool"], "exceptions": []},
    },
    "fix_experience": {
        "root_cause": "The release path did not record that a connection had already been returned, so a second "
                      "close appended the same object to the free list again.",
        "fix_strategy": "Mark connections as released and make release idempotent; a second close is a no-op with "
                        "a debug log. Compatible: callers that close twice keep working.",
        "patch_digest": {"areas": ["pool release path"],
                         "chunks": [{"what": "Track a released flag", "why": "detect double release"},
                                    {"what": "Return early on a second release", "why": "idempotent close"},
                                    {"what": "Log the double release", "why": "find buggy callers"}]},
        "verification": {"reproduction": "Close a connection twice and check out two connections.",
                         "tests_added": ["double close does not duplicate the pool entry"],
                         "edge_cases": ["close after pool shutdown"]},
    },
    "repo": "example/poolkit",
}


def test_memgovern_structured_maps_to_a_valid_card(tmp_path):
    src = tmp_path / "mg.json"
    src.write_text(json.dumps({"owner__repo-123": STRUCTURED}))
    [raw] = import_memgovern(src, license="CC-BY-4.0")
    assert check_card(raw) == []
    assert raw["id"] == "mg-owner-repo-123"
    assert raw["provenance"] == {"source": "imported", "record_id": "owner__repo-123", "repository": "example/poolkit",
                                 "license": "CC-BY-4.0", "references": []}
    assert raw["signals"][0] == "double release"
    assert raw["patch_digest"]["chunks"][1]["what"] == "Return early on a second release"


def test_memgovern_free_text_is_mapped_and_checked():
    raw = memgovern_card("42", {
        "bug_description": "Uploading a large file through the streaming client timed out before the body was "
                           "written, because the read timeout started when the request was sent. Slow links failed "
                           "every time, while fast links passed.",
        "fix_experience": "The timer covered the upload phase. Start the read timeout after the body is written.",
    })
    assert raw["provenance"]["source"] == "imported" and raw["provenance"]["record_id"] == "42"
    assert raw["problem_summary"].startswith("Uploading a large file")
    assert all(2 <= signal_words(s) <= 4 for s in raw["signals"])
    problems = check_card(raw)
    # free text lacks a patch digest, tests and a license: reported, never silently accepted
    assert any("patch_digest.chunks" in p for p in problems)
    assert any("provenance.license" in p for p in problems)


def test_key_phrases():
    phrases = key_phrases("The read timeout started when the request was sent, so slow uploads failed.")
    assert phrases and all(2 <= len(p.split()) <= 4 for p in phrases)


def _sentinel(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sentinel", "memory", *args], cwd=cwd, capture_output=True,
                          text=True)


def test_import_cli_writes_governed_jsonl_and_reports_invalid(tmp_path):
    src = tmp_path / "release.json"
    src.write_text(json.dumps({"good-1": STRUCTURED, "bad-2": {"bug_description": "too short", "fix_experience": ""}}))
    into = tmp_path / "cards"
    proc = _sentinel("import", str(src), "--into", str(into), "--license", "CC-BY-4.0", "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["written"] == 1 and report["invalid"][0]["id"] == "mg-bad-2"
    lines = (into / "release.jsonl").read_text().splitlines()
    written = json.loads(lines[0])
    assert written["quality"]["checklist"]["score"] == 1.0
    assert check_card(written) == []
    # the written file validates and re-imports as JSONL
    assert _sentinel("validate", str(into), cwd=tmp_path).returncode == 0
    again = _sentinel("import", str(into / "release.jsonl"), "--into", str(tmp_path / "again"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "extra-cards" in again.stdout


def test_validate_cli_lists_problems_and_exits_1(tmp_path):
    f = tmp_path / "cards.jsonl"
    f.write_text(json.dumps(VALID) + "\n" + json.dumps(card(id="fx-demo-0002", signals=["x"])) + "\nnot json\n")
    proc = _sentinel("validate", str(f), "--json", cwd=tmp_path)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["cards"] == 3 and data["invalid"] == 2
    where = {p["where"].rsplit(":", 1)[1]: p for p in data["problems"]}
    assert any("signals" in x for x in where["2"]["problems"])
    assert "not JSON" in where["3"]["problems"][0]
    text = _sentinel("validate", str(f), cwd=tmp_path)
    assert text.returncode == 1 and "3 cards in 1 files, 2 invalid" in text.stdout


def test_write_governed_roundtrip(tmp_path):
    out = tmp_path / "x" / "c.jsonl"
    write_governed([VALID], out)
    [entry] = load_entries([out])
    assert entry.valid and entry.raw["quality"]["checklist"]["passed"] == 10
