#!/usr/bin/python3
"""The BERT fixture as ONNX Runtime's transformer optimizer (onnxruntime.transformers.optimizer,
what optimum's ORTOptimizer and fastembed's *_optimized.onnx files run) leaves it: the graph is
written here op by op with python3-onnx from the same weights as tests/data/onnx/bert (the
onnxruntime Python package is not available here), in the fused forms that optimizer emits for
BERT, each documented in onnxruntime's contrib op schemas:

  Cast(input_ids, token_type_ids, attention_mask → int32)
  EmbedLayerNormalization(ids, segment_ids, word, position, segment, gamma, beta, mask)
      → (embeddings, mask_index)                      positions 0..S-1, mask_index = lengths
  per layer:
    Attention(x, W_qkv [H x 3H], b_qkv [3H], mask_index)   num_heads; Q, K, V packed
    MatMul(., W_o) → SkipLayerNormalization(., x, gamma, beta, b_o)
    MatMul(., W_i) → BiasGelu(., b_i) → MatMul(., W_out)
    → SkipLayerNormalization(., residual, gamma, beta, b_out)

ONNX Runtime itself runs the file (tools/onnx_fixtures/ort_outputs.mjs): its outputs are the
reference, so the ops' semantics are ORT's, whatever this script's reading of them.

With --fuzz-seed PATH it writes instead a few-KB graph of the same ops (hidden 8, 2 heads, 1
layer, seeded random weights) for warden-fuzz-onnx_graph's corpus.

Run: /usr/bin/python3 tools/onnx_fixtures/make_fused_fixtures.py WARDEN_FIXTURE [OUT_DIR]
     /usr/bin/python3 tools/onnx_fixtures/make_fused_fixtures.py --fuzz-seed fuzz/corpus/onnx_graph/bert_fused.onnx
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, HERE)
import reference  # noqa: E402
import make_encoder_fixtures  # noqa: E402

VOCAB, POSITIONS = 512, 64  # as make_encoder_fixtures.py cuts them


def fused_model(w, config, vocab, positions):
    """The fused graph of BERT weights `w` (HF names) and their config."""
    h, heads, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]

    inits, nodes = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    for name in ("input_ids", "token_type_ids", "attention_mask"):
        nodes.append(helper.make_node("Cast", [name], [name + "_int32"], name + "_cast", to=TensorProto.INT32))
    emb = "embeddings"
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids_int32", "token_type_ids_int32",
         init("word", w["embeddings.word_embeddings.weight"][:vocab]),
         init("position", w["embeddings.position_embeddings.weight"][:positions]),
         init("segment", w["embeddings.token_type_embeddings.weight"]),
         init("emb_gamma", w["embeddings.LayerNorm.weight"]), init("emb_beta", w["embeddings.LayerNorm.bias"]),
         "attention_mask_int32"],
        [emb, "mask_index"], "EmbedLayerNormalization_0", domain="com.microsoft", epsilon=eps))
    x = emb
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        wq, wk, wv = (w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value"))
        bq, bk, bv = (w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value"))
        ctx = f"layer{i}_attention"
        nodes.append(helper.make_node(
            "Attention", [x, init(f"qkv_weight_{i}", np.concatenate([wq.T, wk.T, wv.T], axis=1)),
                          init(f"qkv_bias_{i}", np.concatenate([bq, bk, bv])), "mask_index"],
            [ctx], f"Attention_{i}", domain="com.microsoft", num_heads=heads))
        nodes.append(helper.make_node("MatMul", [ctx, init(f"out_weight_{i}", w[p + "attention.output.dense.weight"].T)],
                                      [ctx + "_out"], f"MatMul_out_{i}"))
        a = f"layer{i}_attention_norm"
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [ctx + "_out", x, init(f"ln1_gamma_{i}", w[p + "attention.output.LayerNorm.weight"]),
             init(f"ln1_beta_{i}", w[p + "attention.output.LayerNorm.bias"]),
             init(f"out_bias_{i}", w[p + "attention.output.dense.bias"])],
            [a], f"SkipLayerNorm_1_{i}", domain="com.microsoft", epsilon=eps))
        nodes.append(helper.make_node("MatMul", [a, init(f"ffn_in_weight_{i}", w[p + "intermediate.dense.weight"].T)],
                                      [a + "_ffn_in"], f"MatMul_ffn_in_{i}"))
        nodes.append(helper.make_node("BiasGelu", [a + "_ffn_in", init(f"ffn_in_bias_{i}", w[p + "intermediate.dense.bias"])],
                                      [a + "_gelu"], f"BiasGelu_{i}", domain="com.microsoft"))
        nodes.append(helper.make_node("MatMul", [a + "_gelu", init(f"ffn_out_weight_{i}", w[p + "output.dense.weight"].T)],
                                      [a + "_ffn_out"], f"MatMul_ffn_out_{i}"))
        x = "last_hidden_state" if i + 1 == config["num_hidden_layers"] else f"layer{i}_output"
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [a + "_ffn_out", a, init(f"ln2_gamma_{i}", w[p + "output.LayerNorm.weight"]),
             init(f"ln2_beta_{i}", w[p + "output.LayerNorm.bias"]), init(f"ffn_out_bias_{i}", w[p + "output.dense.bias"])],
            [x], f"SkipLayerNorm_2_{i}", domain="com.microsoft", epsilon=eps))

    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes, "bert_fused",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [h])], inits)
    model = helper.make_model(graph, producer_name="warden make_fused_fixtures.py",
                              opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def fuzz_seed(path):
    rng = np.random.default_rng(5)
    config = {"hidden_size": 8, "num_attention_heads": 2, "layer_norm_eps": 1e-12, "num_hidden_layers": 1}
    shapes = {"embeddings.word_embeddings.weight": (16, 8), "embeddings.position_embeddings.weight": (8, 8),
              "embeddings.token_type_embeddings.weight": (2, 8), "embeddings.LayerNorm.weight": (8,),
              "embeddings.LayerNorm.bias": (8,)}
    p = "encoder.layer.0."
    for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
        shapes[p + n + ".weight"], shapes[p + n + ".bias"] = (8, 8), (8,)
    shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (16, 8), (16,)
    shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (8, 16), (8,)
    for n in ("attention.output.LayerNorm", "output.LayerNorm"):
        shapes[p + n + ".weight"], shapes[p + n + ".bias"] = (8,), (8,)
    w = {name: rng.standard_normal(shape).astype(np.float32) * 0.1 for name, shape in shapes.items()}
    onnx.save(fused_model(w, config, 16, 8), path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--fuzz-seed":
        fuzz_seed(sys.argv[2])
        return
    fixture_tool = sys.argv[1]
    out_root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "tests", "data", "onnx")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([fixture_tool, "--arch", "bert", "--seed", "1", "--out", tmp + "/m"], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "m", "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        w = reference.load_model_weights(tmp + "/m")
    config["vocab_size"], config["max_position_embeddings"] = VOCAB, POSITIONS
    model = fused_model(w, config, VOCAB, POSITIONS)
    out = os.path.join(out_root, "bert-fused")
    make_encoder_fixtures.write_config(out, config)
    path = os.path.join(out, "model_optimized.onnx")
    onnx.save(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
