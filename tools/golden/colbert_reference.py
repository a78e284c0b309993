#!/usr/bin/python3
"""A PyLate ColBERT's query and document token vectors, over tools/golden/reference.py's
encoder, written from the upstream code (lightonai/pylate 1.x, pylate/models/colbert.py and
pylate/models/Dense.py):

  ColBERT.__init__: query_prefix / document_prefix, query_length, document_length,
      do_query_expansion, attend_to_expansion_tokens, skiplist_words from
      config_sentence_transformers.json; query_prefix_id = convert_tokens_to_ids(prefix);
      tokenizer.pad_token_id = tokenizer.mask_token_id (the [MASK] expansion);
      skiplist = [convert_tokens_to_ids(w) for w in skiplist_words]        -> ColbertReference
  ColBERT.preprocess: max_seq_length = length - 1 (a prefix is used); the Transformer module's
      tokenize (truncation at max_seq_length, special tokens kept; queries padded to it with
      the pad token = [MASK], attention 0); insert_prefix_token: the marker after the first
      token (attention 1, token type 0); attention_mask.fill_(1) only when
      attend_to_expansion_tokens                                            -> prepare
  Dense.forward: linear(token_embeddings) (bias False), Identity activation   -> project
  ColBERT.encode: queries keep every token (do_query_expansion: masks = ones); documents keep
      attention_mask & skiplist_mask (ids not in the skiplist); F.normalize(p=2, dim=1)
                                                                            -> vectors
"""

from __future__ import annotations

import json
import os

import torch

import reference


def _vocab(model_dir: str):
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as fh:
        tj = json.load(fh)
    lookup = dict(tj["model"]["vocab"])
    lookup.update({t["content"]: t["id"] for t in tj.get("added_tokens", [])})
    return lookup


class ColbertReference:
    def __init__(self, ref: reference.Reference, model_dir: str):
        self.ref = ref
        with open(os.path.join(model_dir, "config_sentence_transformers.json"), encoding="utf-8") as fh:
            cfg = json.load(fh)
        vocab = _vocab(model_dir)
        unk = vocab.get("[UNK]")
        self.query_marker = vocab.get(cfg["query_prefix"], unk) if cfg["query_prefix"] else None
        self.document_marker = vocab.get(cfg["document_prefix"], unk) if cfg["document_prefix"] else None
        self.query_length = cfg["query_length"]
        self.document_length = cfg["document_length"]
        self.expand = cfg["do_query_expansion"]
        self.attend = cfg["attend_to_expansion_tokens"] and self.expand
        self.mask_id = vocab["[MASK]"]
        self.skiplist = {vocab.get(w, unk) for w in cfg["skiplist_words"]}
        with open(os.path.join(model_dir, "1_Dense", "config.json"), encoding="utf-8") as fh:
            dense = json.load(fh)
        w = torch.from_numpy(reference.load_safetensors(os.path.join(model_dir, "1_Dense", "model.safetensors"))
                             ["linear.weight"].copy())
        assert list(w.shape) == [dense["out_features"], dense["in_features"]] and not dense["bias"]
        self.w = w.to(ref.dtype)

    def prepare(self, e: dict, query: bool) -> dict:
        """One tokenizer encoding (BERT: [CLS] ... [SEP]) -> PyLate's model input."""
        length = self.query_length if query else self.document_length
        marker = self.query_marker if query else self.document_marker
        limit = length - 1 if marker is not None else length
        ids, types, mask = list(e["ids"]), list(e["type_ids"]), list(e["attention_mask"])
        if len(ids) > limit:  # truncation keeps the final [SEP]
            ids, types, mask = ids[:limit - 1] + ids[-1:], types[:limit - 1] + types[-1:], mask[:limit - 1] + mask[-1:]
        if query and self.expand and len(ids) < limit:
            pad = limit - len(ids)
            ids, types, mask = ids + [self.mask_id] * pad, types + [0] * pad, mask + [0] * pad
        if marker is not None:
            ids, types, mask = ids[:1] + [marker] + ids[1:], types[:1] + [0] + types[1:], mask[:1] + [1] + mask[1:]
        if query and self.attend:
            mask = [1] * len(mask)
        return {"ids": ids, "type_ids": types, "attention_mask": mask}

    def vectors(self, hidden: torch.Tensor, prepared: dict, query: bool) -> torch.Tensor:
        """hidden: [L, H] of the prepared input -> its kept tokens' unit vectors."""
        projected = torch.nn.functional.linear(hidden.to(self.ref.dtype), self.w)
        if query and self.expand:
            keep = [True] * len(prepared["ids"])
        else:
            keep = [m == 1 and (query or i not in self.skiplist)
                    for i, m in zip(prepared["ids"], prepared["attention_mask"])]
        kept = projected[torch.tensor(keep, dtype=torch.bool)]
        return torch.nn.functional.normalize(kept, p=2, dim=1)

    def encode(self, encodings: list[dict], query: bool):
        prepared = [self.prepare(e, query) for e in encodings]
        outs = reference.run(self.ref, prepared)
        return prepared, [self.vectors(o["last_hidden_state"], p, query) for o, p in zip(outs, prepared)]
