#!/usr/bin/env bash
# quickstart.sh PREFIX SOURCE_DIR SANITIZE_FLAGS - docs/quickstart.md, done as
# written: its files (the blocks after <!-- quickstart: NAME -->) built
# against the installed package in an empty folder, the program run, and its
# trace decoded as the page shows (and queried with Perfetto's trace
# processor, $TRACEC_TRACE_PROCESSOR when set, as the page shows).
set -euo pipefail
P=$1 SRC=$2 SAN=${3:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
doc=$SRC/docs/quickstart.md
# Every block preceded by <!-- quickstart: NAME --> goes to $W/NAME.
awk -v dir="$W" '
  /^<!-- quickstart: .* -->$/ { name = $3; next }
  name != "" && /^```/ && !inside { inside = 1; next }
  inside && /^```/ { inside = 0; name = ""; next }
  inside { print > (dir "/" name) }
' "$doc"
for f in my_events.proto app.c CMakeLists.txt decoded args; do
  [ -s "$W/$f" ] || { echo "quickstart.md has no '<!-- quickstart: $f -->' block"; exit 1; }
done
# The packages of step 1 are all installed by scripts/setup.sh.
for p in $(sed -n '/^sudo apt-get install/,/^```/p' "$doc" | tr ' \\' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' \
           | grep -vxE 'sudo|apt-get|install|ca-certificates|git'); do
  grep -q -- "$p" "$SRC/scripts/setup.sh" || { echo "quickstart.md installs $p, scripts/setup.sh does not"; exit 1; }
done
cd "$W"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" \
  >configure.log 2>&1 || { cat configure.log; exit 1; }
cmake --build build >build.log 2>&1 || { cat build.log; exit 1; }
./build/app
"$P/bin/tracec" decode first.pftrace >decoded.out
/usr/bin/python3 - decoded decoded.out <<'PY' || exit 1
import sys
want, got = open(sys.argv[1]).read(), open(sys.argv[2]).read()
if want not in got:
    sys.exit("quickstart.md's decoded packet is not in `tracec decode first.pftrace`:\n" + got)
PY
echo "decoded as the page shows"
tp=${TRACEC_TRACE_PROCESSOR:-}
if [ -n "$tp" ] && [ -x "$tp" ]; then
  echo 'select s.name, a.key, a.display_value from slice s join args a using(arg_set_id)' >args.sql
  "$tp" first.pftrace -q args.sql 2>/dev/null >args.out
  diff args args.out || { echo "the trace processor shows other args than quickstart.md"; exit 1; }
  echo "the trace processor shows the page's args"
else
  echo "no trace processor (TRACEC_TRACE_PROCESSOR='$tp'): the args check did not run"
fi
