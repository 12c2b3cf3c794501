/*
 * tp_encode.c - encodes a textproto file with tracec's textproto library (the
 * same path `tracec encode` takes): tp_encode TYPE IN OUT [DESCRIPTOR_SET].
 * Without a descriptor set, the built-in schema is used.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tracec/textproto.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s TYPE IN OUT [DESCRIPTOR_SET]\n", argv[0]);
        return 2;
    }
    tracec_error err;
    tracec_pool *pool = tracec_pool_new();
    tracec_status_t st = argc > 4 ? tracec_pool_add_set_file(pool, argv[4], &err)
                                  : tracec_pool_add_builtin_schema(pool, &err);
    if (st != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    FILE *in = fopen(argv[2], "rb");
    if (in == NULL) {
        perror(argv[2]);
        return 1;
    }
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    fseek(in, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, in) != (size_t)n) {
        fprintf(stderr, "%s: read failed\n", argv[2]);
        return 1;
    }
    fclose(in);
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = argv[2];
    st = tracec_text_encode(pool, argv[1], text, (size_t)n, &opts, &out, &err);
    if (st != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    FILE *o = fopen(argv[3], "wb");
    if (o == NULL || fwrite(out.data, 1, out.size, o) != out.size || fclose(o) != 0) {
        perror(argv[3]);
        return 1;
    }
    tracec_bytes_free(&out);
    free(text);
    tracec_pool_free(pool);
    return 0;
}
