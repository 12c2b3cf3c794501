/* protoc_oracle.c - see protoc_oracle.h. */
#define _POSIX_C_SOURCE 200809L
#include "protoc_oracle.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *oracle_run(const char *cmd, int *status) {
    tt_buf out = {0};
    int st = tt_capture(cmd, &out);
    if (status) *status = st;
    return out.data;
}

char *oracle_decode(const char *includes, const char *proto, const char *type, const uint8_t *data,
                    size_t size, int *status) {
    char path[] = "/tmp/tracec_oracle_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    size_t off = 0;
    while (off < size) {
        ssize_t k = write(fd, data + off, size - off);
        if (k <= 0) break;
        off += (size_t)k;
    }
    close(fd);
    size_t cap = strlen(includes) * 2 + strlen(proto) + strlen(type) + 512;
    char *cmd = malloc(cap);
    int k = snprintf(cmd, cap, "%s --decode=%s", TRACEC_PROTOC, type);
    char *incs = strdup(includes);
    for (char *save = NULL, *d = strtok_r(incs, ":", &save); d; d = strtok_r(NULL, ":", &save))
        k += snprintf(cmd + k, cap - (size_t)k, " -I%s", d);
    snprintf(cmd + k, cap - (size_t)k, " %s < %s 2>&1", proto, path);
    char *out = oracle_run(cmd, status);
    unlink(path);
    free(incs);
    free(cmd);
    return out;
}
