/*
 * te_flush_helper.c - a program that ends abnormally with a file session
 * running: `te_flush_helper TRACE HOW [PERIOD_MS]` writes 1,000 slices,
 * waits for the periodic flush, writes 1,000 more "late" slices, then ends
 * as HOW says: `exit_` (_exit), `kill` (SIGKILL), `kill_in_event` (50,000
 * "burst" slices more, the recorder client's loss count printed as
 * `recorder_dropped N`, then SIGKILL inside a typed event's block: its
 * packet is begun, never finished), `sigterm` (SIGTERM, the
 * default disposition, stop_on_signals), `sigint_handler` (SIGINT with the
 * program's own handler, stop_on_signals; the program then stops the
 * session itself and returns 3 if its handler ran), `sigint_ignored`
 * (SIGINT ignored before the start, stop_on_signals: returns 3 if it is
 * still SIG_IGN after the start, as the programs it would exec inherit it,
 * and SIGINT changed nothing; the program stops the session itself).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "my_events.tracec.h"
#include "tracec/track_event.h"

#define FLUSH_CATEGORIES(C) C(x, "x")
TRACEC_TE_DECLARE_CATEGORIES(FLUSH_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(FLUSH_CATEGORIES)

static volatile sig_atomic_t got;
static void on_int(int sig) { got = sig; }

int main(int argc, char **argv) {
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s;
    struct timespec pause = {1, 300 * 1000000L}; /* the default period (1 s) and some */
    if (argc < 3) return 2;
    cfg.path = argv[1];
    if (argc > 3 && strcmp(argv[3], "never") == 0)
        cfg.flush_period_ms = TRACEC_SESSION_FLUSH_NEVER;
    else if (argc > 3)
        cfg.flush_period_ms = (uint32_t)strtoul(argv[3], NULL, 10);
    if (cfg.flush_period_ms != 0 && cfg.flush_period_ms != TRACEC_SESSION_FLUSH_NEVER) /* 4 periods */
        pause.tv_sec = 0, pause.tv_nsec = (long)cfg.flush_period_ms * 4000000L;
    cfg.stop_on_signals = strncmp(argv[2], "sig", 3) == 0;
    if (strcmp(argv[2], "sigint_handler") == 0) signal(SIGINT, on_int);
    if (strcmp(argv[2], "sigint_ignored") == 0) signal(SIGINT, SIG_IGN);
    if (tracec_session_start(&cfg, &s) != TRACEC_STATUS_SUCCESS) return 1;
    for (int i = 0; i < 1000; i++) {
        TRACEC_SLICE_BEGIN(x, "early");
        TRACEC_SLICE_END(x);
    }
    nanosleep(&pause, NULL); /* a periodic flush writes them out */
    for (int i = 0; i < 1000; i++) {
        TRACEC_SLICE_BEGIN(x, "late");
        TRACEC_SLICE_END(x);
    }
    if (strcmp(argv[2], "exit_") == 0) _exit(0);
    if (strcmp(argv[2], "kill") == 0) raise(SIGKILL);
    if (strcmp(argv[2], "kill_in_event") == 0) {
        for (int i = 0; i < 50000; i++) {
            TRACEC_SLICE_BEGIN(x, "burst");
            TRACEC_SLICE_END(x);
        }
        tracec_te_recorder_stats_t rs = tracec_te_recorder_stats();
        printf("recorder_dropped %llu produced %llu\n", (unsigned long long)rs.dropped, (unsigned long long)rs.produced);
        fflush(stdout);
        TRACEC_EVENT_AS(x, my_app_MyEvent, ev, "killed") {
            my_app_MyEvent_set_custom_counter(&ev, 1);
            raise(SIGKILL);
        }
    }
    if (strcmp(argv[2], "sigterm") == 0) raise(SIGTERM);
    if (strcmp(argv[2], "sigint_handler") == 0) {
        raise(SIGINT);
        for (int i = 0; i < 10; i++) {
            TRACEC_SLICE_BEGIN(x, "after handler");
            TRACEC_SLICE_END(x);
        }
        (void)tracec_session_stop(s);
        return got == SIGINT ? 3 : 4;
    }
    if (strcmp(argv[2], "sigint_ignored") == 0) {
        struct sigaction cur;
        if (sigaction(SIGINT, NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_IGN) return 6;
        raise(SIGINT);
        for (int i = 0; i < 10; i++) {
            TRACEC_SLICE_BEGIN(x, "after handler");
            TRACEC_SLICE_END(x);
        }
        (void)tracec_session_stop(s);
        return 3;
    }
    return 5;
}
