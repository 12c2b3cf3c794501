/*
 * tracec/wire.h - the protobuf wire format, once: wire types, tags, varint
 * sizes, and a bounds-checked field reader.
 *
 * Header-only and dependency-free (libc's <stdint.h>, <stddef.h>).  The
 * writers (tracec/writer.h), the text encoder, the decoder, `tracec args` and
 * the extension-descriptor reader all use these definitions, so there is one
 * enum of wire types and one varint reader in the tree.
 *
 * Reading: every function treats its input as hostile.  A reader never looks
 * past `end`, never loops without consuming input, and reports what is wrong
 * and where:
 *
 *     tracec_wire_reader r;
 *     tracec_wire_field f;
 *     int rc;
 *     tracec_wire_reader_init(&r, data, size);
 *     while ((rc = tracec_wire_next(&r, &f)) > 0) {
 *         if (f.number == 1 && f.type == TRACEC_WIRE_LEN) use(f.data, f.size);
 *     }
 *     if (rc < 0) report(r.error, r.error_at - data);
 *
 * tracec_wire_read_field is the same reader without the cursor struct.
 */
#ifndef TRACEC_WIRE_H
#define TRACEC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Wire types. */
enum {
    TRACEC_WIRE_VARINT = 0,
    TRACEC_WIRE_FIXED64 = 1,
    TRACEC_WIRE_LEN = 2,
    TRACEC_WIRE_SGROUP = 3,
    TRACEC_WIRE_EGROUP = 4,
    TRACEC_WIRE_FIXED32 = 5
};

/* The tag (key) of field `num` with wire type `wt`, as an integer constant. */
#define TRACEC_TAG(num, wt) ((uint32_t)(((uint32_t)(num) << 3) | (uint32_t)(wt)))

/* Largest field number, encoded tag (field numbers up to 2^29 - 1) and varint. */
#define TRACEC_MAX_FIELD_NUMBER 536870911u
#define TRACEC_MAX_TAG_SIZE 5u
#define TRACEC_MAX_VARINT_SIZE 10u

/* How deep a reader follows groups nested in groups, by default (one stack frame a level). */
#define TRACEC_WIRE_MAX_GROUP_DEPTH 100

/* Encoded size of a varint. */
static inline size_t tracec_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/*
 * The wire type a field is written with, from its descriptor type (the
 * numbers of FieldDescriptorProto.Type: 1 double, 2 float, ... 18 sint64);
 * packed repeated fields aside (they are TRACEC_WIRE_LEN).
 */
static inline int tracec_wire_type_of(int descriptor_type) {
    switch (descriptor_type) {
    case 1:  /* double */
    case 6:  /* fixed64 */
    case 16: /* sfixed64 */
        return TRACEC_WIRE_FIXED64;
    case 2:  /* float */
    case 7:  /* fixed32 */
    case 15: /* sfixed32 */
        return TRACEC_WIRE_FIXED32;
    case 9:  /* string */
    case 11: /* message */
    case 12: /* bytes */
        return TRACEC_WIRE_LEN;
    case 10: /* group */
        return TRACEC_WIRE_SGROUP;
    default:
        return TRACEC_WIRE_VARINT;
    }
}

/* Results of tracec_wire_read_varint. */
typedef enum {
    TRACEC_VARINT_OK = 0,
    TRACEC_VARINT_TRUNCATED = 1, /* input ended inside the varint */
    TRACEC_VARINT_TOO_LONG = 2   /* more than 10 bytes */
} tracec_varint_result;

/*
 * Reads the varint at *pp, never past `end`; advances *pp on success only.
 * The one-byte case is inline; longer ones loop at most ten times.
 */
static inline tracec_varint_result tracec_wire_read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80u) {
        *v = *p;
        *pp = p + 1;
        return TRACEC_VARINT_OK;
    }
    uint64_t r = 0;
    for (unsigned i = 0; i < TRACEC_MAX_VARINT_SIZE; i++) {
        if (p >= end) return TRACEC_VARINT_TRUNCATED;
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7fu) << (7 * i);
        if (b < 0x80u) {
            *v = r;
            *pp = p;
            return TRACEC_VARINT_OK;
        }
    }
    return TRACEC_VARINT_TOO_LONG;
}

/* Little-endian loads of fixed32 / fixed64 values. */
static inline uint32_t tracec_wire_load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tracec_wire_load64(const uint8_t *p) {
    return (uint64_t)tracec_wire_load32(p) | (uint64_t)tracec_wire_load32(p + 4) << 32;
}

/* One field as read by tracec_wire_next. */
typedef struct tracec_wire_field {
    uint32_t number;      /* 1 .. TRACEC_MAX_FIELD_NUMBER */
    uint8_t type;         /* TRACEC_WIRE_* */
    uint64_t value;       /* VARINT: the value; FIXED32/FIXED64: the raw little-endian bits */
    const uint8_t *data;  /* LEN: the payload; SGROUP: the group's body (after its start tag) */
    size_t size;          /* LEN / SGROUP: bytes at data (SGROUP: up to, not including, the end tag) */
    const uint8_t *start; /* the field's first byte (its tag) */
    const uint8_t *end;   /* one past the field's last byte */
} tracec_wire_field;

/*
 * The one field reader: reads the field at *pp, never past `end`.  Returns 1
 * (a field in *f), 0 (the end of the body) or -1 (malformed: *what is a
 * static English phrase, *at the offending byte: the tag, the value, the
 * length, or a byte inside a group; *pp is not moved, so reading again fails
 * the same way).  A group is followed to its end tag, at most `group_depth`
 * levels deep (TRACEC_WIRE_MAX_GROUP_DEPTH is a sane default; each level is
 * one stack frame); f->data / f->size are then its body.  An end-group tag is
 * returned as a field of type TRACEC_WIRE_EGROUP, for a caller that reads a
 * group's body itself.  The decoder, `tracec args` and the readers of
 * extension descriptors all use it.
 */
static inline int tracec_wire_read_field(const uint8_t **pp, const uint8_t *end, int group_depth,
                                         tracec_wire_field *f, const char **what, const uint8_t **at);

/* The group case of tracec_wire_read_field: *pp is just past the start tag of group f->number. */
static inline int tracec_wire_read_group(const uint8_t **pp, const uint8_t *end, int group_depth,
                                         tracec_wire_field *f, const char **what, const uint8_t **at) {
    const uint8_t *p = *pp, *body = p;
    if (group_depth <= 0) {
        *what = "groups nested deeper than the limit";
        *at = p;
        return -1;
    }
    for (;;) {
        tracec_wire_field in;
        int k = tracec_wire_read_field(&p, end, group_depth - 1, &in, what, at);
        const uint8_t *q = p;
        uint64_t t;
        /* The body ends (or ends inside a tag) before the end tag. */
        if (k == 0 || (k < 0 && *at == p && tracec_wire_read_varint(&q, end, &t) == TRACEC_VARINT_TRUNCATED)) {
            *what = "group not terminated by its end-group tag";
            *at = p;
            return -1;
        }
        if (k < 0) return -1;
        if (in.type != TRACEC_WIRE_EGROUP) continue;
        if (in.number != f->number) {
            *what = "end-group tag does not match its start-group tag";
            *at = in.start;
            return -1;
        }
        f->data = body;
        f->size = (size_t)(in.start - body);
        *pp = p;
        return 1;
    }
}

static inline int tracec_wire_read_field(const uint8_t **pp, const uint8_t *end, int group_depth,
                                         tracec_wire_field *f, const char **what, const uint8_t **at) {
    const uint8_t *p = *pp;
    if (p >= end) return 0;
    f->start = p;
    f->value = 0;
    f->data = NULL;
    f->size = 0;
    uint64_t tag;
    tracec_varint_result vr = tracec_wire_read_varint(&p, end, &tag);
    if (vr != TRACEC_VARINT_OK || tag > UINT32_MAX) {
        *what = vr == TRACEC_VARINT_TRUNCATED ? "truncated tag" : "invalid tag";
        *at = f->start;
        f->number = 0;
        f->type = 0;
        return -1;
    }
    f->number = (uint32_t)(tag >> 3);
    f->type = (uint8_t)(tag & 7u);
    if (f->number == 0) {
        *what = "invalid field number 0";
        *at = f->start;
        return -1;
    }
    switch (f->type) {
    case TRACEC_WIRE_VARINT:
        vr = tracec_wire_read_varint(&p, end, &f->value);
        if (vr != TRACEC_VARINT_OK) {
            *what = vr == TRACEC_VARINT_TRUNCATED ? "truncated varint" : "varint longer than 10 bytes";
            *at = p;
            return -1;
        }
        break;
    case TRACEC_WIRE_FIXED64:
    case TRACEC_WIRE_FIXED32: {
        int wide = f->type == TRACEC_WIRE_FIXED64;
        if ((size_t)(end - p) < (wide ? 8u : 4u)) {
            *what = wide ? "truncated fixed64 value" : "truncated fixed32 value";
            *at = p;
            return -1;
        }
        f->value = wide ? tracec_wire_load64(p) : tracec_wire_load32(p);
        p += wide ? 8 : 4;
        break;
    }
    case TRACEC_WIRE_LEN: {
        const uint8_t *lp = p;
        uint64_t n;
        vr = tracec_wire_read_varint(&p, end, &n);
        if (vr != TRACEC_VARINT_OK || n > (uint64_t)(end - p)) {
            *what = vr == TRACEC_VARINT_TRUNCATED  ? "truncated length"
                    : vr == TRACEC_VARINT_TOO_LONG ? "length varint longer than 10 bytes"
                                                   : "length runs past the end of the enclosing message";
            *at = lp;
            return -1;
        }
        f->value = n;
        f->data = p;
        f->size = (size_t)n;
        p += n;
        break;
    }
    case TRACEC_WIRE_SGROUP:
        if (tracec_wire_read_group(&p, end, group_depth, f, what, at) < 0) return -1;
        break;
    case TRACEC_WIRE_EGROUP:
        break;
    default:
        *what = "invalid wire type";
        *at = f->start;
        return -1;
    }
    f->end = p;
    *pp = p;
    return 1;
}

/* A cursor over the fields of one message body, on tracec_wire_read_field. */
typedef struct tracec_wire_reader {
    const uint8_t *p, *end;
    int max_group_depth;     /* TRACEC_WIRE_MAX_GROUP_DEPTH after init; set it before reading to change it */
    const char *error;       /* set when tracec_wire_next returns -1: a static English phrase */
    const uint8_t *error_at; /* the offending byte */
} tracec_wire_reader;

static inline void tracec_wire_reader_init(tracec_wire_reader *r, const void *data, size_t size) {
    r->p = (const uint8_t *)data;
    r->end = r->p + size;
    r->max_group_depth = TRACEC_WIRE_MAX_GROUP_DEPTH;
    r->error = NULL;
    r->error_at = NULL;
}

/* Reads the next field: 1, 0 at the end, -1 when malformed (r->error, r->error_at; sticky). */
static inline int tracec_wire_next(tracec_wire_reader *r, tracec_wire_field *f) {
    return tracec_wire_read_field(&r->p, r->end, r->max_group_depth, f, &r->error, &r->error_at);
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_WIRE_H */
