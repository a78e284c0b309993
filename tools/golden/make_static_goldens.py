#!/usr/bin/python3
"""Writes tests/data/static-goldens/<name>.json: the static embedders' reference outputs.

For each layout it writes the fixture with warden-fixture (`--arch static --static-layout ...
--preset tiny --seed 1`), runs the inputs through tools/golden/static_reference.py (model2vec's
or sentence-transformers' rules, token ids from HuggingFace tokenizers) and stores, per input,
the ids the model averages and the embedding.

    /usr/bin/python3 tools/golden/make_static_goldens.py [--fixture-bin build/release/bin/warden-fixture]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_goldens  # noqa: E402  (sha256_tree, F32 and emit)
import static_reference  # noqa: E402

_PARAGRAPH = ("The committee reviewed the quarterly figures, discussed the budget for the coming year and "
              "agreed to publish the minutes after the next meeting. ")
INPUTS = make_goldens.SINGLES + [
    "unknown characters 🦜🦜 are dropped by model2vec, kept by sentence-transformers",
    "🦜",  # only an unknown token: model2vec embeds nothing, i.e. zeros
    _PARAGRAPH * 8,  # ~1,100 characters, ~190 tokens
    _PARAGRAPH * 40,  # ~5,600 characters: past model2vec's character cut and its 512 tokens
]
LAYOUTS = ["model2vec", "model2vec-quantized", "sentence-transformers"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture-bin", default=os.path.join(ROOT, "build", "release", "bin", "warden-fixture"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "static-goldens"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="warden-static-goldens-") as scratch:
        for layout in LAYOUTS:
            name = f"static-{layout}"
            model_dir = os.path.join(scratch, name)
            cmd = [args.fixture_bin, "--arch", "static", "--static-layout", layout, "--preset", "tiny",
                   "--seed", "1", "--out", model_dir]
            subprocess.run(cmd, check=True)
            model = static_reference.load(model_dir)
            ids, vectors = model.encode(INPUTS)
            golden = {
                "schema": 1,
                "name": name,
                "about": "Static embedder outputs of tools/golden/static_reference.py for a warden-fixture "
                         "static model; regenerate with tools/golden/make_static_goldens.py. Compare at 1e-4.",
                "fixture": {"command": " ".join(["warden-fixture"] + cmd[1:-1] + ["DIR"]),
                            "files_sha256": make_goldens.sha256_tree(model_dir)},
                "reference": {"rules": type(model).__name__,
                              "median_token_length": getattr(model, "median_token_length", None),
                              "normalize": bool(model.normalize), "torch": torch.__version__,
                              "numpy": np.__version__},
                "cases": [{"input": text, "ids": i, "embedding": make_goldens.f32(torch.from_numpy(v))}
                          for text, i, v in zip(INPUTS, ids, vectors)],
            }
            path = os.path.join(args.out, name + ".json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(make_goldens.emit(golden) + "\n")
            print(f"{path}: {len(INPUTS)} cases")


if __name__ == "__main__":
    main()
