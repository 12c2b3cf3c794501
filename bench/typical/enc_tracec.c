/*
 * enc_tracec.c - the typical packet through tracec's generated writers, into
 * the caller's array (tracec_writer_init_array, re-initialised per packet).
 * The fields are written by typical_tracec.h, shared with bench_buffer.
 */
#include "typical_tracec.h"

BENCH_NOINLINE size_t bench_encode_tracec(void *ctx, const bench_input *in, uint8_t *buf, size_t cap) {
    (void)ctx;
    return typical_tracec_into_array(in, buf, cap);
}
