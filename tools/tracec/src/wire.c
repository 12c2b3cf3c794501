/*
 * wire.c - bounds-checked reading of the protobuf wire format, gunzip, and
 * error formatting.  Every function here treats its input as hostile.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "internal.h"

int tracec_i_wire_type_of(tracec_field_type type) {
    switch (type) {
    case TRACEC_TYPE_DOUBLE:
    case TRACEC_TYPE_FIXED64:
    case TRACEC_TYPE_SFIXED64:
        return TRACEC_WIRE_FIXED64;
    case TRACEC_TYPE_FLOAT:
    case TRACEC_TYPE_FIXED32:
    case TRACEC_TYPE_SFIXED32:
        return TRACEC_WIRE_FIXED32;
    case TRACEC_TYPE_STRING:
    case TRACEC_TYPE_BYTES:
    case TRACEC_TYPE_MESSAGE:
        return TRACEC_WIRE_LEN;
    case TRACEC_TYPE_GROUP:
        return TRACEC_WIRE_SGROUP;
    default:
        return TRACEC_WIRE_VARINT;
    }
}

const char *tracec_i_skip_value(const uint8_t **pp, const uint8_t *end, uint32_t number, int wt,
                          int depth_left, const uint8_t **group_end_tag) {
    const uint8_t *p = *pp;
    uint64_t v;
    switch (wt) {
    case TRACEC_WIRE_VARINT: {
        int r = tracec_wire_read_varint(&p, end, &v);
        if (r == TRACEC_VARINT_TRUNCATED) return "truncated varint";
        if (r == TRACEC_VARINT_TOO_LONG) return "varint longer than 10 bytes";
        break;
    }
    case TRACEC_WIRE_FIXED64:
        if ((size_t)(end - p) < 8) return "truncated fixed64 value";
        p += 8;
        break;
    case TRACEC_WIRE_FIXED32:
        if ((size_t)(end - p) < 4) return "truncated fixed32 value";
        p += 4;
        break;
    case TRACEC_WIRE_LEN: {
        int r = tracec_wire_read_varint(&p, end, &v);
        if (r == TRACEC_VARINT_TRUNCATED) return "truncated length";
        if (r == TRACEC_VARINT_TOO_LONG) return "length varint longer than 10 bytes";
        if (v > (uint64_t)(end - p)) return "length runs past the end of the enclosing message";
        p += v;
        break;
    }
    case TRACEC_WIRE_SGROUP: {
        if (depth_left <= 0) return "groups nested deeper than the limit";
        for (;;) {
            const uint8_t *tag_at = p;
            uint64_t tag;
            int r = tracec_wire_read_varint(&p, end, &tag);
            if (r == TRACEC_VARINT_TRUNCATED) {
                *pp = tag_at;
                return "group not terminated by its end-group tag";
            }
            if (r == TRACEC_VARINT_TOO_LONG || tag > UINT32_MAX) {
                *pp = tag_at;
                return "invalid tag";
            }
            uint32_t n = (uint32_t)(tag >> 3);
            int w = (int)(tag & 7);
            if (n == 0) {
                *pp = tag_at;
                return "invalid field number 0";
            }
            if (w == TRACEC_WIRE_EGROUP) {
                if (n != number) {
                    *pp = tag_at;
                    return "end-group tag does not match its start-group tag";
                }
                if (group_end_tag) *group_end_tag = tag_at;
                break;
            }
            if (w > TRACEC_WIRE_FIXED32) {
                *pp = tag_at;
                return "invalid wire type";
            }
            const char *e = tracec_i_skip_value(&p, end, n, w, depth_left - 1, NULL);
            if (e) {
                *pp = p;
                return e;
            }
        }
        break;
    }
    case TRACEC_WIRE_EGROUP:
        return "unexpected end-group tag";
    default:
        return "invalid wire type";
    }
    *pp = p;
    return NULL;
}

bool tracec_i_wire_parses(const uint8_t *p, size_t len, int budget) {
    const uint8_t *end = p + len;
    while (p < end) {
        uint64_t tag;
        if (tracec_wire_read_varint(&p, end, &tag) != TRACEC_VARINT_OK || tag > UINT32_MAX) return false;
        uint32_t n = (uint32_t)(tag >> 3);
        int wt = (int)(tag & 7);
        if (n == 0 || wt == TRACEC_WIRE_EGROUP || wt > TRACEC_WIRE_FIXED32) return false;
        if (tracec_i_skip_value(&p, end, n, wt, budget, NULL)) return false;
    }
    return true;
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
