/*
 * test_compile_errors.c - mistakes in track events are compile-time errors
 * that say what is wrong and what to use instead: an event with no type or
 * two types, a name or key that is not a string literal (in the literal
 * forms, the typed form included), more than 32 parts.  Each snippet is
 * compiled (-fsyntax-only) with the project's C compiler (-std=c11) and
 * C++ compiler (-std=c++17), both -pedantic -Wall -Wextra -Werror; a
 * correct snippet compiles cleanly with both, and with clang and clang++
 * where they are installed.
 */
#define _GNU_SOURCE /* strdup */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const char k_prelude[] =
    "#include \"my_events.tracec.h\"\n"
    "#include \"tracec/track_event.h\"\n"
    "#define CATS(C) C(a, \"a\")\n"
    "TRACEC_TE_DECLARE_CATEGORIES(CATS)\n"
    "TRACEC_TE_DEFINE_CATEGORIES(CATS)\n"
    "int f(const char *name, long v);\n"
    "int f(const char *name, long v) {\n";

static const char *const k_project_cc[2] = {TE_CC " -std=c11 -x c", TE_CXX " -std=c++17 -x c++"};

/* Compiles `body` as C and as C++ (with cc[0], cc[1]); returns, per language, the exit status and the
 * diagnostics (malloc'd). */
static void compile_with(const char *const cc[2], const char *body, int st[2], char *out[2]) {
    char *dir = tt_tmpdir();
    char path[512], cmd[4096];
    cr_assert(dir != NULL);
    snprintf(path, sizeof path, "%s/snippet.src", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fprintf(f, "%s%s\n    (void)name, (void)v;\n    return 0;\n}\n", k_prelude, body);
    fclose(f);
    for (int l = 0; l < 2; l++) {
        tt_buf b = {0};
        snprintf(cmd, sizeof cmd, "LC_ALL=C %s -pedantic -Wall -Wextra -Werror -fsyntax-only %s '%s' 2>&1", cc[l],
                 TE_INCLUDES, path);
        st[l] = tt_capture(cmd, &b);
        out[l] = b.data ? b.data : strdup("");
    }
    tt_tmpdir_remove(dir);
}

static void compile_both(const char *body, int st[2], char *out[2]) {
    compile_with(k_project_cc, body, st, out);
}

/* `body` fails to compile in both languages, and each compiler's diagnostics hold `message`. */
static void expect_error(const char *body, const char *message) {
    int st[2];
    char *out[2];
    compile_both(body, st, out);
    for (int l = 0; l < 2; l++) {
        cr_expect_neq(st[l], 0, "%s compiled:\n%s", l ? "C++" : "C", body);
        cr_expect(strstr(out[l], message) != NULL, "%s: no '%s' among the diagnostics of\n%s\n---\n%s",
                  l ? "C++" : "C", message, body, out[l]);
        free(out[l]);
    }
}

static const char k_good[] =
    "    TRACEC_TE(a, TRACEC_TE_INSTANT(\"x\"), TRACEC_TE_ARG_INT(\"k\", v));\n"
    "    TRACEC_INSTANT_DYN(a, name);\n"
    "    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, \"t\") { my_app_MyEvent_set_custom_counter(&ev, v); }\n"
    "    TRACEC_EVENT_AS_DYN(a, my_app_MyEvent, ev, name) { my_app_MyEvent_set_custom_counter(&ev, v); }\n"
    "    TRACEC_SLICE_END_AS(a, my_app_MyEvent, ev) { my_app_MyEvent_set_custom_counter(&ev, v); }\n";

/* The other compiler family (clang when the project builds with gcc) accepts the same, where it is installed. */
Test(te_compile_errors, a_correct_event_compiles_with_clang_too) {
    static const char *const clang[2] = {"clang -std=c11 -x c", "clang++ -std=c++17 -x c++"};
    tt_buf b = {0};
    int st[2];
    char *out[2];
    int have = tt_capture("command -v clang >/dev/null && command -v clang++ >/dev/null", &b) == 0;
    tt_buf_free(&b);
    if (!have) {
        cr_log_info("clang / clang++ not installed: checked with the project's compilers only");
        return;
    }
    compile_with(clang, k_good, st, out);
    for (int l = 0; l < 2; l++) {
        cr_expect_eq(st[l], 0, "%s:\n%s", l ? "clang++" : "clang", out[l]);
        free(out[l]);
    }
}

Test(te_compile_errors, a_correct_event_compiles_cleanly) {
    int st[2];
    char *out[2];
    compile_both(k_good, st, out);
    for (int l = 0; l < 2; l++) {
        cr_expect_eq(st[l], 0, "%s:\n%s", l ? "C++" : "C", out[l]);
        free(out[l]);
    }
}

Test(te_compile_errors, an_event_without_a_type) {
    expect_error("    TRACEC_TE(a, TRACEC_TE_ARG_INT(\"k\", v));\n", "a track event needs exactly one type");
}

Test(te_compile_errors, an_event_with_two_types) {
    expect_error("    TRACEC_TE(a, TRACEC_TE_INSTANT(\"x\"), TRACEC_TE_SLICE_END());\n",
                 "a track event needs exactly one type");
    expect_error("    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN(\"x\"), TRACEC_TE_INSTANT_DYN(name));\n",
                 "a track event needs exactly one type");
}

Test(te_compile_errors, a_non_literal_name_names_the_dynamic_form) {
    expect_error("    TRACEC_INSTANT(a, name);\n", "for a name known at run time use the _DYN form: TRACEC_INSTANT_DYN");
    expect_error("    TRACEC_TE(a, TRACEC_TE_SLICE_BEGIN(name));\n", "TRACEC_TE_SLICE_BEGIN_DYN");
    expect_error("    char buf[8] = \"x\";\n    TRACEC_SLICE_BEGIN(a, buf);\n", "TRACEC_SLICE_BEGIN_DYN");
    expect_error("    TRACEC_EVENT_AS(a, my_app_MyEvent, ev, name) { my_app_MyEvent_set_custom_counter(&ev, v); }\n",
                 "TRACEC_EVENT_AS_DYN");
}

Test(te_compile_errors, a_non_literal_key_or_counter_name) {
    expect_error("    TRACEC_TE(a, TRACEC_TE_INSTANT(\"x\"), TRACEC_TE_ARG_INT(name, v));\n",
                 "a debug annotation key must be a string literal");
    expect_error("    TRACEC_COUNTER(a, name, v);\n", "a counter name must be a string literal");
}

Test(te_compile_errors, more_than_32_parts) {
    char body[4096] = "    TRACEC_TE(a, TRACEC_TE_INSTANT(\"x\")";
    for (int i = 0; i < 32; i++) strcat(body, ", TRACEC_TE_FLOW(1)");
    strcat(body, ");\n");
    expect_error(body, "a track event has at most 32 parts");
}
