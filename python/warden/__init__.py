"""Warden in Python: text embeddings, reranking and the prompt-injection guard on the CPU, in
process, over the same C++ models as ``warden serve`` (docs/python.md).

    >>> import warden
    >>> warden.TextEmbedding("use-lite").embed(["hello"])[0].shape
    (512,)

Classes: :class:`TextEmbedding`, :class:`SparseTextEmbedding`,
:class:`LateInteractionTextEmbedding`, :class:`TextCrossEncoder`, :class:`Guard`; errors in
:mod:`warden.errors`; corpora on a Dask cluster in :mod:`warden.dask`.
"""

from __future__ import annotations

from . import _warden
from .embedding import (
    LateInteractionTextEmbedding,
    SparseEmbedding,
    SparseTextEmbedding,
    TextEmbedding,
    maxsim,
)
from .errors import (
    ArgumentError,
    CorruptModelError,
    InputError,
    InternalError,
    ModelError,
    ModelNotFoundError,
    UnsupportedError,
    WardenError,
    WardenIOError,
)
from .guard import Guard
from .rerank import TextCrossEncoder

__version__: str = _warden.__version__

__all__ = [
    "TextEmbedding",
    "SparseTextEmbedding",
    "SparseEmbedding",
    "LateInteractionTextEmbedding",
    "TextCrossEncoder",
    "Guard",
    "maxsim",
    "WardenError",
    "ModelError",
    "ModelNotFoundError",
    "UnsupportedError",
    "CorruptModelError",
    "InputError",
    "ArgumentError",
    "WardenIOError",
    "InternalError",
]
