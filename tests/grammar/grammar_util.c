/* grammar_util.c - see grammar_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "grammar_util.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tp_protoc(const char *mode, const char *proto, const void *in, size_t in_len, char **out,
              size_t *out_len) {
    char *dir = tt_tmpdir();
    if (dir == NULL) return -1;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s -I%s -I%s/protos -I%s %s", TRACEC_PROTOC, mode, TP_PROTO_DIR,
             TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE, proto);
    tt_buf o = {0}, e = {0};
    int rc = tt_run(dir, cmd, in, in_len, &o, &e);
    tt_tmpdir_remove(dir);
    tt_buf *keep = rc == 0 ? &o : &e;
    *out = keep->data;
    *out_len = keep->size;
    tt_buf_free(rc == 0 ? &e : &o);
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
