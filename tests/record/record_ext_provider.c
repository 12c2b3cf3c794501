/*
 * record_ext_provider.c - a traced program for the `tracec record` tests
 * whose every packet is written by hand and whose events carry extension
 * fields (test_extensions.proto, registered: its ExtensionDescriptor is in
 * each run's header):
 *
 *   record_ext_provider NAME N THREADS   register, wait for Start; THREADS threads named
 *                                        "worker-K" write N slices each: SLICE_BEGIN (with
 *                                        uint_extension_for_testing = its index and
 *                                        string_extension_for_testing = "ext") and SLICE_END,
 *                                        on tracec_provider_thread_track_uuid()
 *
 * No slice/instant helper is called, so a thread's TrackDescriptor comes
 * only from the library describing it at its first packet of a run.
 * Prints "produced P dropped D" (the library's counters) at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "test_extensions.tracec.h"
#include "tracec/provider.h"

static tracec_provider *g_p;
static long g_n;

static uint64_t now_ns(void) { return tracec_provider_now_ns(g_p); /* the trace's clock */ }

static void event(perfetto_protos_TrackEvent_Type type, long i) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    tracec_provider_begin_packet(g_p, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, now_ns());
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, type);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(g_p));
    if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) {
        perfetto_protos_TrackEvent_set_cstr_name(&ev, "hand");
        perfetto_protos_TrackEvent_set_perfetto_protos_uint_extension_for_testing(&ev, (uint32_t)i);
        perfetto_protos_TrackEvent_set_cstr_perfetto_protos_string_extension_for_testing(&ev, "ext");
    }
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    (void)tracec_provider_end_packet(g_p, &w, &pkt.msg);
}

static void *writer(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    for (long i = 0; i < g_n; i++) {
        event(perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN, i);
        event(perfetto_protos_TrackEvent_TYPE_SLICE_END, i);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    bool started = false;
    if (tracec_provider_register_sync(argv[1], &started, &g_p) != TRACEC_STATUS_SUCCESS) return 3;
    if (!tracec_provider_wait_started(g_p, 10000)) {
        fprintf(stderr, "record_ext_provider: tracing never started\n");
        return 4;
    }
    g_n = atol(argv[2]);
    int threads = atoi(argv[3]);
    if (threads < 1 || threads > 16) threads = 1;
    pthread_t t[16];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    tracec_provider_stats s = tracec_provider_get_stats(g_p);
    printf("produced %llu dropped %llu\n", (unsigned long long)s.produced, (unsigned long long)s.dropped);
    tracec_provider_unregister(g_p);
    return 0;
}
