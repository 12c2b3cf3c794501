/*
 * test_threads.c - track events from many threads: four long-lived
 * producers, short-lived threads that exit mid-session, and a stop that
 * races with producers.  Each thread gets its own sequence; the trace
 * processor sees every slice on its thread's track.  Runs under TSan too
 * (label tsan; with tests/common/tsan_runner in the TSan build).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te_util.h"
#include "tracec/track_event.h"

#define THREAD_CATEGORIES(C) C(t, "threads")
TRACEC_TE_DECLARE_CATEGORIES(THREAD_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(THREAD_CATEGORIES)

enum { LONG_THREADS = 4, SHORT_THREADS = 8, LONG_ITERS = 200, SHORT_ITERS = 10 };

typedef struct worker_arg {
    char name[16];
    int iters;
    volatile int *stop; /* NULL: run `iters` times */
    pthread_barrier_t *settle; /* not NULL: at the end, wait twice (the lead flushes the buffer between), then one
                                  more event, so a thread whose last packets were dropped still writes the packet
                                  that says so */
} worker_arg;

static void *worker(void *p) {
    worker_arg *w = (worker_arg *)p;
    pthread_setname_np(pthread_self(), w->name);
    for (int i = 0; w->stop ? !__atomic_load_n(w->stop, __ATOMIC_RELAXED) : i < w->iters; i++) {
        TRACEC_TE(t, TRACEC_TE_SLICE_BEGIN("work"), TRACEC_TE_ARG_INT("iter", i));
        TRACEC_INSTANT(t, "tick");
        TRACEC_COUNTER(t, "progress", i);
        TRACEC_SLICE_END(t);
    }
    if (w->settle != NULL) {
        pthread_barrier_wait(w->settle); /* every writer is done */
        pthread_barrier_wait(w->settle); /* the buffer is delivered: room for everyone's last event */
        TRACEC_INSTANT(t, "tick");
    }
    return NULL;
}

static void check(const char *path, const char *flags, char **summary) {
    char *out;
    int rc = te_check(path, flags, &out);
    cr_assert_eq(rc, 0, "check_trace.py:\n%s", out ? out : "");
    *summary = out;
}

Test(te_threads, long_and_short_lived_threads_each_get_a_sequence) {
    const char *path = te_path("threads.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    pthread_t lt[LONG_THREADS], st[SHORT_THREADS];
    worker_arg la[LONG_THREADS], sa[SHORT_THREADS];
    cfg.path = path;
    cfg.buffer_size = 64 * 1024;
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's */
    for (int i = 0; i < LONG_THREADS; i++) {
        snprintf(la[i].name, sizeof la[i].name, "long%d", i);
        la[i].iters = LONG_ITERS;
        la[i].stop = NULL;
        la[i].settle = NULL;
        cr_assert_eq(pthread_create(&lt[i], NULL, worker, &la[i]), 0);
    }
    for (int i = 0; i < SHORT_THREADS; i += 2) { /* two at a time, each exits while the session runs */
        for (int j = i; j < i + 2; j++) {
            snprintf(sa[j].name, sizeof sa[j].name, "short%d", j);
            sa[j].iters = SHORT_ITERS;
            sa[j].stop = NULL;
            sa[j].settle = NULL;
            cr_assert_eq(pthread_create(&st[j], NULL, worker, &sa[j]), 0);
        }
        for (int j = i; j < i + 2; j++) pthread_join(st[j], NULL);
    }
    for (int i = 0; i < LONG_THREADS; i++) pthread_join(lt[i], NULL);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    char *sum;
    check(path, NULL, &sum);
    char *v = te_summary(sum, "sequences");
    cr_assert(v != NULL && atoi(v) == 1 + LONG_THREADS + SHORT_THREADS, "sequences: %s\n%s", v, sum);
    free(v);
    v = te_summary(sum, "events:TYPE_SLICE_BEGIN");
    cr_assert(v != NULL && atoi(v) == LONG_THREADS * LONG_ITERS + SHORT_THREADS * SHORT_ITERS, "%s", sum);
    free(v);
    free(sum);

    char *out, *bad = te_tp_bad_stats(path);
    cr_assert_eq(strcmp(bad, ""), 0, "error / data_loss stats:\n%s", bad);
    free(bad);
    if (te_tp(path,
              "select t.name, count(*) as n, max(s.depth) as depth from slice s join thread_track tt "
              "on s.track_id = tt.id join thread t using(utid) where s.name = 'work' group by t.name "
              "order by t.name;",
              &out)) {
        const char *want =
            "\"name\",\"n\",\"depth\"\n\"long0\",200,0\n\"long1\",200,0\n\"long2\",200,0\n\"long3\",200,0\n"
            "\"short0\",10,0\n\"short1\",10,0\n\"short2\",10,0\n\"short3\",10,0\n\"short4\",10,0\n"
            "\"short5\",10,0\n\"short6\",10,0\n\"short7\",10,0\n";
        cr_assert(out != NULL && strcmp(out, want) == 0, "got\n%s", out ? out : "");
        free(out);
    }
}

Test(te_threads, stop_while_threads_write) {
    const char *path = te_path("race.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    pthread_t th[LONG_THREADS];
    worker_arg wa[LONG_THREADS];
    volatile int stop = 0;
    cfg.path = path;
    cfg.mode = TRACEC_BUFFERING_MODE_CIRCULAR;
    cfg.buffer_size = 16 * 1024;
    te_start(&cfg, &s);
    for (int i = 0; i < LONG_THREADS; i++) {
        snprintf(wa[i].name, sizeof wa[i].name, "racer%d", i);
        wa[i].stop = &stop;
        wa[i].settle = NULL;
        cr_assert_eq(pthread_create(&th[i], NULL, worker, &wa[i]), 0);
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS); /* producers still running */
    nanosleep(&ts, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < LONG_THREADS; i++) pthread_join(th[i], NULL);
    char *sum;
    check(path, "--allow-open", &sum);
    free(sum);
}

/*
 * After a drop, Perfetto's reader holds a sequence's incremental state
 * invalid until a packet clears it, and silently skips the events it
 * cannot resolve meanwhile.  Four threads write into a small buffer of `mode` until packets are lost;
 * the trace processor must then show exactly the events the file holds
 * (python3-protobuf counts them): every slice begin and instant as a slice
 * row, every counter value as a counter row, and no stat saying something
 * was skipped.  STREAMING flags each loss on the next packet (which clears
 * the state); ONESHOT and CIRCULAR, whose durable part is delivered first,
 * never do.
 */

/* The packets dropped so far (record backend: the recorder client's count of lost packets). */
static uint64_t dropped_now(tracec_session *s) {
    if (te_record_backend()) return te_lost_now(s);
    tracec_buffer_stats_t bs;
    cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s), &bs), TRACEC_STATUS_SUCCESS);
    return bs.dropped;
}

static void lossy_run(const char *file, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                      size_t size, size_t durable, int threads, int iters, int flagged) {
    const char *path = te_path(file);
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    pthread_t th[LONG_THREADS];
    worker_arg wa[LONG_THREADS];
    cfg.path = path;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.buffer_size = size;
    cfg.durable_size = durable;
    pthread_barrier_t settle;
    if (flagged) pthread_barrier_init(&settle, NULL, LONG_THREADS + 1);
    te_start(&cfg, &s);
    /* LONG_THREADS at a time; more rounds (at most 40) while nothing was lost: in STREAMING whether the
       delivery keeps up depends on the machine (a slow writer under TSan may lose nothing in one round) */
    for (int done = 0; done < threads || (dropped_now(s) == 0 && done < threads + 40 * LONG_THREADS);
         done += LONG_THREADS) {
        for (int i = 0; i < LONG_THREADS; i++) {
            snprintf(wa[i].name, sizeof wa[i].name, "lossy%d", done + i);
            wa[i].iters = iters;
            wa[i].stop = NULL;
            wa[i].settle = flagged ? &settle : NULL;
            cr_assert_eq(pthread_create(&th[i], NULL, worker, &wa[i]), 0);
        }
        if (flagged) {
            pthread_barrier_wait(&settle);
            if (!te_record_backend())
                cr_assert_eq(tracec_flush_buffer(tracec_session_buffer(s)), TRACEC_STATUS_SUCCESS);
            else /* the recorder saves the full halves it was told of (no flush from the program's side) */
                nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
            pthread_barrier_wait(&settle);
        }
        for (int i = 0; i < LONG_THREADS; i++) pthread_join(th[i], NULL);
    }
    if (flagged) pthread_barrier_destroy(&settle);
    cr_assert_gt(dropped_now(s), 0u, "%s: packets were lost", file);
    uint64_t lost_now = te_lost_now(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    char *sum, *v, *diff;
    check(path, "--allow-open", &sum);
    cr_assert(te_summary_long(sum, "events:TYPE_SLICE_BEGIN") > 0 && te_summary_long(sum, "events:TYPE_INSTANT") > 0 &&
                  te_summary_long(sum, "events:TYPE_COUNTER") > 0,
              "%s: events kept\n%s", file, sum);
    v = te_summary(sum, "dropped_flags");
    cr_assert(v != NULL && (flagged ? atol(v) > 0 : atol(v) == 0), "%s: previous_packet_dropped %s\n%s", file,
              flagged ? "after a loss" : "never (durable state intact)", sum);
    free(v);
    char *bad = NULL;
    long lost = -1;
    cr_assert(te_tp_losses_and(path, NULL, 0, &bad, &lost, NULL), "%s: the trace processor's answers", file);
    cr_assert_eq(strcmp(bad, ""), 0, "%s: stats the trace processor raised:\n%s", file, bad);
    free(bad);
    /* every loss is in the trace, at severity data_loss */
    cr_assert_eq(lost, (long)lost_now, "%s: data_loss %ld", file, lost);
    diff = te_tp_shown_mismatch(path, sum);
    cr_assert(diff == NULL, "%s: %s", file, diff);
    free(sum);
}

Test(te_threads, streaming_discard_drops_hide_no_later_event) {
    lossy_run("lossy_streaming.pftrace", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 64 * 1024, 0,
              LONG_THREADS, 3000, 1);
}

Test(te_threads, oneshot_drops_hide_no_kept_event) {
    lossy_run("lossy_oneshot.pftrace", TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 64 * 1024, 0,
              LONG_THREADS, 3000, 0);
}

Test(te_threads, circular_durable_drops_hide_no_kept_event) {
    TE_LOCAL_ONLY("a durable part of one page (the recorder sizes its own: with 16 KiB, whether the last threads "
                  "it describes got their counter tracks, which the wrap keeps, depends on timing)");
    /* a durable part (one page) too small for the sequences of 64 threads: their headers, names and counter
       tracks are refused once it is full */
    const int threads = 16 * LONG_THREADS;
    char *out;
    lossy_run("lossy_circular.pftrace", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, 16 * 1024, 4096,
              threads, 50, 0);
    if (!te_tp(te_path("lossy_circular.pftrace"), "select count(*) from thread where tid != 0;", &out)) return;
    long described = te_tp_first_long(out);
    free(out);
    cr_assert(described > 0 && described < threads, "the durable part held %ld of %d threads' headers", described,
              threads);
}
