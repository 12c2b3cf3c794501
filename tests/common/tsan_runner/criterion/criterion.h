/*
 * A minimal stand-in for <criterion/criterion.h>, used only by the runtime
 * tests in ThreadSanitizer builds: Criterion's BoxFort arena cannot be
 * mapped under TSan ("Could not initialize inheritable arena", Criterion
 * issue #274).  Same macros, same meaning: every Test runs in its own
 * forked process (before any thread exists), with a 120 s hang guard, and
 * the closing line mimics Criterion's synthesis.
 */
#ifndef TRACEC_TSAN_RUNNER_CRITERION_H
#define TRACEC_TSAN_RUNNER_CRITERION_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mini_test {
    const char *suite, *name;
    void (*fn)(void);
} mini_test;

void mini_register(const char *suite, const char *name, void (*fn)(void));
__attribute__((noreturn)) void mini_fail(const char *file, int line, const char *expr, const char *fmt, ...);
/* Ends the test as skipped (exit 77); the runner then exits 77 if nothing failed. */
__attribute__((noreturn)) void mini_skip(const char *fmt, ...);
#define cr_skip_test(...) mini_skip("" __VA_ARGS__)

#define Test(suite, name, ...)                                                            \
    static void suite##_##name(void);                                                     \
    __attribute__((constructor)) static void mini_reg_##suite##_##name(void) {            \
        mini_register(#suite, #name, suite##_##name);                                     \
    }                                                                                     \
    static void suite##_##name(void)

#define cr_assert(cond, ...)                                                     \
    do {                                                                         \
        if (!(cond)) mini_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);       \
    } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)

#endif
