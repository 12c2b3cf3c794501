/*
 * tracec/decode.h - protobuf binary to text format, given descriptors.
 *
 * The decoder prints a message the way `protoc --decode` does: fields in
 * field-number order, 2-space indentation, `name: value` and `name {`,
 * strings and bytes C-escaped (octal for non-printable bytes), extensions
 * as `[full.name]: ...`, unknown fields by number after the known ones.
 * It also applies protobuf's parsing rules, so its output is the *meaning*
 * of the input: a singular field given twice keeps the last value (messages
 * merge), a oneof keeps its last member, packed and unpacked repeated fields
 * print alike, and an unknown value of a closed (proto2) enum moves to the
 * unknown fields.  For canonical input (protoc's own output) feeding the
 * text back to an encoder gives the same bytes.
 *
 * Input is untrusted: every read is bounds-checked, nesting is limited, and
 * a malformed input is reported with its byte offset.  What was decoded
 * before the error is still written (with braces closed), then the call
 * returns CORRUPT_DATA.
 */
#ifndef TRACEC_DECODE_H
#define TRACEC_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/descpool.h"
#include "tracec/status.h"
#include "tracec/protoc.h"
#include "tracec/textproto.h"
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_decode_options {
    const char *type_name;      /* root message; NULL means "perfetto.protos.Trace" */
    const char *file_name;      /* names the input in errors; NULL means "<input>" */
    int max_depth;              /* message nesting limit; <= 0 means 100; above TRACEC_DECODE_MAX_DEPTH_LIMIT
                                   the call fails with INVALID_ARGUMENT */
    bool extension_descriptors; /* first load ExtensionDescriptor packets found in the input */
    /*
     * Leave unknown fields out of the text (protobuf's print_unknown_fields =
     * false): fields the schema does not declare, extensions no descriptor
     * explains, and closed-enum values the enum does not declare.  (Added
     * last: older initialisers leave it false, which prints them.)
     */
    bool hide_unknown;
} tracec_decode_options;
#define TRACEC_DECODE_OPTIONS_INIT {"perfetto.protos.Trace", "<input>", 100, true, false}

#define TRACEC_DEFAULT_TYPE "perfetto.protos.Trace"

/*
 * The largest max_depth the decoder and the args walker accept.  They
 * recurse once per message level, using about 0.6 KiB (decode) and 0.9 KiB
 * (args) of stack per level in an optimized build and about 2 KiB under
 * AddressSanitizer (docs/limits.md), so this limit fits in a 1 MiB thread
 * stack unsanitized and in a 4 MiB one under ASan.
 */
#define TRACEC_DECODE_MAX_DEPTH_LIMIT 1000

/*
 * Decodes `size` bytes at `data` as a message of opts->type_name and writes
 * its text form through `write`.  With opts->extension_descriptors the
 * trace's ExtensionDescriptor packets are added to `pool` first (so `pool`
 * is modified).  Returns SUCCESS; INVALID_ARGUMENT if the type is unknown;
 * CORRUPT_DATA if the input is malformed (the decoded prefix was written,
 * `err` says what and at which byte offset); IO_ERROR if `write` failed;
 * OUT_OF_MEMORY.  `opts` may be NULL for the defaults.
 */
tracec_status_t tracec_decode_text(tracec_pool *pool, const void *data, size_t size,
                                   const tracec_decode_options *opts, tracec_write_fn write,
                                   void *write_ctx, tracec_error *err) TRACEC_I_WARN_UNUSED;

/* Same, appending the text to `out` (owned by the caller). */
tracec_status_t tracec_decode_text_bytes(tracec_pool *pool, const void *data, size_t size,
                                         const tracec_decode_options *opts, tracec_bytes *out,
                                         tracec_error *err) TRACEC_I_WARN_UNUSED;

/*
 * Adds to `pool` the descriptor sets carried by ExtensionDescriptor packets
 * (TracePacket field 72, `extension_set` or `extension_set_gzip`) of a
 * trace.  `type_name` is the input's type: "perfetto.protos.Trace" (or
 * NULL) or "perfetto.protos.TracePacket"; other types carry none.  Malformed
 * framing is skipped silently (the decoder reports it).  *n_sets (may be
 * NULL) receives how many sets were added.  CORRUPT_DATA if a set could not
 * be read (bad gzip, not a FileDescriptorSet): the others are still added
 * and `err` names the packet.
 */
tracec_status_t tracec_load_extension_descriptors(tracec_pool *pool, const void *data,
                                                  size_t size, const char *type_name,
                                                  size_t *n_sets, tracec_error *err);

/*
 * tracec_text_encode() for text that carries its own descriptors: when the
 * root type is perfetto.protos.Trace, the ExtensionDescriptor packets of the
 * text (`packet { extension_descriptor { extension_set { ... } } }`, as
 * `tracec decode` prints them) are added to `pool` as soon as each packet
 * ends, so later packets can name the extensions they describe
 * (`[my_app.MyEvent.custom_string]`).  So `tracec decode T | tracec encode`
 * gives back T's bytes for canonical T with custom fields.  A set that is not
 * a FileDescriptorSet is an error at that packet.  opts->on_top_message must
 * be NULL (it is used).  Same returns as tracec_text_encode().
 */
tracec_status_t tracec_text_encode_trace(tracec_pool *pool, const char *type_name, const char *text,
                                         size_t len, const tracec_text_options *opts, tracec_bytes *out,
                                         tracec_error *err) TRACEC_I_WARN_UNUSED;

/* Fills `opts` with the defaults (same as TRACEC_DECODE_OPTIONS_INIT). */
void tracec_decode_options_init(tracec_decode_options *opts);

/* A write function for FILE* contexts (fwrite). */
bool tracec_write_file(void *file, const void *data, size_t size);
/* A write function appending to a tracec_bytes context. */
bool tracec_write_bytes(void *bytes, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_DECODE_H */
