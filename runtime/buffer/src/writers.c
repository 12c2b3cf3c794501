/*
 * writers.c - writer states: runtime-owned, bound to a thread, released at
 * thread exit; detaching a state from its buffer and reaping detached ones.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* syscall() */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#define WS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WS_LSAN 1
#endif
#endif
#ifdef WS_LSAN
#include <sanitizer/lsan_interface.h>
#endif
#include <unistd.h>

#include "buffer_internal.h"

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
pthread_mutex_t tracec_i_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static tracec_i_wstate *pool_all;  /* every state ever made, through pool_next */
static tracec_i_wstate *pool_free; /* the free ones, through next */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static _Thread_local char self_tag; /* its address names the calling thread */

/* What a writer refers to when it has no state: the fast paths never pass its checks. */
tracec_i_wstate tracec_i_no_writer = {.reserve = UINT32_MAX, .half = -1, .gen = 1};

static void thread_exit(void *self);
static void key_create(void) { (void)pthread_key_create(&thread_key, thread_exit); }

/*
 * A new state from a slab of mmap'd memory (under tracec_i_pool_mu): never
 * malloc, so a thread whose first event of a session comes from a signal
 * handler that interrupted malloc does not deadlock in it.
 */
static tracec_i_wstate *slab_state(void) {
    static uint8_t *slab;
    static size_t slab_left;
    size_t sz = (sizeof(tracec_i_wstate) + 63u) & ~(size_t)63u;
    if (slab_left < sz) {
        void *m = mmap(NULL, (size_t)64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
#ifdef WS_LSAN
        __lsan_register_root_region(m, (size_t)64 << 10); /* the states point at heap blocks (scratch) */
#endif
        slab = (uint8_t *)m;
        slab_left = (size_t)64 << 10;
    }
    tracec_i_wstate *ws = (tracec_i_wstate *)(void *)slab; /* zeroed by mmap */
    slab += sz;
    slab_left -= sz;
    return ws;
}

tracec_i_wstate *tracec_i_state_alloc(void) {
    tracec_i_lock(&tracec_i_pool_mu);
    tracec_i_wstate *ws = pool_free;
    if (ws != NULL) {
        pool_free = ws->next;
    } else if ((ws = slab_state()) != NULL) {
        ws->gen = 2; /* never 0: a writer that has none holds generation 0 */
        ws->pool_next = pool_all;
        pool_all = ws;
    }
    if (ws != NULL) ws->next = NULL;
    tracec_i_unlock(&tracec_i_pool_mu);
    return ws;
}

/* Back to the pool (the state is no longer in any buffer's list). */
void tracec_i_state_free(tracec_i_wstate *ws) {
    tracec_i_lock(&tracec_i_pool_mu);
    uint64_t gen = ws->gen + 1u;
    tracec_i_wstate *all = ws->pool_next;
    uint8_t *scratch = ws->scratch; /* kept for the state's next writer: free() is not for a signal handler */
    uint32_t scratch_cap = ws->scratch_cap;
    memset(ws, 0, sizeof *ws);
    ws->scratch = scratch;
    ws->scratch_cap = scratch_cap;
    ws->gen = gen;
    ws->pool_next = all;
    ws->reserve = UINT32_MAX;
    ws->half = -1;
    ws->next = pool_free;
    pool_free = ws;
    tracec_i_unlock(&tracec_i_pool_mu);
}

/* Binds `ws` to the calling thread (first begin). */
void tracec_i_state_bind(tracec_i_wstate *ws) {
    pthread_once(&key_once, key_create);
    (void)pthread_setspecific(thread_key, &self_tag);
    tracec_i_lock(&tracec_i_pool_mu);
    ws->owner = &self_tag;
    tracec_i_unlock(&tracec_i_pool_mu);
}

/*
 * True when the calling thread has a packet open on a writer other than
 * `except` (on any buffer): it must not wait for a delivery, which may be
 * waiting for that packet to end.
 */
static bool thread_has_open_packet(const tracec_i_wstate *except) {
    bool open = false;
    tracec_i_lock(&tracec_i_pool_mu);
    for (tracec_i_wstate *ws = pool_all; ws && !open; ws = ws->pool_next)
        open = ws != except && ws->owner == &self_tag && ws->in_packet != 0;
    tracec_i_unlock(&tracec_i_pool_mu);
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
bool tracec_i_thread_open_packet_blocks(const tracec_i_buffer *b, int h, const tracec_i_wstate *except) {
    bool open = false;
    tracec_i_lock(&tracec_i_pool_mu);
    for (tracec_i_wstate *ws = pool_all; ws && !open; ws = ws->pool_next)
        open = ws != except && ws->owner == &self_tag && ws->in_packet != 0 &&
               (ws->b != b || ws->in_packet == 2 || h < 0 || __atomic_load_n(&ws->half, __ATOMIC_RELAXED) == h);
    tracec_i_unlock(&tracec_i_pool_mu);
    return open;
}

/*
 * Releases every state bound to `self` (a thread that exits, or calls
 * exit(), on that thread).  Its open packets are abandoned first, all of
 * them: a state's detach waits for a delivery in progress, which may be
 * waiting for another of the thread's packets.
 */
static void release_thread_states(const void *self) {
    tracec_i_lock(&tracec_i_pool_mu);
    for (tracec_i_wstate *ws = pool_all; ws; ws = ws->pool_next)
        if (ws->owner == self && ws->b != NULL && ws->in_packet != 0) tracec_i_abandon_packet(ws);
    tracec_i_unlock(&tracec_i_pool_mu);
    for (;;) {
        tracec_i_wstate *mine = NULL;
        tracec_i_lock(&tracec_i_pool_mu);
        for (tracec_i_wstate *ws = pool_all; ws && !mine; ws = ws->pool_next)
            if (ws->owner == self) mine = ws;
        if (mine != NULL) mine->owner = NULL;
        tracec_i_unlock(&tracec_i_pool_mu);
        if (mine == NULL) return;
        if (tracec_i_state_detach(mine)) tracec_i_state_free(mine);
    }
}

static void thread_exit(void *self) { release_thread_states(self); }

void tracec_i_release_calling_thread_writers(void) { release_thread_states(&self_tag); }

void tracec_i_refuse(tracec_i_buffer *b) { atomic_fetch_add_explicit(&b->refused, 1, memory_order_relaxed); }

/* Abandons the packet open on `ws` (counted in `refused` unless grow() counted it): its bytes become padding. */
void tracec_i_abandon_packet(tracec_i_wstate *ws) {
    tracec_i_buffer *b = ws->b;
    if (!ws->lost) tracec_i_refuse(b);
    ws->lost = 0;
    if (ws->in_packet == 2) {
        tracec_i_durable_mark(b, false);
        tracec_i_unlock(&b->dmu);
    } else {
        /* a delivery takes a chunk only once busy is clear: the mark goes first */
        if (ws->body != NULL) tracec_i_clear_open(ws->body + ws->used);
        __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    }
    ws->in_packet = 0;
}

/*
 * Takes `ws` out of its buffer: gives its chunk back (committed records stay
 * and are delivered; the unused tail becomes padding) and folds its packet
 * count into the buffer's.  A packet still open is abandoned and counted.
 */
bool tracec_i_state_detach(tracec_i_wstate *ws) {
    tracec_i_buffer *b = ws->b;
    if (b == NULL) return true;
    if (ws->in_packet != 0) tracec_i_abandon_packet(ws);
    __atomic_store_n(&ws->busy, 0u, __ATOMIC_RELEASE);
    tracec_i_lock(&b->mu);
    /* A delivery or wrap walks the list without mu (stealing > 0): the state stays
       linked, inert, and tracec_i_reap() frees it.  Never wait here: the stealer may be
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
    atomic_fetch_add_explicit(&b->dropped, __atomic_load_n(&ws->drops, __ATOMIC_RELAXED), memory_order_relaxed);
    ws->packets = 0;
    ws->drops = 0;
    ws->blk = NULL;
    ws->body = NULL;
    ws->body_size = 0;
    ws->used = 0;
    __atomic_store_n(&ws->half, -1, __ATOMIC_RELEASE);
    ws->b = NULL;
    tracec_i_unlock(&b->mu);
    if (now) tracec_i_buffer_put(b); /* a zombie's reference goes when it is reaped */
    return now;
}

/* Unlinks and frees the states detached while the list was being walked.  mu held, stealing == 0. */
void tracec_i_reap(tracec_i_buffer *b) {
    for (tracec_i_wstate **pp = &b->writers; *pp;) {
        tracec_i_wstate *ws = *pp;
        if (ws->zombie) {
            *pp = ws->next;
            tracec_i_state_free(ws);
            tracec_i_buffer_put(b);
        } else {
            pp = &ws->next;
        }
    }
}
