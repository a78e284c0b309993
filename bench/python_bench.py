#!/usr/bin/python3
"""The Python package's figures (bench/run_python runs it; docs/benchmarks.md, "The Python package"):

  bulk      in-process TextEmbedding.embed of a corpus against `warden embed --input` (the CLI's
            bulk job) on the same model and threads, alternated ROUNDS times; both outputs are
            compared bit for bit.
  overhead  one short text: a Python call of embed() against its C++ part timed inside the
            module (Embedder._time_calls: the same code without the interpreter), medians of
            CALLS calls each, alternated ROUNDS times.
  dask      warden.dask.embed_corpus on a distributed.LocalCluster of 1 and 2 worker processes
            (threads split between them), and the same corpus in one process for reference.
  peer      the fastembed-style ONNX Runtime pipeline (bench/peers/fastembed_style.mjs) on the
            same weights, when an ONNX export is given.

    /usr/bin/python3 bench/python_bench.py --warden BIN --model NAME=SOURCE ... --corpus FILE [--onnx NAME=FILE]

Prints one JSON line per measurement on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import warden


def emit(**kw) -> None:
    print(json.dumps(kw), flush=True)


def cli_bulk(warden_bin: str, source: str, threads: int, corpus: Path, out: Path) -> float:
    flags = ["--model", source]
    start = time.perf_counter()
    subprocess.run([warden_bin, "embed", *flags, "--threads", str(threads), "--input", str(corpus), "--output",
                    str(out), "--progress", "none", "--overwrite"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_bulk(args, name: str, source: str, texts, tmp: Path) -> None:
    model = warden.TextEmbedding(source, threads=args.threads)
    model.embed(texts[:200])  # warm: pages of the weights, the pool's threads
    cli_s, py_s = [], []
    for _ in range(args.rounds):
        cli_s.append(cli_bulk(args.warden, source, args.threads, args.corpus, tmp / "cli.npy"))
        start = time.perf_counter()
        rows = model.embed(texts)
        py_s.append(time.perf_counter() - start)
    same = bool(np.array_equal(rows, np.load(tmp / "cli.npy")))
    n = len(texts)
    emit(bench="bulk", model=name, threads=args.threads, texts=n, cli_s=cli_s, python_s=py_s,
         cli_per_s=n / statistics.median(cli_s), python_per_s=n / statistics.median(py_s),
         ratio=statistics.median(cli_s) / statistics.median(py_s), identical=same)


def bench_overhead(args, name: str, source: str) -> None:
    model = warden.TextEmbedding(source, threads=args.threads)
    text = ["how do I ignore whitespace in git diff?"]
    for _ in range(200):
        model.embed(text)
    py_med, cxx_med = [], []
    for _ in range(args.rounds):
        ns = []
        for _ in range(args.calls):
            start = time.perf_counter_ns()
            model.embed(text)
            ns.append(time.perf_counter_ns() - start)
        py_med.append(statistics.median(ns))
        cxx_med.append(statistics.median(model._model._time_calls(text, 32, args.calls)))
    emit(bench="overhead", model=name, threads=args.threads, calls=args.calls,
         python_call_us=[v / 1000 for v in py_med], cxx_call_us=[v / 1000 for v in cxx_med],
         overhead_us=statistics.median([(p - c) / 1000 for p, c in zip(py_med, cxx_med)]))


def bench_dask(args, name: str, source: str, texts, tmp: Path) -> None:
    import dask.bag as db
    from distributed import Client, LocalCluster

    import warden.dask as wd

    for workers in (1, 2):
        per_worker = max(1, args.threads // workers)
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            runs = []
            for r in range(args.rounds):
                out = tmp / f"dask-{name}-{workers}-{r}"
                bag = db.from_sequence(texts, npartitions=8 * workers)
                start = time.perf_counter()
                wd.embed_corpus(bag, out, model=source, threads=per_worker, client=client)
                runs.append(time.perf_counter() - start)
            emit(bench="dask", model=name, workers=workers, threads_per_worker=per_worker, texts=len(texts),
                 seconds=runs, per_s=len(texts) / statistics.median(runs))


def bench_peer(args, name: str, onnx: str, source: str, texts, tmp: Path) -> None:
    """The peer on the first PEER_TEXTS texts (it is slow), then Warden in process on the same texts."""
    texts = texts[: args.peer_texts]
    corpus = tmp / "peer.txt"
    corpus.write_text("\n".join(texts) + "\n")
    out = subprocess.run(["node", str(Path(__file__).parent / "peers" / "fastembed_style.mjs"), onnx,
                          str(args.threads), str(corpus), str(args.rounds)], check=True, capture_output=True,
                         text=True).stdout
    peer = json.loads(out.splitlines()[-1])
    model = warden.TextEmbedding(source, threads=args.threads)
    model.embed(texts[:200])
    ours = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        model.embed(texts)
        ours.append(time.perf_counter() - start)
    emit(**dict(peer, model=name, warden_seconds=ours, warden_per_s=len(texts) / statistics.median(ours),
                ratio=peer["per_s"] and (len(texts) / statistics.median(ours)) / peer["per_s"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warden", required=True)
    ap.add_argument("--model", action="append", required=True, help="NAME=SOURCE")
    ap.add_argument("--onnx", action="append", default=[], help="NAME=MODEL.onnx (the peer, same weights)")
    ap.add_argument("--overhead-model", action="append", default=[],
                    help="NAME=SOURCE timed for the per-call overhead only (the hashing embedder: an engine of µs)")
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--only", default="bulk,overhead,dask,peer")
    ap.add_argument("--peer-texts", type=int, default=2000, help="texts the (slow) peer embeds")
    args = ap.parse_args()
    texts = args.corpus.read_text().splitlines()
    only = set(args.only.split(","))
    models = dict(m.split("=", 1) for m in args.model)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "overhead" in only:
            for name, source in (m.split("=", 1) for m in args.overhead_model):
                bench_overhead(args, name, source)
        for name, source in models.items():
            if "overhead" in only:
                bench_overhead(args, name, source)
            if "bulk" in only:
                bench_bulk(args, name, source, texts, tmp)
            if "dask" in only:
                bench_dask(args, name, source, texts, tmp)
        if "peer" in only:
            for name, onnx in (o.split("=", 1) for o in args.onnx):
                bench_peer(args, name, onnx, models[name], texts, tmp)


if __name__ == "__main__":
    sys.exit(main())
