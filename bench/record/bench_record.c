/*
 * bench_record.c - the typical packet (bench/typical) from one and from two
 * provider processes through the recorder (tracec/recorder.h) into a trace
 * file, against the same packets written in-process into a STREAMING
 * LOSSLESS trace buffer whose callback writes them to a file, in the same
 * run.  Each provider writes TRACEC_BENCH_PACKETS packets (default
 * 1000000) into its shared buffer (TRACEC_BENCH_BUFFER_KIB, default 8192).
 *
 * Time: from the first provider's first packet to the trace closed on disk
 * (in-process: first packet to the buffer stopped and the file closed).
 * STREAMING in the recorder drops when it falls behind (wait_ms 0):
 * `dropped` says how many, and MB/s counts delivered bytes only.
 *
 * "recorder-wait" runs the providers with wait_ms 2000 (a writer waits for
 * the recorder to save a half instead of dropping): lossless like the peer.
 *
 * JSON lines to $TRACEC_BENCH_JSON: {"bench": "record_1provider" |
 * "record_2providers", "impl": "recorder" | "recorder-wait" | "in-process", "ns_per_op",
 * "mb_per_s", "delivered", "dropped", "runs"}; ns_per_op is wall time per
 * produced packet (all providers together), best of TRACEC_BENCH_REPS
 * rounds (default 3).
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracec/buffer.h"
#include "tracec/provider.h"
#include "tracec/recorder.h"
#include "typical_tracec.h"

static const char kLabel[] = "frame-render";
static uint64_t g_packets = 1000000;
static size_t g_buffer = 8u << 20;
static char g_dir[64];

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

/* A provider process: writes g_packets packets, sends its start time on `out`. */
static void provider_main(const char *sock, int idx, int out) {
    char name[32];
    snprintf(name, sizeof name, "bench-%d", idx);
    setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
    tracec_provider *p;
    if (tracec_provider_register(name, &p) != TRACEC_STATUS_SUCCESS || !tracec_provider_wait_started(p, 10000))
        _exit(3);
    double t0 = now_s();
    for (uint64_t i = 0; i < g_packets; i++) {
        bench_input in = make_input(i, 1);
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_provider_begin_packet(p, &w, &pkt.msg);
        typical_tracec_fields(&pkt, &in);
        (void)tracec_provider_end_packet(p, &w, &pkt.msg);
    }
    tracec_provider_unregister(p);
    if (write(out, &t0, sizeof t0) != (ssize_t)sizeof t0) _exit(4);
    _exit(0);
}

typedef struct result {
    double ns_per_op, mb_per_s;
    uint64_t delivered, dropped;
} result;

static result run_recorder(int providers, int wait_ms) {
    result r = {0, 0, 0, 0};
    char sock[128], out[128];
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(out, sizeof out, "%s/rec.pftrace", g_dir);
    int pp[2];
    if (pipe(pp) != 0) abort();
    pid_t kids[2];
    for (int i = 0; i < providers; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(pp[0]);
            provider_main(sock, i, pp[1]);
        }
    }
    close(pp[1]);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.output_path = out;
    cfg.buffer_size = g_buffer;
    cfg.wait_ms = wait_ms;
    tracec_recorder *rec;
    if (tracec_recorder_open(&cfg, &rec) != TRACEC_STATUS_SUCCESS) abort();
    if (tracec_recorder_start(rec) != TRACEC_STATUS_SUCCESS) abort();
    int live = providers;
    while (live > 0) {
        tracec_recorder_poll(rec, 5);
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0) live--;
    }
    for (int i = 0; i < 10; i++) tracec_recorder_poll(rec, 2);
    tracec_recorder_provider_info info;
    for (size_t i = 0; tracec_recorder_provider(rec, i, &info); i++) {
        r.delivered += info.delivered;
        r.dropped += info.dropped;
    }
    tracec_recorder_close(rec);
    double t1 = now_s(), t0 = 1e300, t;
    while (read(pp[0], &t, sizeof t) == (ssize_t)sizeof t)
        if (t < t0) t0 = t;
    close(pp[0]);
    FILE *f = fopen(out, "rb");
    long bytes = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        bytes = ftell(f);
        fclose(f);
    }
    unlink(out);
    uint64_t produced = g_packets * (uint64_t)providers;
    r.ns_per_op = (t1 - t0) * 1e9 / (double)produced;
    r.mb_per_s = (double)bytes / (t1 - t0) / 1e6;
    return r;
}

/* The peer: the same packets in-process, STREAMING LOSSLESS, the callback writing a file. */
static FILE *g_file;
static void on_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                       uint64_t drops) {
    (void)c, (void)b, (void)d, (void)drops;
    for (size_t i = 0; i < n; i++) fwrite(h[i]->payload, 1, h[i]->size, g_file);
}

static result run_in_process(void) {
    char out[128];
    snprintf(out, sizeof out, "%s/inproc.pftrace", g_dir);
    g_file = fopen(out, "wb");
    tracec_context_id_t ctx;
    tracec_buffer_id_t b;
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS) abort();
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = TRACEC_BUFFERING_MODE_STREAMING;
    cfg.policy = TRACEC_BUFFER_POLICY_LOSSLESS;
    cfg.size = g_buffer / 2; /* per half, like the recorder's halves */
    cfg.watermark = cfg.size / 2;
    cfg.callback = on_records;
    if (tracec_create_buffer_with_config(ctx, &cfg, &b) != TRACEC_STATUS_SUCCESS) abort();
    if (tracec_start_context(ctx) != TRACEC_STATUS_SUCCESS) abort();
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, b, 0) != TRACEC_STATUS_SUCCESS) abort();
    uint64_t ok = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < g_packets; i++) {
        bench_input in = make_input(i, 1);
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt.msg);
        typical_tracec_fields(&pkt, &in);
        ok += tracec_buffer_end_packet(&bw, &w, &pkt.msg) == TRACEC_STATUS_SUCCESS;
    }
    tracec_buffer_writer_release(&bw);
    (void)tracec_stop_context(ctx);
    fclose(g_file);
    double t1 = now_s();
    tracec_buffer_stats_t st = {0};
    if (tracec_query_buffer_stats(b, &st) != TRACEC_STATUS_SUCCESS) fprintf(stderr, "cannot read the buffer's stats\n");
    (void)tracec_destroy_context(ctx);
    FILE *f = fopen(out, "rb");
    long bytes = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        bytes = ftell(f);
        fclose(f);
    }
    unlink(out);
    result r = {(t1 - t0) * 1e9 / (double)g_packets, (double)bytes / (t1 - t0) / 1e6, ok, st.dropped};
    return r;
}

static void emit(FILE *jf, const char *bench, const char *impl, result r, int reps) {
    printf("%-18s %-13s %9.1f ns/packet %8.1f MB/s  delivered %10llu  dropped %10llu\n", bench, impl, r.ns_per_op,
           r.mb_per_s, (unsigned long long)r.delivered, (unsigned long long)r.dropped);
    if (jf)
        fprintf(jf,
                "{\"bench\": \"%s\", \"impl\": \"%s\", \"ns_per_op\": %.2f, \"mb_per_s\": %.1f, \"delivered\": %llu, "
                "\"dropped\": %llu, \"runs\": %d}\n",
                bench, impl, r.ns_per_op, r.mb_per_s, (unsigned long long)r.delivered, (unsigned long long)r.dropped,
                reps);
}

static result best(result a, result b) { return b.ns_per_op < a.ns_per_op ? b : a; }

int main(void) {
    const char *e = getenv("TRACEC_BENCH_PACKETS");
    if (e && *e) g_packets = strtoull(e, NULL, 10);
    e = getenv("TRACEC_BENCH_BUFFER_KIB");
    if (e && *e) g_buffer = (size_t)strtoull(e, NULL, 10) * 1024u;
    int reps = 3;
    e = getenv("TRACEC_BENCH_REPS");
    if (e && *e) reps = atoi(e);
    if (reps < 1) reps = 1;
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-benchrec-XXXXXX");
    if (mkdtemp(g_dir) == NULL) return 1;
    const char *json = getenv("TRACEC_BENCH_JSON");
    FILE *jf = json && *json ? fopen(json, "a") : NULL;
    printf("typical packet, %llu packets per provider, shared buffer %zu KiB; best of %d rounds\n",
           (unsigned long long)g_packets, g_buffer / 1024, reps);
    result inproc = {1e300, 0, 0, 0}, one = inproc, two = inproc, one_w = inproc, two_w = inproc;
    for (int i = 0; i < reps; i++) {
        inproc = best(inproc, run_in_process());
        one = best(one, run_recorder(1, 0));
        two = best(two, run_recorder(2, 0));
        one_w = best(one_w, run_recorder(1, 2000));
        two_w = best(two_w, run_recorder(2, 2000));
    }
    emit(jf, "record_1provider", "in-process", inproc, reps);
    emit(jf, "record_1provider", "recorder", one, reps);
    emit(jf, "record_1provider", "recorder-wait", one_w, reps);
    emit(jf, "record_2providers", "in-process", inproc, reps);
    emit(jf, "record_2providers", "recorder", two, reps);
    emit(jf, "record_2providers", "recorder-wait", two_w, reps);
    printf("recorder --wait 2000 (lossless like the in-process peer) / in-process packet rate: "
           "1 provider %.2fx, 2 providers %.2fx (target >= 0.7x)\n",
           inproc.ns_per_op / one_w.ns_per_op, inproc.ns_per_op / two_w.ns_per_op);
    printf("recorder / in-process packet rate: 1 provider %.2fx, 2 providers %.2fx (target >= 0.7x)\n",
           inproc.ns_per_op / one.ns_per_op, inproc.ns_per_op / two.ns_per_op);
    /* delivered packets per second (a STREAMING provider drops what the recorder was too late for) */
    double in_rate = (double)inproc.delivered / inproc.ns_per_op / (double)g_packets;
    printf("delivered-packet rate: 1 provider %.2fx, 2 providers %.2fx of in-process\n",
           (double)one.delivered / (one.ns_per_op * (double)g_packets) / in_rate,
           (double)two.delivered / (two.ns_per_op * 2.0 * (double)g_packets) / in_rate);
    if (jf) fclose(jf);
    rmdir(g_dir);
    return 0;
}
