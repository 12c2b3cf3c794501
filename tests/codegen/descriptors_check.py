#!/usr/bin/env python3
"""codegen_descriptors: the embedded descriptors are right, checked by an
independent implementation (python3-protobuf).

    descriptors_check.py --protoc PROTOC --program DESCRIPTOR_TRACE --src SOURCE_DIR --gpb INCLUDE

1. descriptor_trace (linked against static libraries of generated code, with
   --gc-sections) writes a trace and dumps its compile-time registry.
2. The registry holds my_events.proto and test_extensions.proto (and the
   Perfetto schema's own files), each once.
3. The embedded FileDescriptorProtos equal what protoc --descriptor_set_out
   writes for the same files (source info stripped).
4. The trace's first packet is my_events.proto's ExtensionDescriptor.  A
   DescriptorPool of our schema plus that embedded set parses the trace and
   reads every my_app extension back by its full name.
5. A DescriptorPool of our schema plus the registry's sets reads every
   test_extensions.proto extension back by its full name.
"""
import argparse
import os
import subprocess
import sys
import tempfile

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


def main():
    ap = argparse.ArgumentParser()
    for a in ("--protoc", "--program", "--src", "--gpb"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
        print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else "\n  " + str(detail)))

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([args.program, tmp], check=True)
        schema_pb = os.path.join(tmp, "schema.pb")
        ref_pb = os.path.join(tmp, "ref.pb")
        incs = ["-I" + os.path.join(args.src, "protos"), "-I" + args.gpb]
        subprocess.run([args.protoc, "--include_imports", "--descriptor_set_out=" + schema_pb] + incs +
                       ["perfetto/trace/trace.proto"], check=True)
        subprocess.run([args.protoc, "--descriptor_set_out=" + ref_pb, "-I" + os.path.join(args.src, "examples"),
                        "-I" + os.path.join(args.src, "test_extensions")] + incs +
                       ["my_events.proto", "test_extensions.proto"], check=True)
        schema = descriptor_pb2.FileDescriptorSet()
        schema.ParseFromString(open(schema_pb, "rb").read())
        ref = descriptor_pb2.FileDescriptorSet()
        ref.ParseFromString(open(ref_pb, "rb").read())
        ref_by_name = {f.name: f for f in ref.file}

        # 2. The registry.
        registry = descriptor_pb2.FileDescriptorSet()
        registry.ParseFromString(open(os.path.join(tmp, "registry.pb"), "rb").read())
        names = [f.name for f in registry.file]
        check("registry (static libraries, --gc-sections) holds my_events.proto and test_extensions.proto",
              "my_events.proto" in names and "test_extensions.proto" in names, names)
        check("no source info in any embedded descriptor",
              not any(f.HasField("source_code_info") for f in registry.file))

        # 3. Same descriptors as protoc's.
        for name in ("my_events.proto", "test_extensions.proto"):
            ours = [f for f in registry.file if f.name == name][0]
            check("embedded %s equals protoc --descriptor_set_out" % name, ours == ref_by_name[name],
                  "ours:\n%s\nprotoc:\n%s" % (ours, ref_by_name[name]))

        trace_bytes = open(os.path.join(tmp, "trace.pftrace"), "rb").read()
        _, plain = pool_of(list(schema.file))
        Trace = plain.GetPrototype(plain.pool.FindMessageTypeByName("perfetto.protos.Trace"))
        trace = Trace()
        trace.ParseFromString(trace_bytes)
        first = trace.packet[0]
        check("the descriptor packet goes first", first.HasField("extension_descriptor") and
              first.extension_descriptor.file_name == "my_events.proto", first)
        embedded = list(first.extension_descriptor.extension_set.file)

        # 4. Schema + the set embedded in the trace: my_app extensions by full name.
        pool, factory = pool_of(list(schema.file) + embedded)
        Trace = factory.GetPrototype(pool.FindMessageTypeByName("perfetto.protos.Trace"))
        trace = Trace()
        trace.ParseFromString(trace_bytes)
        te = trace.packet[1].track_event
        ext = lambda n: te.Extensions[pool.FindExtensionByName(n)]  # noqa: E731
        got = {
            "my_app.MyEvent.custom_string": ext("my_app.MyEvent.custom_string"),
            "my_app.MyEvent.custom_counter": ext("my_app.MyEvent.custom_counter"),
            "my_app.MyEvent.mood": ext("my_app.MyEvent.mood"),
            "my_app.MyEvent.request.url": ext("my_app.MyEvent.request").url,
            "my_app.MyEvent.request.status_code": ext("my_app.MyEvent.request").status_code,
            "my_app.MyEvent.retry_delays_ms": list(ext("my_app.MyEvent.retry_delays_ms")),
        }
        want = {
            "my_app.MyEvent.custom_string": "custom", "my_app.MyEvent.custom_counter": -42,
            "my_app.MyEvent.mood": pool.FindEnumTypeByName("my_app.Mood").values_by_name["MOOD_BUSY"].number,
            "my_app.MyEvent.request.url": "https://example.org/", "my_app.MyEvent.request.status_code": 404,
            "my_app.MyEvent.retry_delays_ms": [10, 20],
        }
        for k in want:
            check("trace-embedded descriptor: %s" % k, got[k] == want[k], "got %r, want %r" % (got[k], want[k]))

        # 5. Schema + the registry: every test_extensions.proto extension by full name.
        pool, factory = pool_of(list(schema.file) + [f for f in registry.file if f.name not in
                                                      {s.name for s in schema.file}])
        Trace = factory.GetPrototype(pool.FindMessageTypeByName("perfetto.protos.Trace"))
        trace = Trace()
        trace.ParseFromString(trace_bytes)
        pkt = trace.packet[2]
        te = pkt.track_event
        e = lambda msg, n: msg.Extensions[pool.FindExtensionByName("perfetto.protos." + n)]  # noqa: E731
        nested = e(te, "nested_message_extension_for_testing")
        got = {
            "string_extension_for_testing": e(te, "string_extension_for_testing"),
            "int_extension_for_testing": list(e(te, "int_extension_for_testing")),
            "omitted_extension_for_testing": e(te, "omitted_extension_for_testing"),
            "nested_message_extension_for_testing.child_field_for_testing": nested.child_field_for_testing,
            "nested_message_extension_for_testing.debug_annotations":
                [(a.name, a.int_value) for a in nested.debug_annotations],
            "uint_extension_for_testing": e(te, "uint_extension_for_testing"),
            "string_extension_for_testing2": e(te, "string_extension_for_testing2"),
            "enum_extension_for_testing": e(te, "enum_extension_for_testing"),
            "packed_extension_for_testing": list(e(te, "packed_extension_for_testing")),
            "interned_extension_for_testing":
                [(n.iid, n.name) for n in e(pkt.interned_data, "interned_extension_for_testing")],
            "packet_extension_for_testing": e(pkt, "packet_extension_for_testing"),
        }
        want = {
            "string_extension_for_testing": "s1", "int_extension_for_testing": [7, -8],
            "omitted_extension_for_testing": "o",
            "nested_message_extension_for_testing.child_field_for_testing": "child",
            "nested_message_extension_for_testing.debug_annotations": [("arg1", 5)],
            "uint_extension_for_testing": 4000000000, "string_extension_for_testing2": "s2",
            "enum_extension_for_testing": 2, "packed_extension_for_testing": [-1, 0, 1],
            "interned_extension_for_testing": [(9, "interned")],
            "packet_extension_for_testing": "packet",
        }
        for k in want:
            check("registry descriptor: perfetto.protos.%s" % k, got[k] == want[k],
                  "got %r, want %r" % (got[k], want[k]))

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
