"""The prompt-injection guard (docs/guard.md), in process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _warden
from ._common import Texts, as_texts, source_of, threads_of

__all__ = ["Guard"]

_PACKAGED_BANK = Path(__file__).parent / "data" / "guard_bank.jsonl"


class Guard:
    """Judges texts for prompt injection, as ``warden guard`` and ``POST /guard`` do.

    By default a logistic probe on the embedder's vectors (use-lite unless ``model`` says
    otherwise), fitted on the shipped bank for 1% false positives and cached; it abstains on
    text the embedder cannot read (another language, a lexical embedder).

    Args:
        model: the probe's embedder, as ``warden serve --model`` takes it (``None``: the default).
        bank: a labelled JSONL bank to fit on (``None``: the shipped one).
        probe: a folder saved by ``warden guard fit`` (then nothing is fitted).
        guard_model: a ``*ForSequenceClassification`` injection classifier that decides instead.
        positive_label: that classifier's attack label(s), comma-separated.
        threshold: override the fitted threshold.
        fpr: the false-positive rate the threshold is chosen for on the bank.
        languages: ``"en,de"`` or ``"any"``; ``None``: the languages the embedder reads.
        cache: read and write the fitted probe's cache.
        threads: compute threads (``None``: the CPUs available).
    """

    def __init__(
        self,
        model: Optional[str] = None,
        *,
        bank: Optional[Union[str, os.PathLike]] = None,
        probe: Optional[Union[str, os.PathLike]] = None,
        guard_model: Optional[str] = None,
        positive_label: Optional[str] = None,
        threshold: Optional[float] = None,
        fpr: float = 0.01,
        languages: Optional[str] = None,
        cache: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        if bank is None and not os.environ.get("WARDEN_GUARD_BANK") and _PACKAGED_BANK.is_file():
            bank = _PACKAGED_BANK
        self._guard = _warden.Guard(
            source_of(model),
            os.fspath(bank) if bank is not None else "",
            os.fspath(probe) if probe is not None else "",
            source_of(guard_model),
            positive_label or "",
            threshold,
            fpr,
            languages,
            cache,
            threads_of(threads),
        )
        self._info: Dict[str, Any] = self._guard.info()

    @property
    def info(self) -> Dict[str, Any]:
        """model, method (probe or classifier), threshold, whether it always abstains, the cache."""
        return dict(self._info)

    def check(self, texts: Texts) -> Union[List[Dict[str, Any]], Dict[str, Any]]:
        """One verdict per text, with the fields of ``/guard``'s answer: ``flagged`` (``None`` when
        abstained), ``score``, ``method``, ``label``, ``closest_exemplar``, ``embedder``,
        ``semantic``, and when they apply ``reason``, ``window``, ``evidence``, ``language``. A
        single str gives one."""
        items, single = as_texts(texts)
        verdicts = [json.loads(line) for line in self._guard.check(items)]
        return verdicts[0] if single else verdicts

    def is_attack(self, text: str) -> bool:
        """True when the guard flags ``text`` (an abstention is not a flag)."""
        return bool(self.check(text)["flagged"])

    def __repr__(self) -> str:
        return f"Guard({self._info['model']!r}, method={self._info['method']!r})"
