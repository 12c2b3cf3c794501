/*
 * Layout (a), the program under test of layouts_all: writes argv[1], a trace
 * of acme/acme_events.proto's ExtensionDescriptor packet, then one
 * acme.AcmeEvent.  Built by the test from the generated code and the runtime.
 */
#include <stdio.h>

#include "acme/acme_events.tracec.h"
#include "tracec/trace_file.h"

int main(int argc, char **argv) {
    tracec_trace_file *f = NULL;
    if (argc != 2 || tracec_trace_file_open(argv[1], &f) != TRACEC_STATUS_SUCCESS) return 2;
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_status_t st[2];

    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    acme_acme_events_write_extension_descriptor(&pkt);
    st[0] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    acme_AcmeEvent ev;
    acme_AcmeRequest req;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 1000);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
    perfetto_protos_TracePacket_begin_track_event_as_acme_AcmeEvent(&pkt, &ev);
    acme_AcmeEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    acme_AcmeEvent_set_cstr_name(&ev, "builtin");
    acme_AcmeEvent_set_cstr_request_id(&ev, "req-a");
    acme_AcmeEvent_set_retry_latencies_ms(&ev, 10);
    acme_AcmeEvent_set_retry_latencies_ms(&ev, 20);
    acme_AcmeEvent_begin_request(&ev, &req);
    acme_AcmeRequest_set_cstr_url(&req, "https://a.example/");
    acme_AcmeRequest_set_status(&req, 200);
    acme_AcmeEvent_end_request(&ev, &req);
    perfetto_protos_TracePacket_end_track_event_as_acme_AcmeEvent(&pkt, &ev);
    st[1] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    tracec_status_t cl = tracec_trace_file_close(f);
    for (int i = 0; i < 2; i++)
        if (st[i] != TRACEC_STATUS_SUCCESS) return fprintf(stderr, "packet %d: status %d\n", i, (int)st[i]), 1;
    return cl == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
