/*
 * typical_main.c - bench_typical: the typical-packet benchmark.
 *
 * Writes one typical TracePacket (see typical.h) millions of times with each
 * implementation -- tracec's generated writers, a hand-written direct
 * encoder of the same bytes (the floor), protobuf-c, libprotobuf C++ (real
 * schema, SetExtension), nanopb, and libprotobuf C++ on the flattened schema
 * (libprotobuf-flat, an extra row) -- and prints ns/packet, callgrind
 * instructions/packet and the ratios.  Before timing, every
 * implementation's packet is decoded by libprotobuf and must be the same
 * message, and must decode under the real schema with both extensions
 * recognised (and the direct encoder's bytes must equal tracec's exactly);
 * otherwise nothing is timed and it exits 1.
 *
 * protobuf-c and nanopb cannot write extensions, so they use the flattened
 * schema (peer/typical_flat.proto: the extensions as plain fields, a best
 * case) and stay under the bench name typical_packet.  libprotobuf-flat is
 * the same best case for libprotobuf; its JSON line has the bench name
 * typical_packet_flat_peers, so typical_packet keeps exactly five impls.
 *
 *   bench_typical [--runs R] [--iterations N] [--no-callgrind] [--impls a,b,...]
 *
 * --impls times only the named implementations (tracec, direct, protobuf-c,
 * libprotobuf, nanopb, libprotobuf-flat, tracec-len4, direct-len4); the
 * decode check always covers all eight.  tracec-len4 and direct-len4 (JSON
 * bench typical_packet_len4) are tracec built with
 * TRACEC_FIXED_NESTED_LENGTHS and its hand-written floor: the packet with
 * 4-byte nested lengths (the TRACEC_FIXED_NESTED_LENGTHS form), timed in the same run.
 *
 * Timing: R rounds (default 15); in each round every implementation runs
 * its own loop of N packets (default: calibrated to ~40 ms per loop), in
 * turn, so a noisy moment hurts them all alike.  Reported: the median over
 * the rounds (and the minimum); ratios are the median over the rounds of
 * the ratio within a round.  Each loop calls the noinline encoder with
 * the same input (the timestamp advances per packet), into one reusable
 * buffer, with a compiler barrier on the buffer after every packet.  Time
 * is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time spent
 * preempted on a busy machine does not count; on an idle one it equals
 * the wall time.
 *
 * Environment:
 *   TRACEC_BENCH_JSON        append one JSON object per implementation here
 *   TRACEC_BENCH_RUNS        rounds (as --runs)
 *   TRACEC_BENCH_ITERATIONS  packets per loop (as --iterations)
 *   TRACEC_BENCH_CALLGRIND=0 skip the callgrind counts (also skipped when
 *                            valgrind is not on PATH)
 *
 * Internal: `--callgrind-child IMPL N` runs IMPL's loop N times (under
 * valgrind, started by the parent with --toggle-collect=bench_encode_IMPL).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND_H 1
#endif
#endif

#include "typical.h"

enum { kBufSize = 4096, kMaxImpls = 8, kMaxRuns = 101, kCallgrindPackets = 20000 };

typedef struct impl {
    const char *name;
    size_t (*encode)(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
    uint64_t (*loop)(void *ctx, bench_input *in, uint8_t *buf, uint64_t n);
    void *(*make)(void);
    void (*destroy)(void *ctx);
    void *ctx;
    size_t bytes;
    uint64_t iterations;
    double ns[kMaxRuns];
    double median, min;
    double instructions; /* per packet; < 0 when not measured */
    bool flat;           /* written from the flattened schema (extensions as plain fields) */
    const char *bench;   /* the JSON "bench" name */
    bool off;            /* left out by --impls */
} impl;

/*
 * One loop per implementation, each calling its encoder directly (no
 * function pointer in the timed loop).  The barrier makes the compiler
 * assume the buffer and the size are read after every packet.
 */
#define BENCH_LOOP(NAME)                                                                     \
    static BENCH_NOINLINE uint64_t loop_##NAME(void *ctx, bench_input *in, uint8_t *buf,     \
                                               uint64_t n) {                                 \
        uint64_t total = 0;                                                                  \
        uint64_t ts = in->timestamp;                                                         \
        for (uint64_t i = 0; i < n; i++) {                                                   \
            in->timestamp = ts + i * 1000u;                                                  \
            size_t sz = bench_encode_##NAME(ctx, in, buf, kBufSize);                         \
            __asm__ volatile("" : : "r"(buf), "r"(sz) : "memory");                           \
            total += sz;                                                                     \
        }                                                                                    \
        in->timestamp = ts;                                                                  \
        return total;                                                                        \
    }
BENCH_LOOP(tracec)
BENCH_LOOP(direct)
BENCH_LOOP(protobuf_c)
BENCH_LOOP(libprotobuf)
BENCH_LOOP(nanopb)
BENCH_LOOP(libprotobuf_flat)
BENCH_LOOP(tracec_len4)
BENCH_LOOP(direct_len4)

static void *no_ctx(void) { return NULL; }
static void no_free(void *ctx) { (void)ctx; }

#define BENCH_IMPL(NAME, FN, MAKE, DESTROY, FLAT, BENCH)                                  \
    {.name = NAME, .encode = bench_encode_##FN, .loop = loop_##FN, .make = MAKE,            \
     .destroy = DESTROY, .instructions = -1, .flat = FLAT, .bench = BENCH}
static impl g_impls[kMaxImpls] = {
    BENCH_IMPL("tracec", tracec, no_ctx, no_free, false, "typical_packet"),
    BENCH_IMPL("direct", direct, no_ctx, no_free, false, "typical_packet"),
    /* protobuf-c and nanopb cannot write extensions: flattened schema. */
    BENCH_IMPL("protobuf-c", protobuf_c, bench_protobuf_c_new, bench_protobuf_c_free, true,
               "typical_packet"),
    BENCH_IMPL("libprotobuf", libprotobuf, bench_libprotobuf_new, bench_libprotobuf_free, false,
               "typical_packet"),
    BENCH_IMPL("nanopb", nanopb, bench_nanopb_new, bench_nanopb_free, true, "typical_packet"),
    /* An extra row: libprotobuf's best case, on the flattened schema. */
    BENCH_IMPL("libprotobuf-flat", libprotobuf_flat, bench_libprotobuf_flat_new,
               bench_libprotobuf_flat_free, true, "typical_packet_flat_peers"),
    /* Extra rows: the fixed 4-byte nested lengths (TRACEC_FIXED_NESTED_LENGTHS) and their floor. */
    BENCH_IMPL("tracec-len4", tracec_len4, no_ctx, no_free, false, "typical_packet_len4"),
    BENCH_IMPL("direct-len4", direct_len4, no_ctx, no_free, false, "typical_packet_len4"),
};

static impl *find_impl(const char *name) {
    for (int i = 0; i < kMaxImpls; i++)
        if (strcmp(g_impls[i].name, name) == 0) return &g_impls[i];
    return NULL;
}

/* The symbol callgrind toggles on: bench_encode_ + name with '-' as '_'. */
static void encode_symbol(const impl *im, char *out, size_t cap) {
    snprintf(out, cap, "bench_encode_%s", im->name);
    for (char *p = out; *p; p++)
        if (*p == '-') *p = '_';
}

static void make_input(bench_input *in) {
    static const char kLabel[] = "frame_begin";
    in->timestamp = UINT64_C(1234567890123); /* ns since boot, ~20 min: 6-byte varint */
    in->sequence_id = 7;
    in->type = 1; /* TYPE_SLICE_BEGIN */
    in->track_uuid = UINT64_C(0x1b2c3d4e5f60);
    in->name_iid = 42;
    in->category_iid = 3;
    in->annotation_name_iid = 5;
    in->annotation_int = 1234;
    in->counter = 100000;
    in->label = kLabel;
    in->label_len = sizeof kLabel - 1;
}

/*
 * The thread's CPU time, not the wall clock: time the benchmark spends
 * preempted by other processes on a busy machine is not counted.
 */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void hexdump(const char *what, const uint8_t *p, size_t n) {
    fprintf(stderr, "  %-12s (%3zu bytes):", what, n);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "%s%02x", i % 32 == 0 ? "\n    " : " ", p[i]);
    fputc('\n', stderr);
}

/* Encodes once with each implementation and checks they all say the same. */
static bool verify(bench_input *in) {
    static uint8_t bytes[kMaxImpls][kBufSize];
    static uint8_t canon[kMaxImpls][kBufSize];
    static char text[kBufSize], real_text[kBufSize];
    size_t canon_size[kMaxImpls];
    bool ok = true;
    impl *ref = find_impl("libprotobuf");
    int ref_i = (int)(ref - g_impls);
    for (int i = 0; i < kMaxImpls; i++) {
        impl *im = &g_impls[i];
        im->bytes = im->encode(im->ctx, in, bytes[i], kBufSize);
        canon_size[i] = im->bytes ? bench_canonical(bytes[i], im->bytes, canon[i], kBufSize,
                                                     i == ref_i ? text : NULL, sizeof text)
                                  : 0;
        if (canon_size[i] == 0) {
            fprintf(stderr, "bench_typical: %s: encoding failed or does not decode cleanly\n",
                    im->name);
            if (im->bytes) hexdump(im->name, bytes[i], im->bytes);
            ok = false;
        } else if (!bench_real_schema(bytes[i], im->bytes, i == ref_i ? real_text : NULL,
                                      sizeof real_text)) {
            fprintf(stderr,
                    "bench_typical: %s: does not decode cleanly as perfetto.protos.TracePacket "
                    "with both bench.BenchEvent extensions\n",
                    im->name);
            hexdump(im->name, bytes[i], im->bytes);
            ok = false;
        }
    }
    if (!ok) return false;
    for (int i = 0; i < kMaxImpls; i++) {
        if (canon_size[i] != canon_size[ref_i] || memcmp(canon[i], canon[ref_i], canon_size[i])) {
            fprintf(stderr, "bench_typical: %s's packet decodes to another message than %s's\n",
                    g_impls[i].name, ref->name);
            hexdump(g_impls[i].name, bytes[i], g_impls[i].bytes);
            hexdump(ref->name, bytes[ref_i], ref->bytes);
            ok = false;
        }
    }
    static const char *const same[][2] = {{"tracec", "direct"}, {"tracec-len4", "direct-len4"}};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        impl *tc = find_impl(same[k][0]), *dir = find_impl(same[k][1]);
        if (tc->bytes != dir->bytes || memcmp(bytes[tc - g_impls], bytes[dir - g_impls], tc->bytes)) {
            fprintf(stderr, "bench_typical: %s's bytes differ from %s's\n", dir->name, tc->name);
            hexdump(tc->name, bytes[tc - g_impls], tc->bytes);
            hexdump(dir->name, bytes[dir - g_impls], dir->bytes);
            ok = false;
        }
    }
    if (ok) {
        printf("packet (flat schema): %s\n", text);
        printf("packet (real schema): %s\n", real_text);
        printf("verified: all implementations decode (libprotobuf) to the same message, and "
               "under the real schema with both extensions; direct == tracec and direct-len4 == "
               "tracec-len4 byte for byte\n");
    }
    return ok;
}

static uint64_t round_iterations(double want) {
    if (want < 1000) return 1000;
    uint64_t scale = 1;
    while (want >= 100) {
        want /= 10;
        scale *= 10;
    }
    return (uint64_t)want * scale; /* two significant digits */
}

/* Packets per loop so that one loop lasts about target_ms. */
static uint64_t calibrate(impl *im, bench_input *in, uint8_t *buf, double target_ms) {
    uint64_t n = 1000;
    for (;;) {
        double t0 = now_ns();
        im->loop(im->ctx, in, buf, n);
        double dt = now_ns() - t0;
        if (dt > 20e6 || n >= (UINT64_C(1) << 32)) return round_iterations((double)n * target_ms * 1e6 / dt);
        n *= 4;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool have_valgrind(void) {
    const char *path = getenv("PATH");
    if (path == NULL) return false;
    char *copy = strdup(path);
    bool found = false;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char f[4096];
        snprintf(f, sizeof f, "%s/valgrind", dir);
        found = access(f, X_OK) == 0;
    }
    free(copy);
    return found;
}

/*
 * Runs this program under callgrind for one implementation and returns its
 * instructions per packet (inclusive count of bench_encode_IMPL / packets),
 * or -1.
 */
static double callgrind_count(const impl *im) {
    char out[] = "/tmp/bench_typical_cg_XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0) return -1;
    close(fd);
    char sym[64], toggle[96], outarg[128], packets[32];
    encode_symbol(im, sym, sizeof sym);
    snprintf(toggle, sizeof toggle, "--toggle-collect=%s", sym);
    snprintf(outarg, sizeof outarg, "--callgrind-out-file=%s", out);
    snprintf(packets, sizeof packets, "%d", kCallgrindPackets);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return -1;
    self[len] = '\0';
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("valgrind", "valgrind", "--tool=callgrind", toggle, outarg, self,
               "--callgrind-child", im->name, packets, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    double result = -1;
    FILE *f = fopen(out, "r");
    if (f && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            unsigned long long n;
            if (sscanf(line, "totals: %llu", &n) == 1 || sscanf(line, "summary: %llu", &n) == 1)
                result = (double)n / kCallgrindPackets;
        }
    }
    if (f) fclose(f);
    unlink(out);
    return result;
}

static int callgrind_child(const char *name, const char *count) {
    impl *im = find_impl(name);
    if (im == NULL) return 2;
    uint64_t n = strtoull(count, NULL, 10);
    static uint8_t buf[kBufSize];
    bench_input in;
    make_input(&in);
    im->ctx = im->make();
    im->loop(im->ctx, &in, buf, 100); /* warm-up: first-use allocations, lazy binding */
#ifdef BENCH_HAVE_CALLGRIND_H
    CALLGRIND_ZERO_STATS;
#endif
    im->loop(im->ctx, &in, buf, n);
    im->destroy(im->ctx);
    return 0;
}

/*
 * a's time over b's, as the median over the rounds of the ratio within each
 * round: the implementations of one round ran back to back, so a slow
 * moment of the machine cancels out.
 */
static double ratio(const impl *a, const impl *b, int runs) {
    double r[kMaxRuns];
    if (a->off || b->off) return 0;
    for (int i = 0; i < runs; i++) r[i] = a->ns[i] / b->ns[i];
    qsort(r, (size_t)runs, sizeof(double), cmp_double);
    return runs % 2 ? r[runs / 2] : (r[runs / 2 - 1] + r[runs / 2]) / 2;
}

static const char *target_word(bool met) { return met ? "MET" : "NOT MET"; }

int main(int argc, char **argv) {
    int runs = 15;
    uint64_t iterations = 0;
    bool callgrind = true;
    const char *e;
    if ((e = getenv("TRACEC_BENCH_RUNS")) && *e) runs = atoi(e);
    if ((e = getenv("TRACEC_BENCH_ITERATIONS")) && *e) iterations = strtoull(e, NULL, 10);
    if ((e = getenv("TRACEC_BENCH_CALLGRIND")) && strcmp(e, "0") == 0) callgrind = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--callgrind-child") == 0 && i + 2 < argc)
            return callgrind_child(argv[i + 1], argv[i + 2]);
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--no-callgrind") == 0) {
            callgrind = false;
        } else if (strcmp(argv[i], "--impls") == 0 && i + 1 < argc) {
            const char *list = argv[++i];
            for (int k = 0; k < kMaxImpls; k++) {
                size_t n = strlen(g_impls[k].name);
                const char *p = strstr(list, g_impls[k].name);
                while (p && !((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')))
                    p = strstr(p + 1, g_impls[k].name);
                g_impls[k].off = p == NULL;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--runs R] [--iterations N] [--no-callgrind] [--impls a,b,...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (runs > kMaxRuns) runs = kMaxRuns;

    static uint8_t buf[kBufSize];
    bench_input in;
    make_input(&in);
    for (int i = 0; i < kMaxImpls; i++) g_impls[i].ctx = g_impls[i].make();

    printf("== typical_packet: TracePacket{timestamp, sequence id, TrackEvent{type, track uuid, "
           "name iid, category iid, debug annotation, 2 extension fields}}\n");
    fflush(stdout);
    if (!verify(&in)) return 1;

    for (int i = 0; i < kMaxImpls; i++) {
        impl *im = &g_impls[i];
        if (im->off) continue;
        im->iterations = iterations ? iterations : calibrate(im, &in, buf, 40.0);
    }
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < kMaxImpls; i++) {
            impl *im = &g_impls[i];
            if (im->off) continue;
            double t0 = now_ns();
            im->loop(im->ctx, &in, buf, im->iterations);
            im->ns[r] = (now_ns() - t0) / (double)im->iterations;
        }
    }
    for (int i = 0; i < kMaxImpls; i++) {
        impl *im = &g_impls[i];
        double sorted[kMaxRuns];
        memcpy(sorted, im->ns, sizeof(double) * (size_t)runs);
        qsort(sorted, (size_t)runs, sizeof(double), cmp_double);
        im->median = runs % 2 ? sorted[runs / 2] : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
        im->min = sorted[0];
    }
    if (callgrind && !have_valgrind()) {
        printf("callgrind: valgrind not on PATH, instruction counts skipped\n");
        callgrind = false;
    }
    if (callgrind) {
        fflush(stdout);
        for (int i = 0; i < kMaxImpls; i++)
            if (!g_impls[i].off) g_impls[i].instructions = callgrind_count(&g_impls[i]);
    }

    impl *tc = find_impl("tracec"), *dir = find_impl("direct");
    printf("%-16s %-6s %6s %12s %9s %12s %9s %10s %11s\n", "impl", "schema", "bytes", "ns/packet",
           "min ns", "instr/pkt", "packets", "vs direct", "vs tracec");
    for (int i = 0; i < kMaxImpls; i++) {
        impl *im = &g_impls[i];
        if (im->off) continue;
        char instr[32] = "-";
        if (im->instructions >= 0) snprintf(instr, sizeof instr, "%.0f", im->instructions);
        printf("%-16s %-6s %6zu %12.2f %9.2f %12s %9" PRIu64 " %9.2fx %10.2fx\n", im->name,
               im->flat ? "flat*" : "real", im->bytes, im->median, im->min, instr,
               im->iterations, ratio(im, dir, runs), ratio(im, tc, runs));
    }
    printf("(ns: median of %d rounds; 'vs': median over the rounds of this impl's ns/packet "
           "divided by that one's in the same round)\n",
           runs);
    printf("(real: perfetto.protos schema, the two fields written as TrackEvent extensions;\n"
           " flat*: flattened schema: extensions as plain fields, a best case "
           "(peer/typical_flat.proto).\n"
           " protobuf-c and nanopb cannot write extensions, so their typical_packet rows use it;\n"
           " libprotobuf-flat is libprotobuf on it, for information "
           "(JSON bench typical_packet_flat_peers))\n");
    double floor_ratio = ratio(tc, dir, runs);
    if (!tc->off && !dir->off)
        printf("target: tracec within 1.10x of the direct floor: "
               "%.2fx  %s\n",
               floor_ratio, target_word(floor_ratio <= 1.10));
    /* Bytes: libprotobuf's serialization is the canonical size (minimal lengths). */
    impl *canon_impl = find_impl("libprotobuf");
    double size_ratio = (double)tc->bytes / (double)canon_impl->bytes;
    printf("target: tracec's packet within 2%% of the canonical size (libprotobuf, %zu bytes): "
           "%zu bytes, %+.1f%%  %s\n",
           canon_impl->bytes, tc->bytes, (size_ratio - 1.0) * 100.0, target_word(size_ratio <= 1.02));
    impl *t4 = find_impl("tracec-len4"), *d4 = find_impl("direct-len4");
    if (!t4->off && !d4->off)
        printf("info:   4-byte lengths: tracec-len4 %zu bytes, %.2fx its floor direct-len4\n", t4->bytes,
               ratio(t4, d4, runs));
    if (!t4->off && !tc->off)
        printf("info:   tracec (minimal lengths) vs tracec-len4 in the same rounds: %.2fx the time\n",
               ratio(tc, t4, runs));
    if (!d4->off && !dir->off)
        printf("info:   direct (minimal lengths) vs direct-len4 in the same rounds: %.2fx the time\n",
               ratio(dir, d4, runs));
    /* The first two are the targets; the others are information only. */
    const char *peers[] = {"libprotobuf", "protobuf-c", "libprotobuf-flat", "nanopb"};
    for (size_t k = 0; k < sizeof peers / sizeof peers[0]; k++) {
        impl *p = find_impl(peers[k]);
        if (tc->off || p->off) continue;
        double speedup = ratio(p, tc, runs);
        const char *note = p->flat ? " (flattened schema)" : " (real extensions)";
        if (k < 2)
            printf("target: tracec >= 5x faster than %s%s: %.1fx  %s\n", p->name, note, speedup,
                   target_word(speedup >= 5.0));
        else
            printf("info:   tracec vs %s%s: %.1fx faster\n", p->name, note, speedup);
    }

    const char *json = getenv("TRACEC_BENCH_JSON");
    FILE *jf = json && *json ? fopen(json, "a") : NULL;
    if (json && *json && jf == NULL) perror(json);
    for (int i = 0; jf && i < kMaxImpls; i++) {
        impl *im = &g_impls[i];
        if (im->off) continue;
        fprintf(jf,
                "{\"bench\": \"%s\", \"impl\": \"%s\", \"ns_per_op\": %.2f, "
                "\"bytes\": %zu, \"iterations\": %" PRIu64 ", \"runs\": %d, \"ns_min\": %.2f",
                im->bench, im->name, im->median, im->bytes, im->iterations, runs, im->min);
        if (im->instructions >= 0) fprintf(jf, ", \"instructions\": %.1f", im->instructions);
        fprintf(jf, "}\n");
    }
    if (jf) fclose(jf);
    for (int i = 0; i < kMaxImpls; i++) g_impls[i].destroy(g_impls[i].ctx);
    return 0;
}
