#!/usr/bin/env python3
"""check-exports.py - every function a public runtime header declares is exported.

Usage: scripts/check-exports.py

libtracec.so exports only the names runtime/libtracec.map lists
(cmake/TracecLocalize.cmake).  A function declared in a public header of
runtime/ (tracec/*.h; the abi/ headers are not a user API) but missing from
the map links in a static build and fails in a shared one.  Prints one line
per missing name (and the header that declares it) and exits 1 if any.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A declaration at the start of a line: a return type, then a public name and its parameter list.
DECL = re.compile(r"^(?!static|typedef|#|\s)[A-Za-z_][\w \*]*?\b(tracec_(?!i_)\w+)\s*\(", re.M)


def main():
    declared = {}
    for h in sorted(glob.glob(os.path.join(ROOT, "runtime", "*", "include", "tracec", "*.h"))):
        with open(h) as f:
            for m in DECL.finditer(f.read()):
                declared.setdefault(m.group(1), os.path.relpath(h, ROOT))
    with open(os.path.join(ROOT, "runtime", "libtracec.map")) as f:
        exported = set(re.findall(r"^\s+(tracec_\w+);", f.read(), re.M))
    missing = sorted(n for n in declared if n not in exported)
    for n in missing:
        print("%s: declares %s, which runtime/libtracec.map does not export" % (declared[n], n))
    if not declared:
        print("no public declaration found: the header layout changed, fix this script")
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
