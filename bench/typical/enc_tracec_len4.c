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

BENCH_NOINLINE size_t bench_encode_tracec_len4(void *ctx, const bench_input *in, uint8_t *buf,
                                               size_t cap) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    (void)ctx;
    tracec_writer_init_array(&w, buf, cap);
    tracec_writer_begin_root(&w, &pkt.msg);
    typical_tracec_fields(&pkt, in);
    if (tracec_writer_end_root(&w, &pkt.msg) != TRACEC_STATUS_SUCCESS) return 0;
    return tracec_writer_size(&w);
}
