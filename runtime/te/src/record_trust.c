/*
 * record_trust.c - the trust checks both ends of `tracec record` use
 * (tracec/abi/record_protocol.h): whom an end trusts, whether a shared
 * buffer's size is sealed, whether a name is printable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracec/abi/record_protocol.h"

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

