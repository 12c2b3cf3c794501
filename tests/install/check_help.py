#!/usr/bin/python3
"""check_help.py PREFIX - the installed man pages match the commands' --help.

Every option token (-x, --long, and the plugin's key= options) printed by
`tracec --help`, `tracec COMMAND --help` and `protoc-gen-tracec --help` is in
the man page, and the man page names no option the help does not; every
tracec command has its entry; the versions agree.  Prints what differs and
exits 1.
"""
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w\-./=])--?[A-Za-z][\w-]*")
KEY = re.compile(r"^\s*\.?B[IR]?\s+([a-z_]+)=|^  ([a-z_]+)=", re.M)


def run(*argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr))
    return p.stdout


def man_text(path):
    lines = []
    for line in open(path, encoding="utf-8"):
        if line.startswith('.\\"'):
            continue
        lines.append(line)
    text = "".join(lines)
    # EXAMPLES show whole command lines (protoc's -I ...), not this command's options.
    text = re.sub(r"^\.SH EXAMPLES\n.*?(?=^\.SH )", "", text, flags=re.M | re.S)
    text = re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-").replace("\\e", "\\")
    return text


def compare(what, helps, man):
    bad = []
    missing = sorted(helps - man)
    extra = sorted(man - helps)
    if missing:
        bad.append("%s: in --help but not in the man page: %s" % (what, " ".join(missing)))
    if extra:
        bad.append("%s: in the man page but not in --help: %s" % (what, " ".join(extra)))
    return bad


def main():
    prefix = sys.argv[1]
    bad = []
    tracec = prefix + "/bin/tracec"
    plugin = prefix + "/bin/protoc-gen-tracec"
    main_help = run(tracec, "--help")
    commands = re.findall(r"^  ([a-z]+)   ", main_help, re.M)
    if not commands:
        bad.append("tracec --help lists no commands")
    helps = main_help + "".join(run(tracec, c, "--help") for c in commands)
    man = man_text(prefix + "/share/man/man1/tracec.1")
    bad += compare("tracec options", set(OPT.findall(helps)), set(OPT.findall(man)))
    for c in commands:
        if not re.search(r"^\.TP\n\.B %s\n" % c, man, re.M):
            bad.append("tracec.1 has no entry for the command '%s'" % c)
    version = run(tracec, "--version").split()[-1]
    if '"tracec %s"' % version not in man:
        bad.append("tracec.1 is not for version %s" % version)

    phelp = run(plugin, "--help")
    pman = man_text(prefix + "/share/man/man1/protoc-gen-tracec.1")
    bad += compare("protoc-gen-tracec options", set(OPT.findall(phelp)) | {"--help", "--version"},
                   set(OPT.findall(pman)))
    keys = lambda t: {a or b for a, b in KEY.findall(t)}
    bad += compare("protoc-gen-tracec --tracec_opt keys", keys(phelp), keys(pman))
    pversion = run(plugin, "--version").split()[-1]
    if '"tracec %s"' % pversion not in pman:
        bad.append("protoc-gen-tracec.1 is not for version %s" % pversion)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
