#!/usr/bin/env python3
"""The python3-protobuf oracle of the track-event tests: reads a .pftrace
written through tracec/track_event.h and checks the invariants a Perfetto
reader relies on.  Prints one `problem: ...` line per violation (exit 1) or
`ok` (exit 0), then a summary, one `key<TAB>value` a line:

    check_trace.py SCHEMA_PB TRACE [--allow-open] [--recorder]
    check_trace.py --strip-recorder-summaries TRACE
    check_trace.py SCHEMA_PB TRACE --tracks

SCHEMA_PB  protoc --include_imports --descriptor_set_out of
           perfetto/trace/trace.proto and my_events.proto
--allow-open  slices left open at the end are not a problem (a CIRCULAR
           trace may have lost their begins or ends)
--recorder  the trace is `tracec record`'s: the packets of the recorder's
           own sequence (1: its track, its per-provider summaries, its
           trace_stats) are not the program's, and are not checked or counted;
           the provider's sequence, which starts with its process descriptor,
           needs CLEARED only and is not counted in `sequences`
--strip-recorder-summaries  rewrites TRACE (a `tracec record` trace)
           without the recorder's per-provider summary instants (track events
           on sequence 1), byte for byte otherwise: the trace processor then
           shows the program's slices only; trace_stats stays
--tracks   prints each TrackDescriptor instead (packet index, sequence,
           uuid, parent, process or thread, counter, name), one a line: what
           a test prints when the trace processor reports a track error

Invariants:
  * the first packet of each trusted_packet_sequence_id sets
    SEQ_INCREMENTAL_STATE_CLEARED (and first_packet_on_sequence);
  * every iid used (name_iid, category_iids, debug annotation name_iid) is
    defined earlier on the same sequence, and the packet that uses it sets
    SEQ_NEEDS_INCREMENTAL_STATE;
  * as Perfetto's reader does, a packet with previous_packet_dropped and
    without SEQ_INCREMENTAL_STATE_CLEARED makes the sequence's state invalid
    until a packet sets CLEARED: no packet may carry interned_data or set
    SEQ_NEEDS_INCREMENTAL_STATE meanwhile (the reader would skip it);
  * every track_uuid used has a TrackDescriptor somewhere in the trace, and
    counter events are on tracks whose descriptor has `counter`;
  * per track, slice ends never outnumber begins (and, unless
    --allow-open, every slice is closed);
  * an event's timestamp on a sequence-scoped clock (its own
    timestamp_clock_id, else its sequence's TracePacketDefaults) follows a
    ClockSnapshot of that clock on the sequence.
Summary keys: sequences, packets, events:<TYPE>, names (sorted, |-joined),
categories, dropped_flags, interned_event_names (EventName entries of the
InternedData), inline_names (events with an inline name), clocks
(the clocks of the events' timestamps, 0 for none: for a sequence-scoped
clock, the other clock of the ClockSnapshot that declared it), incremental
(events whose timestamp is a delta on an incremental clock), ext:<field>
(typed extension fields seen).
"""
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


RECORDER_SEQ = 1  # the sequence of `tracec record`'s own packets


def varint(buf, pos):
    v, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def strip_recorder_summaries(path):
    """Copies the Trace's packets (field 1) but the recorder's track events; 0 when done."""
    with open(path, "rb") as f:
        buf = f.read()
    out, pos, stripped = bytearray(), 0, 0
    while pos < len(buf):
        start = pos
        key, pos = varint(buf, pos)
        if key != (1 << 3 | 2):
            print("problem: offset %d: not a TracePacket field (key %d)" % (start, key))
            return 1
        n, pos = varint(buf, pos)
        body, end = buf[pos:pos + n], pos + n
        pos = end
        seq, has_event, q = 0, False, 0
        while q < len(body):  # the packet's top-level fields
            k, q = varint(body, q)
            wt, field = k & 7, k >> 3
            if wt == 0:
                v, q = varint(body, q)
                if field == 10:
                    seq = v
            elif wt == 2:
                ln, q = varint(body, q)
                q += ln
                has_event |= field == 11
            elif wt == 1:
                q += 8
            elif wt == 5:
                q += 4
            else:
                print("problem: offset %d: wire type %d" % (start, wt))
                return 1
        if seq == RECORDER_SEQ and has_event:
            stripped += 1
            continue
        out += buf[start:end]
    with open(path, "wb") as f:
        f.write(out)
    print("stripped\t%d" % stripped)
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--strip-recorder-summaries":
        return strip_recorder_summaries(sys.argv[2])
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    allow_open = "--allow-open" in sys.argv
    recorder = "--recorder" in sys.argv
    fds = descriptor_pb2.FileDescriptorSet()
    with open(args[0], "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    classes = message_factory.MessageFactory(pool).GetMessages([fd.name for fd in fds.file])
    trace_cls = classes["perfetto.protos.Trace"]
    trace = trace_cls()
    with open(args[1], "rb") as f:
        trace.ParseFromString(f.read())
    if "--tracks" in sys.argv:
        for i, p in enumerate(trace.packet):
            if not p.HasField("track_descriptor"):
                continue
            d = p.track_descriptor
            who = ""
            if d.HasField("process"):
                who = "process %d" % d.process.pid
            if d.HasField("thread"):
                who = "thread %d/%d" % (d.thread.pid, d.thread.tid)
            print("packet %d seq %d uuid %d parent %s %s%s name %r" % (
                i, p.trusted_packet_sequence_id, d.uuid,
                d.parent_uuid if d.HasField("parent_uuid") else "-", who,
                " counter" if d.HasField("counter") else "",
                d.name if d.HasField("name") else (d.thread.thread_name if d.HasField("thread") else "")))
        return 0

    problems = []
    seqs = {}  # seq id -> {"names": {}, "cats": {}, "dbg": {}}
    tracks = {}  # uuid -> is counter
    used_tracks = []  # (uuid, is counter event)
    open_slices = {}
    events = {}
    names, cats = set(), set()
    dropped = 0
    interned_names = 0  # EventName entries in InternedData
    inline_names = 0  # events whose name is written inline
    ext = {}
    clocks = set()
    incremental = 0
    invalid = set()  # sequences whose incremental state the reader holds invalid
    for i, p in enumerate(trace.packet):
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor.HasField("counter")
    for i, p in enumerate(trace.packet):
        seq = p.trusted_packet_sequence_id
        flags = p.sequence_flags
        if recorder and (seq == RECORDER_SEQ or not seq):
            continue
        if p.previous_packet_dropped:
            dropped += 1
        if seq and seq not in seqs:
            # the recorder client's own sequence (the provider's: its process descriptor) sets CLEARED only
            provider_seq = recorder and p.track_descriptor.HasField("process")
            if not flags & 1 or not (p.first_packet_on_sequence or provider_seq):
                problems.append("packet %d: first packet of sequence %d lacks CLEARED/first_packet_on_sequence" % (i, seq))
            seqs[seq] = {"names": {}, "cats": {}, "dbg": {}, "track": None, "clock": 0, "scoped": {},
                         "provider": provider_seq}
        st = seqs.get(seq)
        if flags & 1 and st is not None:
            st["names"].clear(), st["cats"].clear(), st["dbg"].clear()
            st["track"] = None  # TracePacketDefaults are incremental state too
            st["clock"] = 0
            invalid.discard(seq)
        elif p.previous_packet_dropped and seq:
            invalid.add(seq)
        if seq in invalid and (flags & 2 or p.HasField("interned_data")):
            problems.append("packet %d: sequence %d lost a packet and was not cleared since: the reader skips this" % (i, seq))
        if st is not None and p.trace_packet_defaults.HasField("timestamp_clock_id"):
            st["clock"] = p.trace_packet_defaults.timestamp_clock_id
        if st is not None and p.HasField("clock_snapshot"):
            cs = p.clock_snapshot.clocks
            for c in cs:
                if 64 <= c.clock_id < 128:
                    others = [o.clock_id for o in cs if not 64 <= o.clock_id < 128]
                    st["scoped"][c.clock_id] = (others[0] if others else 0, c.is_incremental)
        if st is not None and p.trace_packet_defaults.track_event_defaults.HasField("track_uuid"):
            st["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            d = p.interned_data
            for e in d.event_names:
                st["names"][e.iid] = e.name
                interned_names += 1
            for e in d.event_categories:
                st["cats"][e.iid] = e.name
            for e in d.debug_annotation_names:
                st["dbg"][e.iid] = e.name
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        cid = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (st["clock"] if st else 0)
        if 64 <= cid < 128:
            if st is None or cid not in st["scoped"]:
                problems.append("packet %d: timestamp on clock %d, not declared on sequence %d" % (i, cid, seq))
            else:
                incremental += st["scoped"][cid][1]
                cid = st["scoped"][cid][0]
        clocks.add(cid)
        tname = te.DESCRIPTOR.fields_by_number[9].enum_type.values_by_number[te.type].name
        events[tname] = events.get(tname, 0) + 1
        uses_iid = False

        def resolve(table, iid, what):
            if st is None or iid not in st[table]:
                problems.append("packet %d: %s iid %d undefined on sequence %d" % (i, what, iid, seq))
                return "?"
            return st[table][iid]

        if te.HasField("name_iid"):
            uses_iid = True
            names.add(resolve("names", te.name_iid, "name"))
        elif te.HasField("name"):
            names.add(te.name)
            inline_names += 1
        for c in te.category_iids:
            uses_iid = True
            cats.add(resolve("cats", c, "category"))
        for c in te.categories:
            cats.add(c)
        for da in te.debug_annotations:
            if da.HasField("name_iid"):
                uses_iid = True
                resolve("dbg", da.name_iid, "debug annotation name")
        if uses_iid and not flags & 2:
            problems.append("packet %d: uses iids without SEQ_NEEDS_INCREMENTAL_STATE" % i)
        is_counter = tname == "TYPE_COUNTER"
        u = te.track_uuid if te.HasField("track_uuid") else (st or {}).get("track")
        if u is None:
            problems.append("packet %d: event without track_uuid and no default track on sequence %d" % (i, seq))
        else:
            if u not in tracks:
                problems.append("packet %d: track %d has no descriptor" % (i, u))
            elif is_counter and not tracks[u]:
                problems.append("packet %d: counter on track %d, which is not a counter track" % (i, u))
            if tname == "TYPE_SLICE_BEGIN":
                open_slices[u] = open_slices.get(u, 0) + 1
            elif tname == "TYPE_SLICE_END":
                if open_slices.get(u, 0) == 0 and not allow_open:
                    problems.append("packet %d: slice end without a begin on track %d" % (i, u))
                open_slices[u] = max(0, open_slices.get(u, 0) - 1)
        for fd, value in te.ListFields():
            if fd.is_extension:
                ext[fd.name] = value
    if not allow_open:
        for u, n in open_slices.items():
            if n:
                problems.append("track %d: %d slices left open" % (u, n))
    for pr in problems[:50]:
        print("problem: " + pr)
    if not problems:
        print("ok")
    print("sequences\t%d" % sum(1 for v in seqs.values() if not v["provider"]))
    print("packets\t%d" % len(trace.packet))
    for k in sorted(events):
        print("events:%s\t%d" % (k, events[k]))
    print("names\t%s" % "|".join(sorted(names)))
    print("categories\t%s" % "|".join(sorted(cats)))
    print("dropped_flags\t%d" % dropped)
    print("interned_event_names\t%d" % interned_names)
    print("inline_names\t%d" % inline_names)
    print("clocks\t%s" % "|".join(str(c) for c in sorted(clocks)))
    print("incremental\t%d" % incremental)
    for k in sorted(ext):
        print("ext:%s\t%s" % (k, ext[k]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
