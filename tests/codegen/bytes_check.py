#!/usr/bin/env python3
"""codegen_bytes: the bytes our generated writers produce equal libprotobuf's.

    bytes_check.py --protoc PROTOC --writer BYTE_WRITER --src SOURCE_DIR --gpb INCLUDE

For each case (cases/NAME.txtpb, message type, protos), byte_writer writes
NAME.bin with the generated writers, and protoc --encode encodes the
textproto.  The check, per case:
  1. our bytes, with every 4-byte redundant nested length shrunk to a
     minimal varint, equal protoc's bytes exactly;
  2. protoc --decode prints the same text for our raw bytes as for protoc's.
On a mismatch it prints the first differing top-level field of both sides as
hex.  protoc runs twice per case (one --encode, one --decode of each side
batched through a single process is not possible; 3 calls per case).
"""
import argparse
import os
import subprocess
import sys
import tempfile

CASES = [
    # name, message type, proto files
    ("byte_cases", "tracec.stress.ByteCases", ["stress/all_types.proto"]),
    ("p3_cases", "tracec.stress.p3.P3Cases", ["stress/p3.proto"]),
    ("pf_trace", "perfetto.protos.Trace",
     ["perfetto/trace/trace.proto", "stress/perfetto_ext.proto", "stress/te_only.proto"]),
    ("nopkg", "NoPkg", ["stress/nopkg.proto"]),
]


def read_varint(b, i):
    v = shift = 0
    start = i
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i, i - start


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def normalize(b, i=0, end=None, group=None):
    """Re-encodes a message, shrinking redundant (non-minimal) lengths.

    Only our nested messages carry redundant lengths (strings, bytes and
    packed fields use minimal ones), so a redundant length marks a message
    whose body is normalized recursively.  Returns (bytes, index after)."""
    end = len(b) if end is None else end
    out = bytearray()
    while i < end:
        tag, i, tag_len = read_varint(b, i)
        wt, num = tag & 7, tag >> 3
        if wt == 4:
            if group != num:
                raise ValueError("unbalanced end group %d" % num)
            out += varint(tag)
            return bytes(out), i
        out += varint(tag)
        if wt == 0:
            v, i, _ = read_varint(b, i)
            out += varint(v)
        elif wt == 1:
            out += b[i:i + 8]
            i += 8
        elif wt == 5:
            out += b[i:i + 4]
            i += 4
        elif wt == 2:
            n, i, n_len = read_varint(b, i)
            body = b[i:i + n]
            if n_len > len(varint(n)):
                body, _ = normalize(b, i, i + n)
            out += varint(len(body)) + body
            i += n
        elif wt == 3:
            inner, i = normalize(b, i, end, num)
            out += inner
        else:
            raise ValueError("bad wire type %d" % wt)
    if group is not None:
        raise ValueError("group %d not closed" % group)
    return bytes(out), i


def top_fields(b):
    """Splits a message into its top-level fields: [(number, bytes)]."""
    out, i = [], 0
    while i < len(b):
        start = i
        tag, i, _ = read_varint(b, i)
        wt = tag & 7
        if wt == 0:
            _, i, _ = read_varint(b, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, i, _ = read_varint(b, i)
            i += n
        elif wt == 3:
            _, i = normalize(b, i, len(b), tag >> 3)
        out.append((tag >> 3, b[start:i]))
    return out


def hexdump(b, limit=256):
    s = " ".join("%02x" % c for c in b[:limit])
    return s + (" ..." if len(b) > limit else "")


def run(cmd, data):
    p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write("command failed: %s\n%s" % (" ".join(cmd), p.stderr.decode()))
        sys.exit(1)
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--protoc", required=True)
    ap.add_argument("--writer", required=True, help="byte_writer binary")
    ap.add_argument("--src", required=True)
    ap.add_argument("--gpb", required=True)
    args = ap.parse_args()
    here = os.path.join(args.src, "tests", "codegen")
    incs = ["-I" + os.path.join(here, "protos"), "-I" + os.path.join(args.src, "protos"), "-I" + args.gpb]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([args.writer, tmp], check=True)
        for name, msg, protos in CASES:
            with open(os.path.join(here, "cases", name + ".txtpb"), "rb") as f:
                text = f.read()
            with open(os.path.join(tmp, name + ".bin"), "rb") as f:
                ours = f.read()
            want = run([args.protoc, "--encode=" + msg] + incs + protos, text)
            norm, _ = normalize(ours)
            ok = True
            if norm != want:
                ok = False
                print("FAIL %s: bytes differ (ours %d bytes, %d normalized; protoc %d bytes)"
                      % (name, len(ours), len(norm), len(want)))
                a, b = top_fields(norm), top_fields(want)
                for k in range(max(len(a), len(b))):
                    fa = a[k] if k < len(a) else (None, b"")
                    fb = b[k] if k < len(b) else (None, b"")
                    if fa != fb:
                        print("  first differing top-level field #%d (field %s / %s):" % (k, fa[0], fb[0]))
                        print("    ours:   " + hexdump(fa[1]))
                        print("    protoc: " + hexdump(fb[1]))
                        break
            dec_ours = run([args.protoc, "--decode=" + msg] + incs + protos, ours)
            dec_want = run([args.protoc, "--decode=" + msg] + incs + protos, want)
            if dec_ours != dec_want:
                ok = False
                print("FAIL %s: protoc --decode differs" % name)
                import difflib
                for line in difflib.unified_diff(dec_want.decode().splitlines(), dec_ours.decode().splitlines(),
                                                 "protoc", "ours", lineterm="", n=2):
                    print("    " + line)
            if ok:
                print("ok   %s: %d bytes (%d with 4-byte lengths) equal protoc --encode; --decode identical"
                      % (name, len(want), len(ours)))
                passed += 1
            else:
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
