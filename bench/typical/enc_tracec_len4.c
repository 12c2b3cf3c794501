/*
 * enc_tracec_len4.c - enc_tracec.c's packet with tracec's fixed 4-byte
 * nested lengths (this file is compiled with TRACEC_FIXED_NESTED_LENGTHS):
 * the extra row tracec-len4, the write path as it was before lengths were
 * made minimal, timed in the same run as the default.
 */
#include "typical_tracec.h"

#ifndef TRACEC_FIXED_NESTED_LENGTHS
#error "enc_tracec_len4.c is built with TRACEC_FIXED_NESTED_LENGTHS"
#endif

BENCH_NOINLINE size_t bench_encode_tracec_len4(void *ctx, const bench_input *in, uint8_t *buf, size_t cap) {
    (void)ctx;
    return typical_tracec_into_array(in, buf, cap);
}
