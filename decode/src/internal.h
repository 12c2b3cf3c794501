/*
 * internal.h - shared internals of libtracec_decode: the wire reader, the
 * buffered text output, and the schema cache (a fast, number-indexed view of
 * a tracec_pool's messages, fields and enums).
 *
 * Nothing here is installed; these cross-file names use the tracec_i_ prefix
 * and have hidden visibility (file-local ones are short and static: see
 * docs/naming.md).
 */
#ifndef TRACEC_DECODE_INTERNAL_H
#define TRACEC_DECODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracec/decode.h"
#include "tracec/descpool.h"

/* ---- Wire format -------------------------------------------------------- */

#include "tracec/wire.h" /* wire types, varint and fixed-width reads, the field reader */

/*
 * Fields are read with tracec/wire.h's tracec_wire_read_field: its errors
 * (*what, and *at the offending byte) are the ones `tracec decode` documents.
 */

/*
 * Reads the next element of a packed run of wire type `wt` (varint, fixed32,
 * fixed64) at *pp into *v.  Returns NULL, or what is wrong (*pp not moved).
 */
static inline const char *tracec_i_packed_next(const uint8_t **pp, const uint8_t *end, int wt, uint64_t *v) {
    if (wt == TRACEC_WIRE_VARINT) {
        tracec_varint_result vr = tracec_wire_read_varint(pp, end, v);
        if (vr == TRACEC_VARINT_OK) return NULL;
        return vr == TRACEC_VARINT_TRUNCATED ? "truncated varint in packed field"
                                             : "varint longer than 10 bytes in packed field";
    }
    size_t w = wt == TRACEC_WIRE_FIXED64 ? 8 : 4;
    if ((size_t)(end - *pp) < w) return "packed field length is not a multiple of the element size";
    *v = w == 8 ? tracec_wire_load64(*pp) : tracec_wire_load32(*pp);
    *pp += w;
    return NULL;
}

/* Whether `len` bytes parse as a run of fields (protoc's test for an unknown LEN field), groups `budget` deep. */
bool tracec_i_wire_parses(const uint8_t *p, size_t len, int budget);

/* Whether a packed payload splits into whole elements of wire type `wt` (varint, fixed32, fixed64). */
bool tracec_i_packed_parses(int wt, const uint8_t *p, size_t len);

/* Gunzips (gzip or zlib) `in`; the result is malloc'd.  Returns NULL on success. */
const char *tracec_i_gunzip(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size);

/* ---- Text output -------------------------------------------------------- */

typedef struct tracec_i_out {
    char *buf;
    size_t len, cap;
    tracec_write_fn write;
    void *ctx;
    bool failed;
} tracec_i_out;

void tracec_i_out_init(tracec_i_out *o, tracec_write_fn write, void *ctx);
bool tracec_i_out_flush(tracec_i_out *o);
void tracec_i_out_free(tracec_i_out *o); /* does not flush */
void tracec_i_out_reserve_slow(tracec_i_out *o, size_t n);

/* Makes room for `n` more bytes at o->buf + o->len. */
static inline char *tracec_i_out_reserve(tracec_i_out *o, size_t n) {
    if (o->cap - o->len < n) tracec_i_out_reserve_slow(o, n);
    return o->buf + o->len;
}
static inline void tracec_i_out_put(tracec_i_out *o, const void *data, size_t n) {
    char *p = tracec_i_out_reserve(o, n);
    memcpy(p, data, n);
    o->len += n;
}
static inline void tracec_i_out_puts(tracec_i_out *o, const char *s) { tracec_i_out_put(o, s, strlen(s)); }
static inline void tracec_i_out_putc(tracec_i_out *o, char c) {
    char *p = tracec_i_out_reserve(o, 1);
    *p = c;
    o->len++;
}
void tracec_i_out_indent(tracec_i_out *o, int level); /* 2 spaces a level */
void tracec_i_out_u64(tracec_i_out *o, uint64_t v);
void tracec_i_out_i64(tracec_i_out *o, int64_t v);
void tracec_i_out_double(tracec_i_out *o, double v); /* as protoc prints doubles */
void tracec_i_out_float(tracec_i_out *o, float v);   /* as protoc prints floats */
void tracec_i_out_hex(tracec_i_out *o, uint64_t v, int digits); /* 0x + `digits` lower-case hex digits */
/* Bytes escaped as protoc's text printer does (C escapes, octal for the rest), without quotes. */
void tracec_i_out_escaped(tracec_i_out *o, const uint8_t *s, size_t n);
/* The same into dst (room for 4 * n bytes); returns the length written. */
size_t tracec_i_escape(char *dst, const uint8_t *s, size_t n);
/* Whether s is valid UTF-8 (no overlong forms, surrogates or values above U+10FFFF) without a NUL. */
bool tracec_i_utf8_text(const uint8_t *s, size_t n);

/* Write callbacks for tracec_i_out. */
bool tracec_i_write_bytes(void *ctx, const void *data, size_t size); /* ctx: tracec_bytes* */

/* Formats a double as protoc does (shortest of %.15g / %.17g that round-trips). */
int tracec_i_format_double(char *buf, size_t cap, double v);

/* Appends to a tracec_bytes; false when out of memory. */
bool tracec_i_bytes_append(tracec_bytes *b, const void *data, size_t n);

/* ---- Schema cache ------------------------------------------------------- */

typedef struct tracec_i_enum {
    const tracec_enumdef *def;
    size_t n;
    int32_t *numbers;     /* sorted, unique (first declared name kept) */
    const char **names;
    uint32_t *name_lens;
} tracec_i_enum;

struct tracec_i_msg;

typedef struct tracec_i_field {
    const tracec_fielddef *def;
    uint32_t number;
    uint8_t type;  /* tracec_field_type */
    uint8_t wt;    /* expected wire type */
    bool repeated;
    bool packable; /* repeated scalar number: may come packed */
    bool is_ext;
    bool is_msg;   /* message or group */
    bool is_group;
    bool closed_enum; /* enum whose unknown values go to the unknown fields */
    bool implicit;    /* proto3 scalar without presence: the default value is not printed */
    bool is_map;      /* map field: entries print sorted by key */
    int oneof;        /* -1 if none */
    const char *pname; /* printed name: "name", "[full.ext]", or the group's type name */
    uint32_t pname_len;
    const char *short_name;
    const tracec_msgdef *sub;
    struct tracec_i_msg *subinfo; /* resolved lazily: use tracec_i_field_sub() */
    tracec_i_enum *en;
} tracec_i_field;

typedef struct tracec_i_ext_slot {
    uint32_t number; /* 0 = empty slot */
    tracec_i_field *f;     /* NULL: the pool has no such extension */
} tracec_i_ext_slot;

typedef struct tracec_i_msg {
    const tracec_msgdef *def;
    const char *full_name;
    bool proto3;
    bool map_entry; /* key and value always print */
    size_t nfields;
    tracec_i_field *fields;     /* sorted by number */
    uint32_t ndense;      /* dense[n] for n < ndense */
    tracec_i_field **dense;
    size_t noneofs;
    tracec_i_ext_slot *ext;     /* open addressing, cap a power of two */
    size_t ext_cap, ext_n;
} tracec_i_msg;

typedef struct tracec_i_schema tracec_i_schema;

tracec_i_schema *tracec_i_schema_new(const tracec_pool *pool);
void tracec_i_schema_free(tracec_i_schema *s);
const tracec_pool *tracec_i_schema_pool(const tracec_i_schema *s);
/* The cache entry of `m` (created on first use); NULL only when out of memory. */
tracec_i_msg *tracec_i_schema_msg(tracec_i_schema *s, const tracec_msgdef *m);
/* The field (or extension) numbered `number` of `mi`, or NULL. */
tracec_i_field *tracec_i_msg_ext_lookup(tracec_i_schema *s, tracec_i_msg *mi, uint32_t number);
static inline tracec_i_field *tracec_i_msg_field(tracec_i_schema *s, tracec_i_msg *mi, uint32_t number) {
    if (number < mi->ndense) {
        tracec_i_field *f = mi->dense[number];
        if (f) return f;
    }
    return tracec_i_msg_ext_lookup(s, mi, number);
}
static inline tracec_i_msg *tracec_i_field_sub(tracec_i_schema *s, tracec_i_field *f) {
    if (!f->subinfo && f->sub) f->subinfo = tracec_i_schema_msg(s, f->sub);
    return f->subinfo;
}
/* Name of an enum value, NULL if unknown; *len receives its length. */
const char *tracec_i_enum_name(const tracec_i_enum *e, int32_t number, uint32_t *len);

/* ---- Decoding helpers shared by decode / args / compare ------------------ */

/* Scans a trace (or packet) for ExtensionDescriptor packets; see tracec_load_extension_descriptors. */

/* Formats an error with the input name and byte offset into err (first error wins). */
void tracec_i_set_error(tracec_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * tracec_compare_text_binary() with both decoded texts passed through
 * `filter` (rewrites the text in place; `actual` tells the sides apart;
 * false when out of memory) before the diff; filter NULL: none.  match.c's filters keep some packets and drop
 * some fields.
 */
typedef bool (*tracec_i_text_filter)(const void *ctx, bool actual, tracec_bytes *text);
tracec_status_t tracec_i_compare_filtered(tracec_pool *pool, const char *type_name, const char *expected,
                                          size_t expected_len, const char *expected_name, const void *actual,
                                          size_t actual_size, const char *actual_name, tracec_i_text_filter filter,
                                          const void *filter_ctx, bool *equal, tracec_bytes *diff,
                                          tracec_error *err);
/* The filter of a tracec_match (ctx): its `ignore` fields dropped; on the actual side, packets without its `with` fields. */
bool tracec_i_match_filter(const void *ctx, bool actual, tracec_bytes *text);

#endif /* TRACEC_DECODE_INTERNAL_H */
