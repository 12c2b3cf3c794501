/*
 * test_generated.c - the generated code compiles warning-free with
 * -Wall -Wextra -Werror -std=c11 -pedantic under gcc and clang and as
 * C++17; the plugin's error paths give clear messages through protoc.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protoc_oracle.h"

#define GEN_INCLUDES                                                                     \
    " -I" TRACEC_BINARY_DIR "/tests/generator/plugin/gen -I" TRACEC_BINARY_DIR "/examples/gen"     \
    " -I" TRACEC_BINARY_DIR "/test_extensions/gen -I" TRACEC_BINARY_DIR "/gen/schema"    \
    " -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR " "

static void compile(const char *compiler, const char *flags, const char *files) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null || exit 77; %s %s %s -fsyntax-only %s 2>&1",
             compiler, compiler, flags, GEN_INCLUDES, files);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    if (st == 77) {
        free(out);
        cr_skip_test("%s is not installed", compiler);
    }
    cr_expect_eq(st, 0, "%s failed:\n%s\n%s", compiler, cmd, out);
    cr_expect_str_eq(out, "", "%s printed diagnostics:\n%s", compiler, out);
    free(out);
}

#define STRICT_C "-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wconversion"
#define GEN_SOURCES                                                                         \
    TRACEC_SOURCE_DIR "/tests/generator/plugin/strict_tu.c " TRACEC_BINARY_DIR                        \
    "/tests/generator/plugin/gen/all_types.tracec.c " TRACEC_BINARY_DIR "/examples/gen/my_events.tracec.c " \
    TRACEC_BINARY_DIR "/test_extensions/gen/test_extensions.tracec.c"

Test(generated, strict_c11_gcc) { compile("gcc", STRICT_C, GEN_SOURCES); }

Test(generated, strict_c11_clang) { compile("clang", STRICT_C, GEN_SOURCES); }

Test(generated, headers_compile_as_cxx17) {
    compile("g++", "-x c++ -std=c++17 -pedantic -Wall -Wextra -Werror",
            TRACEC_SOURCE_DIR "/tests/generator/plugin/strict_tu.c");
}

static char *run_protoc(const char *opts, const char *proto_dir, const char *proto, int *st) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && %s --plugin=protoc-gen-tracec=%s/protoc-gen-tracec/protoc-gen-tracec "
             "--tracec_out=$d %s -I%s -I%s/protos -I%s %s 2>&1; rc=$?; ls $d | wc -l; rm -rf $d; exit $rc",
             TRACEC_PROTOC, TRACEC_BINARY_DIR, opts, proto_dir, TRACEC_SOURCE_DIR,
             TRACEC_PROTOBUF_INCLUDE, proto);
    return oracle_run(cmd, st);
}

Test(plugin_errors, unknown_option_is_a_protoc_error) {
    int st = 0;
    char *out = run_protoc("--tracec_opt=colour=blue", TRACEC_SOURCE_DIR "/tests/generator/plugin/protos",
                           "all_types.proto", &st);
    cr_expect_neq(st, 0);
    cr_expect(strstr(out, "--tracec_out: --tracec_opt: unknown option 'colour'") != NULL,
              "protoc printed:\n%s", out);
    /* Nothing is written on error. */
    size_t n = strlen(out);
    cr_expect(n >= 2 && strcmp(out + n - 2, "0\n") == 0 && (n == 2 || out[n - 3] == '\n'),
              "files were written (last line counts them):\n%s", out);
    free(out);
}

Test(plugin_errors, bad_option_value_is_a_protoc_error) {
    int st = 0;
    char *out = run_protoc("--tracec_opt=descriptors=some", TRACEC_SOURCE_DIR "/tests/generator/plugin/protos",
                           "all_types.proto", &st);
    cr_expect_neq(st, 0);
    cr_expect(strstr(out, "descriptors must be none, file or deps, not 'some'") != NULL,
              "protoc printed:\n%s", out);
    free(out);
}

Test(plugin_errors, garbage_on_stdin_is_refused_cleanly) {
    int st = 0;
    char *out = oracle_run("echo 'not a request' | " TRACEC_BINARY_DIR
                           "/protoc-gen-tracec/protoc-gen-tracec 2>&1",
                           &st);
    cr_expect_eq(st, 1);
    cr_expect(strstr(out, "stdin is not a CodeGeneratorRequest") != NULL, "printed:\n%s", out);
    free(out);
}

Test(plugin_errors, version_and_help) {
    int st = 0;
    char *out = oracle_run(TRACEC_BINARY_DIR "/protoc-gen-tracec/protoc-gen-tracec --version", &st);
    cr_expect_eq(st, 0);
    cr_expect(strncmp(out, "protoc-gen-tracec ", 18) == 0, "printed:\n%s", out);
    free(out);
    out = oracle_run(TRACEC_BINARY_DIR "/protoc-gen-tracec/protoc-gen-tracec --help", &st);
    cr_expect_eq(st, 0);
    cr_expect(strstr(out, "descriptors=none|file|deps") != NULL, "printed:\n%s", out);
    free(out);
}
