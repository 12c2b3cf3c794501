#!/usr/bin/env bash
# codegen_compile_checks: what the compiler says about generated code.
#   1. asm: at -O2 a setter sequence inlines to straight-line stores: from the
#      function's entry to its first `ret` there is no call and no jump (only
#      the bounds checks' conditional branches to the out-of-line slow path),
#      and the only call anywhere is tracec_writer_slowpath.  gcc and clang, x86-64.
#   2. wrapper types are checked: opening a TrackEvent as the wrong wrapper, or
#      passing a wrapper where its base is expected, does not compile.
#   3. deprecated fields, messages and enum values warn where user code uses
#      them (and -Werror fails), while including the header alone is clean.
#   4. 32-bit (gcc -m32, when gcc-multilib is installed): the byte writer and
#      the runtime built for i386 produce the same bytes as protoc (bytes_check.py).
#
#   compile_checks.sh SOURCE_DIR GEN_DIR SCHEMA_DIR PYTHON3 PROTOC PROTOBUF_INCLUDE
set -uo pipefail
export LC_ALL=C
src=$1 gen=$2 schema=$3 py=$4 protoc=$5 gpb=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }
INC=(-I"$gen" -I"$schema" -I"$src/runtime/include")
STRICT=(-std=c11 -pedantic -Wall -Wextra -Werror)

# ---- 1. assembly ----------------------------------------------------------
cat > "$tmp/asm.c" <<'C'
#include "perfetto/trace/track_event/track_event.tracec.h"
void write_event(perfetto_protos_TrackEvent *ev);
void write_event(perfetto_protos_TrackEvent *ev) {
    perfetto_protos_TrackEvent_set_track_uuid(ev, 0x1234);
    perfetto_protos_TrackEvent_set_type(ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    perfetto_protos_TrackEvent_set_double_counter_value(ev, 1.5);
}
C
if [ "$(uname -m)" = x86_64 ]; then
  for cc in gcc clang; do
    have $cc || { echo "skip asm $cc: not installed"; continue; }
    $cc "${STRICT[@]}" -O2 -S "${INC[@]}" "$tmp/asm.c" -o "$tmp/asm_$cc.s" || { bad "asm: $cc -S"; continue; }
    body=$(sed -n '/^write_event:/,/\.size[[:space:]]*write_event/p' "$tmp/asm_$cc.s" | grep -v '^[[:space:]]*[.#]' )
    fast=$(printf '%s\n' "$body" | sed -n '1,/^[[:space:]]*retq\{0,1\}\b/p')
    calls=$(printf '%s\n' "$body" | grep -E '^[[:space:]]*(call|jmp)[a-z]*[[:space:]]+[A-Za-z_]' | grep -v 'tracec_writer_slowpath' | grep -v '\.L')
    if printf '%s\n' "$fast" | grep -qE '^[[:space:]]*(call|jmp)'; then
      bad "asm ($cc -O2): the fast path is not straight-line:"; printf '%s\n' "$fast"
    elif [ -n "$calls" ]; then
      bad "asm ($cc -O2): calls other than the slow path: $calls"
    else
      stores=$(printf '%s\n' "$fast" | grep -cE '^[[:space:]]*mov[a-z]*[[:space:]].*,[[:space:]]*-?[0-9]*\(%r')
      ok "asm ($cc -O2): 3 setters = straight-line code ($(printf '%s\n' "$fast" | grep -c .) instructions, $stores stores) up to ret; only tracec_writer_slowpath is called"
    fi
  done
else
  echo "skip asm: not x86-64"
fi

# ---- 2. wrapper types are checked ------------------------------------------
cat > "$tmp/wrong_wrapper.c" <<'C'
#include "stress/perfetto_ext.tracec.h"
#include "stress/te_only.tracec.h"
void f(perfetto_protos_TracePacket *pkt);
void f(perfetto_protos_TracePacket *pkt) {
    tracec_stress_teonly_Ev ev;
    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);
}
C
cat > "$tmp/wrapper_as_base.c" <<'C'
#include "stress/perfetto_ext.tracec.h"
void f(perfetto_protos_TracePacket *pkt);
void f(perfetto_protos_TracePacket *pkt) {
    tracec_stress_pf_TeWrapper ev;
    perfetto_protos_TracePacket_begin_track_event(pkt, &ev);
}
C
cat > "$tmp/right.c" <<'C'
#include "stress/perfetto_ext.tracec.h"
void f(perfetto_protos_TracePacket *pkt);
void f(perfetto_protos_TracePacket *pkt) {
    tracec_stress_pf_TeWrapper ev;
    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);
    perfetto_protos_TrackEvent_set_track_uuid(&ev.base, 1);
    perfetto_protos_TracePacket_end_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);
}
C
for cc in gcc clang; do
  have $cc || continue
  if $cc "${STRICT[@]}" "${INC[@]}" -fsyntax-only "$tmp/right.c" 2> "$tmp/err"; then
    ok "types ($cc): the right wrapper, and &wrapper.base as the base writer, compile"
  else
    bad "types ($cc): the right wrapper does not compile:"; head -5 "$tmp/err"
  fi
  for t in wrong_wrapper wrapper_as_base; do
    if $cc "${STRICT[@]}" "${INC[@]}" -fsyntax-only "$tmp/$t.c" 2> "$tmp/err"; then
      bad "types ($cc): $t.c compiled but must not"
    elif grep -q 'incompatible pointer type' "$tmp/err"; then
      ok "types ($cc): $t.c is rejected (incompatible pointer type)"
    else
      bad "types ($cc): $t.c failed for another reason:"; head -5 "$tmp/err"
    fi
  done
done

# ---- 3. deprecated ---------------------------------------------------------
printf '#include "stress/all_types.tracec.h"\nint dummy;\n' > "$tmp/dep_include.c"
cat > "$tmp/dep_field.c" <<'C'
#include "stress/all_types.tracec.h"
void f(tracec_stress_UsesDeprecated *u);
void f(tracec_stress_UsesDeprecated *u) { tracec_stress_UsesDeprecated_set_gone(u, 1); }
C
cat > "$tmp/dep_message.c" <<'C'
#include "stress/all_types.tracec.h"
void f(void);
void f(void) { tracec_stress_Deprecated d; (void)d; }
C
cat > "$tmp/dep_value.c" <<'C'
#include "stress/all_types.tracec.h"
int f(void);
int f(void) { return (int)tracec_stress_OLD_B; }
C
cat > "$tmp/dep_enum.c" <<'C'
#include "stress/all_types.tracec.h"
int f(void);
int f(void) { tracec_stress_OldEnum e = tracec_stress_OLD_A; return (int)e; }
C
cat > "$tmp/dep_wrapper.c" <<'C'
#include "stress/perfetto_ext.tracec.h"
void f(tracec_stress_pf_TeWrapper *w);
void f(tracec_stress_pf_TeWrapper *w) { tracec_stress_pf_TeWrapper_set_flow_ids_old(w, 1); }
C
for cc in gcc clang; do
  have $cc || continue
  for t in dep_include; do
    if $cc "${STRICT[@]}" "${INC[@]}" -fsyntax-only "$tmp/$t.c" 2> "$tmp/err"; then
      ok "deprecated ($cc): including a header with deprecated fields, messages, enums and values is clean"
    else
      bad "deprecated ($cc): the header alone warns:"; head -10 "$tmp/err"
    fi
  done
  for t in dep_field dep_message dep_enum dep_value dep_wrapper; do
    if $cc "${STRICT[@]}" "${INC[@]}" -fsyntax-only "$tmp/$t.c" 2> "$tmp/err"; then
      bad "deprecated ($cc): $t.c compiled without a warning"
    elif grep -q 'deprecated' "$tmp/err"; then
      ok "deprecated ($cc): $t.c warns at the use ($(grep -o "'[A-Za-z_]*' is deprecated" "$tmp/err" | head -1))"
    else
      bad "deprecated ($cc): $t.c failed for another reason:"; head -5 "$tmp/err"
    fi
  done
done

# ---- 4. 32-bit -------------------------------------------------------------
echo 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }' > "$tmp/m32.c"
if gcc -m32 "$tmp/m32.c" -o "$tmp/m32" 2>/dev/null && "$tmp/m32"; then
  if gcc -m32 "${STRICT[@]}" -O2 "${INC[@]}" "$src/tests/codegen/byte_writer.c" "$gen"/stress/*.tracec.c \
      "$gen"/stress/dir/*.tracec.c "$schema"/perfetto/trace/*.tracec.c "$schema"/perfetto/trace/*/*.tracec.c \
      "$schema"/google/protobuf/descriptor.tracec.c \
      "$src/runtime/src/writer.c" "$src/runtime/src/registry.c" "$src/runtime/src/status.c" \
      -lm -o "$tmp/byte_writer32" 2> "$tmp/err"; then
    if "$py" "$src/tests/codegen/bytes_check.py" --protoc "$protoc" --writer "$tmp/byte_writer32" \
        --src "$src" --gpb "$gpb" > "$tmp/out32" 2>&1; then
      ok "32-bit (gcc -m32): $(grep -c '^ok' "$tmp/out32") byte cases equal protoc's"
    else
      bad "32-bit (gcc -m32) bytes:"; cat "$tmp/out32"
    fi
  else
    bad "32-bit (gcc -m32) build:"; head -20 "$tmp/err"
  fi
else
  echo "skip 32-bit: gcc -m32 cannot build here (apt-get install gcc-multilib)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
