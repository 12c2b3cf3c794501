/*
 * record_te_program - a track-event program (tracec/track_event.h only, no
 * recorder code) for the `tracec record` tests:
 *
 *   record_te_program events N [OWN.pftrace [CATEGORIES]]
 *       N rounds of: a slice "work" with a debug int arg, a typed extension
 *       event inside it, an instant "read" starting a flow, an instant
 *       "done" ending it, a counter "queue", an instant "debug" (category
 *       dbg); then an instant "odd" (category "odd one").  With
 *       OWN.pftrace the program also records itself there (its own
 *       session; CATEGORIES, comma-separated, enables only those).
 *   record_te_program none
 *       writes no event.
 *   record_te_program wait MS
 *       waits MS, then writes one round.
 *   record_te_program threads T N [OWN.pftrace]
 *       T threads write N rounds each at once (a session of its own too
 *       with OWN.pftrace); the main thread stops that session while they
 *       write.
 *   record_te_program fork
 *       a fork child (no exec) writes a round with "child" instants and
 *       exits; then the parent writes one round.
 *   record_te_program mixed
 *       a slice "outer" of the macros with an instant "by hand" inside it,
 *       written by hand through tracec/provider.h on the thread's track.
 *   record_te_program nested N [kill]
 *       N slices "outer", each with an instant "inner", then exits (no
 *       disconnect: the exit hook stops the recorder's session), or with
 *       `kill` SIGKILLs itself.
 *   record_te_program leave
 *       one round, then tracec_te_recorder_disconnect before it exits.
 *   record_te_program counted N
 *       under the recorder: N rounds, then tracec_te_recorder_disconnect;
 *       prints the client's counters as they are after it, and as a fork
 *       child sees them.
 *   record_te_program slots SOCKET DIR
 *       starts 4 sessions of its own (DIR/sK.pftrace), then connects to the
 *       recorder at SOCKET (tracec_te_recorder_connect, synchronous), which
 *       finds no free slot; prints how long the connect took ("connect_ms
 *       N") and "refused=N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "tracec/provider.h"
#include "tracec/track_event.h"

/* "odd one": a name the recorder protocol cannot declare (a space); the program still registers */
#define CATS(C) C(app, "app") C(io, "io") C(dbg, "dbg") C(odd, "odd one")
TRACEC_TE_DECLARE_CATEGORIES(CATS)
TRACEC_TE_DEFINE_CATEGORIES(CATS)

static int rounds;

static void round_of(int i) {
    TRACEC_TE(app, TRACEC_TE_SLICE_BEGIN("work"), TRACEC_TE_ARG_INT("i", i));
    TRACEC_EVENT_AS(app, my_app_MyEvent, ev, "typed") { my_app_MyEvent_set_custom_counter(&ev, i); }
    TRACEC_TE(io, TRACEC_TE_INSTANT("read"), TRACEC_TE_ARG_INT("bytes", 100 + i), TRACEC_TE_FLOW(1000u + (unsigned)i));
    TRACEC_TE(io, TRACEC_TE_INSTANT("done"), TRACEC_TE_TERMINATING_FLOW(1000u + (unsigned)i));
    TRACEC_COUNTER(app, "queue", i);
    TRACEC_INSTANT(dbg, "debug");
    TRACEC_SLICE_END(app);
}

static void *writer(void *arg) {
    (void)arg;
    for (int i = 0; i < rounds; i++) round_of(i);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "none") == 0) return 0;
    if (strcmp(argv[1], "wait") == 0 && argc > 2) {
        usleep((useconds_t)atoi(argv[2]) * 1000u);
        argv[2] = "1";
        argv[1] = "events";
        argc = 3;
    }
    if (strcmp(argv[1], "threads") == 0 && argc > 3) {
        int nt = atoi(argv[2]);
        pthread_t th[16];
        tracec_session *own = NULL;
        rounds = atoi(argv[3]);
        if (nt < 1 || nt > 16) return 2;
        if (argc > 4) {
            tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
            cfg.path = argv[4];
            if (tracec_session_start(&cfg, &own) != TRACEC_STATUS_SUCCESS) return 1;
        }
        for (int i = 0; i < nt; i++)
            if (pthread_create(&th[i], NULL, writer, NULL) != 0) return 1;
        usleep(2000);
        if (own != NULL && tracec_session_stop(own) != TRACEC_STATUS_SUCCESS) return 1;
        for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
        return 0;
    }
    if (strcmp(argv[1], "fork") == 0) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            TRACEC_INSTANT(app, "child");
            round_of(7);
            TRACEC_INSTANT(app, "child");
            exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
        round_of(1);
        return 0;
    }
    if (strcmp(argv[1], "nested") == 0 && argc > 2) { /* then exits (no disconnect), or is killed */
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            TRACEC_SLICE_BEGIN(app, "outer");
            TRACEC_INSTANT(app, "inner");
            TRACEC_SLICE_END(app);
        }
        if (argc > 3 && strcmp(argv[3], "kill") == 0) raise(SIGKILL);
        return 0;
    }
    if (strcmp(argv[1], "leave") == 0) { /* one round, then the client ends before the process does */
        round_of(0);
        tracec_te_recorder_disconnect();
        printf("left\n");
        return 0;
    }
    if (strcmp(argv[1], "counted") == 0 && argc > 2) {
        tracec_te_recorder_stats_t st = tracec_te_recorder_stats();
        if (!st.tracing) return 1;
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) round_of(i);
        tracec_te_recorder_disconnect();
        st = tracec_te_recorder_stats();
        printf("after disconnect: connected=%d tracing=%d produced=%llu dropped=%llu runs=%llu\n",
               (int)st.connected, (int)st.tracing, (unsigned long long)st.produced,
               (unsigned long long)st.dropped, (unsigned long long)st.runs);
        fflush(stdout);
        pid_t pid = fork(); /* a child's client counters are its own: none ran there */
        if (pid < 0) return 1;
        if (pid == 0) {
            st = tracec_te_recorder_stats();
            printf("fork child: produced=%llu runs=%llu\n", (unsigned long long)st.produced,
                   (unsigned long long)st.runs);
            fflush(stdout);
            _exit(0);
        }
        int ws = 0;
        return waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "slots") == 0 && argc > 3) {
        tracec_session *own[TRACEC_TE_MAX_SESSIONS];
        char path[TRACEC_TE_MAX_SESSIONS][512];
        for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
            tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
            snprintf(path[i], sizeof path[i], "%s/s%d.pftrace", argv[3], i);
            cfg.path = path[i];
            if (tracec_session_start(&cfg, &own[i]) != TRACEC_STATUS_SUCCESS) return 1;
        }
        tracec_te_recorder_config rc = TRACEC_TE_RECORDER_CONFIG_INIT;
        rc.socket_path = argv[2];
        rc.synchronous = true;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (tracec_te_recorder_connect(&rc) != TRACEC_STATUS_SUCCESS) return 1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("connect_ms %ld\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
        for (int k = 0; k < 50 && tracec_te_recorder_stats().refused == 0; k++) usleep(20000);
        tracec_te_recorder_stats_t st = tracec_te_recorder_stats();
        printf("refused=%llu tracing=%d\n", (unsigned long long)st.refused, (int)st.tracing);
        TRACEC_INSTANT(app, "mine");
        tracec_te_recorder_disconnect();
        printf("after disconnect: refused=%llu connected=%d\n",
               (unsigned long long)tracec_te_recorder_stats().refused, (int)tracec_te_recorder_stats().connected);
        for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++)
            if (tracec_session_stop(own[i]) != TRACEC_STATUS_SUCCESS) return 1;
        return 0;
    }
    if (strcmp(argv[1], "mixed") == 0) {
        tracec_provider *p;
        bool started;
        if (tracec_provider_register_sync("mixed", &started, &p) != TRACEC_STATUS_SUCCESS || !started) return 1;
        TRACEC_SLICE_BEGIN(app, "outer");
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        tracec_provider_begin_packet(p, &w, &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, tracec_provider_now_ns(p)); /* the trace's clock */
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
        perfetto_protos_TrackEvent_set_cstr_name(&ev, "by hand");
        perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(p));
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        if (tracec_provider_end_packet(p, &w, &pkt.msg) != TRACEC_STATUS_SUCCESS) return 1;
        TRACEC_SLICE_END(app);
        return 0;
    }
    if (strcmp(argv[1], "events") != 0 || argc < 3) return 2;
    int n = atoi(argv[2]);
    tracec_session *s = NULL;
    const char *cats[16];
    size_t ncats = 0;
    if (argc > 3) {
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        cfg.path = argv[3];
        cfg.process_name = "record_te_program";
        if (argc > 4) {
            for (char *save = NULL, *c = strtok_r(argv[4], ",", &save); c != NULL && ncats < 16;
                 c = strtok_r(NULL, ",", &save))
                cats[ncats++] = c;
            cfg.categories = cats;
            cfg.num_categories = ncats;
        }
        if (tracec_session_start(&cfg, &s) != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "record_te_program: no session\n");
            return 1;
        }
    }
    for (int i = 0; i < n; i++) round_of(i);
    TRACEC_INSTANT(odd, "odd"); /* a category the recorder was not told of: enabled when it wants all */
    if (s != NULL && tracec_session_stop(s) != TRACEC_STATUS_SUCCESS) return 1;
    return 0;
}
