/*
 * protoc_oracle.h - run `protoc --decode` on bytes our writers produced, as
 * an independent decoder, for the plugin's tests.
 */
#ifndef TRACEC_TESTS_PROTOC_ORACLE_H
#define TRACEC_TESTS_PROTOC_ORACLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes `size` bytes as message `type` with protoc, given `proto` found
 * under the -I directories in `includes` (colon-separated).  Returns
 * protoc's stdout and stderr (malloc'd) and stores its exit status.
 */
char *oracle_decode(const char *includes, const char *proto, const char *type, const uint8_t *data,
                    size_t size, int *status);

/* Runs a shell command; returns its stdout+stderr (malloc'd) and exit status. */
char *oracle_run(const char *cmd, int *status);

#endif
