#!/usr/bin/python3
"""bge-m3's three outputs (dense, sparse, ColBERT) from one forward pass, written from
FlagEmbedding's own code, over the last hidden states of tools/golden/reference.py.

Upstream (FlagOpen/FlagEmbedding, 1.3):
  finetune/embedder/encoder_only/m3/runner.py  EncoderOnlyEmbedderM3Runner.get_model
      colbert_linear = nn.Linear(hidden, hidden); sparse_linear = nn.Linear(hidden, 1);
      each loaded with load_state_dict(torch.load("<name>.pt")) -- the fp16 tensors of the files
      are copied into the float32 layers.                                   -> load_linear
  finetune/embedder/encoder_only/m3/modeling.py  EncoderOnlyEmbedderM3ModelForInference.forward
      last_hidden_state = model(...).last_hidden_state (XLMRobertaModel: reference.py)
      _dense_embedding: last_hidden_state[:, 0] ("cls")                       -> dense
      _sparse_embedding(return_embedding=False): torch.relu(sparse_linear(h))  -> token_weights
      _colbert_embedding: colbert_linear(h[:, 1:]) * mask[:, 1:][:, :, None]  -> colbert
      normalize_embeddings: F.normalize(dense, dim=-1), F.normalize(colbert, dim=-1)
  inference/embedder/encoder_only/m3.py  M3Embedder.encode_single_device
      _process_token_weights: unused = ids of the special_tokens_map's cls_token, eos_token,
      pad_token, unk_token; for each (w, idx) in order: keep idx when idx not unused and w > 0,
      result[idx] = max(result[idx], w)                                     -> lexical_weights
      _process_colbert_vecs: colbert_vecs[:tokens_num - 1] (every token but CLS)
                                                                            -> colbert_vecs
"""

from __future__ import annotations

import json
import os

import torch


def load_linear(path: str, dtype):
    sd = torch.load(path, map_location="cpu")
    return sd["weight"].to(torch.float32).to(dtype), sd["bias"].to(torch.float32).to(dtype)


def special_ids(model_dir: str) -> set[int]:
    """transformers' special_tokens_map (tokenizer_config.json, then special_tokens_map.json
    over it) -> the ids of cls/eos/pad/unk through tokenizer.json's added tokens and vocab."""
    names = {}
    for f in ("tokenizer_config.json", "special_tokens_map.json"):
        p = os.path.join(model_dir, f)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                cfg = json.load(fh)
            for k in ("cls_token", "eos_token", "pad_token", "unk_token"):
                v = cfg.get(k)
                if isinstance(v, dict):
                    v = v.get("content")
                if v is not None:
                    names[k] = v
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as fh:
        tj = json.load(fh)
    ids = {t["content"]: t["id"] for t in tj.get("added_tokens", [])}
    vocab = tj["model"]["vocab"]
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        lookup = {p[0]: i for i, p in enumerate(vocab)}
    else:
        lookup = vocab
    out = set()
    for v in names.values():
        if v in ids:
            out.add(ids[v])
        elif v in lookup:
            out.add(lookup[v])
    return out


class M3Heads:
    def __init__(self, model_dir: str, dtype):
        self.dtype = dtype
        self.sparse_w, self.sparse_b = load_linear(os.path.join(model_dir, "sparse_linear.pt"), dtype)
        self.colbert_w, self.colbert_b = load_linear(os.path.join(model_dir, "colbert_linear.pt"), dtype)
        self.unused = special_ids(model_dir)

    def outputs(self, hidden: torch.Tensor, ids: list[int]):
        """hidden: [L, H] of one input (real tokens only, as the padded batch's rows)."""
        h = hidden.to(self.dtype).unsqueeze(0)
        dense = torch.nn.functional.normalize(h[:, 0], dim=-1)[0]
        token_weights = torch.relu(torch.nn.functional.linear(h, self.sparse_w, self.sparse_b)).squeeze(-1)[0]
        lexical = {}
        for w, idx in zip(token_weights.tolist(), ids):
            if idx not in self.unused and w > 0:
                if w > lexical.get(idx, 0):
                    lexical[idx] = w
        colbert = torch.nn.functional.linear(h[:, 1:], self.colbert_w, self.colbert_b)
        colbert = torch.nn.functional.normalize(colbert, dim=-1)[0][: len(ids) - 1]
        weights = {i: token_weights.new_tensor(w) for i, w in lexical.items()}
        return {"dense": dense, "lexical": lexical, "lexical_tensors": weights, "colbert": colbert}
