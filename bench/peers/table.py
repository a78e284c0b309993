#!/usr/bin/env python3
"""Markdown table of engine benchmark JSON lines (engine_bench, ort_bench.mjs, torch_bench.py):
per model and grid point, each engine's median latency and tokens/s, and Warden's ratios.
When an engine has several rounds for a point, the round with the median latency is used."""

import json
import os
import statistics
import sys


def main():
    for path in sys.argv[1:]:
        name = os.path.basename(path).removeprefix("engine-").removesuffix(".jsonl")
        rows, peak = {}, None
        for line in open(path, encoding="utf-8"):
            r = json.loads(line)
            if "peak_gflops" in r:
                peak = r["peak_gflops"]
            if "batch" not in r:
                continue
            # The fp32 comparison only: int8 ORT variants and Warden's other dtypes belong to
            # bench/peers/dtype_table.py.
            if r.get("variant", "fp32") != "fp32" or r.get("dtype", "float32") != "float32":
                continue
            rows.setdefault((r["batch"], r["seq"]), {}).setdefault(r["engine"], []).append(r)
        print(f"\n### {name}" + (f" (measured peak {peak:.0f} GFLOP/s)" if peak else "") + "\n")
        print("| batch x seq | Warden ms | ORT ms | PyTorch ms | Warden tok/s | ORT tok/s | PyTorch tok/s "
              "| Warden/ORT throughput | Warden/ORT latency | Warden % of peak |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (b, s), e in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            def pick(engine):
                runs = e.get(engine)
                if not runs:
                    return None
                med = statistics.median_low([r["median_ms"] for r in runs])
                return next(r for r in runs if r["median_ms"] == med)
            w, o, t = pick("warden"), pick("onnxruntime"), pick("pytorch")
            f = lambda r, k, fmt: (fmt.format(r[k]) if r else "—")  # noqa: E731
            ratio = f"{w['tokens_per_s'] / o['tokens_per_s']:.2f}×" if w and o else "—"
            lat = f"{w['median_ms'] / o['median_ms']:.2f}×" if w and o else "—"
            peak_pct = f"{100 * w['peak_fraction']:.0f}%" if w and w.get("peak_fraction") else "—"
            print(f"| {b} x {s} | {f(w, 'median_ms', '{:.2f}')} | {f(o, 'median_ms', '{:.2f}')} | "
                  f"{f(t, 'median_ms', '{:.2f}')} | {f(w, 'tokens_per_s', '{:.0f}')} | "
                  f"{f(o, 'tokens_per_s', '{:.0f}')} | {f(t, 'tokens_per_s', '{:.0f}')} | {ratio} | {lat} | {peak_pct} |")


if __name__ == "__main__":
    main()
