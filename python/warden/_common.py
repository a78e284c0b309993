"""What the package's classes share: argument checks and the text-or-texts rule."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from .errors import ArgumentError

Texts = Union[str, Iterable[str]]


def as_texts(texts: Texts) -> Tuple[Sequence[str], bool]:
    """The texts as a sequence, and whether a single str was given (then one row comes back)."""
    if isinstance(texts, str):
        return [texts], True
    if isinstance(texts, (bytes, bytearray)):
        raise ArgumentError("give str texts, not bytes (decode them as UTF-8 first)")
    if isinstance(texts, (list, tuple)):
        return texts, False
    return list(texts), False


def batch_size_of(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= 4096:
        raise ArgumentError(f"batch_size must be an int from 1 to 4096, not {batch_size!r}")
    return batch_size


def threads_of(threads: Optional[int]) -> int:
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ArgumentError(f"threads must be a positive int (or None: the CPUs available), not {threads!r}")
    return threads


def source_of(model: Optional[str]) -> str:
    if model is None:
        return ""
    if not isinstance(model, str):
        model = str(model)  # a pathlib.Path
    return model


class ModelInfo:
    """What every model class tells about its model: ``model_name`` and ``info`` (from ``_info``)."""

    _info: Dict[str, Any]

    @property
    def model_name(self) -> str:
        """The model's name: a built-in's, or the folder's or HuggingFace id's last part."""
        return self._info["name"]

    @property
    def info(self) -> Dict[str, Any]:
        """What the model is, as the module reports it (name, dtype, and the class's own fields)."""
        return dict(self._info)
