#!/usr/bin/env python3
"""Markdown table of bench/run_load's JSON lines (build/bench-results/load-<model>.jsonl): per
model, one row per warden-load run, and the server's three load goals checked against the figures:
server overhead at 50 clients (server inputs/s against the engine's own, embedder_bench on
the same texts), p99 at 200 clients within 2x of p99 at 50, and no errors but 429/504."""

import json
import os
import sys


def ms(us):
    return f"{us / 1000:.1f}"


def main():
    for path in sys.argv[1:]:
        name = os.path.basename(path).removeprefix("load-").removesuffix(".jsonl")
        rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        engine = {r["batch"]: r for r in rows if r["run"] == "engine"}
        after = [r for r in rows if r["run"] == "engine-after-50"]
        wrk = [r for r in rows if r["run"] == "wrk"]
        runs = [r for r in rows if not r["run"].startswith("engine") and r["run"] != "wrk"]
        if not runs:
            continue
        batch = runs[0]["batch"]
        eng = engine.get(batch)
        best = max(engine.values(), key=lambda r: r["inputs_per_s"]) if engine else None
        head = f"\n### {name} ({batch} input{'s' if batch > 1 else ''} per request"
        if eng:
            head += f"; engine without HTTP: {eng['inputs_per_s']:.1f} inputs/s at batch {batch}"
            if best and best["batch"] != batch:
                head += f", {best['inputs_per_s']:.1f} at batch {best['batch']}"
            head += f", {eng['threads']} threads"
        print(head + ")\n")
        print("| run | clients | req/s | inputs/s | p50 ms | p95 ms | p99 ms | max ms | 200 | 429 | 504 | other "
              "| conn/io errors | timeouts | queue ms | inference ms |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in runs:
            lat, st, err = r["latency_us"], r["status"], r["errors"]
            timing = r.get("server_timing_ms_median", {})
            clients = str(r["connections"])
            if r["mode"] == "open":
                clients += f" (open loop, {r['rate_offered']:.0f} req/s offered)"
            print(f"| {r['run']} | {clients} | {r['rps']:.1f} | {r['rps'] * batch:.1f} | {ms(lat['p50'])} | "
                  f"{ms(lat['p95'])} | {ms(lat['p99'])} | {ms(lat['max'])} | {st['200']} | {st['429']} | "
                  f"{st['504']} | {st['other']} | {err['connect'] + err['io']} | "
                  f"{err['timeout'] + err['backlog_timeout']} | {timing.get('x-queue-time', '—')} | "
                  f"{timing.get('x-inference-time', '—')} |")

        print()
        closed = {r["connections"]: r for r in runs if r["run"] == "closed"}
        if 50 in closed and eng:
            # The engine ran before the closed-loop runs and again right after the 50-client
            # run; their mean is the reference, and both are shown so that a machine whose
            # load changed in between is seen, not averaged away silently.
            refs = [eng["inputs_per_s"]] + [r["inputs_per_s"] for r in after]
            ref = sum(refs) / len(refs)
            server = closed[50]["rps"] * batch
            ratio = server / ref
            verdict = (f"overhead {100 * (1 - ratio):.0f}%" if ratio <= 1
                       else "faster than the engine at this batch size: the server batched, or the machine's load changed")
            line = (f"* Server at 50 clients: {server:.1f} inputs/s = {ratio:.2f}× the engine's {ref:.1f} at batch {batch} "
                    f"(mean of {', '.join(f'{x:.1f}' for x in refs)}; {verdict}; goal: overhead ≤ 10%)")
            if best and best["batch"] != batch:
                line += (f"; {server / best['inputs_per_s']:.2f}× its best "
                         f"({best['inputs_per_s']:.1f} at batch {best['batch']})")
            print(line)
        for w in wrk:
            line = (f"* wrk cross-check at {w['connections']} clients: {w['rps']:.1f} req/s, p50 {ms(w['p50_us'])} ms, "
                    f"p99 {ms(w['p99_us'])} ms, errors {w['errors']}")
            if w["connections"] in closed:
                c = closed[w["connections"]]
                line += (f" (warden-load just before: {c['rps']:.1f} req/s, p50 {ms(c['latency_us']['p50'])} ms, "
                         f"p99 {ms(c['latency_us']['p99'])} ms)")
            print(line)
        if 50 in closed and 200 in closed and closed[50]["latency_us"]["p99"]:
            x = closed[200]["latency_us"]["p99"] / closed[50]["latency_us"]["p99"]
            print(f"* p99 at 200 clients ÷ p99 at 50: {x:.2f}× (goal ≤ 2×)")
        bad = sum(r["status"]["other"] + sum(r["errors"].values()) for r in runs)
        print(f"* Answers other than 200/429/504, connection errors and timeouts, all runs: {bad} (goal 0)")


if __name__ == "__main__":
    main()
