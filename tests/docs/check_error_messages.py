#!/usr/bin/python3
"""check_error_messages.py ROOT TRACEC PLUGIN PROTOC - the error messages
docs/limits.md quotes are what the commands print today: each case below is
run in a scratch folder and its output must appear verbatim in the page."""
import os
import subprocess
import sys
import tempfile

root, tracec, plugin, protoc = sys.argv[1:5]
doc = open(os.path.join(root, "docs", "limits.md"), encoding="utf-8").read()
bad = []
with tempfile.TemporaryDirectory() as d:
    files = {
        "bad.textproto": 'packet {\n  timestamp: 10\n  track_event { nme: "x" }\n}\n',
        "neg.textproto": "packet {\n  timestamp: -1\n}\n",
        "unterminated.textproto": "packet { timestamp: 1 ",
        "long.textproto": 'packet { timestamp: 1 track_event { name: "%s" } }\n' % ("x" * 60),
    }
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    subprocess.run([tracec, "encode", "long.textproto", "long.pftrace"], cwd=d, check=True)
    with open(os.path.join(d, "long.pftrace"), "rb") as f:
        data = f.read()
    with open(os.path.join(d, "cut.pftrace"), "wb") as f:
        f.write(data[:40])
    gen = os.path.join(d, "gen")
    os.mkdir(gen)
    pl = ["--plugin=protoc-gen-tracec=" + plugin, "--tracec_out=" + gen, "-I", os.path.join(root, "examples"),
          "-I", os.path.join(root, "protos"), "my_events.proto"]
    cases = [
        ([tracec, "encode", "bad.textproto", "o"], 3),
        ([tracec, "encode", "neg.textproto", "o"], 3),
        ([tracec, "encode", "unterminated.textproto", "o"], 3),
        ([tracec, "decode", "cut.pftrace"], 3),
        ([protoc, "--tracec_opt=include_style=curly"] + pl, 1),
        ([protoc, "--tracec_opt=colour=red"] + pl, 1),
    ]
    for argv, status in cases:
        p = subprocess.run(argv, cwd=d, capture_output=True, text=True)
        what = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv[:3]))
        if p.returncode != status:
            bad.append("%s: exit %d, expected %d" % (what, p.returncode, status))
        if not p.stderr or p.stderr not in doc:
            bad.append("%s prints, and docs/limits.md does not quote:\n%s" % (what, p.stderr))
for b in bad:
    print(b)
print("error messages: %d differ" % len(bad))
sys.exit(1 if bad else 0)
