/*
 * buffer_thread.c - callback threads.  Every delivery (and so every
 * callback) runs on the thread its buffer is assigned to: the default
 * thread, started on first use, or one made by
 * tracec_create_callback_thread().  A thread sleeps until kicked, then
 * runs a delivery pass on each of its buffers that has a request pending.
 */
#define _GNU_SOURCE 1
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buffer_internal.h"

_Thread_local tracec_i_thread *tracec_i_current_thread;

/* sched_setattr(2)'s argument (glibc has no wrapper). */
struct tracec_i_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

/*
 * A callback thread sleeps until a producer kicks it, then must run soon:
 * while it waits for a CPU, the producers fill the free half and a
 * LOSSLESS producer then waits.  On a fair-share (EEVDF) kernel a task
 * that asks for a short slice gets an early deadline and preempts the
 * running task when it wakes; its CPU share is unchanged.  Only the slice
 * changes: the policy and nice value are read first and kept, and a thread
 * that is not SCHED_OTHER is left alone.  The slice is a hint (Linux 6.6+,
 * unprivileged); where it is not supported the call fails and nothing
 * changes.  TRACEC_CALLBACK_SLICE_US sets it in microseconds (default
 * 100; 0 leaves the kernel's default).
 */
static void short_slice(void) {
#if defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
    unsigned long us = 100;
    const char *e = getenv("TRACEC_CALLBACK_SLICE_US");
    if (e != NULL && *e != '\0') us = strtoul(e, NULL, 10);
    if (us == 0) return;
    struct tracec_i_sched_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0u) != 0 || a.sched_policy != SCHED_OTHER) return;
    a.size = sizeof a;
    a.sched_flags = 0;
    a.sched_runtime = (uint64_t)us * 1000u;
    (void)syscall(SYS_sched_setattr, 0, &a, 0u);
#endif
}

static void *thread_main(void *arg) {
    tracec_i_thread *t = (tracec_i_thread *)arg;
    tracec_i_current_thread = t;
    atomic_store_explicit(&t->up, 1, memory_order_release);
    short_slice();
    uint64_t seen = 0;
    tracec_i_lock(&t->mu);
    for (;;) {
        while (t->kick == seen && !t->stop) pthread_cond_wait(&t->cv, &t->mu);
        bool stop = t->stop != 0;
        seen = t->kick;
        tracec_i_unlock(&t->mu);
        for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
            tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
            if (b == NULL || atomic_load_explicit(&b->thread, memory_order_acquire) != t) continue;
            if (atomic_load_explicit(&b->pending, memory_order_acquire) != 0) tracec_i_deliver_pass(b);
        }
        tracec_i_lock(&t->mu);
        if (stop && t->kick == seen) break;
    }
    tracec_i_unlock(&t->mu);
    return NULL;
}

/* Starts t's OS thread if it is not running.  Under t->mu. */
static void ensure_running(tracec_i_thread *t) {
    sigset_t all, old;
    if (t->running || t->stop) return;
    sigfillset(&all); /* the program's signal handlers never run on a callback thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store_explicit(&t->up, 0, memory_order_relaxed);
    if (pthread_create(&t->tid, NULL, thread_main, t) == 0) t->running = 1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* Returns once the thread runs (it sets `up` before it takes t->mu): a fork right after this
       never copies a thread caught halfway through its start-up, which under a sanitizer holds
       the allocator's locks the child would need. */
    while (t->running && !atomic_load_explicit(&t->up, memory_order_acquire)) sched_yield();
}

static tracec_i_thread *new_thread(size_t slot) {
    tracec_i_runtime_init();
    tracec_i_thread *t = (tracec_i_thread *)calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->handle = slot + 1;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    atomic_store_explicit(&tracec_i_threads[slot], t, memory_order_release);
    return t;
}

tracec_i_thread *tracec_i_default_thread(void) {
    tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[0], memory_order_acquire);
    if (t != NULL) return t;
    tracec_i_lock(&tracec_i_global_mu);
    t = atomic_load_explicit(&tracec_i_threads[0], memory_order_acquire);
    if (t == NULL) t = new_thread(0);
    tracec_i_unlock(&tracec_i_global_mu);
    return t;
}

void tracec_i_thread_start(tracec_i_thread *t) {
    tracec_i_lock(&t->mu);
    ensure_running(t);
    tracec_i_unlock(&t->mu);
}

void tracec_i_kick(tracec_i_buffer *b) {
    tracec_i_thread *t = atomic_load_explicit(&b->thread, memory_order_acquire);
    if (t == NULL) return;
    tracec_i_lock(&t->mu);
    ensure_running(t);
    t->kick++;
    pthread_cond_signal(&t->cv);
    tracec_i_unlock(&t->mu);
}

tracec_status_t tracec_create_callback_thread(tracec_callback_thread_t *cb_thread_id) {
    if (cb_thread_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_BAD_STATE;
    (void)tracec_i_default_thread();
    tracec_i_lock(&tracec_i_global_mu);
    tracec_i_thread *t = NULL;
    for (size_t i = 1; i < TRACEC_MAX_CALLBACK_THREADS; i++) {
        if (atomic_load_explicit(&tracec_i_threads[i], memory_order_relaxed) == NULL) {
            t = new_thread(i);
            if (t == NULL) {
                tracec_i_unlock(&tracec_i_global_mu);
                return TRACEC_STATUS_OUT_OF_MEMORY;
            }
            break;
        }
    }
    tracec_i_unlock(&tracec_i_global_mu);
    if (t == NULL) return TRACEC_STATUS_LIMIT_EXCEEDED;
    tracec_i_lock(&t->mu);
    ensure_running(t);
    int ok = t->running;
    tracec_i_unlock(&t->mu);
    if (!ok) return TRACEC_STATUS_ERROR;
    cb_thread_id->handle = t->handle;
    return TRACEC_STATUS_SUCCESS;
}

void tracec_i_threads_stop_all(void) {
    for (size_t i = 0; i < TRACEC_MAX_CALLBACK_THREADS; i++) {
        tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[i], memory_order_acquire);
        if (t == NULL || t == tracec_i_current_thread) continue;
        tracec_i_lock(&t->mu);
        t->stop = 1;
        int running = t->running;
        pthread_cond_signal(&t->cv);
        tracec_i_unlock(&t->mu);
        if (running) pthread_join(t->tid, NULL);
        tracec_i_lock(&t->mu);
        t->running = 0;
        tracec_i_unlock(&t->mu);
    }
}

void tracec_i_threads_fork_prepare(void) {
    for (size_t i = 0; i < TRACEC_MAX_CALLBACK_THREADS; i++) {
        tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[i], memory_order_acquire);
        if (t != NULL) pthread_mutex_lock(&t->mu);
    }
}

void tracec_i_threads_fork_parent(void) {
    for (size_t i = TRACEC_MAX_CALLBACK_THREADS; i-- > 0;) {
        tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[i], memory_order_acquire);
        if (t != NULL) pthread_mutex_unlock(&t->mu);
    }
}

/* The child has no callback threads: they are started again on first use. */
void tracec_i_threads_fork_child(void) {
    for (size_t i = 0; i < TRACEC_MAX_CALLBACK_THREADS; i++) {
        tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[i], memory_order_acquire);
        if (t == NULL) continue;
        pthread_mutex_unlock(&t->mu);
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        t->running = 0;
        t->kick = 0;
    }
    tracec_i_current_thread = NULL;
}
