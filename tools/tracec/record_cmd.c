/*
 * record_cmd.c - `tracec record`: runs a program under tracing (or attaches
 * to providers that register on their own) with the recorder of
 * tracec/recorder.h, and writes one Perfetto trace.  docs/record.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_cmd.h"
#include "tracec/provider.h"
#include "tracec/recorder.h"

static volatile sig_atomic_t g_interrupted;
static struct sigaction g_sigpipe; /* SIGPIPE's disposition as tracec record found it: its program's */

static void on_signal(int sig) {
    (void)sig;
    g_interrupted = 1;
}

static const char usage[] =
    "usage: tracec record -o OUT.pftrace [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       tracec record --attach -o OUT.pftrace [--duration 10s] [OPTIONS]\n"
    "       tracec record --list [--socket PATH]\n"
    "\nRuns PROGRAM with tracing on and records every provider (a program that writes\n"
    "track events, or registers with tracec/provider.h) that registers, until\n"
    "PROGRAM exits; --attach records the providers that\n"
    "connect to the well-known socket, until --duration passes or SIGINT (a\n"
    "track-event program connects when TRACEC_RECORDER_SOCKET=default).\n"
    "One Perfetto trace: each provider's packets on their own sequence, a\n"
    "summary per provider, a trace_stats packet. --list prints one line per\n"
    "provider: pid, name, state, categories= (declared) and enabled=.\n\n"
    "  -o, --output FILE      the trace to write\n"
    "  --mode M               streaming (default), oneshot or circular\n"
    "  --buffer-size N        each provider's shared buffer, bytes (k, m suffixes; default 1m)\n"
    "  --categories a,b       enabled categories (default: all); a provider that declared\n"
    "                         its categories gets only the enabled ones among them\n"
    "  --timeout MS           how long a provider may take to answer Start/Stop, and a\n"
    "                         connection to register (default 2000)\n"
    "  --wait MS              streaming: a provider whose other half is not saved yet waits up to\n"
    "                         MS before dropping (default 0: drops at once, the Fuchsia rule);\n"
    "                         each program caps it (max_wait_ms, 10 ms by default)\n"
    "  --duration D           --attach: how long to record (e.g. 500ms, 10s; default: until SIGINT)\n"
    "  --max-size N           the largest the trace may grow, bytes (k, m, g suffixes; at least 1m;\n"
    "                         default: no limit); later packets are counted lost\n"
    "  --clock C              the trace's clock, and every track event's: boottime (default),\n"
    "                         monotonic or realtime\n"
    "  --socket PATH          the socket (default /tmp/tracec-UID/recorder.sock; with a\n"
    "                         PROGRAM, a private directory of its own)\n";

/* The trace was written, but no program registered: it has no events. */
#define TRACEC_RECORD_EXIT_NO_PROVIDER 4

static int bad_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "tracec record: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tracec record --help'.\n");
    return 2;
}

/* Why execvp could not run `prog`, found as it would find it: ENOENT (not found), EACCES (found, not an
   executable file), or 0 (it may run; what execvp still refuses, run_program says). */
static int cannot_run(const char *prog) {
    struct stat sb;
    if (prog[0] == '\0') return ENOENT;
    if (strchr(prog, '/') != NULL) {
        if (stat(prog, &sb) != 0) return errno == ENOENT || errno == ENOTDIR ? ENOENT : 0;
        return S_ISDIR(sb.st_mode) || access(prog, X_OK) != 0 ? EACCES : 0;
    }
    const char *path = getenv("PATH");
    if (path == NULL) path = "/bin:/usr/bin"; /* execvp's default */
    int seen = ENOENT;
    for (const char *d = path;; d++) {
        const char *end = strchr(d, ':');
        size_t n = end ? (size_t)(end - d) : strlen(d);
        char cand[4096];
        if (snprintf(cand, sizeof cand, "%.*s%s%s", (int)n, d, n ? "/" : "", prog) < (int)sizeof cand &&
            stat(cand, &sb) == 0) {
            if (!S_ISDIR(sb.st_mode) && access(cand, X_OK) == 0) return 0;
            seen = EACCES;
        }
        if (end == NULL) break;
        d = end;
    }
    return seen;
}

static bool parse_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return false; /* strtoull would take a sign or leading spaces */
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return false;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10, end++;
    else if (*end == 'm' || *end == 'M') shift = 20, end++;
    else if (*end == 'g' || *end == 'G') shift = 30, end++;
    if (*end || v > (SIZE_MAX >> shift)) return false;
    *out = (size_t)v << shift;
    return true;
}

/* Digits with at most one '.', then ms, s or m, or no unit (`bare_ms` a unit of it: 1000 for seconds); from 1 ms
   to a year.  strtod alone would also take "nan", "inf", exponents, hex, signs and leading spaces. */
static bool parse_duration_ms(const char *s, double bare_ms, long *out) {
    size_t n = strspn(s, "0123456789."); /* strtod must end there: a second '.' ends it sooner */
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (n == 0 || errno || end != s + n) return false;
    double unit = strcmp(end, "ms") == 0 ? 1 : strcmp(end, "s") == 0 ? 1000 : strcmp(end, "m") == 0 ? 60000
                : *end == '\0'           ? bare_ms
                                         : 0;
    v *= unit;
    if (!(v >= 0.5 && v < 366.0 * 24 * 3600 * 1000 + 0.5)) return false; /* unit 0: refused here */
    *out = (long)(v + 0.5); /* to the nearest ms: 1.005s is 1005 ms, 600000.9 is over --timeout's 600000 */
    return true;
}

/*
 * Whether the trace can be created at `path`, asked before anything starts,
 * so that a wrong -o is named at once and not after the program ran; errno
 * says why not.  The recorder creates it (tracec_recorder_open).
 */
static bool output_ok(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            errno = EISDIR;
            return false;
        }
        return access(path, W_OK) == 0;
    }
    char *copy = strdup(path);
    if (copy == NULL) return true; /* the recorder will say */
    bool ok = access(dirname(copy), W_OK | X_OK) == 0;
    int e = errno;
    free(copy);
    errno = e;
    return ok;
}

/*
 * Runs argv[0] in a child with the recorder's socket in its environment;
 * the child's pid, or -1 when it could not be run, having said why on
 * stderr: *exec_errno is execvp's errno (a close-on-exec pipe brings it
 * back), or -1 when the pipe or the fork failed.
 */
static pid_t run_program(char **argv, bool restore, const struct rlimit *nofile, int *exec_errno) {
    int p[2];
    *exec_errno = 0;
    if (pipe2(p, O_CLOEXEC) != 0) {
        *exec_errno = -1;
        fprintf(stderr, "tracec record: cannot run %s: %s\n", argv[0], strerror(errno));
        return -1;
    }
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigaction(SIGPIPE, &g_sigpipe, NULL);
        if (restore) (void)setrlimit(RLIMIT_NOFILE, nofile);
        execvp(argv[0], argv);
        int e = errno;
        fprintf(stderr, "tracec record: cannot run %s: %s\n", argv[0], strerror(e));
        (void)!write(p[1], &e, sizeof e);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(p[1]);
    if (child < 0) {
        *exec_errno = -1;
        fprintf(stderr, "tracec record: fork: %s\n", strerror(errno));
        close(p[0]);
        return -1;
    }
    int e = 0;
    ssize_t n;
    while ((n = read(p[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(p[0]);
    if (n == (ssize_t)sizeof e) { /* the exec failed: the child exits at once */
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
        }
        *exec_errno = e ? e : EINVAL;
        return -1;
    }
    return child;
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Each provider's counts; then, when packets were lost, what lost them and what to change. */
static void report(tracec_recorder *r, const tracec_recorder_config *cfg) {
    tracec_recorder_provider_info in;
    unsigned long long produced = 0, dropped = 0, over = 0;
    bool faults = false; /* a provider that ended early, timed out or was corrupt lost packets of its own */
    for (size_t i = 0; tracec_recorder_provider(r, i, &in); i++) {
        fprintf(stderr,
                "tracec record: provider %s (pid %d, sequence %u): produced %llu, delivered %llu, dropped %llu%s%s%s%s\n",
                in.name, (int)in.pid, in.sequence_id, (unsigned long long)in.produced,
                (unsigned long long)in.delivered, (unsigned long long)in.dropped,
                in.ended_early ? ", ended early" : "",
                in.unstarted         ? ", ended before it was started"
                : in.no_buffer       ? ", not started: the recorder could not create its buffer"
                : in.refused_session ? ", refused the session"
                : in.started_late    ? ", started late (its first events are not in the trace)"
                                     : "",
                in.timed_out ? ", timed out" : "",
                in.corrupt ? ", corrupt buffer" : "");
        produced += in.produced;
        dropped += in.dropped;
        over += in.over_size;
        faults = faults || in.ended_early || in.timed_out || in.corrupt;
    }
    if (dropped == 0) return;
    if (tracec_recorder_trace_status(r) != TRACEC_STATUS_SUCCESS) { /* not the writers: the trace itself */
        fprintf(stderr, "tracec record: %llu of %llu packets lost: writing the trace failed (%s), and the recorder "
                        "saved nothing after it\n", dropped, produced, strerror(errno));
        return;
    }
    if (over > 0) {
        fprintf(stderr, "tracec record: %llu of %llu packets lost (counted in the trace's stats): %llu because the "
                        "trace reached --max-size %llu%s\n",
                dropped, produced, over, (unsigned long long)cfg->max_file_size,
                over < dropped ? "; the others are below" : "");
        if (over == dropped) return;
        dropped -= over;
    }
    const char *why;
    switch (cfg->mode) {
    case TRACEC_BUFFERING_MODE_ONESHOT:
        why = "the buffer filled and ONESHOT keeps the first packets; a larger --buffer-size, or --mode streaming, "
              "keeps more";
        break;
    case TRACEC_BUFFERING_MODE_CIRCULAR:
        why = "CIRCULAR overwrote the oldest packets, as it does; a larger --buffer-size keeps more";
        break;
    default:
        why = cfg->wait_ms > 0 ? "a writer waited the whole --wait for the recorder (or was refused a wait that "
                                 "would deadlock); a larger --wait or --buffer-size loses less"
                               : "the writers were faster than the recorder; --wait MS makes them wait for room "
                                 "instead, a larger --buffer-size absorbs bursts";
        break;
    }
    fprintf(stderr, "tracec record: %llu of %llu packets lost (counted in the trace's stats)%s: %s\n", dropped,
            produced, faults ? ", some with the providers above that ended early, timed out or were corrupt; "
                               "the others"
                             : "",
            why);
}

int tracec_cmd_record(int argc, char **argv) {
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    bool attach = false, list = false;
    long duration = -1;
    int prog = -1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            prog = i + 1;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(a, "--attach") == 0) {
            attach = true;
            continue;
        }
        if (strcmp(a, "--list") == 0) {
            list = true;
            continue;
        }
        bool takes = strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--mode") == 0 ||
                     strcmp(a, "--buffer-size") == 0 || strcmp(a, "--categories") == 0 ||
                     strcmp(a, "--timeout") == 0 || strcmp(a, "--wait") == 0 || strcmp(a, "--duration") == 0 ||
                     strcmp(a, "--socket") == 0 || strcmp(a, "--clock") == 0 ||
                     strcmp(a, "--max-size") == 0;
        if (!takes) return a[0] == '-' ? bad_usage("unknown option '%s'", a) : bad_usage("unexpected '%s' (put the program after --)", a);
        if (i + 1 >= argc) return bad_usage("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            cfg.output_path = v;
        } else if (strcmp(a, "--mode") == 0) {
            if (strcmp(v, "streaming") == 0) cfg.mode = TRACEC_BUFFERING_MODE_STREAMING;
            else if (strcmp(v, "oneshot") == 0) cfg.mode = TRACEC_BUFFERING_MODE_ONESHOT;
            else if (strcmp(v, "circular") == 0) cfg.mode = TRACEC_BUFFERING_MODE_CIRCULAR;
            else return bad_usage("unknown mode '%s' (streaming, oneshot, circular)", v);
        } else if (strcmp(a, "--buffer-size") == 0) {
            if (!parse_size(v, &cfg.buffer_size) || cfg.buffer_size < 8192 || cfg.buffer_size > (1u << 30))
                return bad_usage("bad --buffer-size '%s' (8k to 1g)", v);
        } else if (strcmp(a, "--categories") == 0) {
            if (!v[0]) return bad_usage("%s", "--categories '' names no category (leave it out to enable all)");
            cfg.categories = v;
        } else if (strcmp(a, "--timeout") == 0) {
            long t; /* a number without a unit is ms */
            if (!parse_duration_ms(v, 1, &t) || t > 600000) return bad_usage("bad --timeout '%s' (1 to 600000 ms; e.g. 2000, 2s)", v);
            cfg.timeout_ms = (int)t;
        } else if (strcmp(a, "--wait") == 0) {
            if (!v[0] || strspn(v, "0123456789") != strlen(v) || atol(v) > 10000)
                return bad_usage("bad --wait '%s' (0 to 10000 ms)", v);
            cfg.wait_ms = atoi(v);
        } else if (strcmp(a, "--max-size") == 0) {
            size_t m;
            if (!parse_size(v, &m) || m < TRACEC_RECORDER_MIN_FILE_SIZE)
                return bad_usage("bad --max-size '%s' (at least 1m; e.g. 512m, 2g)", v);
            cfg.max_file_size = m;
        } else if (strcmp(a, "--duration") == 0) {
            if (!parse_duration_ms(v, 1000, &duration)) return bad_usage("bad --duration '%s' (1ms to a year; e.g. 500ms, 10s)", v);
        } else if (strcmp(a, "--clock") == 0) { /* BuiltinClock ids */
            if (strcmp(v, "boottime") == 0) cfg.clock_id = 6;
            else if (strcmp(v, "monotonic") == 0) cfg.clock_id = 3;
            else if (strcmp(v, "realtime") == 0) cfg.clock_id = 1;
            else return bad_usage("unknown clock '%s' (boottime, monotonic, realtime)", v);
        } else {
            cfg.socket_path = v;
        }
    }
    if (list) {
        if (tracec_recorder_list(cfg.socket_path, stdout) != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "tracec record: no recorder is listening on %s\n",
                    cfg.socket_path ? cfg.socket_path : "the well-known socket");
            return 1;
        }
        return 0;
    }
    if (cfg.output_path == NULL) return bad_usage("%s", "-o OUT.pftrace is required");
    if (strcmp(cfg.output_path, "-") == 0)
        return bad_usage("%s", "-o - is not supported: the program's own output goes there; give a file");
    if (!attach && (prog < 0 || prog >= argc)) return bad_usage("%s", "give a program after -- (or --attach)");
    if (attach && prog >= 0) return bad_usage("%s", "--attach takes no program");
    if (!attach && duration >= 0)
        return bad_usage("%s", "--duration is for --attach (with a program, recording ends when it exits)");
    if (cfg.wait_ms > 0 && cfg.mode != TRACEC_BUFFERING_MODE_STREAMING)
        return bad_usage("%s", "--wait is for --mode streaming (oneshot and circular never wait)");
    int cannot = attach ? 0 : cannot_run(argv[prog]);
    if (cannot != 0) { /* before -o is touched: a mistyped program leaves an older trace of that name alone */
        fprintf(stderr, "tracec record: cannot run %s: %s\n", argv[prog], strerror(cannot));
        return cannot == ENOENT ? 127 : 126;
    }
    if (!output_ok(cfg.output_path)) {
        fprintf(stderr, "tracec record: cannot create %s: %s\n", cfg.output_path, strerror(errno));
        return 1;
    }

    char dir[64] = "";
    char sock[128];
    if (!attach && cfg.socket_path == NULL) {
        snprintf(dir, sizeof dir, "/tmp/tracec-rec-XXXXXX");
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, "tracec record: cannot create a private directory: %s\n", strerror(errno));
            return 1;
        }
        snprintf(sock, sizeof sock, "%s/recorder.sock", dir);
        cfg.socket_path = sock;
    }
    /* Each provider holds 3 of the recorder's fds: the soft limit goes up to the hard one (the program
       run under it gets the usual limit back), so more providers fit before "cannot create its buffer". */
    struct rlimit nofile, saved_nofile;
    bool raised = false;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        saved_nofile = nofile;
        nofile.rlim_cur = nofile.rlim_max;
        raised = setrlimit(RLIMIT_NOFILE, &nofile) == 0;
    }
    tracec_recorder *r;
    tracec_status_t st = tracec_recorder_open(&cfg, &r);
    if (st != TRACEC_STATUS_SUCCESS) {
        if (st == TRACEC_STATUS_BAD_STATE)
            fprintf(stderr, "tracec record: another recorder is already listening on %s\n",
                    cfg.socket_path ? cfg.socket_path : "the well-known socket");
        else if (st == TRACEC_STATUS_INVALID_ARGUMENT && cfg.categories) { /* the options checked above are fine */
            if (dir[0]) rmdir(dir);
            return bad_usage("bad --categories '%s' (1 to 100 comma-separated names of 1 to 100 chars, no spaces)",
                             cfg.categories);
        } else if (st == TRACEC_STATUS_IO_ERROR && errno == EBUSY)
            fprintf(stderr, "tracec record: %s is being written by another trace writer (a program's own session?): "
                            "give -o another file\n", cfg.output_path);
        else
            fprintf(stderr, "tracec record: cannot start: %s (%s)\n", tracec_status_str(st), strerror(errno));
        if (dir[0]) rmdir(dir);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* -o a pipe or FIFO whose reader goes away: a write error said at the close, not a silent death that leaves the
       socket's directory behind; the program gets the disposition tracec record was started with */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &g_sigpipe);
    st = tracec_recorder_start(r);
    if (st != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "tracec record: cannot start tracing: %s\n", tracec_status_str(st));
        (void)tracec_recorder_close(r);
        if (dir[0]) rmdir(dir);
        return 1;
    }
    int rc = 0;
    if (!attach) {
        setenv(TRACEC_RECORDER_SOCKET_ENV, tracec_recorder_socket_path(r), 1);
        int exec_errno;
        pid_t child = run_program(argv + prog, raised, &saved_nofile, &exec_errno);
        if (child < 0) { /* nothing ran: no trace is left behind (a regular file only: -o may be a device) */
            (void)tracec_recorder_close(r);
            if (dir[0]) rmdir(dir);
            struct stat sb;
            if (stat(cfg.output_path, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(cfg.output_path);
            return exec_errno < 0 ? 1 : exec_errno == ENOENT ? 127 : 126;
        }
        int status = 0;
        while (child > 0) {
            tracec_recorder_poll(r, 20);
            pid_t w = waitpid(child, &status, WNOHANG);
            if (w == child) break;
            if (g_interrupted) kill(child, SIGTERM), g_interrupted = 0;
        }
        /* the program's sockets are closed now: take in what they said last */
        long end = now_ms() + 100;
        while (now_ms() < end) tracec_recorder_poll(r, 10);
        if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            fprintf(stderr, "tracec record: %s exited with status %d\n", argv[prog], WEXITSTATUS(status));
            rc = WEXITSTATUS(status);
        } else if (child > 0 && WIFSIGNALED(status)) {
            fprintf(stderr, "tracec record: %s was killed by signal %d\n", argv[prog], WTERMSIG(status));
            rc = 128 + WTERMSIG(status);
        }
    } else {
        long end = duration >= 0 ? now_ms() + duration : -1;
        while (!g_interrupted && (end < 0 || now_ms() < end)) tracec_recorder_poll(r, 20);
    }
    tracec_recorder_stop(r);
    report(r, &cfg);
    size_t providers = tracec_recorder_provider_count(r), never = 0;
    tracec_recorder_provider_info in;
    for (size_t i = 0; tracec_recorder_provider(r, i, &in); i++)
        never += in.unstarted || in.no_buffer || in.refused_session;
    st = tracec_recorder_close(r);
    if (dir[0]) rmdir(dir);
    if (st != TRACEC_STATUS_SUCCESS) {
        int e = errno;
        if (st == TRACEC_STATUS_IO_ERROR && e != 0)
            fprintf(stderr, "tracec record: writing %s failed: %s\n", cfg.output_path, strerror(e));
        else
            fprintf(stderr, "tracec record: writing %s failed: %s\n", cfg.output_path, tracec_status_str(st));
        return 1;
    }
    if (providers == 0) {
        if (attach)
            fprintf(stderr, "tracec record: no provider registered: no program connected to %s while recording "
                            "(%s has no events)\n", cfg.socket_path ? cfg.socket_path : "the well-known socket",
                    cfg.output_path);
        else
            fprintf(stderr, "tracec record: no provider registered: is %s linked with libtracec and does it write "
                            "events? (%s has no events)\n", argv[prog], cfg.output_path);
        if (rc == 0) rc = TRACEC_RECORD_EXIT_NO_PROVIDER;
    } else if (never == providers) {
        fprintf(stderr, "tracec record: none of the %zu providers was started (the lines above say why), so %s has "
                        "no events\n", providers, cfg.output_path);
        if (rc == 0) rc = TRACEC_RECORD_EXIT_NO_PROVIDER;
    }
    return rc;
}
