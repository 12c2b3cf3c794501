/*
 * test_tree.c - `cmake --install` gives the documented layout, and a
 * user's program builds against the installed tree exactly as the README
 * says: generate with the installed plugin and schema, compile, link
 * -ltracec, run, and the trace decodes with protoc.  With BUILD_SHARED_LIBS
 * the install holds shared libraries (TRACEC_SHARED_LIBS 1): the same
 * programs build and run against them (found through LD_LIBRARY_PATH, as a
 * user of a prefix outside the loader's path does), and each library exports
 * its version script's names only (check_exports.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "protoc_oracle.h"
#include "test_util.h"
#include "tracec/version.h"

static char g_prefix[256];

static void install(void) {
    char dir[] = "/tmp/tracec_install_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(g_prefix, sizeof g_prefix, "%s", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmake --install %s --prefix %s 2>&1", TRACEC_BINARY_DIR, g_prefix);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_assert_eq(st, 0, "cmake --install failed:\n%s", out);
    free(out);
}

static void cleanup(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_prefix);
    free(oracle_run(cmd, NULL));
}

TestSuite(install, .init = install, .fini = cleanup);

/* A library's installed file: libNAME.a, or libNAME.so (a link to the file named by its SONAME). */
static void lib_name(char *out, size_t n, const char *name) {
    snprintf(out, n, TRACEC_SHARED_LIBS ? "lib/lib%s.so" : "lib/lib%s.a", name);
}

static void expect_file(const char *rel) {
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", g_prefix, rel);
    cr_expect_eq(stat(path, &sb), 0, "missing from the install tree: %s", rel);
}

Test(install, layout) {
    expect_file("bin/protoc-gen-tracec");
    expect_file("include/tracec/writer.h");
    expect_file("include/tracec/trace_file.h");
    expect_file("include/tracec/registry.h");
    char lib[128];
    lib_name(lib, sizeof lib, "tracec");
    expect_file(lib);
    expect_file("include/perfetto/trace/trace_packet.tracec.h");
    expect_file("include/perfetto/trace/track_event/track_event.tracec.h");
    expect_file("share/tracec/protos/perfetto/trace/track_event/track_event.proto");
    expect_file("share/tracec/protos/perfetto/trace/trace.proto");
    expect_file("bin/tracec");
    const char *const libs[] = {"tracec_schema", "tracec_grammar", "tracec_decode"};
    for (size_t i = 0; i < 3; i++) {
        lib_name(lib, sizeof lib, libs[i]);
        expect_file(lib);
    }
    if (TRACEC_SHARED_LIBS) {
        expect_file("lib/libtracec.so." TRACEC_SOVERSION);
        expect_file("lib/libtracec_decode.so." TRACEC_SOVERSION);
    }
    expect_file("include/tracec/types.h");
    expect_file("include/tracec/descpool.h");
    expect_file("include/tracec/protoc.h");
    expect_file("include/tracec/testing.h");
    expect_file("include/tracec/textproto.h");
    expect_file("include/tracec/buffer.h");
    expect_file("bin/tracec");
    expect_file("lib/cmake/tracec/tracecConfig.cmake");
    expect_file("lib/cmake/tracec/tracecConfigVersion.cmake");
    expect_file("lib/cmake/tracec/tracec-targets.cmake");
    expect_file("lib/cmake/tracec/TracecGenerate.cmake");
    expect_file("lib/pkgconfig/tracec.pc");
    expect_file("lib/pkgconfig/tracec_schema.pc");
    expect_file("lib/pkgconfig/tracec_grammar.pc");
    expect_file("lib/pkgconfig/tracec_pb.pc");
    expect_file("lib/pkgconfig/tracec_text.pc");
    expect_file("lib/pkgconfig/tracec_decode.pc");
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/include/.deps", g_prefix);
    cr_expect_neq(stat(path, &sb), 0, "protoc's depfile folder is not installed: %s", path);
}

/* The text tools from the install, linked exactly as the README says. */
Test(install, text_tools_link_against_the_install) {
    static const char prog[] =
        "#include <stdio.h>\n"
        "#include <string.h>\n"
        "#include \"tracec/decode.h\"\n"
        "#include \"tracec/textproto.h\"\n"
        "int main(void) {\n"
        "    tracec_error err;\n"
        "    tracec_pool *pool = tracec_pool_new();\n"
        "    if (tracec_pool_add_builtin_schema(pool, &err) != TRACEC_STATUS_SUCCESS) return 1;\n"
        "    const char *text = \"packet { timestamp: 7 track_event { name: 'x' } }\";\n"
        "    tracec_text_options o = TRACEC_TEXT_OPTIONS_INIT;\n"
        "    tracec_bytes bin = TRACEC_BYTES_INIT, out = TRACEC_BYTES_INIT;\n"
        "    if (tracec_text_encode(pool, \"perfetto.protos.Trace\", text, strlen(text), &o, &bin, &err)) return 2;\n"
        "    if (tracec_decode_text_bytes(pool, bin.data, bin.size, NULL, &out, &err)) return 3;\n"
        "    fwrite(out.data, 1, out.size, stdout);\n"
        "    tracec_bytes_free(&bin); tracec_bytes_free(&out); tracec_pool_free(pool);\n"
        "    return 0;\n"
        "}\n";
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "set -e; P=%s; export LD_LIBRARY_PATH=$P/lib; W=$(mktemp -d); cd $W; cat > t.c <<'EOF'\n%sEOF\n"
             "cc -std=c11 -Wall -Wextra -Werror %s -I $P/include t.c -L $P/lib"
             " -ltracec_decode -ltracec_grammar -ltracec_schema -ltracec -lprotobuf-c -lz -lpthread -o t;"
             "./t; cd /; rm -rf $W",
             g_prefix, prog, TRACEC_SANITIZE_FLAGS);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "building or running against the install failed:\n%s", out);
    cr_expect(strstr(out, "packet {\n  timestamp: 7\n  track_event {\n    name: \"x\"\n  }\n}\n") != NULL,
              "printed:\n%s", out);
    free(out);
}

Test(install, user_program_builds_against_the_install) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "set -e; P=%s; export LD_LIBRARY_PATH=$P/lib; W=$(mktemp -d); cd $W; mkdir gen;"
             "protoc --plugin=protoc-gen-tracec=$P/bin/protoc-gen-tracec --tracec_out=gen"
             " -I $P/share/tracec/protos -I %s/examples my_events.proto;"
             "cc -std=c11 -Wall -Wextra -Werror %s -I $P/include -I gen -I %s/examples %s/examples/example.c"
             " %s/examples/example_trace.c gen/my_events.tracec.c -L $P/lib -ltracec -lpthread -o app;"
             "./app out.pftrace >/dev/null;"
             "protoc --decode=perfetto.protos.Trace -I $P/share/tracec/protos -I %s/examples -I %s/scripts"
             " -I %s decode_demo.proto < out.pftrace 2>/dev/null | grep -F 'my_app.MyEvent.custom_string';"
             "cd /; rm -rf $W",
             g_prefix, TRACEC_SOURCE_DIR, TRACEC_SANITIZE_FLAGS, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR,
             TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_PROTOBUF_INCLUDE);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "building against the install failed:\n%s", out);
    cr_expect(strstr(out, "[my_app.MyEvent.custom_string]: \"hello from C\"") != NULL, "decoded:\n%s", out);
    free(out);
}

/* examples/te_example.c (track events, two threads) against the install: -ltracec and its own
 * generated writers only; the trace decodes with the installed `tracec`. */
Test(install, track_event_example_runs_against_the_install) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "set -e; P=%s; export LD_LIBRARY_PATH=$P/lib; W=$(mktemp -d); cd $W; mkdir gen;"
             "protoc --plugin=protoc-gen-tracec=$P/bin/protoc-gen-tracec --tracec_out=gen"
             " -I $P/share/tracec/protos -I %s/examples my_events.proto;"
             "cc -std=c11 -Wall -Wextra -Werror %s -I $P/include -I gen %s/examples/te_example.c"
             " gen/my_events.tracec.c -L $P/lib -ltracec -lpthread -o te_example;"
             "./te_example te.pftrace >/dev/null; $P/bin/tracec decode te.pftrace;"
             "cd /; rm -rf $W",
             g_prefix, TRACEC_SOURCE_DIR, TRACEC_SANITIZE_FLAGS, TRACEC_SOURCE_DIR);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "te_example against the install failed:\n%s", out);
    cr_expect(strstr(out, "\"read block\"") != NULL, "decoded:\n%s", out);
    cr_expect(strstr(out, "\"bytes read\"") != NULL, "decoded:\n%s", out);
    free(out);
}

/* The installed `tracec --proto` imports perfetto/... from the installed schema folder, with only
 * the user's own folder on -I (examples/my_events.proto imports track_event.proto). */
Test(install, proto_imports_come_from_the_installed_schema) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "set -e; P=%s; export LD_LIBRARY_PATH=$P/lib; W=$(mktemp -d); cd $W; mkdir proto;"
             "cp %s/examples/my_events.proto proto/;"
             "echo 'packet { track_event { [my_app.MyEvent.custom_counter]: 7 } }' > hand.textproto;"
             "$P/bin/tracec encode -I proto --proto my_events.proto hand.textproto out.pftrace;"
             "$P/bin/tracec decode -I proto --proto my_events.proto out.pftrace;"
             "cd /; rm -rf $W",
             g_prefix, TRACEC_SOURCE_DIR);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "tracec --proto from the install failed:\n%s", out);
    cr_expect(strstr(out, "[my_app.MyEvent.custom_counter]: 7") != NULL, "decoded:\n%s", out);
    free(out);
}

#if TRACEC_SHARED_LIBS
/* Each shared library exports exactly the names of its version script, every one public API. */
Test(install, shared_libraries_export_their_version_script_only) {
    static const struct {
        const char *lib, *map, *internal;
    } libs[] = {
        {"tracec", "runtime/libtracec.map", ""},
        {"tracec_schema", "schema/libtracec_schema.map",
         " --internal tracec_i_builtin_schema tracec_i_builtin_schema_size tracec_i_enum_has_number"
         " tracec_i_enum_number_of_n tracec_i_field_by_name_n tracec_i_is_reserved_name"},
        {"tracec_grammar", "grammar/libtracec_grammar.map", ""},
        {"tracec_decode", "decode/libtracec_decode.map", ""},
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s %s/tests/install/check_exports.py %s/lib/lib%s.so %s/%s %s/include%s 2>&1",
                 TRACEC_PYTHON3, TRACEC_SOURCE_DIR, g_prefix, libs[i].lib, TRACEC_SOURCE_DIR, libs[i].map, g_prefix,
                 libs[i].internal);
        int st = -1;
        char *out = oracle_run(cmd, &st);
        cr_expect_eq(st, 0, "lib%s.so:\n%s", libs[i].lib, out);
        free(out);
        /* The SONAME carries the ABI version. */
        snprintf(cmd, sizeof cmd, "objdump -p %s/lib/lib%s.so | grep SONAME", g_prefix, libs[i].lib);
        out = oracle_run(cmd, &st);
        char want[128];
        snprintf(want, sizeof want, "lib%s.so." TRACEC_SOVERSION "\n", libs[i].lib);
        cr_expect(strstr(out, want) != NULL, "lib%s.so: %s", libs[i].lib, out);
        free(out);
    }
}
#endif

/* Runs tests/install/SCRIPT with the prefix, the source tree and the sanitizer
 * flags; expects exit 0 and every string of `want` in what it printed. */
static void run_script(const char *script, const char *const *want) {
    char cmd[2048];
    const char *tp = tt_trace_processor();
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s/lib' TRACEC_TRACE_PROCESSOR='%s' %s/tests/install/%s %s %s '%s' 2>&1",
             g_prefix, tp ? tp : "", TRACEC_SOURCE_DIR, script, g_prefix, TRACEC_SOURCE_DIR, TRACEC_SANITIZE_FLAGS);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "%s failed:\n%s", script, out);
    for (; want && *want; want++) cr_expect(strstr(out, *want) != NULL, "%s: no '%s' in:\n%s", script, *want, out);
    free(out);
}

/* examples/cmake: find_package(tracec 0.2 CONFIG), tracec_generate() and
 * what regenerates (the .proto, an imported .proto, the plugin; nothing else). */
Test(install, cmake_package_and_tracec_generate) {
    static const char *const want[] = {
        "[my_app.MyEvent.custom_string]: \"hello from C\"",
        "after nothing: 0 regeneration(s)",
        "after editing example.c: 0 regeneration(s)",
        "after editing my_events.proto: 1 regeneration(s)",
        "after editing an imported .proto: 1 regeneration(s)",
        "after a new plugin binary: 1 regeneration(s)",
        "Unix Makefiles: dependency tracking as documented",
        "find_package(tracec 0.2): found tracec " TRACEC_VERSION_STRING ":",
        "find_package(tracec 0.3): not found",
        "find_package(tracec 1.0): not found",
        "imported targets: all present",
        NULL};
    run_script("example_cmake.sh", want);
}

/* examples/make: protoc + pkg-config only; pkg-config --static lists every library. */
Test(install, plain_makefile_and_pkg_config) {
    static const char *const want[] = {"[my_app.MyEvent.custom_counter]: -42",
                                       "-ltracec_decode -lm -ltracec_grammar -ltracec_schema -ltracec -pthread "
                                       "-lprotobuf-c -lz",
                                       "pkg-config --static tracec_decode links and runs", NULL};
    run_script("example_make.sh", want);
}

/* examples/criterion: a user's Criterion test with tracec/testing.h. */
Test(install, users_criterion_test_with_textproto_assertions) {
    static const char *const want[] = {"100% tests passed, 0 tests failed out of 1", NULL};
    run_script("example_criterion.sh", want);
}

/* man/tracec.1 and man/protoc-gen-tracec.1 are installed and match --help. */
Test(install, man_pages_match_help) {
    expect_file("share/man/man1/tracec.1");
    expect_file("share/man/man1/protoc-gen-tracec.1");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/tests/install/check_help.py %s 2>&1", TRACEC_PYTHON3, TRACEC_SOURCE_DIR,
             g_prefix);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "the man pages and --help differ:\n%s", out);
    free(out);
}

/* docs/quickstart.md as written: its files built against the install, the
 * trace decoded (and queried by the trace processor) as the page shows. */
Test(install, quickstart_page_works_as_written) {
    static const char *const want[] = {"wrote first.pftrace", "decoded as the page shows", NULL};
    static const char *const want_tp[] = {"wrote first.pftrace", "decoded as the page shows",
                                          "the trace processor shows the page's args", NULL};
    run_script("quickstart.sh", tt_trace_processor() ? want_tp : want);
    if (tt_trace_processor() == NULL) tt_skip_without_trace_processor();
}
