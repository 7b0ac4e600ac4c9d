"""Hypotheses: what this project's gate runs failed on. Signatures of findings (signature), the gate hook that
records each run and recalls at a failure (gate_hook, quiet), and the brief of a change (brief). The store they
live in is sentinel.memory.store."""
