/*
 * test_subproject.c - tracec as a subproject: examples/cmake configured with
 * -DTRACEC_SOURCE_DIR add_subdirectory()s this source tree (no tests, no
 * examples of its own) and builds only what the example needs, with the same
 * tracec_generate() and tracec:: targets as the installed package.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protoc_oracle.h"
#include "tracec/version.h"

Test(subproject, add_subdirectory_builds_the_cmake_example) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/install/example_subproject.sh %s 2>&1", TRACEC_SOURCE_DIR,
             TRACEC_SOURCE_DIR);
    int st = -1;
    char *out = oracle_run(cmd, &st);
    cr_expect_eq(st, 0, "example_subproject.sh failed:\n%s", out);
    cr_expect(strstr(out, "protoc-gen-tracec " TRACEC_VERSION_STRING "\n") != NULL, "printed:\n%s", out);
    cr_expect(strstr(out, "subproject example wrote ") != NULL, "printed:\n%s", out);
    cr_expect(strstr(out, "subproject: no -Werror") != NULL, "printed:\n%s", out);
    cr_expect(strstr(out, "FetchContent example wrote ") != NULL, "printed:\n%s", out);
    free(out);
}
