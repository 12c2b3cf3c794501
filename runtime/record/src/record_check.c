/*
 * record_check.c - the trust checks both ends of `tracec record` use
 * (record_check.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_check.h"
#include "tracec/wire.h"

bool tracec_i_rec_uid_trusted(uid_t uid) { return uid == geteuid() || uid == 0; }

bool tracec_i_rec_socket_dir_ok(const char *socket_path, char *why, size_t cap) {
    char dir[256];
    const char *slash = strrchr(socket_path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == socket_path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - socket_path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - socket_path), socket_path);
    else {
        snprintf(why, cap, "its path is too long");
        return false;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, cap, "directory %s: %s", dir, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "%s is not a directory (a symlink?)", dir);
        return false;
    }
    if (!tracec_i_rec_uid_trusted(st.st_uid)) {
        snprintf(why, cap, "directory %s belongs to uid %u, not to us (uid %u)", dir, (unsigned)st.st_uid,
                 (unsigned)geteuid());
        return false;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        snprintf(why, cap, "directory %s is writable by group or others (mode %03o)", dir,
                 (unsigned)(st.st_mode & 0777));
        return false;
    }
    return true;
}

bool tracec_i_rec_peer_ok(int fd, uid_t *uid, pid_t *pid, char *why, size_t cap) {
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cl != sizeof cr) {
        snprintf(why, cap, "its credentials cannot be read: %s", strerror(errno));
        return false;
    }
    if (uid) *uid = cr.uid;
    if (pid) *pid = cr.pid;
    if (!tracec_i_rec_uid_trusted(cr.uid)) {
        snprintf(why, cap, "it runs as uid %u, not as us (uid %u)", (unsigned)cr.uid, (unsigned)geteuid());
        return false;
    }
    return true;
}

bool tracec_i_rec_buffer_sealed(int fd, uint64_t need, char *why, size_t cap) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, cap, "the buffer is not a memfd");
        return false;
    }
    int seals = fcntl(fd, F_GET_SEALS);
    const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if (seals < 0 || (seals & want) != want) {
        snprintf(why, cap, "the buffer's size is not sealed (seals 0x%x)", seals < 0 ? 0 : (unsigned)seals);
        return false;
    }
    if ((uint64_t)st.st_size < need) {
        snprintf(why, cap, "the buffer has %llu bytes, %llu needed", (unsigned long long)st.st_size,
                 (unsigned long long)need);
        return false;
    }
    return true;
}

/* The length of the valid, non-control UTF-8 character at s[0..n), or 0. */
static size_t utf8_char(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f) return 0;
    if (c < 0x80) return 1;
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (len == 0 || c > 0xf4 || len > n) return 0;
    uint32_t cp = c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff) ||
        (cp >= 0x80 && cp <= 0x9f))
        return 0;
    return len;
}

bool tracec_i_rec_text_ok(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_char(u + i, n - i);
        if (k == 0) return false;
        i += k;
    }
    return true;
}

void tracec_i_rec_sanitize(const char *in, char *out, size_t cap) {
    if (cap == 0) return;
    const unsigned char *u = (const unsigned char *)in;
    size_t n = strlen(in), o = 0;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        size_t k = utf8_char(u + i, n - i);
        if (k == 0) {
            out[o++] = '?';
            i++;
        } else if (o + k < cap) {
            memcpy(out + o, u + i, k);
            o += k;
            i += k;
        } else {
            break;
        }
    }
    out[o] = '\0';
}

/* ---- records ----------------------------------------------------------------------------- */

static const tracec_i_rec_field *find_field(const tracec_i_rec_message *m, uint32_t number) {
    size_t lo = 0, hi = m->field_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->fields[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->field_count && m->fields[lo].number == number ? &m->fields[lo] : NULL;
}

/* Whether a packed run splits into whole elements of wire type `wt`. */
static bool packed_ok(int wt, const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    if (wt == TRACEC_WIRE_FIXED32) return n % 4 == 0;
    if (wt == TRACEC_WIRE_FIXED64) return n % 8 == 0;
    while (p < end) {
        uint64_t v;
        if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return false;
    }
    return true;
}

static bool message_ok(const tracec_i_rec_message *m, const uint8_t *p, size_t n, int depth, const char **why) {
    if (depth > TRACEC_I_REC_MAX_DEPTH) {
        *why = "messages nested deeper than the limit";
        return false;
    }
    const uint8_t *end = p + n, *at;
    tracec_wire_field f;
    int rc;
    while ((rc = tracec_wire_read_field(&p, end, 0, &f, why, &at)) > 0) {
        if (f.type == TRACEC_WIRE_SGROUP || f.type == TRACEC_WIRE_EGROUP) {
            *why = "a group";
            return false;
        }
        const tracec_i_rec_field *d = m ? find_field(m, f.number) : NULL;
        if (d == NULL || f.type != TRACEC_WIRE_LEN) continue; /* unknown, or a scalar: well formed is enough */
        if (d->message && d->wire_type == TRACEC_WIRE_LEN) {
            if (!message_ok(&tracec_i_rec_schema[d->message - 1], f.data, f.size, depth + 1, why)) return false;
        } else if (d->packable && !packed_ok(d->wire_type, f.data, f.size)) {
            *why = "a packed field that does not split into whole elements";
            return false;
        }
    }
    return rc == 0;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    const char *w = NULL;
    bool ok = message_ok(tracec_i_rec_schema_count ? &tracec_i_rec_schema[0] : NULL, p, n, 1, &w);
    if (why) *why = w ? w : "malformed";
    return ok;
}
