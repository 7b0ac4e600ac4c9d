"""`sentinel memory learn`: the governance pipeline that turns a project's fix history into experience cards.

    candidates (git history, GitHub issues linked to merged PRs, or fix records)
      -> closed-loop purification (problem text relevant to the changed code; no bumps, formatting, docs)
      -> standardisation into the two card layers (deterministic offline standardiser, or an LLM via litellm)
      -> checklist QC with a refine loop (at most 3 rounds)
      -> dedup / merge of near duplicates
      -> the LearnedCardStore (sentinel.memory.store.learned) and the project's learned index

Modules: model (the typed candidate), paths (what a changed file is), gitsource / github_source / records
(candidate sources), resolution (what the fix changed, read with the AST: codechange for a file's symbols,
astchange for how one symbol changed, regression for the test and its assertion), nonfix (what is not a bug fix),
purify, problem (the project's own description), phrases and standardise (the card), llm, qc, dedup, pipeline (the
orchestration, stage counts, progress).
Nothing here is imported by the hook path.
"""
