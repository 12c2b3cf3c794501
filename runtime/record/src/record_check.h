/*
 * record_check.h - the recorder's checks of `tracec record`: whether a
 * record decodes under tracec's schema (record_check.c); the trust checks
 * both ends use (whom an end trusts, whether a shared buffer's size is
 * sealed, whether a name is printable) are tracec/abi/record_protocol.h's.
 * docs/record.md, "Threat model", says what they guarantee.
 */
#ifndef TRACEC_RECORD_CHECK_H
#define TRACEC_RECORD_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "tracec/abi/record_protocol.h"
#include "tracec/recorder.h"

/* How deep the record check follows messages nested in a TracePacket (the packet itself is level 1). */
#define TRACEC_I_REC_MAX_DEPTH 32

/*
 * Whether `n` bytes at `p` are a TracePacket every decoder reads: the one
 * field reader of tracec/wire.h on every level, no groups, and each
 * length-delimited field that tracec's schema declares as a message (with
 * its wire type) checked the same way, recursively, at most
 * TRACEC_I_REC_MAX_DEPTH levels; a packed repeated scalar must split into
 * whole elements.  Fields the schema does not know are only checked to be
 * well formed.  false: *why (static text) says what is wrong (unchanged when true).
 */
bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why);

/* How many of a packet's field-10 fields a scan locates (more: the rewrite reads the packet again). */
#define TRACEC_I_REC_SCAN_CUTS 4u

/*
 * What the recorder needs of a TracePacket besides its verdict, found in the
 * same pass: its sequence id fields (field 10, TRACEC_I_REC_SEQ_FIELD in
 * record_seq.h), which the recorder replaces.
 */
typedef struct tracec_i_rec_scan {
    uint64_t local;    /* the last VARINT field 10 (0: none) */
    uint32_t seq_fields; /* field-10 fields of any wire type */
    uint32_t cut[2 * TRACEC_I_REC_SCAN_CUTS]; /* the first ones: [start, end) byte offsets, in order */
} tracec_i_rec_scan;

/*
 * tracec_i_rec_packet_ok, and *s filled on success: one pass over the
 * packet checks every level and finds its field-10 fields.
 */
bool tracec_i_rec_packet_scan(const uint8_t *p, size_t n, tracec_i_rec_scan *s, const char **why);

/*
 * A packet shape: the bytes of a packet that passed the check, with what of
 * each byte the check's verdict and scan depend on.  A tag, a length, the
 * packet's field-10 fields and anything the check reads as a whole keep
 * all their bits; a varint value of at most 9 bytes keeps its continuation
 * bits only; fixed-size values and the contents of length-delimited fields
 * the schema has no action for keep none.  A packet of the same length
 * whose bytes agree with a shape on those bits takes every branch of the
 * check the shape's packet took: it passes, with the same scan.
 */
#define TRACEC_I_REC_SHAPE_MAX 128u
typedef struct tracec_i_rec_shape {
    uint32_t n;         /* the packet's length (0: no shape) */
    uint32_t seq_value; /* the scan's `local` is read from each packet: its one field 10, at scan.cut[0] */
    tracec_i_rec_scan scan;
    uint8_t bits[TRACEC_I_REC_SHAPE_MAX]; /* the packet's bytes & mask */
    uint8_t mask[TRACEC_I_REC_SHAPE_MAX];
} tracec_i_rec_shape;

/*
 * tracec_i_rec_packet_scan, and on success the packet's shape in *sh when
 * it has one: 8 to TRACEC_I_REC_SHAPE_MAX bytes (else sh->n is 0).
 */
bool tracec_i_rec_packet_shape(const uint8_t *p, size_t n, tracec_i_rec_scan *s, tracec_i_rec_shape *sh,
                               const char **why);

/* Whether p[0..n) (n = sh->n >= 8) agrees with sh on the bits it keeps. */
static inline bool tracec_i_rec_shape_bits(const tracec_i_rec_shape *sh, const uint8_t *p, size_t n) {
    uint64_t diff = 0, x, m, b;
    size_t i = 0;
    for (; i + 8u < n; i += 8u) {
        memcpy(&x, p + i, 8);
        memcpy(&m, sh->mask + i, 8);
        memcpy(&b, sh->bits + i, 8);
        diff |= (x & m) ^ b;
    }
    i = n - 8u; /* the last 8 bytes (again in part): nothing past the packet is read */
    memcpy(&x, p + i, 8);
    memcpy(&m, sh->mask + i, 8);
    memcpy(&b, sh->bits + i, 8);
    return (diff | ((x & m) ^ b)) == 0;
}

/* Whether p[0..n) has the shape `sh`; *s is then its scan. */
static inline bool tracec_i_rec_shape_match(const tracec_i_rec_shape *sh, const uint8_t *p, size_t n,
                                            tracec_i_rec_scan *s) {
    if (sh->n != n || n < 8u || !tracec_i_rec_shape_bits(sh, p, n)) return false;
    *s = sh->scan;
    if (sh->seq_value) { /* a varint of at most 9 bytes, whose bytes' continuation bits matched */
        const uint8_t *q = p + s->cut[0] + 1;
        uint64_t v = 0;
        for (unsigned k = 0;; k += 7u) {
            v |= (uint64_t)(*q & 0x7fu) << k;
            if (*q++ < 0x80u) break;
        }
        s->local = v;
    }
    return true;
}

/*
 * tracec_recorder_read_region (tracec/recorder.h), and with `check` false
 * the callback checks each record itself, in the pass that writes it
 * (tracec_i_rec_save_packet): its CORRUPT_DATA is a bad record (out->corrupt,
 * out->end at the record), as if the walk had found it.
 */
tracec_status_t tracec_i_rec_walk_region(const void *region, size_t extent, uint64_t gen, bool durable, bool check,
                                        tracec_recorder_packet_fn fn, void *data,
                                        tracec_recorder_region_result *out);

/* ---- the schema the record check follows (record_schema.c, generated from tracec's descriptor pool) ---- */

typedef struct tracec_i_rec_field {
    uint32_t number;
    uint8_t wire_type; /* the wire type the schema writes it with */
    uint8_t packable;  /* a repeated scalar: may also come packed (LEN) */
    uint16_t message;  /* a message field: its type's index in tracec_i_rec_schema + 1; 0: not a message */
} tracec_i_rec_field;

typedef struct tracec_i_rec_message {
    const char *full_name;
    const tracec_i_rec_field *fields; /* by number, ascending */
    uint32_t field_count;
} tracec_i_rec_message;

/* perfetto.protos.TracePacket first, then every message type it holds, as far as tracec's schema knows them. */
extern const tracec_i_rec_message tracec_i_rec_schema[];
extern const uint32_t tracec_i_rec_schema_count;

/* At most this many message types (the class of a message field holds its index; record_schema.c asserts it). */
#define TRACEC_I_REC_MAX_TYPES 8192u
/* LEN fields numbered below this have their class in their type's row. */
#define TRACEC_I_REC_DENSE 128u
/* The entries of one row of tracec_i_rec_rows. */
#define TRACEC_I_REC_ROW (256u + TRACEC_I_REC_DENSE)

/*
 * The check's table, sized for the schema by record_schema.c and filled by
 * record_check.c before its first check (static storage: nothing to
 * allocate, nothing to fail): a row of TRACEC_I_REC_ROW classes per message
 * type, and one more for the packet itself, at depth 1 (record_check.c says
 * what a row holds).
 */
extern uint16_t tracec_i_rec_rows[];

#endif /* TRACEC_RECORD_CHECK_H */
