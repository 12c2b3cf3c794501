#define _POSIX_C_SOURCE 200809L
/*
 * test_testing.c - the Criterion assertions of tracec/testing.h, on traces
 * written by the generated writers (our schema plus test_extensions.proto).
 *
 * Also the integration round trip for generated traces: `tracec decode`
 * equals `protoc --decode`, and decode -> encode keeps the meaning.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "test_extensions.tracec.h"
#include "decode_util.h"
#include "tracec/testing.h"
#include "tracec/trace_file.h"

static void write_event(tracec_trace_file *f, uint64_t ts, bool with_descriptor) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    perfetto_protos_DebugAnnotation arg;
    perfetto_protos_TestExtensionChild child;
    static const int64_t packed[] = {-1, 7};
    tracec_trace_file_begin_packet(f, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
    if (with_descriptor) test_extensions_write_extension_descriptor(&pkt);
    perfetto_protos_TracePacket_set_timestamp(&pkt, ts);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    perfetto_protos_TrackEvent_set_cstr_name(&ev, "event");
    perfetto_protos_TrackEvent_begin_debug_annotations(&ev, &arg);
    perfetto_protos_DebugAnnotation_set_cstr_name(&arg, "n");
    perfetto_protos_DebugAnnotation_set_int_value(&arg, 42);
    perfetto_protos_TrackEvent_end_debug_annotations(&ev, &arg);
    perfetto_protos_TrackEvent_set_cstr_perfetto_protos_string_extension_for_testing(&ev, "ext");
    perfetto_protos_TrackEvent_begin_perfetto_protos_nested_message_extension_for_testing(&ev, &child);
    perfetto_protos_TestExtensionChild_set_cstr_child_field_for_testing(&child, "child");
    perfetto_protos_TrackEvent_end_perfetto_protos_nested_message_extension_for_testing(&ev, &child);
    perfetto_protos_TrackEvent_set_perfetto_protos_packed_extension_for_testing(&ev, packed, 2);
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt.msg), TRACEC_STATUS_SUCCESS);
}

static const char *const expected =
    "packet {\n"
    "  timestamp: 10\n"
    "  trusted_packet_sequence_id: 1\n"
    "  track_event {\n"
    "    type: TYPE_INSTANT\n"
    "    name: \"event\"\n"
    "    debug_annotations { name: \"n\" int_value: 42 }\n"
    "    [perfetto.protos.string_extension_for_testing]: \"ext\"\n"
    "    [perfetto.protos.nested_message_extension_for_testing] { child_field_for_testing: \"child\" }\n"
    "    [perfetto.protos.packed_extension_for_testing]: [-1, 7]\n"
    "  }\n"
    "}\n";

static tracec_trace_file *memory_trace(bool with_descriptor) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    write_event(f, 10, with_descriptor);
    return f;
}

Test(testing, generated_trace_equals_text) {
    tracec_trace_file *f = memory_trace(false);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    tracec_assert_trace_eq_text(data, size, expected, NULL);
    tracec_trace_file_close(f);
}

Test(testing, field_order_in_the_text_does_not_matter) {
    tracec_trace_file *f = memory_trace(false);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    tracec_assert_trace_eq_text(data, size,
                                "packet { track_event {"
                                " [perfetto.protos.packed_extension_for_testing]: -1"
                                " [perfetto.protos.nested_message_extension_for_testing] { child_field_for_testing: \"child\" }"
                                " name: \"event\" type: TYPE_INSTANT"
                                " [perfetto.protos.string_extension_for_testing]: \"ext\""
                                " debug_annotations { int_value: 42 name: \"n\" }"
                                " [perfetto.protos.packed_extension_for_testing]: 7 }"
                                " trusted_packet_sequence_id: 1 timestamp: 10 }",
                                NULL);
    tracec_trace_file_close(f);
}

Test(testing, the_report_is_a_unified_diff) {
    tracec_trace_file *f = memory_trace(false);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    const char *r = tracec_testing_check_trace(data, size, "packet { timestamp: 11 trusted_packet_sequence_id: 1 }",
                                               NULL, NULL);
    cr_assert(r);
    cr_assert(strstr(r, "--- expected\n+++ actual\n@@ "), "%s", r);
    cr_assert(strstr(r, "\n-  timestamp: 11\n+  timestamp: 10\n"), "%s", r);
    cr_assert(strstr(r, "\n+  track_event {\n"), "%s", r);
    r = tracec_testing_check_trace(data, size, "packet { timestamp: }", NULL, NULL);
    cr_assert(r && strncmp(r, "expected:1:21:", 14) == 0, "%s", r);
    tracec_trace_file_close(f);
}

Test(testing, file_and_text_assertions) {
    char *dir = tt_tmpdir();
    char path[600];
    snprintf(path, sizeof path, "%s/t.pftrace", dir);
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open(path, &f), TRACEC_STATUS_SUCCESS);
    write_event(f, 10, false);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    tracec_assert_file_eq_text(path, expected, NULL);
    tracec_assert_text_eq("packet { track_event { name: \"a\" } timestamp: 1 }",
                          "packet { timestamp: 1 track_event { name: \"a\" } }", NULL, NULL);
    tt_tmpdir_remove(dir);
}

/* Integration: generated writers -> our decoder == protoc; decode -> encode keeps meaning. */
Test(testing, generated_trace_round_trip_against_protoc) {
    char *dir = tt_tmpdir();
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    write_event(f, 10, true); /* the extension descriptor rides along */
    write_event(f, 20, false);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    tt_buf want = {0};
    cr_assert(tt_protoc_decode(dir, NULL, NULL, data, size, &want));
    /* Our side knows nothing but the built-in schema and what the trace carries. */
    tracec_pool *pool = tt_builtin_pool();
    tracec_bytes got = TRACEC_BYTES_INIT;
    tracec_error err;
    cr_assert_eq(tracec_decode_text_bytes(pool, data, size, NULL, &got, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert(got.size == want.size && memcmp(got.data, want.data, want.size) == 0,
              "--- protoc\n%s\n--- tracec\n%.*s", want.data, (int)got.size, (const char *)got.data);
    tracec_bytes again = TRACEC_BYTES_INIT;
    tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
    cr_assert_eq(tracec_text_encode(pool, "perfetto.protos.Trace", (const char *)got.data, got.size, &to, &again, &err),
                 TRACEC_STATUS_SUCCESS, "%s", err.msg);
    tt_buf back = {0};
    cr_assert(tt_protoc_decode(dir, NULL, NULL, again.data, again.size, &back));
    cr_assert_str_eq(back.data, want.data);
    tracec_bytes_free(&again);
    free(got.data);
    tt_buf_free(&want);
    tt_buf_free(&back);
    tracec_pool_free(pool);
    tracec_trace_file_close(f);
    tt_tmpdir_remove(dir);
}

/*
 * A trace whose ExtensionDescriptor gives a compiled-in extension's number
 * (string_extension_for_testing = 9900) to another name: the conflict is
 * surfaced through tracec_testing_conflicts() and in a failure's report.
 */
Test(testing, descriptor_conflicts_are_surfaced) {
    char *dir = tt_tmpdir();
    static const char clash[] = "syntax = \"proto2\";\npackage clash;\n"
                                "import \"perfetto/trace/track_event/track_event.proto\";\n"
                                "extend perfetto.protos.TrackEvent { optional int32 clash_9900 = 9900; }\n";
    char path[600];
    snprintf(path, sizeof path, "%s/clash.proto", dir);
    cr_assert(tt_write_file(path, clash, sizeof clash - 1));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -I. -I%s/protos --descriptor_set_out=clash.desc clash.proto", TRACEC_PROTOC,
             TRACEC_SOURCE_DIR);
    cr_assert_eq(tt_run(dir, cmd, NULL, 0, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/clash.desc", dir);
    tt_buf set = {0}, trace = {0};
    cr_assert(tt_read_file(path, &set));
    cr_assert(tt_append_extension_packet(&trace, set.data, set.size, false));
    cr_assert_null(tracec_testing_conflicts(NULL));
    const char *r = tracec_testing_check_trace(trace.data, trace.size, "packet { timestamp: 1 }", NULL, NULL);
    cr_assert(r);
    const char *want = "descriptor conflict: extensions perfetto.protos.string_extension_for_testing (string = 9900 "
                       "extending perfetto.protos.TrackEvent, from test_extensions.proto) and clash.clash_9900 (int32 = 9900 "
                       "extending perfetto.protos.TrackEvent, from <trace packet 0 at byte offset 3>) have the same "
                       "number; perfetto.protos.string_extension_for_testing is used\n";
    cr_assert(strstr(r, want), "%s", r);
    const char *c = tracec_testing_conflicts(NULL);
    cr_assert(c && strcmp(c, want) == 0, "%s", c ? c : "(none)");
    tt_buf_free(&set);
    tt_buf_free(&trace);
    tt_tmpdir_remove(dir);
}

/* Partial assertions: packets selected by field presence, named fields ignored, the same diff. */
Test(testing, match_selects_packets_and_ignores_fields) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    { /* The ExtensionDescriptor in a packet of its own (it is a member of TracePacket's oneof, as track_event). */
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_trace_file_begin_packet(f, &w, &pkt.msg);
        perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, 1);
        test_extensions_write_extension_descriptor(&pkt);
        cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt.msg), TRACEC_STATUS_SUCCESS);
    }
    write_event(f, 10, false);
    write_event(f, 20, false);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    const char *ev = "packet { track_event { type: TYPE_INSTANT name: \"event\"\n"
                     "  debug_annotations { int_value: 42 }\n"
                     "  [perfetto.protos.string_extension_for_testing]: \"ext\"\n"
                     "  [perfetto.protos.packed_extension_for_testing]: [-1, 7] } }\n";
    char two[2048];
    snprintf(two, sizeof two, "%s%s", ev, ev);
    tracec_assert_trace_match(data, size, two, NULL, .with = TRACEC_FIELDS("track_event"),
                              .ignore = TRACEC_FIELDS("timestamp", "trusted_packet_sequence_id", "extension_descriptor",
                                                      "track_event.debug_annotations.name",
                                                      "track_event.[perfetto.protos.nested_message_extension_for_testing]"));
    /* Selecting by a nested path and by an extension field. */
    const char *r = tracec_testing_check_trace_match(
        data, size, "packet { extension_descriptor { file_name: \"test_extensions.proto\" } }", NULL, NULL,
        &(const tracec_match){.with = TRACEC_FIELDS("extension_descriptor.extension_set"),
                              .ignore = TRACEC_FIELDS("trusted_packet_sequence_id",
                                                      "extension_descriptor.extension_set")});
    cr_assert_null(r, "%s", r);
    r = tracec_testing_check_trace_match(
        data, size, "packet { timestamp: 10 } packet { timestamp: 20 }", NULL, NULL,
        &(const tracec_match){.with = TRACEC_FIELDS("track_event.[perfetto.protos.string_extension_for_testing]"),
                              .ignore = TRACEC_FIELDS("track_event", "trusted_packet_sequence_id",
                                                      "extension_descriptor")});
    cr_assert_null(r, "%s", r);
    /* A difference in a compared packet: the unified diff of what was compared. */
    r = tracec_testing_check_trace_match(data, size, "packet { timestamp: 10 } packet { timestamp: 21 }", NULL, NULL,
                                         &(const tracec_match){.with = TRACEC_FIELDS("timestamp"),
                                                               .ignore = TRACEC_FIELDS("track_event",
                                                                                       "trusted_packet_sequence_id",
                                                                                       "extension_descriptor")});
    cr_assert(r);
    cr_assert_str_eq(r, "--- expected\n+++ actual\n@@ -2,5 +2,5 @@\n   timestamp: 10\n }\n packet {\n-  timestamp: 21\n"
                        "+  timestamp: 20\n }\n");
    /* Without `with`, every packet; NULL match: the plain comparison. */
    r = tracec_testing_check_trace_match(data, size, "packet { timestamp: 10 }", NULL, NULL,
                                         &(const tracec_match){.ignore = TRACEC_FIELDS("track_event",
                                                                                       "trusted_packet_sequence_id",
                                                                                       "extension_descriptor")});
    cr_assert(r && strstr(r, "+  timestamp: 20\n"), "%s", r);
    r = tracec_testing_check_trace_match(data, size, "packet { timestamp: 10 }", NULL, NULL, NULL);
    cr_assert(r && strstr(r, "+  extension_descriptor {\n"), "%s", r);
    /* Parse errors are reported as by the other checks. */
    r = tracec_testing_check_trace_match(data, size, "packet { timestamp: }", NULL, NULL, NULL);
    cr_assert(r && strncmp(r, "expected:1:21:", 14) == 0, "%s", r);
    tracec_trace_file_close(f);
}
