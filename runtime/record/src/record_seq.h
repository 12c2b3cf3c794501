/*
 * record_seq.h - the recorder's sequence ids (record_seq.c).
 *
 * A writing process numbers its own packet sequences: the track-event layer
 * writes a `trusted_packet_sequence_id` (TracePacket field 10) per thread
 * and session, unique only inside that process.  The recorder gives each
 * (peer, local id) a global id of its own, from one counter for the whole
 * trace, and writes the packet with that id instead: a peer can name only
 * its own sequences, never another peer's or the recorder's.
 *
 * One map per peer: open addressing (linear probing, at most half full),
 * at most TRACEC_I_REC_SEQ_MAX ids.  A packet that would add one more is
 * refused and counted, as is one that finds no memory or no global id left.
 */
#ifndef TRACEC_RECORD_SEQ_H
#define TRACEC_RECORD_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record_check.h"
#include "tracec/recorder.h"
#include "tracec/status.h"
#include "tracec/wire.h"

/* Local ids one peer may use. */
#define TRACEC_I_REC_SEQ_MAX 4096u
/* The TracePacket field that holds the sequence id. */
#define TRACEC_I_REC_SEQ_FIELD 10u
/* A rewritten packet is at most this many bytes longer than the packet it came from. */
#define TRACEC_I_REC_SEQ_EXTRA 6u
/* trusted_pid and trusted_uid as a packet's last fields: a tag and up to 10 bytes each (an int32 that is
   negative takes 10), copied as one block of this many bytes */
#define TRACEC_I_REC_TRUSTED_COPY 24u

typedef struct tracec_i_rec_seq_slot {
    uint64_t local;  /* the peer's id (any varint value) */
    uint32_t global; /* 0: the slot is free */
    uint32_t unused;
} tracec_i_rec_seq_slot;

/* The shapes of a peer's packets the recorder checked last (record_check.h): two per set, a packet's set by its
   length. */
#define TRACEC_I_REC_SHAPE_SETS 16u
typedef struct tracec_i_rec_shapes {
    tracec_i_rec_shape way[TRACEC_I_REC_SHAPE_SETS][2];
    uint8_t victim[TRACEC_I_REC_SHAPE_SETS]; /* the way a new shape of the set replaces: the one used less lately */
    /* Packets checked whole found by shape, and shapes made, lately (both halved as they grow): a peer whose
       packets rarely repeat a shape gets a shape made for one miss in TRACEC_I_REC_SHAPE_SPARSE only, since
       making one costs about another check. */
    uint32_t hits, made, misses;
} tracec_i_rec_shapes;
#define TRACEC_I_REC_SHAPE_SPARSE 16u

typedef struct tracec_i_rec_seqmap {
    uint32_t default_id; /* the peer's sequence for packets without an id of their own (or with id 0) */
    uint32_t count;      /* local ids mapped */
    uint32_t cap;        /* slots (a power of two; 0 until the first id) */
    uint64_t refused;    /* packets refused: a new id past TRACEC_I_REC_SEQ_MAX, no memory, no global id left */
    tracec_i_rec_seq_slot *slot;
    tracec_i_rec_seq_slot last; /* the id asked for last (global 0: none): a run of one sequence's packets */
    /* tracec_i_rec_save_packet's trusted fields as written last (trusted_n 0: none yet), for pid and uid */
    int32_t trusted_pid, trusted_uid;
    uint8_t trusted_n;
    uint8_t trusted[TRACEC_I_REC_TRUSTED_COPY];
    uint8_t no_shapes; /* shapes could not be allocated: every packet takes the whole check */
    tracec_i_rec_shapes *shapes; /* allocated at the first packet tracec_i_rec_save_packet checks */
} tracec_i_rec_seqmap;

/* An empty map whose packets without an id go to `default_id` (the peer's sequence). */
void tracec_i_rec_seqmap_init(tracec_i_rec_seqmap *m, uint32_t default_id);

/* Frees the slots; the map is empty again (its default and refused count stay). */
void tracec_i_rec_seqmap_free(tracec_i_rec_seqmap *m);

/*
 * The global id of the peer's id `local`: the default sequence for 0 (a
 * proto3 reader cannot tell 0 from absent), the id given earlier, or a new
 * one taken from *next (the recorder's counter for the whole trace, which
 * never hands out 0 and stops at UINT32_MAX).  0 when refused (counted in
 * m->refused).
 */
uint32_t tracec_i_rec_seqmap_get(tracec_i_rec_seqmap *m, uint64_t local, uint32_t *next);

/*
 * The packet to write for the peer's packet p[0..n): every field as it is,
 * except field 10 (whatever its wire type; the last VARINT one is the local
 * id, as for any protobuf reader), then field 10 = its global id.  Writes
 * out[0..*out_n) (cap must be at least n + TRACEC_I_REC_SEQ_EXTRA) and the
 * id to *global.  false: the packet is refused (the map is full, counted;
 * or cap too small, or p fails tracec_i_rec_packet_ok), nothing written.
 */
bool tracec_i_rec_seq_rewrite(tracec_i_rec_seqmap *m, uint32_t *next, const uint8_t *p, size_t n, uint8_t *out,
                              size_t cap, size_t *out_n, uint32_t *global);

/*
 * Checks the peer's packet p[0..n) (tracec_i_rec_packet_ok) and appends it
 * to `out` as the recorder writes it, in one pass over its bytes: rewritten
 * with its global sequence id (as tracec_i_rec_seq_rewrite; a packet whose
 * one field 10 is a varint as long as the global id's keeps the field in
 * its place, with the global id), then
 * trusted_pid = pid and trusted_uid = uid appended (they win over anything
 * the peer wrote), and previous_packet_dropped when *mark (then cleared;
 * mark may be NULL).  CORRUPT_DATA: the packet fails the check (*why, when
 * why is not NULL, says how), nothing written.  LIMIT_EXCEEDED: refused by
 * the map (counted in m->refused), nothing written.  Or any status of the
 * trace file.
 */
struct tracec_trace_file;
tracec_status_t tracec_i_rec_save_packet(struct tracec_trace_file *out, tracec_i_rec_seqmap *m, uint32_t *next,
                                         const uint8_t *p, size_t n, int32_t pid, int32_t uid, int *mark,
                                         const char **why);

/* The packet inside a record that is one Trace.packet field (0x0A, its varint length, the packet), as the
   buffer writers write each packet, with *size set to its length; else the record itself. */
static inline const uint8_t *tracec_i_rec_unwrap(const uint8_t *record, size_t *size) {
    const uint8_t *p = record + 1, *end = record + *size;
    uint64_t len;
    if (*size > 1 && record[0] == 0x0A && tracec_wire_read_varint(&p, end, &len) == TRACEC_VARINT_OK &&
        len == (uint64_t)(end - p)) {
        *size = (size_t)len;
        return p;
    }
    return record;
}

/* Where the recorder's walk of a provider's region saves its records (tracec_i_rec_save_region). */
typedef struct tracec_i_rec_saver {
    struct tracec_trace_file *out;
    tracec_i_rec_seqmap *map;
    uint32_t *next;
    int32_t pid, uid;
    int *mark;          /* the loss mark (tracec_i_rec_save_packet), or NULL */
    uint64_t delivered; /* out: records written */
    const char *why;    /* out: why the record check refused a record */
    uint64_t over_size; /* out: records the trace file refused (its size limit): lost */
} tracec_i_rec_saver;

/*
 * The walk of tracec_i_rec_walk_region (unchecked), each record saved with
 * tracec_i_rec_save_packet to sv: a record's payload is unwrapped when it
 * is one Trace.packet field (0x0A, its length, the packet), as the buffer
 * writers write them; a record the check refuses ends the walk as corrupt
 * (why in sv->why); one the sequence map refuses is skipped (counted by
 * the map).  The usual records of a chunk, one after the other, take a
 * path of their own (tracec_i_rec_save_run) that writes the same bytes.
 */
tracec_status_t tracec_i_rec_save_region(const void *region, size_t extent, uint64_t gen, bool durable,
                                         tracec_i_rec_saver *sv, tracec_recorder_region_result *out);

/*
 * Saves the records at body[0..n) (a chunk's, from a record's start) for
 * as long as each is the usual one: a sound record header, one Trace.packet
 * field of at most 127 bytes, a packet of the shape the peer's last packet
 * of its set had, on the sequence asked for last, whose one id is as long
 * as its global id, and room in the trace's buffer.  Returns the bytes
 * saved (records and their headers); out->records and out->bytes count
 * them.  It stops at the first other record, which the general path
 * saves.  The records are handed to the trace together, at the end or
 * when its room runs out; a failure of the trace file then is *st (else
 * SUCCESS).
 */
size_t tracec_i_rec_save_run(tracec_i_rec_saver *sv, const uint8_t *body, size_t n,
                             tracec_recorder_region_result *out, tracec_status_t *st);

/* tracec_i_rec_save_packet without the reason. */
tracec_status_t tracec_i_rec_write_packet(struct tracec_trace_file *out, tracec_i_rec_seqmap *m, uint32_t *next,
                                          const uint8_t *p, size_t n, int32_t pid, int32_t uid, int *mark);

#endif /* TRACEC_RECORD_SEQ_H */
