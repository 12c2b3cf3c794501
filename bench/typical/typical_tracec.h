/*
 * typical_tracec.h - the typical packet's fields written with tracec's
 * generated writers into an open TracePacket, shared by bench_typical
 * (enc_tracec.c and enc_tracec_len4.c: into an array) and bench_buffer
 * (into a trace buffer), so all measure the same writes.  Each caller opens and closes the packet
 * its own way (tracec_writer_begin_root / tracec_buffer_begin_packet).
 * Always inlined, so each benchmark's measured code is what it was when
 * the writes stood in its own function.
 */
#ifndef BENCH_TYPICAL_TRACEC_H
#define BENCH_TYPICAL_TRACEC_H

#include "bench_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "typical.h"

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BENCH_ALWAYS_INLINE inline
#endif

/* The packet's track_event (the typical event with its extension fields). */
static BENCH_ALWAYS_INLINE void typical_tracec_event(perfetto_protos_TracePacket *pkt, const bench_input *in) {
    bench_BenchEvent ev;
    perfetto_protos_DebugAnnotation arg;
    perfetto_protos_TracePacket_begin_track_event_as_bench_BenchEvent(pkt, &ev);
    bench_BenchEvent_set_type(&ev, (perfetto_protos_TrackEvent_Type)in->type);
    bench_BenchEvent_set_track_uuid(&ev, in->track_uuid);
    bench_BenchEvent_set_name_iid(&ev, in->name_iid);
    bench_BenchEvent_set_category_iids(&ev, in->category_iid);
    bench_BenchEvent_begin_debug_annotations(&ev, &arg);
    perfetto_protos_DebugAnnotation_set_name_iid(&arg, in->annotation_name_iid);
    perfetto_protos_DebugAnnotation_set_int_value(&arg, in->annotation_int);
    bench_BenchEvent_end_debug_annotations(&ev, &arg);
    bench_BenchEvent_set_bench_counter(&ev, in->counter);
    bench_BenchEvent_set_bench_label(&ev, in->label, in->label_len);
    perfetto_protos_TracePacket_end_track_event_as_bench_BenchEvent(pkt, &ev);
}

static BENCH_ALWAYS_INLINE void typical_tracec_fields(perfetto_protos_TracePacket *pkt, const bench_input *in) {
    perfetto_protos_TracePacket_set_timestamp(pkt, in->timestamp);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(pkt, in->sequence_id);
    typical_tracec_event(pkt, in);
}

/* The whole packet into the caller's array (re-initialised per packet); its size, 0 on failure. */
static BENCH_ALWAYS_INLINE size_t typical_tracec_into_array(const bench_input *in, uint8_t *buf, size_t cap) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_writer_init_array(&w, buf, cap);
    tracec_writer_begin_root(&w, &pkt.msg);
    typical_tracec_fields(&pkt, in);
    if (tracec_writer_end_root(&w, &pkt.msg) != TRACEC_STATUS_SUCCESS) return 0;
    return tracec_writer_size(&w);
}

#endif
