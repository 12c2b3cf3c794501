/*
 * bench_textproto_encode.c - textproto encode throughput, end to end: the
 * `tracec encode` command vs `protoc --encode`, in the same run, on two
 * generated trace-like textprotos (default 50 MB each):
 *   - plain: track events and descriptors, one field per line;
 *   - rich:  the same plus, in a third of the events, escapes, exponent
 *            floats, hex and octal integers in lists, `<>`, `,` and `;`,
 *            `#` comments and `[ext.name]` fields of test_extensions.proto
 *            (gen_trace_textproto ... rich).
 *
 *   bench_textproto_encode [--mb N] [--runs N] [--input plain|rich|both]
 *
 * Each encoder runs as its own process, reading the file and writing the
 * binary file (tracec: `tracec encode [-d ext.desc] IN OUT`; protoc: the
 * file on stdin, stdout to a file), alternately; the best wall time of
 * --runs runs, the best CPU time (user + system) and the peak RSS (wait4)
 * are reported, and the two outputs are compared byte for byte.  Prints a
 * table; appends JSON lines to $TRACEC_BENCH_JSON if set.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
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

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs argv with stdin/stdout redirected; returns seconds (or -1), CPU seconds and peak RSS in KB. */
static double run_cpu(char *const argv[], const char *in, const char *out, long *rss_kb, double *cpu) {
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (in) {
            int fd = open(in, O_RDONLY);
            if (fd < 0 || dup2(fd, 0) < 0) _exit(127);
        }
        if (out) {
            int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    double dt = now() - t0;
    *rss_kb = ru.ru_maxrss;
    if (cpu)
        *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec * 1e-6;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s failed (status %d)\n", argv[0], status);
        return -1;
    }
    return dt;
}

static double run(char *const argv[], const char *in, const char *out, long *rss_kb) {
    return run_cpu(argv, in, out, rss_kb, NULL);
}

static bool same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        char x[65536], y[65536];
        size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
        if (na != nb || memcmp(x, y, na) != 0) same = false;
        if (na == 0) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

typedef struct result {
    double mb, best_t, best_p, cpu_t, cpu_p;
    long rss_t, rss_p;
    bool same;
} result;

/* Generates `kind` input of `mb` MB, then runs both encoders `runs` times, alternately. */
static bool measure(const char *tmp, const char *kind, double mb, int runs, result *r) {
    char input[1024], out_t[1024], out_p[1024], mbs[32], desc[1024], dflag[1100];
    int pid = (int)getpid();
    snprintf(input, sizeof input, "%s/tracec-bench-%d-%s.txtpb", tmp, pid, kind);
    snprintf(out_t, sizeof out_t, "%s/tracec-bench-%d.tracec.bin", tmp, pid);
    snprintf(out_p, sizeof out_p, "%s/tracec-bench-%d.protoc.bin", tmp, pid);
    snprintf(desc, sizeof desc, "%s/tracec-bench-%d.desc", tmp, pid);
    snprintf(dflag, sizeof dflag, "--descriptor_set_out=%s", desc);
    snprintf(mbs, sizeof mbs, "%g", mb);
    bool rich = strcmp(kind, "rich") == 0;
    long rss;
    char *gen[] = {TP_GEN, input, mbs, (char *)kind, NULL};
    if (run(gen, NULL, NULL, &rss) < 0) return false;
    char *mkdesc[] = {TP_PROTOC, "-I" TP_PROTOS, "-I" TP_EXTENSIONS, dflag, "test_extensions.proto", NULL};
    if (rich && run(mkdesc, NULL, NULL, &rss) < 0) return false;
    struct stat st;
    if (stat(input, &st) != 0) return false;
    r->mb = (double)st.st_size / (1024.0 * 1024.0);

    char *tracec_plain[] = {TP_TRACEC, "encode", input, out_t, NULL};
    char *tracec_rich[] = {TP_TRACEC, "encode", "-d", desc, input, out_t, NULL};
    char *protoc_plain[] = {TP_PROTOC, "--encode=perfetto.protos.Trace", "-I" TP_PROTOS, "-I" TP_PROTOBUF_INCLUDE,
                            "perfetto/trace/trace.proto", NULL};
    char *protoc_rich[] = {TP_PROTOC, "--encode=perfetto.protos.Trace", "-I" TP_PROTOS, "-I" TP_EXTENSIONS,
                           "-I" TP_PROTOBUF_INCLUDE, "perfetto/trace/trace.proto", "test_extensions.proto", NULL};
    r->best_t = r->best_p = r->cpu_t = r->cpu_p = 1e30;
    r->rss_t = r->rss_p = 0;
    for (int i = 0; i < runs; i++) {
        double cpu;
        double t = run_cpu(rich ? tracec_rich : tracec_plain, NULL, NULL, &rss, &cpu);
        if (t < 0) return false;
        if (t < r->best_t) r->best_t = t;
        if (cpu < r->cpu_t) r->cpu_t = cpu;
        if (rss > r->rss_t) r->rss_t = rss;
        double p = run_cpu(rich ? protoc_rich : protoc_plain, input, out_p, &rss, &cpu);
        if (p < 0) return false;
        if (p < r->best_p) r->best_p = p;
        if (cpu < r->cpu_p) r->cpu_p = cpu;
        if (rss > r->rss_p) r->rss_p = rss;
    }
    r->same = same_files(out_t, out_p);
    unlink(out_t);
    unlink(out_p);
    unlink(input);
    if (rich) unlink(desc);
    return true;
}

int main(int argc, char **argv) {
    double mb = 50;
    int runs = 3;
    const char *which = "both";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
            which = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--mb N] [--runs N] [--input plain|rich|both]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    const char *kinds[] = {"plain", "rich"};
    bool all_same = true;
    for (int k = 0; k < 2; k++) {
        if (strcmp(which, "both") != 0 && strcmp(which, kinds[k]) != 0) continue;
        result r;
        if (!measure(tmp, kinds[k], mb, runs, &r)) return 1;
        double mbps_t = r.mb / r.best_t, mbps_p = r.mb / r.best_p;
        printf("textproto_encode (%s): %.1f MB trace-like textproto, `tracec encode` vs `protoc --encode`, "
               "file in, file out, best of %d runs\n",
               kinds[k], r.mb, runs);
        printf("  %-8s %10s %10s %10s %14s\n", "impl", "seconds", "MB/s", "cpu s", "peak RSS (KB)");
        printf("  %-8s %10.3f %10.1f %10.3f %14ld\n", "tracec", r.best_t, mbps_t, r.cpu_t, r.rss_t);
        printf("  %-8s %10.3f %10.1f %10.3f %14ld\n", "protoc", r.best_p, mbps_p, r.cpu_p, r.rss_p);
        printf("  tracec / protoc: %.2fx wall, %.2fx CPU (target >= 4x); outputs %s\n", mbps_t / mbps_p,
               r.cpu_p / r.cpu_t, r.same ? "byte-identical" : "DIFFER");
        all_same = all_same && r.same;
        const char *json = getenv("TRACEC_BENCH_JSON");
        if (json && json[0]) {
            FILE *j = fopen(json, "a");
            if (j) {
                fprintf(j,
                        "{\"bench\": \"textproto_encode\", \"impl\": \"tracec\", \"input\": \"%s\", "
                        "\"input_mb\": %.2f, \"seconds\": %.4f, \"cpu_seconds\": %.4f, \"mb_per_s\": %.2f, "
                        "\"peak_rss_kb\": %ld, \"ratio_vs_protoc\": %.3f, \"cpu_ratio_vs_protoc\": %.3f, "
                        "\"identical_output\": %s}\n",
                        kinds[k], r.mb, r.best_t, r.cpu_t, mbps_t, r.rss_t, mbps_t / mbps_p, r.cpu_p / r.cpu_t,
                        r.same ? "true" : "false");
                fprintf(j,
                        "{\"bench\": \"textproto_encode\", \"impl\": \"protoc\", \"input\": \"%s\", "
                        "\"input_mb\": %.2f, \"seconds\": %.4f, \"cpu_seconds\": %.4f, \"mb_per_s\": %.2f, "
                        "\"peak_rss_kb\": %ld}\n",
                        kinds[k], r.mb, r.best_p, r.cpu_p, mbps_p, r.rss_p);
                fclose(j);
            }
        }
    }
    return all_same ? 0 : 1;
}
