/*
 * bench_te_sdk.c - bench_te's peer: the same events through Perfetto's
 * public C SDK (PERFETTO_TE macros, in-process backend).  See bench_te.c
 * and bench/README.md.  Only the SDK's public API is used here.
 */
#define _GNU_SOURCE 1
#include "bench_te_sdk.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfetto/public/abi/heap_buffer.h"
#include "perfetto/public/pb_msg.h"
#include "perfetto/public/producer.h"
#include "perfetto/public/protos/config/data_source_config.pzc.h"
#include "perfetto/public/protos/config/trace_config.pzc.h"
#include "perfetto/public/protos/config/track_event/track_event_config.pzc.h"
#include "perfetto/public/te_category_macros.h"
#include "perfetto/public/te_macros.h"
#include "perfetto/public/track_event.h"
#include "perfetto/public/tracing_session.h"

#define SDK_CATEGORIES(C) C(sdk_on, "on", "enabled in the bench") C(sdk_off, "off", "never enabled")
PERFETTO_TE_CATEGORIES_DEFINE(SDK_CATEGORIES)

static const char kLabel[] = "frame-render";
static struct PerfettoTracingSessionImpl *g_session;

int bench_sdk_init(void) {
    struct PerfettoProducerInitArgs args = PERFETTO_PRODUCER_INIT_ARGS_INIT();
    args.backends = PERFETTO_BACKEND_IN_PROCESS;
    args.shmem_size_hint_kb = 32 * 1024;
    PerfettoProducerInit(args);
    PerfettoTeInit();
    PERFETTO_TE_REGISTER_CATEGORIES(SDK_CATEGORIES);
    return 0;
}

/* TraceConfig { buffers { size_kb, fill_policy RING_BUFFER } data_sources { config { name "track_event"
 * track_event_config { disabled_categories "*" enabled_categories "on" } } } }, serialized by the SDK. */
static void *trace_config(uint32_t buffer_kb, size_t *size) {
    struct PerfettoPbMsgWriter writer;
    struct PerfettoHeapBuffer *hb = PerfettoHeapBufferCreate(&writer.writer);
    struct perfetto_protos_TraceConfig cfg;
    PerfettoPbMsgInit(&cfg.msg, &writer);
    {
        struct perfetto_protos_TraceConfig_BufferConfig buf;
        perfetto_protos_TraceConfig_begin_buffers(&cfg, &buf);
        perfetto_protos_TraceConfig_BufferConfig_set_size_kb(&buf, buffer_kb);
        perfetto_protos_TraceConfig_BufferConfig_set_fill_policy(&buf,
                                                                 perfetto_protos_TraceConfig_BufferConfig_RING_BUFFER);
        perfetto_protos_TraceConfig_end_buffers(&cfg, &buf);
    }
    {
        struct perfetto_protos_TraceConfig_DataSource ds;
        struct perfetto_protos_DataSourceConfig dsc;
        struct perfetto_protos_TrackEventConfig te;
        perfetto_protos_TraceConfig_begin_data_sources(&cfg, &ds);
        perfetto_protos_TraceConfig_DataSource_begin_config(&ds, &dsc);
        perfetto_protos_DataSourceConfig_set_cstr_name(&dsc, "track_event");
        perfetto_protos_DataSourceConfig_begin_track_event_config(&dsc, &te);
        perfetto_protos_TrackEventConfig_set_cstr_disabled_categories(&te, "*");
        perfetto_protos_TrackEventConfig_set_cstr_enabled_categories(&te, "on");
        perfetto_protos_DataSourceConfig_end_track_event_config(&dsc, &te);
        perfetto_protos_TraceConfig_DataSource_end_config(&ds, &dsc);
        perfetto_protos_TraceConfig_end_data_sources(&cfg, &ds);
    }
    *size = PerfettoStreamWriterGetWrittenSize(&writer.writer);
    void *bytes = malloc(*size);
    if (bytes) PerfettoHeapBufferCopyInto(hb, &writer.writer, bytes, *size);
    PerfettoHeapBufferDestroy(hb, &writer.writer);
    return bytes;
}

int bench_sdk_start(uint32_t buffer_kb) {
    size_t size;
    void *cfg = trace_config(buffer_kb, &size);
    if (!cfg) return -1;
    g_session = PerfettoTracingSessionCreate(PERFETTO_BACKEND_IN_PROCESS);
    if (!g_session) {
        free(cfg);
        return -1;
    }
    PerfettoTracingSessionSetup(g_session, cfg, size);
    free(cfg);
    PerfettoTracingSessionStartBlocking(g_session);
    for (int i = 0; i < 5000; i++) { /* up to 5 s for the data source to start */
        if (PERFETTO_ATOMIC_LOAD_EXPLICIT(sdk_on.enabled, PERFETTO_MEMORY_ORDER_RELAXED)) return 0;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return -1;
}

typedef struct readback {
    uint8_t *data;
    size_t size, cap;
    int keep, failed;
} readback;

static void on_read(struct PerfettoTracingSessionImpl *s, const void *data, size_t size, bool has_more, void *user) {
    readback *rb = (readback *)user;
    (void)s, (void)has_more;
    if (rb->keep && !rb->failed && size) {
        if (rb->size + size > rb->cap) {
            size_t cap = rb->cap ? rb->cap : (size_t)1 << 20;
            while (cap < rb->size + size) cap *= 2;
            uint8_t *p = (uint8_t *)realloc(rb->data, cap);
            if (!p) {
                rb->failed = 1;
                return;
            }
            rb->data = p, rb->cap = cap;
        }
        memcpy(rb->data + rb->size, data, size);
    }
    rb->size += size;
}

int bench_sdk_stop(int keep, uint8_t **data, size_t *size) {
    readback rb = {NULL, 0, 0, keep, 0};
    if (!g_session) return -1;
    PerfettoTracingSessionStopBlocking(g_session);
    PerfettoTracingSessionReadTraceBlocking(g_session, on_read, &rb);
    PerfettoTracingSessionDestroy(g_session);
    g_session = NULL;
    if (rb.failed) {
        free(rb.data);
        return -1;
    }
    if (data) *data = rb.data;
    else free(rb.data);
    *size = rb.size;
    return 0;
}

/* Starts a 64-byte block (as its peer does): the loop is 19 bytes, and one that crosses a block boundary takes
   two fetch blocks an iteration (0.62 ns against 0.31 on an AMD EPYC, with the same instructions). */
__attribute__((noinline, aligned(64))) void bench_sdk_loop_disabled(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        PERFETTO_TE(sdk_off, PERFETTO_TE_INSTANT("tick"), PERFETTO_TE_ARG_INT64("value", (int64_t)i));
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) void bench_sdk_loop_instant(uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        PERFETTO_TE(sdk_on, PERFETTO_TE_INSTANT("tick"), PERFETTO_TE_ARG_INT64("value", (int64_t)i));
}

/* The same body as bench_sdk_loop_instant, under a symbol of its own for the two-thread rows. */
__attribute__((noinline)) void bench_sdk_loop_instant_2t(uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        PERFETTO_TE(sdk_on, PERFETTO_TE_INSTANT("tick"), PERFETTO_TE_ARG_INT64("value", (int64_t)i));
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void bench_sdk_loop_slice(uint64_t n) {
    for (uint64_t i = 0; i < n / 2; i++) {
        PERFETTO_TE(sdk_on, PERFETTO_TE_SLICE_BEGIN("slice"));
        PERFETTO_TE(sdk_on, PERFETTO_TE_SLICE_END());
    }
}

/* bench_BenchEvent's two extension fields (bench_counter = 3200, bench_label = 3201), written as raw
 * TrackEvent fields: the SDK has no typed extension writers. */
__attribute__((noinline)) void bench_sdk_loop_typed(uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        PERFETTO_TE(sdk_on, PERFETTO_TE_INSTANT("typed"),
                    PERFETTO_TE_PROTO_FIELDS(PERFETTO_TE_PROTO_FIELD_VARINT(3200, i),
                                             PERFETTO_TE_PROTO_FIELD_CSTR(3201, kLabel)));
}
