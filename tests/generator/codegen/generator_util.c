/* generator_util.c - see generator_util.h. */
#define _GNU_SOURCE
#include "generator_util.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char cg_tmp[4096];

void cg_tmp_setup(void) {
    const char *base = getenv("TMPDIR");
    snprintf(cg_tmp, sizeof cg_tmp, "%s/tracec_cg_XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(cg_tmp), "mkdtemp %s: %s", cg_tmp, strerror(errno));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void cg_tmp_teardown(void) {
    if (cg_tmp[0] != '\0') nftw(cg_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    cg_tmp[0] = '\0';
}

char *cg_fmt(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0, "out of memory");
    return s;
}

char *cg_run(int *status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    int n = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0, "out of memory");
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_assert_not_null(out, "cannot run: %s", cmd);
    free(cmd);
    if (status) *status = st;
    return out;
}

char *cg_read(const char *path, size_t *len) {
    tt_buf b = {0};
    if (!tt_read_file(path, &b)) return NULL;
    if (len) *len = b.size;
    return b.data;
}

static void mkdirs_for(const char *path) {
    char *d = strdup(path);
    for (char *p = d + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(d, 0777);
        *p = '/';
    }
    free(d);
}

void cg_write(const char *path, const void *data, size_t len) {
    mkdirs_for(path);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s: %s", path, strerror(errno));
    size_t w = fwrite(data, 1, len, f);
    int c = fclose(f);
    cr_assert(w == len && c == 0, "cannot write %s", path);
}

void cg_write_text(const char *path, const char *text) { cg_write(path, text, strlen(text)); }

char *cg_diff_files(const char *a, const char *b) {
    return cg_run(NULL, "diff -u '%s' '%s' 2>&1", a, b);
}

char *cg_diff(const char *label_a, const char *a, const char *label_b, const char *b) {
    char *pa = cg_fmt("%s/.diff_a", cg_tmp), *pb = cg_fmt("%s/.diff_b", cg_tmp);
    cg_write_text(pa, a);
    cg_write_text(pb, b);
    char *out = cg_run(NULL, "diff -u --label '%s' --label '%s' '%s' '%s' 2>&1", label_a, label_b, pa, pb);
    unlink(pa);
    unlink(pb);
    free(pa);
    free(pb);
    return out;
}

char *cg_hex(const uint8_t *p, size_t n, size_t limit) {
    size_t k = n < limit ? n : limit;
    char *s = malloc(k * 3 + 8);
    size_t o = 0;
    for (size_t i = 0; i < k; i++) o += (size_t)sprintf(s + o, i ? " %02x" : "%02x", p[i]);
    strcpy(s + o, n > limit ? " ..." : "");
    return s;
}

int cg_have(const char *prog) {
    int st = -1;
    free(cg_run(&st, "command -v '%s' >/dev/null 2>&1", prog));
    return st == 0;
}

char *cg_list_files(const char *dir, const char *suffix, size_t *count) {
    int st = -1;
    char *out;
    if (suffix)
        out = cg_run(&st, "cd '%s' 2>/dev/null && find . -type f -name '*%s' | sed 's|^\\./||' | LC_ALL=C sort", dir,
                     suffix);
    else
        out = cg_run(&st, "cd '%s' 2>/dev/null && find . -type f | sed 's|^\\./||' | LC_ALL=C sort", dir);
    if (st != 0) out[0] = '\0';
    size_t n = 0;
    for (const char *p = out; *p; p++) n += *p == '\n';
    if (count) *count = n;
    return out;
}
