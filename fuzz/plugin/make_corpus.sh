#!/usr/bin/env bash
# Rewrites the protoc-captured seeds of fuzz/plugin/corpus: the exact
# CodeGeneratorRequests protoc sends protoc-gen-tracec, through a capture
# plugin (this script, run by protoc as protoc-gen-capture).  Seeds the fuzzer
# found (crash-*, leak-*, timeout-*, bad-*) are left alone.
#   fuzz/plugin/make_corpus.sh
set -euo pipefail
if [ "${CAPTURE_TO:-}" != "" ]; then # run by protoc: the request to a file, a response with
  cat >"$CAPTURE_TO"                  # supported_features = FEATURE_PROTO3_OPTIONAL and no file
  printf '\020\001'
  exit 0
fi
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
corpus=$src/fuzz/plugin/corpus
gpb=${TRACEC_PROTOBUF_INCLUDE:-/usr/include}
self=$src/fuzz/plugin/make_corpus.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$corpus"

plugin_proto=(-I"$gpb" google/protobuf/compiler/plugin.proto)
# Drops every source_code_info { ... } block of a request in text format
# (comments in it can hold braces: quoted strings are skipped as a whole).
strip_source_info() {
  python3 -c '
import re, sys
t = sys.stdin.read()
out, i = [], 0
for m in re.finditer(r"source_code_info \{", t):
    if m.start() < i: continue
    out.append(t[i:m.start()])
    j, depth = m.end(), 1
    while depth:
        c = t[j]
        if c == "\"":
            j += 1
            while t[j] != "\"": j += 2 if t[j] == "\\" else 1
        elif c == "{": depth += 1
        elif c == "}": depth -= 1
        j += 1
    i = j
out.append(t[i:])
sys.stdout.write("".join(out))'
}

# capture <seed name> <dir> <tracec_opt or ""> <protos...>: the request without source info
# (the generator ignores it; smaller seeds fuzz faster).
capture() {
  local name=$1 dir=$2 opt=$3
  shift 3
  (cd "$dir" && CAPTURE_TO="$tmp/req.bin" protoc --plugin=protoc-gen-capture="$self" \
    --capture_out="$tmp" ${opt:+--capture_opt=$opt} -I. -I"$src/protos" -I"$gpb" "$@")
  protoc --decode=google.protobuf.compiler.CodeGeneratorRequest "${plugin_proto[@]}" <"$tmp/req.bin" |
    strip_source_info |
    protoc --encode=google.protobuf.compiler.CodeGeneratorRequest "${plugin_proto[@]}" >"$corpus/$name"
}

seeds=$src/fuzz/plugin/protos
capture seed-tiny "$seeds" "" tiny.proto
capture seed-tiny-opts "$seeds" "include_style=angle,include_prefix=inc/,guard_prefix=G_,name_prefix=x_,descriptors=file" tiny.proto
capture seed-p3 "$seeds" "" p3.proto
capture seed-p2 "$seeds" "descriptors=none" p2.proto
capture seed-nopkg "$seeds" "name_prefix=np_" nopkg.proto
capture seed-ext "$seeds" "" ext.proto
capture seed-ext-and-deps "$seeds" "" ext.proto p2.proto p3.proto perfetto/trace/track_event/track_event.proto
capture seed-stress-other "$src/tests/generator/codegen/protos" "" stress/dir/other.proto
capture seed-stress-nopkg "$src/tests/generator/codegen/protos" "" stress/nopkg.proto
capture seed-stress-p3 "$src/tests/generator/codegen/protos" "" stress/p3.proto
capture seed-stress-all-types "$src/tests/generator/codegen/protos" "" stress/all_types.proto stress/dir/shared.proto
capture seed-opts-base "$src/tests/generator/codegen/protos" "name_prefix=acme_" opts/base.proto
# The real protos: big (the Perfetto schema they import comes along).
capture seed-big-te-only "$src/tests/generator/codegen/protos" "" stress/te_only.proto
capture seed-big-my-events "$src/examples" "" my_events.proto
capture seed-big-test-extensions "$src/test_extensions" "" test_extensions.proto
capture seed-big-all-types "$src/tests/generator/plugin/protos" "" all_types.proto
# Perfetto's schema in the users' layouts (tests/layouts): its own paths, and the one-file schema.
capture seed-layout-chrome-wrapper "$src/tests/layouts/perfetto_tree" "" protos/third_party/chromium/chrome_track_event.proto
capture seed-layout-one-file "$src/tests/layouts/one_file" "" protos/perfetto/trace/perfetto_trace.proto \
  acme_data.proto acme_extension.proto
ls -l "$corpus"
