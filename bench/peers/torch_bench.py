#!/usr/bin/python3
"""PyTorch eager (the reference forward pass, tools/golden/reference.py, under
torch.inference_mode) on the same grid as engine_bench, printing the same JSON lines.

    /usr/bin/python3 bench/peers/torch_bench.py MODEL_DIR THREADS BATCHES SEQS MIN_SECONDS
"""

import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "golden"))
import reference  # noqa: E402


def main():
    model_dir = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    batches = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,8,32").split(",")]
    seqs = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "16,128,512").split(",")]
    min_seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    torch.set_num_threads(threads)
    ref = reference.Reference(model_dir, torch.float32)
    print(json.dumps({"engine": "pytorch", "version": torch.__version__, "threads": threads}), flush=True)
    gen = torch.Generator().manual_seed(1)
    for seq in seqs:
        for batch in batches:
            ids = torch.randint(1000, 21000, (batch, seq), generator=gen)
            types = torch.zeros_like(ids)
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                for _ in range(2):
                    ref.forward(ids, types, mask)
                times = []
                start = time.perf_counter()
                while len(times) < 3 or time.perf_counter() - start < min_seconds:
                    t0 = time.perf_counter()
                    ref.forward(ids, types, mask)
                    times.append(time.perf_counter() - t0)
                    if len(times) >= 1000:
                        break
            times.sort()
            med = times[len(times) // 2]
            print(json.dumps({"engine": "pytorch", "batch": batch, "seq": seq,
                              "median_ms": round(med * 1e3, 3),
                              "p10_ms": round(times[len(times) // 10] * 1e3, 3),
                              "p90_ms": round(times[len(times) * 9 // 10] * 1e3, 3),
                              "runs": len(times), "tokens_per_s": round(batch * seq / med)}), flush=True)


if __name__ == "__main__":
    main()
