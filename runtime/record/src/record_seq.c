/*
 * record_seq.c - the recorder's map from a peer's sequence ids to the
 * trace's (record_seq.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "record_check.h"
#include "record_seq.h"
#include "tracec/abi/buffer_abi.h"
#include "tracec/abi/hints.h"
#include "tracec/trace_file.h"
#include "tracec/wire.h"
#include "tracec/writer.h"

void tracec_i_rec_seqmap_init(tracec_i_rec_seqmap *m, uint32_t default_id) {
    memset(m, 0, sizeof *m);
    m->default_id = default_id;
}

void tracec_i_rec_seqmap_free(tracec_i_rec_seqmap *m) {
    free(m->slot);
    m->slot = NULL;
    free(m->shapes);
    m->shapes = NULL;
    m->cap = m->count = 0;
    m->last.global = 0;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* The slot of `local`, or the free slot where it goes (cap > count, so there is one). */
static tracec_i_rec_seq_slot *find(const tracec_i_rec_seqmap *m, uint64_t local) {
    uint32_t mask = m->cap - 1u;
    for (uint32_t i = (uint32_t)mix(local) & mask;; i = (i + 1u) & mask)
        if (m->slot[i].global == 0 || m->slot[i].local == local) return &m->slot[i];
}

/* Doubles the slots (at most 2 * TRACEC_I_REC_SEQ_MAX: the map stays at most half full). */
static bool grow(tracec_i_rec_seqmap *m) {
    uint32_t cap = m->cap ? m->cap * 2u : 16u;
    tracec_i_rec_seq_slot *s = calloc(cap, sizeof *s);
    if (s == NULL) return false;
    tracec_i_rec_seqmap old = *m;
    m->slot = s;
    m->cap = cap;
    for (uint32_t i = 0; i < old.cap; i++)
        if (old.slot[i].global != 0) *find(m, old.slot[i].local) = old.slot[i];
    free(old.slot);
    return true;
}

uint32_t tracec_i_rec_seqmap_get(tracec_i_rec_seqmap *m, uint64_t local, uint32_t *next) {
    if (local == 0) return m->default_id;
    if (m->last.global != 0 && m->last.local == local) return m->last.global;
    if (m->cap > 0) {
        tracec_i_rec_seq_slot *s = find(m, local);
        if (s->global != 0) {
            m->last = *s;
            return s->global;
        }
    }
    if (m->count >= TRACEC_I_REC_SEQ_MAX || *next == 0 || *next == UINT32_MAX ||
        ((m->count + 1u) * 2u > m->cap && !grow(m))) {
        m->refused++;
        return 0;
    }
    tracec_i_rec_seq_slot *s = find(m, local);
    s->local = local;
    s->global = (*next)++;
    m->count++;
    m->last = *s;
    return s->global;
}

/* previous_packet_dropped = true, after the trusted fields of a packet the peer's loss mark is on */
static const uint8_t k_dropped[] = {
    (uint8_t)(TRACEC_TAG(perfetto_protos_TracePacket_previous_packet_dropped_field_number, TRACEC_WIRE_VARINT) |
              0x80u),
    (uint8_t)(TRACEC_TAG(perfetto_protos_TracePacket_previous_packet_dropped_field_number, TRACEC_WIRE_VARINT) >> 7),
    1};
/* What put_trusted may store past a packet's own bytes */
#define TRUSTED_ROOM (TRACEC_I_REC_TRUSTED_COPY + sizeof k_dropped)

_Static_assert(2u + 10u + 1u + 10u <= TRACEC_I_REC_TRUSTED_COPY, "the trusted fields fit their copy");

/* Encodes the trusted fields of pid and uid into m (as the generated setters write int32 values). */
static void trust(tracec_i_rec_seqmap *m, int32_t pid, int32_t uid) {
    uint8_t *t = tracec_put_tag(m->trusted, TRACEC_TAG(perfetto_protos_TracePacket_trusted_pid_field_number,
                                                       TRACEC_WIRE_VARINT));
    t = tracec_put_varint64(t, (uint64_t)(int64_t)pid);
    t = tracec_put_tag(t, TRACEC_TAG(perfetto_protos_TracePacket_trusted_uid_field_number, TRACEC_WIRE_VARINT));
    t = tracec_put_varint64(t, (uint64_t)(int64_t)uid);
    m->trusted_n = (uint8_t)(t - m->trusted);
    m->trusted_pid = pid;
    m->trusted_uid = uid;
}

/* Stores the trusted fields at o (and previous_packet_dropped): up to TRUSTED_ROOM bytes, of which the fields'
   own are kept. */
static inline void put_trusted(uint8_t *o, const tracec_i_rec_seqmap *m, bool dropped) {
    memcpy(o, m->trusted, TRACEC_I_REC_TRUSTED_COPY);
    if (dropped) memcpy(o + m->trusted_n, k_dropped, sizeof k_dropped);
}

/* Copies p[0..n) to o, 8 <= n: 16 bytes at a time, the last block again in part, nothing read or written past
   either end.  A packet of a few dozen bytes costs a few loads and stores, where a string copy (rep movs)
   would take tens of cycles to start. */
static inline void copy_short(uint8_t *o, const uint8_t *p, size_t n) {
    uint64_t a, b;
    if (n < 16u) {
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8u, 8);
        memcpy(o, &a, 8);
        memcpy(o + n - 8u, &b, 8);
        return;
    }
    uint8_t t[16];
    for (size_t i = 0; i + 16u < n; i += 16u) {
        memcpy(t, p + i, 16);
        memcpy(o + i, t, 16);
    }
    memcpy(t, p + n - 16u, 16);
    memcpy(o + n - 16u, t, 16);
}

/* Writes the usual packet p[0..n) (scanned into *s: its one sequence id as long as g's) as a Trace.packet
   record of `body` bytes at o, with g in place of its id and the trusted fields after it; returns its end. */
static inline uint8_t *put_usual(uint8_t *o, const tracec_i_rec_seqmap *m, const uint8_t *p, size_t n,
                                 const tracec_i_rec_scan *s, uint32_t g, size_t body, bool dropped) {
    *o++ = (uint8_t)TRACEC_TAG(1, TRACEC_WIRE_LEN); /* Trace.packet */
    o = tracec_put_varint64(o, body);
    if (n >= 8u && n <= 128u)
        copy_short(o, p, n);
    else
        memcpy(o, p, n);
    (void)tracec_put_varint32(o + s->cut[0] + 1, g);
    put_trusted(o + n, m, dropped);
    return o + body;
}

/* Copies p[0..n) (scanned into *s) to `out` without its field-10 fields; returns the end of what it wrote. */
static uint8_t *copy_without_seq(uint8_t *out, const uint8_t *p, size_t n, const tracec_i_rec_scan *s) {
    if (s->seq_fields == 0) {
        memcpy(out, p, n);
        return out + n;
    }
    if (s->seq_fields <= TRACEC_I_REC_SCAN_CUTS) {
        uint32_t from = 0;
        for (uint32_t i = 0; i < s->seq_fields; i++) {
            memcpy(out, p + from, s->cut[2 * i] - from);
            out += s->cut[2 * i] - from;
            from = s->cut[2 * i + 1];
        }
        memcpy(out, p + from, n - from);
        return out + (n - from);
    }
    /* more than the scan located: the packet's fields again (it passed the check: each reads) */
    const uint8_t *q = p, *end = p + n, *at;
    const char *why;
    tracec_wire_field f;
    while (tracec_wire_read_field(&q, end, 0, &f, &why, &at) > 0) {
        if (f.number == TRACEC_I_REC_SEQ_FIELD) continue;
        memcpy(out, f.start, (size_t)(f.end - f.start));
        out += f.end - f.start;
    }
    return out;
}

bool tracec_i_rec_seq_rewrite(tracec_i_rec_seqmap *m, uint32_t *next, const uint8_t *p, size_t n, uint8_t *out,
                              size_t cap, size_t *out_n, uint32_t *global) {
    tracec_i_rec_scan s;
    /* first the id: the map may refuse the packet, and then nothing is written */
    if (cap < n + TRACEC_I_REC_SEQ_EXTRA || !tracec_i_rec_packet_scan(p, n, &s, NULL)) return false;
    uint32_t g = tracec_i_rec_seqmap_get(m, s.local, next);
    if (g == 0) return false;
    uint8_t *o = copy_without_seq(out, p, n, &s);
    *o++ = (uint8_t)TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT);
    o = tracec_put_varint32(o, g);
    *out_n = (size_t)(o - out);
    if (global) *global = g;
    return true;
}

/*
 * The record check of p[0..n) (tracec_i_rec_packet_scan), by the peer's
 * shapes: a packet with the shape of one checked before passes as it did;
 * any other is checked whole, and its shape replaces the one of its set
 * used less lately.
 */
static inline bool scan_packet(tracec_i_rec_seqmap *m, const uint8_t *p, size_t n, tracec_i_rec_scan *s,
                               const char **why) {
    tracec_i_rec_shapes *c = m->shapes;
    if (TRACEC_I_UNLIKELY(n < 8u || n > TRACEC_I_REC_SHAPE_MAX)) return tracec_i_rec_packet_scan(p, n, s, why);
    if (TRACEC_I_UNLIKELY(c == NULL)) {
        if (m->no_shapes || (c = m->shapes = calloc(1, sizeof *c)) == NULL) {
            m->no_shapes = 1;
            return tracec_i_rec_packet_scan(p, n, s, why);
        }
    }
    size_t set = n % TRACEC_I_REC_SHAPE_SETS;
    unsigned v = c->victim[set]; /* the way used last is tried first: v ^ 1 */
    if (TRACEC_I_LIKELY(tracec_i_rec_shape_match(&c->way[set][v ^ 1u], p, n, s))) {
        c->hits++;
        return true;
    }
    if (tracec_i_rec_shape_match(&c->way[set][v], p, n, s)) {
        c->victim[set] = (uint8_t)(v ^ 1u);
        c->hits++;
        return true;
    }
    if (TRACEC_I_UNLIKELY(c->hits + c->made >= 4096u)) { /* what happened lately counts */
        c->hits /= 2u;
        c->made /= 2u;
    }
    /* Shapes that are made and not used (more made than a quarter of the hits): one miss in SPARSE makes one. */
    if (c->made >= 64u && c->made * 4u > c->hits && ++c->misses % TRACEC_I_REC_SHAPE_SPARSE != 0)
        return tracec_i_rec_packet_scan(p, n, s, why);
    c->made++;
    if (!tracec_i_rec_packet_shape(p, n, s, &c->way[set][v], why)) return false;
    if (c->way[set][v].n != 0) c->victim[set] = (uint8_t)(v ^ 1u);
    return true;
}

tracec_status_t tracec_i_rec_save_packet(struct tracec_trace_file *out, tracec_i_rec_seqmap *m, uint32_t *next,
                                         const uint8_t *p, size_t n, int32_t pid, int32_t uid, int *mark,
                                         const char **why) {
    tracec_i_rec_scan s;
    if (!scan_packet(m, p, n, &s, why)) return TRACEC_STATUS_CORRUPT_DATA;
    /* a run of one sequence's packets: the id asked for last, without a call */
    uint32_t g = s.local != 0 && m->last.global != 0 && m->last.local == s.local
                     ? m->last.global
                     : tracec_i_rec_seqmap_get(m, s.local, next);
    if (g == 0) return TRACEC_STATUS_LIMIT_EXCEEDED;
    /* appended last, so they win over anything the peer wrote: the peer's trusted_pid and trusted_uid (encoded
       once per peer), and previous_packet_dropped when marked */
    if (TRACEC_I_UNLIKELY(m->trusted_n == 0 || m->trusted_pid != pid || m->trusted_uid != uid)) trust(m, pid, uid);
    bool dropped = mark && *mark;
    size_t k = m->trusted_n + (dropped ? sizeof k_dropped : 0u);
    tracec_writer w;
    tracec_status_t st;
    if (s.seq_fields == 1 && p[s.cut[0]] == TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT) &&
        s.cut[1] - s.cut[0] == 1u + tracec_varint_size(g)) {
        /* the usual packet: its one id (a varint) as long as the global one, which takes its place; the
           record's length is known before it is written, and it goes straight into the file's buffer when
           that has room (else through a writer, which drains or grows it) */
        size_t body = n + k, need = 1u + TRACEC_MAX_VARINT_SIZE + n + TRUSTED_ROOM;
        uint8_t *end = NULL, *o = tracec_i_trace_file_span(out, &end);
        if (TRACEC_I_LIKELY(o != NULL && (size_t)(end - o) >= need)) {
            st = tracec_i_trace_file_append_n(out, put_usual(o, m, p, n, &s, g, body, dropped), 1);
        } else {
            tracec_i_trace_file_begin_raw(out, &w);
            if (tracec_writer_reserve(&w, need)) w.ptr = put_usual(w.ptr, m, p, n, &s, g, body, dropped);
            st = tracec_i_trace_file_commit(out, w.base, w.ptr, w.status);
        }
    } else {
        tracec_i_trace_file_begin_raw(out, &w);
        perfetto_protos_TracePacket pkt;
        tracec_writer_begin_packet(&w, &pkt.msg);
        if (tracec_writer_reserve(&w, n + TRACEC_I_REC_SEQ_EXTRA + TRUSTED_ROOM)) {
            uint8_t *o = copy_without_seq(w.ptr, p, n, &s);
            *o++ = (uint8_t)TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT);
            o = tracec_put_varint32(o, g);
            put_trusted(o, m, dropped);
            w.ptr = o + k;
        }
        (void)tracec_writer_end_packet(&w, &pkt.msg); /* its status is w.status */
        st = tracec_i_trace_file_commit(out, w.base, w.ptr, w.status);
    }
    if (st == TRACEC_STATUS_SUCCESS && mark) *mark = 0;
    return st;
}

/* The last `n` records save_run wrote, which the trace file refused with *st: lost when it is full (the walk goes
   on past them), else the error stands. */
static void refused(tracec_i_rec_saver *sv, uint64_t n, tracec_status_t *st) {
    if (*st != TRACEC_STATUS_LIMIT_EXCEEDED) return;
    sv->delivered -= n;
    sv->over_size += n;
    *st = TRACEC_STATUS_SUCCESS;
}

size_t tracec_i_rec_save_run(tracec_i_rec_saver *sv, const uint8_t *body, size_t n,
                             tracec_recorder_region_result *out, tracec_status_t *st) {
    tracec_i_rec_seqmap *m = sv->map;
    tracec_i_rec_shapes *c = m->shapes;
    size_t off = 0;
    *st = TRACEC_STATUS_SUCCESS;
    if (c == NULL || m->last.global == 0 || m->trusted_n == 0 || m->trusted_pid != sv->pid ||
        m->trusted_uid != sv->uid)
        return 0; /* the general path sets them up */
    if (tracec_i_trace_file_full(sv->out)) return 0; /* the general path counts each record it refuses */
    const uint32_t g = m->last.global;
    const uint64_t local = m->last.local;
    const size_t g_len = tracec_varint_size(g);
    uint8_t *o = NULL, *o_end = NULL; /* the trace's room, taken once and given back once */
    uint64_t written = 0;
    while (n - off >= TRACEC_I_BLK_HDR) {
        tracec_i_blk b;
        memcpy(&b, body + off, sizeof b);
        /* a sound record of one Trace.packet field with a one-byte length (else the general path: it says
           what is wrong, or unwraps a longer one) */
        if (b.body % TRACEC_I_BLK_ALIGN != 0 || b.body > n - off - TRACEC_I_BLK_HDR || b.size > b.body ||
            b.size < 2u + 8u || b.size > 2u + 127u)
            break;
        const uint8_t *p = body + off + TRACEC_I_BLK_HDR;
        size_t k = b.size - 2u;
        if (p[0] != 0x0A || p[1] != k) break;
        p += 2;
        size_t set = k % TRACEC_I_REC_SHAPE_SETS;
        const tracec_i_rec_shape *sh = &c->way[set][c->victim[set] ^ 1u];
        tracec_i_rec_scan s;
        if (!tracec_i_rec_shape_match(sh, p, k, &s) || s.local != local || s.local == 0 || s.seq_fields != 1 ||
            p[s.cut[0]] != TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT) || s.cut[1] - s.cut[0] != 1u + g_len)
            break;
        size_t need = 1u + TRACEC_MAX_VARINT_SIZE + k + TRUSTED_ROOM;
        if (o == NULL || (size_t)(o_end - o) < need) {
            if (written) {
                *st = tracec_i_trace_file_append_n(sv->out, o, written);
                if (*st != TRACEC_STATUS_SUCCESS) break;
                written = 0;
            }
            o = tracec_i_trace_file_span(sv->out, &o_end);
            if (o == NULL || (size_t)(o_end - o) < need) break; /* the general path drains or grows it */
        }
        bool dropped = sv->mark && *sv->mark;
        o = put_usual(o, m, p, k, &s, g, k + m->trusted_n + (dropped ? sizeof k_dropped : 0u), dropped);
        written++;
        if (sv->mark) *sv->mark = 0;
        sv->delivered++;
        out->records++;
        out->bytes += b.size;
        off += TRACEC_I_BLK_HDR + (size_t)b.body;
    }
    if (written && *st == TRACEC_STATUS_SUCCESS) *st = tracec_i_trace_file_append_n(sv->out, o, written);
    if (*st != TRACEC_STATUS_SUCCESS) refused(sv, written, st);
    return off;
}

tracec_status_t tracec_i_rec_write_packet(struct tracec_trace_file *out, tracec_i_rec_seqmap *m, uint32_t *next,
                                          const uint8_t *p, size_t n, int32_t pid, int32_t uid, int *mark) {
    return tracec_i_rec_save_packet(out, m, next, p, n, pid, uid, mark, NULL);
}
