/*
 * fuzz_plugin.c - libFuzzer target of protoc-gen-tracec: the input is a
 * serialized CodeGeneratorRequest, handed to tc_run as protoc would hand it
 * to the plugin on stdin.  A request that does not decode is rejected; any
 * other must get a response (generated files or `error`) that decodes as a
 * CodeGeneratorResponse, without crash, leak, sanitizer report or hang.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *resp = NULL;
    size_t resp_size = 0;
    if (!tc_run(data, size, &resp, &resp_size)) {
        if (resp != NULL) abort();
        return 0;
    }
    Google__Protobuf__Compiler__CodeGeneratorResponse *r =
        google__protobuf__compiler__code_generator_response__unpack(NULL, resp_size, resp);
    if (r == NULL) {
        fprintf(stderr, "fuzz_plugin: the response does not decode\n");
        abort();
    }
    /* An error response holds no file; a good one holds a .h and a .c per file to generate. */
    if (r->error != NULL && r->n_file != 0) {
        fprintf(stderr, "fuzz_plugin: error response with %zu files: %s\n", r->n_file, r->error);
        abort();
    }
    google__protobuf__compiler__code_generator_response__free_unpacked(r, NULL);
    free(resp);
    return 0;
}
