#!/usr/bin/python3
"""Writes the DeBERTa-v3, JinaBERT, MPNet, NomicBERT (and its mixture of experts), GTE, ModernBERT,
jina-embeddings-v3 and static (model2vec) seeds of the model fuzz target (fuzz/corpus/model): valid
float32 checkpoints of the tiny configs in fuzz/model_fuzz.cpp, small random values.

    /usr/bin/python3 fuzz/make_model_seeds.py fuzz/corpus/model
"""

import json
import os
import random
import struct
import sys


def safetensors(tensors):
    header, blobs, offset = {}, [], 0
    for name, shape, *dtype in tensors:
        n = 1
        for d in shape:
            n *= d
        if dtype == ["I32"]:  # rows of a static model's mapping, all inside its 8-row table
            blob = struct.pack(f"<{n}i", *[random.randrange(8) for _ in range(n)])
        else:
            blob = struct.pack(f"<{n}f", *[random.uniform(-0.5, 0.5) for _ in range(n)])
        header[name] = {"dtype": dtype[0] if dtype else "F32", "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps({"__metadata__": {"format": "pt"}, **header}, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def linear(name, out, inp, bias=True):
    return [(name + ".weight", [out, inp])] + ([(name + ".bias", [out])] if bias else [])


def norm(name, n):
    return [(name + ".weight", [n]), (name + ".bias", [n])]


def deberta():
    h, i, layer = 4, 8, "encoder.layer.0."
    t = [("embeddings.word_embeddings.weight", [8, h])] + norm("embeddings.LayerNorm", h)
    for p in ("query_proj", "key_proj", "value_proj"):
        t += linear(layer + "attention.self." + p, h, h)
    t += linear(layer + "attention.output.dense", h, h) + norm(layer + "attention.output.LayerNorm", h)
    t += linear(layer + "intermediate.dense", i, h) + linear(layer + "output.dense", h, i)
    t += norm(layer + "output.LayerNorm", h)
    return t + [("encoder.rel_embeddings.weight", [8, h])] + norm("encoder.LayerNorm", h)


def jina_bert():
    h, i, layer = 4, 8, "encoder.layer.0."
    t = [("embeddings.word_embeddings.weight", [8, h]), ("embeddings.token_type_embeddings.weight", [2, h])]
    t += norm("embeddings.LayerNorm", h)
    for p in ("query", "key", "value"):
        t += linear(layer + "attention.self." + p, h, h)
    t += linear(layer + "attention.output.dense", h, h) + norm(layer + "attention.output.LayerNorm", h)
    t += linear(layer + "mlp.gated_layers", 2 * i, h, bias=False) + linear(layer + "mlp.wo", h, i)
    return t + norm(layer + "mlp.layernorm", h) + linear("pooler.dense", h, h)


def mpnet():
    h, i, layer = 4, 8, "encoder.layer.0."
    t = [("embeddings.word_embeddings.weight", [8, h]), ("embeddings.position_embeddings.weight", [8, h])]
    t += norm("embeddings.LayerNorm", h)
    for p in ("q", "k", "v", "o"):
        t += linear(layer + "attention.attn." + p, h, h)
    t += norm(layer + "attention.LayerNorm", h)
    t += linear(layer + "intermediate.dense", i, h) + linear(layer + "output.dense", h, i)
    t += norm(layer + "output.LayerNorm", h)
    return t + [("encoder.relative_attention_bias.weight", [32, 2])] + linear("pooler.dense", h, h)


def nomic_bert():
    # n_inner 8 rounds up to NomciBertGatedMLP's 256; no biases anywhere.
    h, i, layer = 4, 256, "encoder.layers.0."
    t = [("embeddings.word_embeddings.weight", [8, h]), ("embeddings.token_type_embeddings.weight", [2, h])]
    t += norm("emb_ln", h)
    t += [(layer + "attn.Wqkv.weight", [3 * h, h]), (layer + "attn.out_proj.weight", [h, h]),
          (layer + "mlp.fc11.weight", [i, h]), (layer + "mlp.fc12.weight", [i, h]), (layer + "mlp.fc2.weight", [h, i])]
    return t + norm(layer + "norm1", h) + norm(layer + "norm2", h)


def nomic_bert_moe():
    # Layer 1 a mixture of 2 experts (router, stacked w1/w2 of [2 * n_inner, hidden], shared bias).
    h, i, e = 4, 8, 2
    t = [("embeddings.word_embeddings.weight", [8, h]), ("embeddings.token_type_embeddings.weight", [1, h])]
    t += norm("emb_ln", h)
    for n in (0, 1):
        layer = f"encoder.layers.{n}."
        t += linear(layer + "attn.Wqkv", 3 * h, h) + linear(layer + "attn.out_proj", h, h)
        if n == 1:
            t += [(layer + "mlp.router.layer.weight", [e, h]), (layer + "mlp.experts.mlp.w1", [e * i, h]),
                  (layer + "mlp.experts.mlp.w2", [e * i, h]), (layer + "mlp.experts.bias", [h])]
        else:
            t += linear(layer + "mlp.fc1", i, h) + linear(layer + "mlp.fc2", h, i)
        t += norm(layer + "norm1", h) + norm(layer + "norm2", h)
    return t


def gte():
    h, i, layer = 4, 8, "encoder.layer.0."
    t = [("embeddings.word_embeddings.weight", [8, h])] + norm("embeddings.LayerNorm", h)
    t += linear(layer + "attention.qkv_proj", 3 * h, h) + linear(layer + "attention.o_proj", h, h)
    t += linear(layer + "mlp.up_gate_proj", 2 * i, h, bias=False) + linear(layer + "mlp.down_proj", h, i)
    return t + norm(layer + "attn_ln", h) + norm(layer + "mlp_ln", h)


def modernbert():
    # Pre-LN, no biases, layer 0 without attn_norm, Wi = [input | gate].
    h, i = 4, 8
    t = [("embeddings.tok_embeddings.weight", [8, h]), ("embeddings.norm.weight", [h])]
    for layer in ("layers.0.", "layers.1."):
        if layer != "layers.0.":
            t += [(layer + "attn_norm.weight", [h])]
        t += [(layer + "attn.Wqkv.weight", [3 * h, h]), (layer + "attn.Wo.weight", [h, h]),
              (layer + "mlp_norm.weight", [h]), (layer + "mlp.Wi.weight", [2 * i, h]), (layer + "mlp.Wo.weight", [h, i])]
    return t + [("final_norm.weight", [h])]


def jina_v3():
    # XLMRobertaLoRA: every Linear and Embedding parametrized (original, lora_A, lora_B) for 2
    # tasks of rank 2, under "roberta.".
    h, i, tasks, rank, layer = 4, 8, 2, 2, "roberta.encoder.layers.0."

    def lora_linear(name, out, inp):
        p = name + ".parametrizations.weight."
        return [(name + ".bias", [out]), (p + "original", [out, inp]), (p + "0.lora_A", [tasks, rank, inp]),
                (p + "0.lora_B", [tasks, out, rank])]

    def lora_embedding(name, rows):
        p = name + ".parametrizations.weight."
        return [(p + "original", [rows, h]), (p + "0.lora_A", [tasks, rows, rank]), (p + "0.lora_B", [tasks, rank, h])]

    t = lora_embedding("roberta.embeddings.word_embeddings", 8) + lora_embedding("roberta.embeddings.token_type_embeddings", 1)
    t += norm("roberta.emb_ln", h)
    t += lora_linear(layer + "mixer.Wqkv", 3 * h, h) + lora_linear(layer + "mixer.out_proj", h, h)
    t += norm(layer + "norm1", h) + lora_linear(layer + "mlp.fc1", i, h) + lora_linear(layer + "mlp.fc2", h, i)
    return t + norm(layer + "norm2", h)


def static_model():
    # model2vec after vocabulary quantisation: 8 rows for 16 token ids, a weight per id.
    return [("embeddings", [8, 4]), ("weights", [16]), ("mapping", [16], "I32")]


def main():
    out = sys.argv[1]
    random.seed(1)
    for name, tensors in (("deberta-v2.safetensors", deberta()), ("jina-bert.safetensors", jina_bert()),
                          ("mpnet.safetensors", mpnet()), ("nomic-bert.safetensors", nomic_bert()),
                          ("gte.safetensors", gte()), ("static-model2vec.safetensors", static_model()),
                          ("modernbert.safetensors", modernbert()),
                          ("nomic-bert-moe.safetensors", nomic_bert_moe()),
                          ("jina-v3.safetensors", jina_v3())):
        with open(os.path.join(out, name), "wb") as f:
            f.write(safetensors(tensors))


if __name__ == "__main__":
    main()
