/*
 * descriptor_trace.c - a program linked against the generated code of
 * examples/my_events.proto and test_extensions/test_extensions.proto as
 * static libraries (and with --gc-sections), that only includes their
 * headers.  It writes:
 *
 *   OUTDIR/trace.pftrace  a trace whose first packet is my_events.proto's
 *                         ExtensionDescriptor, then events that use every
 *                         extension of both files;
 *   OUTDIR/registry.pb    every FileDescriptorSet in the compile-time
 *                         registry, concatenated (= one merged set);
 *   OUTDIR/registry.txt   the registry's file names, one a line.
 *
 * test_descriptors.c (generator_descriptors) checks them with protoc and
 * python3-protobuf.  This is a plain program, not the Criterion test itself:
 * --gc-sections would drop Criterion's test table along with unused code.
 */
#include <stdio.h>
#include <string.h>

#include "my_events.tracec.h"
#include "test_extensions.tracec.h"
#include "tracec/trace_file.h"

static void descriptor_packet(tracec_trace_file *f) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
    my_events_write_extension_descriptor(&pkt);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

static void my_event(tracec_trace_file *f) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    my_app_MyEvent ev;
    my_app_RequestInfo req;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 100);
    perfetto_protos_TracePacket_begin_track_event_as_my_app_MyEvent(&pkt, &ev);
    my_app_MyEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    my_app_MyEvent_set_cstr_name(&ev, "my event");
    my_app_MyEvent_set_cstr_custom_string(&ev, "custom");
    my_app_MyEvent_set_custom_counter(&ev, -42);
    my_app_MyEvent_set_mood(&ev, my_app_MOOD_BUSY);
    my_app_MyEvent_begin_request(&ev, &req);
    my_app_RequestInfo_set_cstr_url(&req, "https://example.org/");
    my_app_RequestInfo_set_status_code(&req, 404);
    my_app_MyEvent_end_request(&ev, &req);
    my_app_MyEvent_set_retry_delays_ms(&ev, 10);
    my_app_MyEvent_set_retry_delays_ms(&ev, 20);
    perfetto_protos_TracePacket_end_track_event_as_my_app_MyEvent(&pkt, &ev);
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

static void test_extensions_event(tracec_trace_file *f) {
    static const int64_t packed[] = {-1, 0, 1};
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    perfetto_protos_TestExtensionChild child;
    perfetto_protos_DebugAnnotation ann;
    perfetto_protos_InternedData interned;
    perfetto_protos_EventName name;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 200);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN);
    perfetto_protos_TrackEvent_set_cstr_perfetto_protos_string_extension_for_testing(&ev, "s1");
    perfetto_protos_TrackEvent_set_perfetto_protos_int_extension_for_testing(&ev, 7);
    perfetto_protos_TrackEvent_set_perfetto_protos_int_extension_for_testing(&ev, -8);
    perfetto_protos_TrackEvent_set_cstr_perfetto_protos_omitted_extension_for_testing(&ev, "o");
    perfetto_protos_TrackEvent_begin_perfetto_protos_nested_message_extension_for_testing(&ev, &child);
    perfetto_protos_TestExtensionChild_set_cstr_child_field_for_testing(&child, "child");
    perfetto_protos_TestExtensionChild_begin_debug_annotations(&child, &ann);
    perfetto_protos_DebugAnnotation_set_cstr_name(&ann, "arg1");
    perfetto_protos_DebugAnnotation_set_int_value(&ann, 5);
    perfetto_protos_TestExtensionChild_end_debug_annotations(&child, &ann);
    perfetto_protos_TrackEvent_end_perfetto_protos_nested_message_extension_for_testing(&ev, &child);
    perfetto_protos_TrackEvent_set_perfetto_protos_uint_extension_for_testing(&ev, 4000000000u);
    perfetto_protos_TrackEvent_set_cstr_perfetto_protos_string_extension_for_testing2(&ev, "s2");
    perfetto_protos_TrackEvent_set_perfetto_protos_enum_extension_for_testing(
        &ev, perfetto_protos_TEST_EXTENSION_STATE_BACKGROUND);
    perfetto_protos_TrackEvent_set_perfetto_protos_packed_extension_for_testing(&ev, packed, 3);
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    perfetto_protos_TracePacket_begin_interned_data(&pkt, &interned);
    perfetto_protos_InternedData_begin_perfetto_protos_interned_extension_for_testing(&interned, &name);
    perfetto_protos_EventName_set_iid(&name, 9);
    perfetto_protos_EventName_set_cstr_name(&name, "interned");
    perfetto_protos_InternedData_end_perfetto_protos_interned_extension_for_testing(&interned, &name);
    perfetto_protos_TracePacket_end_interned_data(&pkt, &interned);
    perfetto_protos_TracePacket_set_cstr_perfetto_protos_packet_extension_for_testing(&pkt, "packet");
    tracec_trace_file_end_packet(f, &w, &pkt.msg);
}

static int dump_registry(const char *path, const char *names_path) {
    FILE *out = fopen(path, "wb");
    FILE *names = fopen(names_path, "w");
    if (out == NULL || names == NULL) {
        perror(out == NULL ? path : names_path);
        return 1;
    }
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d)) {
        if (fwrite(d->set, 1, d->set_size, out) != d->set_size) return 1;
        fprintf(names, "%s\n", d->file_name);
    }
    /* Both files are closed, whatever the first close returns. */
    int out_rc = fclose(out);
    int names_rc = fclose(names);
    return out_rc == 0 && names_rc == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: descriptor_trace OUTDIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.pftrace", argv[1]);
    tracec_trace_file *f;
    if (tracec_trace_file_open(path, &f) != TRACEC_STATUS_SUCCESS) {
        perror(path);
        return 1;
    }
    descriptor_packet(f); /* first: a decoder needs it before the events */
    my_event(f);
    test_extensions_event(f);
    uint64_t dropped = tracec_trace_file_dropped(f);
    if (tracec_trace_file_close(f) != TRACEC_STATUS_SUCCESS || dropped != 0) {
        fprintf(stderr, "descriptor_trace: writing %s failed\n", path);
        return 1;
    }
    char names[4096];
    snprintf(path, sizeof path, "%s/registry.pb", argv[1]);
    snprintf(names, sizeof names, "%s/registry.txt", argv[1]);
    return dump_registry(path, names);
}
