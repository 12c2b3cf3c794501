/*
 * test_fuzz_replay.c - every input of the plugin fuzzer's corpus
 * (fuzz/plugin/corpus) through tc_run, in-process, in the normal test suite:
 * the inputs that once crashed the generator stay fixed (the ASan build of
 * the tests also catches leaks and undefined behaviour).
 *
 *   seed-*  requests protoc sent (fuzz/plugin/make_corpus.sh): they generate,
 *           with no error and a .h and a .c per file to generate;
 *   others  inputs the fuzzer found: any answer is fine, as long as it is a
 *           CodeGeneratorResponse and an error response holds no file.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "test_util.h"

#define CORPUS TRACEC_SOURCE_DIR "/fuzz/plugin/corpus"

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The corpus file names, sorted (NULL-terminated). */
static char **corpus_names(size_t *count) {
    DIR *d = opendir(CORPUS);
    cr_assert_not_null(d, "cannot open %s", CORPUS);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, (n + 2) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_names);
    *count = n;
    return names;
}

/* One corpus input: returns the number of generated files, or -1 for an error response. */
static long replay(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", CORPUS, name);
    tt_buf file = {0};
    cr_assert(tt_read_file(path, &file), "cannot read %s", path);
    const uint8_t *req = (const uint8_t *)file.data;
    size_t size = file.size;
    uint8_t *resp = NULL;
    size_t resp_size = 0;
    /* A crash here is a regression: say which input it was. */
    fprintf(stderr, "replaying %s (%zu bytes)\n", name, size);
    bool ok = tc_run(req, size, &resp, &resp_size);
    tt_buf_free(&file);
    if (!ok) {
        cr_expect_null(resp, "%s: no response expected for an undecodable request", name);
        return -2;
    }
    Google__Protobuf__Compiler__CodeGeneratorResponse *r =
        google__protobuf__compiler__code_generator_response__unpack(NULL, resp_size, resp);
    free(resp);
    cr_assert_not_null(r, "%s: the response does not decode", name);
    long n = r->error ? -1 : (long)r->n_file;
    cr_expect(r->error == NULL || r->n_file == 0, "%s: error response with %zu files: %s", name, r->n_file,
              r->error);
    if (strncmp(name, "seed-", 5) == 0)
        cr_expect_null(r->error, "%s: a request protoc sent fails: %s", name, r->error);
    google__protobuf__compiler__code_generator_response__free_unpacked(r, NULL);
    return n;
}

Test(codegen_fuzz_replay, every_corpus_input) {
    size_t n = 0;
    char **names = corpus_names(&n);
    size_t seeds = 0;
    for (size_t i = 0; i < n; i++) {
        long files = replay(names[i]);
        if (strncmp(names[i], "seed-", 5) == 0) {
            seeds++;
            cr_expect(files >= 2 && files % 2 == 0, "%s: %ld generated files", names[i], files);
        }
        free(names[i]);
    }
    free(names);
    cr_expect_geq(seeds, 10, "only %zu protoc-captured seeds in %s", seeds, CORPUS);
}

/* The empty request (no file to generate) is a valid one with an empty answer. */
Test(codegen_fuzz_replay, empty_request) {
    uint8_t *resp = NULL;
    size_t resp_size = 0;
    cr_assert(tc_run((const uint8_t *)"", 0, &resp, &resp_size));
    Google__Protobuf__Compiler__CodeGeneratorResponse *r =
        google__protobuf__compiler__code_generator_response__unpack(NULL, resp_size, resp);
    cr_assert_not_null(r);
    cr_expect_null(r->error);
    cr_expect_eq(r->n_file, 0);
    google__protobuf__compiler__code_generator_response__free_unpacked(r, NULL);
    free(resp);
}

/* Bytes that are not a CodeGeneratorRequest: false, no response. */
Test(codegen_fuzz_replay, not_a_request) {
    uint8_t *resp = (uint8_t *)"x";
    size_t resp_size = 1;
    cr_expect_not(tc_run((const uint8_t *)"\xff\xff\xff garbage", 11, &resp, &resp_size));
    cr_expect_null(resp);
    cr_expect_eq(resp_size, 0);
}

/*
 * Enum values protoc's text format cannot write (so test_errors.c cannot
 * send them): a request built with the bindings, a field of message p.M in
 * f.proto with type `type` and label `label`; the error of the response.
 */
static char *error_for_field(int type, int label) {
    Google__Protobuf__FieldDescriptorProto field = GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__INIT;
    field.name = "a";
    field.has_number = 1;
    field.number = 1;
    field.has_type = 1;
    field.type = (Google__Protobuf__FieldDescriptorProto__Type)type;
    field.has_label = 1;
    field.label = (Google__Protobuf__FieldDescriptorProto__Label)label;
    Google__Protobuf__FieldDescriptorProto *fields[] = {&field};
    Google__Protobuf__DescriptorProto msg = GOOGLE__PROTOBUF__DESCRIPTOR_PROTO__INIT;
    msg.name = "M";
    msg.n_field = 1;
    msg.field = fields;
    Google__Protobuf__DescriptorProto *msgs[] = {&msg};
    Google__Protobuf__FileDescriptorProto file = GOOGLE__PROTOBUF__FILE_DESCRIPTOR_PROTO__INIT;
    file.name = "f.proto";
    file.package = "p";
    file.n_message_type = 1;
    file.message_type = msgs;
    Google__Protobuf__FileDescriptorProto *files[] = {&file};
    char *gen[] = {"f.proto"};
    Google__Protobuf__Compiler__CodeGeneratorRequest req = GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_REQUEST__INIT;
    req.n_file_to_generate = 1;
    req.file_to_generate = gen;
    req.n_proto_file = 1;
    req.proto_file = files;
    size_t size = google__protobuf__compiler__code_generator_request__get_packed_size(&req);
    uint8_t *bytes = malloc(size);
    google__protobuf__compiler__code_generator_request__pack(&req, bytes);
    uint8_t *resp = NULL;
    size_t resp_size = 0;
    cr_assert(tc_run(bytes, size, &resp, &resp_size));
    free(bytes);
    Google__Protobuf__Compiler__CodeGeneratorResponse *r =
        google__protobuf__compiler__code_generator_response__unpack(NULL, resp_size, resp);
    free(resp);
    cr_assert_not_null(r);
    cr_expect(r->error ? r->n_file == 0 : r->n_file == 2, "%zu files, error %s", r->n_file, r->error);
    char *err = r->error ? strdup(r->error) : strdup("(no error)");
    google__protobuf__compiler__code_generator_response__free_unpacked(r, NULL);
    return err;
}

/* Found by the fuzzer: an unknown type reached the setter templates as a NULL C type. */
Test(codegen_fuzz_replay, field_type_out_of_range) {
    char *err = error_for_field(40, GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_OPTIONAL);
    cr_expect_str_eq(err, "f.proto: field p.M.a: type 40 is not a field type");
    free(err);
    err = error_for_field(0, GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED);
    cr_expect_str_eq(err, "f.proto: field p.M.a: type 0 is not a field type");
    free(err);
}

Test(codegen_fuzz_replay, field_label_out_of_range) {
    char *err = error_for_field(GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_INT32, 9);
    cr_expect_str_eq(err, "f.proto: field p.M.a: label 9 is not a field label");
    free(err);
}

/* The control: the same request with a valid type and label generates. */
Test(codegen_fuzz_replay, field_request_builder_control) {
    char *err = error_for_field(GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_INT32,
                                GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED);
    cr_expect_str_eq(err, "(no error)");
    free(err);
}

/* Appends a varint. */
static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * A request for d.proto whose message `a` nests `depth` messages `a` in it
 * (nested_type, field 3): 3 + up to 4 + 3 bytes a level, built inside out.
 */
static uint8_t *deep_request(size_t depth, size_t *size) {
    size_t cap = depth * 10 + 64;
    uint8_t *buf = malloc(cap), *tmp = malloc(cap);
    size_t n = 3;
    memcpy(buf, "\x0a\x01" "a", 3);
    for (size_t i = 0; i < depth; i++) {
        size_t k = 0;
        memcpy(tmp, "\x0a\x01" "a\x1a", 4);
        k = 4 + put_varint(tmp + 4, n);
        memcpy(tmp + k, buf, n);
        n += k;
        memcpy(buf, tmp, n);
    }
    /* FileDescriptorProto { name: "d.proto" (1) message_type (4) }, then the request. */
    size_t k = 0;
    memcpy(tmp, "\x0a\x07" "d.proto\x22", 10);
    k = 10 + put_varint(tmp + 10, n);
    memcpy(tmp + k, buf, n);
    n += k;
    k = 0;
    memcpy(buf, "\x0a\x07" "d.proto\x7a", 10);
    k = 10 + put_varint(buf + 10, n);
    memcpy(buf + k, tmp, n);
    *size = n + k;
    free(tmp);
    return buf;
}

static char *deep_error(size_t depth) {
    size_t size = 0;
    uint8_t *req = deep_request(depth, &size);
    uint8_t *resp = NULL;
    size_t resp_size = 0;
    cr_assert(tc_run(req, size, &resp, &resp_size));
    free(req);
    Google__Protobuf__Compiler__CodeGeneratorResponse *r =
        google__protobuf__compiler__code_generator_response__unpack(NULL, resp_size, resp);
    free(resp);
    cr_assert_not_null(r);
    char *err = r->error ? strdup(r->error) : strdup("(no error)");
    google__protobuf__compiler__code_generator_response__free_unpacked(r, NULL);
    return err;
}

/*
 * Found beside the fuzzer (its inputs are too short): protobuf-c decodes
 * nesting by recursion, and 20000 nested messages overflowed the stack.
 */
Test(codegen_fuzz_replay, messages_nested_too_deep) {
    char *err = deep_error(20000);
    cr_expect_str_eq(err, "the request nests messages more than 100 levels deep");
    free(err);
    /* request (1) > proto_file (2) > 97 levels of message_type/nested_type: generates. */
    err = deep_error(96);
    cr_expect_str_eq(err, "(no error)");
    free(err);
    err = deep_error(98);
    cr_expect_str_eq(err, "the request nests messages more than 100 levels deep");
    free(err);
}
