/*
 * test_timestamps.c - the trace processor shows every event at the time the
 * program recorded it, in every buffering mode and across everything that
 * restarts a sequence's state: ONESHOT, CIRCULAR after wrapping, STREAMING
 * with drops (and the ENDs owed for them), a CLEAR_ENTIRE resume (a new
 * sequence, names interned again), ENDs owed across a pause, timestamps
 * earlier than the sequence's last one, typed events, counters, and a
 * MONOTONIC session clock.
 *
 * The oracle: events carry their own timestamp (TRACEC_TE_TIMESTAMP, read
 * from the session's clock by the test) and an int arg naming them; events
 * that read the clock themselves (typed events, plain ones without a
 * timestamp) must show a time between the test's readings before and after
 * them.  Each event the trace processor shows is looked up by its arg.
 *
 * Between its readings of the clock a thread extrapolates it from the CPU's
 * counter (track-events.md, "Reading the clock"), within 50 ns of the
 * clock: the same tests hold with it (events that read the clock may lie
 * that far outside the test's readings) and, exactly, with a reading per
 * event (the te_timestamps_clock_read entry), and
 * `many_windows_on_two_threads` runs long enough for the rate to be
 * measured, refined and the windows to roll over.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "my_events.tracec.h"
#include "te_util.h"
#include "tracec/track_event.h"

#define TS_CATEGORIES(C) C(a, "cat_a")
TRACEC_TE_DECLARE_CATEGORIES(TS_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(TS_CATEGORIES)

enum { MAX_EV = 40000 };

/* What the program recorded for event i: its time lies in [lo, hi] (lo == hi: exact). */
typedef struct span {
    uint64_t lo, hi;
    int set;
} span;

static span want[MAX_EV];
static clockid_t ts_clk = CLOCK_BOOTTIME;

static uint64_t now(void) {
    struct timespec ts;
    clock_gettime(ts_clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static tracec_session *start(const char *path, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                             size_t size, uint32_t clock_id) {
    static const char *const cats[] = {"cat_a"};
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    cfg.path = path;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.buffer_size = size;
    cfg.categories = cats;
    cfg.num_categories = 1;
    cfg.clock_id = clock_id;
    ts_clk = clock_id == 3 ? CLOCK_MONOTONIC : CLOCK_BOOTTIME;
    memset(want, 0, sizeof want);
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's */
    return s;
}

/*
 * How far an event that reads the clock itself may lie outside the test's
 * readings around it: none when every event reads the clock
 * (TRACEC_TE_CLOCK=read), else the bound docs/track-events.md gives for a
 * time extrapolated from the CPU's counter ("Reading the clock").
 */
static uint64_t clock_slack(void) {
    const char *e = getenv("TRACEC_TE_CLOCK");
    return e != NULL && strcmp(e, "read") == 0 ? 0 : 50;
}

/* An instant at a time the program chose. */
static void at(int i, uint64_t t) {
    want[i] = (span){t, t, 1};
    TRACEC_TE(a, TRACEC_TE_INSTANT("at"), TRACEC_TE_TIMESTAMP(t), TRACEC_TE_ARG_INT("i", i));
}

/* An instant that reads the clock itself. */
static void implicit(int i) {
    uint64_t lo = now();
    TRACEC_TE(a, TRACEC_TE_INSTANT("implicit"), TRACEC_TE_ARG_INT("i", i));
    want[i] = (span){lo, now(), 1};
}

/* A typed event (its arg: custom_counter). */
static void typed(int i) {
    uint64_t lo = now();
    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, "typed") { my_app_MyEvent_set_custom_counter(&ev, i); }
    want[i] = (span){lo, now(), 1};
}

/*
 * Each event the trace processor shows (an instant or slice with arg i, or
 * a typed event's custom_counter) is at its recorded time, at most once;
 * returns how many it shows.  Also: no error or data-loss row but the
 * session's own count.
 */
static int check_times(const char *trace) {
    char *out, *line, *save = NULL;
    int shown = 0;
    static unsigned char seen[MAX_EV];
    const char *sql = "select a.int_value as i, s.ts from slice s join args a using(arg_set_id) "
                      "where a.key in ('debug.i', 'custom_counter') order by i;";
    char *bad = NULL;
    /* the query and the stats, from one launch of the trace processor */
    if (!te_tp_losses_and(trace, &sql, 1, &bad, NULL, &out)) return -1;
    cr_assert_str_eq(bad, "", "error / data_loss stats:\n%s", bad);
    free(bad);
    memset(seen, 0, sizeof seen);
    cr_assert(out != NULL);
    for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        long long i;
        unsigned long long ts;
        if (line[0] == '"') continue; /* the header */
        cr_assert_eq(sscanf(line, "%lld,%llu", &i, &ts), 2, "row '%s'", line);
        cr_assert(i >= 0 && i < MAX_EV && want[i].set, "event %lld was not recorded", i);
        cr_assert(!seen[i], "event %lld shown twice", i);
        seen[i] = 1;
        uint64_t slack = want[i].lo == want[i].hi ? 0 : clock_slack();
        cr_assert(ts + slack >= want[i].lo && ts <= want[i].hi + slack,
                  "event %lld at %llu, recorded [%llu, %llu] (slack %llu ns)", i, ts, (unsigned long long)want[i].lo,
                  (unsigned long long)want[i].hi, (unsigned long long)slack);
        shown++;
    }
    free(out);
    return shown;
}

/* check_trace.py finds no problem; the summary's `key` as a number. */
static long summary_long(const char *trace, const char *key) {
    char *out;
    int rc = te_check(trace, "--allow-open", &out);
    cr_assert_eq(rc, 0, "check_trace.py on %s:\n%s", trace, out ? out : "");
    long v = te_summary_long(out, key);
    free(out);
    return v;
}

static int recorded(int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += want[i].set;
    return k;
}

/* One sequence's worth of every kind of event; returns the next free index. */
static int mixed(int i0, int n) {
    int i = i0;
    uint64_t t = now();
    for (int k = 0; k < n; k++) {
        switch (k % 7) {
        case 0: at(i++, t = now()); break;          /* after case 6: earlier than the last packet */
        case 1: at(i++, t += 1); break;             /* a 1-byte delta */
        case 2: at(i++, t - 70000); break;          /* earlier than the last packet: absolute */
        case 3: implicit(i++); break;               /* the clock read by the layer */
        case 4: typed(i++); break;                  /* a typed event */
        case 5: at(i++, t = now()), at(i++, t); break; /* the same time twice: a zero delta */
        default: at(i++, now()); break;
        }
    }
    at(i++, now() + 5000000000ull); /* seconds ahead (what follows is earlier than it: absolute) */
    return i;
}

Test(te_timestamps, oneshot_every_event_at_its_time) {
    const char *path = te_path("oneshot.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, 0, 1u << 20, 0);
    int n = mixed(0, 600);
    uint64_t t = now();
    TRACEC_TE(a, TRACEC_TE_COUNTER_INT("queue", 3), TRACEC_TE_TIMESTAMP(t + 10));
    TRACEC_TE(a, TRACEC_TE_COUNTER_INT("queue", 4), TRACEC_TE_TIMESTAMP(t + 20));
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("flowing"), TRACEC_TE_TIMESTAMP(t + 30), TRACEC_TE_FLOW(5));
    TRACEC_TE(a, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(t + 40));
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(check_times(path), n);
    cr_assert_gt(summary_long(path, "incremental"), n / 2, "timestamps are deltas");
    char *out, want_c[256], want_s[256];
    snprintf(want_c, sizeof want_c, "\"ts\",\"v\"\n%llu,3\n%llu,4\n", (unsigned long long)(t + 10),
             (unsigned long long)(t + 20));
    cr_assert(te_tp(path, "select ts, cast(value as int) as v from counter order by ts;", &out));
    cr_assert_str_eq(out, want_c);
    free(out);
    snprintf(want_s, sizeof want_s, "\"ts\",\"dur\"\n%llu,10\n", (unsigned long long)(t + 30));
    cr_assert(te_tp(path, "select ts, dur from slice where name = 'flowing';", &out));
    cr_assert_str_eq(out, want_s);
    free(out);
}

/*
 * ONESHOT refuses what does not fit, and small events still fit after a big
 * one was refused: the ones after a refused packet are at their times (the
 * reader never saw the refused one).
 */
Test(te_timestamps, oneshot_refusals_in_between) {
    const char *path = te_path("refused.pftrace");
    static char big[3000];
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, 0, 64u << 10, 0);
    memset(big, 'x', sizeof big - 1);
    int i = 0;
    for (int k = 0; k < 3000; k++) {
        if (k % 4 == 3) {
            uint64_t t = now();
            want[i] = (span){t, t, 1};
            TRACEC_TE(a, TRACEC_TE_INSTANT("big"), TRACEC_TE_TIMESTAMP(t), TRACEC_TE_ARG_INT("i", i),
                      TRACEC_TE_ARG_STRING("s", big));
            i++;
        } else {
            at(i++, now());
        }
    }
    cr_assert_gt(te_lost_now(s), 0u, "the buffer refused some");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    int shown = check_times(path);
    cr_assert(shown < i, "shown %d of %d", shown, i);
    char *out;
    /* some event after a refused one is shown: the first missing index is below the last shown one */
    int first_missing = -1, last_shown = -1;
    cr_assert(te_tp(path, "select a.int_value from args a where a.key = 'debug.i' order by 1;", &out));
    {
        char *line, *save = NULL;
        int expect = 0;
        for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] == '"') continue;
            int v = atoi(line);
            if (first_missing < 0 && v != expect) first_missing = expect;
            expect = v + 1;
            last_shown = v;
        }
    }
    free(out);
    cr_assert(first_missing >= 0 && last_shown > first_missing, "first missing %d, last shown %d", first_missing,
              last_shown);
}

Test(te_timestamps, streaming_on_a_monotonic_clock) {
    const char *path = te_path("mono.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 1u << 20, 3);
    int n = mixed(0, 300);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(check_times(path), n);
    cr_assert_gt(summary_long(path, "incremental"), n / 2);
}

/* A wrap overwrites the oldest packets: the ones left are at their times. */
Test(te_timestamps, circular_after_a_wrap) {
    const char *path = te_path("circular.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_CIRCULAR, 0, 4096, 0);
    int n = mixed(0, 20000);
    if (!te_record_backend()) { /* (the recorder's trace counts the overwritten packets: shown < n below) */
        tracec_buffer_stats_t bs;
        cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s), &bs), TRACEC_STATUS_SUCCESS);
        cr_assert_gt(bs.overwritten, 1000u, "the buffer wrapped");
    }
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    int shown = check_times(path);
    cr_assert(shown > 10 && shown < n, "shown %d of %d", shown, n);
}

/*
 * STREAMING DISCARD that drops: every event shown is at its time, and so is
 * every slice's end, including ENDs that were refused, owed and written
 * after a later event (earlier than it: an absolute timestamp).
 */
Test(te_timestamps, streaming_drops_and_owed_ends) {
    const char *path = te_path("drops.pftrace");
    static uint64_t end_ts[MAX_EV];
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 4096, 0);
    int i = 0;
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 2000; k++, i++) {
            uint64_t t = now();
            if (k % 3 == 2) {
                implicit(i);
                continue;
            }
            want[i] = (span){t, t, 1};
            TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("s"), TRACEC_TE_TIMESTAMP(t), TRACEC_TE_ARG_INT("i", i));
            end_ts[i] = now(); /* no later than the next BEGIN: the slices do not overlap */
            TRACEC_TE(a, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(end_ts[i]));
        }
        if (!te_record_backend())
            cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_SUCCESS);
        else /* the recorder saves the full halves it was told of (no flush from the program's side) */
            nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    }
    cr_assert_gt(te_lost_now(s), 0u, "the buffer dropped");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    int shown = check_times(path);
    cr_assert(shown > 10 && shown < recorded(i), "shown %d of %d", shown, recorded(i));
    cr_assert_gt(summary_long(path, "dropped_flags"), 0);
    char *out, *line, *save = NULL;
    int ended = 0;
    cr_assert(te_tp(path,
                    "select a.int_value as i, s.ts + s.dur as e from slice s join args a using(arg_set_id) "
                    "where s.name = 's' and a.key = 'debug.i' and s.dur >= 0 order by i;",
                    &out));
    for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        long long k;
        unsigned long long e;
        if (line[0] == '"') continue;
        cr_assert_eq(sscanf(line, "%lld,%llu", &k, &e), 2);
        cr_assert_eq(e, end_ts[k], "slice %lld ends at %llu, recorded %llu", k, e, (unsigned long long)end_ts[k]);
        ended++;
    }
    free(out);
    cr_assert_gt(ended, 10);
}

/* CLEAR_ENTIRE: a new sequence (names interned again, the clock declared again); both runs at their times. */
Test(te_timestamps, clear_entire_and_reinterning) {
    TE_LOCAL_ONLY("pause and resume with CLEAR_ENTIRE");
    const char *path = te_path("clear.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, 0, 1u << 20, 0);
    int i = mixed(0, 60);
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE), TRACEC_STATUS_SUCCESS);
    int n = mixed(i, 60);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(check_times(path), n);
    cr_assert_eq(summary_long(path, "sequences"), 2);
    cr_assert_gt(summary_long(path, "interned_event_names"), 3, "names interned again on the new sequence");
}

/*
 * A slice open at a pause ends there: its END is owed and written after the
 * next event of the new run, with the earlier time; the events after it are
 * still at their times.
 */
Test(te_timestamps, an_end_owed_across_a_pause) {
    TE_LOCAL_ONLY("pause and resume");
    const char *path = te_path("owed.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 1u << 20, 0);
    uint64_t t0 = now();
    want[0] = (span){t0, t0, 1};
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("open"), TRACEC_TE_TIMESTAMP(t0), TRACEC_TE_ARG_INT("i", 0));
    at(1, t0 + 1000);
    uint64_t lo = now();
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    uint64_t hi = now();
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    at(2, now());
    at(3, now() + 10);
    implicit(4);
    at(5, now() + 7);
    TRACEC_SLICE_END(a); /* swallowed: the runtime ended the slice at the pause */
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(check_times(path), 6);
    char *out;
    unsigned long long e = 0;
    cr_assert(te_tp(path, "select ts + dur as e from slice where name = 'open';", &out));
    cr_assert(out != NULL && sscanf(strchr(out, '\n') + 1, "%llu", &e) == 1, "%s", out);
    cr_assert(e >= lo && e <= hi, "ended at %llu, paused in [%llu, %llu]", e, (unsigned long long)lo,
              (unsigned long long)hi);
    free(out);
}

/* Writer of `many_windows_on_two_threads`: implicit instants [i0, i0 + n), each between the thread's readings. */
typedef struct windows_arg {
    int i0, n;
} windows_arg;

static void *windows_writer(void *p) {
    const windows_arg *w = p;
    uint64_t seed = (uint64_t)w->i0 * 0x9e3779b97f4a7c15ull + 1u;
    for (int i = w->i0; i < w->i0 + w->n; i++) {
        implicit(i);
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t gap = (uint32_t)(seed >> 33) % 8u; /* 0-7: back to back, a spin, or sleeps across windows */
        if (gap >= 6)
            nanosleep(&(struct timespec){0, (long)(gap - 5) * 700 * 1000}, NULL);
        else
            for (volatile uint32_t k = 0; k < gap * 500u; k++) {
            }
    }
    return NULL;
}

/*
 * Two threads write instants that read the clock themselves for about half
 * a second, with gaps from none to 1.4 ms: through the first calibration,
 * its refinement and many windows, each thread's events still lie between
 * its own readings of the clock before and after them (within 50 ns).
 */
Test(te_timestamps, many_windows_on_two_threads) {
    const char *path = te_path("windows.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 1u << 20, 0);
    enum { PER_THREAD = 1200 };
    windows_arg args[2] = {{0, PER_THREAD}, {PER_THREAD, PER_THREAD}};
    pthread_t th[2];
    for (int k = 0; k < 2; k++) cr_assert_eq(pthread_create(&th[k], NULL, windows_writer, &args[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(check_times(path), 2 * PER_THREAD);
}
