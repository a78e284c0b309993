#!/usr/bin/python3
"""Graphs for the ONNX rewrite passes' tests (tests/data/onnx/), exported by Debian's
torch.onnx.export (torch 1.13) from tiny modules, so that each pass is tested on what the real
exporter writes:

  layer_norm_opset14.onnx  Linear(8, 8) then LayerNorm(8, eps=1e-12): below opset 17 torch
                           writes LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add
  layer_norm_opset17.onnx  the same module: one LayerNormalization node
  gelu_opset14.onnx        Linear(8, 8) then GELU (erf): Div(√2)/Erf/Add(1)/Mul(x)/Mul(0.5),
                           and the same after a second Linear with HF's form, 0.5·x first
  attention_opset14.onnx   HF's BertSelfAttention (eager) in its own words: transpose_for_scores'
                           view(x.size()[:-1] + (heads, head_dim)) and permute, QKᵀ/√d + the
                           extended mask, softmax, PV, and the view back to (batch, seq, hidden)

Run: /usr/bin/python3 tools/onnx_fixtures/make_pass_fixtures.py [OUT_DIR]
"""

import math
import os
import sys
import warnings

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "onnx")


class SelfAttention(torch.nn.Module):
    """transformers' BertSelfAttention.forward (eager, absolute positions) and
    get_extended_attention_mask, at hidden 16 with 4 heads."""

    def __init__(self, hidden=16, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)

    def transpose_for_scores(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden, attention_mask):
        mask = attention_mask[:, None, None, :].to(torch.float32)
        mask = (1.0 - mask) * torch.finfo(torch.float32).min
        q = self.transpose_for_scores(self.query(hidden))
        k = self.transpose_for_scores(self.key(hidden))
        v = self.transpose_for_scores(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        context = torch.matmul(torch.nn.functional.softmax(scores, dim=-1), v)
        context = context.permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.heads * self.head_dim,))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(3)
    module = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8, eps=1e-12))
    with torch.no_grad():
        module[1].weight.uniform_(0.5, 1.5)
        module[1].bias.uniform_(-0.5, 0.5)
    module.eval()
    x = torch.randn(2, 3, 8)
    for opset in (14, 17):
        path = os.path.join(OUT, f"layer_norm_opset{opset}.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (x,), path, input_names=["x"], output_names=["y"], opset_version=opset,
                              dynamic_axes={"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}})
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    class TwoGelus(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 8)
            self.b = torch.nn.Linear(8, 8)

        def forward(self, x):
            h = torch.nn.functional.gelu(self.a(x))
            h = self.b(h)
            return 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))  # HF's gelu in its own words

    path = os.path.join(OUT, "attention_opset14.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(SelfAttention().eval(), (torch.randn(2, 5, 16), torch.ones(2, 5, dtype=torch.long)), path,
                          input_names=["hidden", "attention_mask"], output_names=["context"], opset_version=14,
                          dynamic_axes={"hidden": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                                        "context": {0: "batch", 1: "sequence"}})
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    path = os.path.join(OUT, "gelu_opset14.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(TwoGelus().eval(), (x,), path, input_names=["x"], output_names=["y"], opset_version=14,
                          dynamic_axes={"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}})
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
