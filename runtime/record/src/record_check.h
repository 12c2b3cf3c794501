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
