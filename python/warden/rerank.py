"""Cross-encoders: rerankers (one relevance score per query/document pair) and classifiers."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _warden
from ._common import ModelInfo, Texts, as_texts, batch_size_of, source_of, threads_of
from .errors import ArgumentError

__all__ = ["TextCrossEncoder"]


class TextCrossEncoder(ModelInfo):
    """A ``*ForSequenceClassification`` model: a reranker (bge-reranker, ms-marco MiniLM, the LLM
    rerankers) or a classifier, scored as the server's ``/rerank`` and ``/predict`` score.

    Args:
        model: a model folder or HuggingFace id, as ``warden serve --model`` takes it.
        dtype: ``"float32"``, ``"bfloat16"``, ``"int8"`` or ``"auto"``.
        threads: compute threads (``None``: the CPUs available).
        rerank_template: an LLM reranker's template by name or ``.json`` file (a causal LM's folder).

    ``info``: name, kind (reranker or classifier), labels, max_input_tokens, dtype.

    Example:
        >>> ranker = TextCrossEncoder("/models/bge-reranker-base")
        >>> ranker.rerank("what is a panda?", ["a bear", "a city"], top_k=1)
        [{'index': 0, 'score': 0.98..., 'document': 'a bear'}]
    """

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "float32",
        threads: Optional[int] = None,
        rerank_template: Optional[str] = None,
    ) -> None:
        self._model = _warden.CrossEncoder(source_of(model), dtype, threads_of(threads), rerank_template or "")
        self._info: Dict[str, Any] = self._model.info()

    @property
    def labels(self) -> List[str]:
        return list(self._info["labels"])

    def score(
        self,
        query: str,
        documents: Texts,
        batch_size: int = 32,
        *,
        raw: bool = False,
        instruction: Optional[str] = None,
        truncate: bool = True,
    ) -> np.ndarray:
        """One score per document, in the documents' order (fastembed's ``rerank``): the sigmoid of
        the model's logit, or the logit itself with ``raw=True``. ``instruction``: an LLM
        reranker's task instruction."""
        docs, _ = as_texts(documents)
        return self._model.rerank(query, docs, batch_size_of(batch_size), raw, instruction or "", truncate)

    def rerank(
        self,
        query: str,
        documents: Texts,
        top_k: Optional[int] = None,
        *,
        batch_size: int = 32,
        raw: bool = False,
        return_documents: bool = True,
        instruction: Optional[str] = None,
        truncate: bool = True,
    ) -> List[Dict[str, Any]]:
        """The documents by relevance to ``query``, best first (ties keep their order), at most
        ``top_k``: ``{"index", "score"[, "document"]}`` each, as ``/rerank`` answers."""
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ArgumentError(f"top_k must be a positive int or None, not {top_k!r}")
        docs, _ = as_texts(documents)
        scores = self.score(query, docs, batch_size, raw=raw, instruction=instruction, truncate=truncate)
        order = np.argsort(-scores, kind="stable")
        if top_k is not None:
            order = order[:top_k]
        out = []
        for i in order:
            item: Dict[str, Any] = {"index": int(i), "score": float(scores[i])}
            if return_documents:
                item["document"] = docs[i]
            out.append(item)
        return out

    def predict(
        self,
        texts: Texts,
        pairs: Optional[Sequence[str]] = None,
        batch_size: int = 32,
        *,
        raw: bool = False,
        truncate: bool = True,
    ) -> np.ndarray:
        """Scores of each text (or each ``(text, pairs[i])``): ``(n, len(labels))`` float32, the
        softmax of a classifier's logits or a reranker's sigmoid, as ``/predict``; raw logits with
        ``raw=True``. A single str gives one row."""
        items, single = as_texts(texts)
        rows = self._model.classify(items, pairs, batch_size_of(batch_size), raw, truncate)
        return rows[0] if single else rows

    def __repr__(self) -> str:
        return f"TextCrossEncoder({self.model_name!r}, kind={self._info['kind']!r})"
