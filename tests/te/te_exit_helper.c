/*
 * te_exit_helper.c - starts a session and returns from main without
 * stopping it: the trace must still be complete (the session stops at exit).
 */
#include "tracec/track_event.h"

#define EXIT_CATEGORIES(C) C(x, "x")
TRACEC_TE_DECLARE_CATEGORIES(EXIT_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(EXIT_CATEGORIES)

int main(int argc, char **argv) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    if (argc < 2) return 2;
    cfg.path = argv[1];
    if (tracec_session_start(&cfg, &s) != TRACEC_STATUS_SUCCESS) return 1;
    for (int i = 0; i < 100; i++) {
        TRACEC_TE(x, TRACEC_TE_SLICE_BEGIN("at exit"), TRACEC_TE_ARG_INT("i", i));
        TRACEC_SLICE_END(x);
    }
    return 0;
}
