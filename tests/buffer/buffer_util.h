/*
 * buffer_util.h - shared helpers of the buffer tests: a collector that
 * copies every delivered record, records that carry (thread, sequence,
 * checksum), a gate that holds a callback thread, and bounded waits (a
 * hang guard, never a speed assertion).
 */
#ifndef TRACEC_TEST_BUFFER_UTIL_H
#define TRACEC_TEST_BUFFER_UTIL_H

#define _DEFAULT_SOURCE 1
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracec/buffer.h"

/*
 * TRACEC_TEST_BUFFER_MEMORY=memfd (ctest's buffer_*_memfd runs): every
 * buffer the suite creates in process memory lives in a sealed memfd of its
 * own instead, so the engine's tests run over both memories.
 */
extern uint32_t tracec_i_buffer_test_memfd;
__attribute__((constructor)) static void buffer_test_memory(void) {
    const char *m = getenv("TRACEC_TEST_BUFFER_MEMORY");
    if (m != NULL && strcmp(m, "memfd") == 0) tracec_i_buffer_test_memfd = 1;
}

#define ST(x) tracec_status_str(x)
#define OK(call) cr_assert_eq((call), TRACEC_STATUS_SUCCESS, "%s: %s", #call, ST(call))

/* A record as the tests emit it. */
typedef struct trec {
    uint32_t thread;
    uint32_t len; /* total payload bytes */
    uint64_t seq;
    uint64_t sum; /* checksum of thread, seq and the filler */
} trec;

static inline uint64_t trec_sum(uint32_t thread, uint64_t seq, size_t len) {
    return (seq * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)thread << 32) ^ (uint64_t)len;
}

/* Fills `buf` (len >= sizeof(trec)) with a self-checking record. */
static inline void trec_make(uint8_t *buf, size_t len, uint32_t thread, uint64_t seq) {
    trec r = {thread, (uint32_t)len, seq, trec_sum(thread, seq, len)};
    memcpy(buf, &r, sizeof r);
    for (size_t i = sizeof r; i < len; i++) buf[i] = (uint8_t)(seq + i + thread);
}

/* True when the record is whole and consistent. */
static inline bool trec_check(const void *p, size_t len, trec *out) {
    if (len < sizeof(trec)) return false;
    trec r;
    memcpy(&r, p, sizeof r);
    if (r.len != len || r.sum != trec_sum(r.thread, r.seq, len)) return false;
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = sizeof r; i < len; i++)
        if (b[i] != (uint8_t)(r.seq + i + r.thread)) return false;
    *out = r;
    return true;
}

typedef struct delivered_rec {
    uint32_t category, kind;
    size_t size;
    uint8_t *data;
} delivered_rec;

typedef struct collector {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    delivered_rec *recs;
    size_t n, cap;
    uint64_t calls;
    uint64_t last_drop;
    size_t first_call_n;
    /* checks done inside the callback */
    pthread_t cb_thread;
    int cb_thread_set;
    int wrong_thread;   /* a callback ran on another thread than the first one */
    int on_producer;    /* a callback ran on a thread marked as producer */
    atomic_int in_cb;
    int concurrent;     /* two callbacks of one buffer overlapped */
    unsigned slow_us;   /* sleep in each callback */
    int keep;           /* copy payloads */
    int after_destroy;  /* set by a test once destroy returned */
    int called_after_destroy;
    /* a hook run inside the callback */
    void (*hook)(struct collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n);
    void *hook_data;
} collector;

static _Thread_local int tls_is_producer;

/* Live collectors, so test_end() can free what they hold. */
static collector *g_collectors[64];

static inline void collector_init(collector *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->keep = 1;
    for (int i = 0; i < 64; i++)
        if (g_collectors[i] == NULL) {
            g_collectors[i] = c;
            break;
        }
}

/* Frees the records (the collector can keep collecting afterwards). */
static inline void collector_free(collector *c) {
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) free(c->recs[i].data);
    free(c->recs);
    c->recs = NULL;
    c->n = c->cap = 0;
    pthread_mutex_unlock(&c->mu);
}

static inline void collector_forget(collector *c) {
    collector_free(c);
    for (int i = 0; i < 64; i++)
        if (g_collectors[i] == c) g_collectors[i] = NULL;
}

/* End of a test: no delivery after this, then the collectors' records are freed. */
static inline void test_end(void) {
    (void)tracec_finalize();
    for (int i = 0; i < 64; i++)
        if (g_collectors[i] != NULL) collector_forget(g_collectors[i]);
}

static void collect_cb(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                       void *data, uint64_t drop_count) {
    (void)ctx;
    collector *c = (collector *)data;
    if (atomic_fetch_add(&c->in_cb, 1) != 0) c->concurrent = 1;
    if (tls_is_producer) c->on_producer = 1;
    if (c->slow_us) usleep(c->slow_us);
    if (c->hook) c->hook(c, id, h, n);
    pthread_mutex_lock(&c->mu);
    if (c->after_destroy) c->called_after_destroy = 1;
    if (!c->cb_thread_set) {
        c->cb_thread = pthread_self();
        c->cb_thread_set = 1;
    } else if (!pthread_equal(c->cb_thread, pthread_self())) {
        c->wrong_thread = 1;
    }
    if (c->calls == 0) c->first_call_n = n;
    c->calls++;
    c->last_drop = drop_count;
    if (c->n + n > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        while (cap < c->n + n) cap *= 2;
        c->recs = (delivered_rec *)realloc(c->recs, cap * sizeof *c->recs);
        c->cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        delivered_rec *r = &c->recs[c->n++];
        r->category = h[i]->category;
        r->kind = h[i]->kind;
        r->size = h[i]->size;
        r->data = NULL;
        if (c->keep) {
            r->data = (uint8_t *)malloc(h[i]->size);
            memcpy(r->data, h[i]->payload, h[i]->size);
        }
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    atomic_fetch_sub(&c->in_cb, 1);
}

/*
 * In a forked child: the parent's callback thread may have been inside the
 * collector at fork (holding its lock, half-way through growing its array),
 * so the child re-creates the lock and starts from an empty collector (the
 * parent's records are the parent's; the child's copy is not freed).
 */
static inline void collector_after_fork(collector *c) {
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->recs = NULL;
    c->n = c->cap = 0;
    atomic_store(&c->in_cb, 0);
    c->concurrent = 0;
}

static inline size_t collector_count(collector *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* Waits until at least `n` records arrived (false after 20 s: a hang guard). */
static inline bool collector_wait(collector *c, size_t n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    while (c->n < n && rc == 0) rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    bool ok = c->n >= n;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* A created and started context. */
static inline tracec_context_id_t started_context(void) {
    tracec_context_id_t ctx = {0};
    OK(tracec_create_context(&ctx));
    cr_assert_neq(ctx.handle, 0);
    OK(tracec_start_context(ctx));
    return ctx;
}

/*
 * The common setup: a started context (*ctx), `c` initialised, and a
 * buffer of the context (tracec_create_buffer) that delivers to `c`.  A
 * test sets the collector's options (slow_us, keep, hook) afterwards,
 * before it emits.
 */
static inline tracec_buffer_id_t collected_buffer(tracec_context_id_t *ctx, collector *c, size_t size,
                                                  size_t watermark, tracec_buffer_policy_t policy) {
    *ctx = started_context();
    collector_init(c);
    tracec_buffer_id_t b;
    OK(tracec_create_buffer(*ctx, size, watermark, policy, collect_cb, c, &b));
    return b;
}

/*
 * The same with a buffer in `mode` (policy NONE, watermark 0, the given
 * durable size; 0: the default) made with tracec_create_buffer_with_config.
 */
static inline tracec_buffer_id_t collected_mode_buffer(tracec_context_id_t *ctx, collector *c,
                                                       tracec_buffering_mode_t mode, size_t size, size_t durable) {
    *ctx = started_context();
    collector_init(c);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = TRACEC_BUFFER_POLICY_NONE;
    cfg.size = size;
    cfg.watermark = 0;
    cfg.durable_size = durable;
    cfg.callback = collect_cb;
    cfg.callback_data = c;
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(*ctx, &cfg, &b));
    return b;
}

/* Flushes `b` (waiting for the delivery) and returns its stats. */
static inline tracec_buffer_stats_t flush_and_stats(tracec_buffer_id_t b) {
    OK(tracec_flush_buffer(b));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    return st;
}

/* One packet through `bw` whose only field is 900 (bytes) = data[0..len). */
static inline tracec_status_t put_bytes_packet(tracec_buffer_writer *bw, uint32_t category, uint32_t kind,
                                               const void *data, size_t len) {
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(bw, &pw, category, kind, &pkt);
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), data, len);
    return tracec_buffer_end_packet(bw, &pw, &pkt);
}

/*
 * A packet of `len` bytes that can never fit is RECORD_TOO_LARGE, an error
 * that is not counted as a drop, and the writer still takes a small packet
 * afterwards (an end with no packet open is BAD_STATE).
 */
static inline void assert_too_large_then_writer_works(tracec_buffer_id_t b, tracec_buffer_writer *bw,
                                                      const uint8_t *big, size_t len) {
    tracec_status_t pst = put_bytes_packet(bw, 1, 1, big, len);
    cr_assert_eq(pst, TRACEC_STATUS_RECORD_TOO_LARGE, "%s", ST(pst));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0);
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(bw, &pw, 1, 1, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 5);
    OK(tracec_buffer_end_packet(bw, &pw, &pkt));
    cr_assert_eq(tracec_buffer_end_packet(bw, &pw, &pkt), TRACEC_STATUS_BAD_STATE, "no packet open");
}

/* A gate: a callback that blocks its thread until the test opens it. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int entered, open;
} gate;

static inline void gate_init(gate *g) {
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->entered = g->open = 0;
}

static void gate_cb(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                    void *data, uint64_t drop_count) {
    (void)ctx, (void)id, (void)h, (void)n, (void)drop_count;
    gate *g = (gate *)data;
    pthread_mutex_lock(&g->mu);
    g->entered = 1;
    pthread_cond_broadcast(&g->cv);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static inline void gate_wait_entered(gate *g) {
    pthread_mutex_lock(&g->mu);
    while (!g->entered) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static inline void gate_open(gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/*
 * Blocks callback thread `thr` inside a gate callback: a helper buffer on
 * `thr` is emitted into and flushed asynchronously; returns once the
 * thread is inside the gate.
 */
static inline void gate_block_thread(tracec_context_id_t ctx, tracec_callback_thread_t thr, gate *g) {
    tracec_buffer_id_t gb;
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, gate_cb, g, &gb));
    OK(tracec_assign_callback_thread(gb, thr));
    uint64_t v = 1;
    int active = 0;
    OK(tracec_context_is_active(ctx, &active));
    cr_assert(active, "gate needs a started context");
    OK(tracec_buffer_emit(gb, TRACEC_BUFFER_CATEGORY_USER, 0, &v, sizeof v));
    OK(tracec_flush_buffer_async(gb));
    gate_wait_entered(g);
}

#endif
