/* decode_util.c - see decode_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "decode_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>

const char *tt_protoc_args(const char *extra) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "-I%s/protos -I%s/test_extensions -I%s/tests/decode/data -I%s "
             "perfetto/trace/trace.proto test_extensions.proto %s",
             TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE,
             extra ? extra : "");
    return buf;
}

bool tt_protoc_encode(const char *dir, const char *extra, const char *type, const char *text, tt_buf *bin) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --encode=%s %s", TRACEC_PROTOC, type ? type : "perfetto.protos.Trace",
             tt_protoc_args(extra));
    tt_buf err = {0};
    int rc = tt_run(dir, cmd, text, strlen(text), bin, &err);
    if (rc != 0) fprintf(stderr, "protoc --encode failed (%d): %s\n", rc, err.data ? err.data : "");
    tt_buf_free(&err);
    return rc == 0;
}

bool tt_protoc_decode(const char *dir, const char *extra, const char *type, const void *data, size_t n,
                      tt_buf *text) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --decode=%s %s", TRACEC_PROTOC, type ? type : "perfetto.protos.Trace",
             tt_protoc_args(extra));
    tt_buf err = {0};
    int rc = tt_run(dir, cmd, data, n, text, &err);
    if (rc != 0) fprintf(stderr, "protoc --decode failed (%d): %s\n", rc, err.data ? err.data : "");
    tt_buf_free(&err);
    return rc == 0;
}

tracec_pool *tt_builtin_pool(void) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err;
    if (p && tracec_pool_add_builtin_schema(p, &err) != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "builtin schema: %s\n", err.msg);
        tracec_pool_free(p);
        return NULL;
    }
    return p;
}

bool tt_extensions_set(const char *dir, tt_buf *set) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s -I%s/protos -I%s/test_extensions -I%s --descriptor_set_out=ext.desc test_extensions.proto",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE);
    if (tt_run(dir, cmd, NULL, 0, NULL, NULL) != 0) return false;
    char path[600];
    snprintf(path, sizeof path, "%s/ext.desc", dir);
    return tt_read_file(path, set);
}

static size_t tt_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static bool tt_gzip(const void *in, size_t n, uint8_t **out, size_t *out_n) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    *out = malloc(cap);
    if (!*out) return false;
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    int r = deflate(&z, Z_FINISH);
    *out_n = cap - z.avail_out;
    deflateEnd(&z);
    return r == Z_STREAM_END;
}

bool tt_append_extension_packet(tt_buf *trace, const void *set, size_t n, bool gzip) {
    uint8_t *payload = (uint8_t *)(uintptr_t)set;
    size_t pn = n;
    if (gzip && !tt_gzip(set, n, &payload, &pn)) return false;
    /* ExtensionDescriptor { extension_set (1) | extension_set_gzip (2) } */
    uint8_t hdr[48];
    size_t h = 0;
    size_t ed_len = 1 + tt_varint(hdr, pn) + pn;
    uint8_t tmp[16];
    size_t pkt_len = 2 + tt_varint(tmp, ed_len) + ed_len; /* tag 72 is 2 bytes: 0xC2 0x04 */
    hdr[h++] = 0x0A;
    h += tt_varint(hdr + h, pkt_len);
    hdr[h++] = 0xC2;
    hdr[h++] = 0x04;
    h += tt_varint(hdr + h, ed_len);
    hdr[h++] = gzip ? 0x12 : 0x0A;
    h += tt_varint(hdr + h, pn);
    char *nd = realloc(trace->data, trace->size + h + pn + 1);
    if (!nd) return false;
    memcpy(nd + trace->size, hdr, h);
    memcpy(nd + trace->size + h, payload, pn);
    trace->data = nd;
    trace->cap = 0;
    trace->size += h + pn;
    nd[trace->size] = 0;
    if (payload != set) free(payload);
    return true;
}
