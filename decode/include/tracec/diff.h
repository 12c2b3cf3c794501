/*
 * tracec/diff.h - comparing messages by meaning, and line diffs.
 *
 * Two encodings mean the same when their decoded text (tracec/decode.h,
 * which normalizes field order, packed/unpacked repeated fields, repeated
 * singular fields and oneofs as protobuf parsing does) is the same.  A
 * textproto is compared with a binary message by encoding it first.
 */
#ifndef TRACEC_DIFF_H
#define TRACEC_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "tracec/decode.h"
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Line diff of two texts.  Returns true when they are equal; otherwise
 * appends a unified diff (`--- a_label`, `+++ b_label`, hunks with 3 lines
 * of context) to `out`.  Very large, very different inputs fall back to a
 * coarser (but still correct) diff.
 */
bool tracec_diff_lines(const char *a, size_t alen, const char *b, size_t blen, const char *a_label,
                       const char *b_label, tracec_bytes *out);

/*
 * Compares the textproto `expected` (`expected_len` bytes, named
 * `expected_name` in errors) with the binary message `actual` of the same
 * type (NULL: perfetto.protos.Trace), by meaning.  ExtensionDescriptor
 * packets of `actual` are loaded into `pool` first, so the text may use
 * extensions only the trace describes.  *equal receives the answer; when
 * they differ and `diff` is not NULL, a unified diff of the two decoded
 * texts is appended to it.  Returns CORRUPT_DATA when the text does not
 * parse or `actual` is malformed (`err` says where; `diff` then shows the
 * decoded prefix), INVALID_ARGUMENT for an unknown type.
 */
tracec_status_t tracec_compare_text_binary(tracec_pool *pool, const char *type_name,
                                           const char *expected, size_t expected_len,
                                           const char *expected_name, const void *actual,
                                           size_t actual_size, const char *actual_name,
                                           bool *equal, tracec_bytes *diff, tracec_error *err) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_DIFF_H */
