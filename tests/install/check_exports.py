#!/usr/bin/env python3
"""check_exports.py LIB.so MAP HEADER_DIR [--internal NAME ...]

The names a shared library exports (nm -D --defined-only) are exactly the
names of its linker version script MAP (exact names and wildcard patterns of
its global: section), and every one of ours is public API: a tracec_ name
appears in the public headers of HEADER_DIR (the install's include/), a
tracec_i_ name too (an inline function of a header calls it) unless it is
one of the --internal names another tracec library calls.  Prints the
exported names; exit 1 with the differences otherwise.
"""
import fnmatch
import os
import re
import subprocess
import sys


def map_names(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    m = re.search(r"global:(.*?)local:", text, re.S)
    if not m:
        sys.exit(f"{path}: no global: ... local: section")
    names = [n.strip() for n in m.group(1).split(";") if n.strip()]
    return [n for n in names if not any(c in n for c in "*?[")], [n for n in names if any(c in n for c in "*?[")]


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":  # version nodes
            continue
        names.add(parts[2].split("@")[0])
    return names


def header_text(d):
    chunks = []
    for dirpath, _, files in os.walk(d):
        for f in files:
            if f.endswith(".h"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    chunks.append(fh.read())
    return "\n".join(chunks)


def main():
    args = sys.argv[1:]
    internal = []
    if "--internal" in args:
        i = args.index("--internal")
        internal = args[i + 1:]
        args = args[:i]
    lib, mapfile, include = args
    exact, patterns = map_names(mapfile)
    got = exported(lib)
    errors = []
    for n in sorted(set(exact) - got):
        errors.append(f"in {os.path.basename(mapfile)} but not exported: {n}")
    for n in sorted(got):
        if n not in exact and not any(fnmatch.fnmatchcase(n, p) for p in patterns):
            errors.append(f"exported but not in {os.path.basename(mapfile)}: {n}")
    for p in patterns:
        if not any(fnmatch.fnmatchcase(n, p) for n in got):
            errors.append(f"pattern {p} of {os.path.basename(mapfile)} matches nothing exported")
    headers = header_text(include)
    ids = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", headers))
    for n in sorted(got):
        if not n.startswith("tracec_"):
            continue
        if n not in ids and n not in internal:
            errors.append(f"exported but in no public header: {n}")
    print(f"{os.path.basename(lib)}: {len(got)} exported names")
    for n in sorted(got):
        print("  " + n)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
