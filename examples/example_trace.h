/*
 * example_trace.h - writes the example's packets into any trace file (a
 * real file in example.c, memory in example_test.c).
 */
#ifndef EXAMPLE_TRACE_H
#define EXAMPLE_TRACE_H

#include <stdint.h>

#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/trace_file.h"

/* The ExtensionDescriptor of my_events.proto: goes first. */
void example_write_descriptor_packet(tracec_trace_file *f);
/* A thread track, uuid 0x1234. */
void example_write_track(tracec_trace_file *f);
/* A slice begin (with a name and two debug annotations) or end (name NULL). */
void example_write_slice(tracec_trace_file *f, uint64_t ts, perfetto_protos_TrackEvent_Type type,
                         const char *name);
/* An instant my_app.MyEvent with every custom field. */
void example_write_my_event(tracec_trace_file *f, uint64_t ts);
/* The whole example trace: descriptor, track, slice begin, MyEvent, slice end. */
void example_write_trace(tracec_trace_file *f);

#endif
