/*
 * Layout (c) through the track-event layer, the program under test of
 * layouts_track_event: a session writing argv[1], an instant and a slice
 * written as the wrapper of Perfetto's extension guide (AcmeExtension, over
 * the one-file perfetto_trace.proto) by TRACEC_EVENT_AS and
 * TRACEC_SLICE_BEGIN_AS.  tracec/track_event.h brings libtracec's built-in
 * TracePacket and TrackEvent, perfetto_trace.tracec.h the user's copy, one
 * definition each; the user's newer TrackEvent setters are there whichever
 * comes first.  Built with -DTE_USER_HEADERS_FIRST, the user's headers come
 * first.
 */
#ifdef TE_USER_HEADERS_FIRST
#include "acme_extension.tracec.h"
#include "tracec/track_event.h"
#else
#include "tracec/track_event.h"
#include "acme_extension.tracec.h"
#endif

#define TE_CATEGORIES(C) C(layout, "layout")
TRACEC_TE_DECLARE_CATEGORIES(TE_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(TE_CATEGORIES)

/* A setter of the user's newer TrackEvent, on the one TrackEvent type. */
void te_newer_field(perfetto_protos_TrackEvent *ev);
void te_newer_field(perfetto_protos_TrackEvent *ev) { perfetto_protos_TrackEvent_set_thread_instruction_count_delta(ev, 1); }

int main(int argc, char **argv) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    if (argc != 2) return 2;
    cfg.path = argv[1];
    if (tracec_session_start(&cfg, &s) != TRACEC_STATUS_SUCCESS) return 1;
    TRACEC_EVENT_AS(layout, com_acme_AcmeExtension, ev, "te_instant") {
        com_acme_AcmeExtension_set_cstr_request_id(&ev, "req-te");
        com_acme_AcmeExtension_set_retry_latencies_ms(&ev, 50);
    }
    TRACEC_SLICE_BEGIN_AS(layout, com_acme_AcmeExtension, ev, "te_slice") {
        com_acme_AcmeRequestMetadata md;
        com_acme_AcmeExtension_begin_request_metadata(&ev, &md);
        com_acme_AcmeRequestMetadata_set_cstr_endpoint(&md, "/v1/te");
        com_acme_AcmeRequestMetadata_set_priority(&md, 9);
        com_acme_AcmeExtension_end_request_metadata(&ev, &md);
    }
    TRACEC_SLICE_END(layout);
    return tracec_session_stop(s) == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
