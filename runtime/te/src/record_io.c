/*
 * record_io.c - message and fd passing on the provider socket and fifo
 * (tracec/abi/record_protocol.h), shared by the provider library and the recorder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tracec/abi/record_protocol.h"

int tracec_i_rec_send(int sock, const tracec_i_msg *m, const int *fds, int nfds) {
    size_t len = TRACEC_I_MSG_FIXED + strnlen(m->text, TRACEC_I_TEXT_MAX) + 1;
    struct iovec iov = {(void *)m, len};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(2 * sizeof(int))];
    } ctl;
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    memset(&ctl, 0, sizeof ctl);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > 0) {
        if (nfds > 2) nfds = 2;
        mh.msg_control = ctl.b;
        mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n;
    do n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

ssize_t tracec_i_rec_recv(int sock, tracec_i_msg *m, int *fds, int *nfds) {
    struct iovec iov = {m, sizeof *m};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct msghdr mh;
    int max = nfds ? *nfds : 0;
    if (nfds) *nfds = 0;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof ctl.b;
    ssize_t n;
    do n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (nfds && *nfds < max)
                fds[(*nfds)++] = fd;
            else
                close(fd);
        }
    }
    if (n <= 0) return n;
    if ((size_t)n < TRACEC_I_MSG_FIXED || (mh.msg_flags & MSG_TRUNC)) {
        for (int i = 0; nfds && i < *nfds; i++) close(fds[i]);
        if (nfds) *nfds = 0;
        errno = EPROTO;
        return -1;
    }
    size_t tl = (size_t)n - TRACEC_I_MSG_FIXED;
    if (tl > TRACEC_I_TEXT_MAX) tl = TRACEC_I_TEXT_MAX;
    m->text[tl] = '\0';
    return n;
}

int tracec_i_rec_fifo_send(int fifo, uint32_t type, uint32_t region, uint64_t gen, uint32_t extent) {
    tracec_i_fifo_packet pk = {type, region, gen, extent, 0};
    ssize_t n = send(fifo, &pk, sizeof pk, MSG_NOSIGNAL | MSG_DONTWAIT);
    return n == (ssize_t)sizeof pk ? 0 : -1;
}

void tracec_i_rec_default_socket(char *path, size_t cap, char *dir, size_t dir_cap) {
    char d[64];
    snprintf(d, sizeof d, "/tmp/tracec-%u", (unsigned)geteuid());
    if (dir) snprintf(dir, dir_cap, "%s", d);
    if (path) snprintf(path, cap, "%s/recorder.sock", d);
}

const char *tracec_i_rec_next_name(const char **s, size_t *len) {
    if (**s == '\0') return NULL;
    const char *name = *s, *e = strchr(name, ',');
    *len = e ? (size_t)(e - name) : strlen(name);
    *s = name + *len + (e != NULL);
    return name;
}

bool tracec_i_rec_list_has(const char *list, const char *cat, size_t cat_len) {
    const char *name;
    size_t l;
    while ((name = tracec_i_rec_next_name(&list, &l)) != NULL)
        if (l == cat_len && memcmp(name, cat, cat_len) == 0) return true;
    return false;
}

bool tracec_i_rec_categories_ok(const char *list) {
    size_t n = 0;
    for (const char *s = list; *s; n++) {
        const char *e = strchr(s, ',');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 0 || l > TRACEC_I_CATEGORY_MAX || (e && e[1] == '\0')) return false;
        for (size_t i = 0; i < l; i++)
            if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f) return false;
        if (!tracec_i_rec_text_ok(s, l)) return false; /* valid UTF-8 */
        s += l + (e != NULL);
    }
    return n <= TRACEC_I_MAX_CATEGORIES;
}

bool tracec_i_rec_categories_enabled(const char *declared, const char *wanted, char *out, size_t cap) {
    if (cap == 0) return false;
    out[0] = '\0';
    if (declared[0] == '\0' || wanted[0] == '\0') {
        snprintf(out, cap, "%s", declared[0] ? declared : wanted);
        return true;
    }
    size_t used = 0, l;
    const char *s = declared, *name;
    while ((name = tracec_i_rec_next_name(&s, &l)) != NULL) {
        if (tracec_i_rec_list_has(wanted, name, l) && used + l + 2 <= cap) {
            if (used) out[used++] = ',';
            memcpy(out + used, name, l);
            used += l;
            out[used] = '\0';
        }
    }
    return used > 0;
}

uint64_t tracec_i_rec_now_ns(void) { return tracec_i_rec_clock_ns(6u); }

int tracec_i_te_clockid_of(uint32_t clock_id) {
    switch (clock_id) {
    case 0:
    case 6: return CLOCK_BOOTTIME;
    case 3: return CLOCK_MONOTONIC;
    case 1: return CLOCK_REALTIME;
    default: return -1;
    }
}

uint64_t tracec_i_rec_clock_ns(uint32_t clock_id) {
    struct timespec ts;
    int clk = tracec_i_te_clockid_of(clock_id);
    clock_gettime(clk >= 0 ? (clockid_t)clk : CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
