/*
 * writer.c - the out-of-line half of the writer core (tracec/writer.h): the
 * slow path, the widening of a nested length, and packed repeated fields.
 */
#include "tracec/writer.h"

bool tracec_writer_slowpath(tracec_writer *w, size_t need) {
    if (w->status != TRACEC_STATUS_SUCCESS) return false;
    if (w->grow != NULL && w->grow(w, need)) return true;
    if (w->status == TRACEC_STATUS_SUCCESS) w->status = TRACEC_STATUS_BUFFER_FULL;
    return false;
}

bool tracec_writer_widen_length(tracec_writer *w, uint32_t size_off) {
    if (w->status != TRACEC_STATUS_SUCCESS) return false;
    size_t len = (size_t)(w->ptr - w->base) - size_off - 1u;
    if (len > TRACEC_MAX_NESTED_SIZE) {
        tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE);
        return false;
    }
    size_t extra = tracec_varint_size(len) - 1u;
    /* grow() may move the record: base is read again after it. */
    if (!tracec_writer_reserve(w, extra)) return false;
    uint8_t *size = w->base + size_off;
    memmove(size + 1u + extra, size + 1u, len);
    tracec_put_varint32(size, (uint32_t)len);
    w->ptr += extra;
    return true;
}

/*
 * Packed fields: the exact payload size is computed first, so the length is
 * written once, minimal, in front of the values.
 */
#define TRACEC_I_PACKED_VARINT(name, ctype, conv)                                   \
    void tracec_msg_put_packed_##name(tracec_msg *m, uint32_t tag, const ctype *v,  \
                                      size_t n) {                                   \
        tracec_writer *w = m->w;                                                    \
        size_t len = 0;                                                             \
        if (n == 0) return;                                                         \
        for (size_t i = 0; i < n; i++) len += tracec_varint_size(conv(v[i]));       \
        if (len > TRACEC_MAX_NESTED_SIZE) {                                         \
            tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE);                 \
            return;                                                                 \
        }                                                                           \
        if (!tracec_writer_reserve(w, TRACEC_MAX_TAG_SIZE + 5u + len)) return;      \
        uint8_t *p = tracec_put_varint32(tracec_put_tag(w->ptr, tag), (uint32_t)len); \
        for (size_t i = 0; i < n; i++) p = tracec_put_varint64(p, conv(v[i]));      \
        w->ptr = p;                                                                 \
    }

#define TRACEC_I_AS_U64(x) ((uint64_t)(x))
#define TRACEC_I_AS_S64(x) ((uint64_t)(int64_t)(x))
#define TRACEC_I_ZZ64(x) tracec_zigzag64((int64_t)(x))
#define TRACEC_I_ZZ32(x) ((uint64_t)tracec_zigzag32((int32_t)(x)))
#define TRACEC_I_BOOL(x) ((uint64_t)((x) ? 1u : 0u))

TRACEC_I_PACKED_VARINT(uint64, uint64_t, TRACEC_I_AS_U64)
TRACEC_I_PACKED_VARINT(uint32, uint32_t, TRACEC_I_AS_U64)
TRACEC_I_PACKED_VARINT(int64, int64_t, TRACEC_I_AS_S64)
TRACEC_I_PACKED_VARINT(int32, int32_t, TRACEC_I_AS_S64)
TRACEC_I_PACKED_VARINT(sint64, int64_t, TRACEC_I_ZZ64)
TRACEC_I_PACKED_VARINT(sint32, int32_t, TRACEC_I_ZZ32)
TRACEC_I_PACKED_VARINT(bool, bool, TRACEC_I_BOOL)

#define TRACEC_I_PACKED_FIXED(name, ctype, width, put, conv)                        \
    void tracec_msg_put_packed_##name(tracec_msg *m, uint32_t tag, const ctype *v,  \
                                      size_t n) {                                   \
        tracec_writer *w = m->w;                                                    \
        if (n == 0) return;                                                         \
        if (n > TRACEC_MAX_NESTED_SIZE / (width)) {                                 \
            tracec_writer_fail(w, TRACEC_STATUS_MESSAGE_TOO_LARGE);                 \
            return;                                                                 \
        }                                                                           \
        size_t len = n * (width);                                                   \
        if (!tracec_writer_reserve(w, TRACEC_MAX_TAG_SIZE + 5u + len)) return;      \
        uint8_t *p = tracec_put_varint32(tracec_put_tag(w->ptr, tag), (uint32_t)len); \
        for (size_t i = 0; i < n; i++) p = put(p, conv(v[i]));                      \
        w->ptr = p;                                                                 \
    }

#define TRACEC_I_SAME(x) (x)
TRACEC_I_PACKED_FIXED(fixed64, uint64_t, 8u, tracec_put_fixed64, TRACEC_I_SAME)
TRACEC_I_PACKED_FIXED(fixed32, uint32_t, 4u, tracec_put_fixed32, TRACEC_I_SAME)
TRACEC_I_PACKED_FIXED(double, double, 8u, tracec_put_fixed64, tracec_double_bits)
TRACEC_I_PACKED_FIXED(float, float, 4u, tracec_put_fixed32, tracec_float_bits)
