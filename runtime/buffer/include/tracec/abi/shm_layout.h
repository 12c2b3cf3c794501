/*
 * tracec/abi/shm_layout.h - a buffer whose memory is a memfd
 * (TRACEC_BUFFER_MEMORY_MEMFD), as another process that maps the same memfd
 * sees it: the recorder of `tracec record`.
 *
 * NOT a user API.  It is installed because the buffer runtime (the writing
 * process) and the recorder (the reading process) of one release must agree
 * on it; every name here may change in any release.
 *
 *   0          P              P + X          P + 2X         P + 2X + D
 *   | header   | half 0       | half 1       | durable      |
 *
 *   P = TRACEC_SHM_HEADER_BYTES.  X = half_bytes: the half's payload size
 *   times 3 (block headers and padding), rounded up to the page size.
 *   ONESHOT has one half; STREAMING has no durable part (D = 0).
 *
 * A half, and the durable part, hold blocks (tracec/abi/buffer_abi.h) back
 * to back from their start: a 16-byte tracec_i_blk header, then `body`
 * bytes (a multiple of 8).  A block is either
 *   - a record: `size` <= body payload bytes; or
 *   - a writer's chunk: `size` == TRACEC_I_CHUNK_MARK, `committed` <= body
 *     bytes of records (each a header and a body, as above), and `kind` ==
 *     TRACEC_SHM_CHUNK_TAG(gen) of the half's generation when the chunk was
 *     taken.  A chunk with another tag is left over from an earlier use of
 *     the half.  After a chunk's committed bytes, a record header with body
 *     0 and size TRACEC_I_OPEN_MARK is a packet its writer had begun and
 *     not ended when the region was read (a writer clears the mark before
 *     its chunk can be handed).  In the durable part, which has no chunks,
 *     a durable packet begun is marked the same way at the part's `reserved`
 *     hint (its writer holds the part until it ends or fails it).
 * A record's payload is what its writer wrote; the buffer writers (and so
 * the track-event layer) write one Trace.packet field per record: the tag
 * 0x0A, the TracePacket's length, the TracePacket.
 *
 * The writing process writes the header: the geometry once, at create, and
 * the region words as it publishes.  It never reads a control decision back
 * from the memfd, so a reader that scribbles on it cannot steer the writers.
 * A reader must treat every byte as hostile: clamp each value to the
 * geometry it agreed on out of band, copy a region before it walks it, and
 * check the region's `gen` again after the copy.
 */
#ifndef TRACEC_ABI_SHM_LAYOUT_H
#define TRACEC_ABI_SHM_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEC_SHM_MAGIC UINT64_C(0x3230304d48534354) /* "TCSHM002", little-endian */
#define TRACEC_SHM_VERSION 2u
#define TRACEC_SHM_HEADER_BYTES 4096u

/* The tag of a chunk block taken from a half of generation `gen` (gens are even, so tags differ). */
#define TRACEC_SHM_CHUNK_TAG(gen) ((uint32_t)(gen) | 1u)

/* A region's `handed` word. */
enum { TRACEC_SHM_REGION_FREE = 0, TRACEC_SHM_REGION_HANDED = 1 };

/* One half, or the durable part. */
typedef struct tracec_shm_region {
    uint64_t gen;      /* even; advanced by 2, before any byte of the region is rewritten, at each reset */
    uint32_t handed;   /* HANDED: [0, extent) was given to the reader, which owes a "saved" for (region, gen) */
    uint32_t extent;   /* bytes of complete blocks from the region's start, stored before `handed` (release) */
    uint32_t blocks;   /* blocks in [0, extent) */
    uint32_t reserved; /* bytes reserved so far (relaxed; a hint to salvage the region of a writer that died) */
} tracec_shm_region;

typedef struct tracec_shm_header {
    uint64_t magic;        /* TRACEC_SHM_MAGIC */
    uint32_t version;      /* TRACEC_SHM_VERSION */
    uint32_t header_bytes; /* TRACEC_SHM_HEADER_BYTES */
    /* The geometry, written at create. */
    uint32_t mode;   /* tracec_buffering_mode_t */
    uint32_t halves; /* 1 (ONESHOT) or 2 */
    uint64_t size;          /* payload bytes per half, as configured (rounded to the page size) */
    uint64_t half_bytes;    /* X */
    uint64_t durable_bytes; /* D */
    /* Written as the buffer runs. */
    uint32_t active; /* the half the writers fill */
    uint32_t reserved0;
    tracec_shm_region half[2];
    tracec_shm_region durable;
    /*
     * The buffer's counters (tracec_buffer_stats_t): packets accepted,
     * dropped, overwritten, refused.  Stored at each handoff; the losses
     * also as they are counted on the buffer's slow path (a drop for room, a
     * wrap, every 64th drop of a full ONESHOT buffer), so a process killed
     * between handoffs leaves them nearly whole.
     */
    uint64_t accepted, dropped, overwritten, refused;
} tracec_shm_header;

#ifdef __cplusplus
}
#endif

#endif
