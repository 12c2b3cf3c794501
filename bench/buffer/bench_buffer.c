/*
 * bench_buffer.c - throughput of writing the typical packet (bench/typical)
 * with the generated writers directly into a trace buffer, delivery
 * running, for each mode and policy, with one and with two producer
 * threads; the floor is bench/typical's hand-written direct encoder into a
 * plain array, measured in the same run.
 *
 * Prints a table; appends one JSON line per measurement to
 * $TRACEC_BENCH_JSON: {"bench": "buffer_1thread"|"buffer_2threads",
 * "impl": ..., "ns_per_op", "mb_per_s", "dropped"}.  ns_per_op is wall
 * time per packet of all threads together (two threads: 1 / aggregate
 * rate).  Env: TRACEC_BENCH_PACKETS (default 4000000 per measurement).
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "tracec/buffer.h"
#include "typical.h"

static const char kLabel[] = "frame-render";

static bench_input make_input(uint64_t i, uint32_t seq) {
    bench_input in = {1700000000000000000ull + i * 1000, seq, 1 /* SLICE_BEGIN */, 0x1234567890ull, 42, 7,
                      3, -12345, i, kLabel, sizeof kLabel - 1};
    return in;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline tracec_status_t write_packet(tracec_buffer_writer *bw, const bench_input *in) {
    tracec_writer pw;
    perfetto_protos_TracePacket pkt;
    bench_BenchEvent ev;
    perfetto_protos_DebugAnnotation arg;
    tracec_buffer_begin_packet(bw, &pw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, in->timestamp);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, in->sequence_id);
    perfetto_protos_TracePacket_begin_track_event_as_bench_BenchEvent(&pkt, &ev);
    bench_BenchEvent_set_type(&ev, (perfetto_protos_TrackEvent_Type)in->type);
    bench_BenchEvent_set_track_uuid(&ev, in->track_uuid);
    bench_BenchEvent_set_name_iid(&ev, in->name_iid);
    bench_BenchEvent_set_category_iids(&ev, in->category_iid);
    bench_BenchEvent_begin_debug_annotations(&ev, &arg);
    perfetto_protos_DebugAnnotation_set_name_iid(&arg, in->annotation_name_iid);
    perfetto_protos_DebugAnnotation_set_int_value(&arg, in->annotation_int);
    bench_BenchEvent_end_debug_annotations(&ev, &arg);
    bench_BenchEvent_set_bench_counter(&ev, in->counter);
    bench_BenchEvent_set_bench_label(&ev, in->label, in->label_len);
    perfetto_protos_TracePacket_end_track_event_as_bench_BenchEvent(&pkt, &ev);
    return tracec_buffer_end_packet(bw, &pw, &pkt.msg);
}

/* Delivery: touch every record (sum of sizes and first bytes). */
static _Atomic uint64_t g_delivered, g_delivered_bytes;
static void on_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                       uint64_t drops) {
    (void)c, (void)b, (void)d, (void)drops;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += h[i]->size + ((const uint8_t *)h[i]->payload)[0];
    atomic_fetch_add(&g_delivered, n);
    atomic_fetch_add(&g_delivered_bytes, bytes);
}

typedef struct job {
    tracec_buffer_id_t b;
    uint64_t n;
    uint32_t seq;
    uint64_t ok, refused;
    pthread_barrier_t *start;
} job;

static void *producer(void *p) {
    job *j = (job *)p;
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, j->b, 0) != TRACEC_STATUS_SUCCESS) abort();
    pthread_barrier_wait(j->start);
    for (uint64_t i = 0; i < j->n; i++) {
        bench_input in = make_input(i, j->seq);
        if (write_packet(&bw, &in) == TRACEC_STATUS_SUCCESS) j->ok++;
        else j->refused++;
    }
    tracec_buffer_writer_release(&bw);
    return NULL;
}

typedef struct result {
    double ns_per_op, mb_per_s;
    uint64_t dropped;
} result;

static size_t g_packet_bytes; /* bytes of one packet (the direct encoder's output) */

static result run_buffer(tracec_buffering_mode_t mode, tracec_buffer_policy_t policy, int threads, uint64_t total) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t b;
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS) abort();
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.size = 1u << 20;
    cfg.watermark = cfg.size / 2;
    cfg.callback = on_records;
    if (tracec_create_buffer_with_config(ctx, &cfg, &b) != TRACEC_STATUS_SUCCESS) abort();
    if (tracec_start_context(ctx) != TRACEC_STATUS_SUCCESS) abort();
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1u);
    job jobs[2];
    pthread_t t[2];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job){b, total / (uint64_t)threads, (uint32_t)i + 1, 0, 0, &start};
        pthread_create(&t[i], NULL, producer, &jobs[i]);
    }
    pthread_barrier_wait(&start);
    double t0 = now_s();
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double t1 = now_s();
    (void)tracec_stop_context(ctx);
    tracec_buffer_stats_t st;
    (void)tracec_query_buffer_stats(b, &st);
    (void)tracec_destroy_context(ctx);
    pthread_barrier_destroy(&start);
    result r;
    r.ns_per_op = (t1 - t0) * 1e9 / (double)total;
    r.mb_per_s = (double)total * (double)g_packet_bytes / (t1 - t0) / 1e6;
    r.dropped = st.dropped + st.overwritten;
    return r;
}

/* The floor: the direct encoder into a plain 1 MiB array, restarted when full. */
static uint8_t g_array[1u << 20];
typedef struct djob {
    uint64_t n;
    uint8_t *arr;
    pthread_barrier_t *start;
    uint64_t sink;
} djob;

static void *direct_producer(void *p) {
    djob *j = (djob *)p;
    size_t off = 0;
    pthread_barrier_wait(j->start);
    for (uint64_t i = 0; i < j->n; i++) {
        bench_input in = make_input(i, 1);
        if (off + 256 > sizeof g_array / 2) off = 0;
        off += bench_encode_direct(NULL, &in, j->arr + off, 256);
    }
    j->sink = off;
    return NULL;
}

static result run_direct(int threads, uint64_t total) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1u);
    djob jobs[2];
    pthread_t t[2];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (djob){total / (uint64_t)threads, g_array + (size_t)i * (sizeof g_array / 2), &start, 0};
        pthread_create(&t[i], NULL, direct_producer, &jobs[i]);
    }
    pthread_barrier_wait(&start);
    double t0 = now_s();
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double t1 = now_s();
    pthread_barrier_destroy(&start);
    result r = {(t1 - t0) * 1e9 / (double)total, (double)total * (double)g_packet_bytes / (t1 - t0) / 1e6, 0};
    return r;
}

typedef struct impl {
    const char *name;
    tracec_buffering_mode_t mode;
    tracec_buffer_policy_t policy;
} impl;

int main(void) {
    uint64_t total = 4000000;
    const char *e = getenv("TRACEC_BENCH_PACKETS");
    if (e && *e) total = strtoull(e, NULL, 10);
    bench_input in = make_input(0, 1);
    uint8_t tmp[256];
    g_packet_bytes = bench_encode_direct(NULL, &in, tmp, sizeof tmp);
    const impl impls[] = {
        {"direct", TRACEC_BUFFERING_MODE_DEFAULT, TRACEC_BUFFER_POLICY_NONE},
        {"tracec-streaming-lossless", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS},
        {"tracec-streaming-discard", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD},
        {"tracec-oneshot", TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE},
        {"tracec-circular", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE},
    };
    const char *json = getenv("TRACEC_BENCH_JSON");
    FILE *jf = json && *json ? fopen(json, "a") : NULL;
    printf("typical packet: %zu bytes; %llu packets per measurement; best of 3\n", g_packet_bytes,
           (unsigned long long)total);
    printf("%-16s %-28s %10s %10s %12s\n", "bench", "impl", "ns/packet", "MB/s", "dropped");
    for (int threads = 1; threads <= 2; threads++) {
        const char *bench = threads == 1 ? "buffer_1thread" : "buffer_2threads";
        for (size_t k = 0; k < sizeof impls / sizeof impls[0]; k++) {
            result best = {1e30, 0, 0};
            for (int rep = 0; rep < 3; rep++) {
                result r = k == 0 ? run_direct(threads, total)
                                  : run_buffer(impls[k].mode, impls[k].policy, threads, total);
                if (r.ns_per_op < best.ns_per_op) best = r;
            }
            printf("%-16s %-28s %10.2f %10.1f %12llu\n", bench, impls[k].name, best.ns_per_op, best.mb_per_s,
                   (unsigned long long)best.dropped);
            if (jf)
                fprintf(jf,
                        "{\"bench\": \"%s\", \"impl\": \"%s\", \"ns_per_op\": %.3f, \"mb_per_s\": %.1f, "
                        "\"dropped\": %llu, \"threads\": %d, \"packet_bytes\": %zu}\n",
                        bench, impls[k].name, best.ns_per_op, best.mb_per_s, (unsigned long long)best.dropped,
                        threads, g_packet_bytes);
        }
    }
    if (jf) fclose(jf);
    (void)tracec_finalize();
    return 0;
}
