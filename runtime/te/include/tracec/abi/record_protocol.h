/*
 * tracec/abi/record_protocol.h - not a user API: what a provider process
 * (the track-event layer's recorder client) and the recorder (`tracec
 * record`) exchange: the control messages on the provider socket and the
 * notification packets on the fifo (protocol version 2).  docs/record.md
 * describes the protocol; both ends include this file (installed so
 * that a recorder and a provider built apart agree on it).
 *
 * The shared buffer is a buffer of the buffer engine in a memfd the
 * recorder creates, sizes (tracec_buffer_memory_size) and seals; the
 * provider creates the buffer in it (TRACEC_BUFFER_MEMORY_MEMFD, handoff
 * delivery) and writes it with the engine's per-thread writers.  Its layout
 * is tracec/abi/shm_layout.h; the recorder maps it read-only and reads it
 * with region.c (tracec_recorder_check_shm_header, _copy_region,
 * _read_region): the buffer is hostile.
 */
#ifndef TRACEC_ABI_RECORD_PROTOCOL_H
#define TRACEC_ABI_RECORD_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracec/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version both ends speak: in REGISTER's `b` and INITIALIZE's `c` (bits 48..63). */
#define TRACEC_I_PROTOCOL_VERSION 3u
/* The protocol's limits are the buffer runtime's (tracec/context.h): one set for both. */
#define TRACEC_I_NAME_MAX TRACEC_MAX_PROVIDER_NAME_LENGTH
#define TRACEC_I_MAX_CATEGORIES TRACEC_MAX_NUM_CATEGORIES
#define TRACEC_I_CATEGORY_MAX TRACEC_MAX_CATEGORY_NAME_LENGTH
/* Longest text of a control message: a name, '\n', 100 categories of 100 chars, comma-separated. */
#define TRACEC_I_TEXT_MAX (TRACEC_I_NAME_MAX + 1u + TRACEC_I_MAX_CATEGORIES * (TRACEC_I_CATEGORY_MAX + 1u))

/* Control messages (SOCK_SEQPACKET): provider -> recorder and recorder -> provider. */
enum {
    TRACEC_I_MSG_REGISTER = 1,      /* text: name, then optionally '\n' and the declared categories; a: pid (claimed);
                                       b: TRACEC_I_PROTOCOL_VERSION (0 from a version 1 provider) */
    TRACEC_I_MSG_REGISTER_SYNC = 2, /* same, answered with REGISTERED */
    TRACEC_I_MSG_REGISTERED = 3,    /* a: 1 if tracing has started */
    TRACEC_I_MSG_INITIALIZE = 4,    /* fds: memfd, fifo; a: mode | wait_ms << 8 | policy << 24 (| NO_CATEGORIES, ALL_CATEGORIES);
                                       b: the buffer's size (payload bytes per half); c: its durable size
                                       | the session's clock (a BuiltinClock) << 40
                                       | TRACEC_I_PROTOCOL_VERSION << 48; text: the enabled categories
                                       ("" = all, unless NO_CATEGORIES) */
    TRACEC_I_MSG_START = 5,         /* a: disposition; text: additional categories */
    TRACEC_I_MSG_STOP = 6,
    TRACEC_I_MSG_TERMINATE = 7,
    TRACEC_I_MSG_LIST = 8,          /* a client asks for the providers */
    TRACEC_I_MSG_LIST_REPLY = 9,    /* text: one line per provider */
    TRACEC_I_MSG_REFUSED = 10       /* provider -> recorder: it refuses the session of the INITIALIZE it got;
                                       text: why (the recorder says it) */
};

/* INITIALIZE's `a`: none of the provider's declared categories is enabled. */
#define TRACEC_I_INIT_NO_CATEGORIES (1u << 31)
/* INITIALIZE's `a`: the recorder enables every category (no --categories), declared or not. */
#define TRACEC_I_INIT_ALL_CATEGORIES (1u << 30)
#define TRACEC_I_INIT_WAIT_MASK 0x3fffu /* wait_ms (<= 10000) after the shift; the provider caps it further */
#define TRACEC_I_INIT_POLICY_SHIFT 24   /* tracec_buffer_policy_t (4 bits) */
#define TRACEC_I_INIT_VERSION_SHIFT 48  /* in `c` */
#define TRACEC_I_INIT_CLOCK_SHIFT 40    /* in `c`: the session's clock, 8 bits */
#define TRACEC_I_INIT_DURABLE_MASK ((UINT64_C(1) << TRACEC_I_INIT_CLOCK_SHIFT) - 1u)

typedef struct tracec_i_msg {
    uint32_t type;
    uint32_t a;
    uint64_t b;
    uint64_t c;
    char text[TRACEC_I_TEXT_MAX + 1]; /* NUL-terminated; only the used part is sent */
} tracec_i_msg;

#define TRACEC_I_MSG_FIXED (sizeof(uint32_t) * 2 + sizeof(uint64_t) * 2)

/* Fifo packets (a SOCK_SEQPACKET socketpair, where Fuchsia has a zx fifo). */
enum {
    TRACEC_I_FIFO_STARTED = 1,
    TRACEC_I_FIFO_STOPPED = 2,
    TRACEC_I_FIFO_SAVE_BUFFER = 3, /* provider -> recorder: region `region` of generation `gen` was handed, [0, extent) */
    TRACEC_I_FIFO_BUFFER_SAVED = 4 /* recorder -> provider: it saved (region, gen) */
};

typedef struct tracec_i_fifo_packet {
    uint32_t type;
    uint32_t region; /* 0, 1: a half; 2: the durable part (TRACEC_BUFFER_REGION_DURABLE); in STARTED, 1: the first
                        Start came after the program had stopped waiting for it (its events before are lost) */
    uint64_t gen;
    uint32_t extent;
    uint32_t unused;
} tracec_i_fifo_packet;

/*
 * The fences of the gen/extent protocol of a region (the buffer engine's
 * reset, region.c tracec_recorder_copy_region).  GCC refuses atomic_thread_fence under
 * -fsanitize=thread; there a compiler barrier stands in (TSan builds run
 * on x86, where acquire and release fences are only that, and TSan does
 * not relate the two mappings of a buffer anyway).
 */
#if defined(__SANITIZE_THREAD__)
#define TRACEC_I_REC_FENCE(order) __atomic_signal_fence(order)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TRACEC_I_REC_FENCE(order) __atomic_signal_fence(order)
#endif
#endif
#ifndef TRACEC_I_REC_FENCE
#define TRACEC_I_REC_FENCE(order) __atomic_thread_fence(order)
#endif

/* ---- helpers both ends use (record_io.c) ---- */

/* Sends `m` (its used part) with up to 2 fds; 0, or -1 with errno. Never raises SIGPIPE. */
int tracec_i_rec_send(int sock, const tracec_i_msg *m, const int *fds, int nfds);
/*
 * Receives one message: its byte count (>= TRACEC_I_MSG_FIXED, text always
 * NUL-terminated), 0 at end of stream, -1 on error or a short message.
 * Received fds (close-on-exec) go to fds[0..*nfds); extra ones are closed.
 */
ssize_t tracec_i_rec_recv(int sock, tracec_i_msg *m, int *fds, int *nfds);
/* Sends one fifo packet (non-blocking); 0 or -1. */
int tracec_i_rec_fifo_send(int fifo, uint32_t type, uint32_t region, uint64_t gen, uint32_t extent);
/* The well-known socket path /tmp/tracec-UID/recorder.sock (and its directory). */
void tracec_i_rec_default_socket(char *path, size_t cap, char *dir, size_t dir_cap);
/* The next name of the comma-separated list at *s (its length in *len), moving *s past it; NULL at the end. */
const char *tracec_i_rec_next_name(const char **s, size_t *len);
/* Whether `list` (comma-separated) has `cat`. */
bool tracec_i_rec_list_has(const char *list, const char *cat, size_t cat_len);
/* Whether `list` is a valid category list: "", or 1..100 non-empty names of <= 100 chars of valid UTF-8
   without whitespace or control chars, comma-separated. */
bool tracec_i_rec_categories_ok(const char *list);
/*
 * What a provider that declared `declared` gets when the recorder enables
 * `wanted` ("" = all): nothing declared -> `wanted`; all wanted ->
 * `declared`; else the declared ones that are wanted.  Writes the list to
 * out[cap] and returns false when that leaves no category enabled.
 */
bool tracec_i_rec_categories_enabled(const char *declared, const char *wanted, char *out, size_t cap);
/* CLOCK_BOOTTIME in ns. */
uint64_t tracec_i_rec_now_ns(void);
/* The clockid_t of a session clock (a BuiltinClock: 6 BOOTTIME, and 0 for it; 3 MONOTONIC; 1 REALTIME),
   -1 for any other: the one list of the clocks a session (its own or a recorder's) can have. */
int tracec_i_te_clockid_of(uint32_t clock_id);
/* Now on a session's clock (tracec_i_te_clockid_of; anything else BOOTTIME), in nanoseconds: the trace's
   clock, which a timestamp without a clock id is on. */
uint64_t tracec_i_rec_clock_ns(uint32_t clock_id);
/*
 * Writes into `pkt` (a generated TracePacket writer) a ClockSnapshot of the
 * global clocks (BOOTTIME, MONOTONIC, REALTIME) read now, with
 * `primary_clock` (a BuiltinClock) as the trace clock: a te session's and
 * the recorder's trace's (track_event.c).
 */
struct perfetto_protos_TracePacket;
void tracec_i_te_put_clock_snapshot(struct perfetto_protos_TracePacket *pkt, uint32_t primary_clock);

/* ---- the trust checks both ends use (record_trust.c) ---- */

/* Whether `uid` is trusted: this process's effective uid, or root (who can do anything to us anyway). */
bool tracec_i_rec_uid_trusted(uid_t uid);

/*
 * Whether the directory that holds `socket_path` can be trusted to hold the
 * recorder's socket: a directory (not a symlink) owned by a trusted uid and
 * not writable by group or others, so nobody else can have put a socket in
 * it.  false: why[cap] says what is wrong.
 */
bool tracec_i_rec_socket_dir_ok(const char *socket_path, char *why, size_t cap);

/*
 * Whether the peer of the connected Unix socket `fd` runs as a trusted uid
 * (SO_PEERCRED, taken by the kernel at connect()).  Its uid and pid go to
 * *uid / *pid (may be NULL).  false: why[cap] says what is wrong.
 */
bool tracec_i_rec_peer_ok(int fd, uid_t *uid, pid_t *pid, char *why, size_t cap);

/*
 * Whether `fd` is a regular file (a memfd) of at least `need` bytes whose
 * size can no longer change: its seals hold F_SEAL_SHRINK, F_SEAL_GROW and
 * F_SEAL_SEAL.  A mapping of such a file never faults with SIGBUS, whatever
 * the other end does.  false: why[cap] says what is wrong.
 */
bool tracec_i_rec_buffer_sealed(int fd, uint64_t need, char *why, size_t cap);

/* Whether s[0..n) is valid UTF-8 (no overlong forms, no surrogates) without control characters (C0, DEL, C1). */
bool tracec_i_rec_text_ok(const char *s, size_t n);

/* Copies the NUL-terminated `in` to out[cap] (always terminated), each byte of an invalid UTF-8
   sequence or control character replaced by '?'. */
void tracec_i_rec_sanitize(const char *in, char *out, size_t cap);


#ifdef __cplusplus
}
#endif

#endif /* TRACEC_ABI_RECORD_PROTOCOL_H */
