/*
 * test_handles.c - buffer handles are reused with generations: any number
 * of buffers can be created and destroyed in one process (at most
 * TRACEC_MAX_BUFFERS alive at once), and a handle of a destroyed buffer is
 * refused by every call, never taken for the buffer that reuses its slot,
 * also from writers attached before the destroy and from threads that race
 * with creates and destroys.  Runs under ASan+UBSan and TSan (label tsan).
 */
#include "buffer_util.h"

/* The slot part of a handle (white box: the generation is above it). */
#define SLOT(h) ((h) & 0xffffu)

static void no_cb(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                  void *data, uint64_t drop_count) {
    (void)ctx, (void)id, (void)h, (void)n, (void)data, (void)drop_count;
}

/* Every call that takes a buffer handle refuses `stale`. */
static void assert_refused(tracec_context_id_t ctx, tracec_buffer_id_t stale) {
    uint8_t rec[16] = {1};
    tracec_buffer_stats_t st;
    uint64_t epoch;
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_emit(stale, 1, 1, rec, sizeof rec), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_flush_buffer(stale), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_flush_buffer_async(stale), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_query_buffer_stats(stale, &st), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_buffer_epoch(stale, &epoch), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_assign_callback_thread(stale, (tracec_callback_thread_t){1}),
                 TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_buffer_writer_init(&bw, stale, 0), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_USER, NULL, 0, stale),
                 TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_destroy_buffer(stale), TRACEC_STATUS_BUFFER_NOT_FOUND);
}

/* The memfd mappings of this process (lines of /proc/PID/maps naming a memfd) or its fds. */
static long proc_count(const char *what) {
    char cmd[96], buf[32];
    snprintf(cmd, sizeof cmd, strcmp(what, "maps") == 0 ? "grep -c memfd: /proc/%d/maps" : "ls /proc/%d/fd | wc -l",
             (int)getpid());
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    long n = fgets(buf, sizeof buf, f) ? atol(buf) : -1;
    pclose(f);
    return n;
}

/* 100,000 buffers one after another (20,000 in sealed memfds: each is a memfd, its seals and a mapping; the
   counts of memfd mappings and of fds before and after check that they are all given back). */
Test(buffer_handles, create_and_destroy_100000_times, .timeout = 120) {
    tracec_context_id_t ctx = started_context();
    uint64_t first = 0, prev = 0;
    uint8_t rec[16] = {7};
    const int n = tracec_i_buffer_test_memfd ? 20000 : 100000;
    long maps = proc_count("maps"), fds = proc_count("fd");
    for (int i = 0; i < n; i++) {
        tracec_buffer_id_t b;
        tracec_status_t s = tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &b);
        cr_assert_eq(s, TRACEC_STATUS_SUCCESS, "create #%d: %s", i, ST(s));
        cr_assert_neq(b.handle, prev, "a new buffer never has the previous one's handle");
        if (i == 0) first = b.handle;
        if (i == 0 && tracec_i_buffer_test_memfd) /* the count sees a live buffer's memfd */
            cr_assert_gt(proc_count("maps"), maps, "no memfd mapping seen");
        cr_assert_eq(SLOT(b.handle), SLOT(first), "the destroyed buffer's slot is taken again");
        if (i % 1000 == 0) OK(tracec_buffer_emit(b, 1, 1, rec, sizeof rec));
        OK(tracec_destroy_buffer(b));
        prev = b.handle;
    }
    cr_assert_leq(proc_count("maps"), maps, "memfd mappings left behind (%ld before)", maps);
    /* another thread of the process (the test runner's) may hold an fd for a moment: a leak stays */
    long now = proc_count("fd");
    for (int i = 0; i < 50 && now > fds; i++) {
        usleep(20000);
        now = proc_count("fd");
    }
    cr_assert_leq(now, fds, "fds left behind (%ld before)", fds);
    assert_refused(ctx, (tracec_buffer_id_t){first});
    assert_refused(ctx, (tracec_buffer_id_t){prev});
    test_end();
}

/*
 * A writer attached to a buffer that was destroyed, while other buffers are
 * created: its packets are refused (BUFFER_NOT_FOUND) and the new buffer
 * neither receives them nor counts them, in the chunk path and the durable
 * one; releasing the writer does not touch the new buffer either, and once
 * it is released the old slot is taken again, the old handle still refused.
 */
static tracec_buffer_id_t mode_buffer(tracec_context_id_t ctx, tracec_buffering_mode_t mode, collector *c) {
    collector_init(c);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = mode == TRACEC_BUFFERING_MODE_STREAMING ? TRACEC_BUFFER_POLICY_DISCARD : TRACEC_BUFFER_POLICY_NONE;
    cfg.size = 65536;
    cfg.callback = collect_cb;
    cfg.callback_data = c;
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    return b;
}

static void stale_writer_after_reuse(tracec_buffering_mode_t mode, uint32_t kind) {
    tracec_context_id_t ctx = started_context();
    collector ca, cb;
    tracec_buffer_id_t a = mode_buffer(ctx, mode, &ca);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, a, 0));
    uint8_t rec[40];
    trec_make(rec, sizeof rec, 1, 0);
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, kind, rec, sizeof rec));
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, kind, rec, sizeof rec));
    OK(tracec_destroy_buffer(a));
    cr_assert_eq(collector_count(&ca), 2, "the destroy delivered A's packets");

    tracec_buffer_id_t b = mode_buffer(ctx, mode, &cb);
    cr_assert_neq(b.handle, a.handle);
    assert_refused(ctx, a);

    for (int i = 0; i < 3; i++) {
        tracec_status_t s = put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, kind, rec, sizeof rec);
        cr_assert_eq(s, TRACEC_STATUS_BUFFER_NOT_FOUND, "stale writer: %s", ST(s));
    }
    OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, rec, sizeof rec));
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.accepted, 1, "only B's own record: %llu", (unsigned long long)st.accepted);
    cr_assert_eq(st.refused + st.dropped + st.overwritten, 0);
    cr_assert_eq(st.delivered, 1);
    cr_assert_eq(collector_count(&cb), 1);
    cr_assert_eq(collector_count(&ca), 2, "nothing more reached A's callback");

    tracec_buffer_writer_release(&bw);
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.accepted, 1, "releasing the stale writer does not count into B");
    cr_assert_eq(st.refused, 0);
    /* The writer works again once attached to B. */
    OK(tracec_buffer_writer_init(&bw, b, 0));
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, kind, rec, sizeof rec));
    st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2);
    tracec_buffer_writer_release(&bw);

    /* Nothing holds A's slot any more: the next buffers take it, the old handles stay refused. */
    OK(tracec_destroy_buffer(b));
    collector cc;
    tracec_buffer_id_t c1 = mode_buffer(ctx, mode, &cc);
    tracec_buffer_id_t c2 = mode_buffer(ctx, mode, &cc);
    cr_assert(SLOT(c1.handle) == SLOT(a.handle) || SLOT(c2.handle) == SLOT(a.handle), "A's slot is reused");
    cr_assert(c1.handle != a.handle && c2.handle != a.handle && c1.handle != b.handle && c2.handle != b.handle);
    assert_refused(ctx, a);
    assert_refused(ctx, b);
    test_end();
}

Test(buffer_handles, stale_writer_after_reuse_streaming, .timeout = 30) {
    stale_writer_after_reuse(TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_TRACING_TRACK_EVENT);
}

Test(buffer_handles, stale_writer_after_reuse_durable_packets, .timeout = 30) {
    stale_writer_after_reuse(TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_TRACING_INTERNED_DATA);
}

Test(buffer_handles, at_most_max_buffers_alive_at_once, .timeout = 60) {
    tracec_context_id_t ctx = started_context();
    static tracec_buffer_id_t ids[TRACEC_MAX_BUFFERS];
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++)
        OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &ids[i]));
    tracec_buffer_id_t extra;
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &extra),
                 TRACEC_STATUS_LIMIT_EXCEEDED);
    OK(tracec_destroy_buffer(ids[100]));
    OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &extra));
    cr_assert_eq(SLOT(extra.handle), SLOT(ids[100].handle));
    assert_refused(ctx, ids[100]);
    /* Destroying the context destroys all of them; their slots are free again. */
    OK(tracec_destroy_context(ctx));
    ctx = started_context();
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++)
        OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &ids[i]));
    test_end();
}

/* ---- threads: create, destroy and use at once ------------------------------- */

#define RACE_THREADS 4
#define RACE_ROUNDS 400

static _Atomic uint64_t race_handles[RACE_THREADS]; /* each thread's current (or last) buffer */
static _Atomic uint64_t race_aliased, race_records;
static tracec_context_id_t race_ctx;

/* Every payload ends with the handle it was written for: it must be this buffer's. */
static void race_cb(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                    void *data, uint64_t drop_count) {
    (void)ctx, (void)data, (void)drop_count;
    for (size_t i = 0; i < n; i++) {
        uint64_t tag;
        memcpy(&tag, (const uint8_t *)h[i]->payload + h[i]->size - sizeof tag, sizeof tag);
        if (tag != id.handle) atomic_fetch_add(&race_aliased, 1);
        atomic_fetch_add(&race_records, 1);
    }
}

static bool refused_or(tracec_status_t s, tracec_status_t ok) {
    return s == ok || s == TRACEC_STATUS_BUFFER_NOT_FOUND || s == TRACEC_STATUS_CLOSED ||
           s == TRACEC_STATUS_BUFFER_FULL;
}

static void *race_worker(void *p) {
    size_t self = (size_t)(uintptr_t)p;
    uint64_t bad = 0;
    tracec_buffer_writer other_bw;
    memset(&other_bw, 0, sizeof other_bw);
    int other_attached = 0;
    uint64_t other_handle = 0;
    for (int r = 0; r < RACE_ROUNDS; r++) {
        tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
        cfg.mode = r % 3 == 0 ? TRACEC_BUFFERING_MODE_CIRCULAR : TRACEC_BUFFERING_MODE_STREAMING;
        cfg.policy = r % 3 == 0 ? TRACEC_BUFFER_POLICY_NONE : TRACEC_BUFFER_POLICY_DISCARD;
        cfg.size = 4096;
        cfg.callback = race_cb;
        tracec_buffer_id_t b;
        if (tracec_create_buffer_with_config(race_ctx, &cfg, &b) != TRACEC_STATUS_SUCCESS) {
            bad++;
            continue;
        }
        atomic_store(&race_handles[self], b.handle);
        tracec_buffer_writer bw;
        if (tracec_buffer_writer_init(&bw, b, 0) != TRACEC_STATUS_SUCCESS) bad++;
        /* Own buffer: records and packets tagged with its handle. */
        for (int k = 0; k < 4; k++) {
            if (!refused_or(tracec_buffer_emit(b, 1, 1, &b.handle, sizeof b.handle), TRACEC_STATUS_SUCCESS)) bad++;
            if (!refused_or(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING,
                                             k == 3 ? TRACEC_BUFFER_TRACING_INTERNED_DATA
                                                    : TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                             &b.handle, sizeof b.handle),
                            TRACEC_STATUS_SUCCESS))
                bad++;
        }
        /* Another thread's buffer, alive or already gone: tagged with the handle used. */
        tracec_buffer_id_t o = {atomic_load(&race_handles[(self + 1 + (size_t)r) % RACE_THREADS])};
        if (o.handle != 0) {
            tracec_buffer_stats_t st;
            uint64_t epoch;
            if (!refused_or(tracec_buffer_emit(o, 1, 1, &o.handle, sizeof o.handle), TRACEC_STATUS_SUCCESS)) bad++;
            if (!refused_or(tracec_query_buffer_stats(o, &st), TRACEC_STATUS_SUCCESS)) bad++;
            if (!refused_or(tracec_buffer_epoch(o, &epoch), TRACEC_STATUS_SUCCESS)) bad++;
            if (!refused_or(tracec_flush_buffer_async(o), TRACEC_STATUS_SUCCESS)) bad++;
            if (r % 8 == 0 && !refused_or(tracec_flush_buffer(o), TRACEC_STATUS_SUCCESS)) bad++;
            /* A writer kept across rounds on another thread's buffer: it goes stale under us. */
            if (other_attached && other_handle != o.handle) {
                tracec_buffer_writer_release(&other_bw);
                other_attached = 0;
            }
            if (!other_attached) {
                other_attached = tracec_buffer_writer_init(&other_bw, o, 0) == TRACEC_STATUS_SUCCESS;
                other_handle = o.handle;
            }
            if (other_attached &&
                !refused_or(put_bytes_packet(&other_bw, TRACEC_BUFFER_CATEGORY_TRACING,
                                             TRACEC_BUFFER_TRACING_TRACK_EVENT, &o.handle, sizeof o.handle),
                            TRACEC_STATUS_SUCCESS))
                bad++;
        }
        tracec_buffer_writer_release(&bw);
        tracec_status_t ds = tracec_destroy_buffer(b);
        if (ds != TRACEC_STATUS_SUCCESS) bad++;
    }
    if (other_attached) tracec_buffer_writer_release(&other_bw);
    return (void *)(uintptr_t)bad;
}

Test(buffer_handles, concurrent_create_destroy_and_use_never_alias, .timeout = 120) {
    race_ctx = started_context();
    pthread_t th[RACE_THREADS];
    for (size_t t = 0; t < RACE_THREADS; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, race_worker, (void *)(uintptr_t)t), 0);
    uint64_t bad = 0;
    for (size_t t = 0; t < RACE_THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += (uint64_t)(uintptr_t)r;
    }
    cr_assert_eq(bad, 0, "%llu calls returned an unexpected status", (unsigned long long)bad);
    cr_assert_gt(atomic_load(&race_records), 0);
    cr_assert_eq(atomic_load(&race_aliased), 0, "%llu records reached a buffer they were not written for",
                 (unsigned long long)atomic_load(&race_aliased));
    test_end();
}

/*
 * Flushes that race with their buffer's destroy: a flush that took the buffer
 * before the destroy and asks for delivery after it (the buffer's memory is
 * gone) returns; it never waits for a delivery that cannot come.
 */
#define FLUSH_RACERS 3
static _Atomic uint64_t flush_target;
static _Atomic int flush_done_flag;

static void *flush_racer(void *p) {
    (void)p;
    uint64_t bad = 0;
    while (!atomic_load(&flush_done_flag)) {
        tracec_buffer_id_t o = {atomic_load(&flush_target)};
        if (o.handle == 0) continue;
        tracec_status_t s = tracec_flush_buffer(o);
        if (s != TRACEC_STATUS_SUCCESS && s != TRACEC_STATUS_BUFFER_NOT_FOUND) bad++;
    }
    return (void *)(uintptr_t)bad;
}

Test(buffer_handles, a_flush_racing_the_destroy_of_its_buffer_returns, .timeout = 120) {
    tracec_context_id_t ctx = started_context();
    pthread_t th[FLUSH_RACERS];
    uint8_t rec[16] = {3};
    atomic_store(&flush_done_flag, 0);
    for (size_t t = 0; t < FLUSH_RACERS; t++) cr_assert_eq(pthread_create(&th[t], NULL, flush_racer, NULL), 0);
    for (int i = 0; i < 2000; i++) {
        tracec_buffer_id_t b;
        OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_DISCARD, no_cb, NULL, &b));
        OK(tracec_buffer_emit(b, 1, 1, rec, sizeof rec));
        atomic_store(&flush_target, b.handle);
        if (i % 2) sched_yield();
        OK(tracec_destroy_buffer(b));
    }
    atomic_store(&flush_done_flag, 1);
    uint64_t bad = 0;
    for (size_t t = 0; t < FLUSH_RACERS; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += (uint64_t)(uintptr_t)r;
    }
    cr_assert_eq(bad, 0, "%llu flushes returned an unexpected status", (unsigned long long)bad);
    test_end();
}
