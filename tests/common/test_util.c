/* test_util.c - see test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void tt_buf_free(tt_buf *b) {
    free(b->data);
    b->data = NULL;
    b->size = 0;
    b->cap = 0;
}

bool tt_buf_append(tt_buf *b, const void *data, size_t n) {
    char *nd = b->data;
    if (b->size + n + 1 > b->cap) { /* doubling: reading a large file stays linear */
        size_t cap = b->cap > 64 ? b->cap : 64;
        while (cap < b->size + n + 1) cap *= 2;
        nd = realloc(b->data, cap);
        if (!nd) return false;
        b->cap = cap;
    }
    if (n) memcpy(nd + b->size, data, n);
    b->data = nd;
    b->size += n;
    nd[b->size] = 0;
    return true;
}

bool tt_read_fd(int fd, tt_buf *out) {
    tt_buf got = {0};
    if (!tt_buf_append(&got, "", 0)) return false;
    char chunk[4096];
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k == 0) break;
        if (k < 0) {
            if (errno == EINTR) continue;
            tt_buf_free(&got);
            return false;
        }
        if (!tt_buf_append(&got, chunk, (size_t)k)) {
            tt_buf_free(&got);
            return false;
        }
    }
    free(out->data); /* a buffer may be reused for several reads */
    *out = got;
    return true;
}

bool tt_read_file(const char *path, tt_buf *out) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool ok = tt_read_fd(fd, out);
    close(fd);
    return ok;
}

bool tt_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = size == 0 || fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

char *tt_tmpdir(void) {
    char *d = strdup("/tmp/tracec-test-XXXXXX");
    if (d && !mkdtemp(d)) {
        free(d);
        return NULL;
    }
    return d;
}

void tt_tmpdir_remove(char *dir) {
    if (!dir) return;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
}

int tt_run(const char *dir, const char *cmd, const void *in, size_t in_len, tt_buf *out, tt_buf *err) {
    char inp[600], outp[600], errp[600];
    snprintf(inp, sizeof inp, "%s/.stdin", dir);
    snprintf(outp, sizeof outp, "%s/.stdout", dir);
    snprintf(errp, sizeof errp, "%s/.stderr", dir);
    if (!tt_write_file(inp, in ? in : "", in ? in_len : 0)) return -1;
    size_t n = strlen(cmd) + 3 * sizeof inp + 64;
    char *full = malloc(n);
    if (!full) return -1;
    snprintf(full, n, "cd '%s' && ( %s ) < '%s' > '%s' 2> '%s'", dir, cmd, inp, outp, errp);
    int st = system(full);
    free(full);
    if (out && !tt_read_file(outp, out)) return -1;
    if (err && !tt_read_file(errp, err)) return -1;
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

int tt_capture(const char *cmd, tt_buf *out) {
    FILE *p = popen(cmd, "r");
    if (p == NULL) return -1;
    bool ok = tt_read_fd(fileno(p), out);
    int st = pclose(p);
    if (!ok || st == -1) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

const char *tt_trace_processor(void) {
    static const char path[] = TRACEC_TRACE_PROCESSOR;
    return path[0] != '\0' && access(path, X_OK) == 0 ? path : NULL;
}
