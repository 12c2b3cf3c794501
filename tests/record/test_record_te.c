/*
 * test_record_te.c - a track-event program (record_te_program: the
 * TRACEC_* macros, no recorder code) under `tracec record -- PROGRAM`: its
 * slices, args (extension fields included), flows and counters reach the
 * recorder's trace; with a session of its own as well, both traces show
 * the same; the recorder's --categories enable categories for its session
 * only.  Checked with Perfetto's trace processor.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

#define TRACEC TRACEC_BINARY_DIR "/tools/tracec/tracec"
#define PROG TRACEC_BINARY_DIR "/tests/record/record_te_program"
#define TP tt_trace_processor()

static char *g_dir;

static void setup(void) { cr_assert_not_null(g_dir = tt_tmpdir()); }
static void teardown(void) { tt_tmpdir_remove(g_dir); }

/* Runs `cmd` with sh; returns its exit status and its stdout+stderr in a malloc'd string. */
static int run(const char *cmd, char **out) {
    char *full;
    cr_assert(asprintf(&full, "( %s ) 2>&1", cmd) > 0);
    tt_buf b = {0};
    int st = tt_capture(full, &b);
    cr_assert_neq(st, -1, "cannot run: %s", full);
    free(full);
    if (out)
        *out = b.data;
    else
        tt_buf_free(&b);
    return st;
}

/* Runs `tracec record -o DIR/NAME -- PROG ARGS`: its exit status, its output in *out and the trace's path in
   trace[0..cap). */
/* `tracec record [OPTS] -o DIR/NAME -- record_te_program ARGS`. */
static int record_program_with(const char *opts, const char *name, const char *args, char *trace, size_t cap,
                               char **out) {
    char cmd[1024];
    snprintf(trace, cap, "%s/%s", g_dir, name);
    snprintf(cmd, sizeof cmd, "%s record %s -o %s -- %s %s", TRACEC, opts, trace, PROG, args);
    return run(cmd, out);
}

static int record_program(const char *name, const char *args, char *trace, size_t cap, char **out) {
    return record_program_with("", name, args, trace, cap, out);
}

/* `[PRE]tracec record OPTS -o DIR/rec.pftrace` of `n` record_te_program ARGS started all at once by one shell. */
static int record_many(const char *pre, const char *opts, int n, const char *args, char *trace, size_t cap,
                       char **out) {
    char cmd[1400];
    snprintf(trace, cap, "%s/rec.pftrace", g_dir);
    snprintf(cmd, sizeof cmd,
             "%s%s record %s -o %s -- sh -c 'i=0; while [ $i -lt %d ]; do %s %s & i=$((i+1)); done; wait'", pre,
             TRACEC, opts, trace, n, PROG, args);
    return run(cmd, out);
}

/* How many times `needle` is in `s`. */
static size_t count_of(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

/* Runs a query through the trace processor; returns its CSV (skips the test where it is absent). */
static char *tp_query(const char *trace, const char *sql) {
    if (TP == NULL) tt_skip_without_trace_processor();
    char path[128], cmd[1024], *out;
    snprintf(path, sizeof path, "%s/q.sql", g_dir);
    FILE *f = fopen(path, "w");
    fputs(sql, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s -q %s 2>/dev/null", TP, trace, path);
    cr_assert_eq(run(cmd, &out), 0, "trace processor failed:\n%s", out);
    return out;
}

/* The recorder's summary of each provider is an instant of its own. */
#define NOT_SUMMARY "name not like 'provider %'"

/* What the test compares: events by name (count, slices ended), args by key, counters, flows, and the
   errors and losses the trace processor found. */
static const char *const QUERIES[] = {
    "select name, count(*) as n, sum(dur > 0) as ended, sum(depth) as depth from slice where " NOT_SUMMARY
    " group by name order by name;\n",
    "select a.key, count(*) as n, sum(a.int_value) as total from slice s join args a using(arg_set_id) "
    "where s." NOT_SUMMARY " and (a.key like 'debug.%' or a.key like '%custom_counter%') group by a.key "
    "order by a.key;\n",
    "select t.name, count(*) as n, sum(c.value) as total from counter c join counter_track t on c.track_id = t.id "
    "group by t.name order by t.name;\n",
    "select count(*) as flows, sum(so.name = 'read' and si.name = 'done') as read_to_done from flow f "
    "join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id;\n",
    "select name, value from stats where (severity = 'error' or severity = 'data_loss') and value > 0 "
    "order by name;\n",
};
enum { Q_SLICES, Q_ARGS, Q_COUNTERS, Q_FLOWS, Q_BAD, Q_COUNT };

static char *query(const char *trace, int q) { return tp_query(trace, QUERIES[q]); }

TestSuite(record_te, .init = setup, .fini = teardown, .timeout = 60);

Test(record_te, track_events_reach_the_recorder) {
    char trace[128], *out;
    int rc = record_program("rec.pftrace", "events 50", trace, sizeof trace, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char *slices = query(trace, Q_SLICES);
    cr_expect(strstr(slices, "\"work\",50,50,0") != NULL, "work slices:\n%s", slices);
    cr_expect(strstr(slices, "\"typed\",50,0,50") != NULL, "typed events inside work:\n%s", slices);
    cr_expect(strstr(slices, "\"read\",50,0,50") != NULL, "read instants:\n%s", slices);
    cr_expect(strstr(slices, "\"done\",50,0,50") != NULL, "done instants:\n%s", slices);
    cr_expect(strstr(slices, "\"debug\",50,0,50") != NULL, "debug instants:\n%s", slices);
    cr_expect(strstr(slices, "\"odd\",1,0,0") != NULL, "an undeclared category, all wanted:\n%s", slices);
    free(slices);
    char *args = query(trace, Q_ARGS);
    cr_expect(strstr(args, "\"debug.i\",50,1225") != NULL, "debug int arg:\n%s", args);
    cr_expect(strstr(args, "\"debug.bytes\",50,6225") != NULL, "debug int arg:\n%s", args);
    cr_expect(strstr(args, "custom_counter\",50,1225") != NULL, "extension field:\n%s", args);
    free(args);
    char *counters = query(trace, Q_COUNTERS);
    cr_expect(strstr(counters, "\"queue\",50,1225") != NULL, "counter:\n%s", counters);
    free(counters);
    char *flows = query(trace, Q_FLOWS);
    cr_expect(strstr(flows, "50,50") != NULL, "flows:\n%s", flows);
    free(flows);
    char *bad = query(trace, Q_BAD);
    cr_expect(strchr(strchr(bad, '\n') + 1, '"') == NULL, "errors or losses:\n%s", bad);
    free(bad);
}

Test(record_te, own_session_and_recorder_give_the_same_trace) {
    char args[160], rec[128], own[128], *out;
    snprintf(own, sizeof own, "%s/own.pftrace", g_dir);
    snprintf(args, sizeof args, "events 40 %s", own);
    int rc = record_program("rec.pftrace", args, rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    for (int q = 0; q < Q_COUNT; q++) {
        char *a = query(rec, q), *b = query(own, q);
        cr_expect_str_eq(a, b, "query %d differs:\nrecorder:\n%s\nown session:\n%s", q, a, b);
        if (q == Q_SLICES) cr_expect(strstr(a, "\"work\",40,40,0") != NULL, "%s", a);
        free(a);
        free(b);
    }
}

/*
 * `-o` naming the file of the program's own session: the program's session
 * is refused (one writer per file) with a line that says why, and the
 * recorder's trace is whole, not the two interleaved (which the trace
 * processor found corrupt, with exit status 0).
 */
Test(record_te, own_session_on_the_recorders_file_is_refused_and_the_trace_kept) {
    char args[160], rec[128], *out;
    snprintf(args, sizeof args, "events 40 %s/rec.pftrace", g_dir);
    int rc = record_program("rec.pftrace", args, rec, sizeof rec, &out);
    cr_assert_neq(rc, 0, "the program's session start failed, and so did the program:\n%s", out);
    cr_assert(strstr(out, "rec.pftrace is being written by another trace writer (tracec record -o the same "
                          "file?), so this session is not started") != NULL,
              "%s", out);
    free(out);
    char *bad = query(rec, Q_BAD);
    cr_expect(strchr(strchr(bad, '\n') + 1, '"') == NULL, "errors or losses:\n%s", bad);
    free(bad);
    char *slices = tp_query(rec, "select count(*) from slice where name like 'provider %';\n");
    cr_expect(strstr(slices, "\n1") != NULL, "the recorder's summary of the program:\n%s", slices);
    free(slices);
}

Test(record_te, recorder_categories_are_its_session_only) {
    char cmd[1024], rec[128], own[128], *out;
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    snprintf(own, sizeof own, "%s/own.pftrace", g_dir);
    /* the recorder wants io; the program's own session wants app and dbg */
    snprintf(cmd, sizeof cmd, "%s record --categories io -o %s -- %s events 30 %s app,dbg", TRACEC, rec, PROG, own);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char *a = query(rec, Q_SLICES), *b = query(own, Q_SLICES);
    cr_expect_str_eq(a, "\"name\",\"n\",\"ended\",\"depth\"\n\"done\",30,0,0\n\"read\",30,0,0\n",
                     "recorder's session: io only:\n%s", a);
    cr_expect_str_eq(b, "\"name\",\"n\",\"ended\",\"depth\"\n\"debug\",30,0,30\n\"typed\",30,0,30\n\"work\",30,30,0\n",
                     "own session: app and dbg:\n%s", b);
    free(a);
    free(b);
    char *c = query(rec, Q_COUNTERS);
    cr_expect(strstr(c, "queue") == NULL, "no app counter in the recorder's session:\n%s", c);
    free(c);
}

Test(record_te, program_without_events_registers) {
    char rec[128], *out;
    int rc = record_program("rec.pftrace", "none", rec, sizeof rec, &out);
    /* it connected (its categories' constructor started the client): a provider that wrote no event */
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "no provider registered") == NULL, "%s", out);
    free(out);
}

Test(record_te, attach_by_variable_and_list_shows_the_categories) {
    char cmd[1400], sock[128], rec[128], *out;
    snprintf(sock, sizeof sock, "%s/s", g_dir);
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    /* a recorder on a socket of its own; the program opts in with the variable and stays 1.5 s */
    snprintf(cmd, sizeof cmd,
             "%s record --attach --socket %s --duration 2500ms -o %s > /dev/null 2>&1 & sleep 0.5; "
             "TRACEC_RECORDER_SOCKET=%s %s wait 1500 & sleep 0.7; %s record --list --socket %s; wait",
             TRACEC, sock, rec, sock, PROG, TRACEC, sock);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "record_te_prog") != NULL, "the program is listed:\n%s", out);
    cr_expect(strstr(out, "dbg") != NULL && strstr(out, "io") != NULL && strstr(out, "app") != NULL,
              "its categories are listed:\n%s", out);
    free(out);
    char *slices = query(rec, Q_SLICES);
    cr_expect(strstr(slices, "\"work\",1,1,0") != NULL, "its events are recorded:\n%s", slices);
    free(slices);
}

Test(record_te, no_free_slot_refuses_the_session_with_a_reason) {
    char cmd[1400], sock[128], rec[128], *out;
    snprintf(sock, sizeof sock, "%s/s", g_dir);
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    /* the program's 4 sessions hold every slot; it then connects with the call (no variable) */
    snprintf(cmd, sizeof cmd,
             "%s record --attach --socket %s --duration 2s -o %s & sleep 0.5; "
             "env -u TRACEC_RECORDER_SOCKET %s slots %s %s; wait",
             TRACEC, sock, rec, PROG, sock, g_dir);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    long took = -1;
    const char *t = strstr(out, "connect_ms ");
    cr_assert(t && sscanf(t, "connect_ms %ld", &took) == 1, "%s", out);
    /* without the refusal ending it, the wait for Start is 1 s */
    cr_expect_lt(took, 900, "its refusal ends its synchronous wait for Start (%ld ms):\n%s", took, out);
    cr_expect(strstr(out, "refused=1 tracing=0") != NULL, "the program counts the refusal:\n%s", out);
    cr_expect(strstr(out, "after disconnect: refused=1 connected=0") != NULL, "and still after it disconnects:\n%s",
              out);
    cr_expect(strstr(out, "refused the session: no free session slot (4 active)") != NULL,
              "the recorder says why:\n%s", out);
    cr_expect(strstr(out, "dropped 0, refused the session\n") != NULL &&
                  strstr(out, "none of the 1 providers was started (the lines above say why)") != NULL,
              "and in its report:\n%s", out);
    free(out);
    char *names = tp_query(rec, "select name from slice where name like 'provider %';\n");
    cr_expect(strstr(names, "(refused the session)") != NULL, "and in the trace's summary:\n%s", names);
    free(names);
}

/* Short programs started all at once, more than a small accept queue holds: each one waits its turn (a full queue is
   a busy recorder, not "none"), and each one's events are in the trace. */
Test(record_te, many_short_programs_at_once_are_each_recorded) {
    char rec[128], *out;
    int rc = record_many("", "", 300, "events 1", rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "before") == NULL, "every program was started in time:\n%s", out);
    /* (on a loaded machine a provider may answer Start after --timeout: "timed out", its packets all in) */
    cr_expect_eq(count_of(out, "produced 22, delivered 22, dropped 0"), 300u,
                 "each of the 300 programs is a provider whose packets are all in the trace:\n%s", out);
    free(out);
    char *works = tp_query(rec, "select count(*) as works from slice where name = 'work';\n");
    cr_expect(strstr(works, "300") != NULL, "300 slices 'work', one per program:\n%s", works);
    free(works);
}

/* The same 300 programs with the recorder at 100 fds (3 per provider): a provider whose buffer the recorder cannot
   create waits, registered, and is started once fds are freed (alone on this machine, all 300 are recorded whole).
   On a loaded machine a program may stop waiting (1 s) first: it is then reported, never silent, as not started
   for want of a buffer, or as started late (its first events not in the trace). */
Test(record_te, a_recorder_out_of_fds_starts_each_program_once_it_can) {
    char rec[128], *out;
    int rc = record_many("ulimit -n 100 && ", "", 300, "events 1", rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    size_t failed = count_of(out, "cannot create its buffer: Too many open files (trying again)");
    size_t not_started = count_of(out, "dropped 0, not started: the recorder could not create its buffer\n");
    cr_expect_gt(failed, 0u, "the recorder ran out of fds:\n%s", out);
    /* a program waits 1 s for its Start; on a loaded machine some go on first: then reported, never silent */
    cr_expect_lt(not_started, failed, "providers it could not start at first were started later:\n%s", out);
    size_t lines = 0, whole = 0, said = 0;
    for (const char *p = out; (p = strstr(p, "tracec record: provider record_te_progr (pid ")) != NULL; p++) {
        const char *eol = strchr(p, '\n'), *seq = strstr(p, ", sequence ");
        if (eol == NULL || seq == NULL || seq > eol) continue; /* not a report line */
        char line[400];
        snprintf(line, sizeof line, "%.*s", (int)(eol - p), p);
        lines++;
        whole += strstr(line, "): produced 22, delivered 22, dropped 0") != NULL; /* ", timed out" may follow */
        said += strstr(line, "not started") != NULL || strstr(line, "started late") != NULL ||
                strstr(line, "ended before it was started") != NULL;
    }
    cr_expect_eq(lines, 300u, "%s", out);
    cr_expect_eq(whole + said, 300u, "each program is recorded whole, or its report says why not:\n%s", out);
    free(out);
}

/* A program whose recorder never answers (stopped here, busy in life) goes on after its 5 s wait; at its exit it
   says that none of its events reached that recorder (so does one whose client ends first), and the recorder,
   once it runs again, says it too, in its report and in the trace's summary of that provider, and ends with status
   4: nothing was recorded. */
Test(record_te, a_program_the_recorder_never_answered_says_so) {
    char cmd[1600], sock[128], rec[128], *out;
    snprintf(sock, sizeof sock, "%s/s", g_dir);
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    snprintf(cmd, sizeof cmd,
             "%s record --attach --socket %s --duration 60s -o %s & R=$!; "
             "while [ ! -S %s ]; do sleep 0.05; done; kill -STOP $R; "
             "TRACEC_RECORDER_SOCKET=%s %s leave & "
             "TRACEC_RECORDER_SOCKET=%s %s events 3; echo \"program exit $?\"; wait $!; kill -CONT $R; sleep 1; "
             "kill -INT $R; wait $R",
             TRACEC, sock, rec, sock, sock, PROG, sock, PROG);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 4, "nothing was recorded: status 4\n%s", out);
    cr_expect(strstr(out, "none of the 2 providers was started (the lines above say why)") != NULL, "%s", out);
    cr_expect(strstr(out, "program exit 0") != NULL, "the program runs on:\n%s", out);
    cr_expect_eq(count_of(out, "did not answer it before it ended: none of its events are in that recorder's trace"), 2u,
                 "each program says it, at its exit or as its client ends:\n%s", out);
    cr_expect(strstr(out, "left\n") != NULL, "%s", out);
    cr_expect(strstr(out, "ended before it could be started: nothing it wrote is in the trace") != NULL &&
                  strstr(out, "produced 0, delivered 0, dropped 0, ended before it was started") != NULL,
              "and so does the recorder:\n%s", out);
    free(out);
    char *names = tp_query(rec, "select name from slice where name like 'provider %' order by name;\n");
    cr_expect(strstr(names, "(ended before it was started)") != NULL, "the trace's summary says it:\n%s", names);
    free(names);
}

/* The client's counters stay readable after tracec_te_recorder_disconnect: the final ones, the hand-over
   included, as the recorder counted them; a fork child (no client of its own) reads zeros. */
Test(record_te, counters_are_final_after_disconnect) {
    char rec[128], *out;
    int rc = record_program("rec.pftrace", "counted 200", rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    unsigned long long produced = 0, dropped = 1, runs = 0, rp = 0, rd = 0, rdr = 1;
    const char *a = strstr(out, "after disconnect: connected=0 tracing=0 produced=");
    cr_assert_not_null(a, "%s", out);
    cr_assert_eq(sscanf(a, "after disconnect: connected=0 tracing=0 produced=%llu dropped=%llu runs=%llu", &produced,
                        &dropped, &runs),
                 3, "%s", out);
    const char *b = strstr(out, "(pid ");
    cr_assert_not_null(b, "%s", out);
    b = strstr(b, "produced ");
    cr_assert_not_null(b, "%s", out);
    cr_assert_eq(sscanf(b, "produced %llu, delivered %llu, dropped %llu", &rp, &rd, &rdr), 3, "%s", out);
    cr_expect_gt(produced, 200 * 7, "every round's events at least:\n%s", out);
    cr_expect_eq(produced, rp, "the program and the recorder count the same packets:\n%s", out);
    cr_expect_eq(dropped, 0, "%s", out);
    cr_expect_eq(rdr, 0, "%s", out);
    cr_expect(strstr(out, "packets lost") == NULL, "no loss line when nothing was lost:\n%s", out);
    cr_expect_eq(runs, 1, "%s", out);
    cr_expect(strstr(out, "fork child: produced=0 runs=0") != NULL, "a fork child's counters are its own:\n%s", out);
    free(out);
}

/*
 * `record_te_program nested N [kill]` under tracec record, ONESHOT 16 KiB: the events missing from the trace
 * that count as lost (the BEGINs and instants not in it, the ENDs of unfinished slices) in *want, and the
 * trace's loss count in *lost.  The instants are dropped by the layer (inside a slice whose BEGIN was lost).
 */
static void nested_losses(const char *how, int want_rc, long *want, long *lost) {
    char cmd[1024], rec[128], *out;
    enum { N = 3000 };
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record --mode oneshot --buffer-size 16k -o %s -- %s nested %d %s", TRACEC, rec, PROG,
             N, how);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, want_rc, "%s", out);
    cr_expect(strstr(out, "packets lost (counted in the trace's stats)") != NULL &&
                  strstr(out, "the buffer filled and ONESHOT keeps") != NULL,
              "tracec record says what lost them:\n%s", out);
    free(out);
    char *a = tp_query(rec, "select (select count(*) from slice where name = 'outer') as outer_kept, "
                            "(select count(*) from slice where name = 'inner') as inner_kept, "
                            "(select count(*) from slice where name = 'outer' and dur < 0) as unfinished, "
                            "(select coalesce(sum(value), 0) from stats where name = "
                            "'traced_buf_trace_writer_packet_loss') as lost;\n");
    long outer = -1, inner = -1, unfinished = -1;
    const char *row = strchr(a, '\n');
    cr_assert(row != NULL && sscanf(row + 1, "%ld,%ld,%ld,%ld", &outer, &inner, &unfinished, lost) == 4, "%s", a);
    cr_expect_lt(outer, N, "a 16 KiB ONESHOT buffer loses slices:\n%s", a);
    *want = (N - outer) + (N - inner) + unfinished;
    free(a);
}

/* A program that just exits: its exit hook stops the recorder's session while the buffer still accepts, so
   the events the layer dropped are in the trace's loss count with the buffer's own losses, exactly. */
Test(record_te, losses_of_the_layer_are_counted_at_exit) {
    long want, lost;
    nested_losses("", 0, &want, &lost);
    cr_expect_eq(lost, want, "lost: the BEGINs and the instants not in the trace, and the ENDs of unfinished slices");
}

/* A program killed: the buffer publishes its own losses by 64 and the layer's by 64 too, so the count falls
   short of the events missing by at most 63 of each. */
Test(record_te, losses_of_a_killed_program_are_counted_to_within_the_publishing_steps) {
    long want, lost;
    nested_losses("kill", 128 + 9, &want, &lost);
    cr_expect(lost <= want && lost >= want - 2 * 63, "lost %ld, missing %ld", lost, want);
}

Test(record_te, fork_child_writes_nothing_to_the_recorder) {
    char rec[128], *out;
    int rc = record_program("rec.pftrace", "fork", rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char *slices = query(rec, Q_SLICES);
    cr_expect_str_eq(slices,
                     "\"name\",\"n\",\"ended\",\"depth\"\n\"debug\",1,0,1\n\"done\",1,0,1\n\"read\",1,0,1\n"
                     "\"typed\",1,0,1\n\"work\",1,1,0\n",
                     "only the parent's round:\n%s", slices);
    free(slices);
}

/*
 * Packets written by hand (tracec/provider.h) land on the thread's one track, inside its macros' slice, on
 * every clock `tracec record --clock` can give the trace: the hand-written timestamp
 * (tracec_provider_now_ns), the macros' events, the process's and thread's descriptors and the recorder's own
 * summary all on the trace's clock (REALTIME is decades from the others: one misplaced timestamp shows).
 */
Test(record_te, hand_written_packets_share_the_threads_track) {
    static const char *const clocks[] = {"", "--clock monotonic", "--clock realtime"};
    char trace[128], *out;
    for (size_t c = 0; c < 3; c++) {
        int rc = record_program_with(clocks[c], "mixed.pftrace", "mixed", trace, sizeof trace, &out);
        cr_assert_eq(rc, 0, "%s: %s", clocks[c], out);
        free(out);
        char *slices = tp_query(trace, "select s.name, s.depth, (select count(distinct track_id) from slice where "
                                       NOT_SUMMARY ") as tracks from slice s where s." NOT_SUMMARY " order by s.ts;\n");
        cr_expect_str_eq(slices, "\"name\",\"depth\",\"tracks\"\n\"outer\",0,1\n\"by hand\",1,1\n", "%s: %s",
                         clocks[c], slices);
        free(slices);
        char *span = tp_query(trace, "select count(*) as slices, max(ts) - min(ts) < 10000000000 as within_10s, "
                                     "(select count(*) from stats where value > 0 and severity in ('error', "
                                     "'data_loss')) as problems from slice;\n");
        cr_expect_str_eq(span, "\"slices\",\"within_10s\",\"problems\"\n3,1,0\n", "%s: %s", clocks[c], span);
        free(span);
        char *tracks = tp_query(trace, "select (select count(*) from process_track) as process_tracks, "
                                       "(select count(*) from thread_track) as thread_tracks;\n");
        cr_expect_str_eq(tracks, "\"process_tracks\",\"thread_tracks\"\n1,1\n", "%s: %s", clocks[c], tracks);
        free(tracks);
    }
}

/*
 * `tracec record --max-size 1m` for a program that writes about 2 MB of events, losslessly (--wait): the trace
 * stops growing at the limit, the trace processor reads it whole (no error), the packets kept out are counted
 * lost in its trace_stats (data_loss), the summary is in, and tracec record says why the packets were lost.
 */
Test(record_te, max_size_bounds_the_trace_and_counts_what_it_kept_out) {
    char cmd[1024], rec[128], *out;
    enum { N = 30000 };
    const long max = 1L << 20;
    snprintf(rec, sizeof rec, "%s/rec.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record --max-size 1m --wait 2000 --buffer-size 256k -o %s -- %s nested %d", TRACEC,
             rec, PROG, N);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "because the trace reached --max-size 1048576") != NULL &&
                  strstr(out, "the trace reached its max_file_size (1048576 bytes)") != NULL,
              "tracec record says what lost them:\n%s", out);
    free(out);
    struct stat sb;
    cr_assert_eq(stat(rec, &sb), 0);
    cr_expect(sb.st_size <= max && sb.st_size > max - 80 * 1024, "the trace is %lld bytes", (long long)sb.st_size);
    char *a = tp_query(rec, "select (select count(*) from slice where name = 'outer') as outer_kept, "
                            "(select count(*) from slice where name = 'inner') as inner_kept, "
                            "(select count(*) from slice where name = 'outer' and dur < 0) as unfinished, "
                            "(select count(*) from slice where name like 'provider %') as summaries, "
                            "(select coalesce(sum(value), 0) from stats where name = "
                            "'traced_buf_trace_writer_packet_loss') as lost, "
                            "(select count(*) from stats where severity = 'error' and value > 0) as errors;\n");
    long outer = -1, inner = -1, unfinished = -1, summaries = -1, lost = -1, errors = -1;
    const char *row = strchr(a, '\n');
    cr_assert(row != NULL && sscanf(row + 1, "%ld,%ld,%ld,%ld,%ld,%ld", &outer, &inner, &unfinished, &summaries,
                                    &lost, &errors) == 6,
              "%s", a);
    cr_expect(outer > N / 10 && outer < N, "a part of the slices is in:\n%s", a);
    cr_expect(inner >= outer - 1 && inner <= outer, "%s", a);
    cr_expect_leq(unfinished, 1, "only the slice at the cut may be unfinished:\n%s", a);
    cr_expect_eq(summaries, 1, "the provider's summary is in:\n%s", a);
    cr_expect_eq(errors, 0, "%s", a);
    /* every event not in the trace is lost (the BEGINs, the instants, the ENDs of kept slices), and a few other
       packets of the program's (its exit's descriptors) with them */
    long missing = (N - outer) + (N - inner) + (N - outer + unfinished);
    cr_expect(lost >= missing && lost <= missing + 16, "lost %ld, missing %ld:\n%s", lost, missing, a);
    free(a);
}

/* 300 programs at once under --max-size 1m: their events fill the trace, and their 300 summary instants (about
   230 bytes each) need more than the 64 KiB the limit keeps for the summary.  The trace_stats go in first, so every
   loss is counted in the trace; the summaries that do not fit are said. */
Test(record_te, max_size_with_many_providers_keeps_the_stats_first) {
    char rec[128], *out;
    int rc = record_many("", "--max-size 1m", 300, "events 30", rec, sizeof rec, &out);
    cr_assert_eq(rc, 0, "%s", out);
    long lost = -1, unfit = -1, a_, b_;
    for (const char *p = out; (p = strstr(p, "tracec record: ")) != NULL; p++)
        if (sscanf(p, "tracec record: %ld of %ld packets lost", &a_, &b_) == 2) {
            lost = a_;
            break;
        }
    const char *p;
    p = strstr(out, "of the 300 providers' summary instants did not fit in --max-size 1048576 (their trace_stats did)");
    cr_assert(p != NULL, "the summaries that did not fit are said:\n%s", out);
    while (p > out && p[-1] != ' ') p--;
    while (p > out && p[-1] == ' ') p--;
    while (p > out && p[-1] >= '0' && p[-1] <= '9') p--;
    cr_assert_eq(sscanf(p, "%ld", &unfit), 1, "%s", p);
    cr_assert_gt(unfit, 0);
    cr_assert_gt(lost, 0, "the trace filled:\n%s", out);
    struct stat sb;
    cr_assert_eq(stat(rec, &sb), 0);
    cr_expect_leq((long)sb.st_size, 1L << 20);
    char *a = tp_query(rec,
                       "select (select count(*) from slice where name like 'provider %') as summaries, "
                       "(select sum(value) from stats where severity = 'data_loss') as lost, "
                       "(select count(*) from stats where severity = 'error' and value > 0) as errors;\n");
    long summaries = -1, tp_lost = -1, errors = -1;
    const char *row = strchr(a, '\n');
    cr_assert(row && sscanf(row + 1, "%ld,%ld,%ld", &summaries, &tp_lost, &errors) == 3, "%s", a);
    cr_expect_eq(tp_lost, lost, "every packet lost is counted in the trace's stats:\n%s\n%s", a, out);
    cr_expect_eq(summaries, 300 - unfit, "the summaries that fit are in:\n%s", a);
    cr_expect_eq(errors, 0, "%s", a);
    free(a);
    free(out);
}

/* -o a FIFO whose reader goes away: tracec record is not killed by SIGPIPE (it was, silently, leaving its socket's
   directory behind); the failed write is said at the end (and when it happens, if a save comes after it), status
   1. */
Test(record_te, a_trace_pipe_whose_reader_goes_away_is_a_write_error) {
    char fifo[128], cmd[1400], *out;
    snprintf(fifo, sizeof fifo, "%s/ff", g_dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(cmd, sizeof cmd, "head -c 100 %s > /dev/null & %s record -o %s -- %s events 20000; echo \"status $?\"",
             fifo, TRACEC, fifo, PROG);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "status 1\n") != NULL, "%s", out);
    char *want;
    cr_assert(asprintf(&want, "tracec record: writing %s failed: Broken pipe", fifo) > 0);
    cr_expect(strstr(out, want) != NULL, "%s", out);
    free(want);
    free(out);
}

Test(record_te, max_size_below_the_minimum_is_refused) {
    char trace[128], *out;
    int rc = record_program_with("--max-size 100k", "rec.pftrace", "events 1", trace, sizeof trace, &out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "bad --max-size '100k' (at least 1m") != NULL, "%s", out);
    free(out);
}
