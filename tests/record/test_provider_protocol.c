/*
 * test_provider_protocol.c - the provider library against a scripted fake
 * recorder in the test: the provider rules (a second Initialize before
 * Terminate is ignored, Start while started and Stop while stopped are
 * ignored, several Start/Stop runs with RETAIN keep the buffer, Terminate
 * stops first and then closes the buffer and the fifo), registration
 * (name limits, one provider per process, the synchronous form's
 * `started`), the protocol version, and packets landing in the shared
 * buffer (the buffer engine's layout, tracec/abi/shm_layout.h: descriptors
 * in its durable part, regions handed with SAVE_BUFFER and freed by
 * BUFFER_SAVED).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/abi/buffer_abi.h"
#include "tracec/abi/shm_layout.h"
#include "tracec/buffer.h"
#include "tracec/recorder.h"
#include "tracec/context.h"
#include "tracec/provider.h"

#define HALF 16384u

static char g_dir[64], g_sock[96];
static int g_listen = -1;
static tracec_i_msg g_m;

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-prottest-XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    snprintf(g_sock, sizeof g_sock, "%s/r.sock", g_dir);
    g_listen = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", g_sock);
    cr_assert_eq(bind(g_listen, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(g_listen, 4), 0);
    setenv(TRACEC_RECORDER_SOCKET_ENV, g_sock, 1);
}

static void teardown(void) {
    close(g_listen);
    unlink(g_sock);
    rmdir(g_dir);
}

static int accept_provider(void) {
    struct pollfd pf = {g_listen, POLLIN, 0};
    cr_assert_gt(poll(&pf, 1, 3000), 0, "the provider did not connect");
    int c = accept4(g_listen, NULL, NULL, SOCK_CLOEXEC);
    cr_assert_geq(c, 0);
    return c;
}

/* Waits for one message on `fd` (a control socket); false on timeout. */
static bool recv_msg(int fd, int timeout_ms) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, timeout_ms) <= 0) return false;
    int nfds = 0;
    return tracec_i_rec_recv(fd, &g_m, NULL, &nfds) > 0;
}

/* The last SAVE_BUFFER fifo_next passed over. */
static tracec_i_fifo_packet g_save;
static int g_saves;

/* The next fifo packet's type, 0 on timeout, -1 when the fifo was closed; SAVE_BUFFER packets (the buffer
   handing its regions, at a stop too) are passed over unless `saves`, and remembered in g_save. */
static int fifo_next_of(int fifo, int timeout_ms, bool saves) {
    for (;;) {
        struct pollfd pf = {fifo, POLLIN, 0};
        if (poll(&pf, 1, timeout_ms) <= 0) return 0;
        tracec_i_fifo_packet pk;
        ssize_t k = recv(fifo, &pk, sizeof pk, MSG_DONTWAIT);
        if (k == 0) return -1;
        if (k != (ssize_t)sizeof pk) return -2;
        if (pk.type == TRACEC_I_FIFO_SAVE_BUFFER) {
            g_save = pk;
            g_saves++;
            if (!saves) continue;
        }
        return (int)pk.type;
    }
}

static int fifo_next(int fifo, int timeout_ms) { return fifo_next_of(fifo, timeout_ms, false); }

/* The recorder's side of a shared buffer: the memfd, mapped read-only. */
typedef struct shm {
    int memfd;
    const uint8_t *map;
    size_t size;
    const tracec_shm_header *h;
} shm;

static shm make_shm(uint32_t mode, size_t size, size_t durable) {
    shm s;
    s.size = tracec_buffer_memory_size((tracec_buffering_mode_t)mode, size, durable);
    cr_assert_gt(s.size, 0);
    s.memfd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_eq(ftruncate(s.memfd, (off_t)s.size), 0);
    cr_assert_eq(fcntl(s.memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    s.map = mmap(NULL, s.size, PROT_READ, MAP_SHARED, s.memfd, 0);
    cr_assert_neq(s.map, MAP_FAILED);
    s.h = (const tracec_shm_header *)(const void *)s.map;
    return s;
}

/* Region r's bytes in the mapping, and how far the writers got in it (its reserved hint, or its extent). */
static const uint8_t *region_at(const shm *s, uint32_t r, uint32_t *len) {
    const tracec_shm_region *g = r == 2 ? &s->h->durable : &s->h->half[r];
    uint32_t ext = __atomic_load_n(&g->extent, __ATOMIC_ACQUIRE), res = __atomic_load_n(&g->reserved, __ATOMIC_RELAXED);
    *len = ext > res ? ext : res;
    uint64_t halves = s->h->halves;
    return s->map + TRACEC_SHM_HEADER_BYTES + (r == 2 ? halves : r) * s->h->half_bytes;
}

static tracec_status_t count_one(void *data, const uint8_t *p, size_t n, uint32_t c, uint32_t k) {
    (void)p, (void)n, (void)c, (void)k;
    (*(long *)data)++;
    return TRACEC_STATUS_SUCCESS;
}

/* The records region r holds (read as the recorder walks it: chunks up to their committed length). */
static long records(const shm *s, uint32_t r) {
    if (s->h->magic != TRACEC_SHM_MAGIC) return 0;
    if (r == 1 && s->h->halves < 2) return 0;
    if (r == 2 && s->h->durable_bytes == 0) return 0;
    uint32_t len;
    const uint8_t *p = region_at(s, r, &len);
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, p, len);
    long n = 0;
    tracec_recorder_region_result res;
    uint64_t gen = r == 2 ? s->h->durable.gen : s->h->half[r].gen;
    tracec_status_t st = tracec_recorder_read_region(copy, len, gen, r == 2, count_one, &n, &res);
    (void)st; /* a walk that ends early counts what it read */
    free(copy);
    return n;
}

static long all_records(const shm *s) { return records(s, 0) + records(s, 1) + records(s, 2); }

static void send_ctl(int conn, uint32_t type, uint32_t a, const char *text) {
    memset(&g_m, 0, TRACEC_I_MSG_FIXED);
    g_m.type = type;
    g_m.a = a;
    snprintf(g_m.text, sizeof g_m.text, "%s", text ? text : "");
    cr_assert_eq(tracec_i_rec_send(conn, &g_m, NULL, 0), 0);
}

/* Initialize with a fresh buffer of `mode` (HALF bytes per half, `durable` bytes of durable part; the
   memfd sized for `sized` of them); `a_flags` added to `a`, `version` in `c`; returns our end of the fifo. */
static int send_initialize_ex(int conn, shm *s, const char *categories, uint32_t mode, size_t durable, size_t sized,
                              uint32_t a_flags, uint64_t version) {
    int sp[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
    *s = make_shm(mode, HALF, sized);
    memset(&g_m, 0, TRACEC_I_MSG_FIXED);
    g_m.type = TRACEC_I_MSG_INITIALIZE;
    g_m.a = mode | a_flags;
    g_m.b = HALF;
    g_m.c = durable | version << TRACEC_I_INIT_VERSION_SHIFT;
    snprintf(g_m.text, sizeof g_m.text, "%s", categories);
    int fds[2] = {s->memfd, sp[1]};
    cr_assert_eq(tracec_i_rec_send(conn, &g_m, fds, 2), 0);
    close(sp[1]);
    return sp[0];
}

static int send_initialize(int conn, shm *s, const char *categories) {
    return send_initialize_ex(conn, s, categories, TRACEC_BUFFERING_MODE_STREAMING, 0, 0, 0,
                              TRACEC_I_PROTOCOL_VERSION);
}

/* Initialize (all categories) and Start; returns our end of the fifo once the provider said Started. */
static int send_initialize_and_start(int conn, shm *s) {
    int fifo = send_initialize(conn, s, "");
    send_ctl(conn, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STARTED);
    return fifo;
}

TestSuite(provider_protocol, .init = setup, .fini = teardown, .timeout = 30);

Test(provider_protocol, provider_rules) {
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("proto", &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    cr_expect_eq(g_m.type, TRACEC_I_MSG_REGISTER);
    cr_expect_str_eq(g_m.text, "proto");
    cr_expect_eq(g_m.a, (uint32_t)getpid());
    cr_expect_eq(g_m.b, TRACEC_I_PROTOCOL_VERSION);

    shm a, b;
    int fifo = send_initialize(conn, &a, "gfx");
    int fifo2 = send_initialize(conn, &b, "io"); /* ignored: no Terminate in between */
    send_ctl(conn, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, "extra");
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STARTED);
    cr_expect_eq(fifo_next(fifo2, 100), -1, "the ignored Initialize's fifo is closed by the provider");
    cr_expect(tracec_provider_category_enabled(p, "gfx"));
    cr_expect(tracec_provider_category_enabled(p, "extra"), "additional categories of Start");
    cr_expect_not(tracec_provider_category_enabled(p, "io"), "categories of the ignored Initialize");

    send_ctl(conn, TRACEC_I_MSG_START, 0, NULL); /* Start while started: ignored */
    cr_expect_eq(fifo_next(fifo, 200), 0, "no second STARTED");
    cr_expect_eq(tracec_provider_instant(p, "x"), TRACEC_STATUS_SUCCESS);
    long fill1 = all_records(&a);
    cr_expect_gt(fill1, 0, "packets go into the first Initialize's buffer");
    cr_expect_eq(all_records(&b), 0);
    cr_expect_neq(b.h->magic, TRACEC_SHM_MAGIC, "no buffer was made in the ignored Initialize's memfd");
    tracec_i_blk first;
    memcpy(&first, a.map + TRACEC_SHM_HEADER_BYTES, sizeof first);
    cr_expect_eq(first.size, 0xffffffffu, "a half starts with a writer's chunk");
    cr_expect_eq(first.kind, TRACEC_SHM_CHUNK_TAG(a.h->half[0].gen), "tagged with the half's generation");

    send_ctl(conn, TRACEC_I_MSG_STOP, 0, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STOPPED);
    send_ctl(conn, TRACEC_I_MSG_STOP, 0, NULL); /* Stop while stopped: ignored */
    cr_expect_eq(fifo_next(fifo, 200), 0, "no second STOPPED");
    cr_expect_eq(tracec_provider_instant(p, "y"), TRACEC_STATUS_CLOSED);
    cr_expect_eq(all_records(&a), fill1);

    /* a second run, RETAIN: the buffer keeps the first run's records */
    send_ctl(conn, TRACEC_I_MSG_START, 3, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STARTED);
    cr_expect_eq(tracec_provider_instant(p, "z"), TRACEC_STATUS_SUCCESS);
    cr_expect_gt(all_records(&a), fill1);
    /* a fork child does not write into its parent's buffer */
    long before = all_records(&a);
    pid_t kid = fork();
    if (kid == 0) _exit(tracec_provider_instant(p, "child") == TRACEC_STATUS_CLOSED && !tracec_provider_started(p) ? 0 : 1);
    int kst;
    waitpid(kid, &kst, 0);
    cr_expect(WIFEXITED(kst) && WEXITSTATUS(kst) == 0, "the fork child's provider is off");
    cr_expect_eq(all_records(&a), before);
    cr_expect(tracec_provider_started(p), "the parent's is not");

    /* Terminate while started: STOPPED first, then buffer and fifo closed */
    send_ctl(conn, TRACEC_I_MSG_TERMINATE, 0, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STOPPED);
    cr_expect_eq(fifo_next(fifo, 3000), -1, "the fifo is closed after Terminate");
    cr_expect_not(tracec_provider_started(p));
    tracec_provider_stats st = tracec_provider_get_stats(p);
    cr_expect_eq(st.runs, 2);
    cr_expect_eq(st.dropped, 0);

    /* after Terminate, a new Initialize is obeyed */
    shm c;
    int fifo3 = send_initialize(conn, &c, "");
    send_ctl(conn, TRACEC_I_MSG_START, 0, NULL);
    cr_assert_eq(fifo_next(fifo3, 3000), TRACEC_I_FIFO_STARTED);
    cr_expect(tracec_provider_category_enabled(p, "anything"), "no categories: all enabled");
    tracec_provider_unregister(p);
    cr_expect_eq(fifo_next(fifo3, 3000), TRACEC_I_FIFO_STOPPED, "unregister stops and says so");
    close(conn);
}

Test(provider_protocol, streaming_halves_save_and_drop) {
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("halves", &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    shm a;
    int fifo = send_initialize_and_start(conn, &a);
    /* fill half 0: the writer goes on in half 1, and the buffer hands half 0 (SAVE_BUFFER) */
    int n = 0;
    while (__atomic_load_n(&a.h->active, __ATOMIC_ACQUIRE) == 0 && n < 100000) {
        tracec_status_t fs = tracec_provider_instant(p, "fill");
        cr_assert_eq(fs, TRACEC_STATUS_SUCCESS, "instant %d: %s", n, tracec_status_str(fs));
        n++;
    }
    int type = fifo_next_of(fifo, 3000, true);
    cr_assert_eq(type, TRACEC_I_FIFO_SAVE_BUFFER);
    cr_expect_eq(g_save.region, 0u);
    cr_expect_eq(g_save.gen, a.h->half[0].gen);
    cr_expect_eq(a.h->half[0].handed, (uint32_t)TRACEC_SHM_REGION_HANDED);
    cr_expect_eq(g_save.extent, a.h->half[0].extent);
    cr_expect_eq(__atomic_load_n(&a.h->active, __ATOMIC_ACQUIRE), 1u);
    /* we are a late recorder: half 1 fills too, then packets are dropped and counted */
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    for (int i = 0; i < 100000 && st == TRACEC_STATUS_SUCCESS; i++) st = tracec_provider_instant(p, "more");
    cr_expect_eq(st, TRACEC_STATUS_BUFFER_FULL);
    cr_expect_eq(tracec_provider_get_stats(p).dropped, 1);
    /* saved: half 0 is free again and the provider switches to it */
    uint64_t gen0 = g_save.gen;
    tracec_i_rec_fifo_send(fifo, TRACEC_I_FIFO_BUFFER_SAVED, 0, gen0, 0);
    /* the provider's control thread takes it from the fifo: half 0 is reset (gen first) and free */
    for (int i = 0; i < 3000 && __atomic_load_n(&a.h->half[0].gen, __ATOMIC_ACQUIRE) == gen0; i++) usleep(1000);
    cr_assert_gt(a.h->half[0].gen, gen0, "half 0 was reset (gen first) once saved");
    /* the next packet that needs room switches back to half 0 (freed) and half 1 is handed */
    for (int i = 0; i < 100000 && __atomic_load_n(&a.h->active, __ATOMIC_ACQUIRE) == 1; i++)
        cr_assert_eq(tracec_provider_instant(p, "again"), TRACEC_STATUS_SUCCESS);
    type = fifo_next_of(fifo, 3000, true);
    cr_expect_eq(type, TRACEC_I_FIFO_SAVE_BUFFER, "half 1 is handed now");
    cr_expect_eq(g_save.region, 1u);
    cr_expect_eq(a.h->active, 0u);
    cr_expect_geq(tracec_provider_get_stats(p).saved, 1);
    tracec_provider_unregister(p);
    close(conn);
}

static shm g_sync_shm;
static int g_sync_fifo = -1;

/* A recorder that is tracing: answers started=1, then Initialize and Start, as the real one does. */
static void *answer_registered(void *arg) {
    (void)arg;
    int conn = accept_provider();
    recv_msg(conn, 3000);
    send_ctl(conn, TRACEC_I_MSG_REGISTERED, g_m.type == TRACEC_I_MSG_REGISTER_SYNC, NULL);
    g_sync_fifo = send_initialize(conn, &g_sync_shm, "");
    send_ctl(conn, TRACEC_I_MSG_START, 0, NULL);
    return (void *)(intptr_t)conn;
}

Test(provider_protocol, register_sync_says_whether_started) {
    pthread_t t;
    pthread_create(&t, NULL, answer_registered, NULL);
    tracec_provider *p;
    bool started = false;
    cr_assert_eq(tracec_provider_register_sync("sync", &started, &p), TRACEC_STATUS_SUCCESS);
    void *conn;
    pthread_join(t, &conn);
    cr_expect(started, "the fake recorder answered started=1 to a REGISTER_SYNC, then Initialize and Start");
    cr_expect(tracec_provider_started(p), "started: the provider has handled Start when register_sync returns");
    cr_expect_eq(tracec_provider_instant(p, "first"), TRACEC_STATUS_SUCCESS, "so the first event is written");
    tracec_provider *q;
    cr_expect_eq(tracec_provider_register("second", &q), TRACEC_STATUS_BAD_STATE);
    tracec_provider_unregister(p);
    close((int)(intptr_t)conn);
    close(g_sync_fifo);
}

Test(provider_protocol, register_sync_without_recorder) {
    close(g_listen);
    unlink(g_sock);
    g_listen = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    tracec_provider *p;
    bool started = true;
    cr_assert_eq(tracec_provider_register_sync("alone", &started, &p), TRACEC_STATUS_SUCCESS);
    cr_expect_not(started);
    cr_expect_eq(tracec_provider_slice_begin(p, "off"), TRACEC_STATUS_CLOSED);
    tracec_provider_unregister(p);
}

Test(provider_protocol, names) {
    tracec_provider *p;
    char longname[102];
    memset(longname, 'n', 101);
    longname[101] = '\0';
    cr_expect_eq(tracec_provider_register(longname, &p), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_provider_register("", &p), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_provider_register(NULL, &p), TRACEC_STATUS_INVALID_ARGUMENT);
    longname[100] = '\0';
    cr_expect_eq(tracec_provider_register(longname, &p), TRACEC_STATUS_SUCCESS, "100 chars is the limit");
    tracec_provider_unregister(p);
}

/* Declared categories travel with REGISTER; an Initialize flagged NO_CATEGORIES enables none of them. */
Test(provider_protocol, declared_categories) {
    tracec_provider *p;
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = "cats";
    reg.categories = "gfx,io";
    cr_assert_eq(tracec_provider_register_with(&reg, NULL, &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    cr_expect_eq(g_m.type, TRACEC_I_MSG_REGISTER);
    cr_expect_str_eq(g_m.text, "cats\ngfx,io");
    shm a;
    int fifo = send_initialize_and_start(conn, &a);
    cr_expect(tracec_provider_category_enabled(p, "anything"), "an empty list without the flag: all");
    send_ctl(conn, TRACEC_I_MSG_TERMINATE, 0, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STOPPED);
    cr_assert_eq(fifo_next(fifo, 3000), -1);

    shm b;
    int fifo2 = send_initialize_ex(conn, &b, "", TRACEC_BUFFERING_MODE_STREAMING, 0, 0, TRACEC_I_INIT_NO_CATEGORIES,
                                   TRACEC_I_PROTOCOL_VERSION);
    send_ctl(conn, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL);
    cr_assert_eq(fifo_next(fifo2, 3000), TRACEC_I_FIFO_STARTED);
    cr_expect_not(tracec_provider_category_enabled(p, "gfx"), "NO_CATEGORIES: none enabled");
    cr_expect_not(tracec_provider_category_enabled(p, "io"));
    tracec_provider_unregister(p);
    close(conn);

    reg.categories = "gfx,,io";
    cr_expect_eq(tracec_provider_register_with(&reg, NULL, &p), TRACEC_STATUS_INVALID_ARGUMENT);
    reg.categories = NULL;
    reg.name = "two\nlines";
    cr_expect_eq(tracec_provider_register_with(&reg, NULL, &p), TRACEC_STATUS_INVALID_ARGUMENT);
    reg.name = "ok";
    reg.struct_size = 8; /* from some other struct */
    cr_expect_eq(tracec_provider_register_with(&reg, NULL, &p), TRACEC_STATUS_INVALID_ARGUMENT);
}

/* Whether `what` is in the bytes region r holds so far. */
static bool has(const shm *s, uint32_t r, const char *what) {
    uint32_t len;
    const uint8_t *p = region_at(s, r, &len);
    return memmem(p, len, what, strlen(what)) != NULL;
}

/* One packet written by hand on the calling thread's track (as record_ext_provider does). */
static tracec_status_t hand_packet(tracec_provider *p) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    tracec_provider_begin_packet(p, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 5);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(p));
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    return tracec_provider_end_packet(p, &w, &pkt.msg);
}

/*
 * The descriptors (the process's at Start, a thread's before its first packet, even one written by hand)
 * go into the durable part of a CIRCULAR buffer, the events into the halves; an Initialize whose memfd
 * cannot hold the durable part it asks for is ignored.
 */
Test(provider_protocol, durable_area_holds_the_descriptors) {
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("durable-proc", &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    shm a;
    int fifo = send_initialize_ex(conn, &a, "", TRACEC_BUFFERING_MODE_CIRCULAR, 8192, 8192, 0,
                                  TRACEC_I_PROTOCOL_VERSION);
    send_ctl(conn, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STARTED);
    long d0 = records(&a, 2);
    cr_expect_eq(d0, 1, "the process's descriptor is written at Start");
    cr_expect(has(&a, 2, "durable-proc"));
    cr_expect_eq(records(&a, 0) + records(&a, 1), 0, "nothing in the halves yet");
    pthread_setname_np(pthread_self(), "hand-writer");
    cr_expect_eq(hand_packet(p), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(records(&a, 2), d0 + 1, "the thread is described before its first packet");
    cr_expect(has(&a, 2, "hand-writer"));
    cr_expect_eq(records(&a, 0), 1);
    cr_expect_not(has(&a, 0, "hand-writer"), "the half holds only the event");
    cr_expect_eq(hand_packet(p), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(records(&a, 2), d0 + 1, "once per run");
    tracec_provider_stats st = tracec_provider_get_stats(p);
    cr_expect_eq(st.produced, 4u, "descriptors count as produced packets");
    send_ctl(conn, TRACEC_I_MSG_TERMINATE, 0, NULL);
    cr_assert_eq(fifo_next(fifo, 3000), TRACEC_I_FIFO_STOPPED);
    cr_assert_eq(fifo_next(fifo, 3000), -1);
    cr_expect_geq(g_saves, 2, "the stop handed the half and the durable part");

    /* a durable part the memfd cannot hold: Initialize is ignored (the memfd is never mapped) */
    shm c;
    fifo = send_initialize_ex(conn, &c, "", TRACEC_BUFFERING_MODE_CIRCULAR, 1u << 20, 8192, 0,
                              TRACEC_I_PROTOCOL_VERSION);
    cr_expect_eq(fifo_next(fifo, 3000), -1, "the provider closed the fifo of the ignored Initialize");
    send_ctl(conn, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL);
    cr_expect_not(tracec_provider_wait_started(p, 200), "not initialized: Start is ignored");
    cr_expect_geq(tracec_provider_get_stats(p).refused, 1);
    tracec_provider_unregister(p);
    close(conn);
}

/* A recorder of another protocol version is refused at Initialize, with a message, and counted. */
Test(provider_protocol, other_protocol_version_is_refused) {
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("versions", &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    shm a;
    int fifo = send_initialize_ex(conn, &a, "", TRACEC_BUFFERING_MODE_STREAMING, 0, 0, 0, 0); /* a version 1 one */
    cr_expect_eq(fifo_next(fifo, 3000), -1, "the provider closed the fifo of the refused Initialize");
    cr_expect_eq(tracec_provider_get_stats(p).refused, 1);
    cr_expect_neq(a.h->magic, TRACEC_SHM_MAGIC, "its memfd was not used");
    tracec_provider_unregister(p);
    close(conn);
}

/* A provider registered after another was unregistered (in the same process, on the same thread) is a new
   connection, so a new sequence: the slice left open under the first writes no END under the second, and
   the thread is described again before its first packet. */
Test(provider_protocol, a_provider_registered_again_starts_afresh) {
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("first", &p), TRACEC_STATUS_SUCCESS);
    int conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    shm a;
    int fifo = send_initialize_and_start(conn, &a);
    pthread_setname_np(pthread_self(), "again-writer");
    cr_expect_eq(tracec_provider_slice_begin(p, "open"), TRACEC_STATUS_SUCCESS);
    cr_expect(has(&a, 0, "again-writer"));
    tracec_provider_unregister(p);
    close(conn);
    close(fifo);

    cr_assert_eq(tracec_provider_register("second", &p), TRACEC_STATUS_SUCCESS);
    conn = accept_provider();
    cr_assert(recv_msg(conn, 3000));
    shm b;
    fifo = send_initialize_and_start(conn, &b);
    long f0 = records(&b, 0);
    cr_expect_eq(tracec_provider_slice_end(p), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(records(&b, 0), f0, "the END of a slice begun under another provider is not written");
    cr_expect_eq(tracec_provider_instant(p, "x"), TRACEC_STATUS_SUCCESS);
    cr_expect(has(&b, 0, "again-writer"), "the thread is described again");
    tracec_provider_unregister(p);
    close(conn);
    close(fifo);
}
