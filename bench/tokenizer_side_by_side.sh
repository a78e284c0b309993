#!/usr/bin/env bash
# Warden vs HuggingFace tokenizers, single thread, same corpus, alternating rounds so that
# load from other processes hits both sides alike. (The npm binding's encodeBatch takes
# single strings only, so pairs are measured on the Warden side alone.) Needs a WARDEN_BENCH build and the npm
# package (see docs/benchmarks.md). Usage: bench/tokenizer_side_by_side.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
corpus=${CORPUS:-/tmp/tokbench-corpus.txt}
bench=${BENCH:-build/bench/bin/tokenizer_bench}
export NODE_PATH=${NODE_PATH:-/tmp/tokref/node_modules}
[[ -f $corpus ]] || node tools/tokref/bench.js --corpus "$corpus"
files=(tests/data/bert-base-uncased-tokenizer.json tests/data/unigram-use-vocab-tokenizer.json
       tests/data/tokref/unigram-xlmr.json tests/data/tokref/bpe-roberta.json)
for r in $(seq "$rounds"); do
  echo "== round $r: warden"
  "$bench" "$corpus" "${files[@]}" --runs 5
  echo "== round $r: warden, pairs"
  "$bench" "$corpus" "${files[0]}" --runs 5 --pairs
  echo "== round $r: huggingface"
  node tools/tokref/bench.js "$corpus" "${files[@]}" --runs 5
done
