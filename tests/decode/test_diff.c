#define _POSIX_C_SOURCE 200809L
/*
 * test_diff.c - line diffs and comparison by meaning.
 *
 * The unified diffs are checked by GNU patch (an independent implementation
 * of the format): applying our diff of A -> B to A must give B, for random
 * texts with many kinds of differences.  Comparisons by meaning must ignore
 * field order and packed/unpacked encodings, and nothing else.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_util.h"
#include "tracec/diff.h"

static char *dir;
static void setup(void) { dir = tt_tmpdir(); }
static void teardown(void) { tt_tmpdir_remove(dir); }

TestSuite(diff, .init = setup, .fini = teardown);

static char *diff_of(const char *a, const char *b, bool *equal) {
    tracec_bytes out = TRACEC_BYTES_INIT;
    *equal = tracec_diff_lines(a, strlen(a), b, strlen(b), "a", "b", &out);
    char *s = strndup(out.data ? (const char *)out.data : "", out.size);
    free(out.data);
    return s;
}

Test(diff, equal_texts) {
    bool eq;
    char *d = diff_of("x\ny\n", "x\ny\n", &eq);
    cr_assert(eq);
    cr_assert_str_eq(d, "");
    free(d);
}

Test(diff, one_change_with_context) {
    bool eq;
    char *d = diff_of("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", &eq);
    cr_assert(!eq);
    cr_assert_str_eq(d, "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
    free(d);
}

Test(diff, insert_into_empty) {
    bool eq;
    char *d = diff_of("", "a\nb\n", &eq);
    cr_assert(!eq);
    cr_assert_str_eq(d, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    free(d);
}

/* Random line lists over a small alphabet, so that lines repeat (the hard case). */
static char *random_text(uint32_t *rng, int lines) {
    char *s = malloc((size_t)lines * 4 + 1);
    size_t k = 0;
    for (int i = 0; i < lines; i++) {
        *rng = *rng * 1103515245u + 12345u;
        s[k++] = (char)('a' + (*rng >> 16) % 5);
        if ((*rng >> 8) % 3 == 0) s[k++] = (char)('0' + (*rng >> 20) % 3);
        s[k++] = '\n';
    }
    s[k] = 0;
    return s;
}

static char *mutate(uint32_t *rng, const char *a) {
    size_t n = strlen(a);
    char *b = malloc(n * 3 + 64);
    size_t k = 0;
    const char *p = a;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = (size_t)(nl - p) + 1;
        *rng = *rng * 1103515245u + 12345u;
        int r = (int)((*rng >> 16) % 10);
        if (r == 0) { /* delete */
        } else if (r == 1) { /* replace */
            b[k++] = 'z';
            b[k++] = '\n';
        } else if (r == 2) { /* insert before */
            b[k++] = 'y';
            b[k++] = '\n';
            memcpy(b + k, p, len);
            k += len;
        } else {
            memcpy(b + k, p, len);
            k += len;
        }
        p += len;
    }
    b[k] = 0;
    return b;
}

Test(diff, patch_applies_our_diffs) {
    uint32_t rng = 7;
    char cmd[256];
    for (int iter = 0; iter < 25; iter++) {
        char *a = random_text(&rng, 5 + iter * 7);
        char *b = iter % 5 == 4 ? random_text(&rng, 30) : mutate(&rng, a);
        bool eq;
        char *d = diff_of(a, b, &eq);
        char pa[600], pd[600], pb[600];
        snprintf(pa, sizeof pa, "%s/a.txt", dir);
        snprintf(pd, sizeof pd, "%s/d.patch", dir);
        snprintf(pb, sizeof pb, "%s/a.txt", dir);
        cr_assert(tt_write_file(pa, a, strlen(a)));
        cr_assert(tt_write_file(pd, d, strlen(d)));
        if (!eq) {
            snprintf(cmd, sizeof cmd, "patch -s --no-backup-if-mismatch a.txt d.patch");
            tt_buf err = {0};
            cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &err), 0, "patch rejected diff %d:\n%s\n%s", iter, d, err.data);
            tt_buf_free(&err);
        }
        tt_buf got = {0};
        cr_assert(tt_read_file(pb, &got));
        cr_assert_str_eq(got.data, b, "iteration %d: patch gave a different text", iter);
        tt_buf_free(&got);
        free(a);
        free(b);
        free(d);
    }
}

static tracec_pool *pool(void) { return tt_builtin_pool(); }

static bool same_meaning(const char *text, const char *proto_text, tracec_bytes *diff) {
    /* `proto_text` is encoded by protoc: an independent binary. */
    tt_buf bin = {0};
    cr_assert(tt_protoc_encode(dir, NULL, NULL, proto_text, &bin));
    tracec_pool *p = pool();
    bool equal = false;
    tracec_error err;
    tracec_status_t s = tracec_compare_text_binary(p, NULL, text, strlen(text), "expected", bin.data, bin.size,
                                                   "actual", &equal, diff, &err);
    cr_assert_eq(s, TRACEC_STATUS_SUCCESS, "%s", err.msg);
    tracec_pool_free(p);
    tt_buf_free(&bin);
    return equal;
}

Test(diff, field_order_and_packing_do_not_matter) {
    tracec_bytes d = TRACEC_BYTES_INIT;
    /* Text order differs from number order; packed=false in the schema but the same values. */
    cr_assert(same_meaning("packet { track_event { extra_counter_values: 1 extra_counter_values: 2 type: TYPE_COUNTER } "
                           "timestamp: 3 }",
                           "packet { timestamp: 3 track_event { type: TYPE_COUNTER extra_counter_values: [1, 2] } }",
                           &d));
    cr_assert_eq(d.size, 0);
}

Test(diff, packed_encoding_is_the_same_meaning) {
    /* Hand-made packed encoding of TrackEvent.extra_counter_values (field 12) vs protoc's unpacked one. */
    static const char packed[] = "\x0a\x06\x5a\x04\x62\x02\x01\x02";
    tracec_pool *p = pool();
    bool equal = false;
    tracec_error err;
    const char *text = "packet { track_event { extra_counter_values: 1 extra_counter_values: 2 } }";
    cr_assert_eq(tracec_compare_text_binary(p, NULL, text, strlen(text), "e", packed, sizeof packed - 1, "a",
                                            &equal, NULL, &err),
                 TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert(equal);
    tracec_pool_free(p);
}

Test(diff, a_real_difference_is_shown) {
    tracec_bytes d = TRACEC_BYTES_INIT;
    cr_assert(!same_meaning("packet { timestamp: 3 track_event { name: \"a\" } }",
                            "packet { timestamp: 3 track_event { name: \"b\" } }", &d));
    char *s = strndup((const char *)d.data, d.size);
    cr_assert_str_eq(s, "--- expected\n+++ actual\n@@ -1,6 +1,6 @@\n packet {\n   timestamp: 3\n"
                        "   track_event {\n-    name: \"a\"\n+    name: \"b\"\n   }\n }\n");
    free(s);
    free(d.data);
}

Test(diff, repeated_order_matters) {
    tracec_bytes d = TRACEC_BYTES_INIT;
    cr_assert(!same_meaning("packet { timestamp: 1 } packet { timestamp: 2 }",
                            "packet { timestamp: 2 } packet { timestamp: 1 }", &d));
    free(d.data);
}

Test(diff, text_errors_have_line_and_column) {
    tracec_pool *p = pool();
    bool equal = true;
    tracec_error err;
    const char *text = "packet {\n  timestamp: x\n}\n";
    tracec_status_t s = tracec_compare_text_binary(p, NULL, text, strlen(text), "want.textproto", "", 0, "a",
                                                   &equal, NULL, &err);
    cr_assert_eq(s, TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(!equal);
    cr_assert(strncmp(err.msg, "want.textproto:2:14:", 20) == 0, "%s", err.msg);
    tracec_pool_free(p);
}
