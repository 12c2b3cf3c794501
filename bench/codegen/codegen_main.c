/*
 * codegen_main.c - bench_codegen: how long code generation takes.
 *
 * Two inputs:
 *   codegen_protos  every .proto under protos/ (the Perfetto-compatible
 *                   schema), with google/protobuf/descriptor.proto on -I;
 *   codegen_5000    a synthetic proto of 5,000 messages (10 fields each:
 *                   every scalar kind, a string, bytes, a packed repeated
 *                   field, an enum and a reference to the previous
 *                   message), written to a temp folder first (not timed).
 * Three generators, end to end (a protoc process, its plugin, the files
 * written), each into a fresh empty folder:
 *   tracec      protoc --plugin=protoc-gen-tracec --tracec_out
 *   protoc-c    protoc --plugin=protoc-gen-c --c_out   (protobuf-c 1.4)
 *   protoc-cpp  protoc --cpp_out                       (built into protoc)
 * Rounds are interleaved (every generator once per round, after one
 * untimed warm-up round); reported are the medians over the rounds of the
 * wall time and of the CPU time (user + system of protoc and its plugin,
 * from wait4: robust when other work shares the machine), and the ratios
 * against tracec.  The target is judged on CPU time.
 *
 *   bench_codegen [--runs R]   rounds for both inputs (default: 11 for
 *                              codegen_protos, 3 for codegen_5000, whose
 *                              C++ output alone is ~240 MB and ~8 s a round;
 *                              TRACEC_BENCH_RUNS also sets R)
 *
 * Appends one JSON line per (input, generator) to $TRACEC_BENCH_JSON:
 *   {"bench": "codegen_5000", "impl": "protoc-c", "ms": 812.4, "cpu_ms": 790.1, ...}
 * ("ms" is the wall time).
 * Exits 1 if a generator fails (its output is shown), 0 otherwise.
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE /* wait4 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_PROTOC
#error "BENCH_PROTOC, BENCH_PROTOC_GEN_C, BENCH_PLUGIN, BENCH_PROTOS_DIR, BENCH_PROTOBUF_INCLUDE are set by CMake"
#endif

enum { kMaxRuns = 51, kMaxArgs = 256, kMaxProtos = 200, kSynthMessages = 5000, kGens = 3 };

typedef struct gen {
    const char *name;
    double ms[kMaxRuns];  /* wall time */
    double cpu[kMaxRuns]; /* user + system time of protoc and its plugin */
    double median, cpu_median;
    size_t out_bytes; /* size of what it wrote, last run */
    int out_files;
} gen;

typedef struct input {
    const char *bench;
    const char *root;              /* -I root the protos are relative to */
    const char *protos[kMaxProtos]; /* relative to root */
    int n;
    gen gens[kGens];
} input;

static char g_tmp[] = "/tmp/bench_codegen_XXXXXX";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_rf(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static size_t g_du_bytes;
static int g_du_files;
static int du_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F) {
        g_du_bytes += (size_t)st->st_size;
        g_du_files++;
    }
    return 0;
}

/* Collects every .proto under root (relative paths), sorted. */
static const char *g_walk_root;
static input *g_walk_in;
static int collect_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    size_t len = strlen(path);
    if (flag == FTW_F && len > 6 && strcmp(path + len - 6, ".proto") == 0 &&
        g_walk_in->n < kMaxProtos) {
        g_walk_in->protos[g_walk_in->n++] = strdup(path + strlen(g_walk_root) + 1);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Writes the synthetic proto; returns false on I/O failure. */
static bool write_synthetic(const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL) return false;
    fprintf(f, "// Synthetic schema for bench_codegen: %d messages.\n", kSynthMessages);
    fprintf(f, "syntax = \"proto2\";\n\npackage synth.bench;\n\n");
    fprintf(f, "enum Kind {\n  KIND_UNSPECIFIED = 0;\n  KIND_A = 1;\n  KIND_B = 2;\n}\n\n");
    for (int i = 0; i < kSynthMessages; i++) {
        fprintf(f, "message Msg%d {\n", i);
        fprintf(f, "  optional uint64 id = 1;\n");
        fprintf(f, "  optional int32 count = 2;\n");
        fprintf(f, "  optional string name = 3;\n");
        fprintf(f, "  optional bytes blob = 4;\n");
        fprintf(f, "  repeated uint32 values = 5 [packed = true];\n");
        fprintf(f, "  optional double ratio = 6;\n");
        fprintf(f, "  optional bool flag = 7;\n");
        fprintf(f, "  optional Kind kind = 8;\n");
        fprintf(f, "  optional sint64 delta = 9;\n");
        if (i > 0)
            fprintf(f, "  optional Msg%d prev = 10;\n", i - 1);
        else
            fprintf(f, "  optional fixed64 stamp = 10;\n");
        fprintf(f, "}\n\n");
    }
    return fclose(f) == 0;
}

/*
 * Runs argv (cwd = root) with output to log; returns the wall time in ms
 * (and the CPU time of it and its children in *cpu_ms), or a negative
 * number when it fails.
 */
static double run(char *const argv[], const char *root, const char *log, double *cpu_ms) {
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (chdir(root) != 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    double dt = now_ms() - t0;
    *cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? dt : -1;
}

static void show_log(const char *log) {
    FILE *f = fopen(log, "r");
    if (f == NULL) return;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n++ < 30) fprintf(stderr, "    %s", line);
    fclose(f);
}

/* One generator on one input, into a fresh folder; returns wall ms or < 0. */
static double generate(input *in, int g, bool measure_output, double *cpu_ms) {
    char out[4096], opt[4096 + 64], plugin[4096 + 64], inc[4096], log[4096];
    snprintf(out, sizeof out, "%s/out_%d", g_tmp, g);
    snprintf(log, sizeof log, "%s/log_%d.txt", g_tmp, g);
    rm_rf(out);
    mkdir(out, 0755);
    char *argv[kMaxArgs];
    int a = 0;
    argv[a++] = (char *)BENCH_PROTOC;
    switch (g) {
    case 0:
        snprintf(plugin, sizeof plugin, "--plugin=protoc-gen-tracec=%s", BENCH_PLUGIN);
        snprintf(opt, sizeof opt, "--tracec_out=%s", out);
        break;
    case 1:
        snprintf(plugin, sizeof plugin, "--plugin=protoc-gen-c=%s", BENCH_PROTOC_GEN_C);
        snprintf(opt, sizeof opt, "--c_out=%s", out);
        break;
    default:
        plugin[0] = '\0';
        snprintf(opt, sizeof opt, "--cpp_out=%s", out);
        break;
    }
    if (plugin[0]) argv[a++] = plugin;
    argv[a++] = opt;
    argv[a++] = (char *)"-I.";
    snprintf(inc, sizeof inc, "-I%s", BENCH_PROTOBUF_INCLUDE);
    argv[a++] = inc;
    for (int i = 0; i < in->n && a < kMaxArgs - 1; i++) argv[a++] = (char *)in->protos[i];
    argv[a] = NULL;
    double ms = run(argv, in->root, log, cpu_ms);
    if (ms < 0) {
        fprintf(stderr, "bench_codegen: %s: %s failed:\n", in->bench, in->gens[g].name);
        show_log(log);
    } else if (measure_output) {
        g_du_bytes = 0;
        g_du_files = 0;
        nftw(out, du_entry, 16, FTW_PHYS);
        in->gens[g].out_bytes = g_du_bytes;
        in->gens[g].out_files = g_du_files;
    }
    rm_rf(out);
    return ms;
}

static void init_gens(input *in) {
    static const char *names[kGens] = {"tracec", "protoc-c", "protoc-cpp"};
    for (int g = 0; g < kGens; g++) {
        memset(&in->gens[g], 0, sizeof in->gens[g]);
        in->gens[g].name = names[g];
    }
}

/* Times every generator on `in`; returns false if one failed. */
static double median(const double *v, int runs) {
    double s[kMaxRuns];
    memcpy(s, v, sizeof(double) * (size_t)runs);
    qsort(s, (size_t)runs, sizeof(double), cmp_double);
    return runs % 2 ? s[runs / 2] : (s[runs / 2 - 1] + s[runs / 2]) / 2;
}

static bool bench_input_run(input *in, int runs) {
    double cpu;
    for (int g = 0; g < kGens; g++) /* warm-up (page cache), and output size */
        if (generate(in, g, true, &cpu) < 0) return false;
    for (int r = 0; r < runs; r++) {
        for (int g = 0; g < kGens; g++) {
            double ms = generate(in, g, false, &cpu);
            if (ms < 0) return false;
            in->gens[g].ms[r] = ms;
            in->gens[g].cpu[r] = cpu;
        }
    }
    for (int g = 0; g < kGens; g++) {
        in->gens[g].median = median(in->gens[g].ms, runs);
        in->gens[g].cpu_median = median(in->gens[g].cpu, runs);
    }
    return true;
}

static void report(const input *in, int runs, FILE *jf) {
    const gen *tc = &in->gens[0];
    printf("== %s: %d file(s) under %s\n", in->bench, in->n, in->root);
    printf("%-12s %10s %10s %12s %6s %10s %10s\n", "impl", "wall ms", "cpu ms", "out bytes",
           "files", "vs tracec", "(cpu)");
    for (int g = 0; g < kGens; g++) {
        const gen *x = &in->gens[g];
        printf("%-12s %10.1f %10.1f %12zu %6d %9.2fx %9.2fx\n", x->name, x->median, x->cpu_median,
               x->out_bytes, x->out_files, x->median / tc->median,
               x->cpu_median / tc->cpu_median);
        if (jf)
            fprintf(jf,
                    "{\"bench\": \"%s\", \"impl\": \"%s\", \"ms\": %.1f, \"cpu_ms\": %.1f, "
                    "\"runs\": %d, \"out_bytes\": %zu, \"files\": %d}\n",
                    in->bench, x->name, x->median, x->cpu_median, runs, x->out_bytes,
                    x->out_files);
    }
    double vs_c = in->gens[1].cpu_median / tc->cpu_median;
    printf("(median of %d rounds; 'vs tracec': that generator's time / tracec's, wall and CPU)\n",
           runs);
    printf("target: tracec no slower than protoc-c (CPU time): protoc-c/tracec = %.2fx  %s "
           "(wall: %.2fx)\n",
           vs_c, vs_c >= 1.0 ? "MET" : "NOT MET", in->gens[1].median / tc->median);
}

int main(int argc, char **argv) {
    int runs = 0; /* 0: the per-input defaults */
    const char *e = getenv("TRACEC_BENCH_RUNS");
    if (e && *e) runs = atoi(e);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--runs R]\n", argv[0]);
            return 2;
        }
    }
    if (runs > kMaxRuns) runs = kMaxRuns;
    int tree_runs = runs > 0 ? runs : 11;
    int synth_runs = runs > 0 ? runs : 3;
    if (mkdtemp(g_tmp) == NULL) {
        perror("mkdtemp");
        return 1;
    }

    static input tree, synth;
    tree.bench = "codegen_protos";
    tree.root = BENCH_PROTOS_DIR;
    g_walk_root = tree.root;
    g_walk_in = &tree;
    nftw(tree.root, collect_entry, 16, FTW_PHYS);
    qsort(tree.protos, (size_t)tree.n, sizeof tree.protos[0], cmp_str);
    init_gens(&tree);

    synth.bench = "codegen_5000";
    synth.root = g_tmp;
    synth.protos[0] = "synth5000.proto";
    synth.n = 1;
    init_gens(&synth);
    char synth_path[4096];
    snprintf(synth_path, sizeof synth_path, "%s/synth5000.proto", g_tmp);

    int rc = 0;
    const char *json = getenv("TRACEC_BENCH_JSON");
    FILE *jf = json && *json ? fopen(json, "a") : NULL;
    if (json && *json && jf == NULL) perror(json);

    if (tree.n == 0) {
        fprintf(stderr, "bench_codegen: no .proto under %s\n", tree.root);
        rc = 1;
    } else if (bench_input_run(&tree, tree_runs)) {
        report(&tree, tree_runs, jf);
    } else {
        rc = 1;
    }
    fflush(stdout);
    if (!write_synthetic(synth_path)) {
        perror(synth_path);
        rc = 1;
    } else if (bench_input_run(&synth, synth_runs)) {
        report(&synth, synth_runs, jf);
    } else {
        rc = 1;
    }
    if (jf) fclose(jf);
    rm_rf(g_tmp);
    return rc;
}
