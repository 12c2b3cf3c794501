/*
 * test_track_event.c - the track-event layer (tracec/track_event.h) with a
 * wrapper from each layout of tests/layouts: builtin/ (our schema),
 * perfetto_tree/ (Perfetto's paths, an Android-style wrapper that reaches
 * descriptor.proto through field_options.proto) and one_file/ (the one-file
 * perfetto_trace.proto).  Each test generates the layout's tree, compiles its
 * te_trace.c with libtracec's headers and the user's generated headers in
 * one translation unit (strict flags; tracec/track_event.h first, and the
 * user's headers first), links it with the generated code and libtracec,
 * runs it, and asks Perfetto's trace processor for the args of the slices
 * TRACEC_EVENT_AS and TRACEC_SLICE_BEGIN_AS wrote: the wrapper's fields,
 * and no error or data-loss stat.
 *
 * The trace processor is the judge: without it (TRACEC_TRACE_PROCESSOR, or
 * ../shared/tools/trace_processor_shell beside the source tree) the whole
 * executable exits 77, which ctest reports as skipped.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "generator_util.h"
#include "test_util.h"

TestSuite(layouts_te, .init = cg_tmp_setup, .fini = cg_tmp_teardown, .timeout = 180);

#define LAYOUTS TRACEC_SOURCE_DIR "/tests/layouts"
#define CFLAGS "-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes"
/* The user's generated tree first, then libtracec's public and built-in headers. */
#define INC                                                                                                      \
    "-I'%s/out' -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR " -I" TRACEC_SOURCE_DIR             \
    "/runtime/buffer/include -I" TRACEC_SOURCE_DIR "/runtime/te/include -I" CG_SCHEMA_DIR

/* Perfetto's trace processor: the build's TRACEC_TRACE_PROCESSOR, or "" where it has none. */
static const char *trace_processor(void) {
    const char *tp = tt_trace_processor();
    return tp ? tp : "";
}

/* protoc with the plugin over `protos` in LAYOUTS/`dir` into cg_tmp/out. */
static void generate(const char *dir, const char *includes, const char *protos) {
    int st = -1;
    char *log = cg_run(&st, "cd " LAYOUTS "/%s && mkdir -p '%s/out' && " CG_PROTOC_WITH_PLUGIN
                            " --tracec_out='%s/out' %s %s 2>&1",
                       dir, cg_tmp, cg_tmp, includes, protos);
    cr_assert_eq(st, 0, "protoc-gen-tracec failed in %s:\n%s", dir, log);
    free(log);
}

/*
 * Compiles LAYOUTS/`dir`/te_trace.c both ways round (syntax only with the
 * user's headers first), builds it with every generated .c and libtracec,
 * and runs it: cg_tmp/trace.pftrace.
 */
static void build_and_run(const char *dir) {
    int st = -1;
    char *out = cg_run(&st, "gcc " CFLAGS " -DTE_USER_HEADERS_FIRST -fsyntax-only " INC " " LAYOUTS "/%s/te_trace.c 2>&1",
                       cg_tmp, dir);
    cr_expect(st == 0 && out[0] == '\0', "%s/te_trace.c, the user's headers first (exit %d):\n%s", dir, st, out);
    free(out);
    out = cg_run(&st,
                 "gcc " CFLAGS " -pthread " INC " " LAYOUTS "/%s/te_trace.c $(find '%s/out' -name '*.tracec.c') "
                 "'" TRACEC_LIB "' " TRACEC_LINK_FLAGS " -o '%s/te_trace' 2>&1",
                 cg_tmp, dir, cg_tmp, cg_tmp);
    cr_assert(st == 0 && out[0] == '\0', "%s/te_trace.c, tracec/track_event.h first (exit %d):\n%s", dir, st, out);
    free(out);
    out = cg_run(&st, "'%s/te_trace' '%s/trace.pftrace' 2>&1", cg_tmp, cg_tmp);
    cr_assert_eq(st, 0, "%s/te_trace failed (exit %d):\n%s", dir, st, out);
    free(out);
}

/* The trace processor's answer to `sql` on cg_tmp/trace.pftrace (malloc'd CSV). */
static char *tp_query(const char *sql) {
    char *q = cg_fmt("%s/q.sql", cg_tmp);
    cg_write_text(q, sql);
    int st = -1;
    char *out = cg_run(&st, "'%s' '%s/trace.pftrace' -q '%s' 2>/dev/null", trace_processor(), cg_tmp, q);
    cr_assert_eq(st, 0, "the trace processor failed on the trace (exit %d):\n%s", st, out);
    free(q);
    return out;
}

/*
 * The session wrote the descriptors of the user's files `files` (the
 * ExtensionDescriptor file names, sorted, one a line) and
 * none of Perfetto's schema: neither libtracec's copy nor the user's.
 */
static void descriptors_written(const char *files) {
    int st = -1;
    char *out = cg_run(&st,
                       "'" TRACEC_CLI "' decode '%s/trace.pftrace' | "
                       "sed -n 's/^    file_name: \"\\(.*\\)\"$/\\1/p' | LC_ALL=C sort",
                       cg_tmp);
    cr_assert_eq(st, 0, "tracec decode failed");
    cr_expect_str_eq(out, files, "the descriptor packets' files (got, then wanted):\n%s\n%s", out, files);
    free(out);
}

/* The args of the two typed slices are `want`, and no stat is an error or a data loss. */
static void trace_processor_shows(const char *want) {
    char *out = tp_query("select s.name, a.key, a.int_value, a.string_value from slice s join args a "
                         "using(arg_set_id) where s.name like 'te_%' and a.key not like 'debug.%' "
                         "and a.key not in ('legacy_event.passthrough_utid', 'source', 'trace_id', "
                         "'trace_id_is_process_scoped', 'source_scope', 'cat', 'name') order by s.name, a.key;\n");
    cr_expect_str_eq(out, want, "the trace processor's args of the typed slices (got, then wanted):\n%s\n%s", out, want);
    free(out);
    out = tp_query("select name, idx, severity, source, value from stats where value > 0 "
                   "and severity in ('error', 'data_loss');\n");
    cr_expect_str_eq(out, "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n",
                     "the trace processor reports errors or data losses:\n%s", out);
    free(out);
    out = tp_query("select name, dur > 0 as ended from slice where name like 'te_%' order by name;\n");
    cr_expect_str_eq(out, "\"name\",\"ended\"\n\"te_instant\",0\n\"te_slice\",1\n", "the typed slices:\n%s", out);
    free(out);
}

#define TP_HEADER "\"name\",\"key\",\"int_value\",\"string_value\"\n"

Test(layouts_te, builtin) {
    generate("builtin", "-I. -I" TRACEC_SOURCE_DIR "/protos -I" TRACEC_PROTOBUF_INCLUDE, "acme/acme_events.proto");
    build_and_run("builtin");
    descriptors_written("acme/acme_events.proto\n");
    trace_processor_shows(TP_HEADER "\"te_instant\",\"request_id\",\"[NULL]\",\"req-te\"\n"
                                    "\"te_instant\",\"retry_latencies_ms[0]\",5,\"[NULL]\"\n"
                                    "\"te_slice\",\"request.status\",204,\"[NULL]\"\n"
                                    "\"te_slice\",\"request.url\",\"[NULL]\",\"https://te.example/\"\n");
}

Test(layouts_te, perfetto_tree) {
    generate("perfetto_tree", "-I. -I" TRACEC_PROTOBUF_INCLUDE,
             "$(find protos -name '*.proto' | sort)");
    build_and_run("perfetto_tree");
    descriptors_written("protos/perfetto/trace/field_options.proto\nprotos/perfetto/trace/test_extensions.proto\n"
                        "protos/third_party/android/android_track_event.proto\n"
                        "protos/third_party/chromium/chrome_track_event.proto\n");
    trace_processor_shows(TP_HEADER "\"te_instant\",\"frame_number\",42,\"[NULL]\"\n"
                                    "\"te_instant\",\"window_name\",\"[NULL]\",\"StatusBar\"\n"
                                    "\"te_slice\",\"binder.code\",7,\"[NULL]\"\n"
                                    "\"te_slice\",\"binder.interface_name\",\"[NULL]\",\"IExample\"\n");
}

Test(layouts_te, one_file) {
    generate("one_file", "-I.", "protos/perfetto/trace/perfetto_trace.proto acme_data.proto acme_extension.proto");
    build_and_run("one_file");
    descriptors_written("acme_data.proto\nacme_extension.proto\n");
    trace_processor_shows(TP_HEADER "\"te_instant\",\"request_id\",\"[NULL]\",\"req-te\"\n"
                                    "\"te_instant\",\"retry_latencies_ms[0]\",50,\"[NULL]\"\n"
                                    "\"te_slice\",\"request_metadata.endpoint\",\"[NULL]\",\"/v1/te\"\n"
                                    "\"te_slice\",\"request_metadata.priority\",9,\"[NULL]\"\n");
}

/* Without the trace processor nothing here can be judged: exit 77, a ctest skip (SKIP_RETURN_CODE). */
int main(int argc, char *argv[]) {
    if (tt_trace_processor() == NULL) {
        fprintf(stderr, "layouts_track_event: skipped: the build found no Perfetto trace processor (TRACEC_TRACE_PROCESSOR)\n");
        return 77;
    }
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}
