#!/usr/bin/env python3
"""RAG ingestion with dense and sparse vectors: chunk documents, embed each chunk twice (a dense
embedder for meaning, a SPLADE model for exact terms), search both and fuse the rankings.

    python3 rag_ingestion.py --dense BAAI/bge-small-en-v1.5 --sparse naver/splade-v3 "how do pandas sleep?"

Any model ``warden serve --model`` takes works (folders, HuggingFace ids, built-ins).
"""

from __future__ import annotations

import argparse
from typing import Dict, List

import numpy as np

import warden

DOCUMENTS = {
    "pandas.md": "Giant pandas sleep two to four hours at a time, in trees or on the ground. "
    "They spend most of the day eating bamboo, up to 38 kg of it.",
    "git.md": "git diff -w ignores whitespace when comparing lines. "
    "Use --ignore-blank-lines to skip changes whose lines are all blank.",
    "bread.md": "A sourdough starter is flour and water fermented by wild yeast and lactobacilli. "
    "Feed it daily at room temperature, weekly in the fridge.",
}


def chunks(text: str, words: int = 12) -> List[str]:
    w = text.split()
    return [" ".join(w[i : i + words]) for i in range(0, len(w), words)]


def sparse_dot(a: warden.SparseEmbedding, b: warden.SparseEmbedding) -> float:
    common, ia, ib = np.intersect1d(a.indices, b.indices, return_indices=True)
    return float(np.dot(a.values[ia], b.values[ib])) if len(common) else 0.0


def rrf(rankings: List[List[int]], k: int = 60) -> Dict[int, float]:
    """Reciprocal rank fusion: each list adds 1 / (k + rank) to its items."""
    fused: Dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank + 1)
    return fused


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dense", required=True, help="a dense embedding model")
    ap.add_argument("--sparse", required=True, help="a SPLADE (or bge-m3) model")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("query")
    args = ap.parse_args()

    passages = [(name, c) for name, text in DOCUMENTS.items() for c in chunks(text)]
    texts = [c for _, c in passages]
    dense = warden.TextEmbedding(args.dense)
    sparse = warden.SparseTextEmbedding(args.sparse)
    dense_index = dense.passage_embed(texts)  # (chunks, dim) unit vectors
    sparse_index = sparse.embed(texts)
    print(f"indexed {len(texts)} chunks of {len(DOCUMENTS)} documents: dense {dense_index.shape}, "
          f"sparse {sum(len(v.indices) for v in sparse_index)} weights")

    q_dense = dense.query_embed(args.query)
    q_sparse = sparse.query_embed(args.query)
    by_dense = list(np.argsort(-(dense_index @ q_dense), kind="stable"))
    by_sparse = sorted(range(len(texts)), key=lambda i: -sparse_dot(q_sparse, sparse_index[i]))
    fused = sorted(rrf([by_dense, by_sparse]).items(), key=lambda kv: -kv[1])
    for rank, (i, score) in enumerate(fused[: args.top], 1):
        name, chunk = passages[i]
        print(f"{rank}. {score:.4f} {name}: {chunk}")


if __name__ == "__main__":
    main()
