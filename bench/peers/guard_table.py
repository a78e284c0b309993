#!/usr/bin/env python3
"""Warden's guard and the npm detectors side by side on the same held-out rows
(bench/run_guard): per detector, ROC AUC of its score, recall at the threshold that flags at
most 1% of the benign rows, and its own default decision's false-positive rate (benign chat,
documents, hard negatives, all benign) and recall (English attacks, all attacks); then a PNG of
Warden's score distributions per category (gnuplot, when installed).

  guard_table.py RESULTS_DIR      reads warden.jsonl and PEER.jsonl there, prints a Markdown table

Rows Warden abstains on (languages use-lite does not read) count as not flagged in the
default-decision columns and are left out of the score columns for every detector, so that
all detectors are scored on the same texts. Standard library only."""
import json
import pathlib
import shutil
import subprocess
import sys

ENGLISH_ATTACKS = {"direct_injection", "indirect_injection", "obfuscated_attack", "roleplay_jailbreak"}
BENIGN_GROUPS = [("chat", {"chat", "chat_short"}), ("documents", {"document"}),
                 ("hard negatives", {"hard_negative"}), ("disguised benign", {"obfuscated_benign"})]


def load(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def auc(pos, neg):
    """P(attack score > benign score), ties counting half."""
    if not pos or not neg:
        return None
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2.0  # 1-based average rank of the tie group
        rank_sum += mid * sum(1 for k in range(i, j) if ranked[k][1] == 1)
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2.0) / (len(pos) * len(neg))


def recall_at_fpr(pos, neg, fpr):
    """Recall at the threshold strictly above the benign score that must not be flagged."""
    neg = sorted(neg, reverse=True)
    allowed = int(fpr * len(neg))
    bar = neg[allowed] if allowed < len(neg) else float("-inf")
    return sum(1 for s in pos if s > bar) / len(pos) if pos else None


def rate(rows, pred):
    rows = list(rows)
    return sum(1 for r in rows if pred(r)) / len(rows) if rows else 0.0


def main():
    out = pathlib.Path(sys.argv[1])
    warden = load(out / "warden.jsonl")
    judged = {r["index"] for r in warden if r["score"] is not None}
    detectors = [("Warden guard (use-lite probe)", warden)]
    for peer, name in [("llm_guardrail", "llm_guardrail 2.1.2 (TF-IDF)"), ("vard", "@andersmyrmel/vard 1.2.0 (regex)"),
                       ("aidefence", "@claude-flow/aidefence 3.0.3 (regex)")]:
        path = out / f"{peer}.jsonl"
        if path.exists():
            detectors.append((name, load(path)))
    print(f"{len(warden)} held-out texts; {len(judged)} judged by Warden (the score columns use those)\n")
    head = ["detector", "ROC AUC", "recall @1% FPR"] + [f"FPR {g}" for g, _ in BENIGN_GROUPS] + \
           ["FPR all benign", "recall English attacks", "recall all attacks", "median ms"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, rows in detectors:
        scored = [r for r in rows if r["index"] in judged and r["score"] is not None]
        pos = [r["score"] for r in scored if r["label"] == "attack"]
        neg = [r["score"] for r in scored if r["label"] == "benign"]
        flagged = lambda r: bool(r["flagged"])
        cells = [name, f"{auc(pos, neg):.3f}", f"{recall_at_fpr(pos, neg, 0.01):.2f}"]
        for _, cats in BENIGN_GROUPS:
            cells.append(f"{100 * rate((r for r in rows if r['category'] in cats), flagged):.1f}%")
        cells.append(f"{100 * rate((r for r in rows if r['label'] == 'benign'), flagged):.1f}%")
        cells.append(f"{rate((r for r in rows if r['category'] in ENGLISH_ATTACKS), flagged):.2f}")
        cells.append(f"{rate((r for r in rows if r['label'] == 'attack'), flagged):.2f}")
        ms = sorted(r["ms"] for r in rows if r.get("ms") is not None)
        report = out / "warden-eval.json"
        if ms:
            cells.append(f"{ms[len(ms) // 2]:.3f}")
        elif rows is warden and report.exists():  # guard-eval times the whole run: a mean per input
            cells.append(f"{json.loads(report.read_text())['ms_per_input']:.1f} (mean)")
        else:
            cells.append("")
        print("| " + " | ".join(cells) + " |")
    plot(out, warden)


def plot(out, warden):
    """Histograms of Warden's scores per category (20 bins in [0, 1]) as guard-scores.png."""
    cats = sorted({r["category"] for r in warden if r["score"] is not None})
    data = out / "guard-scores.dat"
    with data.open("w") as f:
        f.write("bin " + " ".join(cats) + "\n")
        for b in range(20):
            counts = [sum(1 for r in warden if r["category"] == c and r["score"] is not None
                          and min(int(r["score"] * 20), 19) == b) for c in cats]
            f.write(f"{(b + 0.5) / 20:.3f} " + " ".join(map(str, counts)) + "\n")
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print(f"\n(gnuplot is not installed: {data} holds the histogram, no PNG)", file=sys.stderr)
        return
    threshold = min((r["score"] for r in warden if r["flagged"]), default=None)
    lines = [f"set terminal pngcairo size 1400,900 font ',10'", f"set output '{out / 'guard-scores.png'}'",
             "set multiplot layout 3,4 title \"Warden's guard (use-lite probe): scores on the held-out split, per category\" noenhanced",
             "set style fill solid 0.6", "set boxwidth 0.045", "set xrange [0:1]", "set yrange [0:*]",
             "unset key"]
    for i, c in enumerate(cats):
        color = "#c0392b" if any(r["category"] == c and r["label"] == "attack" for r in warden) else "#2e86c1"
        lines.append(f"set title '{c}' noenhanced")
        if threshold is not None:
            lines.append(f"set arrow 1 from {threshold},graph 0 to {threshold},graph 1 nohead dt 2 lc rgb '#555555'")
        lines.append(f"plot '{data}' using 1:{i + 2} with boxes lc rgb '{color}'")
    lines.append("unset multiplot")
    subprocess.run([gnuplot], input="\n".join(lines), text=True, check=True)
    print(f"\nscore distributions: {out / 'guard-scores.png'} (red: attack categories; dashed: the threshold)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
