#!/usr/bin/python3
"""Exports a HuggingFace model folder to ONNX for the ONNX Runtime peer benchmark.

The graph is traced from the independent PyTorch reference (tools/golden/reference.py), which
mirrors the HF modelling code op for op, so ONNX Runtime sees the same graph shape an
`optimum`/`torch.onnx` export of the HF model gives it (and its transformer fusions apply to
it alike). Inputs: input_ids, token_type_ids, attention_mask (int64 [batch, seq], dynamic);
output: last_hidden_state.

    /usr/bin/python3 bench/peers/export_onnx.py MODEL_DIR OUT.onnx
"""

import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "golden"))
import reference  # noqa: E402


class LastHiddenState(torch.nn.Module):
    def __init__(self, ref):
        super().__init__()
        self.ref = ref

    def forward(self, input_ids, token_type_ids, attention_mask):
        return self.ref.forward(input_ids, token_type_ids, attention_mask)["last_hidden_state"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = sys.argv[1], sys.argv[2]
    ref = reference.Reference(model_dir, torch.float32)
    ref.heads_at_once = True  # one attention op per layer, as upstream's graph has
    ids = torch.full((2, 8), 1000, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.ones_like(ids)
    dynamic = {0: "batch", 1: "seq"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's id range check becomes a constant
        torch.onnx.export(LastHiddenState(ref), (ids, types, mask), out, opset_version=14,
                          input_names=["input_ids", "token_type_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dynamic, "token_type_ids": dynamic,
                                        "attention_mask": dynamic, "last_hidden_state": dynamic})
    print(out)


if __name__ == "__main__":
    main()
