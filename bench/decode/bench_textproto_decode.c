/*
 * bench_textproto_decode.c - `tracec decode` against `protoc --decode`.
 *
 * Generates a trace-like textproto of --mb megabytes (bench/textproto's
 * generator), encodes it with protoc, then decodes the binary with both
 * tools, alternating, --runs times each, as separate processes.  Reports
 * the best wall time of each as MB/s of textproto produced, the peak RSS
 * of each process, the ratio, and whether the two texts are identical.
 * Prints a table; appends JSON lines to $TRACEC_BENCH_JSON if set:
 *   {"bench": "textproto_decode", "impl": "tracec"|"protoc", "mb_per_s": ..., "peak_rss_kb": ...}
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

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs a child process; stdin/stdout optionally from/to files.  Returns wall seconds or -1. */
static double spawn(char *const argv[], const char *in, const char *out, long *peak_kb) {
    double start = seconds_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (in) {
            int fd = open(in, O_RDONLY);
            if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) _exit(126);
            close(fd);
        }
        if (out) {
            int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
            close(fd);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    double elapsed = seconds_now() - start;
    if (peak_kb) *peak_kb = ru.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_textproto_decode: %s exited with status %d\n", argv[0], status);
        return -1;
    }
    return elapsed;
}

static bool files_equal(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool eq = fa != NULL && fb != NULL;
    static char x[1 << 16], y[1 << 16];
    while (eq) {
        size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
        if (na != nb || memcmp(x, y, na) != 0) eq = false;
        if (na == 0) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return eq;
}

static double file_mb(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : 0;
}

int main(int argc, char **argv) {
    double mb = 50;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
            mb = atof(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--mb N] [--runs N]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    char text[1024], bin[1024], out_tracec[1024], out_protoc[1024], mbarg[32];
    int id = (int)getpid();
    snprintf(text, sizeof text, "%s/tracec-bdec-%d.txtpb", tmp, id);
    snprintf(bin, sizeof bin, "%s/tracec-bdec-%d.pftrace", tmp, id);
    snprintf(out_tracec, sizeof out_tracec, "%s/tracec-bdec-%d.tracec.txt", tmp, id);
    snprintf(out_protoc, sizeof out_protoc, "%s/tracec-bdec-%d.protoc.txt", tmp, id);
    snprintf(mbarg, sizeof mbarg, "%g", mb);

    int rc = 1;
    char *gen[] = {BD_GEN, text, mbarg, NULL};
    char *encode[] = {BD_PROTOC, "--encode=perfetto.protos.Trace", "-I" BD_PROTOS, "-I" BD_PROTOBUF_INCLUDE,
                      "perfetto/trace/trace.proto", NULL};
    char *tracec[] = {BD_TRACEC, "decode", bin, out_tracec, NULL};
    char *protoc[] = {BD_PROTOC, "--decode=perfetto.protos.Trace", "-I" BD_PROTOS, "-I" BD_PROTOBUF_INCLUDE,
                      "perfetto/trace/trace.proto", NULL};
    if (spawn(gen, NULL, NULL, NULL) < 0 || spawn(encode, text, bin, NULL) < 0) goto done;

    double best_t = 1e30, best_p = 1e30;
    long rss_t = 0, rss_p = 0, rss;
    for (int r = 0; r < runs; r++) {
        double t = spawn(tracec, NULL, NULL, &rss);
        if (t < 0) goto done;
        if (t < best_t) best_t = t;
        if (rss > rss_t) rss_t = rss;
        double p = spawn(protoc, bin, out_protoc, &rss);
        if (p < 0) goto done;
        if (p < best_p) best_p = p;
        if (rss > rss_p) rss_p = rss;
    }
    bool same = files_equal(out_tracec, out_protoc);
    double text_mb = file_mb(out_protoc), bin_mb = file_mb(bin);
    double mbs_t = text_mb / best_t, mbs_p = text_mb / best_p;
    printf("textproto_decode: %.1f MB binary -> %.1f MB textproto, best of %d runs\n", bin_mb, text_mb, runs);
    printf("  %-8s %10s %12s %14s\n", "impl", "seconds", "MB/s (text)", "peak RSS (KB)");
    printf("  %-8s %10.3f %12.1f %14ld\n", "tracec", best_t, mbs_t, rss_t);
    printf("  %-8s %10.3f %12.1f %14ld\n", "protoc", best_p, mbs_p, rss_p);
    printf("  tracec / protoc throughput: %.2fx (target >= 2x); peak RSS ratio %.2f; outputs %s\n",
           mbs_t / mbs_p, (double)rss_t / (double)(rss_p ? rss_p : 1), same ? "identical" : "DIFFER");
    const char *json = getenv("TRACEC_BENCH_JSON");
    if (json && json[0]) {
        FILE *j = fopen(json, "a");
        if (j) {
            fprintf(j,
                    "{\"bench\": \"textproto_decode\", \"impl\": \"tracec\", \"input_mb\": %.2f, \"text_mb\": %.2f, "
                    "\"seconds\": %.4f, \"mb_per_s\": %.2f, \"peak_rss_kb\": %ld, \"ratio_vs_protoc\": %.3f, "
                    "\"identical_output\": %s}\n",
                    bin_mb, text_mb, best_t, mbs_t, rss_t, mbs_t / mbs_p, same ? "true" : "false");
            fprintf(j,
                    "{\"bench\": \"textproto_decode\", \"impl\": \"protoc\", \"input_mb\": %.2f, \"text_mb\": %.2f, "
                    "\"seconds\": %.4f, \"mb_per_s\": %.2f, \"peak_rss_kb\": %ld}\n",
                    bin_mb, text_mb, best_p, mbs_p, rss_p);
            fclose(j);
        }
    }
    rc = same ? 0 : 1;
done:
    unlink(text);
    unlink(bin);
    unlink(out_tracec);
    unlink(out_protoc);
    return rc;
}
