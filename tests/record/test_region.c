/*
 * test_region.c - the recorder's reading side of the buffer engine's shared
 * layout (tracec/abi/shm_layout.h): the header check, the consistent copy of
 * a region, and the walk of its blocks, against regions built by
 * region_util.h's writer of the documented layout (one shared buffer per
 * mode in a sealed memfd, read through a read-only mapping as the recorder
 * maps it), hostile regions of every kind, and a region the buffer engine
 * wrote itself.  The packets that come out, with the recorder's sequence
 * ids, are read back with protoc --decode (an independent decoder).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "record_seq.h"
#include "region_util.h"
#include "test_util.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/recorder.h"
#include "tracec/trace_file.h"

#define PAGE 4096u

/* ---- what a walk hands out -------------------------------------------------------------------- */

typedef struct sink {
    size_t n;
    char names[1024][24]; /* the TrackEvent names, in order */
    uint32_t kinds[1024];
    int fail_at;          /* the callback returns IO_ERROR for this record (-1: never) */
    /* with a trace: each packet rewritten with the peer's map and appended */
    tracec_trace_file *trace;
    tracec_i_rec_seqmap *map;
    uint32_t *next;
} sink;

/* The name of ru_packet's TrackEvent in p[0..n) (the last LEN field inside field 11), or "?". */
static void name_of(const uint8_t *p, size_t n, char *out, size_t cap) {
    snprintf(out, cap, "?");
    const uint8_t *e = memchr(p, 0x5a, n);
    if (e == NULL) return;
    const uint8_t *s = memmem(e, n - (size_t)(e - p), "\xba\x01", 2);
    if (s == NULL || s + 3 > p + n) return;
    size_t len = s[2];
    if (s + 3 + len <= p + n) snprintf(out, cap, "%.*s", (int)len, (const char *)s + 3);
}

static tracec_status_t collect(void *data, const uint8_t *packet, size_t size, uint32_t category, uint32_t kind) {
    (void)category;
    sink *s = data;
    if ((int)s->n == s->fail_at) return TRACEC_STATUS_IO_ERROR;
    cr_assert_lt(s->n, 1024);
    name_of(packet, size, s->names[s->n], sizeof s->names[0]);
    s->kinds[s->n] = kind;
    s->n++;
    if (s->trace)
        cr_assert_eq(tracec_i_rec_write_packet(s->trace, s->map, s->next, packet, size, 4321, 1000, NULL),
                     TRACEC_STATUS_SUCCESS);
    return TRACEC_STATUS_SUCCESS;
}

static sink new_sink(void) {
    sink s;
    memset(&s, 0, sizeof s);
    s.fail_at = -1;
    return s;
}

static tracec_status_t read_buf(const void *p, size_t n, uint64_t gen, bool durable, sink *s,
                                tracec_recorder_region_result *res) {
    return tracec_recorder_read_region(p, n, gen, durable, collect, s, res);
}

/* ---- hostile regions ------------------------------------------------------------------------- */

static uint8_t g_buf[8192] __attribute__((aligned(16)));

/* A region with a good record, a good chunk of two records, then whatever the test appends. */
static ru_writer good_start(uint64_t gen) {
    memset(g_buf, 0, sizeof g_buf);
    ru_writer w = ru_writer_at(g_buf, sizeof g_buf);
    ru_packet_record(&w, 1, "r0", 0, 0);
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(gen));
    ru_packet_record(&w, 2, "c0", 1, 7);
    ru_packet_record(&w, 3, "c1", 1, 7);
    ru_chunk_end(&w, 24);
    return w;
}

Test(region, good_blocks_are_read_whole) {
    ru_writer w = good_start(6);
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_assert_eq(read_buf(g_buf, w.off, 6, false, &s, &res), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(res.records, 3);
    cr_expect_eq(res.blocks, 2);
    cr_expect_eq(res.end, w.off);
    cr_expect_eq(res.corrupt + res.stale + res.unwritten, 0);
    cr_expect_str_eq(s.names[0], "r0");
    cr_expect_str_eq(s.names[1], "c0");
    cr_expect_str_eq(s.names[2], "c1");
    cr_expect_null(res.why);
}

/* Each hostile block after the good ones: the good records are handed, the walk ends at the bad block. */
typedef struct hostile {
    const char *what;
    uint32_t body, size, third, kind; /* the block header written at the end */
    uint32_t extra;                   /* bytes of the region after that header (zeros) */
    int expect;                       /* 0 corrupt, 1 stale, 2 unwritten */
} hostile;

Test(region, hostile_blocks_end_the_walk) {
    const uint32_t tag = TRACEC_SHM_CHUNK_TAG(6);
    const hostile cases[] = {
        {"body not a multiple of 8", 12, 4, 0, 0, 16, 0},
        {"body past the region", 64, 8, 0, 0, 32, 0},
        {"huge body", 0xfffffff8u, 8, 0, 0, 32, 0},
        {"size > body", 8, 9, 0, 0, 8, 0},
        {"huge size", 8, 0xfffffffeu, 0, 0, 8, 0},
        {"committed > body", 16, RU_CHUNK_MARK, 24, tag, 16, 0},
        {"huge committed", 16, RU_CHUNK_MARK, 0xffffffffu, tag, 16, 0},
        {"foreign tag", 16, RU_CHUNK_MARK, 0, TRACEC_SHM_CHUNK_TAG(4), 16, 1},
        {"untagged chunk", 16, RU_CHUNK_MARK, 0, 0, 16, 1},
        {"zero header", 0, 0, 0, 0, 64, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hostile *h = &cases[i];
        ru_writer w = good_start(6);
        size_t bad_at = w.off;
        ru_header(&w, h->body, h->size, h->third, h->kind);
        w.off += TRACEC_I_BLK_HDR + h->extra;
        sink s = new_sink();
        tracec_recorder_region_result res;
        tracec_status_t st = read_buf(g_buf, w.off, 6, false, &s, &res);
        cr_expect_eq(st, h->expect == 0 ? TRACEC_STATUS_CORRUPT_DATA : TRACEC_STATUS_SUCCESS, "%s", h->what);
        cr_expect_eq(res.records, 3, "%s: the records before it", h->what);
        cr_expect_eq(res.end, bad_at, "%s: ends at the bad block", h->what);
        cr_expect_eq(res.corrupt, h->expect == 0, "%s", h->what);
        cr_expect_eq(res.stale, h->expect == 1, "%s", h->what);
        cr_expect_eq(res.unwritten, h->expect == 2, "%s", h->what);
        cr_expect_not_null(res.why, "%s", h->what);
    }
}

Test(region, truncated_blocks_and_chunks_are_corrupt) {
    /* a region that ends inside a block header */
    ru_writer w = good_start(2);
    size_t whole = w.off;
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_expect_eq(read_buf(g_buf, whole + 8, 2, false, &s, &res), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(res.records, 3);
    cr_expect_eq(res.end, whole);
    /* ... or inside a block's body */
    ru_packet_record(&w, 9, "cut", 0, 0);
    s = new_sink();
    cr_expect_eq(read_buf(g_buf, w.off - 8, 2, false, &s, &res), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(res.records, 3);
    cr_expect_str_eq(res.why, "a block that runs past the region");
    /* a chunk whose committed bytes end inside a record: its whole records are handed first */
    memset(g_buf, 0, sizeof g_buf);
    w = ru_writer_at(g_buf, sizeof g_buf);
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(2));
    ru_packet_record(&w, 1, "in0", 0, 0);
    size_t second = w.off;
    ru_packet_record(&w, 2, "in1", 0, 0);
    ru_chunk_end(&w, 0);
    uint32_t committed = (uint32_t)(second - TRACEC_I_BLK_HDR + 8); /* 8 bytes into in1's header */
    memcpy(g_buf + 8, &committed, 4);
    s = new_sink();
    cr_expect_eq(read_buf(g_buf, w.off, 2, false, &s, &res), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(res.records, 1);
    cr_expect_eq(res.end, second);
    cr_expect_str_eq(res.why, "a record header cut short in a chunk");
    /* a record inside a chunk larger than its own body */
    memset(g_buf, 0, sizeof g_buf);
    w = ru_writer_at(g_buf, sizeof g_buf);
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(2));
    ru_packet_record(&w, 1, "in0", 0, 0);
    size_t bad = w.off;
    ru_header(&w, 8, 16, 0, 0);
    w.off += TRACEC_I_BLK_HDR + 8;
    ru_chunk_end(&w, 0);
    s = new_sink();
    cr_expect_eq(read_buf(g_buf, w.off, 2, false, &s, &res), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(res.records, 1);
    cr_expect_eq(res.end, bad);
    cr_expect_str_eq(res.why, "a record larger than its block");
}

Test(region, payloads_that_are_not_trace_packets_are_corrupt) {
    /* a top-level record, and a record inside a chunk, whose payload fails the record check */
    static const struct {
        const char *what;
        uint8_t bytes[8];
        size_t n;
    } bad[] = {
        {"invalid wire type", {0x0f, 0x01}, 2},
        {"a group", {0x5b, 0x5c}, 2},
        {"a length past the end", {0x5a, 0x09, 0x48}, 3},
        {"track_event with an invalid wire type inside", {0x5a, 0x02, 0x4f, 0x01}, 4},
    };
    for (int in_chunk = 0; in_chunk < 2; in_chunk++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            ru_writer w = good_start(8);
            size_t at = w.off;
            if (in_chunk) ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(8));
            ru_record(&w, bad[i].bytes, bad[i].n, 0, 0);
            if (in_chunk) ru_chunk_end(&w, 0);
            ru_packet_record(&w, 5, "after", 0, 0);
            sink s = new_sink();
            tracec_recorder_region_result res;
            cr_expect_eq(read_buf(g_buf, w.off, 8, false, &s, &res), TRACEC_STATUS_CORRUPT_DATA, "%s", bad[i].what);
            cr_expect_eq(res.records, 3, "%s", bad[i].what);
            cr_expect_eq(res.end, at + (in_chunk ? TRACEC_I_BLK_HDR : 0), "%s", bad[i].what);
            cr_expect_eq(res.corrupt, 1);
        }
    }
}

Test(region, zero_filled_and_empty_regions) {
    memset(g_buf, 0, sizeof g_buf);
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_expect_eq(read_buf(g_buf, sizeof g_buf, 1, false, &s, &res), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(res.records, 0);
    cr_expect_eq(res.unwritten, 1);
    cr_expect_eq(res.corrupt, 0);
    cr_expect_eq(res.end, 0);
    cr_expect_eq(read_buf(NULL, 0, 1, false, &s, &res), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(res.end, 0);
    cr_expect_eq(read_buf(NULL, 16, 1, false, &s, &res), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_recorder_read_region(g_buf, 16, 1, false, NULL, NULL, &res), TRACEC_STATUS_INVALID_ARGUMENT);
    /* records of 0 bytes (body 8, size 0) are skipped, not handed, and the walk goes on */
    ru_writer w = ru_writer_at(g_buf, sizeof g_buf);
    ru_header(&w, 8, 0, 0, 3);
    w.off += 24;
    ru_packet_record(&w, 1, "after", 0, 0);
    s = new_sink();
    cr_expect_eq(read_buf(g_buf, w.off, 1, false, &s, &res), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(res.empty, 1);
    cr_expect_eq(res.records, 1);
}

Test(region, durable_part_holds_records_only) {
    memset(g_buf, 0, sizeof g_buf);
    ru_writer w = ru_writer_at(g_buf, sizeof g_buf);
    ru_packet_record(&w, 1, "d0", 0, 0);
    size_t at = w.off;
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(0));
    ru_packet_record(&w, 2, "d1", 0, 0);
    ru_chunk_end(&w, 0);
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_expect_eq(read_buf(g_buf, w.off, 0, true, &s, &res), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(res.records, 1);
    cr_expect_eq(res.end, at);
    cr_expect_str_eq(res.why, "a chunk in the durable part");
}

Test(region, callback_status_ends_the_walk) {
    ru_writer w = good_start(6);
    sink s = new_sink();
    s.fail_at = 2;
    tracec_recorder_region_result res;
    cr_expect_eq(read_buf(g_buf, w.off, 6, false, &s, &res), TRACEC_STATUS_IO_ERROR);
    cr_expect_eq(res.records, 2);
    cr_expect_eq(res.corrupt, 0);
}

/* Any bytes, any extent, any gen: the walk returns, reads inside the region (ASan), and its counts add up. */
Test(region, random_regions_never_escape) {
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 3000; round++) {
        ru_writer w = good_start((uint64_t)round);
        /* then random blocks, a few bytes of them flipped */
        size_t extent = 64 + (size_t)(x % 4000u) / 8u * 8u;
        for (size_t i = w.off; i < extent; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            g_buf[i] = (uint8_t)(x % 5u == 0 ? x >> 24 : 0);
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        g_buf[x % extent] ^= (uint8_t)(x >> 40);
        uint8_t *copy = malloc(extent);
        memcpy(copy, g_buf, extent);
        sink s = new_sink();
        s.fail_at = 60;
        tracec_recorder_region_result res;
        tracec_status_t st = read_buf(copy, extent, (uint64_t)round, round % 7 == 0, &s, &res);
        cr_assert(st == TRACEC_STATUS_SUCCESS || st == TRACEC_STATUS_CORRUPT_DATA || st == TRACEC_STATUS_IO_ERROR);
        cr_assert_leq(res.end, extent);
        cr_assert_leq(res.corrupt + res.stale + res.unwritten, 1);
        cr_assert_eq(res.records, s.n);
        free(copy);
    }
}

/* ---- shared buffers in a memfd ---------------------------------------------------------------- */

typedef struct shm {
    int fd;
    uint8_t *rw;       /* the writer's mapping */
    const uint8_t *ro; /* the recorder's (PROT_READ) */
    size_t bytes;
    tracec_recorder_shm_geometry g;
} shm;

static tracec_shm_header *hdr(shm *m) { return (tracec_shm_header *)(void *)m->rw; }

static shm shm_new(tracec_buffering_mode_t mode, uint64_t size) {
    shm m;
    memset(&m, 0, sizeof m);
    m.g.mode = mode;
    m.g.halves = mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1 : 2;
    m.g.size = size;
    m.g.half_bytes = (3 * size + PAGE - 1) / PAGE * PAGE;
    m.g.durable_bytes = mode == TRACEC_BUFFERING_MODE_STREAMING ? 0 : PAGE;
    m.bytes = tracec_recorder_shm_bytes(&m.g);
    cr_assert_gt(m.bytes, 0);
    m.fd = memfd_create("tracec-region-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_geq(m.fd, 0);
    cr_assert_eq(ftruncate(m.fd, (off_t)m.bytes), 0);
    cr_assert_eq(fcntl(m.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    m.rw = mmap(NULL, m.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
    m.ro = mmap(NULL, m.bytes, PROT_READ, MAP_SHARED, m.fd, 0);
    cr_assert(m.rw != MAP_FAILED && m.ro != MAP_FAILED);
    tracec_shm_header *h = hdr(&m);
    h->magic = TRACEC_SHM_MAGIC;
    h->version = TRACEC_SHM_VERSION;
    h->header_bytes = TRACEC_SHM_HEADER_BYTES;
    h->mode = mode;
    h->halves = m.g.halves;
    h->size = size;
    h->half_bytes = m.g.half_bytes;
    h->durable_bytes = m.g.durable_bytes;
    return m;
}

static void shm_free(shm *m) {
    munmap(m->rw, m->bytes);
    munmap((void *)m->ro, m->bytes);
    close(m->fd);
}

/* A writer of region r (0, 1, TRACEC_RECORDER_REGION_DURABLE). */
static ru_writer shm_writer(shm *m, uint32_t r) {
    size_t off = PAGE + (size_t)(r == TRACEC_RECORDER_REGION_DURABLE ? m->g.halves : r) * m->g.half_bytes;
    return ru_writer_at(m->rw + off, r == TRACEC_RECORDER_REGION_DURABLE ? m->g.durable_bytes : m->g.half_bytes);
}

/* Publishes what w wrote as region r of generation gen, handed or not. */
static void shm_publish(shm *m, uint32_t r, const ru_writer *w, uint64_t gen, int handed) {
    tracec_shm_region *x = r == TRACEC_RECORDER_REGION_DURABLE ? &hdr(m)->durable : &hdr(m)->half[r];
    x->gen = gen;
    x->extent = (uint32_t)w->off;
    x->blocks = w->blocks;
    x->reserved = (uint32_t)w->off;
    x->handed = handed ? TRACEC_SHM_REGION_HANDED : TRACEC_SHM_REGION_FREE;
}

/* What the recorder does with a peer's buffer: copy and check the header, then copy and walk each handed region
   (the durable part first), every packet rewritten with the peer's sequence map into `trace`. */
static void recorder_reads(shm *m, tracec_trace_file *trace, tracec_i_rec_seqmap *map, uint32_t *next, sink *s) {
    tracec_shm_header copy;
    memcpy(&copy, m->ro, sizeof copy);
    tracec_recorder_shm_state st;
    const char *why = NULL;
    cr_assert_eq(tracec_recorder_check_shm_header(&copy, &m->g, &st, &why), TRACEC_STATUS_SUCCESS, "%s", why);
    cr_expect_eq(st.clamped, 0);
    s->trace = trace;
    s->map = map;
    s->next = next;
    uint8_t *scratch = malloc(m->g.half_bytes);
    const uint32_t order[] = {TRACEC_RECORDER_REGION_DURABLE, st.active ^ 1u, st.active};
    for (size_t i = 0; i < 3; i++) {
        uint32_t r = order[i];
        if (!(st.handed & (1u << r)) || (i > 0 && r >= m->g.halves)) continue;
        tracec_recorder_region_copy c;
        cr_assert_eq(tracec_recorder_copy_region(m->ro, m->bytes, &m->g, r, false, 0, 0, scratch, m->g.half_bytes, &c),
                     TRACEC_STATUS_SUCCESS);
        cr_assert_eq(c.gen, st.region[r].gen);
        tracec_recorder_region_result res;
        cr_assert_eq(tracec_recorder_read_region(scratch, c.len, c.gen, r == TRACEC_RECORDER_REGION_DURABLE, collect,
                                                 s, &res),
                     TRACEC_STATUS_SUCCESS, "region %u: %s at %zu", r, res.why ? res.why : "", res.end);
        cr_assert_eq(res.end, c.len);
        cr_assert_eq(res.blocks, st.region[r].blocks);
    }
    free(scratch);
}

static char g_dir[64];

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/tracec-region-XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    (void)system(cmd);
}

/* protoc --decode's view of the trace: its trusted_packet_sequence_id and name lines, in order. */
static char *protoc_view(const char *trace) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s --decode=perfetto.protos.Trace -I %s/protos perfetto/trace/trace.proto < %s | "
             "grep -E 'trusted_packet_sequence_id|name:' | sed 's/^ *//'",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, trace);
    tt_buf b = {0};
    cr_assert_eq(tt_capture(cmd, &b), 0, "protoc --decode failed: %s", b.data ? b.data : "");
    return b.data ? b.data : strdup("");
}

/* One peer per mode, each with its own threads' sequences (local ids 1 and 2 in every peer), a record of
   its own without an id, chunks in each half, descriptors in the durable part.  The trace holds every
   packet once, in the recorder's order, each peer's sequences on global ids of their own. */
Test(region, a_shared_buffer_of_each_mode_reads_back_through_protoc, .init = setup, .fini = teardown) {
    char path[128];
    snprintf(path, sizeof path, "%s/regions.pftrace", g_dir);
    tracec_trace_file *trace;
    cr_assert_eq(tracec_trace_file_open(path, &trace), TRACEC_STATUS_SUCCESS);
    uint32_t next = 2, pred = 2; /* the recorder's counter, and the test's prediction of it */
    char expect[4096] = "";
    size_t used = 0;
#define EXPECT(seq, name) used += (size_t)snprintf(expect + used, sizeof expect - used, \
                              "trusted_packet_sequence_id: %u\nname: \"%s\"\n", (unsigned)(seq), name)
    const tracec_buffering_mode_t modes[] = {TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFERING_MODE_CIRCULAR,
                                             TRACEC_BUFFERING_MODE_ONESHOT};
    size_t total = 0;
    for (size_t i = 0; i < 3; i++) {
        tracec_buffering_mode_t mode = modes[i];
        shm m = shm_new(mode, 2 * PAGE);
        tracec_i_rec_seqmap map;
        uint32_t dflt = next++; /* the peer's own sequence, given at registration */
        pred++;
        tracec_i_rec_seqmap_init(&map, dflt);
        /* the global ids the recorder will give, in the order it first sees the local ids */
        uint32_t g1 = 0, g2 = 0;
        char name[32];
        if (mode != TRACEC_BUFFERING_MODE_STREAMING) {
            ru_writer d = shm_writer(&m, TRACEC_RECORDER_REGION_DURABLE);
            snprintf(name, sizeof name, "m%zu-desc", i);
            ru_packet_record(&d, 1, name, 1, 1);
            shm_publish(&m, TRACEC_RECORDER_REGION_DURABLE, &d, 0, 1);
            g1 = pred++;
            EXPECT(g1, name);
        }
        /* the older half first: with two halves, the writers fill half 0 (active) after half 1 */
        uint32_t halves[2] = {1, 0};
        uint32_t first = m.g.halves == 2 ? 0 : 1;
        hdr(&m)->active = 0;
        for (uint32_t k = first; k < 2; k++) {
            uint32_t h = halves[k];
            uint64_t gen = 10 + h;
            ru_writer w = shm_writer(&m, h);
            ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(gen));
            for (int e = 0; e < 2; e++) {
                snprintf(name, sizeof name, "m%zu-h%u-t1-%d", i, h, e);
                ru_packet_record(&w, 100 + (uint64_t)e, name, 1, 1);
                if (g1 == 0) g1 = pred++;
                EXPECT(g1, name);
            }
            ru_chunk_end(&w, 64);
            ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(gen));
            snprintf(name, sizeof name, "m%zu-h%u-t2", i, h);
            ru_packet_record(&w, 200, name, 1, 2);
            if (g2 == 0) g2 = pred++;
            EXPECT(g2, name);
            ru_chunk_end(&w, 0);
            snprintf(name, sizeof name, "m%zu-h%u-raw", i, h);
            ru_packet_record(&w, 300, name, 0, 0);
            EXPECT(dflt, name);
            shm_publish(&m, h, &w, gen, 1);
        }
        sink s = new_sink();
        recorder_reads(&m, trace, &map, &next, &s);
        total += s.n;
        cr_expect_eq(map.refused, 0);
        tracec_i_rec_seqmap_free(&map);
        shm_free(&m);
    }
#undef EXPECT
    cr_assert_eq(tracec_trace_file_close(trace), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(total, 8 + 9 + 5);
    cr_expect_eq(next, pred);
    char *got = protoc_view(path);
    cr_expect_str_eq(got, expect);
    free(got);
}

/* ---- the header check ------------------------------------------------------------------------- */

Test(region_header, geometry_must_match_and_words_are_clamped) {
    shm m = shm_new(TRACEC_BUFFERING_MODE_CIRCULAR, 2 * PAGE);
    tracec_shm_header good, h;
    memcpy(&good, m.ro, sizeof good);
    tracec_recorder_shm_state st;
    const char *why;
    cr_assert_eq(tracec_recorder_check_shm_header(&good, &m.g, &st, &why), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(st.handed, 0);
    cr_expect_eq(st.clamped, 0);
    /* the geometry echo */
    struct {
        const char *what;
        size_t off;
        uint64_t value;
        int size;
        tracec_status_t want;
    } bad[] = {
        {"magic", offsetof(tracec_shm_header, magic), 0x3130304d48534354u, 8, TRACEC_STATUS_CORRUPT_DATA},
        {"version", offsetof(tracec_shm_header, version), 3, 4, TRACEC_STATUS_VERSION_MISMATCH},
        {"header_bytes", offsetof(tracec_shm_header, header_bytes), 8192, 4, TRACEC_STATUS_CORRUPT_DATA},
        {"mode", offsetof(tracec_shm_header, mode), TRACEC_BUFFERING_MODE_STREAMING, 4, TRACEC_STATUS_CORRUPT_DATA},
        {"halves", offsetof(tracec_shm_header, halves), 1, 4, TRACEC_STATUS_CORRUPT_DATA},
        {"size", offsetof(tracec_shm_header, size), 1u << 30, 8, TRACEC_STATUS_CORRUPT_DATA},
        {"half_bytes", offsetof(tracec_shm_header, half_bytes), UINT64_MAX, 8, TRACEC_STATUS_CORRUPT_DATA},
        {"durable_bytes", offsetof(tracec_shm_header, durable_bytes), 0, 8, TRACEC_STATUS_CORRUPT_DATA},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h = good;
        if (bad[i].size == 8)
            memcpy((uint8_t *)&h + bad[i].off, &bad[i].value, 8);
        else {
            uint32_t v = (uint32_t)bad[i].value;
            memcpy((uint8_t *)&h + bad[i].off, &v, 4);
        }
        why = NULL;
        cr_expect_eq(tracec_recorder_check_shm_header(&h, &m.g, &st, &why), bad[i].want, "%s", bad[i].what);
        cr_expect_not_null(why, "%s", bad[i].what);
    }
    /* words out of range are clamped, and say so */
    h = good;
    h.active = 7;
    h.half[0] = (tracec_shm_region){5, TRACEC_SHM_REGION_HANDED, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    h.half[1] = (tracec_shm_region){9, 77, 61, 40, 3};
    h.durable = (tracec_shm_region){1, TRACEC_SHM_REGION_HANDED, 64, 4, 64};
    h.dropped = 12;
    cr_assert_eq(tracec_recorder_check_shm_header(&h, &m.g, &st, &why), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(st.active, 0);
    cr_expect_eq(st.handed, 1u | 1u << TRACEC_RECORDER_REGION_DURABLE);
    cr_expect_eq(st.clamped, 1u | 2u | 8u);
    cr_expect_eq(st.region[0].gen, 5);
    cr_expect_eq(st.region[0].extent, m.g.half_bytes);
    cr_expect_eq(st.region[0].blocks, m.g.half_bytes / 16);
    cr_expect_eq(st.region[0].reserved, m.g.half_bytes);
    cr_expect_eq(st.region[1].handed, TRACEC_SHM_REGION_FREE);
    cr_expect_eq(st.region[1].extent, 56);
    cr_expect_eq(st.region[1].blocks, 3);
    cr_expect_eq(st.region[1].reserved, 0, "down to a multiple of 8");
    cr_expect_eq(st.region[2].extent, 64);
    cr_expect_eq(st.dropped, 12);
    /* a region the geometry lacks: half 1 of ONESHOT */
    shm o = shm_new(TRACEC_BUFFERING_MODE_ONESHOT, PAGE);
    memcpy(&h, o.ro, sizeof h);
    h.active = 1;
    h.half[1] = (tracec_shm_region){3, TRACEC_SHM_REGION_HANDED, 64, 2, 64};
    cr_assert_eq(tracec_recorder_check_shm_header(&h, &o.g, &st, &why), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(st.active, 0);
    cr_expect_eq(st.handed, 0);
    cr_expect_eq(st.region[1].extent, 0);
    cr_expect_eq(st.clamped, 2u | 8u);
    /* a bad geometry of the caller's */
    tracec_recorder_shm_geometry g = o.g;
    g.halves = 2;
    cr_expect_eq(tracec_recorder_check_shm_header(&h, &g, &st, &why), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_recorder_shm_bytes(&g), 0);
    cr_expect_eq(tracec_recorder_shm_bytes(&o.g), PAGE + o.g.half_bytes + PAGE);
    shm_free(&o);
    shm_free(&m);
}

/* ---- the copy --------------------------------------------------------------------------------- */

/*
 * A writer that reuses the half while the recorder copies it: the half's two pages are mapped
 * without access, and the fault of the copy's first read of each one bumps the half's gen (as a
 * writer does before it rewrites) and opens that page while closing the other, so every try sees
 * the gen change (BAD_STATE), or, with `g_bumps_left`, only the first tries do.
 */
static tracec_shm_region *g_live;
static uint8_t *g_pages;
static int g_bumps_left;

static void on_fault(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    uint8_t *a = (uint8_t *)si->si_addr;
    if (a < g_pages || a >= g_pages + 2 * PAGE) abort();
    size_t page = (size_t)(a - g_pages) / PAGE;
    mprotect(g_pages + page * PAGE, PAGE, PROT_READ);
    if (g_bumps_left != 0) {
        if (g_bumps_left > 0) g_bumps_left--;
        __atomic_fetch_add(&g_live->gen, 1, __ATOMIC_SEQ_CST);
        mprotect(g_pages + (page ^ 1u) * PAGE, PAGE, PROT_NONE);
    }
}

static void copy_under_reuse(int bumps, tracec_status_t want) {
    shm m = shm_new(TRACEC_BUFFERING_MODE_STREAMING, PAGE / 2); /* halves of two pages */
    cr_assert_eq(m.g.half_bytes, 2 * PAGE);
    ru_writer w = shm_writer(&m, 0);
    for (int i = 0; w.off < 2 * PAGE - 256; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        ru_packet_record(&w, (uint64_t)i, name, 0, 0);
    }
    shm_publish(&m, 0, &w, 4, 1);
    g_live = &hdr(&m)->half[0];
    g_pages = (uint8_t *)m.ro + PAGE;
    g_bumps_left = bumps;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
    cr_assert_eq(mprotect(g_pages, PAGE, PROT_NONE), 0);
    uint8_t *scratch = malloc(2 * PAGE);
    tracec_recorder_region_copy c;
    tracec_status_t st = tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 0, false, 4, 0, scratch, 2 * PAGE, &c);
    mprotect(g_pages, 2 * PAGE, PROT_READ);
    signal(SIGSEGV, SIG_DFL);
    cr_expect_eq(st, want);
    if (want == TRACEC_STATUS_SUCCESS) {
        cr_expect_eq(c.gen, 4 + (uint64_t)bumps, "the gen the copy held still under");
        cr_expect_eq(c.len, w.off);
        sink s = new_sink();
        tracec_recorder_region_result res;
        cr_expect_eq(tracec_recorder_read_region(scratch, c.len, c.gen, false, collect, &s, &res),
                     TRACEC_STATUS_SUCCESS);
        cr_expect_eq(res.blocks, w.blocks);
    } else {
        cr_expect_eq(c.len, 0);
        cr_expect_geq(__atomic_load_n(&g_live->gen, __ATOMIC_SEQ_CST), 4 + 16);
    }
    free(scratch);
    shm_free(&m);
}

Test(region_copy, a_region_reused_during_every_copy_is_not_read) { copy_under_reuse(-1, TRACEC_STATUS_BAD_STATE); }

Test(region_copy, a_region_reused_during_the_first_copies_is_read_once_it_holds_still) {
    copy_under_reuse(3, TRACEC_STATUS_SUCCESS);
}

Test(region_copy, from_and_extent) {
    shm m = shm_new(TRACEC_BUFFERING_MODE_CIRCULAR, PAGE);
    ru_writer w = shm_writer(&m, 1);
    ru_packet_record(&w, 1, "a", 0, 0);
    size_t mid = w.off;
    ru_packet_record(&w, 2, "b", 0, 0);
    shm_publish(&m, 1, &w, 3, 1);
    uint8_t *scratch = malloc(m.g.half_bytes);
    tracec_recorder_region_copy c;
    /* the same gen: from where the last copy ended */
    cr_assert_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 1, false, 3, (uint32_t)mid, scratch, m.g.half_bytes, &c),
                 TRACEC_STATUS_SUCCESS);
    cr_expect_eq(c.from, mid);
    cr_expect_eq(c.extent, w.off);
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_expect_eq(tracec_recorder_read_region(scratch, c.len, c.gen, false, collect, &s, &res), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(s.n, 1);
    cr_expect_str_eq(s.names[0], "b");
    /* another gen: from 0 */
    cr_assert_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 1, false, 2, (uint32_t)mid, scratch, m.g.half_bytes, &c),
                 TRACEC_STATUS_SUCCESS);
    cr_expect_eq(c.from, 0);
    cr_expect_eq(c.len, w.off);
    /* the same gen with an extent below where the last copy ended: corrupt */
    cr_expect_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 1, false, 3, (uint32_t)w.off + 8, scratch, m.g.half_bytes,
                                             &c),
                 TRACEC_STATUS_CORRUPT_DATA);
    /* an extent past the region is clamped to it */
    hdr(&m)->half[1].extent = UINT32_MAX;
    cr_assert_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 1, false, 0, 0, scratch, m.g.half_bytes, &c),
                 TRACEC_STATUS_SUCCESS);
    cr_expect_eq(c.extent, m.g.half_bytes);
    /* bad arguments */
    cr_expect_eq(tracec_recorder_copy_region(m.ro, m.bytes - 1, &m.g, 1, false, 0, 0, scratch, m.g.half_bytes, &c),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 1, false, 0, 0, scratch, m.g.half_bytes - 8, &c),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_expect_eq(tracec_recorder_copy_region(m.ro, m.bytes, &m.g, 3, false, 0, 0, scratch, m.g.half_bytes, &c),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    free(scratch);
    shm_free(&m);
}

/* ---- a region the buffer engine wrote ---------------------------------------------------------- */

static void ignore_records(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                           uint64_t drops) {
    (void)c, (void)b, (void)h, (void)n, (void)d, (void)drops;
}

/*
 * A started context (*ctx) and a buffer of `mode` and `size` in a sealed memfd of its own (*fd, *need bytes),
 * delivering to ignore_records, as a recorded process makes one.
 */
static tracec_buffer_id_t engine_memfd_buffer(tracec_buffering_mode_t mode, size_t size, tracec_context_id_t *ctx,
                                              int *fd, size_t *need) {
    cr_assert_eq(tracec_create_context(ctx), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_start_context(*ctx), TRACEC_STATUS_SUCCESS);
    *need = tracec_buffer_memory_size(mode, size, 0);
    cr_assert_gt(*need, 0);
    *fd = memfd_create("tracec-region-engine", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_eq(ftruncate(*fd, (off_t)*need), 0);
    cr_assert_eq(fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = TRACEC_BUFFER_POLICY_NONE;
    cfg.size = size;
    cfg.callback = ignore_records;
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = *fd;
    tracec_buffer_id_t b;
    cr_assert_eq(tracec_create_buffer_with_config(*ctx, &cfg, &b), TRACEC_STATUS_SUCCESS);
    return b;
}

/* The memfd (need bytes) mapped read only, as the recorder maps it; *g: the geometry its header gives. */
static const uint8_t *map_as_recorder(int fd, size_t need, tracec_recorder_shm_geometry *g) {
    const uint8_t *ro = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(ro, MAP_FAILED);
    tracec_shm_header h;
    memcpy(&h, ro, sizeof h);
    *g = (tracec_recorder_shm_geometry){h.mode, h.halves, h.size, h.half_bytes, h.durable_bytes};
    return ro;
}

/*
 * Records the engine's tracec_buffer_emit wrote into a memfd buffer, read as the recorder reads a half:
 * each payload handed back whole and in order.  Where the engine writes the header page of
 * tracec/abi/shm_layout.h the walk takes the half's extent from it; where it does not (yet), the half
 * starts at the memfd's first byte and the walk ends at the first block never written.  Chunks of
 * packet writers are covered by the hand-built regions above (the engine tags them with the half's gen).
 */
Test(region_engine, records_the_engine_wrote_read_back) {
    tracec_context_id_t ctx;
    int fd;
    size_t need;
    tracec_buffer_id_t b = engine_memfd_buffer(TRACEC_BUFFERING_MODE_ONESHOT, PAGE, &ctx, &fd, &need);
    enum { N = 20 };
    for (int i = 0; i < N; i++) {
        uint8_t pk[64];
        char name[16];
        snprintf(name, sizeof name, "engine-%d", i);
        size_t n = ru_packet(pk, 1000 + (uint64_t)i, name, 1, 1);
        cr_assert_eq(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, 1, pk, n), TRACEC_STATUS_SUCCESS);
    }
    /* then packets of a buffer writer: one chunk of the active half */
    enum { M = 5 };
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, b, 0), TRACEC_STATUS_SUCCESS);
    for (int i = 0; i < M; i++) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        char name[16];
        snprintf(name, sizeof name, "chunk-%d", i);
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                   &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, 2000 + (uint64_t)i);
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
        perfetto_protos_TrackEvent_set_cstr_name(&ev, name);
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt.msg), TRACEC_STATUS_SUCCESS);
    }
    const uint8_t *ro = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(ro, MAP_FAILED);
    const uint8_t *half = ro;
    size_t extent = need < 3 * PAGE ? need : 3 * PAGE;
    uint64_t magic, gen = 0;
    memcpy(&magic, ro, 8);
    bool with_header = magic == TRACEC_SHM_MAGIC;
    if (with_header) {
        tracec_shm_header h;
        memcpy(&h, ro, sizeof h);
        tracec_recorder_shm_geometry g = {h.mode, h.halves, h.size, h.half_bytes, h.durable_bytes};
        tracec_recorder_shm_state st;
        cr_assert_eq(tracec_recorder_check_shm_header(&h, &g, &st, NULL), TRACEC_STATUS_SUCCESS);
        half = ro + TRACEC_SHM_HEADER_BYTES;
        extent = st.region[0].reserved > st.region[0].extent ? st.region[0].reserved : st.region[0].extent;
        gen = st.region[0].gen;
    }
    uint8_t *copy = malloc(extent);
    memcpy(copy, half, extent);
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_expect_eq(tracec_recorder_read_region(copy, extent, gen, false, collect, &s, &res), TRACEC_STATUS_SUCCESS,
                 "%s at %zu", res.why ? res.why : "", res.end);
    cr_expect_eq(res.corrupt, 0);
    /* the chunk: read when its tag is its half's (with the header page), else where the engine does not tag
       its chunks yet (kind 0), the walk ends there as at a chunk of another generation */
    if (with_header || res.stale == 0)
        cr_expect_eq(res.records, N + M);
    else
        cr_expect_eq(res.records, N, "the records before the untagged chunk");
    for (int i = 0; i < (int)s.n; i++) {
        char name[16];
        snprintf(name, sizeof name, i < N ? "engine-%d" : "chunk-%d", i < N ? i : i - N);
        cr_expect_str_eq(s.names[i], name);
        cr_expect_eq(s.kinds[i], i < N ? 1u : (uint32_t)TRACEC_BUFFER_TRACING_TRACK_EVENT);
    }
    tracec_buffer_writer_release(&bw);
    free(copy);
    munmap((void *)ro, need);
    cr_assert_eq(tracec_destroy_buffer(b), TRACEC_STATUS_SUCCESS);
    close(fd);
}

/* A writer thread of the engine that writes packets into `b` until told to stop. */
typedef struct live_writer {
    tracec_buffer_id_t b;
    int stop; /* atomic */
    uint64_t written;
} live_writer;

static void *write_until_stopped(void *arg) {
    live_writer *lw = arg;
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, lw->b, 0), TRACEC_STATUS_SUCCESS);
    while (!__atomic_load_n(&lw->stop, __ATOMIC_ACQUIRE)) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                   &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, 1000 + lw->written);
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
        perfetto_protos_TrackEvent_set_cstr_name(&ev, "live");
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        if (tracec_buffer_end_packet(&bw, &w, &pkt.msg) == TRACEC_STATUS_SUCCESS) lw->written++;
    }
    tracec_buffer_writer_release(&bw);
    return NULL;
}

static tracec_status_t count_record(void *data, const uint8_t *packet, size_t size, uint32_t category,
                                    uint32_t kind) {
    (void)packet, (void)size, (void)category, (void)kind;
    (*(uint64_t *)data)++;
    return TRACEC_STATUS_SUCCESS;
}

/*
 * Salvage copies (a provider that did not stop in time) of the half a
 * live writer fills, for 300 ms (about 170,000 copies here): every copy
 * walks without a corrupt record, however it races the writer's commits
 * and wraps.  The copy reads each chunk's committed length before the
 * bytes it covers (region.c, copy_in_order).
 */
Test(region_engine, salvage_copies_under_a_live_writer_are_never_corrupt, .timeout = 60) {
    tracec_context_id_t ctx;
    int fd;
    size_t need;
    /* 8 KiB: chunks of 1 KiB, so the writer is often at the end of the range copied */
    tracec_buffer_id_t b = engine_memfd_buffer(TRACEC_BUFFERING_MODE_CIRCULAR, 8u << 10, &ctx, &fd, &need);
    tracec_recorder_shm_geometry g;
    const uint8_t *ro = map_as_recorder(fd, need, &g);
    tracec_shm_header h;
    size_t cap = (size_t)g.half_bytes;
    uint8_t *copy = malloc(cap);
    cr_assert_not_null(copy);
    live_writer lw = {b, 0, 0};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_until_stopped, &lw), 0);
    uint64_t copies = 0, records = 0, corrupt = 0;
    const char *why = NULL;
    size_t at = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) { /* 300 ms of copies */
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) > 300000000L) break;
        tracec_recorder_shm_state st;
        memcpy(&h, ro, sizeof h);
        if (tracec_recorder_check_shm_header(&h, &g, &st, NULL) != TRACEC_STATUS_SUCCESS) continue;
        tracec_recorder_region_copy c;
        if (tracec_recorder_copy_region(ro, need, &g, st.active, true, 0, 0, copy, cap, &c) != TRACEC_STATUS_SUCCESS)
            continue;
        copies++;
        tracec_recorder_region_result res;
        tracec_status_t rs = tracec_recorder_read_region(copy, c.len, c.gen, false, count_record, &records, &res);
        (void)rs; /* res says it */
        if (res.corrupt) {
            corrupt++;
            why = res.why;
            at = res.end;
        }
    }
    __atomic_store_n(&lw.stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    cr_expect_eq(corrupt, 0, "%llu of %llu copies corrupt (last: %s at byte %zu)", (unsigned long long)corrupt,
                 (unsigned long long)copies, why ? why : "", at);
    cr_expect_gt(records, 0, "records read back (%llu written)", (unsigned long long)lw.written);
    free(copy);
    munmap((void *)ro, need);
    cr_assert_eq(tracec_destroy_buffer(b), TRACEC_STATUS_SUCCESS);
    close(fd);
}

/* A durable packet the engine's writer has begun is seen by a salvage copy of the durable part (out->open), and
   not once it ended (then it is in the copy); a copy that is not a salvage never looks. */
Test(region_engine, a_durable_packet_begun_is_seen_by_a_salvage) {
    tracec_context_id_t ctx;
    int fd;
    size_t need;
    tracec_buffer_id_t b = engine_memfd_buffer(TRACEC_BUFFERING_MODE_CIRCULAR, 8u << 10, &ctx, &fd, &need);
    tracec_recorder_shm_geometry g;
    const uint8_t *ro = map_as_recorder(fd, need, &g);
    cr_assert_gt(g.durable_bytes, 0);
    uint8_t *copy = malloc(g.durable_bytes);
    tracec_recorder_region_copy c;
    const uint32_t D = TRACEC_RECORDER_REGION_DURABLE;
    cr_assert_eq(tracec_recorder_copy_region(ro, need, &g, D, true, 0, 0, copy, g.durable_bytes, &c),
                 TRACEC_STATUS_SUCCESS);
    cr_expect_eq(c.open, 0, "nothing begun");
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, b, 0), TRACEC_STATUS_SUCCESS);
    for (int round = 0; round < 2; round++) { /* at the part's first byte, then after a packet */
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA,
                                   &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, 10 + (uint64_t)round);
        cr_assert_eq(tracec_recorder_copy_region(ro, need, &g, D, true, 0, 0, copy, g.durable_bytes, &c),
                     TRACEC_STATUS_SUCCESS);
        cr_expect_eq(c.open, 1, "round %d: the packet begun", round);
        cr_expect_eq(c.len, (size_t)round * 24u, "round %d: the packets ended before it", round);
        cr_assert_eq(tracec_recorder_copy_region(ro, need, &g, D, false, 0, 0, copy, g.durable_bytes, &c),
                     TRACEC_STATUS_SUCCESS);
        cr_expect_eq(c.open, 0, "only a salvage looks");
        cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt.msg), TRACEC_STATUS_SUCCESS);
        cr_assert_eq(tracec_recorder_copy_region(ro, need, &g, D, true, 0, 0, copy, g.durable_bytes, &c),
                     TRACEC_STATUS_SUCCESS);
        cr_expect_eq(c.open, 0, "round %d: ended", round);
        cr_expect_eq(c.len, (size_t)(round + 1) * 24u);
    }
    tracec_buffer_writer_release(&bw);
    free(copy);
    munmap((void *)ro, need);
    cr_assert_eq(tracec_destroy_buffer(b), TRACEC_STATUS_SUCCESS);
    close(fd);
}

/* ---- fuzz_record's seeds of the header-page shape -------------------------------------------------- */

/* Each region_* seed of fuzz_record's corpus (fuzz/record/make_region_seeds.py: a header, then half 0, half 1 and
   the durable part) read as the recorder reads a peer: kept, cut short, stale or refused as its name says. */
Test(region, fuzz_seeds_read_as_their_names_say) {
    static const struct {
        const char *name;
        tracec_buffering_mode_t mode;
        uint64_t records;
        int end; /* 0 whole, 1 corrupt, 2 stale, 3 unwritten, 4 header refused */
    } seeds[] = {
        {"region_streaming", TRACEC_BUFFERING_MODE_STREAMING, 6, 0},
        {"region_circular", TRACEC_BUFFERING_MODE_CIRCULAR, 7, 0},
        {"region_oneshot", TRACEC_BUFFERING_MODE_ONESHOT, 5, 0},
        {"region_truncated_chunk", TRACEC_BUFFERING_MODE_STREAMING, 1, 1},
        {"region_foreign_tag", TRACEC_BUFFERING_MODE_STREAMING, 1, 2},
        {"region_huge_committed", TRACEC_BUFFERING_MODE_STREAMING, 1, 1},
        {"region_salvage", TRACEC_BUFFERING_MODE_STREAMING, 1, 3},
        {"region_other_geometry", TRACEC_BUFFERING_MODE_CIRCULAR, 0, 4},
        {"region_usual_runs", TRACEC_BUFFERING_MODE_STREAMING, 12, 0},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/fuzz/record/corpus/%s", TRACEC_SOURCE_DIR, seeds[i].name);
        tt_buf file = {0};
        cr_assert(tt_read_file(path, &file), "%s", path);
        tracec_recorder_shm_geometry g = {seeds[i].mode, seeds[i].mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1u : 2u,
                                          256, 768, seeds[i].mode == TRACEC_BUFFERING_MODE_STREAMING ? 0u : 256u};
        size_t bytes = (size_t)tracec_recorder_shm_bytes(&g);
        cr_assert_geq(file.size, sizeof(tracec_shm_header));
        uint8_t *map = calloc(1, bytes), *scratch = malloc(768);
        memcpy(map, file.data, sizeof(tracec_shm_header));
        size_t rest = file.size - sizeof(tracec_shm_header);
        memcpy(map + PAGE, file.data + sizeof(tracec_shm_header), rest < bytes - PAGE ? rest : bytes - PAGE);
        tracec_shm_header h;
        memcpy(&h, map, sizeof h);
        tracec_recorder_shm_state st;
        tracec_status_t hs = tracec_recorder_check_shm_header(&h, &g, &st, NULL);
        cr_expect_eq(hs, seeds[i].end == 4 ? TRACEC_STATUS_CORRUPT_DATA : TRACEC_STATUS_SUCCESS, "%s", seeds[i].name);
        uint64_t records = 0, corrupt = 0, stale = 0, unwritten = 0;
        const uint32_t order[] = {TRACEC_RECORDER_REGION_DURABLE, st.active ^ 1u, st.active};
        for (size_t k = 0; hs == TRACEC_STATUS_SUCCESS && k < 3 && corrupt == 0; k++) {
            uint32_t r = order[k];
            if (r < TRACEC_RECORDER_REGION_DURABLE && r >= g.halves) continue;
            bool salvage = r == st.active && !(st.handed & (1u << r));
            if (!(st.handed & (1u << r)) && !salvage) continue;
            tracec_recorder_region_copy c;
            cr_assert_eq(tracec_recorder_copy_region(map, bytes, &g, r, salvage, 0, 0, scratch, 768, &c),
                         TRACEC_STATUS_SUCCESS);
            sink s = new_sink();
            tracec_recorder_region_result res;
            tracec_status_t rs = tracec_recorder_read_region(scratch, c.len, c.gen,
                                                             r == TRACEC_RECORDER_REGION_DURABLE, collect, &s, &res);
            cr_expect_eq(rs, res.corrupt ? TRACEC_STATUS_CORRUPT_DATA : TRACEC_STATUS_SUCCESS, "%s", seeds[i].name);
            records += res.records;
            corrupt += res.corrupt;
            stale += res.stale;
            unwritten += res.unwritten;
        }
        cr_expect_eq(records, seeds[i].records, "%s", seeds[i].name);
        cr_expect_eq(corrupt, seeds[i].end == 1, "%s", seeds[i].name);
        cr_expect_eq(stale, seeds[i].end == 2, "%s", seeds[i].name);
        cr_expect_eq(unwritten, seeds[i].end == 3, "%s", seeds[i].name);
        free(map);
        free(scratch);
        tt_buf_free(&file);
    }
}

/* A chunk whose record header after its committed bytes is marked open (a packet its writer had begun) is
   counted in `open`; its committed records are read as ever, and a chunk with zeros there counts nothing. */
Test(region, a_packet_begun_in_a_chunk_is_counted_open) {
    memset(g_buf, 0, sizeof g_buf);
    ru_writer w = ru_writer_at(g_buf, sizeof g_buf);
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(3));
    ru_packet_record(&w, 1, "done", 0, 0);
    size_t open_at = w.off;
    ru_chunk_end(&w, 64);
    ru_writer m = ru_writer_at(g_buf, sizeof g_buf);
    m.off = open_at;
    ru_header(&m, 0, TRACEC_I_OPEN_MARK, 0, 0); /* the begun packet's header; its fields after it */
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(3));
    ru_packet_record(&w, 2, "other", 0, 0);
    ru_chunk_end(&w, 32); /* zeros after it */
    ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(3));
    ru_packet_record(&w, 3, "full", 0, 0);
    ru_chunk_end(&w, 0); /* no room after it */
    sink s = new_sink();
    tracec_recorder_region_result res;
    cr_assert_eq(read_buf(g_buf, w.off, 3, false, &s, &res), TRACEC_STATUS_SUCCESS, "%s", res.why ? res.why : "");
    cr_expect_eq(res.records, 3);
    cr_expect_eq(res.open, 1);
    cr_expect_eq(res.corrupt, 0);
}

/* ---- the recorder's save ----------------------------------------------------------------------- */

/* Each record saved whole, as the recorder saves a record outside a run of usual ones: the packet inside a
   Trace.packet field unwrapped, then tracec_i_rec_save_packet. */
typedef struct whole_sink {
    tracec_trace_file *f;
    tracec_i_rec_seqmap map;
    uint32_t next;
    int mark;
    uint64_t written;
} whole_sink;

static tracec_status_t save_whole(void *data, const uint8_t *packet, size_t size, uint32_t category, uint32_t kind) {
    (void)category, (void)kind;
    whole_sink *s = data;
    packet = tracec_i_rec_unwrap(packet, &size);
    tracec_status_t st = tracec_i_rec_save_packet(s->f, &s->map, &s->next, packet, size, 4321, 1000, &s->mark, NULL);
    if (st == TRACEC_STATUS_LIMIT_EXCEEDED) return TRACEC_STATUS_SUCCESS;
    if (st == TRACEC_STATUS_SUCCESS) s->written++;
    return st;
}

static uint64_t rnd(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/*
 * The recorder saves runs of usual records by their shapes
 * (tracec_i_rec_save_region).  Over random chunks of the buffer writers'
 * records (one Trace.packet field each): mostly one sequence's instants,
 * with other sequences, other shapes, records not wrapped, wrappers with a
 * two-byte length, loss marks, and a byte changed here and there, it ends
 * where saving each record whole ends and writes the same bytes.
 */
Test(region, the_recorders_save_by_shape_writes_what_saving_each_record_whole_writes) {
    whole_sink a;
    memset(&a, 0, sizeof a);
    cr_assert_eq(tracec_trace_file_open_memory(&a.f), TRACEC_STATUS_SUCCESS);
    tracec_i_rec_seqmap_init(&a.map, 2);
    a.next = 3;
    tracec_trace_file *bf;
    cr_assert_eq(tracec_trace_file_open_memory(&bf), TRACEC_STATUS_SUCCESS);
    tracec_i_rec_seqmap bmap;
    tracec_i_rec_seqmap_init(&bmap, 2);
    uint32_t bnext = 3;
    int bmark = 0;
    uint64_t x = 0x2545f4914f6cdd1dull, ts = 1000, runs = 0, bad_rounds = 0;
    for (int round = 0; round < 1500; round++) {
        memset(g_buf, 0, sizeof g_buf);
        ru_writer w = ru_writer_at(g_buf, sizeof g_buf);
        uint64_t gen = 2 + (uint64_t)round;
        for (int c = 0, chunks = 1 + (int)(rnd(&x) % 3u); c < chunks; c++) {
            ru_chunk_begin(&w, TRACEC_SHM_CHUNK_TAG(gen));
            for (int r = 0, recs = 1 + (int)(rnd(&x) % 14u); r < recs; r++) {
                unsigned pick = (unsigned)(rnd(&x) % 100u);
                char name[160];
                uint64_t seq = pick < 80 ? 1 : pick < 84 ? 2 : pick < 88 ? 300 : 1; /* 300: longer than its global id */
                if (pick >= 88 && pick < 92)
                    snprintf(name, sizeof name, "a name of another length %d", r);
                else if (pick >= 92 && pick < 94)
                    memset(name, 'n', 120), name[120] = 0; /* a wrapper with a two-byte length */
                else
                    snprintf(name, sizeof name, "ev-%d", r % 10);
                ts += 1 + rnd(&x) % 300u; /* timestamps of 2 and 3 bytes */
                uint8_t pk[200], rec[208];
                size_t n = ru_packet(pk, ts, name, 1, seq);
                rec[0] = 0x0A;
                size_t k = (size_t)(ru_varint(rec + 1, n) - rec);
                memcpy(rec + k, pk, n);
                k += n;
                if (pick >= 94 && pick < 96) { /* not wrapped */
                    memcpy(rec, pk, n);
                    k = n;
                } else if (pick >= 96 && pick < 98) { /* a byte changed */
                    rec[rnd(&x) % k] ^= (uint8_t)(1u + rnd(&x) % 255u);
                }
                ru_record(&w, rec, k, 0, 1);
            }
            ru_chunk_end(&w, (uint32_t)(rnd(&x) % 3u) * 8u);
        }
        if (round % 7 == 3) a.mark = bmark = 1; /* a loss before this region: its first packet saved is marked */
        tracec_recorder_region_result ra, rb;
        uint64_t before = a.written;
        tracec_status_t sa = tracec_i_rec_walk_region(g_buf, w.off, gen, false, false, save_whole, &a, &ra);
        tracec_i_rec_saver sv = {bf, &bmap, &bnext, 4321, 1000, &bmark, 0, NULL, 0};
        tracec_status_t sb = tracec_i_rec_save_region(g_buf, w.off, gen, false, &sv, &rb);
        cr_assert_eq(sa, sb, "round %d", round);
        cr_assert(ra.records == rb.records && ra.end == rb.end && ra.corrupt == rb.corrupt && ra.blocks == rb.blocks &&
                      ra.bytes == rb.bytes,
                  "round %d: records %llu %llu, end %zu %zu", round, (unsigned long long)ra.records,
                  (unsigned long long)rb.records, ra.end, rb.end);
        cr_assert_eq(a.written - before, sv.delivered, "round %d", round);
        cr_assert_eq(a.mark, bmark, "round %d", round);
        bad_rounds += ra.corrupt;
        runs += sv.delivered;
    }
    size_t ka = 0, kb = 0;
    const uint8_t *da = tracec_trace_file_data(a.f, &ka), *db = tracec_trace_file_data(bf, &kb);
    cr_assert_eq(ka, kb);
    cr_assert(memcmp(da, db, ka) == 0, "the same bytes");
    cr_expect_eq(a.map.refused, bmap.refused);
    cr_expect_gt(bad_rounds, 0, "some rounds end at a changed byte");
    cr_expect_gt(runs, 10000, "most records are saved");
    tracec_i_rec_seqmap_free(&a.map);
    tracec_i_rec_seqmap_free(&bmap);
    tracec_trace_file_close(a.f);
    tracec_trace_file_close(bf);
}
