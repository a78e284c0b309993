#!/usr/bin/python3
"""Exports a BERT model folder to ONNX for the ONNX Runtime peer benchmark, and for Warden's own
ONNX loading (bench/run_onnx).

The graph is traced from tools/onnx_fixtures/make_encoder_fixtures.py's BertModel, written
statement for statement after transformers' modeling_bert.py, so that ONNX Runtime sees the
graph an `optimum` export of the HF model gives it (and its transformer fusions apply to it
alike). Inputs: input_ids, attention_mask, token_type_ids (int64 [batch, seq], dynamic);
output: last_hidden_state; opset 14 unless OPSET says otherwise.

    /usr/bin/python3 bench/peers/export_onnx.py MODEL_DIR OUT.onnx
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "onnx_fixtures"))
import make_encoder_fixtures  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = sys.argv[1], sys.argv[2]
    module, _, inputs = make_encoder_fixtures.build("bert", model_dir, cut=False)
    make_encoder_fixtures.export(module, inputs, out, int(os.environ.get("OPSET", "14")))
    print(out)


if __name__ == "__main__":
    main()
