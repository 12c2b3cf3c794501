#define _POSIX_C_SOURCE 200809L
/*
 * test_decoder.c - the binary -> text decoder against protoc.
 *
 * protoc is the oracle throughout: `protoc --decode` output must equal ours
 * byte for byte (for canonical corpus traces, for random non-canonical wire
 * data, with and without descriptors for the extensions), and our
 * text -> binary -> text round trips must keep meaning and bytes.  Corrupt
 * inputs must give the exact error and keep the decoded prefix; nothing may
 * crash (run under ASan/UBSan in the sanitizer build).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_util.h"
#include "tracec/args.h"
#include "tracec/decode.h"
#include "tracec/textproto.h"

static char *dir;
static void setup(void) { dir = tt_tmpdir(); }
static void teardown(void) { tt_tmpdir_remove(dir); }

TestSuite(decode, .init = setup, .fini = teardown);

/* A pool with the built-in schema and test_extensions.proto. */
static tracec_pool *ext_pool(void) {
    tracec_pool *p = tracec_pool_new();
    cr_assert(p);
    tracec_error err;
    const char *incs[] = {TRACEC_SOURCE_DIR "/protos", TRACEC_SOURCE_DIR "/test_extensions",
                          TRACEC_PROTOBUF_INCLUDE};
    const char *protos[] = {"test_extensions.proto"};
    cr_assert_eq(tracec_pool_add_proto_files(p, incs, 3, protos, 1, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_eq(tracec_pool_add_builtin_schema(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    return p;
}

static tracec_status_t decode(tracec_pool *pool, const void *data, size_t n, const char *type,
                              tt_buf *text, tracec_error *err) {
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    if (type) o.type_name = type;
    o.file_name = "in.pftrace";
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_status_t s = tracec_decode_text_bytes(pool, data, n, &o, &out, err);
    text->data = malloc(out.size + 1);
    text->cap = 0;
    cr_assert(text->data);
    if (out.size) memcpy(text->data, out.data, out.size);
    text->data[out.size] = 0;
    text->size = out.size;
    free(out.data);
    return s;
}

static void assert_same_text(const tt_buf *want, const tt_buf *got, const char *what) {
    if (want->size != got->size || memcmp(want->data, got->data, want->size) != 0)
        cr_assert_fail("%s: tracec and protoc differ\n--- protoc\n%s\n--- tracec\n%s", what, want->data,
                       got->data);
}

static const char *const corpus[] = {"basic", "edge_values", "extensions"};

Test(decode, corpus_matches_protoc_and_round_trips) {
    tracec_pool *pool = ext_pool();
    for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/decode/data/corpus/%s.textproto", TRACEC_SOURCE_DIR, corpus[i]);
        tt_buf text = {0}, bin = {0}, want = {0}, got = {0};
        cr_assert(tt_read_file(path, &text), "%s", path);
        cr_assert(tt_protoc_encode(dir, NULL, NULL, text.data, &bin));
        cr_assert(tt_protoc_decode(dir, NULL, NULL, bin.data, bin.size, &want));
        tracec_error err;
        cr_assert_eq(decode(pool, bin.data, bin.size, NULL, &got, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
        assert_same_text(&want, &got, corpus[i]);

        /* decode -> encode gives back protoc's (canonical) bytes. */
        tracec_bytes again = TRACEC_BYTES_INIT;
        tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
        cr_assert_eq(tracec_text_encode(pool, "perfetto.protos.Trace", got.data, got.size, &to, &again, &err),
                     TRACEC_STATUS_SUCCESS, "%s", err.msg);
        cr_assert(again.size == bin.size && memcmp(again.data, bin.data, bin.size) == 0,
                  "%s: decode -> encode changed the bytes", corpus[i]);
        tracec_bytes_free(&again);

        /* encode (ours) then protoc --decode == protoc --encode then protoc --decode. */
        tracec_bytes ours = TRACEC_BYTES_INIT;
        cr_assert_eq(tracec_text_encode(pool, "perfetto.protos.Trace", text.data, text.size, &to, &ours, &err),
                     TRACEC_STATUS_SUCCESS, "%s", err.msg);
        tt_buf via_ours = {0};
        cr_assert(tt_protoc_decode(dir, NULL, NULL, ours.data, ours.size, &via_ours));
        assert_same_text(&want, &via_ours, corpus[i]);
        tracec_bytes_free(&ours);
        tt_buf_free(&via_ours);
        tt_buf_free(&text);
        tt_buf_free(&bin);
        tt_buf_free(&want);
        tt_buf_free(&got);
    }
    tracec_pool_free(pool);
}

/* Random, mostly non-canonical wire data from gen_wire.py; one protoc run per batch file. */
static void random_wire(int seed, int count, const char *type) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s --include_imports --descriptor_set_out=all.desc %s && "
             "%s %s/tests/decode/gen_wire.py all.desc %s %d %d w",
             TRACEC_PROTOC, tt_protoc_args(NULL), TRACEC_PYTHON3, TRACEC_SOURCE_DIR, type, seed, count);
    tt_buf err = {0};
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, &err), 0, "%s", err.data);
    tt_buf_free(&err);
    tracec_pool *pool = ext_pool();
    for (int i = 0; i < count; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/w/w%03d.bin", dir, i);
        tt_buf bin = {0}, want = {0}, got = {0};
        cr_assert(tt_read_file(path, &bin));
        cr_assert(tt_protoc_decode(dir, NULL, type, bin.data, bin.size, &want), "seed %d file %d", seed, i);
        tracec_error e;
        cr_assert_eq(decode(pool, bin.data, bin.size, type, &got, &e), TRACEC_STATUS_SUCCESS, "%s", e.msg);
        char what[64];
        snprintf(what, sizeof what, "seed %d, file w%03d.bin", seed, i);
        assert_same_text(&want, &got, what);
        tt_buf_free(&bin);
        tt_buf_free(&want);
        tt_buf_free(&got);
    }
    tracec_pool_free(pool);
}

Test(decode, random_traces_match_protoc) { random_wire(11, 40, "perfetto.protos.Trace"); }
Test(decode, random_track_events_match_protoc) { random_wire(12, 40, "perfetto.protos.TrackEvent"); }
Test(decode, random_debug_annotations_match_protoc) { random_wire(13, 30, "perfetto.protos.DebugAnnotation"); }

/* The extensions corpus trace, encoded by protoc. */
static void extensions_trace(tt_buf *bin) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/decode/data/corpus/extensions.textproto", TRACEC_SOURCE_DIR);
    tt_buf text = {0};
    cr_assert(tt_read_file(path, &text));
    cr_assert(tt_protoc_encode(dir, NULL, NULL, text.data, bin));
    tt_buf_free(&text);
}

static void extension_packet_case(bool gzip, bool after) {
    tt_buf events = {0}, set = {0}, trace = {0}, want = {0}, got = {0};
    extensions_trace(&events);
    cr_assert(tt_extensions_set(dir, &set));
    if (after) cr_assert(tt_buf_append(&trace, events.data, events.size));
    cr_assert(tt_append_extension_packet(&trace, set.data, set.size, gzip));
    if (!after) cr_assert(tt_buf_append(&trace, events.data, events.size));
    /* protoc knows test_extensions.proto; our pool only what the trace carries. */
    cr_assert(tt_protoc_decode(dir, NULL, NULL, trace.data, trace.size, &want));
    tracec_pool *pool = tt_builtin_pool();
    cr_assert(pool);
    tracec_error err;
    cr_assert_eq(decode(pool, trace.data, trace.size, NULL, &got, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    assert_same_text(&want, &got, gzip ? "extension_set_gzip" : "extension_set");
    cr_assert(strstr(got.data, "[perfetto.protos.nested_message_extension_for_testing] {"));
    tracec_pool_free(pool);
    tt_buf_free(&events);
    tt_buf_free(&set);
    tt_buf_free(&trace);
    tt_buf_free(&want);
    tt_buf_free(&got);
}

Test(decode, extension_set_in_trace) { extension_packet_case(false, false); }
Test(decode, extension_set_gzip_in_trace) { extension_packet_case(true, false); }
Test(decode, extension_set_after_the_events) { extension_packet_case(false, true); }

Test(decode, unknown_extensions_print_by_number_as_protoc) {
    tt_buf bin = {0}, want = {0}, got = {0};
    extensions_trace(&bin);
    /* protoc without test_extensions.proto: the extension fields are unknown fields. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I%s/protos -I%s perfetto/trace/trace.proto",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE);
    cr_assert_eq(tt_run(dir, cmd, bin.data, bin.size, &want, NULL), 0);
    tracec_pool *pool = tt_builtin_pool();
    tracec_error err;
    cr_assert_eq(decode(pool, bin.data, bin.size, NULL, &got, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    assert_same_text(&want, &got, "unknown extensions");
    cr_assert(strstr(got.data, "9900: \"s\""));
    tracec_pool_free(pool);
    tt_buf_free(&bin);
    tt_buf_free(&want);
    tt_buf_free(&got);
}

/* ---- Corrupt input -------------------------------------------------------- */

typedef struct corrupt_case {
    const char *name;
    const char *bytes; /* raw bytes */
    size_t n;
    const char *text;  /* expected output (the decoded prefix) */
    const char *error; /* expected error message */
} corrupt_case;

#define B(s) s, sizeof(s) - 1

Test(decode, corrupt_inputs_report_offset_and_keep_prefix) {
    static const corrupt_case cases[] = {
        {"truncated varint", B("\x0a\x02\x40\x05\x0a\x02\x40\x96"),
         "packet {\n  timestamp: 5\n}\npacket {\n}\n",
         "in.pftrace: byte offset 7: truncated varint (field 8 of perfetto.protos.TracePacket)"},
        {"varint too long", B("\x0a\x0b\x40\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), "packet {\n}\n",
         "in.pftrace: byte offset 3: varint longer than 10 bytes (field 8 of perfetto.protos.TracePacket)"},
        {"length past the end", B("\x0a\x02\x40\x01\x0a\x05\x40\x01"), "packet {\n  timestamp: 1\n}\n",
         "in.pftrace: byte offset 5: length runs past the end of the enclosing message (field 1 of "
         "perfetto.protos.Trace)"},
        {"nested length past the end", B("\x0a\x04\x5a\x05\x48\x01"), "packet {\n}\n",
         "in.pftrace: byte offset 3: length runs past the end of the enclosing message (field 11 of "
         "perfetto.protos.TracePacket)"},
        {"bad wire type", B("\x0a\x04\x40\x07\x47\x00"), "packet {\n  timestamp: 7\n}\n",
         "in.pftrace: byte offset 4: invalid wire type (in perfetto.protos.TracePacket)"},
        {"field number 0", B("\x0a\x02\x40\x01\x00\x00"), "packet {\n  timestamp: 1\n}\n",
         "in.pftrace: byte offset 4: invalid field number 0 (in perfetto.protos.Trace)"},
        {"stray end-group", B("\x0a\x01\x44"), "packet {\n}\n",
         "in.pftrace: byte offset 2: unexpected end-group tag (in perfetto.protos.TracePacket)"},
        {"unterminated group", B("\x0a\x03\x43\x08\x01"), "packet {\n}\n",
         "in.pftrace: byte offset 5: group not terminated by its end-group tag (field 8 of "
         "perfetto.protos.TracePacket)"},
        {"truncated fixed64", B("\x0a\x05\x5a\x03\xb9\x02\x00"), "packet {\n  track_event {\n  }\n}\n",
         "in.pftrace: byte offset 6: truncated fixed64 value (field 39 of perfetto.protos.TrackEvent)"},
        {"packed varint truncated", B("\x0a\x05\x5a\x03\x62\x01\x80"),
         "packet {\n  track_event {\n  }\n}\n",
         "in.pftrace: byte offset 6: truncated varint in packed field (field 12 of perfetto.protos.TrackEvent)"},
        {"bad utf-8 is escaped, not an error", B("\x0a\x06\x5a\x04\xba\x01\x01\xff"),
         "packet {\n  track_event {\n    name: \"\\377\"\n  }\n}\n", NULL},
    };
    tracec_pool *pool = tt_builtin_pool();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const corrupt_case *c = &cases[i];
        tt_buf got = {0};
        tracec_error err;
        err.msg[0] = 0;
        tracec_status_t s = decode(pool, c->bytes, c->n, NULL, &got, &err);
        cr_expect_str_eq(got.data, c->text, "%s: printed prefix", c->name);
        if (c->error) {
            cr_expect_eq(s, TRACEC_STATUS_CORRUPT_DATA, "%s", c->name);
            cr_expect_str_eq(err.msg, c->error, "%s", c->name);
        } else {
            cr_expect_eq(s, TRACEC_STATUS_SUCCESS, "%s: %s", c->name, err.msg);
        }
        tt_buf_free(&got);
    }
    tracec_pool_free(pool);
}

/* DebugAnnotation.dict_entries nested `depth` deep inside one track event. */
static void nested_annotations(tt_buf *out, int depth) {
    uint8_t *buf = NULL;
    size_t n = 0;
    for (int i = 0; i < depth; i++) {
        /* wrap: 0x5a (field 11, LEN) len body */
        uint8_t hdr[12];
        size_t h = 0;
        hdr[h++] = 0x5a;
        size_t v = n;
        while (v >= 0x80) hdr[h++] = (uint8_t)(v | 0x80), v >>= 7;
        hdr[h++] = (uint8_t)v;
        uint8_t *nb = malloc(n + h);
        cr_assert(nb);
        memcpy(nb, hdr, h);
        if (n) memcpy(nb + h, buf, n);
        free(buf);
        buf = nb;
        n += h;
    }
    out->data = (char *)buf;
    out->cap = 0;
    out->size = n;
}

Test(decode, nesting_beyond_the_limit_is_an_error) {
    tt_buf body = {0};
    nested_annotations(&body, 5000);
    tracec_pool *pool = tt_builtin_pool();
    tt_buf got = {0};
    tracec_error err;
    tracec_status_t s = decode(pool, body.data, body.size, "perfetto.protos.DebugAnnotation", &got, &err);
    cr_assert_eq(s, TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "messages nested deeper than the limit"), "%s", err.msg);
    cr_assert(strstr(err.msg, "byte offset "), "%s", err.msg);
    /* The prefix is printed with every brace closed. */
    size_t open = 0, close = 0;
    for (size_t i = 0; i < got.size; i++) open += got.data[i] == '{', close += got.data[i] == '}';
    cr_assert_eq(open, 100);
    cr_assert_eq(close, 100);
    tt_buf_free(&got);
    /* A limit above TRACEC_DECODE_MAX_DEPTH_LIMIT is refused: the decoder recurses per level. */
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.type_name = "perfetto.protos.DebugAnnotation";
    o.max_depth = 6000;
    tracec_bytes out = TRACEC_BYTES_INIT;
    cr_assert_eq(tracec_decode_text_bytes(pool, body.data, body.size, &o, &out, &err),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_str_eq(err.msg, "tracec_decode_text: max_depth 6000 is above the limit of 1000");
    cr_assert_eq(out.size, 0);
    /* At the limit, the same input is an error at the 1001st level, not a crash. */
    o.max_depth = TRACEC_DECODE_MAX_DEPTH_LIMIT;
    cr_assert_eq(tracec_decode_text_bytes(pool, body.data, body.size, &o, &out, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "messages nested deeper than the limit"), "%s", err.msg);
    free(out.data);
    tracec_pool_free(pool);
    tt_buf_free(&body);
}

/*
 * The depth limit is safe for library users on small thread stacks: a
 * message nested TRACEC_DECODE_MAX_DEPTH_LIMIT deep decodes, and goes
 * through the args walker, on a thread with a 1 MiB stack (4 MiB under
 * AddressSanitizer, whose frames are about 2x larger).
 */
#if defined(__SANITIZE_ADDRESS__)
#define TT_SMALL_STACK (4u << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_SMALL_STACK (4u << 20)
#endif
#endif
#ifndef TT_SMALL_STACK
#define TT_SMALL_STACK (1u << 20)
#endif

typedef struct deep_job {
    tt_buf annotation; /* a DebugAnnotation nested `depth` deep */
    tt_buf trace;      /* the same inside one track event */
    tracec_status_t decoded, decoded_trace, args;
    size_t braces;
    tracec_error err;
} deep_job;

static bool count_arg(void *ctx, const tracec_arg *arg) {
    (void)arg;
    (*(size_t *)ctx)++;
    return true;
}

static void *deep_job_run(void *arg) {
    deep_job *j = arg;
    tracec_pool *pool = tt_builtin_pool();
    tracec_error err;
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.max_depth = TRACEC_DECODE_MAX_DEPTH_LIMIT;
    o.type_name = "perfetto.protos.DebugAnnotation";
    tracec_bytes out = TRACEC_BYTES_INIT;
    j->decoded = tracec_decode_text_bytes(pool, j->annotation.data, j->annotation.size, &o, &out, &err);
    for (size_t i = 0; i < out.size; i++) j->braces += out.data[i] == '{';
    free(out.data);
    out = (tracec_bytes)TRACEC_BYTES_INIT;
    o.type_name = NULL;
    j->decoded_trace = tracec_decode_text_bytes(pool, j->trace.data, j->trace.size, &o, &out, &err);
    free(out.data);
    size_t rows = 0;
    j->args = tracec_args_visit(pool, j->trace.data, j->trace.size, &o, count_arg, &rows, NULL, &err);
    j->err = err;
    tracec_pool_free(pool);
    return NULL;
}

/* Wraps `body` as field `number` (LEN) in place. */
static void wrap_len(tt_buf *b, unsigned number) {
    uint8_t hdr[16];
    size_t h = 0;
    for (uint64_t v = (uint64_t)number << 3 | 2; ; v >>= 7) {
        hdr[h++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80) break;
    }
    for (uint64_t v = b->size; ; v >>= 7) {
        hdr[h++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80) break;
    }
    char *nb = malloc(b->size + h + 1);
    cr_assert(nb);
    memcpy(nb, hdr, h);
    if (b->size) memcpy(nb + h, b->data, b->size);
    nb[b->size + h] = 0;
    free(b->data);
    b->data = nb;
    b->cap = 0;
    b->size += h;
}

Test(decode, nesting_at_the_limit_fits_a_small_thread_stack) {
    deep_job j;
    memset(&j, 0, sizeof j);
    /* The root DebugAnnotation is level 1: 999 dict_entries below it. */
    nested_annotations(&j.annotation, TRACEC_DECODE_MAX_DEPTH_LIMIT - 1);
    /* Trace > packet > track_event > debug_annotations: 3 more levels, so 996 dict_entries. */
    nested_annotations(&j.trace, TRACEC_DECODE_MAX_DEPTH_LIMIT - 4);
    wrap_len(&j.trace, 4);  /* TrackEvent.debug_annotations */
    wrap_len(&j.trace, 11); /* TracePacket.track_event */
    wrap_len(&j.trace, 1);  /* Trace.packet */
    pthread_attr_t attr;
    cr_assert_eq(pthread_attr_init(&attr), 0);
    cr_assert_eq(pthread_attr_setstacksize(&attr, TT_SMALL_STACK), 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, &attr, deep_job_run, &j), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&attr);
    cr_assert_eq(j.decoded, TRACEC_STATUS_SUCCESS);
    cr_assert_eq(j.braces, TRACEC_DECODE_MAX_DEPTH_LIMIT - 1);
    cr_assert_eq(j.decoded_trace, TRACEC_STATUS_SUCCESS);
    /* The args walker has no row for an empty leaf, but walks every level without error. */
    cr_assert_eq(j.args, TRACEC_STATUS_SUCCESS, "%s", j.err.msg);
    tt_buf_free(&j.annotation);
    tt_buf_free(&j.trace);
}

Test(decode, unknown_type_is_invalid_argument) {
    tracec_pool *pool = tt_builtin_pool();
    tt_buf got = {0};
    tracec_error err;
    cr_assert_eq(decode(pool, "", 0, "no.such.Type", &got, &err), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_str_eq(err.msg, "unknown message type 'no.such.Type'");
    tt_buf_free(&got);
    tracec_pool_free(pool);
}

static bool failing_write(void *ctx, const void *data, size_t n) {
    (void)ctx, (void)data, (void)n;
    return false;
}

Test(decode, write_failure_is_io_error) {
    tracec_pool *pool = tt_builtin_pool();
    tracec_error err;
    tracec_status_t s = tracec_decode_text(pool, "\x0a\x02\x40\x01", 4, NULL, failing_write, NULL, &err);
    cr_assert_eq(s, TRACEC_STATUS_IO_ERROR);
    tracec_pool_free(pool);
}

/* Mutated traces: any outcome but a crash, a leak or a hang (sanitizers watch). */
Test(decode, mutations_never_crash) {
    tt_buf events = {0}, set = {0}, trace = {0};
    extensions_trace(&events);
    cr_assert(tt_extensions_set(dir, &set));
    cr_assert(tt_append_extension_packet(&trace, set.data, set.size, true));
    cr_assert(tt_buf_append(&trace, events.data, events.size));
    uint32_t rng = 12345;
    uint8_t *m = malloc(trace.size + 16);
    cr_assert(m);
    for (int iter = 0; iter < 1500; iter++) {
        memcpy(m, trace.data, trace.size);
        size_t n = trace.size;
        int edits = 1 + (int)((rng = rng * 1103515245u + 12345u) >> 16) % 4;
        for (int e = 0; e < edits; e++) {
            rng = rng * 1103515245u + 12345u;
            size_t pos = (rng >> 8) % n;
            switch ((rng >> 4) % 4) {
            case 0: m[pos] ^= (uint8_t)(1u << ((rng >> 20) % 8)); break;
            case 1: m[pos] = (uint8_t)(rng >> 24); break;
            case 2: n = pos + 1; break;
            default: m[pos] = 0xff; break;
            }
        }
        tracec_pool *pool = tt_builtin_pool();
        tracec_bytes out = TRACEC_BYTES_INIT;
        tracec_error err;
        tracec_status_t s = tracec_decode_text_bytes(pool, m, n, NULL, &out, &err);
        cr_assert(s == TRACEC_STATUS_SUCCESS || s == TRACEC_STATUS_CORRUPT_DATA, "iteration %d: %d", iter, s);
        free(out.data);
        tracec_pool_free(pool);
    }
    free(m);
    tt_buf_free(&events);
    tt_buf_free(&set);
    tt_buf_free(&trace);
}
