"""Several Python threads on one model, the GIL released while it computes, and arrays that own
the C++ buffer they were computed in."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import warden
from warden import _warden

DENSE = "--arch bert --preset bge-small --seed 5 --out DIR"


@pytest.fixture(scope="module")
def model(make_model) -> warden.TextEmbedding:
    return warden.TextEmbedding(make_model(DENSE), threads=2)


def test_threads_share_one_model(model: warden.TextEmbedding) -> None:
    texts = [f"sentence number {i} about {'things ' * (i % 9)}" for i in range(64)]
    expected = model.embed(texts)
    results = {}
    errors = []

    def work(k: int) -> None:
        try:
            for r in range(3):
                part = texts[k::4]
                results[(k, r)] = model.embed(part, batch_size=5)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (k, _), rows in results.items():
        assert np.array_equal(rows, expected[k::4])


def test_the_gil_is_released_while_computing(model: warden.TextEmbedding) -> None:
    texts = ["a longer sentence that keeps the encoder busy for a while " * 6] * 96
    ticks = 0
    running = threading.Event()
    done = threading.Event()

    def embed() -> None:
        running.set()
        model.embed(texts)
        done.set()

    t = threading.Thread(target=embed)
    t.start()
    running.wait()
    start = time.perf_counter()
    while not done.is_set():
        ticks += 1  # pure Python: runs only while the embedding thread has let go of the GIL
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    t.join()
    assert elapsed > 0.05, "the call was too short to tell"
    assert ticks >= 10, f"the main thread ran only {ticks} times in {elapsed:.2f} s"


def test_arrays_own_the_cxx_buffer_without_a_copy(model: warden.TextEmbedding) -> None:
    gc.collect()
    before = _warden._live_buffers()
    rows = model.embed(["one", "two", "three"])
    assert rows.ctypes.data == _warden._last_buffer_address(), "the array is a copy"
    assert not rows.flags.owndata and rows.base is not None  # numpy does not own it: the capsule does
    assert rows.flags.writeable and rows.flags.c_contiguous
    assert _warden._live_buffers() == before + 1
    view = rows[1:]
    del rows
    gc.collect()
    assert _warden._live_buffers() == before + 1  # a view keeps the buffer alive
    assert view.shape == (2, model.dim)
    del view
    gc.collect()
    assert _warden._live_buffers() == before


def test_token_and_sparse_arrays_are_owned_too(make_model) -> None:
    colbert = warden.LateInteractionTextEmbedding(make_model("--arch bert --preset tiny --seed 1 --colbert --out DIR"))
    gc.collect()
    before = _warden._live_buffers()
    m = colbert.embed(["hello world"])[0]
    assert m.ctypes.data == _warden._last_buffer_address() and not m.flags.owndata
    splade = warden.SparseTextEmbedding(make_model("--arch bert --preset tiny --seed 1 --splade --out DIR"))
    v = splade.embed("hello world")
    assert v.values.ctypes.data == _warden._last_buffer_address()
    assert _warden._live_buffers() == before + 3
    del m, v
    gc.collect()
    assert _warden._live_buffers() == before


def test_a_bad_input_in_a_thread_does_not_disturb_the_others(model: warden.TextEmbedding) -> None:
    errors = []

    def bad() -> None:
        try:
            model.embed(["ok", b"bytes"])  # type: ignore[list-item]
        except warden.InputError as e:
            errors.append(e)

    ts = [threading.Thread(target=bad) for _ in range(4)]
    for t in ts:
        t.start()
    good = model.embed(["still fine"])
    for t in ts:
        t.join()
    assert len(errors) == 4 and good.shape == (1, model.dim)


def test_ctrl_c_stops_a_long_call_between_batches(model: warden.TextEmbedding) -> None:
    import os
    import signal

    texts = ["a sentence long enough to take a moment to encode " * 4] * 4000
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        model.embed(texts, batch_size=8)  # minutes of work if it were not stopped
    assert time.perf_counter() - start < 10
    assert model.embed(["still usable"]).shape == (1, model.dim)
