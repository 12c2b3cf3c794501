#!/usr/bin/env bash
# example_criterion.sh PREFIX SOURCE_DIR SANITIZE_FLAGS - examples/criterion: a
# user's own Criterion test with tracec/testing.h, against the installed
# package, from a clean directory.
set -euo pipefail
P=$1 SRC=$2 SAN=${3:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# Run from a Criterion test: the inner runner must not think it is a worker of the outer one.
unset BXFI_MAP
cmake -S "$SRC/examples/criterion" -B "$W/b" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >"$W/configure.log" 2>&1 \
  || { cat "$W/configure.log"; exit 1; }
cmake --build "$W/b" >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
ctest --test-dir "$W/b" --output-on-failure 2>&1 | tail -n 3
