/*
 * trace_file.c - the Perfetto trace file writer.
 *
 * Memory layout of the staging buffer:
 *
 *     buf             buf + used        w.ptr            buf + cap
 *      |  accepted      |  open packet    |   free          |
 *      |  packets, not  |  (0x0A, len,    |                 |
 *      |  written yet   |   body so far)  |                 |
 *
 * A packet is written through a caller-owned tracec_writer whose window is
 * [buf + used, buf + cap).  grow() first writes the accepted packets out
 * (file traces), moves the open packet to the front, then doubles the
 * buffer if that is not enough.  commit() accepts the packet (used moves
 * past it) or drops it (used stays).
 */
#define _POSIX_C_SOURCE 200809L
#include "tracec/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACEC_I_FILE_INITIAL (64u * 1024u)
#define TRACEC_I_FILE_FLUSH_AT (256u * 1024u)

struct tracec_trace_file {
    uint8_t *buf;
    size_t cap;
    size_t used; /* accepted bytes in buf, not yet written */
    int fd;      /* -1 for memory traces */
    bool in_packet;
    uint64_t packets;
    uint64_t dropped;
    tracec_status_t io_status;
    int io_errno;     /* errno of the first failed write (io_status) */
    uint64_t written; /* bytes written out before buf */
    uint64_t limit;   /* the trace's bytes may reach this (UINT64_MAX: no limit) ... */
    uint64_t max;     /* ... and, once tail is set, this */
    bool full;        /* a write was refused for the limit: every later one is, except the tail's */
    bool tail;
};

/* Whether `size` more bytes may go after the open packet's start (buf + used); else the file is full. */
static bool room(tracec_trace_file *f, size_t size) {
    uint64_t have = f->written + f->used, cap = f->tail ? f->max : f->limit;
    if ((!f->full || f->tail) && size <= cap && have <= cap - size) {
        if (size > f->limit || have > f->limit - size) f->full = true; /* the tail took some of the reserve */
        return true;
    }
    f->full = true;
    return false;
}

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

/* Writes the accepted bytes out (file traces only). */
static tracec_status_t drain(tracec_trace_file *f) {
    if (f->fd < 0 || f->used == 0) return TRACEC_STATUS_SUCCESS;
    if (f->io_status != TRACEC_STATUS_SUCCESS) return f->io_status;
    tracec_status_t s = write_all(f->fd, f->buf, f->used);
    if (s != TRACEC_STATUS_SUCCESS) {
        f->io_status = s;
        f->io_errno = errno;
        return s;
    }
    f->written += f->used;
    f->used = 0;
    return TRACEC_STATUS_SUCCESS;
}

uint8_t *tracec_i_trace_file_window(tracec_trace_file *f, uint8_t **end) {
    if (f == NULL) {
        *end = NULL;
        return NULL;
    }
    if (f->in_packet) f->dropped++; /* the previous packet was never ended */
    f->in_packet = true;
    *end = f->buf + f->cap;
    return f->buf + f->used;
}

bool tracec_i_trace_file_grow(tracec_writer *w, size_t need) {
    tracec_trace_file *f = (tracec_trace_file *)w->sink;
    size_t open = (size_t)(w->ptr - w->base);
    if (w->base != f->buf + f->used) {
        tracec_writer_fail(w, TRACEC_STATUS_BAD_STATE);
        return false;
    }
    if (f->fd >= 0 && f->used > 0) {
        if (drain(f) != TRACEC_STATUS_SUCCESS) {
            tracec_writer_fail(w, TRACEC_STATUS_IO_ERROR);
            return false;
        }
        memmove(f->buf, w->base, open);
    }
    if (need > TRACEC_MAX_RECORD_SIZE - open) {
        tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE); /* offsets from base are 32-bit */
        return false;
    }
    size_t cap = f->cap;
    while (cap - f->used - open < need) {
        if (cap > SIZE_MAX / 2) {
            tracec_writer_fail(w, TRACEC_STATUS_OUT_OF_MEMORY);
            return false;
        }
        cap *= 2;
    }
    if (cap != f->cap) {
        uint8_t *nb = (uint8_t *)realloc(f->buf, cap);
        if (nb == NULL) {
            tracec_writer_fail(w, TRACEC_STATUS_OUT_OF_MEMORY);
            return false;
        }
        f->buf = nb;
        f->cap = cap;
    }
    w->base = f->buf + f->used;
    w->ptr = w->base + open;
    w->end = f->buf + f->cap;
    return true;
}

uint8_t *tracec_i_trace_file_span(tracec_trace_file *f, uint8_t **end) {
    if (f == NULL || f->in_packet) return NULL;
    *end = f->buf + f->cap;
    return f->buf + f->used;
}

tracec_status_t tracec_i_trace_file_append_n(tracec_trace_file *f, uint8_t *end, uint64_t n) {
    if (!room(f, (size_t)(end - (f->buf + f->used)))) {
        f->dropped += n;
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    f->used = (size_t)(end - f->buf);
    f->packets += n;
    if (f->used >= TRACEC_I_FILE_FLUSH_AT) return drain(f);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_i_trace_file_commit(tracec_trace_file *f, uint8_t *base, uint8_t *ptr,
                                           tracec_status_t status) {
    if (f == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (!f->in_packet) return TRACEC_STATUS_BAD_STATE;
    f->in_packet = false;
    if (status == TRACEC_STATUS_SUCCESS && base != f->buf + f->used) status = TRACEC_STATUS_BAD_STATE;
    if (status == TRACEC_STATUS_SUCCESS && !room(f, (size_t)(ptr - base))) status = TRACEC_STATUS_LIMIT_EXCEEDED;
    if (status != TRACEC_STATUS_SUCCESS) {
        f->dropped++; /* dropped whole; what was accepted before stays */
        return status;
    }
    f->used = (size_t)(ptr - f->buf);
    f->packets++;
    if (f->used >= TRACEC_I_FILE_FLUSH_AT) return drain(f);
    return TRACEC_STATUS_SUCCESS;
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
    f->limit = f->max = UINT64_MAX;
    *out = f;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_trace_file_open(const char *path, tracec_trace_file **out) {
    struct stat sb;
    if (path == NULL || out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return TRACEC_STATUS_IO_ERROR;
    /* One writer per trace file (a program's own session and `tracec record -o` on the same path would interleave
       their bytes): the second is refused before it truncates the first one's.  Regular files only (two writers
       of /dev/null are fine); a file system without flock is not refused. */
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            close(fd);
            errno = EBUSY;
            return TRACEC_STATUS_IO_ERROR;
        }
        /* only a file that has bytes, as it is once locked (another writer may have filled it since the first
           look): on ext4 a truncate to 0 makes the close write back every page the trace dirtied, in the closer's
           time (its "replace by truncate" rule), which a new file does not need */
        if ((fstat(fd, &sb) != 0 || sb.st_size != 0) && ftruncate(fd, 0) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return TRACEC_STATUS_IO_ERROR;
        }
    }
    tracec_status_t s = open_common(fd, out);
    if (s != TRACEC_STATUS_SUCCESS) close(fd);
    return s;
}

tracec_status_t tracec_trace_file_open_memory(tracec_trace_file **out) {
    if (out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    return open_common(-1, out);
}

/* Reads a varint at *p (< end); false if it is truncated or longer than 10 bytes. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70u && *p < end; shift += 7u) {
        uint8_t c = *(*p)++;
        x |= (uint64_t)(c & 0x7Fu) << shift;
        if (!(c & 0x80u)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/*
 * Counts the Trace.packet (field 1) records in [p, p + size), which must be
 * whole top-level Trace fields; false if a field is malformed or truncated.
 */
static bool count_trace_packets(const uint8_t *p, size_t size, uint64_t *packets) {
    const uint8_t *end = p + size;
    uint64_t n = 0;
    while (p < end) {
        uint64_t tag, len;
        if (!read_varint(&p, end, &tag) || (tag >> 3) == 0) return false;
        switch (tag & 7u) {
            case 0: /* varint */
                if (!read_varint(&p, end, &len)) return false;
                break;
            case 1: /* fixed64 */
                if ((size_t)(end - p) < 8u) return false;
                p += 8;
                break;
            case 2: /* length-delimited */
                if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return false;
                p += len;
                n += tag == 0x0Au;
                break;
            case 5: /* fixed32 */
                if ((size_t)(end - p) < 4u) return false;
                p += 4;
                break;
            default: /* groups have no place at the top of a Trace */
                return false;
        }
    }
    *packets = n;
    return true;
}

tracec_status_t tracec_trace_file_append_raw(tracec_trace_file *f, const void *data, size_t size) {
    if (f == NULL || (data == NULL && size > 0)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (f->in_packet) return TRACEC_STATUS_BAD_STATE;
    uint64_t packets = 0;
    if (size > 0 && !count_trace_packets((const uint8_t *)data, size, &packets)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (!room(f, size)) {
        f->dropped += packets;
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    if (f->cap - f->used < size) {
        tracec_status_t s = drain(f);
        if (s != TRACEC_STATUS_SUCCESS) return s;
        if (f->cap - f->used < size) {
            size_t cap = f->cap;
            while (cap - f->used < size) cap *= 2;
            uint8_t *nb = (uint8_t *)realloc(f->buf, cap);
            if (nb == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
            f->buf = nb;
            f->cap = cap;
        }
    }
    if (size) memcpy(f->buf + f->used, data, size);
    f->used += size;
    f->packets += packets;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_trace_file_flush(tracec_trace_file *f) {
    if (f == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    return drain(f);
}

const uint8_t *tracec_trace_file_data(const tracec_trace_file *f, size_t *size) {
    if (f == NULL || f->fd >= 0) {
        if (size) *size = 0;
        return NULL;
    }
    if (size) *size = f->used;
    return f->buf;
}

uint64_t tracec_trace_file_packets(const tracec_trace_file *f) { return f ? f->packets : 0; }

uint64_t tracec_trace_file_dropped(const tracec_trace_file *f) { return f ? f->dropped : 0; }

void tracec_i_trace_file_limit(tracec_trace_file *f, uint64_t max_size, uint64_t reserve) {
    if (f == NULL || max_size == 0) return;
    f->max = max_size;
    f->limit = reserve < max_size ? max_size - reserve : 0;
}

void tracec_i_trace_file_tail(tracec_trace_file *f, bool on) {
    if (f != NULL) f->tail = on;
}

bool tracec_i_trace_file_full(const tracec_trace_file *f) { return f != NULL && f->full; }

int tracec_i_trace_file_errno(const tracec_trace_file *f) {
    return f == NULL || f->io_status == TRACEC_STATUS_SUCCESS ? 0 : f->io_errno ? f->io_errno : EIO;
}

void tracec_i_trace_file_forget(tracec_trace_file *f) {
    if (f == NULL) return;
    if (f->fd >= 0) (void)close(f->fd);
    free(f->buf);
    free(f);
}

tracec_status_t tracec_trace_file_close(tracec_trace_file *f) {
    if (f == NULL) return TRACEC_STATUS_SUCCESS;
    tracec_status_t s = TRACEC_STATUS_SUCCESS;
    int e = 0;
    if (f->fd >= 0) {
        s = drain(f); /* an unfinished packet is not written */
        e = f->io_errno;
        if (close(f->fd) != 0 && s == TRACEC_STATUS_SUCCESS) s = TRACEC_STATUS_IO_ERROR, e = errno;
    }
    free(f->buf);
    free(f);
    if (s == TRACEC_STATUS_IO_ERROR && e != 0) errno = e;
    return s;
}
