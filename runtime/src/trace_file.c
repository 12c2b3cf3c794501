/*
 * trace_file.c - the Perfetto trace file writer.
 *
 * Memory layout of the staging buffer:
 *
 *     buf              w.base            w.ptr           w.end
 *      |  accepted       |  open packet    |   free        |
 *      |  packets        |  (0x0A, len4,   |               |
 *      |  not yet written|   body so far)  |               |
 *
 * grow() first writes the accepted packets out (file traces), moves the
 * open packet to the front, then doubles the buffer if that is not enough.
 */
#define _POSIX_C_SOURCE 200809L
#include "tracec/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEC_I_FILE_INITIAL (64u * 1024u)
#define TRACEC_I_FILE_FLUSH_AT (256u * 1024u)

struct tracec_trace_file {
    tracec_writer w;
    uint8_t *buf;
    size_t cap;
    int fd; /* -1 for memory traces */
    bool in_packet;
    uint64_t packets;
    uint64_t dropped;
    tracec_status_t io_status;
};

static tracec_status_t write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return TRACEC_STATUS_IO_ERROR;
        }
        p += k;
        n -= (size_t)k;
    }
    return TRACEC_STATUS_SUCCESS;
}

/* Writes the accepted packets [buf, upto) out and moves [upto, w.ptr) to the front. */
static tracec_status_t drain(tracec_trace_file *f, uint8_t *upto) {
    if (f->fd < 0 || upto == f->buf) return TRACEC_STATUS_SUCCESS;
    tracec_status_t s = write_all(f->fd, f->buf, (size_t)(upto - f->buf));
    if (s != TRACEC_STATUS_SUCCESS) {
        f->io_status = s;
        return s;
    }
    size_t keep = (size_t)(f->w.ptr - upto);
    size_t base_off = (size_t)(f->w.base - upto);
    memmove(f->buf, upto, keep);
    f->w.base = f->buf + base_off;
    f->w.ptr = f->buf + keep;
    return TRACEC_STATUS_SUCCESS;
}

static bool file_grow(tracec_writer *w, size_t need) {
    tracec_trace_file *f = (tracec_trace_file *)w->sink;
    if (drain(f, w->base) != TRACEC_STATUS_SUCCESS) {
        tracec_writer_fail(w, TRACEC_STATUS_IO_ERROR);
        return false;
    }
    size_t used = (size_t)(w->ptr - f->buf);
    if (f->cap - used >= need) return true;
    size_t cap = f->cap;
    while (cap - used < need) {
        if (cap > SIZE_MAX / 2) {
            tracec_writer_fail(w, TRACEC_STATUS_OUT_OF_MEMORY);
            return false;
        }
        cap *= 2;
    }
    uint8_t *nb = (uint8_t *)realloc(f->buf, cap);
    if (nb == NULL) {
        tracec_writer_fail(w, TRACEC_STATUS_OUT_OF_MEMORY);
        return false;
    }
    w->base = nb + (w->base - f->buf);
    w->ptr = nb + used;
    w->end = nb + cap;
    f->buf = nb;
    f->cap = cap;
    return true;
}

static tracec_status_t open_common(int fd, tracec_trace_file **out) {
    tracec_trace_file *f = (tracec_trace_file *)calloc(1, sizeof *f);
    if (f == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
    f->buf = (uint8_t *)malloc(TRACEC_I_FILE_INITIAL);
    if (f->buf == NULL) {
        free(f);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    f->cap = TRACEC_I_FILE_INITIAL;
    f->fd = fd;
    tracec_writer_init_array(&f->w, f->buf, f->cap);
    f->w.grow = file_grow;
    f->w.sink = f;
    *out = f;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_trace_file_open(const char *path, tracec_trace_file **out) {
    if (path == NULL || out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return TRACEC_STATUS_IO_ERROR;
    tracec_status_t s = open_common(fd, out);
    if (s != TRACEC_STATUS_SUCCESS) close(fd);
    return s;
}

tracec_status_t tracec_trace_file_open_memory(tracec_trace_file **out) {
    if (out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    return open_common(-1, out);
}

void tracec_trace_file_begin_packet(tracec_trace_file *f, tracec_msg *packet) {
    tracec_writer *w = &f->w;
    w->base = w->ptr;
    w->status = TRACEC_STATUS_SUCCESS;
    w->top = TRACEC_I_ROOT;
    f->in_packet = true;
    tracec_msg root;
    root.w = w;
    root.size_off = TRACEC_I_ROOT;
    root.parent = TRACEC_I_ROOT;
    tracec_msg_begin_nested(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), packet);
}

tracec_status_t tracec_trace_file_end_packet(tracec_trace_file *f, tracec_msg *packet) {
    tracec_writer *w = &f->w;
    if (!f->in_packet || packet->w != w) return TRACEC_STATUS_BAD_STATE;
    f->in_packet = false;
    tracec_msg root;
    root.w = w;
    root.size_off = TRACEC_I_ROOT;
    root.parent = TRACEC_I_ROOT;
    tracec_msg_end_nested(&root, packet);
    if (w->status == TRACEC_STATUS_SUCCESS && w->top != TRACEC_I_ROOT)
        tracec_writer_fail(w, TRACEC_STATUS_NESTING_MISMATCH);
    tracec_status_t s = w->status;
    if (s != TRACEC_STATUS_SUCCESS) {
        /* Drop the whole packet; what was accepted before stays. */
        w->ptr = w->base;
        w->status = TRACEC_STATUS_SUCCESS;
        f->dropped++;
        return s;
    }
    f->packets++;
    w->base = w->ptr;
    if (f->fd >= 0 && (size_t)(w->ptr - f->buf) >= TRACEC_I_FILE_FLUSH_AT) {
        tracec_status_t ds = drain(f, w->ptr);
        if (ds != TRACEC_STATUS_SUCCESS) return ds;
    }
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_trace_file_append_raw(tracec_trace_file *f, const void *data, size_t size) {
    if (f == NULL || (data == NULL && size > 0)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (f->in_packet) return TRACEC_STATUS_BAD_STATE;
    tracec_writer *w = &f->w;
    w->base = w->ptr;
    w->status = TRACEC_STATUS_SUCCESS;
    if (!tracec_writer_reserve(w, size)) {
        tracec_status_t s = w->status;
        w->status = TRACEC_STATUS_SUCCESS;
        return s;
    }
    if (size) memcpy(w->ptr, data, size);
    w->ptr += size;
    w->base = w->ptr;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_trace_file_flush(tracec_trace_file *f) {
    if (f == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (f->io_status != TRACEC_STATUS_SUCCESS) return f->io_status;
    if (f->fd < 0) return TRACEC_STATUS_SUCCESS;
    uint8_t *upto = f->in_packet ? f->w.base : f->w.ptr;
    return drain(f, upto);
}

const uint8_t *tracec_trace_file_data(const tracec_trace_file *f, size_t *size) {
    if (f == NULL || f->fd >= 0) {
        if (size) *size = 0;
        return NULL;
    }
    const uint8_t *upto = f->in_packet ? f->w.base : f->w.ptr;
    if (size) *size = (size_t)(upto - f->buf);
    return f->buf;
}

uint64_t tracec_trace_file_packets(const tracec_trace_file *f) { return f ? f->packets : 0; }

uint64_t tracec_trace_file_dropped(const tracec_trace_file *f) { return f ? f->dropped : 0; }

tracec_status_t tracec_trace_file_close(tracec_trace_file *f) {
    if (f == NULL) return TRACEC_STATUS_SUCCESS;
    tracec_status_t s = TRACEC_STATUS_SUCCESS;
    if (f->fd >= 0) {
        f->in_packet = false; /* an unfinished packet is not written */
        f->w.ptr = f->w.base;
        s = tracec_trace_file_flush(f);
        if (close(f->fd) != 0 && s == TRACEC_STATUS_SUCCESS) s = TRACEC_STATUS_IO_ERROR;
    }
    free(f->buf);
    free(f);
    return s;
}
