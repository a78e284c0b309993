#!/usr/bin/python3
"""A SPLADE model's sparse vector, over the last hidden states of tools/golden/reference.py,
written from the upstream code (the MLM head of each *ForMaskedLM class, then SpladePooling):

transformers 4.46, models/bert/modeling_bert.py (BertForMaskedLM.cls = BertOnlyMLMHead):
  BertPredictionHeadTransform: dense (cls.predictions.transform.dense), transform_act_fn =
      ACT2FN[config.hidden_act], LayerNorm (cls.predictions.transform.LayerNorm,
      eps=config.layer_norm_eps)                                                 -> transform
  BertLMPredictionHead: decoder = nn.Linear(hidden, vocab, bias=False) whose weight is tied to
      bert.embeddings.word_embeddings.weight (tie_word_embeddings, so safetensors hold one copy)
      and whose bias is the `bias` parameter (cls.predictions.bias)           -> logits
transformers 4.46, models/roberta/modeling_roberta.py (RobertaForMaskedLM.lm_head = RobertaLMHead;
  XLMRobertaLMHead is the same code): x = dense(features) (lm_head.dense); x = gelu(x) -- the
  erf gelu of transformers.activations, whatever hidden_act says; layer_norm (lm_head.layer_norm,
  eps=config.layer_norm_eps); decoder tied to roberta.embeddings.word_embeddings.weight, bias
  lm_head.bias                                                                  -> logits
transformers 4.46, models/distilbert/modeling_distilbert.py (DistilBertForMaskedLM.forward):
  vocab_transform -> get_activation(config.activation) -> vocab_layer_norm (nn.LayerNorm(dim,
  eps=1e-12)) -> vocab_projector (weight tied to distilbert.embeddings.word_embeddings.weight,
  bias vocab_projector.bias)                                                    -> logits
sentence-transformers 5, sparse_encoder/models/SpladePooling.py (forward):
  masked logits -> relu -> log1p (a second log1p for activation_function "log1p_relu") ->
  max (pooling_strategy "max") or sum over the sequence; every real token counts, special
  tokens included                                                               -> sparse
The sparse vector is the pooled vocabulary vector's non-zero entries, ids ascending.
"""

from __future__ import annotations

import json
import os

import torch

import reference


class SpladeHead:
    def __init__(self, ref: reference.Reference, model_dir: str):
        self.ref = ref
        c = ref.config
        arch = c["architectures"][0]
        if arch == "BertForMaskedLM":
            names = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                     "cls.predictions.decoder.weight", "cls.predictions.bias")
            self.act = reference.ACTIVATIONS[c.get("hidden_act", "gelu")]
            self.eps = c.get("layer_norm_eps", 1e-12)
        elif arch in ("RobertaForMaskedLM", "XLMRobertaForMaskedLM"):
            names = ("lm_head.dense", "lm_head.layer_norm", "lm_head.decoder.weight", "lm_head.bias")
            self.act = reference.ACTIVATIONS["gelu"]
            self.eps = c.get("layer_norm_eps", 1e-12)
        elif arch == "DistilBertForMaskedLM":
            names = ("vocab_transform", "vocab_layer_norm", "vocab_projector.weight", "vocab_projector.bias")
            self.act = reference.ACTIVATIONS[c.get("activation", "gelu")]
            self.eps = 1e-12
        else:
            raise SystemExit(f"no MLM head for {arch}")
        self.transform, self.norm, decoder, bias = names
        with open(os.path.join(model_dir, "1_SpladePooling", "config.json"), encoding="utf-8") as f:
            pooling = json.load(f)
        self.sum = pooling.get("pooling_strategy", "max") == "sum"
        self.twice = pooling.get("activation_function", "relu") == "log1p_relu"
        untied = decoder in ref.w
        self.decoder_w = ref.W(decoder if untied else "embeddings.word_embeddings.weight", base=not untied)
        self.bias = ref.W(bias, base=False)

    def pooled(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden: [L, H] of one input's real tokens -> its [vocab] SPLADE vector."""
        ref = self.ref
        x = ref.linear(hidden.to(ref.dtype), self.transform, base=False)
        x = self.act(x)
        x = torch.nn.functional.layer_norm(x, (x.shape[-1],), ref.W(self.norm + ".weight", False),
                                           ref.W(self.norm + ".bias", False), self.eps)
        logits = torch.nn.functional.linear(x, self.decoder_w, self.bias)
        s = torch.log1p(torch.relu(logits))
        if self.twice:
            s = torch.log1p(s)
        return s.sum(0) if self.sum else s.max(0).values
