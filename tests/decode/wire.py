"""Protobuf wire encoding for the test data generators (gen_wire.py,
wire_cases.py): varints, tags and whole fields, as bytes."""


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(num, wt):
    return varint(num << 3 | wt)


def vi(num, v):
    """A varint field."""
    return tag(num, 0) + varint(v)


def ld(num, body):
    """A length-delimited field (a str is UTF-8 encoded)."""
    if isinstance(body, str):
        body = body.encode()
    return tag(num, 2) + varint(len(body)) + body


def f32(num, b):
    """A 32-bit field: `b` is its 4 bytes."""
    return tag(num, 5) + b


def f64(num, b):
    """A 64-bit field: `b` is its 8 bytes."""
    return tag(num, 1) + b


def group(num, body):
    """A group: start tag, body, end tag."""
    return tag(num, 3) + body + tag(num, 4)


def zz(v):
    """ZigZag encoding of a 64-bit signed value (sint32, sint64)."""
    return (v << 1) ^ (v >> 63)
