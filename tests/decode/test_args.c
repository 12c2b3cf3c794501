#define _POSIX_C_SOURCE 200809L
/*
 * test_args.c - the args view against hand-derived expectations.
 *
 * data/args.csv was written by hand from the trace processor's rules (see
 * docs/tracec-command.md): keys, flat keys, value columns, interning per
 * sequence and its reset, DebugAnnotations inside extension messages, enum
 * names.  The trace is encoded by protoc, which knows one extension
 * (hidden.hidden_for_testing) that tracec is not told about: it must be
 * counted as an unknown extension field.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_util.h"
#include "tracec/args.h"

static char *dir;
static void setup(void) { dir = tt_tmpdir(); }
static void teardown(void) { tt_tmpdir_remove(dir); }

TestSuite(args, .init = setup, .fini = teardown);

static void args_trace(tt_buf *bin) {
    tt_buf text = {0};
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/decode/data/args.textproto", &text));
    cr_assert(tt_protoc_encode(dir, "hidden_ext.proto", NULL, text.data, bin));
    tt_buf_free(&text);
}

static void check_csv(tracec_pool *pool, const tt_buf *trace) {
    tt_buf want = {0};
    cr_assert(tt_read_file(TRACEC_SOURCE_DIR "/tests/decode/data/args.csv", &want));
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_args_stats st;
    tracec_error err;
    tracec_status_t s = tracec_args_csv(pool, trace->data, trace->size, NULL, tracec_write_bytes, &out, &st, &err);
    cr_assert_eq(s, TRACEC_STATUS_SUCCESS, "%s", err.msg);
    char *got = strndup(out.data ? (const char *)out.data : "", out.size);
    cr_assert_str_eq(got, want.data);
    cr_assert_eq(st.track_events, 4);
    cr_assert_eq(st.args, 23);
    cr_assert_eq(st.unknown_extension_fields, 1, "the hidden extension must be counted");
    cr_assert_eq(st.unknown_nested_fields, 0);
    free(got);
    free(out.data);
    tt_buf_free(&want);
}

Test(args, csv_with_extensions_from_a_descriptor_set) {
    tt_buf trace = {0}, set = {0};
    args_trace(&trace);
    cr_assert(tt_extensions_set(dir, &set));
    tracec_pool *pool = tracec_pool_new();
    tracec_error err;
    cr_assert_eq(tracec_pool_add_set(pool, set.data, set.size, "ext.desc", &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_eq(tracec_pool_add_builtin_schema(pool, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    check_csv(pool, &trace);
    tracec_pool_free(pool);
    tt_buf_free(&trace);
    tt_buf_free(&set);
}

Test(args, csv_with_extensions_from_the_trace) {
    tt_buf events = {0}, set = {0}, trace = {0};
    args_trace(&events);
    cr_assert(tt_extensions_set(dir, &set));
    cr_assert(tt_append_extension_packet(&trace, set.data, set.size, true));
    cr_assert(tt_buf_append(&trace, events.data, events.size));
    tracec_pool *pool = tt_builtin_pool();
    check_csv(pool, &trace);
    tracec_pool_free(pool);
    tt_buf_free(&events);
    tt_buf_free(&set);
    tt_buf_free(&trace);
}

Test(args, extensions_without_descriptors_are_counted) {
    tt_buf trace = {0};
    args_trace(&trace);
    tracec_pool *pool = tt_builtin_pool();
    tracec_args_stats st;
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    cr_assert_eq(tracec_args_csv(pool, trace.data, trace.size, NULL, tracec_write_bytes, &out, &st, &err),
                 TRACEC_STATUS_SUCCESS, "%s", err.msg);
    /* 9900, 9901 x2, 9903, 9906, 9907 (packed: one field) in event 0; 9904 and 9950 in event 1. */
    cr_assert_eq(st.unknown_extension_fields, 8);
    cr_assert_eq(st.args, 13, "only the debug annotations remain");
    free(out.data);
    tracec_pool_free(pool);
    tt_buf_free(&trace);
}

static bool count_rows(void *ctx, const tracec_arg *arg) {
    (void)arg;
    ++*(int *)ctx;
    return true;
}

Test(args, corrupt_trace_reports_offset) {
    tracec_pool *pool = tt_builtin_pool();
    /* One good event with an int arg, then a packet whose length runs past the end. */
    static const char bytes[] = "\x0a\x09\x5a\x07\x22\x05\x52\x01x\x20\x05\x0a\x09";
    int rows = 0;
    tracec_args_stats st;
    tracec_error err;
    tracec_status_t s = tracec_args_visit(pool, bytes, sizeof bytes - 1, NULL, count_rows, &rows, &st, &err);
    cr_assert_eq(s, TRACEC_STATUS_CORRUPT_DATA);
    cr_assert_eq(rows, 1);
    cr_assert_str_eq(err.msg, "<input>: byte offset 12: length runs past the end of the enclosing message");
    tracec_pool_free(pool);
}

/*
 * Every row is valid UTF-8 and valid CSV (python's csv module reads it back):
 * bytes values are C-escaped, NULs included; strings with quotes, commas and
 * line breaks are quoted; strings and names that are not UTF-8 are escaped.
 */
Test(args, csv_is_utf8_and_valid_csv) {
    const char *text =
        "packet { track_event {\n"
        "  name: \"e\"\n"
        "  [csvx.blob]: \"a\\000b\\377\\n\\\"q\\\",\\\\\"\n"
        "  [csvx.text]: \"caf\\303\\251, \\\"quoted\\\"\\nline 2\\r\\n\"\n"
        "  debug_annotations { name: \"bad\\377name\" string_value: \"x\\300y\" }\n"
        "  debug_annotations { name: \"ok\" string_value: \"back\\\\slash\" }\n"
        "} }\n";
    tt_buf trace = {0};
    cr_assert(tt_protoc_encode(dir, "csv_ext.proto", NULL, text, &trace));
    char path[600];
    snprintf(path, sizeof path, "%s/t.pftrace", dir);
    cr_assert(tt_write_file(path, trace.data, trace.size));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s args -I%s/protos -I%s/tests/decode/data --proto csv_ext.proto t.pftrace t.csv && "
             "%s %s/tests/decode/csv_rows.py t.csv",
             TRACEC_CLI, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_PYTHON3, TRACEC_SOURCE_DIR);
    tt_buf out = {0}, err = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, &out, &err), 0, "%s%s", out.data, err.data);
    const char *want =
        "['event', 'flat_key', 'key', 'int_value', 'string_value', 'real_value']\n"
        "['0', 'debug.bad\\\\377name', 'debug.bad\\\\377name', '', 'x\\\\300y', '']\n"
        "['0', 'debug.ok', 'debug.ok', '', 'back\\\\slash', '']\n"
        "['0', 'blob', 'blob', '', 'a\\\\000b\\\\377\\\\n\\\\\"q\\\\\",\\\\\\\\', '']\n"
        "['0', 'text', 'text', '', 'café, \"quoted\"\\nline 2\\r\\n', '']\n";
    cr_assert_str_eq(out.data, want);
    tt_buf_free(&out);
    tt_buf_free(&err);
    tt_buf_free(&trace);
}
