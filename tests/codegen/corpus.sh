#!/usr/bin/env bash
# codegen_corpus: runs protoc-gen-tracec once over a large schema tree (all of
# protos/, protobuf's well-known types, descriptor.proto and plugin.proto,
# examples/ and test_extensions/, the stress protos and a generated message
# with thousands of fields) and compiles every output with strict flags:
#   - every .c, as one unity translation unit, with gcc and clang
#     (-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -O2);
#   - every .h in one C++17 translation unit, with g++ and clang++ (-pedantic -Werror);
#   - the gcc unity object linked with the runtime: each file is registered once.
#
#   corpus.sh SOURCE_DIR PLUGIN PROTOC PROTOBUF_INCLUDE
set -uo pipefail
src=$1 plugin=$2 protoc=$3 gpb=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }

# A message with 3000 fields of every kind (and an enum and a nested message).
mkdir -p "$tmp/in/stress"
{
  echo 'syntax = "proto2";'
  echo 'package tracec.many;'
  echo 'enum Many { MANY_ZERO = 0; MANY_ONE = 1; }'
  echo 'message Sub { optional int32 x = 1; }'
  echo 'message ManyFields {'
  types=(int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool float double string bytes Many Sub)
  for i in $(seq 1 3000); do
    t=${types[$((i % ${#types[@]}))]}
    if [ $((i % 3)) -eq 0 ]; then lab=repeated; else lab=optional; fi
    echo "  $lab $t field_number_$i = $i;"
  done
  echo '}'
} > "$tmp/in/stress/many_fields.proto"

protos=()
while IFS= read -r f; do protos+=("${f#"$src/protos/"}"); done < <(find "$src/protos" -name '*.proto' | sort)
for f in "$gpb"/google/protobuf/*.proto "$gpb"/google/protobuf/compiler/plugin.proto; do
  protos+=("${f#"$gpb/"}")
done
while IFS= read -r f; do protos+=("${f#"$src/tests/codegen/protos/"}"); done \
  < <(find "$src/tests/codegen/protos" -name '*.proto' | sort)
protos+=(test_extensions.proto my_events.proto stress/many_fields.proto)

mkdir -p "$tmp/out"
start=$(date +%s.%N)
if "$protoc" --plugin=protoc-gen-tracec="$plugin" --tracec_out="$tmp/out" \
    -I"$src/protos" -I"$gpb" -I"$src/tests/codegen/protos" -I"$src/test_extensions" \
    -I"$src/examples" -I"$tmp/in" "${protos[@]}" 2> "$tmp/protoc.err"; then
  ok "protoc-gen-tracec over ${#protos[@]} files ($(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e-s}') s)"
else
  bad "protoc-gen-tracec over the corpus:"; cat "$tmp/protoc.err"
  echo "$pass passed, $fail failed"; exit 1
fi

cd "$tmp/out"
find . -name '*.tracec.c' | sort | sed 's|^\./||; s|.*|#include "&"|' > "$tmp/unity.c"
find . -name '*.tracec.h' | sort | sed 's|^\./||; s|.*|#include "&"|' > "$tmp/all.cpp"
nfiles=$(wc -l < "$tmp/unity.c")
[ "$nfiles" -eq "${#protos[@]}" ] && ok "one .h and one .c per file ($nfiles)" ||
  bad "expected ${#protos[@]} .c files, got $nfiles"

CFLAGS=(-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -O2)
INC=(-I"$tmp/out" -I"$src/runtime/include")
for cc in gcc clang; do
  if ! have $cc; then echo "skip $cc: not installed"; continue; fi
  if $cc "${CFLAGS[@]}" "${INC[@]}" -c "$tmp/unity.c" -o "$tmp/unity_$cc.o" 2> "$tmp/$cc.err"; then
    ok "$cc: every generated .c and .h compiles with ${CFLAGS[*]}"
  else
    bad "$cc strict compile:"; head -40 "$tmp/$cc.err"
  fi
done
for cxx in g++ clang++; do
  if ! have $cxx; then echo "skip $cxx: not installed"; continue; fi
  if $cxx -std=c++17 -pedantic -Wall -Wextra -Werror "${INC[@]}" -fsyntax-only -x c++ "$tmp/all.cpp" \
      2> "$tmp/$cxx.err"; then
    ok "$cxx: every generated header compiles as C++17 (-pedantic -Wall -Wextra -Werror)"
  else
    bad "$cxx C++17 compile:"; head -40 "$tmp/$cxx.err"
  fi
done

# Link the unity object with the runtime: the registry holds each file once.
if [ -f "$tmp/unity_gcc.o" ] && gcc -std=c11 -O1 "${INC[@]}" "$tmp/unity_gcc.o" "$src/tests/codegen/registry_main.c" \
    "$src/runtime/src/registry.c" "$src/runtime/src/writer.c" "$src/runtime/src/status.c" \
    -o "$tmp/registry" 2> "$tmp/link.err"; then
  "$tmp/registry" | awk '{print $1}' | sort > "$tmp/registered"
  printf '%s\n' "${protos[@]}" | sort > "$tmp/expected"
  if diff "$tmp/expected" "$tmp/registered" > "$tmp/reg.diff"; then
    ok "registry: all $nfiles files registered once each"
  else
    bad "registry contents differ from the generated files:"; cat "$tmp/reg.diff"
  fi
else
  bad "link of the corpus with the runtime:"; head -20 "$tmp/link.err" 2>/dev/null
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
