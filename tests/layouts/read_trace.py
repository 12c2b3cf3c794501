#!/usr/bin/env python3
"""The python3-protobuf oracle of layouts_all: reads a trace back through a
DescriptorPool of Perfetto's schema (as the user keeps it) plus the
FileDescriptorSets the trace itself carries, and prints what it finds.  It
asserts nothing; the Criterion test compares the lines.

    read_trace.py SCHEMA_PB TRACE

SCHEMA_PB  protoc --include_imports --descriptor_set_out of the user's Perfetto
           schema (trace.proto or perfetto_trace.proto), without the user's files
TRACE      the trace the layout's write_trace.c wrote

Lines, in packet order:
  descriptor<TAB>FILE_NAME<TAB>PACKET_BYTES<TAB>FILES   an ExtensionDescriptor packet: its
                                                       file_name, its size, the files of its set
  event<TAB>TEXT                                       a track_event, one-line text format,
                                                       extensions by full name
"""
import os
import sys

from google.protobuf import descriptor_pb2, text_format

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "generator", "codegen"))
from descriptor_pool_read import parse_trace, pool_of  # noqa: E402


def main():
    schema_pb, trace_pb = sys.argv[1:3]
    schema = descriptor_pb2.FileDescriptorSet()
    schema.ParseFromString(open(schema_pb, "rb").read())
    data = open(trace_pb, "rb").read()

    # The schema alone reads the descriptor packets; their sets are (by type)
    # google.protobuf.FileDescriptorSet, or a schema's own copy of it.
    pool, factory = pool_of(list(schema.file))
    embedded = []
    for pkt in parse_trace(pool, factory, data).packet:
        if pkt.HasField("extension_descriptor"):
            ed = pkt.extension_descriptor
            files = descriptor_pb2.FileDescriptorSet.FromString(ed.extension_set.SerializeToString()).file
            embedded += [f for f in files if f.name not in {e.name for e in embedded}]
            print("descriptor\t%s\t%d\t%s" % (ed.file_name, pkt.ByteSize(), " ".join(f.name for f in files)))

    pool, factory = pool_of(list(schema.file) + embedded)
    for pkt in parse_trace(pool, factory, data).packet:
        if pkt.HasField("track_event"):
            print("event\t%s" % text_format.MessageToString(pkt.track_event, as_one_line=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
