#define _POSIX_C_SOURCE 200809L
/*
 * test_cli.c - the `tracec` command: exit codes, standard streams, error
 * formats, descriptor options and their precedence.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools_util.h"

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
    cr_assert_str_eq(out.data, "tracec 0.1.0\n");
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

Test(cli, user_schema_replaces_the_builtin_one) {
    /* A newer schema defines TracePacket field 500; with it the field has a name. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -I%s/tests/tools/data/newer --include_imports --descriptor_set_out=newer.desc trace.proto",
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
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/tools/data/args.textproto", &text));
    cr_assert(tt_protoc_encode(dir, "hidden_ext.proto", NULL, text.data, &bin));
    put("a.pftrace", bin.data, bin.size);
    tt_buf set = {0};
    cr_assert(tt_extensions_set(dir, &set));
    cr_assert_eq(run("args -d ext.desc a.pftrace", NULL, 0, &out, &err), 0, "%s", err.data);
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/tools/data/args.csv", &want));
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
