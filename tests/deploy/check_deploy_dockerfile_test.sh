#!/usr/bin/env bash
# scripts/check-deploy's runtime-library check, fed Dockerfiles it must pass and ones it must
# reject, so that it cannot pass by checking nothing:
#
#   tests/deploy/check_deploy_dockerfile_test.sh SOURCE_DIR WARDEN_BIN
#
#   1. deploy/Dockerfile as it is (the derived package list): passes.
#   2. a copy whose runtime stage names a hard-coded list, every package the binary's
#      libraries come from (deploy/runtime-packages' output): passes.
#   3. the same list without the package of libprotobuf.so.32: fails, naming the library and
#      the package (libprotobuf32).
#   4. the real Dockerfile without libcurl4 (the dlopen'ed libcurl.so.4 that ldd never lists):
#      fails, naming libcurl.so.4 and libcurl4.
set -euo pipefail
src=${1:?usage: check_deploy_dockerfile_test.sh SOURCE_DIR WARDEN_BIN}
bin=${2:?usage: check_deploy_dockerfile_test.sh SOURCE_DIR WARDEN_BIN}
check="$src/scripts/check-deploy"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
ok() { printf 'ok   %s\n' "$*"; }
no() { printf 'FAIL %s\n' "$*" >&2; failures=$((failures + 1)); }

run() {  # run NAME DOCKERFILE: check-deploy's Dockerfile part, its output in $work/NAME.out
  local rc=0
  WARDEN_DEPLOY_CHECK_STRICT=1 WARDEN_BIN="$bin" "$check" --only dockerfile --dockerfile "$2" \
    >"$work/$1.out" 2>&1 || rc=$?
  return "$rc"
}

# refused NAME DOCKERFILE PACKAGE LIBRARY WHAT: check-deploy must fail on DOCKERFILE, saying its
# runtime stage does not install PACKAGE (which LIBRARY, a regex, comes from).
refused() {
  if run "$1" "$2"; then
    no "$5 passes:"; cat "$work/$1.out" >&2
  elif grep -q "FAIL: .*does not install $3, which $4" "$work/$1.out"; then
    ok "$5 fails: $(grep "$3" "$work/$1.out")"
  else
    no "$5 fails, but not naming $4 and $3:"; cat "$work/$1.out" >&2
  fi
}

# 1. The real Dockerfile.
if run real "$src/deploy/Dockerfile"; then
  ok "deploy/Dockerfile passes"
else
  no "deploy/Dockerfile fails:"; cat "$work/real.out" >&2
fi

# 2 and 3. A hard-coded runtime list in place of the derived one.
all=$("$src/deploy/runtime-packages" "$bin" | tr '\n' ' ')
[[ $all == *libprotobuf32* ]] || no "deploy/runtime-packages $bin: no libprotobuf32 in '$all' (does the binary still link protobuf?)"
hardcode() {  # hardcode PACKAGES OUT: deploy/Dockerfile with "xargs -a FILE apt-get install ..." -> a list
  PACKAGES=$1 perl -0pe 's/xargs -a \S+\s*\\\n\s*apt-get install -y --no-install-recommends/apt-get install -y --no-install-recommends $ENV{PACKAGES}/' \
    "$src/deploy/Dockerfile" >"$2"
  # The rewrite must have happened, or the cases below would test the derived list again.
  if grep -q 'xargs -a' "$2" || ! grep -qF "no-install-recommends $1" "$2"; then
    no "could not rewrite deploy/Dockerfile's runtime install line into a hard-coded list (its form changed?)"
    return 1
  fi
}
if hardcode "$all" "$work/complete.Dockerfile"; then
  if run complete "$work/complete.Dockerfile"; then
    ok "a hard-coded list of every package passes"
  else
    no "a hard-coded list of every package fails:"; cat "$work/complete.out" >&2
  fi
fi
if hardcode "${all/libprotobuf32 /}" "$work/no-protobuf.Dockerfile"; then
  refused no-protobuf "$work/no-protobuf.Dockerfile" libprotobuf32 'libprotobuf\.so\.32 ' \
    "a hard-coded list without libprotobuf32"
fi

# 4. The dlopen'ed library.
sed 's/ libcurl4 ca-certificates curl/ ca-certificates curl/' "$src/deploy/Dockerfile" >"$work/no-curl.Dockerfile"
if cmp -s "$src/deploy/Dockerfile" "$work/no-curl.Dockerfile"; then
  no "could not remove libcurl4 from deploy/Dockerfile's runtime install line (its form changed?)"
else
  refused no-curl "$work/no-curl.Dockerfile" libcurl4 'libcurl\.so\.4' "a runtime stage without libcurl4"
fi

exit $((failures > 0))
