/*
 * packet_writer.c - tracec_buffer_writer: the out-of-line begin and end of
 * the inline fast path (tracec/buffer.h), chunks, and grow().
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* syscall() */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffer_internal.h"

/* ---- the packet writer ---------------------------------------------------- */

/*
 * Asks for a chunk's lines for writing.  The delivery thread, often on
 * another core, read them last: without this, packets written into the chunk
 * wait for one line after another.  PREFETCHW is a no-op on x86-64 CPUs that
 * lack it.  Called after the buffer's mutex is let go: a chunk's requests
 * that miss take microseconds, and a writer waiting for the mutex that long
 * stops spinning and sleeps.
 */
static inline void prefetch_chunk(uint8_t *p, uint32_t n) {
    for (uint8_t *e = p + n; p < e; p += 256) {
#if defined(__x86_64__)
        __asm__ volatile("prefetchw (%0)\n\tprefetchw 64(%0)\n\tprefetchw 128(%0)\n\tprefetchw 192(%0)" ::"r"(p));
#else
        __builtin_prefetch(p, 1, 3);
        __builtin_prefetch(p + 64, 1, 3);
        __builtin_prefetch(p + 128, 1, 3);
        __builtin_prefetch(p + 192, 1, 3);
#endif
    }
}

/*
 * Gives `ws` a new chunk with at least `min_body` bytes.  Called with mu
 * held.  In grow(), the partial packet [base, base + partial) is copied into
 * it before the writer's fields change, so a deliverer that sees the new
 * half also sees the copy done.
 */
static int acquire_chunk(tracec_i_buffer *b, tracec_i_wstate *ws, uint32_t min_body, bool in_grow,
                         const uint8_t *partial_src, size_t partial) {
    struct timespec deadline = {0, 0};
    for (;;) {
        if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
        int h = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        tracec_i_half *hf = &b->half[h];
        uint32_t want = (uint32_t)b->chunk > min_body ? (uint32_t)b->chunk : min_body;
        /* grow(): half the packet again of headroom if the half has it, so the
           setters (and nested lengths widening at their ends) that follow do
           not take a chunk each; tracec_i_try_reserve() settles for min_body. */
        if (partial > 0 && want - min_body < partial / 2u)
            want = (uint32_t)TRACEC_I_BLK_BODY((size_t)min_body + partial / 2u);
        uint64_t old;
        bool sealed;
        tracec_i_blk *blk = tracec_i_try_reserve(b, hf, want, min_body, &old, &sealed);
        if (blk != NULL) {
            blk->size = TRACEC_I_CHUNK_MARK;
            __atomic_store_n(&blk->committed, 0u, __ATOMIC_RELAXED);
            blk->kind = TRACEC_SHM_CHUNK_TAG(hf->gen); /* the half's generation (hf->gen: under mu) */
            uint8_t *body = (uint8_t *)(blk + 1);
            if (partial) memcpy(body, partial_src, partial);
            tracec_i_publish(hf);
            ws->blk = blk;
            ws->body = body;
            ws->body_size = blk->body;
            ws->used = 0;
            __atomic_store_n(&ws->stolen, 0u, __ATOMIC_RELAXED);
            __atomic_store_n(&ws->busy, 1u, __ATOMIC_SEQ_CST);
            __atomic_store_n(&ws->half, h, __ATOMIC_RELEASE);
            tracec_i_watermark_check(b, TRACEC_I_CHARGED(old), (uint64_t)TRACEC_I_CHARGED(old) + blk->body);
            return TRACEC_STATUS_SUCCESS;
        }
        int r = tracec_i_make_room(b, h, min_body, ws, in_grow, &deadline);
        if (r != TRACEC_I_RETRY) return r;
    }
}

static bool buffer_grow(tracec_writer *w, size_t need);

static uint8_t nowhere[8]; /* the window of a packet that could not begin */

static void writer_fail_window(tracec_buffer_writer *bw, tracec_status_t st) {
    tracec_writer *w = &bw->w;
    w->base = w->ptr = w->end = nowhere;
    w->status = st;
    w->top = TRACEC_I_ROOT;
}

/*
 * True when `base` is the base of the packet open on `ws` (in its chunk,
 * in the durable part, or parked in the scratch buffer by grow()): a window
 * with another base belongs to a packet that already ended, or to another
 * writer, and must not touch the open packet.  The scratch buffer is the
 * open packet's window only while that packet is parked (the writer holds
 * no chunk): a packet whose park failed keeps the scratch as its window
 * after it is ended or abandoned, and the next packet opens in a chunk.
 */
static bool is_open_window(const tracec_i_wstate *ws, const uint8_t *base) {
    if (ws->in_packet == 2) return base == ws->b->dmem + atomic_load_explicit(&ws->b->doff, memory_order_relaxed);
    if (ws->in_packet != 1) return false;
    if (ws->body != NULL) return base == ws->body + ws->used;
    return ws->scratch != NULL && base == ws->scratch;
}

/* A fresh state for `bw` on buffer `b`, in b's writer list. */
static tracec_status_t state_attach(tracec_buffer_writer *bw, tracec_i_buffer *b) {
    size_t reserve = bw->i_reserve ? bw->i_reserve : TRACEC_I_DEFAULT_RESERVE;
    reserve = TRACEC_I_BLK_BODY(reserve) + TRACEC_I_BLK_HDR + 8u;
    if (reserve > b->chunk) return TRACEC_STATUS_RECORD_TOO_LARGE;
    tracec_i_wstate *ws = tracec_i_state_alloc();
    if (ws == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
    ws->reserve = (uint32_t)reserve;
    ws->handle = b->handle;
    ws->streaming = b->mode == TRACEC_BUFFERING_MODE_STREAMING;
    ws->asym = (uint8_t)b->asym;
    tracec_i_lock(&b->mu);
    ws->b = b;
    ws->next = b->writers;
    b->writers = ws;
    /* The state uses b until it is detached: b is not reused meanwhile (the caller holds it). */
    atomic_fetch_add_explicit(&b->users, 1, memory_order_relaxed);
    tracec_i_unlock(&b->mu);
    bw->i_ws = ws;
    bw->i_gen = ws->gen;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_buffer_writer_init(tracec_buffer_writer *bw, tracec_buffer_id_t buffer_id, size_t reserve) {
    if (bw == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    memset(bw, 0, sizeof *bw);
    bw->i_ws = &tracec_i_no_writer;
    writer_fail_window(bw, TRACEC_STATUS_BAD_STATE);
    bw->w.grow = buffer_grow;
    bw->w.sink = bw;
    if (reserve > UINT32_MAX / 2u) return TRACEC_STATUS_RECORD_TOO_LARGE;
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    bw->i_reserve = (uint32_t)reserve;
    tracec_status_t st = state_attach(bw, b);
    tracec_i_buffer_put(b);
    if (st == TRACEC_STATUS_SUCCESS) bw->i_handle = buffer_id.handle;
    return st;
}

/* The writer's state if it is still its own (not released at its thread's exit), else NULL. */
static tracec_i_wstate *own_state(const tracec_buffer_writer *bw) {
    tracec_i_wstate *ws = bw->i_ws;
    return ws != NULL && ws != &tracec_i_no_writer && ws->gen == bw->i_gen ? ws : NULL;
}

void tracec_buffer_writer_release(tracec_buffer_writer *bw) {
    if (bw == NULL) return;
    tracec_i_wstate *ws = own_state(bw);
    if (ws != NULL) {
        tracec_i_lock(&tracec_i_pool_mu);
        ws->owner = NULL;
        tracec_i_unlock(&tracec_i_pool_mu);
        if (tracec_i_state_detach(ws)) tracec_i_state_free(ws);
    }
    bw->i_ws = &tracec_i_no_writer;
    bw->i_gen = 0;
    bw->i_handle = 0;
    writer_fail_window(bw, TRACEC_STATUS_BAD_STATE);
}

/* A fresh packet window in bw->w: [base, base + header) is the record header. */
static void open_window(tracec_writer *w) {
    w->status = TRACEC_STATUS_SUCCESS;
    w->top = TRACEC_I_ROOT;
}

void tracec_i_buffer_begin(tracec_buffer_writer *bw, uint32_t category, uint32_t kind) {
    tracec_i_wstate *ws = own_state(bw);
    tracec_writer *w = &bw->w;
    if (ws == NULL) {
        /* Never initialized, released, or released when its thread exited: re-armed in the last case. */
        tracec_i_buffer *nb = tracec_i_buffer_get(bw->i_handle);
        if (nb == NULL) {
            writer_fail_window(bw, TRACEC_STATUS_BUFFER_NOT_FOUND);
            return;
        }
        tracec_status_t ast = state_attach(bw, nb);
        tracec_i_buffer_put(nb);
        if (ast != TRACEC_STATUS_SUCCESS) {
            writer_fail_window(bw, ast);
            return;
        }
        ws = bw->i_ws;
    }
    if (ws->owner == NULL) tracec_i_state_bind(ws);
    bool fresh_chunk = false;
    const uint8_t *abandoned = NULL;
    if (ws->in_packet == 1 || ws->in_packet == 2) {
        /*
         * A second begin while a packet is open.  The runtime cannot tell
         * whether the open packet's tracec_writer still exists: with one
         * writer begun twice (a missing end, the usual case) its window is
         * being overwritten, and a packet nobody can end would hold its
         * chunk busy, and every delivery of its half, forever.  So the open
         * packet is abandoned (counted in `refused`) and this one begins, in
         * a fresh chunk: an end through the old window then finds a base
         * that is not the open packet's and is BAD_STATE, touching nothing.
         */
        if (ws->in_packet == 1 && ws->body != NULL) abandoned = ws->body + ws->used;
        tracec_i_abandon_packet(ws);
        fresh_chunk = true;
    }
    tracec_i_buffer *b = ws->b;
    /* Destroyed (the state keeps b from being reused for another buffer until it is detached). */
    if (b == NULL || atomic_load_explicit(&b->live, memory_order_acquire) != ws->handle) {
        writer_fail_window(bw, TRACEC_STATUS_BUFFER_NOT_FOUND);
        return;
    }
    if (!atomic_load_explicit(&b->accepting, memory_order_relaxed)) {
        writer_fail_window(bw, TRACEC_STATUS_CLOSED);
        return;
    }
    ws->category = category;
    ws->kind = kind;
    if (tracec_i_is_durable(b, category, kind)) {
        tracec_i_lock(&b->dmu);
        if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
            tracec_i_unlock(&b->dmu);
            writer_fail_window(bw, TRACEC_STATUS_CLOSED);
            return;
        }
        size_t off = atomic_load_explicit(&b->doff, memory_order_relaxed);
        w->base = b->dmem + off;
        w->ptr = w->base + TRACEC_I_BLK_HDR;
        w->end = b->dmem + b->durable_cap;
        if (w->ptr > w->end) w->ptr = w->end;
        ws->in_packet = 2;
        tracec_i_durable_mark(b, true);
        open_window(w);
        return;
    }
    bool fresh = fresh_chunk || ws->blk == NULL || __atomic_load_n(&ws->stolen, __ATOMIC_RELAXED) ||
                 ws->body_size - ws->used < ws->reserve;
    if (!fresh && !tracec_i_announce(ws)) {
        __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
        fresh = true;
    }
    if (fresh) {
        tracec_status_t fst;
        if (tracec_i_full_drop(b, ws, ws->reserve, &fst)) {
            writer_fail_window(bw, fst);
            return;
        }
        tracec_i_lock(&b->mu);
        tracec_status_t st = (tracec_status_t)acquire_chunk(b, ws, ws->reserve, false, NULL, 0);
        /* The abandoned window must never be the new packet's (a reused half can put the
           new chunk where the old one was): then one more chunk, further on (again if a
           wait for room let the half be reused once more). */
        while (st == TRACEC_STATUS_SUCCESS && ws->body + ws->used == abandoned) {
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE); /* nothing open in that chunk while this may wait */
            st = (tracec_status_t)acquire_chunk(b, ws, ws->reserve, false, NULL, 0);
        }
        tracec_i_unlock(&b->mu);
        if (st != TRACEC_STATUS_SUCCESS) {
            writer_fail_window(bw, st);
            return;
        }
        prefetch_chunk(ws->body, ws->body_size);
    }
    w->base = ws->body + ws->used;
    w->ptr = w->base + TRACEC_I_BLK_HDR;
    w->end = ws->body + ws->body_size;
    ws->in_packet = 1;
    tracec_i_mark_open(w->base);
    open_window(w);
}

/*
 * grow() in STREAMING LOSSLESS when no chunk can be had without waiting.
 * Waiting with the chunk busy could deadlock: the chunk may sit in the half
 * the delivery must finish first (stolen by a switch while the packet was
 * open), and the delivery waits for busy to clear.  So the partial packet
 * [base, ptr) is copied aside into the writer's scratch buffer (allocated on
 * this slow path only, grown to the largest packet that needed it, freed by
 * tracec_buffer_writer_release), the chunk is given back (busy cleared; its
 * committed length is unchanged, so the partial packet in its tail is
 * padding), and the writer waits for room as an emit does; the new chunk
 * gets the partial packet copied in before it is published (acquire_chunk).
 * Nested length fields are offsets from base, so they survive both moves.
 *
 * From the moment the chunk is given back the window is the scratch copy,
 * so on failure (CLOSED while waiting, or the scratch allocation failing)
 * later back-fills of length fields land there, never in the old chunk.
 */
static int grow_parked(tracec_i_buffer *b, tracec_i_wstate *ws, tracec_writer *w, uint32_t total, size_t partial) {
    if (ws->scratch_cap < partial) {
        size_t cap = ws->scratch_cap ? ws->scratch_cap : 1024u;
        while (cap < partial) cap *= 2u;
        uint8_t *p = (uint8_t *)realloc(ws->scratch, cap);
        if (p == NULL) return tracec_i_drop(b, TRACEC_STATUS_OUT_OF_MEMORY); /* the chunk is still ours */
        ws->scratch = p;
        ws->scratch_cap = (uint32_t)cap;
    }
    memcpy(ws->scratch, w->base, partial);
    w->base = ws->scratch;
    w->ptr = w->end = ws->scratch + partial;
    atomic_fetch_add_explicit(&tracec_i_grow_waits, 1, memory_order_relaxed);
    tracec_i_lock(&b->mu);
    ws->blk = NULL;
    ws->body = NULL;
    ws->body_size = 0;
    ws->used = 0;
    __atomic_store_n(&ws->half, -1, __ATOMIC_RELEASE);
    __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE); /* after the copy: the half may be reset from here on */
    b->parked++;
    int r = acquire_chunk(b, ws, total, false, ws->scratch, partial);
    if (r == TRACEC_STATUS_CLOSED) {
        /* Stopped while parked: the packet is lost, counted here under mu, before the stop's delivery
           publishes the counters (it waits for parked writers: tracec_i_release_waiters()). */
        tracec_i_refuse(b);
        ws->lost = 1;
    }
    if (--b->parked == 0) pthread_cond_broadcast(&b->cv);
    tracec_i_unlock(&b->mu);
    if (r == TRACEC_STATUS_SUCCESS) prefetch_chunk(ws->body + partial, ws->body_size - (uint32_t)partial);
    return r;
}

/*
 * The open packet is lost (grow() failed with `st`): the writer fails and
 * the packet is counted now, once: a room refusal was counted in `dropped`
 * where it was refused; CLOSED and RECORD_TOO_LARGE go to `refused`.
 * `lost` keeps a later end, abandon or release from counting it again.
 */
static bool grow_failed(tracec_writer *w, tracec_i_wstate *ws, tracec_status_t st) {
    tracec_writer_fail(w, st);
    if (st != TRACEC_STATUS_BUFFER_FULL && st != TRACEC_STATUS_WOULD_DEADLOCK && st != TRACEC_STATUS_OUT_OF_MEMORY &&
        !ws->lost) /* grow_parked() counted a CLOSED one */
        tracec_i_refuse(ws->b);
    ws->lost = 1;
    return false;
}

/*
 * grow(): the packet outgrew its chunk.  Moves [base, ptr) to a new chunk,
 * or fails the packet.  It never waits with its chunk busy; in STREAMING
 * LOSSLESS (not on a callback thread) it gives the chunk back and waits
 * (grow_parked()), so an accepted-in-progress packet is never dropped for
 * room.
 */
static bool buffer_grow(tracec_writer *w, size_t need) {
    tracec_buffer_writer *bw = (tracec_buffer_writer *)w->sink;
    if (w->base == nowhere) return false; /* a packet that could not begin */
    tracec_i_wstate *ws = WS(bw);
    tracec_i_buffer *b = ws->b;
    size_t partial = (size_t)(w->ptr - w->base);
    size_t total = TRACEC_I_BLK_BODY(partial + need);
    if (ws->in_packet == 2) {
        if (total + TRACEC_I_BLK_HDR > b->durable_cap) return grow_failed(w, ws, TRACEC_STATUS_RECORD_TOO_LARGE);
        return grow_failed(w, ws, tracec_i_drop(b, TRACEC_STATUS_BUFFER_FULL));
    }
    if (ws->in_packet != 1) return false;
    if (total > b->size) return grow_failed(w, ws, TRACEC_STATUS_RECORD_TOO_LARGE);
    /* the packet leaves this chunk (moved, parked or lost): its open mark with it, while the chunk is ours */
    tracec_i_clear_open(w->base);
    tracec_status_t fst;
    if (tracec_i_full_drop(b, ws, (uint32_t)total, &fst)) return grow_failed(w, ws, fst);
    tracec_i_lock(&b->mu);
    int r = acquire_chunk(b, ws, (uint32_t)total, true, w->base, partial), r0 = r;
    tracec_i_unlock(&b->mu);
    if (r == TRACEC_I_PARK) r = grow_parked(b, ws, w, (uint32_t)total, partial);
    if (r != TRACEC_STATUS_SUCCESS) return grow_failed(w, ws, (tracec_status_t)r);
    if (r0 == TRACEC_STATUS_SUCCESS) prefetch_chunk(ws->body + partial, ws->body_size - (uint32_t)partial);
    w->base = ws->body;
    w->ptr = ws->body + partial;
    w->end = ws->body + ws->body_size;
    tracec_i_mark_open(w->base);
    return true;
}

/*
 * The end of a packet off the inline fast path; the window is in bw->w.
 * `unended`: the packet message (size_off, parent, on bw->w) has not been
 * ended yet, which happens here only once the window is known to be the
 * open packet's, so a stale window (ended twice, abandoned by a later
 * begin, released) is never written through.  (Scalars, not the caller's
 * message: nothing of the caller's escapes into an out-of-line call.)
 */
tracec_status_t tracec_i_buffer_commit(tracec_buffer_writer *bw, int unended, uint32_t size_off, uint32_t parent) {
    tracec_writer *w = &bw->w;
    /* A packet that could not begin: its status (counted, if at all, where it was refused). */
    if (w->base == nowhere) return w->status != TRACEC_STATUS_SUCCESS ? w->status : TRACEC_STATUS_BAD_STATE;
    tracec_i_wstate *ws = own_state(bw);
    if (ws == NULL || ws->in_packet == 0) return TRACEC_STATUS_BAD_STATE;
    /* Not the open packet's window (ended twice, or a packet of another writer): the open one is left alone. */
    if (!is_open_window(ws, w->base)) return TRACEC_STATUS_BAD_STATE;
    if (unended) {
        tracec_msg root = {w, TRACEC_I_ROOT, TRACEC_I_ROOT}, packet = {w, size_off, parent};
        tracec_msg_end_nested(&root, &packet);
        w->status = tracec_writer_end_root(w, &root);
    }
    tracec_i_buffer *b = ws->b;
    tracec_status_t st = w->status;
    int kind_of_packet = (int)ws->in_packet;
    ws->in_packet = 0;
    if (st != TRACEC_STATUS_SUCCESS) {
        if (kind_of_packet == 2) {
            tracec_i_durable_mark(b, false);
            tracec_i_unlock(&b->dmu);
        } else {
            if (ws->body != NULL && w->base == ws->body + ws->used) tracec_i_clear_open(w->base); /* still ours */
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
        }
        /* A packet grow() lost was counted there (grow_failed()); any other is the
           writer's error (NESTING_MISMATCH, MESSAGE_TOO_LARGE): refused. */
        if (!ws->lost) tracec_i_refuse(b);
        ws->lost = 0;
        w->ptr = w->base;
        return st;
    }
    tracec_i_blk *rec = (tracec_i_blk *)(void *)w->base;
    size_t payload = (size_t)(w->ptr - w->base) - TRACEC_I_BLK_HDR;
    rec->body = (uint32_t)TRACEC_I_BLK_BODY(payload);
    rec->size = (uint32_t)payload;
    rec->category = ws->category;
    rec->kind = ws->kind;
    uint8_t *next = w->base + TRACEC_I_BLK_HDR + rec->body;
    if (kind_of_packet == 2) {
        atomic_store_explicit(&b->doff, (size_t)(next - b->dmem), memory_order_release);
        tracec_i_shm_note_durable(b, (size_t)(next - b->dmem));
        tracec_i_unlock(&b->dmu);
        atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
    } else {
        ws->used = (uint32_t)(next - ws->body);
        __atomic_store_n(&ws->packets, ws->packets + 1u, __ATOMIC_RELAXED);
        __atomic_store_n(&ws->blk->committed, ws->used, __ATOMIC_RELEASE);
        __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    }
    w->base = w->ptr = next;
    return TRACEC_STATUS_SUCCESS;
}
