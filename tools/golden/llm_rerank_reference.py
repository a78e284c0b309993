"""The prompts and scores of the causal-LM rerankers, written from each model's own code, for the
goldens of tools/golden/make_goldens.py. Independent of Warden's C++ (classify/rerank_template.cpp):
every token id comes from HuggingFace `tokenizers` (tools/golden/tokenize.mjs), every cut is the
upstream code's, and the score is read from the reference's last hidden state and LM head.

qwen3-reranker (Qwen/Qwen3-Reranker-* model card, README):
    prefix = "<|im_start|>system\\nJudge whether ...<|im_end|>\\n<|im_start|>user\\n"; suffix =
    "<|im_end|>\\n<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n"; format_instruction:
    "<Instruct>: {instruction}\\n<Query>: {query}\\n<Document>: {doc}"; process_inputs: the body
    tokenized (truncation longest_first to max_length - len(prefix) - len(suffix)), then prefix_tokens
    + ids + suffix_tokens; compute_logits: token_true_id = convert_tokens_to_ids("yes"),
    token_false_id = convert_tokens_to_ids("no"), log_softmax over [false, true] at [:, -1, :], exp,
    [:, 1].

mxbai-rerank-v2 (mixedbread-ai/mxbai-rerank, mxbai_rerank/mxbai_rerank_v2.py, MxbaiRerankV2):
    prepare_predefined_inputs: get_input_ids(x) = tokenizer(x, add_special_tokens=False);
    yes_loc = get_input_ids("1")[0], no_loc = get_input_ids("0")[0]; predefined_length = len(prefix)
    + len(task_prompt) + len(suffix) + len(sep); max_length (8192) lowered to model_max_length -
    predefined_length when their sum passes model_max_length.
    prepare_inputs: query_prompt = "query: {query}", preceded by "instruction: {instruction}" + sep
    when an instruction is given; tokenized with max_length = max_length * 3 // 4, truncation;
    doc_maxlen = min(model_max_length - len(query) - predefined_length, max_length);
    "document: {document}" tokenized to doc_maxlen; prepare_for_model(query, sep + document,
    truncation="only_second", max_length=max_length); concat_input_ids: prefix + item + sep +
    task_prompt + suffix.
    forward: logits[:, -1, yes_loc] - logits[:, -1, no_loc].

bge-reranker-v2-gemma (FlagOpen/FlagEmbedding, inference/reranker/decoder_only/base.py,
BaseLLMReranker.compute_score_single_gpu with its defaults):
    query_instruction_for_rerank "A: " and passage_instruction_for_rerank "B: " with the "{}{}"
    formats (AbsReranker); max_length 512, query_max_length = max_length * 3 // 4; queries tokenized
    (add_special_tokens=False) to query_max_length, passages to max_length; prompt = "Given a query A
    and a passage B, determine whether the passage contains an answer to the query by providing a
    prediction of either 'Yes' or 'No'."; sep = "\\n"; encode_max_length = max_length + len(sep) +
    len(prompt); prepare_for_model([bos_token_id] + query, sep + passage, truncation="only_second",
    max_length=encode_max_length) when bos_token_id is set and is not the pad's; + sep + prompt;
    yes_loc = tokenizer('Yes', add_special_tokens=False)['input_ids'][0]; score =
    last_logit_pool(logits)[:, yes_loc] (normalize False: the raw logit).

The LM head (tie_word_embeddings in every fixture): lm_head.weight when the checkpoint has one,
else the word embeddings.
"""

from __future__ import annotations

import json
import os

import torch

QWEN3_PREFIX = ('<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the '
                'Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n')
QWEN3_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
QWEN3_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"

MXBAI_PREFIX = ("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
                "<|im_end|>\n<|im_start|>user\n")
MXBAI_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n"
MXBAI_TASK = ("You are a search relevance expert who evaluates how well documents match search queries. For each "
              "query-document pair, carefully analyze the semantic relationship between them, then provide your "
              "binary relevance judgment (0 for not relevant, 1 for relevant).\nRelevance:")
MXBAI_MAX_LENGTH = 8192

FLAG_PROMPT = ("Given a query A and a passage B, determine whether the passage contains an answer to the query "
               "by providing a prediction of either 'Yes' or 'No'.")
FLAG_MAX_LENGTH = 512


def _tokenizer_config(model_dir: str) -> dict:
    path = os.path.join(model_dir, "tokenizer_config.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _vocab(tokenizer_json: str) -> dict:
    with open(tokenizer_json, encoding="utf-8") as f:
        t = json.load(f)
    vocab = dict(t["model"]["vocab"])
    for a in t.get("added_tokens", []):
        vocab[a["content"]] = a["id"]
    return vocab


def encode(template: str, tokenize, model_dir: str, cases) -> tuple[list, list, str]:
    """(encodings, score token ids [positive] or [positive, negative], the binding's version) for
    `cases`, each (query, document, instruction or None). `tokenize(texts, special_tokens)` is
    make_goldens.tokenize bound to the folder's tokenizer.json."""
    tokenizer_json = os.path.join(model_dir, "tokenizer.json")

    # Each text's tokens as (id, token) pairs, so that cuts and joins keep both.
    def ids(texts, special_tokens=False):
        res = tokenize(texts, special_tokens)
        return [list(zip(e["ids"], e["tokens"])) for e in res["encodings"]], res["tokenizers_binding"]

    def encoding(seq):
        return {"ids": [i for i, _ in seq], "tokens": [t for _, t in seq],
                "type_ids": [0] * len(seq), "attention_mask": [1] * len(seq)}

    if template == "qwen3-reranker":
        (prefix, suffix), _ = ids([QWEN3_PREFIX, QWEN3_SUFFIX])
        bodies, binding = ids([f"<Instruct>: {i or QWEN3_INSTRUCTION}\n<Query>: {q}\n<Document>: {d}"
                               for q, d, i in cases], special_tokens=True)
        vocab = _vocab(tokenizer_json)
        return [encoding(prefix + b + suffix) for b in bodies], [vocab["yes"], vocab["no"]], binding

    if template == "mxbai-rerank-v2":
        (prefix, suffix, task, sep, one, zero), binding = ids([MXBAI_PREFIX, MXBAI_SUFFIX, MXBAI_TASK, "\n", "1", "0"])
        model_max_length = int(_tokenizer_config(model_dir)["model_max_length"])
        predefined = len(prefix) + len(task) + len(suffix) + len(sep)
        max_length = MXBAI_MAX_LENGTH
        if max_length + predefined > model_max_length:
            max_length = model_max_length - predefined
        out = []
        for q, d, i in cases:
            query_prompt = f"query: {q}"
            if i:
                query_prompt = "".join([f"instruction: {i}", "\n", query_prompt])
            (q_ids, d_full), _ = ids([query_prompt, f"document: {d}"])
            q_ids = q_ids[: max_length * 3 // 4]
            doc_maxlen = min(model_max_length - len(q_ids) - predefined, max_length)
            second = sep + d_full[:doc_maxlen]
            if len(q_ids) + len(second) > max_length:  # prepare_for_model, only_second
                second = second[: max_length - len(q_ids)]
            out.append(encoding(prefix + q_ids + second + sep + task + suffix))
        return out, [one[0][0], zero[0][0]], binding

    if template == "bge-reranker-v2-gemma":
        (prompt, sep, yes), binding = ids([FLAG_PROMPT, "\n", "Yes"])
        config = _tokenizer_config(model_dir)
        vocab = _vocab(tokenizer_json)
        bos = vocab.get(config.get("bos_token")) if config.get("bos_token") else None
        pad = vocab.get(config.get("pad_token")) if config.get("pad_token") else None
        query_max_length = FLAG_MAX_LENGTH * 3 // 4
        encode_max_length = FLAG_MAX_LENGTH + len(sep) + len(prompt)
        out = []
        for q, d, i in cases:
            if i:
                raise ValueError("FlagEmbedding's LLM reranker takes no per-pair instruction")
            (q_ids, p_ids), _ = ids([f"A: {q}", f"B: {d}"])
            first = ([(bos, config["bos_token"])] if bos is not None and bos != pad else []) + q_ids[:query_max_length]
            second = sep + p_ids[:FLAG_MAX_LENGTH]
            if len(first) + len(second) > encode_max_length:  # prepare_for_model, only_second
                second = second[: encode_max_length - len(first)]
            out.append(encoding(first + second + sep + prompt))
        return out, [yes[0][0]], binding

    raise ValueError(f"no reference for the reranker template {template}")


def scores(model, outs, token_ids):
    """Per case (logit, score): the positive token's logit at the last position, less the negative's
    when there is one; the score its sigmoid (= the two-way softmax's positive share)."""
    head = model.W("lm_head.weight", False) if "lm_head.weight" in model.w else model.W("embed_tokens.weight")
    res = []
    for o in outs:
        last = o["last_hidden_state"][-1]
        logit = last @ head[token_ids[0]]
        if len(token_ids) > 1:
            logit = logit - last @ head[token_ids[1]]
        res.append((logit, torch.sigmoid(logit)))
    return res
