#!/usr/bin/env bash
# example_subproject.sh SOURCE_DIR - examples/cmake with tracec as a
# subproject (add_subdirectory, TRACEC_BUILD_TESTS off): the same
# tracec_generate() and tracec:: targets, only what the example needs built.
set -euo pipefail
SRC=$1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cmake -S "$SRC/examples/cmake" -B "$W/b" -DTRACEC_SOURCE_DIR="$SRC" >"$W/configure.log" 2>&1 \
  || { cat "$W/configure.log"; exit 1; }
if grep -q "Criterion\|criterion" "$W/configure.log"; then echo "the subproject configured its tests"; exit 1; fi
cmake --build "$W/b" -j2 --target example >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
"$W/b/example" "$W/out.pftrace" >/dev/null
if [ -e "$W/b/tracec/tools/tracec/tracec" ]; then echo "built more than the example needs"; exit 1; fi
"$W/b/tracec/protoc-gen-tracec/protoc-gen-tracec" --version
echo "subproject example wrote $(stat -c %s "$W/out.pftrace") bytes"
