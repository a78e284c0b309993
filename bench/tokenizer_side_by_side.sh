#!/usr/bin/env bash
# Warden vs HuggingFace tokenizers, single thread, same corpus, alternating rounds so that
# load from other processes hits both sides alike. (The npm binding's encodeBatch takes
# single strings only, so pairs are measured on the Warden side alone.) Needs a WARDEN_BENCH build and the npm
# package (see docs/benchmarks.md). Usage: bench/tokenizer_side_by_side.sh [ROUNDS]
#
# RUNS (default 5) timed runs per tokenizer and side, each round (after one warm-up run).
# The raw output goes to stdout as before; the same figures, one JSON line per tokenizer,
# side and round, go to $WARDEN_BENCH_RESULTS/tokenizer.jsonl (default build/bench-results;
# bench/run uses build/bench-results/report). NODE_PATH defaults to /tmp/tokref/node_modules
# when that exists, else to scripts/setup-reference's ~/.cache/warden/tokref/node_modules.
# Time: ~20 s a round with RUNS=5 (HF's side is most of it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${RUNS:-5}
corpus=${CORPUS:-/tmp/tokbench-corpus.txt}
bench=${BENCH:-build/bench/bin/tokenizer_bench}
results=${WARDEN_BENCH_RESULTS:-build/bench-results}
if [[ -z ${NODE_PATH:-} ]]; then
  NODE_PATH=/tmp/tokref/node_modules
  [[ -d $NODE_PATH/@anush008/tokenizers ]] ||
    NODE_PATH=${WARDEN_TOKREF_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/warden/tokref}/node_modules
fi
export NODE_PATH
[[ -f $corpus ]] || node tools/tokref/bench.js --corpus "$corpus"
mkdir -p "$results"
out=$results/tokenizer.jsonl
: >"$out"
files=(tests/data/bert-base-uncased-tokenizer.json tests/data/unigram-use-vocab-tokenizer.json
       tests/data/tokref/unigram-xlmr.json tests/data/tokref/bpe-roberta.json tests/data/tokref/bpe-qwen3.json)

# record SIDE ROUND PAIRS: passes the bench's output through and appends its result lines
# ("<file> <MB/s> MB/s <seq/s> seq/s <tokens> tokens ...") to $out as JSON.
record() {
  awk -v side="$1" -v round="$2" -v pairs="$3" -v out="$out" '
    { print; fflush() }
    $3 == "MB/s" && $5 == "seq/s" && $7 == "tokens" {
      n = split($1, parts, "/"); name = parts[n]; sub(/\.json$/, "", name)
      printf "{\"side\": \"%s\", \"round\": %d, \"pairs\": %s, \"tokenizer\": \"%s\", \"mb_per_s\": %s, \"seq_per_s\": %s, \"tokens\": %s}\n",
        side, round, pairs, name, $2, $4, $6 >>out
    }'
}

for r in $(seq "$rounds"); do
  echo "== round $r: warden"
  "$bench" "$corpus" "${files[@]}" --runs "$runs" 2>&1 | record warden "$r" false
  echo "== round $r: warden, pairs"
  "$bench" "$corpus" "${files[0]}" --runs "$runs" --pairs 2>&1 | record warden "$r" true
  echo "== round $r: huggingface"
  node tools/tokref/bench.js "$corpus" "${files[@]}" --runs "$runs" 2>&1 | record huggingface "$r" false
done
