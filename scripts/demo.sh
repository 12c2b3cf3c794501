#!/usr/bin/env bash
# The main job, end to end: build the plugin and runtime, generate C writers
# from examples/my_events.proto, run the example program (it writes
# example.pftrace), and print the trace decoded by independent decoders.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"

build="$root/build-demo"
echo "==> building protoc-gen-tracec, libtracec and the example (in $build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEC_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target protoc-gen-tracec example te_example >/dev/null
cmake --build "$build" -j"$(nproc)" --target tracec_cli >/dev/null 2>&1 || true

echo
echo "==> generating writers: protoc --tracec_out=... examples/my_events.proto"
gen="$build/demo-gen"
mkdir -p "$gen"
( set -x; protoc --plugin=protoc-gen-tracec="$build/protoc-gen-tracec/protoc-gen-tracec" \
    --tracec_out="$gen" -I "$root/examples" -I "$root/protos" my_events.proto )
ls -l "$gen"
echo "    e.g. $(grep -m1 -o 'static inline void my_app_MyEvent_set_cstr_custom_string([^)]*)' "$gen/my_events.tracec.h")"

echo
echo "==> running the example"
"$build/examples/example" "$root/example.pftrace"

echo
echo "==> example.pftrace decoded by protoc --decode (an independent decoder)"
echo "    (the ExtensionDescriptor packet's descriptor set is elided here)"
protoc --decode=perfetto.protos.Trace -I "$root/protos" -I "$root/examples" -I "$root/scripts" -I /usr/include \
  decode_demo.proto < "$root/example.pftrace" 2> >(grep -v "is unused" >&2) |
  awk '/^ *extension_set \{/ { skip = 1; ind = index($0, "e"); print substr($0, 1, ind - 1) "extension_set { ... }"; next }
       skip && match($0, /^ *\}/) && RLENGTH == ind { skip = 0; next }
       !skip { print }'

tracec_bin=$(find "$build" -maxdepth 3 -type f -name tracec -perm -u+x 2>/dev/null | head -n 1 || true)
if [ -n "$tracec_bin" ]; then
  echo
  echo "==> the same trace through 'tracec args' (extension fields resolved from the trace's own descriptor packet)"
  "$tracec_bin" args "$root/example.pftrace" || true
fi

echo
echo "==> track events in one line: examples/te_example.c (slices, counters, flows, a typed MyEvent, two threads)"
"$build/examples/te_example" "$root/te_example.pftrace"
tp="$root/../shared/tools/trace_processor_shell"
if [ -x "$tp" ]; then
  echo "    as Perfetto's trace processor sees it:"
  q=$(mktemp)
  cat >"$q" <<'SQL'
select s.ts - (select min(ts) from slice) as rel_ts, s.dur, s.name, s.category, s.depth, t.name as thread,
       group_concat(a.key || '=' || coalesce(a.int_value, a.string_value, a.real_value), ' ') as args
from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
left join args a on a.arg_set_id = s.arg_set_id and a.key not like 'legacy_event.%'
group by s.id order by s.ts;
select t.name as counter, c.value from counter c join counter_track t on c.track_id = t.id order by c.ts;
SQL
  "$tp" "$root/te_example.pftrace" -q "$q" 2>/dev/null || true
  rm -f "$q"
elif [ -n "$tracec_bin" ]; then
  "$tracec_bin" decode "$root/te_example.pftrace" | head -n 60
fi
