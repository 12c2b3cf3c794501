/*
 * bench_textproto_encode.c - textproto encode throughput: tracec vs protoc,
 * in the same run, on a generated trace-like textproto (default 50 MB).
 *
 *   bench_textproto_encode [--mb N] [--runs N] [--keep FILE]
 *
 * Each encoder runs as its own process (tp_encode, which calls
 * tracec_text_encode with the built-in schema, and `protoc --encode` over
 * protos/); the best wall time of --runs runs and the peak RSS (wait4) are
 * reported, and the two outputs are compared byte for byte.  Prints a table;
 * appends JSON lines to $TRACEC_BENCH_JSON if set.
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

/* Runs argv with stdin/stdout redirected; returns seconds (or -1) and peak RSS in KB. */
static double run(char *const argv[], const char *in, const char *out, long *rss_kb) {
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
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s failed (status %d)\n", argv[0], status);
        return -1;
    }
    return dt;
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

int main(int argc, char **argv) {
    double mb = 50;
    int runs = 3;
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            keep = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--mb N] [--runs N] [--keep FILE]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    char input[1024], out_t[1024], out_p[1024], mbs[32];
    snprintf(input, sizeof input, "%s", keep ? keep : "");
    if (!keep) snprintf(input, sizeof input, "%s/tracec-bench-%d.txtpb", tmp, (int)getpid());
    snprintf(out_t, sizeof out_t, "%s/tracec-bench-%d.tracec.bin", tmp, (int)getpid());
    snprintf(out_p, sizeof out_p, "%s/tracec-bench-%d.protoc.bin", tmp, (int)getpid());
    snprintf(mbs, sizeof mbs, "%g", mb);

    struct stat st;
    long rss;
    if (!keep || stat(input, &st) != 0) {
        char *gen[] = {TP_GEN, input, mbs, NULL};
        if (run(gen, NULL, NULL, &rss) < 0) return 1;
    }
    if (stat(input, &st) != 0) return 1;
    double size_mb = (double)st.st_size / (1024.0 * 1024.0);

    char *tracec_argv[] = {TP_ENCODE, "perfetto.protos.Trace", input, out_t, NULL};
    char *protoc_argv[] = {TP_PROTOC, "--encode=perfetto.protos.Trace", "-I" TP_PROTOS,
                           "-I" TP_PROTOBUF_INCLUDE, "perfetto/trace/trace.proto", NULL};
    double best_t = 1e30, best_p = 1e30;
    long rss_t = 0, rss_p = 0;
    for (int r = 0; r < runs; r++) {
        double t = run(tracec_argv, NULL, NULL, &rss);
        if (t < 0) return 1;
        if (t < best_t) best_t = t;
        if (rss > rss_t) rss_t = rss;
        double p = run(protoc_argv, input, out_p, &rss);
        if (p < 0) return 1;
        if (p < best_p) best_p = p;
        if (rss > rss_p) rss_p = rss;
    }
    bool same = same_files(out_t, out_p);
    double mbps_t = size_mb / best_t, mbps_p = size_mb / best_p;
    printf("textproto_encode: %.1f MB trace-like textproto, best of %d runs\n", size_mb, runs);
    printf("  %-8s %10s %10s %14s\n", "impl", "seconds", "MB/s", "peak RSS (KB)");
    printf("  %-8s %10.3f %10.1f %14ld\n", "tracec", best_t, mbps_t, rss_t);
    printf("  %-8s %10.3f %10.1f %14ld\n", "protoc", best_p, mbps_p, rss_p);
    printf("  tracec / protoc throughput: %.2fx (target >= 4x); outputs %s\n", mbps_t / mbps_p,
           same ? "byte-identical" : "DIFFER");
    const char *json = getenv("TRACEC_BENCH_JSON");
    if (json && json[0]) {
        FILE *j = fopen(json, "a");
        if (j) {
            fprintf(j,
                    "{\"bench\": \"textproto_encode\", \"impl\": \"tracec\", \"input_mb\": %.2f, "
                    "\"seconds\": %.4f, \"mb_per_s\": %.2f, \"peak_rss_kb\": %ld, "
                    "\"ratio_vs_protoc\": %.3f, \"identical_output\": %s}\n",
                    size_mb, best_t, mbps_t, rss_t, mbps_t / mbps_p, same ? "true" : "false");
            fprintf(j,
                    "{\"bench\": \"textproto_encode\", \"impl\": \"protoc\", \"input_mb\": %.2f, "
                    "\"seconds\": %.4f, \"mb_per_s\": %.2f, \"peak_rss_kb\": %ld}\n",
                    size_mb, best_p, mbps_p, rss_p);
            fclose(j);
        }
    }
    unlink(out_t);
    unlink(out_p);
    if (!keep) unlink(input);
    return same ? 0 : 1;
}
