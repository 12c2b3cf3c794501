"""Reads a trace written by `tracec record` with python3-protobuf (an oracle independent of tracec's decoder)
and checks where the sequences of provider NAME (its own and its threads': every packet with its trusted_pid)
are marked previous_packet_dropped.  The provider wrote
instants with a debug annotation "i" (0, 1, 2, ...: record_provider indexed), so a gap in "i" between two
saved instants of the sequence is a loss.  Prints one line:
  events=E gaps=G flagged=F flagged_at_gap=A flagged_elsewhere=X first_flag=I last_event=L
(flagged: packets of the sequence with previous_packet_dropped; flagged_at_gap: instants flagged that follow
a gap, the first instant saved after index 0 was lost included; flagged_elsewhere: any other flagged packet;
first_flag: the "i" of the first flagged instant, -1 if none; last_event: the last "i" saved).
With a fourth argument `list`, prints instead one line per packet of the sequence: its timestamp and 1 if it
is marked (0 if not).
Usage: check_loss_marks.py DESCRIPTOR_SET TRACE NAME [list]"""
import sys

import os

from google.protobuf import descriptor_pb2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "generator", "codegen"))
from descriptor_pool_read import parse_trace, pool_of  # noqa: E402

fds = descriptor_pb2.FileDescriptorSet()
with open(sys.argv[1], "rb") as f:
    fds.ParseFromString(f.read())
with open(sys.argv[2], "rb") as f:
    trace = parse_trace(*pool_of(list(fds.file)), f.read())

pid = None
for p in trace.packet:
    ev = p.track_event
    title = "provider " + sys.argv[3]
    if p.HasField("track_event") and (ev.name == title or ev.name.startswith(title + " (")):
        pid = {a.name: a.int_value for a in ev.debug_annotations}["pid"]
if pid is None:
    sys.exit("no provider " + sys.argv[3])


def mine(p):
    return p.HasField("trusted_pid") and p.trusted_pid == pid and p.trusted_packet_sequence_id != 1


if len(sys.argv) > 4 and sys.argv[4] == "list":
    for p in trace.packet:
        if mine(p):
            print("%d %d" % (p.timestamp, int(p.HasField("previous_packet_dropped") and p.previous_packet_dropped)))
    sys.exit(0)

events = gaps = flagged = at_gap = elsewhere = 0
prev, first_flag = -1, -1
for p in trace.packet:
    if not mine(p):
        continue
    mark = p.HasField("previous_packet_dropped") and p.previous_packet_dropped
    flagged += mark
    ann = {a.name: a.int_value for a in p.track_event.debug_annotations} if p.HasField("track_event") else {}
    if "i" not in ann:
        elsewhere += mark
        continue
    i = ann["i"]
    events += 1
    gap = i != prev + 1
    gaps += gap
    if mark and gap:
        at_gap += 1
    elif mark:
        elsewhere += 1
    if mark and first_flag < 0:
        first_flag = i
    prev = i
print("events=%d gaps=%d flagged=%d flagged_at_gap=%d flagged_elsewhere=%d first_flag=%d last_event=%d"
      % (events, gaps, flagged, at_gap, elsewhere, first_flag, prev))
