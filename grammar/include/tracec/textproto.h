/*
 * tracec/textproto.h - protobuf text format to binary, given descriptors.
 *
 * The parser is a reentrant flex scanner and a pure bison parser (symbol
 * prefix tracec_tp_, no yy* symbols exported).  It follows the protobuf Text
 * Format Language Specification; docs/textproto.md lists where that differs
 * from protoc 3.21's own parser.
 *
 * Errors are reported as
 *     FILE:LINE:COL: message
 *      <the offending line>
 *      <caret under the column>
 * with 1-based lines and byte columns; an unknown field or extension name
 * gets a "did you mean ...?" suggestion.
 */
#ifndef TRACEC_TEXTPROTO_H
#define TRACEC_TEXTPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/descpool.h"
#include "tracec/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable byte string owned by the caller; free with tracec_bytes_free. */
typedef struct tracec_bytes {
    uint8_t *data;
    size_t size;
    size_t cap;
} tracec_bytes;
#define TRACEC_BYTES_INIT {NULL, 0, 0}
void tracec_bytes_free(tracec_bytes *b);

typedef struct tracec_text_options {
    const char *file_name; /* used in error messages; "<stdin>" for standard input */
    int max_depth;         /* message nesting limit (default 100) */
    /*
     * Accept `string` values that are not valid UTF-8 (written as given, like
     * `bytes`), so that any decoded trace re-encodes; the spec, and the
     * default, reject them.  (Added last: older initialisers leave it false.)
     */
    bool allow_invalid_utf8;
} tracec_text_options;
#define TRACEC_TEXT_OPTIONS_INIT {"<input>", 100, false}

/*
 * Parses `text` (`len` bytes, need not be NUL-terminated) as a message of
 * type `type_name` (full name, e.g. "perfetto.protos.Trace") and appends its
 * binary encoding to `out`.  On error nothing is appended, `err` holds the
 * message, and the status is INVALID_ARGUMENT (bad type name) or
 * CORRUPT_DATA (bad text).
 */
tracec_status_t tracec_text_encode(const tracec_pool *pool, const char *type_name,
                                   const char *text, size_t len,
                                   const tracec_text_options *opts, tracec_bytes *out,
                                   tracec_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TEXTPROTO_H */
