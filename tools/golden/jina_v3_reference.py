"""jina-embeddings-v3's (and jina-reranker-v2's) forward pass, re-stated in PyTorch from its remote code
(jinaai/xlm-roberta-flash-implementation: modeling_lora.py, modeling_xlm_roberta.py, embedding.py,
mha.py, block.py, mlp.py, rotary.py, configuration_xlm_roberta.py), for the goldens of
tools/golden/make_goldens.py. Independent of Warden's C++ (model/families/xlm_roberta_flash.cpp,
model/engine/lora.cpp). It runs the CPU path of that code (no flash_attn: a right-padded batch and
key_padding_mask), step by step:

XLMRobertaFlashConfig (configuration_xlm_roberta.py): defaults type_vocab_size 1, layer_norm_eps
    1e-5, position_embedding_type "rotary", rotary_emb_base 10000, lora_rank 4, lora_alpha 1,
    load_trained_adapters False.
LoRAParametrization (modeling_lora.py), registered by XLMRobertaLoRA._register_lora on every
    nn.Linear and nn.Embedding of the model (the pooler's too):
    linear: lora_A [tasks, rank, fan_in], lora_B [tasks, fan_out, rank]; embedding (fan_in_fan_out,
    swapped): lora_A [tasks, vocab, rank], lora_B [tasks, rank, hidden]; scaling = alpha / rank;
    lora_forward(X, t) = X + matmul(*swap((B[t], A[t]))).view(X.shape) * scaling: W + B[t]@A[t]*s
    for a Linear, W + A[t]@B[t]*s for an Embedding; new_forward: F.linear / F.embedding with those
    weights when task_id is given, else the original weight. load_trained_adapters False: fresh
    adapters (B, or an embedding's A, zeros), i.e. the base weights.
    The task: XLMRobertaLoRA.encode(task=...) prepends task_instructions[task] and passes
    adapter_mask = full((batch,), task_id); every module then runs each task's rows with its
    weights (`for task_id in unique_tasks: ... task_indices = (adapter_mask == task_id)`).
XLMRobertaEmbeddings.forward (embedding.py): word_embeddings(input_ids, task_id) per task; no
    position table when position_embedding_type != "absolute" (max_position_embeddings -1); else
    create_position_ids_from_input_ids(input_ids, padding_idx); token_type_embeddings of
    token_type_ids (zeros when absent), per task, added.
XLMRobertaModel.forward (modeling_xlm_roberta.py): hidden = emb_ln(embeddings); encoder; pooler.
create_block: Block(prenorm=False) with norm_cls LayerNorm(eps); Block.forward (block.py), post-norm:
    hidden = norm1(dropout(mixer(hidden)) + hidden); hidden = norm2(dropout(mlp(hidden)) + hidden).
create_mixer_cls / MHA (mha.py): Wqkv (per task) -> rearrange "... (three h d) -> ... three h d";
    rotary_emb_dim = hidden / heads (whole heads), rotary_emb_base, interleaved False; the rotary
    embedding of q and k at positions 0..L-1 (seqlen_offset 0); SelfAttention: softmax_scale
    1/sqrt(d), scores + (-10000.0 on padded keys, key_padding_mask), softmax, @ v; out_proj (per task).
RotaryEmbedding (rotary.py, after flash_attn's): inv_freq = 1 / base^(arange(0, d, 2, float32) / d);
    t = arange(L, float32); freqs = outer(t, inv_freq); apply_rotary_emb_torch, not interleaved:
    x * cat(cos, cos) + rotate_half(x) * cat(sin, sin), rotate_half(x) = cat(-x2, x1).
create_mlp_cls / Mlp (mlp.py): fc1 (per task) -> F.gelu(approximate="tanh" for gelu_new,
    gelu_fast, gelu_pytorch_tanh, else "none") -> fc2 (per task).
XLMRobertaPooler: tanh(dense(hidden[:, 0])) per task.
XLMRobertaForSequenceClassification (jina-reranker-v2: absolute positions, no adapters, no pooler):
    XLMRobertaClassificationHead = out_proj(tanh(dense(hidden[:, 0]))).
The sentence-transformers folder (custom_st.Transformer, Pooling mean, Normalize) pools the last
hidden state; pool_all gives every mode, as for the other families.
"""

from __future__ import annotations

import json
import math
import os

import torch

import reference

_APPROXIMATE = ("gelu_new", "gelu_fast", "gelu_pytorch_tanh")


class JinaV3Reference:
    """XLMRobertaLoRA (its XLMRobertaModel) of one model directory, in one compute dtype."""

    family = "roberta"  # token types as XLM-R: all zeros

    def __init__(self, model_dir: str, dtype: torch.dtype = torch.float32):
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            c = json.load(f)
        self.config = c
        self.architecture = (c.get("architectures") or ["XLMRobertaModel"])[0]
        self.dtype = dtype
        raw = reference.load_model_weights(model_dir)
        self.w = {k: torch.from_numpy(v).to(dtype) for k, v in raw.items()}
        self.used: set[str] = set()
        self.prefix = "roberta." if "roberta.emb_ln.weight" in self.w else ""
        self.hidden = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.layers = c["num_hidden_layers"]
        self.eps = c.get("layer_norm_eps", 1e-5)
        self.pad_id = c.get("pad_token_id", 1)
        self.type_vocab_size = c.get("type_vocab_size", 1)
        self.position_type = c.get("position_embedding_type", "rotary")
        self.rotary_base = float(c.get("rotary_emb_base", 10000.0))
        self.rotary_dim = int(c.get("rotary_emb_dim", self.hidden // self.heads))
        self.approximate = "tanh" if c.get("hidden_act", "gelu") in _APPROXIMATE else "none"
        self.tasks = list(c.get("lora_adaptations") or [])
        self.instructions = dict(c.get("task_instructions") or {})
        self.scaling = c.get("lora_alpha", 1) / c.get("lora_rank", 4)
        self.trained_adapters = c.get("load_trained_adapters", False)
        self.has_head = self.architecture.endswith("ForSequenceClassification")
        id2label = c.get("id2label")
        self.num_labels = c.get("num_labels", len(id2label) if id2label else 2) if self.has_head else None

    # -- weights -------------------------------------------------------------------------------

    def _get(self, name: str, base: bool = True) -> torch.Tensor:
        key = (self.prefix if base else "") + name
        self.used.add(key)
        return self.w[key]

    def _weight(self, module: str, task, embedding: bool) -> torch.Tensor:
        """new_forward's weight: the original, or lora_forward(original, task)."""
        p = module + ".parametrizations.weight."
        if self.prefix + p + "original" not in self.w:
            return self._get(module + ".weight")
        w = self._get(p + "original")
        if task is None or not self.trained_adapters:
            # The adapters are read (and unused) all the same: the checkpoint holds them.
            self.used.update(k for k in (self.prefix + p + "0.lora_A", self.prefix + p + "0.lora_B") if k in self.w)
            return w
        a = self._get(p + "0.lora_A")
        b = self._get(p + "0.lora_B")
        delta = a[task] @ b[task] if embedding else b[task] @ a[task]
        return w + delta.view(w.shape) * self.scaling

    def merge_task(self, task: int):
        """Folds task `task`'s adapters into the base weights (a merged model: what runs with no
        task afterwards is that task), and drops the adapters."""
        suffix = ".parametrizations.weight.original"
        for key in [k for k in self.w if k.endswith(suffix)]:
            module = key[len(self.prefix):-len(suffix)]
            merged = self._weight(module, task, "embeddings" in module)
            base = key[:-len("original")]
            del self.w[base + "0.lora_A"], self.w[base + "0.lora_B"]
            self.w[key] = merged

    def _linear(self, x, module: str, task, base: bool = True):
        if not base:  # a head beside the model (XLMRobertaForSequenceClassification's classifier)
            return torch.nn.functional.linear(x, self._get(module + ".weight", False), self._get(module + ".bias", False))
        return torch.nn.functional.linear(x, self._weight(module, task, False), self._get(module + ".bias"))

    def _per_task(self, x, adapter_mask, fn):
        """fn(rows, task) over each task's rows (MHA's and Mlp's `for task_id in unique_tasks`)."""
        if adapter_mask is None:
            return fn(x, None)
        out = None
        for t in torch.unique(adapter_mask).tolist():
            idx = (adapter_mask == t).nonzero(as_tuple=True)[0]
            y = fn(x[idx], t)
            if out is None:
                out = torch.empty((x.shape[0],) + tuple(y.shape[1:]), dtype=y.dtype)
            out[idx] = y
        return out

    def _layer_norm(self, x, name):
        return torch.nn.functional.layer_norm(x, (self.hidden,), self._get(name + ".weight"),
                                              self._get(name + ".bias"), self.eps)

    # -- rotary ----------------------------------------------------------------------------------

    def _rotary(self, x):
        """x [B, L, H, D]: the first rotary_dim values of each head turned, rotate-half."""
        d = self.rotary_dim
        L = x.shape[1]
        inv_freq = 1.0 / (self.rotary_base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        t = torch.arange(L, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        cos = torch.cos(freqs).to(x.dtype)
        sin = torch.sin(freqs).to(x.dtype)
        cos = torch.cat([cos, cos], dim=-1)[None, :, None, :]
        sin = torch.cat([sin, sin], dim=-1)[None, :, None, :]
        ro, rest = x[..., :d], x[..., d:]
        x1, x2 = ro.chunk(2, dim=-1)
        rotated = torch.cat([-x2, x1], dim=-1)
        return torch.cat([ro * cos + rotated * sin, rest], dim=-1)

    # -- forward ---------------------------------------------------------------------------------

    def forward(self, ids, tt, mask, adapter_mask=None):
        B, L = ids.shape
        h, nh = self.hidden, self.heads
        hd = h // nh

        # XLMRobertaEmbeddings: words per task, then positions (absolute only), then token types.
        index = torch.arange(B)
        x = self._per_task(index, adapter_mask, lambda rows, task: torch.nn.functional.embedding(
            ids[rows], self._weight("embeddings.word_embeddings", task, True)))
        if self.position_type == "absolute":
            not_pad = (ids != self.pad_id).long()
            positions = torch.cumsum(not_pad, dim=1) * not_pad + self.pad_id
            x = x + torch.nn.functional.embedding(positions, self._get("embeddings.position_embeddings.weight"))
        if self.type_vocab_size > 0:
            x = x + self._per_task(index, adapter_mask, lambda rows, task: torch.nn.functional.embedding(
                tt[rows], self._weight("embeddings.token_type_embeddings", task, True)))
        x = self._layer_norm(x, "emb_ln")

        key_bias = torch.full((B, L), -10000.0, dtype=self.dtype).masked_fill(mask.bool(), 0.0)
        for i in range(self.layers):
            p = f"encoder.layers.{i}."
            qkv = self._per_task(x, adapter_mask, lambda rows, task: self._linear(rows, p + "mixer.Wqkv", task))
            qkv = qkv.view(B, L, 3, nh, hd)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            if self.position_type == "rotary":
                q, k = self._rotary(q), self._rotary(k)
            scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(hd)
            scores = scores + key_bias[:, None, None, :]
            attn = torch.softmax(scores, dim=-1)
            ctx = torch.einsum("bhts,bshd->bthd", attn, v).reshape(B, L, h)
            out = self._per_task(ctx, adapter_mask, lambda rows, task: self._linear(rows, p + "mixer.out_proj", task))
            x = self._layer_norm(out + x, p + "norm1")

            def mlp(rows, task):
                y = self._linear(rows, p + "mlp.fc1", task)
                y = torch.nn.functional.gelu(y, approximate=self.approximate)
                return self._linear(y, p + "mlp.fc2", task)

            x = self._layer_norm(self._per_task(x, adapter_mask, mlp) + x, p + "norm2")

        out = {"last_hidden_state": x}
        if self.prefix + "pooler.dense.bias" in self.w:
            out["pooler_output"] = torch.tanh(self._per_task(
                x[:, 0], adapter_mask, lambda rows, task: self._linear(rows, "pooler.dense", task)))
        if self.has_head:
            # XLMRobertaClassificationHead: dense, tanh, out_proj on the <s> token.
            y = torch.tanh(self._linear(x[:, 0], "classifier.dense", None, base=False))
            logits = self._linear(y, "classifier.out_proj", None, base=False)
            out["logits"] = logits
            out["scores"] = torch.sigmoid(logits) if logits.shape[-1] == 1 else torch.softmax(logits, dim=-1)
        out.update(reference.pool_all(x, mask))
        return out

    def unused_tensors(self) -> list[str]:
        return sorted(set(self.w) - self.used)


Reference = JinaV3Reference  # the name make_goldens.py asks each reference module for


def run(model: JinaV3Reference, encodings):
    """The encodings as one right-padded batch, each with its task adapter ("adapter": an index,
    or None for the base weights; a batch is all tasks or all None, as adapter_mask is)."""
    adapters = [e.get("adapter") for e in encodings]
    if any(a is None for a in adapters) and not all(a is None for a in adapters):
        raise ValueError("a batch mixes inputs with and without a task")
    adapter_mask = None if adapters[0] is None else torch.tensor(adapters, dtype=torch.int32)
    return reference.run(model, encodings, adapter_mask=adapter_mask)
