/*
 * Layout (c), the program under test of layouts_all: writes argv[1], a trace
 * of acme_extension.proto's ExtensionDescriptor packet, then one event with
 * the AcmeExtension wrapper of Perfetto's extension guide.  TracePacket and
 * TrackEvent come from the user's one-file perfetto_trace.proto.
 */
#include <stdio.h>

#include "acme_extension.tracec.h"
#include "tracec/trace_file.h"

int main(int argc, char **argv) {
    tracec_trace_file *f = NULL;
    if (argc != 2 || tracec_trace_file_open(argv[1], &f) != TRACEC_STATUS_SUCCESS) return 2;
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_status_t st[2];

    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    acme_extension_write_extension_descriptor(&pkt);
    st[0] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    com_acme_AcmeExtension ev;
    com_acme_AcmeRequestMetadata md;
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 3000);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
    perfetto_protos_TracePacket_begin_track_event_as_com_acme_AcmeExtension(&pkt, &ev);
    com_acme_AcmeExtension_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    com_acme_AcmeExtension_set_cstr_name(&ev, "one_file");
    com_acme_AcmeExtension_set_cstr_request_id(&ev, "req-c");
    com_acme_AcmeExtension_set_retry_latencies_ms(&ev, 30);
    com_acme_AcmeExtension_set_retry_latencies_ms(&ev, 40);
    com_acme_AcmeExtension_begin_request_metadata(&ev, &md);
    com_acme_AcmeRequestMetadata_set_cstr_endpoint(&md, "/v1/acme");
    com_acme_AcmeRequestMetadata_set_priority(&md, 3);
    com_acme_AcmeExtension_end_request_metadata(&ev, &md);
    perfetto_protos_TracePacket_end_track_event_as_com_acme_AcmeExtension(&pkt, &ev);
    st[1] = tracec_trace_file_end_packet(f, &w, &pkt.msg);

    tracec_status_t cl = tracec_trace_file_close(f);
    for (int i = 0; i < 2; i++)
        if (st[i] != TRACEC_STATUS_SUCCESS) return fprintf(stderr, "packet %d: status %d\n", i, (int)st[i]), 1;
    return cl == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
