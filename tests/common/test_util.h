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

#endif
