/*
 * test_all.c - protoc-gen-tracec on each layout users keep Perfetto's
 * schema in, end to end.  The trees are small copies under
 * tests/layouts/ with Perfetto's paths, names and field numbers:
 *
 *   builtin/        (a) a user's file on our built-in schema (-I protos,
 *                   perfetto/trace/...);
 *   perfetto_tree/  (b) Perfetto's own paths (protos/perfetto/trace/...), a
 *                   Chrome-style wrapper in package perfetto.protos in
 *                   protos/third_party/chromium/ (import public), a
 *                   file-scope test_extensions.proto, a
 *                   field_options.proto that imports descriptor.proto, an
 *                   Android-style wrapper (package com.example.internal)
 *                   whose fields carry its options, and a TrackEvent newer
 *                   than libtracec's;
 *   one_file/       (c) the one-file protos/perfetto/trace/perfetto_trace.proto,
 *                   the data file and the wrapper file of Perfetto's extension
 *                   guide (acme_data.proto, acme_extension.proto).
 *
 * Each test generates the layout's whole tree in one protoc run, compiles
 * every output with the strict flags (each .c alone and all together, the
 * headers as C++17 too, and all of them with every header of libtracec's
 * built-in schema in one translation unit, in both orders), builds the layout's write_trace.c with the outputs, the built-in
 * schema's code and the runtime, runs it, and reads the trace back with
 * protoc --decode, with `tracec decode` (the trace alone) and with
 * python3-protobuf (read_trace.py: Perfetto's schema plus the descriptor sets
 * the trace carries, not the user's files).  Where Perfetto's trace processor
 * is at hand (CMake cache variable TRACEC_TRACE_PROCESSOR), the
 * *_in_trace_processor tests check that it shows every extension field as an
 * arg, with no error or data-loss stat; elsewhere they skip (a ctest skip).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "generator_util.h"
#include "test_util.h"

TestSuite(layouts, .init = cg_tmp_setup, .fini = cg_tmp_teardown, .timeout = 120);

#define LAYOUTS TRACEC_SOURCE_DIR "/tests/layouts"
#define CFLAGS "-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes"
#define CXXFLAGS "-std=c++17 -pedantic -Wall -Wextra -Werror"
/* The user's generated tree first, then the runtime and libtracec's built-in headers. */
#define INC "-I'%s/out' -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR " -I" CG_SCHEMA_DIR
#define RUNTIME_SRCS                                                                                          \
    TRACEC_SOURCE_DIR "/runtime/core/src/trace_file.c " TRACEC_SOURCE_DIR "/runtime/core/src/writer.c " TRACEC_SOURCE_DIR \
                      "/runtime/core/src/registry.c " TRACEC_SOURCE_DIR "/runtime/core/src/status.c"

/* One layout: its folder, the -I flags of protoc (relative to the folder) and its files to generate. */
typedef struct layout {
    const char *dir;
    const char *includes;
    const char *protos;
    const char *schema_proto; /* the root of the user's Perfetto schema, for read_trace.py */
} layout;

static const layout k_builtin = {"builtin", "-I. -I" TRACEC_SOURCE_DIR "/protos -I" TRACEC_PROTOBUF_INCLUDE,
                                 "acme/acme_events.proto", "perfetto/trace/trace.proto"};
static const layout k_perfetto_tree = {
    "perfetto_tree", "-I. -I" TRACEC_PROTOBUF_INCLUDE,
    "protos/perfetto/trace/extension_descriptor.proto protos/perfetto/trace/test_extensions.proto "
    "protos/perfetto/trace/trace.proto protos/perfetto/trace/trace_packet.proto "
    "protos/perfetto/trace/track_event/debug_annotation.proto "
    "protos/perfetto/trace/track_event/source_location.proto protos/perfetto/trace/track_event/track_event.proto "
    "protos/third_party/chromium/chrome_track_event.proto protos/perfetto/trace/field_options.proto "
    "protos/third_party/android/android_track_event.proto",
    "protos/perfetto/trace/trace.proto"};
static const layout k_one_file = {"one_file", "-I.",
                                  "protos/perfetto/trace/perfetto_trace.proto acme_data.proto acme_extension.proto",
                                  "protos/perfetto/trace/perfetto_trace.proto"};

/* protoc with the plugin, run in `dir`, over `protos` into cg_tmp/`out`; `opt` is --tracec_opt's value or "". */
static void run_plugin(const char *dir, const char *includes, const char *protos, const char *out, const char *opt) {
    int st = -1;
    char *log = cg_run(&st, "cd '%s' && mkdir -p '%s/%s' && " CG_PROTOC_WITH_PLUGIN " --tracec_out='%s/%s' %s%s %s %s 2>&1",
                       dir, cg_tmp, out, cg_tmp, out, opt[0] ? "--tracec_opt=" : "", opt, includes, protos);
    cr_assert_eq(st, 0, "protoc-gen-tracec failed in %s:\n%s", dir, log);
    /* Perfetto's own definitions, in any layout, are nothing to warn about. */
    cr_expect_str_eq(log, "", "protoc-gen-tracec printed something for %s:\n%s", dir, log);
    free(log);
}

/* protoc with the plugin over `protos` of layout `l`, into cg_tmp/`out`. */
static void generate_into(const layout *l, const char *protos, const char *out) {
    char *dir = cg_fmt(LAYOUTS "/%s", l->dir);
    run_plugin(dir, l->includes, protos, out, "");
    free(dir);
}

/* The text of generated file cg_tmp/out/`rel` (malloc'd); the test fails without it. */
static char *read_out(const char *rel) {
    char *path = cg_fmt("%s/out/%s", cg_tmp, rel);
    char *text = cg_read(path, NULL);
    cr_assert_not_null(text, "nothing generated at %s", path);
    free(path);
    return text;
}

/*
 * The generated files under cg_tmp/out whose names end with `suffix`, each as
 * `fmt` makes its absolute path ("%s" once), joined (malloc'd).
 */
static char *generated(const char *suffix, const char *fmt) {
    char *dir = cg_fmt("%s/out", cg_tmp);
    size_t n = 0;
    char *list = cg_list_files(dir, suffix, &n);
    cr_assert_gt(n, 0, "no %s generated in %s", suffix, dir);
    char *text = strdup("");
    for (char *save = NULL, *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *path = cg_fmt("%s/%s", dir, f);
        char *item = cg_fmt(fmt, path);
        char *t = cg_fmt("%s%s", text, item);
        free(text);
        free(item);
        free(path);
        text = t;
    }
    free(list);
    free(dir);
    return text;
}

/* The generated .c files, as shell words. */
static char *generated_sources(void) { return generated(".tracec.c", " '%s'"); }

/* Compiles `text` as file cg_tmp/`name` with `cmd` ("gcc FLAGS"); expects no diagnostic. */
static void compiles_as_one(const char *cmd, const char *name, const char *text) {
    char *path = cg_fmt("%s/%s", cg_tmp, name);
    cg_write_text(path, text);
    int st = -1;
    char *out = cg_run(&st, "%s -fsyntax-only " INC " '%s' 2>&1", cmd, cg_tmp, path);
    cr_expect(st == 0 && out[0] == '\0', "%s: the generated files do not compile in one translation unit (exit %d):\n%s",
              cmd, st, out);
    free(out);
    free(path);
}

/*
 * Every generated .c compiles alone, all of them in one translation unit (one
 * TU sees every generated header: a type defined twice fails here), with gcc
 * and the strict flags, the built-in headers on the include path; and every
 * header in one C++17 translation unit.
 */
static void compiles_strictly(void) {
    char *srcs = generated_sources();
    int st = -1;
    char *out = cg_run(&st, "gcc " CFLAGS " -fsyntax-only " INC " %s 2>&1", cg_tmp, srcs);
    cr_expect(st == 0 && out[0] == '\0', "a generated file does not compile alone (exit %d):\n%s", st, out);
    free(out);
    free(srcs);
    char *unity = generated(".tracec.c", "#include \"%s\"\n");
    compiles_as_one("gcc " CFLAGS, "unity.c", unity);
    free(unity);
    char *headers = generated(".tracec.h", "#include \"%s\"\n");
    compiles_as_one("g++ " CXXFLAGS, "headers.cpp", headers);
    /* Next to every header of libtracec's own schema, before and after: one definition per full name. */
    size_t n = 0;
    char *list = cg_list_files(CG_SCHEMA_DIR, ".tracec.h", &n);
    cr_assert_gt(n, 0, "no built-in header in " CG_SCHEMA_DIR);
    char *builtin = strdup("");
    for (char *save = NULL, *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *t = cg_fmt("%s#include \"%s\"\n", builtin, f);
        free(builtin);
        builtin = t;
    }
    char *both = cg_fmt("%s%s", builtin, headers);
    compiles_as_one("gcc " CFLAGS, "builtin_first.c", both);
    compiles_as_one("g++ " CXXFLAGS, "builtin_first.cpp", both);
    free(both);
    both = cg_fmt("%s%s", headers, builtin);
    compiles_as_one("gcc " CFLAGS, "builtin_last.c", both);
    free(both);
    free(builtin);
    free(list);
    free(headers);
}

/* No generated file of a layout with its own Perfetto tree includes libtracec's built-in headers. */
static void includes_no_builtin_header(void) {
    int st = -1;
    char *out = cg_run(&st, "cd '%s/out' && grep -rn '#include \"perfetto/' . 2>&1", cg_tmp);
    cr_expect_eq(st, 1, "generated files include libtracec's built-in headers:\n%s", out);
    free(out);
}

/* Builds the layout's write_trace.c with the generated code, the built-in schema's and the runtime; runs it. */
static void write_trace(const layout *l) {
    char *srcs = generated_sources();
    int st = -1;
    char *out = cg_run(&st,
                       "gcc " CFLAGS " -pthread " INC " " LAYOUTS "/%s/write_trace.c %s $(find " CG_SCHEMA_DIR
                       " -name '*.tracec.c') " RUNTIME_SRCS " -o '%s/write_trace' 2>&1",
                       cg_tmp, l->dir, srcs, cg_tmp);
    cr_assert_eq(st, 0, "%s/write_trace.c does not build with the generated code:\n%s", l->dir, out);
    free(out);
    out = cg_run(&st, "'%s/write_trace' '%s/trace.pftrace' 2>&1", cg_tmp, cg_tmp);
    cr_assert_eq(st, 0, "%s/write_trace failed (exit %d):\n%s", l->dir, st, out);
    free(out);
    free(srcs);
}

/* protoc --decode of the trace with the layout's .proto files and its Perfetto schema (malloc'd text). */
static char *protoc_decode(const layout *l) {
    int st = -1;
    char *out =
        cg_run(&st, "cd " LAYOUTS "/%s && '%s' --decode=perfetto.protos.Trace %s %s %s < '%s/trace.pftrace' 2>&1",
               l->dir, TRACEC_PROTOC, l->includes, l->schema_proto, l->protos, cg_tmp);
    cr_assert_eq(st, 0, "protoc --decode of the trace failed:\n%s", out);
    return out;
}

/* read_trace.py on the trace, with Perfetto's schema as the layout holds it (malloc'd output). */
static char *python_read(const layout *l) {
    int st = -1;
    char *out = cg_run(&st, "cd " LAYOUTS "/%s && '%s' --include_imports --descriptor_set_out='%s/schema.pb' %s %s 2>&1",
                       l->dir, TRACEC_PROTOC, cg_tmp, l->includes, l->schema_proto);
    cr_assert_eq(st, 0, "protoc --descriptor_set_out of %s failed:\n%s", l->schema_proto, out);
    free(out);
    out = cg_run(&st, "'%s' " LAYOUTS "/read_trace.py '%s/schema.pb' '%s/trace.pftrace' 2>&1", TRACEC_PYTHON3, cg_tmp,
                 cg_tmp);
    cr_assert_eq(st, 0, "read_trace.py failed (exit %d):\n%s", st, out);
    return out;
}

/* Expects each line of `lines` ('\n'-separated) to be a line of `text`. */
static void expect_lines(const char *what, const char *text, const char *lines) {
    char *copy = strdup(lines);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(l);
        const char *p = text;
        while ((p = strstr(p, l)) != NULL && !((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))) p++;
        cr_expect_not_null(p, "%s has no line\n%s\nin:\n%s", what, l, text);
    }
    free(copy);
}

#define TRACE_PROCESSOR tt_trace_processor()

/*
 * Loads the trace into Perfetto's trace processor: its args of every slice
 * (CSV lines "slice,key,int,string") must be `want`, and no stat may be an
 * error or a data loss.  Skips the test where the trace processor is absent.
 */
static void trace_processor_args(const char *want) {
    if (TRACE_PROCESSOR == NULL) {
        cg_tmp_teardown();
        tt_skip_without_trace_processor();
    }
    char *q = cg_fmt("%s/args.sql", cg_tmp);
    cg_write_text(q, "select s.name, a.key, a.int_value, a.string_value from slice s join args a using(arg_set_id) "
                     "order by s.name, a.key;\n");
    int st = -1;
    char *out = cg_run(&st, "'%s' '%s/trace.pftrace' -q '%s' 2>/dev/null", TRACE_PROCESSOR, cg_tmp, q);
    cr_assert_eq(st, 0, "the trace processor failed on the trace (exit %d):\n%s", st, out);
    cr_expect_str_eq(out, want, "the trace processor's args differ (got, then wanted):\n%s\n%s", out, want);
    free(out);
    cg_write_text(q, "select name, idx, severity, source, value from stats where value > 0 "
                     "and severity in ('error', 'data_loss');\n");
    out = cg_run(&st, "'%s' '%s/trace.pftrace' -q '%s' 2>/dev/null", TRACE_PROCESSOR, cg_tmp, q);
    cr_expect_str_eq(out, "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n",
                     "the trace processor reports errors or data losses:\n%s", out);
    free(out);
    free(q);
}

#define TP_HEADER "\"name\",\"key\",\"int_value\",\"string_value\"\n"

/* The size of the descriptor packet named `file_name` in read_trace.py's output, and the files of its set. */
static long descriptor_packet(const char *py, const char *file_name, char *files, size_t cap) {
    char *key = cg_fmt("descriptor\t%s\t", file_name);
    const char *p = strstr(py, key);
    cr_assert_not_null(p, "no ExtensionDescriptor packet of %s; read_trace.py:\n%s", file_name, py);
    char *end = NULL;
    long size = strtol(p + strlen(key), &end, 10);
    size_t n = strcspn(end + 1, "\n");
    snprintf(files, cap, "%.*s", (int)n, end + 1);
    free(key);
    return size;
}

/*
 * protoc --decode (with the layout's .proto files) and our own `tracec decode`
 * (with nothing but the trace: its built-in schema and the trace's descriptor
 * packets) both show each line of `lines`.
 */
static void decoders_show(const layout *l, const char *lines) {
    char *text = protoc_decode(l);
    expect_lines("protoc --decode", text, lines);
    free(text);
    int st = -1;
    text = cg_run(&st, "'" TRACEC_CLI "' decode '%s/trace.pftrace' 2>&1", cg_tmp);
    cr_expect_eq(st, 0, "tracec decode failed (exit %d):\n%s", st, text);
    expect_lines("tracec decode", text, lines);
    free(text);
}

/* ---- (a) the built-in schema ---------------------------------------------- */

Test(layouts, builtin) {
    const layout *l = &k_builtin;
    generate_into(l, l->protos, "out");
    compiles_strictly();
    write_trace(l);
    decoders_show(l, "    file_name: \"acme/acme_events.proto\"\n"
                  "    [acme.AcmeEvent.request_id]: \"req-a\"\n"
                  "    [acme.AcmeEvent.retry_latencies_ms]: 10\n"
                  "    [acme.AcmeEvent.retry_latencies_ms]: 20\n"
                  "      url: \"https://a.example/\"\n");
    char *py = python_read(l);
    expect_lines("read_trace.py", py,
                 "event\ttype: TYPE_INSTANT name: \"builtin\" [acme.AcmeEvent.request_id]: \"req-a\" "
                 "[acme.AcmeEvent.retry_latencies_ms]: 10 [acme.AcmeEvent.retry_latencies_ms]: 20 "
                 "[acme.AcmeEvent.request] { url: \"https://a.example/\" status: 200 }");
    char files[512];
    descriptor_packet(py, "acme/acme_events.proto", files, sizeof files);
    cr_expect_str_eq(files, "acme/acme_events.proto", "the embedded set holds more than the user's file");
    free(py);
}

Test(layouts, builtin_in_trace_processor) {
    generate_into(&k_builtin, k_builtin.protos, "out");
    write_trace(&k_builtin);
    trace_processor_args(TP_HEADER "\"builtin\",\"request.status\",200,\"[NULL]\"\n"
                                   "\"builtin\",\"request.url\",\"[NULL]\",\"https://a.example/\"\n"
                                   "\"builtin\",\"request_id\",\"[NULL]\",\"req-a\"\n"
                                   "\"builtin\",\"retry_latencies_ms[0]\",10,\"[NULL]\"\n"
                                   "\"builtin\",\"retry_latencies_ms[1]\",20,\"[NULL]\"\n");
}

/* ---- (b) Perfetto's paths, Chrome's wrapper, file-scope test extensions ---- */

Test(layouts, perfetto_tree) {
    const layout *l = &k_perfetto_tree;
    generate_into(l, l->protos, "out");
    includes_no_builtin_header();
    compiles_strictly();
    write_trace(l);
    decoders_show(l, "    file_name: \"protos/third_party/chromium/chrome_track_event.proto\"\n"
                  "    file_name: \"protos/perfetto/trace/test_extensions.proto\"\n"
                  "    [perfetto.protos.ChromeTrackEvent.chrome_app_state]: APP_STATE_BACKGROUND\n"
                  "      label: \"chrome\"\n"
                  "    [perfetto.protos.string_extension_for_testing]: \"s\"\n"
                  "    [perfetto.protos.int_extension_for_testing]: 7\n"
                  "    [perfetto.protos.int_extension_for_testing]: 8\n"
                  "      child_field_for_testing: \"child\"\n"
                  "    [perfetto.protos.uint_extension_for_testing]: 9\n");
    char *py = python_read(l);
    expect_lines("read_trace.py", py,
                 "event\ttype: TYPE_INSTANT name: \"perfetto_tree\" "
                 "[perfetto.protos.ChromeTrackEvent.chrome_app_state]: APP_STATE_BACKGROUND "
                 "[perfetto.protos.ChromeTrackEvent.chrome_test_info] { label: \"chrome\" values: -5 } "
                 "[perfetto.protos.string_extension_for_testing]: \"s\" "
                 "[perfetto.protos.int_extension_for_testing]: 7 [perfetto.protos.int_extension_for_testing]: 8 "
                 "[perfetto.protos.nested_message_extension_for_testing] { child_field_for_testing: \"child\" "
                 "debug_annotations { int_value: 42 name: \"arg1\" } } "
                 "[perfetto.protos.uint_extension_for_testing]: 9");
    /* Chrome's wrapper is in package perfetto.protos, yet not Perfetto's schema: its own file is embedded. */
    char files[512];
    descriptor_packet(py, "protos/third_party/chromium/chrome_track_event.proto", files, sizeof files);
    cr_expect_str_eq(files, "protos/third_party/chromium/chrome_track_event.proto");
    descriptor_packet(py, "protos/perfetto/trace/test_extensions.proto", files, sizeof files);
    cr_expect_str_eq(files, "protos/perfetto/trace/test_extensions.proto");
    free(py);
}

/*
 * Chrome's wrapper generated alone (its request has no TracePacket): the
 * parent's header is found beside the extendee's in the user's tree, so the
 * header equals the one of the whole-tree run and compiles with that tree.
 */
Test(layouts, perfetto_tree_wrapper_alone) {
    const layout *l = &k_perfetto_tree;
    generate_into(l, l->protos, "out");
    generate_into(l, "protos/third_party/chromium/chrome_track_event.proto", "alone");
    char *a = cg_fmt("%s/alone/protos/third_party/chromium/chrome_track_event.tracec.h", cg_tmp);
    char *b = cg_fmt("%s/out/protos/third_party/chromium/chrome_track_event.tracec.h", cg_tmp);
    char *d = cg_diff_files(a, b);
    cr_expect_str_eq(d, "", "generated alone, the wrapper's header differs from the whole tree's:\n%s", d);
    char *alone = read_out("../alone/protos/third_party/chromium/chrome_track_event.tracec.h");
    cr_expect_not_null(strstr(alone, "#include \"protos/perfetto/trace/trace_packet.tracec.h\"\n"),
                       "the wrapper alone does not take TracePacket from the user's tree:\n%s", alone);
    cr_expect_not_null(strstr(alone, "perfetto_protos_TracePacket_begin_track_event_as_perfetto_protos_ChromeTrackEvent"));
    free(alone);
    free(d);
    free(a);
    free(b);
}

/*
 * field_options.proto (package perfetto.protos, importing only
 * descriptor.proto) and the Android-style wrapper that imports it, each
 * generated alone (as a build that runs protoc per file does): the headers
 * equal the whole tree's, so field_options.proto's descriptor writer takes
 * TracePacket from the user's tree (found by its own path), never from
 * libtracec's, and descriptor.proto's header is libtracec's.
 */
Test(layouts, perfetto_tree_field_options_alone) {
    const layout *l = &k_perfetto_tree;
    generate_into(l, l->protos, "out");
    static const char *const files[] = {"protos/perfetto/trace/field_options",
                                        "protos/third_party/android/android_track_event"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *proto = cg_fmt("%s.proto", files[i]);
        generate_into(l, proto, "alone");
        char *a = cg_fmt("%s/alone/%s.tracec.h", cg_tmp, files[i]);
        char *b = cg_fmt("%s/out/%s.tracec.h", cg_tmp, files[i]);
        char *d = cg_diff_files(a, b);
        cr_expect_str_eq(d, "", "generated alone, %s's header differs from the whole tree's:\n%s", proto, d);
        free(d);
        free(a);
        free(b);
        free(proto);
    }
    char *h = read_out("protos/perfetto/trace/field_options.tracec.h");
    cr_expect_not_null(strstr(h, "#include \"google/protobuf/descriptor.tracec.h\"\n"), "%s", h);
    cr_expect_not_null(strstr(h, "#include \"protos/perfetto/trace/trace_packet.tracec.h\"\n"), "%s", h);
    cr_expect_null(strstr(h, "#include \"perfetto/"), "field_options.proto's header includes libtracec's:\n%s", h);
    free(h);
}

/* The trace processor knows Chrome's real ChromeTrackEvent: ours merges into it (1000 is Chrome's, 1999 is free). */
Test(layouts, perfetto_tree_in_trace_processor) {
    generate_into(&k_perfetto_tree, k_perfetto_tree.protos, "out");
    write_trace(&k_perfetto_tree);
    trace_processor_args(
        TP_HEADER "\"perfetto_tree\",\"chrome_app_state\",\"[NULL]\",\"APP_STATE_BACKGROUND\"\n"
                  "\"perfetto_tree\",\"chrome_test_info.label\",\"[NULL]\",\"chrome\"\n"
                  "\"perfetto_tree\",\"chrome_test_info.values[0]\",-5,\"[NULL]\"\n"
                  "\"perfetto_tree\",\"int_extension_for_testing[0]\",7,\"[NULL]\"\n"
                  "\"perfetto_tree\",\"int_extension_for_testing[1]\",8,\"[NULL]\"\n"
                  "\"perfetto_tree\",\"nested_message_extension_for_testing.arg1\",42,\"[NULL]\"\n"
                  "\"perfetto_tree\",\"nested_message_extension_for_testing.child_field_for_testing\",\"[NULL]\","
                  "\"child\"\n"
                  "\"perfetto_tree\",\"string_extension_for_testing\",\"[NULL]\",\"s\"\n"
                  "\"perfetto_tree\",\"uint_extension_for_testing\",9,\"[NULL]\"\n");
}

/* ---- (c) the one-file schema of Perfetto's extension guide ------------------ */

Test(layouts, one_file) {
    const layout *l = &k_one_file;
    generate_into(l, l->protos, "out");
    includes_no_builtin_header();
    compiles_strictly();
    write_trace(l);
    decoders_show(l, "    file_name: \"acme_extension.proto\"\n"
                  "    [com.acme.AcmeExtension.request_id]: \"req-c\"\n"
                  "    [com.acme.AcmeExtension.retry_latencies_ms]: 30\n"
                  "    [com.acme.AcmeExtension.retry_latencies_ms]: 40\n"
                  "      endpoint: \"/v1/acme\"\n");
    char *py = python_read(l);
    expect_lines("read_trace.py", py,
                 "event\ttype: TYPE_INSTANT name: \"one_file\" [com.acme.AcmeExtension.request_id]: \"req-c\" "
                 "[com.acme.AcmeExtension.retry_latencies_ms]: 30 [com.acme.AcmeExtension.retry_latencies_ms]: 40 "
                 "[com.acme.AcmeExtension.request_metadata] { endpoint: \"/v1/acme\" priority: 3 }");
    free(py);
}

/*
 * The descriptor packet of (c) holds the data file and the wrapper file, not
 * perfetto_trace.proto: it stays well under 2 KB, while the schema's own
 * descriptor alone is bigger than that (so embedding it would fail here).
 */
Test(layouts, one_file_descriptor_packet_is_small) {
    const layout *l = &k_one_file;
    generate_into(l, l->protos, "out");
    write_trace(l);
    char *py = python_read(l);
    char files[512];
    long size = descriptor_packet(py, "acme_extension.proto", files, sizeof files);
    cr_expect_str_eq(files, "acme_data.proto acme_extension.proto", "the embedded set holds other files");
    cr_expect_lt(size, 2048, "the descriptor packet is %ld bytes", size);
    int st = -1;
    char *out = cg_run(&st, "cd " LAYOUTS "/one_file && '%s' --descriptor_set_out='%s/one.pb' -I. %s 2>&1", TRACEC_PROTOC,
                       cg_tmp, l->schema_proto);
    cr_assert_eq(st, 0, "%s", out);
    char *path = cg_fmt("%s/one.pb", cg_tmp);
    size_t schema_size = 0;
    free(cg_read(path, &schema_size));
    cr_expect_gt(schema_size, 2048, "perfetto_trace.proto's descriptor (%zu bytes) is too small to tell", schema_size);
    free(path);
    free(out);
    free(py);
}

Test(layouts, one_file_in_trace_processor) {
    generate_into(&k_one_file, k_one_file.protos, "out");
    write_trace(&k_one_file);
    trace_processor_args(TP_HEADER "\"one_file\",\"request_id\",\"[NULL]\",\"req-c\"\n"
                                   "\"one_file\",\"request_metadata.endpoint\",\"[NULL]\",\"/v1/acme\"\n"
                                   "\"one_file\",\"request_metadata.priority\",3,\"[NULL]\"\n"
                                   "\"one_file\",\"retry_latencies_ms[0]\",30,\"[NULL]\"\n"
                                   "\"one_file\",\"retry_latencies_ms[1]\",40,\"[NULL]\"\n");
}

/* ---- options and corner cases --------------------------------------------- */

/*
 * name_prefix and include_prefix on Perfetto's tree: Perfetto's files keep
 * their names (perfetto_protos_TracePacket), Chrome's wrapper, which is not
 * Perfetto's schema, takes the prefix; every header is included through the
 * prefix (the user's tree), and all of it compiles.
 */
Test(layouts, perfetto_tree_name_and_include_prefix) {
    const layout *l = &k_perfetto_tree;
    run_plugin(LAYOUTS "/perfetto_tree", l->includes, l->protos, "out/gen", "name_prefix=acme_,include_prefix=gen/");
    compiles_strictly();
    includes_no_builtin_header();
    char *h = read_out("gen/protos/third_party/chromium/chrome_track_event.tracec.h");
    cr_expect_not_null(strstr(h, "#include \"gen/protos/perfetto/trace/trace_packet.tracec.h\"\n"), "%s", h);
    cr_expect_not_null(strstr(h, "} acme_perfetto_protos_ChromeTrackEvent;"), "%s", h);
    cr_expect_not_null(
        strstr(h, "static inline void perfetto_protos_TracePacket_begin_track_event_as_acme_perfetto_protos_"
                  "ChromeTrackEvent(perfetto_protos_TracePacket *m, acme_perfetto_protos_ChromeTrackEvent *child)"),
        "%s", h);
    cr_expect_null(strstr(h, "acme_perfetto_protos_TrackEvent"), "a Perfetto type took the name prefix:\n%s", h);
    free(h);
}

/*
 * A wrapper's file imported by the file that defines TracePacket: including
 * trace_packet's header from the wrapper's would make the two include each
 * other, so the wrapper gets no TracePacket opening, and everything compiles.
 */
Test(layouts, parent_that_imports_the_wrapper) {
    char *p = cg_fmt("%s/in/cyc/track_event.proto", cg_tmp);
    cg_write_text(p, "syntax = \"proto2\";\npackage perfetto.protos;\n"
                     "message TrackEvent { optional string name = 23; extensions 1000 to 9999; }\n");
    free(p);
    p = cg_fmt("%s/in/cyc/wrapper.proto", cg_tmp);
    cg_write_text(p, "syntax = \"proto2\";\npackage acme;\nimport \"cyc/track_event.proto\";\n"
                     "message Info { optional int32 x = 1; }\n"
                     "message W { extend perfetto.protos.TrackEvent { optional int32 w = 3100; } }\n");
    free(p);
    p = cg_fmt("%s/in/cyc/trace_packet.proto", cg_tmp);
    cg_write_text(p, "syntax = \"proto2\";\npackage perfetto.protos;\n"
                     "import \"cyc/track_event.proto\";\nimport \"cyc/wrapper.proto\";\n"
                     "message TracePacket { optional TrackEvent track_event = 11; optional acme.Info info = 900; }\n");
    free(p);
    char *in = cg_fmt("%s/in", cg_tmp);
    run_plugin(in, "-I.", "cyc/track_event.proto cyc/wrapper.proto cyc/trace_packet.proto", "out", "");
    free(in);
    compiles_strictly();
    includes_no_builtin_header();
    char *h = read_out("cyc/wrapper.tracec.h");
    cr_expect_null(strstr(h, "trace_packet.tracec.h"), "the wrapper's header includes its importer's:\n%s", h);
    cr_expect_null(strstr(h, "_as_acme_W("), "an opening through a parent it cannot include:\n%s", h);
    free(h);
}
