/*
 * skip_hook.c - compiled into every Criterion suite of tracec_add_test: when
 * a test skipped for want of Perfetto's trace processor
 * (tt_skip_without_trace_processor) and none failed, the program exits with
 * TT_SKIP_EXIT_CODE, which ctest reports as a skipped test
 * (SKIP_RETURN_CODE), never as a pass.
 *
 * It also turns LeakSanitizer's exit check off in Criterion's runner
 * process, and only there: the tests run in the runner's forked workers,
 * which keep the check, while the runner itself runs Criterion's code alone
 * and sometimes exits holding a block of its own (48 bytes of a test
 * timeout's bookkeeping).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "test_util.h"

static pid_t runner_pid;

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
    (void)set;
    runner_pid = getpid();
}

/* LeakSanitizer's hook (a weak symbol of its runtime; unused without it). */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return runner_pid != 0 && getpid() == runner_pid; }

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
