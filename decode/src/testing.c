/*
 * testing.c - support for the Criterion assertions of tracec/testing.h.
 *
 * Reports live in one static buffer replaced on each call, so an assertion
 * that aborts its test leaves nothing leaked behind (the buffer is still
 * reachable for leak checkers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "tracec/diff.h"
#include "tracec/testing.h"

static tracec_pool *default_pool;
static tracec_bytes report_buf;

tracec_pool *tracec_testing_default_pool(void) {
    if (default_pool) return default_pool;
    tracec_pool *p = tracec_pool_new();
    if (!p) return NULL;
    tracec_error err;
    (void)tracec_pool_add_registry(p, &err);
    if (tracec_pool_add_builtin_schema(p, &err) != TRACEC_STATUS_SUCCESS) {
        tracec_pool_free(p);
        return NULL;
    }
    default_pool = p;
    return p;
}

static const char *report_set(const char *msg, size_t n) {
    report_buf.size = 0;
    if (!tracec_i_bytes_append(&report_buf, msg, n) || !tracec_i_bytes_append(&report_buf, "", 1))
        return "(out of memory while building the report)";
    return (const char *)report_buf.data;
}

static tracec_bytes conflicts_text;

const char *tracec_testing_conflicts(const tracec_pool *pool) {
    if (!pool) pool = default_pool;
    size_t n = tracec_pool_conflict_count(pool);
    if (n == 0) return NULL;
    conflicts_text.size = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const char *c = tracec_pool_conflict(pool, i);
        ok = ok && tracec_i_bytes_append(&conflicts_text, "descriptor conflict: ", 21) &&
             tracec_i_bytes_append(&conflicts_text, c, strlen(c)) &&
             tracec_i_bytes_append(&conflicts_text, "\n", 1);
    }
    if (!ok || !tracec_i_bytes_append(&conflicts_text, "", 1)) return "(out of memory)";
    return (const char *)conflicts_text.data;
}

/* Prints the conflicts of `pool` not printed yet on stderr (each once per process and pool). */
static void warn_conflicts(const tracec_pool *pool) {
    static const tracec_pool *last;
    static size_t printed;
    if (pool != last) {
        last = pool;
        printed = 0;
    }
    for (; printed < tracec_pool_conflict_count(pool); printed++)
        fprintf(stderr, "tracec: warning: descriptor conflict: %s\n", tracec_pool_conflict(pool, printed));
}

static const char *report_finish(const tracec_pool *pool, tracec_status_t s, bool equal,
                                          tracec_bytes *diff, const tracec_error *err) {
    warn_conflicts(pool);
    if (s == TRACEC_STATUS_SUCCESS && equal) {
        free(diff->data);
        return NULL;
    }
    report_buf.size = 0;
    if (s != TRACEC_STATUS_SUCCESS) {
        tracec_i_bytes_append(&report_buf, err->msg, strlen(err->msg));
        tracec_i_bytes_append(&report_buf, "\n", 1);
    }
    if (diff->size) tracec_i_bytes_append(&report_buf, diff->data, diff->size);
    /* A conflict may be why a name is not the expected one: say so next to the diff. */
    const char *conflicts = tracec_testing_conflicts(pool);
    if (conflicts) tracec_i_bytes_append(&report_buf, conflicts, strlen(conflicts));
    free(diff->data);
    if (!tracec_i_bytes_append(&report_buf, "", 1)) return "(out of memory while building the report)";
    return (const char *)report_buf.data;
}

const char *tracec_testing_check_trace(const void *data, size_t size, const char *expected_text,
                                       tracec_pool *pool, const char *type_name) {
    if (!pool) pool = tracec_testing_default_pool();
    if (!pool) return report_set("cannot build the default descriptor pool", 40);
    if (!expected_text) expected_text = "";
    bool equal = false;
    tracec_bytes diff = TRACEC_BYTES_INIT;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_compare_text_binary(pool, type_name, expected_text, strlen(expected_text),
                                                   "expected", data, size, "actual", &equal, &diff, &err);
    return report_finish(pool, s, equal, &diff, &err);
}

const char *tracec_testing_check_trace_match(const void *data, size_t size, const char *expected_text,
                                             tracec_pool *pool, const char *type_name, const tracec_match *match) {
    if (!pool) pool = tracec_testing_default_pool();
    if (!pool) return report_set("cannot build the default descriptor pool", 40);
    if (!expected_text) expected_text = "";
    bool equal = false;
    tracec_bytes diff = TRACEC_BYTES_INIT;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_i_compare_filtered(pool, type_name, expected_text, strlen(expected_text), "expected",
                                                  data, size, "actual", match ? tracec_i_match_filter : NULL, match,
                                                  &equal, &diff, &err);
    return report_finish(pool, s, equal, &diff, &err);
}

const char *tracec_testing_check_file(const char *path, const char *expected_text,
                                      tracec_pool *pool, const char *type_name) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        char msg[1200];
        int n = snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        return report_set(msg, (size_t)n);
    }
    tracec_bytes b = TRACEC_BYTES_INIT;
    char buf[1 << 15];
    size_t n;
    bool ok = true;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) ok = ok && tracec_i_bytes_append(&b, buf, n);
    fclose(f);
    if (!ok) {
        free(b.data);
        return report_set("out of memory", 13);
    }
    const char *r = tracec_testing_check_trace(b.data, b.size, expected_text, pool, type_name);
    free(b.data);
    return r;
}

const char *tracec_testing_check_text(const char *actual_text, const char *expected_text,
                                      tracec_pool *pool, const char *type_name) {
    if (!pool) pool = tracec_testing_default_pool();
    if (!pool) return report_set("cannot build the default descriptor pool", 40);
    if (!type_name) type_name = TRACEC_DEFAULT_TYPE;
    tracec_bytes bin = TRACEC_BYTES_INIT;
    tracec_error err;
    err.msg[0] = 0;
    tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
    to.file_name = "actual";
    tracec_status_t s = tracec_text_encode_trace(pool, type_name, actual_text ? actual_text : "",
                                                 actual_text ? strlen(actual_text) : 0, &to, &bin, &err);
    if (s != TRACEC_STATUS_SUCCESS) {
        tracec_bytes_free(&bin);
        return report_set(err.msg, strlen(err.msg));
    }
    const char *r = tracec_testing_check_trace(bin.data, bin.size, expected_text, pool, type_name);
    tracec_bytes_free(&bin);
    return r;
}
