#!/usr/bin/env python3
"""The record API's results that must be checked carry warn_unused_result.

Usage: results_checked.py CC SOURCE_DIR CONFIG_DIR (the folder of the generated tracec/config.h)

Compiles one call of each function below with its result ignored and
expects the compiler's unused-result warning naming it, then the same calls
with their results used, which must compile with -Werror.  A function that
loses TRACEC_I_WARN_UNUSED (or one added to the list without it) fails.
"""
import os
import subprocess
import sys
import tempfile

# name -> a call (the variables are declared in PRELUDE)
CALLS = {
    "tracec_provider_register": 'tracec_provider_register("x", &p)',
    "tracec_provider_register_sync": 'tracec_provider_register_sync("x", &b, &p)',
    "tracec_provider_register_with": "tracec_provider_register_with(&reg, &b, &p)",
    "tracec_provider_started": "tracec_provider_started(p)",
    "tracec_provider_wait_started": "tracec_provider_wait_started(p, 1)",
    "tracec_provider_category_enabled": 'tracec_provider_category_enabled(p, "gfx")',
    "tracec_provider_thread_track_uuid": "tracec_provider_thread_track_uuid(p)",
    "tracec_provider_clock_id": "tracec_provider_clock_id(p)",
    "tracec_provider_now_ns": "tracec_provider_now_ns(p)",
    "tracec_provider_get_stats": "tracec_provider_get_stats(p)",
    "tracec_recorder_open": "tracec_recorder_open(&cfg, &r)",
    "tracec_recorder_socket_path": "tracec_recorder_socket_path(r)",
    "tracec_recorder_start": "tracec_recorder_start(r)",
    "tracec_recorder_provider_count": "tracec_recorder_provider_count(r)",
    "tracec_recorder_provider": "tracec_recorder_provider(r, 0, &info)",
    "tracec_recorder_list": "tracec_recorder_list(NULL, stdout)",
    "tracec_recorder_read_records": "tracec_recorder_read_records(NULL, 0, NULL, 1, 1, 1, &n, &bad, NULL)",
    "tracec_recorder_shm_bytes": "tracec_recorder_shm_bytes(&g)",
    "tracec_recorder_check_shm_header": "tracec_recorder_check_shm_header(NULL, &g, &st, NULL)",
    "tracec_recorder_copy_region": "tracec_recorder_copy_region(NULL, 0, &g, 0, false, 0, 0, NULL, 0, &cp)",
    "tracec_recorder_read_region": "tracec_recorder_read_region(NULL, 0, 0, false, NULL, NULL, &res)",
}

PRELUDE = """#include <stdio.h>
#include "tracec/provider.h"
#include "tracec/recorder.h"
void calls(tracec_provider *p, tracec_recorder *r);
void calls(tracec_provider *p, tracec_recorder *r) {
    bool b;
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    tracec_recorder_provider_info info;
    uint64_t n;
    size_t bad;
    tracec_recorder_shm_geometry g = {0, 0, 0, 0, 0};
    tracec_recorder_shm_state st;
    tracec_recorder_region_copy cp;
    tracec_recorder_region_result res;
    (void)b, (void)reg, (void)cfg, (void)info, (void)n, (void)bad, (void)g, (void)st, (void)cp, (void)res;
"""


def compile_(cc, src_dir, config_dir, body, werror):
    includes = [os.path.join(src_dir, "runtime", m, "include") for m in ("core", "buffer", "te", "record")]
    includes.append(config_dir)  # the generated tracec/config.h
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calls.c")
        with open(path, "w") as f:
            f.write(PRELUDE + body + "}\n")
        cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-c", "-o", os.devnull, path]
        cmd += ["-I" + i for i in includes]
        if werror:
            cmd.append("-Werror")
        res = subprocess.run(cmd, capture_output=True, text=True)
        return res.returncode, res.stderr


def main():
    cc, src_dir, config_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    problems = []
    rc, err = compile_(cc, src_dir, config_dir, "".join("    %s;\n" % c for c in CALLS.values()), False)
    if rc != 0:
        problems.append("the calls do not compile:\n" + err)
    # the warned lines (clang does not name the function): call i is on line first + i
    first = PRELUDE.count("\n") + 1
    warned = set()
    for line in err.splitlines():
        parts = line.split(":")
        if "unused-result" in line and len(parts) > 2 and parts[0].endswith("calls.c") and parts[1].isdigit():
            warned.add(int(parts[1]) - first)
    for i, name in enumerate(CALLS):
        if i not in warned:
            problems.append("%s: ignoring its result gives no unused-result warning" % name)
    used = "".join("    if (%s) {}\n" % c if "stats" not in n else "    (void)%s.produced;\n" % c
                   for n, c in CALLS.items())
    rc, err2 = compile_(cc, src_dir, config_dir, used, True)
    if rc != 0:
        problems.append("the calls with their results used do not compile with -Werror:\n" + err2)
    for p in problems:
        print("results_checked: " + p)
    print("results_checked: %d functions, %d problem(s)" % (len(CALLS), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
