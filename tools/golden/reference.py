#!/usr/bin/python3
"""Independent PyTorch reference for Warden's encoder engine.

A self-contained re-implementation of the HuggingFace `transformers` forward passes of the
BERT family, written against plain `torch` (Debian's python3-torch; `transformers` is not
installed and is not needed). It reads a HuggingFace model directory -- `config.json` and
`model.safetensors`, parsed here byte by byte -- and token ids produced by HuggingFace
`tokenizers` itself (tools/golden/tokenize.mjs), and computes, in eval mode (dropout off),
last hidden states, pooled and normalised embeddings and classifier logits. It runs in
float32 (what the goldens hold) and in float64 from the same weights, to measure the float32
rounding error of the reference itself.

    /usr/bin/python3 tools/golden/reference.py MODEL_DIR TOKENS_JSON [--dtype float32|float64]

How it mirrors the HF modelling code (transformers 4.x, `attn_implementation="eager"`; the
"sdpa" path, the default for BERT in recent releases, computes the same function with the same
additive mask through torch's fused attention):

safetensors (`load_safetensors`)
    8-byte little-endian u64 header length N, N bytes of JSON header
    {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the
    raw little-endian data; offsets are relative to the end of the header. F32, F16, BF16
    (and F64, I64, I32 for completeness) are read; every tensor is upcast to the compute dtype.
    Offsets are checked to be in bounds and to match dtype size x shape. Sharded checkpoints
    (`model.safetensors.index.json` with its `weight_map`) are read shard by shard.

Weight names and prefixes
    `BertModel` / `XLMRobertaModel` / `RobertaModel` / `DistilBertModel` save their tensors
    without prefix (`embeddings.word_embeddings.weight`, ...); the *ForSequenceClassification
    classes keep the base model under the attribute `bert.` / `roberta.` / `distilbert.`
    (`base_model_prefix`). The prefix is detected from the file, as `from_pretrained` does.

BERT (`modeling_bert.BertModel`)
    BertEmbeddings: `word_embeddings[input_ids] + token_type_embeddings[token_type_ids] +
    position_embeddings[0..L-1]` (`position_embedding_type="absolute"`), then
    `embeddings.LayerNorm` with eps = `config.layer_norm_eps`; dropout is identity in eval.
    Attention mask: `ModuleUtilsMixin.get_extended_attention_mask` turns the [B, L] 0/1 mask
    into an additive [B, 1, 1, L] mask `(1.0 - mask) * torch.finfo(dtype).min` (the most
    negative finite value of the compute dtype, not -inf and not the old -10000.0).
    BertSelfAttention: `query`/`key`/`value` Linear layers, heads split as
    [B, L, H] -> [B, heads, L, head_dim], scores = Q K^T / sqrt(head_dim) + extended mask,
    softmax over the last axis, context = probs V, heads merged back.
    BertSelfOutput: `attention.output.dense`, then post-LN residual:
    `attention.output.LayerNorm(dense_out + layer_input)`.
    BertIntermediate: `intermediate.dense` then ACT2FN[config.hidden_act]; "gelu" is the exact
    erf form `x * 0.5 * (1 + erf(x / sqrt(2)))` (GELUActivation), not the tanh approximation
    ("gelu_new" / "gelu_pytorch_tanh", also supported here as HF defines them).
    BertOutput: `output.dense`, then post-LN residual `output.LayerNorm(dense_out + attn_out)`.
    BertPooler (`pooler.dense` + tanh on token 0) gives `pooler_output` when its weights are
    present (RobertaPooler is the same).
    The result (no final LayerNorm; post-LN blocks end in one) is `last_hidden_state`.

RoBERTa / XLM-R (`modeling_roberta.RobertaModel`, `modeling_xlm_roberta.XLMRobertaModel`)
    Same encoder as BERT (the classes are "Copied from" BertSelfAttention etc.). Differences
    are in RobertaEmbeddings: `padding_idx = config.pad_token_id` and position ids come from
    `create_position_ids_from_input_ids(input_ids, padding_idx)`:
    `mask = input_ids != padding_idx; pos = cumsum(mask, dim=1) * mask + padding_idx`, so the
    first real token is at padding_idx + 1 (= 2 for XLM-R) and pad tokens stay at padding_idx.
    Token types: `type_vocab_size` is 1 and `XLMRobertaTokenizerFast.model_input_names` is
    ["input_ids", "attention_mask"], so the model is fed no token_type_ids and uses its
    all-zero `token_type_ids` buffer, whatever type ids the tokenizer's RobertaProcessing
    reports for a pair. This script feeds zeros likewise.

DistilBERT (`modeling_distilbert.DistilBertModel`)
    Embeddings: `word_embeddings + position_embeddings[0..L-1]`, NO token type embeddings,
    then `embeddings.LayerNorm` with eps hard-coded to 1e-12 (DistilBertConfig has no
    layer_norm_eps). `transformer.layer.N`: MultiHeadSelfAttention with `q_lin`/`k_lin`/
    `v_lin`/`out_lin`; Q is divided by sqrt(head_dim) *before* Q K^T, and masked key positions
    are *replaced* (`masked_fill`) by `torch.finfo(dtype).min` rather than added to; then
    `sa_layer_norm(attn_out + x)` (eps 1e-12), FFN `ffn.lin1` -> get_activation(
    config.activation) -> `ffn.lin2`, then `output_layer_norm(ffn_out + sa_out)` (eps 1e-12).
    `DistilBertTokenizerFast.model_input_names` has no token_type_ids either.

JinaBERT (jinaai/jina-bert-implementation `modeling_bert.py`, the remote code that
jina-embeddings-v2-*-en and jina-reranker-v1-*-en name in `auto_map`; TEI's candle `jina.rs` as
a second reading)
    JinaBertEmbeddings: `word_embeddings + token_type_embeddings` (the tokenizer's type ids),
    plus `position_embeddings` only when `position_embedding_type` is "absolute" (with "alibi"
    the module has no position table), then `embeddings.LayerNorm`.
    JinaBertEncoder.rebuild_alibi_tensor: `relative_position = |memory - context|` per head,
    times `-slope` from `_get_alibi_head_slopes(n_heads)` (a power-of-two head count: the
    geometric sequence from 2^(-8/n); otherwise that sequence for the largest power of two
    below, then every other slope of the next power's sequence appended), built as a float32
    torch.Tensor; JinaBertEncoder.forward slices it to the batch's length.
    JinaBertSelfAttention (eager path): `scores = Q K^T / sqrt(head_dim) + extended mask`, then
    `softmax(scores + alibi)`; context as BERT. (Computed one head at a time, the same arithmetic,
    so that a 4,096-token input fits in memory; `heads_at_once` for the ONNX export.)
    JinaBertSelfOutput: BERT's post-LN residual.
    JinaBertGLUMLP (`feed_forward_type` "geglu"/"reglu"): `gated_layers` (no bias) gives
    [B, L, 2I]; `act(h[..., :I]) * h[..., I:]` with nn.GELU() (exact erf) or nn.ReLU(); `wo`;
    `layernorm(wo_out + residual)`. "original" is BERT's intermediate/output pair.
    JinaBertPooler: tanh(dense(token 0)); JinaBertForSequenceClassification: `classifier` on it.
    The embedding repos list `JinaBertForMaskedLM` over the bare model's weights: read as the
    base model here (its LM head is not used for embeddings).

MPNet (HF `modeling_mpnet.py`; all-mpnet-base-v2, multi-qa-mpnet-base-dot-v1)
    MPNetEmbeddings: `padding_idx = 1` fixed (not config.pad_token_id); position ids from
    `create_position_ids_from_input_ids(input_ids, 1)` as RoBERTa's (a `<pad>` inside the text
    gets position 1 and does not advance the count); `word_embeddings + position_embeddings`, no
    token types, then `embeddings.LayerNorm` (eps = layer_norm_eps).
    MPNetEncoder.compute_position_bias, once per forward: `relative_position = memory - context`
    over arange positions, `relative_position_bucket` (n = -relative_position; 16 buckets per
    sign; exact below 8, then 8 + trunc(log(n / 8) / log(128 / 8) * 8) capped at 15), always 32
    buckets and max_distance 128 whatever relative_attention_num_buckets says; the bias table
    `encoder.relative_attention_bias` looked up and permuted to [1, heads, L, L].
    MPNetSelfAttention: `attn.q/k/v`, scores / sqrt(head_dim), `+= position_bias`, + extended
    mask, softmax, context, `attn.o`; MPNetAttention: `attention.LayerNorm(o + input)`.
    MPNetIntermediate / MPNetOutput: BERT's. MPNetPooler: tanh(dense(token 0)) when present.
    MPNetForSequenceClassification: MPNetClassificationHead, dense-tanh-out_proj on <s>.

ModernBERT (HF transformers `models/modernbert/modeling_modernbert.py` and
`configuration_modernbert.py`; the sdpa/eager path, which is what runs without flash-attn)
    ModernBertConfig: norm_eps 1e-5, norm_bias / attention_bias / mlp_bias / classifier_bias
    false, local_attention 128, global_attn_every_n_layers 3, rotary thetas 160000 (global) and
    10000 (local) from `global_rope_theta` / `local_rope_theta`, or from `rope_parameters`
    {"full_attention": {...}, "sliding_attention": {...}} in newer files (convert_rope_params_to_dict);
    `layer_types` default to "sliding_attention" where i % global_attn_every_n_layers != 0.
    ModernBertEmbeddings: `norm(tok_embeddings[ids])` (LayerNorm with bias=norm_bias); no
    position table, no token types.
    ModernBertModel._update_attention_mask: the padding mask (1 - mask) * finfo.min, and the
    sliding-window mask, the same with finfo.min where |i - j| > local_attention // 2.
    ModernBertRotaryEmbedding: per layer type, inv_freq = 1 / theta ** (arange(0, d, 2) / d), freqs =
    inv_freq x position_ids (arange(L)), emb = cat(freqs, freqs), cos / sin in float32.
    ModernBertEncoderLayer: attn_norm (nn.Identity in layer 0), ModernBertAttention: Wqkv viewed
    [B, L, 3, heads, d] and unbound into q, k, v; apply_rotary_pos_emb (rotate_half) with the
    layer type's cos / sin; scores = q k^T * d ** -0.5 + the sliding-window mask when
    `layer_id % global_attn_every_n_layers != 0` (ModernBertAttention.local_attention), else the
    padding mask; softmax (float32), context, Wo; residual add. Then mlp_norm, ModernBertMLP:
    Wi -> chunk(2) into input, gate -> Wo(act(input) * gate); residual add.
    ModernBertModel: final_norm after the last layer.
    ModernBertForSequenceClassification: `classifier_pooling` "cls" (token 0) or "mean"
    ((h * mask).sum(1) / mask.sum(1)), ModernBertPredictionHead: norm(act(dense(x))) with
    classifier_activation and classifier_bias, then `classifier` (always with a bias).

Qwen3 (HF transformers `models/qwen3/modeling_qwen3.py` and `configuration_qwen3.py`, the eager
attention path; Qwen3-Embedding's use: the bare Qwen3Model under the causal-LM class name)
    Qwen3Config: num_key_value_heads, head_dim (its own, not hidden / heads), rms_norm_eps,
    rope_theta (default rope: no rope_scaling), attention_bias false, hidden_act silu.
    Qwen3Model.forward: `inputs_embeds = embed_tokens(input_ids)` (no norm, no position table);
    position_ids = arange(L); create_causal_mask: for eager attention an additive [B, 1, L, L]
    mask, finfo.min where key j > query i or j is padding (attention_mask 0), else 0.
    Qwen3RotaryEmbedding (compute_default_rope_parameters): inv_freq = 1 / theta ** (arange(0, d,
    2, int64).float() / d), freqs = (inv_freq[None, :, None] @ position_ids[:, None, :]).T, emb =
    cat(freqs, freqs), cos / sin (attention_scaling 1) in float32.
    Qwen3DecoderLayer: residual; input_layernorm; Qwen3Attention: q_proj(x).view(B, L, -1, d) ->
    q_norm (Qwen3RMSNorm over d) -> transpose(1, 2); the same for k with k_norm; v_proj
    (no norm); apply_rotary_pos_emb (q * cos + rotate_half(q) * sin, k likewise);
    eager_attention_forward: repeat_kv (each kv head repeated for heads / kv_heads consecutive
    query heads), q k^T * d ** -0.5 + mask, softmax in float32, probs v, transpose, reshape, o_proj;
    residual add; post_attention_layernorm; Qwen3MLP: down_proj(silu(gate_proj(x)) * up_proj(x));
    residual add. Qwen3Model: `norm` after the last layer.
    Qwen3RMSNorm: x in float32, variance = x.pow(2).mean(-1), x * rsqrt(variance + eps), cast back,
    weight * x. (The float64 reference keeps float64 where upstream says float32.)

Qwen2 (HF transformers `models/qwen2/modeling_qwen2.py` and `configuration_qwen2.py`; gte-Qwen2's
use: the bare Qwen2Model under the causal-LM class name) runs Qwen3's path above with three
differences, each from the upstream file:
    Qwen2Attention.__init__: head_dim = getattr(config, "head_dim", hidden // heads); q_proj,
    k_proj, v_proj with bias=True, o_proj with bias=False; no q_norm / k_norm (the forward views
    q_proj(x) and k_proj(x) into heads and transposes them directly).
    The mask: `is_causal: false` in config.json (gte-Qwen2) makes transformers >= 5.2's
    masking_utils.create_causal_mask build the bidirectional mask (finfo.min where key j is
    padding only); without the key, the causal mask above. (transformers 4.x ignored the key;
    TEI honours it.)

Llama and Mistral (HF transformers `models/llama/modeling_llama.py`, `models/mistral/
modeling_mistral.py` and their configuration files; LlamaModel / MistralModel used as encoders) run
Qwen3's path above without q_norm / k_norm, with:
    LlamaAttention: q/k/v/o_proj with bias=config.attention_bias; LlamaMLP: gate/up/down_proj with
    bias=config.mlp_bias (Mistral: no biases). head_dim = getattr(config, "head_dim", hidden //
    heads). MistralConfig's defaults: num_key_value_heads 8, sliding_window 4096.
    LlamaRotaryEmbedding with rope_scaling (modeling_rope_utils.py): "linear" divides the default
    inv_freq by factor (_compute_linear_scaling_rope_parameters); "llama3"
    (_compute_llama3_parameters), in float32: wavelen = 2 * pi / inv_freq; inv_freq / factor where
    wavelen > original_max_position_embeddings / low_freq_factor; smooth = (old_context_len /
    wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor) and (1 - smooth) * inv /
    factor + smooth * inv where neither wavelen < old / high_freq_factor nor wavelen > old /
    low_freq_factor.
    The mask: create_causal_mask (causal unless config.is_causal is false, transformers >= 5.2);
    MistralModel with a sliding_window: create_sliding_window_causal_mask, which also masks key j
    where j <= i - sliding_window.

Gemma, the first generation (HF transformers `models/gemma/modeling_gemma.py` and
`configuration_gemma.py`; bge-reranker-v2-gemma's use: the whole GemmaForCausalLM) runs Llama's path
above (no biases unless attention_bias, no q/k norms, scores scaled by head_dim ** -0.5) with:
    GemmaModel.forward: inputs_embeds * normalizer, normalizer = torch.tensor(hidden_size ** 0.5,
    dtype=hidden_states.dtype).
    GemmaRMSNorm.forward: self._norm(x.float()) * (1.0 + self.weight.float()), then type_as(x) (as
    Gemma3RMSNorm below).
    GemmaMLP.__init__: act = ACT2FN[config.hidden_activation], set to gelu_pytorch_tanh when it is
    None — config.hidden_act is ignored (the "gelu" of gemma-2b's first config.json).
    GemmaConfig's defaults: num_key_value_heads 16, head_dim 256, rope_theta 10000.
    The LM head (tie_word_embeddings): embed_tokens.weight, unscaled.

Gemma3 (HF transformers `models/gemma3/modeling_gemma3.py` and `configuration_gemma3.py`,
transformers >= 4.56; EmbeddingGemma's use: Gemma3TextModel with use_bidirectional_attention)
    Gemma3TextConfig.__init__: `sliding_window = sliding_window // 2 + 1` when
    use_bidirectional_attention (an exclusive bound); layer_types, else "sliding_attention" unless
    (i + 1) % sliding_window_pattern == 0; rope_theta for the full layers, rope_local_base_freq for
    the sliding ones (or rope_parameters per layer type); query_pre_attn_scalar; head_dim.
    Gemma3TextScaledWordEmbedding.forward: embed_tokens(ids) * embed_scale.to(weight.dtype), where
    embed_scale = torch.tensor(hidden_size ** 0.5) (a float32 tensor).
    Gemma3TextModel.forward, the masks: create_causal_mask / create_sliding_window_causal_mask with
    or_mask_function True (full layers: padding only) or _bidirectional_window_overlay (sliding
    layers: |q - kv| < sliding_window) when bidirectional; else causal, and kv > q - sliding_window
    on the sliding layers. Padding keys are masked in both. position_ids = arange(L).
    Gemma3RotaryEmbedding: per layer type, inv_freq = 1 / base ** (arange(0, d, 2, int64).float() /
    d), emb = cat(freqs, freqs), cos / sin in float32 (attention_scaling 1 for the default type).
    Gemma3DecoderLayer.forward: residual; input_layernorm; Gemma3Attention: q_proj(x).view(B, L,
    -1, d).transpose(1, 2) -> q_norm; k likewise with k_norm; v_proj; apply_rotary_pos_emb
    (rotate_half); eager_attention_forward: repeat_kv, q k^T * scaling (query_pre_attn_scalar **
    -0.5) + mask, softmax in float32, probs v, o_proj; post_attention_layernorm; residual add;
    pre_feedforward_layernorm; Gemma3MLP: down_proj(act(gate_proj(x)) * up_proj(x)) with
    hidden_activation (gelu_pytorch_tanh); post_feedforward_layernorm; residual add.
    Gemma3TextModel: `norm` after the last layer.
    Gemma3RMSNorm.forward: x.float() * rsqrt(x.pow(2).mean(-1) + eps), times (1.0 + weight.float()),
    type_as(x). (The float64 reference keeps float64.)

sentence-transformers' Dense modules after the Pooling (`models/Dense.py`, EmbeddingGemma's
2_Dense and 3_Dense): sentence_embedding = activation_function(linear(sentence_embedding)), the
modules in modules.json's order; Linear(in_features, out_features, bias) from the module folder's
"linear.weight" / "linear.bias" (st_dense_chain below).

Heads (*ForSequenceClassification, eval mode)
    BertForSequenceClassification: `bert.pooler.dense` + tanh on token 0 ([CLS]), then
    `classifier` (Linear hidden -> num_labels).
    XLMRobertaForSequenceClassification / RobertaForSequenceClassification
    (RobertaClassificationHead): `features[:, 0, :]` (<s>) -> `classifier.dense` -> tanh ->
    `classifier.out_proj`. The base model is built with add_pooling_layer=False.
    DistilBertForSequenceClassification: `hidden_state[:, 0]` -> `pre_classifier` -> ReLU ->
    `classifier`.
    Scores as the serving side reports them: sigmoid of the logit for one label (a
    cross-encoder reranker), softmax over the logits for several.

Pooling (sentence-transformers `models.Pooling`), computed from last_hidden_state:
    cls = token 0; mean = sum(h * mask) / max(sum(mask), 1e-9); max = max over tokens with
    masked positions set to -1e9; last = the last token whose mask is 1
    (`pooling_mode_lasttoken`); L2 normalisation as `torch.nn.functional.normalize(p=2,
    eps=1e-12)` (sentence-transformers `models.Normalize`).

Inputs are run as one right-padded batch, as HF would (pad id = config.pad_token_id, mask 0
on pads); `--check-batch` also runs each input alone and reports the largest difference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

# ---------------------------------------------------------------------------------------------
# safetensors


_ST_DTYPES = {
    "F64": (np.dtype("<f8"), 8),
    "F32": (np.dtype("<f4"), 4),
    "F16": (np.dtype("<f2"), 2),
    "BF16": (np.dtype("<u2"), 2),  # converted below
    "I64": (np.dtype("<i8"), 8),
    "I32": (np.dtype("<i4"), 4),
}


def load_safetensors(path: str) -> dict[str, np.ndarray]:
    """Parses a .safetensors file into numpy arrays (BF16 widened to float32 exactly)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError(f"{path}: header length {n} runs past the end of the file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        if dtype not in _ST_DTYPES:
            raise ValueError(f"{path}: tensor {name}: unsupported dtype {dtype}")
        npdt, size = _ST_DTYPES[dtype]
        shape = tuple(int(d) for d in info["shape"])
        begin, end = (int(x) for x in info["data_offsets"])
        count = math.prod(shape)
        if not (0 <= begin <= end and base + end <= len(data)):
            raise ValueError(f"{path}: tensor {name}: data_offsets {begin}..{end} out of bounds")
        if end - begin != count * size:
            raise ValueError(f"{path}: tensor {name}: {end - begin} bytes for shape {shape} {dtype}")
        arr = np.frombuffer(data, dtype=npdt, count=count, offset=base + begin).reshape(shape)
        if dtype == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = arr.copy()
    return out


def load_model_weights(model_dir: str) -> dict[str, np.ndarray]:
    """model.safetensors, or the shards named by model.safetensors.index.json's weight_map."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if not os.path.exists(index):
        return load_safetensors(os.path.join(model_dir, "model.safetensors"))
    with open(index, encoding="utf-8") as f:
        weight_map = json.load(f)["weight_map"]
    out: dict[str, np.ndarray] = {}
    for shard in sorted(set(weight_map.values())):
        for name, arr in load_safetensors(os.path.join(model_dir, shard)).items():
            if weight_map.get(name) != shard:
                raise ValueError(f"{shard}: tensor {name} is not mapped to this shard by the index")
            out[name] = arr
    missing = set(weight_map) - set(out)
    if missing:
        raise ValueError(f"index names tensors no shard holds: {sorted(missing)}")
    return out


# ---------------------------------------------------------------------------------------------
# activations (transformers.activations.ACT2FN, the entries these models use)


def _gelu_erf(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {
    "gelu": _gelu_erf,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": torch.relu,
    "silu": torch.nn.functional.silu,
    "swish": torch.nn.functional.silu,
}


# ---------------------------------------------------------------------------------------------
# the model


# The families that run qwen3_forward (the Llama-lineage decoders).
DECODERS = ("qwen3", "qwen2", "llama", "mistral", "gemma")

BASE_CLASSES = {
    "BertModel": ("bert", None),
    "BertForSequenceClassification": ("bert", "bert"),
    # SPLADE's checkpoints: the encoder under "bert.", the MLM head read by splade_reference.py.
    "BertForMaskedLM": ("bert", "bert"),
    "RobertaModel": ("roberta", None),
    "RobertaForSequenceClassification": ("roberta", "roberta"),
    "XLMRobertaModel": ("roberta", None),
    "XLMRobertaForSequenceClassification": ("roberta", "roberta"),
    # SPLADE on XLM-R / DistilBERT: the encoder under its prefix, the MLM head in splade_reference.py.
    "XLMRobertaForMaskedLM": ("roberta", "roberta"),
    "DistilBertModel": ("distilbert", None),
    "DistilBertForSequenceClassification": ("distilbert", "distilbert"),
    "DistilBertForMaskedLM": ("distilbert", "distilbert"),
    "DebertaV2Model": ("deberta", "deberta"),
    "DebertaV2ForSequenceClassification": ("deberta", "deberta"),
    # JinaBERT's remote code; the embedding repos name the masked-LM class over bare weights.
    "JinaBertModel": ("jina", "bert"),
    "JinaBertForMaskedLM": ("jina", "bert"),
    "JinaBertForSequenceClassification": ("jina", "bert"),
    # sentence-transformers' MPNet repos name the masked-LM class over bare-model weights.
    "MPNetModel": ("mpnet", "mpnet"),
    "MPNetForMaskedLM": ("mpnet", "mpnet"),
    "MPNetForSequenceClassification": ("mpnet", "mpnet"),
    # NomicBERT's remote code (nomic-ai/nomic-bert-2048); NomicBertForPreTraining keeps "bert.".
    "NomicBertModel": ("nomic", "bert"),
    # GTE's remote code (Alibaba-NLP/new-impl), base_model_prefix "new".
    "NewModel": ("gte", "new"),
    "NewForSequenceClassification": ("gte", "new"),
    # transformers' ModernBERT, base_model_prefix "model".
    "ModernBertModel": ("modernbert", "model"),
    "ModernBertForMaskedLM": ("modernbert", "model"),
    "ModernBertForSequenceClassification": ("modernbert", "model"),
    # transformers' Qwen3, base_model_prefix "model"; Qwen3-Embedding names the causal-LM class
    # over the bare model's weights.
    "Qwen3ForCausalLM": ("qwen3", "model"),
    "Qwen3Model": ("qwen3", "model"),
    # transformers' Qwen2 (base_model_prefix "model"); gte-Qwen2 names the causal-LM class.
    "Qwen2ForCausalLM": ("qwen2", "model"),
    "Qwen2Model": ("qwen2", "model"),
    # transformers' Llama and Mistral (base_model_prefix "model").
    "LlamaModel": ("llama", "model"),
    "LlamaForCausalLM": ("llama", "model"),
    "MistralModel": ("mistral", "model"),
    "MistralForCausalLM": ("mistral", "model"),
    # transformers' Gemma3 text model; EmbeddingGemma names the bare model.
    "Gemma3TextModel": ("gemma3", "model"),
    "Gemma3ForCausalLM": ("gemma3", "model"),
    # transformers' Gemma (base_model_prefix "model"); bge-reranker-v2-gemma is the causal LM whole.
    "GemmaModel": ("gemma", "model"),
    "GemmaForCausalLM": ("gemma", "model"),
}


# MPNetEncoder.relative_position_bucket (HF modeling_mpnet.py), verbatim in its arithmetic: the
# bucket of relative_position = memory - context (key j minus query i), T5's bidirectional
# scheme with the 32 buckets and max_distance 128 that compute_position_bias always passes.
def mpnet_relative_position_bucket(relative_position, num_buckets=32, max_distance=128):
    ret = 0
    n = -relative_position
    num_buckets //= 2
    ret += (n < 0).to(torch.long) * num_buckets
    n = torch.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


# JinaBertEncoder.rebuild_alibi_tensor's `_get_alibi_head_slopes` (Python floats), verbatim in
# its arithmetic: the power-of-two sequence, then every other slope of the next one appended.
def jina_alibi_slopes(n_heads):
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_2(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_2(closest) + jina_alibi_slopes(2 * closest)[0::2][: n_heads - closest]


# DeBERTa-v2's relative positions: `make_log_bucket_position` and `build_relative_position` of
# HF modeling_deberta_v2.py, the same torch operations in the same order (float32 logs).
def deberta_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid),
                          torch.tensor(mid - 1).type_as(relative_pos), torch.abs(relative_pos))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def deberta_relative_position(query_size, key_size, bucket_size, max_position):
    rel = torch.arange(0, query_size)[:, None] - torch.arange(0, key_size)[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = deberta_log_bucket_position(rel, bucket_size, max_position)
    return rel.to(torch.long)[:query_size, :].unsqueeze(0)


class Reference:
    """The forward pass of one HF model directory, in one compute dtype."""

    def __init__(self, model_dir: str, dtype: torch.dtype = torch.float32):
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            self.config = json.load(f)
        archs = self.config.get("architectures") or []
        if len(archs) != 1 or archs[0] not in BASE_CLASSES:
            raise ValueError(f"unsupported architectures {archs}; supported: {sorted(BASE_CLASSES)}")
        self.architecture = archs[0]
        self.family, self.attr = BASE_CLASSES[self.architecture]
        self.has_head = self.architecture.endswith("ForSequenceClassification")
        self.dtype = dtype
        raw = load_model_weights(model_dir)
        self.w = {k: torch.from_numpy(v).to(dtype) if v.dtype.kind == "f" else torch.from_numpy(v)
                  for k, v in raw.items()}
        # base_model_prefix detection, as PreTrainedModel.from_pretrained does
        probe = ("embeddings.tok_embeddings.weight" if self.family == "modernbert"
                 else "embed_tokens.weight" if self.family in DECODERS + ("gemma3",)
                 else "embeddings.word_embeddings.weight")
        if self.attr and (self.attr + "." + probe) in self.w:
            self.prefix = self.attr + "."
        elif probe in self.w:
            self.prefix = ""
        else:
            raise ValueError(f"no {probe} (with or without a '{self.attr}.' prefix)")
        self.used: set[str] = set()
        self.heads_at_once = False  # JinaBERT: see jina_layer

        c = self.config
        if self.family == "deberta":
            # DebertaV2Config defaults; DisentangledSelfAttention / DebertaV2Encoder getattr defaults.
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.eps = c.get("layer_norm_eps", 1e-7)
            self.act = ACTIVATIONS[c.get("hidden_act", "gelu")]
            self.pooler_act = ACTIVATIONS[c.get("pooler_hidden_act", "gelu")]
            self.relative_attention = c.get("relative_attention", False)
            self.position_biased_input = c.get("position_biased_input", True)
            self.type_vocab_size = c.get("type_vocab_size", 0)
            pat = c.get("pos_att_type") or []
            if isinstance(pat, str):
                pat = [x.strip() for x in pat.lower().split("|")]
            self.pos_att_type = pat
            self.share_att_key = c.get("share_att_key", False)
            self.norm_rel_ebd = [x.strip() for x in c.get("norm_rel_ebd", "none").lower().split("|")]
            self.max_relative_positions = c.get("max_relative_positions", -1)
            if self.max_relative_positions < 1:
                self.max_relative_positions = c.get("max_position_embeddings", 512)
            self.position_buckets = c.get("position_buckets", -1)
            self.pos_ebd_size = self.position_buckets if self.position_buckets > 0 else self.max_relative_positions
        elif self.family == "jina":
            # JinaBertConfig (configuration_bert.py of jinaai/jina-bert-implementation).
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.eps = c.get("layer_norm_eps", 1e-12)
            self.act = ACTIVATIONS[c.get("hidden_act", "gelu")]
            self.position_embedding_type = c.get("position_embedding_type", "absolute")
            self.feed_forward_type = c.get("feed_forward_type", "original")
            self.intermediate = c["intermediate_size"]
        elif self.family == "mpnet":
            # MPNetConfig: no token types; MPNetEmbeddings fixes padding_idx at 1.
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.eps = c.get("layer_norm_eps", 1e-12)
            self.act = ACTIVATIONS[c.get("hidden_act", "gelu")]
        elif self.family == "nomic":
            # NomicBertConfig (a GPT2Config): GPT-2's names and defaults.
            self.hidden = c.get("n_embd", 768)
            self.heads = c.get("n_head", 12)
            self.layers = c.get("n_layer", 12)
            self.eps = c.get("layer_norm_epsilon", 1e-5)
            self.activation_function = c.get("activation_function", "gelu_new")
            gated = self.activation_function in ("glu", "swiglu", "geglu")
            inner = c.get("n_inner")
            if inner is None:
                inner = int(8 * self.hidden / 3) if gated else 4 * self.hidden
            if gated:  # NomciBertGatedMLP: multiple_of=256
                inner = int((inner + 256 - 1) // 256 * 256)
            self.intermediate = inner
            self.gated = gated
            self.qkv_bias = c.get("qkv_proj_bias", True)
            self.fc1_bias = c.get("mlp_fc1_bias", True)
            self.fc2_bias = c.get("mlp_fc2_bias", True)
            self.type_vocab_size = c.get("type_vocab_size", 2)
            self.rotary_fraction = c.get("rotary_emb_fraction", 0.0)
            # nomic-embed-text-v2-moe's NomicMoELayer in every moe_every_n_layers-th layer.
            self.moe_every = c.get("moe_every_n_layers", 0) or 0
            self.num_experts = c.get("num_experts", 0)
            self.moe_top_k = c.get("moe_top_k", 1)
            self.moe_margins = []  # per MoE call: the smallest score gap between a kept and a dropped expert
            self.rotary_base = float(c.get("rotary_emb_base", 10_000))
            self.rotary_interleaved = c.get("rotary_emb_interleaved", False)
            self.rotary_scaling_factor = c.get("rotary_scaling_factor")
            self.max_trained_positions = c.get("max_trained_positions", 2048)
        elif self.family == "gte":
            # NewConfig's defaults (Alibaba-NLP/new-impl configuration.py).
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.intermediate = c["intermediate_size"]
            self.eps = c.get("layer_norm_eps", 1e-12)
            self.act = ACTIVATIONS[c.get("hidden_act", "gelu")]
            self.type_vocab_size = c.get("type_vocab_size", 1)
            self.position_embedding_type = c.get("position_embedding_type", "rope")
            self.rope_theta = c.get("rope_theta", 10000.0)
            self.rope_scaling = c.get("rope_scaling")
            self.pack_qkv = c.get("pack_qkv", True)
        elif self.family == "modernbert":
            # ModernBertConfig's defaults and its convert_rope_params_to_dict.
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.intermediate = c["intermediate_size"]
            self.eps = c.get("norm_eps", 1e-5)
            self.act = ACTIVATIONS[c.get("hidden_activation", "gelu")]
            self.norm_bias = c.get("norm_bias", False)
            self.attention_bias = c.get("attention_bias", False)
            self.mlp_bias = c.get("mlp_bias", False)
            self.classifier_bias = c.get("classifier_bias", False)
            self.classifier_pooling = c.get("classifier_pooling", "cls")
            self.classifier_act = ACTIVATIONS[c.get("classifier_activation", "gelu")]
            self.local_attention = c.get("local_attention", 128)
            self.global_every = c.get("global_attn_every_n_layers", 3)
            rope = c.get("rope_parameters") or {}
            self.rope_theta = {
                "full_attention": (rope.get("full_attention") or {}).get("rope_theta", c.get("global_rope_theta", 160000.0)),
                "sliding_attention": (rope.get("sliding_attention") or {}).get("rope_theta", c.get("local_rope_theta", 10000.0)),
            }
            self.layer_types = c.get("layer_types") or [
                "sliding_attention" if i % self.global_every else "full_attention" for i in range(self.layers)]
        elif self.family in DECODERS:
            # Qwen3Config's, Qwen2Config's, LlamaConfig's and MistralConfig's defaults.
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.kv_heads = c.get("num_key_value_heads", {"mistral": 8, "gemma": 16}.get(self.family, self.heads))
            self.layers = c["num_hidden_layers"]
            self.intermediate = c["intermediate_size"]
            self.eps = c.get("rms_norm_eps", 1e-6)
            self.act = ACTIVATIONS[c.get("hidden_act", "silu")]
            self.rope_theta = c.get("rope_theta", 10000.0)
            self.causal = c.get("is_causal", True)
            self.mlp_bias, self.sliding_window, self.qk_norm = False, None, False
            if self.family == "qwen3":
                self.qkv_bias = self.o_bias = c.get("attention_bias", False)
                self.qk_norm = True
            elif self.family == "qwen2":
                self.qkv_bias, self.o_bias = True, False
            elif self.family == "llama":
                self.qkv_bias = self.o_bias = c.get("attention_bias", False)
                self.mlp_bias = c.get("mlp_bias", False)
            elif self.family == "gemma":
                self.qkv_bias = self.o_bias = c.get("attention_bias", False)
                self.act = ACTIVATIONS[c.get("hidden_activation") or "gelu_pytorch_tanh"]
                self.causal = not c.get("use_bidirectional_attention", False) and self.causal
            else:
                self.qkv_bias = self.o_bias = False
                self.sliding_window = c.get("sliding_window", 4096)
            self.rope_scaling = c.get("rope_scaling")
            if c.get("use_sliding_window"):
                raise ValueError("use_sliding_window is not part of this reference")
        elif self.family == "gemma3":
            # Gemma3TextConfig's defaults.
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.kv_heads = c.get("num_key_value_heads", 4)
            self.layers = c["num_hidden_layers"]
            self.eps = c.get("rms_norm_eps", 1e-6)
            self.act = ACTIVATIONS[c.get("hidden_activation", "gelu_pytorch_tanh")]
            self.scaling = c.get("query_pre_attn_scalar", 256) ** -0.5
            self.causal = not c.get("use_bidirectional_attention", False)
            self.attention_bias = c.get("attention_bias", False)
            self.sliding_window = c.get("sliding_window", 4096)
            if not self.causal and self.sliding_window is not None:
                self.sliding_window = self.sliding_window // 2 + 1
            pattern = c.get("sliding_window_pattern", 6)
            self.layer_types = c.get("layer_types") or [
                "sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(self.layers)]
            rope = c.get("rope_parameters") or {}
            self.rope_theta = {
                "full_attention": (rope.get("full_attention") or {}).get("rope_theta", c.get("rope_theta", 1000000.0)),
                "sliding_attention": (rope.get("sliding_attention") or {}).get(
                    "rope_theta", c.get("rope_local_base_freq", 10000.0)),
            }
            if c.get("rope_scaling") or c.get("attn_logit_softcapping"):
                raise ValueError("rope_scaling and attention softcapping are not part of this reference")
        elif self.family == "distilbert":
            self.hidden = c["dim"]
            self.heads = c["n_heads"]
            self.layers = c["n_layers"]
            self.eps = 1e-12  # hard-coded in modeling_distilbert
            self.act = ACTIVATIONS[c.get("activation", "gelu")]
        else:
            self.hidden = c["hidden_size"]
            self.heads = c["num_attention_heads"]
            self.layers = c["num_hidden_layers"]
            self.eps = c.get("layer_norm_eps", 1e-12)
            self.act = ACTIVATIONS[c.get("hidden_act", "gelu")]
            pet = c.get("position_embedding_type", "absolute")
            if pet != "absolute":
                raise ValueError(f"position_embedding_type {pet} is not supported")
        self.pad_id = c.get("pad_token_id", 1 if self.family in ("roberta", "mpnet") else 0)
        if self.family in DECODERS:
            # Qwen3Config / Qwen2Config have no pad_token_id; padded positions are masked, any id serves.
            self.pad_id = c.get("pad_token_id") or c.get("eos_token_id") or 0
            self.head_dim = c.get("head_dim") or (256 if self.family == "gemma" else self.hidden // self.heads)
        elif self.family == "gemma3":
            self.head_dim = c.get("head_dim", 256)
        else:
            if self.hidden % self.heads:
                raise ValueError("hidden size not divisible by the number of heads")
            self.head_dim = self.hidden // self.heads
        self.num_labels = None
        if self.has_head:
            id2label = c.get("id2label")
            self.num_labels = c.get("num_labels", len(id2label) if id2label else 2)

    # -- weights --------------------------------------------------------------------------
    def W(self, name: str, base: bool = True) -> torch.Tensor:
        key = (self.prefix + name) if base else name
        if key not in self.w:
            raise KeyError(f"missing tensor {key}")
        self.used.add(key)
        return self.w[key]

    def linear(self, x, name, base=True):
        return torch.nn.functional.linear(x, self.W(name + ".weight", base), self.W(name + ".bias", base))

    def layer_norm(self, x, name, eps=None):
        return torch.nn.functional.layer_norm(
            x, (self.hidden,), self.W(name + ".weight"), self.W(name + ".bias"),
            self.eps if eps is None else eps)

    # -- DeBERTa-v2 (modeling_deberta_v2.py) ---------------------------------------------------
    def deberta_embeddings(self, ids, type_ids, mask):
        # DebertaV2Embeddings.forward: word (+ position if position_biased_input) (+ token type
        # if type_vocab_size > 0), LayerNorm, then multiplied by the attention mask.
        B, L = ids.shape
        x = self.W("embeddings.word_embeddings.weight")[ids]
        if self.position_biased_input:
            x = x + self.W("embeddings.position_embeddings.weight")[torch.arange(L)].unsqueeze(0)
        if self.type_vocab_size > 0:
            x = x + self.W("embeddings.token_type_embeddings.weight")[type_ids]
        x = self.layer_norm(x, "embeddings.LayerNorm")
        return x * mask.unsqueeze(2).to(x.dtype)

    def deberta_scores_for(self, x):
        # DisentangledSelfAttention.transpose_for_scores: [B, L, H] -> [B*heads, L, head_dim]
        B, L, _ = x.shape
        return x.view(B, L, self.heads, -1).permute(0, 2, 1, 3).contiguous().view(-1, L, self.head_dim)

    def deberta_bias(self, p, q, k, relative_pos, rel_embeddings, scale_factor):
        # DisentangledSelfAttention.disentangled_attention_bias
        att_span = self.pos_ebd_size
        rel = rel_embeddings[0:att_span * 2, :].unsqueeze(0)
        reps = q.size(0) // self.heads
        if self.share_att_key:
            pos_query = self.deberta_scores_for(self.linear(rel, p + "attention.self.query_proj")).repeat(reps, 1, 1)
            pos_key = self.deberta_scores_for(self.linear(rel, p + "attention.self.key_proj")).repeat(reps, 1, 1)
        else:
            if "c2p" in self.pos_att_type:
                pos_key = self.deberta_scores_for(self.linear(rel, p + "attention.self.pos_key_proj")).repeat(reps, 1, 1)
            if "p2c" in self.pos_att_type:
                pos_query = self.deberta_scores_for(self.linear(rel, p + "attention.self.pos_query_proj")).repeat(reps, 1, 1)
        score = 0
        if "c2p" in self.pos_att_type:
            scale = torch.sqrt(torch.tensor(pos_key.size(-1), dtype=torch.float) * scale_factor)
            c2p = torch.bmm(q, pos_key.transpose(-1, -2))
            c2p_pos = torch.clamp(relative_pos + att_span, 0, att_span * 2 - 1)
            c2p = torch.gather(c2p, dim=-1, index=c2p_pos.squeeze(0).expand([q.size(0), q.size(1), relative_pos.size(-1)]))
            score = score + c2p / scale.to(c2p.dtype)
        if "p2c" in self.pos_att_type:
            scale = torch.sqrt(torch.tensor(pos_query.size(-1), dtype=torch.float) * scale_factor)
            p2c_pos = torch.clamp(-relative_pos + att_span, 0, att_span * 2 - 1)
            p2c = torch.bmm(k, pos_query.transpose(-1, -2))
            p2c = torch.gather(p2c, dim=-1, index=p2c_pos.squeeze(0).expand([q.size(0), k.size(-2), k.size(-2)])).transpose(-1, -2)
            score = score + p2c / scale.to(p2c.dtype)
        return score

    def deberta_layer(self, x, i, mask4, relative_pos, rel_embeddings):
        # DebertaV2Layer: DisentangledSelfAttention, DebertaV2SelfOutput (post-LN),
        # DebertaV2Intermediate, DebertaV2Output (post-LN).
        p = f"encoder.layer.{i}."
        q = self.deberta_scores_for(self.linear(x, p + "attention.self.query_proj"))
        k = self.deberta_scores_for(self.linear(x, p + "attention.self.key_proj"))
        v = self.deberta_scores_for(self.linear(x, p + "attention.self.value_proj"))
        scale_factor = 1 + ("c2p" in self.pos_att_type) + ("p2c" in self.pos_att_type)
        scale = torch.sqrt(torch.tensor(q.size(-1), dtype=torch.float) * scale_factor)
        scores = torch.bmm(q, k.transpose(-1, -2)) / scale.to(q.dtype)  # upstream: torch.tensor(scale, dtype=...)
        if self.relative_attention:
            scores = scores + self.deberta_bias(p, q, k, relative_pos, rel_embeddings, scale_factor)
        B, L = x.shape[0], x.shape[1]
        scores = scores.view(-1, self.heads, L, L)
        # XSoftmax: masked positions to finfo.min, softmax, then zeroed.
        rmask = ~(mask4.to(torch.bool))
        probs = torch.softmax(scores.masked_fill(rmask, torch.finfo(scores.dtype).min), -1).masked_fill(rmask, 0)
        ctx = torch.bmm(probs.view(-1, L, L), v)
        ctx = ctx.view(-1, self.heads, L, self.head_dim).permute(0, 2, 1, 3).contiguous().view(B, L, self.hidden)
        a = self.layer_norm(self.linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = self.act(self.linear(a, p + "intermediate.dense"))
        return self.layer_norm(self.linear(h, p + "output.dense") + a, p + "output.LayerNorm")

    def deberta_forward(self, ids, type_ids, mask):
        x = self.deberta_embeddings(ids, type_ids, mask)
        # DebertaV2Encoder.get_attention_mask: [B, L] -> [B, 1, L, L] (pairs of real tokens)
        ext = mask.unsqueeze(1).unsqueeze(2)
        mask4 = (ext * ext.squeeze(-2).unsqueeze(-1)).byte()
        L = ids.shape[1]
        relative_pos = deberta_relative_position(L, L, self.position_buckets, self.max_relative_positions)
        rel_embeddings = None
        if self.relative_attention:
            rel_embeddings = self.W("encoder.rel_embeddings.weight")
            if "layer_norm" in self.norm_rel_ebd:  # DebertaV2Encoder.get_rel_embedding
                rel_embeddings = self.layer_norm(rel_embeddings, "encoder.LayerNorm")
        for i in range(self.layers):
            x = self.deberta_layer(x, i, mask4, relative_pos, rel_embeddings)
        return x

    # -- JinaBERT (jinaai/jina-bert-implementation, modeling_bert.py) --------------------------
    def jina_alibi(self, L):
        # JinaBertEncoder.rebuild_alibi_tensor(size): |memory - context| per head times the
        # negated slopes, which torch.Tensor makes float32 whatever the model's dtype (the
        # buffer follows .to(dtype) afterwards). The upstream code builds it once for
        # max_position_embeddings and slices [:L, :L]; the values are the same.
        ctx = torch.arange(L)[:, None]
        mem = torch.arange(L)[None, :]
        rel = torch.abs(mem - ctx).unsqueeze(0).expand(self.heads, -1, -1)
        slopes = torch.Tensor(jina_alibi_slopes(self.heads)) * -1
        return (slopes.unsqueeze(1).unsqueeze(1) * rel).to(self.dtype)  # [heads, L, L]

    def jina_embeddings(self, ids, type_ids):
        # JinaBertEmbeddings.forward: word + token type (+ position only when
        # position_embedding_type is "absolute"), LayerNorm; dropout is identity in eval.
        B, L = ids.shape
        x = self.W("embeddings.word_embeddings.weight")[ids]
        x = x + self.W("embeddings.token_type_embeddings.weight")[type_ids]
        if self.position_embedding_type == "absolute":
            x = x + self.W("embeddings.position_embeddings.weight")[torch.arange(L)].unsqueeze(0)
        return self.layer_norm(x, "embeddings.LayerNorm")

    def jina_layer(self, x, i, ext_mask, alibi):
        # JinaBertLayer: JinaBertAttention (JinaBertSelfAttention's eager path + JinaBertSelfOutput),
        # then JinaBertGLUMLP (feed_forward_type ending in "glu") or the BERT intermediate/output.
        p = f"encoder.layer.{i}."
        q = self.split_heads(self.linear(x, p + "attention.self.query"))
        k = self.split_heads(self.linear(x, p + "attention.self.key"))
        v = self.split_heads(self.linear(x, p + "attention.self.value"))
        # scores = QK^T / sqrt(head_dim); + attention_mask; softmax(scores + bias). One head at a
        # time here (the same arithmetic) so that a 4096-token input fits in memory; all heads at
        # once, as upstream, for the ONNX export (heads_at_once: one graph node per op, not 12).
        if self.heads_at_once:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + ext_mask
            probs = torch.softmax(scores + alibi.unsqueeze(0) if alibi is not None else scores, dim=-1)
            return self.jina_after_attention(x, p, self.merge_heads(torch.matmul(probs, v)))
        ctx = torch.empty_like(q)
        for h in range(self.heads):
            scores = torch.matmul(q[:, h], k[:, h].transpose(-1, -2)) / math.sqrt(self.head_dim)
            scores = scores + ext_mask[:, 0]
            probs = torch.softmax(scores + alibi[h].unsqueeze(0) if alibi is not None else scores, dim=-1)
            ctx[:, h] = torch.matmul(probs, v[:, h])
        return self.jina_after_attention(x, p, self.merge_heads(ctx))

    def jina_after_attention(self, x, p, ctx):
        a = self.layer_norm(self.linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        if self.feed_forward_type.endswith("glu"):
            # JinaBertGLUMLP.forward: gated_layers (bias=False) -> [:, :, :I] through act (nn.GELU()
            # for geglu: exact erf; nn.ReLU() for reglu) times [:, :, I:] -> wo -> layernorm(+ residual).
            g = torch.nn.functional.linear(a, self.W(p + "mlp.gated_layers.weight"))
            act = {"geglu": _gelu_erf, "reglu": torch.relu}[self.feed_forward_type]
            h = act(g[:, :, :self.intermediate]) * g[:, :, self.intermediate:]
            return self.layer_norm(self.linear(h, p + "mlp.wo") + a, p + "mlp.layernorm")
        h = self.act(self.linear(a, p + "intermediate.dense"))
        return self.layer_norm(self.linear(h, p + "output.dense") + a, p + "output.LayerNorm")

    def jina_forward(self, ids, type_ids, mask):
        # JinaBertModel.forward: embeddings, the extended mask ((1 - mask) * finfo.min, as
        # ModuleUtilsMixin.get_extended_attention_mask), JinaBertEncoder with the alibi slice.
        x = self.jina_embeddings(ids, type_ids)
        ext = (1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min
        alibi = self.jina_alibi(ids.shape[1]) if self.position_embedding_type == "alibi" else None
        for i in range(self.layers):
            x = self.jina_layer(x, i, ext, alibi)
        return x

    # -- MPNet (HF modeling_mpnet.py) -------------------------------------------------------
    def mpnet_forward(self, ids, mask):
        # MPNetEmbeddings.forward: position ids from create_position_ids_from_input_ids(input_ids,
        # padding_idx=1) -- cumsum of the non-padding tokens, times the mask, plus padding_idx, so
        # a <pad> inside the text sits at position 1 and does not advance the count --, then
        # word + position embeddings (no token types) and LayerNorm.
        padding_idx = 1
        nonpad = ids.ne(padding_idx).int()
        pos = (torch.cumsum(nonpad, dim=1).type_as(nonpad) * nonpad).long() + padding_idx
        x = self.W("embeddings.word_embeddings.weight")[ids] + self.W("embeddings.position_embeddings.weight")[pos]
        x = self.layer_norm(x, "embeddings.LayerNorm")
        # MPNetModel: get_extended_attention_mask ((1 - mask) * finfo.min).
        ext = (1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min
        # MPNetEncoder.compute_position_bias (position_ids None): arange positions, the bucket of
        # memory - context, relative_attention_bias looked up, permuted to [1, heads, L, L].
        L = ids.shape[1]
        rel = torch.arange(L, dtype=torch.long)[None, :] - torch.arange(L, dtype=torch.long)[:, None]
        bias = self.W("encoder.relative_attention_bias.weight")[mpnet_relative_position_bucket(rel)]
        bias = bias.permute([2, 0, 1]).unsqueeze(0)
        for i in range(self.layers):
            # MPNetLayer: MPNetAttention (MPNetSelfAttention: scores / sqrt(d), += position_bias,
            # + mask, softmax, context, o; then LayerNorm(o + input)), MPNetIntermediate,
            # MPNetOutput (BERT's post-LN FFN).
            p = f"encoder.layer.{i}."
            q = self.split_heads(self.linear(x, p + "attention.attn.q"))
            k = self.split_heads(self.linear(x, p + "attention.attn.k"))
            v = self.split_heads(self.linear(x, p + "attention.attn.v"))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            scores += bias
            scores = scores + ext
            probs = torch.softmax(scores, dim=-1)
            o = self.linear(self.merge_heads(torch.matmul(probs, v)), p + "attention.attn.o")
            a = self.layer_norm(o + x, p + "attention.LayerNorm")
            h = self.act(self.linear(a, p + "intermediate.dense"))
            x = self.layer_norm(self.linear(h, p + "output.dense") + a, p + "output.LayerNorm")
        return x

    # -- NomicBERT (nomic-ai/nomic-bert-2048 modeling_hf_nomic_bert.py) ----------------------
    def nomic_cos_sin(self, seqlen):
        # NomicBertRotaryEmbedding._update_cos_sin_cache (pos_idx_in_fp32), or the dynamic NTK
        # subclass's when rotary_scaling_factor is set: past max_trained_positions the base becomes
        # base * ((factor * seqlen / max_trained) - (factor - 1)) ** (dim / (dim - 2)). Upstream
        # takes seqlen from the padded batch and keeps the raised inv_freq in the module; here, as
        # Warden does, each sequence's own length decides, which is what a fresh upstream model
        # gives that sequence alone.
        dim = self.head_dim * self.rotary_fraction
        base = self.rotary_base
        factor = self.rotary_scaling_factor
        if factor and seqlen > self.max_trained_positions:
            base = base * ((factor * seqlen / self.max_trained_positions) - (factor - 1)) ** (dim / (dim - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        freqs = torch.outer(torch.arange(seqlen, dtype=torch.float32), inv_freq)
        return torch.cos(freqs).to(self.dtype), torch.sin(freqs).to(self.dtype)

    @staticmethod
    def nomic_rotate_half(x, interleaved):
        if not interleaved:
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)

    def nomic_apply_rotary(self, x, cos, sin):
        # apply_rotary_emb: x [seqlen, heads, head_dim]; cos/sin repeated "... d -> ... 1 (2 d)"
        # (or "(d 2)" interleaved) and applied to the first ro_dim values.
        ro_dim = cos.shape[-1] * 2
        if self.rotary_interleaved:
            cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
        else:
            cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
        cos, sin = cos[:, None, :], sin[:, None, :]
        rot = x[..., :ro_dim] * cos + self.nomic_rotate_half(x[..., :ro_dim], self.rotary_interleaved) * sin
        return torch.cat([rot, x[..., ro_dim:]], dim=-1)

    def nomic_linear(self, x, name, bias):
        return torch.nn.functional.linear(x, self.W(name + ".weight"), self.W(name + ".bias") if bias else None)

    def nomic_forward(self, ids, type_ids, mask):
        # NomicBertEmbeddings: word (+ token type when type_vocab_size > 0) (+ a position table
        # only without rotary), then NomicBertModel.emb_ln.
        B, L = ids.shape
        x = self.W("embeddings.word_embeddings.weight")[ids]
        if self.type_vocab_size > 0:
            x = x + self.W("embeddings.token_type_embeddings.weight")[type_ids]
        if self.rotary_fraction <= 0:
            x = x + self.W("embeddings.position_embeddings.weight")[torch.arange(L)].unsqueeze(0)
        x = self.layer_norm(x, "emb_ln")
        ext = (1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min
        # Without NTK scaling every sequence's table is a prefix of the batch's (upstream builds one
        # for the padded length): one table, applied to the whole batch (and traceable for the
        # ONNX export). With scaling, each sequence gets its own (see nomic_cos_sin).
        per_sequence = bool(self.rotary_scaling_factor)
        lengths = [int(n) for n in mask.sum(dim=1)] if per_sequence else []
        tables = {n: self.nomic_cos_sin(n) for n in set(lengths)} if self.rotary_fraction > 0 and per_sequence else {}
        batch_table = self.nomic_cos_sin(L) if self.rotary_fraction > 0 and not per_sequence else None
        act = {"swiglu": torch.nn.functional.silu, "geglu": _gelu_erf}.get(self.activation_function, _gelu_erf)
        for i in range(self.layers):
            # NomicBertBlock (prenorm False): attn, norm1(attn + x), mlp, norm2(mlp + h).
            p = f"encoder.layers.{i}."
            qkv = self.nomic_linear(x, p + "attn.Wqkv", self.qkv_bias).view(B, L, 3, self.heads, self.head_dim)
            if tables:
                qkv = qkv.clone()
                for b, n in enumerate(lengths):  # NomicBertRotaryEmbedding.forward on q and k
                    cos, sin = tables[n]
                    for j in (0, 1):
                        qkv[b, :n, j] = self.nomic_apply_rotary(qkv[b, :n, j], cos, sin)
            elif batch_table is not None:
                cos, sin = batch_table
                q_rot = self.nomic_apply_rotary(qkv[:, :, 0], cos, sin)
                k_rot = self.nomic_apply_rotary(qkv[:, :, 1], cos, sin)
                qkv = torch.stack((q_rot, k_rot, qkv[:, :, 2]), dim=2)
            q, k, v = (qkv[:, :, j].permute(0, 2, 1, 3) for j in range(3))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + ext
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(B, L, self.hidden)
            h = self.layer_norm(self.nomic_linear(ctx, p + "attn.out_proj", self.qkv_bias) + x, p + "norm1")
            if self.moe_every > 0 and i % self.moe_every == 1:
                x = self.layer_norm(h + self.nomic_moe(h, p, mask), p + "norm2")
                continue
            if self.gated:  # NomciBertGatedMLP: fc11(x) * act(fc12(x))
                y = self.nomic_linear(h, p + "mlp.fc11", self.fc1_bias) * act(self.nomic_linear(h, p + "mlp.fc12", self.fc1_bias))
            else:  # NomicBertMLP
                y = _gelu_erf(self.nomic_linear(h, p + "mlp.fc1", self.fc1_bias))
            x = self.layer_norm(self.nomic_linear(y, p + "mlp.fc2", self.fc2_bias) + h, p + "norm2")
        return x

    def nomic_moe(self, h, p, mask):
        # NomicMoELayer (vLLM's bert_with_rope.py, contrastors' layers/moe.py MoEBlock): NomicRouter
        # — softmax of router.layer(x) in float32, topk, the kept probabilities as they are (no
        # renormalisation) — then NomicExperts: for each expert in order, its tokens through
        # act(x @ w1[e].T) @ w2[e] (w1 and w2 viewed [experts, n_inner, hidden]), times their
        # weights, index_add_ into zeros; plus experts.bias. act: the config's activation (gelu, exact).
        B, L, H = h.shape
        x = h.reshape(-1, H)
        E, k = self.num_experts, self.moe_top_k
        softmax_dtype = torch.float32 if self.dtype == torch.float32 else self.dtype
        scores = torch.nn.functional.linear(x, self.W(p + "mlp.router.layer.weight"))
        weights = scores.softmax(dim=-1, dtype=softmax_dtype)
        top_w, top_e = torch.topk(weights, k, dim=-1)
        if k < E:  # how close the kept and dropped experts' scores came, over the real tokens
            ranked = torch.sort(scores, dim=-1, descending=True).values
            real = mask.reshape(-1).bool()
            self.moe_margins.append(float((ranked[real, k - 1] - ranked[real, k]).min()))
        w1 = self.W(p + "mlp.experts.mlp.w1").view(E, -1, H)
        w2 = self.W(p + "mlp.experts.mlp.w2").view(E, -1, H)
        out = torch.zeros_like(x)
        for e in range(E):
            tok, slot = torch.where(top_e == e)
            if tok.numel() == 0:
                continue
            y = _gelu_erf(x[tok] @ w1[e].t()) @ w2[e]
            out.index_add_(0, tok, y * top_w[tok, slot, None].to(x.dtype))
        return (out + self.W(p + "mlp.experts.bias")).view(B, L, H)

    # -- GTE "NewModel" (Alibaba-NLP/new-impl modeling.py) --------------------------------------
    def gte_cos_sin(self, seqlen):
        # RotaryEmbedding (dim = head size, base = rope_theta), or NTKScalingRotaryEmbedding with
        # rope_scaling {"type": "ntk", "factor": f} (mixed_b None): its constructor rebuilds the
        # cache for max_position_embeddings * f, past max_position_embeddings, so the scaled
        # inv_freq applies at every length: base * f, then inv_freq / f ** (2 / dim).
        dim = self.head_dim
        base = self.rope_theta
        if self.rope_scaling is not None:
            factor = self.rope_scaling["factor"]
            base = base * factor
            inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
            inv_freq = inv_freq / factor ** (2 / dim)
        else:
            inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(seqlen, dtype=torch.float32)
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)

    def gte_forward(self, ids, type_ids, mask):
        # NewEmbeddings (padded path): word (+ token type when type_vocab_size > 0) (+ absolute
        # position), LayerNorm; rope cos/sin at position_ids = arange(seq_length).
        B, L = ids.shape
        x = self.W("embeddings.word_embeddings.weight")[ids]
        if self.type_vocab_size > 0:
            x = x + self.W("embeddings.token_type_embeddings.weight")[torch.zeros_like(ids)]
        if self.position_embedding_type == "absolute":
            x = x + self.W("embeddings.position_embeddings.weight")[torch.arange(L)].unsqueeze(0)
        x = self.layer_norm(x, "embeddings.LayerNorm")
        rope = None
        if self.position_embedding_type == "rope":
            cos, sin = self.gte_cos_sin(L)
            rope = cos[:, None, :], sin[:, None, :]  # [L, 1, head_dim]: broadcast over heads
        ext = (1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min

        def rotate_half(t):
            return torch.cat((-t[..., t.shape[-1] // 2:], t[..., : t.shape[-1] // 2]), dim=-1)

        for i in range(self.layers):
            # NewLayer: NewAttention (qkv_proj split, rope, scores / sqrt(d) + bias, softmax, o_proj),
            # attn_ln(residual + attn); NewGatedMLP (up_gate_proj -> [up | gate], act(gate) * up,
            # down_proj), mlp_ln(residual + mlp).
            p = f"encoder.layer.{i}."
            if self.pack_qkv:
                q, k, v = self.linear(x, p + "attention.qkv_proj").split(self.hidden, dim=-1)
            else:
                q, k, v = (self.linear(x, p + f"attention.{n}_proj") for n in "qkv")
            q, k, v = (t.view(B, L, self.heads, self.head_dim) for t in (q, k, v))
            if rope is not None:
                cos, sin = rope
                q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + ext
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(B, L, self.hidden)
            h = self.layer_norm(x + self.linear(ctx, p + "attention.o_proj"), p + "attn_ln")
            up, gate = torch.nn.functional.linear(h, self.W(p + "mlp.up_gate_proj.weight")).split(self.intermediate, dim=-1)
            x = self.layer_norm(h + self.linear(self.act(gate) * up, p + "mlp.down_proj"), p + "mlp_ln")
        return x

    # -- ModernBERT (HF modeling_modernbert.py) --------------------------------------------------
    def modernbert_norm(self, x, name):
        # nn.LayerNorm(hidden, eps=norm_eps, bias=norm_bias)
        bias = self.W(name + ".bias") if self.norm_bias else None
        return torch.nn.functional.layer_norm(x, (self.hidden,), self.W(name + ".weight"), bias, self.eps)

    def modernbert_linear(self, x, name, bias):
        return torch.nn.functional.linear(x, self.W(name + ".weight"), self.W(name + ".bias") if bias else None)

    def modernbert_forward(self, ids, mask):
        B, L = ids.shape
        # ModernBertEmbeddings: norm(tok_embeddings(input_ids)); position_ids = arange(seq_len).
        x = self.modernbert_norm(self.W("embeddings.tok_embeddings.weight")[ids], "embeddings.norm")
        # _update_attention_mask: _prepare_4d_attention_mask, then the window mask over |i - j|.
        global_mask = ((1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min).expand(B, 1, L, L)
        rows = torch.arange(L).unsqueeze(0)
        window = (torch.abs(rows - rows.T) <= self.local_attention // 2).unsqueeze(0).unsqueeze(0)
        sliding_mask = global_mask.masked_fill(~window, torch.finfo(self.dtype).min)  # upstream: logical_not()
        # ModernBertRotaryEmbedding.forward (compute_default_rope_parameters), per layer type.
        position_ids = torch.arange(L).unsqueeze(0)
        rotary = {}
        for layer_type, theta in self.rope_theta.items():
            inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
            freqs = (inv_freq[None, :, None].float().expand(1, -1, 1) @ position_ids[:, None, :].float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            rotary[layer_type] = emb.cos().to(self.dtype), emb.sin().to(self.dtype)

        def rotate_half(t):
            return torch.cat((-t[..., t.shape[-1] // 2:], t[..., : t.shape[-1] // 2]), dim=-1)

        for i in range(self.layers):
            # ModernBertEncoderLayer.forward
            p = f"layers.{i}."
            h = x if i == 0 else self.modernbert_norm(x, p + "attn_norm")  # layer 0: nn.Identity
            qkv = self.modernbert_linear(h, p + "attn.Wqkv", self.attention_bias).view(B, -1, 3, self.heads, self.head_dim)
            q, k, v = qkv.transpose(3, 1).unbind(dim=2)  # [B, heads, L, d]
            cos, sin = rotary[self.layer_types[i]]
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
            q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
            scores = torch.matmul(q, k.transpose(2, 3)) * self.head_dim ** -0.5
            local = i % self.global_every != 0  # ModernBertAttention: local_attention != (-1, -1)
            scores = scores + (sliding_mask if local else global_mask)
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            ctx = torch.matmul(probs, v).transpose(1, 2).contiguous().view(B, -1, self.hidden)
            x = x + self.modernbert_linear(ctx, p + "attn.Wo", self.attention_bias)
            inp, gate = self.modernbert_linear(self.modernbert_norm(x, p + "mlp_norm"), p + "mlp.Wi", self.mlp_bias).chunk(2, dim=-1)
            x = x + self.modernbert_linear(self.act(inp) * gate, p + "mlp.Wo", self.mlp_bias)
        return self.modernbert_norm(x, "final_norm")

    # -- Qwen3 (modeling_qwen3.py) --------------------------------------------------------
    def qwen3_rms(self, x, name):
        # Qwen3RMSNorm.forward (float32 arithmetic; float64 in the float64 reference)
        input_dtype = x.dtype
        h = x.to(torch.float32) if self.dtype == torch.float32 else x
        variance = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(variance + self.eps)
        return self.W(name + ".weight") * h.to(input_dtype)

    def qwen3_linear(self, x, name, bias):
        return torch.nn.functional.linear(x, self.W(name + ".weight"), self.W(name + ".bias") if bias else None)

    def qwen3_forward(self, ids, mask):
        B, L = ids.shape
        d = self.head_dim
        x = self.W("embed_tokens.weight")[ids]
        rms = self.qwen3_rms
        if self.family == "gemma":
            x = x * torch.tensor(self.hidden ** 0.5, dtype=x.dtype)
            rms = self.gemma3_rms
        # create_causal_mask, eager: additive, finfo.min where j > i or key j is padding (where key j
        # is padding only when the config says is_causal: false).
        allowed = mask[:, None, None, :].bool()
        if self.causal:
            allowed = torch.ones(L, L, dtype=torch.bool).tril()[None, None] & allowed
        if self.sliding_window is not None:
            allowed = allowed & (torch.arange(L)[None, :] > torch.arange(L)[:, None] - self.sliding_window)[None, None]
        add = torch.zeros(B, 1, L, L, dtype=self.dtype).masked_fill(~allowed, torch.finfo(self.dtype).min)
        # Qwen3RotaryEmbedding.forward with compute_default_rope_parameters (or a rope_scaling's).
        inv_freq = 1.0 / (self.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        scaling = self.rope_scaling or {}
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind == "linear":
            inv_freq = inv_freq / scaling["factor"]
        elif kind == "llama3":
            factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
            old = scaling["original_max_position_embeddings"]
            low_wavelen, high_wavelen = old / low, old / high
            wavelen = 2 * math.pi / inv_freq
            inv_llama = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
            smooth = (old / wavelen - low) / (high - low)
            smoothed = (1 - smooth) * inv_llama / factor + smooth * inv_llama
            medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
            inv_freq = torch.where(medium, smoothed, inv_llama)
        elif kind != "default":
            raise ValueError(f"rope_scaling {kind} is not part of this reference")
        position_ids = torch.arange(L).unsqueeze(0)
        freqs = (inv_freq[None, :, None].float().expand(1, -1, 1) @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(self.dtype).unsqueeze(1), emb.sin().to(self.dtype).unsqueeze(1)

        def rotate_half(t):
            return torch.cat((-t[..., t.shape[-1] // 2:], t[..., : t.shape[-1] // 2]), dim=-1)

        def repeat_kv(t, n_rep):
            b, kv, slen, hd = t.shape
            return t[:, :, None, :, :].expand(b, kv, n_rep, slen, hd).reshape(b, kv * n_rep, slen, hd)

        softmax_dtype = torch.float32 if self.dtype == torch.float32 else self.dtype
        for i in range(self.layers):
            p = f"layers.{i}."
            residual = x
            h = rms(x, p + "input_layernorm")
            q = self.qwen3_linear(h, p + "self_attn.q_proj", self.qkv_bias).view(B, L, -1, d)
            k = self.qwen3_linear(h, p + "self_attn.k_proj", self.qkv_bias).view(B, L, -1, d)
            if self.qk_norm:
                q, k = rms(q, p + "self_attn.q_norm"), rms(k, p + "self_attn.k_norm")
            q, k = q.transpose(1, 2), k.transpose(1, 2)
            v = self.qwen3_linear(h, p + "self_attn.v_proj", self.qkv_bias).view(B, L, -1, d).transpose(1, 2)
            q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
            k = repeat_kv(k, self.heads // self.kv_heads)
            v = repeat_kv(v, self.heads // self.kv_heads)
            scores = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + add
            probs = torch.softmax(scores, dim=-1, dtype=softmax_dtype).to(q.dtype)
            ctx = torch.matmul(probs, v).transpose(1, 2).contiguous().reshape(B, L, -1)
            x = residual + self.qwen3_linear(ctx, p + "self_attn.o_proj", self.o_bias)
            residual = x
            h = rms(x, p + "post_attention_layernorm")
            mlp = (self.act(self.qwen3_linear(h, p + "mlp.gate_proj", self.mlp_bias)) *
                   self.qwen3_linear(h, p + "mlp.up_proj", self.mlp_bias))
            x = residual + self.qwen3_linear(mlp, p + "mlp.down_proj", self.mlp_bias)
        return rms(x, "norm")

    # -- Gemma3 (modeling_gemma3.py) ------------------------------------------------------
    def gemma3_rms(self, x, name):
        # Gemma3RMSNorm.forward (float32 arithmetic; float64 in the float64 reference)
        h = x.to(torch.float32) if self.dtype == torch.float32 else x
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        w = self.W(name + ".weight")
        h = h * (1.0 + (w.to(torch.float32) if self.dtype == torch.float32 else w))
        return h.type_as(x)

    def gemma3_forward(self, ids, mask):
        B, L = ids.shape
        d = self.head_dim
        # Gemma3TextScaledWordEmbedding: the scale a float32 tensor cast to the weights' dtype.
        x = self.W("embed_tokens.weight")[ids] * torch.tensor(self.hidden ** 0.5).to(self.dtype)
        i = torch.arange(L)[:, None]
        j = torch.arange(L)[None, :]
        keys = mask[:, None, None, :].bool()
        masks = {}
        for kind in set(self.layer_types):
            if self.causal:
                allowed = j <= i
                if kind == "sliding_attention" and self.sliding_window is not None:
                    allowed = allowed & (j > i - self.sliding_window)
            elif kind == "sliding_attention" and self.sliding_window is not None:
                allowed = (i - j).abs() < self.sliding_window
            else:
                allowed = torch.ones(L, L, dtype=torch.bool)
            allowed = allowed[None, None] & keys
            masks[kind] = torch.zeros(B, 1, L, L, dtype=self.dtype).masked_fill(~allowed, torch.finfo(self.dtype).min)
        position_ids = torch.arange(L).unsqueeze(0)
        rope = {}
        for kind in set(self.layer_types):
            inv_freq = 1.0 / (self.rope_theta[kind] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
            freqs = (inv_freq[None, :, None].float() @ position_ids[:, None, :].float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            rope[kind] = (emb.cos().to(self.dtype).unsqueeze(1), emb.sin().to(self.dtype).unsqueeze(1))

        def rotate_half(t):
            return torch.cat((-t[..., t.shape[-1] // 2:], t[..., : t.shape[-1] // 2]), dim=-1)

        def repeat_kv(t, n_rep):
            b, kv, slen, hd = t.shape
            return t[:, :, None, :, :].expand(b, kv, n_rep, slen, hd).reshape(b, kv * n_rep, slen, hd)

        def proj(t, name):
            return torch.nn.functional.linear(t, self.W(name + ".weight"),
                                              self.W(name + ".bias") if self.attention_bias else None)

        softmax_dtype = torch.float32 if self.dtype == torch.float32 else self.dtype
        for n in range(self.layers):
            p = f"layers.{n}."
            kind = self.layer_types[n]
            cos, sin = rope[kind]
            residual = x
            h = self.gemma3_rms(x, p + "input_layernorm")
            q = self.gemma3_rms(proj(h, p + "self_attn.q_proj").view(B, L, -1, d).transpose(1, 2),
                                p + "self_attn.q_norm")
            k = self.gemma3_rms(proj(h, p + "self_attn.k_proj").view(B, L, -1, d).transpose(1, 2),
                                p + "self_attn.k_norm")
            v = proj(h, p + "self_attn.v_proj").view(B, L, -1, d).transpose(1, 2)
            q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
            k = repeat_kv(k, self.heads // self.kv_heads)
            v = repeat_kv(v, self.heads // self.kv_heads)
            scores = torch.matmul(q, k.transpose(2, 3)) * self.scaling + masks[kind]
            probs = torch.softmax(scores, dim=-1, dtype=softmax_dtype).to(q.dtype)
            ctx = torch.matmul(probs, v).transpose(1, 2).contiguous().reshape(B, L, -1)
            h = self.gemma3_rms(proj(ctx, p + "self_attn.o_proj"), p + "post_attention_layernorm")
            x = residual + h
            residual = x
            h = self.gemma3_rms(x, p + "pre_feedforward_layernorm")
            mlp = self.act(torch.nn.functional.linear(h, self.W(p + "mlp.gate_proj.weight"))) * \
                torch.nn.functional.linear(h, self.W(p + "mlp.up_proj.weight"))
            h = torch.nn.functional.linear(mlp, self.W(p + "mlp.down_proj.weight"))
            x = residual + self.gemma3_rms(h, p + "post_feedforward_layernorm")
        return self.gemma3_rms(x, "norm")

    # -- forward --------------------------------------------------------------------------
    def embeddings(self, ids, type_ids, mask):
        B, L = ids.shape
        vocab = self.W("embeddings.word_embeddings.weight")
        if int(ids.max()) >= vocab.shape[0] or int(ids.min()) < 0:
            raise ValueError(f"token id {int(ids.max())} outside the vocabulary of {vocab.shape[0]}")
        x = vocab[ids]
        if self.family == "distilbert":
            pos = torch.arange(L).unsqueeze(0).expand(B, L)
        elif self.family == "roberta":
            nonpad = (ids != self.pad_id).long()
            pos = torch.cumsum(nonpad, dim=1) * nonpad + self.pad_id
        else:
            pos = torch.arange(L).unsqueeze(0).expand(B, L)
        table = self.W("embeddings.position_embeddings.weight")
        if int(pos.max()) >= table.shape[0]:
            raise ValueError(f"position id {int(pos.max())} past max_position_embeddings {table.shape[0]}")
        x = x + table[pos]
        if self.family != "distilbert":
            tt = type_ids if self.family == "bert" else torch.zeros_like(ids)
            types = self.W("embeddings.token_type_embeddings.weight")
            if int(tt.max()) >= types.shape[0]:
                raise ValueError(f"token type id {int(tt.max())} past type_vocab_size {types.shape[0]}")
            x = x + types[tt]
        return self.layer_norm(x, "embeddings.LayerNorm")

    def split_heads(self, x):
        B, L, _ = x.shape
        return x.view(B, L, self.heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, x):
        B, _, L, _ = x.shape
        return x.transpose(1, 2).contiguous().view(B, L, self.hidden)

    def bert_layer(self, x, i, ext_mask):
        p = f"encoder.layer.{i}."
        q = self.split_heads(self.linear(x, p + "attention.self.query"))
        k = self.split_heads(self.linear(x, p + "attention.self.key"))
        v = self.split_heads(self.linear(x, p + "attention.self.value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + ext_mask
        probs = torch.softmax(scores, dim=-1)
        ctx = self.merge_heads(torch.matmul(probs, v))
        a = self.layer_norm(self.linear(ctx, p + "attention.output.dense") + x,
                            p + "attention.output.LayerNorm")
        h = self.act(self.linear(a, p + "intermediate.dense"))
        return self.layer_norm(self.linear(h, p + "output.dense") + a, p + "output.LayerNorm")

    def distil_layer(self, x, i, mask):
        p = f"transformer.layer.{i}."
        q = self.split_heads(self.linear(x, p + "attention.q_lin"))
        k = self.split_heads(self.linear(x, p + "attention.k_lin"))
        v = self.split_heads(self.linear(x, p + "attention.v_lin"))
        q = q / math.sqrt(self.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3))
        masked = (mask == 0).view(mask.shape[0], 1, 1, mask.shape[1]).expand_as(scores)
        scores = scores.masked_fill(masked, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores, dim=-1)
        ctx = self.merge_heads(torch.matmul(probs, v))
        sa = self.layer_norm(self.linear(ctx, p + "attention.out_lin") + x, p + "sa_layer_norm")
        h = self.linear(self.act(self.linear(sa, p + "ffn.lin1")), p + "ffn.lin2")
        return self.layer_norm(h + sa, p + "output_layer_norm")

    @torch.no_grad()
    def forward(self, ids, type_ids, mask):
        """ids, type_ids, mask: int64 [B, L]. Returns a dict of tensors."""
        if self.family == "deberta":
            x = self.deberta_forward(ids, type_ids, mask)
        elif self.family == "jina":
            x = self.jina_forward(ids, type_ids, mask)
        elif self.family == "mpnet":
            x = self.mpnet_forward(ids, mask)
        elif self.family == "nomic":
            x = self.nomic_forward(ids, type_ids, mask)
        elif self.family == "gte":
            x = self.gte_forward(ids, type_ids, mask)
        elif self.family == "modernbert":
            x = self.modernbert_forward(ids, mask)
        elif self.family in DECODERS:
            x = self.qwen3_forward(ids, mask)
        elif self.family == "gemma3":
            x = self.gemma3_forward(ids, mask)
        else:
            x = self.embeddings(ids, type_ids, mask)
        if self.family in ("deberta", "jina", "mpnet", "nomic", "gte", "modernbert", "gemma3") + DECODERS:
            pass
        elif self.family == "distilbert":
            for i in range(self.layers):
                x = self.distil_layer(x, i, mask)
        else:
            ext = (1.0 - mask[:, None, None, :].to(self.dtype)) * torch.finfo(self.dtype).min
            for i in range(self.layers):
                x = self.bert_layer(x, i, ext)
        out = {"last_hidden_state": x}
        first = x[:, 0]
        if self.family != "distilbert" and (self.prefix + "pooler.dense.weight") in self.w:
            out["pooler_output"] = torch.tanh(self.linear(first, "pooler.dense"))
        if self.has_head:
            if self.family in ("bert", "jina", "gte"):
                # JinaBertForSequenceClassification: outputs[1] (JinaBertPooler: tanh(dense(CLS)));
                # NewForSequenceClassification: outputs[1] (NewPooler, the same)
                pooled = torch.tanh(self.linear(first, "pooler.dense"))
                logits = self.linear(pooled, "classifier", base=False)
            elif self.family == "deberta":
                # ContextPooler (token 0, dense, pooler_hidden_act), then the classifier
                h = self.pooler_act(self.linear(first, "pooler.dense", base=False))
                logits = self.linear(h, "classifier", base=False)
            elif self.family == "modernbert":
                # ModernBertForSequenceClassification: classifier_pooling, ModernBertPredictionHead,
                # classifier.
                if self.classifier_pooling == "mean":
                    m = mask.unsqueeze(-1).to(x.dtype)
                    pooled = (x * m).sum(dim=1) / mask.sum(dim=1, keepdim=True).to(x.dtype)
                else:
                    pooled = first
                h = self.classifier_act(torch.nn.functional.linear(
                    pooled, self.W("head.dense.weight", False),
                    self.W("head.dense.bias", False) if self.classifier_bias else None))
                h = torch.nn.functional.layer_norm(h, (self.hidden,), self.W("head.norm.weight", False),
                                                   self.W("head.norm.bias", False) if self.norm_bias else None, self.eps)
                logits = self.linear(h, "classifier", base=False)
            elif self.family in ("roberta", "mpnet"):
                # MPNetClassificationHead is RobertaClassificationHead's dense-tanh-out_proj on <s>.
                h = torch.tanh(self.linear(first, "classifier.dense", base=False))
                logits = self.linear(h, "classifier.out_proj", base=False)
            else:
                h = torch.relu(self.linear(first, "pre_classifier", base=False))
                logits = self.linear(h, "classifier", base=False)
            out["logits"] = logits
            out["scores"] = torch.sigmoid(logits) if logits.shape[-1] == 1 else torch.softmax(logits, dim=-1)
        out.update(pool_all(x, mask))
        return out

    def unused_tensors(self) -> list[str]:
        return sorted(set(self.w) - self.used)


def pool_all(h, mask):
    """sentence-transformers models.Pooling modes, plus models.Normalize of each."""
    m = mask.unsqueeze(-1).to(h.dtype)
    cls = h[:, 0]
    mean = (h * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
    mx = h.masked_fill(m == 0, -1e9).max(dim=1).values
    last_idx = (mask.sum(1) - 1).clamp(min=0)
    last = h[torch.arange(h.shape[0]), last_idx]
    out = {"cls": cls, "mean": mean, "max": mx, "last": last}
    for k in list(out):
        out[k + "_normalized"] = torch.nn.functional.normalize(out[k], p=2, dim=-1, eps=1e-12)
    return out


def st_dense_chain(model_dir: str, dtype: torch.dtype):
    """The Dense modules after the Pooling in modules.json (sentence-transformers models/Dense.py),
    as one function of the pooled vectors; None when the folder has none."""
    path = os.path.join(model_dir, "modules.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        modules = json.load(f)
    acts = {"torch.nn.modules.linear.Identity": lambda t: t, "torch.nn.modules.activation.Tanh": torch.tanh,
            "torch.nn.modules.activation.ReLU": torch.relu, "torch.nn.modules.activation.GELU": _gelu_erf,
            "torch.nn.modules.activation.SiLU": torch.nn.functional.silu}
    layers = []
    pooled = False
    for m in modules:
        kind = m["type"].rsplit(".", 1)[-1]
        pooled = pooled or kind == "Pooling"
        if kind != "Dense" or not pooled:
            continue
        with open(os.path.join(model_dir, m["path"], "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        w = load_safetensors(os.path.join(model_dir, m["path"], "model.safetensors"))
        weight = torch.from_numpy(w["linear.weight"]).to(dtype)
        bias = torch.from_numpy(w["linear.bias"]).to(dtype) if cfg.get("bias", True) else None
        layers.append((weight, bias, acts[cfg["activation_function"]]))
    if not layers:
        return None

    def apply(x):
        for weight, bias, act in layers:
            x = act(torch.nn.functional.linear(x, weight, bias))
        return x

    return apply


# ---------------------------------------------------------------------------------------------
# batching


def make_batch(encodings, pad_id):
    """Right-pads the tokenizer's encodings into int64 [B, L] tensors (pad id, type 0, mask 0)."""
    L = max(len(e["ids"]) for e in encodings)
    B = len(encodings)
    ids = torch.full((B, L), pad_id, dtype=torch.long)
    tt = torch.zeros((B, L), dtype=torch.long)
    mask = torch.zeros((B, L), dtype=torch.long)
    for b, e in enumerate(encodings):
        n = len(e["ids"])
        ids[b, :n] = torch.tensor(e["ids"], dtype=torch.long)
        tt[b, :n] = torch.tensor(e["type_ids"], dtype=torch.long)
        mask[b, :n] = torch.tensor(e["attention_mask"], dtype=torch.long)
    return ids, tt, mask


def run(model: Reference, encodings, **forward_args):
    """Runs the encodings as one padded batch; returns per-input outputs (real tokens only).
    `forward_args` go to the model's forward (jina_v3_reference's adapter_mask)."""
    ids, tt, mask = make_batch(encodings, model.pad_id)
    out = model.forward(ids, tt, mask, **forward_args)
    per_input = []
    for b, e in enumerate(encodings):
        n = len(e["ids"])
        r = {"last_hidden_state": out["last_hidden_state"][b, :n]}
        for k, v in out.items():
            if k != "last_hidden_state":
                r[k] = v[b]
        per_input.append(r)
    return per_input


def max_abs_diff(a_list, b_list):
    """Largest |a - b| per output name over every input, computed in float64."""
    res = {}
    for a, b in zip(a_list, b_list):
        for k in a:
            d = float((a[k].double() - b[k].double()).abs().max())
            res[k] = max(res.get(k, 0.0), d)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("tokens_json", help="output of tools/golden/tokenize.mjs")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--check-batch", action="store_true",
                    help="also run each input alone and report the largest batched-vs-alone difference")
    args = ap.parse_args(argv)
    with open(args.tokens_json, encoding="utf-8") as f:
        encodings = json.load(f)["encodings"]
    torch.set_num_threads(1)
    model = Reference(args.model_dir, getattr(torch, args.dtype))
    outs = run(model, encodings)
    result = {
        "architecture": model.architecture,
        "outputs": [{k: v.tolist() for k, v in o.items()} for o in outs],
    }
    if args.check_batch:
        alone = [run(model, [e])[0] for e in encodings]
        result["batched_vs_alone_max_abs_diff"] = max_abs_diff(outs, alone)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
