#!/usr/bin/python3
"""Independent reference for Warden's static embedders, written from the upstream libraries.

Two sets of rules, one per file layout (neither library is installed here; their arithmetic is
re-stated below with numpy and torch, step by step):

model2vec (MinishLab/model2vec `model2vec/model.py`, StaticModel; the folder layout of
`model2vec/persistence/persistence.py`: config.json, model.safetensors, tokenizer.json)
    __init__: `tokens` = the tokenizer's get_vocab() sorted by id (model vocabulary plus added
    tokens); `unk_token_id` = get_vocab()[tokenizer.model.unk_token] when the model has an
    unk_token (WordPiece, WordLevel, BPE; the Unigram binding has no such attribute);
    `median_token_length = int(np.median([len(token) for token in tokens]))` (len in code
    points); `normalize` = config.get("normalize", False).
    load_pretrained: "embeddings", and "weights" / "mapping" when present.
    tokenize(sentences, max_length=512) (encode's default): each sentence cut to
    `sentence[:max_length * median_token_length]`, encoded with add_special_tokens=False, the
    unk id removed, then `[:max_length]`.
    _encode_helper: `embedding[mapping[ids]]` (or `embedding[ids]`), times `weights[ids][:, None]`
    when there are weights. _encode_batch: `emb.mean(axis=0)` per sentence, np.zeros(dim) for no
    ids; with normalize, `out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-32)`.

sentence-transformers StaticEmbedding (`sentence_transformers/models/StaticEmbedding.py`)
    preprocess: encode_batch(add_special_tokens=False), all ids, offsets of each text;
    forward: nn.EmbeddingBag (mode "mean") over "embedding.weight" (or model2vec's
    "embeddings"); then the Normalize module (torch.nn.functional.normalize, eps 1e-12) when
    modules.json lists one. No truncation (max_seq_length is inf), nothing dropped.

Token ids come from HuggingFace `tokenizers` itself (tools/golden/tokenize.mjs
--no-special-tokens). Everything runs in float32, as the libraries do on float32 tables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402  (its safetensors reader)

MAX_LENGTH = 512  # StaticModel.encode's default max_length


def hf_ids(tokenizer_json: str, texts: list[str]) -> list[list[int]]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(texts, f, ensure_ascii=False)
        path = f.name
    try:
        res = subprocess.run(["node", os.path.join(HERE, "tokenize.mjs"), tokenizer_json, path, "--no-special-tokens"],
                             check=True, capture_output=True, text=True)
    finally:
        os.unlink(path)
    return [e["ids"] for e in json.loads(res.stdout)["encodings"]]


def get_vocab(tokenizer: dict) -> dict[str, int]:
    """Tokenizer.get_vocab(with_added_tokens=True) from tokenizer.json."""
    model = tokenizer["model"]
    vocab = model["vocab"]
    out = dict(vocab) if isinstance(vocab, dict) else {piece: i for i, (piece, _) in enumerate(vocab)}
    for t in tokenizer.get("added_tokens", []):
        out[t["content"]] = t["id"]
    return out


class Model2Vec:
    def __init__(self, folder: str):
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            self.config = json.load(f)
        self.tokenizer_json = os.path.join(folder, "tokenizer.json")
        with open(self.tokenizer_json, encoding="utf-8") as f:
            tok = json.load(f)
        w = reference.load_safetensors(os.path.join(folder, "model.safetensors"))
        self.embedding = w["embeddings"]
        self.weights = w.get("weights")
        self.token_mapping = w.get("mapping")
        vocab = get_vocab(tok)
        self.tokens, _ = zip(*sorted(vocab.items(), key=lambda x: x[1]))
        unk = tok["model"].get("unk_token") if tok["model"]["type"] in ("WordPiece", "WordLevel", "BPE") else None
        self.unk_token_id = vocab[unk] if unk is not None else None
        self.median_token_length = int(np.median([len(token) for token in self.tokens]))
        self.normalize = self.config.get("normalize", False)

    def tokenize(self, sentences, max_length=MAX_LENGTH):
        m = max_length * self.median_token_length
        sentences = [sentence[:m] for sentence in sentences]
        ids = hf_ids(self.tokenizer_json, sentences)
        if self.unk_token_id is not None:
            ids = [[i for i in token_ids if i != self.unk_token_id] for token_ids in ids]
        return [token_ids[:max_length] for token_ids in ids]

    def encode(self, sentences):
        ids = self.tokenize(sentences)
        out = []
        for id_list in ids:
            if id_list:
                rows = id_list if self.token_mapping is None else self.token_mapping[id_list]
                emb = self.embedding[rows]
                if self.weights is not None:
                    emb = emb * self.weights[id_list][:, None]
                out.append(emb.mean(axis=0))
            else:
                out.append(np.zeros(self.embedding.shape[1]))
        out = np.stack(out)
        if self.normalize:
            out = out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-32)
        return ids, out.astype(np.float32)


class StStatic:
    def __init__(self, folder: str):
        with open(os.path.join(folder, "modules.json"), encoding="utf-8") as f:
            modules = json.load(f)
        path = os.path.join(folder, modules[0]["path"])
        self.tokenizer_json = os.path.join(path, "tokenizer.json")
        w = reference.load_safetensors(os.path.join(path, "model.safetensors"))
        self.weight = torch.from_numpy(w["embedding.weight"] if "embedding.weight" in w else w["embeddings"])
        self.normalize = any(m["type"].endswith("Normalize") for m in modules)

    def encode(self, sentences):
        ids = hf_ids(self.tokenizer_json, sentences)
        offsets = torch.from_numpy(np.cumsum([0] + [len(t) for t in ids[:-1]]))
        flat = torch.tensor([i for t in ids for i in t], dtype=torch.long)
        out = torch.nn.functional.embedding_bag(flat, self.weight, offsets, mode="mean")
        if self.normalize:
            out = torch.nn.functional.normalize(out, p=2, dim=-1, eps=1e-12)
        return ids, out.numpy()


def load(folder: str):
    config = os.path.join(folder, "config.json")
    if os.path.exists(config):
        with open(config, encoding="utf-8") as f:
            if json.load(f).get("model_type") == "model2vec":
                return Model2Vec(folder)
    return StStatic(folder)
