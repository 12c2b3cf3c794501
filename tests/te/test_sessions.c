/*
 * test_sessions.c - sessions started and stopped many times in one process:
 * each start gets a buffer (in a slot an earlier session's buffer had, with
 * a new generation) and the previous session's buffer handle stays refused,
 * as does the previous session's own handle; sessions started and stopped
 * while another thread writes track events.  Up to TRACEC_TE_MAX_SESSIONS
 * sessions at once, with their own modes, clocks and categories, each trace
 * checked by check_trace.py and the trace processor; the typed form's
 * block runs once and every session gets its fields.
 * On the record backend (te_util.h) one of the sessions at once is the
 * recorder's (`tracec record`'s session in one of the slots, beside the
 * program's own), and the tests that start and stop sessions by the
 * thousand do so with the recorder's session running beside them.
 * Runs under TSan too (label tsan; with tests/common/tsan_runner in the
 * TSan build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <time.h>

#include "my_events.tracec.h"
#include "te_util.h"
#include "tracec/track_event.h"

#define SESSION_CATEGORIES(C) C(cyc, "cycles") C(al, "alpha") C(be, "beta") C(ga, "gamma")
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

/* Record backend: a STREAMING recorder's session of `cats` (all: NULL) runs beside the test's own sessions
   (te_stop_beside ends it); *path is its trace.  Local: nothing. */
static void start_beside(const char *name, tracec_buffering_mode_t mode, const char *const *cats, size_t ncats,
                         const char **path) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    *path = NULL;
    if (!te_record_backend()) return;
    cfg.path = *path = te_path(name);
    cfg.mode = mode;
    cfg.categories = cats;
    cfg.num_categories = ncats;
    cfg.process_name = "sessions";
    te_start(&cfg, &s);
}

/* Ends start_beside's recorder's session (if any); check_trace.py (with `flags`) finds its trace consistent and
   its summary is returned (malloc'd; NULL: none ran). */
static char *stop_beside(const char *path, const char *flags) {
    char *out;
    if (path == NULL) return NULL;
    cr_assert_eq(te_stop(NULL), TRACEC_STATUS_SUCCESS);
    int rc = te_check(path, flags, &out);
    cr_assert_eq(rc, 0, "check_trace.py on %s:\n%s", path, out ? out : "");
    return out;
}

/* Record backend: a fortieth of the cycles, each beside the recorder's session (the same paths, seconds less). */
Test(te_sessions, start_and_stop_100000_times, .timeout = 120) {
    static const char *const cyc[] = {"cycles"};
    uint64_t prev = 0;
    tracec_session *prev_s = NULL;
    uint8_t rec[8] = {0};
    const char *beside;
    const int cycles = te_record_backend() ? SESSION_CYCLES / 40 : SESSION_CYCLES;
    start_beside("cycles_rec.pftrace", TRACEC_BUFFERING_MODE_STREAMING, cyc, 1, &beside);
    for (int i = 0; i < cycles; i++) {
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
        if (i % 100 == 0) TRACEC_INSTANT(cyc, "tick");
        tracec_status_t st = tracec_session_stop(s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "stop %d: %s", i, tracec_status_str(st));
        cr_assert_gt(k.bytes, 0, "session %d wrote its trace", i);
        prev = h;
        prev_s = s;
    }
    /* the recorder's session got every tick, whatever the sessions beside it did */
    char *sum = stop_beside(beside, NULL);
    if (sum != NULL) {
        cr_assert_eq(te_summary_long(sum, "events:TYPE_INSTANT"), (cycles + 99) / 100, "%s", sum);
        free(sum);
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
   with another clock: under TSan, no race between a session's start and the writer's packets.  Record
   backend: a CIRCULAR recorder's session (its trace at most its buffer) takes the writer's events
   throughout, and its trace is consistent. */
Test(te_sessions, sessions_start_and_stop_under_a_writing_thread, .timeout = 120) {
    static const uint32_t clocks[] = {6, 3, 1, 0};
    int stop = 0;
    pthread_t th;
    const char *beside;
    start_beside("race_rec.pftrace", TRACEC_BUFFERING_MODE_CIRCULAR, NULL, 0, &beside);
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
    char *sum = stop_beside(beside, "--allow-open"); /* CIRCULAR: a wrap may have taken begins */
    if (sum != NULL) {
        cr_assert_gt(te_summary_long(sum, "events:TYPE_INSTANT"), 0, "%s", sum);
        free(sum);
    }
}

/* The handle of a stopped session never names the session started after it: every call refuses it. */
Test(te_sessions, an_ended_sessions_handle_is_refused_after_a_new_start) {
    TE_LOCAL_ONLY("the handles of the program's own sessions (the recorder's session has none)");
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

/* A stop racing pause, resume and flush on other threads: each of them either works or is refused as a stopped
   session's call (BAD_STATE), never fails otherwise; exactly one stop succeeds. */
typedef struct racer {
    tracec_session *s;
    pthread_barrier_t *go;
    int op; /* 0 stop, 1 pause, 2 resume, 3 flush */
    tracec_status_t st;
} racer;

static void *race_one(void *p) {
    racer *r = (racer *)p;
    pthread_barrier_wait(r->go);
    r->st = r->op == 0   ? tracec_session_stop(r->s)
            : r->op == 1 ? tracec_session_pause(r->s)
            : r->op == 2 ? tracec_session_resume(r->s, TRACEC_BUFFER_DISPOSITION_RETAIN)
                         : tracec_session_flush(r->s);
    return NULL;
}

Test(te_sessions, calls_racing_a_stop_work_or_are_refused, .timeout = 120) {
    TE_LOCAL_ONLY("the handles of the program's own sessions (the recorder's session has none)");
    for (int round = 0; round < 300; round++) {
        sink k = {0, 0};
        tracec_session *s;
        pthread_barrier_t go;
        pthread_t th[5];
        racer r[5];
        start(&k, &s);
        pthread_barrier_init(&go, NULL, 5);
        for (int i = 0; i < 5; i++) {
            r[i] = (racer){s, &go, i < 2 ? 0 : i - 1, TRACEC_STATUS_SUCCESS};
            cr_assert_eq(pthread_create(&th[i], NULL, race_one, &r[i]), 0);
        }
        int stops = 0;
        for (int i = 0; i < 5; i++) {
            pthread_join(th[i], NULL);
            cr_assert(r[i].st == TRACEC_STATUS_SUCCESS || r[i].st == TRACEC_STATUS_BAD_STATE,
                      "round %d, op %d: %s", round, r[i].op, tracec_status_str(r[i].st));
            stops += r[i].op == 0 && r[i].st == TRACEC_STATUS_SUCCESS;
        }
        pthread_barrier_destroy(&go);
        cr_assert_eq(stops, 1, "round %d", round);
        cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_BAD_STATE);
    }
}

/* ---- several sessions at once --------------------------------------------------- */

/* The configuration of a session writing `path` (the sessions below). */
static tracec_session_config file_config(const char *path, tracec_buffering_mode_t mode, uint32_t clock_id,
                                         const char *const *cats, size_t ncats) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    cfg.path = path;
    cfg.mode = mode;
    cfg.clock_id = clock_id;
    cfg.categories = cats;
    cfg.num_categories = ncats;
    cfg.process_name = "sessions";
    return cfg;
}

/* A session of the program's own writing `path`. */
static tracec_session *start_file(const char *path, tracec_buffering_mode_t mode, uint32_t clock_id,
                                  const char *const *cats, size_t ncats) {
    tracec_session_config cfg = file_config(path, mode, clock_id, cats, ncats);
    tracec_session *s = NULL;
    tracec_status_t st = tracec_session_start(&cfg, &s);
    cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "start %s: %s", path, tracec_status_str(st));
    return s;
}

/*
 * As start_file, on the backend (te_start): on the record backend the
 * recorder's session (its clock is BOOTTIME, whatever `clock_id`; the
 * handle is NULL, which stop_any stops).
 */
static tracec_session *start_backend(const char *path, tracec_buffering_mode_t mode, uint32_t clock_id,
                                     const char *const *cats, size_t ncats) {
    tracec_session_config cfg = file_config(path, mode, clock_id, cats, ncats);
    tracec_session *s = NULL;
    te_start(&cfg, &s);
    return s;
}

/* Stops a session of start_file or start_backend. */
static tracec_status_t stop_any(tracec_session *s) { return s != NULL ? tracec_session_stop(s) : te_stop(NULL); }

/* check_trace.py finds no problem; returns its summary (malloc'd). */
static char *check_ok(const char *trace, const char *flags) {
    char *out;
    int rc = te_check(trace, flags, &out);
    cr_assert_eq(rc, 0, "check_trace.py on %s:\n%s", trace, out ? out : "");
    return out;
}

static void expect_summary(const char *trace, const char *summary, const char *key, const char *want) {
    char *v = te_summary(summary, key);
    cr_assert(v != NULL && strcmp(v, want) == 0, "%s: %s: got '%s', want '%s'\n%s", trace, key, v ? v : "(none)",
              want, summary);
    free(v);
}

/* A trace processor query whose answer's first value is `want` (op '=') or more than `want` (op '>'). */
typedef struct tp_check {
    const char *sql;
    char op;
    long want;
} tp_check;

enum { ANY_LOSS, NO_LOSS, SOME_LOSS };

/*
 * The checks c[0..n) of `trace`, and its stats: NO_LOSS, no error or data
 * loss at all; SOME_LOSS, the session's own loss count above 0.  With
 * `text_sql`, its CSV answer in *text (malloc'd).  One launch of the trace
 * processor for all of them.
 */
static void expect_tp(const char *trace, int loss, const tp_check *c, size_t n, const char *text_sql, char **text) {
    const char *q[TE_TP_MAX_QUERIES];
    char *a[TE_TP_MAX_QUERIES];
    size_t nq = n + (text_sql != NULL);
    char *bad = NULL;
    long lost = -1;
    cr_assert_leq(nq, TE_TP_MAX_QUERIES);
    for (size_t i = 0; i < n; i++) q[i] = c[i].sql;
    if (text_sql != NULL) q[n] = text_sql;
    cr_assert(te_tp_losses_and(trace, q, nq, &bad, &lost, a), "%s: the trace processor's answers", trace);
    if (loss == NO_LOSS) {
        cr_assert_str_eq(bad, "", "%s: error / data_loss stats:\n%s", trace, bad);
        cr_assert_eq(lost, 0, "%s: packet loss %ld", trace, lost);
    } else if (loss == SOME_LOSS) {
        cr_assert_gt(lost, 0, "%s: the session's own loss count", trace);
    }
    free(bad);
    for (size_t i = 0; i < n; i++) {
        long v = te_tp_first_long(a[i]);
        free(a[i]);
        if (c[i].op == '>')
            cr_assert_gt(v, c[i].want, "%s: %s: got %ld, want more than %ld", trace, c[i].sql, v, c[i].want);
        else
            cr_assert_eq(v, c[i].want, "%s: %s: got %ld, want %ld", trace, c[i].sql, v, c[i].want);
    }
    if (text_sql != NULL) *text = a[n];
}

enum { MIX_THREADS = 2, MIX_ITERS = 200, BIG = 200 };

static void *mixed_writer(void *p) {
    char name[16], dyn[16];
    snprintf(name, sizeof name, "mix%d", (int)(intptr_t)p);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < MIX_ITERS; i++) {
        TRACEC_TE(al, TRACEC_TE_SLICE_BEGIN("a_slice"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_INSTANT(be, "b_instant");
        snprintf(dyn, sizeof dyn, "b_dyn%d", i % 4);
        TRACEC_INSTANT_DYN(be, dyn);
        TRACEC_COUNTER(ga, "g_counter", i);
        TRACEC_SLICE_END(al);
    }
    return NULL;
}

/*
 * Four sessions at once: STREAMING on BOOTTIME (alpha, beta; the
 * recorder's on the record backend), ONESHOT on MONOTONIC (alpha),
 * CIRCULAR on REALTIME (beta), STREAMING on MONOTONIC (gamma).  A fifth
 * start is refused.  Each trace holds exactly its categories' events, on
 * its clock, with its own sequences and interning (check_trace.py resolves
 * every iid on its own sequence), and no loss.
 */
Test(te_sessions, four_sessions_with_their_own_modes_clocks_and_categories, .timeout = 120) {
    static const char *const ab[] = {"alpha", "beta"}, *const a[] = {"alpha"}, *const b[] = {"beta"},
                             *const g[] = {"gamma"};
    const char *path[4] = {te_path("mix0.pftrace"), te_path("mix1.pftrace"), te_path("mix2.pftrace"),
                           te_path("mix3.pftrace")};
    tracec_session *s[4], *fifth = NULL;
    pthread_t th[MIX_THREADS];
    char big[BIG + 1];
    int ran = 0;
    memset(big, 'x', BIG);
    big[BIG] = '\0';
    s[0] = start_backend(path[0], TRACEC_BUFFERING_MODE_STREAMING, 6, ab, 2);
    s[1] = start_file(path[1], TRACEC_BUFFERING_MODE_ONESHOT, 3, a, 1);
    s[2] = start_file(path[2], TRACEC_BUFFERING_MODE_CIRCULAR, 1, b, 1);
    s[3] = start_file(path[3], TRACEC_BUFFERING_MODE_STREAMING, 3, g, 1);
    {
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        cfg.path = te_path("fifth.pftrace");
        cr_assert_eq(tracec_session_start(&cfg, &fifth), TRACEC_STATUS_LIMIT_EXCEEDED, "a fifth session is refused");
    }
    for (int i = 0; i < MIX_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, mixed_writer, (void *)(intptr_t)i), 0);
    TRACEC_EVENT_AS(al, my_app_MyEvent, ev, "a_typed") {
        my_app_MyEvent_set_cstr_custom_string(&ev, big);
        my_app_MyEvent_set_custom_counter(&ev, 7);
        ran++;
    }
    for (int i = 0; i < MIX_THREADS; i++) pthread_join(th[i], NULL);
    cr_assert_eq(ran, 1, "the block ran once");
    for (int i = 0; i < 4; i++) cr_assert_eq(stop_any(s[i]), TRACEC_STATUS_SUCCESS);

    static const char *const names[4] = {"a_slice|a_typed|b_dyn0|b_dyn1|b_dyn2|b_dyn3|b_instant", "a_slice|a_typed",
                                         "b_dyn0|b_dyn1|b_dyn2|b_dyn3|b_instant", ""};
    static const char *const clocks[4] = {"6", "3", "1", "3"};
    for (int i = 0; i < 4; i++) {
        char *sum = check_ok(path[i], NULL);
        expect_summary(path[i], sum, "names", names[i]);
        expect_summary(path[i], sum, "clocks", clocks[i]);
        free(sum);
    }
    const long n = (long)MIX_THREADS * MIX_ITERS;
    /* the typed event's fields in both sessions of alpha */
#define TYPED_STRING                                                                                     \
    {"select length(a.string_value) from slice s join args a using(arg_set_id) "                         \
     "where s.name = 'a_typed' and a.key = 'custom_string';", '=', BIG}
#define TYPED_COUNTER                                                                                    \
    {"select a.int_value from slice s join args a using(arg_set_id) "                                    \
     "where s.name = 'a_typed' and a.key = 'custom_counter';", '=', 7}
    const tp_check c0[] = {{"select count(*) from slice where name = 'a_slice';", '=', n},
                           {"select count(*) from slice where name like 'b_%';", '=', 2 * n},
                           {"select count(*) from counter;", '=', 0},
                           TYPED_STRING,
                           TYPED_COUNTER};
    const tp_check c1[] = {{"select count(*) from slice where name = 'a_slice';", '=', n},
                           {"select count(*) from slice where name like 'b_%';", '=', 0},
                           TYPED_STRING,
                           TYPED_COUNTER};
    const tp_check c2[] = {{"select count(*) from slice where name like 'b_%';", '=', 2 * n},
                           {"select count(*) from slice where name like 'a_%';", '=', 0}};
    const tp_check c3[] = {{"select count(*) from slice;", '=', 0},
                           {"select count(*) from counter c join counter_track t on c.track_id = t.id "
                            "where t.name = 'g_counter';", '=', n}};
#undef TYPED_STRING
#undef TYPED_COUNTER
    expect_tp(path[0], NO_LOSS, c0, sizeof c0 / sizeof c0[0], NULL, NULL);
    expect_tp(path[1], NO_LOSS, c1, sizeof c1 / sizeof c1[0], NULL, NULL);
    expect_tp(path[2], NO_LOSS, c2, sizeof c2 / sizeof c2[0], NULL, NULL);
    expect_tp(path[3], NO_LOSS, c3, sizeof c3 / sizeof c3[0], NULL, NULL);
}

/*
 * The typed forms' block runs once; each other session gets its own packet
 * with a copy of the block's fields, whatever their size (the TrackEvent's
 * length is one byte up to 127 and widens from 128), and the typed END's
 * fields are merged into the slice in both (the first session is the
 * recorder's on the record backend).
 */
Test(te_sessions, a_typed_block_runs_once_and_every_session_gets_its_fields) {
    static const char *const a[] = {"alpha"};
    static const size_t sizes[] = {0, 5, 100, 118, 119, 120, 127, 128, 129, 300, 5000};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    const char *p1 = te_path("typed1.pftrace"), *p2 = te_path("typed2.pftrace");
    tracec_session *s1 = start_backend(p1, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session *s2 = start_file(p2, TRACEC_BUFFERING_MODE_ONESHOT, 3, a, 1);
    char *str = malloc(5001);
    int ran = 0;
    cr_assert_not_null(str);
    for (size_t k = 0; k < NSIZES; k++) {
        memset(str, 'a' + (int)k, sizes[k]);
        str[sizes[k]] = '\0';
        TRACEC_EVENT_AS(al, my_app_MyEvent, ev, "typed") {
            my_app_MyEvent_set_cstr_custom_string(&ev, str);
            my_app_MyEvent_set_custom_counter(&ev, (int64_t)sizes[k]);
            ran++;
        }
    }
    TRACEC_SLICE_BEGIN_AS(al, my_app_MyEvent, ev, "typed slice") { ran++; my_app_MyEvent_set_custom_counter(&ev, 1); }
    TRACEC_SLICE_END_AS(al, my_app_MyEvent, ev) { ran++; my_app_MyEvent_set_mood(&ev, my_app_MOOD_CALM); }
    cr_assert_eq(ran, NSIZES + 2, "each block ran once");
    cr_assert_eq(stop_any(s1), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_stop(s2), TRACEC_STATUS_SUCCESS);
    free(str);
    const char *paths[2] = {p1, p2};
    char *answer[2] = {NULL, NULL};
    char sql[NSIZES][256];
    tp_check c[NSIZES + 1];
    size_t nc = 0;
    for (size_t k = 0; k < NSIZES; k++) {
        if (sizes[k] == 0) continue;
        snprintf(sql[k], sizeof sql[k],
                 "select length(a.string_value) from slice s join args a using(arg_set_id) where s.name = "
                 "'typed' and a.key = 'custom_string' and s.arg_set_id in (select arg_set_id from args where "
                 "key = 'custom_counter' and int_value = %zu);",
                 sizes[k]);
        c[nc++] = (tp_check){sql[k], '=', (long)sizes[k]};
    }
    c[nc++] = (tp_check){"select count(*) from slice where name = 'typed';", '=', NSIZES};
    for (int i = 0; i < 2; i++) {
        char *sum = check_ok(paths[i], NULL);
        expect_summary(paths[i], sum, "names", "typed|typed slice");
        free(sum);
        expect_tp(paths[i], NO_LOSS, c, nc,
                  "select s.name, s.dur >= 0 as ended, a.key, a.int_value, a.string_value from slice s "
                  "join args a using(arg_set_id) where s.name = 'typed slice' and a.key not like 'event.%' "
                  "and a.key not like 'legacy%' order by a.key;",
                  &answer[i]);
    }
    cr_assert_str_eq(answer[0], answer[1], "the same typed slice in both sessions:\n%s---\n%s", answer[0], answer[1]);
    cr_assert(strstr(answer[0], "\"mood\"") != NULL && strstr(answer[0], "\"custom_counter\"") != NULL,
              "the BEGIN's and the END's fields:\n%s", answer[0]);
    free(answer[0]);
    free(answer[1]);
}

/* A new thread's first events, each form in a thread of its own (the first event sets up the thread's
   sequence in each session). */
static void *first_instant(void *p) {
    (void)p;
    TRACEC_INSTANT(al, "first instant");
    return NULL;
}

static void *first_slice(void *p) {
    (void)p;
    TRACEC_TE(al, TRACEC_TE_SLICE_BEGIN("first slice"), TRACEC_TE_ARG_INT("i", 1));
    TRACEC_SLICE_END(al);
    return NULL;
}

static void *first_typed(void *p) {
    (void)p;
    TRACEC_EVENT_AS(al, my_app_MyEvent, ev, "first typed") { my_app_MyEvent_set_custom_counter(&ev, 2); }
    return NULL;
}

/*
 * An event has one time: a thread's first event, which sets up the
 * thread's sequence in each session before it is written there, has the
 * same timestamp in two sessions on one clock (the first is the
 * recorder's on the record backend), as its later ones do.
 */
Test(te_sessions, a_threads_first_event_has_the_same_time_in_every_session) {
    static const char *const a[] = {"alpha"};
    static void *(*const first[])(void *) = {first_instant, first_slice, first_typed};
    const char *p1 = te_path("first1.pftrace"), *p2 = te_path("first2.pftrace");
    tracec_session *s1 = start_backend(p1, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session *s2 = start_file(p2, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, first[i], NULL), 0);
        cr_assert_eq(pthread_join(th, NULL), 0);
        TRACEC_INSTANT(al, "later"); /* this thread's: set up by its first, written here */
    }
    cr_assert_eq(stop_any(s1), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_stop(s2), TRACEC_STATUS_SUCCESS);
    const char *paths[2] = {p1, p2};
    char *answer[2] = {NULL, NULL};
    const tp_check c[] = {{"select count(*) from slice where name like 'first%';", '=', 3},
                          {"select count(*) from slice where name = 'later';", '=', 3}};
    for (int i = 0; i < 2; i++)
        expect_tp(paths[i], NO_LOSS, c, sizeof c / sizeof c[0],
                  "select name, ts, dur from slice order by ts, name;", &answer[i]);
    cr_assert_str_eq(answer[0], answer[1], "the same times in both sessions:\n%s---\n%s", answer[0], answer[1]);
    free(answer[0]);
    free(answer[1]);
}

enum { LOSSLESS_THREADS = 2, LOSSLESS_EVENTS = 20000 };

static void *typed_writer(void *p) {
    (void)p;
    for (int i = 0; i < LOSSLESS_EVENTS; i++) {
        TRACEC_SLICE_BEGIN(al, "outer");
        TRACEC_EVENT_AS(al, my_app_MyEvent, ev, "typed") {
            my_app_MyEvent_set_custom_counter(&ev, i);
            my_app_MyEvent_set_cstr_custom_string(&ev, "a string of some length, as a typed event carries");
        }
        TRACEC_SLICE_END(al);
    }
    return NULL;
}

/*
 * Two LOSSLESS STREAMING sessions with small halves (each fills every few
 * hundred events) under two threads of typed events: both traces hold
 * every event.  A typed event for several sessions used to begin the
 * second session's packet while the first's was open, and a begin that has
 * to wait for a delivery then is refused (WOULD_DEADLOCK): a few typed
 * events in 10,000 were lost in a session set never to lose any.
 */
Test(te_sessions, lossless_sessions_keep_every_typed_event_of_the_other_sessions, .timeout = 120) {
    static const char *const a[] = {"alpha"};
    const char *p1 = te_path("lossless1.pftrace"), *p2 = te_path("lossless2.pftrace");
    tracec_session_config c1 = file_config(p1, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session_config c2 = file_config(p2, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session *s1 = NULL, *s2 = NULL;
    pthread_t th[LOSSLESS_THREADS];
    c1.buffer_size = c2.buffer_size = 64u << 10;
    te_start(&c1, &s1);
    cr_assert_eq(tracec_session_start(&c2, &s2), TRACEC_STATUS_SUCCESS);
    for (int i = 0; i < LOSSLESS_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, typed_writer, NULL), 0);
    for (int i = 0; i < LOSSLESS_THREADS; i++) cr_assert_eq(pthread_join(th[i], NULL), 0);
    cr_assert_eq(stop_any(s1), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_stop(s2), TRACEC_STATUS_SUCCESS);
    const tp_check c[] = {{"select count(*) from slice where name = 'typed';", '=', LOSSLESS_THREADS * LOSSLESS_EVENTS},
                          {"select count(*) from slice where name = 'outer' and dur >= 0;", '=',
                           LOSSLESS_THREADS * LOSSLESS_EVENTS},
                          {"select count(*) from slice s join args a using(arg_set_id) where s.name = 'typed' and "
                           "a.key = 'custom_string';",
                           '=', LOSSLESS_THREADS * LOSSLESS_EVENTS}};
    expect_tp(p1, NO_LOSS, c, sizeof c / sizeof c[0], NULL, NULL);
    expect_tp(p2, NO_LOSS, c, sizeof c / sizeof c[0], NULL, NULL);
}

/* Writer threads, and the rounds they go (together) between two steps of the main thread. */
enum { STOP_THREADS = 2, STOP_ROUNDS = 5000, PAUSE_ROUNDS = 1000 };
static volatile int stop_writers;
static long writer_rounds; /* rounds of the writers' loops so far, all threads */

/* Returns once the writers have gone `n` more rounds (or after 30 s: a hang guard, the assertions decide). */
static void wait_for_rounds(long n) {
    const struct timespec tick = {0, 50000L};
    long until = __atomic_load_n(&writer_rounds, __ATOMIC_RELAXED) + n;
    for (int i = 0; i < 600000 && __atomic_load_n(&writer_rounds, __ATOMIC_RELAXED) < until; i++)
        nanosleep(&tick, NULL);
}

static void *alpha_writer(void *p) {
    /* record backend: a round every 50 us or so, so that the own sessions' traces stay small while the
       recorder's session starts and stops (a process each time) */
    const struct timespec pace = {0, 50000L};
    (void)p;
    for (long i = 0; !__atomic_load_n(&stop_writers, __ATOMIC_RELAXED); i++) {
        TRACEC_TE(al, TRACEC_TE_SLICE_BEGIN("w"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_INSTANT(al, "tick");
        TRACEC_SLICE_END(al);
        __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELAXED);
        if (te_record_backend()) nanosleep(&pace, NULL);
    }
    return NULL;
}

/*
 * Threads write to three sessions while one of them stops and a new one
 * takes its slot: the others' traces are whole (every slice closed, no
 * loss), the stopped one's and the new one's are valid.  On the record
 * backend the one that stops and the new one are the recorder's.
 */
Test(te_sessions, a_session_stops_while_threads_write_to_the_others, .timeout = 120) {
    static const char *const a[] = {"alpha"};
    const char *pa = te_path("stopA.pftrace"), *pb = te_path("stopB.pftrace"), *pc = te_path("stopC.pftrace"),
               *pd = te_path("stopD.pftrace");
    pthread_t th[STOP_THREADS];
    tracec_session *sa = start_file(pa, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session *sb = start_backend(pb, TRACEC_BUFFERING_MODE_STREAMING, 3, a, 1);
    tracec_session *sc = start_file(pc, TRACEC_BUFFERING_MODE_CIRCULAR, 6, a, 1);
    tracec_session *sd;
    /* record backend: a fifth of the rounds between two steps (paced writers; the same steps) */
    const long rounds = te_record_backend() ? STOP_ROUNDS / 5 : STOP_ROUNDS;
    __atomic_store_n(&stop_writers, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&writer_rounds, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < STOP_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, alpha_writer, NULL), 0);
    wait_for_rounds(rounds);
    cr_assert_eq(stop_any(sb), TRACEC_STATUS_SUCCESS);
    wait_for_rounds(rounds);
    sd = start_backend(pd, TRACEC_BUFFERING_MODE_ONESHOT, 1, a, 1);
    wait_for_rounds(rounds);
    __atomic_store_n(&stop_writers, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < STOP_THREADS; i++) pthread_join(th[i], NULL);
    cr_assert_eq(tracec_session_stop(sa), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_stop(sc), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(stop_any(sd), TRACEC_STATUS_SUCCESS);
    free(check_ok(pa, NULL)); /* every slice closed */
    free(check_ok(pb, "--allow-open")); /* stopped under the writers: slices open at its stop */
    free(check_ok(pc, "--allow-open")); /* CIRCULAR: a wrap may have taken begins */
    free(check_ok(pd, "--allow-open")); /* started under the writers, or ONESHOT full */
    const tp_check w[] = {{"select count(*) from slice where name = 'w';", '>', 0},
                          {"select count(*) from slice where name = 'w' and depth > 0;", '=', 0}};
    expect_tp(pa, NO_LOSS, w, 2, NULL, NULL);
    expect_tp(pb, ANY_LOSS, w, 2, NULL, NULL);
    expect_tp(pd, ANY_LOSS, w, 2, NULL, NULL);
}

static pthread_barrier_t nest_settle;

static void *nesting_writer(void *p) {
    const struct timespec pace = {0, 50000L}; /* record backend: as alpha_writer, smaller traces to check */
    (void)p;
    for (long i = 0; !__atomic_load_n(&stop_writers, __ATOMIC_RELAXED); i++) {
        TRACEC_TE(al, TRACEC_TE_SLICE_BEGIN("outer"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_SLICE_BEGIN(al, "inner");
        TRACEC_INSTANT(al, "tick");
        TRACEC_SLICE_END(al);
        TRACEC_SLICE_END(al);
        __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELAXED);
        if (te_record_backend()) nanosleep(&pace, NULL);
    }
    /* one more event in the last run: the ENDs of slices a pause ended are written after the next event */
    pthread_barrier_wait(&nest_settle);
    TRACEC_INSTANT(al, "last");
    return NULL;
}

/*
 * One session pauses and resumes (its events of the pause lost and
 * counted) while threads write to it and to another session (the
 * recorder's on the record backend): the other session's trace is whole
 * and lossless, and in both no slice nests deeper than the program's two
 * levels.
 */
Test(te_sessions, pausing_one_session_leaves_the_other_whole, .timeout = 120) {
    static const char *const a[] = {"alpha"};
    const char *p1 = te_path("pause1.pftrace"), *p2 = te_path("pause2.pftrace");
    pthread_t th[STOP_THREADS];
    tracec_session *s1 = start_file(p1, TRACEC_BUFFERING_MODE_STREAMING, 6, a, 1);
    tracec_session *s2 = start_backend(p2, TRACEC_BUFFERING_MODE_STREAMING, 3, a, 1);
    __atomic_store_n(&stop_writers, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&writer_rounds, 0, __ATOMIC_RELAXED);
    pthread_barrier_init(&nest_settle, NULL, STOP_THREADS + 1);
    for (int i = 0; i < STOP_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, nesting_writer, NULL), 0);
    /* record backend: a quarter of the rounds between two steps (the same steps, smaller traces) */
    const long rounds = te_record_backend() ? PAUSE_ROUNDS / 4 : PAUSE_ROUNDS;
    for (int round = 0; round < 10; round++) {
        wait_for_rounds(rounds);
        cr_assert_eq(tracec_session_pause(s1), TRACEC_STATUS_SUCCESS);
        wait_for_rounds(rounds); /* events written while paused: lost, and counted */
        cr_assert_eq(tracec_session_resume(s1, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    }
    __atomic_store_n(&stop_writers, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&nest_settle);
    for (int i = 0; i < STOP_THREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&nest_settle);
    cr_assert_eq(tracec_session_stop(s1), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(stop_any(s2), TRACEC_STATUS_SUCCESS);
    free(check_ok(p1, NULL)); /* the paused one: every slice it kept whole */
    free(check_ok(p2, NULL)); /* the other session: every slice whole, no loss */
    /* the paused one: as te_losses' pause tests, the nesting as the trace processor shows it; the events of
       the pauses are counted in the paused session */
    const tp_check nesting[] = {{"select count(*) from slice where name = 'inner';", '>', 0},
                                {"select count(*) from slice where name = 'outer' and depth > 0;", '=', 0},
                                {"select count(*) from slice where name = 'inner' and depth > 1;", '=', 0},
                                {"select count(*) from slice where dur < 0;", '=', 0}};
    expect_tp(p2, NO_LOSS, nesting, 4, NULL, NULL);
    expect_tp(p1, SOME_LOSS, nesting, 4, NULL, NULL);
}
