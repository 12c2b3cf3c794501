/*
 * buffer_exit_helper.c - emits records below the watermark (and a packet)
 * and returns from main without flushing: the runtime's exit handler must
 * deliver them.  Prints "delivered N" from the callback.
 */
#include <stdio.h>

#include "tracec/buffer.h"

static unsigned long delivered;

static void on_records(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                       void *data, uint64_t drops) {
    (void)ctx, (void)id, (void)h, (void)data, (void)drops;
    delivered += n;
    printf("delivered %lu\n", delivered);
    fflush(stdout);
}

int main(void) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t b;
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS) return 1;
    if (tracec_create_buffer(ctx, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS, on_records, NULL, &b) !=
        TRACEC_STATUS_SUCCESS)
        return 1;
    if (tracec_start_context(ctx) != TRACEC_STATUS_SUCCESS) return 1;
    for (unsigned long i = 0; i < 10; i++)
        if (tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &i, sizeof i) != TRACEC_STATUS_SUCCESS) return 1;
    static tracec_buffer_writer bw; /* never released: the exit handler must cope */
    if (tracec_buffer_writer_init(&bw, b, 0) != TRACEC_STATUS_SUCCESS) return 1;
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 2, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 99);
    if (tracec_buffer_end_packet(&bw, &pw, &pkt) != TRACEC_STATUS_SUCCESS) return 1;
    return 0; /* no flush, no stop */
}
