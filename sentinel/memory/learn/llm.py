"""The LLM standardiser (`sentinel memory learn --llm MODEL`), through litellm.

The model gets the candidate's facts (what the deterministic standardiser extracted: exceptions, identifiers,
components, mechanism cues, what the diff does, tests) and the raw texts (message, fragment, a cut diff), and must
answer one JSON object of the strict `CardDraft` schema (pydantic, extra fields forbidden) written in its own
words. A reply that is not valid JSON or does not fit the schema is retried with the validation errors (at most
`retries` times); a reply that fails the card checklist goes through the QC refine loop, which sends the
problems back. Tokens and cost (litellm's price table, offline) are added up and shown. litellm is imported
only here (the [llm] extra).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel.llmclient import import_litellm
from sentinel.memory.cards import taxonomy
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.standardise import (
    GOVERNED_BY,
    OWN_WORDS_SOURCES,
    card_id,
    changed_files,
    code_changes,
    confidence,
    excerpt_of,
    facts,
)

MechanismTag = Literal[taxonomy.TAGS]  # type: ignore[valid-type]
MAX_DIFF = 6000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DraftChunk(_Strict):
    what: str = Field(max_length=200)
    why: str = Field(max_length=120)


class DraftVerification(_Strict):
    reproduction: str
    tests_added: list[str] = Field(min_length=1, max_length=10)
    edge_cases: list[str] = Field(default_factory=list, max_length=8)


class CardDraft(_Strict):
    """What the model writes: the card's index and resolution layers (ids, provenance and quality are ours)."""

    problem_summary: str = Field(min_length=40, max_length=400)
    signals: list[str] = Field(min_length=10, max_length=18)
    components: list[str] = Field(min_length=1, max_length=5)
    exceptions: list[str] = Field(default_factory=list)
    mechanisms: list[MechanismTag] = Field(default_factory=list, max_length=3)  # type: ignore[valid-type]
    identifiers: list[str] = Field(default_factory=list, max_length=12)
    root_cause: str = Field(min_length=80, max_length=1200)
    fix_strategy: str = Field(min_length=80, max_length=1200)
    areas: list[str] = Field(min_length=1, max_length=6)
    chunks: list[DraftChunk] = Field(min_length=3, max_length=8)
    verification: DraftVerification


SYSTEM = """You write governed experience cards of past bug fixes for a code-review memory.
Answer with ONE JSON object and nothing else, with exactly these keys:
problem_summary (1-2 sentences, 40-400 chars: the symptom as a developer sees it and its trigger; no project or
repository names, no file paths, no URLs, no commit hashes, no identifiers longer than 24 chars),
signals (10-18 distinct phrases of 2-4 words: mechanism, symptom, trigger, component),
components (1-5), exceptions (exception type names), mechanisms (0-3 of: {tags}),
identifiers (functions/classes/options the fix touched, exact spelling, at most 12),
root_cause (80-1200 chars: trigger -> failure chain and the violated assumption),
fix_strategy (80-1200 chars: the design-level fix, compatibility, trade-offs),
areas (1-6 short area names), chunks (3-8 objects {{"what", "why"}}, each under 300 chars, never diff lines),
verification ({{"reproduction", "tests_added" (1-10), "edge_cases" (0-8)}}).
Write everything in your own words: never copy sentences from the commit message, changelog or diff; identifiers,
exception names and short technical terms are fine.""".format(tags=", ".join(taxonomy.TAGS))


def _extract_json(text: str) -> dict:
    text = (text or "").strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    if fence:
        text = fence.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return json.loads(text[start:end + 1])


class LLMStandardiser:
    """Standardise and refine through a model. `cost` (USD, None when unknown), `calls`, `tokens` add up."""

    def __init__(self, model: str, api_base: str | None = None, timeout: float = 60.0, retries: int = 2):
        from sentinel.errors import ConfigError

        try:
            self.litellm = import_litellm()
        except ImportError:
            raise ConfigError("--llm needs litellm: pip install 'diff-sentinel[llm]'") from None
        self.model = model
        self.api_base = api_base
        self.timeout = timeout
        self.retries = retries
        self.cost: float | None = 0.0
        self.calls = 0
        self.tokens = 0
        self.failures: list[str] = []

    @property
    def name(self) -> str:
        return f"llm:{self.model}"

    def _complete(self, messages: list[dict]) -> str:
        from sentinel.redact import redact_tree

        # Commit text and diffs leave the machine here: through the one redaction path first.
        messages = redact_tree(messages)
        kwargs = {"model": self.model, "messages": messages, "timeout": self.timeout, "temperature": 0,
                  "num_retries": 0, "max_retries": 0, "response_format": {"type": "json_object"}}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        response = self.litellm.completion(**kwargs)
        self.calls += 1
        usage = getattr(response, "usage", None)
        self.tokens += int(getattr(usage, "total_tokens", 0) or 0)
        try:
            cost = float(self.litellm.completion_cost(completion_response=response))
            self.cost = None if self.cost is None else self.cost + cost
        except Exception:  # a model without a price: the total is unknown, never guessed
            self.cost = None
        return response.choices[0].message.content or ""

    def _draft(self, messages: list[dict]) -> CardDraft | None:
        """One draft, retrying with the validation errors; None after the retries (counted as a failure)."""
        for attempt in range(self.retries + 1):
            try:
                reply = self._complete(messages)
            except Exception as exc:  # provider errors (rate limit, timeout, 5xx) retry, then fail the card
                self.failures.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
                continue
            try:
                return CardDraft.model_validate(_extract_json(reply))
            except (ValueError, ValidationError) as exc:
                errors = str(exc)[:1500]
                self.failures.append(f"invalid reply: {errors.splitlines()[0][:160]}")
                messages = [*messages, {"role": "assistant", "content": reply[:4000]},
                            {"role": "user", "content": f"That reply does not fit the schema:\n{errors}\n"
                                                        "Answer again with one corrected JSON object."}]
        return None

    def _prompt(self, cand: Candidate) -> str:
        f = facts(cand)
        diff = cand.source_diff[:MAX_DIFF]
        analysis = f["analysis"]
        test = analysis.test()
        return "\n".join([
            f"Commit subject: {cand.subject}", f"Commit body: {cand.body[:2000]}",
            f"Changelog / issue text: {cand.fragment[:2000]}",
            f"Facts: exceptions={f['exceptions']} identifiers={f['identifiers']} components={f['components']} "
            f"mechanisms={f['mechanisms']} tests added={cand.tests_added}",
            "What the code changes do (read with the AST): " + "; ".join(
                f"{c['kind']} in {c['symbol']}: {c['detail']}" for c in code_changes(analysis, 6)),
            f"Regression test: {test.name}: {test.assertion}" if test else "Regression test: none",
            f"Source diff (cut):\n{diff}",
        ])

    def standardise(self, cand: Candidate, relevance: float = 0.0, source: str = "learned") -> dict | None:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": self._prompt(cand)}]
        draft = self._draft(messages)
        if draft is None:
            return None
        card = self._card(draft, cand, relevance, source)
        card["_messages"] = messages  # kept for the refine loop, removed by it or by strip()
        return card

    def _card(self, d: CardDraft, cand: Candidate, relevance: float, source: str) -> dict:
        from sentinel.memory.learn.standardise import _language

        provenance = {"source": source, "repository": cand.repository, "commit": cand.sha,
                      "date": cand.date or None, "url": cand.urls[0] if cand.urls else None,
                      "references": cand.urls[:5], "record_id": cand.record_id, "license": cand.license}
        f = facts(cand)
        conf = confidence(cand, f, relevance)
        analysis = f["analysis"]
        # what the AST read from the fix is ours, whoever writes the prose: symbols, changes, excerpt, test
        digest = {"areas": d.areas, "chunks": [c.model_dump() for c in d.chunks], "changes": code_changes(analysis)}
        excerpt = excerpt_of(analysis) if source not in OWN_WORDS_SOURCES else None
        if excerpt:
            digest["excerpt"] = excerpt
        verification = d.verification.model_dump()
        test = analysis.test()
        if test is not None:
            verification["regression_test"] = {"name": test.name, "file": test.file, "assertion": test.assertion}
        return {
            "id": card_id(cand), "problem_summary": d.problem_summary, "signals": d.signals,
            "tags": {"language": _language(cand), "components": d.components, "exceptions": d.exceptions,
                     "rules": [], "mechanisms": list(dict.fromkeys([*f["mechanisms"], *d.mechanisms]))[:3],
                     "identifiers": [i for i in d.identifiers if re.fullmatch(r"[A-Za-z_][\w.-]*", i)],
                     "files": changed_files(cand), "symbols": analysis.symbols()},
            "root_cause": d.root_cause, "fix_strategy": d.fix_strategy,
            "patch_digest": digest,
            "verification": verification,
            "provenance": {k: v for k, v in provenance.items() if v not in (None, "", [])},
            "quality": {"governed_by": f"sentinel memory learn ({self.name})", "standardiser": self.name,
                        "confidence": conf, "relevance": round(relevance, 3)},
        }

    def refine(self, card: dict, problems: list[str], cand: Candidate | None) -> dict:
        """One refine round: the problems go back to the model with its previous card."""
        messages = card.pop("_messages", None) or [{"role": "system", "content": SYSTEM},
                                                   {"role": "user", "content": self._prompt(cand) if cand else ""}]
        shown = {k: v for k, v in card.items() if k not in ("provenance", "quality", "id")}
        messages = [*messages, {"role": "assistant", "content": json.dumps(shown)[:6000]},
                    {"role": "user", "content": "The card fails these checks:\n- " + "\n- ".join(problems) +
                                                "\nAnswer with the corrected JSON object."}]
        draft = self._draft(messages)
        if draft is None or cand is None:
            return card
        new = self._card(draft, cand, float(card.get("quality", {}).get("relevance") or 0.0),
                         card.get("provenance", {}).get("source", "learned"))
        new["_messages"] = messages
        return new


def strip(card: dict) -> dict:
    card.pop("_messages", None)
    return card


GOVERNED = GOVERNED_BY
