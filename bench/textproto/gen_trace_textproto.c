/*
 * gen_trace_textproto.c - writes a trace-like textproto (perfetto.protos.Trace)
 * of about N megabytes, for the textproto encode benchmark.
 *
 *   gen_trace_textproto OUT.txtpb [MEGABYTES [plain|rich]]
 *
 * Packets hold track events (slices, instants, counters) with categories,
 * names, debug annotations and flow ids, plus track descriptors, written with
 * the fields of each message in field-number order, so that the encoding of
 * a spec-following encoder and protoc's are byte-identical.  Deterministic.
 *
 * `rich` (the second input of the benchmark) adds, in about a third of the
 * events, what hand-written and tool-written text also holds: escapes (`\t`,
 * `\x41`, octal UTF-8 `\303\251`), exponent floats (`0.5e-3`), hex and
 * octal integers in lists, `<>` delimiters, `,` and `;` separators, `#`
 * comments and `[ext.name]` extension fields of test_extensions.proto (so
 * both encoders need test_extensions/ too).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const char *const kNames[] = {"DoWork", "MessageLoop::RunTask", "Compositor::Draw",
                                     "v8.compile", "IO::Read", "gpu.submit", "net.request",
                                     "layout", "paint", "GC.minor"};
static const char *const kCats[] = {"toplevel", "v8", "gpu", "net", "disabled-by-default-io"};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT [MEGABYTES]\n", argv[0]);
        return 2;
    }
    double mb = argc > 2 ? atof(argv[2]) : 50.0;
    int rich = argc > 3 && strcmp(argv[3], "rich") == 0;
    uint64_t target = (uint64_t)(mb * 1024 * 1024);
    FILE *f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    uint64_t ts = 1000000, n = 0;
    long written = 0;
    fprintf(f, "# proto-message: perfetto.protos.Trace\n");
    while ((uint64_t)(written = ftell(f)) < target) {
        n++;
        ts += rnd() % 5000;
        unsigned seq = 1 + (unsigned)(n % 4);
        if (n % 500 == 1) {
            fprintf(f,
                    "packet {\n  trusted_packet_sequence_id: %u\n  track_descriptor {\n"
                    "    uuid: %u\n    name: \"worker thread %u\"\n"
                    "    thread { pid: 4242 tid: %u thread_name: 'Worker\\t#%u' }\n  }\n}\n",
                    seq, 100 + seq, seq, 5000 + seq, seq);
            continue;
        }
        uint64_t r = rnd();
        const char *name = kNames[r % 10];
        const char *cat = kCats[(r >> 8) % 5];
        if (r % 7 == 0) {
            /* A counter. */
            fprintf(f,
                    "packet {\n  timestamp: %" PRIu64 "\n  trusted_packet_sequence_id: %u\n"
                    "  track_event {\n    type: TYPE_COUNTER\n    track_uuid: %u\n"
                    "    counter_value: %" PRId64 "\n  }\n}\n",
                    ts, seq, 900 + seq, (int64_t)(rnd() % 2000000) - 1000000);
            continue;
        }
        if (rich && r % 3 == 0) {
            /* A rich event: every feature of the syntax the plain input does not use. */
            uint64_t q = rnd();
            fprintf(f,
                    "packet <  # a packet in angle brackets\n"
                    "  timestamp: 0x%" PRIx64 ", trusted_packet_sequence_id: %u;\n"
                    "  track_event {\n"
                    "    debug_annotations < double_value: %u.%ue-3, name: 'arg\\x5f%u' >\n"
                    "    debug_annotations { string_value: \"tab\\there \\x41\\x42 caf\\303\\251 #%u\"; name: \"s\" }\n"
                    "    type: TYPE_INSTANT; track_uuid: 0x%x\n"
                    "    categories: \"%s\" name: \"%s\\t\\303\\251\"  # UTF-8 in octal\n"
                    "    extra_double_counter_values: [%u.5E%d, -2.25e-2, 1e10]\n"
                    "    flow_ids: [0x%" PRIx64 ", 0X%" PRIX64 ", 0%o]\n"
                    "    [perfetto.protos.string_extension_for_testing]: \"ext\\x20v\\303\\251\\n\"\n"
                    "    [perfetto.protos.int_extension_for_testing]: [0x10, %d, -3]\n"
                    "    [perfetto.protos.nested_message_extension_for_testing] < child_field_for_testing: 'c\\tx%u' >\n"
                    "    [perfetto.protos.uint_extension_for_testing]: 0x%x,\n"
                    "    [perfetto.protos.enum_extension_for_testing]: TEST_EXTENSION_STATE_BACKGROUND\n"
                    "    [perfetto.protos.packed_extension_for_testing]: [-1, 0x7f, %d]\n"
                    "  }\n"
                    "  sequence_flags: 2;\n"
                    ">\n",
                    ts, seq, (unsigned)(q % 10), (unsigned)(q >> 8) % 1000, (unsigned)(q >> 28) % 8,
                    (unsigned)(q >> 20) % 100, 100 + seq, cat, name, (unsigned)(q >> 32) % 10,
                    (int)((q >> 36) % 20) - 10, rnd() >> 24, rnd() >> 28, (unsigned)(q >> 40) % 4096,
                    (int)((q >> 44) % 1000), (unsigned)(q >> 50) % 1000, (unsigned)(q >> 54) % 256,
                    (int)((q >> 30) % 100000) - 50000);
            continue;
        }
        int type = (int)(r % 3) + 1;
        fprintf(f, "packet {\n  timestamp: %" PRIu64 "\n  trusted_packet_sequence_id: %u\n  track_event {\n",
                ts, seq);
        if (type == 1) {
            fprintf(f, "    debug_annotations { int_value: %" PRId64 " name: \"arg%u\" }\n",
                    (int64_t)(rnd() % 100000) - 5000, (unsigned)(r >> 16) % 4);
            if (r % 5 == 0)
                fprintf(f, "    debug_annotations { string_value: \"path/to/file_%u.cc\\n\" name: \"src\" }\n",
                        (unsigned)(r >> 20) % 1000);
            if (r % 3 == 0)
                fprintf(f, "    debug_annotations { double_value: %.6g name: \"ratio\" }\n",
                        (double)(rnd() % 100000) / 977.0);
        }
        static const char *const kTypes[] = {"", "TYPE_SLICE_BEGIN", "TYPE_SLICE_END", "TYPE_INSTANT"};
        fprintf(f, "    type: %s\n    track_uuid: %u\n", kTypes[type], 100 + seq);
        if (type != 2) fprintf(f, "    categories: \"%s\"\n    name: \"%s\"\n", cat, name);
        if (type == 3 && r % 4 == 0)
            fprintf(f, "    flow_ids: [%" PRIu64 ", %" PRIu64 "]\n", rnd() >> 20, rnd() >> 20);
        fprintf(f, "  }\n  sequence_flags: 2\n}\n");
    }
    fclose(f);
    fprintf(stderr, "%s: %ld bytes, %" PRIu64 " packets\n", argv[1], written, n);
    return 0;
}
