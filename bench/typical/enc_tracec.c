/*
 * enc_tracec.c - the typical packet through tracec's generated writers, into
 * the caller's array (tracec_writer_init_array, re-initialised per packet).
 * The fields are written by typical_tracec.h, shared with bench_buffer.
 */
#include "typical_tracec.h"

BENCH_NOINLINE size_t bench_encode_tracec(void *ctx, const bench_input *in, uint8_t *buf,
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
