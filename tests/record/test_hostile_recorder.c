/*
 * test_hostile_recorder.c - the provider library (record_provider, a real
 * process) under a recorder it must not trust: this test plays the
 * recorder (or another user's listener, through setpriv) and checks that
 * the program is neither read, killed nor stalled (docs/record.md, "Threat
 * model").
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracec/abi/record_protocol.h"
#include "tracec/buffer.h"
#include "tracec/provider.h"

#define PROV TRACEC_BINARY_DIR "/tests/record/record_provider"

static char g_dir[64], g_sock[96];
static tracec_i_msg g_m;

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-hostile-XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    snprintf(g_sock, sizeof g_sock, "%s/r.sock", g_dir);
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    (void)system(cmd);
}

TestSuite(hostile_recorder, .init = setup, .fini = teardown, .timeout = 60);

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int listen_at(const char *path, int backlog) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(fd, backlog), 0);
    return fd;
}

/* Starts record_provider ARGS with the recorder's socket at `sock`; its stdout and stderr go to g_dir/prov.out. */
static pid_t spawn_provider(const char *sock, const char *const *args) {
    pid_t pid = fork();
    if (pid == 0) {
        char out[128];
        snprintf(out, sizeof out, "%s/prov.out", g_dir);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
        char *argv[8] = {"record_provider"};
        for (int i = 0; args[i] && i < 6; i++) argv[i + 1] = (char *)args[i];
        execv(PROV, argv);
        _exit(127);
    }
    return pid;
}

/* Waits up to `ms` for `pid`; its wait status, or -1 when it had to be killed. */
static int wait_exit(pid_t pid, long ms) {
    long end = now_ms() + ms;
    int st;
    while (now_ms() < end) {
        if (waitpid(pid, &st, WNOHANG) == pid) return st;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* What the provider printed (malloc'd). */
static char *prov_output(void) {
    char path[128];
    snprintf(path, sizeof path, "%s/prov.out", g_dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The counters line record_provider hostile prints: whether it started, and how many recorders it refused. */
static void hostile_counts(const char *out, int *started, long *refused) {
    const char *p = strstr(out, "started ");
    long loops;
    unsigned long long produced, dropped;
    cr_assert(p && sscanf(p, "started %d loops %ld produced %llu dropped %llu refused %ld", started, &loops, &produced,
                          &dropped, refused) == 5,
              "%s", out);
}

static int accept_registration(int lfd) {
    struct pollfd pf = {lfd, POLLIN, 0};
    cr_assert_gt(poll(&pf, 1, 5000), 0, "the provider did not connect");
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    cr_assert_geq(c, 0);
    pf.fd = c;
    cr_assert_gt(poll(&pf, 1, 3000), 0);
    int nfds = 0;
    cr_assert_gt(tracec_i_rec_recv(c, &g_m, NULL, &nfds), 0);
    cr_assert(g_m.type == TRACEC_I_MSG_REGISTER || g_m.type == TRACEC_I_MSG_REGISTER_SYNC);
    if (g_m.type == TRACEC_I_MSG_REGISTER_SYNC) {
        memset(&g_m, 0, TRACEC_I_MSG_FIXED);
        g_m.type = TRACEC_I_MSG_REGISTERED;
        g_m.a = 1;
        g_m.text[0] = '\0';
        cr_assert_eq(tracec_i_rec_send(c, &g_m, NULL, 0), 0);
    }
    return c;
}

/* Initialize (STREAMING, two halves of `half` bytes, `wait_ms`) with a memfd sealed with `seals`, then
   Start; returns the memfd, our fifo end in *fifo. */
/* What initialize_and_start() sends besides its arguments: the session clock (0: none given, BOOTTIME), the
   mode, and a policy in place of the one its wait implies (0: that one). */
static uint64_t g_init_clock;
static uint32_t g_init_mode = TRACEC_BUFFERING_MODE_STREAMING, g_init_policy;

static int initialize_and_start(int conn, uint32_t half, uint32_t wait_ms, int seals, int *fifo) {
    int sp[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
    size_t size = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_STREAMING, half, 0);
    cr_assert_gt(size, 0);
    int memfd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_eq(ftruncate(memfd, (off_t)size), 0);
    if (seals) cr_assert_eq(fcntl(memfd, F_ADD_SEALS, seals), 0);
    uint32_t policy = wait_ms > 0 ? TRACEC_BUFFER_POLICY_LOSSLESS : TRACEC_BUFFER_POLICY_DISCARD;
    memset(&g_m, 0, TRACEC_I_MSG_FIXED);
    g_m.type = TRACEC_I_MSG_INITIALIZE;
    g_m.a = g_init_mode | wait_ms << 8 | (g_init_policy ? g_init_policy : policy) << TRACEC_I_INIT_POLICY_SHIFT;
    g_m.b = half;
    g_m.c = g_init_clock << TRACEC_I_INIT_CLOCK_SHIFT |
            (uint64_t)TRACEC_I_PROTOCOL_VERSION << TRACEC_I_INIT_VERSION_SHIFT;
    g_m.text[0] = '\0';
    int fds[2] = {memfd, sp[1]};
    cr_assert_eq(tracec_i_rec_send(conn, &g_m, fds, 2), 0);
    close(sp[1]);
    memset(&g_m, 0, TRACEC_I_MSG_FIXED);
    g_m.type = TRACEC_I_MSG_START;
    g_m.a = TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE;
    g_m.text[0] = '\0';
    cr_assert_eq(tracec_i_rec_send(conn, &g_m, NULL, 0), 0);
    *fifo = sp[0];
    return memfd;
}

/* Whether STARTED comes on the fifo within `ms`. */
static bool fifo_started(int fifo, int ms) {
    long end = now_ms() + ms;
    while (now_ms() < end) {
        struct pollfd pf = {fifo, POLLIN, 0};
        if (poll(&pf, 1, 50) <= 0) continue;
        tracec_i_fifo_packet pk;
        ssize_t k = recv(fifo, &pk, sizeof pk, MSG_DONTWAIT);
        if (k <= 0) return false;
        if (k == (ssize_t)sizeof pk && pk.type == TRACEC_I_FIFO_STARTED) return true;
    }
    return false;
}

/*
 * The program refused the recorder's buffer or session (`why` in its message, counted in `refused`), never
 * started tracing, and ran on to a clean exit; then the recorder's ends are closed.
 */
static void expect_refused(pid_t pid, const char *what, const char *why, int memfd, int fifo, int conn, int lfd) {
    int st = wait_exit(pid, 10000);
    char *out = prov_output();
    cr_assert_neq(st, -1, "%s: the program hung:\n%s", what, out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the program died (status 0x%x):\n%s", what, st, out);
    int started = -1;
    long refused = -1;
    hostile_counts(out, &started, &refused);
    cr_expect_eq(started, 0, "%s: it must not trace into that buffer:\n%s", what, out);
    cr_expect_geq(refused, 1, "%s: %s", what, out);
    cr_expect_not_null(strstr(out, why), "%s: and says why:\n%s", what, out);
    free(out);
    close(memfd);
    close(fifo);
    close(conn);
    close(lfd);
    unlink(g_sock);
}

/*
 * A recorder that sends a buffer whose size is not sealed and shrinks it
 * once the program writes: the program must refuse the buffer (not map it)
 * and run on, not die of SIGBUS.
 */
Test(hostile_recorder, unsealed_buffer_is_refused_not_fatal) {
    const int variants[] = {0, F_SEAL_SHRINK | F_SEAL_GROW}; /* no seal; size sealed but seals not sealed */
    for (size_t v = 0; v < 2; v++) {
        int lfd = listen_at(g_sock, 4);
        const char *args[] = {"hostile", "shrunk", "600", NULL};
        pid_t pid = spawn_provider(g_sock, args);
        int conn = accept_registration(lfd), fifo;
        int memfd = initialize_and_start(conn, 4096, 0, variants[v], &fifo);
        (void)fifo_started(fifo, 1500);
        if (variants[v] == 0)
            cr_assert_eq(ftruncate(memfd, 0), 0); /* its mapping now faults */
        else
            cr_assert_eq(fcntl(memfd, F_ADD_SEALS, F_SEAL_WRITE) == 0 || ftruncate(memfd, 0) == 0, true);
        expect_refused(pid, v == 0 ? "no seal" : "seals not sealed", "not sealed", memfd, fifo, conn, lfd);
    }
}

/*
 * A recorder whose INITIALIZE asks for a session the program cannot keep: a
 * clock it does not keep (4, MONOTONIC_RAW; 200, no clock at all), a mode
 * or a policy out of range.  The program refuses the session, says why,
 * and runs on.
 */
Test(hostile_recorder, unusable_session_is_refused) {
    static const struct {
        const char *what, *why;
        uint64_t clock;
        uint32_t mode, policy;
    } cases[] = {
        {"clock 4", "a session clock (4)", 4, TRACEC_BUFFERING_MODE_STREAMING, 0},
        {"clock 200", "a session clock (200)", 200, TRACEC_BUFFERING_MODE_STREAMING, 0},
        {"mode 9", "a buffering mode (9) out of range", 0, 9, 0},
        {"policy 15", "or policy (15) out of range", 0, TRACEC_BUFFERING_MODE_STREAMING, 15},
    };
    for (size_t v = 0; v < sizeof cases / sizeof cases[0]; v++) {
        int lfd = listen_at(g_sock, 4);
        const char *args[] = {"hostile", "unusable", "300", NULL};
        pid_t pid = spawn_provider(g_sock, args);
        int conn = accept_registration(lfd), fifo;
        g_init_clock = cases[v].clock, g_init_mode = cases[v].mode, g_init_policy = cases[v].policy;
        int memfd = initialize_and_start(conn, 4096, 0, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, &fifo);
        g_init_clock = 0, g_init_mode = TRACEC_BUFFERING_MODE_STREAMING, g_init_policy = 0;
        cr_expect_not(fifo_started(fifo, 1000), "%s: it must not start", cases[v].what);
        expect_refused(pid, cases[v].what, cases[v].why, memfd, fifo, conn, lfd);
    }
}

/*
 * A recorder that asks for a 10 s wait and never saves a half: each
 * writer waits at most the application's cap (10 ms by default), once,
 * not 10 s per packet; unregister returns in time.
 */
Test(hostile_recorder, recorder_cannot_stall_the_writers) {
    int lfd = listen_at(g_sock, 4);
    const char *args[] = {"hostile", "staller", "500", NULL};
    long t0 = now_ms();
    pid_t pid = spawn_provider(g_sock, args);
    int conn = accept_registration(lfd), fifo;
    int memfd = initialize_and_start(conn, 4096, 10000, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, &fifo);
    cr_assert(fifo_started(fifo, 2000), "the provider did not start");
    int st = wait_exit(pid, 20000);
    long took = now_ms() - t0;
    char *out = prov_output();
    cr_assert_neq(st, -1, "the program hung:\n%s", out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
    long loops = 0, unreg = -1;
    const char *p = strstr(out, "loops ");
    cr_assert_not_null(p, "%s", out);
    cr_assert_eq(sscanf(p, "loops %ld", &loops), 1);
    p = strstr(out, "unregister_ms ");
    cr_assert(p && sscanf(p, "unregister_ms %ld", &unreg) == 1, "%s", out);
    /* 500 ms of writing: thousands of packets, not the 1 a 10 s wait per packet allows */
    cr_expect_gt(loops, 1000, "the writer was stalled:\n%s", out);
    cr_expect_lt(took, 4000, "%ld ms", took);
    cr_expect_leq(unreg, 200, "unregister took %ld ms", unreg);
    free(out);
    close(memfd);
    close(fifo);
    close(conn);
    close(lfd);
}

/*
 * A recorder whose accept queue is full never accepts: connect() does not
 * block the provider's thread, so unregister (and exit) return in time.
 * A full queue is a busy recorder, not none: the synchronous registration
 * waits for its answer its 5 s, and no longer.
 */
Test(hostile_recorder, full_accept_queue_does_not_hang_unregister) {
    int lfd = listen_at(g_sock, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", g_sock);
    int fill[16], n = 0;
    for (; n < 16; n++) { /* fill the queue: connect fails with EAGAIN once it is full */
        fill[n] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (connect(fill[n], (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fill[n]);
            break;
        }
    }
    cr_assert_lt(n, 16, "the accept queue never filled");
    const char *args[] = {"hostile", "queued", "300", NULL};
    long t0 = now_ms();
    pid_t pid = spawn_provider(g_sock, args);
    int st = wait_exit(pid, 12000);
    long took = now_ms() - t0;
    char *out = prov_output();
    cr_assert_neq(st, -1, "the program hung in unregister");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
    long unreg = -1;
    const char *p = strstr(out, "unregister_ms ");
    cr_assert(p && sscanf(p, "unregister_ms %ld", &unreg) == 1, "%s", out);
    cr_expect_leq(unreg, 200, "unregister took %ld ms", unreg);
    cr_expect_lt(took, 5000 + 1000 + 300 + 2000, "%ld ms: the 5 s wait, its own 1 s wait for Start, its 300 ms",
                 took);
    cr_expect_geq(took, 5000, "%ld ms: it waited for the busy recorder", took);
    free(out);
    for (int i = 0; i < n; i++) close(fill[i]);
    close(lfd);
}

/*
 * Another user's listener.  The program (root here) must not register with
 * it: not when the socket's directory belongs to that user, not when it is
 * writable by others, and not when a socket of that user's turns up in the
 * program's own directory (SO_PEERCRED, checked before anything is sent).
 * The listener is python3 as uid 65534 through setpriv; it prints "got N"
 * if anything reached it, else "eof" or "nothing".  The program starts once
 * the listener's socket exists (up to 10 s: python3's start under a loaded
 * sanitizer run took over the 2 s this waited before).
 */
static const char k_listener_py[] =
    "import os, socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
    "s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(8); s.settimeout(3)\n"
    "try:\n"
    "    c, _ = s.accept(); c.settimeout(2)\n"
    "    d = c.recv(65536)\n"
    "    print('got', len(d)) if d else print('eof')\n"
    "except (socket.timeout, OSError):\n"
    "    print('nothing')\n";

static void other_user_case(const char *listen_dir, const char *provider_dir, const char *expect_why) {
    char mv[512] = "", cmd[4096];
    if (strcmp(listen_dir, provider_dir) != 0) snprintf(mv, sizeof mv, "mv %s/r.sock %s/r.sock\n", listen_dir, provider_dir);
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c \"$LISTENER_PY\" %s/r.sock "
             "> %s/listener.out 2>&1 &\n"
             "for i in $(seq 500); do [ -S %s/r.sock ] && break; sleep 0.02; done\n"
             "%s"
             "TRACEC_RECORDER_SOCKET=%s/r.sock %s hostile victim 300 > %s/prov.out 2>&1; wait",
             listen_dir, g_dir, listen_dir, mv, provider_dir, PROV, g_dir);
    cr_assert_eq(setenv("LISTENER_PY", k_listener_py, 1), 0);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char path[160], got[256] = "";
    snprintf(path, sizeof path, "%s/listener.out", g_dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t k = fread(got, 1, sizeof got - 1, f);
    got[k] = '\0';
    fclose(f);
    char *out = prov_output();
    cr_expect_null(strstr(got, "got"), "the program registered with another user's listener (%s):\n%s", got, out);
    cr_expect_not_null(strstr(out, expect_why), "want '%s' in:\n%s", expect_why, out);
    int started = -1;
    long refused = -1;
    hostile_counts(out, &started, &refused);
    cr_expect_eq(started, 0, "%s", out);
    cr_expect_geq(refused, 1, "the refusal is counted:\n%s", out);
    free(out);
}

/* The other_user suite runs as its own ctest entry (record_hostile_other_user), which ctest counts as skipped
   (SKIP_RETURN_CODE) where there is no root or setpriv; the entry of the other suites skips it. */
static void need_root_and_setpriv(void) {
    bool separate = getenv("RECORD_OTHER_USER_SEPARATE") != NULL;
    if (!separate && geteuid() == 0 && system("command -v setpriv > /dev/null 2>&1") == 0) return;
    teardown(); /* a skipped test's .fini does not run */
    if (separate) cr_skip_test("run as the ctest entry record_hostile_other_user");
    cr_skip_test("needs root and setpriv (util-linux) to play another user");
}

TestSuite(other_user, .init = setup, .fini = teardown, .timeout = 60);

Test(other_user, directory_of_another_user_is_refused) {
    need_root_and_setpriv();
    char evil[96], cmd[512];
    snprintf(evil, sizeof evil, "%s/evil", g_dir);
    snprintf(cmd, sizeof cmd, "chmod 711 %s && mkdir -m 755 %s && chown 65534:65534 %s", g_dir, evil, evil);
    cr_assert_eq(system(cmd), 0);
    other_user_case(evil, evil, "belongs to uid 65534");
}

Test(other_user, directory_writable_by_others_is_refused) {
    need_root_and_setpriv();
    char open_dir[96], cmd[512];
    snprintf(open_dir, sizeof open_dir, "%s/open", g_dir);
    snprintf(cmd, sizeof cmd, "chmod 711 %s && mkdir -m 777 %s", g_dir, open_dir);
    cr_assert_eq(system(cmd), 0);
    other_user_case(open_dir, open_dir, "writable by group or others");
}

Test(other_user, listener_of_another_user_is_refused_before_registering) {
    need_root_and_setpriv();
    char evil[96], mine[96], cmd[512];
    snprintf(evil, sizeof evil, "%s/evil", g_dir);
    snprintf(mine, sizeof mine, "%s/mine", g_dir);
    snprintf(cmd, sizeof cmd, "chmod 711 %s && mkdir -m 755 %s && chown 65534:65534 %s && mkdir -m 700 %s", g_dir,
             evil, evil, mine);
    cr_assert_eq(system(cmd), 0);
    other_user_case(evil, mine, "runs as uid 65534");
}
