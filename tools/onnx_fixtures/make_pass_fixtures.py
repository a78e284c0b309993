#!/usr/bin/python3
"""Graphs for the ONNX rewrite passes' tests (tests/data/onnx/), exported by Debian's
torch.onnx.export (torch 1.13) from tiny modules, so that each pass is tested on what the real
exporter writes:

  layer_norm_opset14.onnx  Linear(8, 8) then LayerNorm(8, eps=1e-12): below opset 17 torch
                           writes LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add
  layer_norm_opset17.onnx  the same module: one LayerNormalization node
  gelu_opset14.onnx        Linear(8, 8) then GELU (erf): Div(√2)/Erf/Add(1)/Mul(x)/Mul(0.5),
                           and the same after a second Linear with HF's form, 0.5·x first

Run: /usr/bin/python3 tools/onnx_fixtures/make_pass_fixtures.py [OUT_DIR]
"""

import math
import os
import sys
import warnings

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "onnx")


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

    path = os.path.join(OUT, "gelu_opset14.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(TwoGelus().eval(), (x,), path, input_names=["x"], output_names=["y"], opset_version=14,
                          dynamic_axes={"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}})
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
