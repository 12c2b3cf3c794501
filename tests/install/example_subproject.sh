#!/usr/bin/env bash
# example_subproject.sh SOURCE_DIR - tracec as a subproject: examples/cmake
# with add_subdirectory, and a project that gets tracec with FetchContent
# (from this source tree, no network).  The same tracec_generate() and
# tracec:: targets, no tests of tracec's, only what the example needs built.
set -euo pipefail
SRC=$1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# Ninja when installed (less CPU than make for the same compiles), else make.
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi
cmake -S "$SRC/examples/cmake" -B "$W/b" "${gen[@]}" -DTRACEC_SOURCE_DIR="$SRC" >"$W/configure.log" 2>&1 \
  || { cat "$W/configure.log"; exit 1; }
if grep -q "Criterion\|criterion" "$W/configure.log"; then echo "the subproject configured its tests"; exit 1; fi
cmake --build "$W/b" -j2 --target example >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
"$W/b/example" "$W/out.pftrace" >/dev/null
if [ -e "$W/b/tracec/tools/tracec/tracec" ]; then echo "built more than the example needs"; exit 1; fi
# Warnings are not errors in a subproject (TRACEC_WERROR defaults to OFF): no
# compile of a file under tracec/ has -Werror (make: its flags.make and
# build.make files; Ninja: the FLAGS of build.ninja's statements for tracec/).
werror() {
  if [ -f "$W/b/build.ninja" ]; then
    awk '/^build /{ours = ($2 ~ /^tracec\//)} ours && /^  FLAGS = / && /-Werror/ {print; n++} END {exit n == 0}' "$W/b/build.ninja"
  else
    grep -r --include=flags.make --include=build.make -e "-Werror" "$W/b/tracec"
  fi
}
if werror >"$W/werror.txt"; then
  echo "the subproject compiles with -Werror:"; cat "$W/werror.txt"
  exit 1
fi
echo "subproject: no -Werror"
"$W/b/tracec/protoc-gen-tracec/protoc-gen-tracec" --version
echo "subproject example wrote $(stat -c %s "$W/out.pftrace") bytes"

# FetchContent: the documented three lines, SOURCE_DIR instead of a git URL.
mkdir "$W/fc"
cat >"$W/fc/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(fc LANGUAGES C)
include(FetchContent)
FetchContent_Declare(tracec SOURCE_DIR "$SRC")
FetchContent_MakeAvailable(tracec)
add_executable(app "$SRC/examples/example.c" "$SRC/examples/example_trace.c")
target_include_directories(app PRIVATE "$SRC/examples")
tracec_generate(TARGET app PROTOS "$SRC/examples/my_events.proto")
target_link_libraries(app PRIVATE tracec::tracec)
CM
cmake -S "$W/fc" -B "$W/fc/b" "${gen[@]}" >"$W/fc.log" 2>&1 || { cat "$W/fc.log"; exit 1; }
cmake --build "$W/fc/b" -j2 --target app >"$W/fcb.log" 2>&1 || { cat "$W/fcb.log"; exit 1; }
"$W/fc/b/app" "$W/fc.pftrace" >/dev/null
echo "FetchContent example wrote $(stat -c %s "$W/fc.pftrace") bytes"
