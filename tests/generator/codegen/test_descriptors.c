/*
 * test_descriptors.c - the embedded descriptors and the compile-time
 * registry are right, checked by independent implementations.
 *
 * The program under test, descriptor_trace.c, includes only the headers of
 * examples/my_events.proto and test_extensions/test_extensions.proto and links
 * their generated code as static libraries with -ffunction-sections
 * -fdata-sections --gc-sections: the registrations must survive both.  Each
 * test runs it into its own directory; it writes
 *   trace.pftrace  packet 0: my_events.proto's ExtensionDescriptor; packet 1:
 *                  a my_app.MyEvent; packet 2: every test_extensions.proto
 *                  extension;
 *   registry.pb    every FileDescriptorSet of the registry, concatenated;
 *   registry.txt   the registry's file names.
 * Oracles: protoc (--descriptor_set_out, --decode) and python3-protobuf
 * (descriptor_pool_read.py builds DescriptorPools and prints the extension
 * values it reads back by full name; the tests here compare them).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator_util.h"
#include "my_events.tracec.h" /* my_app_MOOD_BUSY */

TestSuite(codegen_descriptors, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

/* ---- the program under test: a trace and the registry -------------------- */

/*
 * Runs descriptor_trace (linked from static libraries with --gc-sections), which
 * writes cg_tmp/trace.pftrace (descriptor packet first), cg_tmp/registry.pb and
 * cg_tmp/registry.txt.
 */
static void write_trace_and_registry(void) {
    int st = -1;
    char *out = cg_run(&st, "'%s' '%s' 2>&1", CG_DESCRIPTOR_TRACE, cg_tmp);
    cr_assert_eq(st, 0, "descriptor_trace failed (exit %d):\n%s", st, out);
    free(out);
}

/* ---- protoc as the oracle ------------------------------------------------- */

#define DESCRIPTOR_PROTO TRACEC_PROTOBUF_INCLUDE, "google/protobuf/descriptor.proto", "google.protobuf.FileDescriptorSet"

/* protoc --decode of a FileDescriptorSet file (malloc'd text). */
static char *decode_set(const char *path) {
    size_t n = 0;
    uint8_t *data = (uint8_t *)cg_read(path, &n);
    cr_assert_not_null(data, "cannot read %s", path);
    int st = -1;
    char *text = oracle_decode(DESCRIPTOR_PROTO, data, n, &st);
    cr_assert_eq(st, 0, "protoc --decode of %s failed:\n%s", path, text);
    free(data);
    return text;
}

/*
 * The first `file { ... }` of a decoded FileDescriptorSet whose name is
 * `name` (malloc'd), or NULL.
 */
static char *file_block(const char *set_text, const char *name) {
    char *want = cg_fmt("file {\n  name: \"%s\"\n", name);
    const char *p = set_text;
    char *block = NULL;
    while ((p = strstr(p, "file {\n")) != NULL) {
        if (p != set_text && p[-1] != '\n') {
            p++;
            continue;
        }
        const char *end = strstr(p, "\n}\n");
        cr_assert_not_null(end, "unterminated file block");
        if (strncmp(p, want, strlen(want)) == 0) {
            block = strndup(p, (size_t)(end - p) + 3);
            break;
        }
        p = end + 3;
    }
    free(want);
    return block;
}

/* The embedded FileDescriptorProto of `name` equals protoc --descriptor_set_out's. */
static void equals_protoc(const char *name) {
    write_trace_and_registry();
    int st = -1;
    char *out = cg_run(&st,
                       "'%s' --descriptor_set_out='%s/ref.pb' -I" TRACEC_SOURCE_DIR "/examples -I" TRACEC_SOURCE_DIR
                       "/test_extensions " CG_PROTO_INCLUDES " my_events.proto test_extensions.proto 2>&1",
                       TRACEC_PROTOC, cg_tmp);
    cr_assert_eq(st, 0, "protoc --descriptor_set_out failed:\n%s", out);
    free(out);
    char *ref_path = cg_fmt("%s/ref.pb", cg_tmp), *reg_path = cg_fmt("%s/registry.pb", cg_tmp);
    char *ref = decode_set(ref_path), *reg = decode_set(reg_path);
    char *want = file_block(ref, name), *ours = file_block(reg, name);
    cr_assert_not_null(want, "protoc's set has no %s:\n%s", name, ref);
    cr_assert_not_null(ours, "the registry has no %s", name);
    if (strcmp(ours, want) != 0) {
        char *d = cg_diff("protoc --descriptor_set_out", want, "embedded", ours);
        cr_expect_fail("embedded %s differs from protoc --descriptor_set_out (protoc --decode of both):\n%s", name, d);
        free(d);
    }
    free(want);
    free(ours);
    free(ref);
    free(reg);
    free(ref_path);
    free(reg_path);
}

/* ---- python3-protobuf as the oracle --------------------------------------- */

/* Runs descriptor_pool_read.py on this test's trace; returns its output (malloc'd). */
static char *pool_read(void) {
    write_trace_and_registry();
    int st = -1;
    char *out = cg_run(&st,
                       "'%s' --include_imports --descriptor_set_out='%s/schema.pb' " CG_PROTO_INCLUDES
                       " perfetto/trace/trace.proto 2>&1",
                       TRACEC_PROTOC, cg_tmp);
    cr_assert_eq(st, 0, "protoc --descriptor_set_out of the schema failed:\n%s", out);
    free(out);
    out = cg_run(&st, "'%s' '%s/tests/generator/codegen/descriptor_pool_read.py' '%s/schema.pb' '%s/registry.pb' "
                      "'%s/trace.pftrace' 2>&1",
                 TRACEC_PYTHON3, TRACEC_SOURCE_DIR, cg_tmp, cg_tmp, cg_tmp);
    cr_assert_eq(st, 0, "descriptor_pool_read.py failed (exit %d):\n%s", st, out);
    return out;
}

/* Expects the line `key<TAB>want` in the helper's output. */
static void expect_value(const char *out, const char *key, const char *want) {
    char *prefix = cg_fmt("%s\t", key);
    const char *line = strstr(out, prefix);
    while (line && line != out && line[-1] != '\n') line = strstr(line + 1, prefix);
    cr_expect_not_null(line, "python3-protobuf did not report %s; its output:\n%s", key, out);
    if (line) {
        const char *v = line + strlen(prefix);
        size_t n = strcspn(v, "\n");
        cr_expect(strlen(want) == n && strncmp(v, want, n) == 0, "%s: python3-protobuf read %.*s, want %s", key,
                  (int)n, v, want);
    }
    free(prefix);
}

/* ---- the tests -------------------------------------------------------------- */

/* How many lines of `text` are exactly `line`. */
static size_t count_lines(const char *text, const char *line) {
    size_t n = 0, len = strlen(line);
    for (const char *p = text; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0'))
        n += strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0');
    return n;
}

/* Static libraries and --gc-sections: both files registered; no file twice. */
Test(codegen_descriptors, registry_holds_my_events_and_test_extensions) {
    write_trace_and_registry();
    char *path = cg_fmt("%s/registry.txt", cg_tmp);
    char *names = cg_read(path, NULL);
    cr_assert_not_null(names, "descriptor_trace wrote no %s", path);
    cr_expect_eq(count_lines(names, "my_events.proto"), 1, "my_events.proto not registered once; the registry:\n%s",
                 names);
    cr_expect_eq(count_lines(names, "test_extensions.proto"), 1,
                 "test_extensions.proto not registered once; the registry:\n%s", names);
    char *copy = strdup(names), *save = NULL;
    for (char *n = strtok_r(copy, "\n", &save); n; n = strtok_r(NULL, "\n", &save))
        cr_expect_eq(count_lines(names, n), 1, "%s is registered more than once:\n%s", n, names);
    free(copy);
    free(names);
    free(path);
}

Test(codegen_descriptors, no_source_info_in_any_embedded_descriptor) {
    write_trace_and_registry();
    char *path = cg_fmt("%s/registry.pb", cg_tmp);
    char *text = decode_set(path);
    char *block = file_block(text, "my_events.proto");
    cr_expect_not_null(block, "the registry set has no my_events.proto:\n%s", text);
    free(block);
    for (const char *p = strstr(text, "source_code_info {"); p; p = strstr(p + 1, "source_code_info {"))
        cr_expect(!(p - text >= 3 && strncmp(p - 3, "\n  ", 3) == 0),
                  "an embedded FileDescriptorProto carries source_code_info:\n%.400s", p - 200 > text ? p - 200 : text);
    free(text);
    free(path);
}

Test(codegen_descriptors, my_events_equals_protoc) { equals_protoc("my_events.proto"); }

Test(codegen_descriptors, test_extensions_equals_protoc) { equals_protoc("test_extensions.proto"); }

Test(codegen_descriptors, descriptor_packet_goes_first) {
    char *out = pool_read();
    expect_value(out, "first.extension_descriptor.file_name", "'my_events.proto'");
    free(out);
}

/* A pool of the schema plus the set embedded in the trace: my_app extensions by full name. */
Test(codegen_descriptors, trace_embedded_descriptor_extensions) {
    char *out = pool_read();
    char *mood = cg_fmt("%d", (int)my_app_MOOD_BUSY);
    expect_value(out, "trace:my_app.Mood.MOOD_BUSY", mood);
    expect_value(out, "trace:my_app.MyEvent.custom_string", "'custom'");
    expect_value(out, "trace:my_app.MyEvent.custom_counter", "-42");
    expect_value(out, "trace:my_app.MyEvent.mood", mood);
    expect_value(out, "trace:my_app.MyEvent.request.url", "'https://example.org/'");
    expect_value(out, "trace:my_app.MyEvent.request.status_code", "404");
    expect_value(out, "trace:my_app.MyEvent.retry_delays_ms", "[10, 20]");
    free(mood);
    free(out);
}

/* A pool of the schema plus the registry: every test_extensions.proto extension by full name. */
Test(codegen_descriptors, registry_descriptor_extensions) {
    char *out = pool_read();
    expect_value(out, "registry:string_extension_for_testing", "'s1'");
    expect_value(out, "registry:int_extension_for_testing", "[7, -8]");
    expect_value(out, "registry:omitted_extension_for_testing", "'o'");
    expect_value(out, "registry:nested_message_extension_for_testing.child_field_for_testing", "'child'");
    expect_value(out, "registry:nested_message_extension_for_testing.debug_annotations", "[('arg1', 5)]");
    expect_value(out, "registry:uint_extension_for_testing", "4000000000");
    expect_value(out, "registry:string_extension_for_testing2", "'s2'");
    expect_value(out, "registry:enum_extension_for_testing", "2");
    expect_value(out, "registry:packed_extension_for_testing", "[-1, 0, 1]");
    expect_value(out, "registry:interned_extension_for_testing", "[(9, 'interned')]");
    expect_value(out, "registry:packet_extension_for_testing", "'packet'");
    free(out);
}
