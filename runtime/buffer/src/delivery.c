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
    uint64_t dropped; /* tracec_i_dropped() when the pass began (its writers' own counts need mu) */
} dctx;

static void dflush(dctx *d) {
    if (d->n == 0) return;
    tracec_i_buffer *b = d->b;
    uint64_t drops = d->dropped + atomic_load_explicit(&b->overwritten, memory_order_relaxed);
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

/*
 * The sealed half f once every block reserved in it is published and its
 * writers have let go of their chunks there; returns its state word.  Called
 * and returns with mu held, dropped while waiting.  The callbacks that follow
 * may release writers (reaped here when no other steal is running).
 */
static uint64_t settle_sealed_half(tracec_i_buffer *b, int f) {
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    tracec_i_unlock(&b->mu);
    uint64_t s = tracec_i_wait_published(&b->half[f]);
    tracec_i_wait_writers(b, list, f, NULL);
    tracec_i_lock(&b->mu);
    b->stealing--;
    if (b->stealing == 0) tracec_i_reap(b);
    return s;
}

/* STREAMING: delivers the sealed half f and frees it.  Called and returns with mu held. */
static void deliver_streaming_half(dctx *d, int f) {
    tracec_i_buffer *b = d->b;
    tracec_i_half *F = &b->half[f];
    uint64_t s = settle_sealed_half(b, f);
    pthread_cond_broadcast(&b->cv);
    tracec_i_unlock(&b->mu);
    deliver_blocks(d, F->mem, TRACEC_I_BLOCKS(s));
    dflush(d);
    tracec_i_lock(&b->mu);
    F->phase = TRACEC_I_FREE;
    tracec_i_reset_half(b, f, false);
    b->stalled = 0;
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

/* ---- handoff: regions of the memfd handed to a reader ------------------------ */

/* The handoffs decided under mu, made once it is released. */
typedef struct hands {
    size_t n;
    struct {
        uint32_t region, extent;
        uint64_t gen;
    } h[8];
} hands;

static uint64_t region_gen(const tracec_i_buffer *b, uint32_t region) {
    return region == TRACEC_BUFFER_REGION_DURABLE ? b->dgen : b->half[region].gen;
}

static void hand_off(tracec_i_buffer *b, hands *hs);

/*
 * Hands [0, extent) of `region` (`blocks` blocks) if it holds something not
 * handed yet: the header's words (extent, blocks, then handed), one more
 * handoff owed, and the call queued.  mu held (released meanwhile if the
 * queue is full: a pass queues at most four, so never in practice).
 */
static void hand(tracec_i_buffer *b, hands *hs, uint32_t region, size_t extent, uint32_t blocks) {
    uint64_t gen = region_gen(b, region);
    if (extent == 0 || (b->last_gen[region] == gen && extent <= b->last_extent[region])) return;
    if (hs->n == sizeof hs->h / sizeof hs->h[0]) hand_off(b, hs);
    tracec_i_shm_hand(b, region, (uint32_t)extent, blocks);
    b->owed[region]++;
    b->last_gen[region] = gen;
    b->last_extent[region] = (uint32_t)extent;
    hs->h[hs->n].region = region;
    hs->h[hs->n].extent = (uint32_t)extent;
    hs->h[hs->n].gen = gen;
    hs->n++;
}

/* Makes the queued handoffs (mu held; released around the calls). */
static void hand_off(tracec_i_buffer *b, hands *hs) {
    if (hs->n == 0) return;
    tracec_buffer_id_t id = {b->handle};
    tracec_i_unlock(&b->mu);
    for (size_t i = 0; i < hs->n; i++) {
        b->handoff(id, hs->h[i].region, hs->h[i].gen, hs->h[i].extent, b->handoff_data);
        atomic_fetch_add_explicit(&b->deliveries, 1, memory_order_relaxed);
    }
    tracec_i_lock(&b->mu);
    hs->n = 0;
}

/* The bytes of the blocks of a half whose state word is `s` (all reserved blocks, complete). */
static size_t state_extent(uint64_t s) {
    return (size_t)TRACEC_I_CHARGED(s) + (size_t)TRACEC_I_BLK_HDR * TRACEC_I_BLOCKS(s);
}

/*
 * STREAMING: the sealed half f, once its writers are done, is handed whole
 * and stays HANDED until every handoff of it is saved (a half with nothing
 * new is freed at once if nothing of it is owed).  mu held; dropped while
 * waiting for the writers.
 */
static void hand_full_half(tracec_i_buffer *b, hands *hs, int f) {
    tracec_i_half *F = &b->half[f];
    uint64_t s = settle_sealed_half(b, f);
    F->phase = TRACEC_I_HANDED;
    hand(b, hs, (uint32_t)f, state_extent(s), TRACEC_I_BLOCKS(s));
    if (b->owed[f] == 0) {
        F->phase = TRACEC_I_FREE;
        tracec_i_reset_half(b, f, false);
        b->stalled = 0;
    }
    pthread_cond_broadcast(&b->cv);
}

/*
 * The completed prefix of the active half x (and, CIRCULAR, of the other
 * half y too): x is sealed and its chunks taken from the writers (as for a
 * ONESHOT/CIRCULAR delivery), its writers' open packets end, then it is
 * unsealed and the writers continue in new chunks past the prefix.
 * Returns the state words through *sx and *sy.  mu held; dropped while
 * waiting.
 */
static void take_prefix(tracec_i_buffer *b, int x, bool both, uint64_t *sx, uint64_t *sy) {
    int y = 1 - x;
    tracec_i_half *X = &b->half[x], *Y = &b->half[y];
    uint64_t s = atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
    tracec_i_steal_half(b, x, false);
    X->pinned++;
    if (both) Y->pinned++;
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    tracec_i_unlock(&b->mu);
    tracec_i_wait_published(X);
    tracec_i_wait_writers(b, list, x, NULL);
    *sy = 0;
    if (both) {
        *sy = tracec_i_wait_published(Y);
        tracec_i_wait_writers(b, list, y, NULL);
    }
    tracec_i_lock(&b->mu);
    if (atomic_load_explicit(&b->accepting, memory_order_acquire) && !(s & TRACEC_I_SEALED))
        atomic_store_explicit(&X->state, s, memory_order_release); /* unseal: nothing changed while sealed */
    X->pinned--;
    if (both) Y->pinned--;
    b->stealing--;
    if (b->stealing == 0) tracec_i_reap(b);
    pthread_cond_broadcast(&b->cv);
    *sx = s;
}

/* The durable part's complete blocks up to `to` (walked from where the last walk stopped). */
static uint32_t durable_blocks(tracec_i_buffer *b, size_t to) {
    while (b->dcur < to) {
        const tracec_i_blk *rec = (const tracec_i_blk *)(const void *)(b->dmem + b->dcur);
        b->dcur += TRACEC_I_BLK_HDR + rec->body;
        b->dcur_blocks++;
    }
    return b->dcur_blocks;
}

static void handoff_streaming(tracec_i_buffer *b, uint32_t flags) {
    hands hs = {0};
    bool looked = false;
    for (;;) {
        int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        int y = 1 - x;
        if (b->half[y].phase == TRACEC_I_FULL) {
            hand_full_half(b, &hs, y);
            continue;
        }
        if (b->half[x].phase == TRACEC_I_FULL) { /* sealed by a stop */
            hand_full_half(b, &hs, x);
            continue;
        }
        if (looked) break;
        looked = true;
        tracec_i_half *X = &b->half[x];
        if (X->phase != TRACEC_I_ACTIVE) break;
        if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
            /* Stopped: seal the active half; it is handed whole. */
            atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
            tracec_i_steal_half(b, x, false);
            X->phase = TRACEC_I_FULL;
            continue;
        }
        uint64_t s = atomic_load_explicit(&X->state, memory_order_acquire);
        if ((flags & TRACEC_I_REQ_FLUSH) && TRACEC_I_BLOCKS(s) != 0) {
            uint64_t sx, sy;
            take_prefix(b, x, false, &sx, &sy);
            if (X->phase == TRACEC_I_ACTIVE && (int)atomic_load_explicit(&b->active, memory_order_acquire) == x)
                hand(b, &hs, (uint32_t)x, state_extent(sx), TRACEC_I_BLOCKS(sx));
            continue; /* a stop meanwhile seals it: handed whole */
        }
        /* A watermark: switch if the other half is free (a full half was switched by its writer). */
        if (flags != 0 && TRACEC_I_BLOCKS(s) != 0 && b->half[y].phase == TRACEC_I_FREE) {
            tracec_i_do_switch(b, x);
            continue;
        }
        break;
    }
    hand_off(b, &hs);
}

/* ONESHOT / CIRCULAR: a flush or stop hands what is new in the halves and the durable part. */
static void handoff_snapshot(tracec_i_buffer *b) {
    hands hs = {0};
    while (b->half[0].phase == TRACEC_I_WRAPPING || b->half[1].phase == TRACEC_I_WRAPPING)
        pthread_cond_wait(&b->cv, &b->mu);
    int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
    int y = 1 - x;
    bool circ = b->mode == TRACEC_BUFFERING_MODE_CIRCULAR;
    uint64_t sx, sy;
    take_prefix(b, x, circ, &sx, &sy);
    size_t dto = atomic_load_explicit(&b->doff, memory_order_acquire);
    if (b->dmem != NULL) hand(b, &hs, TRACEC_BUFFER_REGION_DURABLE, dto, durable_blocks(b, dto));
    /* Oldest first: the other half (CIRCULAR), then the active one (both pinned meanwhile: no wrap). */
    if (circ) hand(b, &hs, (uint32_t)y, state_extent(sy), TRACEC_I_BLOCKS(sy));
    hand(b, &hs, (uint32_t)x, state_extent(sx), TRACEC_I_BLOCKS(sx));
    hand_off(b, &hs);
}

tracec_status_t tracec_buffer_region_saved(tracec_buffer_id_t buffer_id, uint32_t region, uint64_t gen) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = TRACEC_STATUS_BAD_STATE;
    tracec_i_lock(&b->mu);
    bool has = region < 2 ? b->half[region].mem != NULL : region == TRACEC_BUFFER_REGION_DURABLE && b->dmem != NULL;
    if (!has) {
        st = TRACEC_STATUS_INVALID_ARGUMENT;
    } else if (b->handoff != NULL && b->owed[region] > 0 && region_gen(b, region) == gen) {
        st = TRACEC_STATUS_SUCCESS;
        if (--b->owed[region] == 0) {
            tracec_i_shm_unhand(b, region);
            if (region < 2 && b->half[region].phase == TRACEC_I_HANDED) {
                b->half[region].phase = TRACEC_I_FREE;
                tracec_i_reset_half(b, (int)region, false);
                b->stalled = 0;
                pthread_cond_broadcast(&b->cv);
            }
        }
    }
    if (st != TRACEC_STATUS_SUCCESS) atomic_fetch_add_explicit(&b->saves_ignored, 1, memory_order_relaxed);
    tracec_i_unlock(&b->mu);
    tracec_i_buffer_put(b);
    return st;
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
    dctx d = {b, t, 0, tracec_i_dropped(b)};
    if (b->handoff != NULL) {
        if (b->mode == TRACEC_BUFFERING_MODE_STREAMING) handoff_streaming(b, flags);
        else if (flags & TRACEC_I_REQ_FLUSH) handoff_snapshot(b);
    } else if (b->mode == TRACEC_BUFFERING_MODE_STREAMING) {
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
