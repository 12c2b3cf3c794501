/*
 * test_samples.c - every ```c block of README.md and docs/ compiles,
 * and runs where it is a program (doc_samples.py; docs/samples.md), so the
 * documentation cannot drift from the code.  Also: doc_samples.py catches a
 * sample that no longer compiles (a broken block in a scratch file), and the
 * error messages docs/limits.md quotes are the real ones.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protoc_oracle.h"

static char *run_samples(const char *only, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s/tests/docs/doc_samples.py --root %s --cc '%s' --cflags '%s' --libs '%s'%s%s 2>&1",
             TRACEC_PYTHON3, TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_DOC_CC, TRACEC_DOC_CFLAGS,
             TRACEC_DOC_LIBS, only ? " --only " : "", only ? only : "");
    return oracle_run(cmd, status);
}

Test(docs, every_c_sample_compiles_and_runs, .timeout = 240) {
    int st = -1;
    char *out = run_samples(NULL, &st);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, " 0 failed, from ") != NULL, "no summary line");
    free(out);
}

/* The checker itself: a sample that calls a setter that does not exist, a
 * program that exits 1, and a skip without a reason are all reported with
 * their file:line. */
Test(docs, a_drifted_sample_is_reported) {
    char path[] = "/tmp/tracec_doc_XXXXXX.md";
    int fd = mkstemps(path, 3);
    cr_assert(fd >= 0);
    static const char md[] =
        "# t\n\n```c\nmy_app_MyEvent_set_no_such_field(&ev, 1);\n```\n\n"
        "```c\nint main(void) { return 1; }\n```\n\n"
        "<!-- sample: skip -->\n```c\nnot C\n```\n\n"
        "<!-- sample: fragment -->\n```c\nmy_app_MyEvent_set_custom_counter(&ev, 1);\n```\n";
    cr_assert_eq(write(fd, md, sizeof md - 1), (ssize_t)(sizeof md - 1));
    close(fd);
    int st = -1;
    char *out = run_samples(path, &st);
    unlink(path);
    cr_expect_neq(st, 0, "%s", out);
    cr_expect(strstr(out, ":3: does not compile as 'fragment'") != NULL, "%s", out);
    cr_expect(strstr(out, "my_app_MyEvent_set_no_such_field") != NULL, "%s", out);
    cr_expect(strstr(out, ":7: exits 1 as 'program'") != NULL, "%s", out);
    cr_expect(strstr(out, ":12: 'sample: skip' needs a reason") != NULL, "%s", out);
    cr_expect(strstr(out, "doc samples: 3 built, 1 skipped, 3 failed") != NULL, "%s", out);
    free(out);
}

/* The error messages docs/limits.md quotes are the ones the commands print. */
Test(docs, error_messages_quoted_in_limits_md) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s/tests/docs/check_error_messages.py %s %s %s %s 2>&1", TRACEC_PYTHON3,
             TRACEC_SOURCE_DIR, TRACEC_SOURCE_DIR, TRACEC_DOC_TRACEC, TRACEC_DOC_PLUGIN, TRACEC_PROTOC);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "%s", out);
    free(out);
}
