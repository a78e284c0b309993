#!/usr/bin/python3
"""Writes the golden outputs tests/data/goldens/<name>.json for the tiny model fixtures.

For each fixture below it (1) writes the model directory with the project's fixture tool
(`warden-fixture ... --preset tiny --seed 1 --out DIR`) into a scratch directory, (2) gets the
token ids from HuggingFace `tokenizers` (node tools/golden/tokenize.mjs), and (3) runs the
independent PyTorch reference (tools/golden/reference.py) in float32 -- the stored numbers --
and in float64, recording the largest float32-vs-float64 difference of every output. It also
runs every input alone and records the largest batched-vs-alone difference.

    /usr/bin/python3 tools/golden/make_goldens.py \
        [--fixture-bin build/release/bin/warden-fixture] [--out tests/data/goldens] [--only NAME...]

`--python-fixture` uses tools/golden/pyfixture.py instead of warden-fixture (to exercise this
script without the C++ tool); it needs an explicit --out, so that its files, whose weights are
not warden-fixture's, never land in tests/data/goldens by accident.

Needs /usr/bin/python3 with python3-torch and python3-numpy, node, and the tokenizers binding
(scripts/setup-reference installs all three). Floats are written as the shortest decimal that
reads back to the same float32 (numpy's `str(np.float32(x))`), i.e. full float32 precision.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import colbert_reference  # noqa: E402
import jina_v3_reference  # noqa: E402
import llm_rerank_reference  # noqa: E402
import m3_reference  # noqa: E402
import reference  # noqa: E402
import splade_reference  # noqa: E402

SINGLES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    # accents and CJK
    "Crème brûlée à Zürich, naïve café — 東京は今日晴れです。",
    # close to 32 tokens with the BERT uncased vocabulary (32 with [CLS] and [SEP])
    "Warden runs small encoder models on the CPU, so the large language model that owns the GPU "
    "is never knocked over by its helpers.",
    "a",
    "",
]
# Long inputs (some fixtures): a paragraph repeated to ~130 and to ~480 tokens.
_PARAGRAPH = ("The committee reviewed the quarterly figures, discussed the budget for the coming year and "
              "agreed to publish the minutes after the next meeting. ")
LONG = [_PARAGRAPH * 5, _PARAGRAPH * 16]
# About 4,130 tokens (the JinaBERT fixtures: ALiBi over long distances). The reference runs it
# alone (a padded batch of it would need a [cases, heads, L, L] score tensor), and its golden
# keeps every HIDDEN_ROW_STRIDE-th hidden row and the last one ("hidden_rows").
XLONG = [_PARAGRAPH * 165]
# The same at ~4,100 tokens for the ModernBERT fixtures, whose small byte-level BPE vocabulary
# splits this English into ~2.4 times as many tokens (165 paragraphs would pass 8,192).
XLONG_BPE = [_PARAGRAPH * 68]
XLONG_TOKENS = 1024  # cases longer than this store sampled hidden rows
HIDDEN_ROW_STRIDE = 64
PAIRS = [
    ["what is the capital of France?", "Paris is the capital and largest city of France."],
    ["what is the capital of France?", "The quick brown fox jumps over the lazy dog."],
    ["¿Dónde está la biblioteca?", "图书馆在哪里？ The library is next to the station."],
]

# name, arch, head, extra fixture arguments, pooling the fixture is meant to declare
FIXTURES = [
    ("bert-none", "bert", "none", ["--pooling", "cls"], "cls"),
    ("xlm-roberta-none", "xlm-roberta", "none", ["--pooling", "mean"], "mean", "tiny", "pad"),
    ("distilbert-none", "distilbert", "none", ["--pooling", "mean"], "mean"),
    ("bert-reranker", "bert", "reranker", [], None),
    ("xlm-roberta-reranker", "xlm-roberta", "reranker", [], None),
    ("distilbert-classifier", "distilbert", "classifier", [], None),  # 3 labels
    # DeBERTa-v3's shape (no absolute positions or token types, disentangled attention over
    # 32 log buckets, shared attention keys, LayerNormed relative table, ContextPooler head).
    # Their inputs add a ~130- and a ~480-token text: relative attention over long distances.
    ("deberta-v2-none", "deberta-v2", "none", ["--pooling", "mean"], "mean", "tiny", "long"),
    ("deberta-v2-classifier", "deberta-v2", "classifier", [], None, "tiny", "long"),  # 3 labels
    # A real model's shape (all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads of 32, FFN 1536):
    # the tiny fixtures never reach a second GEMM k-block (k > 256) nor a 32-wide head,
    # and a bug that only showed there went unnoticed until this fixture existed.
    ("bert-minilm-l6", "bert", "none", ["--pooling", "mean"], "mean", "minilm-l6"),
    # JinaBERT (jina-embeddings-v2 / jina-reranker-v1): ALiBi with 12 heads (slopes for a head
    # count that is not a power of two), the GEGLU feed-forward with a width that is not a
    # whole number of GEMM panels, token types; the embedder also a ~4,100-token input.
    ("jina-bert-none", "jina-bert", "none", ["--pooling", "mean"], "mean", "tiny", "xlong"),
    ("jina-bert-reranker", "jina-bert", "reranker", [], None),
    # MPNet (all-mpnet-base-v2): bucketed relative position bias, positions over the non-padding
    # tokens (a literal <pad> in the text), ~130- and ~480-token inputs past max_distance 128.
    ("mpnet-none", "mpnet", "none", ["--pooling", "mean"], "mean", "tiny", "long+pad"),
    ("mpnet-reranker", "mpnet", "reranker", [], None, "tiny", "pad"),
    # NomicBERT (nomic-embed-text-v1.5's config keys): rotary positions (base 1000), SwiGLU without
    # biases, an n_inner rounded up to 256 and a padded vocabulary; the tiny preset trains to 128
    # positions with rotary_scaling_factor 2, so the ~130-, ~480- and ~4,100-token inputs take the
    # dynamic NTK path and the short ones the plain one.
    ("nomic-bert-none", "nomic-bert", "none", ["--pooling", "mean"], "mean", "tiny", "xlong"),
    # nomic-embed-text-v2-moe (its config keys at a tiny shape: 4 layers, layers 1 and 3 mixtures
    # of 4 experts with 2 per token, GELU MLPs with biases elsewhere, rotary over whole heads, XLM-R's
    # SentencePiece vocabulary): inputs of exactly 1, 7, 128 and 2048 tokens besides the usual ones.
    # The reference records how close a kept and a dropped expert's router scores came
    # (moe_min_router_margin): a near tie would make the routing, and so the golden, fragile.
    ("nomic-bert-moe-none", "nomic-bert-moe", "none", ["--pooling", "mean"], "mean", "tiny", "lengths+long"),
    # GTE (gte-base-en-v1.5's config keys): rotary positions (rope_theta 500000) with fixed NTK
    # scaling at every length, the [up | gate] GELU MLP, no token types; and its reranker class.
    ("gte-none", "gte", "none", ["--pooling", "cls"], "cls", "tiny", "xlong"),
    ("gte-reranker", "gte", "reranker", [], None),
    # ModernBERT (ModernBERT-base's config keys, a 16-token window in the tiny preset): pre-LN
    # layers, a global layer 0 (rotary theta 160000, no attn_norm) and two local ones (theta
    # 10000, sliding windows), GeGLU, no biases, the byte-level BPE tokenizer; the ~130-, ~480-
    # and ~4,100-word inputs run far past the window. The reranker mean-pools before its head
    # (classifier_pooling "mean"), the classifier takes the first token.
    ("modernbert-none", "modernbert", "none", ["--pooling", "mean"], "mean", "tiny", "xlong-bpe"),
    ("modernbert-reranker", "modernbert", "reranker", [], None, "tiny", "long"),
    ("modernbert-classifier", "modernbert", "classifier", [], None),
    # Qwen3-Embedding (Qwen/Qwen3-Embedding-0.6B's config keys and files at a tiny shape: 4 query
    # heads of 32 over 2 key/value heads, q/k RMSNorms, causal attention, rotary theta 1e6, SwiGLU,
    # the byte-level BPE tokenizer appending <|endoftext|>, last-token pooling): inputs of exactly
    # 1, 7, 128 and 2048 tokens besides the usual ones.
    ("qwen3-none", "qwen3", "none", [], "last", "tiny", "lengths+long"),
    # Qwen3-Reranker (the causal LM whole, tied LM head, no sentence-transformers files, the
    # tokenizer without the <|endoftext|> template): the pairs in the model card's prompt, scored
    # by softmax over the "yes" and "no" logits at the last position (lm_score in each case;
    # tools/golden/llm_rerank_reference.py builds every LLM reranker's prompt from its own code).
    ("qwen3-reranker", "qwen3", "reranker", [], None, "tiny", "rerank=qwen3-reranker"),
    # mxbai-rerank-base-v2 (Qwen2ForCausalLM whole, causal, tied LM head): MxbaiRerankV2's pieces,
    # "1" against "0"; one case with an instruction.
    ("qwen2-mxbai-reranker", "qwen2", "reranker", [], None, "tiny", "rerank=mxbai-rerank-v2"),
    # bge-reranker-v2-gemma (GemmaForCausalLM whole: (1 + w) RMSNorms, embeddings scaled by
    # sqrt(hidden), hidden_act "gelu" in config.json but gelu-tanh run, 4 query heads of 32 over
    # one key/value head): FlagEmbedding's <bos> A: ... \n B: ... \n prompt, the raw "Yes" logit; a
    # ~600-token query and passage cut to its 384 / 512 budgets.
    ("gemma-reranker", "gemma", "reranker", [], None, "tiny", "rerank=bge-reranker-v2-gemma"),
    ("gemma-none", "gemma", "none", [], "mean", "tiny", "lengths+long"),
    # gte-Qwen2 (Alibaba-NLP/gte-Qwen2-1.5B-instruct's config keys at a tiny shape: 4 query heads
    # of 16 over 2 key/value heads, biases on q/k/v but not on o_proj, no q/k norms, is_causal
    # false: bidirectional attention), the same tokenizer and lengths as Qwen3-Embedding.
    ("qwen2-none", "qwen2", "none", [], "last", "tiny", "lengths+long"),
    # EmbeddingGemma (google/embeddinggemma-300m's config keys and folder at a tiny shape: 6 layers,
    # five sliding-window ones (sliding_window 16: |i - j| < 9 once bidirectional) and one full,
    # two rotary bases, 3 query heads of 32 over one key/value head, query_pre_attn_scalar 24, four
    # (1 + w) RMSNorms per layer, embeddings scaled by sqrt(hidden), gelu-tanh MLP; mean pooling
    # then the 2_Dense / 3_Dense projections): inputs of exactly 2 (<bos> <eos>), 7, 128 and 2048
    # tokens besides the usual ones.
    ("gemma3-none", "gemma3", "none", [], "mean", "tiny", "lengths+long"),
    # An LLM2Vec-style Llama embedder (Llama-3.2-1B's config keys at a tiny shape: 4 query heads of
    # 16 over 2 key/value heads, causal, rope_theta 5e5 with the llama3 rope_scaling, mean pooling)
    # and e5-mistral-7b-instruct (MistralModel: sliding_window 16 here, so the long inputs run past
    # it; last-token pooling of the </s> its tokenizer appends), on Llama 2's tokenizer layout.
    ("llama-none", "llama", "none", [], "mean", "tiny", "lengths+long"),
    ("mistral-none", "mistral", "none", [], "last", "tiny", "lengths+long"),
    # bge-m3 (XLM-R with FlagEmbedding's sparse_linear.pt and colbert_linear.pt, float16 heads in
    # torch.save's format): the dense, sparse and ColBERT outputs of tools/golden/m3_reference.py.
    ("xlm-roberta-m3", "xlm-roberta", "none", ["--m3-heads"], "cls", "tiny", "m3+long"),
    # SPLADE (naver/splade-v3's layout: BertForMaskedLM with its MLM head, a SparseEncoder's
    # MLMTransformer + SpladePooling modules): tools/golden/splade_reference.py's sparse vectors.
    ("bert-splade", "bert", "none", ["--splade"], None, "tiny", "splade+long"),
    # The same on XLMRobertaForMaskedLM (RobertaLMHead: the erf gelu whatever hidden_act says) and
    # DistilBertForMaskedLM (vocab_transform, vocab_layer_norm, vocab_projector: opensearch's
    # neural-sparse doc-v2/v3-distill models).
    ("xlm-roberta-splade", "xlm-roberta", "none", ["--splade"], None, "tiny", "splade"),
    ("distilbert-splade", "distilbert", "none", ["--splade"], None, "tiny", "splade"),
    # A PyLate ColBERT (answerai-colbert-small-v1's layout: BertModel, a bias-free Dense
    # projection, [unused0]/[unused1] markers, 32-token queries expanded with unattended [MASK]s,
    # punctuation left out of documents): tools/golden/colbert_reference.py's token vectors.
    ("bert-colbert", "bert", "none", ["--colbert"], None, "tiny", "colbert+long"),
    # jina-embeddings-v3 (XLMRobertaLoRA's checkpoint and config keys at a tiny shape: rotary
    # positions with base 20000 over whole heads, no position table, LoRA adapters of rank 4 for its
    # five tasks on every Linear and Embedding; tools/golden/jina_v3_reference.py): the base weights
    # on inputs of exactly 1, 7, 128 and 2048 tokens besides the usual ones; and every input with a
    # task (the i-th input the (i mod 5)-th, its instruction prepended as encode(task=) does), all
    # in one batch as adapter_mask runs them.
    ("jina-v3-none", "jina-v3", "none", ["--pooling", "mean"], "mean", "tiny", "lengths+long"),
    ("jina-v3-tasks", "jina-v3", "none", ["--pooling", "mean"], "mean", "tiny", "tasks+long"),
    # jina-reranker-v2-base-multilingual (the same remote code's XLMRobertaForSequenceClassification:
    # absolute positions after padding_idx, no adapters, RoBERTa's head) and a literal <pad>.
    ("jina-v3-reranker", "jina-v3", "reranker", [], None, "tiny", "pad+long"),
]
# A pad token inside the text (RoBERTa/XLM-R/MPNet number positions over the other tokens).
PAD_LITERAL = ["a literal <pad> inside the text <pad> takes no position"]
PRESET = "tiny"  # unless the fixture names another
SEED = 1
TOKEN_TYPES = {
    "bert": "the tokenizer's type_ids (token_type_embeddings)",
    "roberta": "all zeros: XLM-R/RoBERTa tokenizers feed no token_type_ids (type_vocab_size 1)",
    "distilbert": "none: DistilBERT has no token type embeddings",
    "deberta": "none: DeBERTa-v3 has type_vocab_size 0, so DebertaV2Embeddings adds no token type",
    "jina": "the tokenizer's type_ids (JinaBertEmbeddings' token_type_embeddings)",
    "mpnet": "none: MPNet has no token type embeddings",
    "nomic": "the tokenizer's type_ids (NomicBertEmbeddings' token_type_embeddings)",
    "gte": "none: type_vocab_size 0, so NewEmbeddings has no token-type table",
    "modernbert": "none: ModernBertEmbeddings has no token-type table",
    "qwen3": "none: Qwen3Model has no token types",
    "qwen2": "none: Qwen2Model has no token types",
    "gemma3": "none: Gemma3TextModel has no token types",
    "llama": "none: LlamaModel has no token types",
    "mistral": "none: MistralModel has no token types",
    "gemma": "none: GemmaModel has no token types",
}


class F32:
    """A float32 value serialised as the shortest decimal that round-trips."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = np.float32(v)

    def __str__(self):
        if not np.isfinite(self.v):
            raise ValueError(f"non-finite value {self.v}")
        return str(self.v)


def f32(t: torch.Tensor):
    a = t.detach().to(torch.float32).numpy()
    if a.ndim == 0:
        return F32(a)
    return [f32(torch.from_numpy(np.ascontiguousarray(x))) if a.ndim > 1 else F32(x) for x in a]


def emit(obj, indent=0) -> str:
    """JSON with float32 arrays on one line and a matrix one row per line."""
    pad = "  " * indent
    if isinstance(obj, F32):
        return str(obj)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f'{pad}  {json.dumps(k, ensure_ascii=False)}: {emit(v, indent + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if obj and isinstance(obj[0], list) and obj[0] and isinstance(obj[0][0], F32):
            rows = [f"{pad}  [" + ",".join(str(x) for x in r) + "]" for r in obj]
            return "[\n" + ",\n".join(rows) + "\n" + pad + "]"
        if all(not isinstance(x, (dict, list)) for x in obj):
            return "[" + ",".join(emit(x) for x in obj) + "]"
        return "[\n" + ",\n".join(pad + "  " + emit(x, indent + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def sha256_tree(d: str) -> dict[str, str]:
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d).replace(os.sep, "/")] = hashlib.sha256(fh.read()).hexdigest()
    return dict(sorted(out.items()))


def tokenize(tokenizer_json: str, inputs, special_tokens=True) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(inputs, f, ensure_ascii=False)
        path = f.name
    try:
        res = subprocess.run(["node", os.path.join(HERE, "tokenize.mjs"), tokenizer_json, path] +
                             ([] if special_tokens else ["--no-special-tokens"]),
                             check=True, capture_output=True, text=True)
    finally:
        os.unlink(path)
    return json.loads(res.stdout)


# The LLM rerankers' pairs: (query, document, instruction or None).
LLM_RERANK_PAIRS = [(q, d, None) for q, d in PAIRS] + [
    ("what is the capital of France?", _PARAGRAPH * 5, None),
    ("Explain gravity", "Gravity is a force by which a planet draws objects toward its center.", None),
    ("¿Dónde está la biblioteca?", "", None)]
# Templates with budgets of their own: a query and a passage longer than FlagEmbedding's 384 / 512.
LLM_RERANK_LONG = [(_PARAGRAPH * 20, _PARAGRAPH * 20, None)]
# Templates with an instruction slot of their own in the pair (mxbai's "instruction: ...").
LLM_RERANK_INSTRUCTED = [("what is the capital of France?", "Paris is the capital and largest city of France.",
                          "Find the sentence that answers the question")]


# Token counts the "lengths" inputs hit exactly (special tokens included).
EXACT_LENGTHS = [1, 7, 128, 2048]


def exact_length_texts(tokenizer_json: str, lengths) -> list:
    """For each n, a text the fixture's tokenizer makes exactly n tokens of: the longest prefix of
    the paragraph's words that stays within n, then " a" appended until the count is n."""
    words = (_PARAGRAPH * 80).split()

    def count(text):
        return len(tokenize(tokenizer_json, [text])["encodings"][0]["ids"])

    out = []
    # A template's own tokens (Gemma's <bos> <eos>) are the fewest a text can have.
    fewest = count("")
    for n in lengths:
        n = max(n, fewest)
        lo, hi = 0, len(words)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(" ".join(words[:mid])) <= n:
                lo = mid
            else:
                hi = mid - 1
        text = " ".join(words[:lo])
        got = count(text)
        while got < n:
            text += " a"
            got = count(text)
        if got != n:
            raise SystemExit(f"{tokenizer_json}: no text of exactly {n} tokens found (got {got})")
        out.append(text)
    return out


def declared_pooling(model_dir: str):
    p = os.path.join(model_dir, "1_Pooling", "config.json")
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        cfg = json.load(f)
    modes = [m for m, k in (("cls", "pooling_mode_cls_token"), ("mean", "pooling_mode_mean_tokens"),
                            ("max", "pooling_mode_max_tokens"), ("last", "pooling_mode_lasttoken"))
             if cfg.get(k)]
    return modes[0] if len(modes) == 1 else modes


def declared_normalize(model_dir: str):
    p = os.path.join(model_dir, "modules.json")
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        mods = json.load(f)
    return any(m.get("type", "").endswith("Normalize") for m in mods)


def fixture_command(spec, args, model_dir):
    """The command that writes the fixture, and how it is shown in the golden."""
    name, arch, head, extra, pooling = spec[:5]
    preset = spec[5] if len(spec) > 5 else PRESET
    if args.python_fixture:
        cmd = ["/usr/bin/python3", os.path.join(HERE, "pyfixture.py"), "--arch", arch, "--head", head,
               "--seed", str(SEED), "--labels", "3", "--out", model_dir]
        shown = ["tools/golden/pyfixture.py"] + cmd[2:-1] + ["DIR"]
    else:
        cmd = [args.fixture_bin, "--arch", arch, "--head", head, "--preset", preset,
               "--seed", str(SEED)] + extra + ["--out", model_dir]
        shown = ["warden-fixture"] + cmd[1:-1] + ["DIR"]
    return cmd, shown


def check_one(spec, args, scratch):
    """Regenerates a fixture and compares its bytes with the committed golden's files_sha256."""
    name = spec[0]
    model_dir = os.path.join(scratch, name)
    cmd, _ = fixture_command(spec, args, model_dir)
    subprocess.run(cmd, check=True)
    with open(os.path.join(args.out, name + ".json"), encoding="utf-8") as f:
        want = json.load(f)["fixture"]["files_sha256"]
    got = sha256_tree(model_dir)
    bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    print(f"{name}: {'same bytes' if not bad else 'DRIFT in ' + ', '.join(bad)}")
    return not bad


def make_one(spec, args, scratch):
    name, arch, head, extra, pooling = spec[:5]
    preset = spec[5] if len(spec) > 5 else PRESET
    model_dir = os.path.join(scratch, name)
    cmd, shown = fixture_command(spec, args, model_dir)
    subprocess.run(cmd, check=True)

    kinds = set(spec[6].split("+")) if len(spec) > 6 else set()
    inputs = (SINGLES + (PAIRS if head != "none" else []) + (PAD_LITERAL if "pad" in kinds else []) +
              (LONG if kinds & {"long", "xlong", "xlong-bpe"} else []) + (XLONG if "xlong" in kinds else []) +
              (XLONG_BPE if "xlong-bpe" in kinds else []) +
              (exact_length_texts(os.path.join(model_dir, "tokenizer.json"), EXACT_LENGTHS)
               if "lengths" in kinds else []))
    rerank = next((k.split("=", 1)[1] for k in kinds if k.startswith("rerank=")), None)
    ref = jina_v3_reference if arch == "jina-v3" else reference
    case_tasks = []
    if "tasks" in kinds:
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        names, instructions = cfg["lora_adaptations"], cfg["task_instructions"]
        case_tasks = [names[i % len(names)] for i in range(len(inputs))]
        tok = tokenize(os.path.join(model_dir, "tokenizer.json"),
                       [instructions[t] + x for t, x in zip(case_tasks, inputs)])
        for e, t in zip(tok["encodings"], case_tasks):
            e["adapter"] = names.index(t)
    elif rerank:
        llm_cases = LLM_RERANK_PAIRS + {"mxbai-rerank-v2": LLM_RERANK_INSTRUCTED,
                                        "bge-reranker-v2-gemma": LLM_RERANK_LONG}.get(rerank, [])
        inputs = [[q, d] for q, d, _ in llm_cases]
        enc, score_ids, binding = llm_rerank_reference.encode(
            rerank, lambda texts, special: tokenize(os.path.join(model_dir, "tokenizer.json"), texts, special),
            model_dir, llm_cases)
        tok = {"encodings": enc, "tokenizers_binding": binding}
    else:
        tok = tokenize(os.path.join(model_dir, "tokenizer.json"), inputs)
    enc = tok["encodings"]

    m32 = ref.Reference(model_dir, torch.float32)
    m64 = ref.Reference(model_dir, torch.float64)
    batched = [e for e in enc if len(e["ids"]) <= XLONG_TOKENS]
    apart = [e for e in enc if len(e["ids"]) > XLONG_TOKENS]

    def run_all(model):
        by_id = {id(e): o for e, o in zip(batched, ref.run(model, batched))}
        by_id.update({id(e): ref.run(model, [e])[0] for e in apart})
        return [by_id[id(e)] for e in enc]

    out32 = run_all(m32)
    out64 = run_all(m64)
    alone = [ref.run(m32, [e])[0] if len(e["ids"]) <= XLONG_TOKENS else o for e, o in zip(enc, out32)]

    splade32 = []
    splade_diff = {}
    if "splade" in kinds:
        h32 = splade_reference.SpladeHead(m32, model_dir)
        h64 = splade_reference.SpladeHead(m64, model_dir)
        splade32 = [h32.pooled(o["last_hidden_state"]) for o in out32]
        for a, o in zip(splade32, out64):
            b = h64.pooled(o["last_hidden_state"])
            splade_diff["splade"] = max(splade_diff.get("splade", 0.0), float((a.double() - b).abs().max()))
    m3_diff = {}
    if "m3" in kinds:
        heads32 = m3_reference.M3Heads(model_dir, torch.float32)
        heads64 = m3_reference.M3Heads(model_dir, torch.float64)
        m3_out = [heads32.outputs(o["last_hidden_state"], e["ids"]) for e, o in zip(enc, out32)]
        m3_64 = [heads64.outputs(o["last_hidden_state"], e["ids"]) for e, o in zip(enc, out64)]
        for a, b in zip(m3_out, m3_64):
            if set(a["lexical"]) != set(b["lexical"]):
                raise SystemExit(f"{name}: float32 and float64 keep different sparse ids")
            pairs = [("m3_dense", a["dense"], b["dense"]), ("m3_colbert", a["colbert"], b["colbert"])]
            pairs += [("m3_sparse", a["lexical_tensors"][i], b["lexical_tensors"][i]) for i in a["lexical"]]
            for k, x, y in pairs:
                d = float((x.double() - y.double()).abs().max()) if x.numel() else 0.0
                m3_diff[k] = max(m3_diff.get(k, 0.0), d)

    colbert_out = []
    colbert_diff = {}
    if "colbert" in kinds:
        c32 = colbert_reference.ColbertReference(m32, model_dir)
        c64 = colbert_reference.ColbertReference(m64, model_dir)
        for role in ("query", "document"):
            p32, v32 = c32.encode(enc, role == "query")
            _, v64 = c64.encode(enc, role == "query")
            colbert_out.append((role, p32, v32))
            for a, b in zip(v32, v64):
                d = float((a.double() - b).abs().max()) if a.numel() else 0.0
                colbert_diff["colbert_" + role] = max(colbert_diff.get("colbert_" + role, 0.0), d)

    lm_scores = []
    lm_diff = {}
    if rerank:
        lm_scores = llm_rerank_reference.scores(m32, out32, score_ids)
        for (a, a_s), (b, b_s) in zip(lm_scores, llm_rerank_reference.scores(m64, out64, score_ids)):
            for k, x, y in (("lm_logit", a, b), ("lm_score", a_s, b_s)):
                lm_diff[k] = max(lm_diff.get(k, 0.0), abs(float(x.double() - y.double())))

    # The Dense modules after the Pooling (EmbeddingGemma's), on the declared pooling's vector.
    dense32 = reference.st_dense_chain(model_dir, torch.float32)
    dense64 = reference.st_dense_chain(model_dir, torch.float64)
    sentence = []
    dense_diff = {}
    if dense32 is not None:
        sentence = [dense32(o[pooling]) for o in out32]
        for a, o in zip(sentence, out64):
            d = float((a.double() - dense64(o[pooling])).abs().max())
            dense_diff["sentence_embedding"] = max(dense_diff.get("sentence_embedding", 0.0), d)

    moe_margin = min(getattr(m32, "moe_margins", []) or [float("inf")])
    if moe_margin < 1e-4:
        raise SystemExit(f"{name}: a token's kept and dropped experts' scores are {moe_margin:.2e} apart: routing too fragile")

    unused = m32.unused_tensors()
    if unused:
        raise SystemExit(f"{name}: tensors the reference did not use: {unused}")

    cases = []
    for ci, (inp, e, o) in enumerate(zip(inputs, enc, out32)):
        hidden = o["last_hidden_state"]
        rows = None
        if len(e["ids"]) > XLONG_TOKENS:
            rows = list(range(0, len(e["ids"]), HIDDEN_ROW_STRIDE)) + [len(e["ids"]) - 1]
            hidden = hidden[rows]
        c = {"input": inp, **({"task": case_tasks[ci]} if case_tasks else {}),
             "tokens": e["tokens"], "ids": e["ids"], "type_ids": e["type_ids"],
             "attention_mask": e["attention_mask"],
             **({"hidden_rows": rows} if rows is not None else {}),
             "last_hidden_state": f32(hidden),
             "pooled": {k: f32(o[k]) for k in ("cls", "mean", "max", "last")},
             "normalized": {k: f32(o[k + "_normalized"]) for k in ("cls", "mean", "max", "last")}}
        if "pooler_output" in o:
            c["pooler_output"] = f32(o["pooler_output"])
        if sentence:
            c["sentence_embedding"] = f32(sentence[ci])
        if "logits" in o:
            c["logits"] = f32(o["logits"])
            c["scores"] = f32(o["scores"])
        if "splade" in kinds:
            v = splade32[ci]
            nz = torch.nonzero(v > 0).flatten()
            c["splade"] = {"indices": [int(i) for i in nz], "values": f32(v[nz])}
        if "m3" in kinds:
            m = m3_out[ci]
            ids = sorted(m["lexical"])
            c["m3"] = {"dense": f32(m["dense"]),
                       "sparse": {"indices": ids,
                                  "values": f32(torch.stack([m["lexical_tensors"][i] for i in ids])
                                                if ids else torch.zeros(0))},
                       "colbert": f32(m["colbert"])}
        if rerank:
            logit, score = lm_scores[ci]
            c["lm_score"] = {"logit": f32(logit), "score": f32(score)}
            if llm_cases[ci][2]:
                c["instruction"] = llm_cases[ci][2]
        if "colbert" in kinds:
            c["colbert"] = {role: {"ids": p[ci]["ids"], "attention_mask": p[ci]["attention_mask"],
                                   "vectors": f32(v[ci])} for role, p, v in colbert_out}
        cases.append(c)

    fam = m32.family
    golden = {
        "schema": 1,
        "name": name,
        "about": "Golden outputs of the independent PyTorch reference (tools/golden/reference.py) "
                 "for a tiny warden-fixture model; regenerate with tools/golden/make_goldens.py "
                 "(see tools/golden/README.md). Compare at 1e-4 max abs (float32).",
        "fixture": {
            "generator": "tools/golden/pyfixture.py (NOT warden-fixture)" if args.python_fixture else "warden-fixture",
            "command": " ".join(shown),
            "built_from": args.fixture_source,
            "arch": arch, "head": head, "preset": preset, "seed": SEED,
            "labels": m32.num_labels,
            "declared_pooling": declared_pooling(model_dir),
            "declared_normalize": declared_normalize(model_dir),
            "intended_pooling": pooling,
            "files_sha256": sha256_tree(model_dir),
        },
        "reference": {
            "code": f"tools/golden/{ref.__name__}.py",
            "architecture": m32.architecture,
            "hidden_size": m32.hidden, "num_layers": m32.layers, "num_heads": m32.heads,
            "layer_norm_eps": m32.eps, "pad_token_id": m32.pad_id,
            "token_types_fed_to_model": TOKEN_TYPES[fam],
            "tokenizer": tok["tokenizers_binding"],
            "torch": torch.__version__, "numpy": np.__version__,
            "batch": "all cases in one right-padded batch (pad_token_id, attention mask 0)" +
                     ("; each case's task adapter by adapter_mask, its instruction prepended" if case_tasks else "") +
                     (f"; cases over {XLONG_TOKENS} tokens alone, their hidden rows sampled (hidden_rows)"
                      if apart else ""),
            "fp32_vs_fp64_max_abs_diff": {**reference.max_abs_diff(out32, out64), **m3_diff, **splade_diff,
                                          **colbert_diff, **lm_diff, **dense_diff},
            **({"llm_rerank": {"template": rerank, "score_token_ids": score_ids,
                               "about": "the prompt and score of tools/golden/llm_rerank_reference.py"}}
               if rerank else {}),
            "batched_vs_alone_max_abs_diff": reference.max_abs_diff(out32, alone),
            **({"moe_min_router_margin": moe_margin} if moe_margin != float("inf") else {}),
        },
        "cases": cases,
    }
    text = emit(golden) + "\n"
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    worst = max(golden["reference"]["fp32_vs_fp64_max_abs_diff"].values())
    print(f"{path}: {len(cases)} cases, {len(text) / 1024:.0f} KiB, fp32-vs-fp64 max {worst:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture-bin", default=os.path.join(ROOT, "build", "release", "bin", "warden-fixture"))
    ap.add_argument("--fixture-source", default=None,
                    help="where the warden-fixture binary was built from (recorded, e.g. a commit)")
    ap.add_argument("--python-fixture", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--check", action="store_true",
                    help="only regenerate the fixtures and compare their sha256 with the goldens")
    args = ap.parse_args()
    if args.out is None:
        if args.python_fixture:
            ap.error("--python-fixture needs an explicit --out (its weights are not warden-fixture's)")
        args.out = os.path.join(ROOT, "tests", "data", "goldens")
    torch.set_num_threads(1)
    specs = [s for s in FIXTURES if args.only is None or s[0] in args.only]
    with tempfile.TemporaryDirectory(prefix="warden-goldens-") as scratch:
        if args.check:
            ok = [check_one(s, args, scratch) for s in specs]
            sys.exit(0 if all(ok) else 1)
        for s in specs:
            make_one(s, args, scratch)


if __name__ == "__main__":
    main()
