/*
 * compare.c - a textproto against a binary message, by meaning.
 *
 * Both sides are brought to the decoder's normalized text: the textproto is
 * encoded (tracec_text_encode) and decoded again, the binary is decoded.
 * Equal texts mean equal messages; otherwise the line diff of the two texts
 * is what a reader wants to see.
 */
#include <stdlib.h>

#include "internal.h"
#include "tracec/diff.h"

tracec_status_t tracec_compare_text_binary(tracec_pool *pool, const char *type_name,
                                           const char *expected, size_t expected_len,
                                           const char *expected_name, const void *actual,
                                           size_t actual_size, const char *actual_name,
                                           bool *equal, tracec_bytes *diff, tracec_error *err) {
    return tracec_i_compare_filtered(pool, type_name, expected, expected_len, expected_name, actual, actual_size,
                                     actual_name, NULL, NULL, equal, diff, err);
}

tracec_status_t tracec_i_compare_filtered(tracec_pool *pool, const char *type_name, const char *expected,
                                          size_t expected_len, const char *expected_name, const void *actual,
                                          size_t actual_size, const char *actual_name, tracec_i_text_filter filter,
                                          const void *filter_ctx, bool *equal, tracec_bytes *diff,
                                          tracec_error *err) {
    if (!type_name) type_name = TRACEC_DEFAULT_TYPE;
    if (!expected_name) expected_name = "expected";
    if (!actual_name) actual_name = "actual";
    if (equal) *equal = false;
    if (err) err->msg[0] = 0;
    if (!pool || (!expected && expected_len) || (!actual && actual_size)) {
        tracec_i_set_error(err, "tracec_compare_text_binary: invalid argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    (void)tracec_load_extension_descriptors(pool, actual, actual_size, type_name, NULL, NULL);

    tracec_bytes want_bin = TRACEC_BYTES_INIT, want = TRACEC_BYTES_INIT, got = TRACEC_BYTES_INIT;
    tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
    to.file_name = expected_name;
    tracec_status_t s = tracec_text_encode_trace(pool, type_name, expected ? expected : "", expected_len,
                                           &to, &want_bin, err);
    if (s != TRACEC_STATUS_SUCCESS) {
        tracec_bytes_free(&want_bin);
        return s;
    }
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.type_name = type_name;
    o.extension_descriptors = false;
    o.file_name = expected_name;
    s = tracec_decode_text_bytes(pool, want_bin.data, want_bin.size, &o, &want, err);
    tracec_bytes_free(&want_bin);
    if (s == TRACEC_STATUS_SUCCESS) {
        o.file_name = actual_name;
        s = tracec_decode_text_bytes(pool, actual, actual_size, &o, &got, err);
    }
    if (filter && (s == TRACEC_STATUS_SUCCESS || s == TRACEC_STATUS_CORRUPT_DATA) &&
        (!filter(filter_ctx, false, &want) || !filter(filter_ctx, true, &got))) {
        tracec_i_set_error(err, "out of memory");
        s = TRACEC_STATUS_OUT_OF_MEMORY;
    }
    if (s == TRACEC_STATUS_SUCCESS || s == TRACEC_STATUS_CORRUPT_DATA) {
        bool eq = tracec_diff_lines(want.size ? (const char *)want.data : "", want.size,
                                    got.size ? (const char *)got.data : "", got.size, expected_name,
                                    actual_name, diff);
        if (equal) *equal = eq && s == TRACEC_STATUS_SUCCESS;
    }
    free(want.data);
    free(got.data);
    return s;
}
