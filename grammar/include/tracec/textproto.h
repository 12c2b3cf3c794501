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
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frees a tracec_bytes (tracec/types.h) and leaves it empty. */
void tracec_bytes_free(tracec_bytes *b);

/*
 * Called when a message value given to a field of the root message ends
 * (each `packet { ... }` of a perfetto.protos.Trace), with the field number
 * and the message's encoded bytes (valid during the call).  It may add to
 * the pool descriptors that the rest of the text uses: the parse looks
 * names up as it goes (tracec_text_encode_trace() in tracec/decode.h loads
 * ExtensionDescriptor packets this way).  Returning false stops the parse
 * with an error at the message's closing brace; `msg` (NUL-terminated,
 * `msg_cap` bytes) then says why.
 */
typedef bool (*tracec_text_top_fn)(void *ctx, uint32_t number, const uint8_t *data, size_t size, char *msg,
                                   size_t msg_cap);

typedef struct tracec_text_options {
    const char *file_name; /* used in error messages; "<stdin>" for standard input */
    int max_depth;         /* message nesting limit (default 100) */
    /*
     * Accept `string` values that are not valid UTF-8 (written as given, like
     * `bytes`), so that any decoded trace re-encodes; the spec, and the
     * default, reject them.  (Added last: older initialisers leave it false.)
     */
    bool allow_invalid_utf8;
    tracec_text_top_fn on_top_message; /* NULL: none (added last, as above) */
    void *on_top_message_ctx;
    /*
     * The text is followed by two NUL bytes (text[len], text[len + 1]) and
     * may be written during the call: the scanner then works in it instead
     * of a copy (saves a copy of the input).  It holds the same bytes again
     * when the call returns.  Ignored when those two bytes are not NUL.
     */
    bool text_in_place;
} tracec_text_options;
#define TRACEC_TEXT_OPTIONS_INIT {"<input>", 100, false, NULL, NULL, false}

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
                                   tracec_error *err) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TEXTPROTO_H */
