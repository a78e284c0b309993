#!/usr/bin/python3
"""A NomicBERT-MoE fixture folder (warden-fixture --arch nomic-bert-moe) as a GGUF file for llama.cpp,
so that bench/run_nomic_moe can run llama.cpp on the same weights. Written as llama.cpp's
convert_hf_to_gguf.py writes nomic-embed-text-v2-moe (NomicBertModel with its XLM-R tokenizer):

    /usr/bin/python3 bench/peers/nomic_moe_gguf.py MODEL_DIR OUT.gguf [--type f32|bf16|q8_0]

* Metadata: general.architecture "nomic-bert-moe"; its context_length, embedding_length,
  block_count, feed_forward_length, attention.head_count, attention.layer_norm_epsilon,
  attention.causal false, pooling_type 1 (MEAN), rope.freq_base, moe_every_n_layers,
  expert_count, expert_used_count; tokenizer.ggml.token_type_count.
* Tokenizer: tokenizer.ggml.model "t5" (the unigram vocabulary and its scores), the rows past it
  "[PAD{i}]" unused, a repeated piece renamed "[DUP{i}]", <s>/</s>/<unk>/<pad> ids; the bench feeds
  synthetic ids.
* Tensors: token_embd, token_types, token_embd_norm; per block attn_qkv, attn_output,
  attn_output_norm (norm1), ffn_up/ffn_down (fc1/fc2) or, in the mixture layers, ffn_gate_inp (the
  router), ffn_up_exps (w1 viewed [experts, n_inner, hidden]) and ffn_down_exps (w2 viewed so and
  transposed to [experts, hidden, n_inner]); layer_output_norm (norm2). Like the converter, it drops
  mlp.experts.bias (NomicBertModel.filter_tensors): llama.cpp's pass adds no expert bias, Warden's
  and the reference's do — a [hidden] add per token, immaterial to the timing.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import decoder_gguf as g  # noqa: E402  (the folder reader and the GGUF writer)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=("f32", "bf16", "q8_0"), default="f32")
    args = ap.parse_args()

    c, tok, w = g.read_folder(args.model_dir)
    arch = "nomic-bert-moe"
    hidden, layers, inner = c["n_embd"], c["n_layer"], c["n_inner"]
    experts, every = c["num_experts"], c["moe_every_n_layers"]
    vocab_rows = w["embeddings.word_embeddings.weight"].shape[0]

    tokens = [f"[PAD{i}]" for i in range(vocab_rows)]
    scores = [0.0] * vocab_rows
    types = [5] * vocab_rows
    for i, (piece, score) in enumerate(tok["model"]["vocab"]):
        tokens[i], scores[i], types[i] = piece, float(score), 1
    ids = {}
    for a in tok["added_tokens"]:
        tokens[a["id"]], types[a["id"]] = a["content"], 3 if a["special"] else 4
        ids[a["content"]] = a["id"]
    if "<unk>" in ids:
        types[ids["<unk>"]] = 2
    # llama.cpp's vocabulary needs every token text once; the fixture's trained vocabulary repeats a
    # piece or two, renamed here (the bench feeds ids, not text).
    seen = set()
    for i, t in enumerate(tokens):
        if t in seen:
            tokens[i] = f"[DUP{i}]"
        seen.add(tokens[i])

    meta = [
        g.kv("general.architecture", g.T_STRING, arch),
        g.kv("general.name", g.T_STRING, os.path.basename(os.path.normpath(args.model_dir))),
        g.kv("general.file_type", g.T_UINT32, g.FILE_TYPE[args.type]),
        g.kv("general.alignment", g.T_UINT32, g.ALIGNMENT),
        g.kv(f"{arch}.context_length", g.T_UINT32, c["n_positions"]),
        g.kv(f"{arch}.embedding_length", g.T_UINT32, hidden),
        g.kv(f"{arch}.block_count", g.T_UINT32, layers),
        g.kv(f"{arch}.feed_forward_length", g.T_UINT32, inner),
        g.kv(f"{arch}.attention.head_count", g.T_UINT32, c["n_head"]),
        g.kv(f"{arch}.attention.layer_norm_epsilon", g.T_FLOAT32, float(c["layer_norm_epsilon"])),
        g.kv(f"{arch}.attention.causal", g.T_BOOL, False),
        g.kv(f"{arch}.pooling_type", g.T_UINT32, 1),
        g.kv(f"{arch}.rope.freq_base", g.T_FLOAT32, float(c["rotary_emb_base"])),
        g.kv(f"{arch}.moe_every_n_layers", g.T_UINT32, every),
        g.kv(f"{arch}.expert_count", g.T_UINT32, experts),
        g.kv(f"{arch}.expert_used_count", g.T_UINT32, c["moe_top_k"]),
        g.kv("tokenizer.ggml.model", g.T_STRING, "t5"),
        g.kv("tokenizer.ggml.pre", g.T_STRING, "default"),
        g.kv("tokenizer.ggml.tokens", g.T_ARRAY, (g.T_STRING, tokens)),
        g.kv("tokenizer.ggml.scores", g.T_ARRAY, (g.T_FLOAT32, scores)),
        g.kv("tokenizer.ggml.token_type", g.T_ARRAY, (g.T_INT32, types)),
        g.kv("tokenizer.ggml.token_type_count", g.T_UINT32, c.get("type_vocab_size", 1)),
        g.kv("tokenizer.ggml.bos_token_id", g.T_UINT32, ids["<s>"]),
        g.kv("tokenizer.ggml.eos_token_id", g.T_UINT32, ids["</s>"]),
        g.kv("tokenizer.ggml.unknown_token_id", g.T_UINT32, ids["<unk>"]),
        g.kv("tokenizer.ggml.padding_token_id", g.T_UINT32, ids["<pad>"]),
        g.kv("tokenizer.ggml.add_bos_token", g.T_BOOL, True),
        g.kv("tokenizer.ggml.add_eos_token", g.T_BOOL, True),
    ]

    names = [("token_embd.weight", "embeddings.word_embeddings.weight"),
             ("token_types.weight", "embeddings.token_type_embeddings.weight"),
             ("token_embd_norm.weight", "emb_ln.weight"), ("token_embd_norm.bias", "emb_ln.bias")]
    for i in range(layers):
        hf, gg = f"encoder.layers.{i}.", f"blk.{i}."
        names += [(gg + "attn_qkv.weight", hf + "attn.Wqkv.weight"), (gg + "attn_qkv.bias", hf + "attn.Wqkv.bias"),
                  (gg + "attn_output.weight", hf + "attn.out_proj.weight"),
                  (gg + "attn_output.bias", hf + "attn.out_proj.bias"),
                  (gg + "attn_output_norm.weight", hf + "norm1.weight"),
                  (gg + "attn_output_norm.bias", hf + "norm1.bias")]
        if every > 0 and i % every == 1:
            w[hf + "w1"] = w[hf + "mlp.experts.mlp.w1"].reshape(experts, inner, hidden)
            w[hf + "w2"] = np.ascontiguousarray(
                w[hf + "mlp.experts.mlp.w2"].reshape(experts, inner, hidden).transpose(0, 2, 1))
            names += [(gg + "ffn_gate_inp.weight", hf + "mlp.router.layer.weight"),
                      (gg + "ffn_up_exps.weight", hf + "w1"), (gg + "ffn_down_exps.weight", hf + "w2")]
        else:
            names += [(gg + "ffn_up.weight", hf + "mlp.fc1.weight"), (gg + "ffn_up.bias", hf + "mlp.fc1.bias"),
                      (gg + "ffn_down.weight", hf + "mlp.fc2.weight"), (gg + "ffn_down.bias", hf + "mlp.fc2.bias")]
        names += [(gg + "layer_output_norm.weight", hf + "norm2.weight"),
                  (gg + "layer_output_norm.bias", hf + "norm2.bias")]

    # The router and the token types stay F32, as the converter keeps small tensors.
    g.write_gguf(args.out, meta, [(gg, w[hf]) for gg, hf in names], args.type,
                 keep_f32=[gg for gg, _ in names if gg.endswith(("ffn_gate_inp.weight", "token_types.weight"))])


if __name__ == "__main__":
    main()
