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
 *     peer's sequence map into a trace; a walk that leaves the check to its
 *     one-pass save (tracec_i_rec_walk_region unchecked,
 *     tracec_i_rec_save_packet) must end where the checked walk ends and
 *     write the same bytes; and the recorder's own walk
 *     (tracec_i_rec_save_region: each record unwrapped from its Trace.packet
 *     field, runs of usual records saved by their shapes) must end where that
 *     walk ends, with each record unwrapped the same way, and write the same
 *     bytes.
 *
 * Both shapes also run the record check (tracec_i_rec_packet_scan) against
 * a reference written the plain way (tracec/wire.h's field reader on every
 * level, the schema searched field by field): same verdict, and the same
 * field-10 fields found.  And its shape (tracec_i_rec_packet_shape): a
 * packet changed in the bits the shape leaves free must pass the reference
 * with the shape's scan.  The recorder's own walk saves by the peer's
 * shapes, so its agreement with the checked walk covers them too.
 *
 * Every record accepted must come out as one whole Trace.packet; anything
 * else is CORRUPT_DATA (or a stale / unwritten end) with the records before
 * it kept.  Crashes, leaks, sanitizer reports and hangs are bugs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_check.h"
#include "record_seq.h"
#include "tracec/recorder.h"
#include "tracec/trace_file.h"
#include "tracec/wire.h"

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

/* ---- the record check against a plain reference ---- */

static const tracec_i_rec_field *ref_field(const tracec_i_rec_message *m, uint32_t number) {
    for (uint32_t i = 0; i < m->field_count; i++)
        if (m->fields[i].number == number) return &m->fields[i];
    return NULL;
}

static bool ref_packed(int wt, const uint8_t *p, size_t n) {
    if (wt == TRACEC_WIRE_FIXED32) return n % 4 == 0;
    if (wt == TRACEC_WIRE_FIXED64) return n % 8 == 0;
    const uint8_t *end = p + n;
    uint64_t v;
    while (p < end)
        if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return false;
    return true;
}

/* record_check.h's rule, field by field; at the packet's level (top) the field-10 fields are counted and the
   last VARINT one kept. */
static bool ref_ok(const tracec_i_rec_message *m, const uint8_t *p, size_t n, int depth, bool top, uint64_t *local,
                   uint32_t *seq_fields) {
    if (depth > TRACEC_I_REC_MAX_DEPTH) return false;
    tracec_wire_reader r;
    tracec_wire_field f;
    int rc;
    tracec_wire_reader_init(&r, p, n);
    r.max_group_depth = 0;
    while ((rc = tracec_wire_next(&r, &f)) > 0) {
        if (f.type == TRACEC_WIRE_SGROUP || f.type == TRACEC_WIRE_EGROUP) return false;
        if (top && f.number == 10) {
            (*seq_fields)++;
            if (f.type == TRACEC_WIRE_VARINT) *local = f.value;
        }
        const tracec_i_rec_field *d = m ? ref_field(m, f.number) : NULL;
        if (d == NULL || f.type != TRACEC_WIRE_LEN) continue;
        if (d->message && d->wire_type == TRACEC_WIRE_LEN) {
            if (!ref_ok(&tracec_i_rec_schema[d->message - 1], f.data, f.size, depth + 1, false, local, seq_fields))
                return false;
        } else if (d->packable && !ref_packed(d->wire_type, f.data, f.size)) {
            return false;
        }
    }
    return rc == 0;
}

static bool same_scan(const tracec_i_rec_scan *a, const tracec_i_rec_scan *b) {
    if (a->local != b->local || a->seq_fields != b->seq_fields) return false;
    for (uint32_t i = 0; i < a->seq_fields && i < TRACEC_I_REC_SCAN_CUTS; i++)
        if (a->cut[2 * i] != b->cut[2 * i] || a->cut[2 * i + 1] != b->cut[2 * i + 1]) return false;
    return true;
}

/*
 * The packet's shape (record_check.h): the same verdict and scan as the
 * whole check; and the packet with every bit the shape leaves free
 * changed (to bits of the packet read backwards) has the shape, and passes
 * the reference with the scan the shape gives it.
 */
static void check_shape(const uint8_t *p, size_t n, bool ok, const tracec_i_rec_scan *sc) {
    tracec_i_rec_shape sh;
    tracec_i_rec_scan s, t;
    const char *why = NULL;
    if (tracec_i_rec_packet_shape(p, n, &s, &sh, &why) != ok || (!ok && why == NULL)) abort();
    if (!ok) return;
    if (!same_scan(&s, sc)) abort();
    if (sh.n == 0) {
        if (n >= 8 && n <= TRACEC_I_REC_SHAPE_MAX && sc->seq_fields <= TRACEC_I_REC_SCAN_CUTS) abort();
        return;
    }
    uint8_t q[TRACEC_I_REC_SHAPE_MAX];
    for (size_t i = 0; i < n; i++)
        q[i] = (uint8_t)((p[i] & sh.mask[i]) | (~p[n - 1 - i] & ~sh.mask[i]));
    if (!tracec_i_rec_shape_match(&sh, p, n, &t) || !same_scan(&t, sc)) abort();
    if (!tracec_i_rec_shape_match(&sh, q, n, &t)) abort();
    uint64_t local = 0;
    uint32_t seq_fields = 0;
    if (!ref_ok(tracec_i_rec_schema_count ? &tracec_i_rec_schema[0] : NULL, q, n, 1, true, &local, &seq_fields)) abort();
    if (local != t.local || seq_fields != t.seq_fields) abort();
    tracec_i_rec_scan w;
    if (!tracec_i_rec_packet_scan(q, n, &w, &why) || !same_scan(&w, &t)) abort();
}

static void check_against_reference(const uint8_t *p, size_t n) {
    uint64_t local = 0;
    uint32_t seq_fields = 0;
    bool ref = ref_ok(tracec_i_rec_schema_count ? &tracec_i_rec_schema[0] : NULL, p, n, 1, true, &local, &seq_fields);
    tracec_i_rec_scan sc;
    const char *why = NULL;
    bool ok = tracec_i_rec_packet_scan(p, n, &sc, &why);
    if (ok != ref || (!ok && why == NULL)) abort();
    if (ok && (sc.local != local || sc.seq_fields != seq_fields)) abort();
    for (uint32_t i = 0; ok && i < sc.seq_fields && i < TRACEC_I_REC_SCAN_CUTS; i++) {
        const uint8_t *q = p + sc.cut[2 * i], *at;
        tracec_wire_field f;
        if (sc.cut[2 * i + 1] > n || tracec_wire_read_field(&q, p + n, 0, &f, &why, &at) != 1 || f.number != 10 ||
            q != p + sc.cut[2 * i + 1])
            abort();
    }
    check_shape(p, n, ok, &sc);
}

static void records_shape(const uint8_t *data, size_t size) {
    check_against_reference(data, size);
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

/* An empty sink: a trace in memory, sequence ids from 3, the first packet marked. */
static void sink_open(sink *s) {
    memset(s, 0, sizeof *s);
    if (tracec_trace_file_open_memory(&s->f) != TRACEC_STATUS_SUCCESS) abort();
    s->next = 3;
    s->mark = 1;
    tracec_i_rec_seqmap_init(&s->map, 2);
}

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

/* As write_packet, the packet unwrapped first and saved as the recorder saves it (tracec_i_rec_save_packet). */
static tracec_status_t save_unwrapped(void *data, const uint8_t *packet, size_t size, uint32_t category,
                                      uint32_t kind) {
    (void)category;
    (void)kind;
    sink *s = data;
    packet = tracec_i_rec_unwrap(packet, &size);
    tracec_status_t st = tracec_i_rec_save_packet(s->f, &s->map, &s->next, packet, size, 1234, 1000, &s->mark, NULL);
    if (st == TRACEC_STATUS_LIMIT_EXCEEDED) {
        s->refused++;
        return TRACEC_STATUS_SUCCESS;
    }
    if (st == TRACEC_STATUS_SUCCESS) s->written++;
    return st;
}

/* Accepts every record (the walk checked it); the packet inside a wrapped one is checked against the reference
   too. */
static tracec_status_t count_packet(void *data, const uint8_t *packet, size_t size, uint32_t category, uint32_t kind) {
    (void)data, (void)category, (void)kind;
    check_against_reference(packet, size);
    size_t n = size;
    const uint8_t *inner = tracec_i_rec_unwrap(packet, &n);
    if (inner != packet) check_against_reference(inner, n);
    return TRACEC_STATUS_SUCCESS;
}

static bool same_result(const tracec_recorder_region_result *a, const tracec_recorder_region_result *b) {
    return a->records == b->records && a->end == b->end && a->corrupt == b->corrupt && a->stale == b->stale &&
           a->unwritten == b->unwritten && a->blocks == b->blocks && a->empty == b->empty;
}

static bool same_bytes(tracec_trace_file *a, tracec_trace_file *b) {
    size_t ka = 0, kb = 0;
    const uint8_t *da = tracec_trace_file_data(a, &ka), *db = tracec_trace_file_data(b, &kb);
    return ka == kb && (ka == 0 || memcmp(da, db, ka) == 0);
}

static bool small_geometry(const tracec_shm_header *h, tracec_recorder_shm_geometry *g) {
    g->mode = h->mode;
    g->halves = h->halves;
    g->size = h->size;
    g->half_bytes = h->half_bytes;
    g->durable_bytes = h->durable_bytes;
    return h->half_bytes <= SMALL && h->durable_bytes <= SMALL && tracec_recorder_shm_bytes(g) != 0;
}


/* Whether the recorder saves region `r` of a peer in state `st`, and whether as a salvage (the active half,
   not handed: up to its reserved hint). */
static bool region_saved(const tracec_recorder_shm_geometry *g, const tracec_recorder_shm_state *st, uint32_t r,
                         bool *salvage) {
    if (r < TRACEC_RECORDER_REGION_DURABLE && r >= g->halves) return false;
    *salvage = r == st->active && !(st->handed & (1u << r));
    return (st->handed & (1u << r)) || *salvage;
}

/* Region r copied into scratch as the recorder copies it (nothing changes the memory under this copy); false
   if the recorder does not save r. */
static bool copy_saved(const tracec_recorder_shm_geometry *g, const tracec_recorder_shm_state *st, const uint8_t *map,
                       size_t bytes, uint32_t r, uint8_t *scratch, tracec_recorder_region_copy *c) {
    bool salvage;
    if (!region_saved(g, st, r, &salvage)) return false;
    size_t cap = r == TRACEC_RECORDER_REGION_DURABLE ? g->durable_bytes : g->half_bytes;
    if (tracec_recorder_copy_region(map, bytes, g, r, salvage, 0, 0, scratch, cap, c) != TRACEC_STATUS_SUCCESS)
        abort();
    return true;
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
    sink_open(&s);
    uint64_t records = 0;
    const uint32_t order[] = {TRACEC_RECORDER_REGION_DURABLE, st.active ^ 1u, st.active};
    for (size_t i = 0; i < 3; i++) {
        uint32_t r = order[i];
        bool salvage;
        if (!region_saved(&g, &st, r, &salvage)) continue;
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
    /* the recorder's walk: no check in the walk, the one-pass save checks; the same end, the same bytes */
    sink u;
    sink_open(&u);
    for (size_t i = 0; i < 3; i++) {
        uint32_t r = order[i];
        tracec_recorder_region_copy c;
        if (!copy_saved(&g, &st, map, bytes, r, scratch, &c)) continue;
        tracec_recorder_region_result a, b;
        tracec_status_t ra = tracec_recorder_read_region(scratch, c.len, c.gen, r == TRACEC_RECORDER_REGION_DURABLE,
                                                         count_packet, NULL, &a);
        tracec_status_t rb = tracec_i_rec_walk_region(scratch, c.len, c.gen, r == TRACEC_RECORDER_REGION_DURABLE,
                                                      false, write_packet, &u, &b);
        if (ra != rb || !same_result(&a, &b)) abort();
        if (rb == TRACEC_STATUS_CORRUPT_DATA) break;
    }
    if (u.written != s.written || !same_bytes(s.f, u.f)) abort();
    /* the recorder's save (tracec_i_rec_save_region: records unwrapped, runs of usual ones saved by their
       shapes) against the same walk with each record unwrapped and saved whole: the same ends, the same bytes */
    sink v, w;
    sink_open(&v);
    sink_open(&w);
    for (size_t i = 0; i < 3; i++) {
        uint32_t r = order[i];
        tracec_recorder_region_copy c;
        if (!copy_saved(&g, &st, map, bytes, r, scratch, &c)) continue;
        bool durable = r == TRACEC_RECORDER_REGION_DURABLE;
        tracec_recorder_region_result a, b;
        tracec_status_t ra = tracec_i_rec_walk_region(scratch, c.len, c.gen, durable, false, save_unwrapped, &v, &a);
        tracec_i_rec_saver sv = {w.f, &w.map, &w.next, 1234, 1000, &w.mark, 0, NULL, 0};
        tracec_status_t rb = tracec_i_rec_save_region(scratch, c.len, c.gen, durable, &sv, &b);
        w.written += sv.delivered;
        if (ra != rb || !same_result(&a, &b) || v.written != w.written || v.map.refused != w.map.refused) abort();
        if (rb == TRACEC_STATUS_CORRUPT_DATA) break;
    }
    if (!same_bytes(v.f, w.f)) abort();
    tracec_trace_file_close(w.f);
    tracec_i_rec_seqmap_free(&w.map);
    tracec_trace_file_close(v.f);
    tracec_i_rec_seqmap_free(&v.map);
    tracec_trace_file_close(u.f);
    tracec_i_rec_seqmap_free(&u.map);
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
