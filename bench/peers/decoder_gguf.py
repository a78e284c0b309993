#!/usr/bin/python3
"""A Qwen3, Qwen2, Llama or Gemma3 fixture folder (warden-fixture --arch qwen3 / qwen2 / llama / gemma3) as a GGUF file for
llama.cpp, so that bench/run_qwen3 can run llama.cpp on the same weights. llama.cpp's own converter
(convert_hf_to_gguf.py) needs `transformers` for the tokenizer, which is not installable here
(no PyPI), so this writes the file itself, as that converter writes the model (Qwen3Model ->
Qwen2Model.set_vocab's gpt2 path; EmbeddingGemma -> Gemma3Model without a tokenizer.model, the
gpt2 path too; gguf-py's tensor map, GGUF v3):

    /usr/bin/python3 bench/peers/decoder_gguf.py MODEL_DIR OUT.gguf [--type f32|bf16|q8_0] [--embedding]

* Qwen2 (general.architecture "qwen2", Qwen2Model in that converter): Qwen3's keys under its name,
  no q/k norms, the q/k/v biases as blk.N.attn_{q,k,v}.bias.
* Llama (general.architecture "llama", LlamaModel in that converter): Qwen2's layout without
  biases, llama.rope.dimension_count, Llama 3's rope_scaling as the rope_freqs.weight factors
  (generate_extra_tensors: 1 above the high-frequency wavelength, the factor below the low one,
  1 / ((1 - smooth) / factor + smooth) between), <s> added, pooling MEAN with --embedding (the
  fixture's), the BPE vocabulary and merges under the gpt2 model (ids are synthetic in the bench).
* Metadata: general.architecture "qwen3"; qwen3.{context_length, embedding_length, block_count,
  feed_forward_length, attention.head_count, attention.head_count_kv, attention.key_length,
  attention.value_length, rope.freq_base, attention.layer_norm_rms_epsilon}; with --embedding
  qwen3.pooling_type 3 (LAST) and tokenizer.ggml.add_eos_token true (what llama.cpp sets for
  Qwen3-Embedding's appended <|endoftext|>, PR 14314); general.file_type.
* Tokenizer: tokenizer.ggml.model "gpt2", .pre "qwen2", .tokens (every id of vocab_size: the
  vocabulary, the added tokens, "[PAD{i}]" for the unused rows), .token_type (1 normal,
  3 control for special added tokens, 4 user-defined for the others, 5 unused), .merges
  ("a b"), bos/eos/padding ids <|endoftext|>, add_bos_token false.
* Tensors (ggml order: ne0 = the input width): token_embd, blk.N.{attn_norm, attn_q, attn_k,
  attn_v, attn_output, attn_q_norm, attn_k_norm, ffn_norm, ffn_gate, ffn_up, ffn_down},
  output_norm (output.weight only when the LM head is not tied).
* Gemma3 (general.architecture "gemma-embedding", EmbeddingGemma's class in that converter):
  the same keys under its name plus attention.sliding_window (config.json's number, which
  llama.cpp halves for its symmetric window), pooling_type 1 (MEAN), dense_2/dense_3_feat_in/out
  and the tensors dense_2.weight / dense_3.weight (the sentence-transformers Dense modules);
  blk.N.post_attention_norm, ffn_norm (pre_feedforward_layernorm) and post_ffw_norm; every norm
  weight stored as 1 + w (Gemma3Model.modify_tensors' norm_shift); bos <bos> and eos <eos> added. Norms stay F32; the matrices
  are F32, BF16 (rounded to nearest even, as torch) or Q8_0 (blocks of 32: d = max|x| / 127 as
  fp16, q = round(x / d), ggml's quantize_row_q8_0_ref).
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "golden"))
import reference  # noqa: E402  (its safetensors reader)

GGML_F32, GGML_Q8_0, GGML_BF16 = 0, 8, 30
FILE_TYPE = {"f32": 0, "q8_0": 7, "bf16": 32}
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
ALIGNMENT = 32


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == T_STRING:
        return out + gguf_string(value)
    if vtype == T_ARRAY:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == T_STRING:
            return out + b"".join(gguf_string(x) for x in items)
        return out + np.asarray(items, dtype={T_INT32: "<i4", T_UINT32: "<u4", T_FLOAT32: "<f4"}[etype]).tobytes()
    fmt = {T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?"}[vtype]
    return out + struct.pack(fmt, value)


def to_bf16(a):
    bits = a.astype(np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
    return (rounded >> 16).astype(np.uint16)


def to_q8_0(a):
    blocks = a.astype(np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = amax / 127.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0)
    q = np.round(blocks * inv[:, None]).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    out["d"] = d.astype(np.float16)
    out["qs"] = q
    return out.tobytes()


def read_folder(model_dir):
    """A fixture folder's config.json, tokenizer.json and weights (float32 arrays by name)."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as f:
        tokenizer = json.load(f)
    weights = {k: np.asarray(v, dtype=np.float32) for k, v in reference.load_model_weights(model_dir).items()}
    return config, tokenizer, weights


def write_gguf(path, meta, tensors, gtype, keep_f32=()):
    """GGUF v3 at `path`: the metadata entries `meta` (kv() bytes), then `tensors` ([(name, array)],
    float32 values) as F32 when one-dimensional, named in `keep_f32` or gtype is "f32", else BF16 or
    Q8_0; each aligned to ALIGNMENT, dims reversed (ggml's ne0 is the innermost)."""
    infos, blobs, offset = [], [], 0
    for name, values in tensors:
        a = np.asarray(values, dtype=np.float32)
        if a.ndim == 1 or gtype == "f32" or name in keep_f32:
            ggml_type, data = GGML_F32, a.astype("<f4").tobytes()
        elif gtype == "bf16":
            ggml_type, data = GGML_BF16, to_bf16(a).tobytes()
        else:
            ggml_type, data = GGML_Q8_0, to_q8_0(a)
        dims = list(reversed(a.shape))
        infos.append(gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) +
                     struct.pack("<IQ", ggml_type, offset))
        pad = (-len(data)) % ALIGNMENT
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(meta)) + b"".join(meta) + b"".join(infos)
    head += b"\0" * ((-len(head)) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)
    print(f"{path}: {len(infos)} tensors, {gtype}, {os.path.getsize(path) / 2**20:.1f} MiB", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=("f32", "bf16", "q8_0"), default="f32")
    ap.add_argument("--embedding", action="store_true",
                    help="Qwen3: last-token pooling, <|endoftext|> appended (a Gemma3 file is always an embedder)")
    args = ap.parse_args()

    c, tok, w = read_folder(args.model_dir)
    p = "model." if "model.embed_tokens.weight" in w else ""
    gemma = c["model_type"] == "gemma3_text"
    arch = "gemma-embedding" if gemma else c["model_type"]  # qwen3, qwen2 or llama
    llama = arch == "llama"
    vocab_size = c["vocab_size"]
    hidden, layers = c["hidden_size"], c["num_hidden_layers"]
    head_dim = c.get("head_dim") or hidden // c["num_attention_heads"]

    # The vocabulary as the gpt2 path of set_vocab lays it out.
    tokens = [f"[PAD{i}]" for i in range(vocab_size)]
    types = [5] * vocab_size
    for t, i in tok["model"]["vocab"].items():
        tokens[i], types[i] = t, 1
    for a in tok["added_tokens"]:
        tokens[a["id"]], types[a["id"]] = a["content"], 3 if a["special"] else 4
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    ids = {a["content"]: a["id"] for a in tok["added_tokens"]}

    meta = [
        kv("general.architecture", T_STRING, arch),
        kv("general.name", T_STRING, os.path.basename(os.path.normpath(args.model_dir))),
        kv("general.file_type", T_UINT32, FILE_TYPE[args.type]),
        kv("general.alignment", T_UINT32, ALIGNMENT),
        kv(f"{arch}.context_length", T_UINT32, c["max_position_embeddings"]),
        kv(f"{arch}.embedding_length", T_UINT32, hidden),
        kv(f"{arch}.block_count", T_UINT32, layers),
        kv(f"{arch}.feed_forward_length", T_UINT32, c["intermediate_size"]),
        kv(f"{arch}.attention.head_count", T_UINT32, c["num_attention_heads"]),
        kv(f"{arch}.attention.head_count_kv", T_UINT32, c["num_key_value_heads"]),
        kv(f"{arch}.attention.key_length", T_UINT32, head_dim),
        kv(f"{arch}.attention.value_length", T_UINT32, head_dim),
        kv(f"{arch}.rope.freq_base", T_FLOAT32, float(c.get("rope_theta", 10000.0))),
        kv(f"{arch}.attention.layer_norm_rms_epsilon", T_FLOAT32, float(c.get("rms_norm_eps", 1e-6))),
        kv("tokenizer.ggml.model", T_STRING, "gpt2"),
        kv("tokenizer.ggml.pre", T_STRING, "default" if gemma or llama else "qwen2"),
        kv("tokenizer.ggml.tokens", T_ARRAY, (T_STRING, tokens)),
        kv("tokenizer.ggml.token_type", T_ARRAY, (T_INT32, types)),
        kv("tokenizer.ggml.merges", T_ARRAY, (T_STRING, merges)),
    ]
    dense = []
    if gemma:
        meta += [kv(f"{arch}.attention.sliding_window", T_UINT32, c["sliding_window"]),
                 kv(f"{arch}.pooling_type", T_UINT32, 1),
                 kv("tokenizer.ggml.bos_token_id", T_UINT32, ids["<bos>"]),
                 kv("tokenizer.ggml.eos_token_id", T_UINT32, ids["<eos>"]),
                 kv("tokenizer.ggml.padding_token_id", T_UINT32, ids["<pad>"]),
                 kv("tokenizer.ggml.add_bos_token", T_BOOL, True),
                 kv("tokenizer.ggml.add_eos_token", T_BOOL, True)]
        for n, folder in ((2, "2_Dense"), (3, "3_Dense")):
            d = reference.load_safetensors(os.path.join(args.model_dir, folder, "model.safetensors"))
            w[f"{folder}.linear.weight"] = np.asarray(d["linear.weight"], dtype=np.float32)
            out_f, in_f = w[f"{folder}.linear.weight"].shape
            meta += [kv(f"{arch}.dense_{n}_feat_in", T_UINT32, in_f), kv(f"{arch}.dense_{n}_feat_out", T_UINT32, out_f)]
            dense.append((f"dense_{n}.weight", f"{folder}.linear.weight"))
    elif llama:
        meta += [kv("llama.rope.dimension_count", T_UINT32, head_dim),
                 kv("tokenizer.ggml.bos_token_id", T_UINT32, ids["<s>"]),
                 kv("tokenizer.ggml.eos_token_id", T_UINT32, ids["</s>"]),
                 kv("tokenizer.ggml.add_bos_token", T_BOOL, True)]
        if args.embedding:
            meta += [kv("llama.pooling_type", T_UINT32, 1)]
        scaling = c.get("rope_scaling") or {}
        if scaling.get("rope_type", scaling.get("type")) == "llama3":
            base, dim = float(c.get("rope_theta", 10000.0)), head_dim
            factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
            old = scaling["original_max_position_embeddings"]
            factors = []
            for freq in 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim)):
                wavelen = 2 * np.pi / freq
                if wavelen < old / high:
                    factors.append(1.0)
                elif wavelen > old / low:
                    factors.append(factor)
                else:
                    smooth = (old / wavelen - low) / (high - low)
                    factors.append(1 / ((1 - smooth) / factor + smooth))
            w["rope_freqs.weight"] = np.asarray(factors, dtype=np.float32)
    else:
        eos = ids["<|endoftext|>"]
        meta += [kv("tokenizer.ggml.eos_token_id", T_UINT32, eos),
                 kv("tokenizer.ggml.padding_token_id", T_UINT32, eos),
                 kv("tokenizer.ggml.bos_token_id", T_UINT32, eos),
                 kv("tokenizer.ggml.add_bos_token", T_BOOL, False)]
        if args.embedding:
            meta += [kv(f"{arch}.pooling_type", T_UINT32, 3), kv("tokenizer.ggml.add_eos_token", T_BOOL, True)]

    names = [("token_embd.weight", p + "embed_tokens.weight")]
    for i in range(layers):
        hf, gg = f"{p}layers.{i}.", f"blk.{i}."
        names += [(gg + "attn_norm.weight", hf + "input_layernorm.weight"),
                  (gg + "attn_q.weight", hf + "self_attn.q_proj.weight"),
                  (gg + "attn_k.weight", hf + "self_attn.k_proj.weight"),
                  (gg + "attn_v.weight", hf + "self_attn.v_proj.weight"),
                  (gg + "attn_output.weight", hf + "self_attn.o_proj.weight"),
                  (gg + "attn_q_norm.weight", hf + "self_attn.q_norm.weight"),
                  (gg + "attn_k_norm.weight", hf + "self_attn.k_norm.weight"),
                  (gg + "ffn_gate.weight", hf + "mlp.gate_proj.weight"),
                  (gg + "ffn_up.weight", hf + "mlp.up_proj.weight"),
                  (gg + "ffn_down.weight", hf + "mlp.down_proj.weight")]
        if gemma:
            names += [(gg + "post_attention_norm.weight", hf + "post_attention_layernorm.weight"),
                      (gg + "ffn_norm.weight", hf + "pre_feedforward_layernorm.weight"),
                      (gg + "post_ffw_norm.weight", hf + "post_feedforward_layernorm.weight")]
        else:
            names.append((gg + "ffn_norm.weight", hf + "post_attention_layernorm.weight"))
    names.append(("output_norm.weight", p + "norm.weight"))
    if "rope_freqs.weight" in w:
        names.append(("rope_freqs.weight", "rope_freqs.weight"))
    if "lm_head.weight" in w:
        names.append(("output.weight", "lm_head.weight"))
    for i in range(layers):  # Qwen2's attention biases
        for m in ("q", "k", "v"):
            if f"{p}layers.{i}.self_attn.{m}_proj.bias" in w:
                names.append((f"blk.{i}.attn_{m}.bias", f"{p}layers.{i}.self_attn.{m}_proj.bias"))
    names = [(gg, hf) for gg, hf in names if hf in w or not hf.endswith(("q_norm.weight", "k_norm.weight"))]
    names += dense
    if gemma:  # Gemma3Model.modify_tensors: the norms' weights shifted by one
        for k in w:
            if k.endswith("norm.weight"):
                w[k] = w[k] + np.float32(1.0)

    write_gguf(args.out, meta, [(gg, w[hf]) for gg, hf in names], args.type)


if __name__ == "__main__":
    main()
