/*
 * diff.c - unified line diffs (Myers' O(ND) algorithm).
 *
 * The common prefix and suffix are stripped first (two traces that differ
 * usually differ in a few places), then the shortest edit script of the
 * middle is found by the greedy forward algorithm, keeping the frontier of
 * each step for the backtrack.  That costs D^2 integers for D differences,
 * so above MAX_D differences the middle is reported as replaced
 * wholesale: still a correct diff, just not a minimal one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "tracec/diff.h"

#define CONTEXT_LINES 3
#define MAX_D 2048

typedef struct line {
    const char *s;
    size_t len; /* without the newline */
    uint64_t hash;
} line;

enum { OP_EQ = 0, OP_DEL = 1, OP_INS = 2 };

static size_t split(const char *t, size_t n, line **out) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] == '\n') count++;
    if (n && t[n - 1] != '\n') count++;
    line *l = malloc((count ? count : 1) * sizeof *l);
    if (!l) return SIZE_MAX;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n ? i > start : t[i] == '\n') {
            uint64_t h = 1469598103934665603ULL;
            for (size_t j = start; j < i; j++) h = (h ^ (uint8_t)t[j]) * 1099511628211ULL;
            l[k].s = t + start;
            l[k].len = i - start;
            l[k].hash = h;
            k++;
            start = i + 1;
        }
    }
    *out = l;
    return k;
}

static inline bool line_eq(const line *a, const line *b) {
    return a->hash == b->hash && a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/*
 * Edit script of a[0..n) -> b[0..m) into ops (n + m entries at most);
 * returns the count, or SIZE_MAX when D exceeds the limit or memory runs out.
 */
static size_t myers(const line *a, size_t n, const line *b, size_t m, uint8_t *ops) {
    long N = (long)n, M = (long)m, max = N + M;
    if (max == 0) return 0;
    long dmax = max < MAX_D ? max : MAX_D;
    long *v = malloc((size_t)(2 * max + 3) * sizeof *v);
    /* trace[d] holds V[-d..d] after step d, at offset d*d. */
    long *trace = malloc((size_t)(dmax + 1) * (size_t)(dmax + 1) * sizeof *trace);
    if (!v || !trace) {
        free(v);
        free(trace);
        return SIZE_MAX;
    }
    long off = max + 1;
    v[off + 1] = 0;
    long found = -1;
    for (long d = 0; d <= dmax && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1];
            else
                x = v[off + k - 1] + 1;
            long y = x - k;
            while (x < N && y < M && line_eq(&a[x], &b[y])) x++, y++;
            v[off + k] = x;
            if (x >= N && y >= M) found = d;
        }
        memcpy(trace + d * d, v + off - d, (size_t)(2 * d + 1) * sizeof *v);
    }
    if (found < 0) {
        free(v);
        free(trace);
        return SIZE_MAX;
    }
    /* Backtrack from (N, M), writing ops from the end. */
    size_t nops = 0;
    uint8_t *rev = malloc((size_t)max + 1);
    if (!rev) {
        free(v);
        free(trace);
        return SIZE_MAX;
    }
    long x = N, y = M;
    for (long d = found; d > 0; d--) {
        const long *pv = trace + (d - 1) * (d - 1) + (d - 1); /* pv[k] for k in [-(d-1), d-1] */
        long k = x - y, pk;
        if (k == -d || (k != d && pv[k - 1] < pv[k + 1]))
            pk = k + 1;
        else
            pk = k - 1;
        long px = pv[pk], py = px - pk;
        long mx = pk == k + 1 ? px : px + 1, my = mx - k;
        while (x > mx && y > my) {
            rev[nops++] = OP_EQ;
            x--, y--;
        }
        rev[nops++] = pk == k + 1 ? OP_INS : OP_DEL;
        x = px;
        y = py;
    }
    while (x > 0 && y > 0) {
        rev[nops++] = OP_EQ;
        x--, y--;
    }
    for (size_t i = 0; i < nops; i++) ops[i] = rev[nops - 1 - i];
    free(rev);
    free(v);
    free(trace);
    return nops;
}

static bool put_range(tracec_bytes *out, char sign, size_t start, size_t len) {
    char tmp[64];
    int n;
    if (len == 1)
        n = snprintf(tmp, sizeof tmp, "%c%zu", sign, start + 1);
    else
        n = snprintf(tmp, sizeof tmp, "%c%zu,%zu", sign, len ? start + 1 : start, len);
    return tracec_i_bytes_append(out, tmp, (size_t)n);
}

static bool put_line(tracec_bytes *out, char c, const line *l) {
    return tracec_i_bytes_append(out, &c, 1) && tracec_i_bytes_append(out, l->s, l->len) &&
           tracec_i_bytes_append(out, "\n", 1);
}

bool tracec_diff_lines(const char *a, size_t alen, const char *b, size_t blen, const char *a_label,
                       const char *b_label, tracec_bytes *out) {
    if (alen == blen && memcmp(a, b, alen) == 0) return true;
    line *la = NULL, *lb = NULL;
    size_t n = split(a, alen, &la), m = split(b, blen, &lb);
    uint8_t *ops = NULL;
    if (n == SIZE_MAX || m == SIZE_MAX) goto oom;
    size_t pre = 0;
    while (pre < n && pre < m && line_eq(&la[pre], &lb[pre])) pre++;
    size_t suf = 0;
    while (suf < n - pre && suf < m - pre && line_eq(&la[n - 1 - suf], &lb[m - 1 - suf])) suf++;
    ops = malloc(n + m + 1);
    if (!ops) goto oom;
    size_t nops = 0;
    for (size_t i = 0; i < pre; i++) ops[nops++] = OP_EQ;
    size_t mid = myers(la + pre, n - pre - suf, lb + pre, m - pre - suf, ops + nops);
    if (mid == SIZE_MAX) {
        for (size_t i = 0; i < n - pre - suf; i++) ops[nops++] = OP_DEL;
        for (size_t i = 0; i < m - pre - suf; i++) ops[nops++] = OP_INS;
    } else {
        nops += mid;
    }
    for (size_t i = 0; i < suf; i++) ops[nops++] = OP_EQ;

    if (out) {
        tracec_i_bytes_append(out, "--- ", 4);
        tracec_i_bytes_append(out, a_label ? a_label : "expected", strlen(a_label ? a_label : "expected"));
        tracec_i_bytes_append(out, "\n+++ ", 5);
        tracec_i_bytes_append(out, b_label ? b_label : "actual", strlen(b_label ? b_label : "actual"));
        tracec_i_bytes_append(out, "\n", 1);
        /* Walk the ops; ai/bi are the line indices before op i. */
        size_t i = 0, ai = 0, bi = 0;
        while (i < nops) {
            if (ops[i] == OP_EQ) {
                i++, ai++, bi++;
                continue;
            }
            /* A hunk: back up CONTEXT_LINES lines, then extend while changes are near. */
            size_t back = 0;
            while (back < CONTEXT_LINES && back < i && ops[i - back - 1] == OP_EQ) back++;
            size_t hs = i - back, has = ai - back, hbs = bi - back;
            size_t j = i, eq_run = 0, last_change = i;
            while (j < nops) {
                if (ops[j] == OP_EQ) {
                    eq_run++;
                    if (eq_run > 2 * CONTEXT_LINES) break;
                } else {
                    eq_run = 0;
                    last_change = j;
                }
                j++;
            }
            size_t he = last_change + 1;
            size_t tail = 0;
            while (tail < CONTEXT_LINES && he + tail < nops && ops[he + tail] == OP_EQ) tail++;
            he += tail;
            size_t alines = 0, blines = 0;
            for (size_t k = hs; k < he; k++) {
                if (ops[k] != OP_INS) alines++;
                if (ops[k] != OP_DEL) blines++;
            }
            tracec_i_bytes_append(out, "@@ ", 3);
            put_range(out, '-', has, alines);
            tracec_i_bytes_append(out, " ", 1);
            put_range(out, '+', hbs, blines);
            tracec_i_bytes_append(out, " @@\n", 4);
            size_t x = has, y = hbs;
            for (size_t k = hs; k < he; k++) {
                if (ops[k] == OP_EQ)
                    put_line(out, ' ', &la[x++]), y++;
                else if (ops[k] == OP_DEL)
                    put_line(out, '-', &la[x++]);
                else
                    put_line(out, '+', &lb[y++]);
            }
            /* Advance past the hunk. */
            for (; i < he; i++) {
                if (ops[i] != OP_INS) ai++;
                if (ops[i] != OP_DEL) bi++;
            }
        }
    }
    free(ops);
    free(la);
    free(lb);
    return false;
oom:
    free(ops);
    free(la);
    free(lb);
    if (out) {
        const char *msg = "(the texts differ; out of memory while computing the diff)\n";
        tracec_i_bytes_append(out, msg, strlen(msg));
    }
    return false;
}
