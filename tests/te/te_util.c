/*
 * te_util.c - see te_util.h.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "te_util.h"
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[256];
static pid_t g_dir_pid; /* a fork child's exit leaves the directory to its parent */

/* The scratch directory goes at exit unless TE_KEEP is set (to look at the traces). */
static void remove_dir(void) {
    char cmd[300];
    if (getenv("TE_KEEP") != NULL || g_dir[0] == '\0' || getpid() != g_dir_pid) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
}

const char *te_path(const char *name) {
    static char paths[8][512];
    static unsigned next;
    if (g_dir[0] == '\0') {
        snprintf(g_dir, sizeof g_dir, "%s/te_test_%ld_XXXXXX", TRACEC_BINARY_DIR, (long)getpid());
        if (mkdtemp(g_dir) == NULL) return NULL;
        g_dir_pid = getpid();
        atexit(remove_dir);
    }
    char *p = paths[next++ % 8u];
    snprintf(p, 512, "%s/%s", g_dir, name);
    return p;
}

const char *te_save(const char *name, const void *data, size_t size) {
    const char *path = te_path(name);
    FILE *f = fopen(path, "wb");
    cr_assert(f != NULL && fwrite(data, 1, size, f) == size, "cannot write %s", path);
    fclose(f);
    return path;
}

int te_record_backend(void) {
    static int backend = -1;
    if (backend < 0) {
        const char *v = getenv("TRACEC_TEST_BACKEND");
        backend = v != NULL && strcmp(v, "record") == 0;
        if (v != NULL && v[0] != '\0' && strcmp(v, "record") != 0 && strcmp(v, "local") != 0)
            fprintf(stderr, "TRACEC_TEST_BACKEND=%s: neither local nor record, local used\n", v);
    }
    return backend;
}

#ifdef TE_TRACEC_CLI
#define TE_RECORD_CLI TE_TRACEC_CLI
#else
#define TE_RECORD_CLI TRACEC_BINARY_DIR "/tools/tracec/tracec"
#endif

static pid_t g_rec_pid;        /* the recorder te_start ran, 0: none */
static pid_t g_rec_parent;     /* the process that ran it (a fork child's exit leaves it alone) */
static char g_rec_log[600];    /* its stdout and stderr */
static unsigned g_rec_count;   /* recorders run by this process: a socket each */
static char g_rec_trace[512];  /* the trace it writes */
static char g_rec_traces[16][512]; /* the traces recorders wrote (te_check reads them with --recorder) */
static unsigned g_rec_ntraces;

/* `trace` is written by a recorder (te_start, te_run_program). */
static void note_recorder_trace(const char *trace) {
    for (unsigned i = 0; i < g_rec_ntraces; i++)
        if (strcmp(g_rec_traces[i], trace) == 0) return;
    cr_assert_lt(g_rec_ntraces, 16u, "at most 16 recorder traces in a test");
    snprintf(g_rec_traces[g_rec_ntraces++], sizeof g_rec_traces[0], "%s", trace);
}

static int is_recorder_trace(const char *trace) {
    for (unsigned i = 0; i < g_rec_ntraces; i++)
        if (strcmp(g_rec_traces[i], trace) == 0) return 1;
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The recorder's log (malloc'd, "" when none). */
static char *rec_log(void) {
    tt_buf b = {0};
    if (!tt_read_file(g_rec_log, &b) || b.data == NULL) return strdup("");
    return b.data;
}

/* The recorder has exited (reaped): its exit status, -1 if abnormal; -2 while it runs. */
static int rec_exited(int options) {
    int st;
    pid_t w = waitpid(g_rec_pid, &st, options);
    if (w == 0) return -2;
    g_rec_pid = 0;
    return w == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A test that failed between te_start and te_stop leaves no recorder behind. */
static void kill_recorder(void) {
    if (g_rec_pid > 0 && getpid() == g_rec_parent) kill(g_rec_pid, SIGKILL), (void)rec_exited(0);
}

static void start_recorder(const tracec_session_config *cfg) {
    char sock[512], size[32], cats[1024] = "";
    const char *mode = cfg->mode == TRACEC_BUFFERING_MODE_ONESHOT    ? "oneshot"
                       : cfg->mode == TRACEC_BUFFERING_MODE_CIRCULAR ? "circular"
                                                                     : "streaming";
    /* the recorder's smallest buffer is 8 KiB; 0 is the session's default, 1 MiB (the recorder's too) */
    size_t bytes = cfg->buffer_size == 0 ? (size_t)1 << 20 : cfg->buffer_size < 8192 ? 8192 : cfg->buffer_size;
    /* LOSSLESS: writers wait for the recorder to save (as long as the recorder allows); DISCARD: they drop
       (only STREAMING waits: the recorder refuses --wait with the other modes) */
    const char *wait = cfg->policy == TRACEC_BUFFER_POLICY_DISCARD || cfg->mode != TRACEC_BUFFERING_MODE_STREAMING
                           ? "0"
                           : "10000";
    cr_assert(cfg->path != NULL, "the record backend writes a file: cfg.path");
    cr_assert(g_rec_pid == 0, "one record session at a time");
    for (size_t i = 0; cfg->categories != NULL && i < cfg->num_categories; i++)
        snprintf(cats + strlen(cats), sizeof cats - strlen(cats), "%s%s", i ? "," : "", cfg->categories[i]);
    /* an empty list (num_categories 0) enables all, as in process: no --categories */
    snprintf(size, sizeof size, "%zu", bytes);
    char name[32];
    snprintf(name, sizeof name, "rec%u.sock", g_rec_count);
    snprintf(sock, sizeof sock, "%s", te_path(name));
    snprintf(g_rec_log, sizeof g_rec_log, "%s.log", sock);
    snprintf(g_rec_trace, sizeof g_rec_trace, "%s", cfg->path);
    note_recorder_trace(cfg->path);
    g_rec_count++;
    const char *argv[20];
    int n = 0;
    argv[n++] = TE_RECORD_CLI;
    argv[n++] = "record";
    argv[n++] = "--attach";
    argv[n++] = "--socket";
    argv[n++] = sock;
    argv[n++] = "-o";
    argv[n++] = cfg->path;
    argv[n++] = "--mode";
    argv[n++] = mode;
    argv[n++] = "--buffer-size";
    argv[n++] = size;
    argv[n++] = "--wait";
    argv[n++] = wait;
    argv[n++] = "--duration"; /* a test that dies leaves no recorder running for long */
    argv[n++] = "300s";
    if (cfg->clock_id != 0) { /* the session's clock: the recorder's --clock (BuiltinClock ids) */
        argv[n++] = "--clock";
        argv[n++] = cfg->clock_id == 3 ? "monotonic" : cfg->clock_id == 1 ? "realtime" : "boottime";
    }
    if (cats[0] != '\0') {
        argv[n++] = "--categories";
        argv[n++] = cats;
    }
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        FILE *log = freopen(g_rec_log, "w", stdout);
        if (log == NULL || dup2(fileno(stdout), 2) < 0) _exit(126);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    g_rec_pid = pid;
    g_rec_parent = getpid();
    static int atexit_done;
    if (!atexit_done) atexit_done = 1, atexit(kill_recorder);
    /* until the socket listens (the client retries anyway: this keeps its first attempt useful) */
    struct stat sb;
    for (int i = 0; i < 1000 && (stat(sock, &sb) != 0 || !S_ISSOCK(sb.st_mode)); i++) {
        int rc = rec_exited(WNOHANG);
        if (rc != -2) {
            char *l = rec_log();
            cr_assert(0, "tracec record exited (%d) before listening:\n%s", rc, l);
        }
        sleep_ms(5);
    }
    tracec_te_recorder_config rc = TRACEC_TE_RECORDER_CONFIG_INIT;
    rc.socket_path = sock;
    rc.name = cfg->process_name;
    rc.synchronous = true;
    rc.max_wait_ms = cfg->policy == TRACEC_BUFFER_POLICY_DISCARD ? -1 : 10000;
    tracec_status_t st = tracec_te_recorder_connect(&rc);
    cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "tracec_te_recorder_connect: %s", tracec_status_str(st));
    for (int i = 0; i < 500 && !tracec_te_recorder_stats().tracing; i++) sleep_ms(10);
    if (!tracec_te_recorder_stats().tracing) {
        char *l = rec_log();
        cr_assert(0, "the recorder's session does not trace after 5 s; tracec record says:\n%s", l);
    }
}

/* The recorder's summary of each provider is an instant (tests/record check it): taken out of `trace`, so the
   trace processor shows the program's events only; its trace_stats stay.  0: check_trace.py failed (said). */
static int strip_summaries(const char *trace) {
    char cmd[1400], *out;
    snprintf(cmd, sizeof cmd, "%s %s/tests/te/check_trace.py --strip-recorder-summaries %s 2>&1", TRACEC_PYTHON3,
             TRACEC_SOURCE_DIR, trace);
    int rc = te_run(cmd, &out);
    if (rc != 0) fprintf(stderr, "check_trace.py --strip-recorder-summaries %s:\n%s\n", trace, out ? out : "");
    free(out);
    return rc == 0;
}

void te_start(const tracec_session_config *cfg, tracec_session **out) {
    *out = NULL;
    if (te_record_backend()) {
        start_recorder(cfg);
        return;
    }
    tracec_status_t st = tracec_session_start(cfg, out);
    cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "tracec_session_start: %s", tracec_status_str(st));
}

tracec_status_t te_stop(tracec_session *s) {
    if (!te_record_backend()) return tracec_session_stop(s);
    if (g_rec_pid == 0) return TRACEC_STATUS_BAD_STATE;
    tracec_te_recorder_disconnect();
    kill(g_rec_pid, SIGINT);
    int rc = -2;
    for (int i = 0; i < 3000 && (rc = rec_exited(WNOHANG)) == -2; i++) sleep_ms(10);
    if (rc == -2) { /* 30 s: it hangs */
        kill(g_rec_pid, SIGKILL);
        rc = rec_exited(0);
        fprintf(stderr, "tracec record did not end within 30 s of SIGINT\n");
        return TRACEC_STATUS_ERROR;
    }
    if (rc != 0) {
        char *l = rec_log();
        fprintf(stderr, "tracec record exited with %d:\n%s\n", rc, l);
        free(l);
        return TRACEC_STATUS_ERROR;
    }
    return strip_summaries(g_rec_trace) ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_ERROR;
}

int te_run_program(const char *trace, const char *rec_opts, const char *cmd, char **out) {
    char full[2048];
    if (te_record_backend())
        snprintf(full, sizeof full, "%s record -o %s %s -- %s 2>&1; echo \"rc=$?\"", TE_RECORD_CLI, trace,
                 rec_opts ? rec_opts : "--mode streaming --wait 10000", cmd);
    else
        snprintf(full, sizeof full, "%s 2>&1; echo \"rc=$?\"", cmd);
    cr_assert_eq(te_run(full, out), 0, "%s: %s", full, *out ? *out : "");
    const char *rc = NULL;
    for (const char *p = *out; p != NULL && (p = strstr(p, "rc=")) != NULL; p += 3)
        if (p == *out || p[-1] == '\n') rc = p;
    cr_assert_not_null(rc, "%s: no exit status in\n%s", full, *out ? *out : "");
    if (te_record_backend()) {
        note_recorder_trace(trace);
        cr_assert(strip_summaries(trace), "%s", *out);
    }
    return atoi(rc + 3);
}

char *te_recorder_log(void) { return te_record_backend() ? rec_log() : strdup(""); }

uint64_t te_lost_now(const tracec_session *s) {
    if (te_record_backend()) return tracec_te_recorder_stats().dropped;
    return tracec_session_lost(s);
}

int te_run(const char *cmd, char **out) {
    tt_buf b = {0};
    int st = tt_capture(cmd, &b);
    *out = b.data;
    return st;
}

static const char *schema_pb(void) {
    static char path[512];
    if (path[0] == '\0') {
        char cmd[2048], *out;
        snprintf(path, sizeof path, "%s", te_path("schema.pb"));
        snprintf(cmd, sizeof cmd,
                 "%s --include_imports --descriptor_set_out=%s -I %s/protos -I %s/examples "
                 "perfetto/trace/trace.proto my_events.proto 2>&1",
                 TRACEC_PROTOC, path, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR);
        if (te_run(cmd, &out) != 0) fprintf(stderr, "protoc failed: %s\n", out ? out : "");
        free(out);
    }
    return path;
}

int te_check(const char *trace, const char *flags, char **out) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s/tests/te/check_trace.py %s %s %s %s 2>&1", TRACEC_PYTHON3,
             TRACEC_SOURCE_DIR, schema_pb(), trace, flags ? flags : "", is_recorder_trace(trace) ? "--recorder" : "");
    return te_run(cmd, out);
}

int te_tp(const char *trace, const char *sql, char **out) {
    char cmd[2048], qpath[512];
    *out = NULL;
    if (tt_trace_processor() == NULL) tt_skip_without_trace_processor();
    snprintf(qpath, sizeof qpath, "%s.sql", trace);
    FILE *q = fopen(qpath, "w");
    if (q == NULL) return 0;
    fputs(sql, q);
    fclose(q);
    snprintf(cmd, sizeof cmd, "%s %s -q %s 2>/dev/null", tt_trace_processor(), trace, qpath);
    return te_run(cmd, out) == 0 ? 1 : (fprintf(stderr, "trace processor failed: %s\n", *out ? *out : ""), 1);
}

int te_tp_many(const char *trace, const char *const *sqls, size_t n, char **answers) {
    char *out, *all;
    size_t len = 1;
    for (size_t i = 0; i < n; i++) answers[i] = NULL;
    for (size_t i = 0; i < n; i++) len += strlen(sqls[i]) + 1;
    all = malloc(len);
    cr_assert_not_null(all);
    all[0] = '\0';
    for (size_t i = 0; i < n; i++) strcat(strcat(all, sqls[i]), "\n");
    te_tp(trace, all, &out);
    free(all);
    /* each statement's CSV (header, rows), a blank line between two statements */
    const char *p = out ? out : "";
    size_t k = 0;
    while (k < n && *p != '\0') {
        const char *end = strstr(p, "\n\n");
        size_t l = end ? (size_t)(end - p) + 1 : strlen(p);
        answers[k++] = strndup(p, l);
        p = end ? end + 2 : p + l;
    }
    int whole = k == n && *p == '\0';
    if (!whole) {
        fprintf(stderr, "the trace processor's output on %s does not split into %zu answers:\n%s\n", trace, n,
                out ? out : "");
        for (size_t i = 0; i < k; i++) free(answers[i]), answers[i] = NULL;
    }
    free(out);
    return whole;
}

long te_tp_first_long(const char *answer) {
    const char *nl = answer ? strchr(answer, '\n') : NULL;
    return nl != NULL && nl[1] != '\0' ? atol(nl + 1) : -1;
}

/* The recorder's trace maps each sequence to its buffer (writer_stats): the trace processor then also counts
   the packets marked previous_packet_dropped, per buffer, as traced_buf_sequence_packet_loss (not a loss of
   its own). */
static const char *bad_stats_sql(void) {
    return te_record_backend()
               ? "select name, idx, severity, source, value from stats "
                 "where value > 0 and name != 'traced_buf_trace_writer_packet_loss' "
                 "and name != 'traced_buf_sequence_packet_loss' "
                 "and (severity in ('error', 'data_loss') "
                 "or name like '%incremental_state_invalid%' or name like '%skipped%');"
               : "select name, idx, severity, source, value from stats "
                 "where value > 0 and name != 'traced_buf_trace_writer_packet_loss' "
                 "and (severity in ('error', 'data_loss') "
                 "or name like '%incremental_state_invalid%' or name like '%skipped%');";
}
#define TE_PACKET_LOSS_SQL \
    "select coalesce(sum(value), 0) from stats where name = 'traced_buf_trace_writer_packet_loss';"

/* The answer without its header line (malloc'd). */
static char *rows_of(const char *answer) {
    const char *nl = answer ? strchr(answer, '\n') : NULL;
    return strdup(nl ? nl + 1 : "");
}

char *te_tp_bad_stats(const char *trace) {
    char *out;
    if (!te_tp(trace, bad_stats_sql(), &out)) return strdup("");
    char *rest = rows_of(out);
    free(out);
    return rest;
}

long te_tp_packet_loss(const char *trace) {
    char *out;
    if (!te_tp(trace, TE_PACKET_LOSS_SQL, &out)) return -2;
    long v = te_tp_first_long(out);
    free(out);
    return v;
}

int te_tp_losses_and(const char *trace, const char *const *sqls, size_t n, char **bad, long *lost, char **answers) {
    const char *q[2 + TE_TP_MAX_QUERIES];
    char *a[2 + TE_TP_MAX_QUERIES];
    cr_assert_leq(n, TE_TP_MAX_QUERIES);
    q[0] = bad_stats_sql();
    q[1] = TE_PACKET_LOSS_SQL;
    for (size_t i = 0; i < n; i++) q[2 + i] = sqls[i];
    if (!te_tp_many(trace, q, 2 + n, a)) return 0;
    if (bad != NULL) *bad = rows_of(a[0]);
    if (lost != NULL) *lost = te_tp_first_long(a[1]);
    for (size_t i = 0; i < n; i++) answers[i] = a[2 + i];
    free(a[0]);
    free(a[1]);
    return 1;
}

char *te_summary(const char *summary, const char *key) {
    size_t kl = strlen(key);
    for (const char *p = summary; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '\t') {
            const char *v = p + kl + 1;
            return strndup(v, strcspn(v, "\n"));
        }
    }
    return NULL;
}

long te_summary_long(const char *summary, const char *key) {
    char *v = te_summary(summary, key);
    long n = v ? atol(v) : 0;
    free(v);
    return n;
}

char *te_tp_shown_mismatch(const char *trace, const char *summary) {
    char want[128], *out, *msg = NULL;
    if (!te_tp(trace, "select (select count(*) from slice) as slices, (select count(*) from counter) as counters;",
               &out))
        return NULL;
    snprintf(want, sizeof want, "\"slices\",\"counters\"\n%ld,%ld\n",
             te_summary_long(summary, "events:TYPE_SLICE_BEGIN") + te_summary_long(summary, "events:TYPE_INSTANT"),
             te_summary_long(summary, "events:TYPE_COUNTER"));
    if (out == NULL || strcmp(out, want) != 0) {
        size_t n = strlen(want) + (out ? strlen(out) : 0) + 64;
        msg = malloc(n);
        if (msg) snprintf(msg, n, "the trace processor shows\n%sthe file holds\n%s", out ? out : "", want);
    }
    free(out);
    return msg;
}
