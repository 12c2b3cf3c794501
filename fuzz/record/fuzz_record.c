/*
 * fuzz_record.c - libFuzzer target: hostile bytes as what a writing process
 * put in the memory it shares with the recorder.  Two input shapes:
 *
 *   - the contents of a provider's shared-buffer half (v1: Trace.packet
 *     records back to back), through tracec_recorder_read_records;
 *   - an input that starts with TRACEC_SHM_MAGIC: a tracec_shm_header
 *     (tracec/abi/shm_layout.h, sizeof bytes) and then the bytes of half 0,
 *     half 1 and the durable part, back to back (each as long as the
 *     geometry says, the input's end zero-filled).  The geometry is the
 *     header's own echo when it is small and sane (the recorder's agreed one
 *     in real life), else a fixed one, so the check's mismatch paths run
 *     too.  Then as the recorder does: the header check, the copy of each
 *     handed region (and of the active half up to its `reserved` hint), the
 *     walk (tracec_recorder_read_region), and each packet rewritten with the
 *     peer's sequence map into a trace.
 *
 * Every record accepted must come out as one whole Trace.packet; anything
 * else is CORRUPT_DATA (or a stale / unwritten end) with the records before
 * it kept.  Crashes, leaks, sanitizer reports and hangs are bugs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_seq.h"
#include "tracec/recorder.h"
#include "tracec/trace_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What came out of f is whole Trace fields: appending it to another trace must be accepted, as n packets. */
static void check_whole(tracec_trace_file *f, uint64_t n) {
    if (tracec_trace_file_packets(f) != n) abort();
    tracec_trace_file *g;
    if (tracec_trace_file_open_memory(&g) == TRACEC_STATUS_SUCCESS) {
        size_t k = 0;
        const uint8_t *d = tracec_trace_file_data(f, &k);
        if (k > 0 && tracec_trace_file_append_raw(g, d, k) != TRACEC_STATUS_SUCCESS) abort();
        if (tracec_trace_file_packets(g) != n) abort();
        tracec_trace_file_close(g);
    }
}

static void records_shape(const uint8_t *data, size_t size) {
    tracec_trace_file *f;
    if (tracec_trace_file_open_memory(&f) != TRACEC_STATUS_SUCCESS) return;
    uint64_t n = 0;
    size_t bad = 0;
    tracec_status_t st = tracec_recorder_read_records(data, size, f, 7, 1234, 1000, &n, &bad, NULL);
    if (st != TRACEC_STATUS_SUCCESS && st != TRACEC_STATUS_CORRUPT_DATA) abort();
    if (st == TRACEC_STATUS_CORRUPT_DATA && bad >= size) abort();
    check_whole(f, n);
    tracec_trace_file_close(f);
}

/* ---- header page + regions ---- */

#define SMALL 65536u

typedef struct sink {
    tracec_trace_file *f;
    tracec_i_rec_seqmap map;
    uint32_t next;
    uint64_t written, refused;
    int mark; /* the first packet written is marked previous_packet_dropped */
} sink;

static tracec_status_t write_packet(void *data, const uint8_t *packet, size_t size, uint32_t category, uint32_t kind) {
    (void)category;
    (void)kind;
    sink *s = data;
    tracec_status_t st = tracec_i_rec_write_packet(s->f, &s->map, &s->next, packet, size, 1234, 1000, &s->mark);
    if (st == TRACEC_STATUS_LIMIT_EXCEEDED) {
        s->refused++; /* counted by the map too */
        return TRACEC_STATUS_SUCCESS;
    }
    if (st == TRACEC_STATUS_SUCCESS) s->written++;
    return st;
}

static bool small_geometry(const tracec_shm_header *h, tracec_recorder_shm_geometry *g) {
    g->mode = h->mode;
    g->halves = h->halves;
    g->size = h->size;
    g->half_bytes = h->half_bytes;
    g->durable_bytes = h->durable_bytes;
    return h->half_bytes <= SMALL && h->durable_bytes <= SMALL && tracec_recorder_shm_bytes(g) != 0;
}

static void region_shape(const uint8_t *data, size_t size) {
    tracec_shm_header h;
    memcpy(&h, data, sizeof h);
    tracec_recorder_shm_geometry g = {TRACEC_BUFFERING_MODE_STREAMING, 2, 1024, 3072, 0};
    if (!small_geometry(&h, &g)) g = (tracec_recorder_shm_geometry){TRACEC_BUFFERING_MODE_STREAMING, 2, 1024, 3072, 0};
    tracec_recorder_shm_state st;
    const char *why = NULL;
    tracec_status_t cs = tracec_recorder_check_shm_header(&h, &g, &st, &why);
    if (cs != TRACEC_STATUS_SUCCESS) {
        if (why == NULL) abort();
        return; /* a peer whose header does not match is not read */
    }
    /* the shared memory as the recorder maps it: the header page, then the input's region bytes */
    size_t bytes = (size_t)tracec_recorder_shm_bytes(&g);
    uint8_t *map = calloc(1, bytes), *scratch = malloc(g.half_bytes > g.durable_bytes ? g.half_bytes : g.durable_bytes);
    if (map == NULL || scratch == NULL) abort();
    memcpy(map, data, sizeof h);
    size_t rest = size - sizeof h;
    memcpy(map + TRACEC_SHM_HEADER_BYTES, data + sizeof h, rest < bytes - TRACEC_SHM_HEADER_BYTES ? rest : bytes - TRACEC_SHM_HEADER_BYTES);
    sink s;
    memset(&s, 0, sizeof s);
    if (tracec_trace_file_open_memory(&s.f) != TRACEC_STATUS_SUCCESS) abort();
    s.next = 3;
    s.mark = 1;
    tracec_i_rec_seqmap_init(&s.map, 2);
    uint64_t records = 0;
    const uint32_t order[] = {TRACEC_RECORDER_REGION_DURABLE, st.active ^ 1u, st.active};
    for (size_t i = 0; i < 3; i++) {
        uint32_t r = order[i];
        if (r < TRACEC_RECORDER_REGION_DURABLE && r >= g.halves) continue;
        bool salvage = r == st.active && !(st.handed & (1u << r));
        if (!(st.handed & (1u << r)) && !salvage) continue;
        tracec_recorder_region_copy c;
        size_t cap = r == TRACEC_RECORDER_REGION_DURABLE ? g.durable_bytes : g.half_bytes;
        tracec_status_t k = tracec_recorder_copy_region(map, bytes, &g, r, salvage, 0, 0, scratch, cap, &c);
        if (k != TRACEC_STATUS_SUCCESS) abort(); /* nothing changes the memory under this copy */
        if (c.extent != (salvage ? st.region[r].reserved : st.region[r].extent) || c.gen != st.region[r].gen) abort();
        size_t len = c.len;
        tracec_recorder_region_result res;
        tracec_status_t rs = tracec_recorder_read_region(scratch, len, c.gen, r == TRACEC_RECORDER_REGION_DURABLE,
                                                         write_packet, &s, &res);
        if (rs != TRACEC_STATUS_SUCCESS && rs != TRACEC_STATUS_CORRUPT_DATA) abort();
        if (res.end > len || res.corrupt + res.stale + res.unwritten > 1) abort();
        if ((rs == TRACEC_STATUS_CORRUPT_DATA) != (res.corrupt == 1)) abort();
        if (rs == TRACEC_STATUS_SUCCESS && res.stale + res.unwritten == 0 && res.end != len) abort();
        records += res.records;
        if (rs == TRACEC_STATUS_CORRUPT_DATA) break; /* the first bad block ends the peer's data */
    }
    if (records != s.written + s.refused || s.map.refused != s.refused) abort();
    check_whole(s.f, s.written);
    tracec_trace_file_close(s.f);
    tracec_i_rec_seqmap_free(&s.map);
    free(map);
    free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t magic = 0;
    if (size >= sizeof(tracec_shm_header)) memcpy(&magic, data, sizeof magic);
    if (magic == TRACEC_SHM_MAGIC)
        region_shape(data, size);
    else
        records_shape(data, size);
    return 0;
}
