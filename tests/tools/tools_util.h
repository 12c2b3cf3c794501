/*
 * tools_util.h - helpers for the tests of tools/tracec: files, running
 * commands, and protoc as the reference encoder/decoder.
 */
#ifndef TRACEC_TESTS_TOOLS_UTIL_H
#define TRACEC_TESTS_TOOLS_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "tracec/descpool.h"

typedef struct tt_buf {
    char *data; /* NUL-terminated, malloc'd */
    size_t size;
} tt_buf;

void tt_buf_free(tt_buf *b);
bool tt_read_file(const char *path, tt_buf *out);
bool tt_write_file(const char *path, const void *data, size_t size);

/* A fresh temporary directory (removed by tt_tmpdir_remove). */
char *tt_tmpdir(void);
void tt_tmpdir_remove(char *dir);

/*
 * Runs `cmd` with /bin/sh in `dir`, standard input from `in` (may be NULL),
 * capturing standard output and error (either may be NULL).  Returns the
 * exit status, or -1 if it did not exit normally.
 */
int tt_run(const char *dir, const char *cmd, const void *in, size_t in_len, tt_buf *out, tt_buf *err);

/* protoc flags that know our schema and test_extensions.proto (and `extra`, may be NULL). */
const char *tt_protoc_args(const char *extra);

/* protoc --encode / --decode of `type` (NULL: perfetto.protos.Trace), with tt_protoc_args(extra). */
bool tt_protoc_encode(const char *dir, const char *extra, const char *type, const char *text, tt_buf *bin);
bool tt_protoc_decode(const char *dir, const char *extra, const char *type, const void *bin, size_t n,
                      tt_buf *text);

/* A pool with the built-in schema only (no registry, no extensions). */
tracec_pool *tt_builtin_pool(void);

/* A descriptor set of test_extensions.proto alone (no imports), written by protoc into `dir`. */
bool tt_extensions_set(const char *dir, tt_buf *set);

/* Appends a Trace packet carrying `set` as ExtensionDescriptor.extension_set (or _gzip). */
bool tt_append_extension_packet(tt_buf *trace, const void *set, size_t n, bool gzip);



/* Appends bytes to a buffer (keeps it NUL-terminated). */
bool tt_buf_append(tt_buf *b, const void *data, size_t n);
#endif
