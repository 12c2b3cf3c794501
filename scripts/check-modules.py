#!/usr/bin/env python3
"""check-modules.py - the module map of docs/architecture.md, checked.

Usage: scripts/check-modules.py [--build BUILD_DIR]

Reads every C source and header of the modules below and checks that
  1. every #include of another module's file is a dependency the map allows
     (the map is a DAG, so no include cycle can span two modules);
  2. with --build: every symbol a file's object uses from another module's
     object (nm) is a dependency the map allows: no call cycle either;
  3. with --build: the installed archives export only the public API: no
     global `tracec_i_*` / `tracec_tp_*` symbol unless a public header's
     inline code or another of our libraries needs it
     (cmake/TracecLocalize.cmake);
Prints one line per violation (file: what it reaches, and why that is wrong)
and exits 1 if there is any.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, folder, the modules it may use (directly or not).  Order: bottom up.
MODULES = [
    ("core", "runtime/core", []),
    ("buffer", "runtime/buffer", ["core"]),
    ("te", "runtime/te", ["core", "buffer", "schema-writers"]),
    ("record", "runtime/record", ["core", "buffer", "te", "schema-writers"]),
    ("schema", "schema", ["core", "pb"]),
    ("grammar", "grammar", ["core", "schema", "pb"]),
    ("decode", "decode", ["core", "schema", "grammar", "pb", "schema-writers"]),
    ("cli", "tools/tracec", ["core", "buffer", "te", "record", "schema", "grammar", "decode", "pb",
                             "schema-writers"]),
    ("generator", "protoc-gen-tracec", ["core", "schema", "pb"]),
]
# Generated code: which module owns it, by include-path prefix.
GENERATED = [
    ("pb", re.compile(r"^google/protobuf/.*\.pb-c\.h$")),
    ("schema-writers", re.compile(r"^(perfetto|google)/.*\.tracec\.h$")),
]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def module_of(rel):
    for name, folder, _ in MODULES:
        if rel == folder or rel.startswith(folder + "/"):
            return name
    return None


def allowed(src, dst):
    if src == dst:
        return True
    deps = {n: set(d) for n, _, d in MODULES}
    return dst in deps.get(src, set())


def sources():
    for name, folder, _ in MODULES:
        top = os.path.join(ROOT, folder)
        for dirpath, _, files in os.walk(top):
            for f in files:
                if f.endswith((".c", ".h", ".l", ".y")):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def header_index():
    """'tracec/x.h' -> the module file that provides it."""
    idx = {}
    for rel in sources():
        if rel.endswith(".h"):
            parts = rel.split("/")
            if "include" in parts:
                i = parts.index("include")
                idx["/".join(parts[i + 1:])] = rel
    return idx


def check_includes(errors):
    idx = header_index()
    for rel in sources():
        src_mod = module_of(rel)
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE_RE.findall(text):
            local = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            if os.path.exists(os.path.join(ROOT, local)):
                target = local
            elif inc in idx:
                target = idx[inc]
            else:
                target = None
            if target is not None:
                dst_mod = module_of(target)
                if dst_mod is None:
                    continue
                if not allowed(src_mod, dst_mod):
                    errors.append(f"{rel}: includes {inc} ({target}, module '{dst_mod}'): "
                                  f"module '{src_mod}' may not depend on '{dst_mod}'")
                continue
            for gen_mod, pat in GENERATED:
                if pat.match(inc) and not allowed(src_mod, gen_mod):
                    errors.append(f"{rel}: includes generated {inc} (owned by '{gen_mod}'): "
                                  f"module '{src_mod}' may not depend on it")


def object_sources(build):
    """Maps each object file of the modules to its source file (relative to ROOT)."""
    out = {}
    for dirpath, _, files in os.walk(build):
        if ".dir" not in dirpath or "CMakeFiles" not in dirpath:
            continue
        for f in files:
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(dirpath, f)
            rel_build = os.path.relpath(path, build)
            # <subdir>/CMakeFiles/<target>.dir/<src path, '..' spelt '__'>.o
            head, _, tail = rel_build.partition("/CMakeFiles/")
            if not tail:
                head, tail = "", rel_build.split("CMakeFiles/", 1)[1]
            src_part = tail.split("/", 1)[1][:-2].replace("__/", "../")
            src = os.path.normpath(os.path.join(head, src_part))
            if module_of(src) is not None and os.path.exists(os.path.join(ROOT, src)):
                out.setdefault(src, path)
    return out


def nm(path):
    r = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(sym)
        elif kind in "TDBRVWC" or kind in "tdbr":
            if kind.isupper():
                defined.add(sym)
    return defined, undefined


def check_calls(errors, build, stats):
    objs = object_sources(build)
    if not objs:
        errors.append(f"{build}: no object files of the modules found (build first)")
        return
    stats["objects"] = len(objs)
    defs, uses = {}, {}
    for src, obj in objs.items():
        d, u = nm(obj)
        uses[src] = u
        for s in d:
            defs.setdefault(s, src)
    for src, used in sorted(uses.items()):
        for sym in sorted(used):
            dst = defs.get(sym)
            if dst is None or dst == src:
                continue
            stats["uses"] = stats.get("uses", 0) + 1
            a, b = module_of(src), module_of(dst)
            if not allowed(a, b):
                errors.append(f"{src}: uses {sym} (defined in {dst}): module '{a}' may not depend on '{b}'")


# The archives users link, and every library of ours that links them.
ARCHIVES = ["runtime/libtracec.a", "schema/libtracec_schema.a", "grammar/libtracec_grammar.a",
            "decode/libtracec_decode.a"]
OUR_LIBS = ARCHIVES + ["protoc-gen-tracec/libtracec_gen.a"]


def nm_lines(args):
    r = subprocess.run(["nm"] + args, capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def check_exports(errors, build, stats):
    public_refs = set()
    for rel in sources():
        if "/include/tracec/" in rel:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                public_refs.update(re.findall(r"tracec_i_[A-Za-z0-9_]+", f.read()))
    needed = {}
    for lib in OUR_LIBS:
        path = os.path.join(build, lib)
        if os.path.exists(path):
            needed[lib] = {l.split()[0] for l in nm_lines(["-u", "-P", path]) if l.strip()}
    for lib in ARCHIVES:
        path = os.path.join(build, lib)
        if not os.path.exists(path):
            if glob.glob(path[:-2] + ".so*"):
                continue  # a shared build: its version script decides the exports (install_tree checks them)
            errors.append(f"{path}: missing (build first)")
            continue
        others = set().union(*(u for k, u in needed.items() if k != lib))
        n = 0
        for line in nm_lines(["-g", "--defined-only", "-P", path]):
            parts = line.split()
            if len(parts) < 2 or parts[0].endswith(":"):
                continue
            sym = parts[0]
            n += 1
            if re.match(r"^tracec_(i|tp)_", sym) and sym not in public_refs and sym not in others:
                errors.append(f"{lib}: exports internal symbol {sym} (nothing outside the archive needs it)")
        stats["exported"] = stats.get("exported", 0) + n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="a build directory: also check symbol use between object files")
    args = ap.parse_args()
    errors = []
    stats = {}
    missing = [folder for _, folder, _ in MODULES if not os.path.isdir(os.path.join(ROOT, folder))]
    for folder in missing:
        errors.append(f"{folder}: module folder missing (docs/architecture.md lists it)")
    check_includes(errors)
    if args.build:
        check_calls(errors, args.build, stats)
        check_exports(errors, args.build, stats)
    for e in errors:
        print(e)
    n = sum(1 for _ in sources())
    calls = (f", {stats.get('uses', 0)} uses of another file's symbol in {stats.get('objects', 0)} objects"
             f", {stats.get('exported', 0)} global symbols in {len(ARCHIVES)} archives" if args.build else "")
    print(f"check-modules: {n} files in {len(MODULES)} modules{calls}, {len(errors)} problem(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
