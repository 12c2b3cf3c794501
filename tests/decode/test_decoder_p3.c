#define _POSIX_C_SOURCE 200809L
/*
 * test_decoder_p3.c - the decoder on proto3 presence, map fields and Any,
 * with protoc 3.21 as the oracle (tests/decode/data/p3.proto, p2maps.proto).
 *
 * - wire_cases.py writes hand-made corner cases; gen_wire.py random,
 *   mostly non-canonical messages.  `protoc --decode` and tracec must print
 *   the same text for every one.
 * - Text -> binary -> text round trips keep the bytes: proto3 defaults that
 *   protoc does not write are not printed, and Any (printed plain by protoc
 *   --decode, written expanded by users) re-encodes to the same bytes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_util.h"
#include "tracec/decode.h"
#include "tracec/textproto.h"

static char *dir;
static void setup(void) { dir = tt_tmpdir(); }
static void teardown(void) { tt_tmpdir_remove(dir); }

TestSuite(decode_p3, .init = setup, .fini = teardown);

#define DATA_DIR TRACEC_SOURCE_DIR "/tests/decode/data"
#define PROTOC_P3 "-I" DATA_DIR " -I" TRACEC_PROTOBUF_INCLUDE " p3.proto p2maps.proto"

static tracec_pool *p3_pool(void) {
    tracec_pool *p = tracec_pool_new();
    cr_assert(p);
    tracec_error err;
    const char *incs[] = {DATA_DIR, TRACEC_PROTOBUF_INCLUDE};
    const char *protos[] = {"p3.proto", "p2maps.proto"};
    cr_assert_eq(tracec_pool_add_proto_files(p, incs, 2, protos, 2, &err), TRACEC_STATUS_SUCCESS, "%s",
                 err.msg);
    return p;
}

static tracec_status_t decode_opt(tracec_pool *pool, const void *data, size_t n, const char *type, bool hide_unknown,
                                  tt_buf *text, tracec_error *err) {
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.hide_unknown = hide_unknown;
    o.type_name = type;
    o.file_name = "in.bin";
    o.extension_descriptors = false;
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_status_t s = tracec_decode_text_bytes(pool, data, n, &o, &out, err);
    text->data = malloc(out.size + 1);
    text->cap = 0;
    cr_assert(text->data);
    if (out.size) memcpy(text->data, out.data, out.size);
    text->data[out.size] = 0;
    text->size = out.size;
    free(out.data);
    return s;
}

static tracec_status_t decode(tracec_pool *pool, const void *data, size_t n, const char *type, tt_buf *text,
                              tracec_error *err) {
    return decode_opt(pool, data, n, type, false, text, err);
}

static bool same(const tt_buf *a, const tt_buf *b) {
    return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

/*
 * Decodes every `NNN.bin` of `sub` listed in `sub/list` ("NNN TYPE NAME...")
 * with protoc (one shell for all) and with tracec; returns how many were compared.
 */
static int compare_dir(const char *sub) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "while read n t rest; do %s --decode=$t " PROTOC_P3 " < %s/$n.bin > %s/$n.txt || exit 1; "
             "done < %s/list",
             TRACEC_PROTOC, sub, sub, sub);
    tt_buf perr = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &perr), 0, "protoc --decode failed: %s", perr.data);
    tt_buf_free(&perr);

    char path[1024];
    snprintf(path, sizeof path, "%s/%s/list", dir, sub);
    tt_buf list = {0};
    cr_assert(tt_read_file(path, &list), "%s", path);
    tracec_pool *pool = p3_pool();
    int count = 0;
    for (char *line = list.data, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char num[16], type[256];
        int used = 0;
        cr_assert_eq(sscanf(line, "%15s %255s %n", num, type, &used), 2, "bad list line: %s", line);
        const char *name = line + used;
        tt_buf bin = {0}, want = {0}, got = {0};
        snprintf(path, sizeof path, "%s/%s/%s.bin", dir, sub, num);
        cr_assert(tt_read_file(path, &bin), "%s", path);
        snprintf(path, sizeof path, "%s/%s/%s.txt", dir, sub, num);
        cr_assert(tt_read_file(path, &want), "%s", path);
        tracec_error err;
        cr_assert_eq(decode(pool, bin.data, bin.size, type, &got, &err), TRACEC_STATUS_SUCCESS, "%s: %s", name,
                     err.msg);
        if (!same(&want, &got))
            cr_assert_fail("%s (%s %s/%s.bin): tracec and protoc differ\n--- protoc\n%s--- tracec\n%s", name, type,
                           sub, num, want.data, got.data);
        tt_buf_free(&bin);
        tt_buf_free(&want);
        tt_buf_free(&got);
        count++;
    }
    tt_buf_free(&list);
    tracec_pool_free(pool);
    return count;
}

Test(decode_p3, hand_made_cases_match_protoc) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s/tests/decode/wire_cases.py cases", TRACEC_PYTHON3, TRACEC_SOURCE_DIR);
    tt_buf err = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &err), 0, "%s", err.data);
    tt_buf_free(&err);
    cr_assert_geq(compare_dir("cases"), 40);
}

/*
 * protobuf 21.12's text-format conformance tests *UnknownFields_Drop.TextFormatOutput
 * (unknown_drop.py, python3-protobuf's print_unknown_fields=False as the oracle):
 * hide_unknown leaves unknown fields out; the API and `tracec decode --no-unknown`.
 */
Test(decode_p3, unknown_fields_drop_like_print_unknown_fields_false) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=p3.desc " PROTOC_P3 " && "
             "PYTHONPATH=%s/tests/decode %s %s/tests/decode/unknown_drop.py p3.desc u",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, TRACEC_PYTHON3, TRACEC_SOURCE_DIR);
    tt_buf err = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &err), 0, "%s", err.data);
    tt_buf_free(&err);
    char path[1024];
    snprintf(path, sizeof path, "%s/u/list", dir);
    tt_buf list = {0};
    cr_assert(tt_read_file(path, &list), "%s", path);
    tracec_pool *pool = p3_pool();
    int count = 0;
    for (char *name = list.data, *nl; name && *name; name = nl ? nl + 1 : NULL) {
        nl = strchr(name, '\n');
        if (nl) *nl = 0;
        tt_buf bin = {0}, want = {0}, got = {0}, shown = {0};
        snprintf(path, sizeof path, "%s/u/%s.bin", dir, name);
        cr_assert(tt_read_file(path, &bin), "%s", path);
        snprintf(path, sizeof path, "%s/u/%s.txt", dir, name);
        cr_assert(tt_read_file(path, &want), "%s", path);
        tracec_error derr;
        cr_assert_eq(decode_opt(pool, bin.data, bin.size, "tracec_test.p3.Scalars", true, &got, &derr),
                     TRACEC_STATUS_SUCCESS, "%s: %s", name, derr.msg);
        cr_expect(same(&got, &want), "%s_Drop: python3-protobuf prints\n%s\ntracec prints\n%s", name, want.data,
                  got.data);
        /* Without the option the unknown fields are there (protoc --decode's form, tested above). */
        cr_assert_eq(decode(pool, bin.data, bin.size, "tracec_test.p3.Scalars", &shown, &derr), TRACEC_STATUS_SUCCESS);
        cr_expect(strstr(shown.data, "\n10") != NULL || strncmp(shown.data, "10", 2) == 0, "%s: unknown fields not printed by default:\n%s", name,
                  shown.data);
        /* The command line. */
        snprintf(cmd, sizeof cmd, "%s decode --no-unknown --type tracec_test.p3.Scalars -I%s -I%s --proto p3.proto u/%s.bin",
                 TRACEC_CLI, DATA_DIR, TRACEC_PROTOBUF_INCLUDE, name);
        tt_buf cli_out = {0};
        cr_assert_eq(tt_run(dir, cmd, NULL, 0, &cli_out, NULL), 0, "%s", cmd);
        cr_expect(same(&cli_out, &want), "%s: tracec decode --no-unknown prints\n%s", name, cli_out.data);
        tt_buf_free(&cli_out);
        tt_buf_free(&bin);
        tt_buf_free(&want);
        tt_buf_free(&got);
        tt_buf_free(&shown);
        count++;
    }
    tt_buf_free(&list);
    tracec_pool_free(pool);
    cr_assert_eq(count, 8);
}

/* Random wire data of `type` (gen_wire.py), listed for compare_dir. */
static void random_p3(const char *type, int seed, int count) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=p3.desc " PROTOC_P3 " && "
             "%s %s/tests/decode/gen_wire.py p3.desc %s %d %d r && "
             "for i in $(seq 0 %d); do printf 'w%%03d %s random seed %d\\n' $i; done > r/list",
             TRACEC_PROTOC, TRACEC_PYTHON3, TRACEC_SOURCE_DIR, type, seed, count, count - 1, type, seed);
    tt_buf err = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &err), 0, "%s", err.data);
    tt_buf_free(&err);
    cr_assert_eq(compare_dir("r"), count);
}

Test(decode_p3, random_scalars_match_protoc) { random_p3("tracec_test.p3.Scalars", 31, 40); }
Test(decode_p3, random_maps_match_protoc) { random_p3("tracec_test.p3.Maps", 32, 40); }
Test(decode_p3, random_proto2_maps_match_protoc) { random_p3("tracec_test.p2.Maps2", 33, 25); }

/* protoc --encode of `text`, then: tracec decode == protoc --decode, and tracec encode of that gives the bytes. */
static void round_trip(const char *type, const char *text, const char *must_contain, const char *must_not,
                       bool same_as_protoc_encode) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --encode=%s " PROTOC_P3, TRACEC_PROTOC, type);
    tt_buf bin = {0}, perr = {0};
    cr_assert_eq(tt_run(dir, cmd, text, strlen(text), &bin, &perr), 0, "%s", perr.data);
    snprintf(cmd, sizeof cmd, "%s --decode=%s " PROTOC_P3, TRACEC_PROTOC, type);
    tt_buf want = {0}, got = {0};
    cr_assert_eq(tt_run(dir, cmd, bin.data, bin.size, &want, &perr), 0, "%s", perr.data);
    tracec_pool *pool = p3_pool();
    tracec_error err;
    cr_assert_eq(decode(pool, bin.data, bin.size, type, &got, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    if (!same(&want, &got)) cr_assert_fail("tracec and protoc differ\n--- protoc\n%s--- tracec\n%s", want.data, got.data);
    if (must_contain) cr_assert(strstr(got.data, must_contain), "%s", got.data);
    if (must_not) cr_assert_null(strstr(got.data, must_not), "%s", got.data);

    tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
    tracec_bytes again = TRACEC_BYTES_INIT, direct = TRACEC_BYTES_INIT;
    cr_assert_eq(tracec_text_encode(pool, type, got.data, got.size, &to, &again, &err), TRACEC_STATUS_SUCCESS,
                 "%s", err.msg);
    cr_assert(again.size == bin.size && memcmp(again.data, bin.data, bin.size) == 0,
              "decode -> encode changed the bytes");
    /* Our encoder on the original text gives protoc's bytes too (fields are in number order),
     * unless the text spells out proto3 defaults: tracec writes them, protoc does not. */
    cr_assert_eq(tracec_text_encode(pool, type, text, strlen(text), &to, &direct, &err), TRACEC_STATUS_SUCCESS,
                 "%s", err.msg);
    if (same_as_protoc_encode)
        cr_assert(direct.size == bin.size && memcmp(direct.data, bin.data, bin.size) == 0,
                  "tracec encode differs from protoc --encode");
    tracec_bytes_free(&again);
    tracec_bytes_free(&direct);
    tracec_pool_free(pool);
    tt_buf_free(&bin);
    tt_buf_free(&perr);
    tt_buf_free(&want);
    tt_buf_free(&got);
}

Test(decode_p3, any_expanded_text_round_trips_through_the_plain_form) {
    round_trip("tracec_test.p3.WithAny",
               "any { [type.googleapis.com/tracec_test.p3.Sub] { a: 5 s: \"hi\" kids { a: 1 } } }\n"
               "anys { [type.googleapis.com/tracec_test.p3.Sub] { } }\n"
               "anys { [type.googleapis.com/tracec_test.p3.Sub] { s: \"\u00e9x\" } }\n"
               "n: 3\n",
               "type_url: \"type.googleapis.com/tracec_test.p3.Sub\"", "[type.googleapis.com",
               false /* the empty expansion: tracec writes an empty `value`, protoc none */);
}

Test(decode_p3, proto3_defaults_round_trip) {
    round_trip("tracec_test.p3.Scalars",
               "f_double: 0 f_int32: 0 f_bool: false f_string: \"\" f_enum: MODE_UNSPECIFIED f_sint64: -1\n"
               "o_int32: 0 o_string: \"\" o_enum: MODE_UNSPECIFIED\n"
               "c_int32: 0 sub { a: 0 s: \"\" } r_int32: [0, 0]\n",
               "o_int32: 0", "f_int32", false);
}

Test(decode_p3, maps_round_trip) {
    round_trip("tracec_test.p3.Maps",
               "m_string { key: \"a\" value: 0 } m_string { key: \"b\" value: 2 }\n"
               "m_int32 { key: -1 value { a: 1 } } m_int32 { key: 7 value { } }\n"
               "m_bool { key: false value { s: \"x\" } }\n",
               "  key: false\n", NULL, true);
}
