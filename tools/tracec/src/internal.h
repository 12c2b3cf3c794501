/*
 * internal.h - shared internals of libtracec_decode: the wire reader, the
 * buffered text output, and the schema cache (a fast, number-indexed view of
 * a tracec_pool's messages, fields and enums).
 *
 * Nothing here is installed; names use the tc_ prefix and have hidden
 * visibility.
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

enum {
    TC_WT_VARINT = 0,
    TC_WT_FIXED64 = 1,
    TC_WT_LEN = 2,
    TC_WT_SGROUP = 3,
    TC_WT_EGROUP = 4,
    TC_WT_FIXED32 = 5
};

/* Results of the varint reader. */
enum { TC_VARINT_OK = 0, TC_VARINT_TRUNCATED = 1, TC_VARINT_TOO_LONG = 2 };

int tc_read_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v);

/* Reads a varint at *pp (never past `end`); advances *pp on success. */
static inline int tc_read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *v = *p;
        *pp = p + 1;
        return TC_VARINT_OK;
    }
    return tc_read_varint_slow(pp, end, v);
}

static inline uint32_t tc_load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tc_load64(const uint8_t *p) {
    return (uint64_t)tc_load32(p) | (uint64_t)tc_load32(p + 4) << 32;
}

/* Wire type a field of `type` is written with (packed repeated fields aside). */
int tc_wire_type_of(tracec_field_type type);

/*
 * Skips the value of a field with wire type `wt` at *pp.  Groups are skipped
 * up to their matching end tag, at most `depth_left` levels deep.  Returns
 * NULL on success or a static description of the problem (and *pp is left at
 * the offending byte).
 */
const char *tc_skip_value(const uint8_t **pp, const uint8_t *end, uint32_t number, int wt,
                          int depth_left, const uint8_t **group_end_tag);

/* Gunzips (gzip or zlib) `in`; the result is malloc'd.  Returns NULL on success. */
const char *tc_gunzip(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size);

/* ---- Text output -------------------------------------------------------- */

typedef struct tc_out {
    char *buf;
    size_t len, cap;
    tracec_write_fn write;
    void *ctx;
    bool failed;
} tc_out;

void tc_out_init(tc_out *o, tracec_write_fn write, void *ctx);
bool tc_out_flush(tc_out *o);
void tc_out_free(tc_out *o); /* does not flush */
void tc_out_reserve_slow(tc_out *o, size_t n);

/* Makes room for `n` more bytes at o->buf + o->len. */
static inline char *tc_out_reserve(tc_out *o, size_t n) {
    if (o->cap - o->len < n) tc_out_reserve_slow(o, n);
    return o->buf + o->len;
}
static inline void tc_out_put(tc_out *o, const void *data, size_t n) {
    char *p = tc_out_reserve(o, n);
    memcpy(p, data, n);
    o->len += n;
}
static inline void tc_out_puts(tc_out *o, const char *s) { tc_out_put(o, s, strlen(s)); }
static inline void tc_out_putc(tc_out *o, char c) {
    char *p = tc_out_reserve(o, 1);
    *p = c;
    o->len++;
}
void tc_out_indent(tc_out *o, int level); /* 2 spaces a level */
void tc_out_u64(tc_out *o, uint64_t v);
void tc_out_i64(tc_out *o, int64_t v);
void tc_out_double(tc_out *o, double v); /* as protoc prints doubles */
void tc_out_float(tc_out *o, float v);   /* as protoc prints floats */
void tc_out_hex(tc_out *o, uint64_t v, int digits); /* 0x + `digits` lower-case hex digits */
/* Bytes escaped as protoc's text printer does (C escapes, octal for the rest), without quotes. */
void tc_out_escaped(tc_out *o, const uint8_t *s, size_t n);

/* Write callbacks for tc_out. */
bool tc_write_bytes(void *ctx, const void *data, size_t size); /* ctx: tracec_bytes* */

/* Formats a double as protoc does (shortest of %.15g / %.17g that round-trips). */
int tc_format_double(char *buf, size_t cap, double v);

/* Appends to a tracec_bytes; false when out of memory. */
bool tc_bytes_append(tracec_bytes *b, const void *data, size_t n);

/* ---- Schema cache ------------------------------------------------------- */

typedef struct tc_enum {
    const tracec_enumdef *def;
    size_t n;
    int32_t *numbers;     /* sorted, unique (first declared name kept) */
    const char **names;
    uint32_t *name_lens;
} tc_enum;

struct tc_msg;

typedef struct tc_field {
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
    struct tc_msg *subinfo; /* resolved lazily: use tc_field_sub() */
    tc_enum *en;
} tc_field;

typedef struct tc_ext_slot {
    uint32_t number; /* 0 = empty slot */
    tc_field *f;     /* NULL: the pool has no such extension */
} tc_ext_slot;

typedef struct tc_msg {
    const tracec_msgdef *def;
    const char *full_name;
    bool proto3;
    bool map_entry; /* key and value always print */
    size_t nfields;
    tc_field *fields;     /* sorted by number */
    uint32_t ndense;      /* dense[n] for n < ndense */
    tc_field **dense;
    size_t noneofs;
    tc_ext_slot *ext;     /* open addressing, cap a power of two */
    size_t ext_cap, ext_n;
} tc_msg;

typedef struct tc_schema tc_schema;

tc_schema *tc_schema_new(const tracec_pool *pool);
void tc_schema_free(tc_schema *s);
const tracec_pool *tc_schema_pool(const tc_schema *s);
/* The cache entry of `m` (created on first use); NULL only when out of memory. */
tc_msg *tc_schema_msg(tc_schema *s, const tracec_msgdef *m);
/* The field (or extension) numbered `number` of `mi`, or NULL. */
tc_field *tc_msg_ext_lookup(tc_schema *s, tc_msg *mi, uint32_t number);
static inline tc_field *tc_msg_field(tc_schema *s, tc_msg *mi, uint32_t number) {
    if (number < mi->ndense) {
        tc_field *f = mi->dense[number];
        if (f) return f;
    }
    return tc_msg_ext_lookup(s, mi, number);
}
static inline tc_msg *tc_field_sub(tc_schema *s, tc_field *f) {
    if (!f->subinfo && f->sub) f->subinfo = tc_schema_msg(s, f->sub);
    return f->subinfo;
}
/* Name of an enum value, NULL if unknown; *len receives its length. */
const char *tc_enum_name(const tc_enum *e, int32_t number, uint32_t *len);

/* ---- Decoding helpers shared by decode / args / compare ------------------ */

/* Scans a trace (or packet) for ExtensionDescriptor packets; see tracec_load_extension_descriptors. */

/* Formats an error with the input name and byte offset into err (first error wins). */
void tc_set_error(tracec_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TRACEC_DECODE_INTERNAL_H */
