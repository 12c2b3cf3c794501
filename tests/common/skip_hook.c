/*
 * skip_hook.c - compiled into every Criterion suite of tracec_add_test: when
 * a test skipped for want of Perfetto's trace processor
 * (tt_skip_without_trace_processor) and none failed, the program exits with
 * TT_SKIP_EXIT_CODE, which ctest reports as a skipped test
 * (SKIP_RETURN_CODE), never as a pass.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
    if (stats->tests_failed != 0 || stats->tests_crashed != 0 || stats->errors != 0) return;
    for (struct criterion_suite_stats *s = stats->suites; s; s = s->next) {
        for (struct criterion_test_stats *t = s->tests; t; t = t->next) {
            if (t->test_status == CR_STATUS_SKIPPED && t->message &&
                strncmp(t->message, TT_NO_TRACE_PROCESSOR, strlen(TT_NO_TRACE_PROCESSOR)) == 0) {
                fprintf(stderr, "[SKIP] %s::%s: %s\n", s->suite->name, t->test->name, t->message);
                fflush(NULL);
                exit(TT_SKIP_EXIT_CODE);
            }
        }
    }
}
