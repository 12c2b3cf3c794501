#!/usr/bin/python3
"""Random protobuf wire data for a message type, guided by a descriptor set.

Writes messages that protoc must accept but that are rarely canonical:
fields in random order, singular fields repeated, several members of a
oneof, packed and unpacked repeated scalars, unknown enum values, wrong wire
types, unknown fields (varint, fixed, length-delimited, groups) and strings
with invalid UTF-8 (in proto2 files only: protoc rejects it in proto3
strings).  The test decodes each with `tracec decode` and with
`protoc --decode` and requires the same text.

usage: gen_wire.py DESCRIPTOR_SET TYPE SEED COUNT OUTDIR
"""
import os
import random
import struct
import sys

from google.protobuf import descriptor_pb2

from wire import f32, f64, group, ld, tag, varint, vi

FD = descriptor_pb2.FieldDescriptorProto


class Schema:
    def __init__(self, path):
        fds = descriptor_pb2.FileDescriptorSet()
        with open(path, "rb") as f:
            fds.ParseFromString(f.read())
        self.msgs = {}
        self.enums = {}
        self.exts = {}
        self.proto3 = set()  # messages of proto3 files
        for fd in fds.file:
            pkg = "." + fd.package if fd.package else ""
            for m in fd.message_type:
                self._add_msg(pkg, m, fd.syntax == "proto3")
            for e in fd.enum_type:
                self.enums[pkg + "." + e.name] = [v.number for v in e.value]
            for x in fd.extension:
                self.exts.setdefault(x.extendee, []).append(x)

    def _add_msg(self, prefix, m, proto3):
        name = prefix + "." + m.name
        self.msgs[name] = m
        if proto3:
            self.proto3.add(name)
        for n in m.nested_type:
            self._add_msg(name, n, proto3)
        for e in m.enum_type:
            self.enums[name + "." + e.name] = [v.number for v in e.value]
        for x in m.extension:
            self.exts.setdefault(x.extendee, []).append(x)


def scalar(rnd, f, schema):
    t = f.type
    if t in (FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_SINT32,
             FD.TYPE_SINT64, FD.TYPE_BOOL):
        v = rnd.choice([0, 1, 2, 127, 128, 300, -1, -2, 2**31 - 1, -2**31, 2**32 + 5, 2**63, 2**64 - 1,
                        rnd.getrandbits(rnd.choice([7, 14, 35, 64]))])
        return 0, varint(v)
    if t == FD.TYPE_ENUM:
        vals = schema.enums.get(f.type_name, [0])
        v = rnd.choice(vals + [rnd.choice([99, -1, 1000])]) if rnd.random() < 0.3 else rnd.choice(vals)
        return 0, varint(v)
    if t in (FD.TYPE_FIXED64, FD.TYPE_SFIXED64):
        return 1, struct.pack("<Q", rnd.getrandbits(64))
    if t == FD.TYPE_DOUBLE:
        return 1, struct.pack("<d", rnd.choice([0.0, -0.0, 1.5, 0.1, 1e300, float("inf"), float("nan"), 1 / 3,
                                               rnd.uniform(-1e6, 1e6), 5e-324]))
    if t in (FD.TYPE_FIXED32, FD.TYPE_SFIXED32):
        return 5, struct.pack("<I", rnd.getrandbits(32))
    if t == FD.TYPE_FLOAT:
        return 5, struct.pack("<f", rnd.choice([0.0, -0.0, 1.5, 0.1, 3e38, float("inf"), 1 / 3, rnd.uniform(-1e6, 1e6)]))
    raise ValueError(t)


def rand_bytes(rnd, utf8=False):
    if utf8:
        return rand_bytes(rnd).decode("utf-8", "ignore").encode()
    k = rnd.random()
    if k < 0.5:
        return bytes(rnd.choice(b"abcXYZ _-\"'\\\n\t") for _ in range(rnd.randint(0, 8)))
    if k < 0.7:
        return "é€😀".encode()[: rnd.randint(0, 9)]
    return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 8)))


def unknown_field(rnd, depth):
    num = rnd.choice([500, 501, 777, 15000, 2**29 - 1, 19000 - 1])
    k = rnd.randint(0, 4)
    if k == 0:
        return vi(num, rnd.getrandbits(rnd.choice([7, 64])))
    if k == 1:
        return f64(num, struct.pack("<Q", rnd.getrandbits(64)))
    if k == 2:
        return f32(num, struct.pack("<I", rnd.getrandbits(32)))
    if k == 3:
        if depth < 12 and rnd.random() < 0.6:
            body = b"".join(unknown_field(rnd, depth + 1) for _ in range(rnd.randint(0, 3)))
        else:
            body = rand_bytes(rnd)
        return ld(num, body)
    body = b"".join(unknown_field(rnd, depth + 1) for _ in range(rnd.randint(0, 2))) if depth < 5 else b""
    return group(num, body)


def gen_msg(rnd, schema, name, depth):
    m = schema.msgs[name]
    fields = list(m.field) + schema.exts.get(name, [])
    out = []
    if not fields:
        return b""
    for _ in range(rnd.randint(0, 7 if depth < 3 else 2)):
        if rnd.random() < 0.1:
            out.append(unknown_field(rnd, 0))
            continue
        f = rnd.choice(fields)
        if f.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            if depth >= 5:
                continue
            body = gen_msg(rnd, schema, f.type_name, depth + 1)
            out.append(group(f.number, body) if f.type == FD.TYPE_GROUP else ld(f.number, body))
            continue
        if f.type in (FD.TYPE_STRING, FD.TYPE_BYTES):
            b = rand_bytes(rnd, f.type == FD.TYPE_STRING and name in schema.proto3)
            out.append(ld(f.number, b))
            continue
        if rnd.random() < 0.05:  # wrong wire type: an unknown field for protoc
            out.append(f32(f.number, b"\x01\x02\x03\x04"))
            continue
        n = rnd.randint(1, 3) if f.label == FD.LABEL_REPEATED else 1
        vals = [scalar(rnd, f, schema) for _ in range(n)]
        if f.label == FD.LABEL_REPEATED and rnd.random() < 0.5:
            out.append(ld(f.number, b"".join(v for _, v in vals)))
        else:
            for wt, v in vals:
                out.append(tag(f.number, wt) + v)
    if rnd.random() < 0.5:
        rnd.shuffle(out)
    else:
        out.sort(key=lambda b: b[:2])
    return b"".join(out)


def main():
    path, typ, seed, count, outdir = sys.argv[1:6]
    schema = Schema(path)
    rnd = random.Random(int(seed))
    os.makedirs(outdir, exist_ok=True)
    for i in range(int(count)):
        data = gen_msg(rnd, schema, "." + typ, 0)
        with open(os.path.join(outdir, "w%03d.bin" % i), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
