#!/usr/bin/env bash
# Runs clients.test.mjs: installs the pinned SDKs (package-lock.json) from npm into its own
# folder, makes an embedding and a reranker fixture, starts `warden serve` on them with an
# API key, and runs node's test runner against it.
# Usage: run_clients_test.sh WARDEN WARDEN_FIXTURE WORK_DIR
set -euo pipefail
source "$(dirname "$0")/../support/listening_port.sh"
warden=$1
fixture=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/clients.test.mjs" "$work/"
# npm ci only when the lock file changed since the last install in this folder.
if ! cmp -s "$here/package-lock.json" "$work/node_modules/.warden-lock" 2>/dev/null; then
  (cd "$work" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$work/node_modules/.warden-lock"
fi
rm -rf "$work/emb" "$work/rr"
"$fixture" --arch bert --head none --preset tiny --seed 1 --out "$work/emb" >/dev/null
"$fixture" --arch bert --head reranker --preset tiny --seed 1 --out "$work/rr" >/dev/null

log="$work/serve.log"
"$warden" serve --model "emb=$work/emb" --model "rr=$work/rr" --api-key sesame --port 0 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
port=$(listening_port "$log")
[[ -n "$port" ]] || { echo "warden serve did not start:"; cat "$log"; exit 1; }
cd "$work"
WARDEN_URL="http://127.0.0.1:$port" node --test clients.test.mjs
