#!/usr/bin/env python3
"""bench/report.py (the benchmark report's renderer) on the sample results in
tests/data/bench-report/ (trimmed copies of real `bench/run` runs: --quick for most stages, full for engine and dtypes): renders, without
charts (no gnuplot needed), into temporary copies of a small docs/benchmarks.md and README.md,
and checks that the generated sections come out between their markers with a table per stage,
that the hand-written text around them is untouched, and that a second run changes nothing.
Under a second."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(ROOT, "tests", "data", "bench-report")

DOCS = """# Benchmarks

Hand-written introduction.

## Tokenizer

Hand-written history and analysis.
"""

README = """# Warden

## What works today

| piece | state |
|---|---|

## Serve it

Hand-written usage.
"""


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        docs, readme = os.path.join(tmp, "docs", "benchmarks.md"), os.path.join(tmp, "README.md")
        os.makedirs(os.path.dirname(docs))
        open(docs, "w", encoding="utf-8").write(DOCS)
        open(readme, "w", encoding="utf-8").write(README)
        cmd = [sys.executable, os.path.join(ROOT, "bench", "report.py"), "--results", RESULTS, "--docs", docs,
               "--readme", readme, "--charts", os.path.join(tmp, "docs", "bench"), "--no-charts"]

        subprocess.run(cmd, check=True)
        d, r = open(docs, encoding="utf-8").read(), open(readme, encoding="utf-8").read()
        for text, begin, end in ((d, "<!-- bench/run: begin -->", "<!-- bench/run: end -->"),
                                 (r, "<!-- bench/run: headline begin -->", "<!-- bench/run: headline end -->")):
            check(text.count(begin) == 1 and text.count(end) == 1, f"one pair of markers {begin}")
            check(text.index(begin) < text.index(end), f"{begin} before its end marker")
        # The docs section sits before the first hand-written "## " section, which stays.
        check(d.index("<!-- bench/run: end -->") < d.index("## Tokenizer\n\nHand-written history"), "docs placement")
        check(d.startswith("# Benchmarks\n\nHand-written introduction.\n"), "docs introduction kept")
        for heading in ("### Engine: throughput vs batch size", "### Tokenizer: Warden vs HuggingFace",
                        "### Server: latency and requests/s vs concurrency", "### Result cache: off vs on",
                        "### Precision: int8 and bf16 vs fp32"):
            check(heading in d, f"docs section {heading!r}")
        for row in ("| batch | Warden seq/s | ONNX Runtime seq/s | PyTorch seq/s | Warden ÷ ORT |",
                    "| tokenizer | Warden MB/s |", "| run | clients | req/s | p50 ms | p99 ms |",
                    "| cache | requests/s |", "| engine | median ms | seq/s | × ORT fp32 |",
                    "| CPU |", "| commit |", "bench/run --quick", "### Machine roofline",
                    "| AMX int8 tiles (tdpbssd) |", "working set (a precision's layers)",
                    "| Warden of roofline |", "| of roofline | rounds |", "% (compute) |", "% (bandwidth) |"):
            check(row in d, f"docs contains {row!r}")
        check("No results yet" not in d, "every stage has results")
        check("![" not in d, "no image links when no chart was drawn")
        # README: a "How fast" section before "Serve it", with the compact table and the machine.
        check(r.index("## How fast") < r.index("<!-- bench/run: headline begin -->") < r.index("## Serve it"),
              "README placement")
        check("| batch | Warden seq/s |" in r and "Measured on " in r, "README table and machine line")
        check(r.endswith("## Serve it\n\nHand-written usage.\n"), "README rest kept")

        subprocess.run(cmd, check=True)
        check(open(docs, encoding="utf-8").read() == d, "docs unchanged by a second run")
        check(open(readme, encoding="utf-8").read() == r, "README unchanged by a second run")
    print("bench/report.py: ok")


if __name__ == "__main__":
    main()
