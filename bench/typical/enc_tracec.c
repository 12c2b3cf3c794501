/*
 * enc_tracec.c - the typical packet through tracec's generated writers, into
 * the caller's array (tracec_writer_init_array, re-initialised per packet).
 */
#include "bench_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "typical.h"

BENCH_NOINLINE size_t bench_encode_tracec(void *ctx, const bench_input *in, uint8_t *buf,
                                          size_t cap) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    bench_BenchEvent ev;
    perfetto_protos_DebugAnnotation arg;
    (void)ctx;
    tracec_writer_init_array(&w, buf, cap);
    tracec_writer_begin_root(&w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, in->timestamp);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, in->sequence_id);
    perfetto_protos_TracePacket_begin_track_event_as_bench_BenchEvent(&pkt, &ev);
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
    perfetto_protos_TracePacket_end_track_event_as_bench_BenchEvent(&pkt, &ev);
    if (tracec_writer_end_root(&w, &pkt.msg) != TRACEC_STATUS_SUCCESS) return 0;
    return tracec_writer_size(&w);
}
