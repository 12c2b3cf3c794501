/*
 * wire.c - bounds-checked reading of the protobuf wire format, gunzip, and
 * error formatting.  Every function here treats its input as hostile.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "internal.h"

bool tracec_i_wire_parses(const uint8_t *p, size_t len, int budget) {
    const uint8_t *end = p + len, *at;
    const char *what;
    tracec_wire_field f;
    int k;
    while ((k = tracec_wire_read_field(&p, end, budget, &f, &what, &at)) > 0)
        if (f.type == TRACEC_WIRE_EGROUP) return false;
    return k == 0;
}

bool tracec_i_packed_parses(int wt, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    if (wt != TRACEC_WIRE_VARINT) return len % (wt == TRACEC_WIRE_FIXED64 ? 8 : 4) == 0;
    uint64_t v;
    while (p < end)
        if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return false;
    return true;
}

const char *tracec_i_gunzip(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) return "zlib initialisation failed";
    size_t cap = size * 4 + 256, len = 0;
    if (cap > limit) cap = limit;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        inflateEnd(&z);
        return "out of memory";
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    const char *errmsg = NULL;
    size_t in_left = size;
    for (;;) {
        if (len == cap) {
            if (cap >= limit) {
                errmsg = "gzip data inflates beyond the size limit";
                break;
            }
            size_t ncap = cap * 2 > limit ? limit : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                errmsg = "out of memory";
                break;
            }
            buf = nb;
            cap = ncap;
        }
        uInt chunk_in = in_left > 0x40000000u ? 0x40000000u : (uInt)in_left;
        size_t room = cap - len;
        uInt chunk_out = room > 0x40000000u ? 0x40000000u : (uInt)room;
        z.avail_in = chunk_in;
        z.next_out = buf + len;
        z.avail_out = chunk_out;
        int r = inflate(&z, Z_NO_FLUSH);
        in_left -= chunk_in - z.avail_in;
        len += chunk_out - z.avail_out;
        if (r == Z_STREAM_END) break;
        if (r == Z_BUF_ERROR && in_left == 0 && z.avail_in == 0) {
            errmsg = "truncated gzip data";
            break;
        }
        if (r != Z_OK && r != Z_BUF_ERROR) {
            errmsg = "invalid gzip data";
            break;
        }
    }
    inflateEnd(&z);
    if (errmsg) {
        free(buf);
        return errmsg;
    }
    *out = buf;
    *out_size = len;
    return NULL;
}

void tracec_i_set_error(tracec_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}
