/*
 * fuzz_decode.c - libFuzzer target: hostile bytes into the decoder.
 *
 * The first input byte chooses what to do with the rest:
 *   bits 0-2  root type (Trace, TracePacket, TrackEvent, DebugAnnotation,
 *             InternedData, google.protobuf.FileDescriptorSet, ...)
 *   bit 3     load ExtensionDescriptor packets (a fresh pool, so that what
 *             one input adds never leaks into the next)
 *   bit 4     also run the args view
 *   bit 5     small nesting limit (8)
 * Then the decoded text is diffed against the text of the input's first
 * half, which exercises the line diff on arbitrary texts.  Any status is
 * fine; crashes, leaks, sanitizer reports and hangs are not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracec/args.h"
#include "tracec/decode.h"
#include "tracec/diff.h"

static const char *const types[8] = {
    "perfetto.protos.Trace",           "perfetto.protos.TracePacket",
    "perfetto.protos.TrackEvent",      "perfetto.protos.DebugAnnotation",
    "perfetto.protos.InternedData",    "google.protobuf.FileDescriptorSet",
    "perfetto.protos.TrackDescriptor", "perfetto.protos.Trace",
};

static tracec_pool *shared_pool;

static tracec_pool *builtin_pool(void) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err;
    if (p && tracec_pool_add_builtin_schema(p, &err) != TRACEC_STATUS_SUCCESS) {
        tracec_pool_free(p);
        return NULL;
    }
    return p;
}

static bool count_arg(void *ctx, const tracec_arg *arg) {
    (void)arg;
    ++*(size_t *)ctx;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t sel = data[0];
    data++, size--;
    if (!shared_pool) shared_pool = builtin_pool();
    bool fresh = sel & 8;
    tracec_pool *pool = fresh ? builtin_pool() : shared_pool;
    if (!pool) return 0;

    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.type_name = types[sel & 7];
    o.extension_descriptors = fresh;
    if (sel & 32) o.max_depth = 8;
    tracec_bytes text = TRACEC_BYTES_INIT;
    tracec_error err;
    /* Any status is fine here: the fuzzer looks for crashes, leaks and hangs. */
    tracec_status_t status = tracec_decode_text_bytes(pool, data, size, &o, &text, &err);
    (void)status;

    if (sel & 16) {
        size_t n = 0;
        tracec_args_stats st;
        o.type_name = NULL;
        status = tracec_args_visit(pool, data, size, &o, count_arg, &n, &st, &err);
        (void)status;
    }

    tracec_bytes diff = TRACEC_BYTES_INIT;
    (void)tracec_diff_lines((const char *)data, size / 2, text.data ? (const char *)text.data : "", text.size,
                            "a", "b", &diff);
    free(diff.data);
    free(text.data);
    if (fresh) tracec_pool_free(pool);
    return 0;
}
