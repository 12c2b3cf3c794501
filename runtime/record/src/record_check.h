/*
 * record_check.h - the trust checks of `tracec record` (record_check.c):
 * whom an end trusts, whether a shared buffer's size is sealed, whether a
 * name is printable, and whether a record decodes under tracec's schema.
 * Each is a small function of its own, so any provider or recorder (the
 * buffer-engine provider too) calls the same ones.  docs/record.md, "Threat
 * model", says what they guarantee.
 */
#ifndef TRACEC_RECORD_CHECK_H
#define TRACEC_RECORD_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* How deep the record check follows messages nested in a TracePacket (the packet itself is level 1). */
#define TRACEC_I_REC_MAX_DEPTH 32

/*
 * Whether `n` bytes at `p` are a TracePacket every decoder reads: the one
 * field reader of tracec/wire.h on every level, no groups, and each
 * length-delimited field that tracec's schema declares as a message (with
 * its wire type) checked the same way, recursively, at most
 * TRACEC_I_REC_MAX_DEPTH levels; a packed repeated scalar must split into
 * whole elements.  Fields the schema does not know are only checked to be
 * well formed.  false: *why (static text) says what is wrong.
 */
bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why);

/* ---- the schema the record check follows (record_schema.c, generated from tracec's descriptor pool) ---- */

typedef struct tracec_i_rec_field {
    uint32_t number;
    uint8_t wire_type; /* the wire type the schema writes it with */
    uint8_t packable;  /* a repeated scalar: may also come packed (LEN) */
    uint16_t message;  /* a message field: its type's index in tracec_i_rec_schema + 1; 0: not a message */
} tracec_i_rec_field;

typedef struct tracec_i_rec_message {
    const char *full_name;
    const tracec_i_rec_field *fields; /* by number, ascending */
    uint32_t field_count;
} tracec_i_rec_message;

/* perfetto.protos.TracePacket first, then every message type it holds, as far as tracec's schema knows them. */
extern const tracec_i_rec_message tracec_i_rec_schema[];
extern const uint32_t tracec_i_rec_schema_count;

#endif /* TRACEC_RECORD_CHECK_H */
