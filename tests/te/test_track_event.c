/*
 * test_track_event.c - tracec/track_event.h end to end: sessions write
 * .pftrace files that Perfetto's trace processor loads without errors and
 * shows exactly as written (slices, args, counters, tracks, interned
 * names, typed extension fields), and that check_trace.py (python3-protobuf)
 * finds consistent (iids defined before use per sequence, descriptors for
 * every track, sequence flags, nesting).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "my_events.tracec.h"
#include "te_util.h"
#include "tracec/track_event.h"

#define TEST_CATEGORIES(C) C(a, "cat_a") C(off, "cat_off")
TRACEC_TE_DECLARE_CATEGORIES(TEST_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(TEST_CATEGORIES)
/* a second list defined in the same file (the tests that write cat_b show that it registers too) */
#define TEST_MORE_CATEGORIES(C) C(b, "cat_b")
TRACEC_TE_DECLARE_CATEGORIES(TEST_MORE_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(TEST_MORE_CATEGORIES)

static tracec_session *start(const char *path, tracec_buffering_mode_t mode, size_t size) {
    static const char *const cats[] = {"cat_a", "cat_b"};
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    cfg.path = path;
    cfg.mode = mode;
    cfg.buffer_size = size;
    cfg.categories = cats;
    cfg.num_categories = 2;
    cfg.process_name = "te_test";
    pthread_setname_np(pthread_self(), "te_main");
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's */
    return s;
}

/* check_trace.py finds no problem; returns its summary (malloc'd). */
static char *check_ok(const char *trace, const char *flags) {
    char *out;
    int rc = te_check(trace, flags, &out);
    cr_assert_eq(rc, 0, "check_trace.py on %s:\n%s", trace, out ? out : "");
    return out;
}

static void expect_summary(const char *summary, const char *key, const char *want) {
    char *v = te_summary(summary, key);
    cr_assert(v != NULL && strcmp(v, want) == 0, "%s: got '%s', want '%s'\n%s", key, v ? v : "(none)", want,
              summary);
    free(v);
}

/*
 * check_trace.py finds no problem, the trace's event names are exactly
 * `names`, and the summary's `key` (unless NULL) is `value`.
 */
static void check_names(const char *trace, const char *flags, const char *names, const char *key,
                        const char *value) {
    char *sum = check_ok(trace, flags);
    expect_summary(sum, "names", names);
    if (key != NULL) expect_summary(sum, key, value);
    free(sum);
}

static void expect_tp(const char *trace, const char *sql, const char *want) {
    char *out;
    if (!te_tp(trace, sql, &out)) return;
    cr_assert(out != NULL && strcmp(out, want) == 0, "trace processor, %s\n--- got\n%s--- want\n%s", sql,
              out ? out : "", want);
    free(out);
}

/* No error or data-loss stat but the session's own count of lost packets, which is `lost`. */
static void expect_lossy_stats(const char *trace, long lost) {
    char *bad = NULL;
    long got = -1;
    cr_assert(te_tp_losses_and(trace, NULL, 0, &bad, &got, NULL), "%s: the trace processor's answers", trace);
    cr_assert_str_eq(bad, "", "error / data_loss stats:\n%s", bad);
    free(bad);
    cr_assert_eq(got, lost, "traced_buf_trace_writer_packet_loss %ld, want %ld", got, lost);
}

static void expect_clean_stats(const char *trace) {
    expect_lossy_stats(trace, 0);
}

static void write_basic_events(void) {
    char dyn[16];
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("outer"), TRACEC_TE_TIMESTAMP(1000), TRACEC_TE_ARG_INT("i", -5),
              TRACEC_TE_ARG_UINT("u", 7), TRACEC_TE_ARG_DOUBLE("d", 1.5), TRACEC_TE_ARG_BOOL("flag", 1),
              TRACEC_TE_ARG_STRING("s", "str"), TRACEC_TE_ARG_POINTER("p", 0x1234));
    TRACEC_TE(a, TRACEC_TE_INSTANT("inner"), TRACEC_TE_TIMESTAMP(1500), TRACEC_TE_FLOW(9),
              TRACEC_TE_ARG_INT("i", 6));
    TRACEC_TE(b, TRACEC_TE_SLICE_BEGIN("flow end"), TRACEC_TE_TIMESTAMP(1600), TRACEC_TE_TERMINATING_FLOW(9));
    TRACEC_TE(b, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(1700));
    TRACEC_TE(a, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(2000));
    TRACEC_TE(a, TRACEC_TE_COUNTER_INT("queue", 3), TRACEC_TE_TIMESTAMP(1100));
    TRACEC_TE(a, TRACEC_TE_COUNTER_INT("queue", 4), TRACEC_TE_TIMESTAMP(1200));
    TRACEC_TE(a, TRACEC_TE_COUNTER_DOUBLE("ratio", 0.25), TRACEC_TE_TIMESTAMP(1200));
    cr_assert_eq(tracec_te_define_track(77, "gpu queue", 0), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_te_define_track(78, "mem", 1), TRACEC_STATUS_SUCCESS);
    TRACEC_TE(a, TRACEC_TE_INSTANT("on custom"), TRACEC_TE_TRACK(77), TRACEC_TE_TIMESTAMP(1300));
    TRACEC_TE(a, TRACEC_TE_COUNTER_INT("mem", 512), TRACEC_TE_TRACK(78), TRACEC_TE_TIMESTAMP(1400));
    snprintf(dyn, sizeof dyn, "dyn %d", 1);
    TRACEC_TE(a, TRACEC_TE_INSTANT("unused"), TRACEC_TE_DYNAMIC_NAME(dyn), TRACEC_TE_TIMESTAMP(1800));
    TRACEC_INSTANT(off, "disabled");
}

/*
 * A NULL STRING or JSON value leaves its annotation out (not the text
 * "(null)", nor a JSON `null`, which makes the trace processor abort); the
 * rest of the event is written.
 */
Test(track_event, a_null_string_argument_is_a_key_without_a_value) {
    const char *path = te_path("null_string.pftrace");
    const char *none = NULL;
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_TE(a, TRACEC_TE_INSTANT("strings"), TRACEC_TE_ARG_STRING("none", none), TRACEC_TE_ARG_STRING("empty", ""), TRACEC_TE_ARG_JSON("j", none),
              TRACEC_TE_ARG_DICT("d"), TRACEC_TE_ARG_STRING("inner", none), TRACEC_TE_ARG_END(),
              TRACEC_TE_ARG_INT("after", 1));
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = check_ok(path, NULL);
    free(sum);
    expect_clean_stats(path);
    expect_tp(path,
              "select key, value_type, string_value from args join slice using(arg_set_id) "
              "where slice.name = 'strings' and key like 'debug.%' order by key;",
              "\"key\",\"value_type\",\"string_value\"\n"
              "\"debug.after\",\"int\",\"[NULL]\"\n"
              "\"debug.empty\",\"string\",\"\"\n");
}

Test(track_event, basic_events_as_the_trace_processor_sees_them) {
    const char *path = te_path("basic.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    write_basic_events();
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    char *sum = check_ok(path, NULL);
    expect_summary(sum, "names", "dyn 1|flow end|inner|on custom|outer");
    expect_summary(sum, "categories", "cat_a|cat_b");
    expect_summary(sum, "events:TYPE_COUNTER", "4");
    /* the recorder's session packets are written by its client's thread, on a sequence of their own */
    expect_summary(sum, "sequences", te_record_backend() ? "2" : "1");
    free(sum);

    expect_clean_stats(path);
    expect_tp(path, "select ts, dur, name, category, depth from slice order by ts;",
              "\"ts\",\"dur\",\"name\",\"category\",\"depth\"\n"
              "1000,1000,\"outer\",\"cat_a\",0\n"
              "1300,0,\"on custom\",\"cat_a\",0\n"
              "1500,0,\"inner\",\"cat_a\",1\n"
              "1600,100,\"flow end\",\"cat_b\",1\n"
              "1800,0,\"dyn 1\",\"cat_a\",1\n");
    expect_tp(path,
              "select key, int_value, string_value, real_value from args join slice using(arg_set_id) "
              "where slice.name = 'outer' and key like 'debug.%' order by key;",
              "\"key\",\"int_value\",\"string_value\",\"real_value\"\n"
              "\"debug.d\",\"[NULL]\",\"[NULL]\",1.500000\n"
              "\"debug.flag\",1,\"[NULL]\",\"[NULL]\"\n"
              "\"debug.i\",-5,\"[NULL]\",\"[NULL]\"\n"
              "\"debug.p\",4660,\"[NULL]\",\"[NULL]\"\n"
              "\"debug.s\",\"[NULL]\",\"str\",\"[NULL]\"\n"
              "\"debug.u\",7,\"[NULL]\",\"[NULL]\"\n");
    expect_tp(path,
              "select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id "
              "order by t.name, c.ts;",
              "\"name\",\"ts\",\"value\"\n"
              "\"mem\",1400,512.000000\n"
              "\"queue\",1100,3.000000\n"
              "\"queue\",1200,4.000000\n"
              "\"ratio\",1200,0.250000\n");
    expect_tp(path,
              "select so.name as src, si.name as dst from flow f join slice so on f.slice_out = so.id "
              "join slice si on f.slice_in = si.id;",
              "\"src\",\"dst\"\n\"inner\",\"flow end\"\n");
    expect_tp(path,
              "select t.name as thread, p.name as process, p.pid = t.tid as main from thread_track tt "
              "join thread t using(utid) join process p using(upid);",
              "\"thread\",\"process\",\"main\"\n\"te_main\",\"te_test\",1\n");
}

Test(track_event, typed_extension_event) {
    const char *path = te_path("typed.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    int ran = 0;
    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, "typed") {
        my_app_MyEvent_set_cstr_custom_string(&ev, "hello");
        my_app_MyEvent_set_custom_counter(&ev, -42);
        my_app_MyEvent_set_mood(&ev, my_app_MOOD_BUSY);
        ran++;
    }
    TRACEC_SLICE_BEGIN_AS(b, my_app_MyEvent, ev, "typed slice") { my_app_MyEvent_set_custom_counter(&ev, 7); }
    TRACEC_SLICE_END(b);
    TRACEC_EVENT_AS(off, my_app_MyEvent, ev, "disabled") { ran += 100; }
    cr_assert_eq(ran, 1);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    check_names(path, NULL, "typed|typed slice", "ext:custom_string", "hello");
    expect_clean_stats(path);
    expect_tp(path,
              "select s.name, s.category, a.key, a.int_value, a.string_value from slice s "
              "join args a using(arg_set_id) where a.key not like 'event.%' and a.key not like 'legacy%' "
              "order by s.name, a.key;",
              "\"name\",\"category\",\"key\",\"int_value\",\"string_value\"\n"
              "\"typed\",\"cat_a\",\"custom_counter\",-42,\"[NULL]\"\n"
              "\"typed\",\"cat_a\",\"custom_string\",\"[NULL]\",\"hello\"\n"
              "\"typed\",\"cat_a\",\"mood\",\"[NULL]\",\"MOOD_BUSY\"\n"
              "\"typed slice\",\"cat_b\",\"custom_counter\",7,\"[NULL]\"\n");
}

/*
 * A typed END carries the fields known only at the end; the trace processor
 * merges them into the slice's args, beside the BEGIN's.  An END whose BEGIN
 * is not in the trace is not written and its block does not run.
 */
Test(track_event, typed_slice_end_carries_fields_into_the_slice) {
    const char *path = te_path("typed_end.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    int ran = 0;
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("request"), TRACEC_TE_ARG_STRING("url", "/index"));
    TRACEC_SLICE_BEGIN_AS(a, my_app_MyEvent, ev, "parse") { my_app_MyEvent_set_cstr_custom_string(&ev, "json"); }
    TRACEC_SLICE_END_AS(a, my_app_MyEvent, ev) {
        my_app_MyEvent_set_custom_counter(&ev, 512); /* a size known at the end */
        ran++;
    }
    TRACEC_SLICE_END_AS(a, my_app_MyEvent, ev) {
        my_app_MyEvent_set_mood(&ev, my_app_MOOD_CALM); /* a status */
        my_app_MyEvent_set_custom_counter(&ev, 404);
        ran++;
    }
    uint64_t before = tracec_te_thread_misuse();
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("lost"), TRACEC_TE_ARG_END()); /* misuse: dropped, so is its END */
    cr_assert_eq(tracec_te_thread_misuse(), before + 1u);
    TRACEC_INSTANT(a, "holder"); /* inside "lost", which is not in the trace: not written either, counted */
    TRACEC_SLICE_END_AS(a, my_app_MyEvent, ev) { ran += 100; }
    TRACEC_SLICE_END_AS(off, my_app_MyEvent, ev) { ran += 100; }
    cr_assert_eq(ran, 2);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = check_ok(path, NULL);
    expect_summary(sum, "events:TYPE_SLICE_END", "2");
    free(sum);
    expect_lossy_stats(path, 2);
    expect_tp(path, "select name, depth, dur > 0 as ended from slice order by ts;",
              "\"name\",\"depth\",\"ended\"\n\"request\",0,1\n\"parse\",1,1\n");
    expect_tp(path,
              "select s.name, a.key, a.int_value, a.string_value from slice s join args a using(arg_set_id) "
              "where s.name in ('request', 'parse') and a.key not like 'event.%' and a.key not like 'legacy%' "
              "order by s.name, a.key;",
              "\"name\",\"key\",\"int_value\",\"string_value\"\n"
              "\"parse\",\"custom_counter\",512,\"[NULL]\"\n"
              "\"parse\",\"custom_string\",\"[NULL]\",\"json\"\n"
              "\"request\",\"custom_counter\",404,\"[NULL]\"\n"
              "\"request\",\"debug.url\",\"[NULL]\",\"/index\"\n"
              "\"request\",\"mood\",\"[NULL]\",\"MOOD_CALM\"\n");
}

/*
 * Names known at run time: one buffer holding four names in turn, through
 * every _DYN form.  Each distinct name is interned once per sequence (by
 * content, not by the buffer's address), repeated ones cost an iid; a name
 * longer than 256 bytes is written inline; a NULL name drops the event
 * (misuse, counted).
 */
Test(track_event, dynamic_names_are_interned_by_content) {
    const char *path = te_path("dynamic.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    char buf[32], long_name[300];
    const char *null_name = NULL;
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof buf, "req %d", i % 4);
        TRACEC_INSTANT_DYN(a, buf);
    }
    snprintf(buf, sizeof buf, "req %d", 1);
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN_DYN(buf), TRACEC_TE_ARG_INT("i", 1));
    snprintf(buf, sizeof buf, "req %d", 2);
    TRACEC_EVENT_AS_DYN(a, my_app_MyEvent, ev, buf) { my_app_MyEvent_set_custom_counter(&ev, 2); }
    TRACEC_SLICE_END(a);
    snprintf(buf, sizeof buf, "typed %d", 5);
    TRACEC_SLICE_BEGIN_AS_DYN(b, my_app_MyEvent, ev, buf) { my_app_MyEvent_set_custom_counter(&ev, 5); }
    TRACEC_SLICE_END_AS(b, my_app_MyEvent, ev) { my_app_MyEvent_set_mood(&ev, my_app_MOOD_BUSY); }
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    TRACEC_INSTANT_DYN(a, long_name);
    TRACEC_INSTANT_DYN(a, long_name);
    uint64_t before = tracec_te_thread_misuse();
    TRACEC_INSTANT_DYN(a, null_name);
    TRACEC_SLICE_BEGIN_AS_DYN(a, my_app_MyEvent, ev, null_name) { my_app_MyEvent_set_custom_counter(&ev, 9); }
    TRACEC_SLICE_END(a); /* its BEGIN was dropped: not written */
    cr_assert_eq(tracec_te_thread_misuse(), before + 2u);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    char *sum = check_ok(path, NULL);
    char want[400];
    snprintf(want, sizeof want, "req 0|req 1|req 2|req 3|typed 5|%s", long_name);
    expect_summary(sum, "names", want);
    /* req 0..3 and typed 5 once each; the long name twice inline (over an empty name, interned once) */
    expect_summary(sum, "interned_event_names", "6");
    expect_summary(sum, "inline_names", "2");
    free(sum);
    expect_lossy_stats(path, 2);
    char rows[600];
    snprintf(rows, sizeof rows,
             "\"name\",\"n\",\"depth\"\n"
             "\"req 0\",25,0\n\"req 1\",26,0\n\"req 2\",26,1\n\"req 3\",25,0\n\"typed 5\",1,0\n\"%s\",2,0\n",
             long_name);
    expect_tp(path, "select name, count(*) as n, max(depth) as depth from slice group by name order by name;", rows);
    expect_tp(path,
              "select s.name, a.int_value from slice s join args a using(arg_set_id) "
              "where a.key = 'custom_counter' order by s.ts;",
              "\"name\",\"int_value\"\n\"req 2\",2\n\"typed 5\",5\n");
}

/* Four call sites, so four names to intern and keep alive across wraps. */
static void write_many(int n) {
    for (int i = 0; i < n; i++) {
        switch (i & 3) {
        case 0: TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("w0"), TRACEC_TE_ARG_INT("i", i)); break;
        case 1: TRACEC_TE(a, TRACEC_TE_INSTANT("w1"), TRACEC_TE_ARG_STRING("s", "some text")); break;
        case 2: TRACEC_COUNTER(b, "c2", i); break;
        default: TRACEC_SLICE_END(a); break;
        }
    }
}

Test(track_event, circular_wraps_keep_every_iid_resolvable) {
    const char *path = te_path("circular.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_CIRCULAR, 4096);
    write_many(20000);
    if (!te_record_backend()) {
        tracec_buffer_stats_t bs;
        cr_assert_eq(tracec_query_buffer_stats(tracec_session_buffer(s), &bs), TRACEC_STATUS_SUCCESS);
        cr_assert_gt(bs.overwritten, 1000u, "the buffer wrapped (overwritten %llu)", (unsigned long long)bs.overwritten);
    }
    uint64_t lost = te_lost_now(s);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, "--allow-open", "w0|w1", NULL, NULL);
    expect_lossy_stats(path, (long)lost);
    expect_tp(path, "select count(*) > 10 as many, min(name = 'w0' or name = 'w1') as named from slice;",
              "\"many\",\"named\"\n1,1\n");
}

Test(track_event, oneshot_keeps_the_first_events_and_drops_the_rest) {
    const char *path = te_path("oneshot.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, 4096);
    write_many(4000);
    uint64_t lost = te_lost_now(s);
    cr_assert_gt(lost, 100u);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, "--allow-open", "w0|w1", NULL, NULL);
    expect_lossy_stats(path, (long)lost);
    char *sum = check_ok(path, "--allow-open"), *d = te_tp_shown_mismatch(path, sum);
    cr_assert(d == NULL, "%s", d);
    free(sum);
    /* the first slice is the first one written */
    expect_tp(path,
              "select s.name, a.int_value from slice s join args a using(arg_set_id) where a.key = 'debug.i' "
              "order by s.ts limit 1;",
              "\"name\",\"int_value\"\n\"w0\",0\n");
}

Test(track_event, streaming_discard_marks_packets_after_a_drop) {
    const char *path = te_path("discard.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    cfg.path = path;
    cfg.policy = TRACEC_BUFFER_POLICY_DISCARD;
    cfg.buffer_size = 4096;
    te_start(&cfg, &s);
    for (int round = 0; round < 4; round++) {
        write_many(2000); /* fills the buffer: drops */
        if (!te_record_backend())
            cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_SUCCESS);
        else /* the recorder saves the full halves it was told of (no flush from the program's side) */
            usleep(200 * 1000);
    }
    uint64_t lost = te_lost_now(s);
    cr_assert_gt(lost, 0u);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = check_ok(path, "--allow-open");
    char *d = te_summary(sum, "dropped_flags");
    cr_assert(d != NULL && atoi(d) > 0, "previous_packet_dropped after drops:\n%s", sum);
    free(d);
    expect_lossy_stats(path, (long)lost);
    d = te_tp_shown_mismatch(path, sum); /* every event after a drop is shown */
    cr_assert(d == NULL, "%s", d);
    free(sum);
}

Test(track_event, clear_entire_starts_new_sequences) {
    TE_LOCAL_ONLY("pause and resume with CLEAR_ENTIRE");
    const char *path = te_path("clear.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_ONESHOT, 65536);
    TRACEC_TE(a, TRACEC_TE_INSTANT("run1"), TRACEC_TE_ARG_INT("k", 1));
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    TRACEC_INSTANT(a, "while paused");
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE), TRACEC_STATUS_SUCCESS);
    TRACEC_TE(a, TRACEC_TE_INSTANT("run2"), TRACEC_TE_ARG_INT("k", 2));
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "run1|run2", "sequences", "2");
    expect_lossy_stats(path, 1); /* the instant of the pause */
    expect_tp(path,
              "select s.name, a.int_value from slice s join args a using(arg_set_id) where a.key = 'debug.k' "
              "order by s.ts;",
              "\"name\",\"int_value\"\n\"run1\",1\n\"run2\",2\n");
    /* the session's at start and at each resume, and each sequence's declaring its incremental clock */
    expect_tp(path, "select count(distinct snapshot_id) as snapshots from clock_snapshot;", "\"snapshots\"\n5\n");
}

Test(track_event, monotonic_clock_and_default_timestamps) {
    const char *path = te_path("mono.pftrace");
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    cfg.path = path;
    cfg.clock_id = 3;
    te_start(&cfg, &s); /* TRACEC_TEST_BACKEND: the program's own session or tracec record's (--clock) */
    for (int i = 0; i < 10; i++) {
        TRACEC_SLICE_BEGIN(a, "m");
        TRACEC_SLICE_END(a);
    }
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = check_ok(path, NULL);
    expect_summary(sum, "clocks", "3");
    free(sum);
    expect_clean_stats(path);
    /* every slice converted to the trace clock and ordered, none negative */
    expect_tp(path, "select count(*) as n, min(dur) >= 0 as ok from slice where name = 'm';",
              "\"n\",\"ok\"\n10,1\n");
}

Test(track_event, category_filtering_is_exact) {
    const char *path = te_path("cats.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0); /* cat_a and cat_b */
    int evaluated = 0;
    cr_assert(!TRACEC_TE_ENABLED(off));
    cr_assert(TRACEC_TE_ENABLED(a));
    TRACEC_TE(off, TRACEC_TE_INSTANT("off"), TRACEC_TE_ARG_INT("n", ++evaluated));
    TRACEC_TE(a, TRACEC_TE_INSTANT("on a"));
    TRACEC_TE(b, TRACEC_TE_INSTANT("on b"));
    cr_assert_eq(evaluated, 0, "arguments of a disabled event are not evaluated");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert(!TRACEC_TE_ENABLED(a), "disabled once the session stopped");
    TRACEC_INSTANT(a, "after stop");
    check_names(path, NULL, "on a|on b", "categories", "cat_a|cat_b");
}

Test(track_event, misuse_has_a_documented_outcome) {
    const char *path = te_path("misuse.pftrace");
    tracec_session *s2;
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    TRACEC_INSTANT(a, "no session yet"); /* disabled: nothing happens */
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    {
        tracec_session *more[TRACEC_TE_MAX_SESSIONS - 1];
        static const char *const none[] = {"none"};
        char name[32];
        cfg.categories = none;
        cfg.num_categories = 1;
        for (int i = 0; i < TRACEC_TE_MAX_SESSIONS - 1; i++) {
            snprintf(name, sizeof name, "more%d.pftrace", i); /* a file each: one writer per file */
            cfg.path = te_path(name);
            cr_assert_eq(tracec_session_start(&cfg, &more[i]), TRACEC_STATUS_SUCCESS, "up to %d sessions at a time",
                         TRACEC_TE_MAX_SESSIONS);
        }
        cr_assert_eq(tracec_session_start(&cfg, &s2), TRACEC_STATUS_LIMIT_EXCEEDED, "at most %d sessions at a time",
                     TRACEC_TE_MAX_SESSIONS);
        for (int i = 0; i < TRACEC_TE_MAX_SESSIONS - 1; i++)
            cr_assert_eq(tracec_session_stop(more[i]), TRACEC_STATUS_SUCCESS);
        cfg.path = path; /* the first session's own file */
        errno = 0;
        cr_assert_eq(tracec_session_start(&cfg, &s2), TRACEC_STATUS_IO_ERROR, "a file another session writes");
        cr_assert_eq(errno, EBUSY);
        cfg.path = te_path("second.pftrace");
        cfg.categories = NULL;
        cfg.num_categories = 0;
    }
    uint64_t before = tracec_te_thread_misuse();
    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, "outer typed") {
        TRACEC_INSTANT(a, "nested"); /* an event while one is open on this thread: dropped, counted */
        my_app_MyEvent_set_custom_counter(&ev, 1);
    }
    cr_assert_eq(tracec_te_thread_misuse(), before + 1u);
    TRACEC_INSTANT(a, "after");
    cr_assert_eq(tracec_te_define_track(0, "bad", 0), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_te_define_track(91, NULL, 0), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_te_define_track(tracec_te_process_track_uuid(), "bad", 0), TRACEC_STATUS_INVALID_ARGUMENT,
                 "the process track's uuid");
    cr_assert_eq(tracec_te_define_track(91, "queue", 0), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_te_define_track(91, "queue", 0), TRACEC_STATUS_SUCCESS, "the same track again: no-op");
    cr_assert_eq(tracec_te_define_track(91, "other", 0), TRACEC_STATUS_INVALID_ARGUMENT, "its uuid, another name");
    cr_assert_eq(tracec_te_define_track(91, "queue", 1), TRACEC_STATUS_INVALID_ARGUMENT, "its uuid, another kind");
    TRACEC_TE(a, TRACEC_TE_INSTANT("on queue"), TRACEC_TE_TRACK(91));
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_stop(NULL), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_session_flush(s), TRACEC_STATUS_BAD_STATE);
    cfg.path = NULL;
    cr_assert_eq(tracec_session_start(&cfg, &s2), TRACEC_STATUS_INVALID_ARGUMENT, "no path and no callback");
    cfg.path = "/nonexistent-dir/x.pftrace";
    cr_assert_eq(tracec_session_start(&cfg, &s2), TRACEC_STATUS_IO_ERROR);
    check_names(path, NULL, "after|on queue|outer typed", NULL, NULL);
    char *answer = NULL;
    cr_assert(te_tp(path, "select count(*) from track where name = 'queue';", &answer));
    cr_assert_eq(te_tp_first_long(answer), 1, "one track 'queue', as first declared:\n%s", answer);
    free(answer);
}

/* Runs `stop` on `s` with stderr going to a file; what it wrote there, malloc'd. */
static char *stderr_of_stop(tracec_session *s) {
    const char *path = te_path("stop_stderr.txt");
    int saved = dup(2), fd;
    FILE *f = fopen(path, "w+");
    cr_assert(saved >= 0 && f != NULL);
    fflush(stderr);
    cr_assert_eq(dup2(fileno(f), 2), 2);
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    fflush(stderr);
    cr_assert_eq(dup2(saved, 2), 2);
    close(saved);
    char *text = calloc(1, 4096);
    cr_assert_not_null(text);
    rewind(f);
    fd = (int)fread(text, 1, 4095, f);
    (void)fd;
    fclose(f);
    return text;
}

/*
 * A session category that no registered category has enables nothing; it
 * is most likely misspelt, so the stop names it on stderr, with the
 * registered ones.  A category that a library registers while the session
 * runs is not named (it enabled its events from then on).
 */
Test(track_event, a_session_category_no_category_has_is_named_at_the_stop) {
    static tracec_te_category late = {TRACEC_CATEGORY_INIT("cat_late"), NULL};
    static tracec_te_category *const late_list[] = {&late, NULL};
    static const char *const cats[] = {"cat_a", "cat_aa", "cat_late", "cat_aa"};
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    cfg.path = te_path("unmatched.pftrace");
    cfg.categories = cats;
    cfg.num_categories = sizeof cats / sizeof cats[0];
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    tracec_te_register_categories(late_list); /* a library loaded now */
    cr_assert(tracec_category_is_enabled(&late.c), "the late category is on from its registration");
    char *err = stderr_of_stop(s);
    cr_assert(strstr(err, "tracec: the session category 'cat_aa' names no registered category, so it enabled "
                          "nothing (registered: ") != NULL,
              "got:\n%s", err);
    cr_assert(strstr(err, "cat_off") != NULL && strstr(err, "cat_b") != NULL, "the registered ones:\n%s", err);
    cr_assert_null(strstr(strstr(err, "cat_aa") + 1, "'cat_aa'"), "once:\n%s", err);
    cr_assert_null(strstr(err, "'cat_late'"), "registered while the session ran:\n%s", err);
    cr_assert_null(strstr(err, "'cat_a'"), "%s", err);
    free(err);
    cfg.num_categories = 1; /* only registered ones: nothing said */
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
    err = stderr_of_stop(s);
    cr_assert_str_eq(err, "");
    free(err);
    cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS); /* a resume's added categories too */
    {
        static const char *const more[] = {"cat_zz"};
        tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
        o.additional_categories = more;
        o.num_additional_categories = 1;
        cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
        cr_assert_eq(tracec_session_resume_with_options(s, &o), TRACEC_STATUS_SUCCESS);
    }
    err = stderr_of_stop(s);
    cr_assert(strstr(err, "'cat_zz' names no registered category") != NULL, "got:\n%s", err);
    free(err);
}

typedef struct collected {
    unsigned char *data;
    size_t size;
} collected;

static void collect(const void *data, size_t size, void *user) {
    collected *c = (collected *)user;
    c->data = realloc(c->data, c->size + size);
    memcpy(c->data + c->size, data, size);
    c->size += size;
}

Test(track_event, callback_sessions_and_sessions_in_sequence) {
    TE_LOCAL_ONLY("write callbacks");
    collected c = {NULL, 0};
    for (int run = 0; run < 2; run++) {
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        tracec_session *s;
        cfg.write = collect;
        cfg.write_data = &c;
        cr_assert_eq(tracec_session_start(&cfg, &s), TRACEC_STATUS_SUCCESS);
        TRACEC_TE(a, TRACEC_TE_INSTANT("cb"), TRACEC_TE_ARG_INT("run", run));
        cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    }
    const char *path = te_save("callback.pftrace", c.data, c.size);
    free(c.data);
    char *sum = check_ok(path, NULL);
    expect_summary(sum, "sequences", "2"); /* one per session */
    free(sum);
    expect_clean_stats(path);
    expect_tp(path,
              "select a.int_value from slice s join args a using(arg_set_id) where a.key = 'debug.run' "
              "order by s.ts;",
              "\"int_value\"\n0\n1\n");
}

/* A program that returns from main with its sessions running: at exit its own file session is stopped and
   written, and (record backend: run under `tracec record`) the recorder's session gets every event too. */
Test(track_event, session_is_written_at_exit) {
    const char *path = te_path("exit.pftrace"), *own = te_record_backend() ? te_path("exit_own.pftrace") : path;
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "%s %s", TE_EXIT_HELPER, own);
    cr_assert_eq(te_run_program(path, NULL, cmd, &out), 0, "%s", out);
    free(out);
    const char *traces[2] = {path, own};
    for (int i = 0; i < (own != path ? 2 : 1); i++) {
        char *sum = check_ok(traces[i], NULL);
        expect_summary(sum, "events:TYPE_SLICE_BEGIN", "100");
        free(sum);
        expect_clean_stats(traces[i]);
    }
}

Test(track_event, typed_block_left_with_break_neither_hangs_nor_corrupts, .timeout = 20) {
    const char *path = te_path("abandoned.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_INSTANT(a, "before");
    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, "abandoned") {
        my_app_MyEvent_set_custom_counter(&ev, 1);
        break; /* misuse: the packet stays open */
    }
    uint64_t before = tracec_te_thread_misuse();
    TRACEC_INSTANT(a, "dropped");
    cr_assert_eq(tracec_te_thread_misuse(), before + 1u);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "before", NULL, NULL);
    expect_lossy_stats(path, 2); /* the abandoned packet (refused) and the dropped event */
}

Test(track_event, additional_categories_for_one_run) {
    TE_LOCAL_ONLY("pause and resume with additional categories");
    const char *path = te_path("extra.pftrace");
    static const char *const extra[] = {"cat_off"};
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_INSTANT(off, "off in run 1");
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    o.additional_categories = extra;
    o.num_additional_categories = 1;
    cr_assert_eq(tracec_session_resume_with_options(s, &o), TRACEC_STATUS_SUCCESS);
    cr_assert(TRACEC_TE_ENABLED(off));
    TRACEC_INSTANT(off, "on in run 2");
    cr_assert_eq(tracec_session_pause(s), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_session_resume(s, TRACEC_BUFFER_DISPOSITION_RETAIN), TRACEC_STATUS_SUCCESS);
    TRACEC_INSTANT(off, "off in run 3");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "on in run 2", "categories", "cat_off");
}

Test(track_event, nested_debug_annotations) {
    const char *path = te_path("nested.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_TE(a, TRACEC_TE_INSTANT("nested"), TRACEC_TE_TIMESTAMP(100), TRACEC_TE_ARG_DICT("req"),
              TRACEC_TE_ARG_STRING("url", "/x"), TRACEC_TE_ARG_INT("code", 200), TRACEC_TE_ARG_ARRAY("tries"),
              TRACEC_TE_ARG_INT("", 10), TRACEC_TE_ARG_INT("", 20), TRACEC_TE_ARG_END(), TRACEC_TE_ARG_END(),
              TRACEC_TE_ARG_BOOL("top", 0));
    uint64_t before = tracec_te_thread_misuse();
    TRACEC_TE(a, TRACEC_TE_INSTANT("unbalanced"), TRACEC_TE_ARG_END()); /* END without DICT: dropped */
    cr_assert_eq(tracec_te_thread_misuse(), before + 1u);
    TRACEC_TE(a, TRACEC_TE_INSTANT("left open"), TRACEC_TE_TIMESTAMP(200), TRACEC_TE_ARG_ARRAY("a"),
              TRACEC_TE_ARG_INT("", 1)); /* closed for the caller */
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "left open|nested", NULL, NULL);
    expect_lossy_stats(path, 1); /* the unbalanced event */
    expect_tp(path,
              "select s.name, a.key, a.int_value, a.string_value from slice s join args a using(arg_set_id) "
              "where a.key like 'debug.%' order by s.ts, a.key;",
              "\"name\",\"key\",\"int_value\",\"string_value\"\n"
              "\"nested\",\"debug.req.code\",200,\"[NULL]\"\n"
              "\"nested\",\"debug.req.tries[0]\",10,\"[NULL]\"\n"
              "\"nested\",\"debug.req.tries[1]\",20,\"[NULL]\"\n"
              "\"nested\",\"debug.req.url\",\"[NULL]\",\"/x\"\n"
              "\"nested\",\"debug.top\",0,\"[NULL]\"\n"
              "\"left open\",\"debug.a[0]\",1,\"[NULL]\"\n");
}

Test(track_event, fork_child_does_not_write_the_parents_trace) {
    const char *path = te_path("fork.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    for (int i = 0; i < 10; i++) TRACEC_INSTANT(a, "parent before");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        for (int i = 0; i < 10; i++) TRACEC_INSTANT(a, "child");
        exit(0); /* atexit handlers run in the child */
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < 10; i++) TRACEC_INSTANT(a, "parent after");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "parent after|parent before", "events:TYPE_INSTANT", "20");
    expect_clean_stats(path);
}

/* A fork child stops its copy of the parent's session and traces into a session of its own (its exit: 0 under
   LeakSanitizer too, so the copy of the parent's file is freed); the parent's trace keeps its own events only. */
Test(track_event, a_fork_child_traces_into_a_session_of_its_own) {
    TE_LOCAL_ONLY("a fork child stopping the parent's session");
    const char *path = te_path("fork_parent.pftrace"), *child_path = te_path("fork_child.pftrace");
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_INSTANT(a, "parent before");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        tracec_session *cs;
        if (tracec_session_stop(s) != TRACEC_STATUS_SUCCESS) _exit(2);
        cs = start(child_path, TRACEC_BUFFERING_MODE_STREAMING, 0);
        for (int i = 0; i < 10; i++) TRACEC_INSTANT(a, "child");
        if (tracec_session_stop(cs) != TRACEC_STATUS_SUCCESS) _exit(3);
        exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's status: %d", st);
    TRACEC_INSTANT(a, "parent after");
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);
    check_names(path, NULL, "parent after|parent before", "events:TYPE_INSTANT", "2");
    check_names(child_path, NULL, "child", "events:TYPE_INSTANT", "10");
    expect_clean_stats(child_path);
}

/* Two more independent decoders: protoc --decode and `tracec decode` read the trace whole. */
Test(track_event, protoc_and_tracec_decode_the_trace) {
    const char *path = te_path("decoders.pftrace");
    char cmd[2048], *out;
    tracec_session *s = start(path, TRACEC_BUFFERING_MODE_STREAMING, 0);
    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN("decoded"), TRACEC_TE_ARG_INT("k", 5));
    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, "typed") { my_app_MyEvent_set_cstr_custom_string(&ev, "via tracec"); }
    TRACEC_SLICE_END(a);
    cr_assert_eq(te_stop(s), TRACEC_STATUS_SUCCESS);

    snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I %s/protos -I %s/examples "
             "perfetto/trace/trace.proto my_events.proto < %s 2>&1", TRACEC_PROTOC, TRACEC_SOURCE_DIR,
             TRACEC_SOURCE_DIR, path);
    cr_assert_eq(te_run(cmd, &out), 0, "protoc --decode:\n%s", out);
    cr_assert(strstr(out, "name: \"decoded\"") != NULL, "interned name in protoc's output:\n%s", out);
    cr_assert(strstr(out, "sequence_flags: 1") != NULL && strstr(out, "sequence_flags: 2") != NULL, "%s", out);
    cr_assert(strstr(out, "[my_app.MyEvent.custom_string]: \"via tracec\"") != NULL, "%s", out);
    free(out);
#ifdef TE_TRACEC_CLI
    /* tracec knows the schema built in and my_events.proto from the trace's own ExtensionDescriptor */
    snprintf(cmd, sizeof cmd, "%s decode %s 2>&1", TE_TRACEC_CLI, path);
    cr_assert_eq(te_run(cmd, &out), 0, "tracec decode:\n%s", out);
    cr_assert(strstr(out, "[my_app.MyEvent.custom_string]: \"via tracec\"") != NULL, "%s", out);
    cr_assert(strstr(out, "first_packet_on_sequence: true") != NULL, "%s", out);
    free(out);
#endif
}

/*
 * A thread's track whatever its tid: a child in a PID namespace of its own
 * (so it chooses its threads' tids through ns_last_pid) writes a slice from
 * its main thread (pid 1) and from threads with tids 1000 and 28771 (0x7063;
 * the commit that added this test says why that one).  The trace processor
 * shows no error stat and each slice on its own thread's track.  Needs
 * CAP_SYS_ADMIN (root) for the namespace and a writable ns_last_pid: a skip
 * without them.
 */
static void *tid_writer(void *arg) {
    *(pid_t *)arg = gettid();
    TRACEC_SLICE_BEGIN(a, "on the thread");
    TRACEC_SLICE_END(a);
    return NULL;
}

/* A thread with tid `tid` writes its slice: 1; 0 when it got another tid or could not run; -1 when
   ns_last_pid cannot be written. */
static int thread_with_tid(pid_t tid) {
    char v[16];
    pthread_t t;
    pid_t got = 0;
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (f == NULL) return -1;
    snprintf(v, sizeof v, "%d", (int)tid - 1);
    int ok = fputs(v, f) >= 0;
    if (fclose(f) != 0 || !ok) return -1; /* the next task made in this namespace gets `tid` (it is free) */
    if (pthread_create(&t, NULL, tid_writer, &got) != 0 || pthread_join(t, NULL) != 0) return 0;
    return got == tid;
}

/* In a child: a PID namespace, and in it pid 1, which writes the trace.  Exits 0 when it did, 2 without the
   namespace or ns_last_pid (the test is skipped). */
static void tid_child(const char *path) {
    int st;
    if (unshare(CLONE_NEWPID) != 0) _exit(2);
    pid_t kid = fork();
    if (kid < 0) _exit(4);
    if (kid == 0) { /* pid 1 of the namespace: its threads take the tids it asks for */
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        tracec_session *s;
        cfg.path = path;
        te_start(&cfg, &s); /* its own threads first (delivery; the recorder's connection) */
        int a1 = thread_with_tid(0x7063), a2 = a1 == 1 ? thread_with_tid(1000) : a1;
        TRACEC_SLICE_BEGIN(a, "on main");
        TRACEC_SLICE_END(a);
        int stopped = te_stop(s) == TRACEC_STATUS_SUCCESS;
        _exit(a1 < 0 || a2 < 0 ? 2 : stopped && a1 == 1 && a2 == 1 ? 0 : 3);
    }
    _exit(waitpid(kid, &st, 0) == kid && WIFEXITED(st) ? WEXITSTATUS(st) : 5);
}

Test(track_event, a_thread_of_any_tid_has_a_track_of_its_own) {
    const char *path = te_path("tids.pftrace");
    int st;
    pid_t kid = fork();
    cr_assert_geq(kid, 0);
    if (kid == 0) tid_child(path); /* the namespace's pid 1 is its child: this process can still fork after */
    cr_assert_eq(waitpid(kid, &st, 0), kid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        cr_skip_test("a PID namespace (unshare CLONE_NEWPID) and its ns_last_pid need CAP_SYS_ADMIN, which this "
                     "test does not have");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child in its PID namespace: status %#x", st);
    char *bad = te_tp_bad_stats(path), *out;
    cr_assert_eq(strcmp(bad, ""), 0, "error / data_loss stats:\n%s", bad);
    free(bad);
    if (te_tp(path,
              "select s.name, t.tid from slice s join thread_track tt on s.track_id = tt.id join thread t "
              "using(utid) where s.name like 'on %' order by t.tid;",
              &out)) {
        const char *want = "\"name\",\"tid\"\n\"on main\",1\n\"on the thread\",1000\n\"on the thread\",28771\n";
        cr_assert(out != NULL && strcmp(out, want) == 0, "got\n%s", out ? out : "");
        free(out);
    }
}
