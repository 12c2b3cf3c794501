/*
 * te_util.c - see te_util.h.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "te_util.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    snprintf(cmd, sizeof cmd, "%s %s/tests/te/check_trace.py %s %s %s 2>&1", TRACEC_PYTHON3,
             TRACEC_SOURCE_DIR, schema_pb(), trace, flags ? flags : "");
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

#define TE_BAD_STATS_SQL                                                                                    \
    "select name, idx, severity, source, value from stats "                                                 \
    "where value > 0 and name != 'traced_buf_trace_writer_packet_loss' "                                   \
    "and (severity in ('error', 'data_loss') "                                                              \
    "or name like '%incremental_state_invalid%' or name like '%skipped%');"
#define TE_PACKET_LOSS_SQL \
    "select coalesce(sum(value), 0) from stats where name = 'traced_buf_trace_writer_packet_loss';"

/* The answer without its header line (malloc'd). */
static char *rows_of(const char *answer) {
    const char *nl = answer ? strchr(answer, '\n') : NULL;
    return strdup(nl ? nl + 1 : "");
}

char *te_tp_bad_stats(const char *trace) {
    char *out;
    if (!te_tp(trace, TE_BAD_STATS_SQL, &out)) return strdup("");
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
    q[0] = TE_BAD_STATS_SQL;
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
