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

/* How deep tracec_wire_next follows groups nested in groups. */
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

/* A cursor over the fields of one message body. */
typedef struct tracec_wire_reader {
    const uint8_t *p, *end;
    const char *error;       /* set when tracec_wire_next returns -1: a static English phrase */
    const uint8_t *error_at; /* where the malformed field starts */
} tracec_wire_reader;

static inline void tracec_wire_reader_init(tracec_wire_reader *r, const void *data, size_t size) {
    r->p = (const uint8_t *)data;
    r->end = r->p + size;
    r->error = NULL;
    r->error_at = NULL;
}

static inline int tracec_i_wire_fail(tracec_wire_reader *r, const uint8_t *at, const char *what) {
    r->error = what;
    r->error_at = at;
    return -1;
}

/*
 * Skips the body of a group that started just before *pp, through its
 * matching end tag.  On success *body_end is where that end tag starts.
 * Returns NULL or what is wrong.
 */
static inline const char *tracec_wire_skip_group(const uint8_t **pp, const uint8_t *end, uint32_t number,
                                                 const uint8_t **body_end) {
    /* Open groups' numbers: a stack, not recursion, so hostile input cannot exhaust the C stack. */
    uint32_t open[TRACEC_WIRE_MAX_GROUP_DEPTH];
    int depth = 0;
    const uint8_t *p = *pp;
    open[depth++] = number;
    for (;;) {
        const uint8_t *tag_at = p;
        uint64_t tag, v;
        if (p >= end) return "group not closed before the end of its message";
        if (tracec_wire_read_varint(&p, end, &tag) != TRACEC_VARINT_OK || tag > UINT32_MAX || (tag >> 3) == 0)
            return "invalid tag inside a group";
        switch ((unsigned)(tag & 7u)) {
        case TRACEC_WIRE_VARINT:
            if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return "malformed varint inside a group";
            break;
        case TRACEC_WIRE_FIXED64:
            if ((size_t)(end - p) < 8) return "truncated fixed64 value inside a group";
            p += 8;
            break;
        case TRACEC_WIRE_FIXED32:
            if ((size_t)(end - p) < 4) return "truncated fixed32 value inside a group";
            p += 4;
            break;
        case TRACEC_WIRE_LEN:
            if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK || v > (uint64_t)(end - p))
                return "length inside a group runs past the end of its message";
            p += v;
            break;
        case TRACEC_WIRE_SGROUP:
            if (depth == TRACEC_WIRE_MAX_GROUP_DEPTH) return "groups nested deeper than the limit";
            open[depth++] = (uint32_t)(tag >> 3);
            break;
        case TRACEC_WIRE_EGROUP:
            if (open[depth - 1] != (uint32_t)(tag >> 3)) return "end-group tag does not match its start";
            if (--depth == 0) {
                *body_end = tag_at;
                *pp = p;
                return NULL;
            }
            break;
        default:
            return "invalid wire type inside a group";
        }
    }
}

/*
 * Reads the next field.  Returns 1 (a field is in *f), 0 (the end of the
 * body) or -1 (malformed: r->error and r->error_at say why and where; the
 * reader stays at the bad field, so calling again fails the same way).
 * An end-group tag is returned as a field of type TRACEC_WIRE_EGROUP for a
 * caller that reads a group's body itself.
 */
static inline int tracec_wire_next(tracec_wire_reader *r, tracec_wire_field *f) {
    const uint8_t *p = r->p, *end = r->end;
    if (p >= end) return 0;
    f->start = p;
    uint64_t tag;
    tracec_varint_result vr = tracec_wire_read_varint(&p, end, &tag);
    if (vr != TRACEC_VARINT_OK || tag > UINT32_MAX)
        return tracec_i_wire_fail(r, f->start, vr == TRACEC_VARINT_TRUNCATED ? "truncated tag" : "invalid tag");
    f->number = (uint32_t)(tag >> 3);
    f->type = (uint8_t)(tag & 7u);
    f->value = 0;
    f->data = NULL;
    f->size = 0;
    if (f->number == 0) return tracec_i_wire_fail(r, f->start, "invalid field number 0");
    switch (f->type) {
    case TRACEC_WIRE_VARINT:
        vr = tracec_wire_read_varint(&p, end, &f->value);
        if (vr != TRACEC_VARINT_OK)
            return tracec_i_wire_fail(r, f->start,
                                      vr == TRACEC_VARINT_TRUNCATED ? "truncated varint" : "varint longer than 10 bytes");
        break;
    case TRACEC_WIRE_FIXED64:
        if ((size_t)(end - p) < 8) return tracec_i_wire_fail(r, f->start, "truncated fixed64 value");
        f->value = tracec_wire_load64(p);
        p += 8;
        break;
    case TRACEC_WIRE_FIXED32:
        if ((size_t)(end - p) < 4) return tracec_i_wire_fail(r, f->start, "truncated fixed32 value");
        f->value = tracec_wire_load32(p);
        p += 4;
        break;
    case TRACEC_WIRE_LEN: {
        uint64_t n;
        vr = tracec_wire_read_varint(&p, end, &n);
        if (vr != TRACEC_VARINT_OK)
            return tracec_i_wire_fail(r, f->start,
                                      vr == TRACEC_VARINT_TRUNCATED ? "truncated length" : "length varint longer than 10 bytes");
        if (n > (uint64_t)(end - p))
            return tracec_i_wire_fail(r, f->start, "length runs past the end of the enclosing message");
        f->data = p;
        f->size = (size_t)n;
        p += n;
        break;
    }
    case TRACEC_WIRE_SGROUP: {
        const uint8_t *body = p, *body_end = NULL;
        const char *why = tracec_wire_skip_group(&p, end, f->number, &body_end);
        if (why != NULL) return tracec_i_wire_fail(r, f->start, why);
        f->data = body;
        f->size = (size_t)(body_end - body);
        break;
    }
    case TRACEC_WIRE_EGROUP:
        break;
    default:
        return tracec_i_wire_fail(r, f->start, "invalid wire type");
    }
    f->end = p;
    r->p = p;
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_WIRE_H */
