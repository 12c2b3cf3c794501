/*
 * test_roundtrip.c - bytes written by generated writers, decoded by an
 * independent implementation (`protoc --decode`), for every field kind and
 * its edge values.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "all_types.tracec.h"
#include "protoc_oracle.h"

#define INCLUDES TRACEC_SOURCE_DIR "/tests/generator/plugin/protos:" TRACEC_SOURCE_DIR "/protos:" TRACEC_PROTOBUF_INCLUDE
#define BUF_SIZE (8u << 20)

static uint8_t *g_buf;
static tracec_writer g_w;

static void setup(void) { g_buf = malloc(BUF_SIZE); }
static void teardown(void) { free(g_buf); }

TestSuite(roundtrip, .init = setup, .fini = teardown);

static void begin(tracec_msg *root) {
    tracec_writer_init_array(&g_w, g_buf, BUF_SIZE);
    tracec_writer_begin_root(&g_w, root);
}

/* Ends the root and returns protoc's text for it (caller frees). */
static char *decode(tracec_msg *root, const char *type) {
    cr_assert_eq(tracec_writer_end_root(&g_w, root), TRACEC_STATUS_SUCCESS, "writer status %s",
                 tracec_status_str(g_w.status));
    int st = -1;
    char *text = oracle_decode(INCLUDES, "all_types.proto", type, g_buf, tracec_writer_size(&g_w), &st);
    cr_assert_not_null(text);
    cr_assert_eq(st, 0, "protoc --decode failed:\n%s", text);
    return text;
}

static void expect_text(tracec_msg *root, const char *type, const char *expected) {
    char *text = decode(root, type);
    cr_expect_str_eq(text, expected, "protoc decoded:\n%s\nexpected:\n%s", text, expected);
    free(text);
}

/* One singular field with one value per case: the writer call and protoc's line. */
#define CASE(call, line)                                 \
    do {                                                 \
        tracec_test_AllTypes m;                          \
        begin(&m.msg);                                   \
        call;                                            \
        expect_text(&m.msg, "tracec_test.AllTypes", line "\n"); \
    } while (0)

Test(roundtrip, varint_edges) {
    CASE(tracec_test_AllTypes_set_f_int32(&m, 0), "f_int32: 0");
    CASE(tracec_test_AllTypes_set_f_int32(&m, -1), "f_int32: -1");
    CASE(tracec_test_AllTypes_set_f_int32(&m, INT32_MIN), "f_int32: -2147483648");
    CASE(tracec_test_AllTypes_set_f_int32(&m, INT32_MAX), "f_int32: 2147483647");
    CASE(tracec_test_AllTypes_set_f_int64(&m, INT64_MIN), "f_int64: -9223372036854775808");
    CASE(tracec_test_AllTypes_set_f_int64(&m, INT64_MAX), "f_int64: 9223372036854775807");
    CASE(tracec_test_AllTypes_set_f_uint64(&m, UINT64_MAX), "f_uint64: 18446744073709551615");
    CASE(tracec_test_AllTypes_set_f_uint64(&m, 0), "f_uint64: 0");
    CASE(tracec_test_AllTypes_set_f_uint32(&m, UINT32_MAX), "f_uint32: 4294967295");
    CASE(tracec_test_AllTypes_set_f_sint32(&m, INT32_MIN), "f_sint32: -2147483648");
    CASE(tracec_test_AllTypes_set_f_sint32(&m, -1), "f_sint32: -1");
    CASE(tracec_test_AllTypes_set_f_sint64(&m, INT64_MIN), "f_sint64: -9223372036854775808");
    CASE(tracec_test_AllTypes_set_f_sint64(&m, INT64_MAX), "f_sint64: 9223372036854775807");
    CASE(tracec_test_AllTypes_set_f_bool(&m, true), "f_bool: true");
    CASE(tracec_test_AllTypes_set_f_bool(&m, false), "f_bool: false");
    CASE(tracec_test_AllTypes_set_f_enum(&m, tracec_test_COLOR_RED), "f_enum: COLOR_RED");
    CASE(tracec_test_AllTypes_set_f_enum(&m, tracec_test_COLOR_NEGATIVE), "f_enum: COLOR_NEGATIVE");
    CASE(tracec_test_AllTypes_set_f_field_number_1000(&m, 5), "f_field_number_1000: 5");
    CASE(tracec_test_AllTypes_set_f_field_number_max(&m, 7), "f_field_number_max: 7");
}

Test(roundtrip, negative_int32_is_a_ten_byte_varint) {
    tracec_test_AllTypes m;
    begin(&m.msg);
    tracec_test_AllTypes_set_f_int32(&m, -1);
    cr_assert_eq(tracec_writer_end_root(&g_w, &m.msg), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_writer_size(&g_w), 11u);
    static const uint8_t want[] = {0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    cr_assert_arr_eq(g_buf, want, sizeof want);
}

Test(roundtrip, fixed_and_float_edges) {
    CASE(tracec_test_AllTypes_set_f_fixed32(&m, UINT32_MAX), "f_fixed32: 4294967295");
    CASE(tracec_test_AllTypes_set_f_fixed64(&m, UINT64_MAX), "f_fixed64: 18446744073709551615");
    CASE(tracec_test_AllTypes_set_f_sfixed32(&m, INT32_MIN), "f_sfixed32: -2147483648");
    CASE(tracec_test_AllTypes_set_f_sfixed64(&m, INT64_MIN), "f_sfixed64: -9223372036854775808");
    CASE(tracec_test_AllTypes_set_f_double(&m, NAN), "f_double: nan");
    CASE(tracec_test_AllTypes_set_f_double(&m, INFINITY), "f_double: inf");
    CASE(tracec_test_AllTypes_set_f_double(&m, -INFINITY), "f_double: -inf");
    CASE(tracec_test_AllTypes_set_f_double(&m, 0.1), "f_double: 0.1");
    CASE(tracec_test_AllTypes_set_f_double(&m, -0.0), "f_double: -0");
    CASE(tracec_test_AllTypes_set_f_double(&m, 1e300), "f_double: 1e+300");
    CASE(tracec_test_AllTypes_set_f_float(&m, 1.5f), "f_float: 1.5");
    CASE(tracec_test_AllTypes_set_f_float(&m, NAN), "f_float: nan");
    CASE(tracec_test_AllTypes_set_f_float(&m, -INFINITY), "f_float: -inf");
}

Test(roundtrip, strings_and_bytes) {
    CASE(tracec_test_AllTypes_set_cstr_f_string(&m, ""), "f_string: \"\"");
    CASE(tracec_test_AllTypes_set_cstr_f_string(&m, "hello \"world\"\n"), "f_string: \"hello \\\"world\\\"\\n\"");
    CASE(tracec_test_AllTypes_set_f_string(&m, "abcdef", 3), "f_string: \"abc\"");
    CASE(tracec_test_AllTypes_set_f_bytes(&m, "a\0b\xff", 4), "f_bytes: \"a\\000b\\377\"");
    CASE(tracec_test_AllTypes_set_f_bytes(&m, "", 0), "f_bytes: \"\"");
}

Test(roundtrip, one_mib_string) {
    size_t n = 1u << 20;
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = '\0';
    tracec_test_AllTypes m;
    begin(&m.msg);
    tracec_test_AllTypes_set_f_string(&m, s, n);
    char *text = decode(&m.msg, "tracec_test.AllTypes");
    char *expected = malloc(n + 32);
    snprintf(expected, n + 32, "f_string: \"%s\"\n", s);
    cr_expect(strcmp(text, expected) == 0, "1 MiB string did not round-trip (got %zu bytes of text)",
              strlen(text));
    free(expected);
    free(text);
    free(s);
}

Test(roundtrip, repeated_and_packed) {
    static const int64_t i64[] = {0, -1, INT64_MIN};
    static const double dbl[] = {1.5, -2.25};
    static const int32_t s32[] = {-1, 1, INT32_MIN};
    static const bool bools[] = {true, false, true};
    static const int32_t colors[] = {tracec_test_COLOR_RED, tracec_test_COLOR_NEGATIVE};
    static const uint32_t f32[] = {1, UINT32_MAX};
    static const int64_t sf64[] = {-7, 7};
    static const float flt[] = {0.5f};
    static const uint32_t u32[] = {300, 0};
    static const uint64_t u64[] = {UINT64_MAX};
    static const int64_t s64[] = {INT64_MIN, INT64_MAX};
    static const uint64_t f64[] = {UINT64_MAX, 1};
    static const int32_t sf32[] = {INT32_MIN};
    static const int32_t i32[] = {-100, 100};
    tracec_test_AllTypes m;
    begin(&m.msg);
    tracec_test_AllTypes_set_r_int32(&m, 1);
    tracec_test_AllTypes_set_r_int32(&m, -1);
    tracec_test_AllTypes_set_cstr_r_string(&m, "a");
    tracec_test_AllTypes_set_cstr_r_string(&m, "b");
    tracec_test_AllTypes_set_p_int64(&m, i64, 3);
    tracec_test_AllTypes_set_p_double(&m, dbl, 2);
    tracec_test_AllTypes_set_p_sint32(&m, s32, 3);
    tracec_test_AllTypes_set_p_bool(&m, bools, 3);
    tracec_test_AllTypes_set_p_enum(&m, colors, 2);
    tracec_test_AllTypes_set_p_fixed32(&m, f32, 2);
    tracec_test_AllTypes_set_p_sfixed64(&m, sf64, 2);
    tracec_test_AllTypes_set_p_float(&m, flt, 1);
    tracec_test_AllTypes_set_p_uint32(&m, u32, 2);
    tracec_test_AllTypes_set_p_uint64(&m, u64, 1);
    tracec_test_AllTypes_set_p_sint64(&m, s64, 2);
    tracec_test_AllTypes_set_p_fixed64(&m, f64, 2);
    tracec_test_AllTypes_set_p_sfixed32(&m, sf32, 1);
    tracec_test_AllTypes_set_p_int32(&m, i32, 2);
    tracec_test_AllTypes_set_p_int32(&m, i32, 0); /* an empty array writes nothing */
    expect_text(&m.msg, "tracec_test.AllTypes",
                "r_int32: 1\nr_int32: -1\n"
                "r_string: \"a\"\nr_string: \"b\"\n"
                "p_int64: 0\np_int64: -1\np_int64: -9223372036854775808\n"
                "p_double: 1.5\np_double: -2.25\n"
                "p_sint32: -1\np_sint32: 1\np_sint32: -2147483648\n"
                "p_bool: true\np_bool: false\np_bool: true\n"
                "p_enum: COLOR_RED\np_enum: COLOR_NEGATIVE\n"
                "p_fixed32: 1\np_fixed32: 4294967295\n"
                "p_sfixed64: -7\np_sfixed64: 7\n"
                "p_float: 0.5\n"
                "p_uint32: 300\np_uint32: 0\n"
                "p_uint64: 18446744073709551615\n"
                "p_sint64: -9223372036854775808\np_sint64: 9223372036854775807\n"
                "p_fixed64: 18446744073709551615\np_fixed64: 1\n"
                "p_sfixed32: -2147483648\n"
                "p_int32: -100\np_int32: 100\n");
}

Test(roundtrip, nested_messages) {
    tracec_test_AllTypes m;
    tracec_test_Child c;
    begin(&m.msg);
    tracec_test_AllTypes_begin_f_child(&m, &c);
    tracec_test_Child_set_id(&c, 1);
    tracec_test_Child_set_cstr_label(&c, "one");
    tracec_test_AllTypes_end_f_child(&m, &c);
    tracec_test_AllTypes_begin_r_child(&m, &c);
    tracec_test_AllTypes_end_r_child(&m, &c); /* empty child */
    tracec_test_AllTypes_begin_r_child(&m, &c);
    tracec_test_Child_set_id(&c, 3);
    tracec_test_AllTypes_end_r_child(&m, &c);
    expect_text(&m.msg, "tracec_test.AllTypes",
                "f_child {\n  id: 1\n  label: \"one\"\n}\n"
                "r_child {\n}\n"
                "r_child {\n  id: 3\n}\n");
}

/* Builds the text protoc prints for `depth` nested Recursive messages. */
static char *nested_text(int depth) {
    size_t cap = (size_t)depth * (size_t)depth * 8 + 1024, k = 0;
    char *s = malloc(cap);
    k += (size_t)snprintf(s + k, cap - k, "f_recursive {\n");
    for (int d = 1; d <= depth; d++) {
        k += (size_t)snprintf(s + k, cap - k, "%*sdepth: %d\n", 2 * d, "", d);
        if (d < depth) k += (size_t)snprintf(s + k, cap - k, "%*schild {\n", 2 * d, "");
    }
    for (int d = depth - 1; d >= 1; d--) k += (size_t)snprintf(s + k, cap - k, "%*s}\n", 2 * d, "");
    snprintf(s + k, cap - k, "}\n");
    return s;
}

Test(roundtrip, nesting_32_levels) {
    enum { kDepth = 32 };
    tracec_test_AllTypes m;
    tracec_test_Recursive r[kDepth];
    begin(&m.msg);
    tracec_test_AllTypes_begin_f_recursive(&m, &r[0]);
    tracec_test_Recursive_set_depth(&r[0], 1);
    for (int d = 1; d < kDepth; d++) {
        tracec_test_Recursive_begin_child(&r[d - 1], &r[d]);
        tracec_test_Recursive_set_depth(&r[d], d + 1);
    }
    for (int d = kDepth - 1; d >= 1; d--) tracec_test_Recursive_end_child(&r[d - 1], &r[d]);
    tracec_test_AllTypes_end_f_recursive(&m, &r[0]);
    char *expected = nested_text(kDepth);
    expect_text(&m.msg, "tracec_test.AllTypes", expected);
    free(expected);
}

static void big_child_case(size_t payload) {
    char *bytes = malloc(payload);
    memset(bytes, 'q', payload);
    tracec_test_AllTypes m;
    tracec_test_Recursive r;
    begin(&m.msg);
    tracec_test_AllTypes_begin_f_recursive(&m, &r);
    tracec_test_Recursive_set_depth(&r, 9);
    tracec_test_Recursive_set_payload(&r, bytes, payload);
    tracec_test_AllTypes_end_f_recursive(&m, &r);
    char *text = decode(&m.msg, "tracec_test.AllTypes");
    size_t cap = payload + 64;
    char *expected = malloc(cap);
    int k = snprintf(expected, cap, "f_recursive {\n  depth: 9\n  payload: \"");
    memcpy(expected + k, bytes, payload);
    strcpy(expected + k + payload, "\"\n}\n");
    cr_expect(strcmp(text, expected) == 0, "a %zu-byte nested message did not round-trip", payload);
    free(expected);
    free(text);
    free(bytes);
}

Test(roundtrip, message_larger_than_127_bytes) { big_child_case(200); }

Test(roundtrip, message_larger_than_2_mib) { big_child_case((2u << 20) + 12345); }

Test(roundtrip, wrapper_extension_fields) {
    tracec_test_TestEvent ev;
    tracec_test_Child c;
    begin(&ev.base.msg);
    tracec_test_TestEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    tracec_test_TestEvent_set_track_uuid(&ev, 5);
    tracec_test_TestEvent_set_cstr_name(&ev, "ev");
    tracec_test_TestEvent_set_cstr_test_string(&ev, "typed!");
    tracec_test_TestEvent_set_test_values(&ev, -3);
    tracec_test_TestEvent_set_test_values(&ev, INT64_MAX);
    tracec_test_TestEvent_begin_test_child(&ev, &c);
    tracec_test_Child_set_id(&c, 77);
    tracec_test_TestEvent_end_test_child(&ev, &c);
    /* The base writer is a plain TrackEvent writer. */
    perfetto_protos_TrackEvent_set_counter_value(&ev.base, 12);
    expect_text(&ev.base.msg, "perfetto.protos.TrackEvent",
                "type: TYPE_INSTANT\n"
                "track_uuid: 5\n"
                "name: \"ev\"\n"
                "counter_value: 12\n"
                "[tracec_test.TestEvent.test_string]: \"typed!\"\n"
                "[tracec_test.TestEvent.test_values]: -3\n"
                "[tracec_test.TestEvent.test_values]: 9223372036854775807\n"
                "[tracec_test.TestEvent.test_child] {\n  id: 77\n}\n");
}
