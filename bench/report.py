#!/usr/bin/env python3
"""The benchmark report's renderer (bench/run calls it; Python 3 standard library only).

    bench/report.py [--results DIR] [--docs docs/benchmarks.md] [--readme README.md]
                    [--charts docs/bench] [--no-charts]
    bench/report.py --results DIR --record STAGE --profile quick|full --status ok|failed
                    --seconds S --command CMD --invocation CMD --threads N

The first form reads the JSON lines the stages wrote in DIR (default
build/bench-results/report: engine-<preset>.jsonl, tokenizer.jsonl, load-<model>.jsonl,
cache.jsonl, dtypes-<preset>.jsonl, and run.json), draws PNG charts with gnuplot (the
pngcairo terminal when there is one, else png; none, with a warning, when gnuplot is missing
or with --no-charts) and replaces two generated sections: the one between
<!-- bench/run: begin --> and <!-- bench/run: end --> in docs/benchmarks.md (inserted
before its first "## " heading when absent) and the one between
<!-- bench/run: headline begin --> and <!-- bench/run: headline end --> in README.md
(inserted, under "## How fast", before "## Serve it" when absent). Everything else in both
files is left as it is, and running it twice gives the same files: all it writes comes from
the results, never from the clock. Takes a second or two.

The second form (bench/run, after each stage) records in DIR/run.json the machine it ran on
(CPU, cores, ISA flags, RAM, OS, compiler, commit, date) and the stage's profile, command,
status and time.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- bench/run: begin -->", "<!-- bench/run: end -->"
HEAD_BEGIN, HEAD_END = "<!-- bench/run: headline begin -->", "<!-- bench/run: headline end -->"
STAGES = ["engine", "tokenizer", "load", "cache", "dtypes"]
COLORS = {"warden": "#1f6fb4", "onnxruntime": "#e8800c", "pytorch": "#3a9a3a", "hf": "#8c8c8c",
          "p50": "#1f6fb4", "p99": "#c0392b", "rps": "#555555"}
ENGINE_NAMES = {"warden": "Warden", "onnxruntime": "ONNX Runtime", "pytorch": "PyTorch"}
TOKENIZER_NAMES = {
    "bert-base-uncased-tokenizer": "BERT WordPiece",
    "unigram-use-vocab-tokenizer": "USE Unigram",
    "unigram-xlmr": "XLM-R Unigram",
    "bpe-roberta": "RoBERTa byte BPE",
}


# ---------------------------------------------------------------- recording (bench/run)

def run(cmd, cwd=ROOT):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine(threads):
    info = {"cores": os.cpu_count(), "threads": threads}
    cpuinfo = open("/proc/cpuinfo", encoding="utf-8").read() if os.path.exists("/proc/cpuinfo") else ""
    m = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M) or re.search(r"Model name:\s*(.+)", run(["lscpu"]))
    info["cpu"] = m.group(1).strip() if m else (platform.processor() or platform.machine())
    flags = set((re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M) or [None, ""])[1].split())
    info["isa"] = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8") if f in flags]
    hyper = re.search(r"Hypervisor vendor:\s*(.+)", run(["lscpu"]))
    if hyper:
        info["hypervisor"] = hyper.group(1).strip()
    if os.path.exists("/proc/meminfo"):
        kb = int(re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read()).group(1))
        info["ram_gib"] = round(kb / 1024 / 1024, 1)
    os_name = platform.system()
    if os.path.exists("/etc/os-release"):
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)', open("/etc/os-release").read(), re.M)
        os_name = m.group(1) if m else os_name
    info["os"] = f"{os_name}, kernel {platform.release()}"
    cache = os.path.join(ROOT, "build", "bench", "CMakeCache.txt")
    if os.path.exists(cache):
        text = open(cache, encoding="utf-8").read()
        cxx = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.+)$", text, re.M)
        build_type = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", text, re.M)
        if cxx:
            info["compiler"] = run([cxx.group(1).strip(), "--version"]).splitlines()[0:1] or [cxx.group(1)]
            info["compiler"] = info["compiler"][0]
        if build_type:
            info["build_type"] = build_type.group(1).strip() or "Release (default)"
    commit = run(["git", "rev-parse", "--short=12", "HEAD"])
    # What bench/report.py itself rewrites does not count as a change to the measured code.
    if commit and run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!README.md",
                       ":!docs/benchmarks.md", ":!docs/bench"]):
        commit += " (with uncommitted changes)"
    info["commit"] = commit or "unknown"
    return info


def record(args):
    path = os.path.join(args.results, "run.json")
    data = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else {}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    m = machine(args.threads)
    data["machine"] = m
    data.setdefault("stages", {})[args.record] = {
        "profile": args.profile, "status": args.status, "seconds": args.seconds, "command": args.command,
        "invocation": args.invocation, "date": now, "commit": m["commit"], "threads": args.threads}
    os.makedirs(args.results, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------- reading results

def lines(path):
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def pick_median(runs):
    """The run with the median latency (median_low, as bench/peers/table.py does)."""
    med = statistics.median_low([r["median_ms"] for r in runs])
    return next(r for r in runs if r["median_ms"] == med)


def load_engine(results):
    out = {}
    for name in sorted(os.listdir(results)):
        m = re.fullmatch(r"engine-(.+)\.jsonl", name)
        if not m:
            continue
        rows = lines(os.path.join(results, name))
        versions, points = {}, {}
        for r in rows:
            if "version" in r and "batch" not in r:
                versions[r["engine"]] = r["version"]
            if "batch" not in r:
                continue
            if r.get("variant", "fp32") != "fp32" or r.get("dtype", "float32") != "float32":
                continue
            points.setdefault((r["seq"], r["batch"]), {}).setdefault(r["engine"], []).append(r)
        if points:
            out[m.group(1)] = {"versions": versions, "points": points}
    return out


def load_roofline(results):
    """The machine's roofline (bench/roofline.hpp) as engine_bench printed it at the start of each
    run: per figure, the median over the runs of the engine and dtypes stages (None if none)."""
    found = []
    for name in sorted(os.listdir(results)):
        if re.fullmatch(r"(engine|dtypes)-.+\.jsonl", name):
            found += [r for r in lines(os.path.join(results, name)) if r.get("roofline")]
    if not found:
        return None
    keys = [k for k in found[0] if isinstance(found[0][k], (int, float)) and not isinstance(found[0][k], bool)]
    out = {k: statistics.median(r.get(k, 0) for r in found) for k in keys} | {"runs": len(found)}
    # Working sets differ by run (the layers' bytes in each precision): one median per size.
    sets = {}
    for r in found:
        if r.get("working_set_mb"):
            sets.setdefault(round(r["working_set_mb"], 1), []).append(r.get("working_set_gbs", 0))
    out["working_sets"] = {mb: statistics.median(v) for mb, v in sorted(sets.items())}
    return out


def roofline_cell(r):
    """A Warden run's fraction of its roofline bound, and which bound, or — for older results."""
    if r is None or r.get("roofline_fraction") is None:
        return "—"
    return f"{r['roofline_fraction'] * 100:.0f}% ({r.get('bound', '?')})"


def load_tokenizer(results):
    rows = lines(os.path.join(results, "tokenizer.jsonl"))
    groups = {}
    for r in rows:
        groups.setdefault((r["tokenizer"], r["pairs"]), {}).setdefault(r["side"], []).append(r)
    out = []
    for (tok, pairs), sides in groups.items():
        entry = {"tokenizer": tok, "pairs": pairs, "rounds": max(len(v) for v in sides.values())}
        for side, runs in sides.items():
            entry[side] = {"mb_per_s": statistics.median(r["mb_per_s"] for r in runs),
                           "seq_per_s": statistics.median(r["seq_per_s"] for r in runs)}
        out.append(entry)
    order = list(TOKENIZER_NAMES)
    out.sort(key=lambda e: (e["pairs"], order.index(e["tokenizer"]) if e["tokenizer"] in order else 99, e["tokenizer"]))
    return out


def load_load(results):
    out = {}
    for name in sorted(os.listdir(results)):
        m = re.fullmatch(r"load-(.+)\.jsonl", name)
        if not m:
            continue
        rows = lines(os.path.join(results, name))
        runs = [r for r in rows if not r["run"].startswith("engine") and r["run"] != "wrk"]
        if runs:
            out[m.group(1)] = {"runs": runs, "engine": [r for r in rows if r["run"] == "engine"]}
    order = {"bge-small": 0, "use-lite": 1}
    return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], 9), kv[0])))


def load_cache(results):
    rows = lines(os.path.join(results, "cache.jsonl"))
    if not rows:
        return None
    out = {"model": rows[0]["model"], "connections": rows[0]["connections"], "duration": rows[0]["duration_s"],
           "rounds": max(r["round"] for r in rows)}
    for mode in ("off", "on"):
        rs = [r for r in rows if r["cache"] == mode]
        if not rs:
            return None
        out[mode] = {
            "rps": statistics.median(r["rps"] for r in rs),
            "p50": statistics.median(r["latency_us"]["p50"] for r in rs) / 1000,
            "p99": statistics.median(r["latency_us"]["p99"] for r in rs) / 1000,
            "hit": statistics.median(r["cache_hits"] / max(1, r["cache_hits"] + r["cache_misses"]) for r in rs),
            "non200": sum(sum(v for k, v in r["status_all"].items() if k != "200") for r in rs),
        }
    return out


DTYPE_ROWS = [("warden", "float32", "Warden fp32"), ("warden", "bfloat16", "Warden bf16"), ("warden", "int8", "Warden int8"),
              ("onnxruntime", "fp32", "ORT fp32"), ("onnxruntime", "int8", "ORT int8"),
              ("onnxruntime", "int8-per-channel", "ORT int8 per-channel")]


def load_dtypes(results):
    out = {}
    for name in sorted(os.listdir(results)):
        m = re.fullmatch(r"dtypes-(.+)\.jsonl", name)
        if not m:
            continue
        points = {}
        for r in lines(os.path.join(results, name)):
            if "batch" not in r:
                continue
            kind = r.get("dtype", "float32") if r["engine"] == "warden" else r.get("variant", "fp32")
            points.setdefault((r["batch"], r["seq"]), {}).setdefault((r["engine"], kind), []).append(r)
        for (b, s), rows in sorted(points.items()):
            picked = []
            for engine, kind, label in DTYPE_ROWS:
                if (engine, kind) in rows:
                    r = pick_median(rows[(engine, kind)])
                    picked.append({"engine": engine, "kind": kind, "label": label, "median_ms": r["median_ms"],
                                   "seq_per_s": b * 1000 / r["median_ms"], "rounds": len(rows[(engine, kind)]),
                                   "bound_ms": r.get("bound_ms"), "roofline_fraction": r.get("roofline_fraction"),
                                   "bound": r.get("bound")})
            out[(m.group(1), b, s)] = picked
    return out


# ---------------------------------------------------------------- formatting helpers

def num(x, digits=0):
    return f"{x:,.{digits}f}"


def ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "—"


def machine_line(m, short=False):
    if not m:
        return "machine not recorded"
    isa = [f for f in m.get("isa", []) if f in ("avx512_vnni", "avx512_bf16", "amx_int8")]
    parts = [m.get("cpu", "?")]
    parts.append(f"{m.get('cores', '?')} cores, {m.get('threads', '?')} threads used")
    if isa:
        parts.append(" ".join(isa))
    if not short:
        if m.get("ram_gib"):
            parts.append(f"{m['ram_gib']:g} GiB RAM")
        parts.append(m.get("os", "").split(",")[0])
    return ", ".join(p for p in parts if p)


def q(s):
    """A gnuplot double-quoted string."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# ---------------------------------------------------------------- charts (gnuplot)

class Charts:
    def __init__(self, out_dir, enabled, subtitle):
        self.out_dir, self.subtitle = out_dir, subtitle
        self.gnuplot = shutil.which("gnuplot") if enabled else None
        self.made = set()
        self.tmp = tempfile.mkdtemp(prefix="warden-report-")
        if enabled and not self.gnuplot:
            print("bench/report.py: gnuplot not found (apt-get install gnuplot-nox, or scripts/setup-bench): "
                  "no charts drawn", file=sys.stderr)
        self.terminal = "png size 800,450"
        if self.gnuplot:
            terms = subprocess.run([self.gnuplot, "-e", "set terminal"], capture_output=True, text=True).stderr + \
                subprocess.run([self.gnuplot, "-e", "set terminal"], capture_output=True, text=True).stdout
            if "pngcairo" in terms:
                self.terminal = "pngcairo size 800,450 enhanced font 'DejaVu Sans,10'"

    def data(self, name, rows):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write("\t".join(q(c) if isinstance(c, str) else repr(c) for c in row) + "\n")
        return path

    def draw(self, name, title, body, multiplot=None):
        if not self.gnuplot:
            return
        os.makedirs(self.out_dir, exist_ok=True)
        png = os.path.join(self.out_dir, name)
        script = "\n".join([
            "set encoding utf8",
            f"set terminal {self.terminal}",
            f"set output {q(png)}",
            (f"set multiplot layout {multiplot} title {q(title + chr(10) + self.subtitle)} noenhanced" if multiplot
             else f"set title {q(title + chr(10) + self.subtitle)} noenhanced"),
            "set border 3 lc rgb '#444444'",
            "set tics nomirror",
            "set grid lc rgb '#e0e0e0' lt 1",
            "set key noenhanced",
            body,
            "unset output",
        ]) + "\n"
        spath = os.path.join(self.tmp, name + ".gp")
        open(spath, "w", encoding="utf-8").write(script)
        r = subprocess.run([self.gnuplot, spath], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench/report.py: gnuplot failed on {name}:\n{r.stderr}", file=sys.stderr)
            return
        self.made.add(name)

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def image(charts, name, alt, md_dir):
    path = os.path.join(charts.out_dir, name)
    if name not in charts.made and not os.path.exists(path):
        return ""
    return f"![{alt}]({os.path.relpath(path, md_dir)})\n\n"


# ---------------------------------------------------------------- sections

def engine_section(engine, charts):
    """(markdown for docs, compact markdown for the README, the preset and seq charted)."""
    if not engine:
        return None
    preset = "bge-small" if "bge-small" in engine else next(iter(engine))
    e = engine[preset]
    # The sequence length with the most batch sizes (bench/run's grid has one: 128).
    seqs = sorted({s for s, _ in e["points"]}, key=lambda s: (-sum(1 for x, _ in e["points"] if x == s), abs(s - 128)))
    seq = seqs[0]
    rows = []
    for (s, b), by in sorted(e["points"].items()):
        if s != seq:
            continue
        picked = {k: pick_median(v) for k, v in by.items()}
        rows.append((b, picked, {k: len(v) for k, v in by.items()}))
    series = {}
    for b, picked, _ in rows:
        for k, r in picked.items():
            series.setdefault(k, []).append((b, b * 1000 / r["median_ms"]))
    batches = [b for b, _, _ in rows]
    plots = []
    bound = [(b, b * 1000 / p["warden"]["bound_ms"]) for b, p, _ in rows
             if "warden" in p and p["warden"].get("bound_ms")]
    if bound:
        d = charts.data("engine-roofline.dat", bound)
        plots.append(f"{q(d)} using 1:2 with lines lw 2 dt 2 lc rgb '#444444' title 'roofline bound (this machine)'")
    for k in ("warden", "onnxruntime", "pytorch"):
        if k in series:
            d = charts.data(f"engine-{k}.dat", series[k])
            label = ENGINE_NAMES[k] + (f" {e['versions'][k]}" if k != "warden" and k in e["versions"] else "")
            plots.append(f"{q(d)} using 1:2 with linespoints lw 2 pt 7 ps 1.1 lc rgb '{COLORS[k]}' title {q(label)}")
    charts.draw("engine-throughput.png", f"{preset} encoder, fp32, sequence length {seq}: throughput vs batch size", "\n".join([
        "set logscale x 2",
        "set xtics (" + ", ".join(f"'{b}' {b}" for b in batches) + ")",
        f"set xrange [{batches[0] / 1.2}:{batches[-1] * 1.2}]",
        "set xlabel 'batch size (sequences per call)'",
        "set ylabel 'throughput (sequences/s, higher is better)'",
        "set yrange [0:*]",
        "set key bottom right box opaque reverse Left",
        "plot " + ", \\\n  ".join(plots),
    ]))
    head = ("| batch | Warden seq/s | ONNX Runtime seq/s | PyTorch seq/s | Warden ÷ ORT | Warden ÷ PyTorch "
            "| Warden ms | ORT ms | PyTorch ms | Warden of roofline | rounds (W/ORT/PT) |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body, compact = "", ""
    for b, p, n in rows:
        sps = {k: b * 1000 / r["median_ms"] for k, r in p.items()}
        cell = lambda k, f: f(k) if k in p else "—"  # noqa: E731
        body += (f"| {b} | {cell('warden', lambda k: num(sps[k], 1))} | {cell('onnxruntime', lambda k: num(sps[k], 1))} | "
                 f"{cell('pytorch', lambda k: num(sps[k], 1))} | {ratio(sps.get('warden'), sps.get('onnxruntime'))} | "
                 f"{ratio(sps.get('warden'), sps.get('pytorch'))} | {cell('warden', lambda k: num(p[k]['median_ms'], 1))} | "
                 f"{cell('onnxruntime', lambda k: num(p[k]['median_ms'], 1))} | "
                 f"{cell('pytorch', lambda k: num(p[k]['median_ms'], 1))} | {roofline_cell(p.get('warden'))} | "
                 f"{n.get('warden', 0)}/{n.get('onnxruntime', 0)}/{n.get('pytorch', 0)} |\n")
        compact += (f"| {b} | {cell('warden', lambda k: num(sps[k], 1))} | {cell('onnxruntime', lambda k: num(sps[k], 1))} | "
                    f"{cell('pytorch', lambda k: num(sps[k], 1))} | {ratio(sps.get('warden'), sps.get('onnxruntime'))} | "
                    f"{ratio(sps.get('warden'), sps.get('pytorch'))} |\n")
    versions = ", ".join(f"{ENGINE_NAMES[k]} {v}" for k, v in sorted(e["versions"].items()))
    doc = (f"### Engine: throughput vs batch size ({preset}, fp32, seq {seq})\n\n"
           f"{{img}}Sequences per second, each the run with the median latency over the rounds (Warden and "
           f"ONNX Runtime alternate; PyTorch eager runs once). Same seeded weights, same random token ids, same "
           f"thread count; {versions}. Ratios above 1× mean Warden is faster. \"Of roofline\" is the roofline "
           f"bound's time over Warden's (compute or bandwidth, whichever limits that point: see the machine's "
           f"[roofline](#machine-roofline)); the chart draws the bound as a dashed line.\n\n" + head + body)
    readme = ("| batch | Warden seq/s | ONNX Runtime seq/s | PyTorch seq/s | Warden ÷ ORT | Warden ÷ PyTorch |\n"
              "|---:|---:|---:|---:|---:|---:|\n" + compact)
    return doc, readme, preset, seq


def tokenizer_section(tok, charts):
    if not tok:
        return None
    singles = [t for t in tok if not t["pairs"] and "warden" in t and "huggingface" in t]
    d = charts.data("tokenizer.dat", [(TOKENIZER_NAMES.get(t["tokenizer"], t["tokenizer"]), t["warden"]["mb_per_s"],
                                        t["huggingface"]["mb_per_s"]) for t in singles])
    charts.draw("tokenizer.png", "Tokenizer throughput, one thread: Warden vs HuggingFace tokenizers", "\n".join([
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 0.9 border -1",
        "set boxwidth 0.9",
        "set xtics scale 0",
        "set ylabel 'throughput (MB of text/s, higher is better)'",
        "set yrange [0:*]",
        "set offsets 0, 0, graph 0.12, 0",
        "set key top right box opaque reverse Left",
        f"plot {q(d)} using 2:xtic(1) title 'Warden' lc rgb '{COLORS['warden']}', \\",
        f"  '' using 3 title 'HF tokenizers (npm binding)' lc rgb '{COLORS['hf']}', \\",
        "  '' using ($0):($2):(sprintf('%.1f×', $2/$3)) with labels offset 0,1 notitle",
    ]))
    out = ("### Tokenizer: Warden vs HuggingFace tokenizers (one thread)\n\n{img}"
           "Median over the rounds of each round's median run; same corpus and tokenizer.json files, special tokens "
           "added, truncation off (see [Tokenizer](#tokenizer) for the corpus and the caveats: HF is measured "
           "through its npm N-API binding).\n\n"
           "| tokenizer | Warden MB/s | Warden seq/s | HF MB/s | HF seq/s | Warden ÷ HF | rounds |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n")
    for t in tok:
        w, h = t.get("warden"), t.get("huggingface")
        name = TOKENIZER_NAMES.get(t["tokenizer"], t["tokenizer"]) + (", text pairs" if t["pairs"] else "")
        out += (f"| {name} | {num(w['mb_per_s'], 2) if w else '—'} | {num(w['seq_per_s']) if w else '—'} | "
                f"{num(h['mb_per_s'], 2) if h else '—'} | {num(h['seq_per_s']) if h else '—'} | "
                f"{ratio(w and w['mb_per_s'], h and h['mb_per_s'])} | {t['rounds']} |\n")
    return out


def load_section(load, charts):
    if not load:
        return None
    out = "### Server: latency and requests/s vs concurrency\n\n"
    for model, d in load.items():
        closed = sorted((r for r in d["runs"] if r["run"].startswith("closed")), key=lambda r: r["connections"])
        batch = d["runs"][0].get("batch", 1)
        if closed:
            data = charts.data(f"load-{model}.dat", [(r["connections"], r["latency_us"]["p50"] / 1000,
                                                      r["latency_us"]["p99"] / 1000, r["rps"]) for r in closed])
            conns = [r["connections"] for r in closed]
            charts.draw(f"load-{model}.png", f"warden serve, {model}: latency and throughput vs concurrent clients", "\n".join([
                "set logscale x 10",
                "set xtics (" + ", ".join(f"'{c}' {c}" for c in conns) + ")",
                f"set xrange [{conns[0] / 1.3}:{conns[-1] * 1.3}]",
                "set logscale y 10",
                "set xlabel 'concurrent clients (closed loop, one request each in flight)'",
                "set ylabel 'latency (ms, log scale)'",
                "set y2label 'requests/s'",
                "set y2tics",
                "set y2range [0:*]",
                "set ytics nomirror",
                "set key top left box opaque reverse Left",
                f"plot {q(data)} using 1:2 with linespoints lw 2 pt 7 lc rgb '{COLORS['p50']}' title 'p50 latency', \\",
                f"  '' using 1:3 with linespoints lw 2 pt 5 lc rgb '{COLORS['p99']}' title 'p99 latency', \\",
                f"  '' using 1:4 axes x1y2 with linespoints lw 2 dt 2 pt 6 lc rgb '{COLORS['rps']}' title 'requests/s (right axis)'",
            ]))
        eng = {r["batch"]: r for r in d["engine"]}
        note = ""
        if eng:
            best = max(eng.values(), key=lambda r: r["inputs_per_s"])
            note = (f" Engine alone (embedder_bench, no HTTP, same texts): {num(eng[min(eng)]['inputs_per_s'], 1)} inputs/s "
                    f"at batch {min(eng)}, {num(best['inputs_per_s'], 1)} at batch {best['batch']}.")
        out += (f"#### {model} ({batch} input{'s' if batch > 1 else ''} per request)\n\n"
                f"{{img:load-{model}.png}}`warden serve` on 127.0.0.1 driven by `warden-load` (closed loop: each client "
                f"sends its next request when the last is answered), short sentences from bench/data/sentences.txt."
                f"{note}\n\n"
                "| run | clients | req/s | p50 ms | p99 ms | max ms | 200 | 429 | 504 | other + errors |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for r in sorted(d["runs"], key=lambda r: (not r["run"].startswith("closed"), r["connections"])):
            lat, st = r["latency_us"], r["status"]
            clients = str(r["connections"])
            if r.get("mode") == "open":
                clients += f" (open loop, {num(r['rate_offered'])} req/s offered)"
            bad = st["other"] + sum(r["errors"].values())
            out += (f"| {r['run']} | {clients} | {num(r['rps'], 1)} | {num(lat['p50'] / 1000, 1)} | "
                    f"{num(lat['p99'] / 1000, 1)} | {num(lat['max'] / 1000, 1)} | {st['200']} | {st['429']} | "
                    f"{st['504']} | {bad} |\n")
        out += "\n"
    return out.rstrip("\n") + "\n"


def cache_section(cache, charts):
    if not cache:
        return None
    off, on = cache["off"], cache["on"]
    d1 = charts.data("cache-rps.dat", [("cache off", off["rps"], int(COLORS["hf"][1:], 16)),
                                       ("cache on", on["rps"], int(COLORS["warden"][1:], 16))])
    d2 = charts.data("cache-lat.dat", [("cache off", off["p50"], off["p99"]), ("cache on", on["p50"], on["p99"])])
    charts.draw("cache.png", f"Result cache, {cache['model']}, {cache['connections']} clients, 80 % repeated texts", "\n".join([
        "set style fill solid 0.9 border -1",
        "set xtics scale 0",
        "set boxwidth 0.6",
        "set ylabel 'requests/s (higher is better)'",
        "set yrange [0:*]",
        "set xrange [-0.8:1.8]",
        "set offsets 0, 0, graph 0.12, 0",
        "unset key",
        f"plot {q(d1)} using 0:2:3:xtic(1) with boxes lc rgb variable, \\",
        "  '' using 0:2:(sprintf('%.0f', $2)) with labels offset 0,1",
        "set offsets 0, 0, 0, 0",
        "set autoscale x",
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set boxwidth 0.9",
        "set logscale y 10",
        "set yrange [0.05:*]",
        "set ylabel 'latency (ms, log scale, lower is better)'",
        "set key top right box opaque reverse Left",
        f"plot {q(d2)} using 2:xtic(1) title 'p50' lc rgb '{COLORS['p50']}', '' using 3 title 'p99' lc rgb '{COLORS['p99']}'",
        "unset multiplot",
    ]), multiplot="1,2")
    return (f"### Result cache: off vs on ({cache['model']})\n\n{{img}}`warden serve` with and without "
            f"`--cache-bytes 64MiB`, {cache['connections']} clients, 80 % of requests repeating one of 100 short texts, "
            f"20 % new ones; median of {cache['rounds']} alternating rounds of {cache['duration']} s.\n\n"
            "| cache | requests/s | p50 ms | p99 ms | hit rate | non-200 answers |\n|---|---:|---:|---:|---:|---:|\n"
            f"| off | {num(off['rps'])} | {num(off['p50'], 2)} | {num(off['p99'], 2)} | — | {off['non200']} |\n"
            f"| on | {num(on['rps'])} ({ratio(on['rps'], off['rps'])}) | {num(on['p50'], 2)} | {num(on['p99'], 2)} | "
            f"{on['hit'] * 100:.0f} % | {on['non200']} |\n")


def dtypes_section(dtypes, charts):
    if not dtypes:
        return None
    out = ""
    # The chart shows the largest batch (the throughput case); the tables every grid point.
    charted = max((key for key, rows in dtypes.items() if rows), key=lambda key: key[1] * key[2], default=None)
    for (preset, b, s), rows in dtypes.items():
        if not rows:
            continue
        if (preset, b, s) == charted:
            color = lambda r: int((COLORS["warden"] if r["engine"] == "warden" else COLORS["onnxruntime"])[1:], 16)  # noqa: E731
            d = charts.data("precision.dat", [(r["label"].replace(" ", "\n", 1), r["seq_per_s"], color(r),
                                               b * 1000 / r["bound_ms"] if r.get("bound_ms") else "NaN") for r in rows])
            charts.draw("precision.png", f"{preset} encoder, batch {b} x seq {s}: throughput by weight precision", "\n".join([
                "set style fill solid 0.9 border -1",
                "set boxwidth 0.6",
                "set xtics scale 0",
                "set bmargin 4",
                "set ylabel 'throughput (sequences/s, higher is better)'",
                "set yrange [0:*]",
                "set offsets 0.5, 0.5, graph 0.12, 0",
                "set key top left box opaque",
                f"plot {q(d)} using 0:2:3:xtic(1) with boxes lc rgb variable notitle, \\",
                "  '' using 0:2:(sprintf('%.1f', $2)) with labels offset 0,1 notitle, \\",
                "  '' using 0:4:(0.3) with xerrorbars pt -1 lw 3 lc rgb '#444444' title 'roofline bound (Warden)'",
            ]))
        by = {(r["engine"], r["kind"]): r for r in rows}
        refs = [("ORT fp32", ("onnxruntime", "fp32")), ("ORT int8", ("onnxruntime", "int8")),
                ("Warden fp32", ("warden", "float32"))]
        refs = [(n, k) for n, k in refs if k in by]
        out += (f"### Precision: int8 and bf16 vs fp32 ({preset}, batch {b} x seq {s})\n\n" +
                ("{img}" if (preset, b, s) == charted else "") +
                "Warden per `--dtype` (engine_bench) beside ONNX Runtime on the fp32 export and on its own dynamic "
                "int8 quantisation (bench/peers/quantize_onnx.py); the run with the median latency over the rounds. "
                "Accuracy of each dtype: [Precision](#precision-int8-and-bfloat16-end-to-end-issue-9).\n\n"
                "| engine | median ms | seq/s | " + " | ".join(f"× {n}" for n, _ in refs) + " | of roofline | rounds |\n"
                "|---|---:|---:|" + "---:|" * len(refs) + "---:|---:|\n")
        for r in rows:
            out += (f"| {r['label']} | {num(r['median_ms'], 1)} | {num(r['seq_per_s'], 1)} | "
                    + " | ".join(ratio(r["seq_per_s"], by[k]["seq_per_s"]) for _, k in refs)
                    + f" | {roofline_cell(r) if r['engine'] == 'warden' else '—'} | {r['rounds']} |\n")
        out += "\n"
    return out.rstrip("\n") + "\n"


def roofline_section(r):
    head = "### Machine roofline\n\n"
    if not r:
        return head + "No roofline in these results (engine_bench prints it first since the roofline was added).\n"
    def row(name, core, every, unit):
        return f"| {name} | {num(r.get(core, 0), 1) if r.get(core) else '—'} | {num(r.get(every, 0), 1) if r.get(every) else '—'} | {unit} |\n"
    return (head + "This machine's own limits, measured by engine_bench at the start of each run "
            "(bench/roofline.cpp: tight in-register loops for the compute peaks, a STREAM-like triad for memory, "
            "repeated reads of a buffer the size of the model's layers for the working set); median of "
            f"{r['runs']} measurements. Every Warden figure below is also given as a fraction of its bound.\n\n"
            "| limit | one core | all threads | unit |\n|---|---:|---:|---|\n"
            + row("fp32 FMA (AVX-512)", "fp32_gflops_core", "fp32_gflops", "GFLOP/s")
            + row("bf16 dot products (vdpbf16ps)", "bf16_gflops_core", "bf16_gflops", "GFLOP/s")
            + row("int8 dot products (vpdpbusd)", "int8_gops_core", "int8_gops", "GOP/s")
            + row("AMX bf16 tiles (tdpbf16ps)", "amx_bf16_gflops_core", "amx_bf16_gflops", "GFLOP/s")
            + row("AMX int8 tiles (tdpbssd)", "amx_int8_gops_core", "amx_int8_gops", "GOP/s")
            + f"| memory, triad (3 x 256 MiB) | — | {num(r.get('dram_triad_gbs', 0), 1)} | GB/s |\n"
            + "".join(f"| reads of a {num(mb, 1)} MB working set (a precision's layers) | — | {num(gbs, 1)} | GB/s |\n"
                      for mb, gbs in r.get("working_sets", {}).items()))


# ---------------------------------------------------------------- assembling

def replace_block(text, begin, end, block, anchor, fresh_prefix=""):
    """Replaces what lies between begin and end (markers included) by block; without the
    markers, inserts fresh_prefix + block before the first line matching anchor (or at the end)."""
    if begin in text and end in text:
        i, j = text.index(begin), text.index(end) + len(end)
        return text[:i] + block + text[j:]
    m = re.search(anchor, text, re.M)
    at = m.start() if m else len(text)
    return text[:at] + fresh_prefix + block + "\n\n" + text[at:]


def render(args):
    results = args.results
    if not os.path.isdir(results):
        sys.exit(f"bench/report.py: no results in {results} (run bench/run first)")
    meta = json.load(open(os.path.join(results, "run.json"), encoding="utf-8")) \
        if os.path.exists(os.path.join(results, "run.json")) else {}
    m, stages = meta.get("machine", {}), meta.get("stages", {})
    profiles = {s["profile"] for s in stages.values()}
    quick = "quick" in profiles
    dates = sorted(s["date"] for s in stages.values())
    by_date = sorted(stages.values(), key=lambda s: s["date"])
    invocations = list(dict.fromkeys(s["invocation"] for s in by_date)) or ["bench/run"]
    commits = list(dict.fromkeys(s["commit"] for s in by_date))
    subtitle = machine_line(m, short=True) + (" · --quick run" if quick else "") + (f" · {dates[-1][:10]}" if dates else "")
    docs_dir = os.path.dirname(os.path.abspath(args.docs))
    readme_dir = os.path.dirname(os.path.abspath(args.readme))
    charts = Charts(os.path.abspath(args.charts), not args.no_charts, subtitle)
    try:
        eng = engine_section(load_engine(results), charts)
        sections = {
            "engine": eng[0] if eng else None,
            "tokenizer": tokenizer_section(load_tokenizer(results), charts),
            "load": load_section(load_load(results), charts),
            "cache": cache_section(load_cache(results), charts),
            "dtypes": dtypes_section(load_dtypes(results), charts),
        }
        default_img = {"engine": ("engine-throughput.png", "throughput vs batch size"),
                       "tokenizer": ("tokenizer.png", "tokenizer throughput"),
                       "cache": ("cache.png", "result cache off vs on"),
                       "dtypes": ("precision.png", "throughput by precision")}

        def fill(stage, text, md_dir):
            if stage in default_img:
                text = text.replace("{img}", image(charts, *default_img[stage], md_dir), 1)
            return re.sub(r"\{img:([^}]+)\}", lambda mm: image(charts, mm.group(1), mm.group(1)[:-4], md_dir), text)

        # docs/benchmarks.md
        doc = [BEGIN, "## Report: `bench/run`", "",
               "_This section is generated by `bench/run` (bench/report.py, from the JSON lines in "
               f"`{os.path.relpath(os.path.abspath(results), ROOT)}/`); do not edit it by hand: rerun "
               "`bench/run` (or `bench/run --render-only`). The hand-written sections after it keep the history "
               "and the analysis._", ""]
        if quick:
            doc += ["> **Figures from a `bench/run --quick` run** (one round, short timings, on a shared and busy "
                    "2-core machine): they show that the pipeline works end to end, not the reference figures. "
                    "`bench/run` (the full profile, ~14 minutes on a quiet machine) replaces them.", ""]
        doc += ["**Machine**", "", "| | |", "|---|---|",
                f"| CPU | {m.get('cpu', '?')}{' (' + m['hypervisor'] + ' guest)' if m.get('hypervisor') else ''} |",
                f"| cores | {m.get('cores', '?')} online, {m.get('threads', '?')} threads used by every engine |",
                f"| ISA | {', '.join(m.get('isa', [])) or '—'} |",
                f"| RAM | {m.get('ram_gib', '?')} GiB |",
                f"| OS | {m.get('os', '?')} |",
                f"| compiler | {m.get('compiler', '?')} ({m.get('build_type', '?')}, build/bench) |",
                f"| commit | {', '.join(commits) or '?'} |",
                f"| date | {', '.join(sorted(set(d[:10] for d in dates))) or '?'} |", "",
                "**Command**: " + ", then ".join(f"`{i}`" for i in invocations) +
                " (the full profile is plain `bench/run`; `bench/run --help` lists each stage's command and expected time).", "",
                "| stage | command | profile | status | wall time | measured | commit |", "|---|---|---|---|---:|---|---|"]
        for s in STAGES:
            st = stages.get(s)
            if st:
                doc.append(f"| {s} | `{st['command']}` | {st['profile']} | {st['status']} | {st['seconds']} s | {st['date']} "
                           f"| {st['commit']} |")
            else:
                doc.append(f"| {s} | — | not run | — | — | — | — |")
        doc.append("")
        doc += [roofline_section(load_roofline(results))]
        for s in STAGES:
            if sections[s]:
                doc += [fill(s, sections[s], docs_dir)]
            else:
                doc += [f"### {s}\n\nNo results yet: `bench/run --only {s}`.\n"]
        doc.append(END)
        block = "\n".join(doc)
        text = open(args.docs, encoding="utf-8").read()
        new = replace_block(text, BEGIN, END, block, r"^## ")
        if new != text:
            open(args.docs, "w", encoding="utf-8").write(new)

        # README.md
        if eng:
            _, table, preset, seq = eng
            st = stages.get("engine", {})
            img = image(charts, "engine-throughput.png", "throughput vs batch size", readme_dir)
            quick_note = (["> Figures from a `bench/run --quick` run (short timings on a busy, shared machine): they show "
                           "the pipeline works, not Warden's speed; the full `bench/run` replaces them.", ""]
                          if st.get("profile") == "quick" else [])
            head = [HEAD_BEGIN] + quick_note + ([img.rstrip("\n"), ""] if img else []) + [
                    f"{preset}-shaped encoder, fp32, sequence length {seq}, sequences/s (higher is better); the same weights "
                    "in Warden, ONNX Runtime and PyTorch eager on the same threads:", "", table.rstrip("\n"), "",
                    f"Measured on {machine_line(m)}; commit {st.get('commit', m.get('commit', '?'))}, {st.get('date', '?')[:10]}, "
                    f"`{st.get('invocation', 'bench/run')}`"
                    + ". More (tokenizer, server latency, cache, int8/bf16): "
                    f"[docs/benchmarks.md]({os.path.relpath(os.path.abspath(args.docs), readme_dir)}).", HEAD_END]
            block = "\n".join(head)
            text = open(args.readme, encoding="utf-8").read()
            new = replace_block(text, HEAD_BEGIN, HEAD_END, block, r"^## Serve it", "## How fast\n\n")
            if new != text:
                open(args.readme, "w", encoding="utf-8").write(new)
    finally:
        charts.cleanup()
    print(f"bench/report.py: wrote {args.docs}, {args.readme}"
          + (f" and {len(charts.made)} charts in {args.charts}" if charts.made else " (no charts)"), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "build", "bench-results", "report"))
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--charts", default=os.path.join(ROOT, "docs", "bench"))
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--record", choices=STAGES)
    ap.add_argument("--profile", default="full")
    ap.add_argument("--status", default="ok")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--command", default="")
    ap.add_argument("--invocation", default="bench/run")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    if args.record:
        record(args)
    else:
        render(args)


if __name__ == "__main__":
    main()
