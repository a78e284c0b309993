#!/usr/bin/env python3
"""A corpus embedded on a Dask cluster: a text file (one document per line) as a Bag, two worker
processes (or a scheduler's address), one model per worker, outputs per partition that a rerun
resumes (docs/scale-out.md).

    python3 dask_corpus.py --model BAAI/bge-small-en-v1.5 corpus.txt out/
    python3 dask_corpus.py --scheduler tcp://10.0.0.5:8786 --model ... corpus.txt out/
"""

from __future__ import annotations

import argparse
import time

import dask.bag as db
from distributed import Client, LocalCluster

from warden.dask import embed_corpus, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="the embedder (default: use-lite)")
    ap.add_argument("--scheduler", help="a running scheduler's address (default: a local cluster)")
    ap.add_argument("--workers", type=int, default=2, help="local cluster: worker processes")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("corpus")
    ap.add_argument("out")
    args = ap.parse_args()

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    lines = db.read_text(args.corpus, blocksize=None).map(str.rstrip).filter(bool)
    texts = lines.repartition(args.partitions)
    start = time.perf_counter()
    manifest = embed_corpus(texts, args.out, model=args.model, threads=1, client=client)
    seconds = time.perf_counter() - start
    computed = sum(p["computed"] for p in manifest["partitions"])
    print(f"{manifest['rows']} texts in {len(manifest['partitions'])} partitions "
          f"({computed} computed, the rest resumed) in {seconds:.1f} s")
    ids, vectors = load(args.out)
    print(f"loaded {len(ids)} ids and vectors of shape {vectors.shape}")
    client.close()


if __name__ == "__main__":
    main()
