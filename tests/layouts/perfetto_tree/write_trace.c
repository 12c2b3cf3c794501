/*
 * Layout (b), the program under test of layouts_all: writes argv[1], a trace
 * of the ExtensionDescriptor packets of Chrome's wrapper and of
 * test_extensions.proto, then one event with Chrome's wrapper and the
 * file-scope test extensions.  Every writer comes from the generated tree of
 * protos/perfetto/... (libtracec's built-in headers are on the include path
 * too, and must not be included).
 */
#include <stdio.h>

#include "protos/perfetto/trace/test_extensions.tracec.h"
#include "protos/third_party/chromium/chrome_track_event.tracec.h"
#include "tracec/trace_file.h"

int main(int argc, char **argv) {
    tracec_trace_file *f = NULL;
    if (argc != 2 || tracec_trace_file_open(argv[1], &f) != TRACEC_STATUS_SUCCESS) return 2;
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_status_t st[3];

    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    protos_third_party_chromium_chrome_track_event_write_extension_descriptor(&pkt);
    st[0] = tracec_trace_file_end_packet(f, &w, &pkt.msg);
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    protos_perfetto_trace_test_extensions_write_extension_descriptor(&pkt);
    st[1] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    perfetto_protos_ChromeTrackEvent ev;
    perfetto_protos_ChromeTestInfo info;
    perfetto_protos_TestExtensionChild child;
    perfetto_protos_DebugAnnotation arg;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 2000);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
    perfetto_protos_TracePacket_begin_track_event_as_perfetto_protos_ChromeTrackEvent(&pkt, &ev);
    perfetto_protos_ChromeTrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    perfetto_protos_ChromeTrackEvent_set_cstr_name(&ev, "perfetto_tree");
    perfetto_protos_ChromeTrackEvent_set_chrome_app_state(&ev, perfetto_protos_APP_STATE_BACKGROUND);
    perfetto_protos_ChromeTrackEvent_begin_chrome_test_info(&ev, &info);
    perfetto_protos_ChromeTestInfo_set_cstr_label(&info, "chrome");
    perfetto_protos_ChromeTestInfo_set_values(&info, -5);
    perfetto_protos_ChromeTrackEvent_end_chrome_test_info(&ev, &info);
    /* The file-scope extensions of test_extensions.proto, on the plain TrackEvent writer. */
    perfetto_protos_TrackEvent_set_cstr_perfetto_protos_string_extension_for_testing(&ev.base, "s");
    perfetto_protos_TrackEvent_set_perfetto_protos_int_extension_for_testing(&ev.base, 7);
    perfetto_protos_TrackEvent_set_perfetto_protos_int_extension_for_testing(&ev.base, 8);
    perfetto_protos_TrackEvent_begin_perfetto_protos_nested_message_extension_for_testing(&ev.base, &child);
    perfetto_protos_TestExtensionChild_set_cstr_child_field_for_testing(&child, "child");
    perfetto_protos_TestExtensionChild_begin_debug_annotations(&child, &arg);
    perfetto_protos_DebugAnnotation_set_cstr_name(&arg, "arg1");
    perfetto_protos_DebugAnnotation_set_int_value(&arg, 42);
    perfetto_protos_TestExtensionChild_end_debug_annotations(&child, &arg);
    perfetto_protos_TrackEvent_end_perfetto_protos_nested_message_extension_for_testing(&ev.base, &child);
    perfetto_protos_TrackEvent_set_perfetto_protos_uint_extension_for_testing(&ev.base, 9);
    perfetto_protos_TracePacket_end_track_event_as_perfetto_protos_ChromeTrackEvent(&pkt, &ev);
    st[2] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    tracec_status_t cl = tracec_trace_file_close(f);
    for (int i = 0; i < 3; i++)
        if (st[i] != TRACEC_STATUS_SUCCESS) return fprintf(stderr, "packet %d: status %d\n", i, (int)st[i]), 1;
    return cl == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
