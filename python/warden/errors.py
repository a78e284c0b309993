"""Warden's exceptions.

Every error the C++ library raises arrives as one of these classes, carrying its message; a
bad input never crashes the interpreter. Catch :class:`WardenError` for all of them.
"""

from __future__ import annotations

__all__ = [
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


class WardenError(Exception):
    """Base class of every Warden error. ``kind`` is the C++ error kind's name."""

    kind = "error"


class ModelError(WardenError):
    """A model that cannot be opened or used: not found, unsupported, or a broken file."""

    kind = "model"


class ModelNotFoundError(ModelError, LookupError):
    """No such built-in, folder or HuggingFace id (or a file a model needs is missing)."""

    kind = "not_found"


class UnsupportedError(ModelError):
    """Well-formed, but not something Warden runs (an architecture, a dtype, an output)."""

    kind = "unsupported"


class CorruptModelError(ModelError):
    """A model or tokenizer file is inconsistent or hostile."""

    kind = "corrupt_file"


class InputError(WardenError, ValueError):
    """A text (or a pair) the model cannot take: not a str, invalid Unicode, too long."""

    kind = "invalid_input"


class ArgumentError(WardenError, ValueError):
    """A bad option: an unknown dtype or prompt name, a batch size of 0, the wrong kind of model."""

    kind = "invalid_argument"


class WardenIOError(WardenError, OSError):
    """The operating system refused a read or a write."""

    kind = "io"


class InternalError(WardenError):
    """A bug in Warden: an invariant did not hold. Please report it."""

    kind = "internal"
