/*
 * reserve.c - reserving blocks in a half (one CAS), publishing them,
 * stealing and resetting halves, the STREAMING switch and CIRCULAR wrap
 * that make room, and tracec_buffer_emit().
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

bool tracec_i_is_durable(const tracec_i_buffer *b, uint32_t category, uint32_t kind) {
    return b->mode != TRACEC_BUFFERING_MODE_STREAMING && category == TRACEC_BUFFER_CATEGORY_TRACING &&
           tracec_i_kind_durable(kind);
}

/* ---- the memfd header (tracec/abi/shm_layout.h); no-ops in process memory ---- */

/* A store into the header another process reads: atomic, so it is never torn. */
#define SHM_STORE(field, v, order) __atomic_store_n(&(field), (v), order)

/*
 * Resets half h (under mu): its generation advances (in the memfd header
 * too, with a release store, before the state word below lets any writer
 * reserve in it again: every byte rewritten from now on comes after it),
 * and its region words say "nothing handed, nothing reserved".
 */
void tracec_i_reset_half(tracec_i_buffer *b, int h, bool unseal) {
    tracec_i_half *hf = &b->half[h];
    hf->gen += 2u;
    /* A handoff of the old generation is void: a late "saved" for it is ignored (and counted). */
    b->owed[h] = 0;
    b->last_extent[h] = 0;
    b->last_gen[h] = 0;
    if (b->hdr != NULL && hf->mem != NULL) {
        tracec_shm_region *r = &b->hdr->half[h];
        SHM_STORE(r->gen, hf->gen, __ATOMIC_RELEASE);
        SHM_STORE(r->handed, (uint32_t)TRACEC_SHM_REGION_FREE, __ATOMIC_RELEASE);
        SHM_STORE(r->extent, 0u, __ATOMIC_RELAXED);
        SHM_STORE(r->blocks, 0u, __ATOMIC_RELAXED);
        SHM_STORE(r->reserved, 0u, __ATOMIC_RELAXED);
    }
    hf->cur_blk = 0;
    hf->cur_off = 0;
    atomic_store_explicit(&hf->published, 0, memory_order_relaxed);
    atomic_store_explicit(&hf->state, unseal ? 0 : TRACEC_I_SEALED, memory_order_release);
}

void tracec_i_reset_durable(tracec_i_buffer *b) {
    b->dgen += 2u;
    b->owed[2] = 0;
    b->last_extent[2] = 0;
    b->last_gen[2] = 0;
    b->dcur_blocks = 0;
    if (b->hdr == NULL || b->dmem == NULL) return;
    tracec_shm_region *r = &b->hdr->durable;
    SHM_STORE(r->gen, b->dgen, __ATOMIC_RELEASE);
    SHM_STORE(r->handed, (uint32_t)TRACEC_SHM_REGION_FREE, __ATOMIC_RELEASE);
    SHM_STORE(r->extent, 0u, __ATOMIC_RELAXED);
    SHM_STORE(r->blocks, 0u, __ATOMIC_RELAXED);
    SHM_STORE(r->reserved, 0u, __ATOMIC_RELAXED);
}

static tracec_shm_region *shm_region(tracec_i_buffer *b, uint32_t region) {
    return region == TRACEC_BUFFER_REGION_DURABLE ? &b->hdr->durable : &b->hdr->half[region];
}

void tracec_i_shm_hand(tracec_i_buffer *b, uint32_t region, uint32_t extent, uint32_t blocks) {
    tracec_shm_region *r = shm_region(b, region);
    SHM_STORE(r->extent, extent, __ATOMIC_RELAXED);
    SHM_STORE(r->blocks, blocks, __ATOMIC_RELAXED);
    SHM_STORE(r->handed, (uint32_t)TRACEC_SHM_REGION_HANDED, __ATOMIC_RELEASE);
}

void tracec_i_shm_unhand(tracec_i_buffer *b, uint32_t region) {
    SHM_STORE(shm_region(b, region)->handed, (uint32_t)TRACEC_SHM_REGION_FREE, __ATOMIC_RELEASE);
}

void tracec_i_durable_mark(tracec_i_buffer *b, bool open) {
    size_t off = atomic_load_explicit(&b->doff, memory_order_relaxed);
    if (off + TRACEC_I_BLK_HDR > b->durable_cap) return;
    if (open)
        tracec_i_mark_open(b->dmem + off);
    else
        tracec_i_clear_open(b->dmem + off);
}

void tracec_i_shm_note_durable(tracec_i_buffer *b, size_t end) {
    if (b->hdr != NULL) SHM_STORE(b->hdr->durable.reserved, (uint32_t)end, __ATOMIC_RELAXED);
}

void tracec_i_shm_set_active(tracec_i_buffer *b, uint32_t h) {
    if (b->hdr != NULL) SHM_STORE(b->hdr->active, h, __ATOMIC_RELEASE);
}

/* Records dropped for want of room (under mu): the buffer's count and its writers' own (tracec_i_full_drop()). */
uint64_t tracec_i_dropped(tracec_i_buffer *b) {
    uint64_t n = atomic_load_explicit(&b->dropped, memory_order_relaxed);
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) n += __atomic_load_n(&ws->drops, __ATOMIC_RELAXED);
    return n;
}

/*
 * The header's loss counters (under mu, which a destroy holds: the header
 * is mapped): dropped, overwritten, refused.  Published at each handoff and
 * wherever a loss is counted under mu (make_room's drops, a wrap, every
 * 64th ONESHOT drop of a count kept without mu), so a recorder that
 * salvages a killed process reads its losses up to about its death.
 */
void tracec_i_shm_publish_losses(tracec_i_buffer *b) {
    tracec_shm_header *hd = b->hdr;
    if (hd == NULL) return;
    SHM_STORE(hd->dropped, tracec_i_dropped(b), __ATOMIC_RELAXED);
    SHM_STORE(hd->overwritten, atomic_load_explicit(&b->overwritten, memory_order_relaxed), __ATOMIC_RELAXED);
    SHM_STORE(hd->refused, atomic_load_explicit(&b->refused, memory_order_relaxed), __ATOMIC_RELEASE);
}

/* The header's counters (under mu): accepted (the buffer's and its writers'), and the losses. */
void tracec_i_shm_publish_counters(tracec_i_buffer *b) {
    if (b->hdr == NULL) return;
    uint64_t in_writers = 0;
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) in_writers += __atomic_load_n(&ws->packets, __ATOMIC_RELAXED);
    SHM_STORE(b->hdr->accepted, atomic_load_explicit(&b->accepted, memory_order_relaxed) + in_writers, __ATOMIC_RELAXED);
    tracec_i_shm_publish_losses(b);
}

/*
 * The salvage hint of half h: bytes reserved so far, `end` (relaxed; racing
 * reservers may store out of order, which a hint tolerates).
 */
static void shm_note_reserved(tracec_i_buffer *b, const tracec_i_half *hf, uint64_t end) {
    uint32_t *w = &b->hdr->half[hf - b->half].reserved;
    if (__atomic_load_n(w, __ATOMIC_RELAXED) < (uint32_t)end) SHM_STORE(*w, (uint32_t)end, __ATOMIC_RELAXED);
}

static void request(tracec_i_buffer *b, uint32_t flag) {
    uint32_t old = atomic_fetch_or_explicit(&b->pending, flag, memory_order_acq_rel);
    if (old == 0) tracec_i_kick(b);
}

void tracec_i_watermark_check(tracec_i_buffer *b, uint64_t before, uint64_t after) {
    if (b->mode != TRACEC_BUFFERING_MODE_STREAMING) return;
    bool cross = before < b->watermark ? after >= b->watermark : b->watermark == 0;
    if (cross) {
        atomic_fetch_add_explicit(&b->wm_requests, 1, memory_order_relaxed);
        request(b, TRACEC_I_REQ_WATERMARK);
    }
}

/*
 * Reserves a block of `body` bytes in half `hf` (or, with min_body != 0, as
 * much as is left down to min_body).  Returns the block, or NULL with
 * *sealed telling why.
 */
tracec_i_blk *tracec_i_try_reserve(tracec_i_buffer *b, tracec_i_half *hf, uint32_t body, uint32_t min_body,
                                 uint64_t *old, bool *sealed) {
    uint64_t s = atomic_load_explicit(&hf->state, memory_order_relaxed);
    for (;;) {
        if (s & TRACEC_I_SEALED) {
            *sealed = true;
            return NULL;
        }
        uint64_t avail = (uint64_t)b->size - TRACEC_I_CHARGED(s);
        uint32_t take = body;
        if (take > avail) {
            if (min_body == 0 || avail < min_body) {
                *sealed = false;
                return NULL;
            }
            take = (uint32_t)(avail & ~(uint64_t)7);
        }
        if (atomic_compare_exchange_weak_explicit(&hf->state, &s, s + TRACEC_I_ONE_BLOCK + take,
                                                  memory_order_acquire, memory_order_relaxed)) {
            *old = s;
            if (b->hdr != NULL)
                shm_note_reserved(b, hf, (uint64_t)TRACEC_I_CHARGED(s) + take + (size_t)TRACEC_I_BLK_HDR * (TRACEC_I_BLOCKS(s) + 1u));
            tracec_i_blk *blk =
                (tracec_i_blk *)(void *)(hf->mem + TRACEC_I_CHARGED(s) + (size_t)TRACEC_I_BLK_HDR * TRACEC_I_BLOCKS(s));
            blk->body = take;
            return blk;
        }
    }
}

void tracec_i_publish(tracec_i_half *hf) {
    atomic_fetch_add_explicit(&hf->published, 1, memory_order_release);
}

/* Waits until every block reserved in a sealed half has its header written. */
uint64_t tracec_i_wait_published(tracec_i_half *hf) {
    uint64_t s = atomic_load_explicit(&hf->state, memory_order_acquire);
    unsigned n = 0;
    while (atomic_load_explicit(&hf->published, memory_order_acquire) < TRACEC_I_BLOCKS(s)) tracec_i_spin_pause(&n);
    return s;
}

/*
 * Sets `stolen` on every writer whose chunk lives in half h.  Under mu.
 * The stores and the writers' busy flags are made mutually visible by the
 * barrier in tracec_i_wait_writers(), which whoever reads busy calls first, outside
 * mu (the asymmetric barrier is a system call that interrupts every CPU
 * running the process; holding mu across it makes writers that want a new
 * chunk sleep on the mutex).  With `barrier`, the barrier runs here too,
 * for a caller that resets the half without waiting for writers.
 */
void tracec_i_steal_half(tracec_i_buffer *b, int h, bool barrier) {
    bool any = false;
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) {
        if (ws->blk != NULL && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h) {
            __atomic_store_n(&ws->stolen, 1u, __ATOMIC_SEQ_CST);
            any = true;
        }
    }
    if (barrier && any && b->asym) tracec_i_heavy_barrier();
}

/*
 * Waits (without mu; b->stealing > 0 keeps the list alive) until no writer
 * whose chunk is in half h has a packet open.  `self` is skipped.  The
 * writers' `stolen` flags were set by tracec_i_steal_half() under mu, which the
 * caller took after that, so a barrier here orders those stores before
 * the loads of `busy` below, as the Dekker pair needs.
 */
void tracec_i_wait_writers(const tracec_i_buffer *b, tracec_i_wstate *list, int h, const tracec_i_wstate *self) {
    if (b->asym) {
        bool any = false;
        for (tracec_i_wstate *ws = list; ws && !any; ws = ws->next)
            any = ws != self && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h;
        if (any) tracec_i_heavy_barrier();
    }
    for (tracec_i_wstate *ws = list; ws; ws = ws->next) {
        if (ws == self) continue;
        unsigned n = 0;
        while (__atomic_load_n(&ws->half, __ATOMIC_ACQUIRE) == h && __atomic_load_n(&ws->busy, __ATOMIC_SEQ_CST) != 0)
            tracec_i_spin_pause(&n);
    }
}

/* Number of records in blocks [from, to) starting at byte `off`. */
static uint64_t count_records(const tracec_i_half *hf, uint32_t from, uint32_t to, size_t off) {
    uint64_t n = 0;
    for (uint32_t i = from; i < to; i++) {
        tracec_i_blk *blk = (tracec_i_blk *)(void *)(hf->mem + off);
        if (blk->size == TRACEC_I_CHUNK_MARK) {
            uint32_t used = __atomic_load_n(&blk->committed, __ATOMIC_ACQUIRE);
            uint8_t *p = (uint8_t *)(blk + 1), *e = p + used;
            while (p < e) {
                n++;
                p += TRACEC_I_BLK_HDR + ((tracec_i_blk *)(void *)p)->body;
            }
        } else {
            n++;
        }
        off += TRACEC_I_BLK_HDR + blk->body;
    }
    return n;
}

/* ---- STREAMING switch, CIRCULAR wrap (under mu) ------------------------- */

/* The other half (emptied) becomes the active one; half x is sealed, full, its chunks taken. */
static void swap_halves(tracec_i_buffer *b, int x) {
    int y = 1 - x;
    tracec_i_half *X = &b->half[x], *Y = &b->half[y];
    Y->phase = TRACEC_I_ACTIVE;
    tracec_i_reset_half(b, y, true);
    atomic_store_explicit(&b->active, (uint32_t)y, memory_order_release);
    tracec_i_shm_set_active(b, (uint32_t)y);
    atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
    X->phase = TRACEC_I_FULL;
    tracec_i_steal_half(b, x, false);
}

void tracec_i_do_switch(tracec_i_buffer *b, int x) {
    swap_halves(b, x);
    atomic_fetch_add_explicit(&b->switches, 1, memory_order_relaxed);
    pthread_cond_broadcast(&b->cv);
}

/* Overwrites the other half.  Called and returns with mu held; drops it while waiting. */
static void do_wrap(tracec_i_buffer *b, int x, const tracec_i_wstate *self) {
    int y = 1 - x;
    tracec_i_half *Y = &b->half[y];
    Y->phase = TRACEC_I_WRAPPING;
    tracec_i_steal_half(b, y, false);
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    uint32_t from = Y->cur_blk;
    size_t off = Y->cur_off;
    tracec_i_unlock(&b->mu);
    uint64_t s = tracec_i_wait_published(Y);
    tracec_i_wait_writers(b, list, y, self);
    uint64_t lost = count_records(Y, from, TRACEC_I_BLOCKS(s), off);
    tracec_i_lock(&b->mu);
    atomic_fetch_add_explicit(&b->overwritten, lost, memory_order_relaxed);
    tracec_i_shm_publish_losses(b);
    swap_halves(b, x);
    b->stealing--;
    if (b->stealing == 0) tracec_i_reap(b);
    atomic_fetch_add_explicit(&b->switches, 1, memory_order_relaxed);
    pthread_cond_broadcast(&b->cv);
}

tracec_status_t tracec_i_drop(tracec_i_buffer *b, tracec_status_t why) {
    atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed);
    return why;
}

/*
 * A drop counted under mu: in the shared header at once.  Once the buffer
 * has stopped (a capped wait that ran out as the stop woke it) the record
 * is CLOSED, not counted: a stop publishes the counters after it has taken
 * mu once, and a loss counted later would be in no trace.
 */
static tracec_status_t drop_locked(tracec_i_buffer *b, tracec_status_t why) {
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    tracec_i_drop(b, why);
    tracec_i_shm_publish_losses(b);
    return why;
}

/*
 * Decides what to do when half h could not take `body` bytes.  Called with
 * mu held.  Returns TRACEC_I_RETRY (try again), TRACEC_I_PARK, or a final status (a tracec_i_drop is
 * counted here).  `ws` is the writer taking a chunk (NULL for emits);
 * `in_grow` says it holds a packet open (grow()), so it must not wait with
 * its chunk busy: where an emit would wait in STREAMING LOSSLESS, TRACEC_I_PARK tells
 * grow() to give the chunk back first and then wait (grow_parked()).  On a
 * callback thread nothing waits: the record is refused (WOULD_DEADLOCK).
 * Nor on a thread that has another packet open that the wait (or a wrap)
 * could be waiting for (tracec_i_thread_open_packet_blocks()): refused the same way,
 * checked only where it would wait, so switches and drops do not pay for it.
 */
/*
 * A LOSSLESS wait for room (mu held): true when woken, false once the
 * buffer's cap ran out (the first wait of a record or packet sets
 * *deadline; later ones of the same keep it).
 */
static bool wait_for_room(tracec_i_buffer *b, struct timespec *deadline) {
    if (b->max_wait_ms == 0) {
        pthread_cond_wait(&b->cv, &b->mu);
        return true;
    }
    if (deadline->tv_sec == 0 && deadline->tv_nsec == 0) {
        clock_gettime(CLOCK_REALTIME, deadline);
        deadline->tv_sec += (time_t)(b->max_wait_ms / 1000u);
        deadline->tv_nsec += (long)(b->max_wait_ms % 1000u) * 1000000L;
        if (deadline->tv_nsec >= 1000000000L) {
            deadline->tv_sec++;
            deadline->tv_nsec -= 1000000000L;
        }
    }
    return pthread_cond_timedwait(&b->cv, &b->mu, deadline) != ETIMEDOUT;
}

int tracec_i_make_room(tracec_i_buffer *b, int h, uint32_t body, const tracec_i_wstate *ws, bool in_grow,
                       struct timespec *deadline) {
    bool on_cb = tracec_i_current_thread != NULL;
    bool can_wait = !in_grow && !on_cb;
    tracec_status_t no_wait = on_cb ? TRACEC_STATUS_WOULD_DEADLOCK : TRACEC_STATUS_BUFFER_FULL;
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
    if (x != h) return TRACEC_I_RETRY;
    tracec_i_half *X = &b->half[x];
    uint64_t s = atomic_load_explicit(&X->state, memory_order_acquire);
    if (s & TRACEC_I_SEALED) {
        /* A delivery is locating the new records of the active half (ONESHOT, CIRCULAR): briefly. */
        if (!on_cb && tracec_i_thread_open_packet_blocks(b, -1, ws)) return drop_locked(b, TRACEC_STATUS_WOULD_DEADLOCK);
        if (in_grow && !on_cb) return TRACEC_I_PARK;
        if (!can_wait) return drop_locked(b, no_wait);
        pthread_cond_wait(&b->cv, &b->mu);
        return TRACEC_I_RETRY;
    }
    if ((uint64_t)TRACEC_I_CHARGED(s) + body <= b->size) return TRACEC_I_RETRY;
    int y = 1 - x;
    tracec_i_half *Y = &b->half[y];
    switch (b->mode) {
        case TRACEC_BUFFERING_MODE_STREAMING:
            /* DISCARD: with callback delivery only a delivery switches; with handoff a writer
               switches when the other half is free, and drops while it is handed. */
            if (b->policy == TRACEC_BUFFER_POLICY_DISCARD && b->handoff == NULL)
                return drop_locked(b, TRACEC_STATUS_BUFFER_FULL);
            if (Y->phase == TRACEC_I_FREE) {
                tracec_i_do_switch(b, x);
                request(b, TRACEC_I_REQ_FULL);
                return TRACEC_I_RETRY;
            }
            if (b->policy == TRACEC_BUFFER_POLICY_DISCARD || b->stalled)
                return drop_locked(b, TRACEC_STATUS_BUFFER_FULL);
            if (!on_cb && tracec_i_thread_open_packet_blocks(b, y, ws)) return drop_locked(b, TRACEC_STATUS_WOULD_DEADLOCK);
            if (in_grow && !on_cb) return TRACEC_I_PARK;
            if (!can_wait) return drop_locked(b, no_wait);
            if (Y->phase != TRACEC_I_HANDED) request(b, TRACEC_I_REQ_FULL); /* a handed half waits for its reader */
            atomic_fetch_add_explicit(&b->waits, 1, memory_order_relaxed);
            if (!wait_for_room(b, deadline)) {
                b->stalled = 1; /* until a half is freed: drop at once rather than wait again */
                return drop_locked(b, TRACEC_STATUS_BUFFER_FULL);
            }
            return TRACEC_I_RETRY;
        case TRACEC_BUFFERING_MODE_CIRCULAR:
            /* Overwrite Y, unless a delivery is locating and copying its
               records or another producer is already wrapping it (both
               brief: wait), or, in grow(), this writer's open packet sits
               in Y (park it first: the new chunk may take its place). */
            if (in_grow && ws != NULL && ws->blk != NULL && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == y)
                return on_cb ? (int)drop_locked(b, no_wait) : TRACEC_I_PARK;
            if (Y->pinned || Y->phase == TRACEC_I_WRAPPING) {
                if (!on_cb && tracec_i_thread_open_packet_blocks(b, -1, ws)) return drop_locked(b, TRACEC_STATUS_WOULD_DEADLOCK);
                if (in_grow && !on_cb) return TRACEC_I_PARK;
                if (!can_wait) return drop_locked(b, no_wait);
                pthread_cond_wait(&b->cv, &b->mu);
                return TRACEC_I_RETRY;
            }
            if (!on_cb && tracec_i_thread_open_packet_blocks(b, y, ws)) return drop_locked(b, TRACEC_STATUS_WOULD_DEADLOCK);
            do_wrap(b, x, ws);
            return TRACEC_I_RETRY;
        default: /* ONESHOT: no space comes back while it runs; from now on tracec_i_full_drop() refuses without mu */
            if (!atomic_load_explicit(&b->full, memory_order_relaxed))
                atomic_store_explicit(&b->full, 1, memory_order_release);
            return drop_locked(b, TRACEC_STATUS_BUFFER_FULL);
    }
}

/*
 * ONESHOT after it filled: true when a record of `body` bytes is refused at
 * once, without the mutex: `full` is set, the half is not being captured
 * by a delivery (sealed: the slow path waits for it, as before) and the
 * record does not fit.  A running ONESHOT half only grows, so this is the
 * answer tracec_i_make_room() would give; a record that still fits (a smaller one)
 * is never refused here.  *st is the status: BUFFER_FULL (counted), or
 * CLOSED (not counted) if the buffer stopped.  A writer state `ws` counts
 * its own drops: once the buffer is full every writer drops, and one count
 * for all of them would be a cache line they all write.  An emit (ws NULL)
 * counts in the buffer's.  Each 64th drop of a count publishes the losses
 * to a memfd's header when mu is free.
 */
bool tracec_i_full_drop(tracec_i_buffer *b, tracec_i_wstate *ws, uint32_t body, tracec_status_t *st) {
    if (TRACEC_I_LIKELY(!atomic_load_explicit(&b->full, memory_order_acquire))) return false;
    uint64_t s = atomic_load_explicit(&b->half[0].state, memory_order_acquire);
    if ((s & TRACEC_I_SEALED) || (uint64_t)TRACEC_I_CHARGED(s) + body <= b->size) return false;
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
        *st = TRACEC_STATUS_CLOSED;
        return true;
    }
    *st = TRACEC_STATUS_BUFFER_FULL;
    uint64_t n;
    if (ws != NULL) {
        n = ws->drops + 1u;
        __atomic_store_n(&ws->drops, n, __ATOMIC_RELAXED);
    } else {
        n = atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed) + 1u;
    }
    if ((n & 63u) == 0 && tracec_i_trylock(&b->mu)) {
        tracec_i_shm_publish_losses(b); /* hdr read under mu: a destroy holds it */
        tracec_i_unlock(&b->mu);
    }
    return true;
}

/* ---- emit ---------------------------------------------------------------- */

static tracec_status_t durable_emit(tracec_i_buffer *b, uint32_t category, uint32_t kind, const void *payload,
                                    size_t size) {
    size_t body = TRACEC_I_BLK_BODY(size);
    if (body + TRACEC_I_BLK_HDR > b->durable_cap) return TRACEC_STATUS_RECORD_TOO_LARGE;
    tracec_i_lock(&b->dmu);
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
        tracec_i_unlock(&b->dmu);
        return TRACEC_STATUS_CLOSED;
    }
    size_t off = atomic_load_explicit(&b->doff, memory_order_relaxed);
    if (off + TRACEC_I_BLK_HDR + body > b->durable_cap) {
        tracec_i_unlock(&b->dmu);
        return tracec_i_drop(b, TRACEC_STATUS_BUFFER_FULL);
    }
    tracec_i_blk *blk = (tracec_i_blk *)(void *)(b->dmem + off);
    blk->body = (uint32_t)body;
    blk->size = (uint32_t)size;
    blk->category = category;
    blk->kind = kind;
    memcpy(blk + 1, payload, size);
    atomic_store_explicit(&b->doff, off + TRACEC_I_BLK_HDR + body, memory_order_release);
    tracec_i_shm_note_durable(b, off + TRACEC_I_BLK_HDR + body);
    tracec_i_unlock(&b->dmu);
    atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
    return TRACEC_STATUS_SUCCESS;
}

static tracec_status_t emit(tracec_i_buffer *b, uint32_t category, uint32_t kind, const void *payload,
                            size_t size) {
    if (payload == NULL || size == 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (size > b->size) return TRACEC_STATUS_RECORD_TOO_LARGE;
    if (tracec_i_is_durable(b, category, kind)) return durable_emit(b, category, kind, payload, size);
    uint32_t body = (uint32_t)TRACEC_I_BLK_BODY(size);
    if (body > b->size) return TRACEC_STATUS_RECORD_TOO_LARGE;
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    struct timespec deadline = {0, 0};
    for (;;) {
        int h = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        tracec_i_half *hf = &b->half[h];
        uint64_t old;
        bool sealed;
        tracec_i_blk *blk = tracec_i_try_reserve(b, hf, body, 0, &old, &sealed);
        if (blk != NULL) {
            blk->size = (uint32_t)size;
            blk->category = category;
            blk->kind = kind;
            memcpy(blk + 1, payload, size);
            tracec_i_publish(hf);
            atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
            tracec_i_watermark_check(b, TRACEC_I_CHARGED(old), (uint64_t)TRACEC_I_CHARGED(old) + body);
            return TRACEC_STATUS_SUCCESS;
        }
        tracec_status_t fst;
        if (!sealed && tracec_i_full_drop(b, NULL, body, &fst)) return fst;
        tracec_i_lock(&b->mu);
        int r = tracec_i_make_room(b, h, body, NULL, false, &deadline);
        tracec_i_unlock(&b->mu);
        if (r != TRACEC_I_RETRY) return (tracec_status_t)r;
    }
}

tracec_status_t tracec_buffer_emit(tracec_buffer_id_t buffer_id, uint32_t category, uint32_t kind,
                                   const void *payload, size_t size) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = emit(b, category, kind, payload, size);
    tracec_i_buffer_put(b);
    return st;
}
