/*
 * bench_te.c - the cost of track events (tracec/track_event.h) against
 * Perfetto's public C SDK (PERFETTO_TE, in-process backend) writing the
 * same events in the same process, against the same packets written with
 * the raw generated writers, and against the hand-written floor of
 * bench_typical, all in one run, in interleaved rounds.
 *
 *   te_disabled  an event whose category is disabled (one relaxed load and
 *                a branch; its arguments are not evaluated)
 *   te_instant   an instant with a literal name (interned) and one int
 *                debug annotation, timestamp "now" (CLOCK_BOOTTIME), into a
 *                STREAMING LOSSLESS buffer with delivery running; 1 and 2
 *                threads.  Peer "raw-writers": the same packet (same fields,
 *                same iids, clock_gettime for the timestamp) through a
 *                tracec_buffer_writer and the generated setters.
 *                Row "tracec-te-dyn": the same instant with its name in a
 *                char array (TRACEC_TE_INSTANT_DYN, interned by content).
 *   te_slice     a slice begin or end (TRACEC_SLICE_BEGIN / _END pairs)
 *   te_recorder  the te_instant event into the session of `tracec record`
 *                (another process, --attach, STREAMING with --wait: lossless
 *                like the in-process row, the same bytes per half) instead of the
 *                process's own session: the same engine on a memfd, its
 *                regions handed to the recorder.  Row "in-process" is the
 *                te_instant event under a symbol of its own; the ratio
 *                recorder / in-process is printed (target <= 1.2x on the
 *                writing thread), and the recorder's own CPU time per event
 *                over the timed rounds (/proc/PID/stat of the child) beside
 *                the in-process writing thread's.  Needs the tracec command
 *                (BENCH_TE_TRACEC).
 *                Then the same two rows in bursts (te_recorder_burst):
 *                kBurst events at a time, alternately, with a pause of
 *                kBurstPause microseconds before each in which the recorder
 *                saves what was handed to it: the writing thread's cost when
 *                the recorder keeps up (a lossless writer of a sustained
 *                stream waits for the recorder, whose check and save of each
 *                packet cost more than the writing).
 *   te_typed     TRACEC_EVENT_AS with two extension fields, against the raw
 *                writers writing the same packet, and the SDK writing the
 *                same two fields with PERFETTO_TE_PROTO_FIELDS.
 *   floor        bench_typical's hand-written encoder into a plain array.
 *
 * The SDK rows ("perfetto-sdk", bench_te_sdk.c, its own translation unit)
 * are there when CMake found the SDK (BENCH_TE_SDK).  Every loop has a
 * symbol of its own, so callgrind's --toggle-collect counts one row.
 *
 * After the timed rounds, each tracec-te and perfetto-sdk row writes
 * TRACEC_BENCH_VERIFY_OPS events (default 200000) into a session of its
 * own; the trace is read back: its bytes per event are (trace bytes -
 * an empty session's trace bytes) / events, and, when the trace processor
 * is there (BENCH_TE_TRACE_PROCESSOR), the trace must show exactly the
 * events written and no error or data_loss stat (else exit 1).
 *
 * Prints a table; appends JSON lines {"bench": "te_disabled"|"te_instant"|
 * "te_slice"|"te_typed"|"floor", "impl", "threads", "ns_per_op" (best
 * round), "ns_median", "ns_max", "instructions" (callgrind, per event; when
 * valgrind is there), "bytes_per_event", "trace_events", "trace_ok"} to
 * $TRACEC_BENCH_JSON.  Env: TRACEC_BENCH_OPS (default 2000000 per round),
 * TRACEC_BENCH_REPS (rounds, default 9), TRACEC_BENCH_VERIFY_OPS,
 * TRACEC_BENCH_CALLGRIND=0, TRACEC_BENCH_CALLGRIND_RUNS (callgrind runs per
 * row, the lowest count kept; default 3).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
#ifdef BENCH_TE_SDK
#include "bench_te_sdk.h"
#endif

#define BENCH_CATEGORIES(C) C(on, "on") C(off, "off") C(two, "two") C(rec, "rec")
TRACEC_TE_DECLARE_CATEGORIES(BENCH_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(BENCH_CATEGORIES)

enum { kMaxReps = 31, kCgOps = 200000 };
static const char kLabel[] = "frame-render";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t boottime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The timed session's output: copied into a 64 MiB ring in memory, as the SDK's service copies its chunks
 * into its ring buffer, so that both sides' background threads do the same kind of work. */
typedef struct ring {
    uint8_t *data;
    size_t size, pos;
} ring;

static void to_ring(const void *data, size_t size, void *user) {
    ring *r = (ring *)user;
    const uint8_t *p = (const uint8_t *)data;
    while (size) {
        size_t n = r->size - r->pos < size ? r->size - r->pos : size;
        memcpy(r->data + r->pos, p, n);
        r->pos = (r->pos + n) % r->size;
        p += n, size -= n;
    }
}

/* A trace read back into memory (the verification sessions). */
typedef struct trace_mem {
    uint8_t *data;
    size_t size, cap;
    int failed;
} trace_mem;

static void keep(const void *data, size_t size, void *user) {
    trace_mem *t = (trace_mem *)user;
    if (t->failed) return;
    if (t->size + size > t->cap) {
        size_t cap = t->cap ? t->cap : (size_t)1 << 20;
        while (cap < t->size + size) cap *= 2;
        uint8_t *p = (uint8_t *)realloc(t->data, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->data = p, t->cap = cap;
    }
    memcpy(t->data + t->size, data, size);
    t->size += size;
}

static void on_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                       uint64_t drops) {
    (void)c, (void)b, (void)h, (void)n, (void)d, (void)drops;
}

/* ---- the loops (noinline, one symbol per row: callgrind counts each by its symbol) ---- */

/* Starts a 64-byte block (as its peer does): the loop is 19 bytes, and one that crosses a block boundary takes
   two fetch blocks an iteration (0.62 ns against 0.31 on an AMD EPYC, with the same instructions). */
__attribute__((noinline, aligned(64))) void bench_te_loop_disabled(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        TRACEC_TE(off, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) void bench_te_loop_instant(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
}

/* The te_instant event into the recorder's session ("rec": only the recorder enables it), and into the
 * process's own, each under a symbol of its own. */
__attribute__((noinline)) void bench_te_loop_instant_recorder(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(rec, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
}

__attribute__((noinline)) void bench_te_loop_instant_own(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
    __asm__ volatile("" ::: "memory");
}

/* The same event with its name known only at run time (TRACEC_TE_INSTANT_DYN): interned by content. */
static char g_dyn_tick[8];

__attribute__((noinline)) void bench_te_loop_instant_dyn(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT_DYN(g_dyn_tick), TRACEC_TE_ARG_INT("value", i));
}

/* The same body as bench_te_loop_instant, under a symbol of its own for the two-thread rows (the trailing
 * barrier keeps the compiler from folding the two functions into one). */
__attribute__((noinline)) void bench_te_loop_instant_2t(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
    __asm__ volatile("" ::: "memory");
}

/*
 * te_two_sessions: the instant into one session ("on": the main session only) and into two ("two": the
 * main session and a second one).  Symbols of their own (the barriers keep them from being folded).
 */
__attribute__((noinline)) void bench_te_loop_one_session(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(on, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
    __asm__ volatile("" ::: "memory");
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void bench_te_loop_two_sessions(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) TRACEC_TE(two, TRACEC_TE_INSTANT("tick"), TRACEC_TE_ARG_INT("value", i));
}

/* n events: n/2 begin and end pairs. */
__attribute__((noinline)) void bench_te_loop_slice(uint64_t n) {
    for (uint64_t i = 0; i < n / 2; i++) {
        TRACEC_SLICE_BEGIN(on, "slice");
        TRACEC_SLICE_END(on);
    }
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

static inline __attribute__((always_inline)) void raw_instant(uint64_t n) {
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


__attribute__((noinline)) void bench_te_loop_raw_instant(uint64_t n) {
    raw_instant(n);
}

__attribute__((noinline)) void bench_te_loop_raw_instant_2t(uint64_t n) {
    raw_instant(n);
    __asm__ volatile("" ::: "memory");
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

enum side { SIDE_TRACEC, SIDE_SDK, SIDE_RAW, SIDE_FLOOR, SIDE_RECORDER };

typedef struct impl {
    const char *bench, *name, *symbol;
    void (*loop)(uint64_t);
    int threads, side;
    double ns[kMaxReps];     /* wall time per event, per round */
    double cpu_ns[kMaxReps]; /* the writing threads' CPU time per event, per round */
    double instructions;    /* callgrind, per event; -1: not measured */
    double bytes_per_event; /* -1: not measured */
    long long trace_events; /* events the trace processor found; -1: not checked */
    int trace_ok;           /* 1 checked and right, 0 wrong, -1 not checked */
} impl;

#define ROW(bench, name, loop, threads, side) {bench, name, #loop, loop, threads, side, {0}, {0}, -1, -1, -1, -1}
static impl g_impls[] = {
    ROW("te_disabled", "tracec-te", bench_te_loop_disabled, 1, SIDE_TRACEC),
#ifdef BENCH_TE_SDK
    ROW("te_disabled", "perfetto-sdk", bench_sdk_loop_disabled, 1, SIDE_SDK),
#endif
    ROW("te_instant", "tracec-te", bench_te_loop_instant, 1, SIDE_TRACEC),
#ifdef BENCH_TE_SDK
    ROW("te_instant", "perfetto-sdk", bench_sdk_loop_instant, 1, SIDE_SDK),
#endif
    ROW("te_instant", "raw-writers", bench_te_loop_raw_instant, 1, SIDE_RAW),
    ROW("te_instant", "tracec-te-dyn", bench_te_loop_instant_dyn, 1, SIDE_TRACEC),
    ROW("te_slice", "tracec-te", bench_te_loop_slice, 1, SIDE_TRACEC),
#ifdef BENCH_TE_SDK
    ROW("te_slice", "perfetto-sdk", bench_sdk_loop_slice, 1, SIDE_SDK),
#endif
    ROW("te_typed", "tracec-te", bench_te_loop_typed, 1, SIDE_TRACEC),
#ifdef BENCH_TE_SDK
    ROW("te_typed", "perfetto-sdk", bench_sdk_loop_typed, 1, SIDE_SDK),
#endif
    ROW("te_typed", "raw-writers", bench_te_loop_raw_typed, 1, SIDE_RAW),
    ROW("te_instant", "tracec-te", bench_te_loop_instant_2t, 2, SIDE_TRACEC),
#ifdef BENCH_TE_SDK
    ROW("te_instant", "perfetto-sdk", bench_sdk_loop_instant_2t, 2, SIDE_SDK),
#endif
    ROW("te_instant", "raw-writers", bench_te_loop_raw_instant_2t, 2, SIDE_RAW),
#ifdef BENCH_TE_TRACEC
    ROW("te_recorder", "in-process", bench_te_loop_instant_own, 1, SIDE_RAW),
    ROW("te_recorder", "recorder", bench_te_loop_instant_recorder, 1, SIDE_RECORDER),
#endif
    ROW("te_two_sessions", "1-session", bench_te_loop_one_session, 1, SIDE_TRACEC),
    ROW("te_two_sessions", "2-sessions", bench_te_loop_two_sessions, 1, SIDE_TRACEC),
    ROW("floor", "hand-written", bench_te_loop_floor, 1, SIDE_FLOOR), /* last */
};
enum { kImpls = sizeof g_impls / sizeof g_impls[0] };

static tracec_session *g_session, *g_session2;
static const char *const g_cats[] = {"on", "two"}, *const g_cats2[] = {"two"};

static int start_tracec(size_t size, tracec_session_write_fn write, void *data) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    cfg.write = write;
    cfg.write_data = data;
    cfg.categories = g_cats;
    cfg.num_categories = 2;
    cfg.buffer_size = size;
    return tracec_session_start(&cfg, &g_session) == TRACEC_STATUS_SUCCESS ? 0 : -1;
}

#ifdef BENCH_TE_TRACEC
/* `tracec record --attach` on a socket of its own, category "rec" only, STREAMING lossless (--wait); this
 * process connected to it and traced. */
static pid_t g_recorder = -1;
static char g_rec_dir[64];

static void start_recorder(size_t size) {
    char sock[128], out[128], bs[32];
    snprintf(g_rec_dir, sizeof g_rec_dir, "/tmp/bench_te_rec_XXXXXX");
    if (mkdtemp(g_rec_dir) == NULL) return;
    snprintf(sock, sizeof sock, "%s/s", g_rec_dir);
    snprintf(out, sizeof out, "%s/rec.pftrace", g_rec_dir);
    snprintf(bs, sizeof bs, "%zu", 2u * size); /* --buffer-size is both halves: `size` bytes each, as in process */
    g_recorder = fork();
    if (g_recorder == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) dup2(dn, 1), dup2(dn, 2);
        execl(BENCH_TE_TRACEC, BENCH_TE_TRACEC, "record", "--attach", "--socket", sock, "-o", out, "--categories",
              "rec", "--buffer-size", bs, "--wait", "1000", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500 && access(sock, F_OK) != 0; i++) usleep(10000);
    usleep(50000); /* bound, then listening */
    tracec_te_recorder_config rc = TRACEC_TE_RECORDER_CONFIG_INIT;
    rc.socket_path = sock;
    rc.synchronous = true;
    rc.max_wait_ms = 1000;
    if (tracec_te_recorder_connect(&rc) != TRACEC_STATUS_SUCCESS || !tracec_te_recorder_stats().tracing) {
        fprintf(stderr, "bench_te: the recorder's session did not start (%s)\n", sock);
        exit(1);
    }
}

/* The CPU time `tracec record` has used so far (user and system, all its threads), in seconds; -1 if unknown. */
static double recorder_cpu_s(void) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)g_recorder);
    FILE *f = g_recorder > 0 ? fopen(path, "r") : NULL;
    if (f == NULL) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces: the fields follow its ')' */
    unsigned long long ut, st;
    if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Disconnects, stops the recorder (SIGINT: it writes its trace) and says what it lost. */
static void stop_recorder(void) {
    char cmd[128];
    int st;
    if (g_recorder <= 0) return;
    tracec_te_recorder_stats_t rs = tracec_te_recorder_stats();
    tracec_te_recorder_disconnect();
    kill(g_recorder, SIGINT);
    while (waitpid(g_recorder, &st, 0) < 0 && errno == EINTR) {
    }
    g_recorder = -1;
    if (rs.dropped != 0)
        printf("te_recorder: the recorder's session dropped %llu of %llu packets (not lossless: the ratio is "
               "not equal work)\n",
               (unsigned long long)rs.dropped, (unsigned long long)rs.produced);
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_rec_dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_te: cannot remove %s\n", g_rec_dir);
}
#endif

/* `big`: buffers that hold every packet of a callgrind run, so no producer waits (or spins) for a delivery.
 * The SDK's ring buffer wraps in the timed rounds (its producers write into the 32 MB shared memory and
 * never see the ring buffer). */
static void setup(int big) {
    size_t size = big ? (size_t)64 << 20 : (size_t)1 << 20;
    tracec_context_id_t ctx;
    static ring out;
    out.size = (size_t)64 << 20;
    out.data = (uint8_t *)malloc(out.size);
    if (!out.data || start_tracec(size, to_ring, &out) != 0) {
        fprintf(stderr, "bench_te: cannot start a session\n");
        exit(1);
    }
    { /* the second session of te_two_sessions: category "two" only, its own ring */
        static ring out2;
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        out2.size = (size_t)64 << 20;
        out2.data = (uint8_t *)malloc(out2.size);
        cfg.write = to_ring;
        cfg.write_data = &out2;
        cfg.categories = g_cats2;
        cfg.num_categories = 1;
        cfg.buffer_size = size;
        if (!out2.data || tracec_session_start(&cfg, &g_session2) != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "bench_te: cannot start the second session\n");
            exit(1);
        }
    }
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS ||
        tracec_create_buffer(ctx, size, size / 2, TRACEC_BUFFER_POLICY_LOSSLESS, on_records, NULL, &g_raw_buf) !=
            TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "bench_te: cannot create the raw buffer\n");
        exit(1);
    }
    tracec_start_context(ctx);
#ifdef BENCH_TE_TRACEC
    start_recorder(size);
#endif
#ifdef BENCH_TE_SDK
    if (bench_sdk_init() != 0 || bench_sdk_start(64 * 1024) != 0) {
        fprintf(stderr, "bench_te: cannot start the Perfetto SDK's session\n");
        exit(1);
    }
#endif
}

typedef struct run_arg {
    void (*loop)(uint64_t);
    uint64_t n;
    double cpu_s;
} run_arg;

static void *run_thread(void *p) {
    run_arg *a = (run_arg *)p;
    double c0 = thread_cpu_s();
    a->loop(a->n);
    a->cpu_s = thread_cpu_s() - c0;
    return NULL;
}

/* Runs `ops` events of the row: on its own, or split over 2 new threads.  Returns the writing threads' CPU
 * seconds. */
static double run(const impl *im, uint64_t ops) {
    if (im->threads == 1) {
        double c0 = thread_cpu_s();
        im->loop(ops);
        return thread_cpu_s() - c0;
    }
    pthread_t th[2];
    run_arg a[2] = {{im->loop, ops / 2, 0}, {im->loop, ops / 2, 0}};
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_thread, &a[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    return a[0].cpu_s + a[1].cpu_s;
}

/* Round r of the row: wall ns per event, and CPU ns per event (2 threads: both threads' CPU time over all
 * events, so it adds up the work that the wall time overlaps). */
static void measure(impl *im, uint64_t ops, int r) {
    double t0 = now_s();
    double cpu = run(im, ops);
    im->ns[r] = (now_s() - t0) * 1e9 / (double)ops;
    im->cpu_ns[r] = cpu * 1e9 / (double)ops;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n), sorted in place. */
static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double median(const double *v, int n) {
    double c[kMaxReps];
    memcpy(c, v, sizeof(double) * (size_t)n);
    return median_of(c, n);
}

static double lowest(const double *v, int n) {
    double b = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < b) b = v[i];
    return b;
}

static double highest(const double *v, int n) {
    double b = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > b) b = v[i];
    return b;
}

#ifdef BENCH_TE_TRACEC
/* te_recorder_burst: rounds of kBurst events per row (about a quarter of a 1 MiB half) after a pause. */
enum { kBurst = 10000, kBurstRounds = 101, kBurstPause = 3000 };

/* Wall and CPU ns per event of the in-process and the recorder's rows, medians of kBurstRounds bursts each. */
typedef struct burst {
    double own_ns, rec_ns, own_cpu, rec_cpu;
} burst;

static burst burst_rounds(void (*own)(uint64_t), void (*rec)(uint64_t)) {
    static double w[2][kBurstRounds], c[2][kBurstRounds];
    for (int r = 0; r < kBurstRounds; r++)
        for (int k = 0; k < 2; k++) {
            usleep(kBurstPause);
            double t0 = now_s(), c0 = thread_cpu_s();
            (k ? rec : own)(kBurst);
            c[k][r] = (thread_cpu_s() - c0) * 1e9 / kBurst;
            w[k][r] = (now_s() - t0) * 1e9 / kBurst;
        }
    burst b = {median_of(w[0], kBurstRounds), median_of(w[1], kBurstRounds), median_of(c[0], kBurstRounds),
               median_of(c[1], kBurstRounds)};
    return b;
}
#endif

/* a's time over b's within each round: the median (and, with lo/hi, the spread) over the rounds. */
static double ratio(const impl *a, const impl *b, int reps, double *lo, double *hi) {
    double r[kMaxReps] = {0};
    for (int i = 0; i < reps; i++) r[i] = a->ns[i] / b->ns[i];
    if (lo) *lo = lowest(r, reps);
    if (hi) *hi = highest(r, reps);
    return median(r, reps);
}

static const impl *find(const char *bench, const char *name, int threads) {
    for (int j = 0; j < kImpls; j++)
        if (strcmp(g_impls[j].bench, bench) == 0 && strcmp(g_impls[j].name, name) == 0 &&
            g_impls[j].threads == threads)
            return &g_impls[j];
    return NULL;
}

/* callgrind's count of one row in a valgrind child; -1 if none. */
static double callgrind_once(const impl *im) {
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

/*
 * The lowest of `runs` counts.  The code's count is the same in every run; what moves it is the machine:
 * under load valgrind runs slower, the timestamp deltas grow a varint byte, and the writer's chunk changes
 * meet the delivery thread at other points (a few instructions per event).
 */
static double callgrind(const impl *im, int runs) {
    double best = -1;
    for (int k = 0; k < runs; k++) {
        double c = callgrind_once(im);
        if (c >= 0 && (best < 0 || c < best)) best = c;
    }
    return best;
}

/* Under valgrind: the row named by its symbol, kCgOps events, nothing else.  One thread: a warm-up of 1000
 * events (the thread's sequence, interning) then the rest; two threads: each writes half from its start.
 * All of it is counted. */
static int cg_child(const char *symbol, uint64_t n) {
    setup(1);
    for (int i = 0; i < kImpls; i++) {
        const impl *im = &g_impls[i];
        if (strcmp(im->symbol, symbol) != 0) continue;
        if (im->threads == 1) {
            im->loop(1000);
            im->loop(n - 1000);
        } else {
            (void)run(im, n);
        }
#ifdef BENCH_TE_TRACEC
        stop_recorder();
#endif
        return 0;
    }
#ifdef BENCH_TE_TRACEC
    stop_recorder();
#endif
    return 1;
}

/* ---- the traces: bytes per event, and what the trace processor makes of them ---- */

#ifndef BENCH_TE_TRACE_PROCESSOR
#define BENCH_TE_TRACE_PROCESSOR ""
#endif

/* One session of the row's side with `ops` events of the row (0: none), read back into *t. */
static int write_trace(const impl *im, uint64_t ops, trace_mem *t) {
    memset(t, 0, sizeof *t);
    if (im->side == SIDE_TRACEC) {
        if (start_tracec((size_t)1 << 20, keep, t) != 0) return -1;
        if (ops) (void)run(im, ops);
        tracec_session_stop(g_session);
        g_session = NULL;
        return t->failed ? -1 : 0;
    }
#ifdef BENCH_TE_SDK
    if (im->side == SIDE_SDK) {
        /* A ring buffer that does not wrap: a wrap overwrites the sequence's interning, and the trace
         * processor then drops the whole sequence. */
        uint64_t kb = 64 * 1024 + ops * 64 / 1024;
        if (bench_sdk_start(kb < UINT32_MAX ? (uint32_t)kb : UINT32_MAX) != 0) return -1;
        if (ops) (void)run(im, ops);
        return bench_sdk_stop(1, &t->data, &t->size);
    }
#endif
    return -1;
}

/* The trace processor's view of a trace: instants "tick", complete slices "slice", instants "typed", the
 * tracks of "tick", and the error / data_loss stats.  0 when it ran. */
typedef struct tp_view {
    long long tick, slices, typed, tick_tracks, bad, unknown_ext;
    char bad_names[512];
} tp_view;

static int trace_processor(const trace_mem *t, tp_view *v) {
    static const char query[] =
        "select (select count(*) from slice where name = 'tick' and dur = 0) as tick,\n"
        " (select count(*) from slice where name = 'slice' and dur >= 0) as slices,\n"
        " (select count(*) from slice where name = 'typed' and dur = 0) as typed,\n"
        " (select count(distinct track_id) from slice where name = 'tick') as tick_tracks,\n"
        " (select count(*) from stats where value > 0 and severity in ('error', 'data_loss')\n"
        "   and name != 'unknown_extension_fields') as bad,\n"
        " (select coalesce(sum(value), 0) from stats where name = 'unknown_extension_fields') as unknown_ext,\n"
        " (select group_concat(name || '=' || value, ' ') from stats\n"
        "   where value > 0 and severity in ('error', 'data_loss')) as bad_names;\n";
    char trace[] = "/tmp/bench_te_trace_XXXXXX", sql[] = "/tmp/bench_te_sql_XXXXXX", cmd[512], line[1024];
    int ok = -1, tfd = mkstemp(trace), qfd = mkstemp(sql);
    if (tfd < 0 || qfd < 0) goto out;
    if (write(tfd, t->data, t->size) != (ssize_t)t->size || write(qfd, query, sizeof query - 1) < 0) goto out;
    snprintf(cmd, sizeof cmd, "'%s' -q '%s' '%s' 2>/dev/null", BENCH_TE_TRACE_PROCESSOR, sql, trace);
    FILE *p = popen(cmd, "r");
    if (!p) goto out;
    while (fgets(line, sizeof line, p)) {
        char *q;
        while ((q = strchr(line, '"')) != NULL) memmove(q, q + 1, strlen(q)); /* drop CSV quotes */
        char names[512] = "";
        if (sscanf(line, "%lld,%lld,%lld,%lld,%lld,%lld,%511[^\n]", &v->tick, &v->slices, &v->typed,
                   &v->tick_tracks, &v->bad, &v->unknown_ext, names) >= 6) {
            snprintf(v->bad_names, sizeof v->bad_names, "%s", names);
            ok = 0;
        }
    }
    if (pclose(p) != 0) ok = -1;
out:
    if (tfd >= 0) close(tfd), unlink(trace);
    if (qfd >= 0) close(qfd), unlink(sql);
    return ok;
}

/* Writes the row's verification trace; sets bytes_per_event, and (with the trace processor) trace_events and
 * trace_ok.  Returns 0 unless the trace is wrong. */
static int verify(impl *im, uint64_t ops, size_t empty_bytes, int have_tp) {
    trace_mem t;
    if (write_trace(im, ops, &t) != 0) {
        fprintf(stderr, "bench_te: %s %s: cannot write its trace\n", im->bench, im->name);
        free(t.data);
        im->trace_ok = 0;
        return -1;
    }
    im->bytes_per_event = ((double)t.size - (double)empty_bytes) / (double)ops;
    if (!have_tp) {
        free(t.data);
        return 0;
    }
    tp_view v;
    memset(&v, 0, sizeof v);
    if (trace_processor(&t, &v) != 0) {
        fprintf(stderr, "bench_te: %s %s: the trace processor failed on the trace\n", im->bench, im->name);
        free(t.data);
        im->trace_ok = 0;
        return -1;
    }
    free(t.data);
    long long want_tick = 0, want_slices = 0, want_typed = 0;
    /* te_two_sessions: checked in one session (its second session only doubles the writing) */
    if (strcmp(im->bench, "te_instant") == 0 || strcmp(im->bench, "te_two_sessions") == 0) want_tick = (long long)ops;
    if (strcmp(im->bench, "te_slice") == 0) want_slices = (long long)(ops / 2);
    if (strcmp(im->bench, "te_typed") == 0) want_typed = (long long)ops;
    im->trace_events = v.tick + 2 * v.slices + v.typed;
    /* The SDK's typed rows write the two extension fields with no ExtensionDescriptor (it has no way to
     * declare them), so the trace processor counts each as an unknown extension field; tracec's trace
     * describes them. */
    long long want_unknown = im->side == SIDE_SDK ? 2 * want_typed : 0;
    im->trace_ok = v.tick == want_tick && v.slices == want_slices && v.typed == want_typed && v.bad == 0 &&
                   v.unknown_ext == want_unknown && (want_tick == 0 || v.tick_tracks == im->threads);
    if (!im->trace_ok)
        fprintf(stderr,
                "bench_te: %s %s (%d thread(s)), %llu events written: the trace processor shows %lld instants "
                "'tick' on %lld track(s), %lld slices 'slice', %lld instants 'typed', %lld error/data_loss stats "
                "(%s)\n",
                im->bench, im->name, im->threads, (unsigned long long)ops, v.tick, v.tick_tracks, v.slices, v.typed,
                v.bad, v.bad_names);
    return im->trace_ok ? 0 : -1;
}

#ifdef BENCH_TE_SDK
static void print_ns(const impl *im, int reps) {
    if (!im) {
        printf(" %26s", "");
        return;
    }
    char b[64];
    snprintf(b, sizeof b, "%.2f (%.2f-%.2f)", median(im->ns, reps), lowest(im->ns, reps), highest(im->ns, reps));
    printf(" %26s", b);
}
#endif

int main(int argc, char **argv) {
    uint64_t ops = 2000000, verify_ops = 200000;
    int reps = 9, failed = 0;
    const char *e;
    snprintf(g_dyn_tick, sizeof g_dyn_tick, "%s", "tick"); /* not a literal */
    if (argc == 4 && strcmp(argv[1], "--cg-child") == 0) return cg_child(argv[2], strtoull(argv[3], NULL, 10));
    if ((e = getenv("TRACEC_BENCH_OPS")) && atoll(e) > 0) ops = (uint64_t)atoll(e);
    if ((e = getenv("TRACEC_BENCH_REPS")) && atoi(e) > 0) reps = atoi(e) < kMaxReps ? atoi(e) : kMaxReps;
    if ((e = getenv("TRACEC_BENCH_VERIFY_OPS")) && atoll(e) >= 1000) verify_ops = (uint64_t)atoll(e) & ~1ull;
    ops &= ~1ull;
    /* callgrind counts a row by its loop's symbol: two rows folded into one function (identical code folding)
     * would count both rows' events under one symbol. */
    for (int i = 0; i < kImpls; i++)
        for (int j = i + 1; j < kImpls; j++)
            if (g_impls[i].loop == g_impls[j].loop || strcmp(g_impls[i].symbol, g_impls[j].symbol) == 0) {
                fprintf(stderr, "bench_te: rows %s/%s/%d and %s/%s/%d share a loop (%s): their instruction counts "
                                "would add up\n",
                        g_impls[i].bench, g_impls[i].name, g_impls[i].threads, g_impls[j].bench, g_impls[j].name,
                        g_impls[j].threads, g_impls[i].symbol);
                return 1;
            }

    /* 1. Timed rounds: every row in turn, in every round. */
    setup(0);
    for (int i = 0; i < kImpls; i++) (void)run(&g_impls[i], 10000); /* warm-up */
#ifdef BENCH_TE_TRACEC
    double rec_cpu0 = recorder_cpu_s();
#endif
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < kImpls; i++) measure(&g_impls[i], ops, r);
#ifdef BENCH_TE_TRACEC
    /* only the te_recorder row writes into the recorder's session: its CPU since is that row's events' */
    double rec_cpu1 = recorder_cpu_s();
    double rec_cpu_ns = rec_cpu0 >= 0 && rec_cpu1 >= 0 ? (rec_cpu1 - rec_cpu0) * 1e9 / ((double)ops * reps) : -1;
    burst bu = burst_rounds(bench_te_loop_instant_own, bench_te_loop_instant_recorder);
#endif
    tracec_session_stop(g_session);
    tracec_session_stop(g_session2);
    g_session = g_session2 = NULL;
#ifdef BENCH_TE_TRACEC
    stop_recorder();
#endif
#ifdef BENCH_TE_SDK
    {
        size_t ignored;
        (void)bench_sdk_stop(0, NULL, &ignored);
    }
#endif

    /* 2. The traces: each side's empty session, then one session per row. */
    int have_tp = BENCH_TE_TRACE_PROCESSOR[0] && access(BENCH_TE_TRACE_PROCESSOR, X_OK) == 0;
    if (!have_tp)
        printf("(no trace processor at '%s': the traces are measured but not checked)\n", BENCH_TE_TRACE_PROCESSOR);
    size_t empty[2] = {0, 0};
    for (int s = SIDE_TRACEC; s <= SIDE_SDK; s++) {
        impl probe = g_impls[0];
        trace_mem t;
        probe.side = s;
#ifndef BENCH_TE_SDK
        if (s == SIDE_SDK) break;
#endif
        if (write_trace(&probe, 0, &t) != 0) {
            fprintf(stderr, "bench_te: cannot write an empty trace\n");
            return 1;
        }
        empty[s] = t.size;
        free(t.data);
    }
    for (int i = 0; i < kImpls; i++)
        if (g_impls[i].side == SIDE_TRACEC || g_impls[i].side == SIDE_SDK)
            if (verify(&g_impls[i], verify_ops, empty[g_impls[i].side], have_tp) != 0) failed = 1;

    /* 3. Instructions, each row in a valgrind child of its own. */
    e = getenv("TRACEC_BENCH_CALLGRIND");
    int cg_runs = 3;
    const char *cr = getenv("TRACEC_BENCH_CALLGRIND_RUNS");
    if (cr && atoi(cr) > 0) cg_runs = atoi(cr);
    if (!(e && strcmp(e, "0") == 0) && system("valgrind --version >/dev/null 2>&1") == 0)
        for (int i = 0; i < kImpls; i++) g_impls[i].instructions = callgrind(&g_impls[i], cg_runs);

    /* 4. Tables. */
    const impl *floor = &g_impls[kImpls - 1];
    printf("ns: wall time per event over %d rounds (median, min, max); cpu: the writing threads' CPU time per event "
           "(median)\n",
           reps);
    printf("%-12s %-13s %7s %9s %9s %9s %9s %13s %9s %11s %10s %10s\n", "bench", "impl", "threads", "median", "min",
           "max", "cpu", "instructions", "bytes/ev", "trace", "x raw", "x floor");
    for (int i = 0; i < kImpls; i++) {
        impl *im = &g_impls[i];
        const impl *raw = find(im->bench, "raw-writers", im->threads);
        char tr[32] = "-";
        if (im->trace_ok >= 0) snprintf(tr, sizeof tr, "%s %lld", im->trace_ok ? "ok" : "WRONG", im->trace_events);
        printf("%-12s %-13s %7d %9.2f %9.2f %9.2f %9.2f %13.1f %9.2f %11s", im->bench, im->name, im->threads,
               median(im->ns, reps), lowest(im->ns, reps), highest(im->ns, reps), median(im->cpu_ns, reps),
               im->instructions, im->bytes_per_event, tr);
        if (raw && raw != im)
            printf(" %9.2fx", ratio(im, raw, reps, NULL, NULL));
        else
            printf(" %10s", "");
        if (im != floor) printf(" %9.2fx", ratio(im, floor, reps, NULL, NULL));
        printf("\n");
    }

#ifdef BENCH_TE_SDK
    static const struct {
        const char *bench, *label;
        int threads;
    } cases[] = {{"te_disabled", "disabled instant", 1},
                 {"te_instant", "instant + int64 arg, interned name", 1},
                 {"te_slice", "slice begin or end", 1},
                 {"te_typed", "typed event, 2 fields", 1},
                 {"te_instant", "instant on 2 threads (aggregate)", 2}};
    printf("\nside by side with Perfetto's C SDK (ns: median of %d rounds (min-max); SDK/tracec: median of the "
           "per-round ratios (min-max))\n",
           reps);
    printf("%-36s %26s %26s %20s %16s %18s %8s %14s\n", "case", "tracec ns", "SDK ns", "SDK/tracec time",
           "cpu ns t/SDK", "instr tracec/SDK", "ratio", "bytes/ev t/SDK");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const impl *t = find(cases[c].bench, "tracec-te", cases[c].threads);
        const impl *s = find(cases[c].bench, "perfetto-sdk", cases[c].threads);
        double lo, hi, r = ratio(s, t, reps, &lo, &hi);
        char b[64], ib[48], bb[48], cb[48];
        printf("%-36s", cases[c].label);
        print_ns(t, reps);
        print_ns(s, reps);
        snprintf(b, sizeof b, "%.2fx (%.2f-%.2f)", r, lo, hi);
        snprintf(ib, sizeof ib, "%.0f / %.0f", t->instructions, s->instructions);
        snprintf(cb, sizeof cb, "%.1f / %.1f", median(t->cpu_ns, reps), median(s->cpu_ns, reps));
        printf(" %20s %16s %18s %7.2fx", b, cb, ib, t->instructions > 0 ? s->instructions / t->instructions : 0.0);
        if (strcmp(cases[c].bench, "te_disabled") == 0)
            snprintf(bb, sizeof bb, "-");
        else
            snprintf(bb, sizeof bb, "%.1f / %.1f", t->bytes_per_event, s->bytes_per_event);
        printf(" %14s\n", bb);
    }
    {
        const impl *ti = find("te_instant", "tracec-te", 1), *si = find("te_instant", "perfetto-sdk", 1);
        const impl *ts = find("te_slice", "tracec-te", 1), *ty = find("te_typed", "tracec-te", 1);
        double r = ratio(si, ti, reps, NULL, NULL);
        printf("targets: instant <= 430 instructions: %.0f %s; slice begin/end <= 260: %.0f %s; typed <= 395: %.0f "
               "%s\n",
               ti->instructions, ti->instructions > 0 && ti->instructions <= 430 ? "(met)" : "(NOT met)",
               ts->instructions, ts->instructions > 0 && ts->instructions <= 260 ? "(met)" : "(NOT met)",
               ty->instructions, ty->instructions > 0 && ty->instructions <= 395 ? "(met)" : "(NOT met)");
        printf("targets: instant >= 5x faster than the SDK (wall, median of rounds): %.2fx %s (CPU time: %.2fx); "
               "instant bytes <= 0.9x the SDK's: %.2fx %s\n",
               r, r >= 5 ? "(met)" : "(NOT met)", median(si->cpu_ns, reps) / median(ti->cpu_ns, reps),
               ti->bytes_per_event / si->bytes_per_event,
               ti->bytes_per_event <= 0.9 * si->bytes_per_event ? "(met)" : "(NOT met)");
    }
#endif
    {
        const impl *one = find("te_two_sessions", "1-session", 1), *two = find("te_two_sessions", "2-sessions", 1);
        double lo, hi, r = ratio(two, one, reps, &lo, &hi);
        printf("te_two_sessions: one event into 2 active sessions / into 1: %.2fx wall (median of rounds, %.2f-%.2f), "
               "%.2fx cpu, %.0f / %.0f instructions = %.2fx; target <= 2x: %s\n",
               r, lo, hi, median(two->cpu_ns, reps) / median(one->cpu_ns, reps), two->instructions, one->instructions,
               one->instructions > 0 ? two->instructions / one->instructions : 0.0,
               r <= 2.0 && (one->instructions <= 0 || two->instructions <= 2.0 * one->instructions) ? "met"
                                                                                                   : "NOT met");
    }
#ifdef BENCH_TE_TRACEC
    {
        const impl *own = find("te_recorder", "in-process", 1), *rec = find("te_recorder", "recorder", 1);
        double lo, hi, r = ratio(rec, own, reps, &lo, &hi), c = median(rec->cpu_ns, reps) / median(own->cpu_ns, reps);
        double bw = bu.rec_ns / bu.own_ns, bc = bu.rec_cpu / bu.own_cpu;
        printf("te_recorder in bursts of %d events, %d us apart (the recorder keeps up): recorder / in-process %.2fx "
               "wall (%.1f / %.1f ns, medians of %d bursts), %.2fx cpu of the writing thread\n",
               (int)kBurst, (int)kBurstPause, bw, bu.rec_ns, bu.own_ns, (int)kBurstRounds, bc);
        printf("te_recorder sustained (every round back to back, lossless): recorder / in-process %.2fx wall (median "
               "of rounds, %.2f-%.2f), %.2fx cpu of the writing thread, %.0f / %.0f instructions = %.2fx\n",
               r, lo, hi, c, rec->instructions, own->instructions,
               own->instructions > 0 ? rec->instructions / own->instructions : 0.0);
        if (rec_cpu_ns >= 0)
            printf("te_recorder: the recorder's CPU (tracec record, user and system) %.1f ns per event over the timed "
                   "rounds, the in-process writing thread's %.1f: a lossless writer of a sustained stream goes at the "
                   "slower one's pace (the recorded throughput's target is bench_record's recorder-wait row)\n",
                   rec_cpu_ns, median(own->cpu_ns, reps));
        printf("target: the instant written to tracec record's buffer costs the writing thread <= 1.2x its in-process "
               "cost: cpu %.2fx sustained, %.2fx in bursts; wall %.2fx in bursts: %s\n",
               c, bc, bw, c <= 1.2 && bc <= 1.2 && bw <= 1.2 ? "met" : "NOT met");
    }
#endif
    printf("targets: te_disabled <= 1 ns and <= 4 instructions; te_instant <= 1.5x raw-writers (1 thread): %.2fx\n",
           ratio(find("te_instant", "tracec-te", 1), find("te_instant", "raw-writers", 1), reps, NULL, NULL));

    if ((e = getenv("TRACEC_BENCH_JSON")) != NULL) {
        FILE *jf = fopen(e, "a");
#ifdef BENCH_TE_TRACEC
        for (int k = 0; jf && k < 2; k++)
            fprintf(jf,
                    "{\"bench\": \"te_recorder_burst\", \"impl\": \"%s\", \"threads\": 1, \"ns_median\": %.3f, "
                    "\"cpu_ns_median\": %.3f, \"runs\": %d, \"burst\": %d}\n",
                    k ? "recorder" : "in-process", k ? bu.rec_ns : bu.own_ns, k ? bu.rec_cpu : bu.own_cpu,
                    (int)kBurstRounds, (int)kBurst);
#endif
        for (int i = 0; jf && i < kImpls; i++) {
            impl *im = &g_impls[i];
            fprintf(jf,
                    "{\"bench\": \"%s\", \"impl\": \"%s\", \"threads\": %d, \"ns_per_op\": %.3f, \"ns_median\": "
                    "%.3f, \"ns_max\": %.3f, \"cpu_ns_median\": %.3f, \"runs\": %d",
                    im->bench, im->name, im->threads, lowest(im->ns, reps), median(im->ns, reps),
                    highest(im->ns, reps), median(im->cpu_ns, reps), reps);
            if (im->instructions >= 0) fprintf(jf, ", \"instructions\": %.1f", im->instructions);
            if (im->side == SIDE_TRACEC || im->side == SIDE_SDK)
                fprintf(jf, ", \"bytes_per_event\": %.2f", im->bytes_per_event);
            if (im->trace_ok >= 0)
                fprintf(jf, ", \"trace_events\": %lld, \"trace_ok\": %s", im->trace_events,
                        im->trace_ok ? "true" : "false");
            fprintf(jf, "}\n");
        }
        if (jf) fclose(jf);
    }
    return failed;
}
