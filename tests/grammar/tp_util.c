/* tp_util.c - see tp_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "tp_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    b[n] = '\0';
    *len = n;
    return b;
}

int tp_protoc(const char *mode, const char *proto, const void *in, size_t in_len, char **out,
              size_t *out_len) {
    char in_path[] = "/tmp/tp-in-XXXXXX", out_path[] = "/tmp/tp-out-XXXXXX",
         err_path[] = "/tmp/tp-err-XXXXXX";
    int fi = mkstemp(in_path), fo = mkstemp(out_path), fe = mkstemp(err_path);
    if (write(fi, in, in_len) != (ssize_t)in_len) return -1;
    close(fi);
    close(fo);
    close(fe);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s -I%s -I%s/protos -I%s %s < %s > %s 2> %s", TRACEC_PROTOC, mode,
             TP_PROTO_DIR, TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE, proto, in_path, out_path,
             err_path);
    int rc = system(cmd);
    rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    *out = slurp(rc == 0 ? out_path : err_path, out_len);
    unlink(in_path);
    unlink(out_path);
    unlink(err_path);
    return rc;
}

const char *tp_hex(const void *data, size_t len) {
    static char buf[8192];
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%02x ", ((const uint8_t *)data)[i]);
    buf[n] = '\0';
    return buf;
}

tracec_pool *tp_test_pool(void) {
    static tracec_pool *pool;
    if (pool == NULL) {
        tracec_error err;
        pool = tracec_pool_new();
        if (tracec_pool_add_set_file(pool, TP_SET, &err) != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "%s\n", err.msg);
            abort();
        }
    }
    return pool;
}
