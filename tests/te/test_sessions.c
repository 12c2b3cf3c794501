/*
 * test_sessions.c - sessions started and stopped many times in one process:
 * each start gets a buffer (in a slot an earlier session's buffer had, with
 * a new generation) and the previous session's buffer handle stays refused,
 * as does the previous session's own handle; sessions started and stopped
 * while another thread writes track events.
 * Runs under TSan too (label tsan; with tests/common/tsan_runner in the
 * TSan build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tracec/track_event.h"

#define SESSION_CATEGORIES(C) C(cyc, "cycles")
TRACEC_TE_DECLARE_CATEGORIES(SESSION_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(SESSION_CATEGORIES)

/* The bytes of the current session's trace. */
typedef struct sink {
    size_t bytes, calls;
} sink;

static void to_sink(const void *data, size_t size, void *p) {
    sink *k = (sink *)p;
    (void)data;
    k->bytes += size;
    k->calls++;
}

static void start(sink *k, tracec_session **s) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    cfg.write = to_sink;
    cfg.write_data = k;
    cfg.buffer_size = 4096;
    cfg.process_name = "cycles";
    tracec_status_t st = tracec_session_start(&cfg, s);
    cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "%s", tracec_status_str(st));
}

#ifndef SESSION_CYCLES
#define SESSION_CYCLES 100000
#endif

Test(te_sessions, start_and_stop_100000_times, .timeout = 120) {
    uint64_t prev = 0;
    tracec_session *prev_s = NULL;
    uint8_t rec[8] = {0};
    for (int i = 0; i < SESSION_CYCLES; i++) {
        sink k = {0, 0};
        tracec_session *s;
        start(&k, &s);
        uint64_t h = tracec_session_buffer(s).handle;
        cr_assert_neq(h, 0);
        cr_assert_neq(h, prev, "session %d has the previous session's buffer handle", i);
        cr_assert_neq(s, prev_s, "session %d has the previous session's handle", i);
        if (prev != 0)
            cr_assert_eq(tracec_buffer_emit((tracec_buffer_id_t){prev}, 1, 1, rec, sizeof rec),
                         TRACEC_STATUS_BUFFER_NOT_FOUND, "the previous session's handle is refused");
        if (i % 1000 == 0) TRACEC_INSTANT(cyc, "tick");
        tracec_status_t st = tracec_session_stop(s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "stop %d: %s", i, tracec_status_str(st));
        cr_assert_gt(k.bytes, 0, "session %d wrote its trace", i);
        prev = h;
        prev_s = s;
    }
}

#ifndef RACE_CYCLES
#define RACE_CYCLES 3000
#endif

static void *writer(void *p) {
    volatile int *stop = (volatile int *)p;
    for (uint64_t i = 0; !__atomic_load_n(stop, __ATOMIC_RELAXED); i++) {
        TRACEC_SLICE_BEGIN(cyc, "w");
        TRACEC_TE(cyc, TRACEC_TE_INSTANT("i"), TRACEC_TE_ARG_INT("n", (int64_t)i));
        TRACEC_COUNTER(cyc, "c", (int64_t)i);
        TRACEC_SLICE_END(cyc);
    }
    return NULL;
}

/* One thread writes track events while this one starts, flushes, pauses, resumes and stops sessions, each
   with another clock: under TSan, no race between a session's start and the writer's packets. */
Test(te_sessions, sessions_start_and_stop_under_a_writing_thread, .timeout = 120) {
    static const uint32_t clocks[] = {6, 3, 1, 0};
    int stop = 0;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, writer, &stop), 0);
    for (int i = 0; i < RACE_CYCLES; i++) {
        sink k = {0, 0};
        tracec_session *s;
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        cfg.write = to_sink;
        cfg.write_data = &k;
        cfg.buffer_size = 4096;
        cfg.clock_id = clocks[i % 4];
        cfg.mode = i % 3 == 0 ? TRACEC_BUFFERING_MODE_STREAMING
                 : i % 3 == 1 ? TRACEC_BUFFERING_MODE_ONESHOT
                              : TRACEC_BUFFERING_MODE_CIRCULAR;
        tracec_status_t st = tracec_session_start(&cfg, &s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "start %d: %s", i, tracec_status_str(st));
        if (i % 5 == 1) (void)tracec_session_flush(s);
        if (i % 5 == 2) {
            cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
            cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
        }
        st = tracec_session_stop(s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "stop %d: %s", i, tracec_status_str(st));
        cr_assert_gt(k.bytes, 0, "session %d wrote its trace", i);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
}

/* The handle of a stopped session never names the session started after it: every call refuses it. */
Test(te_sessions, an_ended_sessions_handle_is_refused_after_a_new_start) {
    sink k1 = {0, 0}, k2 = {0, 0};
    tracec_session *s1, *s2;
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    start(&k1, &s1);
    cr_assert_eq(tracec_session_stop(s1), TRACEC_STATUS_SUCCESS);
    start(&k2, &s2);
    cr_assert_neq(s1, s2, "a new start gives a new handle");
    cr_assert_eq(tracec_session_flush(s1), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_pause(s1), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_resume(s1, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_resume_with_options(s1, &o), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_buffer(s1).handle, 0);
    cr_assert_eq(tracec_session_stop(s1), TRACEC_STATUS_BAD_STATE);
    /* the new session was not touched by any of them: still running, not paused */
    cr_assert_neq(tracec_session_buffer(s2).handle, 0);
    tracec_buffer_stats_t b0, b1;
    cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s2), &b0), TRACEC_STATUS_SUCCESS);
    TRACEC_INSTANT(cyc, "after");
    cr_assert_eq(tracec_session_flush(s2), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s2), &b1), TRACEC_STATUS_SUCCESS);
    cr_assert_gt(b1.accepted, b0.accepted, "the event after the stale calls was written (not paused)");
    size_t before = k2.bytes;
    cr_assert_eq(tracec_session_stop(s2), TRACEC_STATUS_SUCCESS);
    cr_assert_geq(k2.bytes, before);
    cr_assert_eq(tracec_session_stop(s2), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_stop(NULL), TRACEC_STATUS_BAD_STATE);
}
