"""warden.dask on a real distributed.LocalCluster: two worker processes on loopback, the model
loaded once per worker, results identical to one process, a worker killed mid-run (SIGKILL) and
restarted by its nanny losing and duplicating nothing, a rerun resuming, a bad row named."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")  # noqa: F841 - python3-dask is installed by scripts/setup
import dask.bag as db
import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster

import warden
import warden.dask as wd

MODEL = "--arch bert --preset bge-small --seed 7 --out DIR"


def corpus(n: int) -> list:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    return [" ".join(words[(i * 7 + k) % len(words)] for k in range(5 + i % 23)) for i in range(n)]


@pytest.fixture(scope="module")
def model_dir(make_model) -> str:
    return make_model(MODEL)


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, worker_dashboard_address=None, silence_logs=40) as cluster:
        with Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def reference(tmp_path_factory, model_dir):
    """One process, Dask's synchronous scheduler: what the cluster must reproduce."""
    texts = corpus(960)
    out = tmp_path_factory.mktemp("single")
    with dask.config.set(scheduler="synchronous"):
        manifest = wd.embed_corpus(db.from_sequence(texts, npartitions=12), out, model=model_dir, threads=1,
                                   client=False)
    ids, vectors = wd.load(out)
    assert manifest["rows"] == len(texts) == len(ids)
    assert np.array_equal(vectors, warden.TextEmbedding(model_dir).embed(texts))
    return texts, ids, vectors


def test_cluster_equals_one_process_and_loads_once_per_worker(client, reference, model_dir, tmp_path) -> None:
    texts, ids, vectors = reference
    manifest = wd.embed_corpus(db.from_sequence(texts, npartitions=12), tmp_path, model=model_dir, threads=1,
                               client=client)
    got_ids, got = wd.load(tmp_path)
    assert got_ids == ids and np.array_equal(got, vectors)
    assert all(p["computed"] for p in manifest["partitions"])
    loads = client.run(wd.loads_in_this_process)
    assert sorted(loads.values()) == [1, 1], loads  # once per worker process, not per partition


def test_a_killed_worker_loses_and_duplicates_nothing(client, reference, model_dir, tmp_path) -> None:
    texts, ids, vectors = reference
    bigger = texts * 3  # 36 partitions: long enough to kill a worker in the middle
    result = {}

    def run() -> None:
        try:
            result["manifest"] = wd.embed_corpus(db.from_sequence(bigger, npartitions=36), tmp_path,
                                                 model=model_dir, threads=1, client=client)
        except Exception as e:  # noqa: BLE001 - asserted below
            result["error"] = e

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("part-*.done.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    done_at_kill = len(list(tmp_path.glob("part-*.done.json")))
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    t.join(timeout=300)
    assert not t.is_alive()
    assert "error" not in result, result.get("error")
    assert 3 <= done_at_kill < 36, f"the kill came at {done_at_kill} of 36 partitions"
    manifest = result["manifest"]
    assert manifest["rows"] == len(bigger)
    assert [p["partition"] for p in manifest["partitions"]] == list(range(36))
    assert len(list(tmp_path.glob("part-*.done.json"))) == 36
    assert not list(tmp_path.glob(".*.tmp")) or all(  # a partial file of the killed task, never renamed
        not f.name.endswith(".done.json.tmp") for f in tmp_path.glob(".*.tmp"))
    got_ids, got = wd.load(tmp_path)
    assert len(got_ids) == len(bigger) and len(set(got_ids)) == len(bigger)
    assert np.array_equal(got, np.concatenate([vectors] * 3))
    # The nanny restarted the worker, which loaded the model once more.
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert victim not in client.run(os.getpid).values()


def test_a_rerun_resumes_without_recomputing(client, reference, model_dir, tmp_path) -> None:
    texts, ids, vectors = reference
    bag = db.from_sequence(texts, npartitions=12)
    wd.embed_corpus(bag, tmp_path, model=model_dir, threads=1, client=client)
    stamps = {f.name: f.stat().st_mtime_ns for f in tmp_path.glob("part-*.npy")}
    for i in (3, 8):  # as if the run had died before these two finished
        (tmp_path / f"part-{i:05d}.done.json").unlink()
        (tmp_path / f"part-{i:05d}.npy").unlink()
    (tmp_path / "manifest.json").unlink()
    manifest = wd.embed_corpus(bag, tmp_path, model=model_dir, threads=1, client=client)
    assert [p["partition"] for p in manifest["partitions"] if p["computed"]] == [3, 8]
    for name, stamp in stamps.items():
        if name not in ("part-00003.npy", "part-00008.npy"):
            assert (tmp_path / name).stat().st_mtime_ns == stamp, f"{name} was recomputed"
    got_ids, got = wd.load(tmp_path)
    assert got_ids == ids and np.array_equal(got, vectors)
    # Another job in the same folder is refused rather than mixed in.
    with pytest.raises(warden.ArgumentError, match="another job"):
        wd.embed_corpus(bag, tmp_path, model=model_dir, threads=1, batch_size=8, client=client)


def test_a_malformed_row_is_named(client, model_dir, tmp_path) -> None:
    frame = pd.DataFrame({"doc": [f"id-{i}" for i in range(40)], "body": corpus(40)})
    frame.loc[23, "body"] = None
    ddf = dd.from_pandas(frame, npartitions=4)  # rows 20-29 in partition 2
    with pytest.raises(warden.InputError, match=r"partition 2, row 3 \(id 'id-23'\): the text is NoneType"):
        wd.embed_corpus(ddf, tmp_path, model=model_dir, threads=1, column="body", id_column="doc", client=client)
    # The other partitions that finished are kept; fixing the row and rerunning completes the job.
    frame.loc[23, "body"] = "fixed"
    manifest = wd.embed_corpus(dd.from_pandas(frame, npartitions=4), tmp_path, model=model_dir, threads=1,
                               column="body", id_column="doc", client=client)
    got_ids, got = wd.load(tmp_path)
    assert got_ids == frame["doc"].tolist()
    assert np.array_equal(got, warden.TextEmbedding(model_dir).embed(frame["body"].tolist()))
    assert manifest["rows"] == 40


def test_sparse_and_multi_vector_outputs(client, make_model, tmp_path) -> None:
    texts = corpus(50)
    splade = make_model("--arch bert --preset tiny --seed 1 --splade --out DIR")
    wd.embed_corpus(db.from_sequence(texts, npartitions=3), tmp_path / "s", model=splade, kind="sparse",
                    threads=1, client=client)
    _, sparse = wd.load(tmp_path / "s")
    direct = warden.SparseTextEmbedding(splade).embed(texts)
    assert all(np.array_equal(a.indices, b.indices) and np.array_equal(a.values, b.values)
               for a, b in zip(sparse, direct))
    colbert = make_model("--arch bert --preset tiny --seed 1 --colbert --out DIR")
    wd.embed_corpus(db.from_sequence(texts, npartitions=3), tmp_path / "m", model=colbert, kind="multi",
                    threads=1, query=True, client=client)
    _, multi = wd.load(tmp_path / "m")
    direct = warden.LateInteractionTextEmbedding(colbert).query_embed(texts)
    assert all(np.array_equal(a, b) for a, b in zip(multi, direct))
