#!/usr/bin/python3
"""A stand-in model-directory writer, used only to test tools/golden/reference.py.

The goldens are made from the project's own fixture tool (`warden-fixture`, tools/fixtures);
this script exists so that the reference can be exercised without it (and in
tools/golden/selftest.py). It writes a HuggingFace-layout directory with seeded random
weights (numpy, not the C++ tool's generator, so its bytes differ from `warden-fixture`'s):
config.json, model.safetensors (F32, F16 or BF16) and a tokenizer.json.

    /usr/bin/python3 tools/golden/pyfixture.py --arch bert|xlm-roberta|distilbert \
        --head none|reranker|classifier [--labels 3] [--seed 1] [--dtype F32] --out DIR

Tokenizers: WordPiece fixtures copy ../shared/fixtures/bert-base-uncased-tokenizer.json; the
XLM-R fixture builds a Unigram tokenizer.json from ../shared/fixtures/unigram-use-vocab-
tokenizer.json with <s> <pad> </s> <unk> in front (XLM-R's special-token layout) and a
RobertaProcessing post-processor.
"""

from __future__ import annotations

import argparse
import json
import os
import struct

import numpy as np

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "fixtures")


def write_safetensors(path, tensors: dict[str, np.ndarray], dtype="F32"):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        if dtype == "F32":
            raw = a.astype("<f4").tobytes()
        elif dtype == "F16":
            raw = a.astype("<f2").tobytes()
        elif dtype == "BF16":  # round to nearest even
            u = a.view(np.uint32).astype(np.uint64)
            u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
            raw = u.tobytes()
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def xlmr_tokenizer():
    with open(os.path.join(SHARED, "unigram-use-vocab-tokenizer.json"), encoding="utf-8") as f:
        t = json.load(f)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab = [[s, 0.0] for s in specials] + [p for p in t["model"]["vocab"] if p[0] not in specials]
    t["model"]["vocab"] = vocab
    t["model"]["unk_id"] = 3
    t["added_tokens"] = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, s in enumerate(specials)]
    t["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                           "trim_offsets": True, "add_prefix_space": True}
    return t, len(vocab)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=["bert", "xlm-roberta", "distilbert"])
    ap.add_argument("--head", default="none", choices=["none", "reranker", "classifier"])
    ap.add_argument("--labels", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)
    H, I, N = a.hidden, 4 * a.hidden, a.layers
    num_labels = {"none": 0, "reranker": 1, "classifier": a.labels}[a.head]

    if a.arch == "xlm-roberta":
        tok, V = xlmr_tokenizer()
        with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)
    else:
        with open(os.path.join(SHARED, "bert-base-uncased-tokenizer.json"), encoding="utf-8") as f:
            tok = f.read()
        with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
            f.write(tok)
        V = 30522

    def mat(*shape, s=0.1):
        return rng.normal(0.0, s, size=shape).astype(np.float32)

    def ln(name, t):
        t[name + ".weight"] = (1.0 + mat(H, s=0.1))
        t[name + ".bias"] = mat(H, s=0.05)

    def lin(name, t, o, i):
        t[name + ".weight"] = mat(o, i)
        t[name + ".bias"] = mat(o, s=0.05)

    t: dict[str, np.ndarray] = {}
    labels = {str(i): f"LABEL_{i}" for i in range(max(num_labels, 1))}
    if a.arch == "distilbert":
        P = 512
        arch = "DistilBertModel" if a.head == "none" else "DistilBertForSequenceClassification"
        cfg = {"activation": "gelu", "architectures": [arch], "attention_dropout": 0.1, "dim": H,
               "dropout": 0.1, "hidden_dim": I, "initializer_range": 0.02, "max_position_embeddings": P,
               "model_type": "distilbert", "n_heads": a.heads, "n_layers": N, "pad_token_id": 0,
               "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False,
               "tie_weights_": True, "torch_dtype": "float32", "transformers_version": "4.44.2",
               "vocab_size": V}
        pre = "distilbert." if a.head != "none" else ""
        t[pre + "embeddings.word_embeddings.weight"] = mat(V, H, s=0.5)
        t[pre + "embeddings.position_embeddings.weight"] = mat(P, H, s=0.5)
        ln(pre + "embeddings.LayerNorm", t)
        for i in range(N):
            p = f"{pre}transformer.layer.{i}."
            for n in ("q_lin", "k_lin", "v_lin", "out_lin"):
                lin(p + "attention." + n, t, H, H)
            ln(p + "sa_layer_norm", t)
            lin(p + "ffn.lin1", t, I, H)
            lin(p + "ffn.lin2", t, H, I)
            ln(p + "output_layer_norm", t)
        if a.head != "none":
            lin("pre_classifier", t, H, H)
            lin("classifier", t, num_labels, H)
    else:
        roberta = a.arch == "xlm-roberta"
        P = 514 if roberta else 512
        T = 1 if roberta else 2
        if roberta:
            arch = "XLMRobertaModel" if a.head == "none" else "XLMRobertaForSequenceClassification"
        else:
            arch = "BertModel" if a.head == "none" else "BertForSequenceClassification"
        cfg = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
               "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": H, "initializer_range": 0.02,
               "intermediate_size": I, "layer_norm_eps": 1e-05 if roberta else 1e-12,
               "max_position_embeddings": P, "model_type": "xlm-roberta" if roberta else "bert",
               "num_attention_heads": a.heads, "num_hidden_layers": N, "pad_token_id": 1 if roberta else 0,
               "position_embedding_type": "absolute", "torch_dtype": "float32",
               "transformers_version": "4.44.2", "type_vocab_size": T, "use_cache": True, "vocab_size": V}
        if roberta:
            cfg.update({"bos_token_id": 0, "eos_token_id": 2})
        pre = ("roberta." if roberta else "bert.") if a.head != "none" else ""
        t[pre + "embeddings.word_embeddings.weight"] = mat(V, H, s=0.5)
        t[pre + "embeddings.position_embeddings.weight"] = mat(P, H, s=0.5)
        t[pre + "embeddings.token_type_embeddings.weight"] = mat(T, H, s=0.5)
        ln(pre + "embeddings.LayerNorm", t)
        for i in range(N):
            p = f"{pre}encoder.layer.{i}."
            for n in ("query", "key", "value"):
                lin(p + "attention.self." + n, t, H, H)
            lin(p + "attention.output.dense", t, H, H)
            ln(p + "attention.output.LayerNorm", t)
            lin(p + "intermediate.dense", t, I, H)
            lin(p + "output.dense", t, H, I)
            ln(p + "output.LayerNorm", t)
        if not (roberta and a.head != "none"):
            lin(pre + "pooler.dense", t, H, H)
        if a.head != "none":
            if roberta:
                lin("classifier.dense", t, H, H)
                lin("classifier.out_proj", t, num_labels, H)
            else:
                lin("classifier", t, num_labels, H)
    if num_labels:
        cfg["id2label"] = labels
        cfg["label2id"] = {v: int(k) for k, v in labels.items()}
    with open(os.path.join(a.out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(dict(sorted(cfg.items())), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(a.out, "model.safetensors"), t, a.dtype)


if __name__ == "__main__":
    main()
