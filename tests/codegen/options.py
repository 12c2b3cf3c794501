#!/usr/bin/env python3
"""codegen_options: every --tracec_opt, checked on what it generates, and each
result compiled with gcc -std=c11 -pedantic -Wall -Wextra -Werror.

    options.py --protoc PROTOC --plugin PLUGIN --src SOURCE_DIR --gpb INCLUDE --schema SCHEMA_GEN_DIR

Generates tests/codegen/protos/opts/{base,user}.proto once per option set.
The schema headers are libtracec's (SCHEMA_GEN_DIR), at their plain paths:
include_prefix and name_prefix leave the Perfetto schema alone.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

CFLAGS = ["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-O1"]


def embedded_files(c_text):
    """File names in the FileDescriptorSet embedded in a generated .c."""
    m = re.search(r"_set\[\d+\] = \{(.*?)\};", c_text, re.S)
    if not m:
        return None
    data = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", m.group(1)))
    s = descriptor_pb2.FileDescriptorSet()
    s.ParseFromString(data)
    for f in s.file:
        if f.HasField("source_code_info"):
            return ["<source info not stripped>"]
    return [f.name for f in s.file]


def main():
    ap = argparse.ArgumentParser()
    for a in ("--protoc", "--plugin", "--src", "--gpb", "--schema"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    plugin = os.path.abspath(args.plugin)
    args.src, args.schema = os.path.abspath(args.src), os.path.abspath(args.schema)
    protos = os.path.join(args.src, "tests", "codegen", "protos")
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
        print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else "\n" + detail))

    def generate(tmp, opt, subdir=""):
        out = os.path.join(tmp, "out")
        os.makedirs(os.path.join(out, subdir), exist_ok=True)
        cmd = [args.protoc, "--plugin=protoc-gen-tracec=" + plugin, "--tracec_out=" + os.path.join(out, subdir),
               "-I" + protos, "-I" + os.path.join(args.src, "protos"), "-I" + args.gpb]
        if opt:
            cmd.append("--tracec_opt=" + opt)
        subprocess.run(cmd + ["opts/base.proto", "opts/user.proto"], check=True)
        d = os.path.join(out, subdir, "opts")
        read = lambda n: open(os.path.join(d, n)).read()  # noqa: E731
        return out, read("user.tracec.h"), read("user.tracec.c"), read("base.tracec.h")

    def compiles(out, snippet, name):
        src = os.path.join(out, "use.c")
        with open(src, "w") as f:
            f.write(snippet)
        sources = [src] + [os.path.join(r, n) for r, _, ns in os.walk(out) for n in ns if n.endswith(".tracec.c")]
        cmd = ["gcc"] + CFLAGS + ["-I" + out, "-I" + os.path.join(args.src, "runtime", "include"),
                                  "-I" + args.schema, "-c"] + sources
        p = subprocess.run(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(name + ": compiles (gcc " + " ".join(CFLAGS) + ")", p.returncode == 0, p.stdout.decode()[:3000])

    use_default = """#include "opts/user.tracec.h"
void use(perfetto_protos_TracePacket *pkt);
void use(perfetto_protos_TracePacket *pkt) {
    opts_user_UserEvent ev;
    opts_base_Detail d;
    perfetto_protos_TracePacket_begin_track_event_as_opts_user_UserEvent(pkt, &ev);
    opts_user_UserEvent_begin_detail(&ev, &d);
    opts_base_Detail_set_level(&d, opts_base_LEVEL_HIGH);
    opts_user_UserEvent_end_detail(&ev, &d);
    perfetto_protos_TrackEvent_set_opts_user_user_code(&ev.base, 1);
    perfetto_protos_TracePacket_end_track_event_as_opts_user_UserEvent(pkt, &ev);
    opts_user_write_extension_descriptor(pkt);
}
"""
    with tempfile.TemporaryDirectory() as tmp:
        # Defaults: quote includes, no prefixes, descriptors=deps.
        out, h, c, base_h = generate(os.path.join(tmp, "default"), "")
        check("default: quoted includes", '#include "opts/base.tracec.h"' in h and
              '#include "perfetto/trace/track_event/track_event.tracec.h"' in h)
        check("default: include guard", "#ifndef OPTS_USER_PROTO_TRACEC_H_" in h)
        check("default: descriptors=deps embeds the file and its non-Perfetto imports",
              embedded_files(c) == ["opts/base.proto", "opts/user.proto"], str(embedded_files(c)))
        check("default: registration and typed descriptor writer",
              "tracec_registry_add(&tracec_fd_opts_user_proto)" in c and
              "opts_user_write_extension_descriptor(perfetto_protos_TracePacket *packet)" in h)
        check("default: runtime ABI check and DO NOT EDIT banner",
              "#if TRACEC_GENERATED_ABI_VERSION != 1" in h and "DO NOT EDIT" in h and "DO NOT EDIT" in c)
        compiles(out, use_default, "default")

        # include_style=angle, include_prefix=gen/ (generated into out/gen/).
        out, h, c, _ = generate(os.path.join(tmp, "angle"), "include_style=angle,include_prefix=gen/", "gen")
        check("include_style=angle,include_prefix=gen/: user headers prefixed, Perfetto's not",
              "#include <gen/opts/base.tracec.h>" in h and
              "#include <perfetto/trace/track_event/track_event.tracec.h>" in h and
              "#include <gen/opts/user.tracec.h>" in c and '#include "' not in h.split("#include <stdint.h>")[1])
        compiles(out, use_default.replace('"opts/user.tracec.h"', "<gen/opts/user.tracec.h>"),
                 "include_style=angle,include_prefix=gen/")

        # guard_prefix.
        out, h, c, _ = generate(os.path.join(tmp, "guard"), "guard_prefix=ACME_")
        check("guard_prefix=ACME_", "#ifndef ACME_OPTS_USER_PROTO_TRACEC_H_" in h and
              "#endif  /* ACME_OPTS_USER_PROTO_TRACEC_H_ */" in h)

        # name_prefix: every name from a non-Perfetto file, and only those.
        out, h, c, base_h = generate(os.path.join(tmp, "name"), "name_prefix=acme_")
        check("name_prefix=acme_: types, enum values, setters prefixed",
              "typedef struct acme_opts_base_Detail" in base_h and "acme_opts_base_LEVEL_HIGH = 1" in base_h and
              "static inline void acme_opts_user_UserEvent_set_track_uuid(" in h and
              "perfetto_protos_TrackEvent_set_acme_opts_user_user_code(perfetto_protos_TrackEvent *m" in h)
        check("name_prefix=acme_: Perfetto types untouched; descriptor symbols prefixed",
              "perfetto_protos_TracePacket_begin_track_event_as_acme_opts_user_UserEvent(perfetto_protos_TracePacket"
              in h and "tracec_fd_acme_opts_user_proto" in c and
              "acme_opts_user_write_extension_descriptor(perfetto_protos_TracePacket *packet)" in h)
        compiles(out, """#include "opts/user.tracec.h"
void use(perfetto_protos_TracePacket *pkt);
void use(perfetto_protos_TracePacket *pkt) {
    acme_opts_user_UserEvent ev;
    acme_opts_base_Detail d;
    perfetto_protos_TracePacket_begin_track_event_as_acme_opts_user_UserEvent(pkt, &ev);
    acme_opts_user_UserEvent_begin_detail(&ev, &d);
    acme_opts_base_Detail_set_level(&d, acme_opts_base_LEVEL_HIGH);
    acme_opts_user_UserEvent_end_detail(&ev, &d);
    perfetto_protos_TrackEvent_set_acme_opts_user_user_code(&ev.base, 1);
    perfetto_protos_TracePacket_end_track_event_as_acme_opts_user_UserEvent(pkt, &ev);
    acme_opts_user_write_extension_descriptor(pkt);
}
""", "name_prefix=acme_")

        # descriptors=file / none.
        out, h, c, _ = generate(os.path.join(tmp, "file"), "descriptors=file")
        check("descriptors=file embeds this file only", embedded_files(c) == ["opts/user.proto"],
              str(embedded_files(c)))
        out, h, c, _ = generate(os.path.join(tmp, "none"), "descriptors=none")
        check("descriptors=none: no descriptor, no registration, no descriptor writer",
              "tracec_fd_" not in h and "tracec_fd_" not in c and "write_extension_descriptor" not in h)
        compiles(out, use_default.replace("    opts_user_write_extension_descriptor(pkt);\n", ""),
                 "descriptors=none")

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
