/*
 * test_signals.c - track events from a signal handler, in every buffering
 * mode and every form (TRACEC_TE, TRACEC_INSTANT, a slice, the typed form,
 * a dynamic name, also in the interrupted thread):
 * a 5 kHz SIGALRM interrupts a thread that writes events, flushes and
 * pauses; each handler event is written or dropped and counted, never a
 * crash or a deadlock.  The count is checked against the trace processor:
 * the events it shows plus its data_loss statistic are what the handler
 * wrote.  On the record backend (te_util.h) the session is the recorder's:
 * the handler's events go to the shared buffer, and the thread writes
 * without flushes or pauses (the recorder alone stops and starts its
 * session).  Runs under ASan and TSan (label tsan; tests/common/tsan_runner
 * in the TSan build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "my_events.tracec.h"
#include "te_util.h"
#include "tracec/track_event.h"

#define SIG_CATEGORIES(C) C(m, "main") C(h, "handler")
TRACEC_TE_DECLARE_CATEGORIES(SIG_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(SIG_CATEGORIES)

static volatile sig_atomic_t calls;    /* handler runs */
static volatile sig_atomic_t calls_on; /* handler runs with the category enabled: 6 events each (4 instants, a slice) */
static char sig_dyn[16] = "sig dyn";   /* a name known at run time */

static void on_alarm(int sig) {
    int e = errno;
    (void)sig;
    calls++;
    if (TRACEC_TE_ENABLED(h)) calls_on++; /* only the interrupted thread changes it (pause/resume) */
    TRACEC_INSTANT(h, "sig instant");
    TRACEC_TE(h, TRACEC_TE_INSTANT("sig te"), TRACEC_TE_ARG_INT("n", (int)calls), TRACEC_TE_FLOW(7));
    TRACEC_EVENT_AS(h, my_app_MyEvent, ev, "sig typed") { my_app_MyEvent_set_custom_counter(&ev, 1); }
    TRACEC_INSTANT_DYN(h, sig_dyn);
    TRACEC_SLICE_BEGIN(h, "sig slice");
    TRACEC_SLICE_END(h);
    errno = e;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The main thread writes, flushes and pauses under a 5 kHz SIGALRM for `secs`; returns the trace's path. */
static const char *run(const char *name, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy, size_t size,
                       double secs) {
    const char *path = te_path(name);
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    struct sigaction sa;
    struct sigevent sev;
    struct itimerspec it = {{0, 200000}, {0, 200000}}, off = {{0, 0}, {0, 0}};
    timer_t timer;
    cfg.path = path;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.buffer_size = size;
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
    calls = calls_on = 0;
    memset(&sev, 0, sizeof sev); /* 5 kHz, at this thread only */
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev._sigev_un._tid = gettid();
    cr_assert_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    cr_assert_eq(timer_settime(timer, 0, &it, NULL), 0);
    double t0 = seconds();
    /* `secs`, and on a machine so loaded that the timer fired fewer than 60 times by then, on until it has
       (at most 20 s): the checks below need handler events */
    for (long i = 0; seconds() - t0 < secs || (calls < 60 && seconds() - t0 < 20.0); i++) {
        char main_dyn[16];
        snprintf(main_dyn, sizeof main_dyn, "main dyn %ld", i % 4);
        TRACEC_SLICE_BEGIN(m, "main");
        TRACEC_INSTANT_DYN(m, main_dyn); /* a handler interrupting the dynamic path never swaps names */
        TRACEC_TE(m, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("i", i), TRACEC_TE_ARG_STRING("s", "text"));
        TRACEC_COUNTER(m, "i", i);
        TRACEC_SLICE_END(m);
        if (s == NULL) continue; /* the recorder's session */
        if (i % 2000 == 1999) (void)tracec_session_flush(s);
        if (i % 5000 == 4999) {
            (void)tracec_session_pause(s);
            (void)tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN);
        }
    }
    cr_assert_eq(timer_settime(timer, 0, &off, NULL), 0);
    cr_assert_eq(timer_delete(timer), 0);
    signal(SIGALRM, SIG_IGN);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_gt(calls, 50, "the timer fired %d times", (int)calls);
    return path;
}

/*
 * The trace processor sees no error and main's slices nest in nothing; with
 * `exact`, every handler event with its category enabled is in the trace
 * (a slice row is two packets) or in the data_loss count, and nothing else
 * was lost.
 */
static void check(const char *path, int exact) {
    char *out;
    long instants, slices, lost, errors, deep, sig_deep, misnamed;
    if (!te_tp(path,
               "select (select count(*) from slice where name like 'sig%' and name != 'sig slice'),"
               " (select count(*) from slice where name = 'sig slice'),"
               " (select coalesce(sum(value), 0) from stats where name = 'traced_buf_trace_writer_packet_loss'),"
               " (select count(*) from stats where value > 0 and severity = 'error'),"
               " (select coalesce(max(depth), 0) from slice where name = 'main'),"
               " (select coalesce(max(depth), 0) from slice where name like 'sig%'),"
               " (select count(*) from slice where name not in ('main', 'tick', 'main dyn 0', 'main dyn 1',"
               "  'main dyn 2', 'main dyn 3', 'sig instant', 'sig te', 'sig typed', 'sig dyn', 'sig slice')),"
               " (select coalesce(group_concat(name || ' ' || value, '; '), '-') from stats"
               "  where value > 0 and severity = 'error');",
               &out))
        return;
    const char *nl = out ? strchr(out, '\n') : NULL;
    char which[256] = "";
    cr_assert(nl != NULL && sscanf(nl + 1, "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%255[^\n]", &instants, &slices, &lost, &errors,
                                   &deep, &sig_deep, &misnamed, which) == 8,
              "trace processor: %s", out ? out : "");
    free(out);
    if (errors != 0) { /* the trace's tracks, for a track error (the trace goes with the test's directory) */
        (void)te_check(path, "--tracks", &out);
        cr_assert_eq(errors, 0, "error stats in %s: %s\nits track descriptors:\n%s", path, which, out ? out : "");
    }
    cr_assert_eq(misnamed, 0, "%ld slices with a name no event had", misnamed);
    cr_assert_leq(deep, 0, "main slices nest in nothing: max depth %ld", deep);
    cr_assert_leq(sig_deep, 1, "handler events nest at most in main's slice: %ld", sig_deep);
    if (exact)
        cr_assert_eq(instants + 2 * slices + lost, 6L * calls_on,
                     "%d handler calls with the category on; the trace shows %ld instants, %ld slices, %ld lost",
                     (int)calls_on, instants, slices, lost);
    else
        cr_assert_geq(instants + 2 * slices + lost, 6L * calls_on / 2,
                      "%d handler calls with the category on; the trace shows %ld instants, %ld slices, %ld lost",
                      (int)calls_on, instants, slices, lost);
}

static int task_count(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A session's delivery thread runs once its start returns, so the first event, a handler's included, only wakes
   it: starting a thread allocates, which a signal handler must not do.  Record backend: the recorder client's
   threads (its control thread, the shared buffer's delivery thread) run once the recorder's session traces.
   The handler's events are in the trace. */
Test(te_signals, the_delivery_thread_runs_before_the_first_event) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    struct sigaction sa;
    cfg.path = te_path("thread_first.pftrace");
    cfg.flush_period_ms = TRACEC_SESSION_FLUSH_NEVER; /* no flusher thread: the delivery thread alone */
    int before = task_count();
    te_start(&cfg, &s);
    int started = task_count();
    cr_assert_gt(started, before, "no thread runs after the start");
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
    calls = calls_on = 0;
    raise(SIGALRM);
    signal(SIGALRM, SIG_IGN);
    cr_assert_eq(calls, 1);
    cr_assert_eq(task_count(), started, "the handler's events started a thread");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check(cfg.path, 1);
}

Test(te_signals, streaming_lossless_every_handler_event_is_written_or_counted) {
    const char *path = run("sl.pftrace", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 4u << 20, 0.12);
    check(path, 1);
}

Test(te_signals, streaming_discard_never_crashes) {
    const char *path = run("sd.pftrace", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 16u << 10, 0.3);
    check(path, 0);
}

Test(te_signals, oneshot_never_crashes) {
    const char *path = run("os.pftrace", TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 64u << 10, 0.25);
    check(path, 0);
}

Test(te_signals, circular_never_deadlocks) {
    const char *path = run("ci.pftrace", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, 64u << 10, 0.2);
    check(path, 0);
}
