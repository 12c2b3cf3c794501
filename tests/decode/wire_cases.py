#!/usr/bin/python3
"""Hand-made wire data for the decoder's protoc-compatibility corner cases.

Each case is a message of tests/decode/data/p3.proto or p2maps.proto, chosen
to pin down what `protoc --decode` (3.21) prints: proto3 fields without
presence holding their default, explicit presence, and map fields (entries
sorted by key, equal keys all kept in wire order, missing keys and values
printed as defaults, unknown fields inside entries).  test_decoder_p3.c
decodes each with protoc and with tracec and requires the same text.

usage: wire_cases.py OUTDIR   (writes OUTDIR/NNN.bin and OUTDIR/list: "NNN TYPE NAME")
"""
import os
import struct
import sys

from wire import f32, f64, ld, vi, zz


S = "tracec_test.p3.Scalars"
M = "tracec_test.p3.Maps"
A = "tracec_test.p3.WithAny"
M2 = "tracec_test.p2.Maps2"
ZERO8 = b"\0" * 8
ZERO4 = b"\0" * 4

CASES = [
    # ---- proto3 presence
    ("every implicit scalar at its default", S,
     f64(1, ZERO8) + f32(2, ZERO4) + vi(3, 0) + vi(4, 0) + vi(5, 0) + f64(6, ZERO8) + f32(7, ZERO4) +
     vi(8, 0) + ld(9, "") + ld(10, "") + vi(11, 0) + vi(12, 0) + f32(13, ZERO4) + f64(14, ZERO8) +
     vi(15, 0) + vi(16, 0)),
    ("explicit presence at the default", S,
     vi(17, 0) + ld(18, "") + vi(19, 0) + f64(20, ZERO8) + ld(24, b"")),
    ("oneof members at the default", S, vi(21, 0)),
    ("oneof string member empty", S, ld(22, "")),
    ("oneof message member empty", S, ld(23, "")),
    ("repeated zeros are printed", S, vi(25, 0) + ld(25, b"\0\0") + ld(26, "")),
    ("negative zero is not the default", S,
     f64(1, struct.pack("<d", -0.0)) + f32(2, struct.pack("<f", -0.0))),
    ("int32 whose low 32 bits are zero", S, vi(5, 1 << 32) + vi(11, 1 << 33) + vi(15, 1 << 40)),
    ("bool from a large varint", S, vi(8, 1 << 40)),
    ("last value zero clears the field", S, vi(5, 7) + ld(9, "x") + vi(5, 0) + ld(9, "")),
    ("default then value", S, vi(5, 0) + vi(5, 3) + vi(12, 0) + vi(12, 9)),
    ("non-canonical order with defaults", S, vi(16, 0) + vi(3, 5) + vi(3, 0) + ld(10, "b")),
    ("defaults inside a nested message", S, ld(24, vi(1, 0) + ld(2, "") + ld(3, vi(1, 0)))),
    # ---- maps
    ("map entries sorted, equal keys kept", M,
     ld(1, ld(1, "b") + vi(2, 1)) + ld(1, ld(1, "a") + vi(2, 2)) + ld(1, ld(1, "b") + vi(2, 3)) +
     ld(1, vi(2, 4)) + ld(1, ld(1, "c")) + ld(1, b"")),
    ("map entry value before key, key twice", M, ld(1, vi(2, 5) + ld(1, "x") + ld(1, "y"))),
    ("map entry with an unknown field", M, ld(1, ld(1, "a") + vi(2, 2) + vi(3, 1))),
    ("map key with the wrong wire type", M, ld(1, f32(1, b"\1\0\0\0") + vi(2, 9)) + ld(1, ld(1, "0"))),
    ("single map entry, defaults explicit", M, ld(1, ld(1, "") + vi(2, 0))),
    ("message value missing", M, ld(2, vi(1, 3))),
    ("message value given twice merges", M, ld(2, vi(1, 3) + ld(2, vi(1, 1)) + ld(2, ld(2, "x")))),
    ("int32 keys, negative first", M,
     ld(2, vi(1, 5)) + ld(2, vi(1, -1)) + ld(2, vi(1, 0)) + ld(2, vi(1, (1 << 32) + 5)) + ld(2, vi(1, -(1 << 31)))),
    ("int64 keys", M, ld(3, vi(1, 1 << 62) + ld(2, "p")) + ld(3, vi(1, -(1 << 63)) + ld(2, "n")) + ld(3, vi(1, 2))),
    ("uint32 keys and enum values", M,
     ld(4, vi(1, 0xFFFFFFFF) + vi(2, 1)) + ld(4, vi(1, 1) + vi(2, 77)) + ld(4, vi(1, (1 << 32) + 2) + vi(2, 2)) +
     ld(4, vi(1, 3))),
    ("uint64 keys and bytes values", M,
     ld(5, vi(1, (1 << 64) - 1) + ld(2, b"\xff")) + ld(5, vi(1, 1 << 63) + ld(2, "")) + ld(5, vi(1, 0))),
    ("sint32 keys and double values", M,
     ld(6, vi(1, zz(-3)) + f64(2, struct.pack("<d", 1.5))) + ld(6, vi(1, zz(2))) +
     ld(6, vi(1, zz(-(1 << 31))) + f64(2, struct.pack("<d", -0.0)))),
    ("sint64 keys and float values", M,
     ld(7, vi(1, zz(1 << 40)) + f32(2, struct.pack("<f", 0.25))) + ld(7, vi(1, zz(-(1 << 40)))) +
     ld(7, vi(1, zz(0)))),
    ("fixed32 keys and bool values", M,
     ld(8, f32(1, struct.pack("<I", 0xFFFFFFF0)) + vi(2, 1)) + ld(8, f32(1, struct.pack("<I", 7)))),
    ("fixed64 keys", M,
     ld(9, f64(1, struct.pack("<Q", 1 << 63)) + vi(2, 4)) + ld(9, f64(1, struct.pack("<Q", 9)) + vi(2, 0))),
    ("sfixed32 keys", M,
     ld(10, f32(1, struct.pack("<i", 4)) + vi(2, zz(-1))) + ld(10, f32(1, struct.pack("<i", -4)))),
    ("sfixed64 keys", M,
     ld(11, f64(1, struct.pack("<q", 1)) + f64(2, ZERO8)) + ld(11, f64(1, struct.pack("<q", -1)))),
    ("bool keys", M, ld(12, vi(1, 1) + ld(2, vi(1, 1))) + ld(12, b"") + ld(12, vi(1, 1 << 35)) + ld(12, vi(1, 0))),
    ("map entries interleaved with other fields", M,
     ld(1, ld(1, "z")) + vi(13, 7) + ld(1, ld(1, "a")) + ld(14, ld(1, ld(1, "y")) + ld(1, ld(1, "x")))),
    ("maps in a nested message, twice (merged)", M,
     ld(14, ld(1, ld(1, "q") + vi(2, 1))) + vi(13, 1) + ld(14, ld(1, ld(1, "p") + vi(2, 2)))),
    ("map entry key present as default, value message empty", M, ld(12, vi(1, 0) + ld(2, b""))),
    ("proto2 map: unknown closed enum value", M2,
     ld(2, vi(1, 1) + vi(2, 5)) + ld(2, vi(1, 2) + vi(2, 1)) + ld(2, vi(1, 0))),
    ("proto2 map: message value missing", M2, ld(3, ld(1, "k")) + ld(3, ld(1, "a") + ld(2, vi(1, 0)))),
    # ---- Any (protoc 3.21 --decode prints it as a plain message)
    ("Any with a known type", A,
     ld(1, ld(1, "type.googleapis.com/tracec_test.p3.Sub") + ld(2, vi(1, 5) + ld(2, "hi")))),
    ("Any with an unknown type", A, ld(1, ld(1, "type.googleapis.com/no.Such") + ld(2, vi(1, 5)))),
    ("Any with another domain", A, ld(1, ld(1, "example.com/tracec_test.p3.Sub") + ld(2, vi(1, 5)))),
    ("Any whose value is not the type", A, ld(1, ld(1, "type.googleapis.com/tracec_test.p3.Sub") + ld(2, b"\xff"))),
    ("Any value first, defaults", A, ld(2, ld(2, vi(1, 5)) + ld(1, "type.googleapis.com/tracec_test.p3.Sub")) +
     ld(2, b"") + vi(3, 0)),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "list"), "w") as lst:
        for i, (name, typ, data) in enumerate(CASES):
            with open(os.path.join(out, "%03d.bin" % i), "wb") as f:
                f.write(data)
            lst.write("%03d %s %s\n" % (i, typ, name))


if __name__ == "__main__":
    main()
