#!/usr/bin/env bash
# example_cmake.sh PREFIX SOURCE_DIR SANITIZE_FLAGS - examples/cmake against the
# installed package from a clean build directory: find_package(tracec 0.2),
# tracec_generate() and its dependency tracking; the version file.
set -euo pipefail
P=$1 SRC=$2 SAN=${3:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cp -r "$SRC/examples" "$W/examples"
# Each generator CMake users have here: Unix Makefiles, and Ninja when installed.
generators=("Unix Makefiles")
if command -v ninja >/dev/null; then generators+=(Ninja); fi
for G in "${generators[@]}"; do
  B=$W/b-${G// /-}
  cmake -G "$G" -S "$W/examples/cmake" -B "$B" -DCMAKE_PREFIX_PATH="$P" \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >"$W/configure.log" 2>&1 \
    || { cat "$W/configure.log"; exit 1; }
  build() { cmake --build "$B" >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }; }
  regenerated() { grep -c "protoc-gen-tracec: " "$W/build.log" || true; }
  build
  [ "$(regenerated)" = 1 ] || { echo "$G: first build did not generate once"; cat "$W/build.log"; exit 1; }
  [ -f "$B/tracec_gen/my_events.tracec.c" ] || { echo "$G: no tracec_gen/my_events.tracec.c"; exit 1; }
  "$B/example" "$W/out.pftrace" >/dev/null
  "$P/bin/tracec" decode "$W/out.pftrace" | grep -F '[my_app.MyEvent.custom_string]: "hello from C"'

  # Dependency tracking: an edit to the .proto, to a .proto it imports, or a
  # new plugin regenerates; nothing else does.
  check() { # what, expected regenerations
    build
    [ "$(regenerated)" = "$2" ] \
      || { echo "$G, after $1: expected $2 regenerations, got $(regenerated)"; cat "$W/build.log"; exit 1; }
    echo "after $1: $2 regeneration(s)"
  }
  check "nothing" 0
  sleep 1
  touch "$W/examples/example.c"; check "editing example.c" 0
  echo "// edited" >>"$W/examples/my_events.proto"; check "editing my_events.proto" 1
  touch "$P/share/tracec/protos/perfetto/trace/track_event/debug_annotation.proto"
  check "editing an imported .proto" 1
  touch "$P/bin/protoc-gen-tracec"; check "a new plugin binary" 1
  echo "$G: dependency tracking as documented"
done

# The version file: 0.2 is accepted, 0.3 and 1.0 are not.
for v in 0.2 0.3 1.0; do
  mkdir -p "$W/v$v"
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES C)\nfind_package(tracec %s CONFIG REQUIRED)\nmessage(STATUS "tracec ${tracec_VERSION}: ${TRACEC_PROTO_DIR}")\n' "$v" \
    >"$W/v$v/CMakeLists.txt"
  if cmake -S "$W/v$v" -B "$W/v$v/b" -DCMAKE_PREFIX_PATH="$P" >"$W/v$v/log" 2>&1; then
    echo "find_package(tracec $v): found $(grep -o 'tracec [0-9.]*:' "$W/v$v/log")"
  else
    echo "find_package(tracec $v): not found"
  fi
done

# Every imported target docs/build-integration.md lists.
mkdir -p "$W/targets"
cat >"$W/targets/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(targets LANGUAGES C)
find_package(tracec 0.2 CONFIG REQUIRED)
foreach(t tracec schema text grammar decode pb protoc-gen-tracec cli)
  if(NOT TARGET tracec::${t})
    message(FATAL_ERROR "no imported target tracec::${t}")
  endif()
endforeach()
message(STATUS "imported targets: all present")
EOF
cmake -S "$W/targets" -B "$W/targets/b" -DCMAKE_PREFIX_PATH="$P" >"$W/targets/log" 2>&1 \
  || { cat "$W/targets/log"; exit 1; }
grep -o 'imported targets: all present' "$W/targets/log"
