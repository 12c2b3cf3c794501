/*
 * delivery.c - delivery passes: hand committed records to the callback,
 * once each, in order (docs/buffers.md, "Delivery").
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

/* ---- delivery ------------------------------------------------------------ */

typedef struct dctx {
    tracec_i_buffer *b;
    tracec_i_thread *t;
    size_t n;
} dctx;

static void dflush(dctx *d) {
    if (d->n == 0) return;
    tracec_i_buffer *b = d->b;
    uint64_t drops = atomic_load_explicit(&b->dropped, memory_order_relaxed) +
                     atomic_load_explicit(&b->overwritten, memory_order_relaxed);
    tracec_context_id_t ctx = {b->ctx_handle};
    tracec_buffer_id_t id = {b->handle};
    b->callback(ctx, id, d->t->ptrs, d->n, b->callback_data, drops);
    atomic_fetch_add_explicit(&b->delivered, d->n, memory_order_relaxed);
    atomic_fetch_add_explicit(&b->deliveries, 1, memory_order_relaxed);
    d->n = 0;
}

static void dput(dctx *d, const tracec_i_blk *rec) {
    tracec_record_header_t *h = &d->t->hdrs[d->n];
    h->category = rec->category;
    h->kind = rec->kind;
    h->payload = (void *)(rec + 1);
    h->size = rec->size;
    d->t->ptrs[d->n] = h;
    if (++d->n == TRACEC_I_BATCH) dflush(d);
}

#define TRACEC_I_PREFETCH 1024

/* Delivers the records of `count` blocks laid out from `p` on. */
static void deliver_blocks(dctx *d, uint8_t *p, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        tracec_i_blk *blk = (tracec_i_blk *)(void *)p;
        if (blk->size == TRACEC_I_CHUNK_MARK) {
            uint32_t used = __atomic_load_n(&blk->committed, __ATOMIC_ACQUIRE);
            uint8_t *r = (uint8_t *)(blk + 1), *e = r + used;
            /* The chunk was written on another core: keep a window of line
               fetches in flight ahead of the walk, whose next address depends
               on the record just read (and the hardware prefetcher stops at
               page boundaries). */
            uint8_t *pf = r;
            while (r < e) {
                for (uint8_t *stop = r + TRACEC_I_PREFETCH < e ? r + TRACEC_I_PREFETCH : e; pf < stop; pf += 64)
                    __builtin_prefetch(pf);
                tracec_i_blk *rec = (tracec_i_blk *)(void *)r;
                dput(d, rec);
                r += TRACEC_I_BLK_HDR + rec->body;
            }
        } else {
            dput(d, blk);
        }
        p += TRACEC_I_BLK_HDR + blk->body;
    }
}

static size_t blocks_end(const tracec_i_half *hf, uint32_t from, uint32_t to, size_t off) {
    for (uint32_t i = from; i < to; i++) off += TRACEC_I_BLK_HDR + ((tracec_i_blk *)(void *)(hf->mem + off))->body;
    return off;
}

static void deliver_durable(dctx *d, size_t from, size_t to) {
    tracec_i_buffer *b = d->b;
    while (from < to) {
        tracec_i_blk *rec = (tracec_i_blk *)(void *)(b->dmem + from);
        dput(d, rec);
        from += TRACEC_I_BLK_HDR + rec->body;
    }
}

/* STREAMING: delivers the sealed half f and frees it.  Called and returns with mu held. */
static void deliver_streaming_half(dctx *d, int f) {
    tracec_i_buffer *b = d->b;
    tracec_i_half *F = &b->half[f];
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    tracec_i_unlock(&b->mu);
    uint64_t s = tracec_i_wait_published(F);
    tracec_i_wait_writers(b, list, f, NULL);
    tracec_i_lock(&b->mu);
    b->stealing--; /* the callbacks may release writers */
    if (b->stealing == 0) tracec_i_reap(b);
    pthread_cond_broadcast(&b->cv);
    tracec_i_unlock(&b->mu);
    deliver_blocks(d, F->mem, TRACEC_I_BLOCKS(s));
    dflush(d);
    tracec_i_lock(&b->mu);
    F->phase = TRACEC_I_FREE;
    tracec_i_reset_half(b, f, false);
    pthread_cond_broadcast(&b->cv);
}

static void deliver_streaming(dctx *d, uint32_t flags) {
    tracec_i_buffer *b = d->b;
    bool switched = false;
    for (;;) {
        int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        int y = 1 - x;
        if (b->half[y].phase == TRACEC_I_FULL) {
            deliver_streaming_half(d, y);
            continue;
        }
        if (b->half[x].phase == TRACEC_I_FULL) { /* sealed by a stop */
            deliver_streaming_half(d, x);
            continue;
        }
        if (switched) break;
        switched = true;
        tracec_i_half *X = &b->half[x];
        uint64_t s = atomic_load_explicit(&X->state, memory_order_acquire);
        bool accepting = atomic_load_explicit(&b->accepting, memory_order_acquire);
        if (X->phase != TRACEC_I_ACTIVE) break;
        if (!accepting) {
            /* Stopped: seal the active half without opening the other. */
            atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
            tracec_i_steal_half(b, x, false);
            X->phase = TRACEC_I_FULL;
            continue;
        }
        if (flags == 0 || TRACEC_I_BLOCKS(s) == 0) break;
        tracec_i_do_switch(b, x);
    }
}

/*
 * CIRCULAR: room for a copy of `n` bytes of records in b->snap (grown on
 * the delivery path only; one delivery at a time uses it).  False if it
 * cannot be allocated.
 */
static bool snap_reserve(tracec_i_buffer *b, size_t n) {
    /* Allocated even for n == 0: memcpy to a NULL snap is undefined, even of 0 bytes. */
    if (n <= b->snap_cap && b->snap != NULL) return true;
    size_t cap = b->snap_cap ? b->snap_cap : 4096u;
    while (cap < n) cap *= 2u;
    uint8_t *p = (uint8_t *)realloc(b->snap, cap);
    if (p == NULL) return false;
    b->snap = p;
    b->snap_cap = cap;
    return true;
}

/*
 * ONESHOT / CIRCULAR: delivers what is new since the last delivery.  mu held.
 *
 * The halves are pinned (a producer that would wrap into a pinned half
 * waits) while the new records are located.  ONESHOT never wraps, so its
 * records are delivered in place.  CIRCULAR copies them out and unpins
 * before the callbacks run, so producers go on overwriting the oldest
 * records however long the callbacks take; only if the copy cannot be
 * allocated are they delivered in place, pinned until the callbacks return.
 */
static void deliver_snapshot(dctx *d) {
    tracec_i_buffer *b = d->b;
    while (b->half[0].phase == TRACEC_I_WRAPPING || b->half[1].phase == TRACEC_I_WRAPPING)
        pthread_cond_wait(&b->cv, &b->mu);
    int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
    int y = 1 - x;
    tracec_i_half *X = &b->half[x], *Y = &b->half[y];
    bool circ = b->mode == TRACEC_BUFFERING_MODE_CIRCULAR;
    uint64_t sx = atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
    tracec_i_steal_half(b, x, false);
    X->pinned++;
    if (circ) Y->pinned++;
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    uint32_t xfrom = X->cur_blk, yfrom = Y->cur_blk;
    size_t xoff = X->cur_off, yoff = Y->cur_off;
    tracec_i_unlock(&b->mu);

    tracec_i_wait_published(X);
    tracec_i_wait_writers(b, list, x, NULL);
    uint64_t sy = 0;
    if (circ) {
        sy = tracec_i_wait_published(Y);
        tracec_i_wait_writers(b, list, y, NULL);
    }
    size_t dto = atomic_load_explicit(&b->doff, memory_order_acquire);
    size_t dfrom = b->dcur;
    b->dcur = dto;
    uint32_t xto = TRACEC_I_BLOCKS(sx), yto = TRACEC_I_BLOCKS(sy);
    size_t xend = blocks_end(X, xfrom, xto, xoff);
    size_t yend = circ ? blocks_end(Y, yfrom, yto, yoff) : 0;
    uint8_t *xp = X->mem + xoff, *yp = circ ? Y->mem + yoff : NULL;
    bool copied = false;
    if (circ && xend - xoff + (yend - yoff) > 0 && snap_reserve(b, (yend - yoff) + (xend - xoff))) {
        /* Y is sealed (not active) and X's blocks up to xto are complete:
           nothing writes these bytes while they are copied. */
        memcpy(b->snap, yp, yend - yoff);
        memcpy(b->snap + (yend - yoff), xp, xend - xoff);
        yp = b->snap;
        xp = b->snap + (yend - yoff);
        copied = true;
    }

    tracec_i_lock(&b->mu);
    X->cur_blk = xto;
    X->cur_off = xend;
    if (circ) {
        Y->cur_blk = yto;
        Y->cur_off = yend;
    }
    if (atomic_load_explicit(&b->accepting, memory_order_acquire) && !(sx & TRACEC_I_SEALED))
        atomic_store_explicit(&X->state, sx, memory_order_release); /* unseal: nothing changed while sealed */
    if (copied) {
        X->pinned--;
        Y->pinned--;
    }
    b->stealing--; /* the callbacks below may release writers */
    if (b->stealing == 0) tracec_i_reap(b);
    pthread_cond_broadcast(&b->cv);
    tracec_i_unlock(&b->mu);

    deliver_durable(d, dfrom, dto);
    if (circ) deliver_blocks(d, yp, yto - yfrom);
    deliver_blocks(d, xp, xto - xfrom);
    dflush(d);

    tracec_i_lock(&b->mu);
    if (!copied) {
        X->pinned--;
        if (circ) Y->pinned--;
    }
    pthread_cond_broadcast(&b->cv);
}

void tracec_i_deliver_pass(tracec_i_buffer *b) {
    tracec_i_thread *t = tracec_i_current_thread;
    if (t == NULL) return;
    tracec_i_lock(&b->mu);
    if (b->delivering) {
        tracec_i_unlock(&b->mu); /* that pass looks at `pending` again when it ends */
        return;
    }
    if (b->half[0].mem == NULL) {
        /* Destroyed: nothing is left to deliver, but a flush that took the buffer before its destroy
           may have asked after it.  Its ticket is served now; it would otherwise wait for good. */
        atomic_store_explicit(&b->pending, 0, memory_order_relaxed);
        b->flush_done = b->flush_req;
        pthread_cond_broadcast(&b->cv);
        tracec_i_unlock(&b->mu);
        return;
    }
    b->delivering = 1;
    uint32_t flags = atomic_exchange_explicit(&b->pending, 0, memory_order_acq_rel);
    uint64_t ticket = b->flush_req;
    dctx d = {b, t, 0};
    if (b->mode == TRACEC_BUFFERING_MODE_STREAMING) {
        deliver_streaming(&d, flags);
    } else if (flags & TRACEC_I_REQ_FLUSH) {
        deliver_snapshot(&d);
    }
    if (b->flush_done < ticket) b->flush_done = ticket;
    tracec_i_shm_publish_counters(b);
    b->delivering = 0;
    pthread_cond_broadcast(&b->cv);
    bool again = atomic_load_explicit(&b->pending, memory_order_acquire) != 0;
    tracec_i_unlock(&b->mu);
    if (again) tracec_i_kick(b);
}
