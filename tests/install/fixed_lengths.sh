#!/usr/bin/env bash
# fixed_lengths.sh SOURCE_DIR BUILD_DIR C_COMPILER - tracec built
# with TRACEC_FIXED_NESTED_LENGTHS=ON (in BUILD_DIR, kept between runs) as a
# distribution builds it (shared, /usr, no C++ compiler, no RUNPATH) and
# installed; examples/make's example and te_example, a plain Makefile with
# flags from pkg-config only, built against it.  The library ends packets the
# program begins inline, so both must use one nested-length form:
# tracec/config.h carries it.  The traces must decode, and example's, which
# the program's inline code writes alone (a trace file), must have the fixed
# 4-byte lengths.
set -euo pipefail
SRC=$1 B=$2 CC=$3
# No C++ compiler: a build without the tests and benchmarks needs none (a packager's, or a C-only parent's).
# Ninja when installed (less CPU than make for the same compiles), for a new BUILD_DIR.
gen=()
if [ ! -f "$B/CMakeCache.txt" ] && command -v ninja >/dev/null; then gen=(-G Ninja); fi
mkdir -p "$B"
cmake -S "$SRC" -B "$B" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER=/nonexistent/c++ \
  -DTRACEC_BUILD_TESTS=OFF -DTRACEC_BUILD_EXAMPLES=OFF -DTRACEC_FIXED_NESTED_LENGTHS=ON \
  -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr \
  >"$B/configure.log" 2>&1 || { cat "$B/configure.log"; exit 1; }
cmake --build "$B" -j"${JOBS:-2}" >"$B/build.log" 2>&1 || { tail -n 40 "$B/build.log"; exit 1; }
P=$(mktemp -d)
W=$(mktemp -d)
trap 'rm -rf "$P" "$W"' EXIT
# As a distribution packs it: shared libraries, prefix /usr, staged with DESTDIR.
DESTDIR=$P cmake --install "$B" >/dev/null
U=$P/usr
pc=$(dirname "$(find "$U" -name tracec.pc | head -n 1)")
LIB=$(dirname "$pc")
grep -q "^#define TRACEC_CONFIG_FIXED_NESTED_LENGTHS 1$" "$U/include/tracec/config.h" \
  || { echo "the installed tracec/config.h does not carry the option"; exit 1; }
# The loader searches /usr/lib/<triplet> itself: no RUNPATH in the installed programs (packaging checks flag one).
for exe in tracec protoc-gen-tracec; do
  if readelf -d "$U/bin/$exe" | grep -qE 'RUNPATH|RPATH'; then
    echo "$exe installed under /usr carries a RUNPATH:"; readelf -d "$U/bin/$exe" | grep -E 'RUNPATH|RPATH'; exit 1
  fi
done
export PKG_CONFIG_PATH=$pc LD_LIBRARY_PATH=$LIB
cd "$W"
make -f "$SRC/examples/make/Makefile" example te_example >make.log 2>&1 || { cat make.log; exit 1; }
./example out.pftrace >/dev/null
./te_example te.pftrace >/dev/null
for t in out te; do
  "$U/bin/tracec" decode $t.pftrace >$t.txt 2>err.txt || { echo "tracec decode fails on $t.pftrace:"; cat err.txt; exit 1; }
  protoc --decode=perfetto.protos.Trace -I "$U/share/tracec/protos" perfetto/trace/trace.proto \
    <$t.pftrace >/dev/null 2>err.txt || { echo "protoc --decode fails on $t.pftrace:"; cat err.txt; exit 1; }
done
grep -qF '"read block"' te.txt || { echo "no 'read block' in the decoded trace"; exit 1; }
grep -qF '[my_app.MyEvent.custom_counter]: -42' out.txt || { echo "no custom_counter in example's trace"; exit 1; }
# A short body's fixed length: (0x80 | n) 0x80 0x80 0x00.
python3 - out.pftrace <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
n = len(re.findall(rb"[\x80-\xff]\x80\x80\x00", data))
if n == 0:
    sys.exit("example's trace has no fixed 4-byte nested length: the program did not compile the library's form")
print(f"example's trace: {n} fixed 4-byte nested lengths")
PY
echo "TRACEC_FIXED_NESTED_LENGTHS install: example and te_example from a plain Makefile write packets that decode"
