/*
 * record_seq.c - the recorder's map from a peer's sequence ids to the
 * trace's (record_seq.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "record_seq.h"
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
    m->cap = m->count = 0;
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
    if (m->cap > 0) {
        tracec_i_rec_seq_slot *s = find(m, local);
        if (s->global != 0) return s->global;
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
    return s->global;
}

bool tracec_i_rec_seq_local(const uint8_t *p, size_t n, uint64_t *local) {
    const uint8_t *q = p, *end = p + n, *at;
    const char *why;
    tracec_wire_field f;
    int rc;
    *local = 0;
    while ((rc = tracec_wire_read_field(&q, end, 0, &f, &why, &at)) > 0)
        if (f.number == TRACEC_I_REC_SEQ_FIELD && f.type == TRACEC_WIRE_VARINT) *local = f.value;
    return rc == 0;
}

bool tracec_i_rec_seq_rewrite(tracec_i_rec_seqmap *m, uint32_t *next, const uint8_t *p, size_t n, uint8_t *out,
                              size_t cap, size_t *out_n, uint32_t *global) {
    uint64_t local;
    /* first the id: the map may refuse the packet, and then nothing is written */
    if (cap < n + TRACEC_I_REC_SEQ_EXTRA || !tracec_i_rec_seq_local(p, n, &local)) return false;
    uint32_t g = tracec_i_rec_seqmap_get(m, local, next);
    if (g == 0) return false;
    const uint8_t *q = p, *end = p + n, *at;
    const char *why;
    tracec_wire_field f;
    uint8_t *o = out;
    while (tracec_wire_read_field(&q, end, 0, &f, &why, &at) > 0) {
        if (f.number == TRACEC_I_REC_SEQ_FIELD) continue;
        memcpy(o, f.start, (size_t)(f.end - f.start));
        o += f.end - f.start;
    }
    *o++ = (uint8_t)TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT);
    o = tracec_put_varint32(o, g);
    *out_n = (size_t)(o - out);
    if (global) *global = g;
    return true;
}

tracec_status_t tracec_i_rec_write_packet(struct tracec_trace_file *out, tracec_i_rec_seqmap *m, uint32_t *next,
                                          const uint8_t *p, size_t n, int32_t pid, int32_t uid, int *mark) {
    uint64_t local;
    if (!tracec_i_rec_seq_local(p, n, &local)) return TRACEC_STATUS_CORRUPT_DATA;
    if (tracec_i_rec_seqmap_get(m, local, next) == 0) return TRACEC_STATUS_LIMIT_EXCEEDED;
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_trace_file_begin_packet(out, &w, &pkt.msg);
    if (tracec_writer_reserve(&w, n + TRACEC_I_REC_SEQ_EXTRA)) {
        size_t k = 0;
        /* the id is mapped already: the rewrite cannot be refused */
        if (tracec_i_rec_seq_rewrite(m, next, p, n, w.ptr, n + TRACEC_I_REC_SEQ_EXTRA, &k, NULL)) w.ptr += k;
    }
    perfetto_protos_TracePacket_set_trusted_pid(&pkt, pid);
    perfetto_protos_TracePacket_set_trusted_uid(&pkt, uid);
    if (mark && *mark) perfetto_protos_TracePacket_set_previous_packet_dropped(&pkt, true);
    tracec_status_t st = tracec_trace_file_end_packet(out, &w, &pkt.msg);
    if (st == TRACEC_STATUS_SUCCESS && mark) *mark = 0;
    return st;
}
