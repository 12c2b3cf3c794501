/*
 * tracec/abi/buffer_abi.h - the fast path's contract between the inline
 * tracec_buffer_begin_packet / tracec_buffer_end_packet (tracec/buffer.h)
 * and the buffer runtime (runtime/buffer/src): the record layout, the
 * per-writer state, and the writer's side of the chunk handover.
 *
 * NOT a user API: include tracec/buffer.h.  It is installed because the
 * inline functions need it; every name here may change in any release
 * (the runtime and the headers of one release always agree).
 *
 * Records and blocks (docs/buffers.md, "Memory layout"): a header of
 * TRACEC_I_BLK_HDR bytes, then a body whose length is a multiple of
 * TRACEC_I_BLK_ALIGN.  A writer's chunk is a block whose body holds records;
 * the chunk header's `committed` is the length of the records already
 * committed into it.
 */
#ifndef TRACEC_ABI_BUFFER_ABI_H
#define TRACEC_ABI_BUFFER_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/abi/attributes.h"
#include "tracec/abi/hints.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEC_I_BLK_HDR 16u  /* bytes of a block (and record) header */
#define TRACEC_I_BLK_ALIGN 8u /* a body is a multiple of this */
/* A block's `size` when the block is a writer's chunk. */
#define TRACEC_I_CHUNK_MARK 0xffffffffu
/*
 * The size of a record header in a chunk whose packet is begun and not
 * ended (body 0): a writer marks it at begin and back-fills the real header
 * at the end; a packet that fails, moves or is abandoned has its mark
 * cleared first.  So after a chunk's committed bytes, a marked header is a
 * packet its writer was writing: one a recorder counts lost when the
 * writer died (a salvage).
 */
#define TRACEC_I_OPEN_MARK 0xfffffffeu
/* The body of a record of `n` payload bytes. */
#define TRACEC_I_BLK_BODY(n) (((n) + (TRACEC_I_BLK_ALIGN - 1u)) & ~(size_t)(TRACEC_I_BLK_ALIGN - 1u))

/* Header of a block, and of a record inside a chunk. */
typedef struct tracec_i_blk {
    uint32_t body; /* bytes after the header (a multiple of TRACEC_I_BLK_ALIGN) */
    uint32_t size; /* payload bytes, or TRACEC_I_CHUNK_MARK (a chunk) */
    union {                 /* (anonymous: C11, C++) */
        uint32_t category;  /* a record: its category */
        uint32_t committed; /* a chunk: bytes of committed records (atomic) */
    };
    uint32_t kind;
} tracec_i_blk;

/*
 * The runtime's per-writer state (tracec_buffer_writer points to it).  The
 * first group of fields is what the inline begin/end read and write on the
 * fast path; `busy`, `stolen` and `half` are shared with the delivery thread
 * and are only accessed with __atomic builtins.  docs/buffers.md, "Chunk
 * handover", describes the protocol.
 */
struct tracec_i_buffer;
typedef struct tracec_i_wstate {
    uint8_t *body;      /* current chunk body, NULL if none */
    uint32_t body_size; /* its bytes; 0 if none */
    uint32_t used;      /* committed bytes of the chunk body (<= body_size) */
    uint32_t reserve;   /* room a packet begins with: header + payload + slack */
    uint32_t in_packet; /* 0 none, 1 in the chunk, 2 durable (holds dmu) */
    uint32_t category, kind;
    uint32_t busy;      /* atomic: a packet is open in the chunk */
    uint32_t stolen;    /* atomic: the chunk was taken by a delivery or reset */
    uint8_t asym;       /* busy is published with a compiler fence; stealers run membarrier() */
    uint8_t streaming;  /* the buffer has no durable part: every packet goes into the chunk */
    uint64_t gen;       /* bumped each time the state is freed; a writer holding another gen is stale */
    uint64_t packets;   /* packets committed into chunks (written by the owner, read by stats: atomic) */
    /* out of line only: */
    tracec_i_blk *blk; /* current chunk block (body - TRACEC_I_BLK_HDR), NULL if none */
    int32_t half;      /* atomic: half of the chunk, -1 if none */
    struct tracec_i_buffer *b;
    uint64_t handle;
    struct tracec_i_wstate *next;
    uint8_t *scratch;     /* LOSSLESS grow(): the partial packet while waiting for room (slow path only) */
    uint32_t scratch_cap; /* its bytes */
    uint32_t lost;        /* the open packet was lost in grow() and already counted */
    /* Records refused without the mutex because a ONESHOT buffer is full: counted here by the owner (atomic:
       read under the buffer's mutex), not in the buffer's shared counter, which every writer would contend
       for; added to it when the state is detached. */
    uint64_t drops;
    uint32_t zombie;      /* detached while the buffer's list was being walked: freed by reap() */
    const void *owner;    /* the thread it is bound to (NULL: none yet); see docs/buffers.md */
    struct tracec_i_wstate *pool_next; /* the runtime's list of all writer states */
} tracec_i_wstate;

/*
 * How many of the buffer runtime's locks the calling thread holds (or waits
 * for).  The track-event layer reads it before it writes: an event that
 * would run while the thread is inside the runtime (a signal handler that
 * interrupted it) is dropped and counted instead of taking a lock its own
 * thread holds.  C only (no inline function of a public header uses it).
 */
#ifndef __cplusplus
extern _Thread_local uint32_t tracec_i_tls_locks;
#endif

/* Marks the record header at `rec` (8-byte aligned, in the writer's chunk) open, or clears the mark. */
static inline TRACEC_I_ALWAYS_INLINE void tracec_i_mark_open(uint8_t *rec) {
    tracec_i_blk *h = (tracec_i_blk *)(void *)rec;
    h->body = 0;
    h->size = TRACEC_I_OPEN_MARK;
}
static inline TRACEC_I_ALWAYS_INLINE void tracec_i_clear_open(uint8_t *rec) {
    ((tracec_i_blk *)(void *)rec)->size = 0;
}

/* The header of the chunk the writer holds. */
static inline TRACEC_I_ALWAYS_INLINE tracec_i_blk *tracec_i_chunk_header(const tracec_i_wstate *ws) {
    return (tracec_i_blk *)(void *)(ws->body - TRACEC_I_BLK_HDR);
}

/*
 * The writer's side of the chunk handover, a Dekker pair with the delivery:
 * announce a packet (busy = 1), then look at stolen.  True when the chunk is
 * still the writer's; false when a delivery took it (the caller clears busy
 * and takes the slow path).  The store-load order is a seq_cst store, or,
 * with the asymmetric protocol, a plain store and a compiler fence (the
 * stealer runs membarrier()).
 */
static inline TRACEC_I_ALWAYS_INLINE int tracec_i_announce(tracec_i_wstate *ws) {
    if (TRACEC_I_LIKELY(ws->asym)) {
        __atomic_store_n(&ws->busy, 1u, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_store_n(&ws->busy, 1u, __ATOMIC_SEQ_CST);
    }
    return __atomic_load_n(&ws->stolen, __ATOMIC_SEQ_CST) == 0;
}

#ifdef __cplusplus
}
#endif

#include "tracec/abi/hints_end.h"

#endif /* TRACEC_ABI_BUFFER_ABI_H */
