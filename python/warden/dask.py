"""Corpora on a Dask cluster: a Bag or DataFrame column of texts to vectors (dense, sparse or
token vectors), one model per worker process, written partition by partition so that a rerun
resumes where the last one stopped (docs/scale-out.md).

    >>> import dask.bag as db
    >>> from distributed import Client
    >>> from warden.dask import embed_corpus, load
    >>> client = Client("scheduler:8786")
    >>> embed_corpus(db.read_text("corpus-*.txt").map(str.strip), "out/", model="BAAI/bge-small-en-v1.5")
    >>> ids, vectors = load("out/")

The output folder holds, per partition ``i``: ``part-0000i.npy`` (dense: ``(rows, dim)``; token
vectors: every text's rows in turn, with ``part-0000i.offsets.npy``), or
``part-0000i.indices.npy`` / ``.values.npy`` / ``.offsets.npy`` (sparse); ``part-0000i.ids.json``;
and ``part-0000i.done.json``, written last (every file is written to a temporary name and
renamed, so a worker killed mid-write leaves no partial partition). ``job.json`` records what was
asked; ``manifest.json``, written when every partition is done, lists them all.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .embedding import LateInteractionTextEmbedding, SparseEmbedding, SparseTextEmbedding, TextEmbedding
from .errors import ArgumentError, InputError, WardenError

__all__ = ["ModelSpec", "WardenModelPlugin", "embed_corpus", "load", "loads_in_this_process"]

_FORMAT = "warden-dask/1"
_KINDS = ("dense", "sparse", "multi")


@dataclass(frozen=True)
class ModelSpec:
    """The model each worker process loads once: ``model`` as ``warden serve --model`` takes it."""

    model: Optional[str] = None
    kind: str = "dense"  # dense, sparse or multi
    dtype: str = "float32"
    threads: Optional[int] = None
    pooling: Optional[str] = None

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def load(self) -> Any:
        cls = {"dense": TextEmbedding, "sparse": SparseTextEmbedding, "multi": LateInteractionTextEmbedding}[self.kind]
        return cls(self.model, dtype=self.dtype, threads=self.threads, pooling=self.pooling)


# The models of this process, by spec: loaded once, by the worker plugin or the first task.
_models: Dict[str, Any] = {}
_models_lock = threading.Lock()
_loads = 0


def _model_for(spec: ModelSpec) -> Any:
    global _loads
    key = spec.key()
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = spec.load()
            _models[key] = model
            _loads += 1
        return model


def loads_in_this_process() -> int:
    """How many models this process has loaded (a worker should load each spec once)."""
    return _loads


try:  # the plugin needs distributed; the rest runs on any Dask scheduler
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - distributed is a dependency of the dask extra
    _WorkerPlugin = object  # type: ignore[misc,assignment]


class WardenModelPlugin(_WorkerPlugin):  # type: ignore[misc,valid-type]
    """Loads the model when a worker starts (or joins, or is restarted by its nanny), once per process."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec

    def setup(self, worker: Any) -> None:
        _model_for(self.spec)


@dataclass(frozen=True)
class _Job:
    spec: ModelSpec
    column: Optional[str]
    id_column: Optional[str]
    batch_size: int
    prompt_name: Optional[str]
    input_type: Optional[str]
    query: bool
    npartitions: int

    def description(self) -> Dict[str, Any]:
        d = asdict(self)
        d["format"] = _FORMAT
        return d

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.description(), sort_keys=True).encode()).hexdigest()[:16]


def _part_name(index: int) -> str:
    return f"part-{index:05d}"


def _write_atomic(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _save_npy(path: Path, array: np.ndarray) -> None:
    _write_atomic(path, lambda f: np.save(f, array, allow_pickle=False))


def _save_json(path: Path, value: Any) -> None:
    _write_atomic(path, lambda f: f.write(json.dumps(value, indent=1).encode()))


def _plain(value: Any) -> Any:
    """An id as JSON can hold it (numpy scalars to Python's)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _rows(part: Any, index: int, job: _Job) -> Tuple[List[str], List[Any]]:
    """The texts and ids of one partition; a row whose text is not a str is an InputError naming
    the partition and the row."""
    texts: List[Any]
    ids: List[Any]
    if hasattr(part, "iloc"):  # pandas
        if hasattr(part, "columns"):
            if job.column is None:
                raise ArgumentError("a DataFrame needs column= (the text column)")
            texts = part[job.column].tolist()
            ids = part[job.id_column].tolist() if job.id_column else part.index.tolist()
        else:
            texts = part.tolist()
            ids = part.index.tolist()
    else:  # a Bag's partition: str, (id, text) or {"id": ..., "text": ...}
        texts, ids = [], []
        for row, item in enumerate(part):
            if isinstance(item, dict):
                key = job.column or "text"
                if key not in item:
                    raise InputError(f"partition {index}, row {row}: no {key!r} in {sorted(item)!r}")
                texts.append(item[key])
                ids.append(item.get(job.id_column or "id", f"{index}:{row}"))
            elif isinstance(item, (tuple, list)) and len(item) == 2:
                ids.append(item[0])
                texts.append(item[1])
            else:
                texts.append(item)
                ids.append(f"{index}:{row}")
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(
                f"partition {index}, row {row} (id {_plain(ids[row])!r}): the text is "
                f"{type(text).__name__}, not str"
            )
    return texts, [_plain(i) for i in ids]


def _done_record(out: Path, index: int, fingerprint: str) -> Optional[Dict[str, Any]]:
    """The partition's done record when it is complete for this job (its files all there)."""
    try:
        record = json.loads((out / f"{_part_name(index)}.done.json").read_text())
    except (OSError, ValueError):
        return None
    if record.get("job") != fingerprint:
        return None
    for name, size in record.get("files", {}).items():
        try:
            if (out / name).stat().st_size != size:
                return None
        except OSError:
            return None
    return record


def _embed_partition(part: Any, index: int, out_dir: str, job: _Job) -> Dict[str, Any]:
    out = Path(out_dir)
    fingerprint = job.fingerprint()
    done = _done_record(out, index, fingerprint)
    if done is not None:  # a retried task whose first run finished
        return dict(done, computed=False)
    texts, ids = _rows(part, index, job)
    model = _model_for(job.spec)
    name = _part_name(index)
    files: Dict[str, np.ndarray] = {}
    try:
        if job.spec.kind == "dense":
            files[f"{name}.npy"] = model.embed(
                texts, job.batch_size, prompt_name=job.prompt_name, input_type=job.input_type
            )
        elif job.spec.kind == "sparse":
            vectors: List[SparseEmbedding] = model.embed(
                texts, job.batch_size, prompt_name=job.prompt_name, input_type=job.input_type
            )
            files[f"{name}.indices.npy"] = _concat([v.indices for v in vectors], np.uint32)
            files[f"{name}.values.npy"] = _concat([v.values for v in vectors], np.float32)
            files[f"{name}.offsets.npy"] = _offsets([len(v.indices) for v in vectors])
        else:
            rows = (model.query_embed if job.query else model.embed)(texts, job.batch_size)
            files[f"{name}.npy"] = (
                np.concatenate(rows) if rows else np.zeros((0, model.dim), np.float32)
            )
            files[f"{name}.offsets.npy"] = _offsets([len(r) for r in rows])
    except WardenError as e:
        raise type(e)(f"partition {index}: {e}") from None
    sizes: Dict[str, int] = {}
    for file_name, array in files.items():
        _save_npy(out / file_name, array)
        sizes[file_name] = (out / file_name).stat().st_size
    _save_json(out / f"{name}.ids.json", ids)
    sizes[f"{name}.ids.json"] = (out / f"{name}.ids.json").stat().st_size
    record = {"partition": index, "rows": len(texts), "files": sizes, "job": fingerprint}
    _save_json(out / f"{name}.done.json", record)  # last: the partition is complete
    return dict(record, computed=True)


def _concat(parts: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def _offsets(lengths: Sequence[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def _partitions(data: Any) -> List[Any]:
    try:
        import dask.bag as db
        import dask.dataframe as dd
    except ImportError as e:  # pragma: no cover
        raise ArgumentError("warden.dask needs Dask (python3-dask, python3-distributed)") from e
    if isinstance(data, (db.Bag, dd.DataFrame, dd.Series)):
        return list(data.to_delayed())
    raise ArgumentError(f"give a dask Bag, DataFrame or Series of texts, not {type(data).__name__}")


def embed_corpus(
    data: Any,
    out_dir: Union[str, os.PathLike],
    *,
    model: Optional[str] = None,
    kind: str = "dense",
    column: Optional[str] = None,
    id_column: Optional[str] = None,
    dtype: str = "float32",
    threads: Optional[int] = None,
    pooling: Optional[str] = None,
    batch_size: int = 32,
    prompt_name: Optional[str] = None,
    input_type: Optional[str] = None,
    query: bool = False,
    client: Any = None,
    overwrite: bool = False,
) -> Dict[str, Any]:
    """Embeds every text of ``data`` into ``out_dir``, partition by partition, and returns the manifest.

    Args:
        data: a ``dask.bag.Bag`` (of str, ``(id, text)`` pairs or dicts with ``"text"`` and ``"id"``),
            a ``dask.dataframe.Series`` of str (ids: its index) or a ``DataFrame`` with ``column``
            (ids: ``id_column``, else the index).
        out_dir: where the partitions and the manifest go (created).
        model, dtype, threads, pooling: the model each worker process loads once (threads: per worker).
        kind: ``"dense"``, ``"sparse"`` (SPLADE, bge-m3) or ``"multi"`` (ColBERT, bge-m3).
        batch_size, prompt_name, input_type: as :meth:`warden.TextEmbedding.embed`; ``query``:
            token vectors encoded as queries.
        client: a ``distributed.Client`` (default: the current one, if any; else, or with ``False``,
            Dask's configured scheduler in this process).
        overwrite: start again when ``out_dir`` holds another job's partitions (else an ArgumentError).

    A rerun of the same job skips the partitions already done (a killed run, a failed row fixed).
    A text that is not a str raises :class:`warden.InputError` naming its partition and row.
    Returns the manifest: ``{"job", "partitions": [{"partition", "rows", "files", "computed"}], "rows"}``.
    """
    if kind not in _KINDS:
        raise ArgumentError(f"kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    parts = _partitions(data)
    job = _Job(
        spec=ModelSpec(model=model, kind=kind, dtype=dtype, threads=threads, pooling=pooling),
        column=column,
        id_column=id_column,
        batch_size=batch_size,
        prompt_name=prompt_name,
        input_type=input_type,
        query=query,
        npartitions=len(parts),
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _start(out, job, overwrite)
    fingerprint = job.fingerprint()

    import dask

    records: Dict[int, Dict[str, Any]] = {}
    tasks = []
    for index, part in enumerate(parts):
        done = _done_record(out, index, fingerprint)
        if done is not None:
            records[index] = dict(done, computed=False)
            continue
        # Keyed by what it computes (the partition's own key included): a rerun on changed data
        # is a new task, not the scheduler's memory of an earlier one (an error, say).
        tasks.append(dask.delayed(_embed_partition, pure=True)(part, index, str(out), job))
    if tasks:
        if client is None:
            client = _current_client()
        if client is not None and client is not False:
            client.register_worker_plugin(WardenModelPlugin(job.spec), name=f"warden-model-{fingerprint}")
            results = client.gather(client.compute(tasks))
        else:
            results = dask.compute(*tasks)
        for r in results:
            records[r["partition"]] = r
    manifest = {
        "format": _FORMAT,
        "job": job.description(),
        "rows": sum(r["rows"] for r in records.values()),
        "partitions": [records[i] for i in sorted(records)],
    }
    _save_json(out / "manifest.json", manifest)
    return manifest


def _current_client() -> Any:
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _start(out: Path, job: _Job, overwrite: bool) -> None:
    """Records the job in job.json; another job's partitions are an error unless overwrite."""
    path = out / "job.json"
    description = job.description()
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        previous = None
    if previous is not None and previous != json.loads(json.dumps(description)):  # as JSON reads it back
        if not overwrite:
            raise ArgumentError(
                f"{out} holds another job's outputs ({path}); pass overwrite=True or another folder"
            )
        for f in out.glob("part-*"):
            f.unlink()
        (out / "manifest.json").unlink(missing_ok=True)
    _save_json(path, description)


def load(out_dir: Union[str, os.PathLike]) -> Tuple[List[Any], Any]:
    """The ids and vectors a finished :func:`embed_corpus` wrote, in partition order: a
    ``(rows, dim)`` array (dense), a list of :class:`warden.SparseEmbedding` (sparse) or a list
    of ``(tokens, dim)`` arrays (multi)."""
    out = Path(out_dir)
    manifest = json.loads((out / "manifest.json").read_text())
    kind = manifest["job"]["spec"]["kind"]
    ids: List[Any] = []
    dense: List[np.ndarray] = []
    items: List[Any] = []
    for p in manifest["partitions"]:
        name = _part_name(p["partition"])
        ids.extend(json.loads((out / f"{name}.ids.json").read_text()))
        if kind == "dense":
            dense.append(np.load(out / f"{name}.npy"))
            continue
        offsets = np.load(out / f"{name}.offsets.npy")
        if kind == "sparse":
            indices = np.load(out / f"{name}.indices.npy")
            values = np.load(out / f"{name}.values.npy")
            items.extend(
                SparseEmbedding(indices=indices[a:b], values=values[a:b]) for a, b in zip(offsets[:-1], offsets[1:])
            )
        else:
            rows = np.load(out / f"{name}.npy")
            items.extend(rows[a:b] for a, b in zip(offsets[:-1], offsets[1:]))
    if kind == "dense":
        return ids, (np.concatenate(dense) if dense else np.zeros((0, 0), np.float32))
    return ids, items
