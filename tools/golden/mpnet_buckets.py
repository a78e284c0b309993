#!/usr/bin/env python3
"""MPNet's relative-position buckets, exactly as HF transformers computes them.

`relative_position_bucket` (reference.py's mpnet_relative_position_bucket) is the arithmetic of HF `models/mpnet/modeling_mpnet.py`
(MPNetEncoder.relative_position_bucket, a T5-style bidirectional bucketing with 32 buckets and
max_distance 128, which MPNetEncoder.compute_position_bias always uses): n = -(j - i) = i - j,
half the buckets for n < 0, exact buckets below max_exact = 8, then
max_exact + trunc(log(|n| / 8) / log(128 / 8) * 8), capped at 15, in torch float32.
compute_position_bias builds the whole [n x n] matrix of memory - context positions for a
sequence of n tokens, so this script does too, for every n up to MAX_LEN, checks that the
bucket depends on the distance alone, and writes one bucket per relative position
j - i in [-(MAX_LEN - 1), MAX_LEN - 1].

Run with Debian's torch: /usr/bin/python3 tools/golden/mpnet_buckets.py > tests/data/mpnet-buckets.json
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import mpnet_relative_position_bucket as relative_position_bucket  # noqa: E402

MAX_LEN = 1026  # past 514 positions (all-mpnet-base-v2's) and the 128 of max_distance, doubled


def main():
    table = {}
    for n in (list(range(1, 300)) + [512, 514, 777, MAX_LEN]):
        context = torch.arange(n, dtype=torch.long)[:, None]
        memory = torch.arange(n, dtype=torch.long)[None, :]
        rel = memory - context
        buckets = relative_position_bucket(rel)
        for r, b in zip(rel.flatten().tolist(), buckets.flatten().tolist()):
            if table.setdefault(r, b) != b:
                sys.exit(f"bucket of j - i = {r} depends on the length ({n}): {table[r]} vs {b}")
    rs = list(range(-(MAX_LEN - 1), MAX_LEN))
    json.dump({"torch": torch.__version__, "num_buckets": 32, "max_distance": 128, "first_relative_position": rs[0],
               "buckets": [table[r] for r in rs]}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
