/*
 * fuzz_textproto.c - libFuzzer target of the textproto parser/encoder.
 *
 * The first input byte picks the root type ('a': tp.All, the test schema with
 * every field kind; 'b': tp3.Msg; anything else: perfetto.protos.Trace from
 * the built-in schema); the rest is the text.  Every input must either encode
 * or fail with a positioned message, without crash, leak or hang.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracec/textproto.h"

static tracec_pool *g_pool;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    tracec_error err;
    g_pool = tracec_pool_new();
    if (tracec_pool_add_set_file(g_pool, FUZZ_TP_SET, &err) != TRACEC_STATUS_SUCCESS ||
        tracec_pool_add_builtin_schema(g_pool, &err) != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const char *type = data[0] == 'a' ? "tp.All" : data[0] == 'b' ? "tp3.Msg" : "perfetto.protos.Trace";
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = "fuzz";
    tracec_status_t st =
        tracec_text_encode(g_pool, type, (const char *)data + 1, size - 1, &opts, &out, &err);
    if (st != TRACEC_STATUS_SUCCESS) {
        /* Every error names a position and shows a caret. */
        if (strncmp(err.msg, "fuzz:", 5) != 0 || strchr(err.msg, '^') == NULL) abort();
        if (out.size != 0) abort();
    }
    tracec_bytes_free(&out);
    return 0;
}
