/*
 * record_provider.c - a traced program for the `tracec record` tests:
 *
 *   record_provider normal NAME N THREADS   register, wait for Start, THREADS threads write N slices each
 *   record_provider late NAME N             register_sync before any recorder: prints started=0, waits, writes
 *   record_provider die NAME N              writes N slices, then SIGKILLs itself while tracing
 *   record_provider die_open NAME N         as die, with a packet begun and never ended when it is killed
 *   record_provider durable_open NAME       raw protocol: one record in its durable part and the next one's
 *                                           header marked open, then SIGKILLs itself
 *   record_provider survive NAME MS [US]    writes slices for MS ms while the recorder is killed under it
 *                                           (with US: a pause of US microseconds after each slice)
 *   record_provider mute NAME               raw protocol: registers and never answers anything
 *   record_provider scribble NAME [durable|nested] raw protocol: answers, but writes garbage into its buffer
 *                                           (with `durable`: into its durable area, the halves empty; with
 *                                           `nested`: a record whose track_event is malformed inside)
 *   record_provider cats NAME DECL PROBES MS  registers declaring categories DECL, prints which of
 *                                           PROBES are enabled once started, writes slices for MS ms
 *   record_provider eager NAME              register_sync, then one instant at once (it must not be refused)
 *   record_provider stall NAME MS           raw protocol, honest but slow: reuses its two halves
 *                                           in turn, about 20 us apart (gen bumped first, fill after
 *                                           each whole record), and keeps writing MS ms after Stop
 *                                           before answering it
 *   record_provider hostile NAME MS [MAXWAIT] registers synchronously (max_wait_ms MAXWAIT), waits up to 1 s for Start,
 *                                           writes slices for MS ms whatever happened, unregisters; prints
 *                                           "refused R" and the time unregister took
 *   record_provider replay NAME N           raw protocol: one record in half 0, then N times SAVE_BUFFER(0)
 *                                           with the half's gen bumped and the same bytes
 *   record_provider rawname NAME            raw protocol: registers NAME as given (any bytes), then leaves
 *   record_provider v1 NAME                 raw protocol: registers as a version 1 provider (no version);
 *                                           prints "closed" when the recorder closes the connection
 *   record_provider twice NAME              raw protocol, two runs: the first writes records with timestamps
 *                                           1, then a corrupt record; the second 1001, 1002, 1003 (all in
 *                                           half 0); answers Start and Stop, leaves after the second Terminate
 *   record_provider indexed NAME N M [BIG]  writes N instants "e", each with a debug annotation "i" (its
 *                                           index, from 0); with M > 0 it SIGSTOPs its parent (the
 *                                           recorder) for those N, then lets it go on, waits 300 ms and
 *                                           writes M more (indexes N..N+M-1); with BIG > 0 every BIG-th
 *                                           instant is named with 40000 bytes (too large for a buffer of 32k in any mode)
 *   record_provider nested NAME N M         as indexed, with slices nested two levels ("outer", "inner" with
 *                                           an instant "step" inside): N iterations with the recorder
 *                                           SIGSTOPped, then M more once it goes on, and one more
 *                                           300 ms later
 *   record_provider refused NAME            with the recorder SIGSTOPped: BEGIN outer, BEGIN a, instants
 *                                           until the buffer refuses one, END (refused), BEGIN lost (refused);
 *                                           then the recorder goes on: an instant "in-lost" and the END of
 *                                           lost (neither written), BEGIN b, END, END
 *                                           (of outer); prints the status of each call
 *   record_provider restart NAME            BEGIN outer, BEGIN in, prints "inside"; once tracing stopped:
 *                                           END (of in), prints "off"; once started again (within 10 s),
 *                                           50 ms later: END (of outer), BEGIN after, END
 *
 * Prints "produced P dropped D" (the library's counters) on stdout at the end.
 * RECORD_PROVIDER_MAX_WAIT (env): the max_wait_ms the library modes register with.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/debug_annotation.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/abi/record_protocol.h"
#include "region_util.h"
#include "tracec/buffer.h"
#include "tracec/provider.h"

static tracec_provider *g_p;
static long g_n;

static void *writer(void *arg) {
    (void)arg;
    for (long i = 0; i < g_n; i++) {
        tracec_provider_slice_begin(g_p, "work");
        tracec_provider_instant(g_p, "step");
        tracec_provider_slice_end(g_p);
    }
    return NULL;
}

static void print_stats(void) {
    tracec_provider_stats s = tracec_provider_get_stats(g_p);
    printf("produced %llu dropped %llu lost %llu\n", (unsigned long long)s.produced, (unsigned long long)s.dropped,
           (unsigned long long)s.recorder_lost);
    fflush(stdout);
}

static int raw_connect_version(const char *name, uint64_t version) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", getenv(TRACEC_RECORDER_SOCKET_ENV));
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) return -1;
    static tracec_i_msg m;
    m.type = TRACEC_I_MSG_REGISTER;
    m.a = (uint32_t)getpid();
    m.b = version;
    snprintf(m.text, sizeof m.text, "%s", name);
    tracec_i_rec_send(fd, &m, NULL, 0);
    return fd;
}

static int raw_connect(const char *name) { return raw_connect_version(name, TRACEC_I_PROTOCOL_VERSION); }

/* A buffer of the raw protocol: Initialize's memfd, written by hand (layout tracec/abi/shm_layout.h). */
typedef struct raw_buf {
    uint8_t *map;
    size_t size;
    tracec_shm_header *h;
    uint8_t *region[3]; /* half 0, half 1 (NULL for ONESHOT), the durable part (NULL: none) */
    uint32_t cap[3];
    int fifo, memfd;
} raw_buf;

static void no_handoff(tracec_buffer_id_t b, uint32_t r, uint64_t g, uint32_t e, void *d) {
    (void)b;
    (void)r;
    (void)g;
    (void)e;
    (void)d;
}

/* Takes Initialize's memfd: a buffer of the engine is created on it (never started) so that its header
   holds the geometry the recorder agreed on; then this program maps it to write regions by hand. */
static int raw_buffer(const tracec_i_msg *m, int memfd, int fifo, raw_buf *b) {
    memset(b, 0, sizeof *b);
    tracec_context_id_t ctx;
    tracec_buffer_id_t id;
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = (tracec_buffering_mode_t)(m->a & 0xffu);
    cfg.size = (size_t)m->b;
    cfg.durable_size = (size_t)(m->c & TRACEC_I_INIT_DURABLE_MASK);
    cfg.policy = cfg.mode == TRACEC_BUFFERING_MODE_STREAMING ? TRACEC_BUFFER_POLICY_DISCARD : TRACEC_BUFFER_POLICY_NONE;
    cfg.watermark = cfg.mode == TRACEC_BUFFERING_MODE_STREAMING ? cfg.size : 0;
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = memfd;
    cfg.handoff = no_handoff;
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS ||
        tracec_create_buffer_with_config(ctx, &cfg, &id) != TRACEC_STATUS_SUCCESS)
        return -1;
    struct stat st;
    if (fstat(memfd, &st) != 0) return -1;
    b->size = (size_t)st.st_size;
    b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (b->map == MAP_FAILED) return -1;
    b->h = (tracec_shm_header *)(void *)b->map;
    uint8_t *regions = b->map + TRACEC_SHM_HEADER_BYTES;
    b->region[0] = regions;
    b->cap[0] = (uint32_t)b->h->half_bytes;
    if (b->h->halves == 2) {
        b->region[1] = regions + b->h->half_bytes;
        b->cap[1] = (uint32_t)b->h->half_bytes;
    }
    if (b->h->durable_bytes) {
        b->region[2] = regions + b->h->halves * b->h->half_bytes;
        b->cap[2] = (uint32_t)b->h->durable_bytes;
    }
    b->fifo = fifo;
    b->memfd = memfd;
    return 0;
}

static tracec_shm_region *raw_region(raw_buf *b, uint32_t r) { return r == 2 ? &b->h->durable : &b->h->half[r]; }

/* Region r holds `extent` bytes of `blocks` blocks, handed. */
static void raw_publish(raw_buf *b, uint32_t r, uint32_t extent, uint32_t blocks) {
    tracec_shm_region *g = raw_region(b, r);
    __atomic_store_n(&g->blocks, blocks, __ATOMIC_RELAXED);
    __atomic_store_n(&g->reserved, extent, __ATOMIC_RELAXED);
    __atomic_store_n(&g->extent, extent, __ATOMIC_RELEASE);
    __atomic_store_n(&g->handed, (uint32_t)TRACEC_SHM_REGION_HANDED, __ATOMIC_RELEASE);
}

static void raw_fifo(raw_buf *b, uint32_t type, uint32_t r) {
    uint64_t gen = r < 3 ? __atomic_load_n(&raw_region(b, r)->gen, __ATOMIC_ACQUIRE) : 0;
    tracec_i_rec_fifo_send(b->fifo, type, r, gen, 0);
}

/* Waits for Initialize and takes its buffer. */
static int raw_initialize(int conn, raw_buf *b) {
    static tracec_i_msg m;
    int fds[2], nfds = 2;
    struct pollfd pf = {conn, POLLIN, 0};
    if (poll(&pf, 1, 5000) <= 0 || tracec_i_rec_recv(conn, &m, fds, &nfds) <= 0 || nfds != 2 ||
        m.type != TRACEC_I_MSG_INITIALIZE)
        return -1;
    return raw_buffer(&m, fds[0], fds[1], b);
}

static int scribble(const char *name, bool durable, bool nested) {
    int conn = raw_connect(name);
    raw_buf b;
    if (conn < 0 || raw_initialize(conn, &b) != 0) return 1;
    uint32_t r = durable ? 2u : 0u;
    if (b.region[r] == NULL) return 6; /* no durable part: STREAMING has none */
    ru_writer w = ru_writer_at(b.region[r], b.cap[r]);
    /* one good record (a packet with timestamp 1), then garbage */
    const uint8_t good[] = {0x40, 0x01};
    ru_record(&w, good, sizeof good, 1, 1);
    if (nested) {
        /* well formed at the top (timestamp, track_event of 4 bytes), not inside: TrackEvent field 1 with
           wire type 7 */
        const uint8_t bad[] = {0x40, 0x02, 0x5A, 0x04, 0x0F, 0x01, 0x02, 0x03};
        ru_record(&w, bad, sizeof bad, 1, 1);
        raw_publish(&b, r, (uint32_t)w.off, w.blocks);
        raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
        raw_fifo(&b, TRACEC_I_FIFO_STOPPED, 3);
        usleep(200000);
        return 0;
    }
    /* a block that runs off the region's end, then 0xff bytes */
    ru_header(&w, 0x7ffffff8u, 4, 0, 0);
    memset(w.p + w.off + TRACEC_I_BLK_HDR, 0xff, 64);
    raw_publish(&b, r, (uint32_t)w.off + TRACEC_I_BLK_HDR + 64, w.blocks + 1);
    if (!durable && b.region[1]) b.h->half[1].extent = 0xffffffffu; /* past the half */
    b.h->active = 7;
    /* the recorder sealed the buffer's size: shrinking it (which would make its reads fault) is refused */
    if (ftruncate(b.memfd, 0) == 0) {
        fprintf(stderr, "record_provider: the shared buffer could be shrunk\n");
        return 5;
    }
    raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
    raw_fifo(&b, TRACEC_I_FIFO_SAVE_BUFFER, 0);
    tracec_i_rec_fifo_send(b.fifo, TRACEC_I_FIFO_SAVE_BUFFER, 99, 0, 0);
    raw_fifo(&b, TRACEC_I_FIFO_SAVE_BUFFER, b.region[1] ? 1u : 0u);
    usleep(200000); /* let the recorder read them, then leave */
    return 0;
}

/* A provider killed inside a durable packet: one durable record saved, the next one's header marked open at
   the durable part's salvage hint (as the engine's writer marks it), then SIGKILL. */
static int durable_open(const char *name) {
    int conn = raw_connect(name);
    raw_buf b;
    if (conn < 0 || raw_initialize(conn, &b) != 0) return 1;
    if (b.region[2] == NULL) return 6; /* no durable part: STREAMING has none */
    ru_writer w = ru_writer_at(b.region[2], b.cap[2]);
    const uint8_t good[] = {0x40, 0x01};
    ru_record(&w, good, sizeof good, 1, 1);
    uint32_t end = (uint32_t)w.off;
    ru_header(&w, 0, TRACEC_I_OPEN_MARK, 0, 0);
    __atomic_store_n(&b.h->durable.reserved, end, __ATOMIC_RELEASE);
    raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
    usleep(100000);
    raise(SIGKILL);
    return 7;
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Appends one record block (a TracePacket with only timestamp `ts`) at w. */
static void put_record(ru_writer *w, uint64_t ts) {
    uint8_t body[16], *e = body;
    *e++ = 0x40; /* TracePacket.timestamp (8), varint */
    e = ru_varint(e, ts);
    ru_record(w, body, (size_t)(e - body), 1, 1);
}

/* Whole record blocks of varying sizes for `size` bytes at d, the k-th first; their byte count. */
static uint32_t stall_records(uint8_t *d, uint32_t size, uint64_t *k, uint32_t *blocks) {
    ru_writer w = ru_writer_at(d, size);
    while (w.off + 64 <= size) {
        uint64_t ts = (uint64_t)1 << (7 * (*k % 5)); /* 1..5-byte varints */
        (*k)++;
        put_record(&w, ts);
        if (*k % 7 == 0) { /* some records of 24 bytes: the block sizes differ between the layouts */
            const uint8_t pad[] = {0x40, 0x01, 0x40, 0x02, 0x40, 0x03, 0x40, 0x04, 0x40, 0x05};
            ru_record(&w, pad, sizeof pad, 1, 1);
        }
    }
    *blocks = w.blocks;
    return (uint32_t)w.off;
}

/* Reuses half `h`: gen first (as the engine resets a region), then the records (a batch, rewritten as fast
   as it is read), then the extent. */
static void stall_fill_half(raw_buf *b, const uint8_t *batch, uint32_t len, uint32_t blocks, uint32_t h) {
    tracec_shm_region *g = &b->h->half[h];
    __atomic_add_fetch(&g->gen, 2u, __ATOMIC_RELAXED); /* gen first: the half is being reused */
    TRACEC_I_REC_FENCE(__ATOMIC_RELEASE);
    __atomic_store_n(&g->extent, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&g->reserved, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&b->h->active, h, __ATOMIC_RELEASE);
    /* back to front, in 1 KiB steps: a reader copying front to back meets the new bytes (a torn copy) */
    uint8_t *half = b->region[h];
    for (uint32_t end = len; end > 0;) {
        uint32_t from = end > 1024 ? end - 1024 : 0;
        memcpy(half + from, batch + from, end - from);
        end = from;
    }
    __atomic_store_n(&g->blocks, blocks, __ATOMIC_RELAXED);
    __atomic_store_n(&g->reserved, len, __ATOMIC_RELAXED);
    __atomic_store_n(&g->extent, len, __ATOMIC_RELEASE);
}

/* A provider that answers Start, never stops writing, and answers Stop `ms` ms late. */
static int stall(const char *name, long ms) {
    int conn = raw_connect(name);
    raw_buf b;
    if (conn < 0 || raw_initialize(conn, &b) != 0 || b.region[1] == NULL) return 1;
    static tracec_i_msg m;
    int nfds;
    struct pollfd pf = {conn, POLLIN, 0};
    uint32_t hs = (uint32_t)b.h->size;
    uint64_t k = 0;
    uint8_t *batch[3];
    uint32_t blen[3], bblocks[3];
    for (int i = 0; i < 3; i++) { /* three record layouts: a torn copy would mix them, misaligned */
        batch[i] = malloc(hs);
        if (batch[i] == NULL) return 1;
        k = (uint64_t)i;
        blen[i] = stall_records(batch[i], hs, &k, &bblocks[i]);
    }
    uint64_t cycles = 0;
    long stop_at = -1;
    bool started = false;
    for (uint32_t h = 0;; h ^= 1u) {
        pf.revents = 0;
        if (poll(&pf, 1, started ? 0 : 5000) > 0) {
            nfds = 0;
            ssize_t n = tracec_i_rec_recv(conn, &m, NULL, &nfds);
            if (n == 0) break; /* the recorder is gone */
            if (n > 0 && m.type == TRACEC_I_MSG_START && !started) {
                started = true;
                raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
            } else if (n > 0 && m.type == TRACEC_I_MSG_STOP && stop_at < 0) {
                stop_at = now_ms() + ms; /* "finishing its writing" for a long time */
                printf("stop received\n");
                fflush(stdout);
            }
        }
        if (!started) continue;
        if (stop_at >= 0 && now_ms() >= stop_at) break;
        int c = (int)(cycles++ % 3);
        stall_fill_half(&b, batch[c], blen[c], bblocks[c], h);
        /* a breath of about 20 us between fills (spun: a sleep would be far longer): each half is rewritten
           every 40 us or so, so a copy of it often holds and sometimes is torn (on an idle machine an unpaced
           loop rewrote each half every few microseconds, faster than any copy of it could hold) */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t1);
        while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000L);
    }
    raw_fifo(&b, TRACEC_I_FIFO_STOPPED, 3);
    printf("cycles %llu\n", (unsigned long long)cycles);
    for (int i = 0; i < 3; i++) free(batch[i]);
    return 0;
}

/* A program under a recorder it should not trust: whatever the recorder does, it runs on and ends in time. */
static int hostile(const char *name, long ms, int max_wait) {
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = name;
    reg.synchronous = true;
    reg.max_wait_ms = max_wait;
    if (tracec_provider_register_with(&reg, NULL, &g_p) != TRACEC_STATUS_SUCCESS) return 3;
    bool started = tracec_provider_wait_started(g_p, 1000);
    long end = now_ms() + ms, loops = 0;
    while (now_ms() < end) {
        tracec_provider_slice_begin(g_p, "work");
        tracec_provider_slice_end(g_p);
        loops++;
    }
    tracec_provider_stats st = tracec_provider_get_stats(g_p);
    long t0 = now_ms();
    tracec_provider_unregister(g_p);
    printf("started %d loops %ld produced %llu dropped %llu refused %llu unregister_ms %ld\n", (int)started, loops,
           (unsigned long long)st.produced, (unsigned long long)st.dropped, (unsigned long long)st.refused,
           now_ms() - t0);
    return 0;
}

/* Saves one record again and again: gen bumped, the same bytes, SAVE_BUFFER. */
static int replay(const char *name, long n) {
    int conn = raw_connect(name);
    raw_buf b;
    if (conn < 0 || raw_initialize(conn, &b) != 0 || b.region[1] == NULL) return 1;
    ru_writer w = ru_writer_at(b.region[0], b.cap[0]);
    put_record(&w, 12345);
    b.h->accepted = 1;
    raw_publish(&b, 0, (uint32_t)w.off, w.blocks);
    raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
    long saved = 0;
    for (long i = 0; i < n; i++) {
        raw_fifo(&b, TRACEC_I_FIFO_SAVE_BUFFER, 0);
        struct pollfd ff = {b.fifo, POLLIN, 0};
        tracec_i_fifo_packet pk;
        if (poll(&ff, 1, 1000) <= 0 || recv(b.fifo, &pk, sizeof pk, 0) != (ssize_t)sizeof pk) break;
        saved++;
        __atomic_add_fetch(&b.h->half[0].gen, 2u, __ATOMIC_RELEASE); /* "emptied", the same bytes left */
    }
    raw_fifo(&b, TRACEC_I_FIFO_STOPPED, 3);
    printf("saves answered %ld\n", saved);
    usleep(100000);
    return 0;
}

/* Two Initialize/Start/Stop/Terminate runs of the raw protocol: a corrupt record in the first, good ones in
   the second. */
static int twice(const char *name) {
    int conn = raw_connect(name);
    if (conn < 0) return 1;
    static tracec_i_msg m;
    int runs = 0, have = 0;
    raw_buf b;
    for (;;) {
        struct pollfd pf = {conn, POLLIN, 0};
        if (poll(&pf, 1, 10000) <= 0) return 1;
        int fds[2], nfds = 2;
        if (tracec_i_rec_recv(conn, &m, fds, &nfds) <= 0) return 1;
        if (m.type == TRACEC_I_MSG_INITIALIZE && nfds == 2) {
            if (raw_buffer(&m, fds[0], fds[1], &b) != 0) return 1;
            have = 1;
        } else if (m.type == TRACEC_I_MSG_START && have) {
            ru_writer w = ru_writer_at(b.region[0], b.cap[0]);
            if (runs == 0) {
                put_record(&w, 1);
                memset(w.p + w.off, 0xff, 16); /* not a block: a body that is not a multiple of 8 */
                raw_publish(&b, 0, (uint32_t)w.off + 16, w.blocks + 1);
            } else {
                for (uint64_t ts = 1001; ts <= 1003; ts++) put_record(&w, ts);
                raw_publish(&b, 0, (uint32_t)w.off, w.blocks);
            }
            raw_fifo(&b, TRACEC_I_FIFO_STARTED, 3);
        } else if (m.type == TRACEC_I_MSG_STOP && have) {
            raw_fifo(&b, TRACEC_I_FIFO_STOPPED, 3);
        } else if (m.type == TRACEC_I_MSG_TERMINATE && have) {
            close(b.fifo); /* the provider closes its end first */
            close(b.memfd);
            munmap(b.map, b.size);
            have = 0;
            if (++runs == 2) return 0;
        } else {
            for (int i = 0; i < nfds; i++) close(fds[i]);
        }
    }
}

/* One instant "e" with debug annotation i = `i`, by hand (begin_packet / end_packet). */
static void indexed_instant(long i, bool big) {
    static char huge[40001];
    if (big && huge[0] == '\0') memset(huge, 'x', sizeof huge - 1);
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    perfetto_protos_DebugAnnotation da;
    tracec_provider_begin_packet(g_p, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, tracec_provider_now_ns(g_p)); /* the trace's clock */
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(g_p));
    perfetto_protos_TrackEvent_set_cstr_name(&ev, big ? huge : "e");
    perfetto_protos_TrackEvent_begin_debug_annotations(&ev, &da);
    perfetto_protos_DebugAnnotation_set_cstr_name(&da, "i");
    perfetto_protos_DebugAnnotation_set_int_value(&da, i);
    perfetto_protos_TrackEvent_end_debug_annotations(&ev, &da);
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    (void)tracec_provider_end_packet(g_p, &w, &pkt.msg);
}

static int indexed(long n, long m, long big) {
    if (m > 0) kill(getppid(), SIGSTOP); /* the recorder saves nothing meanwhile: the halves fill, packets drop */
    for (long i = 0; i < n; i++) indexed_instant(i, big > 0 && i % big == big - 1);
    if (m > 0) {
        kill(getppid(), SIGCONT);
        usleep(300000); /* it saves the full half */
        for (long i = n; i < n + m; i++) indexed_instant(i, big > 0 && i % big == big - 1);
    }
    print_stats();
    tracec_provider_unregister(g_p);
    return 0;
}

/* Two levels of slices with an instant inside, `n` times. */
static void nested_slices(long n) {
    for (long i = 0; i < n; i++) {
        tracec_provider_slice_begin(g_p, "outer");
        tracec_provider_slice_begin(g_p, "inner");
        tracec_provider_instant(g_p, "step");
        tracec_provider_slice_end(g_p);
        tracec_provider_slice_end(g_p);
    }
}

static int nested(long n, long m) {
    kill(getppid(), SIGSTOP); /* the recorder saves nothing meanwhile: the halves fill, packets drop */
    nested_slices(n);
    kill(getppid(), SIGCONT);
    usleep(300000); /* it saves the full halves */
    nested_slices(m);
    usleep(300000);
    nested_slices(1); /* written: the ENDs still owed go before it */
    print_stats();
    tracec_provider_unregister(g_p);
    return 0;
}

static int refused(void) {
    kill(getppid(), SIGSTOP);
    int outer = (int)tracec_provider_slice_begin(g_p, "outer");
    int a = (int)tracec_provider_slice_begin(g_p, "a");
    long fill = 0;
    /* instants without a name: as large as an END, so the END after the first refused one is refused too */
    while (tracec_provider_instant(g_p, NULL) == TRACEC_STATUS_SUCCESS && fill < 100000) fill++;
    int end_a = (int)tracec_provider_slice_end(g_p);
    int lost = (int)tracec_provider_slice_begin(g_p, "lost");
    kill(getppid(), SIGCONT);
    usleep(300000); /* the recorder saved the halves: there is room again */
    int in_lost = (int)tracec_provider_instant(g_p, "in-lost");
    int end_lost = (int)tracec_provider_slice_end(g_p);
    int b = (int)tracec_provider_slice_begin(g_p, "b");
    int end_b = (int)tracec_provider_slice_end(g_p);
    int end_outer = (int)tracec_provider_slice_end(g_p);
    printf("fill %ld outer %d a %d end_a %d lost %d end_lost %d b %d end_b %d end_outer %d in_lost %d\n", fill, outer, a,
           end_a, lost, end_lost, b, end_b, end_outer, in_lost);
    print_stats();
    tracec_provider_unregister(g_p);
    return 0;
}

static int restart(void) {
    tracec_provider_slice_begin(g_p, "outer");
    tracec_provider_slice_begin(g_p, "in");
    printf("inside\n");
    fflush(stdout);
    for (int i = 0; i < 10000 && tracec_provider_started(g_p); i++) usleep(1000);
    int end_in = (int)tracec_provider_slice_end(g_p); /* tracing is off: not written */
    printf("off %d\n", end_in);
    fflush(stdout);
    for (int i = 0; i < 10000 && !tracec_provider_started(g_p); i++) usleep(1000);
    usleep(50000);
    tracec_provider_slice_end(g_p);
    tracec_provider_slice_begin(g_p, "after");
    tracec_provider_slice_end(g_p);
    print_stats();
    tracec_provider_unregister(g_p);
    return 0;
}

static int cats(const char *name, const char *declared, const char *probes, long ms) {
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = name;
    reg.categories = declared;
    reg.synchronous = true;
    if (tracec_provider_register_with(&reg, NULL, &g_p) != TRACEC_STATUS_SUCCESS) return 3;
    if (!tracec_provider_wait_started(g_p, 10000)) return 4;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", probes);
    printf("enabled");
    for (char *save = NULL, *c = strtok_r(buf, ",", &save); c; c = strtok_r(NULL, ",", &save))
        printf(" %s=%d", c, (int)tracec_provider_category_enabled(g_p, c));
    printf("\n");
    fflush(stdout);
    long end = now_ms() + ms;
    while (now_ms() < end) {
        if (tracec_provider_category_enabled(g_p, "gfx")) tracec_provider_instant(g_p, "frame");
        usleep(1000);
    }
    tracec_provider_unregister(g_p);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *mode = argv[1], *name = argv[2];
    if (strcmp(mode, "mute") == 0) {
        int fd = raw_connect(name);
        sleep(10); /* the test kills it sooner */
        return fd < 0;
    }
    if (strcmp(mode, "durable_open") == 0) return durable_open(name);
    if (strcmp(mode, "scribble") == 0)
        return scribble(name, argc > 3 && strcmp(argv[3], "durable") == 0, argc > 3 && strcmp(argv[3], "nested") == 0);
    if (strcmp(mode, "hostile") == 0) return hostile(name, argc > 3 ? atol(argv[3]) : 300, argc > 4 ? atoi(argv[4]) : 0);
    if (strcmp(mode, "replay") == 0) return replay(name, argc > 3 ? atol(argv[3]) : 100);
    if (strcmp(mode, "rawname") == 0) {
        int fd = raw_connect(name);
        usleep(300000);
        return fd < 0;
    }
    if (strcmp(mode, "v1") == 0) {
        int fd = raw_connect_version(name, 0);
        if (fd < 0) return 1;
        struct pollfd pf = {fd, POLLIN, 0};
        static tracec_i_msg m;
        int nfds = 0;
        if (poll(&pf, 1, 3000) > 0 && tracec_i_rec_recv(fd, &m, NULL, &nfds) == 0) printf("closed\n");
        return 0;
    }
    if (strcmp(mode, "twice") == 0) return twice(name);
    if (strcmp(mode, "stall") == 0) return stall(name, argc > 3 ? atol(argv[3]) : 1000);
    if (strcmp(mode, "cats") == 0) return argc > 5 ? cats(name, argv[3], argv[4], atol(argv[5])) : 2;
    bool started = false;
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = name;
    reg.synchronous = true;
    reg.max_wait_ms = getenv("RECORD_PROVIDER_MAX_WAIT") ? atoi(getenv("RECORD_PROVIDER_MAX_WAIT")) : 0;
    if (tracec_provider_register_with(&reg, &started, &g_p) != TRACEC_STATUS_SUCCESS) return 3;
    g_n = argc > 3 ? atol(argv[3]) : 10;
    if (strcmp(mode, "eager") == 0) { /* one event right after register_sync said started: it must be written */
        tracec_status_t st = started ? tracec_provider_instant(g_p, "first") : TRACEC_STATUS_BAD_STATE;
        printf("started=%d first=%d\n", (int)started, (int)st);
        print_stats();
        tracec_provider_unregister(g_p);
        return 0;
    }
    if (strcmp(mode, "late") == 0) {
        printf("started=%d\n", (int)started);
        fflush(stdout);
    }
    if (!tracec_provider_wait_started(g_p, 10000)) {
        fprintf(stderr, "record_provider: tracing never started\n");
        return 4;
    }
    if (strcmp(mode, "nested") == 0) return nested(g_n, argc > 4 ? atol(argv[4]) : 0);
    if (strcmp(mode, "refused") == 0) return refused();
    if (strcmp(mode, "restart") == 0) return restart();
    if (strcmp(mode, "indexed") == 0) return indexed(g_n, argc > 4 ? atol(argv[4]) : 0, argc > 5 ? atol(argv[5]) : 0);
    if (strcmp(mode, "survive") == 0) {
        long end = now_ms() + g_n, loops = 0, fast = 0, pause_us = argc > 4 ? atol(argv[4]) : 0;
        while (now_ms() < end) {
            tracec_provider_slice_begin(g_p, "work");
            tracec_provider_slice_end(g_p);
            if (pause_us > 0) usleep((useconds_t)pause_us);
            loops++;
            if (!tracec_provider_started(g_p)) fast++;
        }
        print_stats();
        printf("loops %ld untraced %ld\n", loops, fast);
        tracec_provider_unregister(g_p);
        return 0;
    }
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    if (threads < 1) threads = 1;
    pthread_t t[16];
    for (int i = 0; i < threads && i < 16; i++) pthread_create(&t[i], NULL, writer, NULL);
    for (int i = 0; i < threads && i < 16; i++) pthread_join(t[i], NULL);
    print_stats();
    if (strcmp(mode, "die") == 0) raise(SIGKILL);
    if (strcmp(mode, "die_open") == 0) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_provider_begin_packet(g_p, &w, &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, 1);
        raise(SIGKILL);
    }
    tracec_provider_unregister(g_p);
    return 0;
}
