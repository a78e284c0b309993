#!/usr/bin/env bash
# scripts/run (the README's first command) ends by serving the built-in default on
# 127.0.0.1 after printing the requests that try it; `scripts/run embed TEXT` stays the
# one-shot embedding. Usage: scripts_run_test.sh WARDEN_BINARY
set -euo pipefail
source "$(dirname "$0")/../support/listening_port.sh"
warden=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
log=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT

WARDEN_BIN=$warden WARDEN_PORT=0 "$root/scripts/run" 2>"$log" &
pid=$!
port=$(listening_port "$log")
[[ -n "$port" ]] || { echo "FAIL: scripts/run did not start a server"; cat "$log"; exit 1; }
grep -q "curl http://127.0.0.1:0/embed" "$log" || { echo "FAIL: no curl line for /embed"; cat "$log"; exit 1; }
grep -q "/similarity" "$log" && grep -q "/guard" "$log" || { echo "FAIL: no similarity/guard lines"; exit 1; }
grep -q "model=use-lite\|model=hashing-ngram-256" "$log" || { echo "FAIL: not the built-in default"; cat "$log"; exit 1; }
answer=$(curl -s "http://127.0.0.1:$port/embed" -H 'Content-Type: application/json' -d '{"inputs": "hello"}')
[[ "$answer" == "[["* ]] || { echo "FAIL: /embed answered $answer"; exit 1; }
kill "$pid"
wait "$pid" || true

lines=$(WARDEN_BIN=$warden "$root/scripts/run" embed "one text" "another" 2>/dev/null | wc -l)
[[ "$lines" == 2 ]] || { echo "FAIL: scripts/run embed printed $lines lines"; exit 1; }
echo "scripts/run serves and embeds: ok"
