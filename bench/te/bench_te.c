/*
 * bench_te.c - the cost of track events (tracec/track_event.h) against the
 * same packets written with the raw generated writers, and against the
 * hand-written floor of bench_typical, all in the same run.
 *
 *   te_disabled  an event whose category is disabled (one relaxed load and
 *                a branch; its arguments are not evaluated)
 *   te_instant   an instant with a literal name (interned) and one int
 *                debug annotation, timestamp "now" (CLOCK_BOOTTIME), into a
 *                STREAMING LOSSLESS buffer with delivery running; 1 and 2
 *                threads.  Peer "raw-writers": the same packet (same fields,
 *                same iids, clock_gettime for the timestamp) through a
 *                tracec_buffer_writer and the generated setters.
 *   te_typed     TRACEC_EVENT_AS with two extension fields, against the raw
 *                writers writing the same packet.
 *   floor        bench_typical's hand-written encoder into a plain array.
 *
 * Prints a table; appends JSON lines {"bench": "te_disabled"|"te_instant"|
 * "te_typed", "impl", "threads", "ns_per_op" (best round), "ns_median",
 * "instructions" (callgrind, per op; when valgrind is there)} to
 * $TRACEC_BENCH_JSON.  Env: TRACEC_BENCH_OPS (default 2000000 per round),
 * TRACEC_BENCH_REPS (rounds, default 7), TRACEC_BENCH_CALLGRIND=0.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_events.tracec.h"
#include "perfetto/trace/track_event/debug_annotation.tracec.h"
#include "tracec/track_event.h"
#include "typical.h"

#define BENCH_CATEGORIES(C) C(on, "on") C(off, "off")
TRACEC_TE_DECLARE_CATEGORIES(BENCH_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(BENCH_CATEGORIES)

enum { kMaxReps = 31, kCgOps = 200000 };
static const char kLabel[] = "frame-render";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t boottime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void discard(const void *data, size_t size, void *user) {
    (void)data, (void)size, (void)user;
}

static void on_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                       uint64_t drops) {
    (void)c, (void)b, (void)h, (void)n, (void)d, (void)drops;
}

/* ---- the loops (noinline: callgrind counts each by its symbol) ---- */

__attribute__((noinline)) void bench_te_loop_disabled(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        TRACEC_TE(off, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) void bench_te_loop_instant(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
}

__attribute__((noinline)) void bench_te_loop_typed(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        TRACEC_EVENT_AS(on, bench_BenchEvent, ev, "typed") {
            bench_BenchEvent_set_bench_counter(&ev, i);
            bench_BenchEvent_set_cstr_bench_label(&ev, kLabel);
        }
    }
}

/* The raw peers: one writer per thread on their own buffer. */
static tracec_buffer_id_t g_raw_buf;
static __thread tracec_buffer_writer t_raw;
static __thread int t_raw_ready;

static tracec_buffer_writer *raw_writer(void) {
    if (!t_raw_ready) {
        if (tracec_buffer_writer_init(&t_raw, g_raw_buf, 0) != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "bench_te: cannot init a writer\n");
            exit(1);
        }
        t_raw_ready = 1;
    }
    return &t_raw;
}

static inline void raw_header(perfetto_protos_TracePacket *pkt, perfetto_protos_TrackEvent *ev, uint64_t name_iid) {
    perfetto_protos_TracePacket_set_timestamp(pkt, boottime_ns());
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(pkt, 7);
    perfetto_protos_TracePacket_set_sequence_flags(pkt, 2);
    perfetto_protos_TrackEvent_set_type(ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    perfetto_protos_TrackEvent_set_track_uuid(ev, 0x1c9b2b8a2f3e4d51ull);
    perfetto_protos_TrackEvent_set_category_iids(ev, 2);
    perfetto_protos_TrackEvent_set_name_iid(ev, name_iid);
}

__attribute__((noinline)) void bench_te_loop_raw_instant(uint64_t n) {
    tracec_buffer_writer *bw = raw_writer();
    for (uint64_t i = 0; i < n; i++) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        perfetto_protos_DebugAnnotation da;
        tracec_buffer_begin_packet(bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                   &pkt.msg);
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        raw_header(&pkt, &ev, 1);
        perfetto_protos_TrackEvent_begin_debug_annotations(&ev, &da);
        perfetto_protos_DebugAnnotation_set_name_iid(&da, 3);
        perfetto_protos_DebugAnnotation_set_int_value(&da, (int64_t)i);
        perfetto_protos_TrackEvent_end_debug_annotations(&ev, &da);
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        (void)tracec_buffer_end_packet(bw, &w, &pkt.msg);
    }
}

__attribute__((noinline)) void bench_te_loop_raw_typed(uint64_t n) {
    tracec_buffer_writer *bw = raw_writer();
    for (uint64_t i = 0; i < n; i++) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        bench_BenchEvent ev;
        tracec_buffer_begin_packet(bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                   &pkt.msg);
        perfetto_protos_TracePacket_begin_track_event_as_bench_BenchEvent(&pkt, &ev);
        raw_header(&pkt, &ev.base, 4);
        bench_BenchEvent_set_bench_counter(&ev, i);
        bench_BenchEvent_set_cstr_bench_label(&ev, kLabel);
        perfetto_protos_TracePacket_end_track_event_as_bench_BenchEvent(&pkt, &ev);
        (void)tracec_buffer_end_packet(bw, &w, &pkt.msg);
    }
}

__attribute__((noinline)) void bench_te_loop_floor(uint64_t n) {
    static uint8_t buf[4096];
    bench_input in = {1700000000000000000ull, 7, 3, 0x1234567890ull, 1, 2, 3, -12345, 0, kLabel, sizeof kLabel - 1};
    for (uint64_t i = 0; i < n; i++) {
        in.timestamp += 1000;
        in.annotation_int = (int64_t)i;
        (void)bench_encode_direct(NULL, &in, buf, sizeof buf);
        __asm__ volatile("" ::: "memory");
    }
}

typedef struct impl {
    const char *bench, *name, *symbol;
    void (*loop)(uint64_t);
    int threads;
    double ns[kMaxReps];
    double instructions;
} impl;

static impl g_impls[] = {
    {"te_disabled", "tracec-te", "bench_te_loop_disabled", bench_te_loop_disabled, 1, {0}, -1},
    {"te_instant", "tracec-te", "bench_te_loop_instant", bench_te_loop_instant, 1, {0}, -1},
    {"te_instant", "raw-writers", "bench_te_loop_raw_instant", bench_te_loop_raw_instant, 1, {0}, -1},
    {"te_instant", "tracec-te", "bench_te_loop_instant", bench_te_loop_instant, 2, {0}, -1},
    {"te_instant", "raw-writers", "bench_te_loop_raw_instant", bench_te_loop_raw_instant, 2, {0}, -1},
    {"te_typed", "tracec-te", "bench_te_loop_typed", bench_te_loop_typed, 1, {0}, -1},
    {"te_typed", "raw-writers", "bench_te_loop_raw_typed", bench_te_loop_raw_typed, 1, {0}, -1},
    {"floor", "hand-written", "bench_te_loop_floor", bench_te_loop_floor, 1, {0}, -1},
};
enum { kImpls = sizeof g_impls / sizeof g_impls[0] };

static tracec_session *g_session;

/* `big`: buffers that hold every packet of a callgrind run, so no producer waits (or spins) for a delivery. */
static void setup(int big) {
    size_t size = big ? (size_t)64 << 20 : (size_t)1 << 20;
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    static const char *const cats[] = {"on"};
    tracec_context_id_t ctx;
    cfg.write = discard;
    cfg.categories = cats;
    cfg.num_categories = 1;
    cfg.buffer_size = size;
    if (tracec_session_start(&cfg, &g_session) != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "bench_te: cannot start a session\n");
        exit(1);
    }
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS ||
        tracec_create_buffer(ctx, size, size / 2, TRACEC_BUFFER_POLICY_LOSSLESS, on_records, NULL, &g_raw_buf) !=
            TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "bench_te: cannot create the raw buffer\n");
        exit(1);
    }
    tracec_start_context(ctx);
}

typedef struct run_arg {
    void (*loop)(uint64_t);
    uint64_t n;
} run_arg;

static void *run_thread(void *p) {
    run_arg *a = (run_arg *)p;
    a->loop(a->n);
    return NULL;
}

static double measure(impl *im, uint64_t ops) {
    double t0, t1;
    if (im->threads == 1) {
        t0 = now_s();
        im->loop(ops);
        t1 = now_s();
    } else {
        pthread_t th[2];
        run_arg a = {im->loop, ops / 2};
        t0 = now_s();
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_thread, &a);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        t1 = now_s();
    }
    return (t1 - t0) * 1e9 / (double)ops;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
    double c[kMaxReps];
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

static double best(const double *v, int n) {
    double b = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < b) b = v[i];
    return b;
}

/* Median over rounds of a's time over b's within the round. */
static double ratio(const impl *a, const impl *b, int reps) {
    double r[kMaxReps];
    for (int i = 0; i < reps; i++) r[i] = a->ns[i] / b->ns[i];
    return median(r, reps);
}

static double callgrind(const impl *im) {
    char out[] = "/tmp/bench_te_cg_XXXXXX", toggle[96], outarg[128], ops[32], self[4096];
    int fd = mkstemp(out), st;
    if (fd < 0) return -1;
    close(fd);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return -1;
    self[len] = '\0';
    snprintf(toggle, sizeof toggle, "--toggle-collect=%s", im->symbol);
    snprintf(outarg, sizeof outarg, "--callgrind-out-file=%s", out);
    snprintf(ops, sizeof ops, "%d", kCgOps);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) dup2(dn, 1), dup2(dn, 2);
        execlp("valgrind", "valgrind", "--tool=callgrind", toggle, outarg, self, "--cg-child", im->symbol, ops,
               (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    double result = -1;
    FILE *f = fopen(out, "r");
    if (f && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        char line[512];
        unsigned long long v;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "totals: %llu", &v) == 1 || sscanf(line, "summary: %llu", &v) == 1)
                result = (double)v / kCgOps;
    }
    if (f) fclose(f);
    unlink(out);
    return result;
}

int main(int argc, char **argv) {
    uint64_t ops = 2000000;
    int reps = 7;
    const char *e;
    if (argc == 4 && strcmp(argv[1], "--cg-child") == 0) {
        setup(1);
        for (int i = 0; i < kImpls; i++)
            if (strcmp(g_impls[i].symbol, argv[2]) == 0) {
                g_impls[i].loop(1000); /* warm-up: the thread's sequence, interning */
                g_impls[i].loop(strtoull(argv[3], NULL, 10) - 1000);
            }
        return 0;
    }
    if ((e = getenv("TRACEC_BENCH_OPS")) && atoll(e) > 0) ops = (uint64_t)atoll(e);
    if ((e = getenv("TRACEC_BENCH_REPS")) && atoi(e) > 0) reps = atoi(e) < kMaxReps ? atoi(e) : kMaxReps;
    setup(0);
    for (int i = 0; i < kImpls; i++) g_impls[i].loop(10000); /* warm-up */
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < kImpls; i++) g_impls[i].ns[r] = measure(&g_impls[i], ops);
    e = getenv("TRACEC_BENCH_CALLGRIND");
    if (!(e && strcmp(e, "0") == 0) && system("valgrind --version >/dev/null 2>&1") == 0)
        for (int i = 0; i < kImpls; i++)
            if (g_impls[i].threads == 1) g_impls[i].instructions = callgrind(&g_impls[i]);

    const impl *floor = &g_impls[kImpls - 1];
    printf("%-12s %-13s %7s %9s %9s %13s %10s %10s\n", "bench", "impl", "threads", "ns/op", "median", "instructions",
           "x raw", "x floor");
    for (int i = 0; i < kImpls; i++) {
        impl *im = &g_impls[i];
        const impl *raw = NULL;
        for (int j = 0; j < kImpls; j++)
            if (strcmp(g_impls[j].bench, im->bench) == 0 && g_impls[j].threads == im->threads &&
                strcmp(g_impls[j].name, "raw-writers") == 0)
                raw = &g_impls[j];
        printf("%-12s %-13s %7d %9.2f %9.2f %13.1f", im->bench, im->name, im->threads, best(im->ns, reps),
               median(im->ns, reps), im->instructions);
        if (raw && raw != im)
            printf(" %9.2fx", ratio(im, raw, reps));
        else
            printf(" %10s", "");
        if (im != floor) printf(" %9.2fx", ratio(im, floor, reps));
        printf("\n");
    }
    printf("targets: te_disabled <= 1 ns and <= 4 instructions; te_instant <= 1.5x raw-writers (1 thread): %.2fx\n",
           ratio(&g_impls[1], &g_impls[2], reps));
    if ((e = getenv("TRACEC_BENCH_JSON")) != NULL) {
        FILE *jf = fopen(e, "a");
        for (int i = 0; jf && i < kImpls; i++) {
            impl *im = &g_impls[i];
            fprintf(jf, "{\"bench\": \"%s\", \"impl\": \"%s\", \"threads\": %d, \"ns_per_op\": %.3f, \"ns_median\": %.3f",
                    im->bench, im->name, im->threads, best(im->ns, reps), median(im->ns, reps));
            if (im->instructions >= 0) fprintf(jf, ", \"instructions\": %.1f", im->instructions);
            fprintf(jf, "}\n");
        }
        if (jf) fclose(jf);
    }
    tracec_session_stop(g_session);
    return 0;
}
