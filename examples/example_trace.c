/*
 * example_trace.c - the packets of the example trace, one function each, so
 * the program (example.c) and its test (example_test.c) share them.
 */
#include "example_trace.h"

#include <stddef.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"

enum { kSequenceId = 1, kTrackUuid = 0x1234 };

void example_write_descriptor_packet(tracec_trace_file *f) {
    tracec_writer w; /* the packet's writer: a local, so it stays in registers */
    perfetto_protos_TracePacket pkt;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, kSequenceId);
    my_events_write_extension_descriptor(&pkt);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

void example_write_track(tracec_trace_file *f) {
    tracec_writer w; /* the packet's writer: a local, so it stays in registers */
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor track;
    perfetto_protos_ThreadDescriptor thread;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, kSequenceId);
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &track);
    perfetto_protos_TrackDescriptor_set_uuid(&track, kTrackUuid);
    perfetto_protos_TrackDescriptor_set_cstr_name(&track, "main thread");
    perfetto_protos_TrackDescriptor_begin_thread(&track, &thread);
    perfetto_protos_ThreadDescriptor_set_pid(&thread, 42);
    perfetto_protos_ThreadDescriptor_set_tid(&thread, 43);
    perfetto_protos_ThreadDescriptor_set_cstr_thread_name(&thread, "main");
    perfetto_protos_TrackDescriptor_end_thread(&track, &thread);
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &track);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

void example_write_slice(tracec_trace_file *f, uint64_t ts, perfetto_protos_TrackEvent_Type type,
                        const char *name) {
    tracec_writer w; /* the packet's writer: a local, so it stays in registers */
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    perfetto_protos_DebugAnnotation arg;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, ts);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, kSequenceId);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, type);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, kTrackUuid);
    perfetto_protos_TrackEvent_set_cstr_categories(&ev, "example");
    if (name) {
        perfetto_protos_TrackEvent_set_cstr_name(&ev, name);
        perfetto_protos_TrackEvent_begin_debug_annotations(&ev, &arg);
        perfetto_protos_DebugAnnotation_set_cstr_name(&arg, "frame");
        perfetto_protos_DebugAnnotation_set_int_value(&arg, 7);
        perfetto_protos_TrackEvent_end_debug_annotations(&ev, &arg);
        perfetto_protos_TrackEvent_begin_debug_annotations(&ev, &arg);
        perfetto_protos_DebugAnnotation_set_cstr_name(&arg, "phase");
        perfetto_protos_DebugAnnotation_set_cstr_string_value(&arg, "render");
        perfetto_protos_TrackEvent_end_debug_annotations(&ev, &arg);
    }
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

void example_write_my_event(tracec_trace_file *f, uint64_t ts) {
    static const uint32_t retries[] = {10, 20, 40};
    tracec_writer w; /* the packet's writer: a local, so it stays in registers */
    perfetto_protos_TracePacket pkt;
    my_app_MyEvent ev; /* a TrackEvent writer with the custom fields */
    my_app_RequestInfo req;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, ts);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, kSequenceId);
    perfetto_protos_TracePacket_begin_track_event_as_my_app_MyEvent(&pkt, &ev);
    my_app_MyEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    my_app_MyEvent_set_track_uuid(&ev, kTrackUuid);
    my_app_MyEvent_set_cstr_name(&ev, "request done");
    my_app_MyEvent_set_cstr_custom_string(&ev, "hello from C");
    my_app_MyEvent_set_custom_counter(&ev, -42);
    my_app_MyEvent_set_mood(&ev, my_app_MOOD_BUSY);
    my_app_MyEvent_begin_request(&ev, &req);
    my_app_RequestInfo_set_cstr_url(&req, "https://example.org/");
    my_app_RequestInfo_set_status_code(&req, 200);
    my_app_MyEvent_end_request(&ev, &req);
    for (size_t i = 0; i < sizeof retries / sizeof retries[0]; i++)
        my_app_MyEvent_set_retry_delays_ms(&ev, retries[i]);
    perfetto_protos_TracePacket_end_track_event_as_my_app_MyEvent(&pkt, &ev);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}


void example_write_trace(tracec_trace_file *f) {
    example_write_descriptor_packet(f);
    example_write_track(f);
    example_write_slice(f, 1000, perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN, "draw frame");
    example_write_my_event(f, 1500);
    example_write_slice(f, 2000, perfetto_protos_TrackEvent_TYPE_SLICE_END, NULL);
}
