/*
 * test_textproto_more.c - round trips of a corpus through protoc, nesting
 * limits, the output contract (append; nothing on error), error layout.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_util.h"
#include "test_util.h"

static tracec_pool *full_pool(void) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err;
    cr_assert_eq(tracec_pool_add_set_file(p, TP_SET, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_eq(tracec_pool_add_builtin_schema(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    return p;
}

/* encode, then protoc --decode  ==  protoc --encode, then protoc --decode */
static void round_trip(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/grammar/corpus/%s", TRACEC_SOURCE_DIR, name);
    tt_buf file = {0};
    cr_assert(tt_read_file(path, &file), "%s", path);
    char *text = file.data;
    size_t len = file.size;
    char type[256];
    cr_assert_eq(sscanf(text, "# proto-message: %255s", type), 1, "%s has no proto-message header", name);
    const char *proto = strncmp(type, "tp3.", 4) == 0   ? "tp3.proto"
                        : strncmp(type, "tp.", 3) == 0 ? "tp2.proto"
                                                       : "perfetto/trace/trace.proto";
    tracec_pool *pool = full_pool();
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = name;
    cr_assert_eq(tracec_text_encode(pool, type, text, len, &opts, &out, &err), TRACEC_STATUS_SUCCESS,
                 "%s", err.msg);
    char mode[300], *pbin, *d1, *d2;
    size_t pl, l1, l2;
    snprintf(mode, sizeof mode, "--encode=%s", type);
    cr_assert_eq(tp_protoc(mode, proto, text, len, &pbin, &pl), 0, "protoc --encode: %s", pbin);
    snprintf(mode, sizeof mode, "--decode=%s", type);
    cr_assert_eq(tp_protoc(mode, proto, out.data, out.size, &d1, &l1), 0, "protoc --decode: %s", d1);
    cr_assert_eq(tp_protoc(mode, proto, pbin, pl, &d2, &l2), 0);
    cr_assert(l1 == l2 && (l1 == 0 || memcmp(d1, d2, l1) == 0), "%s: decoded differently:\n%s\n---- protoc:\n%s", name,
              d1, d2);
    free(pbin);
    free(d1);
    free(d2);
    tt_buf_free(&file);
    tracec_bytes_free(&out);
    tracec_pool_free(pool);
}

Test(roundtrip, all_types) { round_trip("all_types.txtpb"); }
Test(roundtrip, proto3) { round_trip("proto3.txtpb"); }
Test(roundtrip, trace) { round_trip("trace.txtpb"); }

static char *nested(int levels) {
    char *s = malloc((size_t)levels * 12 + 16);
    size_t n = 0;
    for (int i = 0; i < levels; i++) n += (size_t)sprintf(s + n, "recursive {");
    n += (size_t)sprintf(s + n, "f_int32: 1");
    for (int i = 0; i < levels; i++) s[n++] = '}';
    s[n] = '\0';
    return s;
}

static tracec_status_t enc(const char *text, size_t len, int max_depth, tracec_bytes *out,
                           tracec_error *err) {
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = "t";
    opts.max_depth = max_depth;
    return tracec_text_encode(tp_test_pool(), "tp.All", text, len, &opts, out, err);
}

Test(limits, default_depth_100) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    char *ok = nested(100);
    cr_assert_eq(enc(ok, strlen(ok), 0, &out, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    char *bad = nested(101);
    out.size = 0;
    cr_assert_eq(enc(bad, strlen(bad), 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "t:1:1111: messages nested deeper than the limit of 100"), "%s", err.msg);
    free(ok);
    free(bad);
    tracec_bytes_free(&out);
}

/* An error message longer than tracec_error's buffer (a very long file name) ends in "...". */
Test(limits, cut_error_message_says_so) {
    char name[1500];
    memset(name, 'f', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = name;
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    const char *text = "no_such_field: 1";
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", text, strlen(text), &opts, &out, &err),
                 TRACEC_STATUS_CORRUPT_DATA);
    size_t n = strlen(err.msg);
    cr_assert_eq(n, sizeof err.msg - 1);
    cr_assert_str_eq(err.msg + n - 3, "...", "%s", err.msg + n - 40);
    tracec_bytes_free(&out);
}

Test(limits, configurable_depth) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    char *s = nested(6);
    cr_assert_eq(enc(s, strlen(s), 5, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "limit of 5"), "%s", err.msg);
    cr_assert_eq(enc(s, strlen(s), 6, &out, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    free(s);
    tracec_bytes_free(&out);
}

/* No recursion anywhere: very deep input is an error or works, never a crash. */
Test(limits, very_deep) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    char *s = nested(50000);
    cr_assert_eq(enc(s, strlen(s), 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert_eq(enc(s, strlen(s), 1000000, &out, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    free(s);
    tracec_bytes_free(&out);
}

Test(output, appends_and_nothing_on_error) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    cr_assert_eq(enc("f_int32: 1", 10, 0, &out, &err), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(enc("f_int32: 2", 10, 0, &out, &err), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(out.size, 4);
    cr_assert_eq(memcmp(out.data, "\x28\x01\x28\x02", 4), 0);
    cr_assert_eq(enc("child { a: 1 } f_int32: x", 25, 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert_eq(out.size, 4);
    tracec_bytes_free(&out);
    cr_assert_null(out.data);
}

Test(output, length_prefix_widening) {
    /* A nested body of 200 bytes needs a two-byte length. */
    char text[400];
    snprintf(text, sizeof text, "child { s: \"%0198d\" }", 0);
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    cr_assert_eq(enc(text, strlen(text), 0, &out, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    /* child (19): tag 9a 01, length 201 = c9 01; s (2): tag 12, length 198 = c6 01 */
    cr_assert_eq(out.size, 2 + 2 + 1 + 2 + 198);
    cr_assert_eq(memcmp(out.data, "\x9a\x01\xc9\x01\x12\xc6\x01", 7), 0, "%s", tp_hex(out.data, 8));
    tracec_bytes_free(&out);
}

/* allow_invalid_utf8 (added last to the options): string bytes written as given, as protoc writes them. */
Test(api, allow_invalid_utf8) {
    static const char text[] = "f_string: \"a\\377\\303\" r_string: \"\\200\"";
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    /* Initialisers written before the field existed are still valid C and keep the spec rule
     * (only -Wmissing-field-initializers notices them). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
    tracec_text_options old = {"old", 100};
#pragma GCC diagnostic pop
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", text, strlen(text), &old, &out, &err),
                 TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "old:1:11: string field \"f_string\" holds invalid UTF-8"), "%s", err.msg);
    tracec_text_options o = TRACEC_TEXT_OPTIONS_INIT;
    cr_assert_not(o.allow_invalid_utf8);
    o.allow_invalid_utf8 = true;
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", text, strlen(text), &o, &out, &err),
                 TRACEC_STATUS_SUCCESS, "%s", err.msg);
    char *want = NULL;
    size_t want_len = 0;
    cr_assert_eq(tp_protoc("--encode=tp.All", "tp2.proto", text, strlen(text), &want, &want_len), 0);
    cr_assert(out.size == want_len && memcmp(out.data, want, want_len) == 0, "%s",
              tp_hex(out.data, out.size));
    free(want);
    tracec_bytes_free(&out);
}

Test(api, arguments) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.Nope", "", 0, NULL, &out, &err),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert(strstr(err.msg, "tp.Nope"));
    cr_assert_eq(tracec_text_encode(NULL, "tp.All", "", 0, NULL, &out, &err), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", NULL, 0, NULL, &out, &err),
                 TRACEC_STATUS_SUCCESS);
    cr_assert_eq(out.size, 0);
    /* Not NUL-terminated: only `len` bytes are read. */
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", "f_int32: 12345", 11, NULL, &out, &err),
                 TRACEC_STATUS_SUCCESS);
    cr_assert_eq(out.size, 2);
    cr_assert_eq(out.data[1], 12);
    /* NULL err is allowed. */
    cr_assert_eq(tracec_text_encode(tp_test_pool(), "tp.All", "x", 1, NULL, &out, NULL),
                 TRACEC_STATUS_CORRUPT_DATA);
    tracec_bytes_free(&out);
}

Test(errors, layout) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    const char *text = "f_int32: 1\n  child { a: \"x\" }\n";
    cr_assert_eq(enc(text, strlen(text), 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert_str_eq(err.msg,
                     "t:2:14: field \"a\" (int32) expects an integer, found a string\n"
                     "   child { a: \"x\" }\n"
                     "              ^");
    /* An embedded NUL byte is a stray character, shown as '?'. */
    cr_assert_eq(enc("f_int32: 1\0", 11, 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "t:1:11: unexpected character\n f_int32: 1?\n           ^"), "%s", err.msg);
    /* Long lines are cut around the column. */
    char *line = malloc(8000);
    size_t n = 0;
    for (int i = 0; i < 400; i++) n += (size_t)sprintf(line + n, "r_int32: %d ", i);
    n += (size_t)sprintf(line + n, "bogus: 1");
    cr_assert_eq(enc(line, n, 0, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "unknown field \"bogus\""), "%s", err.msg);
    cr_assert(strstr(err.msg, "\n ...r_int32:") || strstr(err.msg, "\n ..."), "%s", err.msg);
    cr_assert_lt(strlen(err.msg), 400);
    free(line);
    tracec_bytes_free(&out);
}

/*
 * The float fast path (mantissa of at most 15 digits, decimal exponent within
 * +-22, exact powers of ten) gives strtod's bits; random tokens of every shape
 * around its limits, against strtod as the oracle.
 */
Test(floats, fast_path_equals_strtod) {
    uint64_t x = 0x2545F4914F6CDD1Dull;
    char tok[64], text[96];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int digits = 1 + (int)(x % 17), point = (int)((x >> 8) % (unsigned)(digits + 1));
        int exp = (int)((x >> 16) % 61) - 30, form = (int)((x >> 24) % 4);
        size_t n = 0;
        uint64_t y = x;
        for (int d = 0; d < digits; d++) {
            if (d == point && d > 0 && form != 0) tok[n++] = '.';
            tok[n++] = (char)('0' + (d == 0 ? 1 + y % 9 : y % 10));
            y = y / 10 ? y / 10 : x >> 3;
        }
        if (form >= 2) n += (size_t)snprintf(tok + n, sizeof tok - n, "%s%d", form == 2 ? "e" : "E", exp);
        tok[n] = 0;
        snprintf(text, sizeof text, "f_double: %s", tok);
        tracec_bytes out = TRACEC_BYTES_INIT;
        tracec_error err;
        cr_assert_eq(enc(text, strlen(text), 100, &out, &err), TRACEC_STATUS_SUCCESS, "%s: %s", tok, err.msg);
        cr_assert_eq(out.size, 9u);
        double want = strtod(tok, NULL), got;
        memcpy(&got, out.data + 1, 8);
        cr_assert(memcmp(&want, &got, 8) == 0, "%s: strtod %.17g, tracec %.17g", tok, want, got);
        tracec_bytes_free(&out);
    }
}

/*
 * text_in_place: the scanner works in the caller's buffer (two NULs after
 * the text): same output, same errors, and the buffer holds the same bytes
 * afterwards, on success and on every kind of error.
 */
Test(api, text_in_place_is_the_same_and_leaves_the_text) {
    const char *cases[] = {
        "f_int32: 1 [tp.ext_int]: 5 child { a: 1 } f_string: \"x\\ty\"",
        "[ tp . ext_int ]: 7",
        "f_int32: 1 [tp.ext_nope]: 5",
        "f_int32: 1 [tp.ext_int: 5",
        "child { a: 1",
        "f_int32: 1 f_string: \"abc",
        "f_int32: 12x",
        "f_double: 1.5e3 f_int32: \"s\"",
        "r_int32: [1, 2, 3] f_bool: maybe",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i]);
        char *buf = malloc(len + 2);
        cr_assert(buf);
        memcpy(buf, cases[i], len + 1);
        buf[len + 1] = 0;
        tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
        opts.file_name = "t";
        tracec_bytes a = TRACEC_BYTES_INIT, b = TRACEC_BYTES_INIT;
        tracec_error ea, eb;
        ea.msg[0] = eb.msg[0] = 0;
        tracec_status_t sa = tracec_text_encode(tp_test_pool(), "tp.All", cases[i], len, &opts, &a, &ea);
        opts.text_in_place = true;
        tracec_status_t sb = tracec_text_encode(tp_test_pool(), "tp.All", buf, len, &opts, &b, &eb);
        cr_expect_eq(sa, sb, "%s", cases[i]);
        cr_expect_str_eq(ea.msg, eb.msg, "%s", cases[i]);
        cr_expect(a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0), "%s", cases[i]);
        cr_expect(memcmp(buf, cases[i], len + 1) == 0 && buf[len + 1] == 0, "text changed: %s -> %.*s", cases[i],
                  (int)len, buf);
        tracec_bytes_free(&a);
        tracec_bytes_free(&b);
        free(buf);
    }
}
