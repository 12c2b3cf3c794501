/*
 * buffer.c - trace buffers: reservation, the packet writer sink, half
 * switching, wrap-around and delivery.  docs/buffers.md describes the model;
 * buffer_internal.h the memory layout.
 *
 * Who may touch what:
 *   - half.state / half.published: atomics, any thread.
 *   - half.phase, gen, cursors, pinned, the writer list, flush tickets:
 *     under b->mu.
 *   - A writer's chunk fields (blk, body, body_size, half): written only by
 *     the writer under b->mu, read by the writer without it and by
 *     deliverers under b->mu (half: atomically, also without it).
 *   - Chunk handover (a Dekker pair): the writer sets busy then checks
 *     stolen; a deliverer sets stolen (under mu) then waits for busy == 0.
 *     Either the writer sees stolen and leaves the chunk, or the deliverer
 *     sees busy and waits for the packet to end.  The store-load order on
 *     both sides is either symmetric (seq_cst store on the writer, per
 *     packet) or asymmetric: the writer's store is plain (a compiler fence
 *     only) and the deliverer, after setting stolen, runs
 *     membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), a full barrier on every
 *     running thread of the process.  Asymmetric is used when membarrier
 *     can be registered at the first buffer creation (and
 *     TRACEC_BUFFER_MEMBARRIER is not "0"); a buffer keeps its choice.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* syscall() */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

#include "buffer_internal.h"

_Static_assert(sizeof(tracec_i_blk) == TRACEC_I_BLK_HDR && TRACEC_I_BLK_HDR % TRACEC_I_BLK_ALIGN == 0,
               "a block header keeps bodies aligned");

#define WS(bw) ((bw)->i_ws)

/* make_room / acquire_chunk outcomes besides a status: try again; grow() must give its chunk back and wait. */
enum { RETRY = -1, PARK = -2 };

/* ---- the asymmetric fence ------------------------------------------------ */

static pthread_once_t g_membarrier_once = PTHREAD_ONCE_INIT;
static int g_membarrier; /* 1: registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED */

static int membarrier_register(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) || !(q & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
        return 0;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return 0;
#endif
}

static void membarrier_init(void) {
    const char *e = getenv("TRACEC_BUFFER_MEMBARRIER");
    g_membarrier = (e != NULL && e[0] == '0') ? 0 : membarrier_register();
}

/*
 * The heavy side of the asymmetric fence: after it returns, every store a
 * running thread of this process made before it is visible, and every load
 * such a thread makes after it sees the caller's earlier stores.  Cannot
 * fail once registered (the only errors are "not registered" and "not
 * supported"); if it ever did, continuing would break the handover, so stop.
 */
static void heavy_barrier(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    if (membarrier_register() && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
    fputs("tracec: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration\n", stderr);
    abort();
}

/* Times grow() gave its chunk back and waited for room (LOSSLESS); a test hook. */
static _Atomic uint64_t g_grow_waits;

uint64_t tracec_i_buffer_grow_waits(void) { return atomic_load_explicit(&g_grow_waits, memory_order_relaxed); }

/* Test hook (buffer_internal.h). */
int tracec_i_buffer_membarrier(int want) {
    pthread_once(&g_membarrier_once, membarrier_init);
    if (!want) g_membarrier = 0;
    else if (!g_membarrier) g_membarrier = membarrier_register();
    return g_membarrier;
}

/* ---- small helpers ------------------------------------------------------ */

static void spin_pause(unsigned *n) {
    if (++*n > 64u) sched_yield();
}

/* ---- writer states: runtime-owned, released at thread exit ------------- */

/*
 * A tracec_buffer_writer refers to a state the runtime owns (pointer +
 * generation), so the buffer's writer list never points into a caller's
 * stack.  States are never returned to malloc: a stale reference (its
 * generation differs) is always safe to read.  A state is bound to the
 * thread that first begins a packet with it; when that thread exits, a
 * thread-specific-data destructor releases it as tracec_buffer_writer_release
 * would (its committed packets stay in the buffer and are delivered; a
 * packet left open is counted in `refused`).  A writer whose state was
 * released that way gets a fresh one at its next begin.
 */
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static tracec_i_wstate *g_pool_all;  /* every state ever made, through pool_next */
static tracec_i_wstate *g_pool_free; /* the free ones, through next */
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_thread_key;
static _Thread_local char tl_self; /* its address names the calling thread */

/* What a writer refers to when it has no state: the fast paths never pass its checks. */
static tracec_i_wstate g_no_writer = {.reserve = UINT32_MAX, .half = -1, .gen = 1};

static void thread_exit(void *self);
static void key_create(void) { (void)pthread_key_create(&g_thread_key, thread_exit); }

static tracec_i_wstate *state_alloc(void) {
    pthread_mutex_lock(&g_pool_mu);
    tracec_i_wstate *ws = g_pool_free;
    if (ws != NULL) {
        g_pool_free = ws->next;
    } else if ((ws = (tracec_i_wstate *)calloc(1, sizeof *ws)) != NULL) {
        ws->gen = 2; /* never 0: a writer that has none holds generation 0 */
        ws->pool_next = g_pool_all;
        g_pool_all = ws;
    }
    if (ws != NULL) ws->next = NULL;
    pthread_mutex_unlock(&g_pool_mu);
    return ws;
}

/* Back to the pool (the state is no longer in any buffer's list). */
static void state_free(tracec_i_wstate *ws) {
    free(ws->scratch);
    pthread_mutex_lock(&g_pool_mu);
    uint64_t gen = ws->gen + 1u;
    tracec_i_wstate *all = ws->pool_next;
    memset(ws, 0, sizeof *ws);
    ws->gen = gen;
    ws->pool_next = all;
    ws->reserve = UINT32_MAX;
    ws->half = -1;
    ws->next = g_pool_free;
    g_pool_free = ws;
    pthread_mutex_unlock(&g_pool_mu);
}

/* Binds `ws` to the calling thread (first begin). */
static void state_bind(tracec_i_wstate *ws) {
    pthread_once(&g_key_once, key_create);
    (void)pthread_setspecific(g_thread_key, &tl_self);
    pthread_mutex_lock(&g_pool_mu);
    ws->owner = &tl_self;
    pthread_mutex_unlock(&g_pool_mu);
}

/*
 * True when the calling thread has a packet open on a writer other than
 * `except` (on any buffer): it must not wait for a delivery, which may be
 * waiting for that packet to end.
 */
static bool thread_has_open_packet(const tracec_i_wstate *except) {
    bool open = false;
    pthread_mutex_lock(&g_pool_mu);
    for (tracec_i_wstate *ws = g_pool_all; ws && !open; ws = ws->pool_next)
        open = ws != except && ws->owner == &tl_self && ws->in_packet != 0;
    pthread_mutex_unlock(&g_pool_mu);
    return open;
}

bool tracec_i_thread_has_open_packet(void) { return thread_has_open_packet(NULL); }

/*
 * True when the calling thread has a packet open (on a writer other than
 * `except`) that a wait for half h of `b` could wait for: one on another
 * buffer (whose delivery may hold the callback thread), a durable one, or
 * one whose chunk is in half h (h = -1: in either half, for the waits on
 * a ONESHOT/CIRCULAR delivery, which waits for the writers of both).
 */
static bool thread_open_packet_blocks(const tracec_i_buffer *b, int h, const tracec_i_wstate *except) {
    bool open = false;
    pthread_mutex_lock(&g_pool_mu);
    for (tracec_i_wstate *ws = g_pool_all; ws && !open; ws = ws->pool_next)
        open = ws != except && ws->owner == &tl_self && ws->in_packet != 0 &&
               (ws->b != b || ws->in_packet == 2 || h < 0 || __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h);
    pthread_mutex_unlock(&g_pool_mu);
    return open;
}

static bool state_detach(tracec_i_wstate *ws);
static void reap(tracec_i_buffer *b);

static void abandon_packet(tracec_i_wstate *ws);

/*
 * Releases every state bound to `self` (a thread that exits, or calls
 * exit(), on that thread).  Its open packets are abandoned first, all of
 * them: a state's detach waits for a delivery in progress, which may be
 * waiting for another of the thread's packets.
 */
static void release_thread_states(const void *self) {
    pthread_mutex_lock(&g_pool_mu);
    for (tracec_i_wstate *ws = g_pool_all; ws; ws = ws->pool_next)
        if (ws->owner == self && ws->b != NULL && ws->in_packet != 0) abandon_packet(ws);
    pthread_mutex_unlock(&g_pool_mu);
    for (;;) {
        tracec_i_wstate *mine = NULL;
        pthread_mutex_lock(&g_pool_mu);
        for (tracec_i_wstate *ws = g_pool_all; ws && !mine; ws = ws->pool_next)
            if (ws->owner == self) mine = ws;
        if (mine != NULL) mine->owner = NULL;
        pthread_mutex_unlock(&g_pool_mu);
        if (mine == NULL) return;
        if (state_detach(mine)) state_free(mine);
    }
}

static void thread_exit(void *self) { release_thread_states(self); }

void tracec_i_release_calling_thread_writers(void) { release_thread_states(&tl_self); }


static bool is_durable(const tracec_i_buffer *b, uint32_t category, uint32_t kind) {
    return b->mode != TRACEC_BUFFERING_MODE_STREAMING && category == TRACEC_BUFFER_CATEGORY_TRACING &&
           tracec_i_kind_durable(kind);
}

static void request(tracec_i_buffer *b, uint32_t flag) {
    uint32_t old = atomic_fetch_or_explicit(&b->pending, flag, memory_order_acq_rel);
    if (old == 0) tracec_i_kick(b);
}

static void watermark_check(tracec_i_buffer *b, uint64_t before, uint64_t after) {
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
static tracec_i_blk *try_reserve(tracec_i_buffer *b, tracec_i_half *hf, uint32_t body, uint32_t min_body,
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
            tracec_i_blk *blk =
                (tracec_i_blk *)(void *)(hf->mem + TRACEC_I_CHARGED(s) + (size_t)TRACEC_I_BLK_HDR * TRACEC_I_BLOCKS(s));
            blk->body = take;
            return blk;
        }
    }
}

static void publish(tracec_i_half *hf) {
    atomic_fetch_add_explicit(&hf->published, 1, memory_order_release);
}

/* Waits until every block reserved in a sealed half has its header written. */
static uint64_t wait_published(tracec_i_half *hf) {
    uint64_t s = atomic_load_explicit(&hf->state, memory_order_acquire);
    unsigned n = 0;
    while (atomic_load_explicit(&hf->published, memory_order_acquire) < TRACEC_I_BLOCKS(s)) spin_pause(&n);
    return s;
}

/*
 * Sets `stolen` on every writer whose chunk lives in half h.  Under mu.
 * The stores and the writers' busy flags are made mutually visible by the
 * barrier in wait_writers(), which whoever reads busy calls first, outside
 * mu (the asymmetric barrier is a system call that interrupts every CPU
 * running the process; holding mu across it makes writers that want a new
 * chunk sleep on the mutex).  With `barrier`, the barrier runs here too,
 * for a caller that resets the half without waiting for writers.
 */
static void steal_half(tracec_i_buffer *b, int h, bool barrier) {
    bool any = false;
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) {
        if (ws->blk != NULL && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h) {
            __atomic_store_n(&ws->stolen, 1u, __ATOMIC_SEQ_CST);
            any = true;
        }
    }
    if (barrier && any && b->asym) heavy_barrier();
}

/*
 * Waits (without mu; b->stealing > 0 keeps the list alive) until no writer
 * whose chunk is in half h has a packet open.  `self` is skipped.  The
 * writers' `stolen` flags were set by steal_half() under mu, which the
 * caller took after that, so a barrier here orders those stores before
 * the loads of `busy` below, as the Dekker pair needs.
 */
static void wait_writers(const tracec_i_buffer *b, tracec_i_wstate *list, int h, const tracec_i_wstate *self) {
    if (b->asym) {
        bool any = false;
        for (tracec_i_wstate *ws = list; ws && !any; ws = ws->next)
            any = ws != self && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h;
        if (any) heavy_barrier();
    }
    for (tracec_i_wstate *ws = list; ws; ws = ws->next) {
        if (ws == self) continue;
        unsigned n = 0;
        while (__atomic_load_n(&ws->half, __ATOMIC_ACQUIRE) == h && __atomic_load_n(&ws->busy, __ATOMIC_SEQ_CST) != 0)
            spin_pause(&n);
    }
}

static void reset_half(tracec_i_half *hf, bool unseal) {
    hf->gen++;
    hf->cur_blk = 0;
    hf->cur_off = 0;
    atomic_store_explicit(&hf->published, 0, memory_order_relaxed);
    atomic_store_explicit(&hf->state, unseal ? 0 : TRACEC_I_SEALED, memory_order_release);
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

static void do_switch(tracec_i_buffer *b, int x) {
    int y = 1 - x;
    tracec_i_half *X = &b->half[x], *Y = &b->half[y];
    Y->phase = TRACEC_I_ACTIVE;
    reset_half(Y, true);
    atomic_store_explicit(&b->active, (uint32_t)y, memory_order_release);
    atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
    X->phase = TRACEC_I_FULL;
    steal_half(b, x, false);
    atomic_fetch_add_explicit(&b->switches, 1, memory_order_relaxed);
    pthread_cond_broadcast(&b->cv);
}

/* Overwrites the other half.  Called and returns with mu held; drops it while waiting. */
static void do_wrap(tracec_i_buffer *b, int x, const tracec_i_wstate *self) {
    int y = 1 - x;
    tracec_i_half *X = &b->half[x], *Y = &b->half[y];
    Y->phase = TRACEC_I_WRAPPING;
    steal_half(b, y, false);
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    uint32_t from = Y->cur_blk;
    size_t off = Y->cur_off;
    pthread_mutex_unlock(&b->mu);
    uint64_t s = wait_published(Y);
    wait_writers(b, list, y, self);
    uint64_t lost = count_records(Y, from, TRACEC_I_BLOCKS(s), off);
    pthread_mutex_lock(&b->mu);
    atomic_fetch_add_explicit(&b->overwritten, lost, memory_order_relaxed);
    Y->phase = TRACEC_I_ACTIVE;
    reset_half(Y, true);
    atomic_store_explicit(&b->active, (uint32_t)y, memory_order_release);
    atomic_fetch_or_explicit(&X->state, TRACEC_I_SEALED, memory_order_acq_rel);
    X->phase = TRACEC_I_FULL;
    steal_half(b, x, false);
    b->stealing--;
    if (b->stealing == 0) reap(b);
    atomic_fetch_add_explicit(&b->switches, 1, memory_order_relaxed);
    pthread_cond_broadcast(&b->cv);
}

static tracec_status_t drop(tracec_i_buffer *b, tracec_status_t why) {
    atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed);
    return why;
}

/*
 * Decides what to do when half h could not take `body` bytes.  Called with
 * mu held.  Returns RETRY (try again), PARK, or a final status (a drop is
 * counted here).  `ws` is the writer taking a chunk (NULL for emits);
 * `in_grow` says it holds a packet open (grow()), so it must not wait with
 * its chunk busy: where an emit would wait in STREAMING LOSSLESS, PARK tells
 * grow() to give the chunk back first and then wait (grow_parked()).  On a
 * callback thread nothing waits: the record is refused (WOULD_DEADLOCK).
 * Nor on a thread that has another packet open that the wait (or a wrap)
 * could be waiting for (thread_open_packet_blocks()): refused the same way,
 * checked only where it would wait, so switches and drops do not pay for it.
 */
static int make_room(tracec_i_buffer *b, int h, uint32_t body, const tracec_i_wstate *ws, bool in_grow) {
    bool on_cb = tracec_i_current_thread != NULL;
    bool can_wait = !in_grow && !on_cb;
    tracec_status_t no_wait = on_cb ? TRACEC_STATUS_WOULD_DEADLOCK : TRACEC_STATUS_BUFFER_FULL;
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    int x = (int)atomic_load_explicit(&b->active, memory_order_acquire);
    if (x != h) return RETRY;
    tracec_i_half *X = &b->half[x];
    uint64_t s = atomic_load_explicit(&X->state, memory_order_acquire);
    if (s & TRACEC_I_SEALED) {
        /* A delivery is locating the new records of the active half (ONESHOT, CIRCULAR): briefly. */
        if (!on_cb && thread_open_packet_blocks(b, -1, ws)) return drop(b, TRACEC_STATUS_WOULD_DEADLOCK);
        if (in_grow && !on_cb) return PARK;
        if (!can_wait) return drop(b, no_wait);
        pthread_cond_wait(&b->cv, &b->mu);
        return RETRY;
    }
    if ((uint64_t)TRACEC_I_CHARGED(s) + body <= b->size) return RETRY;
    int y = 1 - x;
    tracec_i_half *Y = &b->half[y];
    switch (b->mode) {
        case TRACEC_BUFFERING_MODE_STREAMING:
            if (b->policy == TRACEC_BUFFER_POLICY_DISCARD) return drop(b, TRACEC_STATUS_BUFFER_FULL);
            if (Y->phase == TRACEC_I_FREE) {
                do_switch(b, x);
                request(b, TRACEC_I_REQ_FULL);
                return RETRY;
            }
            if (!on_cb && thread_open_packet_blocks(b, y, ws)) return drop(b, TRACEC_STATUS_WOULD_DEADLOCK);
            if (in_grow && !on_cb) return PARK;
            if (!can_wait) return drop(b, no_wait);
            request(b, TRACEC_I_REQ_FULL);
            atomic_fetch_add_explicit(&b->waits, 1, memory_order_relaxed);
            pthread_cond_wait(&b->cv, &b->mu);
            return RETRY;
        case TRACEC_BUFFERING_MODE_CIRCULAR:
            /* Overwrite Y, unless a delivery is locating and copying its
               records or another producer is already wrapping it (both
               brief: wait), or, in grow(), this writer's open packet sits
               in Y (park it first: the new chunk may take its place). */
            if (in_grow && ws != NULL && ws->blk != NULL && __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == y)
                return on_cb ? (int)drop(b, no_wait) : PARK;
            if (Y->pinned || Y->phase == TRACEC_I_WRAPPING) {
                if (!on_cb && thread_open_packet_blocks(b, -1, ws)) return drop(b, TRACEC_STATUS_WOULD_DEADLOCK);
                if (in_grow && !on_cb) return PARK;
                if (!can_wait) return drop(b, no_wait);
                pthread_cond_wait(&b->cv, &b->mu);
                return RETRY;
            }
            if (!on_cb && thread_open_packet_blocks(b, y, ws)) return drop(b, TRACEC_STATUS_WOULD_DEADLOCK);
            do_wrap(b, x, ws);
            return RETRY;
        default: /* ONESHOT: no space comes back while it runs; from now on full_drop() refuses without mu */
            if (!atomic_load_explicit(&b->full, memory_order_relaxed))
                atomic_store_explicit(&b->full, 1, memory_order_release);
            return drop(b, TRACEC_STATUS_BUFFER_FULL);
    }
}

/*
 * ONESHOT after it filled: true when a record of `body` bytes is refused at
 * once, without the mutex: `full` is set, the half is not being captured
 * by a delivery (sealed: the slow path waits for it, as before) and the
 * record does not fit.  A running ONESHOT half only grows, so this is the
 * answer make_room() would give; a record that still fits (a smaller one)
 * is never refused here.  *st is the status: BUFFER_FULL (counted, one
 * atomic increment), or CLOSED (not counted) if the buffer stopped.
 */
static bool full_drop(tracec_i_buffer *b, uint32_t body, tracec_status_t *st) {
    if (TRACEC_I_LIKELY(!atomic_load_explicit(&b->full, memory_order_acquire))) return false;
    uint64_t s = atomic_load_explicit(&b->half[0].state, memory_order_acquire);
    if ((s & TRACEC_I_SEALED) || (uint64_t)TRACEC_I_CHARGED(s) + body <= b->size) return false;
    *st = atomic_load_explicit(&b->accepting, memory_order_acquire) ? drop(b, TRACEC_STATUS_BUFFER_FULL)
                                                                    : TRACEC_STATUS_CLOSED;
    return true;
}

/* ---- emit ---------------------------------------------------------------- */

static tracec_status_t durable_emit(tracec_i_buffer *b, uint32_t category, uint32_t kind, const void *payload,
                                    size_t size) {
    size_t body = TRACEC_I_BLK_BODY(size);
    if (body + TRACEC_I_BLK_HDR > b->durable_cap) return TRACEC_STATUS_RECORD_TOO_LARGE;
    pthread_mutex_lock(&b->dmu);
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
        pthread_mutex_unlock(&b->dmu);
        return TRACEC_STATUS_CLOSED;
    }
    size_t off = atomic_load_explicit(&b->doff, memory_order_relaxed);
    if (off + TRACEC_I_BLK_HDR + body > b->durable_cap) {
        pthread_mutex_unlock(&b->dmu);
        return drop(b, TRACEC_STATUS_BUFFER_FULL);
    }
    tracec_i_blk *blk = (tracec_i_blk *)(void *)(b->dmem + off);
    blk->body = (uint32_t)body;
    blk->size = (uint32_t)size;
    blk->category = category;
    blk->kind = kind;
    memcpy(blk + 1, payload, size);
    atomic_store_explicit(&b->doff, off + TRACEC_I_BLK_HDR + body, memory_order_release);
    pthread_mutex_unlock(&b->dmu);
    atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_buffer_emit(tracec_buffer_id_t buffer_id, uint32_t category, uint32_t kind,
                                   const void *payload, size_t size) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (payload == NULL || size == 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (size > b->size) return TRACEC_STATUS_RECORD_TOO_LARGE;
    if (is_durable(b, category, kind)) return durable_emit(b, category, kind, payload, size);
    uint32_t body = (uint32_t)TRACEC_I_BLK_BODY(size);
    if (body > b->size) return TRACEC_STATUS_RECORD_TOO_LARGE;
    if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    for (;;) {
        int h = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        tracec_i_half *hf = &b->half[h];
        uint64_t old;
        bool sealed;
        tracec_i_blk *blk = try_reserve(b, hf, body, 0, &old, &sealed);
        if (blk != NULL) {
            blk->size = (uint32_t)size;
            blk->category = category;
            blk->kind = kind;
            memcpy(blk + 1, payload, size);
            publish(hf);
            atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
            watermark_check(b, TRACEC_I_CHARGED(old), (uint64_t)TRACEC_I_CHARGED(old) + body);
            return TRACEC_STATUS_SUCCESS;
        }
        tracec_status_t fst;
        if (!sealed && full_drop(b, body, &fst)) return fst;
        pthread_mutex_lock(&b->mu);
        int r = make_room(b, h, body, NULL, false);
        pthread_mutex_unlock(&b->mu);
        if (r != RETRY) return (tracec_status_t)r;
    }
}

/* ---- the packet writer ---------------------------------------------------- */

/*
 * Gives `ws` a new chunk with at least `min_body` bytes.  Called with mu
 * held.  In grow(), the partial packet [base, base + partial) is copied into
 * it before the writer's fields change, so a deliverer that sees the new
 * half also sees the copy done.
 */
static int acquire_chunk(tracec_i_buffer *b, tracec_i_wstate *ws, uint32_t min_body, bool in_grow,
                         const uint8_t *partial_src, size_t partial) {
    for (;;) {
        if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
        int h = (int)atomic_load_explicit(&b->active, memory_order_acquire);
        tracec_i_half *hf = &b->half[h];
        uint32_t want = (uint32_t)b->chunk > min_body ? (uint32_t)b->chunk : min_body;
        /* grow(): half the packet again of headroom if the half has it, so the
           setters (and nested lengths widening at their ends) that follow do
           not take a chunk each; try_reserve() settles for min_body. */
        if (partial > 0 && want - min_body < partial / 2u)
            want = (uint32_t)TRACEC_I_BLK_BODY((size_t)min_body + partial / 2u);
        uint64_t old;
        bool sealed;
        tracec_i_blk *blk = try_reserve(b, hf, want, min_body, &old, &sealed);
        if (blk != NULL) {
            blk->size = TRACEC_I_CHUNK_MARK;
            __atomic_store_n(&blk->committed, 0u, __ATOMIC_RELAXED);
            blk->kind = 0;
            uint8_t *body = (uint8_t *)(blk + 1);
            if (partial) memcpy(body, partial_src, partial);
            publish(hf);
            ws->blk = blk;
            ws->body = body;
            ws->body_size = blk->body;
            ws->used = 0;
            __atomic_store_n(&ws->stolen, 0u, __ATOMIC_RELAXED);
            __atomic_store_n(&ws->busy, 1u, __ATOMIC_SEQ_CST);
            __atomic_store_n(&ws->half, h, __ATOMIC_RELEASE);
            watermark_check(b, TRACEC_I_CHARGED(old), (uint64_t)TRACEC_I_CHARGED(old) + blk->body);
            return TRACEC_STATUS_SUCCESS;
        }
        int r = make_room(b, h, min_body, ws, in_grow);
        if (r != RETRY) return r;
    }
}

static bool buffer_grow(tracec_writer *w, size_t need);

static uint8_t g_nowhere[8]; /* the window of a packet that could not begin */

static void writer_fail_window(tracec_buffer_writer *bw, tracec_status_t st) {
    tracec_writer *w = &bw->w;
    w->base = w->ptr = w->end = g_nowhere;
    w->status = st;
    w->top = TRACEC_I_ROOT;
}

static void refuse(tracec_i_buffer *b) { atomic_fetch_add_explicit(&b->refused, 1, memory_order_relaxed); }

/* Abandons the packet open on `ws` (counted in `refused` unless grow() counted it): its bytes become padding. */
static void abandon_packet(tracec_i_wstate *ws) {
    tracec_i_buffer *b = ws->b;
    if (!ws->lost) refuse(b);
    ws->lost = 0;
    if (ws->in_packet == 2) pthread_mutex_unlock(&b->dmu);
    else __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    ws->in_packet = 0;
}

/*
 * True when `base` is the base of the packet open on `ws` (in its chunk,
 * in the durable part, or parked in the scratch buffer by grow()): a window
 * with another base belongs to a packet that already ended, or to another
 * writer, and must not touch the open packet.
 */
static bool is_open_window(const tracec_i_wstate *ws, const uint8_t *base) {
    if (ws->in_packet == 2) return base == ws->b->dmem + atomic_load_explicit(&ws->b->doff, memory_order_relaxed);
    return ws->in_packet == 1 &&
           ((ws->body != NULL && base == ws->body + ws->used) || (ws->scratch != NULL && base == ws->scratch));
}

/* A fresh state for `bw` on buffer `b`, in b's writer list. */
static tracec_status_t state_attach(tracec_buffer_writer *bw, tracec_i_buffer *b) {
    size_t reserve = bw->i_reserve ? bw->i_reserve : TRACEC_I_DEFAULT_RESERVE;
    reserve = TRACEC_I_BLK_BODY(reserve) + TRACEC_I_BLK_HDR + 8u;
    if (reserve > b->chunk) return TRACEC_STATUS_RECORD_TOO_LARGE;
    tracec_i_wstate *ws = state_alloc();
    if (ws == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
    ws->reserve = (uint32_t)reserve;
    ws->handle = b->handle;
    ws->streaming = b->mode == TRACEC_BUFFERING_MODE_STREAMING;
    ws->asym = (uint8_t)b->asym;
    pthread_mutex_lock(&b->mu);
    ws->b = b;
    ws->next = b->writers;
    b->writers = ws;
    pthread_mutex_unlock(&b->mu);
    bw->i_ws = ws;
    bw->i_gen = ws->gen;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_buffer_writer_init(tracec_buffer_writer *bw, tracec_buffer_id_t buffer_id, size_t reserve) {
    if (bw == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    memset(bw, 0, sizeof *bw);
    bw->i_ws = &g_no_writer;
    writer_fail_window(bw, TRACEC_STATUS_BAD_STATE);
    bw->w.grow = buffer_grow;
    bw->w.sink = bw;
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (reserve > UINT32_MAX / 2u) return TRACEC_STATUS_RECORD_TOO_LARGE;
    bw->i_reserve = (uint32_t)reserve;
    tracec_status_t st = state_attach(bw, b);
    if (st == TRACEC_STATUS_SUCCESS) bw->i_handle = buffer_id.handle;
    return st;
}

/*
 * Takes `ws` out of its buffer: gives its chunk back (committed records stay
 * and are delivered; the unused tail becomes padding) and folds its packet
 * count into the buffer's.  A packet still open is abandoned and counted.
 */
static bool state_detach(tracec_i_wstate *ws) {
    tracec_i_buffer *b = ws->b;
    if (b == NULL) return true;
    if (ws->in_packet != 0) abandon_packet(ws);
    __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    pthread_mutex_lock(&b->mu);
    /* A delivery or wrap walks the list without mu (stealing > 0): the state stays
       linked, inert, and reap() frees it.  Never wait here: the stealer may be
       waiting for another packet this thread has open. */
    bool now = b->stealing == 0;
    if (now) {
        for (tracec_i_wstate **pp = &b->writers; *pp; pp = &(*pp)->next) {
            if (*pp == ws) {
                *pp = ws->next;
                break;
            }
        }
    } else {
        ws->zombie = 1;
        ws->gen++; /* a writer still referring to it gets a fresh state at its next begin */
    }
    atomic_fetch_add_explicit(&b->accepted, __atomic_load_n(&ws->packets, __ATOMIC_RELAXED), memory_order_relaxed);
    ws->packets = 0;
    ws->blk = NULL;
    ws->body = NULL;
    ws->body_size = 0;
    ws->used = 0;
    __atomic_store_n(&ws->half, -1, __ATOMIC_RELEASE);
    ws->b = NULL;
    pthread_mutex_unlock(&b->mu);
    return now;
}

/* Unlinks and frees the states detached while the list was being walked.  mu held, stealing == 0. */
static void reap(tracec_i_buffer *b) {
    for (tracec_i_wstate **pp = &b->writers; *pp;) {
        tracec_i_wstate *ws = *pp;
        if (ws->zombie) {
            *pp = ws->next;
            state_free(ws);
        } else {
            pp = &ws->next;
        }
    }
}

/* The writer's state if it is still its own (not released at its thread's exit), else NULL. */
static tracec_i_wstate *own_state(const tracec_buffer_writer *bw) {
    tracec_i_wstate *ws = bw->i_ws;
    return ws != NULL && ws != &g_no_writer && ws->gen == bw->i_gen ? ws : NULL;
}

void tracec_buffer_writer_release(tracec_buffer_writer *bw) {
    if (bw == NULL) return;
    tracec_i_wstate *ws = own_state(bw);
    if (ws != NULL) {
        pthread_mutex_lock(&g_pool_mu);
        ws->owner = NULL;
        pthread_mutex_unlock(&g_pool_mu);
        if (state_detach(ws)) state_free(ws);
    }
    bw->i_ws = &g_no_writer;
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
        if (ast != TRACEC_STATUS_SUCCESS) {
            writer_fail_window(bw, ast);
            return;
        }
        ws = bw->i_ws;
    }
    if (ws->owner == NULL) state_bind(ws);
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
        abandon_packet(ws);
        fresh_chunk = true;
    }
    tracec_i_buffer *b = ws->b;
    if (b == NULL || atomic_load_explicit(&b->destroyed, memory_order_acquire)) {
        writer_fail_window(bw, TRACEC_STATUS_BUFFER_NOT_FOUND);
        return;
    }
    if (!atomic_load_explicit(&b->accepting, memory_order_relaxed)) {
        writer_fail_window(bw, TRACEC_STATUS_CLOSED);
        return;
    }
    ws->category = category;
    ws->kind = kind;
    if (is_durable(b, category, kind)) {
        pthread_mutex_lock(&b->dmu);
        if (!atomic_load_explicit(&b->accepting, memory_order_acquire)) {
            pthread_mutex_unlock(&b->dmu);
            writer_fail_window(bw, TRACEC_STATUS_CLOSED);
            return;
        }
        size_t off = atomic_load_explicit(&b->doff, memory_order_relaxed);
        w->base = b->dmem + off;
        w->ptr = w->base + TRACEC_I_BLK_HDR;
        w->end = b->dmem + b->durable_cap;
        if (w->ptr > w->end) w->ptr = w->end;
        ws->in_packet = 2;
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
        if (full_drop(b, ws->reserve, &fst)) {
            writer_fail_window(bw, fst);
            return;
        }
        pthread_mutex_lock(&b->mu);
        tracec_status_t st = (tracec_status_t)acquire_chunk(b, ws, ws->reserve, false, NULL, 0);
        /* The abandoned window must never be the new packet's (a reused half can put the
           new chunk where the old one was): then one more chunk, further on. */
        if (st == TRACEC_STATUS_SUCCESS && ws->body + ws->used == abandoned) {
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE); /* nothing open in that chunk while this may wait */
            st = (tracec_status_t)acquire_chunk(b, ws, ws->reserve, false, NULL, 0);
        }
        pthread_mutex_unlock(&b->mu);
        if (st != TRACEC_STATUS_SUCCESS) {
            writer_fail_window(bw, st);
            return;
        }
    }
    w->base = ws->body + ws->used;
    w->ptr = w->base + TRACEC_I_BLK_HDR;
    w->end = ws->body + ws->body_size;
    ws->in_packet = 1;
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
        if (p == NULL) return drop(b, TRACEC_STATUS_OUT_OF_MEMORY); /* the chunk is still ours */
        ws->scratch = p;
        ws->scratch_cap = (uint32_t)cap;
    }
    memcpy(ws->scratch, w->base, partial);
    w->base = ws->scratch;
    w->ptr = w->end = ws->scratch + partial;
    atomic_fetch_add_explicit(&g_grow_waits, 1, memory_order_relaxed);
    pthread_mutex_lock(&b->mu);
    ws->blk = NULL;
    ws->body = NULL;
    ws->body_size = 0;
    ws->used = 0;
    __atomic_store_n(&ws->half, -1, __ATOMIC_RELEASE);
    __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE); /* after the copy: the half may be reset from here on */
    int r = acquire_chunk(b, ws, total, false, ws->scratch, partial);
    pthread_mutex_unlock(&b->mu);
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
    if (st != TRACEC_STATUS_BUFFER_FULL && st != TRACEC_STATUS_WOULD_DEADLOCK && st != TRACEC_STATUS_OUT_OF_MEMORY)
        refuse(ws->b);
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
    if (w->base == g_nowhere) return false; /* a packet that could not begin */
    tracec_i_wstate *ws = WS(bw);
    tracec_i_buffer *b = ws->b;
    size_t partial = (size_t)(w->ptr - w->base);
    size_t total = TRACEC_I_BLK_BODY(partial + need);
    if (ws->in_packet == 2) {
        if (total + TRACEC_I_BLK_HDR > b->durable_cap) return grow_failed(w, ws, TRACEC_STATUS_RECORD_TOO_LARGE);
        return grow_failed(w, ws, drop(b, TRACEC_STATUS_BUFFER_FULL));
    }
    if (ws->in_packet != 1) return false;
    if (total > b->size) return grow_failed(w, ws, TRACEC_STATUS_RECORD_TOO_LARGE);
    tracec_status_t fst;
    if (full_drop(b, (uint32_t)total, &fst)) return grow_failed(w, ws, fst);
    pthread_mutex_lock(&b->mu);
    int r = acquire_chunk(b, ws, (uint32_t)total, true, w->base, partial);
    pthread_mutex_unlock(&b->mu);
    if (r == PARK) r = grow_parked(b, ws, w, (uint32_t)total, partial);
    if (r != TRACEC_STATUS_SUCCESS) return grow_failed(w, ws, (tracec_status_t)r);
    w->base = ws->body;
    w->ptr = ws->body + partial;
    w->end = ws->body + ws->body_size;
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
    if (w->base == g_nowhere) return w->status != TRACEC_STATUS_SUCCESS ? w->status : TRACEC_STATUS_BAD_STATE;
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
        if (kind_of_packet == 2) pthread_mutex_unlock(&b->dmu);
        else __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
        /* A packet grow() lost was counted there (grow_failed()); any other is the
           writer's error (NESTING_MISMATCH, MESSAGE_TOO_LARGE): refused. */
        if (!ws->lost) refuse(b);
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
        pthread_mutex_unlock(&b->dmu);
        atomic_fetch_add_explicit(&b->accepted, 1, memory_order_relaxed);
    } else {
        ws->used = (uint32_t)(next - ws->body);
        __atomic_store_n(&ws->packets, ws->packets + 1u, __ATOMIC_RELAXED);
        __atomic_store_n(&ws->blk->committed, ws->used, __ATOMIC_RELAXED);
        __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    }
    w->base = w->ptr = next;
    return TRACEC_STATUS_SUCCESS;
}

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
    pthread_mutex_unlock(&b->mu);
    uint64_t s = wait_published(F);
    wait_writers(b, list, f, NULL);
    pthread_mutex_lock(&b->mu);
    b->stealing--; /* the callbacks may release writers */
    if (b->stealing == 0) reap(b);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    deliver_blocks(d, F->mem, TRACEC_I_BLOCKS(s));
    dflush(d);
    pthread_mutex_lock(&b->mu);
    F->phase = TRACEC_I_FREE;
    reset_half(F, false);
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
            steal_half(b, x, false);
            X->phase = TRACEC_I_FULL;
            continue;
        }
        if (flags == 0 || TRACEC_I_BLOCKS(s) == 0) break;
        do_switch(b, x);
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
    steal_half(b, x, false);
    X->pinned++;
    if (circ) Y->pinned++;
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    uint32_t xfrom = X->cur_blk, yfrom = Y->cur_blk;
    size_t xoff = X->cur_off, yoff = Y->cur_off;
    pthread_mutex_unlock(&b->mu);

    wait_published(X);
    wait_writers(b, list, x, NULL);
    uint64_t sy = 0;
    if (circ) {
        sy = wait_published(Y);
        wait_writers(b, list, y, NULL);
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

    pthread_mutex_lock(&b->mu);
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
    if (b->stealing == 0) reap(b);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);

    deliver_durable(d, dfrom, dto);
    if (circ) deliver_blocks(d, yp, yto - yfrom);
    deliver_blocks(d, xp, xto - xfrom);
    dflush(d);

    pthread_mutex_lock(&b->mu);
    if (!copied) {
        X->pinned--;
        if (circ) Y->pinned--;
    }
    pthread_cond_broadcast(&b->cv);
}

void tracec_i_deliver_pass(tracec_i_buffer *b) {
    tracec_i_thread *t = tracec_i_current_thread;
    if (t == NULL) return;
    pthread_mutex_lock(&b->mu);
    if (b->delivering || b->half[0].mem == NULL) {
        pthread_mutex_unlock(&b->mu);
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
    b->delivering = 0;
    pthread_cond_broadcast(&b->cv);
    bool again = atomic_load_explicit(&b->pending, memory_order_acquire) != 0;
    pthread_mutex_unlock(&b->mu);
    if (again) tracec_i_kick(b);
}

/* ---- flush, stop, start --------------------------------------------------- */

/* Requests a full delivery; returns the ticket to wait for.  Not under mu. */
static uint64_t flush_request(tracec_i_buffer *b) {
    pthread_mutex_lock(&b->mu);
    uint64_t ticket = ++b->flush_req;
    pthread_mutex_unlock(&b->mu);
    atomic_fetch_or_explicit(&b->pending, TRACEC_I_REQ_FLUSH, memory_order_acq_rel);
    tracec_i_kick(b);
    return ticket;
}

static void flush_wait(tracec_i_buffer *b, uint64_t ticket) {
    pthread_mutex_lock(&b->mu);
    while (b->flush_done < ticket && !atomic_load_explicit(&tracec_i_finalized, memory_order_acquire))
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

tracec_status_t tracec_flush_buffer(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    flush_wait(b, flush_request(b));
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_flush_buffer_async(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_CLOSED;
    (void)flush_request(b);
    return TRACEC_STATUS_SUCCESS;
}

void tracec_i_buffer_stop(tracec_i_buffer *b) {
    atomic_store_explicit(&b->accepting, 0, memory_order_seq_cst);
    uint64_t ticket = flush_request(b);
    if (tracec_i_current_thread == NULL) flush_wait(b, ticket);
}

void tracec_i_buffer_start(tracec_i_buffer *b, tracec_buffer_disposition_t disposition) {
    pthread_mutex_lock(&b->dmu);
    pthread_mutex_lock(&b->mu);
    while (b->delivering || b->stealing) pthread_cond_wait(&b->cv, &b->mu);
    if (atomic_load_explicit(&b->accepting, memory_order_acquire) ||
        atomic_load_explicit(&b->destroyed, memory_order_acquire)) {
        pthread_mutex_unlock(&b->mu);
        pthread_mutex_unlock(&b->dmu);
        return;
    }
    steal_half(b, 0, true);
    steal_half(b, 1, true);
    if (disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE) {
        atomic_store_explicit(&b->doff, 0, memory_order_relaxed);
        b->dcur = 0;
        atomic_fetch_add_explicit(&b->epoch, 1, memory_order_relaxed);
    }
    bool clear = disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE ||
                 disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE;
    int x = (int)atomic_load_explicit(&b->active, memory_order_relaxed);
    tracec_i_half *X = &b->half[x];
    if (b->mode == TRACEC_BUFFERING_MODE_STREAMING) {
        /* stop delivered and freed both halves */
        X->phase = TRACEC_I_ACTIVE;
        reset_half(X, true);
    } else if (clear) {
        atomic_store_explicit(&b->full, 0, memory_order_relaxed); /* published by the state's release below */
        for (int i = 0; i < 2; i++) {
            if (b->half[i].mem == NULL) continue;
            b->half[i].phase = TRACEC_I_FREE;
            reset_half(&b->half[i], false);
        }
        atomic_store_explicit(&b->active, 0, memory_order_release);
        b->half[0].phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&b->half[0].state, 0, memory_order_release);
    } else {
        uint64_t s = atomic_load_explicit(&X->state, memory_order_relaxed);
        X->phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&X->state, s & ~TRACEC_I_SEALED, memory_order_release);
    }
    atomic_store_explicit(&b->accepting, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&b->mu);
    pthread_mutex_unlock(&b->dmu);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);
static const tracec_i_hooks hooks = {NULL, fork_prepare, fork_parent, fork_child};

/* ---- creation, destruction, queries ---------------------------------------- */

/*
 * The buffer mutex guards short sections (a chunk, a switch, delivery
 * bookkeeping): a thread that finds it taken spins a little before it
 * sleeps (glibc's adaptive mutex), since waking a sleeper costs far more
 * than the section it waited for.
 */
static void init_buffer_mutex(pthread_mutex_t *mu) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

tracec_status_t tracec_create_buffer_with_config(tracec_context_id_t context, const tracec_buffer_config_t *cfg,
                                                 tracec_buffer_id_t *buffer_id) {
    if (cfg == NULL || buffer_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_runtime_init(TRACEC_I_LAYER_BUFFERS, &hooks);
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_BAD_STATE;
    int mode = cfg->mode == TRACEC_BUFFERING_MODE_DEFAULT ? TRACEC_BUFFERING_MODE_STREAMING : (int)cfg->mode;
    if (mode < TRACEC_BUFFERING_MODE_ONESHOT || mode >= TRACEC_BUFFERING_MODE_LAST)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if ((int)cfg->policy < 0 || cfg->policy >= TRACEC_BUFFER_POLICY_LAST) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (mode == TRACEC_BUFFERING_MODE_STREAMING && cfg->policy == TRACEC_BUFFER_POLICY_NONE)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (mode != TRACEC_BUFFERING_MODE_STREAMING && cfg->policy == TRACEC_BUFFER_POLICY_LOSSLESS)
        return TRACEC_STATUS_UNSUPPORTED;
    if (cfg->size == 0 || cfg->callback == NULL || cfg->watermark > cfg->size) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg->size > TRACEC_MAX_BUFFER_SIZE || cfg->durable_size > TRACEC_MAX_BUFFER_SIZE)
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    if (!tracec_i_context_exists(context.handle)) return TRACEC_STATUS_CONTEXT_NOT_FOUND;

    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096u;
    pthread_once(&g_membarrier_once, membarrier_init);
    tracec_i_buffer *b = (tracec_i_buffer *)calloc(1, sizeof *b);
    if (b == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
    b->asym = g_membarrier;
    b->mode = mode;
    b->deliver = tracec_i_deliver_pass;
    b->policy = mode == TRACEC_BUFFERING_MODE_STREAMING ? (int)cfg->policy : TRACEC_BUFFER_POLICY_DISCARD;
    b->size = round_up(cfg->size, page);
    b->watermark = cfg->watermark;
    /* Every block is charged at least 8 bytes, so headers need at most 2x the payload. */
    b->phys = b->size * 3u;
    size_t chunk = b->size / 8u;
    if (chunk > 16384u) chunk = 16384u;
    if (chunk < 512u) chunk = 512u;
    if (chunk > b->size) chunk = b->size;
    b->chunk = chunk & ~(size_t)7;
    b->callback = cfg->callback;
    b->callback_data = cfg->callback_data;
    b->ctx_handle = context.handle;
    int halves = mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1 : 2;
    bool ok = true;
    for (int i = 0; i < halves; i++) {
        b->half[i].mem = (uint8_t *)aligned_alloc(64, round_up(b->phys, 64));
        ok = ok && b->half[i].mem != NULL;
    }
    if (mode != TRACEC_BUFFERING_MODE_STREAMING) {
        size_t dsz = cfg->durable_size ? cfg->durable_size : b->size / 16u;
        if (dsz < page) dsz = page;
        b->durable_cap = round_up(dsz, page);
        b->dmem = (uint8_t *)aligned_alloc(64, b->durable_cap);
        ok = ok && b->dmem != NULL;
    }
    if (!ok) {
        free(b->half[0].mem);
        free(b->half[1].mem);
        free(b->dmem);
        free(b->snap);
        free(b);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    for (int i = 0; i < 2; i++) atomic_init(&b->half[i].state, TRACEC_I_SEALED);
    b->half[0].phase = TRACEC_I_FREE;
    init_buffer_mutex(&b->mu);
    pthread_mutex_init(&b->dmu, NULL);
    pthread_cond_init(&b->cv, NULL);
    atomic_init(&b->thread, tracec_i_default_thread());

    pthread_mutex_lock(&tracec_i_global_mu);
    size_t slot = TRACEC_MAX_BUFFERS;
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        if (atomic_load_explicit(&tracec_i_buffers[i], memory_order_relaxed) == NULL) {
            slot = i;
            break;
        }
    }
    int started = tracec_i_context_started(context.handle);
    if (slot == TRACEC_MAX_BUFFERS || started < 0) {
        pthread_mutex_unlock(&tracec_i_global_mu);
        free(b->half[0].mem);
        free(b->half[1].mem);
        free(b->dmem);
        free(b->snap);
        pthread_mutex_destroy(&b->mu);
        pthread_mutex_destroy(&b->dmu);
        pthread_cond_destroy(&b->cv);
        free(b);
        return slot == TRACEC_MAX_BUFFERS ? TRACEC_STATUS_LIMIT_EXCEEDED : TRACEC_STATUS_CONTEXT_NOT_FOUND;
    }
    b->handle = slot + 1;
    if (started > 0) {
        b->half[0].phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&b->half[0].state, 0, memory_order_relaxed);
        atomic_store_explicit(&b->accepting, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&tracec_i_buffers[slot], b, memory_order_release);
    pthread_mutex_unlock(&tracec_i_global_mu);
    buffer_id->handle = b->handle;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_create_buffer(tracec_context_id_t context, size_t size, size_t watermark,
                                     tracec_buffer_policy_t policy, tracec_buffer_tracing_cb_t callback,
                                     void *callback_data, tracec_buffer_id_t *buffer_id) {
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = TRACEC_BUFFERING_MODE_STREAMING;
    cfg.policy = policy;
    cfg.size = size;
    cfg.watermark = watermark;
    cfg.callback = callback;
    cfg.callback_data = callback_data;
    if (policy == TRACEC_BUFFER_POLICY_NONE) return TRACEC_STATUS_INVALID_ARGUMENT;
    return tracec_create_buffer_with_config(context, &cfg, buffer_id);
}

tracec_status_t tracec_destroy_buffer(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    if (atomic_exchange_explicit(&b->destroyed, 1, memory_order_acq_rel)) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    /* Deliver what is left while the buffer still looks alive to its thread. */
    atomic_store_explicit(&b->accepting, 0, memory_order_seq_cst);
    if (!atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) flush_wait(b, flush_request(b));
    pthread_mutex_lock(&b->dmu);
    pthread_mutex_lock(&b->mu);
    while (b->delivering || b->stealing) pthread_cond_wait(&b->cv, &b->mu);
    steal_half(b, 0, false);
    steal_half(b, 1, false);
    for (int i = 0; i < 2; i++) atomic_fetch_or_explicit(&b->half[i].state, TRACEC_I_SEALED, memory_order_acq_rel);
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    pthread_mutex_unlock(&b->mu);
    for (int i = 0; i < 2; i++) {
        if (b->half[i].mem == NULL) continue;
        wait_published(&b->half[i]);
        wait_writers(b, list, i, NULL);
    }
    pthread_mutex_lock(&b->mu);
    b->stealing--;
    if (b->stealing == 0) reap(b);
    for (int i = 0; i < 2; i++) {
        free(b->half[i].mem);
        b->half[i].mem = NULL;
    }
    free(b->dmem);
    b->dmem = NULL;
    b->durable_cap = 0;
    free(b->snap);
    b->snap = NULL;
    b->snap_cap = 0;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_mutex_unlock(&b->dmu);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_assign_callback_thread(tracec_buffer_id_t buffer_id, tracec_callback_thread_t cb_thread_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (cb_thread_id.handle == 0 || cb_thread_id.handle > TRACEC_MAX_CALLBACK_THREADS)
        return TRACEC_STATUS_THREAD_NOT_FOUND;
    tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[cb_thread_id.handle - 1], memory_order_acquire);
    if (t == NULL) return TRACEC_STATUS_THREAD_NOT_FOUND;
    if (tracec_i_current_thread == NULL && tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    pthread_mutex_lock(&b->mu);
    if (tracec_i_current_thread == NULL)
        while (b->delivering) pthread_cond_wait(&b->cv, &b->mu);
    atomic_store_explicit(&b->thread, t, memory_order_release);
    pthread_mutex_unlock(&b->mu);
    if (atomic_load_explicit(&b->pending, memory_order_acquire)) tracec_i_kick(b);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_query_buffer_stats(tracec_buffer_id_t buffer_id, tracec_buffer_stats_t *st) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (st == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&b->mu);
    uint64_t in_writers = 0;
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) in_writers += __atomic_load_n(&ws->packets, __ATOMIC_RELAXED);
    st->accepted = atomic_load(&b->accepted) + in_writers;
    pthread_mutex_unlock(&b->mu);
    st->dropped = atomic_load(&b->dropped);
    st->overwritten = atomic_load(&b->overwritten);
    st->delivered = atomic_load(&b->delivered);
    st->deliveries = atomic_load(&b->deliveries);
    st->watermark_requests = atomic_load(&b->wm_requests);
    st->half_switches = atomic_load(&b->switches);
    st->producer_waits = atomic_load(&b->waits);
    st->refused = atomic_load(&b->refused);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_buffer_epoch(tracec_buffer_id_t buffer_id, uint64_t *epoch) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (epoch == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    *epoch = atomic_load_explicit(&b->epoch, memory_order_relaxed);
    return TRACEC_STATUS_SUCCESS;
}

/* ---- fork ------------------------------------------------------------------ */

static void fork_prepare(void) {
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_lock(&g_pool_mu); /* after the buffers': make_room() takes it under b->mu */
}

static void fork_parent(void) {
    pthread_mutex_unlock(&g_pool_mu);
    for (size_t i = TRACEC_MAX_BUFFERS; i-- > 0;) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_unlock(&b->mu);
    }
}

/* The child starts with empty buffers: it must never deliver the parent's records. */
static void fork_child(void) {
    pthread_mutex_init(&g_pool_mu, NULL);
    /* The registration belongs to the process: make sure the child has one, or fall back. */
    if (g_membarrier && !membarrier_register()) {
        g_membarrier = 0;
        for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
            tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
            if (b == NULL) continue;
            b->asym = 0;
            for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) ws->asym = 0;
        }
    }
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_unlock(&b->mu);
        init_buffer_mutex(&b->mu);
        pthread_mutex_init(&b->dmu, NULL);
        pthread_cond_init(&b->cv, NULL);
        if (b->half[0].mem == NULL) continue;
        for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) {
            __atomic_store_n(&ws->stolen, 1u, __ATOMIC_SEQ_CST);
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_SEQ_CST);
            ws->packets = 0;
        }
        b->delivering = 0;
        b->stealing = 0;
        b->flush_req = b->flush_done = 0;
        atomic_store(&b->pending, 0);
        for (int h = 0; h < 2; h++) {
            b->half[h].phase = TRACEC_I_FREE;
            b->half[h].pinned = 0;
            reset_half(&b->half[h], false);
        }
        atomic_store(&b->active, 0);
        atomic_store(&b->full, 0);
        atomic_store(&b->doff, 0);
        b->dcur = 0;
        atomic_fetch_add(&b->epoch, 1);
        atomic_store(&b->accepted, 0);
        atomic_store(&b->dropped, 0);
        atomic_store(&b->overwritten, 0);
        atomic_store(&b->delivered, 0);
        atomic_store(&b->deliveries, 0);
        atomic_store(&b->wm_requests, 0);
        atomic_store(&b->switches, 0);
        atomic_store(&b->waits, 0);
        atomic_store(&b->refused, 0);
        if (atomic_load(&b->accepting)) {
            b->half[0].phase = TRACEC_I_ACTIVE;
            atomic_store(&b->half[0].state, 0);
        }
    }
}
