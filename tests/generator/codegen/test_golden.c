/*
 * test_golden.c - the checked-in generated files (examples/golden,
 * test_extensions/golden, tests/generator/plugin/golden) equal what the generator
 * writes now: scripts/regen-golden.sh regenerates them into a temporary
 * directory and each file is compared with its checked-in copy.  On drift the
 * test prints `diff -u` (checked-in vs regenerated) and the command that
 * updates the golden files.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "generator_util.h"

TestSuite(codegen_golden, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

#define REGEN_HINT "If the change is intended, run:  scripts/regen-golden.sh   and commit the result."

/* Regenerates every golden directory into cg_tmp/out and compares `dir`. */
static void check_golden(const char *dir) {
    int st = -1;
    char *out = cg_run(&st,
                       "PROTOC='%s' TRACEC_PROTOBUF_INCLUDE='%s' '%s/scripts/regen-golden.sh' --plugin '%s' "
                       "--out '%s/out' 2>&1",
                       TRACEC_PROTOC, TRACEC_PROTOBUF_INCLUDE, TRACEC_SOURCE_DIR, CG_PLUGIN, cg_tmp);
    cr_assert_eq(st, 0, "scripts/regen-golden.sh failed (exit %d):\n%s", st, out);
    free(out);

    char *golden = cg_fmt("%s/%s", TRACEC_SOURCE_DIR, dir), *regen = cg_fmt("%s/out/%s", cg_tmp, dir);
    size_t n_golden = 0, n_regen = 0;
    char *golden_files = cg_list_files(golden, NULL, &n_golden);
    char *regen_files = cg_list_files(regen, NULL, &n_regen);
    cr_assert_gt(n_golden, 0, "no checked-in golden files in %s", golden);
    cr_expect_str_eq(regen_files, golden_files,
                     "%s: the generator writes other files than the checked-in ones\n"
                     "checked-in:\n%s\nregenerated:\n%s\n" REGEN_HINT,
                     dir, golden_files, regen_files);

    /* Every checked-in file, byte for byte. */
    char *save = NULL;
    for (char *f = strtok_r(golden_files, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *a = cg_fmt("%s/%s", golden, f), *b = cg_fmt("%s/%s", regen, f);
        size_t la = 0, lb = 0;
        char *ta = cg_read(a, &la), *tb = cg_read(b, &lb);
        cr_expect_not_null(tb, "%s/%s is not generated any more\n" REGEN_HINT, dir, f);
        if (ta && tb && (la != lb || memcmp(ta, tb, la) != 0)) {
            char *d = cg_diff_files(a, b);
            cr_expect_fail("%s/%s drifted from the generator (checked-in vs regenerated):\n%s\n" REGEN_HINT, dir, f,
                           d);
            free(d);
        }
        free(ta);
        free(tb);
        free(a);
        free(b);
    }
    free(golden_files);
    free(regen_files);
    free(golden);
    free(regen);
}

Test(codegen_golden, examples) { check_golden("examples/golden"); }

Test(codegen_golden, test_extensions) { check_golden("test_extensions/golden"); }

Test(codegen_golden, plugin_all_types) { check_golden("tests/generator/plugin/golden"); }
