/*
 * test_handoff.c - handoff delivery (tracec_buffer_config_t.handoff): a
 * buffer in a memfd hands regions to a reader that maps the same memfd,
 * which saves them and says so with tracec_buffer_region_saved().  The
 * reader here reads through a second, read-only mapping, as the recorder
 * does: it copies [saved so far, extent) of the region, checks the region's
 * gen again after the copy, walks the blocks in the copy (chunk tags
 * included) and checks every record.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "buffer_util.h"
#include "tracec/abi/shm_layout.h"

#define MAX_HANDS 65536
#define THREADS 4

typedef struct hand_msg {
    uint32_t region, extent;
    uint64_t gen;
} hand_msg;

typedef struct reader {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hand_msg *q;
    size_t head, tail; /* queued handoffs: [head, tail) */
    size_t handoffs;
    int stop;
    tracec_buffer_id_t buf;
    const uint8_t *map;
    size_t map_size;
    int fd;
    /* what the reader saved */
    uint64_t gen_seen[3];
    uint32_t consumed[3];
    uint8_t *scratch;
    size_t records, user_records, packets;
    uint64_t next_seq[THREADS];
    int ordered;     /* every record of a thread comes in order, none missing (LOSSLESS) */
    size_t stale;    /* copies the region's gen changed under (CIRCULAR wraps) */
    size_t save_errors;
    char bad[256];   /* the first thing that was wrong ("" when none) */
} reader;

static void reader_bad(reader *r, const char *what, uint64_t a, uint64_t b) {
    if (r->bad[0] == '\0') snprintf(r->bad, sizeof r->bad, "%s (%llu, %llu)", what, (unsigned long long)a,
                                    (unsigned long long)b);
}

static void handoff_cb(tracec_buffer_id_t id, uint32_t region, uint64_t gen, uint32_t extent, void *data) {
    reader *r = (reader *)data;
    (void)id;
    pthread_mutex_lock(&r->mu);
    if (r->tail - r->head < MAX_HANDS) {
        hand_msg *m = &r->q[r->tail++ % MAX_HANDS];
        m->region = region;
        m->gen = gen;
        m->extent = extent;
    }
    r->handoffs++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static const tracec_shm_header *hdr(const reader *r) { return (const tracec_shm_header *)(const void *)r->map; }
static uint64_t ld64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static uint32_t ld32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static const tracec_shm_region *region_words(const reader *r, uint32_t region) {
    return region == TRACEC_BUFFER_REGION_DURABLE ? &hdr(r)->durable : &hdr(r)->half[region];
}

static const uint8_t *region_base(const reader *r, uint32_t region) {
    const tracec_shm_header *h = hdr(r);
    size_t at = region == TRACEC_BUFFER_REGION_DURABLE ? h->halves * h->half_bytes : region * h->half_bytes;
    return r->map + TRACEC_SHM_HEADER_BYTES + at;
}

static bool varint(const uint8_t **p, const uint8_t *e, uint64_t *v) {
    *v = 0;
    for (int s = 0; s < 64 && *p < e; s += 7) {
        uint8_t c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) return true;
    }
    return false;
}

/* One record: a trec (emitted) or a Trace.packet record (a track event) whose field 900 holds one. */
static void take_record(reader *r, uint32_t category, uint32_t kind, const uint8_t *p, size_t n) {
    trec t;
    if (category == TRACEC_BUFFER_CATEGORY_TRACING && kind == TRACEC_BUFFER_TRACING_TRACK_EVENT) {
        const uint8_t *e = p + n;
        uint64_t len, m;
        if (n < 4 || p[0] != 0x0A || (p++, !varint(&p, e, &len)) || len != (uint64_t)(e - p) || e - p < 3 ||
            p[0] != 0xA2 || p[1] != 0x38 || (p += 2, !varint(&p, e, &m)) || m != (uint64_t)(e - p))
            return reader_bad(r, "not a Trace.packet record of field 900", n, 0);
        n = (size_t)m;
        r->packets++;
    } else {
        r->user_records++;
    }
    if (!trec_check(p, n, &t) || t.thread >= THREADS) return reader_bad(r, "a torn record", n, 0);
    if (r->ordered && t.seq != r->next_seq[t.thread]) return reader_bad(r, "out of order", t.seq, r->next_seq[t.thread]);
    r->next_seq[t.thread] = t.seq + 1;
    r->records++;
}

/* Walks blocks [p, p + n) of a copy of a region of generation `gen`, as the recorder does. */
static void walk(reader *r, const uint8_t *p, size_t n, uint64_t gen, bool in_chunk) {
    size_t off = 0;
    while (off < n) {
        tracec_i_blk b;
        if (n - off < sizeof b) return reader_bad(r, "a short block header", off, n);
        memcpy(&b, p + off, sizeof b);
        if (b.body % 8 != 0 || b.body > n - off - sizeof b) return reader_bad(r, "a block past the extent", off, b.body);
        if (!in_chunk && b.size == 0xffffffffu) {
            if (b.kind != TRACEC_SHM_CHUNK_TAG(gen)) return reader_bad(r, "a chunk of another generation", b.kind, gen);
            if (b.committed > b.body) return reader_bad(r, "committed past the chunk", b.committed, b.body);
            walk(r, p + off + sizeof b, b.committed, gen, true);
        } else {
            if (b.size > b.body) return reader_bad(r, "a record larger than its block", b.size, b.body);
            take_record(r, b.category, b.kind, p + off + sizeof b, b.size);
        }
        off += sizeof b + b.body;
    }
}

/*
 * Saves one handoff: copies what is new, checks the gen after the copy,
 * walks the copy, then tells the buffer.  Returns the region_saved status.
 */
static tracec_status_t reader_save(reader *r, hand_msg m) {
    const tracec_shm_region *w = region_words(r, m.region);
    if (ld32(&w->handed) != TRACEC_SHM_REGION_HANDED && ld64(&w->gen) == m.gen)
        reader_bad(r, "handed but the words say FREE", m.region, m.gen);
    if (ld32(&w->extent) < m.extent && ld64(&w->gen) == m.gen) reader_bad(r, "extent below the handoff's", m.extent, 0);
    if (r->gen_seen[m.region] != m.gen) {
        r->gen_seen[m.region] = m.gen;
        r->consumed[m.region] = 0;
    }
    uint32_t from = r->consumed[m.region];
    if (m.extent > from) {
        memcpy(r->scratch, region_base(r, m.region) + from, m.extent - from);
#if !defined(__SANITIZE_THREAD__) /* (TSan does not model fences; it cannot see this memfd's other mapping either) */
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy's loads before the gen's */
#endif
        if (ld64(&w->gen) != m.gen) {
            r->stale++; /* reset under the copy (a CIRCULAR wrap): nothing of it is used */
        } else {
            walk(r, r->scratch, m.extent - from, m.gen, false);
            r->consumed[m.region] = m.extent;
        }
    }
    return tracec_buffer_region_saved(r->buf, m.region, m.gen);
}

/* The next queued handoff (waits up to 20 s); false when there is none. */
static bool reader_next(reader *r, hand_msg *m, bool wait) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    pthread_mutex_lock(&r->mu);
    while (wait && r->head == r->tail && !r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &dl) == 0) {
    }
    bool got = r->head != r->tail;
    if (got) *m = r->q[r->head++ % MAX_HANDS];
    pthread_mutex_unlock(&r->mu);
    return got;
}

/* Waits for the next handoff (made on the callback thread) and saves it. */
static void reader_save_next(reader *r) {
    hand_msg m = {0};
    cr_assert(reader_next(r, &m, true), "a handoff came");
    OK(reader_save(r, m));
}

static size_t reader_queued(reader *r) {
    pthread_mutex_lock(&r->mu);
    size_t n = r->tail - r->head;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* Saves every queued handoff; the number saved. */
static size_t reader_drain(reader *r) {
    hand_msg m = {0};
    size_t n = 0;
    while (reader_next(r, &m, false)) {
        if (reader_save(r, m) != TRACEC_STATUS_SUCCESS) r->save_errors++;
        n++;
    }
    return n;
}

/* The consumer thread: saves handoffs as they come until told to stop and nothing is queued. */
static void *consumer(void *arg) {
    reader *r = (reader *)arg;
    for (;;) {
        hand_msg m = {0};
        if (reader_next(r, &m, true)) {
            if (reader_save(r, m) != TRACEC_STATUS_SUCCESS) r->save_errors++;
            continue;
        }
        pthread_mutex_lock(&r->mu);
        bool done = r->stop && r->head == r->tail;
        pthread_mutex_unlock(&r->mu);
        if (done) return NULL;
    }
}

static void reader_init(reader *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->q = (hand_msg *)calloc(MAX_HANDS, sizeof *r->q);
    r->fd = -1;
    cr_assert_not_null(r->q);
}

/*
 * A handoff buffer of `mode` in a fresh sealed memfd, read by `r` (the
 * memfd mapped a second time, read-only).  `max_wait_ms` as in the config.
 */
static tracec_buffer_id_t handoff_buffer(tracec_context_id_t ctx, reader *r, tracec_buffering_mode_t mode,
                                         tracec_buffer_policy_t policy, size_t size, uint32_t max_wait_ms) {
    reader_init(r);
    size_t need = tracec_buffer_memory_size(mode, size, 0);
    cr_assert_gt(need, 0);
    r->fd = memfd_create("tracec-handoff", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_geq(r->fd, 0);
    cr_assert_eq(ftruncate(r->fd, (off_t)need), 0);
    cr_assert_eq(fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    void *m = mmap(NULL, need, PROT_READ, MAP_SHARED, r->fd, 0);
    cr_assert_neq(m, MAP_FAILED);
    r->map = (const uint8_t *)m;
    r->map_size = need;
    r->scratch = (uint8_t *)malloc(need);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.size = size;
    cfg.watermark = size; /* STREAMING: nothing is handed before a half fills, a flush or a stop */
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = r->fd;
    cfg.handoff = handoff_cb;
    cfg.handoff_data = r;
    cfg.max_wait_ms = max_wait_ms;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &r->buf));
    return r->buf;
}

static void reader_free(reader *r) {
    munmap((void *)(uintptr_t)r->map, r->map_size);
    close(r->fd);
    free(r->scratch);
    free(r->q);
}

static tracec_status_t emit_trec(tracec_buffer_id_t b, uint32_t category, uint32_t kind, uint32_t thread, uint64_t seq,
                                 size_t len) {
    uint8_t buf[256];
    trec_make(buf, len, thread, seq);
    return tracec_buffer_emit(b, category, kind, buf, len);
}

static tracec_status_t packet_trec(tracec_buffer_writer *bw, uint32_t thread, uint64_t seq, size_t len) {
    uint8_t buf[256];
    trec_make(buf, len, thread, seq);
    return put_bytes_packet(bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, buf, len);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- STREAMING ------------------------------------------------------------ */

typedef struct writer_arg {
    tracec_buffer_id_t b;
    uint32_t thread;
    uint64_t n, ok;
} writer_arg;

/* Records or packets of 32..199 bytes, in order. */
static void *writer_main(void *p) {
    writer_arg *a = (writer_arg *)p;
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, a->b, 0) != TRACEC_STATUS_SUCCESS) return NULL;
    for (uint64_t i = 0; i < a->n; i++) {
        size_t len = 32 + (size_t)((i * 37 + a->thread) % 168);
        /* Odd threads emit records, even ones write packets (a thread's records and its
           chunk's packets are at different places of the half: each kind is in order). */
        tracec_status_t st = (a->thread & 1)
                                 ? emit_trec(a->b, TRACEC_BUFFER_CATEGORY_USER, 0, a->thread, i, len)
                                 : packet_trec(&bw, a->thread, i, len);
        a->ok += st == TRACEC_STATUS_SUCCESS;
    }
    tracec_buffer_writer_release(&bw);
    return NULL;
}

Test(buffer_handoff, streaming_lossless_a_consumer_thread_saves_every_record_of_four_writers) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 8192, 60000);
    r.ordered = 1;
    pthread_t cons, w[THREADS];
    writer_arg wa[THREADS];
    cr_assert_eq(pthread_create(&cons, NULL, consumer, &r), 0);
    for (uint32_t t = 0; t < THREADS; t++) {
        wa[t] = (writer_arg){b, t, 5000, 0};
        cr_assert_eq(pthread_create(&w[t], NULL, writer_main, &wa[t]), 0);
    }
    for (uint32_t t = 0; t < THREADS; t++) pthread_join(w[t], NULL);
    OK(tracec_stop_context(ctx)); /* hands what is left */
    pthread_mutex_lock(&r.mu);
    r.stop = 1;
    pthread_cond_broadcast(&r.cv);
    pthread_mutex_unlock(&r.mu);
    pthread_join(cons, NULL);
    cr_assert_str_eq(r.bad, "");
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    uint64_t ok = 0;
    for (uint32_t t = 0; t < THREADS; t++) ok += wa[t].ok;
    cr_assert_eq(ok, THREADS * 5000u, "LOSSLESS: every packet was accepted");
    cr_assert_eq(st.dropped, 0);
    cr_assert_eq(st.accepted, ok);
    cr_assert_eq(r.records, ok, "the reader saved every record once: %zu of %llu", r.records, (unsigned long long)ok);
    for (uint32_t t = 0; t < THREADS; t++) cr_assert_eq(r.next_seq[t], 5000u);
    cr_assert_gt(r.packets, 0);
    cr_assert_gt(r.user_records, 0);
    cr_assert_eq(r.save_errors, 0);
    cr_assert_eq(st.saves_ignored, 0);
    cr_assert_gt(st.half_switches, 10);
    cr_assert_eq(st.deliveries, r.handoffs, "deliveries counts the handoffs");
    cr_assert_eq(st.delivered, 0);
    /* Everything handed was saved: no region is left handed; the counters were published at the stop. */
    cr_assert_eq(ld32(&hdr(&r)->half[0].handed), (uint32_t)TRACEC_SHM_REGION_FREE);
    cr_assert_eq(ld32(&hdr(&r)->half[1].handed), (uint32_t)TRACEC_SHM_REGION_FREE);
    cr_assert_eq(ld64(&hdr(&r)->accepted), st.accepted);
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

Test(buffer_handoff, a_flush_hands_the_active_halfs_completed_prefix) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 0);
    r.ordered = 1;
    for (uint64_t i = 0; i < 3; i++) OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, i, 40));
    cr_assert_eq(reader_queued(&r), 0, "nothing is handed before a flush");
    OK(tracec_flush_buffer(b)); /* returns once the handoff returned */
    hand_msg m = {0};
    cr_assert(reader_next(&r, &m, false));
    cr_assert_eq(m.region, 0);
    cr_assert_eq(m.gen, ld64(&hdr(&r)->half[0].gen));
    cr_assert_eq(m.extent, 3 * (16 + 40));
    cr_assert_eq(ld32(&hdr(&r)->half[0].extent), m.extent);
    cr_assert_eq(ld32(&hdr(&r)->half[0].blocks), 3);
    cr_assert_eq(ld32(&hdr(&r)->half[0].handed), (uint32_t)TRACEC_SHM_REGION_HANDED);
    OK(reader_save(&r, m));
    cr_assert_eq(r.records, 3);
    cr_assert_eq(ld32(&hdr(&r)->half[0].handed), (uint32_t)TRACEC_SHM_REGION_FREE);

    /* Packets: the writer's chunk is taken by the flush; it goes on in a new one past the prefix. */
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    for (uint64_t i = 0; i < 4; i++) OK(packet_trec(&bw, 1, i, 50));
    OK(tracec_flush_buffer(b));
    for (uint64_t i = 4; i < 6; i++) OK(packet_trec(&bw, 1, i, 50));
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 3, 40));
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_drain(&r), 2, "the same half, the same gen, a larger extent each time");
    cr_assert_eq(r.save_errors, 0);
    cr_assert_str_eq(r.bad, "");
    cr_assert_eq(r.records, 3 + 6 + 1);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_queued(&r), 0, "nothing new: nothing handed");
    tracec_buffer_writer_release(&bw);
    OK(tracec_stop_context(ctx));
    reader_drain(&r);
    cr_assert_eq(r.records, 10);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

Test(buffer_handoff, a_save_that_matches_no_handoff_is_ignored_and_counted) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 0);
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 0, 40));
    OK(tracec_flush_buffer(b));
    hand_msg m = {0};
    cr_assert(reader_next(&r, &m, false));
    cr_assert_eq(tracec_buffer_region_saved(b, m.region, m.gen + 2), TRACEC_STATUS_BAD_STATE, "another gen");
    cr_assert_eq(tracec_buffer_region_saved(b, m.region, m.gen - 2), TRACEC_STATUS_BAD_STATE, "an older gen");
    cr_assert_eq(tracec_buffer_region_saved(b, 1 - m.region, ld64(&hdr(&r)->half[1 - m.region].gen)),
                 TRACEC_STATUS_BAD_STATE, "a region that is not handed");
    cr_assert_eq(tracec_buffer_region_saved(b, TRACEC_BUFFER_REGION_DURABLE, 2), TRACEC_STATUS_INVALID_ARGUMENT,
                 "STREAMING has no durable part");
    cr_assert_eq(tracec_buffer_region_saved(b, 7, m.gen), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(ld32(&hdr(&r)->half[m.region].handed), (uint32_t)TRACEC_SHM_REGION_HANDED, "still owed");
    OK(reader_save(&r, m));
    cr_assert_eq(tracec_buffer_region_saved(b, m.region, m.gen), TRACEC_STATUS_BAD_STATE, "saved twice");
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.saves_ignored, 6);
    tracec_buffer_id_t none = {0x7777};
    cr_assert_eq(tracec_buffer_region_saved(none, 0, 2), TRACEC_STATUS_BUFFER_NOT_FOUND);

    /* A buffer with callback delivery hands nothing: every save is ignored. */
    collector c;
    collector_init(&c);
    tracec_buffer_id_t cb;
    OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &cb));
    cr_assert_eq(tracec_buffer_region_saved(cb, 0, 2), TRACEC_STATUS_BAD_STATE);
    OK(tracec_query_buffer_stats(cb, &st));
    cr_assert_eq(st.saves_ignored, 1);
    OK(tracec_destroy_buffer(b));
    OK(tracec_destroy_buffer(cb));
    reader_free(&r);
    test_end();
}

Test(buffer_handoff, handoff_needs_a_memfd_and_no_callback) {
    tracec_context_id_t ctx = started_context();
    reader r;
    reader_init(&r);
    collector c;
    collector_init(&c);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.size = 4096;
    cfg.handoff = handoff_cb;
    cfg.handoff_data = &r;
    tracec_buffer_id_t b;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "process memory");
    size_t need = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_STREAMING, 4096, 0);
    int fd = memfd_create("tracec-handoff", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_eq(ftruncate(fd, (off_t)need), 0);
    cr_assert_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = fd;
    cfg.callback = collect_cb;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "both deliveries");
    cfg.callback = NULL;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    OK(tracec_destroy_buffer(b));
    cfg.handoff = NULL;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "no delivery");
    close(fd);
    free(r.q);
    test_end();
}

/* `n` 64-byte records (64 fill a 4096-byte half); how many were accepted in *ok, BUFFER_FULL in *full. */
static void emit_many(tracec_buffer_id_t b, uint64_t n, uint64_t *ok, uint64_t *full) {
    *ok = *full = 0;
    for (uint64_t i = 0; i < n; i++) {
        tracec_status_t s = emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, i, 64);
        *ok += s == TRACEC_STATUS_SUCCESS;
        *full += s == TRACEC_STATUS_BUFFER_FULL;
    }
}

Test(buffer_handoff, lossless_waits_for_a_handed_half_up_to_its_cap_then_drops_and_counts) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 50);
    uint64_t ok, full;
    double t0 = now_ms();
    emit_many(b, 1000, &ok, &full); /* nobody saves */
    double waited = now_ms() - t0;
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(ok, 128, "two halves' worth accepted: %llu", (unsigned long long)ok);
    cr_assert_eq(full, 1000 - ok);
    cr_assert_eq(st.dropped, full);
    /* One capped wait; then drops at once until the half is saved (not 50 ms a record). */
    cr_assert_geq(st.producer_waits, 1);
    cr_assert_geq(waited, 45.0, "the wait ran to its cap: %.1f ms", waited);
    cr_assert_lt(waited, 5000.0, "one wait, not one a record: %.1f ms", waited);
    /* The reader saves: the half is free, writers go on (the full half is switched, then handed). */
    reader_save_next(&r);
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 5000, 64));
    OK(tracec_flush_buffer(b));
    reader_drain(&r);
    cr_assert_eq(r.save_errors, 0);
    cr_assert_str_eq(r.bad, "");
    cr_assert_eq(r.records, ok + 1);
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

Test(buffer_handoff, the_default_cap_is_used_when_max_wait_ms_is_0) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 0);
    uint64_t ok, full;
    double t0 = now_ms();
    emit_many(b, 200, &ok, &full);
    cr_assert_geq(now_ms() - t0, TRACEC_BUFFER_MAX_WAIT_DEFAULT_MS * 0.9);
    cr_assert_eq(ok, 128);
    cr_assert_eq(full, 72);
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

/* max_wait_ms caps a LOSSLESS wait with callback delivery too (there 0 means no cap). */
Test(buffer_handoff, the_cap_applies_to_a_callback_buffer_that_sets_it) {
    tracec_context_id_t ctx = started_context();
    gate g;
    gate_init(&g);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.size = 4096;
    cfg.watermark = 4096;
    cfg.callback = gate_cb; /* holds the callback thread, and with it the first full half */
    cfg.callback_data = &g;
    cfg.max_wait_ms = 30;
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    uint64_t ok, full;
    double t0 = now_ms();
    emit_many(b, 1000, &ok, &full);
    double waited = now_ms() - t0;
    cr_assert_eq(ok, 128);
    cr_assert_eq(full, 1000 - 128);
    cr_assert_geq(waited, 27.0, "%.1f ms", waited);
    cr_assert_lt(waited, 5000.0, "one wait, not one a record: %.1f ms", waited);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, full);
    gate_open(&g);
    OK(tracec_flush_buffer(b)); /* the held half is delivered and freed: writers go on */
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 0, 64));
    OK(tracec_destroy_buffer(b));
    test_end();
}

Test(buffer_handoff, discard_drops_and_counts_while_the_other_half_is_handed) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 4096, 0);
    uint64_t ok, full;
    emit_many(b, 1000, &ok, &full);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(ok, 128, "the writer switched once (the other half was free), then dropped");
    cr_assert_eq(st.dropped, 1000 - ok);
    cr_assert_eq(st.producer_waits, 0);
    /* in the header as they happen, not at the next handoff (a killed process leaves them) */
    cr_assert_eq(ld64(&hdr(&r)->dropped), st.dropped);
    reader_save_next(&r);
    emit_many(b, 100, &ok, &full);
    cr_assert_eq(ok, 64, "after the save: one more half");
    OK(tracec_stop_context(ctx));
    reader_drain(&r);
    cr_assert_eq(r.records, 128 + 64);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

typedef struct blocked_arg {
    tracec_buffer_id_t b;
    int packets;
    tracec_status_t last;
    atomic_int done;
} blocked_arg;

/* Writes until a write fails (it waits for a half nobody saves first). */
static void *blocked_writer(void *p) {
    blocked_arg *a = (blocked_arg *)p;
    tracec_buffer_writer bw;
    tracec_status_t st = tracec_buffer_writer_init(&bw, a->b, 0);
    for (uint64_t i = 0; st == TRACEC_STATUS_SUCCESS; i++)
        st = a->packets ? packet_trec(&bw, 0, i, 100) : emit_trec(a->b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, i, 64);
    tracec_buffer_writer_release(&bw);
    a->last = st;
    atomic_store(&a->done, 1);
    return NULL;
}

Test(buffer_handoff, stop_and_destroy_release_a_writer_waiting_for_a_handed_half) {
    for (int variant = 0; variant < 4; variant++) { /* stop / destroy, records / packets */
        tracec_context_id_t ctx = started_context(); /* a context each: a stop is for good here */
        reader r;
        tracec_buffer_id_t b = handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS,
                                              4096, 100000);
        blocked_arg a = {b, variant & 1, TRACEC_STATUS_SUCCESS, 0};
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, blocked_writer, &a), 0);
        tracec_buffer_stats_t st = {0};
        for (int i = 0; i < 2000 && st.producer_waits == 0; i++) {
            usleep(10000);
            OK(tracec_query_buffer_stats(b, &st));
        }
        cr_assert_geq(st.producer_waits, 1, "the writer waits for the handed half");
        usleep(20000);
        cr_assert_eq(atomic_load(&a.done), 0);
        if (variant < 2) OK(tracec_stop_context(ctx));
        else OK(tracec_destroy_buffer(b));
        for (int i = 0; i < 2000 && !atomic_load(&a.done); i++) usleep(10000);
        cr_assert(atomic_load(&a.done), "the waiting writer was released");
        pthread_join(t, NULL);
        cr_assert(a.last == TRACEC_STATUS_CLOSED || a.last == TRACEC_STATUS_BUFFER_NOT_FOUND, "%s", ST(a.last));
        reader_drain(&r);
        cr_assert_str_eq(r.bad, "");
        if (variant < 2) OK(tracec_destroy_buffer(b));
        reader_free(&r);
    }
    test_end();
}

Test(buffer_handoff, a_restart_uses_a_free_half_or_takes_back_an_unsaved_one) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 0);
    tracec_start_options_t so = TRACEC_START_OPTIONS_INIT;
    /* The stop hands half 0; the next run writes half 1; the late save still counts. */
    for (uint64_t i = 0; i < 3; i++) OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, i, 40));
    OK(tracec_stop_context(ctx));
    hand_msg m0 = {0};
    cr_assert(reader_next(&r, &m0, false));
    cr_assert_eq(m0.region, 0);
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert_eq(ld32(&hdr(&r)->active), 1u, "the run starts in the free half");
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 3, 40));
    OK(reader_save(&r, m0));
    /* Both halves owed at a start: the active one is taken back (its gen advances; its save is ignored). */
    uint64_t ok, full;
    emit_many(b, 64, &ok, &full); /* fills half 1: switch to half 0, which the reader saved */
    cr_assert_eq(ok, 64);
    reader_save_next(&r); /* half 1, full */
    emit_many(b, 70, &ok, &full); /* half 0 fills; half 1 was saved: switch again */
    hand_msg m = {0};
    cr_assert(reader_next(&r, &m, true));
    cr_assert_eq(m.region, 0, "half 0, handed full");
    OK(tracec_stop_context(ctx)); /* hands half 1 */
    hand_msg m1 = {0};
    cr_assert(reader_next(&r, &m1, false));
    cr_assert_eq(m1.region, 1);
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert_neq(ld64(&hdr(&r)->half[1].gen), m1.gen, "half 1 was taken back");
    cr_assert_eq(ld32(&hdr(&r)->active), 1u);
    cr_assert_eq(tracec_buffer_region_saved(b, 1, m1.gen), TRACEC_STATUS_BAD_STATE);
    OK(reader_save(&r, m));
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 9999, 40));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.saves_ignored, 1);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

/* ---- ONESHOT, CIRCULAR ------------------------------------------------------ */

Test(buffer_handoff, oneshot_hands_its_half_and_durable_part_at_a_flush_only) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b = handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 4096, 0);
    r.ordered = 1;
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, 1, 0, 48)); /* durable */
    uint64_t ok, full;
    emit_many(b, 100, &ok, &full);
    cr_assert_eq(ok, 64);
    cr_assert_eq(reader_queued(&r), 0, "nothing is handed before a flush");
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_queued(&r), 2, "the durable part and the half");
    cr_assert_eq(reader_drain(&r), 2);
    cr_assert_eq(r.save_errors, 0);
    cr_assert_eq(r.records, 65, "%zu records (%zu user, %zu packets), %zu stale, %zu save errors, bad '%s'", r.records,
                 r.user_records, r.packets, r.stale, r.save_errors, r.bad);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_queued(&r), 0, "nothing new");
    OK(tracec_stop_context(ctx));
    cr_assert_eq(reader_queued(&r), 0);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

/* A packet writer that writes 1,000 packets of 100 bytes into a full ONESHOT buffer and keeps its writer. */
typedef struct full_arg {
    tracec_buffer_id_t b;
    tracec_buffer_writer bw;
    uint32_t thread;
    uint64_t full;
} full_arg;

static void *full_writer(void *p) {
    full_arg *a = (full_arg *)p;
    for (uint64_t i = 0; i < 1000; i++)
        if (packet_trec(&a->bw, a->thread, i, 100) == TRACEC_STATUS_BUFFER_FULL) a->full++;
    return NULL;
}

/*
 * A full ONESHOT buffer's drops, which each writer counts in its own state
 * (no count shared by the threads that all drop): the statistics count
 * every one while the writers are still there and after they are released,
 * the memfd's header has them by 64 as they happen (a recorder salvaging a
 * killed process reads that) and all of them after a flush.
 */
Test(buffer_handoff, oneshot_drops_counted_by_each_writer_reach_the_stats_and_the_header) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b = handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 8192, 0);
    full_arg a[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&a[i], 0, sizeof a[i]);
        a[i].b = b;
        a[i].thread = (uint32_t)i;
        OK(tracec_buffer_writer_init(&a[i].bw, b, 0));
        cr_assert_eq(pthread_create(&t[i], NULL, full_writer, &a[i]), 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    uint64_t full = a[0].full + a[1].full;
    cr_assert_gt(full, 1900, "an 8 KiB half keeps fewer than 100 of 2,000 packets (%llu refused)",
                 (unsigned long long)full);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, full, "counted while the writers are attached");
    cr_assert_eq(st.accepted + st.dropped, 2000);
    uint64_t in_header = ld64(&hdr(&r)->dropped);
    cr_assert(in_header <= full && in_header + 2 * 63 >= full, "the header has %llu of %llu before any handoff",
              (unsigned long long)in_header, (unsigned long long)full);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(ld64(&hdr(&r)->dropped), full, "all of them after a flush");
    for (int i = 0; i < 2; i++) tracec_buffer_writer_release(&a[i].bw);
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, full, "and after the writers are released");
    OK(tracec_stop_context(ctx));
    reader_drain(&r);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

Test(buffer_handoff, circular_hands_both_halves_and_a_wrap_voids_an_unsaved_handoff) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, 4096, 0);
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, 1, 0, 48));
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    for (uint64_t i = 0; i < 500; i++) OK(packet_trec(&bw, 0, i, 64));
    cr_assert_eq(reader_queued(&r), 0);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_queued(&r), 3, "the durable part, the older half, the active half");
    reader_drain(&r);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_gt(st.overwritten, 0);
    cr_assert_eq(r.records, 1 + 500 - st.overwritten, "%zu records, %llu accepted, %llu overwritten, %zu stale, bad '%s'",
                 r.records, (unsigned long long)st.accepted, (unsigned long long)st.overwritten, r.stale, r.bad);
    cr_assert_eq(r.save_errors, 0);
    cr_assert_str_eq(r.bad, "");
    /* Hand again, do not save, wrap twice: the halves' gens advance and the late saves are ignored. */
    for (uint64_t i = 500; i < 520; i++) OK(packet_trec(&bw, 0, i, 64));
    OK(tracec_flush_buffer(b));
    hand_msg m = {0};
    cr_assert(reader_next(&r, &m, false));
    cr_assert_neq(m.region, TRACEC_BUFFER_REGION_DURABLE);
    for (uint64_t i = 520; i < 1000; i++) OK(packet_trec(&bw, 0, i, 64));
    cr_assert_neq(ld64(&hdr(&r)->half[m.region].gen), m.gen);
    cr_assert_eq(tracec_buffer_region_saved(b, m.region, m.gen), TRACEC_STATUS_BAD_STATE);
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.saves_ignored, 1);
    tracec_buffer_writer_release(&bw);
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}

/* ---- fork ------------------------------------------------------------------ */

/* Not under TSan (a fork with threads running): the fork tests run in the other builds. */
#if !defined(__SANITIZE_THREAD__)
Test(buffer_handoff, a_fork_child_has_no_handoff_buffer) {
    tracec_context_id_t ctx = started_context();
    reader r;
    tracec_buffer_id_t b =
        handoff_buffer(ctx, &r, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4096, 0);
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 0, 40));
    OK(tracec_flush_buffer(b));
    hand_msg m = {0};
    cr_assert(reader_next(&r, &m, false));
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int bad = 0;
        bad |= emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 1, 40) != TRACEC_STATUS_BUFFER_NOT_FOUND;
        bad |= tracec_buffer_region_saved(b, m.region, m.gen) != TRACEC_STATUS_BUFFER_NOT_FOUND;
        bad |= tracec_flush_buffer(b) != TRACEC_STATUS_BUFFER_NOT_FOUND;
        _exit(bad);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child could use the parent's handoff buffer");
    OK(reader_save(&r, m));
    OK(emit_trec(b, TRACEC_BUFFER_CATEGORY_USER, 0, 0, 1, 40));
    OK(tracec_flush_buffer(b));
    cr_assert_eq(reader_drain(&r), 1);
    cr_assert_eq(r.records, 2);
    cr_assert_str_eq(r.bad, "");
    OK(tracec_destroy_buffer(b));
    reader_free(&r);
    test_end();
}
#endif
