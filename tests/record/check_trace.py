"""Reads a trace written by `tracec record` with python3-protobuf (an oracle
independent of tracec's decoder) and prints one line per sequence:
  seq=N packets=P events=E pid=PID uid=UID
one line per sequence with slice events:
  slices seq=N begins=B ends=E
and one line per recorder summary:
  summary name=NAME produced=P dropped=D delivered=X ended_early=B timed_out=T corrupt=C
Usage: check_trace.py DESCRIPTOR_SET TRACE"""
import sys
from collections import defaultdict

import os

from google.protobuf import descriptor_pb2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "generator", "codegen"))
from descriptor_pool_read import parse_trace, pool_of  # noqa: E402

fds = descriptor_pb2.FileDescriptorSet()
with open(sys.argv[1], "rb") as f:
    fds.ParseFromString(f.read())
with open(sys.argv[2], "rb") as f:
    trace = parse_trace(*pool_of(list(fds.file)), f.read())

packets = defaultdict(int)
events = defaultdict(int)
begins = defaultdict(int)
ends = defaultdict(int)
pids = {}
uids = {}
for p in trace.packet:
    seq = p.trusted_packet_sequence_id
    packets[seq] += 1
    if p.HasField("track_event"):
        events[seq] += 1
        ev = p.track_event
        if ev.type == 1:  # TYPE_SLICE_BEGIN
            begins[seq] += 1
        elif ev.type == 2:  # TYPE_SLICE_END
            ends[seq] += 1
        if ev.name.startswith("provider "):
            ann = {a.name: a.int_value for a in ev.debug_annotations}
            print("summary name=%s produced=%d dropped=%d delivered=%d ended_early=%d timed_out=%d corrupt=%d seq=%d"
                  % (ev.name.split(" ")[1], ann["produced"], ann["dropped"], ann["delivered"],
                     ann["ended_early"], ann["timed_out"], ann["corrupt"], ann["sequence_id"]))
    if p.HasField("trusted_pid"):
        pids[seq] = p.trusted_pid
    if p.HasField("trusted_uid"):
        uids[seq] = p.trusted_uid
for seq in sorted(packets):
    print("seq=%d packets=%d events=%d pid=%d uid=%d" % (seq, packets[seq], events[seq], pids.get(seq, 0),
                                                         uids.get(seq, -1)))
for seq in sorted(set(begins) | set(ends)):
    print("slices seq=%d begins=%d ends=%d" % (seq, begins[seq], ends[seq]))
