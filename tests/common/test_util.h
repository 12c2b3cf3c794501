/*
 * test_util.h - the helpers every test folder shares (library
 * tracec_test_util, linked by tracec_add_test): whole files in and out of
 * memory, temporary directories, running a command with its output captured.
 */
#ifndef TRACEC_TESTS_TEST_UTIL_H
#define TRACEC_TESTS_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tt_buf {
    char *data; /* NUL-terminated, malloc'd */
    size_t size;
    size_t cap; /* bytes allocated at data (0: unknown, the next append reallocates) */
} tt_buf;

void tt_buf_free(tt_buf *b);
/* Appends bytes to a buffer (keeps it NUL-terminated). */
bool tt_buf_append(tt_buf *b, const void *data, size_t n);

/* Everything `fd` gives until end of file, into `out` (replacing what it held). */
bool tt_read_fd(int fd, tt_buf *out);
/* The whole file at `path`, into `out` (replacing what it held). */
bool tt_read_file(const char *path, tt_buf *out);
bool tt_write_file(const char *path, const void *data, size_t size);

/* A fresh temporary directory (removed with its contents by tt_tmpdir_remove). */
char *tt_tmpdir(void);
void tt_tmpdir_remove(char *dir);

/*
 * Runs `cmd` with /bin/sh in `dir`, standard input from `in` (may be NULL),
 * capturing standard output and error (either may be NULL).  Returns the
 * exit status, or -1 if it did not exit normally.
 */
int tt_run(const char *dir, const char *cmd, const void *in, size_t in_len, tt_buf *out, tt_buf *err);

/*
 * Runs `cmd` with /bin/sh (popen), its standard output into `out` (replacing
 * what it held; redirect 2>&1 in `cmd` for both streams).  Returns the exit
 * status, 128 + the signal's number if a signal ended it, -1 if it could not run.
 */
int tt_capture(const char *cmd, tt_buf *out);

/*
 * Perfetto's trace processor, the oracle of the checks that load a trace
 * into it: the CMake cache variable TRACEC_TRACE_PROCESSOR (default
 * ../shared/tools/trace_processor_shell beside the source tree, where it
 * exists), or NULL when that is not an executable file.
 */
const char *tt_trace_processor(void);

/*
 * Skips the calling Criterion test for want of the trace processor.  Such a
 * skip makes the whole ctest a skip (exit code TT_SKIP_EXIT_CODE, the ctest's
 * SKIP_RETURN_CODE; tests/common/skip_hook.c) when nothing failed, so a run
 * without the oracle never reports its checks as passed; scripts/test.sh
 * fails on it under CI=true.
 */
#define TT_NO_TRACE_PROCESSOR "no trace processor"
#define TT_SKIP_EXIT_CODE 77
#define tt_skip_without_trace_processor()                                                                  \
    cr_skip_test(TT_NO_TRACE_PROCESSOR " (CMake cache variable TRACEC_TRACE_PROCESSOR: '%s'): "         \
                 "the checks against Perfetto's trace processor did not run", TRACEC_TRACE_PROCESSOR)

#endif
