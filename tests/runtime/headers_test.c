/*
 * headers_test.c - every public header of the runtime (runtime/<module>/
 * include/tracec/, abi/ too) compiles alone, included first in an empty C
 * file (gcc -std=c11 -pedantic -Wall -Wextra -Werror) and in a C++17 file
 * (g++), and leaves none of the scoped branch hints (TRACEC_I_LIKELY,
 * TRACEC_I_UNLIKELY, TRACEC_I_NOINLINE) defined in the including code.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INC                                                                                        \
    "-I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_SOURCE_DIR "/runtime/buffer/include " \
    "-I" TRACEC_SOURCE_DIR "/runtime/te/include -I" TRACEC_SOURCE_DIR "/runtime/record/include "   \
    "-I" TRACEC_SCHEMA_GEN_DIR

static char dir[] = "/tmp/tracec_headers_XXXXXX";

static void setup(void) { cr_assert_not_null(mkdtemp(dir)); }
static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)system(cmd);
}

TestSuite(runtime_headers, .init = setup, .fini = teardown);

/* Compiles `#include "<hdr>"` (+ the leak check) with `cc`; the diagnostics into `out`.  Exit status. */
static int compile_alone(const char *cc, const char *ext, const char *hdr, char *out, size_t cap) {
    char src[512], cmd[2048];
    snprintf(src, sizeof src, "%s/alone.%s", dir, ext);
    FILE *f = fopen(src, "w");
    cr_assert_not_null(f);
    fprintf(f, "#include \"%s\"\n", hdr);
    if (strcmp(hdr, "tracec/abi/hints.h") != 0)
        fputs("#if defined(TRACEC_I_LIKELY) || defined(TRACEC_I_UNLIKELY) || defined(TRACEC_I_NOINLINE)\n"
              "#error a branch hint leaks out of the header\n#endif\n",
              f);
    fputs("int tracec_headers_test_unit;\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "LC_ALL=C %s -Wall -Wextra -Werror %s " INC " -c '%s' -o /dev/null 2>&1", cc,
             strcmp(ext, "c") == 0 ? "-std=c11 -pedantic" : "-std=c++17", src);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    return pclose(p);
}

Test(runtime_headers, each_public_header_compiles_alone_in_c_and_cpp) {
    glob_t g;
    cr_assert_eq(glob(TRACEC_SOURCE_DIR "/runtime/*/include/tracec/*.h", 0, NULL, &g), 0);
    cr_assert_eq(glob(TRACEC_SOURCE_DIR "/runtime/*/include/tracec/abi/*.h", GLOB_APPEND, NULL, &g), 0);
    size_t checked = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *hdr = strstr(g.gl_pathv[i], "/include/") + strlen("/include/");
        if (strcmp(hdr, "tracec/abi/hints_end.h") == 0) continue; /* only undefines */
        static char out[16384];
        int st = compile_alone("gcc", "c", hdr, out, sizeof out);
        cr_expect_eq(st, 0, "%s alone (C11) fails:\n%s", hdr, out);
        st = compile_alone("g++", "cc", hdr, out, sizeof out);
        cr_expect_eq(st, 0, "%s alone (C++17) fails:\n%s", hdr, out);
        checked++;
    }
    globfree(&g);
    cr_expect_geq(checked, 15u, "only %zu headers found", checked);
}
