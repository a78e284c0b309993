"""Embedding models: dense vectors, sparse (lexical) vectors and token vectors.

The classes follow fastembed's and sentence-transformers' shapes, over the same C++ models,
prompts and row rules as ``warden serve`` (a vector here is bit for bit the server's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _warden
from ._common import ModelInfo, Texts, as_texts, batch_size_of, source_of, threads_of
from .errors import ArgumentError

__all__ = ["TextEmbedding", "SparseEmbedding", "SparseTextEmbedding", "LateInteractionTextEmbedding"]


class _EmbeddingModel(ModelInfo):
    """An embedding model opened as ``warden serve --model`` opens it (shared by the classes below);
    ``info``: name, dim, pooling, dtype, prompts, tasks, outputs (dense, sparse, multi), ..."""

    def __init__(
        self,
        model: Optional[str] = None,
        *,
        dtype: str = "float32",
        threads: Optional[int] = None,
        pooling: Optional[str] = None,
    ) -> None:
        self._model = _warden.Embedder(source_of(model), dtype, threads_of(threads), pooling or "")
        self._info: Dict[str, Any] = self._model.info()

    @property
    def prompts(self) -> Dict[str, str]:
        """The model's named prompts (config_sentence_transformers.json), each prepended to a text by name."""
        return dict(self._info["prompts"])

    def _encoding(
        self, prompt_name: Optional[str], input_type: Optional[str], query: bool, truncate: bool
    ) -> Any:
        return _warden.Encoding(prompt_name, input_type, query, truncate)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_name!r}, dtype={self._info['dtype']!r})"


class TextEmbedding(_EmbeddingModel):
    """Dense text embeddings (fastembed's ``TextEmbedding``, sentence-transformers' ``encode``).

    Args:
        model: anything ``warden serve --model`` takes: a built-in (``"use-lite"``,
            ``"hashing-ngram-256"``), a HuggingFace model folder, or a HuggingFace id
            ``ORG/NAME[@REVISION]`` fetched into the shared hub cache. ``None``: the default
            embedder (use-lite once installed).
        dtype: precision of the dense layers: ``"float32"``, ``"bfloat16"``, ``"int8"`` or ``"auto"``.
        threads: compute threads (``None``: the CPUs available). Python threads calling one
            model take turns on them.
        pooling: override the folder's pooling (``"cls"``, ``"mean"``, ``"max"``, ``"lasttoken"``).

    Example:
        >>> model = TextEmbedding("use-lite")
        >>> model.embed(["hello", "world"]).shape
        (2, 512)
    """

    @property
    def dim(self) -> int:
        """The length of each vector."""
        return int(self._info["dim"])

    embedding_size = dim  # fastembed's name

    def embed(
        self,
        texts: Texts,
        batch_size: int = 32,
        *,
        prompt_name: Optional[str] = None,
        input_type: Optional[str] = None,
        normalize: bool = True,
        dimensions: Optional[int] = None,
        truncate: bool = True,
    ) -> np.ndarray:
        """Embeds texts: a ``(len(texts), dim)`` float32 array (a single str gives a ``(dim,)`` row).

        Args:
            texts: a str or an iterable of str.
            batch_size: texts per forward pass (texts of similar length are batched together;
                a vector does not depend on its batch).
            prompt_name: one of :attr:`prompts` (a task adapter of that name too); default: the
                model's default prompt, if any.
            input_type: ``"query"``, ``"passage"``/``"document"``, ``"clustering"``, or Cohere's
                ``"search_query"``/``"search_document"``: the model's prompt for that purpose.
            normalize: unit vectors (the server's default); ``False``: as pooled.
            dimensions: keep the first ``dimensions`` values (Matryoshka), before normalising.
            truncate: cut texts longer than the model reads (``False``: an :class:`InputError`).

        The array owns the C++ buffer it was computed in (no copy is made).
        """
        items, single = as_texts(texts)
        if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int)
                                       or dimensions < 1):
            raise ArgumentError(f"dimensions must be a positive int or None, not {dimensions!r}")
        rows = self._model.embed(
            items,
            batch_size_of(batch_size),
            self._encoding(prompt_name, input_type, False, truncate),
            normalize,
            dimensions,
        )
        return rows[0] if single else rows

    def query_embed(self, query: Texts, batch_size: int = 32, **kwargs: Any) -> np.ndarray:
        """Embeds queries: :meth:`embed` with the model's query prompt (``input_type="query"``)."""
        return self.embed(query, batch_size, input_type="query", **kwargs)

    def passage_embed(self, texts: Texts, batch_size: int = 32, **kwargs: Any) -> np.ndarray:
        """Embeds passages: :meth:`embed` with the model's passage prompt (``input_type="passage"``)."""
        return self.embed(texts, batch_size, input_type="passage", **kwargs)

    def encode(
        self,
        sentences: Texts,
        batch_size: int = 32,
        *,
        prompt_name: Optional[str] = None,
        normalize_embeddings: bool = False,
        truncate_dim: Optional[int] = None,
        **_ignored: Any,
    ) -> np.ndarray:
        """sentence-transformers' ``encode``: not normalised unless asked (or the model's own graph
        normalises, like use-lite's). Progress bars and devices are ignored."""
        return self.embed(
            sentences,
            batch_size,
            prompt_name=prompt_name,
            normalize=normalize_embeddings,
            dimensions=truncate_dim,
        )


@dataclass(frozen=True)
class SparseEmbedding:
    """A sparse vector over the model's vocabulary: token ids (ascending, uint32) and their weights."""

    indices: np.ndarray
    values: np.ndarray

    def as_dict(self) -> Dict[int, float]:
        return {int(i): float(v) for i, v in zip(self.indices, self.values)}

    def as_object(self) -> Dict[str, np.ndarray]:
        return {"indices": self.indices, "values": self.values}


class SparseTextEmbedding(_EmbeddingModel):
    """Sparse lexical vectors: SPLADE models and bge-m3's lexical weights (fastembed's class).

    Takes the same ``model``, ``dtype``, ``threads`` and ``pooling`` as :class:`TextEmbedding`
    (``pooling="splade"`` reads a ``*ForMaskedLM`` folder as SPLADE).
    """

    def embed(
        self, texts: Texts, batch_size: int = 32, *, prompt_name: Optional[str] = None,
        input_type: Optional[str] = None, truncate: bool = True
    ) -> Union[List[SparseEmbedding], SparseEmbedding]:
        """One :class:`SparseEmbedding` per text (a single str gives one), as ``/embed_sparse`` does."""
        items, single = as_texts(texts)
        out = [
            SparseEmbedding(indices=i, values=v)
            for i, v in self._model.embed_sparse(
                items, batch_size_of(batch_size), self._encoding(prompt_name, input_type, False, truncate)
            )
        ]
        return out[0] if single else out

    def query_embed(self, query: Texts, batch_size: int = 32, **kwargs: Any) -> Any:
        """:meth:`embed` with the model's query prompt, if it has one."""
        return self.embed(query, batch_size, input_type="query", **kwargs)


class LateInteractionTextEmbedding(_EmbeddingModel):
    """Token vectors for late interaction (MaxSim): ColBERT models and bge-m3's multi-vector head.

    Takes the same ``model``, ``dtype`` and ``threads`` as :class:`TextEmbedding`.
    """

    @property
    def dim(self) -> int:
        """The width of each token vector."""
        return int(self._info["multi_vector_dim"])

    def embed(
        self, texts: Texts, batch_size: int = 32, *, truncate: bool = True
    ) -> Union[List[np.ndarray], np.ndarray]:
        """Documents: one ``(tokens, dim)`` float32 array of unit rows per text."""
        return self._run(texts, batch_size, False, truncate)

    def query_embed(self, query: Texts, batch_size: int = 32, *, truncate: bool = True) -> Any:
        """Queries: ColBERT's query encoding (its marker, ``[MASK]`` expansion)."""
        return self._run(query, batch_size, True, truncate)

    def _run(self, texts: Texts, batch_size: int, query: bool, truncate: bool) -> Any:
        items, single = as_texts(texts)
        out = self._model.embed_multi(
            items, batch_size_of(batch_size), self._encoding(None, None, query, truncate)
        )
        return out[0] if single else out


def maxsim(query: np.ndarray, document: np.ndarray) -> float:
    """ColBERT's late-interaction score: for each query token its best document token, summed."""
    return float((np.asarray(query) @ np.asarray(document).T).max(axis=1).sum())
