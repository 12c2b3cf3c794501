/*
 * fuzz_replay.c - runs a fuzz target over files, without libFuzzer: the
 * seed corpus (and any crash reproducer added to it) is replayed by ctest in
 * every build, sanitizer builds included.  Linked with the target's source
 * as decode_fuzz_replay and record_fuzz_replay.
 *
 *   <module>_fuzz_replay FILE|DIR ...
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    tt_buf file = {0};
    if (!tt_read_file(path, &file)) {
        perror(path);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)file.data, file.size);
    tt_buf_free(&file);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            bad += replay_file(argv[i]);
            files++;
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            bad += replay_file(path);
            files++;
        }
        closedir(d);
    }
    printf("replayed %d input(s)\n", files);
    return bad || files == 0;
}
