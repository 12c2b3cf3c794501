/*
 * example_test.c - how a user tests the traces their code writes: write into
 * a memory trace, then compare it with the textproto you expect.  The
 * comparison is by meaning; on a mismatch Criterion prints a unified diff.
 * The custom fields resolve through the descriptors the generated code
 * registered at compile time (no .proto files needed at test time).
 */
#include <criterion/criterion.h>

#include "example_trace.h"
#include "tracec/testing.h"

static tracec_trace_file *g_trace;

static void open_trace(void) { cr_assert_eq(tracec_trace_file_open_memory(&g_trace), TRACEC_STATUS_SUCCESS); }
static void close_trace(void) { tracec_trace_file_close(g_trace); }

TestSuite(example, .init = open_trace, .fini = close_trace);

Test(example, my_event_carries_its_custom_fields) {
    example_write_my_event(g_trace, 1500);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_trace, &size);
    tracec_assert_trace_eq_text(data, size,
                                "packet {\n"
                                "  timestamp: 1500\n"
                                "  trusted_packet_sequence_id: 1\n"
                                "  track_event {\n"
                                "    type: TYPE_INSTANT\n"
                                "    track_uuid: 4660\n"
                                "    name: \"request done\"\n"
                                "    [my_app.MyEvent.custom_string]: \"hello from C\"\n"
                                "    [my_app.MyEvent.custom_counter]: -42\n"
                                "    [my_app.MyEvent.mood]: MOOD_BUSY\n"
                                "    [my_app.MyEvent.request] { url: \"https://example.org/\" status_code: 200 }\n"
                                "    [my_app.MyEvent.retry_delays_ms]: [10, 20, 40]\n"
                                "  }\n"
                                "}\n",
                                NULL);
}

Test(example, slice_pair_with_debug_annotations) {
    example_write_slice(g_trace, 1000, perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN, "draw frame");
    example_write_slice(g_trace, 2000, perfetto_protos_TrackEvent_TYPE_SLICE_END, NULL);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_trace, &size);
    /* Field order in the text does not matter. */
    tracec_assert_trace_eq_text(data, size,
                                "packet {\n"
                                "  trusted_packet_sequence_id: 1 timestamp: 1000\n"
                                "  track_event {\n"
                                "    name: \"draw frame\" type: TYPE_SLICE_BEGIN track_uuid: 4660\n"
                                "    categories: \"example\"\n"
                                "    debug_annotations { name: \"frame\" int_value: 7 }\n"
                                "    debug_annotations { name: \"phase\" string_value: \"render\" }\n"
                                "  }\n"
                                "}\n"
                                "packet {\n"
                                "  timestamp: 2000 trusted_packet_sequence_id: 1\n"
                                "  track_event { type: TYPE_SLICE_END track_uuid: 4660 categories: \"example\" }\n"
                                "}\n",
                                NULL);
}

/*
 * Part of a trace: the whole example trace starts with its ExtensionDescriptor
 * (~120 lines as text) and a track descriptor.  `.with` compares only the
 * packets that have a track_event; `.ignore` leaves out fields the test does
 * not care about, in every compared packet.  A mismatch prints the same
 * unified diff, of what was compared.
 */
Test(example, the_track_events_of_a_whole_trace) {
    example_write_trace(g_trace);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_trace, &size);
    tracec_assert_trace_match(data, size,
                              "packet { track_event { type: TYPE_SLICE_BEGIN name: \"draw frame\" } }\n"
                              "packet { track_event {\n"
                              "  type: TYPE_INSTANT name: \"request done\"\n"
                              "  [my_app.MyEvent.custom_string]: \"hello from C\"\n"
                              "  [my_app.MyEvent.custom_counter]: -42\n"
                              "  [my_app.MyEvent.mood]: MOOD_BUSY\n"
                              "  [my_app.MyEvent.request] { url: \"https://example.org/\" status_code: 200 }\n"
                              "  [my_app.MyEvent.retry_delays_ms]: [10, 20, 40]\n"
                              "} }\n"
                              "packet { track_event { type: TYPE_SLICE_END } }\n",
                              NULL, .with = TRACEC_FIELDS("track_event"),
                              .ignore = TRACEC_FIELDS("timestamp", "trusted_packet_sequence_id", "track_event.track_uuid",
                                                      "track_event.categories", "track_event.debug_annotations"));
    /* Or everything but the descriptor packet and the bookkeeping fields. */
    tracec_assert_trace_match(data, size,
                              "packet { track_descriptor { uuid: 4660 name: \"main thread\" thread { pid: 42 tid: 43 thread_name: \"main\" } } }\n"
                              "packet { track_event { type: TYPE_SLICE_BEGIN name: \"draw frame\" } }\n"
                              "packet { track_event { type: TYPE_INSTANT name: \"request done\" } }\n"
                              "packet { track_event { type: TYPE_SLICE_END } }\n",
                              NULL,
                              .ignore = TRACEC_FIELDS("timestamp", "trusted_packet_sequence_id", "extension_descriptor",
                                                      "track_event.track_uuid", "track_event.categories",
                                                      "track_event.debug_annotations",
                                                      "track_event.[my_app.MyEvent.custom_string]",
                                                      "track_event.[my_app.MyEvent.custom_counter]",
                                                      "track_event.[my_app.MyEvent.mood]",
                                                      "track_event.[my_app.MyEvent.request]",
                                                      "track_event.[my_app.MyEvent.retry_delays_ms]"));
}

Test(example, descriptor_packet_comes_first) {
    example_write_trace(g_trace);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(g_trace, &size);
    /* 0x0A, a minimal varint length, then TracePacket field 10 (sequence id) and field 72. */
    cr_assert_gt(size, 12u);
    cr_assert_eq(data[0], 0x0a);
    size_t i = 1;
    while (data[i] & 0x80) i++; /* the length */
    i++;
    cr_assert_eq(data[i], 0x50); /* trusted_packet_sequence_id */
    cr_assert_eq(data[i + 2], 0xc2); /* field 72, wire type 2: 0xC2 0x04 */
    cr_assert_eq(data[i + 3], 0x04);
    cr_assert_eq(tracec_trace_file_packets(g_trace), 5u);
}
