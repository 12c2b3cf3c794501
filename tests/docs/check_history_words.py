#!/usr/bin/python3
"""check_history_words.py - the public headers, docs/, man/ and README.md state
the contract: no project history in them (history goes in commit messages,
benchmark history in bench/README.md), and no link that leaves the
repository.

    check_history_words.py --root SRC

Scans README.md, docs/*.md, man/*, and every .h under a folder named
`include` (the installed headers; build*/ and .git are skipped).  Reports
each finding as FILE:LINE: what, and exits 1 if there is any:

  - an issue number ("issue 10", "issue #3", "issues 11/15");
  - the seed ("the seed's example", "seed rule"; "seed corpus" is fine);
  - before/after comparisons ("before/after", "before:", "after:", a table
    column headed "before" or "after");
  - a commit hash in parentheses ("(5353b04)");
  - a path outside the repository ("../shared/...", "/work/...") and, in
    Markdown, a relative link whose target is outside the repository or
    does not exist (code spans and fenced blocks are not links).
"""
import argparse
import glob
import os
import re
import sys

WORDS = [
    (re.compile(r"\bissues?\s*#?\s*[0-9]+", re.I), "an issue number"),
    (re.compile(r"\bthe seed\b(?!\s+corpus)|\bseed's\b|\bseed rules?\b", re.I), "the seed"),
    (re.compile(r"\bbefore\s*/\s*after\b|\b(?:before|after)\s*:", re.I), "a before/after comparison"),
    (re.compile(r"^\s*\|(?:.*\|)?\s*(?:before|after)(?:\s*\([^|]*\))?\s*\|", re.I),
     "a before/after table column"),
    (re.compile(r"\((?:commit\s+)?[0-9a-f]{7,40}[,:;)]"), "a commit hash"),
    (re.compile(r"(?:\.\./)+shared/|/work/"), "a path outside the repository"),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def files(root):
    out = [os.path.join(root, "README.md")]
    out += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    out += sorted(glob.glob(os.path.join(root, "man", "*")))
    for d, subdirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        subdirs[:] = [s for s in subdirs if not (rel == "." and (s.startswith("build") or s == ".git"))]
        if "include" in rel.split(os.sep):
            out += [os.path.join(d, n) for n in sorted(names) if n.endswith(".h")]
    return [f for f in out if os.path.isfile(f)]


def check_link(root, path, target):
    """None if `target` (a Markdown link of `path`) stays in the repository and exists."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
        return None  # a URL (http:, mailto:) or an anchor of this page
    target = target.split("#", 1)[0]
    full = os.path.normpath(os.path.join(os.path.dirname(path), target))
    if os.path.commonpath([os.path.abspath(root), os.path.abspath(full)]) != os.path.abspath(root):
        return "a link outside the repository (%s)" % target
    if not os.path.exists(full):
        return "a link to a missing file (%s)" % target
    return None


def check(root):
    found = []
    for path in files(root):
        rel = os.path.relpath(path, root)
        markdown = path.endswith(".md")
        fenced = False
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                for rx, what in WORDS:
                    if rx.search(line):
                        found.append("%s:%d: %s: %s" % (rel, n, what, line.strip()))
                if not markdown:
                    continue
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                    continue
                if fenced:
                    continue
                for target in LINK.findall(CODE_SPAN.sub("", line)):
                    err = check_link(root, path, target)
                    if err:
                        found.append("%s:%d: %s" % (rel, n, err))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    found = check(args.root)
    for line in found:
        print(line)
    print("history words: %d found in %d files" % (len(found), len(files(args.root))))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
