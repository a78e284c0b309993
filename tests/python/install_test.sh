#!/usr/bin/env bash
# The README's Python install command, run as a user runs it, into a venv made for this test:
# scripts/install-python VENV (reusing this tree's build through WARDEN_BUILD_DIR), then the
# one-liner the docs promise, from outside the repository.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/scripts/install-python" "$tmp/venv"
cd "$tmp"
shape=$(env -u PYTHONPATH "$tmp/venv/bin/python" -c \
  "import warden; print(warden.TextEmbedding('use-lite').embed(['hello'])[0].shape)")
echo "shape: $shape"
[[ "$shape" == "(512,)" ]]
# Installed, not found on a path: the module is the venv's copy, with the guard's bank beside it.
env -u PYTHONPATH "$tmp/venv/bin/python" - <<'PY'
import pathlib, warden, warden._warden as w
p = pathlib.Path(w.__file__)
assert "site-packages" in p.parts, p
assert (p.parent / "data" / "guard_bank.jsonl").is_file()
print("installed at", p)
PY
echo "python_install: ok"
