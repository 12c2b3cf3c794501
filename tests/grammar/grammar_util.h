/* grammar_util.h - helpers of the textproto tests: protoc as an oracle, hex dumps. */
#ifndef TP_UTIL_H
#define TP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/textproto.h"

/* Runs protoc `mode` ("--encode=T" / "--decode=T") over the test protos with
 * `in` on stdin; returns its exit status; output (stdout+stderr when failing)
 * in *out (malloc'd, NUL-terminated). */
int tp_protoc(const char *mode, const char *proto, const void *in, size_t in_len, char **out,
              size_t *out_len);
/* "0a 03 ..." of the bytes (static buffer). */
const char *tp_hex(const void *data, size_t len);
/* The pool of the test descriptor set (built once per process). */
tracec_pool *tp_test_pool(void);

#endif
