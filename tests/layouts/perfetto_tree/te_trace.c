/*
 * Layout (b) through the track-event layer, the program under test of
 * layouts_track_event: a session writing argv[1], an instant and a slice
 * written as the Android-style wrapper (package com.example.internal, field
 * options from field_options.proto) by TRACEC_EVENT_AS and
 * TRACEC_SLICE_BEGIN_AS.  tracec/track_event.h brings libtracec's built-in
 * TracePacket and TrackEvent, the user's headers their own copy of them, one
 * definition each; the user's TrackEvent is newer than the built-in one
 * (thread_instruction_count_*), and its setters are there whichever comes
 * first.  Built with -DTE_USER_HEADERS_FIRST, the user's headers come first.
 */
#ifdef TE_USER_HEADERS_FIRST
#include "protos/perfetto/trace/trace_packet.tracec.h"
#include "protos/third_party/android/android_track_event.tracec.h"
#include "tracec/track_event.h"
#else
#include "tracec/track_event.h"
#include "protos/perfetto/trace/trace_packet.tracec.h"
#include "protos/third_party/android/android_track_event.tracec.h"
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
    TRACEC_EVENT_AS(layout, com_example_internal_AndroidTrackEvent, ev, "te_instant") {
        com_example_internal_AndroidTrackEvent_set_cstr_window_name(&ev, "StatusBar");
        com_example_internal_AndroidTrackEvent_set_frame_number(&ev, 42);
    }
    TRACEC_SLICE_BEGIN_AS(layout, com_example_internal_AndroidTrackEvent, ev, "te_slice") {
        com_example_internal_BinderTransaction txn;
        com_example_internal_AndroidTrackEvent_begin_binder(&ev, &txn);
        com_example_internal_BinderTransaction_set_cstr_interface_name(&txn, "IExample");
        com_example_internal_BinderTransaction_set_code(&txn, 7);
        com_example_internal_AndroidTrackEvent_end_binder(&ev, &txn);
    }
    TRACEC_SLICE_END(layout);
    return tracec_session_stop(s) == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
