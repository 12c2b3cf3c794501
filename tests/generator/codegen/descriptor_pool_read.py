#!/usr/bin/env python3
"""The python3-protobuf oracle of generator_descriptors: reads a trace back
through DescriptorPools and prints what it finds, one `key<TAB>repr(value)` a
line.  It asserts nothing; the Criterion test compares the values.

    descriptor_pool_read.py SCHEMA_PB REGISTRY_PB TRACE

SCHEMA_PB   protoc --include_imports --descriptor_set_out of perfetto/trace/trace.proto
REGISTRY_PB every FileDescriptorSet of the program's compile-time registry, concatenated
TRACE       packet 0: my_events.proto's ExtensionDescriptor; packet 1: a my_app.MyEvent;
            packet 2: every extension of test_extensions.proto

Keys:
  first.extension_descriptor.file_name   packet 0's (or <none>), parsed with the schema alone
  trace:NAME                             packet 1's my_app extensions, read through a pool
                                         of the schema plus the set embedded in packet 0
  registry:NAME                          packet 2's test_extensions.proto extensions, read
                                         through a pool of the schema plus the registry
A key whose value cannot be read prints `<error: ...>`.
"""
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def pool_of(files):
    """A DescriptorPool of FileDescriptorProtos (added in dependency order)."""
    pool = descriptor_pool.DescriptorPool()
    by_name = {f.name: f for f in files}
    added = set()

    def add(f):
        if f.name in added:
            return
        added.add(f.name)
        for d in f.dependency:
            if d in by_name:
                add(by_name[d])
        pool.Add(f)

    for f in files:
        add(f)
    factory = message_factory.MessageFactory(pool)
    factory.GetMessages(sorted(added))

    def register(exts):
        for e in exts:
            factory.GetPrototype(e.containing_type).RegisterExtension(e)

    def walk(msg):
        register(msg.extensions)
        for n in msg.nested_types:
            walk(n)

    for name in added:
        fd = pool.FindFileByName(name)
        register(fd.extensions_by_name.values())
        for m in fd.message_types_by_name.values():
            walk(m)
    return pool, factory


def parse_trace(pool, factory, data):
    trace = factory.GetPrototype(pool.FindMessageTypeByName("perfetto.protos.Trace"))()
    trace.ParseFromString(data)
    return trace


def emit(key, read):
    try:
        value = read()
    except Exception as e:  # noqa: BLE001 - reported as the value, the test fails on it
        value = "<error: %s: %s>" % (type(e).__name__, e)
        print("%s\t%s" % (key, value))
        return
    print("%s\t%r" % (key, value))


def main():
    schema_pb, registry_pb, trace_pb = sys.argv[1:4]
    schema = descriptor_pb2.FileDescriptorSet()
    schema.ParseFromString(open(schema_pb, "rb").read())
    registry = descriptor_pb2.FileDescriptorSet()
    registry.ParseFromString(open(registry_pb, "rb").read())
    data = open(trace_pb, "rb").read()

    pool, factory = pool_of(list(schema.file))
    first = parse_trace(pool, factory, data).packet[0]
    emit("first.extension_descriptor.file_name",
         lambda: first.extension_descriptor.file_name if first.HasField("extension_descriptor") else "<none>")

    # Schema + the set embedded in the trace: my_app extensions by full name.
    pool, factory = pool_of(list(schema.file) + list(first.extension_descriptor.extension_set.file))
    te = parse_trace(pool, factory, data).packet[1].track_event
    ext = lambda n: te.Extensions[pool.FindExtensionByName(n)]  # noqa: E731
    emit("trace:my_app.Mood.MOOD_BUSY", lambda: pool.FindEnumTypeByName("my_app.Mood").values_by_name["MOOD_BUSY"].number)
    emit("trace:my_app.MyEvent.custom_string", lambda: ext("my_app.MyEvent.custom_string"))
    emit("trace:my_app.MyEvent.custom_counter", lambda: ext("my_app.MyEvent.custom_counter"))
    emit("trace:my_app.MyEvent.mood", lambda: ext("my_app.MyEvent.mood"))
    emit("trace:my_app.MyEvent.request.url", lambda: ext("my_app.MyEvent.request").url)
    emit("trace:my_app.MyEvent.request.status_code", lambda: ext("my_app.MyEvent.request").status_code)
    emit("trace:my_app.MyEvent.retry_delays_ms", lambda: list(ext("my_app.MyEvent.retry_delays_ms")))

    # Schema + the registry: every test_extensions.proto extension by full name.
    names = {s.name for s in schema.file}
    pool, factory = pool_of(list(schema.file) + [f for f in registry.file if f.name not in names])
    pkt = parse_trace(pool, factory, data).packet[2]
    te = pkt.track_event
    e = lambda msg, n: msg.Extensions[pool.FindExtensionByName("perfetto.protos." + n)]  # noqa: E731
    nested = lambda: e(te, "nested_message_extension_for_testing")  # noqa: E731
    emit("registry:string_extension_for_testing", lambda: e(te, "string_extension_for_testing"))
    emit("registry:int_extension_for_testing", lambda: list(e(te, "int_extension_for_testing")))
    emit("registry:omitted_extension_for_testing", lambda: e(te, "omitted_extension_for_testing"))
    emit("registry:nested_message_extension_for_testing.child_field_for_testing",
         lambda: nested().child_field_for_testing)
    emit("registry:nested_message_extension_for_testing.debug_annotations",
         lambda: [(a.name, a.int_value) for a in nested().debug_annotations])
    emit("registry:uint_extension_for_testing", lambda: e(te, "uint_extension_for_testing"))
    emit("registry:string_extension_for_testing2", lambda: e(te, "string_extension_for_testing2"))
    emit("registry:enum_extension_for_testing", lambda: e(te, "enum_extension_for_testing"))
    emit("registry:packed_extension_for_testing", lambda: list(e(te, "packed_extension_for_testing")))
    emit("registry:interned_extension_for_testing",
         lambda: [(n.iid, n.name) for n in e(pkt.interned_data, "interned_extension_for_testing")])
    emit("registry:packet_extension_for_testing", lambda: e(pkt, "packet_extension_for_testing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
