#!/usr/bin/env python3
"""codegen_errors: every error path of protoc-gen-tracec, and the message the
user sees for it.

    errors.py --protoc PROTOC --plugin PLUGIN --src SOURCE_DIR --gpb INCLUDE

Errors a .proto file or an option can cause are checked through protoc (what
it prints, and that it exits non-zero without writing files).  Errors protoc
itself never lets through (unknown types, a file_to_generate missing from the
request, editions) are checked with hand-built CodeGeneratorRequests sent to
the plugin directly.  The plugin's own command line is checked last.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2

PROTO_CASES = [
    # name, {file: text}, files to generate, --tracec_opt, expected substrings of stderr
    ("unknown option", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"], "bogus=1",
     ["--tracec_out: --tracec_opt: unknown option 'bogus' (known: include_style, include_prefix, "
      "guard_prefix, name_prefix, descriptors)"]),
    ("option without a value", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"], "descriptors",
     ["descriptors must be none, file or deps, not ''"]),
    ("bad include_style", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"], "include_style=curly",
     ["--tracec_opt: include_style must be quote or angle, not 'curly'"]),
    ("bad descriptors", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"], "descriptors=all",
     ["--tracec_opt: descriptors must be none, file or deps, not 'all'"]),
    ("bad name_prefix", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"], "name_prefix=9x",
     ["--tracec_opt: name_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*), not '9x'"]),
    ("one bad option among good ones", {"a.proto": 'syntax = "proto2"; message A {}'}, ["a.proto"],
     "include_style=angle,guard_prefix=X_,nope",
     ["unknown option 'nope'"]),
    ("two messages with one C name",
     {"c.proto": 'syntax = "proto2"; package p; message A { message B {} } message A_B {}'}, ["c.proto"], "",
     ["c.proto: the C name p_A_B of message p.A_B is also the C name of message p.A.B; rename one of "
      "them, or generate with --tracec_opt=name_prefix=..."]),
    ("an enum value and a message with one C name",
     {"e.proto": 'syntax = "proto2"; package p; enum E { A_B = 0; } message A { message B {} }'}, ["e.proto"],
     "", ["e.proto: the C name p_A_B of message p.A.B is also the C name of enum value p.E.A_B"]),
    ("a type in another file with the same C name",
     {"x.proto": 'syntax = "proto2"; package p.q; message R {}',
      "y.proto": 'syntax = "proto2"; package p; import "x.proto"; message q_R { optional q.R r = 1; }'},
     ["y.proto"], "", ["y.proto: the C name p_q_R of message p.q_R is also the C name of message p.q.R"]),
    ("two files with one descriptor symbol",
     {"a-b.proto": 'syntax = "proto2"; package one; message M {}',
      "a_b.proto": 'syntax = "proto2"; package two; message M {}'}, ["a-b.proto", "a_b.proto"], "",
     ["a_b.proto: the C name tracec_fd_a_b_proto of the descriptor of a_b.proto is also the C name of "
      "the descriptor of a-b.proto"]),
]


def fdp(name, package=None, syntax=None):
    f = descriptor_pb2.FileDescriptorProto(name=name)
    if package:
        f.package = package
    if syntax:
        f.syntax = syntax
    return f


def crafted_cases():
    cases = []
    # A file to generate that the request does not carry.
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["missing.proto"])
    req.proto_file.add().CopyFrom(fdp("present.proto"))
    cases.append(("file_to_generate not in proto_file", req, "missing.proto: not in the request's proto_file list"))
    # Editions (or any syntax but proto2/proto3).
    f = fdp("ed.proto", "p", "editions")
    f.message_type.add(name="M")
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["ed.proto"], proto_file=[f])
    cases.append(("unsupported syntax", req,
                  'ed.proto: syntax "editions" is not supported: protoc-gen-tracec generates proto2 and proto3 files'))
    # A field whose message type is nowhere in the request.
    f = fdp("t.proto", "p", "proto2")
    m = f.message_type.add(name="M")
    m.field.add(name="child", number=1, label=1, type=11, type_name=".p.Missing")
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["t.proto"], proto_file=[f])
    cases.append(("message type not found", req, "t.proto: field child: type .p.Missing not found in the request"))
    # An enum type nowhere in the request.
    f = fdp("u.proto", "p", "proto2")
    m = f.message_type.add(name="M")
    m.field.add(name="kind", number=1, label=1, type=14, type_name=".p.NoEnum")
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["u.proto"], proto_file=[f])
    cases.append(("enum type not found", req, "u.proto: field kind: enum .p.NoEnum not found in the request"))
    # A wrapper whose extendee is unknown.
    f = fdp("w.proto", "p", "proto2")
    m = f.message_type.add(name="W")
    m.extension.add(name="x", number=100, label=1, type=5, extendee=".p.Nowhere")
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["w.proto"], proto_file=[f])
    cases.append(("wrapper extendee not found", req,
                  "w.proto: wrapper p.W: extendee .p.Nowhere not found in the request"))
    # A file-scope extension whose extendee is unknown.
    f = fdp("v.proto", "p", "proto2")
    f.extension.add(name="y", number=100, label=1, type=5, extendee=".p.Nowhere")
    req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["v.proto"], proto_file=[f])
    cases.append(("file-scope extendee not found", req,
                  "v.proto: extendee .p.Nowhere of extension y not found in the request"))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--protoc", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--gpb", required=True)
    args = ap.parse_args()
    args.plugin = os.path.abspath(args.plugin)
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok   " + name)
        else:
            failed += 1
            print("FAIL " + name + ("\n" + detail if detail else ""))

    with tempfile.TemporaryDirectory() as tmp:
        for name, files, gen, opt, want in PROTO_CASES:
            d = tempfile.mkdtemp(dir=tmp)
            for fn, text in files.items():
                with open(os.path.join(d, fn), "w") as f:
                    f.write(text + "\n")
            out = os.path.join(d, "out")
            os.mkdir(out)
            cmd = [args.protoc, "--plugin=protoc-gen-tracec=" + args.plugin, "--tracec_out=" + out, "-I" + d]
            if opt:
                cmd.append("--tracec_opt=" + opt)
            p = subprocess.run(cmd + gen, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            err = p.stderr.decode()
            missing = [w for w in want if w not in err]
            check("protoc: " + name, p.returncode != 0 and not missing and not os.listdir(out),
                  "  exit %d, files %s\n  stderr: %s\n  expected: %s" % (p.returncode, os.listdir(out), err.strip(),
                                                                       missing))

        for name, req, want in crafted_cases():
            p = subprocess.run([args.plugin], input=req.SerializeToString(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            resp = plugin_pb2.CodeGeneratorResponse()
            try:
                resp.ParseFromString(p.stdout)
                parsed = True
            except Exception:  # noqa: BLE001 - any parse failure is a test failure
                parsed = False
            check("request: " + name, p.returncode == 0 and parsed and resp.error == want and not resp.file,
                  "  exit %d, error %r, %d files\n  expected error %r" % (p.returncode, resp.error, len(resp.file),
                                                                         want))

        # The plugin run by hand.
        p = subprocess.run([args.plugin], input=b"\xff\xff\xff garbage", stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check("stdin that is not a request", p.returncode == 1 and
              b"protoc-gen-tracec: stdin is not a CodeGeneratorRequest (run me through protoc" in p.stderr,
              "  exit %d, stderr %r" % (p.returncode, p.stderr))
        fd = os.open("/", os.O_RDONLY)
        p = subprocess.run([args.plugin], stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(fd)
        check("stdin that cannot be read", p.returncode == 1 and
              b"protoc-gen-tracec: cannot read the request from stdin" in p.stderr,
              "  exit %d, stderr %r" % (p.returncode, p.stderr))
        p = subprocess.run([args.plugin, "--bogus"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("unknown command-line argument", p.returncode == 2 and b"Run it through protoc" in p.stderr,
              "  exit %d, stderr %r" % (p.returncode, p.stderr))
        p = subprocess.run([args.plugin, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("--help lists every option", p.returncode == 0 and all(
            o in p.stdout for o in [b"include_style=", b"include_prefix=", b"guard_prefix=", b"name_prefix=",
                                    b"descriptors="]), "  exit %d, stdout %r" % (p.returncode, p.stdout))
        p = subprocess.run([args.plugin, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("--version", p.returncode == 0 and p.stdout.startswith(b"protoc-gen-tracec "))
        if os.path.exists("/dev/full"):
            req = plugin_pb2.CodeGeneratorRequest(file_to_generate=["ok.proto"], proto_file=[fdp("ok.proto")])
            with open("/dev/full", "wb") as full:
                p = subprocess.run([args.plugin], input=req.SerializeToString(), stdout=full, stderr=subprocess.PIPE)
            check("stdout that cannot be written", p.returncode == 1 and
                  b"protoc-gen-tracec: cannot write the response to stdout" in p.stderr,
                  "  exit %d, stderr %r" % (p.returncode, p.stderr))

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
