/*
 * tracec/buffer.h - trace buffers: rocprofiler-sdk's buffered services with
 * Fuchsia's buffering modes.  docs/buffers.md explains the model, the memory
 * layout, the no-split rule and the thread-safety contract in full.
 *
 *     tracec_context_id_t ctx;    tracec_create_context(&ctx);
 *     tracec_buffer_id_t buf;
 *     tracec_create_buffer(ctx, 64 * 1024, 48 * 1024, TRACEC_BUFFER_POLICY_LOSSLESS,
 *                          on_records, user_data, &buf);          // STREAMING
 *     tracec_start_context(ctx);
 *     tracec_buffer_emit(buf, TRACEC_BUFFER_CATEGORY_USER, 7, &rec, sizeof rec);
 *     tracec_flush_buffer(buf);                                   // delivered on return
 *     tracec_stop_context(ctx);
 *
 * Sizes and watermarks count payload bytes: a record is charged its payload
 * size rounded up to 8 (payloads are 8-byte aligned).  For example, a
 * 4096-byte buffer with a 48-byte watermark takes six 8-byte records before
 * its callback runs, and every 64-byte record triggers a delivery.  TracePackets written through a tracec_buffer_writer are
 * charged by the chunk (see docs/buffers.md).
 *
 * Mode and policy:
 *
 *   mode       policy         a record that does not fit        delivered
 *   STREAMING  LOSSLESS       switch halves; wait if the other   half switch, watermark,
 *                             half is still being delivered      flush, stop, exit
 *   STREAMING  DISCARD        dropped and counted until a flush  same
 *   ONESHOT    (DISCARD)      dropped and counted; first kept    flush, stop, exit
 *   CIRCULAR   (overwrite)    oldest non-durable overwritten     flush, stop, exit
 *
 * Statuses of an emit: SUCCESS (accepted; it will be delivered exactly
 * once), BUFFER_FULL or WOULD_DEADLOCK (dropped AND counted in drop_count),
 * CLOSED (context not started / stopped / finalized; not counted),
 * RECORD_TOO_LARGE (can never fit; not counted), INVALID_ARGUMENT,
 * BUFFER_NOT_FOUND.
 */
#ifndef TRACEC_BUFFER_H
#define TRACEC_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/context.h"
#include "tracec/service.h"
#include "tracec/status.h"
#include "tracec/writer.h"
#include "tracec/abi/buffer_abi.h"
#include "tracec/abi/hints.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEC_MAX_BUFFERS 1024u          /* buffers alive at once (destroyed ones do not count) */
#define TRACEC_MAX_CALLBACK_THREADS 64u
#define TRACEC_MAX_BUFFER_SIZE (1ull << 30) /* payload bytes per half */

typedef struct tracec_callback_thread_t {
    uint64_t handle;
} tracec_callback_thread_t;

typedef enum tracec_buffer_policy_t {
    TRACEC_BUFFER_POLICY_NONE = 0, /* only for ONESHOT / CIRCULAR, whose policy is implied */
    TRACEC_BUFFER_POLICY_DISCARD = 1,
    TRACEC_BUFFER_POLICY_LOSSLESS = 2,
    TRACEC_BUFFER_POLICY_LAST
} tracec_buffer_policy_t;

/* Fuchsia's BufferingMode, same values. */
typedef enum tracec_buffering_mode_t {
    TRACEC_BUFFERING_MODE_DEFAULT = 0, /* STREAMING */
    TRACEC_BUFFERING_MODE_ONESHOT = 1,
    TRACEC_BUFFERING_MODE_CIRCULAR = 2,
    TRACEC_BUFFERING_MODE_STREAMING = 3,
    TRACEC_BUFFERING_MODE_LAST
} tracec_buffering_mode_t;

/* One delivered record.  `payload` points into the buffer and is valid only
   during the callback; it is 8-byte aligned. */
typedef struct tracec_record_header_t {
    uint32_t category; /* tracec_buffer_category_t or the application's own */
    uint32_t kind;     /* tracec_buffer_tracing_kind_t when category is TRACING */
    void *payload;
    size_t size; /* payload bytes */
} tracec_record_header_t;

/*
 * Delivery callback: `num_headers` records, oldest first (a delivery of many
 * records may arrive in several calls).  `drop_count` is the number of
 * records lost (dropped or overwritten) since the buffer was created, as
 * counted when the delivery began (tracec_query_buffer_stats: now).
 * Runs on the buffer's callback thread, never on a producer.
 */
typedef void (*tracec_buffer_tracing_cb_t)(tracec_context_id_t context, tracec_buffer_id_t buffer_id,
                                           tracec_record_header_t **headers, size_t num_headers,
                                           void *data, uint64_t drop_count);

/*
 * Handoff: the delivery of a buffer whose memory is a memfd read by another
 * process (TRACEC_BUFFER_MEMORY_MEMFD with `handoff` set; see
 * tracec/abi/shm_layout.h and docs/buffers.md, "Handing regions to a
 * reader").  Instead of walking the records, the buffer hands a region of
 * the memfd to the reader: `region` is a half (0 or 1) or
 * TRACEC_BUFFER_REGION_DURABLE; its bytes [0, extent) are complete blocks
 * of generation `gen` (the region's words in the memfd header say the same:
 * `extent` and `blocks` are stored, then `handed` = HANDED with a release
 * store, before this runs).  A region may be handed again with the same
 * gen and a larger extent (a flush hands the prefix of the active half; a
 * switch then hands the whole half): the reader saves what it has not saved
 * yet.  The reader owes one tracec_buffer_region_saved(region, gen) per
 * handoff; a STREAMING half is not written again until it got all of them.
 * Runs on the buffer's callback thread (as a callback does), without any
 * lock of the buffer held, so it may call tracec_buffer_region_saved.
 */
typedef void (*tracec_buffer_handoff_cb_t)(tracec_buffer_id_t buffer_id, uint32_t region, uint64_t gen,
                                           uint32_t extent, void *data);

#define TRACEC_BUFFER_REGION_DURABLE 2u /* a handoff's region: 0, 1 the halves; 2 the durable part */
#define TRACEC_BUFFER_MAX_WAIT_DEFAULT_MS 10u /* a handoff buffer's max_wait_ms when it is 0 */

/* Full configuration; tracec_create_buffer() is STREAMING with durable_size 0. */
typedef struct tracec_buffer_config_t {
    tracec_buffering_mode_t mode;
    tracec_buffer_policy_t policy;
    size_t size;         /* payload bytes per half, rounded up to the page size; > 0 */
    size_t watermark;    /* 0..size; STREAMING only (ignored otherwise) */
    size_t durable_size; /* ONESHOT/CIRCULAR durable part; 0 = size/16 (at least a page) */
    tracec_buffer_tracing_cb_t callback; /* required, unless `handoff` is set (then NULL) */
    void *callback_data;
    /*
     * Where the halves and the durable part live: process memory (0, the
     * default), or TRACEC_BUFFER_MEMORY_MEMFD: the memfd `memory_fd`, which
     * holds at least tracec_buffer_memory_size() bytes and is sealed against
     * shrinking (F_SEAL_SHRINK), so that no one can truncate it under the
     * writers.  The buffer maps it shared (not into fork children) for its
     * lifetime; the caller may close its descriptor once the create returns.
     * Another process that maps the same memfd sees the records as they are
     * written, behind a header page: tracec/abi/shm_layout.h (installed, not
     * a user API) is the layout.
     */
    uint32_t memory;
    int memory_fd;
    /*
     * Handoff delivery instead of `callback` (which must then be NULL); only
     * with TRACEC_BUFFER_MEMORY_MEMFD.  What is handed when:
     *   STREAMING: a half when it is full (the writers switch to the other
     *     half), at a watermark crossing (the halves are switched if the
     *     other one is free) and at stop; a flush hands the active half's
     *     completed prefix
     *     (its chunks are taken from the writers, who continue in new ones)
     *     and switches nothing.  A handed half is not written again until
     *     the reader saved it: writers that need it meanwhile wait (LOSSLESS,
     *     up to max_wait_ms, then the packet is dropped and counted) or drop
     *     and count at once (DISCARD).
     *   ONESHOT, CIRCULAR: nothing until a flush or stop; then each half and
     *     the durable part that has something new is handed, and the writers
     *     go on without waiting (a CIRCULAR wrap still overwrites the oldest
     *     half: its gen advances first, so a reader's copy check sees it).
     * A stop hands what is left and releases every waiting writer (CLOSED).
     */
    tracec_buffer_handoff_cb_t handoff;
    void *handoff_data;
    /*
     * The longest a LOSSLESS writer waits for room (for a delivery or a
     * reader to free the other half), in milliseconds; past it the record or
     * packet is dropped (BUFFER_FULL, counted in `dropped`), and until a half
     * is freed again the writers drop at once instead of waiting again, so a
     * reader that never saves costs one wait, not one per packet.  0: no cap
     * with `callback` delivery (the buffer's own delivery always frees the
     * half), TRACEC_BUFFER_MAX_WAIT_DEFAULT_MS with `handoff`.
     */
    uint32_t max_wait_ms;
} tracec_buffer_config_t;

#define TRACEC_BUFFER_MEMORY_PROCESS 0u
#define TRACEC_BUFFER_MEMORY_MEMFD 1u

#define TRACEC_BUFFER_CONFIG_INIT                                                                                  \
    {TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0, 0, 0, NULL, NULL, TRACEC_BUFFER_MEMORY_PROCESS, \
     -1, NULL, NULL, 0}

/*
 * The bytes a memfd must hold for a buffer of this mode, size and durable
 * size (as in tracec_buffer_config_t), the header page included; 0 for a
 * bad mode or a size over the limit.
 */
size_t tracec_buffer_memory_size(tracec_buffering_mode_t mode, size_t size, size_t durable_size);

/*
 * rocprofiler's signature.  size is rounded up to sysconf(_SC_PAGESIZE).
 * INVALID_ARGUMENT: size 0, watermark > size, NULL callback or id, bad
 * policy.  CONTEXT_NOT_FOUND, LIMIT_EXCEEDED (size > 1 GiB, too many
 * buffers), OUT_OF_MEMORY, BAD_STATE after finalize.
 */
tracec_status_t tracec_create_buffer(tracec_context_id_t context, size_t size, size_t watermark,
                                     tracec_buffer_policy_t policy, tracec_buffer_tracing_cb_t callback,
                                     void *callback_data, tracec_buffer_id_t *buffer_id) TRACEC_I_WARN_UNUSED;

/*
 * As above with a mode; UNSUPPORTED for ONESHOT/CIRCULAR with LOSSLESS.
 * With TRACEC_BUFFER_MEMORY_MEMFD: INVALID_ARGUMENT when `memory_fd` is not
 * a memfd, is smaller than tracec_buffer_memory_size(), or is not sealed
 * against shrinking; OUT_OF_MEMORY when it cannot be mapped.
 * INVALID_ARGUMENT for `handoff` with process memory or with `callback`.
 */
tracec_status_t tracec_create_buffer_with_config(tracec_context_id_t context,
                                                 const tracec_buffer_config_t *config,
                                                 tracec_buffer_id_t *buffer_id) TRACEC_I_WARN_UNUSED;

/*
 * Delivers what is left, then frees the buffer.  Later calls with the id
 * return BUFFER_NOT_FOUND; no callback runs after this returns.
 * WOULD_DEADLOCK from the buffer's own callback thread.
 */
tracec_status_t tracec_destroy_buffer(tracec_buffer_id_t buffer_id);

/*
 * Delivers everything emitted (and every packet ended) before the call and
 * returns after the callback (or the handoff) has returned.  WOULD_DEADLOCK (nothing done)
 * when called from any callback thread: use the async form there.
 */
tracec_status_t tracec_flush_buffer(tracec_buffer_id_t buffer_id);

/* Requests a delivery and returns at once. */
tracec_status_t tracec_flush_buffer_async(tracec_buffer_id_t buffer_id);

/*
 * The reader saved region `region` (0, 1, TRACEC_BUFFER_REGION_DURABLE) of
 * generation `gen` that a handoff gave it (one call per handoff).  When the
 * last handoff of a STREAMING half is saved, the half is free again: its gen
 * advances and writers waiting for room go on.  Any thread, callback
 * threads and the handoff itself included.  A call that does not match a
 * handoff still owed, a wrong gen (the region was reset meanwhile: a
 * CIRCULAR wrap or a start that cleared it), a region handed no more times
 * than it was saved, a region the buffer does not have, or a buffer without
 * handoff, changes nothing and is counted in
 * tracec_buffer_stats_t.saves_ignored: BAD_STATE (INVALID_ARGUMENT for a
 * region the buffer does not have).  BUFFER_NOT_FOUND.
 */
tracec_status_t tracec_buffer_region_saved(tracec_buffer_id_t buffer_id, uint32_t region, uint64_t gen);

/*
 * Counts `n` packets a layer above the buffer lost before they reached it
 * (the track-event layer's dropped events) among the buffer's `refused`,
 * so its statistics and, for a buffer shared with a recorder, the
 * recorder's trace count them (in the shared header at once).  Any thread
 * (it takes the buffer's lock).  CLOSED, not counted, once the buffer has
 * stopped: what a stop delivers has the run's final counts.
 * BUFFER_NOT_FOUND.
 */
tracec_status_t tracec_buffer_count_lost(tracec_buffer_id_t buffer_id, uint64_t n);

/*
 * A new dedicated callback thread.  LIMIT_EXCEEDED, BAD_STATE after finalize.
 * Callback threads (this one and the default one) ask the kernel for a
 * 100 us scheduler slice so that they run soon after a producer wakes them
 * (Linux 6.6+; policy, nice value and CPU share unchanged);
 * TRACEC_CALLBACK_SLICE_US in the environment sets it in microseconds, 0
 * turns it off.  See docs/buffers.md.
 */
tracec_status_t tracec_create_callback_thread(tracec_callback_thread_t *cb_thread_id) TRACEC_I_WARN_UNUSED;

/*
 * Delivers `buffer_id` on `cb_thread_id` from now on (waits for a delivery
 * in progress on the old thread).  BUFFER_NOT_FOUND, THREAD_NOT_FOUND.
 */
tracec_status_t tracec_assign_callback_thread(tracec_buffer_id_t buffer_id,
                                              tracec_callback_thread_t cb_thread_id);

/*
 * Appends one record (copied).  Thread-safe, lock-free unless the record
 * does not fit.  See the top of this file for the statuses; size 0 or
 * payload NULL is INVALID_ARGUMENT.
 */
tracec_status_t tracec_buffer_emit(tracec_buffer_id_t buffer_id, uint32_t category, uint32_t kind,
                                   const void *payload, size_t size) TRACEC_I_WARN_UNUSED;

/*
 * Counters, cumulative since the buffer was created (a fork child starts
 * from 0).  Every record or packet that was offered ends in exactly one
 * of delivered, dropped, overwritten or refused, or is still waiting for a
 * delivery; once a flush (or stop) returned with no packet open:
 *
 *     delivered + dropped + overwritten + refused
 *         = records emitted (except CLOSED and argument errors)
 *         + packets begun (begin on an initialised writer of an accepting
 *           buffer)
 *
 * (tests/buffer/test_misuse.c checks it under random misuse).
 */
typedef struct tracec_buffer_stats_t {
    /* Records emitted (tracec_buffer_emit, tracec_service_emit) and packets
       ended (tracec_buffer_end_packet, fast and slow path, durable or not)
       with SUCCESS.  Packets still in a writer's chunk are included. */
    uint64_t accepted;
    /* Refused for lack of room: BUFFER_FULL (DISCARD, ONESHOT full, durable
       part full), WOULD_DEADLOCK (a wait on a callback thread or with
       another packet open), OUT_OF_MEMORY (grow()'s scratch buffer).  Only
       policy decisions, so DISCARD's accounting is exact. */
    uint64_t dropped;
    /* CIRCULAR: accepted records overwritten by wrap-around before any
       delivery saw them. */
    uint64_t overwritten;
    /* Records handed to the callback (each exactly once). */
    uint64_t delivered;
    /* Callback invocations. */
    uint64_t deliveries;
    /* Watermark crossings that requested a delivery (STREAMING). */
    uint64_t watermark_requests;
    /* STREAMING half switches / CIRCULAR wraps. */
    uint64_t half_switches;
    /* LOSSLESS: times a producer waited for a half to be delivered. */
    uint64_t producer_waits;
    /* Packets begun and lost to anything but room: the writer's error at the
       end (NESTING_MISMATCH, MESSAGE_TOO_LARGE, RECORD_TOO_LARGE), the
       context stopping under an open packet that needed a new chunk
       (CLOSED), a packet open when another begins on its writer,
       a packet left open when its writer was released, its thread exited
       or the process called exit().  docs/buffers.md, "Misuse". */
    uint64_t refused;
    /* Handoff: tracec_buffer_region_saved calls that matched no handoff owed
       (ignored).  `deliveries` counts the handoffs; `delivered` stays 0 (the
       reader counts what it saved). */
    uint64_t saves_ignored;
} tracec_buffer_stats_t;

tracec_status_t tracec_query_buffer_stats(tracec_buffer_id_t buffer_id, tracec_buffer_stats_t *stats) TRACEC_I_WARN_UNUSED;

/* The buffer's interning epoch: it changes whenever durable contents are
   cleared (CLEAR_ENTIRE, fork child).  Cache interned indices with it. */
tracec_status_t tracec_buffer_epoch(tracec_buffer_id_t buffer_id, uint64_t *epoch) TRACEC_I_WARN_UNUSED;

/* ---- Writing TracePackets directly into a buffer ------------------------ */

/*
 * A per-thread writer for one buffer (caller-owned storage; never share one
 * between threads, never move it while initialized).  Packets are written
 * straight into the buffer: the writer holds a chunk of the active half,
 * reserved with one atomic operation, and fills it without locks.  Its
 * state is the runtime's: bound to the thread that first begins a packet
 * with it, and released when that thread exits if the thread did not call
 * tracec_buffer_writer_release (committed packets are delivered; a packet
 * left open is counted in `refused`).  docs/buffers.md, "Misuse", lists
 * what each mistake does.
 *
 *     tracec_buffer_writer bw;                    // per thread, long-lived
 *     tracec_buffer_writer_init(&bw, buf, 0);
 *     ...
 *     tracec_writer w;                            // per packet, a local
 *     perfetto_protos_TracePacket pkt;            // or a raw tracec_msg
 *     tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING,
 *                                TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt.msg);
 *     ... setters ...
 *     tracec_status_t s = tracec_buffer_end_packet(&bw, &w, &pkt.msg);
 *     ...
 *     tracec_buffer_writer_release(&bw);          // before freeing `bw`
 *
 * Each delivered payload is one `Trace.packet` record: 0x0A, the minimal
 * varint length, the TracePacket bytes, so payloads concatenate into a
 * .pftrace.
 * A packet is never split: when it outgrows its chunk, grow() moves the
 * partial packet to a new chunk (see docs/buffers.md).
 */
/* The runtime's per-writer state, tracec_i_wstate, is in tracec/abi/buffer_abi.h (internal). */

/* A writer: the packet window, and a reference to runtime-owned state, so
   nothing the runtime keeps points into the caller's storage. */
typedef struct tracec_buffer_writer {
    tracec_writer w;        /* the window the out-of-line paths set up */
    tracec_i_wstate *i_ws;  /* runtime-owned; never NULL after init */
    uint64_t i_gen;         /* i_ws->gen when it was given to this writer */
    uint64_t i_handle;      /* the buffer */
    uint32_t i_reserve;     /* as passed to init (0 = default) */
} tracec_buffer_writer;

/*
 * `reserve`: room guaranteed before each packet begins (0 = 256 bytes).
 * Packets up to `reserve` bytes never need a second chunk.  A bigger packet
 * is moved to a bigger chunk when it outgrows its own (grow()); in
 * STREAMING LOSSLESS, when no chunk can be had, grow() copies the partial
 * packet aside, gives the chunk back and waits for room, so no packet is
 * dropped for room (on a callback thread it is refused with WOULD_DEADLOCK
 * and counted; in the other modes it is dropped and counted).
 * BUFFER_NOT_FOUND, RECORD_TOO_LARGE (reserve larger than a chunk), INVALID_ARGUMENT.
 */
tracec_status_t tracec_buffer_writer_init(tracec_buffer_writer *bw, tracec_buffer_id_t buffer_id,
                                          size_t reserve) TRACEC_I_WARN_UNUSED;

/* ---- internals the inline packet functions call (do not use directly) ---- */
void tracec_i_buffer_begin(tracec_buffer_writer *bw, uint32_t category, uint32_t kind);
tracec_status_t tracec_i_buffer_commit(tracec_buffer_writer *bw, int unended, uint32_t size_off, uint32_t parent);

/*
 * True when a packet of (category, kind) can never be durable: STREAMING
 * buffers have no durable part, and only category TRACING with a durable
 * kind is (the built-in kinds 0..5 have fixed flags: 2, 3 and 4 are
 * durable; any other kind is left to the out-of-line path).
 */
static inline TRACEC_I_ALWAYS_INLINE int tracec_i_buffer_never_durable(const tracec_i_wstate *ws, uint32_t category,
                                                                       uint32_t kind) {
    return ws->streaming || category != (uint32_t)TRACEC_BUFFER_CATEGORY_TRACING ||
           (kind <= (uint32_t)TRACEC_BUFFER_TRACING_USER && ((0x23u >> kind) & 1u) != 0);
}

/* A prefetch of `p`'s line for writing (PREFETCHW: a no-op on x86-64 CPUs that lack it). */
static inline TRACEC_I_ALWAYS_INLINE void tracec_i_prefetch_for_write(const void *p) {
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/*
 * Opens `packet` (the `msg` of a generated TracePacket writer, or a raw
 * tracec_msg), written through `w`: caller-owned, uninitialised, best a
 * local variable of the function that writes the packet, so the compiler
 * keeps its write pointer in a register.
 *
 * Fast path (inline): the writer holds a chunk with `reserve` bytes left,
 * no packet is open, the packet cannot be durable, and after announcing the
 * packet (busy = 1) the chunk is found not stolen.  Otherwise the
 * out-of-line path sets the window up in `bw->w` and it is copied here.
 */
static inline void tracec_buffer_begin_packet(tracec_buffer_writer *bw, tracec_writer *w,
                                              uint32_t category, uint32_t kind, tracec_msg *packet) {
    tracec_i_wstate *ws = bw->i_ws;
    if (TRACEC_I_LIKELY(ws->gen == bw->i_gen && ws->in_packet == 0 && ws->body_size - ws->used >= ws->reserve &&
                        tracec_i_buffer_never_durable(ws, category, kind))) {
        /* Dekker with the delivery: announce, then look (see docs/buffers.md). */
        if (TRACEC_I_LIKELY(tracec_i_announce(ws))) {
            uint8_t *base = ws->body + ws->used;
            /* Asks for the chunk's line 512 bytes on for writing: the delivery thread, often on another
               core, read it last, and a line taken back only when written costs the writer a round trip. */
            if (ws->body_size - ws->used > 512u) tracec_i_prefetch_for_write(base + 512);
            ws->in_packet = 1;
            ws->category = category;
            ws->kind = kind;
            tracec_i_mark_open(base);
            w->base = base;
            w->ptr = base + TRACEC_I_BLK_HDR; /* the record header, back-filled at the end */
            w->end = ws->body + ws->body_size;
            w->grow = bw->w.grow;
            w->sink = bw;
            w->status = TRACEC_STATUS_SUCCESS;
            goto opened;
        }
        __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    }
    tracec_i_buffer_begin(bw, category, kind);
    w->ptr = bw->w.ptr;
    w->end = bw->w.end;
    w->base = bw->w.base;
    w->grow = bw->w.grow;
    w->sink = bw->w.sink;
    w->status = bw->w.status;
opened:
    tracec_writer_begin_packet(w, packet);
}

/*
 * Ends the packet.  SUCCESS: accepted.  BUFFER_FULL / WOULD_DEADLOCK /
 * OUT_OF_MEMORY: dropped, counted in `dropped`.  CLOSED (the context stopped
 * under it), RECORD_TOO_LARGE, MESSAGE_TOO_LARGE, NESTING_MISMATCH: counted
 * in `refused`.  BAD_STATE: no packet open on `w` (ended twice, never
 * begun, or abandoned by a later begin on the writer: counted there), or
 * `packet` was not begun on `w`; the packet open on the writer, if any, is
 * untouched.  A begin that failed ends with its status (CLOSED,
 * BUFFER_NOT_FOUND: not counted; BUFFER_FULL: counted).  INVALID_ARGUMENT
 * for NULL arguments.
 *
 * Fast path (inline): a healthy packet in the chunk gets its record header
 * back-filled, the chunk's committed length is stored, and busy is cleared
 * with a release store.
 */
static inline tracec_status_t tracec_buffer_end_packet(tracec_buffer_writer *bw, tracec_writer *w,
                                                       tracec_msg *packet) {
    tracec_status_t st;
    tracec_i_wstate *ws;
    if (bw == NULL || w == NULL || packet == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (packet->w != w) return TRACEC_STATUS_BAD_STATE;
    ws = bw->i_ws;
    /* The packet open in the writer's chunk, ended through its own window. */
    /* Compared as integers: a writer of a failed begin has no chunk (body NULL). */
    if (TRACEC_I_LIKELY(ws->in_packet == 1 && (uintptr_t)w->base == (uintptr_t)ws->body + ws->used)) {
        st = tracec_writer_end_packet(w, packet);
        if (TRACEC_I_LIKELY(st == TRACEC_STATUS_SUCCESS)) {
            /* The record header, back-filled. */
            tracec_i_blk rec;
            rec.size = (uint32_t)(w->ptr - w->base) - TRACEC_I_BLK_HDR;
            rec.body = (uint32_t)TRACEC_I_BLK_BODY(rec.size);
            rec.category = ws->category;
            rec.kind = ws->kind;
            memcpy(w->base, &rec, sizeof rec);
            uint8_t *next = w->base + TRACEC_I_BLK_HDR + rec.body;
            ws->used = (uint32_t)(next - ws->body);
            ws->in_packet = 0;
            __atomic_store_n(&ws->packets, ws->packets + 1u, __ATOMIC_RELAXED);
            /* the chunk's committed length, after the bytes it covers (a salvage reads it under writers) */
            __atomic_store_n(&tracec_i_chunk_header(ws)->committed, ws->used, __ATOMIC_RELEASE);
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
            return TRACEC_STATUS_SUCCESS;
        }
        bw->w.ptr = w->ptr;
        bw->w.end = w->end;
        bw->w.base = w->base;
        bw->w.status = st;
        bw->w.top = w->top;
        return tracec_i_buffer_commit(bw, 0, 0, 0);
    }
    /* Durable, parked by grow(), failed at begin, or not the open packet's window
       (ended twice, abandoned): decided out of line before anything is written
       through the window, which is copied (so `w` stays the caller's). */
    bw->w.ptr = w->ptr;
    bw->w.end = w->end;
    bw->w.base = w->base;
    bw->w.status = w->status;
    bw->w.top = w->top;
    return tracec_i_buffer_commit(bw, 1, packet->size_off, packet->parent);
}

/* Gives the writer's chunk back (its unused tail becomes padding) and unregisters it. */
void tracec_buffer_writer_release(tracec_buffer_writer *bw);

#ifdef __cplusplus
}
#endif

#include "tracec/abi/hints_end.h"

#endif /* TRACEC_BUFFER_H */
