/*
 * test_kvd.c - examples/kvd.c as its users run it: with its own trace
 * file, and under `tracec record` (the program and its fork+exec'd
 * compactor in one trace) while it also writes its own file.  Perfetto's
 * trace processor must show the same requests in both traces: slices with
 * their args, the typed lookup events' custom fields, the flows from each
 * accept to its request, and the counter.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define TRACEC TRACEC_BINARY_DIR "/tools/tracec/tracec"
#define KVD TRACEC_BINARY_DIR "/examples/kvd"
#define REQUESTS 120

static char *g_dir;

static void setup(void) { cr_assert_not_null(g_dir = tt_tmpdir()); }
static void teardown(void) { tt_tmpdir_remove(g_dir); }

TestSuite(kvd, .init = setup, .fini = teardown, .timeout = 120);

/* Runs `cmd` (stdout and stderr both); returns its status and output (malloc'd). */
static int run(const char *cmd, char **out) {
    char *full;
    tt_buf b = {0};
    cr_assert(asprintf(&full, "( %s ) 2>&1", cmd) > 0);
    int st = tt_capture(full, &b);
    free(full);
    *out = b.data ? b.data : strdup("");
    return st;
}

/* The trace processor's CSV answer to `sql` on `trace` (malloc'd); skips the test without it. */
static char *tp(const char *trace, const char *sql) {
    const char *bin = tt_trace_processor();
    char *q, *cmd, *out;
    if (bin == NULL) tt_skip_without_trace_processor();
    cr_assert(asprintf(&q, "%s/q.sql", g_dir) > 0);
    cr_assert(tt_write_file(q, sql, strlen(sql)));
    cr_assert(asprintf(&cmd, "%s %s -q %s 2>/dev/null", bin, trace, q) > 0);
    cr_assert_eq(run(cmd, &out), 0, "trace processor on %s:\n%s", trace, out);
    free(cmd);
    free(q);
    return out;
}

/* One process's requests as the trace processor shows them: the answers to these, for its pid. */
static const char *const request_queries[] = {
    /* the request slices: count and sum of their keys (an arg) per name, all at depth 0 */
    ("select s.name, count(*), sum(extract_arg(s.arg_set_id, 'debug.key')), max(s.depth) from slice s "
     "join thread_track tt on s.track_id = tt.id join thread using(utid) join process using(upid) "
     "where process.pid = %ld and s.name in ('get', 'put') group by s.name order by s.name;"),
    /* the typed lookup events: their custom fields, as args, inside their request */
    ("select count(*), count(distinct extract_arg(s.arg_set_id, 'custom_string')), "
     "sum(extract_arg(s.arg_set_id, 'custom_counter')), min(s.depth) from slice s "
     "join thread_track tt on s.track_id = tt.id join thread using(utid) join process using(upid) "
     "where process.pid = %ld and s.name = 'lookup';"),
    /* flows from the accepts to the requests */
    ("select count(*) from flow f join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id "
     "where a.name = 'accept' and b.name in ('get', 'put') and a.track_id in (select tt.id from thread_track tt "
     "join thread using(utid) join process using(upid) where process.pid = %ld);"),
    /* the counter: as many values as puts, up to the number of puts */
    ("select count(*), max(c.value) from counter c join process_counter_track t on c.track_id = t.id "
     "join process using(upid) where process.pid = %ld and t.name = 'keys stored';"),
};

/* The pid of the process whose slices match `where` in `trace` (-1 when none). */
static long pid_of(const char *trace, const char *where) {
    char *sql, *out;
    long pid = -1;
    cr_assert(asprintf(&sql, "select distinct process.pid from slice s join thread_track tt on s.track_id = tt.id "
                             "join thread using(utid) join process using(upid) where %s;", where) > 0);
    out = tp(trace, sql);
    const char *nl = strchr(out, '\n');
    if (nl != NULL && nl[1] != '\0') pid = atol(nl + 1);
    free(out);
    free(sql);
    return pid;
}

static char *requests_view(const char *trace, long pid) {
    tt_buf all = {0};
    for (size_t i = 0; i < sizeof request_queries / sizeof request_queries[0]; i++) {
        char *sql, *out;
        cr_assert(asprintf(&sql, request_queries[i], pid) > 0);
        out = tp(trace, sql);
        cr_assert(tt_buf_append(&all, out, strlen(out)));
        free(out);
        free(sql);
    }
    return all.data;
}

static void expect_requests(const char *view) {
    /* 120 requests: 40 puts (i % 3 == 0), 80 gets; keys i * 7919 % 1000 */
    long puts = 0, gets = 0, put_keys = 0, get_keys = 0;
    char want[512];
    for (long i = 0; i < REQUESTS; i++) {
        long key = i * 7919 % 1000;
        if (i % 3 == 0)
            puts++, put_keys += key;
        else
            gets++, get_keys += key;
    }
    snprintf(want, sizeof want, "\"get\",%ld,%ld,0\n\"put\",%ld,%ld,0\n", gets, get_keys, puts, put_keys);
    cr_expect_not_null(strstr(view, want), "request slices: want\n%sin\n%s", want, view);
    char seen[1000] = {0};
    int distinct = 0;
    for (long i = 0; i < REQUESTS; i++) distinct += !seen[i * 7919 % 1000]++;
    snprintf(want, sizeof want, "\n%d,%d,%d,1\n", REQUESTS, distinct, REQUESTS * (REQUESTS + 1) / 2);
    cr_expect_not_null(strstr(view, want), "lookups (count, distinct keys, id sum, depth): want%sin\n%s", want, view);
    snprintf(want, sizeof want, "\"count(*)\"\n%d\n", REQUESTS);
    cr_expect_not_null(strstr(view, want), "flows: want %d in\n%s", REQUESTS, view);
    snprintf(want, sizeof want, "\n%ld,%ld.000000\n", puts, puts);
    cr_expect_not_null(strstr(view, want), "counter: want %ld values up to %ld in\n%s", puts, puts, view);
}

static void expect_compactor(const char *trace, long pid) {
    char *sql, *out;
    cr_assert(asprintf(&sql, "select s.name, s.depth, extract_arg(s.arg_set_id, 'debug.level') as level from slice s "
                             "join thread_track tt on s.track_id = tt.id join thread using(utid) join process using(upid) "
                             "where process.pid = %ld order by s.ts, s.depth;", pid) > 0);
    out = tp(trace, sql);
    cr_expect_str_eq(out, "\"name\",\"depth\",\"level\"\n\"compact\",0,\"[NULL]\"\n\"merge level\",1,0\n"
                          "\"merge level\",1,1\n\"merge level\",1,2\n", "%s", out);
    free(out);
    free(sql);
}

/* Its own file: the server's requests, and the compactor's own file. */
Test(kvd, writes_its_own_trace) {
    char *cmd, *out, *own;
    cr_assert(asprintf(&own, "%s/own.pftrace", g_dir) > 0);
    cr_assert(asprintf(&cmd, "%s --trace %s %d", KVD, own, REQUESTS) > 0);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    long pid = pid_of(own, "s.name = 'accept'");
    cr_assert_gt(pid, 0);
    char *view = requests_view(own, pid);
    expect_requests(view);
    free(view);
    char *child;
    cr_assert(asprintf(&child, "%s.compactor", own) > 0);
    expect_compactor(child, pid_of(child, "s.name = 'compact'"));
    free(child);
    free(cmd);
    free(own);
}

/*
 * Under `tracec record`: one trace holds both processes (no code change,
 * the child exec'd with the recorder's environment), and the server's
 * requests in it are the ones its own file shows.
 */
Test(kvd, recorded_with_its_child_matches_its_own_trace) {
    char *cmd, *out, *own, *rec;
    cr_assert(asprintf(&own, "%s/own.pftrace", g_dir) > 0);
    cr_assert(asprintf(&rec, "%s/recorded.pftrace", g_dir) > 0);
    cr_assert(asprintf(&cmd, "%s record -o %s -- %s --trace %s %d", TRACEC, rec, KVD, own, REQUESTS) > 0);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    long pid = pid_of(rec, "s.name = 'accept'"), cpid = pid_of(rec, "s.name = 'compact'");
    cr_assert_gt(pid, 0, "the server is not in the recorded trace");
    cr_assert_gt(cpid, 0, "the compactor is not in the recorded trace");
    cr_assert_neq(pid, cpid);
    char *recorded = requests_view(rec, pid), *mine = requests_view(own, pid_of(own, "s.name = 'accept'"));
    cr_expect_str_eq(recorded, mine, "recorded:\n%s\nits own file:\n%s", recorded, mine);
    expect_requests(recorded);
    expect_compactor(rec, cpid);
    out = tp(rec, "select count(*) from stats where value > 0 and severity in ('error', 'data_loss');");
    cr_expect_str_eq(out, "\"count(*)\"\n0\n", "errors or losses in the recorded trace");
    free(out);
    free(recorded);
    free(mine);
    free(cmd);
    free(own);
    free(rec);
}
