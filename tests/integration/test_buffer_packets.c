/*
 * test_buffer_packets.c - generated writers writing TracePackets straight
 * into trace buffers, from several threads, read back as a .pftrace: by
 * meaning with tracec/testing.h, and with `protoc --decode` as an
 * independent decoder.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "protoc_oracle.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/testing.h"
#include "tracec/trace_file.h"

enum { kThreads = 3, kPerThread = 2000 };

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tracec_trace_file *g_out;
static uint64_t g_seen[kThreads];

/* The delivery callback: payloads are whole Trace.packet records. */
static void on_records(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                       void *data, uint64_t drops) {
    (void)ctx, (void)id, (void)data, (void)drops;
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < n; i++) tracec_trace_file_append_raw(g_out, h[i]->payload, h[i]->size);
    pthread_mutex_unlock(&g_mu);
}

typedef struct producer {
    tracec_buffer_id_t buf;
    uint32_t thread;
    int failures;
} producer;

static void write_event(tracec_buffer_writer *bw, uint32_t thread, uint32_t seq) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    my_app_MyEvent ev;
    tracec_buffer_begin_packet(bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                               &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, (uint64_t)seq);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, thread + 1);
    perfetto_protos_TracePacket_begin_track_event_as_my_app_MyEvent(&pkt, &ev);
    my_app_MyEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    my_app_MyEvent_set_custom_counter(&ev, (int64_t)thread * 1000000 + seq);
    my_app_MyEvent_set_cstr_custom_string(&ev, (seq % 2) ? "odd" : "even");
    perfetto_protos_TracePacket_end_track_event_as_my_app_MyEvent(&pkt, &ev);
    cr_assert_eq(tracec_buffer_end_packet(bw, &w, &pkt.msg), TRACEC_STATUS_SUCCESS);
}

static void *produce(void *arg) {
    producer *p = arg;
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, p->buf, 0) != TRACEC_STATUS_SUCCESS) {
        p->failures++;
        return NULL;
    }
    for (uint32_t seq = 0; seq < kPerThread; seq++) write_event(&bw, p->thread, seq);
    tracec_buffer_writer_release(&bw);
    return NULL;
}

/* Walks the trace: every (sequence, timestamp) exactly once, in order per sequence. */
static void check_exactly_once(const uint8_t *data, size_t size) {
    memset(g_seen, 0, sizeof g_seen);
    size_t off = 0;
    while (off < size) {
        cr_assert_eq(data[off], 0x0a, "offset %zu is not a Trace.packet record", off);
        uint32_t len = 0;
        size_t h = 1; /* the minimal varint length after 0x0A */
        for (int shift = 0; h < 6 && off + h < size; shift += 7) {
            len |= (uint32_t)(data[off + h] & 0x7f) << shift;
            if (!(data[off + h++] & 0x80)) break;
        }
        const uint8_t *p = data + off + h;
        cr_assert_eq(p[0], 0x40); /* timestamp */
        uint64_t ts = 0;
        int shift = 0;
        size_t k = 1;
        do {
            ts |= (uint64_t)(p[k] & 0x7f) << shift;
            shift += 7;
        } while (p[k++] & 0x80);
        cr_assert_eq(p[k], 0x50); /* trusted_packet_sequence_id */
        uint32_t seq_id = p[k + 1];
        cr_assert(seq_id >= 1 && seq_id <= kThreads);
        cr_assert_eq(ts, g_seen[seq_id - 1], "sequence %u: packet %llu out of order or duplicated", seq_id,
                     (unsigned long long)ts);
        g_seen[seq_id - 1]++;
        off += h + len;
    }
    for (int t = 0; t < kThreads; t++) cr_assert_eq(g_seen[t], (uint64_t)kPerThread, "thread %d", t);
}

Test(buffer_packets, generated_writers_from_threads_lossless) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    cr_assert_eq(tracec_trace_file_open_memory(&g_out), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_create_context(&ctx), TRACEC_STATUS_SUCCESS);
    /* Small halves so the run switches halves and waits many times. */
    cr_assert_eq(tracec_create_buffer(ctx, 16 * 1024, 12 * 1024, TRACEC_BUFFER_POLICY_LOSSLESS, on_records,
                                      NULL, &buf),
                 TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_start_context(ctx), TRACEC_STATUS_SUCCESS);
    pthread_t th[kThreads];
    producer ps[kThreads];
    for (uint32_t t = 0; t < kThreads; t++) {
        ps[t] = (producer){buf, t, 0};
        pthread_create(&th[t], NULL, produce, &ps[t]);
    }
    for (int t = 0; t < kThreads; t++) {
        pthread_join(th[t], NULL);
        cr_assert_eq(ps[t].failures, 0);
    }
    cr_assert_eq(tracec_flush_buffer(buf), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_stop_context(ctx), TRACEC_STATUS_SUCCESS);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_out, &size);
    check_exactly_once(data, size);

    /* An independent decoder agrees on a packet's contents. */
    int st = -1;
    char *text = oracle_decode(TRACEC_SOURCE_DIR "/protos:" TRACEC_SOURCE_DIR "/examples:" TRACEC_SOURCE_DIR
                               "/scripts:" TRACEC_PROTOBUF_INCLUDE,
                               "decode_demo.proto", "perfetto.protos.Trace", data, size, &st);
    cr_assert_eq(st, 0, "%s", text);
    cr_assert(strstr(text, "  trusted_packet_sequence_id: 3\n  track_event {\n    type: TYPE_INSTANT\n"
                           "    [my_app.MyEvent.custom_string]: \"odd\"\n"
                           "    [my_app.MyEvent.custom_counter]: 2001999\n") != NULL,
              "the last packet of thread 2 is missing from protoc's decoding");
    free(text);
    tracec_trace_file_close(g_out);
}

Test(buffer_packets, oneshot_keeps_first_packets_by_meaning) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    cr_assert_eq(tracec_trace_file_open_memory(&g_out), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_create_context(&ctx), TRACEC_STATUS_SUCCESS);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = TRACEC_BUFFERING_MODE_ONESHOT;
    cfg.policy = TRACEC_BUFFER_POLICY_NONE;
    cfg.size = 4096;
    cfg.callback = on_records;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &buf), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_start_context(ctx), TRACEC_STATUS_SUCCESS);
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, buf, 0), TRACEC_STATUS_SUCCESS);
    uint32_t accepted = 0;
    for (uint32_t seq = 0; seq < 500; seq++) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                   &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, seq);
        if (tracec_buffer_end_packet(&bw, &w, &pkt.msg) == TRACEC_STATUS_SUCCESS) {
            cr_assert_eq(accepted, seq, "a packet was accepted after one was dropped");
            accepted++;
        }
    }
    tracec_buffer_writer_release(&bw);
    cr_assert_eq(tracec_stop_context(ctx), TRACEC_STATUS_SUCCESS);
    cr_assert(accepted > 10 && accepted < 500, "accepted %u", accepted);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_out, &size);
    /* The kept packets are exactly the first `accepted` ones. */
    size_t cap = 64u * accepted + 16;
    char *expected = malloc(cap);
    size_t k = 0;
    for (uint32_t i = 0; i < accepted; i++) k += (size_t)snprintf(expected + k, cap - k, "packet { timestamp: %u }\n", i);
    tracec_assert_trace_eq_text(data, size, expected, NULL);
    free(expected);
    tracec_trace_file_close(g_out);
}
