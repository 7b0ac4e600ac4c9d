"""Cards: the governed card model and checklist (model), the vocabulary cards and queries share (text,
identifiers, taxonomy), card files (corpus), and the searchable index built from them (build, index, with the
project's code map: codemap)."""
