/*
 * region_util.h - a small writer of the buffer engine's shared layout
 * (tracec/abi/shm_layout.h), as the record tests build regions by hand: the
 * reader's oracle is this file's documented layout, not the engine.  Also
 * hand-encoded TracePackets (timestamp, an instant TrackEvent with a name,
 * optionally a trusted_packet_sequence_id).
 */
#ifndef TRACEC_RECORD_REGION_UTIL_H
#define TRACEC_RECORD_REGION_UTIL_H

#include <stdint.h>
#include <string.h>

#include "tracec/abi/buffer_abi.h"
#include "tracec/abi/shm_layout.h"

#define RU_CHUNK_MARK 0xffffffffu

/* Appends varint v at p; returns the end. */
static inline uint8_t *ru_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A TracePacket {timestamp: ts, trusted_packet_sequence_id: seq (if has_seq), track_event {type: INSTANT,
   name: name}} at out (name: at most 120 bytes); returns its size. */
static inline size_t ru_packet(uint8_t *out, uint64_t ts, const char *name, int has_seq, uint64_t seq) {
    uint8_t ev[128], *e = ev, *p = out;
    size_t n = strlen(name);
    *e++ = 0x48; /* TrackEvent.type (9) */
    *e++ = 3;    /* TYPE_INSTANT */
    e = ru_varint(e, (23u << 3) | 2u); /* TrackEvent.name (23) */
    e = ru_varint(e, n);
    memcpy(e, name, n);
    e += n;
    *p++ = 0x40; /* TracePacket.timestamp (8) */
    p = ru_varint(p, ts);
    if (has_seq) {
        *p++ = 0x50; /* TracePacket.trusted_packet_sequence_id (10) */
        p = ru_varint(p, seq);
    }
    *p++ = 0x5a; /* TracePacket.track_event (11) */
    p = ru_varint(p, (uint64_t)(e - ev));
    memcpy(p, ev, (size_t)(e - ev));
    p += e - ev;
    return (size_t)(p - out);
}

/* A region being written: bytes p[0..cap), the next block at off, an open chunk's header at chunk. */
typedef struct ru_writer {
    uint8_t *p;
    size_t cap, off;
    size_t chunk; /* SIZE_MAX: none open */
    uint32_t blocks;
} ru_writer;

static inline ru_writer ru_writer_at(void *p, size_t cap) {
    ru_writer w = {(uint8_t *)p, cap, 0, SIZE_MAX, 0};
    return w;
}

static inline void ru_header(ru_writer *w, uint32_t body, uint32_t size, uint32_t third, uint32_t kind) {
    tracec_i_blk b;
    b.body = body;
    b.size = size;
    b.category = third;
    b.kind = kind;
    memcpy(w->p + w->off, &b, sizeof b);
}

/* A record block (or a record in the open chunk) of n payload bytes, padded to 8 with zeros. */
static inline void ru_record(ru_writer *w, const void *payload, size_t n, uint32_t category, uint32_t kind) {
    uint32_t body = (uint32_t)((n + 7u) & ~(size_t)7u);
    ru_header(w, body, (uint32_t)n, category, kind);
    memset(w->p + w->off + TRACEC_I_BLK_HDR, 0, body);
    memcpy(w->p + w->off + TRACEC_I_BLK_HDR, payload, n);
    w->off += TRACEC_I_BLK_HDR + body;
    if (w->chunk == SIZE_MAX) w->blocks++;
}

/* Opens a chunk block tagged `tag`; its records follow. */
static inline void ru_chunk_begin(ru_writer *w, uint32_t tag) {
    w->chunk = w->off;
    ru_header(w, 0, RU_CHUNK_MARK, 0, tag);
    w->off += TRACEC_I_BLK_HDR;
}

/* Closes the chunk: committed = its records' bytes, body = committed + slack (zeros, a multiple of 8). */
static inline void ru_chunk_end(ru_writer *w, uint32_t slack) {
    size_t at = w->chunk;
    uint32_t committed = (uint32_t)(w->off - at - TRACEC_I_BLK_HDR);
    memset(w->p + w->off, 0, slack);
    w->off += slack;
    size_t keep = w->off;
    w->off = at;
    uint32_t tag;
    memcpy(&tag, w->p + at + 12, 4);
    ru_header(w, committed + slack, RU_CHUNK_MARK, committed, tag);
    w->off = keep;
    w->chunk = SIZE_MAX;
    w->blocks++;
}

/* A whole record (a TracePacket named `name`) as a record block. */
static inline void ru_packet_record(ru_writer *w, uint64_t ts, const char *name, int has_seq, uint64_t seq) {
    uint8_t pk[256];
    ru_record(w, pk, ru_packet(pk, ts, name, has_seq, seq), 0, 0);
}

#endif /* TRACEC_RECORD_REGION_UTIL_H */
