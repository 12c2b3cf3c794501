/*
 * test_recorder.c - `tracec record` with real processes: two providers into
 * one trace (checked with python3-protobuf and Perfetto's trace processor),
 * the buffering modes, and faults: a provider killed
 * mid-trace, the recorder killed, a provider that never answers, one that
 * scribbles over its buffer, two recorders, a provider registered before
 * the recorder; losses marked on the provider's sequence
 * (previous_packet_dropped, read with python3-protobuf by
 * check_loss_marks.py).  Programs: record_provider (this folder) and
 * `tracec`.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_util.h"
#include "test_util.h"
#include "tracec/recorder.h"

#define TRACEC TRACEC_BINARY_DIR "/tools/tracec/tracec"
#define PROV TRACEC_BINARY_DIR "/tests/record/record_provider"
#define TP tt_trace_processor()

static char g_dir[64];

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-rectest-XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    (void)system(cmd);
}

/* Runs `cmd` with sh; returns its exit status and its stdout+stderr in a malloc'd string. */
static int run(const char *cmd, char **out) {
    char *full;
    cr_assert(asprintf(&full, "( %s ) 2>&1", cmd) > 0);
    tt_buf b = {0};
    int st = tt_capture(full, &b);
    cr_assert_neq(st, -1, "cannot run: %s", full);
    free(full);
    if (out)
        *out = b.data;
    else
        tt_buf_free(&b);
    return st;
}

/* The python3-protobuf view of a trace (check_trace.py). */
static char *py_view(const char *trace) {
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=%s/trace.desc -I %s/protos perfetto/trace/trace.proto && "
             "%s %s/tests/record/check_trace.py %s/trace.desc %s",
             TRACEC_PROTOC, g_dir, TRACEC_SOURCE_DIR, TRACEC_PYTHON3, TRACEC_SOURCE_DIR, g_dir, trace);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "check_trace.py failed:\n%s", out);
    return out;
}

typedef struct summary {
    long produced, dropped, delivered, ended_early, timed_out, corrupt, seq;
    int found;
} summary;

static summary find_summary(const char *view, const char *name) {
    summary s;
    memset(&s, 0, sizeof s);
    char key[128];
    snprintf(key, sizeof key, "summary name=%s ", name);
    const char *p = strstr(view, key);
    if (p == NULL) return s;
    s.found = sscanf(p + strlen(key), "produced=%ld dropped=%ld delivered=%ld ended_early=%ld timed_out=%ld corrupt=%ld seq=%ld",
                     &s.produced, &s.dropped, &s.delivered, &s.ended_early, &s.timed_out, &s.corrupt, &s.seq) == 7;
    return s;
}

/* Packets the trace holds on sequence `seq` and on every other sequence of the same process (each of its
   writing threads has one), per python3-protobuf; -1 when `seq` has none. */
static long seq_packets(const char *view, long seq) {
    char key[64];
    snprintf(key, sizeof key, "seq=%ld packets=", seq);
    const char *p = strstr(view, key);
    if (p == NULL) return -1;
    long pid = -1, total = 0, n, q, ev, pp;
    const char *at = strstr(p, " pid=");
    if (at == NULL || sscanf(at, " pid=%ld", &pid) != 1) return -1;
    for (const char *l = view; (l = strstr(l, "seq=")) != NULL; l++) {
        if (l != view && l[-1] != '\n') continue; /* a line that starts with seq= */
        if (sscanf(l, "seq=%ld packets=%ld events=%ld pid=%ld", &q, &n, &ev, &pp) == 4 && pp == pid) total += n;
    }
    return total;
}

/* Waits (up to 5 s) until a recorder listens on `sock`: the socket file appears at bind(), before
   listen(), and a connect() in between is refused (a second recorder would take it for a stale one). */
static void wait_listening(const char *sock) {
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    for (int i = 0; i < 500; i++) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        bool up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (fd >= 0) close(fd);
        if (up) return;
        usleep(10000);
    }
    cr_assert_fail("no recorder listening on %s", sock);
}

/* Skips the test (a ctest skip) where the trace processor is absent. */
static void need_tp(void) {
    if (TP == NULL) tt_skip_without_trace_processor();
}

/* Runs a query file through the trace processor; returns its CSV (skips the test where it is absent). */
static char *tp_query(const char *trace, const char *sql) {
    need_tp();
    char path[128], cmd[1024], *out;
    snprintf(path, sizeof path, "%s/q.sql", g_dir);
    FILE *f = fopen(path, "w");
    fputs(sql, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s -q %s 2>/dev/null", TP, trace, path);
    cr_assert_eq(run(cmd, &out), 0, "trace processor failed:\n%s", out);
    return out;
}

TestSuite(record, .init = setup, .fini = teardown, .timeout = 60);

Test(record, two_providers_one_trace) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/two.pftrace", g_dir);
    /* 256 KiB: halves are saved while the programs run (small buffers drop: streaming_small_buffer) */
    snprintf(cmd, sizeof cmd,
             "%s record -o %s --buffer-size 256k -- sh -c '%s normal alpha 400 2 & %s normal beta 600 1; wait'",
             TRACEC, trace, PROV, PROV);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char *view = py_view(trace);
    const char *names[] = {"alpha", "beta"};
    /* events + thread descriptors + process descriptor (a dropped thread descriptor is retried: more) */
    long produced_by_prog[] = {2 * 400 * 3 + 3, 600 * 3 + 2};
    for (int i = 0; i < 2; i++) {
        summary s = find_summary(view, names[i]);
        cr_assert(s.found, "no summary for %s:\n%s", names[i], view);
        cr_expect_eq(s.delivered + s.dropped, s.produced, "%s: delivered %ld + dropped %ld != produced %ld", names[i],
                     s.delivered, s.dropped, s.produced);
        cr_expect_geq(s.produced, produced_by_prog[i], "%s produced %ld", names[i], s.produced);
        if (s.dropped == 0) cr_expect_eq(s.produced, produced_by_prog[i], "%s produced %ld", names[i], s.produced);
        cr_expect_eq(seq_packets(view, s.seq), s.delivered, "%s: %ld packets on its sequence, %ld delivered",
                     names[i], seq_packets(view, s.seq), s.delivered);
        cr_expect_eq(s.ended_early + s.timed_out + s.corrupt, 0);
    }
    free(view);
    snprintf(cmd, sizeof cmd, "%s decode %s > /dev/null", TRACEC, trace);
    cr_assert_eq(run(cmd, &out), 0, "tracec decode: %s", out);
    free(out);
    need_tp();
    char *stats = tp_query(trace, "select name, idx, severity, value from stats where value > 0 and "
                                  "(severity = 'error' or name like 'traced_buf_chunks_discarded');\n");
    cr_expect_null(strstr(stats, "\"error\""), "error stats:\n%s", stats);
    char *threads = tp_query(trace, "select t.upid, count(distinct t.tid) as threads, count(s.id) as slices from slice s "
                                    "join thread_track tt on s.track_id = tt.id join thread t using(utid) "
                                    "group by t.upid order by threads;\n");
    int a1, a2, b1, b2;
    long sa, sb;
    const char *row = strchr(threads, '\n');
    cr_assert(row && sscanf(row + 1, "%d,%d,%ld\n%d,%d,%ld", &a1, &b1, &sa, &a2, &b2, &sb) == 6, "%s", threads);
    cr_expect_eq(b1, 1, "%s", threads);
    cr_expect_eq(b2, 2, "%s", threads);
    cr_expect(sa > 0 && sb > 0, "%s", threads);
    free(stats);
    free(threads);
}

Test(record, provider_killed_mid_trace) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/die.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- sh -c '%s die victim 200 1 & %s normal bystander 200 1; wait'",
             TRACEC, trace, PROV, PROV);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "provider victim"), "%s", out);
    cr_expect_not_null(strstr(out, "ended early"), "%s", out);
    free(out);
    char *view = py_view(trace);
    summary v = find_summary(view, "victim"), b = find_summary(view, "bystander");
    cr_assert(v.found && b.found, "%s", view);
    cr_expect_eq(v.ended_early, 1);
    cr_expect_eq(b.ended_early, 0);
    /* its finished packets were still in the shared buffer: all of them are saved */
    cr_expect_eq(v.delivered + v.dropped, v.produced);
    cr_expect_eq(b.delivered + b.dropped, b.produced);
    cr_expect_eq(seq_packets(view, v.seq), v.delivered);
    free(view);
}

/*
 * `tracec record MODE -- record_provider ARGS` where the provider is killed with a packet begun and not
 * ended: the packet is counted lost (dropped 1), every other one saved (on its sequence), and the trace
 * processor shows the loss at severity data_loss, with no error stat.  The provider's summary.
 */
static summary killed_inside_a_packet(const char *file, const char *mode, const char *args) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/%s", g_dir, file);
    snprintf(cmd, sizeof cmd, "%s record -o %s %s -- %s %s", TRACEC, trace, mode, PROV, args);
    cr_assert_eq(run(cmd, &out), 128 + 9, "%s", out);
    cr_expect(strstr(out, "packets lost (counted in the trace's stats), some with the providers above that ended "
                          "early") != NULL,
              "tracec record puts the loss with the provider that ended early:\n%s", out);
    free(out);
    char *view = py_view(trace);
    summary v = find_summary(view, "victim");
    cr_assert(v.found, "%s", view);
    cr_expect_eq(v.ended_early, 1);
    cr_expect_eq(v.dropped, 1, "the packet it was writing:\n%s", view);
    cr_expect_eq(v.delivered + v.dropped, v.produced, "%s", view);
    cr_expect_eq(seq_packets(view, v.seq), v.delivered, "%s", view);
    free(view);
    need_tp();
    char *stats = tp_query(trace, "select name, severity, value from stats where severity in ('error', 'data_loss') "
                                  "and value > 0;\n");
    cr_expect_not_null(strstr(stats, "\"traced_buf_trace_writer_packet_loss\",\"data_loss\",1"), "%s", stats);
    cr_expect_null(strstr(stats, "\"error\""), "error stats:\n%s", stats);
    free(stats);
    return v;
}

/* A packet begun in a chunk of a half: its record header marked open. */
Test(record, provider_killed_inside_a_packet_counts_it_lost) {
    (void)killed_inside_a_packet("die_open.pftrace", "", "die_open victim 200 1");
}

/* A durable packet (a descriptor): its header marked open at the durable part's end; the one before it saved. */
Test(record, provider_killed_inside_a_durable_packet_counts_it_lost) {
    summary v = killed_inside_a_packet("durable_open.pftrace", "--mode circular", "durable_open victim");
    cr_expect_eq(v.delivered, 1, "its finished durable packet");
}

Test(record, recorder_killed_provider_goes_on) {
    char sock[128], trace[128], cmd[1024], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/killed.pftrace", g_dir);
    pid_t rec = fork();
    if (rec == 0) {
        execl(TRACEC, "tracec", "record", "--attach", "--socket", sock, "-o", trace, "--duration", "20s", (char *)NULL);
        _exit(127);
    }
    wait_listening(sock);
    pid_t killer = fork();
    if (killer == 0) {
        usleep(1000000); /* the provider has registered by then, also under a sanitizer on a loaded machine */
        kill(rec, SIGKILL);
        _exit(0);
    }
    snprintf(cmd, sizeof cmd, "TRACEC_RECORDER_SOCKET=%s %s survive survivor 1600", sock, PROV);
    int rc = run(cmd, &out);
    waitpid(killer, NULL, 0);
    waitpid(rec, NULL, 0);
    cr_assert_eq(rc, 0, "%s", out);
    long produced, dropped, lost, loops, untraced;
    cr_assert_eq(sscanf(out, "produced %ld dropped %ld lost %ld\nloops %ld untraced %ld", &produced, &dropped, &lost,
                        &loops, &untraced),
                 5, "%s", out);
    cr_expect_eq(lost, 1, "the provider did not see the recorder go: %s", out);
    cr_expect(untraced > 0, "the program stopped writing after the recorder died: %s", out);
    free(out);
}

Test(record, provider_that_never_answers) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/mute.pftrace", g_dir);
    snprintf(cmd, sizeof cmd,
             "%s record -o %s --timeout 300 -- sh -c '%s mute silent & %s normal talker 100 1; sleep 0.5; kill $!; wait'",
             TRACEC, trace, PROV, PROV);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "silent"), "%s", out);
    cr_expect_not_null(strstr(out, "did not answer Start"), "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "silent"), t = find_summary(view, "talker");
    cr_assert(s.found && t.found, "%s", view);
    cr_expect_eq(s.timed_out, 1);
    cr_expect_eq(t.delivered, t.produced);
    free(view);
}

/*
 * A provider ("vandal", record_provider scribble VARIANT) writes one good record then garbage into its
 * buffer (VARIANT "": a half, with bad region words; "durable": its durable part, of CIRCULAR) beside an honest one: the
 * recorder keeps the good record, drops the rest with `message`, and the honest provider is whole.
 */
static void scribble_case(const char *file, const char *mode, const char *variant, const char *message) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/%s", g_dir, file);
    snprintf(cmd, sizeof cmd,
             "%s record -o %s --mode %s -- sh -c '%s scribble vandal %s & %s normal honest 100 1; wait'", TRACEC,
             trace, mode, PROV, variant, PROV);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "vandal"), "%s", out);
    cr_expect_null(strstr(out, "could be shrunk"), "%s", out);
    cr_expect_not_null(strstr(out, message), "want '%s' in %s", message, out);
    free(out);
    char *view = py_view(trace);
    summary v = find_summary(view, "vandal"), h = find_summary(view, "honest");
    cr_assert(v.found && h.found, "%s", view);
    cr_expect_eq(v.delivered, 1, "the one good record before the garbage");
    cr_expect(v.corrupt >= 1);
    cr_expect_eq(h.delivered, h.produced);
    cr_expect_eq(h.corrupt, 0);
    free(view);
}

Test(record, scribbled_buffer_is_dropped_not_fatal) {
    scribble_case("scribble.pftrace", "streaming", "", "corrupt");
}

/* The durable area is as hostile as the halves. */
Test(record, scribbled_durable_area_is_dropped_not_fatal) {
    scribble_case("scribble-durable.pftrace", "circular", "durable", "corrupt record at byte 24 of the durable part");
}

Test(record, two_recorders) {
    char sock[128], trace[128], cmd[1024], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/first.pftrace", g_dir);
    pid_t rec = fork();
    if (rec == 0) {
        execl(TRACEC, "tracec", "record", "--attach", "--socket", sock, "-o", trace, "--duration", "2s", (char *)NULL);
        _exit(127);
    }
    wait_listening(sock);
    snprintf(cmd, sizeof cmd, "%s record --attach --socket %s -o %s/second.pftrace --duration 100ms", TRACEC, sock,
             g_dir);
    int rc = run(cmd, &out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect_not_null(strstr(out, "another recorder"), "%s", out);
    free(out);
    kill(rec, SIGINT);
    int st;
    waitpid(rec, &st, 0);
    /* No program connected to it: the trace is written, with status 4 (no provider registered). */
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 4, "the first recorder, interrupted, exits 4");
}

/* Recorders opened at the same instant on one socket: exactly one wins, every other says BAD_STATE (a probe of
 * the socket alone let two win when one probed between the other's bind and listen). */
typedef struct {
    const char *sock;
    pthread_barrier_t *go;
    tracec_status_t st;
    tracec_recorder *r;
    FILE *log;
} race_arg;

static void *race_open(void *p) {
    race_arg *a = p;
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = a->sock;
    a->log = fopen("/dev/null", "w");
    cfg.log = a->log;
    pthread_barrier_wait(a->go);
    a->st = tracec_recorder_open(&cfg, &a->r);
    return NULL;
}

Test(record, recorders_racing_for_one_socket) {
    enum { N = 6, ROUNDS = 30 };
    char sock[128];
    snprintf(sock, sizeof sock, "%s/race.sock", g_dir);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, N);
        race_arg a[N];
        pthread_t t[N];
        for (int i = 0; i < N; i++) {
            a[i] = (race_arg){sock, &go, TRACEC_STATUS_SUCCESS, NULL, NULL};
            pthread_create(&t[i], NULL, race_open, &a[i]);
        }
        int won = 0;
        for (int i = 0; i < N; i++) pthread_join(t[i], NULL); /* all tried before the winner closes */
        for (int i = 0; i < N; i++) {
            if (a[i].st == TRACEC_STATUS_SUCCESS) {
                won++;
                cr_expect_eq(tracec_recorder_close(a[i].r), TRACEC_STATUS_SUCCESS);
            } else {
                cr_expect_eq(a[i].st, TRACEC_STATUS_BAD_STATE, "round %d: %s", round, tracec_status_str(a[i].st));
            }
            if (a[i].log) fclose(a[i].log);
        }
        pthread_barrier_destroy(&go);
        cr_assert_eq(won, 1, "round %d: %d recorders opened one socket", round, won);
    }
}

Test(record, provider_registered_before_the_recorder) {
    char sock[128], trace[128], cmd[1024], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/late.pftrace", g_dir);
    /* the provider starts first: RegisterProviderSynchronously says not started; it connects later */
    snprintf(cmd, sizeof cmd,
             "TRACEC_RECORDER_SOCKET=%s %s late early-bird 50 > %s/prov.out & sleep 0.3; "
             "%s record --attach --socket %s -o %s --duration 1500ms; wait; cat %s/prov.out",
             sock, PROV, g_dir, TRACEC, sock, trace, g_dir);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "started=0"), "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "early-bird");
    cr_assert(s.found, "%s", view);
    cr_expect_eq(s.produced, 50 * 3 + 2);
    cr_expect_eq(s.delivered, s.produced);
    free(view);
}

/*
 * Only the recorder's user (and root) may connect.  The socket lives in a
 * private directory (mode 0700, socket 0600), so another user is refused
 * at connect(); and where the modes were loosened by mistake, SO_PEERCRED
 * still refuses the connection before anything is read from it.  The other
 * user is uid 65534 (nobody), through setpriv; a plain connect from python3
 * stands in for a provider (no binary of the build needs to be readable
 * by that user).
 */
static const char k_peer_py[] =
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
    "try:\n"
    "    s.connect(sys.argv[1])\n"
    "    s.settimeout(5)\n"
    "    print(sys.argv[2], 'eof' if s.recv(64) == b'' else 'data')\n"
    "except OSError as e:\n"
    "    print(sys.argv[2], 'refused', e.errno)\n";

Test(record, other_users_cannot_connect) {
    if (geteuid() != 0 || system("command -v setpriv > /dev/null 2>&1") != 0)
        cr_skip_test("needs root and setpriv (util-linux) to connect as another user");
    char dir[96], cmd[2048], *out;
    snprintf(dir, sizeof dir, "%s/priv", g_dir);
    const char *as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c";
    snprintf(cmd, sizeof cmd,
             "%s record --attach --socket %s/r.sock -o %s/peer.pftrace --duration 3000ms & "
             "for i in $(seq 200); do [ -S %s/r.sock ] && break; sleep 0.05; done; "
             "%s \"$PEER_PY\" %s/r.sock private; "
             "chmod 755 %s %s && chmod 666 %s/r.sock && %s \"$PEER_PY\" %s/r.sock loosened; wait",
             TRACEC, dir, g_dir, dir, as_nobody, dir, g_dir, dir, dir, as_nobody, dir);
    cr_assert_eq(setenv("PEER_PY", k_peer_py, 1), 0);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "private refused 13"), "connect() as another user:\n%s", out);
    cr_expect_not_null(strstr(out, "loosened eof"), "the recorder closes the connection:\n%s", out);
    cr_expect_not_null(strstr(out, "refused a connection from uid 65534"), "and says so:\n%s", out);
    free(out);
}

/* register_sync under a recorder that is tracing says "started" only once this provider has handled its
   Initialize and Start, so an event written right after it is recorded (it was refused in 6 runs of 10). */
Test(record, register_sync_started_means_the_first_event_is_written) {
    char trace[128], cmd[1024], *out;
    snprintf(trace, sizeof trace, "%s/eager.pftrace", g_dir);
    for (int round = 0; round < 8; round++) {
        snprintf(cmd, sizeof cmd, "%s record -o %s -- %s eager eager", TRACEC, trace, PROV);
        int rc = run(cmd, &out);
        cr_assert_eq(rc, 0, "%s", out);
        cr_assert_not_null(strstr(out, "started=1 first=0"), "round %d: %s", round, out);
        free(out);
        char *view = py_view(trace);
        summary s = find_summary(view, "eager");
        cr_assert(s.found, "%s", view);
        cr_assert_eq(s.delivered, s.produced, "round %d:\n%s", round, view);
        cr_assert_geq(s.delivered, 1, "round %d:\n%s", round, view);
        free(view);
    }
}

/* Categories a provider declares at registration: --list shows them, --categories picks among them. */
Test(record, list_shows_providers_and_their_categories) {
    char sock[128], cmd[2048], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(cmd, sizeof cmd,
             "%s record --attach --socket %s -o %s/c.pftrace --categories gfx,io --duration 1500ms & sleep 0.3; "
             "export TRACEC_RECORDER_SOCKET=%s; %s survive lister 900 > /dev/null & "
             "%s cats painter gfx,net,audio gfx,net,audio,io 900 > %s/painter.out & "
             "%s cats mixer audio audio,gfx 900 > %s/mixer.out & sleep 0.5; "
             "%s record --list --socket %s; wait; cat %s/painter.out %s/mixer.out",
             TRACEC, sock, g_dir, sock, PROV, PROV, g_dir, PROV, g_dir, TRACEC, sock, g_dir, g_dir);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    /* it declared no categories: it gets the recorder's */
    cr_expect_not_null(strstr(out, "\tlister\tstarted\tcategories=-\tenabled=gfx,io\n"), "%s", out);
    cr_expect_not_null(strstr(out, "\tpainter\tstarted\tcategories=gfx,net,audio\tenabled=gfx\n"), "%s", out);
    cr_expect_not_null(strstr(out, "\tmixer\tstarted\tcategories=audio\tenabled=-\n"), "%s", out);
    /* a provider gets only the enabled ones of its categories */
    cr_expect_not_null(strstr(out, "enabled gfx=1 net=0 audio=0 io=0\n"), "%s", out);
    cr_expect_not_null(strstr(out, "enabled audio=0 gfx=0\n"), "%s", out);
    free(out);
    /* without --categories a provider gets all it declared, and nothing else */
    snprintf(cmd, sizeof cmd,
             "%s record -o %s/all.pftrace -- %s cats painter gfx,net gfx,net,io 10 && echo ok", TRACEC, g_dir, PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "enabled gfx=1 net=1 io=0\n"), "%s", out);
    free(out);
    cr_expect_eq(run(TRACEC " record --list --socket /nonexistent/x.sock", NULL), 1);
}

/* Bad registrations are refused by the library (clear status), not sent. */
Test(record, provider_categories_validated) {
    char *out;
    cr_expect_eq(run(PROV " cats bad 'a,,b' a 10", &out), 3, "%s", out);
    free(out);
    cr_expect_eq(run(PROV " cats bad 'a b' a 10", &out), 3, "%s", out);
    free(out);
    cr_expect_eq(run(PROV " cats bad 'a,' a 10", &out), 3, "%s", out);
    free(out);
}

/*
 * A provider that blocks in Stop, still writing when the recorder gives up
 * on it: the recorder saves only whole records the provider had committed,
 * and never calls a slow-but-honest provider's buffer corrupt.
 */
Test(record, provider_blocking_in_stop_is_salvaged_not_corrupt) {
    char sock[128], trace[128], cmd[1024], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/stall.pftrace", g_dir);
    long salvaged = 0;
    /* The race a torn copy needs is hit in about 1 run of 4; a round may also save nothing (every half caught
       being rewritten), so rounds go on, up to 12, until something committed was saved. */
    for (int round = 0; round < 12 && (round < 4 || salvaged == 0); round++) {
        snprintf(cmd, sizeof cmd,
                 "%s record --attach --socket %s -o %s --mode circular --buffer-size 64k --timeout 200 "
                 "--duration 700ms & sleep 0.3; TRACEC_RECORDER_SOCKET=%s %s stall slowpoke 1500; wait",
                 TRACEC, sock, trace, sock, PROV);
        int rc = run(cmd, &out);
        cr_assert_eq(rc, 0, "%s", out);
        cr_expect_not_null(strstr(out, "stop received"), "%s", out);
        cr_expect_not_null(strstr(out, "did not answer Stop"), "%s", out);
        cr_expect_null(strstr(out, "corrupt"), "round %d: %s", round, out);
        free(out);
        char *view = py_view(trace);
        summary st = find_summary(view, "slowpoke");
        cr_assert(st.found, "%s", view);
        cr_expect_eq(st.timed_out, 1);
        cr_expect_eq(st.corrupt, 0, "round %d:\n%s", round, view);
        /* a half caught being rewritten holds nothing committed: a round may save nothing */
        cr_expect_eq(seq_packets(view, st.seq), st.delivered ? st.delivered : -1);
        salvaged += st.delivered;
        free(view);
    }
    cr_expect_gt(salvaged, 0, "its committed records are saved");
}

static summary mode_case(const char *mode, bool expect_drops) {
    char cmd[1024], trace[128], *out;
    const char *wait = strcmp(mode, "lossless") == 0 ? "--wait 10000" : "";
    if (wait[0]) mode = "streaming";
    snprintf(trace, sizeof trace, "%s/%s%s.pftrace", g_dir, mode, wait[0] ? "-wait" : "");
    /* the program lets the recorder's wait through (its own cap: max_wait_ms) */
    snprintf(cmd, sizeof cmd, "RECORD_PROVIDER_MAX_WAIT=%s %s record -o %s --mode %s --buffer-size 16k %s -- %s normal m 2000 1",
             wait[0] ? "10000" : "0", TRACEC, trace, mode, wait, PROV);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "m");
    cr_assert(s.found, "%s", view);
    /* every packet once, the descriptors too, when nothing is lost; after a loss the END of a BEGIN not in
       the trace is not written, nor an instant inside it (and an owed END may be tried again, in a BEGIN's
       place): each iteration begins at least one packet. docs/record.md, "Nesting after losses" */
    if (s.dropped == 0)
        cr_expect_eq(s.produced, 2000 * 3 + 2);
    else
        cr_expect(s.produced >= 2000 && s.produced <= 2000 * 3 + 2 + s.dropped, "%s: produced %ld", mode, s.produced);
    cr_expect_eq(s.delivered + s.dropped, s.produced, "%s: %ld + %ld != %ld", mode, s.delivered, s.dropped, s.produced);
    cr_expect_eq(seq_packets(view, s.seq), s.delivered);
    if (expect_drops) cr_expect(s.dropped > 0, "%s: a 16k buffer cannot hold 6000 packets", mode);
    free(view);
    need_tp();
    /* the trace processor shows the drops in its stats table, and no error */
    char *stats = tp_query(trace, "select name, severity, value from stats where name = 'traced_buf_chunks_discarded' "
                                  "or (severity in ('error', 'data_loss') and value > 0);\n");
    cr_expect_null(strstr(stats, "\"error\""), "error stats:\n%s", stats);
    if (s.dropped > 0) {
        char want[96];
        snprintf(want, sizeof want, "\"traced_buf_chunks_discarded\",\"info\",%ld", s.dropped);
        cr_expect_not_null(strstr(stats, want), "%s: want %s in\n%s", mode, want, stats);
        /* a loss shows at severity data_loss, where users look for it */
        snprintf(want, sizeof want, "\"traced_buf_trace_writer_packet_loss\",\"data_loss\",%ld", s.dropped);
        cr_expect_not_null(strstr(stats, want), "%s: want %s in\n%s", mode, want, stats);
    } else {
        cr_expect_null(strstr(stats, "\"data_loss\""), "%s: nothing lost, yet\n%s", mode, stats);
    }
    free(stats);
    return s;
}

Test(record, oneshot_keeps_the_first_packets) { mode_case("oneshot", true); }
Test(record, streaming_small_buffer) { mode_case("streaming", false); }

/* --wait: the writer waits for the recorder to save a half instead of dropping */
Test(record, streaming_wait_drops_nothing) {
    summary s = mode_case("lossless", false);
    cr_expect_eq(s.dropped, 0);
    cr_expect_eq(s.delivered, s.produced);
}
Test(record, circular_keeps_the_last_packets) { mode_case("circular", true); }

Test(record, usage_errors) {
    char *out;
    cr_expect_eq(run(TRACEC " record -- true", &out), 2);
    cr_expect_not_null(strstr(out, "-o OUT.pftrace is required"), "%s", out);
    free(out);
    cr_expect_eq(run(TRACEC " record -o /dev/null --mode fast -- true", &out), 2);
    cr_expect_not_null(strstr(out, "unknown mode"), "%s", out);
    free(out);
    cr_expect_eq(run(TRACEC " record -o /dev/null --buffer-size 12q -- true", NULL), 2);
    cr_expect_eq(run(TRACEC " record -o /dev/null --clock tai -- true", &out), 2);
    cr_expect_not_null(strstr(out, "unknown clock 'tai' (boottime, monotonic, realtime)"), "%s", out);
    free(out);
    cr_expect_eq(run(TRACEC " record -o /dev/null", NULL), 2);
    /* usage errors all exit 2 and point at --help */
    static const struct {
        const char *args, *says;
    } usage[] = {
        {"--categories 'gfx,,io' -- true", "bad --categories 'gfx,,io' (1 to 100 comma-separated names"},
        {"--categories '' -- true", "--categories '' names no category (leave it out to enable all)"},
        {"--duration 1s -- true", "--duration is for --attach"},
        {"--mode oneshot --wait 100 -- true", "--wait is for --mode streaming"},
        {"--timeout 0 -- true", "bad --timeout '0' (1 to 600000 ms; e.g. 2000, 2s)"},
        /* what strtod and strtoull would take: "nan" once ran the recorder for ever */
        {"--attach --duration nan", "bad --duration 'nan' (1ms to a year; e.g. 500ms, 10s)"},
        {"--attach --duration 0", "bad --duration '0'"},
        {"--attach --duration 0.4ms", "bad --duration '0.4ms'"},
        {"--timeout 600001.0 -- true", "bad --timeout '600001.0' (1 to 600000 ms"}, /* no unit: ms, '.' or not */
        {"--timeout 600000.9 -- true", "bad --timeout '600000.9'"}, /* rounded, then bounded */
        {"--attach --duration 1e300s", "bad --duration '1e300s'"},
        {"--attach --duration ' 1s'", "bad --duration ' 1s'"},
        {"--attach --duration 0x10", "bad --duration '0x10'"},
        {"--max-size ' 1m' -- true", "bad --max-size ' 1m' (at least 1m"},
        {"--max-size +1m -- true", "bad --max-size '+1m'"},
        {"--buffer-size ' 64k' -- true", "bad --buffer-size ' 64k' (8k to 1g)"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        char *cmd;
        cr_assert(asprintf(&cmd, TRACEC " record -o /dev/null %s", usage[i].args) > 0);
        cr_expect_eq(run(cmd, &out), 2, "%s: %s", cmd, out);
        cr_expect_not_null(strstr(out, usage[i].says), "%s: %s", cmd, out);
        cr_expect_not_null(strstr(out, "Try 'tracec record --help'."), "%s: %s", cmd, out);
        free(out);
        free(cmd);
    }
    cr_expect_eq(run(TRACEC " record -o - -- true", &out), 2);
    cr_expect_not_null(strstr(out, "-o - is not supported"), "%s", out);
    free(out);
    /* a trace that cannot be created is named before anything runs */
    cr_expect_eq(run(TRACEC " record -o /nonexistent/dir/t.pftrace -- echo ran", &out), 1);
    cr_expect_not_null(strstr(out, "tracec record: cannot create /nonexistent/dir/t.pftrace: No such file or "
                                   "directory\n"), "%s", out);
    cr_expect_null(strstr(out, "ran"), "%s", out);
    free(out);
    cr_expect_eq(run(TRACEC " record -o /tmp -- true", &out), 1);
    cr_expect_not_null(strstr(out, "cannot create /tmp: Is a directory"), "%s", out);
    free(out);
}

/* A program that cannot be run: one message, the shell's status (127 not found, 126 not executable), no trace. */
Test(record, program_that_cannot_run) {
    char trace[160], plain[160], *cmd, *out;
    snprintf(trace, sizeof trace, "%s/never.pftrace", g_dir);
    snprintf(plain, sizeof plain, "%s/plain.txt", g_dir);
    FILE *f = fopen(plain, "w");
    cr_assert_not_null(f);
    fputs("not a program\n", f);
    fclose(f);
    cr_assert_eq(chmod(plain, 0644), 0);
    const struct {
        const char *prog, *says;
        int rc;
    } cases[] = {{"/nonexistent/prog", "No such file or directory", 127}, {plain, "Permission denied", 126}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert(asprintf(&cmd, TRACEC " record -o %s -- %s", trace, cases[i].prog) > 0);
        cr_expect_eq(run(cmd, &out), cases[i].rc, "%s: %s", cmd, out);
        char want[256];
        snprintf(want, sizeof want, "tracec record: cannot run %s: %s\n", cases[i].prog, cases[i].says);
        cr_expect_str_eq(out, want, "%s", cmd);
        cr_expect_neq(access(trace, F_OK), 0, "%s: no trace is left behind", cmd);
        free(out);
        free(cmd);
    }
    /* -o a device: it is not removed */
    cr_expect_eq(run(TRACEC " record -o /dev/null -- /nonexistent/prog", NULL), 127);
    cr_expect_eq(access("/dev/null", W_OK), 0);
    /* an older trace of that name is left as it is (the program is looked for first, on $PATH too) */
    f = fopen(trace, "w");
    cr_assert_not_null(f);
    fputs("an older trace\n", f);
    fclose(f);
    cr_assert(asprintf(&cmd, TRACEC " record -o %s -- no-such-program-tracec --flag", trace) > 0);
    cr_expect_eq(run(cmd, &out), 127, "%s", out);
    cr_expect_str_eq(out, "tracec record: cannot run no-such-program-tracec: No such file or directory\n");
    free(out);
    free(cmd);
    tt_buf kept = {0};
    cr_assert(tt_read_file(trace, &kept));
    cr_expect_eq(kept.size, strlen("an older trace\n"), "the older trace is kept");
    tt_buf_free(&kept);
}

/* An enabled category that no provider declared enables nothing: it is named (a misspelling, most likely). */
Test(record, an_enabled_category_no_provider_declared_is_named) {
    char *cmd, *out;
    cr_assert(asprintf(&cmd, "%s record -o %s/undeclared.pftrace --categories gfx,nosuch,io -- %s cats painter "
                             "gfx,net gfx,net 10", TRACEC, g_dir, PROV) > 0);
    cr_expect_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "tracec record: no provider declared the enabled category 'nosuch', so it "
                                   "enabled nothing (they declared: gfx,net)\n"), "%s", out);
    cr_expect_not_null(strstr(out, "category 'io'"), "%s", out);
    cr_expect_null(strstr(out, "category 'gfx'"), "%s", out);
    free(out);
    free(cmd);
    /* a provider that declared none may use any: no warning */
    cr_assert(asprintf(&cmd, "%s record -o %s/undeclared.pftrace --categories gfx,nosuch -- %s survive lister 100",
                       TRACEC, g_dir, PROV) > 0);
    cr_expect_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_null(strstr(out, "no provider declared"), "%s", out);
    free(out);
    free(cmd);
}

/* tracec_recorder_open(cfg) is INVALID_ARGUMENT and leaves *out NULL. */
static void expect_open_invalid(tracec_recorder_config cfg, const char *what, unsigned long long v) {
    char sock[160];
    snprintf(sock, sizeof sock, "%s/invalid.sock", g_dir);
    cfg.socket_path = sock;
    tracec_recorder *r = (tracec_recorder *)1;
    cr_expect_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_INVALID_ARGUMENT, "%s %llu", what, v);
    cr_expect_null(r);
}

/* The API's check of what the command line cannot give: a clock other than BOOTTIME, MONOTONIC, REALTIME. */
Test(record, config_with_an_unknown_clock_is_invalid) {
    const uint32_t bad[] = {2, 4, 5, 64, 200};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
        cfg.clock_id = bad[i];
        expect_open_invalid(cfg, "clock", bad[i]);
    }
}

/* A max_file_size below TRACEC_RECORDER_MIN_FILE_SIZE leaves no room for the summary and data besides. */
Test(record, config_with_a_max_file_size_below_the_minimum_is_invalid) {
    const uint64_t bad[] = {1, 4096, TRACEC_RECORDER_MIN_FILE_SIZE - 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
        cfg.max_file_size = bad[i];
        expect_open_invalid(cfg, "max_file_size", (unsigned long long)bad[i]);
    }
}

Test(record, program_that_never_registers_is_a_warning_and_status_4) {
    char trace[128], *out;
    snprintf(trace, sizeof trace, "/tmp/tracec_rec_noprov_%d.pftrace", (int)getpid());
    char *cmd;
    cr_assert(asprintf(&cmd, TRACEC " record -o %s -- true", trace) > 0);
    cr_expect_eq(run(cmd, &out), 4, "%s", out);
    cr_expect_not_null(strstr(out, "no provider registered: is true linked with libtracec and does it write events?"),
                       "%s", out);
    free(out);
    free(cmd);
    /* The trace is written all the same, and readable. */
    cr_assert(asprintf(&cmd, TRACEC " decode %s > /dev/null", trace) > 0);
    cr_expect_eq(run(cmd, NULL), 0);
    free(cmd);
    /* The program's own failure takes precedence over the warning's status. */
    cr_assert(asprintf(&cmd, TRACEC " record -o %s -- sh -c 'exit 7'", trace) > 0);
    cr_expect_eq(run(cmd, &out), 7, "%s", out);
    cr_expect_not_null(strstr(out, "no provider registered"), "%s", out);
    free(out);
    free(cmd);
    unlink(trace);
}

Test(record, two_runs_in_one_trace) {
    char sock[128], trace[128], out[128];
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/runs.pftrace", g_dir);
    snprintf(out, sizeof out, "%s/prov.out", g_dir);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.output_path = trace;
    FILE *log = tmpfile();
    cfg.log = log;
    tracec_recorder *r;
    cr_assert_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(tracec_recorder_start(r), TRACEC_STATUS_BAD_STATE);
    pid_t kid = fork();
    if (kid == 0) {
        cr_assert_not_null(freopen(out, "w", stdout));
        setenv("TRACEC_RECORDER_SOCKET", sock, 1);
        execl(PROV, "record_provider", "survive", "runner", "1200", "20", (char *)NULL); /* paced: a small trace */
        _exit(127);
    }
    poll_for(r, 400);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    tracec_recorder_provider_info in1;
    cr_assert(tracec_recorder_provider(r, 0, &in1));
    cr_expect_gt(in1.delivered, 0);
    poll_for(r, 100);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS); /* a second run: a new buffer */
    poll_for(r, 300);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    int st;
    waitpid(kid, &st, 0);
    poll_for(r, 50);
    tracec_recorder_provider_info in2;
    cr_assert(tracec_recorder_provider(r, 0, &in2));
    cr_expect_gt(in2.delivered, in1.delivered, "the second run added packets");
    cr_expect_eq(in2.delivered + in2.dropped, in2.produced);
    cr_expect(!in2.ended_early && !in2.timed_out && in2.corrupt == 0);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    fclose(log);
    FILE *f = fopen(out, "r");
    long produced = -1, dropped = -1;
    cr_assert_not_null(f);
    cr_expect_eq(fscanf(f, "produced %ld dropped %ld", &produced, &dropped), 2);
    fclose(f);
    cr_expect_eq((uint64_t)produced, in2.produced, "the provider's own count");
    char *view = py_view(trace);
    summary s = find_summary(view, "runner");
    cr_assert(s.found, "%s", view);
    cr_expect_eq(seq_packets(view, s.seq), (long)in2.delivered);
    free(view);
}

#define EXT_PROV TRACEC_BINARY_DIR "/tests/record/record_ext_provider"

/*
 * Runs record_ext_provider (THREADS threads "worker-K", N hand-written slices each, with extension
 * fields) under `tracec record ARGS` and checks what must hold whether or not the buffer wrapped:
 * per provider delivered + dropped = produced (its own count too), the packets on its sequence, and in
 * the trace processor: no error stat, every thread named, every slice of the provider on a named
 * thread's track (none on a global one), its extension fields as args.  Returns the summary.
 */
static summary ext_case(const char *file, const char *args, int n, int threads) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/%s", g_dir, file);
    snprintf(cmd, sizeof cmd, "%s record -o %s %s -- %s ext %d %d", TRACEC, trace, args, EXT_PROV, n, threads);
    int rc = run(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    long produced = -1, dropped = -1;
    cr_assert_eq(sscanf(out, "produced %ld dropped %ld", &produced, &dropped), 2, "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "ext");
    cr_assert(s.found, "%s", view);
    /* events, one descriptor per thread, the process's, the ExtensionDescriptor of test_extensions.proto */
    cr_expect_eq(s.produced, 2L * n * threads + threads + 2, "produced %ld", s.produced);
    cr_expect_eq(s.produced, produced);
    cr_expect_eq(s.dropped, dropped);
    cr_expect_eq(s.delivered + s.dropped, s.produced, "%ld + %ld != %ld", s.delivered, s.dropped, s.produced);
    cr_expect_eq(seq_packets(view, s.seq), s.delivered);
    free(view);
    need_tp();
    char *stats = tp_query(trace, "select name, idx, value from stats where severity = 'error' and value > 0;\n");
    cr_expect_eq(strcmp(stats, "\"name\",\"idx\",\"value\"\n"), 0, "error stats:\n%s", stats);
    free(stats);
    char *named = tp_query(trace, "select count(*) from thread where name like 'worker-%';\n");
    char want[64];
    snprintf(want, sizeof want, "\"count(*)\"\n%d\n", threads);
    cr_expect_eq(strcmp(named, want), 0, "named threads:\n%s", named);
    free(named);
    /* the provider's slices (all but the recorder's summary instants) are on its named threads' tracks */
    char *where = tp_query(trace, "select sum(th.name like 'worker-%') as named, count(*) as slices from slice s "
                                  "left join thread_track tt on s.track_id = tt.id left join thread th using(utid) "
                                  "where s.name not like 'provider %';\n");
    long on_named = -1, slices = -2;
    const char *row = strchr(where, '\n');
    cr_assert(row && sscanf(row + 1, "%ld,%ld", &on_named, &slices) == 2, "%s", where);
    cr_expect(slices > 0 && on_named == slices, "slices on named thread tracks / all:\n%s", where);
    free(where);
    char *ext = tp_query(trace, "select count(*) from slice s join args a using(arg_set_id) "
                                 "where a.key = 'uint_extension_for_testing' and s.name = 'hand';\n");
    snprintf(want, sizeof want, "\"count(*)\"\n%ld\n", slices);
    cr_expect_eq(strcmp(ext, want), 0, "the extension field is an arg of every slice (%ld):\n%s", slices, ext);
    free(ext);
    return s;
}

/* Once a CIRCULAR buffer wraps, the descriptors (process, threads, extensions) are still
   there: they live in the shared buffer's durable area, which a wrap never overwrites. */
Test(record, circular_wrap_keeps_the_descriptors) {
    summary s = ext_case("wrap.pftrace", "--mode circular --buffer-size 64k", 3000, 2);
    cr_expect(s.dropped > 0, "the 64k buffer wrapped: %ld dropped", s.dropped);
}

/* A hand-written packet on tracec_provider_thread_track_uuid() lands on the thread's named track: the
   thread is described at its first packet of a run, whoever writes it. */
Test(record, hand_written_events_land_on_the_thread_track) {
    summary s = ext_case("hand.pftrace", "--buffer-size 1m", 200, 2);
    cr_expect_eq(s.dropped, 0);
    need_tp();
    char trace[128];
    snprintf(trace, sizeof trace, "%s/hand.pftrace", g_dir);
    char *per = tp_query(trace, "select th.name, count(s.id) from slice s join thread_track tt on s.track_id = tt.id "
                                "join thread th using(utid) group by th.name order by th.name;\n");
    cr_expect_eq(strcmp(per, "\"name\",\"count(s.id)\"\n\"worker-0\",200\n\"worker-1\",200\n"), 0, "%s", per);
    free(per);
}

/* The text from "  trace_stats {" to its closing brace in a decoded trace (malloc'd), or NULL. */
static char *stats_block(const char *text) {
    const char *b = strstr(text, "  trace_stats {\n");
    const char *e = b ? strstr(b, "\n  }\n") : NULL;
    return e ? strndup(b, (size_t)(e - b) + 4) : NULL;
}

/* The recorder's trace_stats packet (TracePacket field 35) is in our schema: `tracec decode` names its
   fields, and protoc --decode (an independent decoder, from our .proto files) reads the same. */
Test(record, decode_names_the_trace_stats) {
    char cmd[1024], trace[128], *out, *ours, *theirs;
    snprintf(trace, sizeof trace, "%s/stats.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s --mode oneshot --buffer-size 16k -- %s normal m 2000 1", TRACEC, trace,
             PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s decode %s", TRACEC, trace);
    cr_assert_eq(run(cmd, &ours), 0, "%s", ours);
    snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I %s/protos perfetto/trace/trace.proto < %s",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, trace);
    cr_assert_eq(run(cmd, &theirs), 0, "%s", theirs);
    char *a = stats_block(ours), *b = stats_block(theirs);
    cr_assert_not_null(a, "no trace_stats in tracec decode's output:\n%s", ours);
    cr_assert_not_null(b, "no trace_stats in protoc --decode's output");
    cr_expect_str_eq(a, b);
    const char *fields[] = {"    buffer_stats {\n", "      bytes_written: ", "      abi_violations: 0\n",
                            "      buffer_size: 16384\n", "      chunks_discarded: ", "    producers_connected: ",
                            "    producers_seen: 1\n"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cr_expect_not_null(strstr(a, fields[i]), "want '%s' in\n%s", fields[i], a);
    cr_expect_null(strstr(ours, "\n  35"), "field 35 shown by number:\n%s", a);
    free(a);
    free(b);
    free(ours);
    free(theirs);
}

/* A record well formed at the top but not inside (its track_event holds an invalid wire type) is refused and
   counted: the trace stays readable by every decoder. */
Test(record, malformed_nested_record_is_refused) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/nested.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- sh -c '%s scribble vandal nested & %s normal honest 100 1; wait'",
             TRACEC, trace, PROV, PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "corrupt record at byte 24 of half 0 (invalid wire type)"), "%s", out);
    free(out);
    char *view = py_view(trace); /* python3-protobuf reads it */
    summary v = find_summary(view, "vandal"), h = find_summary(view, "honest");
    cr_assert(v.found && h.found, "%s", view);
    cr_expect_eq(v.delivered, 1, "the good record before the bad one");
    cr_expect_eq(v.corrupt, 1);
    cr_expect_eq(h.delivered, h.produced);
    free(view);
    snprintf(cmd, sizeof cmd, "%s decode %s > /dev/null", TRACEC, trace);
    cr_expect_eq(run(cmd, &out), 0, "tracec decode: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I %s/protos perfetto/trace/trace.proto < %s > /dev/null",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, trace);
    cr_expect_eq(run(cmd, &out), 0, "protoc --decode: %s", out);
    free(out);
    char *stats = tp_query(trace, "select name, value from stats where name = 'traced_buf_abi_violations' and value > 0;\n");
    cr_expect_not_null(strstr(stats, "\"traced_buf_abi_violations\",1"), "the stats say so:\n%s", stats);
    free(stats);
}

/* A provider that "empties" a half (its gen bumped) and asks for the same bytes to be saved again and again:
   saved once; the replay is refused and counted. */
Test(record, half_saved_twice_is_refused) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/replay.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- %s replay parrot 200", TRACEC, trace, PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "saved again with the same data"), "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "parrot");
    cr_assert(s.found, "%s", view);
    cr_expect_eq(s.delivered, 1, "one record, saved once:\n%s", view);
    cr_expect_geq(s.corrupt, 1);
    cr_expect_eq(seq_packets(view, s.seq), 1);
    free(view);
}

/* A provider's name reaches the terminal and the trace as valid UTF-8 without control characters. */
Test(record, provider_names_are_sanitized) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/names.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- %s rawname \"$(printf 'evil\\033[31m\\377\\001name')\"", TRACEC,
             trace, PROV);
    /* it registers and goes without answering Start: never started, status 4 */
    cr_assert_eq(run(cmd, &out), 4, "%s", out);
    cr_expect_null(strchr(out, '\033'), "an escape reached the terminal:\n%s", out);
    cr_expect_null(strchr(out, '\377'), "invalid UTF-8 reached the terminal:\n%s", out);
    cr_expect_not_null(strstr(out, "provider evil?[31m??name"), "%s", out);
    free(out);
    /* decode | encode | decode gives the same text */
    snprintf(cmd, sizeof cmd,
             "%s decode %s > %s/n.txt && %s encode %s/n.txt %s/n2.pftrace && %s decode %s/n2.pftrace | cmp %s/n.txt -",
             TRACEC, trace, g_dir, TRACEC, g_dir, g_dir, TRACEC, g_dir, g_dir);
    cr_expect_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    /* the library refuses such a name itself */
    cr_expect_eq(run(PROV " normal \"$(printf 'bad\\033name')\" 1 1", NULL), 3);
}

/* A provider of protocol version 1 is refused with a message that says so; the recording goes on. */
Test(record, version_1_provider_is_refused) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/v1.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- sh -c '%s v1 old & %s normal honest 10 1; wait'", TRACEC, trace,
             PROV, PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "it speaks protocol version 1, this recorder 3"), "%s", out);
    cr_expect_not_null(strstr(out, "closed"), "the recorder closed its connection:\n%s", out);
    free(out);
    char *view = py_view(trace);
    cr_expect_not(find_summary(view, "old").found, "%s", view);
    summary h = find_summary(view, "honest");
    cr_expect(h.found && h.delivered == h.produced, "%s", view);
    free(view);
}

/* A provider that outlives a recorder reports to the next one only what it wrote for it (a slice every 50 us
   or so: traces small enough to read back at once). */
Test(record, counters_are_per_recording) {
    char sock[128], cmd[2048], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(cmd, sizeof cmd,
             "TRACEC_RECORDER_SOCKET=%s %s survive lasting 4000 50 > %s/prov.out & "
             "%s record --attach --socket %s -o %s/first.pftrace --duration 1500ms; sleep 0.2; "
             "%s record --attach --socket %s -o %s/second.pftrace --duration 1500ms; wait",
             sock, PROV, g_dir, TRACEC, sock, g_dir, TRACEC, sock, g_dir);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    for (int i = 0; i < 2; i++) {
        char trace[128];
        snprintf(trace, sizeof trace, "%s/%s.pftrace", g_dir, i ? "second" : "first");
        char *view = py_view(trace);
        summary s = find_summary(view, "lasting");
        cr_assert(s.found, "%s", view);
        cr_expect_gt(s.delivered, 0, "%s", view);
        cr_expect_eq(s.delivered + s.dropped, s.produced, "recording %d: %ld + %ld != %ld", i + 1, s.delivered,
                     s.dropped, s.produced);
        free(view);
    }
}

/* Every packet carries the provider's uid and pid from SO_PEERCRED; the socket and its lock file go at exit. */
Test(record, trusted_uid_and_no_leftovers) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/uid.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "mkdir -m 700 %s/s && %s record --socket %s/s/r.sock -o %s -- %s normal u 10 1 && ls -A %s/s",
             g_dir, TRACEC, g_dir, trace, PROV, g_dir);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_null(strstr(out, "r.sock"), "left behind:\n%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "u");
    cr_assert(s.found, "%s", view);
    char want[64];
    cr_expect_eq(seq_packets(view, s.seq), s.delivered);
    snprintf(want, sizeof want, "seq=%ld packets=", s.seq);
    const char *line = strstr(view, want);
    cr_assert_not_null(line, "%s", view);
    char uid[32];
    snprintf(uid, sizeof uid, " uid=%u\n", (unsigned)geteuid());
    const char *eol = strchr(line, '\n');
    cr_expect(eol && strstr(line, uid) && strstr(line, uid) < eol + 1, "%s", view);
    free(view);
}

/* The recorder's CPU time and peak RSS (its children's too: RUSAGE_CHILDREN of a python3 wrapper). */
static void measured(const char *inner, double *cpu, long *maxrss_kb, char **out) {
    char cmd[4096];
    cr_assert_eq(setenv("MEASURED_CMD", inner, 1), 0);
    snprintf(cmd, sizeof cmd,
             "%s -c 'import os, resource, subprocess; subprocess.run([\"sh\", \"-c\", os.environ[\"MEASURED_CMD\"]]); "
             "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(\"cpu %%.3f maxrss %%d\" %% "
             "(r.ru_utime + r.ru_stime, r.ru_maxrss))'",
             TRACEC_PYTHON3);
    cr_assert_eq(run(cmd, out), 0, "%s", *out);
    const char *p = strstr(*out, "cpu ");
    cr_assert(p && sscanf(p, "cpu %lf maxrss %ld", cpu, maxrss_kb) == 2, "%s", *out);
}

/*
 * An fd flood: a client holds 100 connections that never register while the recorder may open 32 fds.
 * accept() fails with EMFILE: the recorder must not spin (the listener rests until an fd is free), and
 * the idle connections are closed after --timeout, so an honest provider still gets in.
 */
Test(record, fd_flood_neither_spins_nor_locks_out) {
    char inner[2048], *out;
    double cpu;
    long rss;
    snprintf(inner, sizeof inner,
             "(ulimit -n 32; exec %s record --attach --socket %s/r.sock -o %s/flood.pftrace --timeout 300 --duration 4s) & "
             "sleep 0.3; %s -c \"import socket, time\nss = []\nfor i in range(100):\n"
             "    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.setblocking(False)\n"
             "    try: s.connect(\\\"%s/r.sock\\\"); ss.append(s)\n"
             "    except OSError: pass\ntime.sleep(3.5)\" & "
             "sleep 0.8; TRACEC_RECORDER_SOCKET=%s/r.sock %s normal honest 50 1 > /dev/null; wait",
             TRACEC, g_dir, g_dir, TRACEC_PYTHON3, g_dir, g_dir, PROV);
    measured(inner, &cpu, &rss, &out);
    cr_expect_not_null(strstr(out, "out of file descriptors"), "%s", out);
    cr_expect_not_null(strstr(out, "did not register within 300 ms"), "%s", out);
    cr_expect_lt(cpu, 1.0, "CPU %.3f s over a 4 s recording: the recorder spins\n%s", cpu, out);
    printf("fd flood: recorder+clients cpu %.3f s in 4 s, max rss %ld KiB\n", cpu, rss);
    free(out);
    char trace[128];
    snprintf(trace, sizeof trace, "%s/flood.pftrace", g_dir);
    char *view = py_view(trace);
    summary s = find_summary(view, "honest");
    cr_expect(s.found, "the honest provider was locked out:\n%s", view);
    cr_expect_eq(s.delivered, s.produced);
    free(view);
}

/* 200 short-lived programs under one recorder: its memory does not grow with them (a provider's copy buffers go
   when it leaves). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

Test(record, many_short_lived_providers_bounded_memory, .timeout = 180) {
#ifdef UNDER_ASAN
    /* AddressSanitizer's quarantine keeps freed memory: RSS says nothing of the recorder here (not a
       cr_skip_test: Criterion's skip leaks an allocation LeakSanitizer reports) */
    printf("many_short_lived_providers_bounded_memory: not measured under AddressSanitizer\n");
    return;
#endif
    char inner[1024], *out;
    double cpu;
    long rss;
    snprintf(inner, sizeof inner,
             "%s record -o %s/many.pftrace -- sh -c 'for i in $(seq 20); do for j in $(seq 10); do "
             "%s normal p$i-$j 3000 1 > /dev/null & done; wait; done'",
             TRACEC, g_dir, PROV);
    measured(inner, &cpu, &rss, &out);
    printf("200 providers: cpu %.3f s (recorder and providers), max rss %ld KiB\n", cpu, rss);
    cr_expect_lt(rss, 40 * 1024, "max RSS %ld KiB:\n%s", rss, out);
    cr_expect_null(strstr(out, "cannot create its buffer"), "%s", out);
    free(out);
}

/* The record reader follows the schema into nested messages: the nested seeds of fuzz_record's corpus are
   refused (a malformed or too deep nested message, a packed run cut short) or kept, as their names say. */
Test(record, record_reader_checks_nested_messages) {
    const char *seeds[] = {"nested_track_event_bad",  "nested_debug_annotation", "nested_dict_deep_ok",
                           "nested_dict_too_deep",    "nested_packed_bad",       "nested_packed_ok",
                           "nested_interned_data_bad", "nested_defaults_bad",    "nested_descriptor_bad"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/fuzz/record/corpus/%s", TRACEC_SOURCE_DIR, seeds[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        uint8_t buf[4096];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        tracec_trace_file *t;
        cr_assert_eq(tracec_trace_file_open_memory(&t), TRACEC_STATUS_SUCCESS);
        uint64_t packets = 0;
        size_t bad = 0;
        const char *why = NULL;
        tracec_status_t st = tracec_recorder_read_records(buf, n, t, 2, 1, 0, &packets, &bad, &why);
        bool want_ok = strstr(seeds[i], "_bad") == NULL && strstr(seeds[i], "too_deep") == NULL;
        cr_expect_eq(st, want_ok ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_CORRUPT_DATA, "%s: %s", seeds[i],
                     why ? why : "accepted");
        if (strcmp(seeds[i], "nested_dict_too_deep") == 0 || strcmp(seeds[i], "nested_interned_data_bad") == 0)
            cr_expect_eq(packets, 1, "%s: the record before the bad one is kept", seeds[i]);
        cr_expect_eq(tracec_trace_file_close(t), TRACEC_STATUS_SUCCESS);
    }
}

/* ---- losses marked on the provider's sequence (previous_packet_dropped) ---------------------------- */

typedef struct marks {
    long events, gaps, flagged, at_gap, elsewhere, first_flag, last_event;
} marks;

/* check_loss_marks.py's view (python3-protobuf) of the marks on provider `name`'s sequence. */
static marks loss_marks(const char *trace, const char *name) {
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=%s/trace.desc -I %s/protos perfetto/trace/trace.proto && "
             "%s %s/tests/record/check_loss_marks.py %s/trace.desc %s %s",
             TRACEC_PROTOC, g_dir, TRACEC_SOURCE_DIR, TRACEC_PYTHON3, TRACEC_SOURCE_DIR, g_dir, trace, name);
    cr_assert_eq(run(cmd, &out), 0, "check_loss_marks.py failed:\n%s", out);
    marks m;
    memset(&m, 0, sizeof m);
    cr_assert_eq(sscanf(out, "events=%ld gaps=%ld flagged=%ld flagged_at_gap=%ld flagged_elsewhere=%ld first_flag=%ld "
                             "last_event=%ld",
                        &m.events, &m.gaps, &m.flagged, &m.at_gap, &m.elsewhere, &m.first_flag, &m.last_event),
                 7, "%s", out);
    free(out);
    return m;
}

/* The trace processor's value of stat `name` at buffer 0 (0 when the row is absent or 0). */
static long tp_stat(const char *trace, const char *name) {
    char sql[256];
    snprintf(sql, sizeof sql, "select value from stats where name = '%s' and value > 0;\n", name);
    char *out = tp_query(trace, sql);
    const char *row = strchr(out, '\n');
    long v = row && row[1] ? atol(row + 1) : 0;
    free(out);
    return v;
}

/*
 * Runs `record_provider indexed m N M BIG` under `tracec record --mode MODE --buffer-size SIZE` and checks
 * the marks: every instant saved after lost ones (a gap in its index) carries previous_packet_dropped, and
 * no other packet does (python3-protobuf); the trace processor counts the marks as
 * traced_buf_sequence_packet_loss and the lost packets as traced_buf_trace_writer_packet_loss (data_loss),
 * has no error stat, and shows every saved instant, the last one included.
 */
/* `unmarked`: gaps counted but not marked (a CIRCULAR wrap's, before the oldest packet kept). */
static marks marks_case(const char *mode, const char *size, long n, long m, long big, long unmarked) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/marks-%s.pftrace", g_dir, mode);
    snprintf(cmd, sizeof cmd, "%s record -o %s --mode %s --buffer-size %s -- %s indexed m %ld %ld %ld", TRACEC, trace,
             mode, size, PROV, n, m, big);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    free(out);
    char *view = py_view(trace);
    summary s = find_summary(view, "m");
    cr_assert(s.found, "%s", view);
    free(view);
    marks k = loss_marks(trace, "m");
    long marked = k.gaps - unmarked;
    cr_expect_eq(k.flagged, marked, "%s: %ld marks for %ld gaps", mode, k.flagged, k.gaps);
    cr_expect_eq(k.at_gap, marked, "%s: %ld of %ld gaps marked", mode, k.at_gap, k.gaps);
    cr_expect_eq(k.elsewhere, 0, "%s: %ld packets marked that follow no loss", mode, k.elsewhere);
    cr_expect_eq(s.delivered, k.events + 2, "%s: the instants and the two descriptors", mode);
    need_tp();
    cr_expect_eq(tp_stat(trace, "traced_buf_sequence_packet_loss"), k.flagged, "%s", mode);
    cr_expect_eq(tp_stat(trace, "traced_buf_trace_writer_packet_loss"), s.dropped, "%s", mode);
    char *bad = tp_query(trace, "select name, value from stats where severity = 'error' and value > 0;\n");
    cr_expect_eq(strcmp(bad, "\"name\",\"value\"\n"), 0, "%s: error stats:\n%s", mode, bad);
    free(bad);
    char *kept = tp_query(trace, "select count(*), max(a.int_value) from slice s join args a using(arg_set_id) "
                                 "where a.key = 'debug.i';\n");
    char want[96];
    snprintf(want, sizeof want, "\"count(*)\",\"max(a.int_value)\"\n%ld,%ld\n", k.events, k.last_event);
    cr_expect_eq(strcmp(kept, want), 0, "%s: the trace processor keeps every instant saved (%ld, the last %ld):\n%s",
                 mode, k.events, k.last_event, kept);
    free(kept);
    return k;
}

/* STREAMING, the recorder late (stopped while the program writes 2000 instants into a 16k buffer): the
   instants that find both halves full are dropped, and the first one written after them says so. */
Test(record, streaming_loss_marks_the_next_packet) {
    marks k = marks_case("streaming", "16k", 2000, 100, 0, 0);
    cr_expect_geq(k.gaps, 1, "packets were lost");
    cr_expect_geq(k.first_flag, 1, "the first instant was kept");
    cr_expect_eq(k.last_event, 2099, "the instants written after the loss are kept");
}

/* A packet too large for the buffer is refused in every mode; the next one says so. */
Test(record, refused_packet_marks_the_next_packet) {
    const char *modes[] = {"streaming", "oneshot", "circular"};
    for (int i = 0; i < 3; i++) {
        marks k = marks_case(modes[i], "32k", 300, 0, 50, 0); /* 49, 99, ..., 299 refused; 299 has no next */
        cr_expect_eq(k.gaps, 5, "%s", modes[i]);
        cr_expect_eq(k.first_flag, 50, "%s", modes[i]);
    }
}

/* CIRCULAR: a wrap overwrote the oldest packets; the first one kept says so (the recorder marks it). */
Test(record, circular_wrap_is_counted_not_marked) {
    marks k = marks_case("circular", "16k", 3000, 0, 0, 1);
    cr_expect_eq(k.gaps, 1, "one gap: before the first instant kept");
    cr_expect_eq(k.flagged, 0, "no packet marked");
    cr_expect_eq(k.last_event, 2999);
    char trace[128];
    snprintf(trace, sizeof trace, "%s/marks-circular.pftrace", g_dir);
    cr_expect_gt(tp_stat(trace, "traced_buf_trace_writer_packet_loss"), 0, "the overwritten instants are data_loss");
}

/* Nothing lost: no packet is marked, and the trace processor shows no data_loss. */
Test(record, lossless_recording_has_no_mark) {
    marks k = marks_case("streaming", "1m", 2000, 0, 0, 0);
    cr_expect_eq(k.events, 2000);
    cr_expect_eq(k.flagged, 0);
    char trace[128];
    snprintf(trace, sizeof trace, "%s/marks-streaming.pftrace", g_dir);
    char *loss = tp_query(trace, "select name, value from stats where severity = 'data_loss' and value > 0;\n");
    cr_expect_eq(strcmp(loss, "\"name\",\"value\"\n"), 0, "nothing lost, yet:\n%s", loss);
    free(loss);
}

/* The recorder refuses a corrupt record (the rest of that buffer is dropped): the provider's first record
   saved in the next run says so. */
Test(record, corrupt_record_marks_the_next_run) {
    char sock[128], trace[128], cmd[1024], *out;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/twice.pftrace", g_dir);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.output_path = trace;
    FILE *log = tmpfile();
    cfg.log = log;
    tracec_recorder *r;
    cr_assert_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    pid_t kid = fork();
    if (kid == 0) {
        setenv("TRACEC_RECORDER_SOCKET", sock, 1);
        execl(PROV, "record_provider", "twice", "twice", (char *)NULL);
        _exit(127);
    }
    poll_for(r, 300);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    poll_for(r, 100);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    poll_for(r, 300);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    int st;
    cr_assert_eq(waitpid(kid, &st, 0), kid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "record_provider twice: status %d", st);
    tracec_recorder_provider_info in;
    cr_assert(tracec_recorder_provider(r, 0, &in));
    cr_expect_eq(in.corrupt, 1);
    cr_expect_eq(in.delivered, 4, "one record of the first run, three of the second");
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    fclose(log);
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=%s/trace.desc -I %s/protos perfetto/trace/trace.proto && "
             "%s %s/tests/record/check_loss_marks.py %s/trace.desc %s twice list",
             TRACEC_PROTOC, g_dir, TRACEC_SOURCE_DIR, TRACEC_PYTHON3, TRACEC_SOURCE_DIR, g_dir, trace);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    cr_expect_str_eq(out, "1 0\n1001 1\n1002 0\n1003 0\n", "timestamp and mark of each packet of its sequence");
    free(out);
}

/* ---- nesting after losses (docs/record.md, "Nesting after losses") ---- */

/* The trace processor's misplaced_end_event (an END with no slice open, or closing another one). */
static long misplaced_ends(const char *trace) { return tp_stat(trace, "misplaced_end_event"); }

/* The file's text, at most `size` - 1 bytes (empty when it cannot be read). */
static void read_text(const char *path, char *text, size_t size) {
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, size - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
}

/* A started recorder on `sock` writing `trace`; its log goes to *log (a tmpfile the caller closes). */
static tracec_recorder *started_recorder(const char *sock, const char *trace, FILE **log) {
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    tracec_recorder *r;
    cfg.socket_path = sock;
    cfg.output_path = trace;
    cfg.log = *log != NULL ? *log : (*log = tmpfile());
    cr_assert_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    return r;
}

/*
 * `record_provider restart NAME` connecting to `sock`, its output in `out`; returns once it wrote
 * "inside" (the recorder served meanwhile, at most 5 s).
 */
static pid_t provider_inside_its_slices(tracec_recorder *r, const char *sock, const char *out, const char *name) {
    char text[256] = "";
    pid_t kid = fork();
    if (kid == 0) {
        cr_assert_not_null(freopen(out, "w", stdout));
        setenv("TRACEC_RECORDER_SOCKET", sock, 1);
        execl(PROV, "record_provider", "restart", name, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500 && strstr(text, "inside") == NULL; i++) {
        poll_for(r, 10);
        read_text(out, text, sizeof text);
    }
    cr_assert_not_null(strstr(text, "inside"), "the program never got inside its slices: %s", text);
    return kid;
}

/* Waits for the provider started above; it must exit 0. */
static void provider_done(pid_t kid) {
    int st;
    cr_assert_eq(waitpid(kid, &st, 0), kid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "record_provider restart: status %d", st);
}

/*
 * STREAMING, the recorder stopped while the program nests two levels 3000 times in a 16k buffer (most
 * packets dropped, BEGINs and ENDs alike), then 100 times more and once more 300 ms later: every kept
 * slice is at the depth the program nests it, none is unfinished, no END is misplaced.
 */
Test(record, streaming_losses_keep_the_nesting) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/nest.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s --mode streaming --buffer-size 16k -- %s nested n 3000 100", TRACEC,
             trace, PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    long produced = -1, dropped = -1;
    cr_assert_eq(sscanf(out, "produced %ld dropped %ld", &produced, &dropped), 2, "%s", out);
    cr_expect_gt(dropped, 0, "packets were lost: %s", out);
    free(out);
    char *rows = tp_query(trace, "select sum(name = 'outer' and depth <> 0) + sum(name = 'inner' and depth <> 1) + "
                                 "sum(name = 'step' and depth <> 2) as misnested, sum(dur = -1) as unfinished, "
                                 "sum(name = 'outer') as outers from slice where name in ('outer', 'inner', 'step');\n");
    long misnested = -1, unfinished = -1, outers = -1;
    const char *row = strchr(rows, '\n');
    cr_assert(row && sscanf(row + 1, "%ld,%ld,%ld", &misnested, &unfinished, &outers) == 3, "%s", rows);
    cr_expect_eq(misnested, 0, "slices at another depth than the program's:\n%s", rows);
    cr_expect_eq(unfinished, 0, "unfinished slices:\n%s", rows);
    cr_expect_geq(outers, 2, "%s", rows);
    free(rows);
    cr_expect_eq(misplaced_ends(trace), 0);
    cr_expect_eq(tp_stat(trace, "traced_buf_trace_writer_packet_loss"), dropped, "the loss is data_loss");
}

/*
 * The buffer full (the recorder stopped) inside two slices: the END of the inner one is refused, then a
 * BEGIN ("lost", refused: the owed END is tried first) and its END.  Once the recorder saved, the next
 * BEGIN writes the owed END first, with its own time: "a" ends before "b" begins, "b" is at depth 1
 * inside "outer", "lost" is nowhere and its END closes nothing.
 */
/* ... and an instant inside the slice whose BEGIN was refused is not written either: it would land at
   another depth ("in-lost" is not in the trace, and is counted lost). */
Test(record, refused_end_is_written_before_the_next_begin) {
    char cmd[1024], trace[128], *out;
    snprintf(trace, sizeof trace, "%s/refused.pftrace", g_dir);
    snprintf(cmd, sizeof cmd, "%s record -o %s --mode streaming --buffer-size 16k -- %s refused r", TRACEC, trace,
             PROV);
    cr_assert_eq(run(cmd, &out), 0, "%s", out);
    long fill = -1;
    int outer = -1, a = -1, end_a = -1, lost = -1, end_lost = -1, b = -1, end_b = -1, end_outer = -1;
    cr_assert_eq(sscanf(out, "fill %ld outer %d a %d end_a %d lost %d end_lost %d b %d end_b %d end_outer %d", &fill,
                        &outer, &a, &end_a, &lost, &end_lost, &b, &end_b, &end_outer),
                 9, "%s", out);
    cr_expect(fill > 0 && outer == 0 && a == 0 && b == 0 && end_b == 0 && end_outer == 0, "%s", out);
    cr_expect_eq(end_a, TRACEC_STATUS_BUFFER_FULL, "%s", out);
    cr_expect_eq(lost, TRACEC_STATUS_BUFFER_FULL, "%s", out);
    cr_expect_eq(end_lost, TRACEC_STATUS_SUCCESS, "the END of a BEGIN not in the trace is not written: %s", out);
    const char *il = strstr(out, "in_lost ");
    cr_expect(il && atoi(il + 8) == TRACEC_STATUS_SUCCESS, "%s", out);
    /* lost: the instant that filled the buffer, "a"'s END, the END tried for "lost", and "in-lost" */
    long produced = -1, dropped = -1;
    const char *ps = strstr(out, "produced ");
    cr_assert(ps && sscanf(ps, "produced %ld dropped %ld", &produced, &dropped) == 2, "%s", out);
    cr_expect_eq(dropped, 4, "%s", out);
    free(out);
    cr_expect_eq(tp_stat(trace, "traced_buf_trace_writer_packet_loss"), dropped, "the loss is data_loss");
    char *rows = tp_query(trace, "select name, depth, dur > 0 as ended from slice where name in "
                                 "('outer', 'a', 'lost', 'in-lost', 'b') order by ts;\n");
    cr_expect_str_eq(rows, "\"name\",\"depth\",\"ended\"\n\"outer\",0,1\n\"a\",1,1\n\"b\",1,1\n");
    free(rows);
    char *order = tp_query(trace, "select (select ts + dur from slice where name = 'a') < "
                                  "(select ts from slice where name = 'b') as a_ends_first;\n");
    cr_expect_str_eq(order, "\"a_ends_first\"\n1\n");
    free(order);
    cr_expect_eq(misplaced_ends(trace), 0);
}

/*
 * Tracing stopped (the recorder's stop) while the program is inside two slices, the inner one's END
 * while it is off, the outer one's after the next start: both slices end at the stop, the program's END
 * after the start is not written, and the slice it writes next is at depth 0.
 */
Test(record, slices_open_at_a_stop_end_there) {
    char sock[128], trace[128], out[128], text[256];
    FILE *log = NULL;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace, sizeof trace, "%s/restart.pftrace", g_dir);
    snprintf(out, sizeof out, "%s/prov.out", g_dir);
    tracec_recorder *r = started_recorder(sock, trace, &log);
    pid_t kid = provider_inside_its_slices(r, sock, out, "restart");
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    poll_for(r, 100);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    poll_for(r, 400);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    provider_done(kid);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    fclose(log);
    read_text(out, text, sizeof text);
    cr_expect_not_null(strstr(text, "off "), "%s", text);
    char *rows = tp_query(trace, "select name, depth, dur > 0 as ended from slice where name in "
                                 "('outer', 'in', 'after') order by ts;\n");
    cr_expect_str_eq(rows, "\"name\",\"depth\",\"ended\"\n\"outer\",0,1\n\"in\",1,1\n\"after\",0,1\n");
    free(rows);
    /* both end at the stop: before the start, 50 ms before "after" at least */
    char *ends = tp_query(trace, "select (select ts + dur from slice where name = 'outer') = "
                                 "(select ts + dur from slice where name = 'in') as together, "
                                 "(select ts from slice where name = 'after') - "
                                 "(select ts + dur from slice where name = 'outer') > 50000000 as at_the_stop;\n");
    cr_expect_str_eq(ends, "\"together\",\"at_the_stop\"\n1,1\n");
    free(ends);
    cr_expect_eq(misplaced_ends(trace), 0);
}

/*
 * The same program under one recorder, then another (a new connection: another sequence in another
 * trace): the slices it left open under the first end there (they are in the first trace), and the
 * program's ENDs for them under the second are not written: the second trace has "after" at depth 0
 * and no END without its BEGIN.
 */
Test(record, slices_open_under_another_recorder_write_no_end) {
    char sock[128], trace1[128], trace2[128], out[128];
    FILE *log = NULL;
    snprintf(sock, sizeof sock, "%s/r.sock", g_dir);
    snprintf(trace1, sizeof trace1, "%s/first.pftrace", g_dir);
    snprintf(trace2, sizeof trace2, "%s/second.pftrace", g_dir);
    snprintf(out, sizeof out, "%s/prov.out", g_dir);
    tracec_recorder *r = started_recorder(sock, trace1, &log);
    pid_t kid = provider_inside_its_slices(r, sock, out, "again");
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    r = started_recorder(sock, trace2, &log);
    poll_for(r, 600);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    provider_done(kid);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    fclose(log);
    char *rows = tp_query(trace1, "select name, depth, dur from slice where name in ('outer', 'in', 'after') "
                                  "order by ts;\n");
    cr_expect_str_eq(rows, "\"name\",\"depth\",\"dur\"\n\"outer\",0,-1\n\"in\",1,-1\n",
                     "the first trace holds the slices as its recording left them");
    free(rows);
    rows = tp_query(trace2, "select name, depth, dur > 0 as ended from slice where name in ('outer', 'in', 'after') "
                            "order by ts;\n");
    cr_expect_str_eq(rows, "\"name\",\"depth\",\"ended\"\n\"after\",0,1\n");
    free(rows);
    /* the trace processor ignores an END on a track with no slice open: count them (python3-protobuf) */
    char *view = py_view(trace2);
    summary s = find_summary(view, "again");
    cr_assert(s.found, "%s", view);
    /* its one writing thread's sequence: the one after its own */
    char key[64];
    snprintf(key, sizeof key, "slices seq=%ld ", s.seq + 1);
    const char *at = strstr(view, key);
    long begins = -1, ends = -1;
    cr_assert(at && sscanf(at + strlen(key), "begins=%ld ends=%ld", &begins, &ends) == 2, "%s", view);
    cr_expect_eq(begins, 1, "%s", view);
    cr_expect_eq(ends, 1, "an END whose BEGIN is in the other trace was written:\n%s", view);
    free(view);
}
