/*
 * handles.c - the global lock, the handle tables (buffers, callback
 * threads, the live contexts' handles and started flags), the finalized
 * flag, and the process hooks (atexit, fork), which call the contexts',
 * threads' and buffers' hooks in a fixed order.
 *
 * Buffer handles: each slot of tracec_i_buffers[] holds one struct for good
 * (made at the slot's first create, never freed, so a stale pointer is safe
 * to read).  A create takes a destroyed struct that no call holds (`users`
 * is 0), else an empty slot, and gives it the handle
 * (++slot_gen << TRACEC_I_SLOT_BITS) | (slot + 1); destroy sets `live` to 0.
 * tracec_i_buffer_get() counts itself in `users`, then checks `live`, so a
 * handle of an earlier incarnation is refused, never taken for the buffer
 * that reuses its slot, and a buffer in use is never reused under its
 * caller.  A writer state counts in `users` too, from its attach to its
 * detach (or reap), so it never sees its buffer's struct reused: after a
 * destroy it finds `live` different from the handle it keeps and is
 * refused.  Such a state of a destroyed buffer keeps that slot from reuse
 * until it is released (at the latest when its thread exits), and creates
 * take other slots meanwhile.  At most TRACEC_MAX_BUFFERS are alive at once;
 * any number may be created and destroyed in a process's life.
 *
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "buffer_internal.h"

pthread_mutex_t tracec_i_global_mu = PTHREAD_MUTEX_INITIALIZER;
_Atomic(tracec_i_buffer *) tracec_i_buffers[TRACEC_MAX_BUFFERS];
_Atomic(tracec_i_thread *) tracec_i_threads[TRACEC_MAX_CALLBACK_THREADS];
tracec_i_ctx_slot tracec_i_contexts[TRACEC_MAX_CONTEXTS];
_Atomic int tracec_i_finalized;

static tracec_i_ctx_slot *ctx_slot(uint64_t h) {
    uint64_t slot = h & 0xffu;
    if (slot == 0 || slot > TRACEC_MAX_CONTEXTS) return NULL;
    tracec_i_ctx_slot *s = &tracec_i_contexts[slot - 1];
    return s->handle == h ? s : NULL;
}

bool tracec_i_context_exists(uint64_t h) {
    pthread_mutex_lock(&tracec_i_global_mu);
    bool ok = ctx_slot(h) != NULL;
    pthread_mutex_unlock(&tracec_i_global_mu);
    return ok;
}

int tracec_i_context_started(uint64_t h) {
    const tracec_i_ctx_slot *s = ctx_slot(h);
    return s == NULL ? -1 : s->started;
}

/* ---- process hooks: atexit, atfork ------------------------------------------ */

static void at_exit(void) { tracec_i_contexts_at_exit(); }

/* The global lock first, then the buffers' locks, then the callback threads'; undone in reverse. */
static void fork_prepare(void) {
    pthread_mutex_lock(&tracec_i_global_mu);
    tracec_i_buffers_fork_prepare();
    tracec_i_threads_fork_prepare();
}

static void fork_parent(void) {
    tracec_i_threads_fork_parent();
    tracec_i_buffers_fork_parent();
    pthread_mutex_unlock(&tracec_i_global_mu);
}

static void fork_child(void) {
    tracec_i_contexts_fork_child();
    tracec_i_threads_fork_child();
    tracec_i_buffers_fork_child();
    pthread_mutex_unlock(&tracec_i_global_mu);
    pthread_mutex_init(&tracec_i_global_mu, NULL);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void) {
    atexit(at_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Called by the first create of a context, buffer or callback thread. */
void tracec_i_runtime_init(void) { pthread_once(&init_once, init); }

/* The locks of this runtime the calling thread holds (tracec_i_lock() in buffer_internal.h). */
_Thread_local uint32_t tracec_i_tls_locks;
