/*
 * test_sessions.c - sessions started and stopped many times in one process:
 * each start gets a buffer (in a slot an earlier session's buffer had, with
 * a new generation) and the previous session's buffer handle stays refused.
 * Runs under TSan too (label tsan; with tests/common/tsan_runner in the
 * TSan build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
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
    uint8_t rec[8] = {0};
    for (int i = 0; i < SESSION_CYCLES; i++) {
        sink k = {0, 0};
        tracec_session *s;
        start(&k, &s);
        uint64_t h = tracec_session_buffer(s).handle;
        cr_assert_neq(h, 0);
        cr_assert_neq(h, prev, "session %d has the previous session's buffer handle", i);
        if (prev != 0)
            cr_assert_eq(tracec_buffer_emit((tracec_buffer_id_t){prev}, 1, 1, rec, sizeof rec),
                         TRACEC_STATUS_BUFFER_NOT_FOUND, "the previous session's handle is refused");
        if (i % 1000 == 0) TRACEC_INSTANT(cyc, "tick");
        tracec_status_t st = tracec_session_stop(s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "stop %d: %s", i, tracec_status_str(st));
        cr_assert_gt(k.bytes, 0, "session %d wrote its trace", i);
        prev = h;
    }
}
