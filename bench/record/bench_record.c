/*
 * bench_record.c - the typical packet (bench/typical) from one and from two
 * provider processes through the recorder (tracec/recorder.h) into a trace
 * file, against the same packets written in-process into a STREAMING
 * LOSSLESS trace buffer whose callback writes them to a file, in the same
 * run.  Each provider writes TRACEC_BENCH_PACKETS packets (default
 * 1000000) into its shared buffer (TRACEC_BENCH_BUFFER_KIB, default 8192):
 * the typical packet's fields but its sequence id, which the provider
 * appends itself, so each packet in the recorder's trace has the bytes of
 * one in the in-process peer's.
 *
 * Time: from the first provider's first packet to the trace closed on disk,
 * the recorder polled until every packet is in the trace or counted lost
 * (in-process: first packet to the buffer stopped and the file closed).
 * STREAMING in the recorder drops when it falls behind (wait_ms 0):
 * `dropped` says how many, and MB/s counts delivered bytes only.
 *
 * "recorder-wait" runs the providers with wait_ms 2000 (a writer waits for
 * the recorder to save a half instead of dropping): lossless like the peer.
 * The peer of 2 providers is printed twice: the one-writer peer above, and
 * "in-process-2", 2 writer threads of one process into the one buffer and
 * file (two writers, one trace: the same work as 2 providers, one
 * recorder).
 *
 * "record_threads": one recorded process whose 1 or 2 writer threads each
 * write TRACEC_BENCH_THREAD_PACKETS packets (default 300000) into a buffer
 * large enough (TRACEC_BENCH_THREAD_BUFFER_KIB, default 262144) that no
 * half is handed inside the timed window: events/s of the writers from the
 * first one's start to the last one's end (their own clocks), the
 * process's CPU time over that window and the writing threads' own CPU per
 * packet; the ratio 2 threads / 1 thread is printed (best of three times
 * TRACEC_BENCH_REPS rounds each: the windows are short).  Its peer in the
 * same rounds, "floor-1-thread" / "floor-2-threads": the same packets
 * written by the generated writers into each thread's own array, its pages
 * touched before the round, in this process (no buffer engine, nothing
 * shared): the bytes alone, which two threads write fast enough to be
 * bound by the machine's memory.  And "cores-1-thread" /
 * "cores-2-threads": a loop that touches no memory, about a packet's time
 * per step: how much of two cores the machine gives two threads in that
 * hour (a virtual machine's two vCPUs may share a core or be taken by its
 * host), which bounds every 2 / 1 ratio of the same rounds.  Then, for
 * each peer, every writing thread's own window over all its rounds (min /
 * median / max, and how many are 1.6x the fastest or slower): the same
 * packets per thread each round, so slow rounds in the floor as in the
 * recorded rows are the machine's.
 *
 * JSON lines to $TRACEC_BENCH_JSON: {"bench": "record_1provider" |
 * "record_2providers" | "record_threads", "impl": "recorder" |
 * "recorder-wait" | "in-process" | "in-process-2" | "1-thread" | "2-threads" | "floor-1-thread"
 * | "floor-2-threads" | "cores-1-thread" | "cores-2-threads", "ns_per_op",
 * "mb_per_s", "delivered", "dropped", "runs"} (record_threads: "events_per_s", "cpu_ms" and "writer_cpu_ns"
 * instead of mb_per_s); ns_per_op is wall time per produced
 * packet (all providers or threads together), best of TRACEC_BENCH_REPS
 * rounds (default 3).
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
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

/* The typical packet through a provider: its fields but the sequence id, which the provider appends (so the
   recorder's trace holds the same bytes per packet as the in-process peer's). */
static inline __attribute__((always_inline)) void provider_packet(tracec_provider *p, uint64_t i) {
    bench_input in = make_input(i, 1);
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_provider_begin_packet(p, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, in.timestamp);
    typical_tracec_event(&pkt, &in);
    (void)tracec_provider_end_packet(p, &w, &pkt.msg);
}

/* A provider process: writes g_packets packets, sends its start time on `out`. */
static void provider_main(const char *sock, int idx, int out) {
    char name[32];
    snprintf(name, sizeof name, "bench-%d", idx);
    setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
    tracec_provider *p;
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = name;
    reg.max_wait_ms = 10000; /* the recorder's --wait decides (recorder-wait: lossless); the default cap is 10 ms */
    if (tracec_provider_register_with(&reg, NULL, &p) != TRACEC_STATUS_SUCCESS || !tracec_provider_wait_started(p, 10000))
        _exit(3);
    double t0 = now_s();
    for (uint64_t i = 0; i < g_packets; i++) {
        provider_packet(p, i);
    }
    tracec_provider_unregister(p);
    if (write(out, &t0, sizeof t0) != (ssize_t)sizeof t0) _exit(4);
    _exit(0);
}

typedef struct result {
    double ns_per_op, mb_per_s;
    uint64_t delivered, dropped;
    double cpu_ns_per_op; /* CPU time (user + system) of every process and thread of the row, per packet */
    double save_cpu_ns_per_op; /* the recorder's (in-process: the delivery's and the writer's) alone */
} result;

static double rusage_s(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static result run_recorder(int providers, int wait_ms) {
    result r = {0, 0, 0, 0, 0, 0};
    double self0 = rusage_s(RUSAGE_SELF), kids0 = rusage_s(RUSAGE_CHILDREN);
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
    /* the providers have exited: the recorder takes in what they said last (their last halves, STOPPED);
       the clock stops once every packet is in the trace or counted lost, not after idle polls */
    uint64_t produced = g_packets * (uint64_t)providers;
    for (double give_up = now_s() + 2.0; now_s() < give_up;) {
        r.delivered = r.dropped = 0;
        tracec_recorder_provider_info info;
        for (size_t i = 0; tracec_recorder_provider(rec, i, &info); i++) {
            r.delivered += info.delivered;
            r.dropped += info.dropped;
        }
        if (r.delivered + r.dropped >= produced) break;
        tracec_recorder_poll(rec, 1);
    }
    tracec_recorder_close(rec);
    double t1 = now_s(), t0 = 1e300, t;
    double self = rusage_s(RUSAGE_SELF) - self0, kid_cpu = rusage_s(RUSAGE_CHILDREN) - kids0;
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
    r.ns_per_op = (t1 - t0) * 1e9 / (double)produced;
    r.mb_per_s = (double)bytes / (t1 - t0) / 1e6;
    r.cpu_ns_per_op = (self + kid_cpu) * 1e9 / (double)produced;
    r.save_cpu_ns_per_op = self * 1e9 / (double)produced;
    return r;
}

/* The peer: the same packets in-process, STREAMING LOSSLESS, the callback writing a file. */
static FILE *g_file;
static void on_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                       uint64_t drops) {
    (void)c, (void)b, (void)d, (void)drops;
    for (size_t i = 0; i < n; i++) fwrite(h[i]->payload, 1, h[i]->size, g_file);
}

/* One in-process writer: g_packets packets into `b` through its own buffer writer. */
typedef struct inproc_arg {
    tracec_buffer_id_t b;
    uint64_t ok;
    double t0;
} inproc_arg;

static void *inproc_writer(void *arg) {
    inproc_arg *a = arg;
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, a->b, 0) != TRACEC_STATUS_SUCCESS) abort();
    a->t0 = now_s();
    for (uint64_t i = 0; i < g_packets; i++) {
        bench_input in = make_input(i, 1);
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt.msg);
        typical_tracec_fields(&pkt, &in);
        a->ok += tracec_buffer_end_packet(&bw, &w, &pkt.msg) == TRACEC_STATUS_SUCCESS;
    }
    tracec_buffer_writer_release(&bw);
    return NULL;
}

/* The peer: the same packets in-process, STREAMING LOSSLESS, the callback writing a file; `threads` writers (1 or
   2: the peer of 2 providers is 2 writers into one trace, as the recorder's providers are). */
static result run_in_process(int threads) {
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
    inproc_arg a[2] = {{b, 0, 0}, {b, 0, 0}};
    pthread_t t;
    double c0 = rusage_s(RUSAGE_SELF);
    if (threads > 1 && pthread_create(&t, NULL, inproc_writer, &a[1]) != 0) abort();
    inproc_writer(&a[0]);
    if (threads > 1) pthread_join(t, NULL);
    (void)tracec_stop_context(ctx);
    fclose(g_file);
    double t1 = now_s(), cpu = rusage_s(RUSAGE_SELF) - c0;
    double t0 = threads > 1 && a[1].t0 < a[0].t0 ? a[1].t0 : a[0].t0;
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
    double produced = (double)g_packets * threads;
    result r = {(t1 - t0) * 1e9 / produced, (double)bytes / (t1 - t0) / 1e6, a[0].ok + a[1].ok, st.dropped,
                cpu * 1e9 / produced, cpu * 1e9 / produced};
    return r;
}

/* ---- writer threads in one recorded process ---- */

static uint64_t g_thread_packets = 300000;
static size_t g_thread_buffer = 256u << 20;

typedef struct thread_arg {
    tracec_provider *p; /* NULL: the floor, into `mem` (NULL too: the register-only loop) */
    pthread_barrier_t *go;
    uint8_t *mem;       /* the floor's array: its thread's alone, its pages touched before the round */
    size_t mem_size, written;
    double t0, t1, cpu_s; /* out: when the thread began and ended its packets (CLOCK_MONOTONIC), its CPU time */
} thread_arg;

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *thread_writer(void *arg) {
    thread_arg *a = arg;
    pthread_barrier_wait(a->go);
    double c0 = thread_cpu_s();
    a->t0 = now_s();
    if (a->p != NULL) {
        for (uint64_t i = 0; i < g_thread_packets; i++) provider_packet(a->p, i);
    } else if (a->mem == NULL) { /* register-only work of about a packet's time per step: no memory at all */
        uint64_t x = 1;
        for (uint64_t i = 0; i < g_thread_packets * 8u; i++) {
            x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            x ^= x >> 29;
        }
        a->written = (size_t)(x | 1u); /* not dead */
    } else { /* the same packets, one after the other in the thread's own array */
        size_t off = 0;
        for (uint64_t i = 0; i < g_thread_packets; i++) {
            bench_input in = make_input(i, 1);
            off += typical_tracec_into_array(&in, a->mem + off, a->mem_size - off);
        }
        a->written = off; /* read after the round: the writes are not dead */
    }
    a->t1 = now_s();
    a->cpu_s = thread_cpu_s() - c0;
    return NULL;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/*
 * The recorded process: `threads` writers; sends {wall seconds, cpu seconds, dropped, the writing threads' cpu
 * seconds} on `out`.  The wall time is the writers' own: from the first one's start to the last one's end.  A
 * thread that leaves the barrier later than the writers (woken by the last to arrive) would start the clock
 * late and make the round look faster than it was.
 */
static void threads_main(const char *sock, int threads, int out) {
    setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
    tracec_provider *p;
    if (tracec_provider_register("bench-threads", &p) != TRACEC_STATUS_SUCCESS || !tracec_provider_wait_started(p, 10000))
        _exit(3);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)threads + 1u);
    pthread_t t[2];
    thread_arg a[2] = {{p, &go, NULL, 0, 0, 0, 0, 0}, {p, &go, NULL, 0, 0, 0, 0, 0}};
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, thread_writer, &a[i]) != 0) _exit(5);
    pthread_barrier_wait(&go);
    double c0 = cpu_s();
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double first = a[0].t0, last = a[0].t1;
    for (int i = 1; i < threads; i++) {
        if (a[i].t0 < first) first = a[i].t0;
        if (a[i].t1 > last) last = a[i].t1;
    }
    double res[6] = {last - first, cpu_s() - c0, (double)tracec_provider_get_stats(p).dropped, a[0].cpu_s + a[1].cpu_s,
                     a[0].t1 - a[0].t0, a[1].t1 - a[1].t0};
    tracec_provider_unregister(p);
    if (write(out, res, sizeof res) != (ssize_t)sizeof res) _exit(4);
    _exit(0);
}

typedef struct thread_result {
    double ns_per_op, events_per_s, cpu_ms, dropped;
    double writer_cpu_ns; /* the writing threads' own CPU time per packet */
    double own_s[2];      /* each writing thread's own window, first to last packet (0: no such thread) */
} thread_result;

static thread_result run_threads(int threads) {
    thread_result r = {1e300, 0, 0, 0, 0, {0, 0}};
    char sock[128];
    snprintf(sock, sizeof sock, "%s/t.sock", g_dir);
    int pp[2];
    if (pipe(pp) != 0) abort();
    pid_t kid = fork();
    if (kid == 0) {
        close(pp[0]);
        threads_main(sock, threads, pp[1]);
    }
    close(pp[1]);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.buffer_size = g_thread_buffer;
    tracec_recorder *rec;
    if (tracec_recorder_open(&cfg, &rec) != TRACEC_STATUS_SUCCESS) abort();
    if (tracec_recorder_start(rec) != TRACEC_STATUS_SUCCESS) abort();
    int st;
    while (waitpid(kid, &st, WNOHANG) == 0) tracec_recorder_poll(rec, 5);
    for (int i = 0; i < 10; i++) tracec_recorder_poll(rec, 2);
    tracec_recorder_close(rec);
    double res[6];
    if (read(pp[0], res, sizeof res) == (ssize_t)sizeof res) {
        double n = (double)g_thread_packets * threads;
        r.ns_per_op = res[0] * 1e9 / n;
        r.events_per_s = n / res[0];
        r.cpu_ms = res[1] * 1e3;
        r.dropped = res[2];
        r.writer_cpu_ns = res[3] * 1e9 / n;
        for (int i = 0; i < threads; i++) r.own_s[i] = res[4 + i];
    }
    close(pp[0]);
    return r;
}

/*
 * The peers of record_threads, in this process, timed the same way.  With `memory`, the floor: the same packets
 * written by 1 or 2 threads into arrays of their own with the generated writers (no buffer engine, nothing
 * shared).  Without, the cores: register-only work, no memory at all.  How far this machine lets two threads
 * that share nothing scale, with and without the bytes.
 */
static thread_result run_floor(int threads, bool memory) {
    thread_result r = {1e300, 0, 0, 0, 0, {0, 0}};
    size_t size = memory ? (size_t)g_thread_packets * 128u : 0;
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)threads + 1u);
    thread_arg a[2];
    pthread_t t[2];
    memset(a, 0, sizeof a);
    for (int i = 0; i < threads; i++) {
        a[i].go = &go;
        a[i].mem_size = size;
        if (memory) {
            a[i].mem = malloc(size);
            if (a[i].mem == NULL) abort();
            /* not zero: a compiler turns malloc + memset(0) into calloc, whose fresh pages then fault in
               inside the round */
            memset(a[i].mem, 0x5a, size);
        }
        if (pthread_create(&t[i], NULL, thread_writer, &a[i]) != 0) abort();
    }
    pthread_barrier_wait(&go);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double first = a[0].t0, last = a[0].t1;
    for (int i = 1; i < threads; i++) {
        if (a[i].t0 < first) first = a[i].t0;
        if (a[i].t1 > last) last = a[i].t1;
    }
    double n = (double)g_thread_packets * threads;
    r.ns_per_op = (last - first) * 1e9 / n;
    r.events_per_s = n / (last - first);
    for (int i = 0; i < threads; i++) {
        r.writer_cpu_ns += a[i].cpu_s * 1e9 / n;
        r.cpu_ms += a[i].cpu_s * 1e3;
        r.own_s[i] = a[i].t1 - a[i].t0;
        if (a[i].written == 0) abort(); /* every packet fits: 128 bytes each */
        free(a[i].mem);
    }
    pthread_barrier_destroy(&go);
    return r;
}

static void emit_threads(FILE *jf, const char *impl, thread_result r, int reps) {
    printf("%-18s %-13s %9.1f ns/packet %12.0f events/s  cpu %7.1f ms  writers' cpu %5.1f ns/packet  dropped %.0f\n",
           "record_threads", impl, r.ns_per_op, r.events_per_s, r.cpu_ms, r.writer_cpu_ns, r.dropped);
    if (jf)
        fprintf(jf,
                "{\"bench\": \"record_threads\", \"impl\": \"%s\", \"ns_per_op\": %.2f, \"events_per_s\": %.0f, "
                "\"cpu_ms\": %.1f, \"writer_cpu_ns\": %.2f, \"dropped\": %.0f, \"runs\": %d}\n",
                impl, r.ns_per_op, r.events_per_s, r.cpu_ms, r.writer_cpu_ns, r.dropped, reps);
}

static void emit(FILE *jf, const char *bench, const char *impl, result r, int reps) {
    printf("%-18s %-13s %9.1f ns/packet %8.1f MB/s  delivered %10llu  dropped %10llu  cpu %6.1f ns/packet "
           "(%s %6.1f)\n",
           bench, impl, r.ns_per_op, r.mb_per_s, (unsigned long long)r.delivered, (unsigned long long)r.dropped,
           r.cpu_ns_per_op, strncmp(impl, "in-process", 10) == 0 ? "process" : "recorder", r.save_cpu_ns_per_op);
    if (jf)
        fprintf(jf,
                "{\"bench\": \"%s\", \"impl\": \"%s\", \"ns_per_op\": %.2f, \"mb_per_s\": %.1f, \"delivered\": %llu, "
                "\"dropped\": %llu, \"cpu_ns_per_op\": %.2f, \"save_cpu_ns_per_op\": %.2f, \"runs\": %d}\n",
                bench, impl, r.ns_per_op, r.mb_per_s, (unsigned long long)r.delivered, (unsigned long long)r.dropped,
                r.cpu_ns_per_op, r.save_cpu_ns_per_op, reps);
}

/*
 * Every writing thread's own window in every round of a row pair (1 and 2 threads: the same packets per
 * thread), to tell the machine from the engine: on a quiet machine they cluster at the fastest; a host that
 * takes a vCPU away for part of a round shows as windows at whole multiples of it, in the floor's rows as in
 * the recorded ones.
 */
typedef struct own_windows {
    double s[3 * 1000]; /* 3 windows per round (1 thread, then 2), up to 1,000 rounds: more are not kept */
    int n;
} own_windows;

static void own_add(own_windows *o, thread_result r) {
    for (int i = 0; i < 2; i++)
        if (r.own_s[i] > 0 && o->n < (int)(sizeof o->s / sizeof o->s[0])) o->s[o->n++] = r.own_s[i];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void own_print(const char *what, own_windows *o) {
    if (o->n == 0) return;
    qsort(o->s, (size_t)o->n, sizeof o->s[0], cmp_double);
    int slow = 0;
    for (int i = 0; i < o->n; i++) slow += o->s[i] >= 1.6 * o->s[0];
    printf("  %-9s %5.1f / %5.1f / %5.1f ms; %d of %d at 1.6x its fastest or slower\n", what, o->s[0] * 1e3,
           o->s[o->n / 2] * 1e3, o->s[o->n - 1] * 1e3, slow, o->n);
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
    e = getenv("TRACEC_BENCH_THREAD_PACKETS");
    if (e && *e) g_thread_packets = strtoull(e, NULL, 10);
    e = getenv("TRACEC_BENCH_THREAD_BUFFER_KIB");
    if (e && *e) g_thread_buffer = (size_t)strtoull(e, NULL, 10) * 1024u;
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-benchrec-XXXXXX");
    if (mkdtemp(g_dir) == NULL) return 1;
    const char *json = getenv("TRACEC_BENCH_JSON");
    FILE *jf = json && *json ? fopen(json, "a") : NULL;
    printf("typical packet, %llu packets per provider, shared buffer %zu KiB; best of %d rounds\n",
           (unsigned long long)g_packets, g_buffer / 1024, reps);
    if (getenv("TRACEC_BENCH_WAIT2_ONLY")) { /* for a profiler: only the recorder of 2 providers with --wait */
        for (int i = 0; i < reps; i++) emit(jf, "record_2providers", "recorder-wait", run_recorder(2, 2000), 1);
        if (jf) fclose(jf);
        rmdir(g_dir);
        return 0;
    }
    /* the threads' windows are 5-10 ms, where one stolen millisecond moves a round by a tenth: three times the
       rounds (each about 0.1 s) */
    int treps = 3 * reps;
    thread_result t1 = {1e300, 0, 0, 0, 0, {0, 0}}, t2 = t1, f1 = t1, f2 = t1, r1 = t1, r2 = t1;
    static own_windows own_rec, own_floor, own_cores;
    for (int i = 0; i < treps; i++) { /* first, alone: the recorder of the other rows does not compete */
        thread_result a = run_threads(1), b = run_threads(2), c = run_floor(1, true), d = run_floor(2, true);
        thread_result x = run_floor(1, false), y = run_floor(2, false);
        own_add(&own_rec, a), own_add(&own_rec, b), own_add(&own_floor, c), own_add(&own_floor, d);
        own_add(&own_cores, x), own_add(&own_cores, y);
        if (a.ns_per_op < t1.ns_per_op) t1 = a;
        if (b.ns_per_op < t2.ns_per_op) t2 = b;
        if (c.ns_per_op < f1.ns_per_op) f1 = c;
        if (d.ns_per_op < f2.ns_per_op) f2 = d;
        if (x.ns_per_op < r1.ns_per_op) r1 = x;
        if (y.ns_per_op < r2.ns_per_op) r2 = y;
    }
    emit_threads(jf, "1-thread", t1, treps);
    emit_threads(jf, "2-threads", t2, treps);
    emit_threads(jf, "floor-1-thread", f1, treps);
    emit_threads(jf, "floor-2-threads", f2, treps);
    emit_threads(jf, "cores-1-thread", r1, treps);
    emit_threads(jf, "cores-2-threads", r2, treps);
    printf("the machine's two cores now (a register-only loop, no memory), 2 threads / 1: %.2fx (2x when the "
           "machine runs both threads at full speed; every ratio below is bounded by it)\n",
           r2.events_per_s / r1.events_per_s);
    printf("the floor (the same packets into each thread's own array: no engine, nothing shared), 2 threads / 1: "
           "%.2fx events/s, a thread's CPU per packet %.2fx: the bytes alone, at 2-3x the writers' rate (two such "
           "threads may be bound by the machine's memory), the peer of the line below\n",
           f2.events_per_s / f1.events_per_s, f1.writer_cpu_ns > 0 ? f2.writer_cpu_ns / f1.writer_cpu_ns : 0.0);
    printf("2 writer threads / 1 in one recorded process: %.2fx events/s, best of %d rounds each (target >= 1.6x); "
           "a writing thread's own CPU per packet, 2 threads / 1: %.2fx (the writers share nothing per packet; the "
           "wall ratio also needs the machine to run both at once)\n",
           t2.events_per_s / t1.events_per_s, treps, t1.writer_cpu_ns > 0 ? t2.writer_cpu_ns / t1.writer_cpu_ns : 0.0);
    printf("each writing thread's own window in every round of 1 and 2 threads (min / median / max):\n");
    own_print("recorded", &own_rec);
    own_print("floor", &own_floor);
    own_print("cores", &own_cores);
    fflush(stdout);
    if (getenv("TRACEC_BENCH_THREADS_ONLY")) {
        if (jf) fclose(jf);
        rmdir(g_dir);
        return 0;
    }
    result inproc = {1e300, 0, 0, 0, 0, 0}, inproc2 = inproc, one = inproc, two = inproc, one_w = inproc, two_w = inproc;
    for (int i = 0; i < reps; i++) {
        inproc = best(inproc, run_in_process(1));
        inproc2 = best(inproc2, run_in_process(2));
        one = best(one, run_recorder(1, 0));
        two = best(two, run_recorder(2, 0));
        one_w = best(one_w, run_recorder(1, 2000));
        two_w = best(two_w, run_recorder(2, 2000));
    }
    emit(jf, "record_1provider", "in-process", inproc, reps);
    emit(jf, "record_1provider", "recorder", one, reps);
    emit(jf, "record_1provider", "recorder-wait", one_w, reps);
    emit(jf, "record_2providers", "in-process", inproc, reps);
    emit(jf, "record_2providers", "in-process-2", inproc2, reps);
    emit(jf, "record_2providers", "recorder", two, reps);
    emit(jf, "record_2providers", "recorder-wait", two_w, reps);
    printf("recorder --wait 2000 (lossless like the in-process peer) / in-process packet rate: "
           "1 provider %.2fx, 2 providers %.2fx (target >= 0.9x); 2 providers / 2 in-process writer threads into "
           "one trace (the same work: two writers, one file): %.2fx\n",
           inproc.ns_per_op / one_w.ns_per_op, inproc.ns_per_op / two_w.ns_per_op, inproc2.ns_per_op / two_w.ns_per_op);
    printf("CPU time per packet, every process: recorder --wait / in-process: 1 provider %.2fx, 2 providers %.2fx; "
           "the recorder's own: %.1f, %.1f ns/packet\n",
           one_w.cpu_ns_per_op / inproc.cpu_ns_per_op, two_w.cpu_ns_per_op / inproc.cpu_ns_per_op,
           one_w.save_cpu_ns_per_op, two_w.save_cpu_ns_per_op);
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
