/*
 * tracec/args.h - the "args" view of a trace, as Perfetto's trace processor
 * builds it for track events.
 *
 * One row per argument of a track event: debug annotations keyed
 * `debug.<name>`, extension fields of TrackEvent keyed by their short name
 * (`.` into nested messages, `[N]` for repeated elements).  A
 * DebugAnnotation inside an extension message is flattened by its name
 * under the field's key (`my_ext.arg1`, dictionary entries `my_ext.arg2.key`).
 * `flat_key` is `key` without the `[N]` parts.  Integers, bools and
 * pointers are int values, floats and doubles real values, strings, bytes
 * and enum value names strings.  Interned debug annotation names and string
 * values are resolved per packet sequence.  Extension fields no descriptor
 * explains are counted in the stats, not silently lost.
 */
#ifndef TRACEC_ARGS_H
#define TRACEC_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/decode.h"
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tracec_arg_type {
    TRACEC_ARG_INT = 0,
    TRACEC_ARG_STRING = 1,
    TRACEC_ARG_REAL = 2
} tracec_arg_type;

typedef struct tracec_arg {
    uint64_t event;           /* track events numbered from 0 in trace order */
    const char *flat_key;     /* NUL-terminated; valid during the callback only */
    const char *key;
    tracec_arg_type type;
    int64_t int_value;        /* TRACEC_ARG_INT (unsigned values keep their bits) */
    const char *string_value; /* TRACEC_ARG_STRING: string_len bytes, may hold NULs */
    size_t string_len;
    double real_value;        /* TRACEC_ARG_REAL */
    bool is_bytes;            /* TRACEC_ARG_STRING from a `bytes` field (binary data, not text) */
} tracec_arg;

/* Receives each argument; returning false stops the walk (the call then returns ERROR). */
typedef bool (*tracec_arg_fn)(void *ctx, const tracec_arg *arg);

typedef struct tracec_args_stats {
    uint64_t packets;
    uint64_t track_events;
    uint64_t args;
    /* TrackEvent extension fields (in its extension ranges) no descriptor explains. */
    uint64_t unknown_extension_fields;
    /* Fields inside extension messages that their descriptor does not declare. */
    uint64_t unknown_nested_fields;
} tracec_args_stats;

/*
 * Walks the track events of a perfetto.protos.Trace and reports their args
 * in order.  opts->type_name must be NULL or "perfetto.protos.Trace".  With
 * opts->extension_descriptors the trace's descriptors are loaded into
 * `pool` first.  `stats` may be NULL.  CORRUPT_DATA (with the byte offset in
 * `err`) when the trace is malformed; the args before the error were reported.
 */
tracec_status_t tracec_args_visit(tracec_pool *pool, const void *trace, size_t size,
                                  const tracec_decode_options *opts, tracec_arg_fn fn, void *ctx,
                                  tracec_args_stats *stats, tracec_error *err) TRACEC_I_WARN_UNUSED;

/*
 * The same as CSV: a header `event,flat_key,key,int_value,string_value,real_value`
 * and one row per argument; empty cells for the columns that do not apply.
 * Every row is valid UTF-8: `bytes` values, and keys or strings that are not
 * valid UTF-8 or hold a NUL, are written C-escaped as `tracec decode` prints
 * them (\n \r \t \" \' \\, \ooo octal for other bytes outside 0x20..0x7e).
 * Cells holding a comma, a quote or a line break are quoted per RFC 4180.
 */
tracec_status_t tracec_args_csv(tracec_pool *pool, const void *trace, size_t size,
                                const tracec_decode_options *opts, tracec_write_fn write,
                                void *write_ctx, tracec_args_stats *stats, tracec_error *err) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_ARGS_H */
