/*
 * enc_direct.c - the floor: a hand-written encoder of exactly the bytes
 * enc_tracec.c writes (same field order, same minimal lengths for the
 * nested messages), as someone would write it for this one packet: one
 * capacity check for the worst case, then raw stores through a local
 * pointer; each nested message reserves one length byte, back-filled at its
 * end (the body moved forward if it turns out 128 bytes or longer).
 *
 * bench_encode_direct_len4 is the previous floor, for the extra row
 * direct-len4: the same packet with 4-byte redundant nested lengths, as
 * tracec writes it when built with TRACEC_FIXED_NESTED_LENGTHS.
 */
#include <string.h>

#include "typical.h"

/* Worst case of everything but the label: tags, 10-byte varints, lengths. */
enum { kFixedWorstCase = 128 };

static inline __attribute__((always_inline)) uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline __attribute__((always_inline)) void put_size4(uint8_t *p, size_t len) {
    p[0] = (uint8_t)(len | 0x80u);
    p[1] = (uint8_t)((len >> 7) | 0x80u);
    p[2] = (uint8_t)((len >> 14) | 0x80u);
    p[3] = (uint8_t)(len >> 21);
}

/*
 * Ends a nested message whose length field of `len_bytes` (1 or 4, a
 * constant) is at `size` and whose body is [size + len_bytes, p); returns
 * the new end.  1: the minimal varint (the body moved forward if it is 128
 * bytes or more); 4: the redundant 4-byte varint.
 */
static inline __attribute__((always_inline)) uint8_t *end_len(uint8_t *size, uint8_t *p, size_t len_bytes) {
    size_t len = (size_t)(p - size) - len_bytes;
    if (len_bytes == 4) {
        put_size4(size, len);
        return p;
    }
    if (__builtin_expect(len < 0x80u, 1)) {
        *size = (uint8_t)len;
        return p;
    }
    size_t extra = 1;
    while (len >> (7 * (extra + 1))) extra++;
    memmove(size + 1 + extra, size + 1, len);
    put_varint(size, len);
    return p + extra;
}

/* The packet with nested length fields of `len_bytes` (a constant: 1 or 4). */
static inline __attribute__((always_inline)) size_t encode(const bench_input *in, uint8_t *buf, size_t cap,
                                                           size_t len_bytes) {
    if (in->label_len > (1u << 20) || cap < kFixedWorstCase + in->label_len) return 0;
    uint8_t *p = buf;
    *p++ = (8 << 3) | 0; /* timestamp */
    p = put_varint(p, in->timestamp);
    *p++ = (10 << 3) | 0; /* trusted_packet_sequence_id */
    p = put_varint(p, in->sequence_id);
    *p++ = (11 << 3) | 2; /* track_event */
    uint8_t *ev_size = p;
    p += len_bytes;
    *p++ = (9 << 3) | 0; /* type */
    p = put_varint(p, (uint64_t)(int64_t)in->type);
    *p++ = (11 << 3) | 0; /* track_uuid */
    p = put_varint(p, in->track_uuid);
    *p++ = (10 << 3) | 0; /* name_iid */
    p = put_varint(p, in->name_iid);
    *p++ = (3 << 3) | 0; /* category_iids */
    p = put_varint(p, in->category_iid);
    *p++ = (4 << 3) | 2; /* debug_annotations */
    uint8_t *arg_size = p;
    p += len_bytes;
    *p++ = (1 << 3) | 0; /* name_iid */
    p = put_varint(p, in->annotation_name_iid);
    *p++ = (4 << 3) | 0; /* int_value */
    p = put_varint(p, (uint64_t)in->annotation_int);
    p = end_len(arg_size, p, len_bytes);
    p = put_varint(p, (3200 << 3) | 0); /* bench_counter: a 3-byte tag (folds to stores) */
    p = put_varint(p, in->counter);
    p = put_varint(p, (3201 << 3) | 2); /* bench_label */
    p = put_varint(p, in->label_len);
    memcpy(p, in->label, in->label_len);
    p += in->label_len;
    p = end_len(ev_size, p, len_bytes);
    return (size_t)(p - buf);
}

BENCH_NOINLINE size_t bench_encode_direct(void *ctx, const bench_input *in, uint8_t *buf,
                                          size_t cap) {
    (void)ctx;
    return encode(in, buf, cap, 1);
}

BENCH_NOINLINE size_t bench_encode_direct_len4(void *ctx, const bench_input *in, uint8_t *buf,
                                               size_t cap) {
    (void)ctx;
    return encode(in, buf, cap, 4);
}
