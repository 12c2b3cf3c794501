#!/usr/bin/python3
"""doc_samples.py - compile (and run, where it is a program) every ```c block of
README.md and docs/*.md, so the documentation cannot drift from the code.

    doc_samples.py --root SRC --cc CC --cflags "..." --libs "..." [--only FILE]

How a block is built is chosen by an HTML comment on the last non-blank line
before its fence (documented in docs/samples.md):

    <!-- sample: PRELUDE [C] -->    build it inside tests/docs/preludes/PRELUDE.c, after
                                    the optional C (declarations the block assumes)
    <!-- sample: skip REASON -->    do not build it (the reason is required)

A block without a comment is a `program` if it defines main(), a `criterion`
test if it has Test(, a `criterion_fragment` if it uses an assertion macro,
and otherwise a `fragment` (statements inside a function, after any leading
#define lines and declaration macros, which stay at file scope) or, when
that does not compile, `toplevel` code.  A prelude is a C file with the line @SAMPLE@ where the block goes;
its first line says `doc-sample: compile` (compile only) or `doc-sample: run`
(link, run in an empty folder, expect exit 0).  A line that is only `...`
stands for elided code and becomes a comment.  Failures print the block's
file:line and the compiler's messages, whose lines are the document's.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^\s*```c\s*$")
MARK = re.compile(r"^\s*<!--\s*sample:\s*(\S+)\s*(.*?)\s*-->\s*$")


def blocks(path):
    """Yields (line of the fence, marker kind, marker argument, code)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            code = "\n".join(lines[start:j]) + "\n"
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            m = MARK.match(lines[k]) if k >= 0 else None
            yield i + 1, (m.group(1) if m else None), (m.group(2) if m else ""), code
            i = j + 1
        else:
            i += 1


ASSERTION = re.compile(r"\b(tracec_(assert|expect)_\w+|cr_(assert|expect)\w*)\s*\(")
# File-scope lines a statement block may start with: preprocessor lines and
# declaration macros (ALL_CAPS(...) with no semicolon), hoisted out of the function.
HOISTED = re.compile(r"^(#.*|[A-Z][A-Z0-9_]*\(.*\)\s*|\s*|\s*/\*.*\*/\s*|\s*//.*)$")


def default_kinds(code):
    """The preludes tried, in order, for a block without a marker."""
    if re.search(r"\bint\s+main\s*\(", code):
        return ["program"]
    if re.search(r"^\s*(Test|ParameterizedTest|TestSuite)\s*\(", code, re.M):
        return ["criterion"]
    if ASSERTION.search(code):
        return ["criterion_fragment"]
    return ["fragment", "toplevel"]


def hoist(code):
    """Splits the leading file-scope lines (see HOISTED) from the statements."""
    lines = code.split("\n")
    k = 0
    while k < len(lines) and HOISTED.match(lines[k]):
        k += 1
    head = lines[:k]
    while head and not head[-1].strip():
        head.pop()
    return "\n".join(head), k, "\n".join(lines[k:])


def build(job, args, preludes, tmp):
    where, kinds, extra, code = job
    first_error = None
    for kind in kinds:
        err = build_as(where, kind, extra, code, args, preludes, tmp)
        if err is None:
            return where, None
        first_error = first_error or err
    return where, first_error


def build_as(where, kind, extra, code, args, preludes, tmp):
    rel, line = where.rsplit(":", 1)
    code = re.sub(r"^(\s*)\.\.\.\s*$", r"\1/* ... */", code, flags=re.M)
    prelude = preludes[kind]
    mode = prelude.split("\n", 1)[0]
    run = "doc-sample: run" in mode
    if "@SAMPLE@" not in prelude:
        return "prelude %s has no @SAMPLE@ line" % kind
    top = ""
    first = int(line) + 1
    if "@FILE_SCOPE@" in prelude:
        head, k, code = hoist(code)
        if head:
            top = '#line %d "%s"\n%s\n' % (first, rel, head)
        first += k
    src = prelude.replace("@FILE_SCOPE@\n", top, 1)
    src = src.replace("@SAMPLE@\n", '%s\n#line %d "%s"\n%s' % (extra, first, rel, code), 1)
    d = tempfile.mkdtemp(dir=tmp)
    c = os.path.join(d, "sample.c")
    with open(c, "w") as f:
        f.write(src)
    cflags = shlex.split(args.cflags)
    if run:
        cmd = [args.cc] + cflags + [c, "-o", os.path.join(d, "sample")] + shlex.split(args.libs)
    else:
        cmd = [args.cc] + cflags + ["-c", c, "-o", os.path.join(d, "sample.o")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return "does not compile as '%s' (tests/docs/preludes/%s.c):\n%s" % (kind, kind, p.stderr)
    if run:
        env = dict(os.environ)
        env.pop("BXFI_MAP", None)  # a Criterion sample is not a worker of the test running us
        p = subprocess.run([os.path.join(d, "sample")], cwd=d, capture_output=True, text=True, env=env,
                           timeout=60)
        if p.returncode != 0:
            return "exits %d as '%s':\n%s%s" % (p.returncode, kind, p.stdout, p.stderr)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cflags", default="")
    ap.add_argument("--libs", default="")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    pre_dir = os.path.join(args.root, "tests", "docs", "preludes")
    preludes = {os.path.basename(p)[:-2]: open(p, encoding="utf-8").read()
                for p in glob.glob(os.path.join(pre_dir, "*.c"))}
    files = args.only or [os.path.join(args.root, "README.md")] + sorted(
        glob.glob(os.path.join(args.root, "docs", "*.md")))
    jobs, errors, skipped = [], [], 0
    for path in files:
        rel = os.path.relpath(path, args.root)
        for line, kind, arg, code in blocks(path):
            where = "%s:%d" % (rel, line)
            if kind == "skip":
                if not arg:
                    errors.append((where, "'sample: skip' needs a reason"))
                skipped += 1
                continue
            if kind and kind not in preludes:
                errors.append((where, "unknown sample kind '%s' (preludes: %s)" % (kind, ", ".join(sorted(preludes)))))
                continue
            jobs.append((where, [kind] if kind else default_kinds(code), arg, code))
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for where, err in ex.map(lambda j: build(j, args, preludes, tmp), jobs):
                if err:
                    errors.append((where, err))
    for where, err in errors:
        print("%s: %s\n" % (where, err))
    print("doc samples: %d built, %d skipped, %d failed, from %d files" % (
        len(jobs), skipped, len(errors), len(files)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
