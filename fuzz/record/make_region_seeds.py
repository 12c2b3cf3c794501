#!/usr/bin/env python3
"""Writes fuzz_record's seeds of the second input shape (region_*): a
tracec_shm_header (tracec/abi/shm_layout.h), then half 0, half 1 and the
durable part back to back, as fuzz_record.c reads them.  Each holds real
TracePackets (an instant TrackEvent with a name) in record blocks and in
chunks tagged with their half's generation.

Usage: make_region_seeds.py CORPUS_DIR"""
import os
import struct
import sys

MAGIC = 0x3230304D48534354  # "TCSHM002"
CHUNK_MARK = 0xFFFFFFFF
ONESHOT, CIRCULAR, STREAMING = 1, 2, 3
SIZE, HALF, DURABLE = 256, 768, 256


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def packet(ts, name, seq=None):
    ev = b"\x48\x03" + varint((23 << 3) | 2) + varint(len(name)) + name.encode()
    p = b"\x40" + varint(ts)
    if seq is not None:
        p += b"\x50" + varint(seq)
    return p + b"\x5a" + varint(len(ev)) + ev


def record(payload, category=0, kind=0, size=None):
    body = (len(payload) + 7) // 8 * 8
    hdr = struct.pack("<IIII", body, len(payload) if size is None else size, category, kind)
    return hdr + payload + b"\0" * (body - len(payload))


def chunk(records, tag, slack=0, committed=None):
    inner = b"".join(records)
    c = len(inner) if committed is None else committed
    return struct.pack("<IIII", len(inner) + slack, CHUNK_MARK, c, tag) + inner + b"\0" * slack


def tag(gen):
    return (gen & 0xFFFFFFFF) | 1


def region(gen, extent, blocks, handed=1, reserved=None):
    return struct.pack("<QIIII", gen, handed, extent, blocks, extent if reserved is None else reserved)


def blocks_of(data):
    n, off = 0, 0
    while off + 16 <= len(data):
        body = struct.unpack_from("<I", data, off)[0]
        n += 1
        off += 16 + body
    return n


def seed(mode, halves_data, durable_data=b"", active=0, handed=(1, 1, 1), gens=(2, 5, 0), reserved=None,
         half_bytes=HALF, counters=(9, 1, 0, 0), extents=None):
    halves = 1 if mode == ONESHOT else 2
    dbytes = 0 if mode == STREAMING else DURABLE
    regions = b""
    for i in range(2):
        d = halves_data[i] if i < len(halves_data) else b""
        if i >= halves:
            regions += region(0, 0, 0, 0, 0)
            continue
        res = reserved[i] if reserved else None
        ext = len(d) if extents is None else extents[i]
        regions += region(gens[i], ext, blocks_of(d[:ext]), handed[i], res)
    regions += region(gens[2], len(durable_data), blocks_of(durable_data), handed[2] if dbytes else 0)
    hdr = struct.pack("<QIIIIQQQII", MAGIC, 2, 4096, mode, halves, SIZE, half_bytes, dbytes, active, 0)
    hdr += regions + struct.pack("<QQQQ", *counters)
    assert len(hdr) == 160
    body = b""
    for i in range(halves):
        d = halves_data[i] if i < len(halves_data) else b""
        body += d + b"\0" * (HALF - len(d))
    body += durable_data + b"\0" * (dbytes - len(durable_data))
    return hdr + body


def main():
    out = sys.argv[1]
    seeds = {}
    # a region of each mode: chunks of two threads' sequences, a record of its own, descriptors
    h0 = chunk([record(packet(10, "t1-a", 1)), record(packet(11, "t1-b", 1))], tag(2), slack=16) + \
        chunk([record(packet(12, "t2-a", 2))], tag(2)) + record(packet(13, "raw"))
    h1 = chunk([record(packet(1, "old-t1", 1))], tag(5)) + record(packet(2, "old-raw"))
    desc = record(packet(0, "descriptor", 1), category=1, kind=2)
    seeds["region_streaming"] = seed(STREAMING, [h0, h1], active=0, handed=(1, 1, 0))
    seeds["region_circular"] = seed(CIRCULAR, [h0, h1], desc, active=0)
    seeds["region_oneshot"] = seed(ONESHOT, [h0], desc)
    # a chunk whose committed bytes end inside its second record
    first = record(packet(20, "kept", 1))
    cut = chunk([first, record(packet(21, "cut", 1))], tag(2), committed=len(first) + 8)
    seeds["region_truncated_chunk"] = seed(STREAMING, [cut, b""], handed=(1, 0, 0))
    # a chunk left over from the half's earlier generation after a good one
    stale = chunk([record(packet(30, "now", 1))], tag(2)) + chunk([record(packet(3, "before", 1))], tag(0))
    seeds["region_foreign_tag"] = seed(STREAMING, [stale, b""], handed=(1, 0, 0))
    # a chunk that claims more committed bytes than its body
    huge = record(packet(40, "first")) + struct.pack("<IIII", 16, CHUNK_MARK, 0xFFFFFFF0, tag(2)) + b"\0" * 16
    seeds["region_huge_committed"] = seed(STREAMING, [huge, b""], handed=(1, 0, 0))
    # a writer that died: the active half not handed, extent 0, its chunk reserved past it
    salv = chunk([record(packet(50, "salvaged", 1))], tag(2), slack=32)
    seeds["region_salvage"] = seed(STREAMING, [salv, b""], handed=(0, 0, 0), reserved=(len(salv) + 64, 0),
                                    extents=(0, 0))
    # a header whose geometry is not the agreed one (too large for the fuzzer's echo: checked, refused)
    seeds["region_other_geometry"] = seed(CIRCULAR, [h0, h1], desc, half_bytes=1 << 20)
    # the buffer writers' records: each packet one Trace.packet field; runs of packets of one shape on one
    # sequence (the recorder saves them by shape), broken by another sequence, another shape and a long one
    def wrapped(pk):
        return b"\x0a" + varint(len(pk)) + pk

    run = [record(wrapped(packet(100 + i, "ev-%d" % i, 1))) for i in range(5)]
    run += [record(wrapped(packet(105, "ev-5", 2))), record(wrapped(packet(106, "ev-6", 1)))]
    run += [record(wrapped(packet(107, "a longer name", 1))), record(wrapped(packet(108, "ev-8", 1)))]
    more = [record(wrapped(packet(109 + i, "ev-%d" % (9 + i), 1))) for i in range(3)]
    seeds["region_usual_runs"] = seed(STREAMING, [chunk(run, tag(2)) + chunk(more, tag(2)), b""], handed=(1, 0, 0))
    bad = wrapped(b"\x40\x70\x50\x01\x5a\x02\x4f\x01")  # track_event holding wire type 7
    seeds["region_usual_run_then_bad"] = seed(
        STREAMING, [chunk(more + [record(bad)] + more, tag(2)), b""], handed=(1, 0, 0))
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
