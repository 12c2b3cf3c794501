"""Cases for `print_unknown_fields = false` (tests/decode/test_decoder_p3.c).

Mirrors protobuf 21.12's text-format conformance tests
`{Scalar,Message,Group,Repeated}UnknownFields_Drop.TextFormatOutput`: a
message whose fields the reader's schema does not declare (numbers 1001..,
as the suite's UnknownToTestAllTypes) is printed without them.  Each case
also carries known fields, and a sub-message with unknown fields of its own.

Usage: unknown_drop.py SET.desc OUTDIR
Writes OUTDIR/<name>.bin (the wire bytes of tracec_test.p3.Scalars) and
OUTDIR/<name>.txt (python3-protobuf's text_format of the parsed message with
print_unknown_fields=False: the oracle), and OUTDIR/list.
"""
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from wire import group, ld, vi

TYPE = "tracec_test.p3.Scalars"

# UnknownToTestAllTypes' numbers: optional_int32 1001, optional_string 1002,
# nested_message 1003 (its c = 1), optionalgroup 1004 (its a = 1),
# optional_bool 1006, repeated_int32 1011.
CASES = {
    "ScalarUnknownFields": vi(1001, 123) + ld(1002, "hello") + vi(1006, 1),
    "MessageUnknownFields": ld(1003, vi(1, 111)),
    "GroupUnknownFields": group(1004, vi(1, 321)),
    "RepeatedUnknownFields": vi(1011, 1) + vi(1011, 2) + vi(1011, 3),
}


def main():
    desc, out = sys.argv[1], sys.argv[2]
    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    cls = message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(TYPE))
    os.makedirs(out, exist_ok=True)
    names = []
    for name, unknown in CASES.items():
        for variant, data in (
            ("", unknown),
            # Known fields around the unknown ones, and unknown fields inside a known sub-message
            # (Sub: a = 1, s = 2) and in a repeated one.
            ("_mixed", vi(5, 7) + unknown + ld(9, "kept") + ld(23, vi(1, 4) + unknown) + vi(11, 9)),
        ):
            msg = cls()
            msg.ParseFromString(data)
            n = name + variant
            with open(os.path.join(out, n + ".bin"), "wb") as f:
                f.write(data)
            with open(os.path.join(out, n + ".txt"), "w") as f:
                f.write(text_format.MessageToString(msg, print_unknown_fields=False))
            names.append(n)
    with open(os.path.join(out, "list"), "w") as f:
        f.write("".join(n + "\n" for n in names))


if __name__ == "__main__":
    main()
