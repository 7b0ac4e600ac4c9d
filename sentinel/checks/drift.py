"""Task drift: does the change do what it was asked to do?

The task (--task, SENTINEL_TASK, the task file, or the issues the message references) is compared
with the change: its message AND a digest of its code (files, functions and classes touched). The
two halves are embedded separately and mixed with a fixed weight, so a long on-topic message cannot
carry off-topic code. The score is the cosine similarity of the task with that mix; the threshold
and bands come from calibration on real bug-fix records (scripts/calibrate_drift.py, docs/intent.md).
"""

from __future__ import annotations

from sentinel.models import CheckResult, CheckStatus, Finding, Severity
from sentinel.rules import Rule

CHECK = "drift"

_TASK = "Add retries with exponential backoff to the HTTP client when the server answers 503"
RULES: tuple[Rule, ...] = (
    Rule("SEN501", "task-drift", CHECK, Severity.ERROR,
         "The change (its message and the code it touches) is unrelated to the task it was asked to do.",
         "Agents and people drift: a change that does something else than the task passes review on its own "
         "merits while the task stays undone.",
         "import csv\n\n\ndef export_invoices(rows, path):\n    with open(path, 'w', newline='') as fh:\n"
         "        csv.writer(fh).writerows(rows)\n",
         "import time\n\n\ndef get_with_retry(session, url, attempts=5):\n    delay = 0.5\n"
         "    for _ in range(attempts):\n        response = session.get(url)\n        if response.status_code != 503:\n"
         "            return response\n        time.sleep(delay)\n        delay *= 2\n    return response\n",
         hint="do the task, or update the task (--task / .sentinel/task.md) if it changed",
         example_path="billing/export.py", counter_example_path="http_client/retry.py",
         example_task=_TASK, example_message="Export invoices as CSV files",
         counter_example_message="Retry HTTP requests with exponential backoff on 503 responses"),
    Rule("SEN502", "task-drift-borderline", CHECK, Severity.INFO,
         "The change is only loosely related to the task: the similarity is just above the threshold.",
         "A borderline score is where drift starts; it is worth a look before it becomes a failure.",
         "def parse_header(value):\n    return value.split(';')[0].strip()\n",
         "import time\n\n\ndef get_with_retry(session, url, attempts=5):\n    delay = 0.5\n"
         "    for _ in range(attempts):\n        response = session.get(url)\n        if response.status_code != 503:\n"
         "            return response\n        time.sleep(delay)\n        delay *= 2\n    return response\n",
         hint="check that the change still serves the task",
         example_path="http_client/headers.py", counter_example_path="http_client/retry.py",
         example_task=_TASK, example_message="Parse the HTTP content type header",
         counter_example_message="Retry HTTP requests with exponential backoff on 503 responses",
         # A wide borderline band so that the example does not depend on the third decimal of the model.
         example_config={"drift": {"threshold": 0.10, "borderline_margin": 0.45}}),
)
_RULE = {r.code: r for r in RULES}


# What to do about drift depends on how far the change is from the task: just below the threshold the change
# usually serves the task and its message does not say how; at the critical end it is another task altogether
# (the wrong task file, the wrong branch, the wrong files staged).
_ADVICE = {
    "low": "the change is close to the task: say in the message how it serves the task, or update the task "
           "(--task / .sentinel/task.md) if it changed",
    "medium": "part of the change strays from the task{least}: move that part to its own change, or say in the "
              "message why the task needs it",
    "high": "most of the change is unrelated to the task{least}: do the task in this change and put the rest in "
            "its own",
    "critical": "the change has almost nothing to do with the task: check that the task is the one you meant "
                "(--task, SENTINEL_TASK, .sentinel/task.md) and that you are checking the change you meant "
                "(branch, staged files)",
}
LEAST_RELATED = 2  # files named in the advice of a medium or high band


def advice(level: str, least_related: list[str] | None = None) -> str:
    """The fix hint of a drift finding of this band; `least_related`: the files furthest from the task."""
    least = f" (least related: {', '.join(least_related)})" if least_related else ""
    return _ADVICE[level].format(least=least)


def least_related(embedder, task_vec, digest, limit: int = LEAST_RELATED) -> list[str]:
    """The files of a change of several files whose own part of the digest is furthest from the task."""
    from sentinel.intent.digest import identifier_words, path_words

    paths = [p for p, _ in digest.files[:40]]
    if len(paths) < 2:
        return []
    texts = []
    for path in paths:
        names = [identifier_words(s.name.rsplit(".", 1)[-1]) for s in digest.symbols if s.path == path][:20]
        texts.append("; ".join(w for w in [path_words(path), *names] if w) or path)
    sims = embedder.encode(texts) @ task_vec
    ranked = sorted(range(len(paths)), key=lambda i: (float(sims[i]), paths[i]))
    return [paths[i] for i in ranked[:limit]]


def band(score: float, cfg) -> str:
    if score < cfg.critical_below:
        return "critical"
    if score < cfg.high_below:
        return "high"
    if score < cfg.medium_below:
        return "medium"
    return "low"


def change_vector(embedder, message: str, digest_text: str, digest_weight: float):
    """One normalized vector for the change: message and digest embedded apart, then mixed."""
    import numpy as np
    parts, weights = [], []
    if message.strip():
        parts.append(message)
        weights.append(1.0 - digest_weight)
    if digest_text.strip():
        parts.append(digest_text)
        weights.append(digest_weight)
    if not parts:
        return None
    vecs = embedder.encode(parts)
    mixed = np.asarray(weights, dtype=np.float32) @ vecs
    norm = float(np.linalg.norm(mixed))
    return mixed / norm if norm > 0 else None


def similarity(embedder, task: str, message: str, digest_text: str, digest_weight: float) -> float | None:
    vec = change_vector(embedder, message, digest_text, digest_weight)
    if vec is None:
        return None
    task_vec = embedder.encode([task])[0]
    return float(task_vec @ vec)


def _advice_for(level: str, embedder, task: str, digest) -> str:
    if level not in ("medium", "high"):
        return advice(level)
    return advice(level, least_related(embedder, embedder.encode([task])[0], digest))


def check_change(cctx) -> CheckResult:
    from sentinel.intent.task import resolve_task
    cfg = cctx.config.drift
    task = resolve_task(cctx)
    if task is None:
        return CheckResult(CHECK, CheckStatus.SKIPPED,
                           reason="no task given (use --task, SENTINEL_TASK or .sentinel/task.md)")
    from sentinel.intent.digest import build_digest
    digest = build_digest(cctx.files, cctx.file_contexts)
    message = (cctx.message or "").strip()
    digest_text = digest.embed_text()
    if not message and not digest_text:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason="the change has neither a message nor code to compare")
    from sentinel.embeddings import EmbedderUnavailable, get_embedder
    try:
        embedder = get_embedder(cctx.config.embeddings)
    except EmbedderUnavailable as exc:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason=f"no embedding model: {exc.reason}; fix: {exc.fix}")
    score = similarity(embedder, task.text, message, digest_text, cfg.digest_weight)
    if score is None:
        return CheckResult(CHECK, CheckStatus.SKIPPED, reason="the change has no text to compare with the task")
    compared = ("the message and " if message else "") + f"a digest of the change ({digest.summary(3)})"
    basis = f"task from {task.source}; compared {compared}"
    findings: list[Finding] = []
    if score < cfg.threshold:
        level = band(score, cfg)
        rule = _RULE["SEN501"]
        findings.append(Finding(rule.code, CHECK, rule.severity, "", None,
                                f"change drifts from the task: similarity {score:.2f} < {cfg.threshold:.2f} "
                                f"(band: {level}); {basis}", hint=_advice_for(level, embedder, task.text, digest)))
    elif score < cfg.threshold + cfg.borderline_margin:
        rule = _RULE["SEN502"]
        findings.append(Finding(rule.code, CHECK, rule.severity, "", None,
                                f"change is only loosely related to the task: similarity {score:.2f} "
                                f"(threshold {cfg.threshold:.2f}); {basis}", hint=rule.hint))
    reason = f"similarity {score:.2f} (threshold {cfg.threshold:.2f}, {task.source}, model {embedder.name})"
    return CheckResult(CHECK, CheckStatus.PASSED, findings=findings, reason=reason)
