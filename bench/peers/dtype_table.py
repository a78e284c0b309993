#!/usr/bin/env python3
"""Markdown table of the dtype comparison (bench/run_dtypes): per model and grid point, Warden
per dtype (engine_bench --dtype; lines tagged "dtype") and ONNX Runtime per model variant
(ort_bench.mjs; lines tagged "variant": fp32, int8, int8-per-channel), each with its median
latency and tokens/s, and its throughput relative to ORT fp32, ORT int8 and Warden float32.
When a row has several rounds for a point, the round with the median latency is used (as in
bench/peers/table.py); "best p10 ms" is the lowest 10th-percentile latency over all rounds, a
figure less swayed by load from elsewhere on a shared machine.

    python3 bench/peers/dtype_table.py build/bench-results/dtypes-*.jsonl
"""

import json
import os
import statistics
import sys

ORDER = {"warden": 0, "onnxruntime": 1, "pytorch": 2}
DTYPES = {"float32": 0, "bfloat16": 1, "int8": 2}
VARIANTS = {"fp32": 0, "int8": 1, "int8-per-channel": 2}


def label(r):
    if r["engine"] == "warden":
        return ("warden", r.get("dtype", "float32"))
    if r["engine"] == "onnxruntime":
        return ("onnxruntime", r.get("variant", "fp32"))
    return (r["engine"], "")


def rank(key):
    engine, kind = key
    return (ORDER.get(engine, 9), DTYPES.get(kind, VARIANTS.get(kind, 9)), kind)


def name(key):
    engine, kind = key
    return {"warden": "Warden", "onnxruntime": "ORT", "pytorch": "PyTorch"}.get(engine, engine) + \
        (f" {kind}" if kind else "")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        title = os.path.basename(path).removeprefix("dtypes-").removesuffix(".jsonl")
        points = {}
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "batch" not in r:
                continue
            points.setdefault((r["batch"], r["seq"]), {}).setdefault(label(r), []).append(r)
        for (b, s), rows in sorted(points.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            picked = {}
            for key, runs in rows.items():
                med = statistics.median_low([r["median_ms"] for r in runs])
                picked[key] = (next(r for r in runs if r["median_ms"] == med), len(runs))
            refs = [("ORT fp32", ("onnxruntime", "fp32")), ("ORT int8", ("onnxruntime", "int8")),
                    ("Warden float32", ("warden", "float32"))]
            refs = [(n, k) for n, k in refs if k in picked]
            print(f"\n### {title}, batch {b} x seq {s}\n")
            print("| engine | rounds | median ms | best p10 ms | tokens/s | "
                  + " | ".join(f"× {n}" for n, _ in refs) + " |")
            print("|---|---|---|---|---|" + "---|" * len(refs))
            for key in sorted(picked, key=rank):
                r, rounds = picked[key]
                ratios = [f"{r['tokens_per_s'] / picked[k][0]['tokens_per_s']:.2f}×" for _, k in refs]
                p10 = min((x.get("p10_ms", x["median_ms"]) for x in rows[key]), default=r["median_ms"])
                print(f"| {name(key)} | {rounds} | {r['median_ms']:.1f} | {p10:.1f} | {r['tokens_per_s']:.0f} | "
                      + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
