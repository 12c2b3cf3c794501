/*
 * decode_util.h - helpers for the tests of decode/ and tools/tracec: protoc
 * as the reference encoder/decoder, pools and extension packets (files and
 * running commands: tests/common/test_util.h).
 */
#ifndef TRACEC_TESTS_DECODE_UTIL_H
#define TRACEC_TESTS_DECODE_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "test_util.h" /* tt_buf, files, tt_run */
#include "tracec/descpool.h"

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

#endif
