/*
 * test_losses.c - what a trace says when something is lost, judged by
 * Perfetto's trace processor: TraceStats rows at severity data_loss in
 * every mode (and at zero when nothing is lost), slices that nest as the
 * program meant after refused events, pauses, category changes and drops,
 * thread names read at the first event of each run, a fork child that
 * leaves the parent's file alone, and a file that survives _exit, SIGKILL
 * and SIGTERM up to the last periodic flush.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "my_events.tracec.h"
#include "te_util.h"
#include "tracec/track_event.h"

#define LOSS_CATEGORIES(C) C(m, "main") C(x, "extra")
TRACEC_TE_DECLARE_CATEGORIES(LOSS_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(LOSS_CATEGORIES)

static tracec_session *start(const char *path, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                             size_t size) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    cfg.path = path;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.buffer_size = size;
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's */
    return s;
}

/* Delivers what was written (record backend: waits for the recorder to save the full halves it was told of). */
static void flush(tracec_session *s) {
    if (!te_record_backend()) {
        cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_SUCCESS);
        return;
    }
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* The first value of the trace processor's answer; -2 when it is absent. */
static long tp_long(const char *trace, const char *sql) {
    char *out;
    long v = -1;
    if (!te_tp(trace, sql, &out)) return -2;
    const char *nl = out ? strchr(out, '\n') : NULL;
    if (nl != NULL && nl[1] != '\0') v = atol(nl + 1);
    free(out);
    return v;
}

static void expect_tp(const char *trace, const char *sql, const char *want) {
    char *out;
    if (!te_tp(trace, sql, &out)) return;
    cr_assert(out != NULL && strcmp(out, want) == 0, "trace processor, %s\n--- got\n%s--- want\n%s", sql,
              out ? out : "", want);
    free(out);
}

static long stat_value(const char *trace, const char *name) {
    char sql[256];
    snprintf(sql, sizeof sql, "select coalesce(sum(value), 0) from stats where name = '%s';", name);
    return tp_long(trace, sql);
}

/* The query of expect_loss, and its answer when the loss is `loss` (in want[n]). */
/* (the recorder's trace also counts the packets marked previous_packet_dropped, per buffer: not a loss of its own) */
#define LOSS_SQL                                                                                              \
    (te_record_backend() ? "select name, severity, value from stats where value > 0 and severity in "         \
                           "('error', 'data_loss') and name != 'traced_buf_sequence_packet_loss';"            \
                         : "select name, severity, value from stats where value > 0 and severity in "         \
                           "('error', 'data_loss');")
static const char *loss_want(long loss, char *want, size_t n) {
    if (loss > 0)
        snprintf(want, n, "\"name\",\"severity\",\"value\"\n"
                          "\"traced_buf_trace_writer_packet_loss\",\"data_loss\",%ld\n", loss);
    else
        snprintf(want, n, "\"name\",\"severity\",\"value\"\n");
    return want;
}

/* No error row; the data_loss rows are exactly the writer packet loss (when `loss` > 0) and worth `loss`. */
static void expect_loss(const char *trace, long loss) {
    char want[256];
    expect_tp(trace, LOSS_SQL, loss_want(loss, want, sizeof want));
}

/* The answers to sqls[0..n) on `trace` (a[i], malloc'd), from one launch of the trace processor. */
static void tp_answers(const char *trace, const char *const *sqls, size_t n, char **a) {
    cr_assert(te_tp_many(trace, sqls, n, a), "%s: the trace processor's answers", trace);
}

/* An answer of tp_answers is `want` (as expect_tp); frees it. */
static void expect_answer(const char *sql, char *got, const char *want) {
    cr_assert(got != NULL && strcmp(got, want) == 0, "trace processor, %s\n--- got\n%s--- want\n%s", sql,
              got ? got : "", want);
    free(got);
}

/* The first value of an answer of tp_answers; frees it. */
static long answer_long(char *got) {
    long v = te_tp_first_long(got);
    free(got);
    return v;
}

static uint64_t buffer_losses(tracec_session *s, tracec_buffer_stats_t *bs) {
    if (te_record_backend()) { /* the recorder client's count: no split */
        memset(bs, 0, sizeof *bs);
        return te_lost_now(s);
    }
    cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s), bs), TRACEC_STATUS_SUCCESS);
    return bs->dropped + bs->overwritten + bs->refused;
}

/* ---- statistics ------------------------------------------------------------ */

Test(te_losses, nothing_lost_writes_stats_at_zero) {
    const char *path = te_path("zero.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
    for (int i = 0; i < 100; i++) {
        TRACEC_SLICE_BEGIN(m, "s");
        TRACEC_SLICE_END(m);
    }
    flush(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    expect_loss(path, 0);
    long size = stat_value(path, "traced_buf_buffer_size");
    if (size != -2 && !te_record_backend()) cr_assert_eq(size, 1L << 20, "the session's TraceStats is in the trace: %ld", size);
}

/* Flat slices into a small buffer of `mode`: every loss is in the data_loss row, the kept slices are flat. */
static void flat_losses(const char *name, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                        const char *split_stat, int which) {
    const char *path = te_path(name);
    tracec_buffer_stats_t bs;
    tracec_session *s = start(path, mode, policy, 16u << 10);
    for (int i = 0; i < 20000; i++) {
        TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("iter"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_INSTANT(m, "tick");
        TRACEC_SLICE_END(m);
    }
    flush(s);
    uint64_t lost = buffer_losses(s, &bs);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_gt(lost, 0u, "a 16 KiB buffer loses some of 60,000 events");
    char split_sql[256], want[256], *a[7];
    snprintf(split_sql, sizeof split_sql, "select coalesce(sum(value), 0) from stats where name = '%s';", split_stat);
    const char *q[7] = {LOSS_SQL, split_sql, "select coalesce(max(depth), 0) from slice where name = 'iter';",
                        "select count(*) from slice where dur < 0;", "select count(*) from slice where name = 'iter';",
                        "select count(*) from slice where name = 'tick';",
                        "select count(*) from slice where name = 'iter' and dur < 0;"};
    tp_answers(path, q, 7, a);
    /* ONESHOT, lost: the BEGINs and ticks not in the trace (a tick inside a lost BEGIN is not written: the
       layer counts it), and the ENDs of kept slices (unfinished); the END of a lost BEGIN is no loss of its
       own.  CIRCULAR loses only what it overwrites: the buffer's count. */
    long kept_iter = answer_long(a[4]), kept_tick = answer_long(a[5]), unfinished = answer_long(a[6]);
    long loss = which ? (long)lost : (20000 - kept_iter) + (20000 - kept_tick) + unfinished;
    cr_assert_geq(loss, (long)lost, "the buffer's own losses are among them");
    expect_answer(q[0], a[0], loss_want(loss, want, sizeof want));
    long split = answer_long(a[1]);
    if (!te_record_backend()) cr_assert_eq(split, (long)(which ? bs.overwritten : bs.dropped), "%s", split_stat);
    /* what was kept nests as written: flat, and at most the slice whose END was lost is unfinished */
    cr_assert_leq(answer_long(a[2]), 0);
    cr_assert_leq(answer_long(a[3]), 1);
}

Test(te_losses, oneshot_discards_are_data_loss) {
    flat_losses("oneshot.pftrace", TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE,
                "traced_buf_chunks_discarded", 0);
}

Test(te_losses, circular_overwrites_are_data_loss) {
    flat_losses("circular.pftrace", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE,
                "traced_buf_chunks_overwritten", 1);
}

/* STREAMING DISCARD loses only when the producer outpaces the callback: losses, if any, are all counted. */
Test(te_losses, streaming_discard_drops_are_data_loss) {
    const char *path = te_path("discard.pftrace");
    tracec_buffer_stats_t bs;
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 4u << 10);
    for (int i = 0; i < 50000; i++) {
        TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("iter"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_SLICE_END(m);
    }
    flush(s);
    TRACEC_INSTANT(m, "last"); /* written after the flush: a slice whose END was lost is ended by now */
    flush(s);
    uint64_t lost = buffer_losses(s, &bs);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char want[256], *a[3];
    const char *q[3] = {LOSS_SQL, "select coalesce(max(depth), 0) from slice where name = 'iter';",
                        "select count(*) from slice where dur < 0;"};
    tp_answers(path, q, 3, a);
    expect_answer(q[0], a[0], loss_want((long)lost, want, sizeof want));
    cr_assert_leq(answer_long(a[1]), 0);
    cr_assert_eq(answer_long(a[2]), 0);
}

/* A STREAMING buffer that drops: every event is in the trace or counted lost, and a lost one counts once.
   While a sequence is dropping, its events carry their names inline and intern nothing (an interning packet
   would be dropped beside each event); at most two packets of sequence state (the names, the clock) are
   lost besides the events per run of losses (the gaps in the kept events' numbers, + 2 for a run before
   the first and after the last). */
Test(te_losses, streaming_counts_a_lost_event_once) {
    const char *path = te_path("once.pftrace");
    tracec_buffer_stats_t bs;
    enum { R = 25000, N = 2 * R }; /* R rounds of an instant and a typed event: event 2i and 2i + 1 */
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD, 4u << 10);
    for (int i = 0; i < R; i++) {
        TRACEC_TE(m, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_EVENT_AS(m, my_app_MyEvent, ev, "typed") { my_app_MyEvent_set_custom_counter(&ev, i); }
    }
    flush(s);
    uint64_t lost = buffer_losses(s, &bs);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char *a[3];
    const char *q[3] = {
        "select coalesce(sum(value), 0) from stats where name = 'traced_buf_trace_writer_packet_loss';",
        "select count(*) from (select e, lag(e) over (order by e) as prev from ("
        "select 2 * a.int_value as e from slice s join args a using(arg_set_id) where s.name = 'tick' and "
        "a.key = 'debug.i' union all select 2 * a.int_value + 1 from slice s join args a using(arg_set_id) "
        "where s.name = 'typed' and a.key like '%custom_counter')) where prev is not null and e != prev + 1;",
        "select count(*) from slice where name in ('tick', 'typed');"};
    tp_answers(path, q, 3, a);
    long loss = answer_long(a[0]), runs = answer_long(a[1]), kept = answer_long(a[2]);
    cr_assert_eq(loss, (long)lost, "the trace's count is the buffer's");
    cr_assert_geq(kept + loss, N, "every event is in the trace or counted (kept %ld, lost %ld)", kept, loss);
    cr_assert_leq(loss, (N - kept) + 2 * (runs + 2),
                  "a lost event counts once (kept %ld, lost %ld, runs of losses %ld)", kept, loss, runs);
    if (te_record_backend() && loss > 0) { /* tracec record says what lost them and what to change */
        char *log = te_recorder_log();
        cr_expect(strstr(log, "packets lost (counted in the trace's stats): the writers were faster than the "
                              "recorder; --wait MS") != NULL,
                  "%s", log);
        free(log);
    }
}

/* ---- nesting after losses --------------------------------------------------- */

Test(te_losses, refused_oversize_begin_takes_its_end_along) {
    const char *path = te_path("oversize.pftrace");
    tracec_buffer_stats_t bs;
    size_t big = 96u << 10;
    char *str = malloc(big);
    cr_assert_not_null(str);
    memset(str, 'x', big - 1);
    str[big - 1] = '\0';
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 64u << 10);
    TRACEC_SLICE_BEGIN(m, "outer");
    TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("big"), TRACEC_TE_ARG_STRING("s", str)); /* larger than a half: refused */
    TRACEC_SLICE_BEGIN(m, "inner"); /* inside big, which is not in the trace: not written either, counted */
    TRACEC_INSTANT(m, "tick");
    TRACEC_SLICE_END(m);
    TRACEC_EVENT_AS(m, my_app_MyEvent, ev, "typed") { my_app_MyEvent_set_custom_counter(&ev, 1); } /* typed: the same */
    TRACEC_SLICE_END(m); /* big's */
    TRACEC_SLICE_BEGIN(m, "after");
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_END(m); /* outer's */
    flush(s);
    (void)buffer_losses(s, &bs);
    uint64_t lost = te_lost_now(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    free(str);
    if (!te_record_backend()) cr_assert_eq(bs.refused, 1u);
    cr_assert_eq(lost, 4u, "the buffer's refusal of big; inner, tick and typed, dropped by the layer");
    expect_loss(path, 4);
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice order by ts;",
              "\"name\",\"depth\",\"ended\"\n\"outer\",0,1\n\"after\",1,1\n");
}

Test(te_losses, slices_open_at_a_pause_end_there) {
    TE_LOCAL_ONLY("pause and resume");
    const char *path = te_path("pause.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
    TRACEC_SLICE_BEGIN(m, "A");
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    TRACEC_SLICE_END(m); /* paused: A's END, lost (counted); A ends at the pause */
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    TRACEC_SLICE_BEGIN(m, "B");
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_BEGIN(m, "C");
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    TRACEC_SLICE_END(m); /* C's, after the resume: C was ended at the pause, this END is not written */
    TRACEC_SLICE_BEGIN(m, "D");
    TRACEC_SLICE_END(m);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice order by ts;",
              "\"name\",\"depth\",\"ended\"\n\"A\",0,1\n\"B\",0,1\n\"C\",0,1\n\"D\",0,1\n");
    expect_loss(path, 1);
}

/* Starts `fn` on a thread the test drives step by step (go[0]: it did a step; go[1]: the next one), and waits
   for its first step. */
static void start_stepped(pthread_t *th, sem_t go[2], void *(*fn)(void *)) {
    sem_init(&go[0], 0, 0);
    sem_init(&go[1], 0, 0);
    cr_assert_eq(pthread_create(th, NULL, fn, go), 0);
    sem_wait(&go[0]);
}

/* A thread whose last calls are its ENDs, after a pause and resume. */
static tracec_session *g_ends_session;
static void *ends_after_the_resume(void *p) {
    sem_t *go = p;
    TRACEC_SLICE_BEGIN(m, "s0");
    TRACEC_SLICE_BEGIN(m, "s1");
    sem_post(&go[0]);
    sem_wait(&go[1]); /* the main thread paused and resumed */
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_END(m);
    return NULL;
}

/*
 * Slices a pause ended are ended in the trace even when the thread's only
 * calls after the resume are its ENDs of them (swallowed: the pause ended
 * them) and it then writes nothing: the ENDs the boundary owes are written
 * when the thread first comes by, not after a later written event.
 */
Test(te_losses, slices_a_pause_ended_are_ended_when_the_thread_writes_nothing_after) {
    TE_LOCAL_ONLY("pause and resume");
    static const tracec_buffer_disposition_t how[] = {TRACEC_BUFFER_DISPOSITION_RETAIN,
                                                      TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE};
    for (size_t k = 0; k < sizeof how / sizeof how[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "ends%zu.pftrace", k);
        const char *path = te_path(name);
        g_ends_session = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
        sem_t go[2];
        pthread_t th;
        start_stepped(&th, go, ends_after_the_resume);
        cr_assert_eq(tracec_session_pause(g_ends_session), TRACEC_STATUS_SUCCESS);
        cr_assert_eq(tracec_session_resume(g_ends_session, how[k]), TRACEC_STATUS_SUCCESS);
        sem_post(&go[1]);
        cr_assert_eq(pthread_join(th, NULL), 0);
        cr_assert_eq(te_stop(g_ends_session), TRACEC_STATUS_SUCCESS);
        expect_tp(path, "select name, depth, dur >= 0 as ended from slice order by ts;",
                  "\"name\",\"depth\",\"ended\"\n\"s0\",0,1\n\"s1\",1,1\n");
        expect_loss(path, 0);
    }
}

/* A slice whose END the buffer refuses (too large for it): the END is owed. */
static void slice_with_a_lost_end(const char *name) {
    static char big[200 << 10];
    memset(big, 'b', sizeof big - 1u);
    TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN_DYN(name));
    TRACEC_SLICE_END_AS(m, my_app_MyEvent, ev) { my_app_MyEvent_set_cstr_custom_string(&ev, big); }
}

static void *lost_end_then_exit(void *p) {
    (void)p;
    slice_with_a_lost_end("thread work");
    return NULL; /* nothing after it: the END is written at the thread's exit */
}

/*
 * An END the buffer refused is owed, written after the thread's next
 * written event; a thread that writes nothing after it writes it at its
 * exit, and the thread that stops the session at the stop, so the slices
 * are ended in the trace (and the refused packets counted).
 */
Test(te_losses, a_lost_end_is_written_at_the_threads_exit_and_at_its_stop) {
    TE_LOCAL_ONLY("the program's own session's stop");
    const char *path = te_path("lostend.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 64u << 10);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, lost_end_then_exit, NULL), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    slice_with_a_lost_end("main work");
    uint64_t lost = te_lost_now(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(lost, 2u, "the two refused ENDs");
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice order by name;",
              "\"name\",\"depth\",\"ended\"\n\"main work\",0,1\n\"thread work\",0,1\n");
    expect_loss(path, 2);
}

/* A thread driven step by step by the test (go[0]: it did its step; go[1]: the next one). */
static void *steps_across_two_resumes(void *p) {
    sem_t *go = p;
    TRACEC_SLICE_BEGIN(m, "outer"); /* delivered by the first pause */
    sem_post(&go[0]);
    sem_wait(&go[1]); /* resumed (CLEAR_ENTIRE), and the buffer full, its delivery held */
    TRACEC_INSTANT(m, "refused"); /* takes the boundary; its new sequence's first packet is refused */
    sem_post(&go[0]);
    sem_wait(&go[1]); /* paused again */
    TRACEC_INSTANT(m, "paused"); /* lost, counted */
    sem_post(&go[0]);
    sem_wait(&go[1]); /* resumed (CLEAR_ENTIRE) */
    TRACEC_SLICE_END(m); /* outer's: ended at the first pause */
    TRACEC_SLICE_BEGIN(m, "next");
    TRACEC_SLICE_END(m);
    return NULL;
}

/* A session's output in memory; while `hold` is set the callback waits (its delivery thread with it). */
typedef struct held_output {
    unsigned char *data;
    size_t size;
    volatile int hold;
    sem_t release;
} held_output;

static void held_write(const void *data, size_t size, void *user) {
    held_output *o = user;
    if (__atomic_load_n(&o->hold, __ATOMIC_ACQUIRE)) sem_wait(&o->release);
    o->data = realloc(o->data, o->size + size);
    memcpy(o->data + o->size, data, size);
    o->size += size;
}

/*
 * A slice a pause ended stays ended in the trace when the thread's new
 * sequence could not start (its first packet refused: both halves full,
 * their delivery held) before the next pause: the END owed at the first
 * boundary is kept at the second (a sequence still to start belongs to the
 * same session and track), so later slices do not nest inside a stale one.
 */
Test(te_losses, an_owed_end_survives_a_second_boundary_before_the_new_sequence_starts) {
    TE_LOCAL_ONLY("a write callback");
    held_output out = {NULL, 0, 0, {{0}}};
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    sem_init(&out.release, 0, 0);
    cfg.write = held_write;
    cfg.write_data = &out;
    cfg.policy = TRACEC_BUFFER_POLICY_DISCARD;
    cfg.buffer_size = 4096;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    sem_t go[2];
    pthread_t th;
    start_stepped(&th, go, steps_across_two_resumes);
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE), TRACEC_STATUS_SUCCESS);
    __atomic_store_n(&out.hold, 1, __ATOMIC_RELEASE);
    uint64_t before = tracec_session_lost(s);
    for (int i = 0; i < 100000 && tracec_session_lost(s) < before + 100u; i++) TRACEC_INSTANT(m, "fill");
    cr_assert_geq(tracec_session_lost(s), before + 100u, "both halves full");
    sem_post(&go[1]);
    sem_wait(&go[0]);
    __atomic_store_n(&out.hold, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++) sem_post(&out.release); /* the deliveries waiting, and any that comes in between */
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    sem_post(&go[1]);
    sem_wait(&go[0]);
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE), TRACEC_STATUS_SUCCESS);
    sem_post(&go[1]);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    const char *path = te_save("twice.pftrace", out.data, out.size);
    free(out.data);
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice where name in ('outer', 'next') order by ts;",
              "\"name\",\"depth\",\"ended\"\n\"outer\",0,1\n\"next\",0,1\n");
}

/*
 * Events of a paused session are lost, and the trace says so: the run's
 * categories stay on, so each one reaches the layer, which counts it in
 * the data-loss statistics; its slice events keep the nesting (a BEGIN of
 * the pause is a level not in the trace, the program's ENDs after the
 * resume match).  A category the run did not enable stays off.  Once the
 * session stops, every category is off again.
 */
Test(te_losses, events_of_a_pause_are_counted_and_keep_the_nesting) {
    TE_LOCAL_ONLY("pause and resume");
    const char *path = te_path("paused.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    const char *only_main[] = {"main"};
    tracec_session *s = NULL;
    cfg.path = path;
    cfg.categories = only_main;
    cfg.num_categories = 1;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    TRACEC_SLICE_BEGIN(m, "A");
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    cr_assert(TRACEC_TE_ENABLED(m), "a paused run's category stays on (its events are counted)");
    cr_assert(!TRACEC_TE_ENABLED(x), "a category the run did not enable stays off");
    for (int i = 0; i < 10; i++) TRACEC_INSTANT(m, "lost");
    TRACEC_INSTANT(x, "not enabled: not a loss");
    TRACEC_SLICE_BEGIN(m, "B"); /* lost, with its END */
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_BEGIN(m, "C"); /* lost; its END comes after the resume */
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    TRACEC_INSTANT(m, "inside C"); /* inside a slice whose BEGIN was lost: not written, counted */
    TRACEC_SLICE_BEGIN(m, "C1");    /* the same, with its END */
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_END(m); /* C's: not written */
    TRACEC_SLICE_BEGIN(m, "D");
    TRACEC_SLICE_END(m);
    TRACEC_SLICE_END(m); /* A's: A ended at the pause, not written again */
    TRACEC_SLICE_BEGIN(m, "E");
    TRACEC_SLICE_END(m);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert(!TRACEC_TE_ENABLED(m), "every category is off once the session stops");
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice order by ts;",
              "\"name\",\"depth\",\"ended\"\n\"A\",0,1\n\"D\",0,1\n\"E\",0,1\n");
    expect_loss(path, 15);

    /* Paused, then stopped: the categories the pause kept on are off. */
    cfg.path = te_path("paused_stop.pftrace");
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    TRACEC_INSTANT(m, "lost");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert(!TRACEC_TE_ENABLED(m));
    expect_loss(cfg.path, 1);
}

/*
 * The same across runs that clear the buffer, in every mode: a pause delivers
 * what the run wrote (the BEGINs of the slices open at the pause included),
 * so a clearing resume takes none of them away and no END written for them
 * later is a stray one.
 */
Test(te_losses, slices_open_at_a_pause_end_there_whatever_the_resume_clears) {
    TE_LOCAL_ONLY("pause and resume");
    static const struct {
        tracec_buffering_mode_t mode;
        tracec_buffer_policy_t policy;
        const char *name;
    } modes[] = {{TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, "streaming"},
                 {TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, "circular"},
                 {TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, "oneshot"}};
    static const tracec_buffer_disposition_t clears[] = {TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE,
                                                         TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        for (size_t k = 0; k < 2; k++) {
            char file[64];
            snprintf(file, sizeof file, "pause_clear_%s_%zu.pftrace", modes[i].name, k);
            const char *path = te_path(file);
            tracec_session *s = start(path, modes[i].mode, modes[i].policy, 0);
            TRACEC_SLICE_BEGIN(m, "A");
            TRACEC_SLICE_BEGIN(m, "A1");
            cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
            cr_assert_eq(tracec_session_resume(s, clears[k]), TRACEC_STATUS_SUCCESS);
            TRACEC_SLICE_END(m); /* A1's and A's, ended at the pause: not written again */
            TRACEC_SLICE_END(m);
            TRACEC_SLICE_BEGIN(m, "B");
            TRACEC_SLICE_BEGIN(m, "B1");
            TRACEC_SLICE_END(m);
            cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
            cr_assert_eq(tracec_session_resume(s, clears[k]), TRACEC_STATUS_SUCCESS);
            TRACEC_SLICE_END(m); /* B's */
            TRACEC_SLICE_BEGIN(m, "C");
            TRACEC_SLICE_END(m);
            cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
            char want[256], *a[3];
            const char *q[3] = {"select name, depth, dur >= 0 as ended from slice order by ts;",
                                "select count(*) as n from stats where name = 'misplaced_end_event' and value > 0;",
                                LOSS_SQL};
            tp_answers(path, q, 3, a);
            expect_answer(q[0], a[0],
                          "\"name\",\"depth\",\"ended\"\n\"A\",0,1\n\"A1\",1,1\n\"B\",0,1\n\"B1\",1,1\n"
                          "\"C\",0,1\n");
            expect_answer(q[1], a[1], "\"n\"\n0\n");
            expect_answer(q[2], a[2], loss_want(0, want, sizeof want));
        }
    }
}

/*
 * An END that is owed when the next BEGIN is written: S1's END is refused
 * (larger than the buffer), and the ONESHOT buffer has room for one more
 * packet of S2's BEGIN's size but for none after it.  S1 ends at its END's
 * timestamp and S2, if kept, does not nest in it.  The buffer's layout is
 * deterministic on one thread: the fill count that leaves that room is
 * found first with instants only (an instant of S2's BEGIN's size fits, the
 * next packet is refused), each try in a session of its own.
 */
static const char owed_pad[] = "0123456789012345678901234567890123456789012345678901234567890123456789"
                               "012345678901234567890123456789";

/* Losses of the session's buffer so far. */
static uint64_t losses_now(tracec_session *s) {
    tracec_buffer_stats_t bs;
    return buffer_losses(s, &bs);
}

/*
 * The owed-END tests size their packets exactly, so their events carry
 * explicit times 1 us apart from a start 50 ms after the session's: every
 * timestamp delta has the same length in the probe and in the run, however
 * the machine schedules them.
 */
static uint64_t owed_t0;
#define OWED_AT(k) TRACEC_TE_TIMESTAMP(owed_t0 + (uint64_t)(k) * 1000u)

static void owed_clock_start(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    owed_t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 50000000u;
}

/* With `fills` instants after S1's BEGIN and an oversize packet: 1 when a packet of S2's BEGIN's size is kept and
   the one after it is refused. */
static int owed_room_fits(const char *path, int fills, const char *huge) {
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 4u << 10);
    owed_clock_start();
    TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("S1"), OWED_AT(0));
    for (int i = 0; i < fills; i++) TRACEC_TE(m, TRACEC_TE_INSTANT("fill"), OWED_AT(1 + i));
    /* refused as S1's END will be */
    TRACEC_TE(m, TRACEC_TE_INSTANT("huge"), TRACEC_TE_ARG_STRING("s", huge), OWED_AT(1 + fills));
    uint64_t l0 = losses_now(s);
    /* S2's BEGIN's size */
    TRACEC_TE(m, TRACEC_TE_INSTANT("S2"), TRACEC_TE_ARG_STRING("pad", owed_pad), OWED_AT(2 + fills));
    uint64_t l1 = losses_now(s);
    TRACEC_TE(m, TRACEC_TE_INSTANT("q"), OWED_AT(3 + fills));
    uint64_t l2 = losses_now(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    return l1 == l0 && l2 == l1 + 1u;
}

/* Slice events refused at the re-entrancy guard (here: inside a typed block, misuse) are lost events for the
   nesting rules: the refused BEGIN's END is not written, so the slice around it keeps its own END. */
Test(te_losses, slices_refused_inside_a_typed_block_keep_the_nesting) {
    const char *path = te_path("refused.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
    TRACEC_SLICE_BEGIN(m, "outer");
    TRACEC_EVENT_AS(m, my_app_MyEvent, ev, "typed") {
        my_app_MyEvent_set_custom_counter(&ev, 1);
        TRACEC_SLICE_BEGIN(m, "inner"); /* refused: an event inside a typed block */
    }
    TRACEC_SLICE_END(m); /* inner's: not written */
    TRACEC_INSTANT(m, "after");
    TRACEC_SLICE_BEGIN(m, "second");
    TRACEC_EVENT_AS(m, my_app_MyEvent, ev, "typed2") {
        TRACEC_SLICE_END(m); /* refused: second's END, lost; owed, since second is in the trace */
    }
    TRACEC_INSTANT(m, "last");
    TRACEC_SLICE_END(m); /* outer's */
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    expect_tp(path, "select name, depth from slice order by ts, depth;",
              "\"name\",\"depth\"\n\"outer\",0\n\"typed\",1\n\"after\",1\n\"second\",1\n\"typed2\",2\n"
              "\"last\",1\n");
    cr_assert_eq(tp_long(path, "select count(*) from slice where name = 'outer' and dur > 0;"), 1);
    cr_assert_eq(tp_long(path, "select count(*) from slice where dur < 0;"), 0);
}

Test(te_losses, an_owed_end_is_written_before_the_next_begin) {
    TE_LOCAL_ONLY("the buffer's exact room found by up to 200 sessions in a row (a recorder process each there)");
    const char *path = te_path("owed.pftrace");
    size_t big = 16u << 10;
    char *huge = malloc(big);
    int fills = -1;
    cr_assert_not_null(huge);
    memset(huge, 'x', big - 1);
    huge[big - 1] = '\0';
    for (int n = 0; n < 200 && fills < 0; n++)
        if (owed_room_fits(path, n, huge)) fills = n;
    cr_assert_geq(fills, 0, "no fill count leaves room for exactly one packet");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, 4u << 10);
    owed_clock_start();
    TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("S1"), OWED_AT(0));
    for (int i = 0; i < fills; i++) TRACEC_TE(m, TRACEC_TE_INSTANT("fill"), OWED_AT(1 + i));
    TRACEC_TE(m, TRACEC_TE_SLICE_END(), TRACEC_TE_ARG_STRING("s", huge), OWED_AT(1 + fills)); /* refused: owed */
    TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("S2"), TRACEC_TE_ARG_STRING("pad", owed_pad), OWED_AT(2 + fills));
    TRACEC_TE(m, TRACEC_TE_SLICE_END(), OWED_AT(3 + fills));
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    free(huge);
    expect_tp(path, "select name, depth, dur >= 0 as ended from slice where name = 'S1';",
              "\"name\",\"depth\",\"ended\"\n\"S1\",0,1\n");
    cr_assert_eq(tp_long(path, "select count(*) from slice where name = 'S2' and depth > 0;"), 0);
    cr_assert_eq(tp_long(path, "select count(*) from slice where name = 'fill' and depth != 1;"), 0);
}

/*
 * Four threads nest two levels (L0 in "main", L1 in "extra") in a small
 * DISCARD buffer while the lead pauses, resumes with and without "extra"
 * and flushes: whatever was lost, no kept slice nests deeper than the
 * program's two levels, L0 never nests, and nothing is left unfinished.
 */
enum { NEST_THREADS = 4 };
static volatile int nest_stop;
static pthread_barrier_t nest_settle;

static void *nester(void *p) {
    (void)p;
    for (long i = 0; !__atomic_load_n(&nest_stop, __ATOMIC_RELAXED); i++) {
        TRACEC_TE(m, TRACEC_TE_SLICE_BEGIN("L0"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_SLICE_BEGIN(x, "L1");
        TRACEC_INSTANT(m, "tick");
        TRACEC_SLICE_END(x);
        TRACEC_SLICE_END(m);
    }
    pthread_barrier_wait(&nest_settle); /* every writer is done */
    pthread_barrier_wait(&nest_settle); /* the buffer is delivered and the last run started */
    TRACEC_INSTANT(m, "last");
    return NULL;
}

Test(te_losses, nesting_survives_pauses_category_changes_and_drops) {
    TE_LOCAL_ONLY("pause and resume with additional categories");
    static const char *const base[] = {"main"};
    static const char *const extra[] = {"extra"};
    const char *path = te_path("nest.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    pthread_t th[NEST_THREADS];
    cfg.path = path;
    cfg.policy = TRACEC_BUFFER_POLICY_DISCARD;
    cfg.buffer_size = 16u << 10;
    cfg.categories = base;
    cfg.num_categories = 1;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    pthread_barrier_init(&nest_settle, NULL, NEST_THREADS + 1);
    for (int i = 0; i < NEST_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, nester, NULL), 0);
    for (int round = 0; round < 60; round++) {
        tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
        struct timespec ms = {0, 2000000L};
        nanosleep(&ms, NULL);
        if (round % 3 == 2) {
            flush(s);
            continue;
        }
        tracec_status_t st = tracec_session_pause(s);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "pause: %s", tracec_status_str(st));
        if (round % 2 == 0) {
            o.additional_categories = extra;
            o.num_additional_categories = 1;
        }
        st = tracec_session_resume_with_options(s, &o);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "resume: %s", tracec_status_str(st));
    }
    __atomic_store_n(&nest_stop, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&nest_settle);
    flush(s);
    pthread_barrier_wait(&nest_settle);
    for (int i = 0; i < NEST_THREADS; i++) pthread_join(th[i], NULL);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    pthread_barrier_destroy(&nest_settle);
    const char *q[6] = {"select count(*) from slice where name = 'L1';",
                        "select count(*) from slice where name = 'L0' and depth > 0;",
                        "select count(*) from slice where name = 'L1' and depth > 1;",
                        "select count(*) from slice where name = 'tick' and depth > 2;",
                        "select count(*) from slice where dur < 0;",
                        "select count(*) from stats where value > 0 and severity = 'error';"};
    char *a[6];
    tp_answers(path, q, 6, a);
    cr_assert_gt(answer_long(a[0]), 0);
    for (int i = 1; i < 6; i++) cr_assert_eq(answer_long(a[i]), 0, "%s", q[i]);
}

/*
 * A thread's first event in a session whose durable area is full: its
 * thread header is refused, so its BEGIN is lost (counted), and its END,
 * written in the next session, is not written either: no END without its
 * BEGIN in either trace.  The first session is the backend's (the
 * recorder's of a 128 KiB buffer, whose durable part is 16 KiB, on the
 * record backend), the next one the program's own.
 */
static pthread_barrier_t first_step;

static void *first_event_without_room_for_its_header(void *p) {
    (void)p;
    TRACEC_SLICE_BEGIN(m, "refused"); /* the thread's header does not fit */
    pthread_barrier_wait(&first_step);
    pthread_barrier_wait(&first_step); /* the next session started */
    TRACEC_SLICE_END(m);
    TRACEC_INSTANT(m, "after");
    return NULL;
}

Test(te_losses, a_begin_refused_with_the_threads_header_takes_its_end_along) {
    const char *p1 = te_path("header_refused.pftrace"), *p2 = te_path("header_next.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s =
        start(p1, TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, te_record_backend() ? 128u << 10 : 0);
    tracec_buffer_stats_t bs;
    char name[512];
    pthread_t th;
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    /* the durable area filled with track descriptors, the last ones with shorter names until one of a
       one-char name is refused: no room for a thread's header */
    uint64_t uuid = 1000, lost = 0;
    for (size_t len = sizeof name - 1; len > 0; len /= 2) {
        name[len] = '\0';
        while (buffer_losses(s, &bs) == lost) {
            cr_assert_lt(uuid, 1000u + 256u, "the durable area never filled");
            cr_assert_eq(tracec_te_define_track(uuid++, name, 0), TRACEC_STATUS_SUCCESS);
        }
        lost = buffer_losses(s, &bs);
    }
    pthread_barrier_init(&first_step, NULL, 2);
    cr_assert_eq(pthread_create(&th, NULL, first_event_without_room_for_its_header, NULL), 0);
    pthread_barrier_wait(&first_step);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cfg.path = p2;
    cfg.mode = TRACEC_BUFFERING_MODE_ONESHOT;
    cfg.durable_size = 1u << 20; /* room for every track and the thread's header */
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    pthread_barrier_wait(&first_step);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&first_step);
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    for (int i = 0; i < 2; i++) {
        const char *path = i == 0 ? p1 : p2;
        char *out;
        int rc = te_check(path, NULL, &out);
        cr_assert_eq(rc, 0, "check_trace.py on %s:\n%s", path, out ? out : "");
        free(out);
        expect_tp(path, "select count(*) as n from stats where name = 'misplaced_end_event' and value > 0;",
                  "\"n\"\n0\n");
    }
    expect_tp(p1, "select count(*) as n from slice;", "\"n\"\n0\n");
    expect_tp(p2, "select name from slice;", "\"name\"\n\"after\"\n");
}

/* ---- thread names ------------------------------------------------------------ */

/* Record backend: the second run is the recorder's next session (the program cannot pause the recorder's). */
Test(te_losses, thread_names_are_read_at_the_first_event_of_each_run) {
    const char *path = te_path("names.pftrace"), *path2 = te_record_backend() ? te_path("names2.pftrace") : path;
    static const char main_name[] =
        "select name from thread where tid = (select max(tid) from thread where is_main_thread);";
    pthread_setname_np(pthread_self(), "before start");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
    pthread_setname_np(pthread_self(), "first event");
    TRACEC_INSTANT(m, "one");
    if (te_record_backend()) {
        cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS); /* its trace is written at its end */
        expect_tp(path, main_name, "\"name\"\n\"first event\"\n");
        pthread_setname_np(pthread_self(), "second run");
        s = start(path2, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0);
    } else {
        flush(s);
        expect_tp(path, main_name, "\"name\"\n\"first event\"\n");
        cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
        pthread_setname_np(pthread_self(), "second run");
        cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    }
    TRACEC_INSTANT(m, "two");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    expect_tp(path2, main_name, "\"name\"\n\"second run\"\n");
}

/* ---- fork ---------------------------------------------------------------------- */

Test(te_losses, fork_child_stop_leaves_the_parents_file_alone) {
    TE_LOCAL_ONLY("a fork child stopping the parent's own session");
    const char *path = te_path("fork.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 16u << 10);
    for (int i = 0; i < 3000; i++) TRACEC_INSTANT(m, "parent"); /* deliveries leave bytes in the file's staging */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        for (int i = 0; i < 10; i++) TRACEC_INSTANT(m, "child");
        int ok = tracec_session_stop(s) == TRACEC_STATUS_SUCCESS;
        _exit(ok ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < 1000; i++) TRACEC_INSTANT(m, "parent");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    expect_tp(path, "select name, count(*) as n from slice group by name order by name;",
              "\"name\",\"n\"\n\"parent\",4000\n");
    expect_loss(path, 0);
}

/* ---- abnormal ends ------------------------------------------------------------- */

/*
 * Runs te_flush_helper with its own file session; returns its exit status.
 * `trace` is the trace to check: the helper's own file (local), the
 * recorder's trace of the helper (record: `tracec record -- te_flush_helper`;
 * the helper's own file session runs beside the recorder's).
 */
static int helper_out(const char *trace, const char *rec_opts, const char *how, const char *period, char **out) {
    char cmd[1024], own[600];
    snprintf(own, sizeof own, "%s%s", trace, te_record_backend() ? ".own" : "");
    snprintf(cmd, sizeof cmd, "%s %s %s %s", TE_FLUSH_HELPER, own, how, period ? period : "");
    return te_run_program(trace, rec_opts, cmd, out);
}

static int helper(const char *trace, const char *how, const char *period) {
    char *out;
    int rc = helper_out(trace, NULL, how, period, &out);
    free(out);
    return rc;
}

static long count_named(const char *trace, const char *name) {
    char sql[256];
    snprintf(sql, sizeof sql, "select count(*) from slice where name = '%s';", name);
    return tp_long(trace, sql);
}

/*
 * The program ended without stopping its sessions (_exit, SIGKILL).  Its
 * own file holds what the last periodic flush wrote.  The recorder's trace
 * holds every event the program finished: they were in the shared buffer,
 * which the recorder reads after the program is gone (nothing lost, so no
 * data_loss row).
 */
static void expect_abnormal_end(const char *trace) {
    long early = count_named(trace, "early");
    if (early == -2) return;
    cr_assert_eq(early, 1000, "slices flushed before the end: %ld", early);
    if (!te_record_backend()) return;
    cr_assert_eq(count_named(trace, "late"), 1000, "the recorder saved the slices written after the last flush");
    expect_loss(trace, 0);
}

Test(te_losses, the_file_survives_exit_up_to_the_last_flush) {
    const char *path = te_path("exit_.pftrace");
    cr_assert_eq(helper(path, "exit_", "100"), 0);
    expect_abnormal_end(path);
}

Test(te_losses, the_file_survives_sigkill_up_to_the_last_flush) {
    const char *path = te_path("kill.pftrace");
    cr_assert_eq(helper(path, "kill", "100"), 128 + 9);
    expect_abnormal_end(path);
}

/*
 * Killed in the middle of writing an event, after a burst of slices: the
 * file holds what the last flush wrote, and never the unfinished event.
 * Record backend (a 16 KiB buffer the program does not wait for): the
 * burst lost packets; every packet the program's buffer accepted before it
 * was killed is saved (the recorder's count of delivered packets, also when
 * the program died between a switch of halves and the handoff), every one
 * it counted lost is in the trace's data_loss count, and so is the event it
 * was writing, and the trace is consistent.
 */
Test(te_losses, sigkill_inside_an_event_after_drops) {
    const char *path = te_path("kill_in_event.pftrace");
    char *out;
    cr_assert_eq(helper_out(path, "--mode streaming --buffer-size 16384 --wait 0", "kill_in_event", "100", &out),
                 128 + 9, "%s", out);
    long dropped = -1, produced = -1, rec_produced = -1, rec_delivered = -1, rec_dropped = -1;
    const char *d = strstr(out, "recorder_dropped "), *r = strstr(out, "): produced ");
    if (d != NULL) (void)sscanf(d, "recorder_dropped %ld produced %ld", &dropped, &produced);
    if (r != NULL)
        (void)sscanf(r, "): produced %ld, delivered %ld, dropped %ld", &rec_produced, &rec_delivered, &rec_dropped);
    char *said = strdup(out ? out : "");
    free(out);
    long early = count_named(path, "early"), killed = count_named(path, "killed");
    if (early == -2 || !te_record_backend()) free(said);
    if (early == -2) return;
    cr_assert_eq(killed, 0, "the event the program was writing");
    if (!te_record_backend()) {
        cr_assert_eq(early, 1000, "slices flushed before SIGKILL: %ld", early);
        return;
    }
    cr_assert_gt(dropped, 0, "a 16 KiB buffer loses some of 50,000 slices\n%s", said);
    cr_assert_geq(rec_delivered, produced - dropped, "the program's buffer accepted %ld packets, the recorder saved %ld\n%s",
                  produced - dropped, rec_delivered, said);
    cr_assert_geq(rec_produced, produced, "%s", said);
    free(said);
    long lost = stat_value(path, "traced_buf_trace_writer_packet_loss");
    /* the program's losses, and the event it was writing when it was killed (its packet dropped at its begin,
       or begun in a chunk and never ended; with interned data, a packet more) */
    cr_assert_geq(lost, dropped + 1, "the trace's data_loss count %ld, the program's %ld + the killed event", lost,
                  dropped);
    cr_assert_eq(lost, rec_dropped, "the trace's data_loss count %ld, the recorder's summary %ld", lost, rec_dropped);
    cr_assert_eq(tp_long(path, "select count(*) from stats where value > 0 and severity = 'error';"), 0);
    cr_assert_eq(te_check(path, "--allow-open", &out), 0, "%s", out);
    free(out);
}

Test(te_losses, the_default_period_flushes_a_file_session) {
    TE_LOCAL_ONLY("the flush period of the program's own file session (the recorder's session has none)");
    const char *path = te_path("default.pftrace");
    cr_assert_eq(helper(path, "exit_", NULL), 0); /* the helper waits 1.3 s, then _exit */
    long early = count_named(path, "early");
    if (early != -2) cr_assert_eq(early, 1000, "slices flushed by the default period before _exit: %ld", early);
}

Test(te_losses, sigterm_stops_the_session_cleanly) {
    const char *path = te_path("sigterm.pftrace");
    cr_assert_eq(helper(path, "sigterm", "never"), 128 + 15, "the default action still ends the program");
    long early = count_named(path, "early"), late = count_named(path, "late");
    if (early == -2) return;
    cr_assert_eq(early, 1000);
    cr_assert_eq(late, 1000, "the stop delivered everything: %ld", late);
    expect_loss(path, 0);
}

/* te_flush_helper `how` raised SIGINT and went on (exit status 3): its trace holds every slice. */
static void expect_sigint_went_on(const char *name, const char *how, const char *why) {
    const char *path = te_path(name);
    cr_assert_eq(helper(path, how, "never"), 3, "%s", why);
    long late = count_named(path, "late"), after = count_named(path, "after handler");
    if (late == -2) return;
    cr_assert_eq(late, 1000);
    cr_assert_eq(after, 10);
}

/* SIGINT ignored before the session started stays ignored: the session installs no handler for it (the programs
   it execs inherit SIG_IGN, not a default), and a SIGINT changes nothing. */
Test(te_losses, an_ignored_sigint_stays_ignored) {
    expect_sigint_went_on("sigign.pftrace", "sigint_ignored", "SIG_IGN kept, the program went on");
}

Test(te_losses, sigint_with_the_programs_handler_flushes_and_chains) {
    expect_sigint_went_on("sigint.pftrace", "sigint_handler", "the program's handler ran, the program went on");
}

/* ---- max_file_size --------------------------------------------------------------- */

static void discard_bytes(const void *data, size_t size, void *user) { (void)data, (void)size, (void)user; }

/* `flushes` flushes (each writes the session's TraceStats), then 20,000 instants, a flush each 1000. */
static void write_past(tracec_session *s, int flushes) {
    for (int i = 0; i < flushes; i++) cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_SUCCESS);
    for (int i = 0; i < 20000; i++) {
        TRACEC_TE(m, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("i", i));
        if (i % 1000 == 999) cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_SUCCESS);
    }
}

/*
 * A file session with max_file_size `cap`, `flushes` flushes first: the
 * file stops growing there, with the first events whole (no hole) and every
 * later one counted lost in the trace; the flushes after the limit add no
 * statistics but the first, so the stop's still fit.
 */
static void capped_session(const char *name, uint64_t cap, int flushes) {
    const char *path = te_path(name);
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    cfg.path = path;
    cfg.max_file_size = cap;
    cfg.flush_period_ms = TRACEC_SESSION_FLUSH_NEVER;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    write_past(s, flushes);
    uint64_t lost = tracec_session_lost(s);
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_leq((uint64_t)sb.st_size, cap, "the file holds %lld bytes", (long long)sb.st_size);
    cr_assert_geq((uint64_t)sb.st_size, cap - 1024u, "the file stopped %lld bytes short", (long long)(cap - (uint64_t)sb.st_size));
    cr_assert_gt(lost, 10000u, "20,000 ticks of about 30 bytes do not fit: %llu lost", (unsigned long long)lost);
    const char *sqls[] = {"select count(*) from slice where name = 'tick';",
                          "select max(int_value) from args where key = 'debug.i';"};
    char *a[2];
    char *bad = NULL;
    long loss = -1;
    cr_assert(te_tp_losses_and(path, sqls, 2, &bad, &loss, a), "%s: the trace processor's answers", path);
    cr_assert_str_empty(bad, "%s", bad);
    free(bad);
    long ticks = answer_long(a[0]), last = answer_long(a[1]);
    if (ticks > 0) cr_assert_eq(last, ticks - 1, "the first %ld ticks are in the trace, with no hole (last i %ld)", ticks, last);
    cr_assert_eq((uint64_t)loss, lost, "the trace's data_loss count %ld, the session's %llu", loss, (unsigned long long)lost);
    /* every tick not shown is lost, and when none fits, the packets that describe them (the thread's track) */
    cr_assert(ticks + loss >= 20000 && ticks + loss <= 20000 + (ticks == 0 ? 4 : 0), "%ld ticks shown, %ld lost",
              ticks, loss);
}

Test(te_losses, a_file_session_stops_growing_at_max_file_size) {
    TE_LOCAL_ONLY("max_file_size is an option of the program's own file session");
    capped_session("capped.pftrace", 64u * 1024u, 0);
}

/* The TraceStats of flushes do not take the room kept for the stop's: at the smallest size, 200 flushes
   first fill the file with statistics, and the stop's TraceStats still counts every tick refused. */
Test(te_losses, flushes_that_fill_the_file_leave_the_stops_statistics_room) {
    TE_LOCAL_ONLY("max_file_size is an option of the program's own file session");
    capped_session("capped_min.pftrace", TRACEC_SESSION_MIN_FILE_SIZE, 200);
}

Test(te_losses, max_file_size_needs_a_file_and_room) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    cfg.path = te_path("tiny.pftrace");
    cfg.max_file_size = TRACEC_SESSION_MIN_FILE_SIZE - 1u;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_INVALID_ARGUMENT);
    cfg.path = NULL;
    cfg.write = discard_bytes;
    cfg.max_file_size = 1u << 20;
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_INVALID_ARGUMENT, "a callback has no file to limit");
}
