#define _POSIX_C_SOURCE 200809L
/*
 * test_command.c - the `tracec` command: exit codes, standard streams, error
 * formats, descriptor options and their precedence.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode_util.h"

static char *dir;
static void setup(void) { dir = tt_tmpdir(); }
static void teardown(void) { tt_tmpdir_remove(dir); }

TestSuite(cli, .init = setup, .fini = teardown);

/* Runs `tracec ARGS` in the temp dir. */
static int run(const char *args, const char *in, size_t in_len, tt_buf *out, tt_buf *err) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", TRACEC_CLI, args);
    return tt_run(dir, cmd, in, in_len, out, err);
}

static void put(const char *name, const void *data, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert(tt_write_file(path, data, n));
}

static const char *const sample =
    "packet { timestamp: 5 track_event { type: TYPE_INSTANT name: \"x\" } }\n";

Test(cli, version_and_help) {
    tt_buf out = {0}, err = {0};
    cr_assert_eq(run("--version", NULL, 0, &out, &err), 0);
    cr_assert_str_eq(out.data, "tracec 0.2.0\n");
    tt_buf_free(&out);
    tt_buf_free(&err);
    const char *cmds[] = {"encode", "decode", "diff", "args"};
    for (int i = 0; i < 4; i++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", cmds[i]);
        cr_assert_eq(run(a, NULL, 0, &out, &err), 0, "%s", a);
        char want[64];
        snprintf(want, sizeof want, "usage: tracec %s", cmds[i]);
        cr_assert(strncmp(out.data, want, strlen(want)) == 0, "%s", out.data);
        tt_buf_free(&out);
        tt_buf_free(&err);
    }
    cr_assert_eq(run("--help", NULL, 0, &out, &err), 0);
    cr_assert(strstr(out.data, "Exit codes"));
    tt_buf_free(&out);
    tt_buf_free(&err);
}

Test(cli, usage_errors_exit_2) {
    const char *bad[] = {"", "frobnicate", "decode --bogus", "decode --type", "diff only_one.textproto",
                         "decode a b c", "args", "encode --max-depth -3", "decode -I dir"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tt_buf err = {0};
        cr_expect_eq(run(bad[i], NULL, 0, NULL, &err), 2, "tracec %s", bad[i]);
        cr_expect(strstr(err.data, "tracec") != NULL, "tracec %s: %s", bad[i], err.data);
        tt_buf_free(&err);
    }
}

Test(cli, encode_decode_through_pipes_match_protoc) {
    tt_buf bin = {0}, want = {0}, text = {0}, err = {0};
    cr_assert_eq(run("encode", sample, strlen(sample), &bin, &err), 0, "%s", err.data);
    tt_buf_free(&err);
    cr_assert(tt_protoc_decode(dir, NULL, NULL, bin.data, bin.size, &want));
    cr_assert_eq(run("decode - -", bin.data, bin.size, &text, &err), 0, "%s", err.data);
    cr_assert_str_eq(text.data, want.data);
    tt_buf_free(&bin);
    tt_buf_free(&want);
    tt_buf_free(&text);
    tt_buf_free(&err);
}

Test(cli, files_in_and_out) {
    put("s.textproto", sample, strlen(sample));
    tt_buf out = {0}, err = {0}, a = {0}, b = {0};
    cr_assert_eq(run("encode s.textproto s.pftrace && " TRACEC_CLI " decode s.pftrace s.txt", NULL, 0, &out, &err), 0,
                 "%s", err.data);
    char p[600];
    snprintf(p, sizeof p, "%s/s.txt", dir);
    cr_assert(tt_read_file(p, &a));
    cr_assert(strstr(a.data, "name: \"x\""));
    snprintf(p, sizeof p, "%s/s.pftrace", dir);
    cr_assert(tt_read_file(p, &b));
    cr_assert(b.size > 0);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&a);
    tt_buf_free(&b);
    cr_assert_eq(run("decode missing.pftrace", NULL, 0, NULL, &err), 3);
    cr_assert(strstr(err.data, "missing.pftrace"), "%s", err.data);
    tt_buf_free(&err);
}

Test(cli, encode_errors_name_stdin_with_line_and_column) {
    tt_buf err = {0};
    const char *bad = "packet {\n  timestamp: 1\n  nope: 2\n}\n";
    cr_assert_eq(run("encode", bad, strlen(bad), NULL, &err), 3);
    cr_assert(strncmp(err.data, "<stdin>:3:3:", 12) == 0, "%s", err.data);
    tt_buf_free(&err);
    put("bad.textproto", bad, strlen(bad));
    cr_assert_eq(run("encode bad.textproto", NULL, 0, NULL, &err), 3);
    cr_assert(strncmp(err.data, "bad.textproto:3:3:", 18) == 0, "%s", err.data);
    tt_buf_free(&err);
}

Test(cli, corrupt_input_prints_prefix_then_error_exit_3) {
    static const char bytes[] = "\x0a\x02\x40\x05\x0a\x02\x40\x96";
    tt_buf out = {0}, err = {0};
    cr_assert_eq(run("decode", bytes, sizeof bytes - 1, &out, &err), 3);
    cr_assert_str_eq(out.data, "packet {\n  timestamp: 5\n}\npacket {\n}\n");
    cr_assert_str_eq(err.data,
                     "tracec decode: <stdin>: byte offset 7: truncated varint (field 8 of perfetto.protos.TracePacket)\n");
    tt_buf_free(&out);
    tt_buf_free(&err);
}

/* A trace with invalid UTF-8 in string fields: decode -> encode --allow-invalid-utf8 gives the bytes back. */
Test(cli, invalid_utf8_round_trips_with_allow_invalid_utf8) {
    /* track_event.name "\xff\xc3", debug annotation string value "a\x80", both protoc-accepted in proto2. */
    static const char text[] =
        "packet { track_event { name: \"\\377\\303\" debug_annotations { name: \"k\" string_value: \"a\\200\" } } }\n";
    tt_buf bin = {0}, dec = {0}, out = {0}, err = {0}, want = {0};
    cr_assert(tt_protoc_encode(dir, NULL, NULL, text, &bin));
    put("bad.pftrace", bin.data, bin.size);
    cr_assert_eq(run("decode bad.pftrace", NULL, 0, &dec, &err), 0, "%s", err.data);
    cr_assert(tt_protoc_decode(dir, NULL, NULL, bin.data, bin.size, &want));
    cr_assert_str_eq(dec.data, want.data);
    cr_assert(strstr(dec.data, "name: \"\\377\\303\""), "%s", dec.data);
    tt_buf_free(&err);
    /* By default the spec rule holds: an error naming the field, exit 3. */
    cr_assert_eq(run("encode", dec.data, dec.size, &out, &err), 3);
    cr_assert(strstr(err.data, "holds invalid UTF-8"), "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("encode --allow-invalid-utf8", dec.data, dec.size, &out, &err), 0, "%s", err.data);
    cr_assert(out.size == bin.size && memcmp(out.data, bin.data, bin.size) == 0, "bytes changed");
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* The option is for encode only. */
    cr_assert_eq(run("decode --allow-invalid-utf8 bad.pftrace", NULL, 0, &out, &err), 2);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&bin);
    tt_buf_free(&dec);
    tt_buf_free(&want);
}

Test(cli, diff_exit_codes) {
    tt_buf bin = {0}, out = {0}, err = {0};
    cr_assert(tt_protoc_encode(dir, NULL, NULL, sample, &bin));
    put("actual.pftrace", bin.data, bin.size);
    const char *same = "packet { track_event { name: \"x\" type: TYPE_INSTANT } timestamp: 5 }";
    const char *other = "packet { track_event { name: \"y\" type: TYPE_INSTANT } timestamp: 5 }";
    put("same.textproto", same, strlen(same));
    put("other.textproto", other, strlen(other));
    cr_assert_eq(run("diff same.textproto actual.pftrace", NULL, 0, &out, &err), 0, "%s%s", out.data, err.data);
    cr_assert_str_eq(out.data, "");
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("diff other.textproto actual.pftrace", NULL, 0, &out, &err), 1);
    cr_assert(strstr(out.data, "--- other.textproto\n+++ actual.pftrace\n"), "%s", out.data);
    cr_assert(strstr(out.data, "\n-    name: \"y\"\n+    name: \"x\"\n"), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* The expected text from standard input. */
    cr_assert_eq(run("diff - actual.pftrace", same, strlen(same), &out, &err), 0, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("diff other.textproto actual.pftrace", NULL, 0, &out, &err), 1);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* A text that does not parse is invalid input. */
    put("broken.textproto", "packet {", 8);
    cr_assert_eq(run("diff broken.textproto actual.pftrace", NULL, 0, &out, &err), 3);
    cr_assert(strncmp(err.data, "tracec diff: broken.textproto:1:9:", 34) == 0, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&bin);
}

Test(cli, descriptor_sets_and_protos) {
    /* A trace with an extension field, decoded with -d, with --proto, and without. */
    const char *text = "packet { track_event { [perfetto.protos.string_extension_for_testing]: \"e\" } }";
    tt_buf bin = {0}, out = {0}, err = {0}, set = {0};
    cr_assert(tt_protoc_encode(dir, NULL, NULL, text, &bin));
    put("e.pftrace", bin.data, bin.size);
    cr_assert(tt_extensions_set(dir, &set)); /* writes ext.desc */
    cr_assert_eq(run("decode -d ext.desc e.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[perfetto.protos.string_extension_for_testing]: \"e\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    char args[1024];
    snprintf(args, sizeof args, "decode -I %s/protos -I %s/test_extensions --proto test_extensions.proto e.pftrace",
             TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR);
    cr_assert_eq(run(args, NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[perfetto.protos.string_extension_for_testing]: \"e\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode e.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "9900: \"e\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* encode accepts the extension only with its descriptors. */
    cr_assert_eq(run("encode -d ext.desc", text, strlen(text), &out, &err), 0, "%s", err.data);
    cr_assert(out.size == bin.size && memcmp(out.data, bin.data, bin.size) == 0);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("encode", text, strlen(text), &out, &err), 3);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode -d no-such.desc e.pftrace", NULL, 0, &out, &err), 3);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&bin);
    tt_buf_free(&set);
}

/* --proto finds the schema's imports (perfetto/...) in tracec's schema folder, as protoc finds
   google/protobuf/ in its own: -I names only the user's folder, or none (then `.`). */
Test(cli, proto_imports_come_from_the_schema_folder) {
    const char *proto = "syntax = \"proto2\";\n"
                        "import \"perfetto/trace/track_event/track_event.proto\";\n"
                        "package my_app;\n"
                        "extend perfetto.protos.TrackEvent { optional string my_note = 9990; }\n";
    char path[1024];
    snprintf(path, sizeof path, "%s/proto", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    put("proto/my_events.proto", proto, strlen(proto));
    put("my_events.proto", proto, strlen(proto));
    const char *text = "packet { track_event { [my_app.my_note]: \"hi\" } }";
    put("hand.textproto", text, strlen(text));
    tt_buf out = {0}, err = {0};
    cr_assert_eq(run("encode -I proto --proto my_events.proto hand.textproto out.pftrace", NULL, 0, &out, &err), 0,
                 "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode --proto my_events.proto out.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[my_app.my_note]: \"hi\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
}

Test(cli, user_schema_replaces_the_builtin_one) {
    /* A newer schema defines TracePacket field 500; with it the field has a name. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -I%s/tests/decode/data/newer --include_imports --descriptor_set_out=newer.desc trace.proto",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR);
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, NULL), 0);
    static const char bytes[] = "\x0a\x06\xa2\x1f\x03new"; /* packet { 500: "new" } */
    put("n.pftrace", bytes, sizeof bytes - 1);
    tt_buf out = {0}, err = {0};
    cr_assert_eq(run("decode -d newer.desc n.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert_str_eq(out.data, "packet {\n  field_only_in_newer_schema: \"new\"\n}\n");
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode n.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert_str_eq(out.data, "packet {\n  500: \"new\"\n}\n");
    tt_buf_free(&out);
    tt_buf_free(&err);
}

Test(cli, args_csv_and_unknown_extension_count) {
    tt_buf text = {0}, bin = {0}, out = {0}, err = {0}, want = {0};
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/decode/data/args.textproto", &text));
    cr_assert(tt_protoc_encode(dir, "hidden_ext.proto", NULL, text.data, &bin));
    put("a.pftrace", bin.data, bin.size);
    tt_buf set = {0};
    cr_assert(tt_extensions_set(dir, &set));
    cr_assert_eq(run("args -d ext.desc a.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/decode/data/args.csv", &want));
    cr_assert_str_eq(out.data, want.data);
    cr_assert(strstr(err.data, "1 extension field(s) without a descriptor"), "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("args --type perfetto.protos.TracePacket a.pftrace", NULL, 0, &out, &err), 2);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&text);
    tt_buf_free(&bin);
    tt_buf_free(&want);
    tt_buf_free(&set);
}

/* ---- Round trips of traces with custom fields --------------------------------------- */

static const char *const gpu_events =
    "packet { timestamp: 10 trusted_packet_sequence_id: 1 track_event {\n"
    "  type: TYPE_SLICE_BEGIN name: \"k\"\n"
    "  [gputrace.GpuEvent.kernel_name]: \"saxpy\"\n"
    "  [gputrace.GpuEvent.grid] { x: 64 y: 2 }\n"
    "  [gputrace.GpuEvent.sizes]: [1, -2, 300000]\n"
    "  [gputrace.GpuEvent.payload]: \"\\000\\377\"\n"
    "} }\n"
    "packet { timestamp: 20 trusted_packet_sequence_id: 1 track_event { type: TYPE_SLICE_END } }\n";

/* gputrace.proto's descriptor set (no imports, as a generated writer embeds it). */
static void gpu_set(tt_buf *set) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -I%s/protos -I%s/tests/decode/data --descriptor_set_out=gpu.desc gputrace.proto",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR);
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, NULL), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/gpu.desc", dir);
    cr_assert(tt_read_file(path, set));
}

/* A canonical trace (protoc's encoding) whose first packet describes its custom fields. */
static void gpu_trace(tt_buf *trace, tt_buf *events) {
    tt_buf set = {0};
    gpu_set(&set);
    cr_assert(tt_protoc_encode(dir, "gputrace.proto", NULL, gpu_events, events));
    cr_assert(tt_append_extension_packet(trace, set.data, set.size, false));
    cr_assert(tt_buf_append(trace, events->data, events->size));
    tt_buf_free(&set);
}

static void cmp_files(const char *a, const char *b) {
    char path[600];
    tt_buf x = {0}, y = {0};
    snprintf(path, sizeof path, "%s/%s", dir, a);
    cr_assert(tt_read_file(path, &x), "%s", path);
    snprintf(path, sizeof path, "%s/%s", dir, b);
    cr_assert(tt_read_file(path, &y), "%s", path);
    cr_assert(x.size == y.size && memcmp(x.data, y.data, x.size) == 0, "%s (%zu bytes) and %s (%zu bytes) differ", a,
              x.size, b, y.size);
    tt_buf_free(&x);
    tt_buf_free(&y);
}

Test(cli, decode_encode_round_trip_with_custom_fields) {
    tt_buf trace = {0}, events = {0}, out = {0}, err = {0};
    gpu_trace(&trace, &events);
    put("g.pftrace", trace.data, trace.size);
    /* encode finds [gputrace.GpuEvent.kernel_name] in the extension_descriptor packet before it. */
    cr_assert_eq(run("decode g.pftrace g.txt && " TRACEC_CLI " encode g.txt g2.pftrace", NULL, 0, &out, &err), 0,
                 "%s", err.data);
    cmp_files("g.pftrace", "g2.pftrace");
    /* Piped, as a user would. */
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode g.pftrace | " TRACEC_CLI " encode - g3.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cmp_files("g.pftrace", "g3.pftrace");
    /* The descriptor packet after the events that use it: encode names the field it cannot know yet. */
    tt_buf late = {0}, set = {0};
    gpu_set(&set);
    cr_assert(tt_buf_append(&late, events.data, events.size));
    cr_assert(tt_append_extension_packet(&late, set.data, set.size, false));
    put("late.pftrace", late.data, late.size);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode late.pftrace late.txt && " TRACEC_CLI " encode late.txt x.pftrace", NULL, 0, &out, &err),
                 3);
    cr_assert(strstr(err.data, "late.txt:7:6: unknown extension [gputrace.GpuEvent.kernel_name]"), "%s", err.data);
    /* ... unless -d names the trace as a descriptor source. */
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("encode -d late.pftrace late.txt late2.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cmp_files("late.pftrace", "late2.pftrace");
    tt_buf_free(&late);
    tt_buf_free(&set);
    tt_buf_free(&trace);
    tt_buf_free(&events);
    tt_buf_free(&out);
    tt_buf_free(&err);
}

Test(cli, d_accepts_a_trace_as_descriptor_source) {
    tt_buf trace = {0}, events = {0}, out = {0}, err = {0};
    gpu_trace(&trace, &events);
    put("g.pftrace", trace.data, trace.size);
    put("events.pftrace", events.data, events.size); /* no descriptors of its own */
    put("events.txt", gpu_events, strlen(gpu_events));
    cr_assert_eq(run("encode -d g.pftrace events.txt e2.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cmp_files("events.pftrace", "e2.pftrace");
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode --descriptor_set_in=g.pftrace events.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[gputrace.GpuEvent.kernel_name]: \"saxpy\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("args -d g.pftrace events.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "0,kernel_name,kernel_name,,saxpy,\n"), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("diff -d g.pftrace events.txt events.pftrace", NULL, 0, &out, &err), 0, "%s%s", out.data,
                 err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* Neither a set nor a trace with descriptors. */
    put("junk.bin", "\x08\x01", 2);
    cr_assert_eq(run("decode -d junk.bin events.pftrace", NULL, 0, &out, &err), 3);
    cr_assert(strstr(err.data, "junk.bin: neither a FileDescriptorSet nor a trace with ExtensionDescriptor packets"),
              "%s", err.data);
    tt_buf_free(&trace);
    tt_buf_free(&events);
    tt_buf_free(&out);
    tt_buf_free(&err);
}

#ifdef TRACEC_EXAMPLE
/*
 * The example's trace (written by the generated writers in the program's
 * field order, not field-number order, so not canonical) re-encodes to
 * protoc's canonical bytes, which then round-trip exactly.
 */
Test(cli, example_trace_round_trips) {
    tt_buf out = {0}, err = {0};
    cr_assert_eq(tt_run(dir, TRACEC_EXAMPLE " ex.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode ex.pftrace ex.txt && " TRACEC_CLI " encode ex.txt c1.pftrace && " TRACEC_CLI
                     " decode c1.pftrace c1.txt && " TRACEC_CLI " encode c1.txt c2.pftrace",
                     NULL, 0, &out, &err),
                 0, "%s", err.data);
    cmp_files("ex.txt", "c1.txt");
    cmp_files("c1.pftrace", "c2.pftrace");
    char path[600];
    snprintf(path, sizeof path, "%s/ex.txt", dir);
    cr_assert(tt_read_file(path, &out));
    cr_assert(strstr(out.data, "[my_app.MyEvent.custom_string]: \"hello from C\""), "%s", out.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
}
#endif

/* ---- Conflicting extension descriptors ------------------------------------------------ */

/* The descriptor set of `proto` (in tests/decode/data or the temp dir), without imports. */
static void set_of(const char *proto, const char *out_name, tt_buf *set) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -I. -I%s/protos -I%s/tests/decode/data --descriptor_set_out=%s %s", TRACEC_PROTOC,
             TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, out_name, proto);
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, NULL), 0, "%s", cmd);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, out_name);
    cr_assert(tt_read_file(path, set));
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Two ExtensionDescriptor packets give field 5000 of TrackEvent two names: the first wins, with a warning. */
Test(cli, same_number_twice_is_reported_once) {
    tt_buf gpu = {0}, other = {0}, ab = {0}, ba = {0}, events = {0}, out = {0}, err = {0};
    set_of("gputrace.proto", "gpu.desc", &gpu);
    set_of("othertrace.proto", "other.desc", &other);
    cr_assert(tt_protoc_encode(dir, "gputrace.proto", NULL, "packet { track_event { [gputrace.GpuEvent.kernel_name]: \"k\" } }",
                               &events));
    cr_assert(tt_append_extension_packet(&ab, gpu.data, gpu.size, false));
    cr_assert(tt_append_extension_packet(&ab, other.data, other.size, true));
    cr_assert(tt_append_extension_packet(&ab, other.data, other.size, false)); /* the same set again: no new conflict */
    cr_assert(tt_buf_append(&ab, events.data, events.size));
    cr_assert(tt_append_extension_packet(&ba, other.data, other.size, false));
    cr_assert(tt_append_extension_packet(&ba, gpu.data, gpu.size, false));
    cr_assert(tt_buf_append(&ba, events.data, events.size));
    put("ab.pftrace", ab.data, ab.size);
    put("ba.pftrace", ba.data, ba.size);
    const char *conflict = "tracec: warning: extensions gputrace.GpuEvent.kernel_name (string = 5000 extending "
                           "perfetto.protos.TrackEvent, from <trace packet 0 at byte offset 3>) and "
                           "othertrace.other_name (int64 = 5000 extending perfetto.protos.TrackEvent, from <trace "
                           "packet 1 at byte offset ";
    cr_assert_eq(run("decode ab.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[gputrace.GpuEvent.kernel_name]: \"k\""), "%s", out.data);
    cr_assert(strstr(err.data, conflict), "%s", err.data);
    cr_assert(strstr(err.data, "; gputrace.GpuEvent.kernel_name is used\n"), "%s", err.data);
    cr_assert_eq(count_of(err.data, "warning"), 1, "reported once:\n%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* Swapped: the other name wins, and says so. */
    cr_assert_eq(run("decode ba.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    /* int64 other_name does not read a string: an unknown field, not shown as kernel_name. */
    cr_assert(strstr(out.data, "track_event {\n    5000: \"k\"\n"), "%s", out.data);
    cr_assert(strstr(err.data, "; othertrace.other_name is used\n"), "%s", err.data);
    cr_assert_eq(count_of(err.data, "warning"), 1, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* args and diff report it too; -d comes before the trace's own descriptors. */
    cr_assert_eq(run("args ab.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert_eq(count_of(err.data, "warning: extensions gputrace.GpuEvent.kernel_name"), 1, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    cr_assert_eq(run("decode -d gpu.desc ba.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(out.data, "[gputrace.GpuEvent.kernel_name]: \"k\""), "%s", out.data);
    cr_assert(strstr(err.data, "from gpu.desc) and othertrace.other_name"), "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    put("ab.txt", "packet { track_event { [gputrace.GpuEvent.kernel_name]: \"k\" } }", 63);
    cr_assert_eq(run("diff -d other.desc ab.txt ab.pftrace", NULL, 0, &out, &err), 1, "%s%s", out.data, err.data);
    cr_assert_eq(count_of(err.data, "warning: extensions othertrace.other_name"), 1, "%s", err.data);
    tt_buf_free(&gpu);
    tt_buf_free(&other);
    tt_buf_free(&ab);
    tt_buf_free(&ba);
    tt_buf_free(&events);
    tt_buf_free(&out);
    tt_buf_free(&err);
}

/* One full name, two definitions (another version of the same .proto). */
Test(cli, same_name_different_definition_is_reported) {
    static const char v2[] = "syntax = \"proto2\";\npackage gputrace;\n"
                             "import \"perfetto/trace/track_event/track_event.proto\";\n"
                             "message GpuEvent {\n  extend perfetto.protos.TrackEvent {\n"
                             "    repeated int64 kernel_name = 5010;\n  }\n}\n";
    put("gputrace_v2.proto", v2, sizeof v2 - 1);
    tt_buf a = {0}, b = {0}, out = {0}, err = {0};
    set_of("gputrace.proto", "gpu.desc", &a);
    set_of("gputrace_v2.proto", "gpu2.desc", &b);
    tt_buf trace = {0};
    cr_assert(tt_append_extension_packet(&trace, b.data, b.size, false));
    put("t.pftrace", trace.data, trace.size);
    cr_assert_eq(run("decode -d gpu.desc t.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(strstr(err.data, "tracec: warning: extension gputrace.GpuEvent.kernel_name is defined twice, "
                               "differently: string = 5000 extending perfetto.protos.TrackEvent (from gpu.desc) and "
                               "repeated int64 = 5010 extending perfetto.protos.TrackEvent (from <trace packet 0 at "
                               "byte offset 3>); the first is used\n"),
              "%s", err.data);
    cr_assert_eq(count_of(err.data, "warning"), 1, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    /* The same set twice is no conflict. */
    cr_assert_eq(run("decode -d gpu.desc -d gpu.desc t.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert_eq(count_of(err.data, "warning"), 1, "%s", err.data);
    tt_buf_free(&a);
    tt_buf_free(&b);
    tt_buf_free(&trace);
    tt_buf_free(&out);
    tt_buf_free(&err);
}

/* A DebugAnnotation nested `depth` deep in one track event of one packet (field numbers by hand). */
static void deep_trace(tt_buf *b, int depth) {
    static const unsigned wrap[] = {4, 11, 1}; /* debug_annotations, track_event, packet */
    b->data = NULL;
    b->cap = 0;
    b->size = 0;
    for (int i = 0; i < depth + 3; i++) {
        unsigned number = i < depth ? 11 : wrap[i - depth]; /* DebugAnnotation.dict_entries */
        uint8_t hdr[16];
        size_t h = 0;
        uint64_t v = (uint64_t)number << 3 | 2;
        for (; v >= 0x80; v >>= 7) hdr[h++] = (uint8_t)(v | 0x80);
        hdr[h++] = (uint8_t)v;
        for (v = b->size; v >= 0x80; v >>= 7) hdr[h++] = (uint8_t)(v | 0x80);
        hdr[h++] = (uint8_t)v;
        char *nb = malloc(b->size + h + 1);
        cr_assert(nb);
        memcpy(nb, hdr, h);
        if (b->size) memcpy(nb + h, b->data, b->size);
        free(b->data);
        b->data = nb;
        b->cap = 0;
        b->size += h;
    }
}

/* A --max-depth above 1000 is refused (exit 2), so 30000 nested dict_entries cannot overflow decode's or args'
   stack; at the cap, a clean error. */
Test(cli, max_depth_is_capped_for_the_decoders) {
    tt_buf deep = {0};
    deep_trace(&deep, 30000);
    put("deep.pftrace", deep.data, deep.size);
    put("e.textproto", sample, strlen(sample));
    const char *above[] = {"decode --max-depth 30010 deep.pftrace", "args --max-depth 30010 deep.pftrace",
                           "decode --max-depth 1001 deep.pftrace", "args --max-depth=1001 deep.pftrace",
                           "decode --type perfetto.protos.DebugAnnotation --max-depth 20000 deep.pftrace",
                           "diff --max-depth 1001 e.textproto deep.pftrace"};
    for (size_t i = 0; i < sizeof above / sizeof *above; i++) {
        tt_buf err = {0};
        cr_expect_eq(run(above[i], NULL, 0, NULL, &err), 2, "tracec %s: %s", above[i], err.data);
        cr_expect(strstr(err.data, "is above the limit of 1000"), "tracec %s: %s", above[i], err.data);
        tt_buf_free(&err);
    }
    /* At the cap: a clean error at level 1001. */
    const char *at[] = {"decode --max-depth 1000 deep.pftrace", "args --max-depth 1000 deep.pftrace",
                        "diff --max-depth 1000 e.textproto deep.pftrace"};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        tt_buf err = {0};
        cr_expect_eq(run(at[i], NULL, 0, NULL, &err), 3, "tracec %s: %s", at[i], err.data);
        cr_expect(strstr(err.data, "nested deeper than the limit"), "tracec %s: %s", at[i], err.data);
        tt_buf_free(&err);
    }
    /* encode does not recurse: it keeps its range (and its own clean error). */
    tt_buf out = {0}, err = {0};
    cr_expect_eq(run("encode --max-depth 30010 e.textproto", NULL, 0, &out, &err), 0, "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&deep);
}

/* Whether `s` is valid UTF-8 (a plain check, independent of grammar/). */
static bool valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t k = s[i] < 0x80 ? 1 : (s[i] & 0xE0) == 0xC0 ? 2 : (s[i] & 0xF0) == 0xE0 ? 3 : (s[i] & 0xF8) == 0xF0 ? 4 : 0;
        if (!k || i + k > n || (k == 2 && s[i] < 0xC2)) return false;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xC0) != 0x80) return false;
        i += k;
    }
    return true;
}

/* The quoted source line of an error escapes invalid UTF-8 bytes instead of echoing them raw. */
Test(cli, encode_error_escapes_invalid_utf8_in_the_quoted_line) {
    static const char bad[] = "packet { track_event { name: \"a\xc3\" } }";
    tt_buf err = {0};
    cr_assert_eq(run("encode", bad, strlen(bad), NULL, &err), 3);
    cr_assert(valid_utf8((const unsigned char *)err.data, err.size), "%s", err.data);
    cr_assert_str_eq(err.data, "<stdin>:1:30: string field \"name\" holds invalid UTF-8 (byte 1 of the value); use \\u "
                               "escapes, or a bytes field\n packet { track_event { name: \"a\\xC3\" } }\n"
                               "                              ^\n");
    tt_buf_free(&err);
    /* Valid UTF-8 is kept, one caret column per character; the escape takes four. */
    static const char bad2[] = "packet { track_event { name: \"\xc3\xa9\xff\" } nope: 1 }";
    cr_assert_eq(run("encode --allow-invalid-utf8", bad2, strlen(bad2), NULL, &err), 3);
    cr_assert(valid_utf8((const unsigned char *)err.data, err.size), "%s", err.data);
    cr_assert(strstr(err.data, "\n packet { track_event { name: \"\xc3\xa9\\xFF\" } nope: 1 }\n"
                               "                                        ^\n"),
              "%s", err.data);
    tt_buf_free(&err);
}

/* Trace text: a descriptor packet for `file` (text of a FileDescriptorProto), then one event with `fields`. */
static char *conflict_text(const char *file, const char *fields) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "packet { extension_descriptor { extension_set { file { %s } } } }\n"
             "packet { timestamp: 1 track_event { name: \"e\" %s } }\n",
             file, fields);
    return buf;
}

#define CONFLICT_T_FILE                                                                                          \
    "name: \"t.proto\" package: \"t\" message_type { name: \"Req\" field { name: \"url\" number: 1 label: "       \
    "LABEL_OPTIONAL type: TYPE_STRING } } extension { name: \"m_req\" number: 3103 label: LABEL_OPTIONAL type: " \
    "TYPE_MESSAGE type_name: \".t.Req\" extendee: \".perfetto.protos.TrackEvent\" }"
#define CONFLICT_QA_FILE                                                                                     \
    "name: \"qa.proto\" package: \"qa\" extension { name: \"q_note\" number: 3103 label: LABEL_OPTIONAL type: " \
    "TYPE_STRING extendee: \".perfetto.protos.TrackEvent\" }"

/*
 * Two sets defining different extensions at one number.  The expected
 * text's string (one NUL byte, which does not parse as t.Req) does not
 * fail diff, decode or args of two such traces concatenated (no exit 3
 * blaming the text with a byte offset): the field is shown as unknown
 * under the winner (t.m_req), with one warning.
 */
Test(cli, conflicting_extensions_diff_decode_and_args) {
    const char *actual = conflict_text(CONFLICT_T_FILE, "[t.m_req] { url: \"u\" }");
    put("actual.txt", actual, strlen(actual));
    const char *expected = conflict_text(CONFLICT_QA_FILE, "[qa.q_note]: \"\\000\"");
    put("expected.txt", expected, strlen(expected));
    tt_buf out = {0}, err = {0};
    cr_assert_eq(run("encode actual.txt actual.pftrace && " TRACEC_CLI " encode expected.txt qa.pftrace && "
                     "cat actual.pftrace qa.pftrace > both.pftrace",
                     NULL, 0, NULL, &err), 0, "%s", err.data);
    tt_buf_free(&err);

    cr_assert_eq(run("diff expected.txt actual.pftrace", NULL, 0, &out, &err), 1, "%s", err.data);
    cr_expect(strstr(out.data, "\n-    3103: \"\\000\"\n+    [t.m_req] {\n+      url: \"u\"\n+    }\n"), "%s",
              out.data);
    cr_expect(strstr(err.data, "t.m_req is used"), "%s", err.data);
    cr_expect(!strstr(err.data, "byte offset 0:"), "%s", err.data);
    /* The text's descriptors are named by the text's file and packet. */
    cr_expect(strstr(err.data, "qa.q_note (string = 3103 extending perfetto.protos.TrackEvent, from <expected.txt, "
                               "packet 0>)"),
              "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);

    cr_assert_eq(run("decode both.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_expect(strstr(out.data, "[t.m_req] {\n      url: \"u\"\n    }\n"), "%s", out.data);
    cr_expect(strstr(out.data, "    3103: \"\\000\"\n"), "%s", out.data);
    const char *w = strstr(err.data, "have the same number; t.m_req is used");
    cr_expect(w && !strstr(w + 1, "have the same number"), "warned once: %s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);

    cr_assert_eq(run("args both.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_expect_str_eq(out.data, "event,flat_key,key,int_value,string_value,real_value\n0,m_req.url,m_req.url,,u,\n");
    cr_expect(strstr(err.data, "1 unknown field(s) inside extension messages"), "%s", err.data);
    tt_buf_free(&out);
    tt_buf_free(&err);

    /* Without a conflict, a message field that does not parse is still an error. */
    char path[600];
    snprintf(path, sizeof path, "%s/actual.pftrace", dir);
    tt_buf bad = {0};
    cr_assert(tt_read_file(path, &bad));
    /* packet { track_event { 3103: "\0" } }: field 3103 LEN is the tag bytes fa c1 01. */
    cr_assert(tt_buf_append(&bad, "\x0a\x07\x5a\x05\xfa\xc1\x01\x01\x00", 9));
    put("bad.pftrace", bad.data, bad.size);
    tt_buf_free(&bad);
    cr_expect_eq(run("decode bad.pftrace", NULL, 0, NULL, &err), 3, "%s", err.data);
    cr_expect(strstr(err.data, "invalid field number 0"), "%s", err.data);
    tt_buf_free(&err);
}

#ifdef TRACEC_EXAMPLE
/* README's `tracec args` sample is the whole output for the example's trace, not a cut. */
Test(cli, readme_args_sample_is_the_whole_output) {
    tt_buf readme = {0}, out = {0}, err = {0};
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/README.md", &readme));
    const char *at = strstr(readme.data, "\n```\nevent,flat_key,key,int_value,string_value,real_value\n");
    cr_assert(at, "README.md has no args sample");
    at += 5;
    const char *end = strstr(at, "```\n");
    cr_assert(end);
    cr_assert_eq(tt_run(dir, TRACEC_EXAMPLE " ex.pftrace >/dev/null && " TRACEC_CLI " args ex.pftrace", NULL, 0,
                        &out, &err),
                 0, "%s", err.data);
    cr_expect(strlen(out.data) == (size_t)(end - at) && strncmp(out.data, at, (size_t)(end - at)) == 0,
              "README.md shows:\n%.*s\ntracec args prints:\n%s", (int)(end - at), at, out.data);
    tt_buf_free(&readme);
    tt_buf_free(&out);
    tt_buf_free(&err);
}
#endif
