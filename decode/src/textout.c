/*
 * textout.c - buffered text output with protoc's formatting of numbers and
 * strings.
 *
 * protoc (3.21) prints doubles with "%.15g", or "%.17g" when that does not
 * read back to the same value; floats with "%.6g" / "%.9g"; "inf", "-inf"
 * and "nan" as such.  Strings and bytes are C-escaped: \n \r \t \" \' \\,
 * and every other byte outside 0x20..0x7e as a 3-digit octal escape.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define OUT_CHUNK (1u << 16)

/* Aborting on out-of-memory here would be rude: a failed allocation marks
 * the output failed and keeps a small static scratch area to write into. */
static char out_scratch[OUT_CHUNK];

void tracec_i_out_init(tracec_i_out *o, tracec_write_fn write, void *ctx) {
    o->buf = NULL;
    o->len = o->cap = 0;
    o->write = write;
    o->ctx = ctx;
    o->failed = false;
}

bool tracec_i_out_flush(tracec_i_out *o) {
    if (o->len && !o->failed) {
        if (!o->write(o->ctx, o->buf, o->len)) o->failed = true;
    }
    o->len = 0;
    return !o->failed;
}

void tracec_i_out_free(tracec_i_out *o) {
    if (o->buf != out_scratch) free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}

void tracec_i_out_reserve_slow(tracec_i_out *o, size_t n) {
    if (o->buf == out_scratch) {
        o->len = 0;
        if (n <= sizeof out_scratch) return;
        o->buf = NULL;
        o->cap = 0;
    }
    if (o->len) tracec_i_out_flush(o);
    if (o->cap >= n && o->buf) return;
    size_t cap = n > OUT_CHUNK ? n : OUT_CHUNK;
    char *nb = realloc(o->buf, cap);
    if (!nb) {
        free(o->buf);
        o->failed = true;
        o->buf = out_scratch;
        o->cap = sizeof out_scratch;
        o->len = 0;
        if (n > o->cap) abort(); /* cannot happen: callers reserve small amounts */
        return;
    }
    o->buf = nb;
    o->cap = cap;
}

static const char spaces[] =
    "                                                                "
    "                                                                ";

void tracec_i_out_indent(tracec_i_out *o, int level) {
    size_t n = (size_t)level * 2;
    while (n) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        tracec_i_out_put(o, spaces, k);
        n -= k;
    }
}

void tracec_i_out_u64(tracec_i_out *o, uint64_t v) {
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    tracec_i_out_put(o, p, (size_t)(e - p));
}

void tracec_i_out_i64(tracec_i_out *o, int64_t v) {
    if (v < 0) {
        tracec_i_out_putc(o, '-');
        tracec_i_out_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        tracec_i_out_u64(o, (uint64_t)v);
    }
}

int tracec_i_format_double(char *buf, size_t cap, double v) {
    if (isnan(v)) return snprintf(buf, cap, "nan");
    if (isinf(v)) return snprintf(buf, cap, v < 0 ? "-inf" : "inf");
    int n = snprintf(buf, cap, "%.15g", v);
    if (strtod(buf, NULL) != v) n = snprintf(buf, cap, "%.17g", v);
    return n;
}

void tracec_i_out_double(tracec_i_out *o, double v) {
    char tmp[40];
    int n = tracec_i_format_double(tmp, sizeof tmp, v);
    tracec_i_out_put(o, tmp, (size_t)n);
}

void tracec_i_out_float(tracec_i_out *o, float v) {
    char tmp[40];
    int n;
    if (isnan(v)) {
        n = snprintf(tmp, sizeof tmp, "nan");
    } else if (isinf(v)) {
        n = snprintf(tmp, sizeof tmp, v < 0 ? "-inf" : "inf");
    } else {
        n = snprintf(tmp, sizeof tmp, "%.6g", (double)v);
        if (strtof(tmp, NULL) != v) n = snprintf(tmp, sizeof tmp, "%.9g", (double)v);
    }
    tracec_i_out_put(o, tmp, (size_t)n);
}

void tracec_i_out_hex(tracec_i_out *o, uint64_t v, int digits) {
    static const char hex[] = "0123456789abcdef";
    char *p = tracec_i_out_reserve(o, (size_t)digits + 2);
    p[0] = '0';
    p[1] = 'x';
    for (int i = digits - 1; i >= 0; i--) {
        p[2 + i] = hex[v & 15];
        v >>= 4;
    }
    o->len += (size_t)digits + 2;
}

/* 0: printed as is; 1: needs an escape. */
static const uint8_t needs_escape[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Writes the escape of byte `c` (which needs one) at p (4 bytes of room); returns its length. */
static size_t escape_byte(char *p, uint8_t c) {
    char e = 0;
    switch (c) {
    case '\n': e = 'n'; break;
    case '\r': e = 'r'; break;
    case '\t': e = 't'; break;
    case '"': e = '"'; break;
    case '\'': e = '\''; break;
    case '\\': e = '\\'; break;
    default:
        p[0] = '\\';
        p[1] = (char)('0' + (c >> 6));
        p[2] = (char)('0' + ((c >> 3) & 7));
        p[3] = (char)('0' + (c & 7));
        return 4;
    }
    p[0] = '\\';
    p[1] = e;
    return 2;
}

void tracec_i_out_escaped(tracec_i_out *o, const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && !needs_escape[s[j]]) j++;
        if (j > i) tracec_i_out_put(o, s + i, j - i);
        if (j == n) break;
        char *p = tracec_i_out_reserve(o, 4);
        o->len += escape_byte(p, s[j]);
        i = j + 1;
    }
}

size_t tracec_i_escape(char *dst, const uint8_t *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (needs_escape[s[i]])
            k += escape_byte(dst + k, s[i]);
        else
            dst[k++] = (char)s[i];
    }
    return k;
}

bool tracec_i_utf8_text(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            if (c == 0) return false;
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < len) return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += len;
    }
    return true;
}

bool tracec_i_bytes_append(tracec_bytes *b, const void *data, size_t n) {
    if (n == 0) return true;
    if (b->cap - b->size < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->size < n) {
            if (cap > SIZE_MAX / 2) return false;
            cap *= 2;
        }
        uint8_t *nd = realloc(b->data, cap);
        if (!nd) return false;
        b->data = nd;
        b->cap = cap;
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return true;
}

bool tracec_i_write_bytes(void *ctx, const void *data, size_t size) {
    return tracec_i_bytes_append((tracec_bytes *)ctx, data, size);
}

bool tracec_write_bytes(void *bytes, const void *data, size_t size) {
    return tracec_i_bytes_append((tracec_bytes *)bytes, data, size);
}

bool tracec_write_file(void *file, const void *data, size_t size) {
    return fwrite(data, 1, size, (FILE *)file) == size;
}
