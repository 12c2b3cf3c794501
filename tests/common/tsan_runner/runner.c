/* The runner behind tsan_runner/criterion/criterion.h: one fork per test. */
#define _DEFAULT_SOURCE 1
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"
#include "../test_util.h"

static mini_test tests[256];
static int ntests;

void mini_register(const char *suite, const char *name, void (*fn)(void)) {
    if (ntests < 256) tests[ntests++] = (mini_test){suite, name, fn};
}

/* The message after what the caller printed, then the exit: this process runs one test. */
static _Noreturn void finish(int code, const char *fmt, va_list ap) {
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    _exit(code);
}

void mini_fail(const char *file, int line, const char *expr, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "[----] %s:%d: Assertion Failed: %s\n[----]   ", file, line, expr);
    va_start(ap, fmt);
    finish(1, fmt, ap);
}

/* Exit codes of a test process: skipped for want of the trace processor (the whole ctest is then a skip, as
   with Criterion's skip hook), or skipped by design (a local-only test on the record backend: not a skip of
   the ctest). */
enum { SKIP_NO_ORACLE = 77, SKIP_BY_DESIGN = 78 };

void mini_skip(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "[SKIP] ");
    va_start(ap, fmt);
    finish(strncmp(fmt, TT_NO_TRACE_PROCESSOR, strlen(TT_NO_TRACE_PROCESSOR)) == 0 ? SKIP_NO_ORACLE : SKIP_BY_DESIGN,
           fmt, ap);
}

int main(int argc, char **argv) {
    const char *filter = NULL;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--filter=", 9) == 0) filter = argv[i] + 9;
    int pass = 0, fail = 0, crash = 0, run = 0, skip = 0, skipped_by_design = 0;
    for (int i = 0; i < ntests; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        run++;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(120);
            tests[i].fn();
            exit(0); /* runs atexit handlers, as a Criterion test process does */
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            pass++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP_NO_ORACLE) {
            skip++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP_BY_DESIGN) {
            skipped_by_design++;
        } else if (WIFEXITED(st)) {
            fail++;
            fprintf(stderr, "[FAIL] %s::%s (exit %d)\n", tests[i].suite, tests[i].name, WEXITSTATUS(st));
        } else {
            crash++;
            fprintf(stderr, "[FAIL] %s::%s: CRASH (signal %d)\n", tests[i].suite, tests[i].name,
                    WIFSIGNALED(st) ? WTERMSIG(st) : -1);
        }
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Skipped: %d | Passing: %d | Failing: %d | Crashing: %d \n", run,
            skip + skipped_by_design, pass, fail, crash);
    return fail + crash ? 1 : skip ? 77 : 0;
}
