/*
 * te_example.c - track events in one line (tracec/track_event.h): a
 * session written to a .pftrace, slices, counters, a debug annotation, a
 * flow, and a typed MyEvent with its custom fields, from two threads.
 *
 *   ./te_example [OUT.pftrace]     (default: te_example.pftrace)
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>

#include "my_events.tracec.h"
#include "tracec/track_event.h"

#define EXAMPLE_CATEGORIES(C) C(app, "app") C(io, "io") C(verbose, "verbose")
TRACEC_TE_DECLARE_CATEGORIES(EXAMPLE_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(EXAMPLE_CATEGORIES)

static void *worker(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    for (int i = 0; i < 3; i++) {
        TRACEC_TE(io, TRACEC_TE_SLICE_BEGIN("read block"), TRACEC_TE_ARG_INT("block", i), TRACEC_TE_TERMINATING_FLOW(i + 1));
        TRACEC_COUNTER(io, "bytes read", 4096 * (i + 1));
        TRACEC_SLICE_END(io);
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "te_example.pftrace";
    static const char *const enabled[] = {"app", "io"}; /* "verbose" stays off */
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    pthread_t th;
    cfg.path = path;
    cfg.categories = enabled;
    cfg.num_categories = 2;
    tracec_status_t st = tracec_session_start(&cfg, &s);
    if (st != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", path, tracec_status_str(st));
        return 1;
    }
    TRACEC_SLICE_BEGIN(app, "main");
    for (int i = 0; i < 3; i++) TRACEC_TE(app, TRACEC_TE_INSTANT("schedule read"), TRACEC_TE_FLOW(i + 1));
    pthread_create(&th, NULL, worker, NULL);
    TRACEC_EVENT_AS(app, my_app_MyEvent, ev, "request done") {
        my_app_MyEvent_set_cstr_custom_string(&ev, "hello from C");
        my_app_MyEvent_set_custom_counter(&ev, 42);
    }
    TRACEC_COUNTER_DOUBLE(app, "load", 0.75);
    TRACEC_INSTANT(verbose, "never written");
    pthread_join(th, NULL);
    TRACEC_SLICE_END(app);
    st = tracec_session_stop(s);
    printf("wrote %s (%s)\n", path, tracec_status_str(st));
    return st == TRACEC_STATUS_SUCCESS ? 0 : 1;
}
