/*
 * Layout (a) through the track-event layer, the program under test of
 * layouts_track_event: a session writing argv[1], an instant and a slice
 * written as the user's wrapper acme_AcmeEvent by TRACEC_EVENT_AS and
 * TRACEC_SLICE_BEGIN_AS.  tracec/track_event.h comes first (its built-in
 * TracePacket and TrackEvent), the user's headers after it; built with
 * -DTE_USER_HEADERS_FIRST, the other way round.
 */
#ifdef TE_USER_HEADERS_FIRST
#include "acme/acme_events.tracec.h"
#include "tracec/track_event.h"
#else
#include "tracec/track_event.h"
#include "acme/acme_events.tracec.h"
#endif

#define TE_CATEGORIES(C) C(layout, "layout")
TRACEC_TE_DECLARE_CATEGORIES(TE_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(TE_CATEGORIES)

int main(int argc, char **argv) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = NULL;
    if (argc != 2) return 2;
    cfg.path = argv[1];
    if (tracec_session_start(&cfg, &s) != TRACEC_STATUS_SUCCESS) return 1;
    TRACEC_EVENT_AS(layout, acme_AcmeEvent, ev, "te_instant") {
        acme_AcmeEvent_set_cstr_request_id(&ev, "req-te");
        acme_AcmeEvent_set_retry_latencies_ms(&ev, 5);
    }
    TRACEC_SLICE_BEGIN_AS(layout, acme_AcmeEvent, ev, "te_slice") {
        acme_AcmeRequest req;
        acme_AcmeEvent_begin_request(&ev, &req);
        acme_AcmeRequest_set_cstr_url(&req, "https://te.example/");
        acme_AcmeRequest_set_status(&req, 204);
        acme_AcmeEvent_end_request(&ev, &req);
    }
    TRACEC_SLICE_END(layout);
    return tracec_session_stop(s) == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
