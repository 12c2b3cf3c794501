#!/usr/bin/env bash
# Regenerates the checked-in generated files of examples/, test_extensions/ and
# the every-field-kind test proto (examples/golden/, test_extensions/golden/,
# tests/generator/plugin/golden/) with protoc-gen-tracec.
#
#   scripts/regen-golden.sh                 build the plugin in $TRACEC_BUILD_DIR (default
#                                           build/) and rewrite the golden files
#   scripts/regen-golden.sh --plugin PATH   use this plugin binary
#   scripts/regen-golden.sh --out DIR       write DIR/examples/golden/... instead of the
#                                           source tree (the golden check test does this)
#
# Any change to protoc-gen-tracec comes with the golden files this rewrites, in
# the same commit; the codegen_golden tests (tests/generator/codegen/test_golden.c) fail,
# printing the diff, when they drift.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
plugin=""
out="$src"
while [ $# -gt 0 ]; do
  case "$1" in
    --plugin) plugin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "regen-golden.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$plugin" ]; then
  build=${TRACEC_BUILD_DIR:-$src/build}
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$src" -B "$build" >/dev/null
  cmake --build "$build" --target protoc-gen-tracec >/dev/null
  plugin=$build/protoc-gen-tracec/protoc-gen-tracec
fi
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
protoc=${PROTOC:-protoc}
gpb=${TRACEC_PROTOBUF_INCLUDE:-/usr/include}

# gen <proto dir> <proto file> <golden dir> [tracec_opt]
gen() {
  local dir=$1 proto=$2 dest=$3 opt=${4:-}
  rm -rf "$dest"
  mkdir -p "$dest"
  (cd "$src/$dir" &&
    "$protoc" --plugin=protoc-gen-tracec="$plugin" --tracec_out="$dest" ${opt:+--tracec_opt=$opt} \
      -I. -I"$src/protos" -I"$gpb" "$proto")
}

# The options each CMakeLists.txt uses (none: the defaults).
gen examples my_events.proto "$out/examples/golden"
gen test_extensions test_extensions.proto "$out/test_extensions/golden"
gen tests/generator/plugin/protos all_types.proto "$out/tests/generator/plugin/golden"
echo "regen-golden.sh: wrote $out/examples/golden, $out/test_extensions/golden and $out/tests/generator/plugin/golden"
