/*
 * tracec/writer.h - the zero-copy protobuf writer core.
 *
 * Generated writers (protoc-gen-tracec) are thin static inline wrappers over
 * the functions here.  Every field is appended straight into the memory of a
 * sink (a trace file writer, a trace buffer, a caller's array); nothing is
 * built in between and nothing is allocated on the write path.
 *
 * A sink hands out a window of memory to a tracec_writer:
 *
 *     base                    ptr                       end
 *      |                       |                         |
 *      v                       v                         v
 *      +-----------------------+-------------------------+
 *      | bytes of the current  |  free space             |
 *      | record written so far |                         |
 *      +-----------------------+-------------------------+
 *
 *   - base <= ptr <= end always holds.
 *   - Every setter checks that (end - ptr) covers the worst case of what it
 *     writes; if not, it calls the out-of-line slow path, which asks the
 *     sink's grow() for more room.  grow() may move the whole record to a
 *     new place (it updates base, ptr and end together and keeps
 *     ptr - base); that is why open messages remember where their length
 *     field is as an offset from base, never as a pointer.
 *   - If no room can be had, the writer fails: status is set (first error
 *     wins) and every later call on it does nothing.  The sink drops the
 *     record when it is finished and reports the status.
 *
 * A nested message reserves one byte for its length when it begins and
 * back-fills it when it ends: a body under 128 bytes (the common case) costs
 * one store, and the bytes are protobuf's canonical (minimal) encoding.  A
 * longer body is moved forward by the 1 to 3 bytes its length needs, out of
 * line (tracec_writer_widen_length); the peak space a message needs is never
 * more than with a fixed 4-byte length.  Built with
 * TRACEC_FIXED_NESTED_LENGTHS defined (CMake option of the same name, which
 * tracec/config.h carries to every user of the build), every
 * nested message instead reserves a 4-byte "redundant" varint length
 * (0x80|b0, 0x80|b1, 0x80|b2, b3), back-filled in place and never moved.
 * The largest message body is 2^28 - 1 bytes either way.
 *
 * Three levels, as in Perfetto's C API:
 *   tracec_put_*          unchecked: raw stores at a pointer, returns the new pointer;
 *   tracec_msg_*          checked: reserve, then tracec_put_*;
 *   tracec_writer_slowpath  out of line: grow or fail.
 *
 * Thread safety: a tracec_writer and the messages open on it belong to one
 * thread at a time.  Two threads write through two writers.
 */
#ifndef TRACEC_WRITER_H
#define TRACEC_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracec/config.h"
#include "tracec/status.h"
#include "tracec/version.h"
#include "tracec/wire.h"
#include "tracec/abi/attributes.h"
#include "tracec/abi/hints.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Size of the length a nested message reserves when it begins, and the
 * largest body.  Compact (1, widened at the end when the body needs more) by
 * default; 4, fixed, with TRACEC_FIXED_NESTED_LENGTHS.
 */
#ifdef TRACEC_FIXED_NESTED_LENGTHS
#define TRACEC_NESTED_SIZE_BYTES 4u
#else
#define TRACEC_NESTED_SIZE_BYTES 1u
#endif
#define TRACEC_MAX_NESTED_SIZE ((1u << 28) - 1u)

typedef struct tracec_writer tracec_writer;

/*
 * Called when fewer than `need` bytes are free.  Either makes at least `need`
 * bytes free (it may move [base, ptr) elsewhere: it then updates base, ptr
 * and end together) and returns true, or returns false (it may set status
 * first; otherwise the writer records TRACEC_STATUS_BUFFER_FULL).
 */
typedef bool (*tracec_writer_grow_fn)(tracec_writer *w, size_t need);

struct tracec_writer {
    uint8_t *ptr;               /* next byte to write */
    uint8_t *end;               /* one past the last writable byte */
    uint8_t *base;              /* start of the current record */
    tracec_writer_grow_fn grow; /* slow path; NULL means the window is all there is */
    void *sink;                 /* the sink's own state, for grow() */
    tracec_status_t status;     /* first error; SUCCESS while healthy */
    uint32_t top;               /* size offset of the innermost open message (nesting check) */
};

/* An open message: where its length field is, and the writer it lives on. */
typedef struct tracec_msg {
    tracec_writer *w;
    uint32_t size_off; /* offset from w->base of the length field; TRACEC_I_ROOT for a root */
    uint32_t parent;   /* w->top when this message began */
} tracec_msg;

#define TRACEC_I_ROOT UINT32_MAX
#define TRACEC_I_GROUP (UINT32_MAX - 1u)
#define TRACEC_I_FAILED (UINT32_MAX - 2u)

/* ---- Setting up a writer ------------------------------------------------- */

/*
 * Grows or fails; true when `need` bytes are now free.  Out of line (and
 * only ever called on a copy of the writer, see tracec_writer_reserve).
 */
bool tracec_writer_slowpath(tracec_writer *w, size_t need) TRACEC_I_WARN_UNUSED;

/*
 * Ends the nested message whose 1-byte length field is at base + size_off
 * when its body is 128 bytes or more: makes room for the body's minimal
 * length (growing if needed), moves the body forward and writes the length.
 * False (status set: MESSAGE_TOO_LARGE, or the grow failure) if it could
 * not.  Out of line, on a copy of the writer as the slow path.
 */
bool tracec_writer_widen_length(tracec_writer *w, uint32_t size_off) TRACEC_I_WARN_UNUSED;

/* Records `status` as the writer's error unless one is already recorded. */
static inline void tracec_writer_fail(tracec_writer *w, tracec_status_t status) {
    if (w->status == TRACEC_STATUS_SUCCESS) w->status = status;
}

/*
 * A record (everything written from base) is at most this long: open
 * messages remember their length field as a 32-bit offset from base.
 */
#define TRACEC_MAX_RECORD_SIZE ((size_t)UINT32_MAX - 16u)

/*
 * Points `w` at the caller's array [mem, mem + size).  No grow: when it is
 * full the writer fails with TRACEC_STATUS_BUFFER_FULL.  Only the first
 * TRACEC_MAX_RECORD_SIZE bytes are used.  A NULL `mem` is an empty array
 * (whatever `size` says): the first setter fails with BUFFER_FULL.  For
 * speed, keep `w` a local variable of the function that writes the message.
 */
static inline void tracec_writer_init_array(tracec_writer *w, void *mem, size_t size) {
    /*
     * The bounds checks compare against `end - n`, which must not wrap: an
     * empty window at a real address (nothing is ever stored there) instead
     * of NULL.  Not `w` itself: a window that could alias the writer would
     * make the compiler reload ptr and end after every byte stored.
     */
    static uint8_t no_memory[1];
    if (size > TRACEC_MAX_RECORD_SIZE) size = TRACEC_MAX_RECORD_SIZE;
    if (TRACEC_I_UNLIKELY(mem == NULL)) {
        mem = no_memory;
        size = 0;
    }
    w->base = (uint8_t *)mem;
    w->ptr = w->base;
    w->end = w->base + size;
    w->grow = NULL;
    w->sink = NULL;
    w->status = TRACEC_STATUS_SUCCESS;
    w->top = TRACEC_I_ROOT;
}

/* Starts a root message (one with no length of its own) at w's current position. */
static inline void tracec_writer_begin_root(tracec_writer *w, tracec_msg *root) {
    root->w = w;
    root->size_off = TRACEC_I_ROOT;
    root->parent = w->top;
    w->top = TRACEC_I_ROOT;
}

/*
 * Checks that every message opened on `w` since `root` began was ended.
 * Returns w->status (TRACEC_STATUS_NESTING_MISMATCH if not).
 */
static inline tracec_status_t tracec_writer_end_root(tracec_writer *w, tracec_msg *root) {
    if (root->w != w)
        tracec_writer_fail(w, TRACEC_STATUS_INVALID_ARGUMENT);
    else if (w->top != TRACEC_I_ROOT)
        tracec_writer_fail(w, TRACEC_STATUS_NESTING_MISMATCH);
    return w->status;
}

/* Bytes written since the root began (valid while the writer is healthy). */
static inline size_t tracec_writer_size(const tracec_writer *w) {
    return (size_t)(w->ptr - w->base);
}

/* ---- Unchecked encoders: raw stores, caller guarantees room ------------- */

static inline TRACEC_I_ALWAYS_INLINE uint8_t *tracec_put_varint64(uint8_t *p, uint64_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline TRACEC_I_ALWAYS_INLINE uint8_t *tracec_put_varint32(uint8_t *p, uint32_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A tag is a compile-time constant in generated code, so this folds to stores. */
static inline TRACEC_I_ALWAYS_INLINE uint8_t *tracec_put_tag(uint8_t *p, uint32_t tag) {
    if (tag < 0x80u) {
        *p = (uint8_t)tag;
        return p + 1;
    }
    if (tag < 0x4000u) {
        p[0] = (uint8_t)(tag | 0x80u);
        p[1] = (uint8_t)(tag >> 7);
        return p + 2;
    }
    return tracec_put_varint32(p, tag);
}

static inline TRACEC_I_ALWAYS_INLINE uint8_t *tracec_put_fixed32(uint8_t *p, uint32_t v) {
#if TRACEC_I_LITTLE_ENDIAN
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
#endif
    return p + 4;
}

static inline TRACEC_I_ALWAYS_INLINE uint8_t *tracec_put_fixed64(uint8_t *p, uint64_t v) {
#if TRACEC_I_LITTLE_ENDIAN
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
    return p + 8;
}

static inline uint32_t tracec_zigzag32(int32_t v) {
    return ((uint32_t)v << 1) ^ (uint32_t)(0 - ((uint32_t)v >> 31));
}

static inline uint64_t tracec_zigzag64(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(0 - ((uint64_t)v >> 63));
}

static inline uint32_t tracec_float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline uint64_t tracec_double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}


/* The 4-byte redundant varint form of `len` (len <= TRACEC_MAX_NESTED_SIZE). */
static inline TRACEC_I_ALWAYS_INLINE void tracec_put_size4(uint8_t *p, uint32_t len) {
#if TRACEC_I_LITTLE_ENDIAN
    /* One 32-bit store: 7 bits per byte, continuation bits on the first three. */
    uint32_t v = (len & 0x7fu) | ((len << 1) & 0x7f00u) | ((len << 2) & 0x7f0000u) |
                 ((len << 3) & 0x7f000000u) | 0x00808080u;
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)(len | 0x80u);
    p[1] = (uint8_t)((len >> 7) | 0x80u);
    p[2] = (uint8_t)((len >> 14) | 0x80u);
    p[3] = (uint8_t)(len >> 21);
#endif
}

/* ---- Checked writes on a message ---------------------------------------- */

/*
 * The slow path works on a copy of the writer: `w` itself is never passed
 * out of line, so when it lives on the caller's stack the compiler keeps
 * ptr and end in registers across setters (a byte store could otherwise
 * alias them, forcing a reload after every field).
 */
static inline TRACEC_I_ALWAYS_INLINE bool tracec_i_reserve_slow(tracec_writer *w, size_t n) {
    tracec_writer tmp;
    bool ok;
    if (w->status != TRACEC_STATUS_SUCCESS) return false;
    tmp = *w;
    ok = tracec_writer_slowpath(&tmp, n);
    w->ptr = tmp.ptr;
    w->end = tmp.end;
    w->base = tmp.base;
    w->status = tmp.status;
    return ok;
}

/* True when `n` bytes are free (growing if needed); false if the writer failed. */
static inline TRACEC_I_ALWAYS_INLINE bool tracec_writer_reserve(tracec_writer *w, size_t n) {
    if (TRACEC_I_LIKELY((uintptr_t)w->ptr + n <= (uintptr_t)w->end)) return true;
    return tracec_i_reserve_slow(w, n);
}

/*
 * The same for a small constant `n` (at most 64: a tag and a scalar): the
 * check is `ptr <= end - n`, and `end - n` is the same for every setter of a
 * packet, so the compiler keeps it in a register and each field costs one
 * compare.  (end - n cannot wrap: no window ends below address 64.)
 */
static inline TRACEC_I_ALWAYS_INLINE bool tracec_writer_reserve_small(tracec_writer *w, size_t n) {
    if (TRACEC_I_LIKELY((uintptr_t)w->ptr <= (uintptr_t)w->end - n)) return true;
    return tracec_i_reserve_slow(w, n);
}

static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_varint(tracec_msg *m, uint32_t tag, uint64_t v) {
    tracec_writer *w = m->w;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE + TRACEC_MAX_VARINT_SIZE)) return;
    w->ptr = tracec_put_varint64(tracec_put_tag(w->ptr, tag), v);
}

/* A 32-bit unsigned varint (uint32, bool, field-sized things): at most 5 bytes. */
static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_varint32(tracec_msg *m, uint32_t tag, uint32_t v) {
    tracec_writer *w = m->w;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE + 5u)) return;
    w->ptr = tracec_put_varint32(tracec_put_tag(w->ptr, tag), v);
}

/* int32 and enum values are sign-extended to 64 bits on the wire (10 bytes if negative). */
static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_int32(tracec_msg *m, uint32_t tag, int32_t v) {
    tracec_msg_put_varint(m, tag, (uint64_t)(int64_t)v);
}

static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_fixed32(tracec_msg *m, uint32_t tag, uint32_t v) {
    tracec_writer *w = m->w;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE + 4u)) return;
    w->ptr = tracec_put_fixed32(tracec_put_tag(w->ptr, tag), v);
}

static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_fixed64(tracec_msg *m, uint32_t tag, uint64_t v) {
    tracec_writer *w = m->w;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE + 8u)) return;
    w->ptr = tracec_put_fixed64(tracec_put_tag(w->ptr, tag), v);
}

/*
 * Copies len bytes; short strings inline (two overlapping loads and stores,
 * never reading or writing outside [src, src + len) / [dst, dst + len)),
 * longer ones through memcpy.
 */
static inline TRACEC_I_ALWAYS_INLINE void tracec_i_copy(uint8_t *dst, const void *src, size_t len) {
    const uint8_t *s = (const uint8_t *)src;
    if (len >= 8 && len <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + len - 8, &b, 8);
    } else if (len >= 4 && len < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + len - 4, &b, 4);
    } else if (len < 4) {
        for (size_t i = 0; i < len; i++) dst[i] = s[i];
    } else {
        memcpy(dst, s, len);
    }
}

/* A length-delimited field (string, bytes, or a pre-serialized message). */
static inline TRACEC_I_ALWAYS_INLINE void tracec_i_put_bytes(tracec_msg *m, uint32_t tag, const void *data, size_t len) {
    tracec_writer *w = m->w;
    if (TRACEC_I_UNLIKELY(len > TRACEC_MAX_NESTED_SIZE)) {
        tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE);
        return;
    }
    if (!tracec_writer_reserve(w, TRACEC_MAX_TAG_SIZE + 5u + len)) return;
    uint8_t *p = tracec_put_varint32(tracec_put_tag(w->ptr, tag), (uint32_t)len);
    tracec_i_copy(p, data, len);
    w->ptr = p + len;
}

/* The same, left to the compiler to inline or not (a length known only at run time). */
static inline void tracec_i_put_bytes_any(tracec_msg *m, uint32_t tag, const void *data, size_t len) {
    tracec_i_put_bytes(m, tag, data, len);
}

/*
 * A length known at compile time (a literal, a fixed-size field) is written
 * inline: its varint, its copy and its checks fold to a few stores.
 */
static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_bytes(tracec_msg *m, uint32_t tag, const void *data,
                                                              size_t len) {
#if defined(__GNUC__)
    if (__builtin_constant_p(len) && len <= 64u) {
        tracec_i_put_bytes(m, tag, data, len);
        return;
    }
#endif
    tracec_i_put_bytes_any(m, tag, data, len);
}

static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_put_cstr(tracec_msg *m, uint32_t tag, const char *s) {
    tracec_msg_put_bytes(m, tag, s, s ? strlen(s) : 0u);
}

/* Opens `child` as field `tag` (wire type LEN) of `parent`. */
static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_begin_nested(tracec_msg *parent, uint32_t tag, tracec_msg *child) {
    tracec_writer *w = parent->w;
    child->w = w;
    child->parent = w->top;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE + TRACEC_NESTED_SIZE_BYTES)) {
        child->size_off = TRACEC_I_FAILED;
        return;
    }
    uint8_t *p = tracec_put_tag(w->ptr, tag);
    child->size_off = (uint32_t)(p - w->base);
    w->top = child->size_off;
    w->ptr = p + TRACEC_NESTED_SIZE_BYTES;
}

/*
 * Closes `child`, back-filling its length.  The writer is found through
 * `parent`: a child that was never begun (zeroed), was begun on another
 * writer, or is not the innermost open message makes the writer fail with
 * TRACEC_STATUS_NESTING_MISMATCH (sticky; the packet is refused at its end).
 */
static inline TRACEC_I_ALWAYS_INLINE void tracec_msg_end_nested(tracec_msg *parent, tracec_msg *child) {
    tracec_writer *w = parent->w;
    /* Also catches a child whose begin failed (size_off FAILED is never top). */
    if (TRACEC_I_UNLIKELY(child->w != w || w->top != child->size_off)) {
        tracec_writer_fail(w, TRACEC_STATUS_NESTING_MISMATCH);
        return;
    }
    /* In integers: a misused writer may have no window (base NULL); its
     * length then comes out huge and the writer fails below. */
    uintptr_t size_at = (uintptr_t)w->base + child->size_off;
    size_t len = (size_t)((uintptr_t)w->ptr - size_at) - TRACEC_NESTED_SIZE_BYTES;
#ifdef TRACEC_FIXED_NESTED_LENGTHS
    if (TRACEC_I_UNLIKELY(len > TRACEC_MAX_NESTED_SIZE)) {
        tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE);
        return;
    }
    tracec_put_size4((uint8_t *)size_at, (uint32_t)len);
#else
    if (TRACEC_I_LIKELY(len < 0x80u)) {
        *(uint8_t *)size_at = (uint8_t)len;
    } else {
        /* On a copy, as tracec_i_reserve_slow, so w stays in registers. */
        tracec_writer tmp = *w;
        bool ok = tracec_writer_widen_length(&tmp, child->size_off);
        w->ptr = tmp.ptr;
        w->end = tmp.end;
        w->base = tmp.base;
        w->status = tmp.status;
        if (!ok) return;
    }
#endif
    w->top = child->parent;
}

/*
 * A TracePacket as every sink frames it: field 1 (Trace.packet) of a root
 * that starts at w->base, so what a sink keeps is a valid Trace.  begin
 * starts the root and the packet (w's window set up by the sink); end closes
 * both and returns w's status (INVALID_ARGUMENT when `packet` was not begun
 * on `w`).  The trace file, the buffers and the record provider use them.
 */
static inline void tracec_writer_begin_packet(tracec_writer *w, tracec_msg *packet) {
    tracec_msg root;
    w->top = TRACEC_I_ROOT;
    tracec_writer_begin_root(w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), packet);
}

static inline tracec_status_t tracec_writer_end_packet(tracec_writer *w, tracec_msg *packet) {
    tracec_msg root;
    root.w = w;
    root.size_off = TRACEC_I_ROOT;
    root.parent = TRACEC_I_ROOT;
    if (packet->w != w)
        tracec_writer_fail(w, TRACEC_STATUS_INVALID_ARGUMENT);
    else
        tracec_msg_end_nested(&root, packet);
    return tracec_writer_end_root(w, &root);
}

/* Opens `child` as group field `num` of `parent` (start-group tag now, end-group tag at the end). */
static inline void tracec_msg_begin_group(tracec_msg *parent, uint32_t num, tracec_msg *child) {
    tracec_writer *w = parent->w;
    child->w = w;
    child->parent = w->top;
    child->size_off = TRACEC_I_GROUP;
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE)) return;
    w->ptr = tracec_put_tag(w->ptr, TRACEC_TAG(num, TRACEC_WIRE_SGROUP));
}

static inline void tracec_msg_end_group(tracec_msg *parent, uint32_t num, tracec_msg *child) {
    tracec_writer *w = parent->w;
    if (TRACEC_I_UNLIKELY(child->w != w || child->size_off != TRACEC_I_GROUP)) {
        tracec_writer_fail(w, TRACEC_STATUS_NESTING_MISMATCH);
        return;
    }
    if (!tracec_writer_reserve_small(w, TRACEC_MAX_TAG_SIZE)) return;
    w->ptr = tracec_put_tag(w->ptr, TRACEC_TAG(num, TRACEC_WIRE_EGROUP));
}

/*
 * Packed repeated fields: the whole array as one length-delimited record.
 * An empty array writes nothing.  Out of line: they loop anyway.
 */
void tracec_msg_put_packed_uint64(tracec_msg *m, uint32_t tag, const uint64_t *v, size_t n);
void tracec_msg_put_packed_uint32(tracec_msg *m, uint32_t tag, const uint32_t *v, size_t n);
void tracec_msg_put_packed_int64(tracec_msg *m, uint32_t tag, const int64_t *v, size_t n);
void tracec_msg_put_packed_int32(tracec_msg *m, uint32_t tag, const int32_t *v, size_t n);
void tracec_msg_put_packed_sint64(tracec_msg *m, uint32_t tag, const int64_t *v, size_t n);
void tracec_msg_put_packed_sint32(tracec_msg *m, uint32_t tag, const int32_t *v, size_t n);
void tracec_msg_put_packed_bool(tracec_msg *m, uint32_t tag, const bool *v, size_t n);
void tracec_msg_put_packed_fixed64(tracec_msg *m, uint32_t tag, const uint64_t *v, size_t n);
void tracec_msg_put_packed_fixed32(tracec_msg *m, uint32_t tag, const uint32_t *v, size_t n);
void tracec_msg_put_packed_double(tracec_msg *m, uint32_t tag, const double *v, size_t n);
void tracec_msg_put_packed_float(tracec_msg *m, uint32_t tag, const float *v, size_t n);

#ifdef __cplusplus
}
#endif

#include "tracec/abi/hints_end.h"

#endif /* TRACEC_WRITER_H */
