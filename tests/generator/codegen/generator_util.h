/*
 * generator_util.h - helpers shared by the codegen Criterion suites: a temporary
 * directory per test, files, shell commands (through oracle_run), diffs and
 * hex dumps for failure messages.
 *
 * Every suite uses `TestSuite(name, .init = cg_tmp_setup, .fini = cg_tmp_teardown)`:
 * each test (its own process) gets a fresh `cg_tmp`, removed afterwards even
 * when an assertion aborts the test.
 */
#ifndef TRACEC_TESTS_CG_UTIL_H
#define TRACEC_TESTS_CG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "protoc_oracle.h"

/* -I flags for the Perfetto schema and protobuf's own .proto files. */
#define CG_PROTO_INCLUDES "-I" TRACEC_SOURCE_DIR "/protos -I" TRACEC_PROTOBUF_INCLUDE

/* protoc with protoc-gen-tracec as its tracec plugin. */
#define CG_PROTOC_WITH_PLUGIN TRACEC_PROTOC " --plugin=protoc-gen-tracec=" CG_PLUGIN

/* This test's temporary directory (empty string outside a test). */
extern char cg_tmp[4096];
void cg_tmp_setup(void);
void cg_tmp_teardown(void);

/* cr_skip_test, removing cg_tmp first (a skipped test does not run the suite's .fini). */
#define cg_skip_test(...)         \
    do {                          \
        cg_tmp_teardown();        \
        cr_skip_test(__VA_ARGS__); \
    } while (0)

/* printf into a malloc'd string. */
char *cg_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Formats and runs a shell command (sh -c); returns its stdout (malloc'd, never
 * NULL) and stores its exit status.  Add 2>&1 to the command for stderr.
 */
char *cg_run(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The whole file (malloc'd, NUL-terminated) and its size, or NULL if unreadable. */
char *cg_read(const char *path, size_t *len);
/* Writes `len` bytes / a string; creates parent directories. Aborts the test on error. */
void cg_write(const char *path, const void *data, size_t len);
void cg_write_text(const char *path, const char *text);

/* `diff -u` of two texts, labelled (malloc'd; "" when equal). */
char *cg_diff(const char *label_a, const char *a, const char *label_b, const char *b);
/* `diff -u` of two files. */
char *cg_diff_files(const char *a, const char *b);

/* Space-separated hex of at most `limit` bytes, "..." when cut (malloc'd). */
char *cg_hex(const uint8_t *p, size_t n, size_t limit);

/* 1 when `prog` is on PATH. */
int cg_have(const char *prog);

/*
 * The regular files under `dir`, as paths relative to it, sorted, each
 * followed by '\n' (malloc'd; "" for an empty or missing directory); their
 * count in *count.  `suffix` (may be NULL) filters by name ending.
 */
char *cg_list_files(const char *dir, const char *suffix, size_t *count);

#endif
