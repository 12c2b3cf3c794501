/*
 * test_history_words.c - the public headers, docs/, man/ and README.md
 * state the contract: check_history_words.py finds no project history in
 * them (issue numbers, "the seed's", before/after comparisons, commit
 * hashes) and no link that leaves the repository.  Also: the checker
 * reports each kind of finding with its file:line, in a scratch tree.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static int check(const char *root, tt_buf *out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s/tests/docs/check_history_words.py --root '%s' 2>&1", TRACEC_PYTHON3,
             TRACEC_SOURCE_DIR, root);
    return tt_capture(cmd, out);
}

Test(docs, no_history_words_in_headers_docs_or_readme) {
    tt_buf out = {0};
    int st = check(TRACEC_SOURCE_DIR, &out);
    cr_expect_eq(st, 0, "%s", out.data);
    cr_expect(strstr(out.data, "history words: 0 found in ") != NULL, "%s", out.data);
    tt_buf_free(&out);
}

static void put(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert(tt_write_file(path, text, strlen(text)), "%s", path);
}

/* One finding of each kind, in the places the check covers; and what it must let through. */
Test(docs, the_checker_reports_each_kind_of_history_word) {
    char *root = tt_tmpdir();
    char sub[4096];
    const char *dirs[] = {"docs", "man", "runtime", "runtime/x", "runtime/x/include", "runtime/x/include/tracec",
                          "build-x", "build-x/include"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(sub, sizeof sub, "%s/%s", root, dirs[i]);
        cr_assert_eq(mkdir(sub, 0755), 0, "%s", sub);
    }
    put(root, "README.md",
        "# r\n\nFixed in issue 10.\nSee [the guide](docs/guide.md) and [web](https://example.org/x).\n");
    put(root, "docs/guide.md",
        "# g\n\n| per packet | before | after |\n|---|---|---|\n\nthe seed's example\n"
        "421.6 instructions (5353b04)\n[ref](../../outside.md) and [gone](missing.md)\n"
        "Its seed corpus is replayed.  `[](code::span x)` is code.\n```c\n/* [](not a link) */\n```\n");
    put(root, "man/tool.1", "drops at once (the seed rule)\n");
    put(root, "runtime/x/include/tracec/x.h", "/* Before/after: see ../shared/reference/x.md */\n");
    put(root, "build-x/include/y.h", "/* issue 3: a build folder is not scanned */\n");
    tt_buf out = {0};
    int st = check(root, &out);
    cr_expect_eq(st, 1, "%s", out.data);
    const char *want[] = {
        "README.md:3: an issue number: Fixed in issue 10.",
        "docs/guide.md:3: a before/after table column:",
        "docs/guide.md:6: the seed: the seed's example",
        "docs/guide.md:7: a commit hash:",
        "docs/guide.md:8: a link outside the repository (../../outside.md)",
        "docs/guide.md:8: a link to a missing file (missing.md)",
        "man/tool.1:1: the seed:",
        "runtime/x/include/tracec/x.h:1: a before/after comparison:",
        "runtime/x/include/tracec/x.h:1: a path outside the repository:",
        "history words: 9 found in 4 files",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(out.data, want[i]) != NULL, "missing \"%s\" in:\n%s", want[i], out.data);
    tt_buf_free(&out);
    tt_tmpdir_remove(root);
}
