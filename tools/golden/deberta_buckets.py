#!/usr/bin/env python3
"""DeBERTa-v2's relative-position buckets, exactly as HF transformers computes them.

`make_log_bucket_position` and `build_relative_position` below are the arithmetic of HF
`models/deberta_v2/modeling_deberta_v2.py` (the functions of the same names): the relative
position r = i - j is kept when |r| <= mid = bucket_size // 2, else it becomes
sign(r) * (ceil(log(|r| / mid) / log((max_position - 1) / mid) * (mid - 1)) + mid), all in
torch float32 (`abs_pos / mid` is a float32 tensor, `torch.tensor((max_position - 1) / mid)`
a float32 scalar). Upstream builds the whole [n x n] matrix for a sequence of n tokens, so
this script does too, for every n from 1 to the maximum, and checks that the bucket depends
on r alone (it would not if torch's vectorised and scalar log disagreed). It writes one
bucket per r in [-(max_position - 1), max_position - 1] for each (bucket_size, max_position)
configuration the public DeBERTa-v2/v3 checkpoints use.

Run with Debian's torch: /usr/bin/python3 tools/golden/deberta_buckets.py > tests/data/deberta-buckets.json
"""
import json
import sys

import torch

# (position_buckets, max_relative_positions or max_position_embeddings)
CONFIGS = [(256, 512), (128, 512), (64, 512), (256, 1024)]


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where(
        (relative_pos < mid) & (relative_pos > -mid),
        torch.tensor(mid - 1).type_as(relative_pos),
        torch.abs(relative_pos),
    )
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    bucket_pos = torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)
    return bucket_pos


def build_relative_position(query_size, key_size, bucket_size, max_position):
    q_ids = torch.arange(0, query_size)
    k_ids = torch.arange(0, key_size)
    rel_pos_ids = q_ids[:, None] - k_ids[None, :]
    rel_pos_ids = make_log_bucket_position(rel_pos_ids, bucket_size, max_position)
    return rel_pos_ids.to(torch.long)


def main():
    out = {"torch": torch.__version__, "tables": []}
    for buckets, max_position in CONFIGS:
        table = {}
        for n in range(1, max_position + 1):
            m = build_relative_position(n, n, buckets, max_position)
            r = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).flatten().tolist()
            for rel, b in zip(r, m.flatten().tolist()):
                if table.setdefault(rel, b) != b:
                    sys.exit(f"bucket of r={rel} depends on the length ({n}): {table[rel]} vs {b}")
        rs = list(range(-(max_position - 1), max_position))
        out["tables"].append({"position_buckets": buckets, "max_position": max_position, "first_r": rs[0],
                              "buckets": [table[r] for r in rs]})
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
