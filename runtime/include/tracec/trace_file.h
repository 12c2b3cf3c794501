/*
 * tracec/trace_file.h - write a Perfetto trace file (or a trace in memory).
 *
 * A trace file is a sequence of `Trace.packet` records: 0x0A, a length, and
 * the TracePacket bytes.  Packets are written with the generated writers:
 *
 *     tracec_trace_file *f;
 *     if (tracec_trace_file_open("out.pftrace", &f) != TRACEC_STATUS_SUCCESS) ...
 *     perfetto_protos_TracePacket pkt;
 *     tracec_trace_file_begin_packet(f, &pkt.msg);
 *     perfetto_protos_TracePacket_set_timestamp(&pkt, 42);
 *     ...
 *     tracec_status_t s = tracec_trace_file_end_packet(f, &pkt.msg);
 *     ...
 *     tracec_trace_file_close(f);
 *
 * The file writer keeps whole packets in memory and writes them out in
 * large blocks; a packet that fails (a nesting error, a message too large,
 * out of memory) is dropped whole and counted, and the packets accepted
 * before it are kept.  One thread at a time per tracec_trace_file.
 */
#ifndef TRACEC_TRACE_FILE_H
#define TRACEC_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/status.h"
#include "tracec/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_trace_file tracec_trace_file;

/*
 * Creates (truncates) `path` and returns a writer for it in *out (owned by
 * the caller; release it with tracec_trace_file_close).  IO_ERROR with errno
 * set if the file cannot be created.
 */
tracec_status_t tracec_trace_file_open(const char *path, tracec_trace_file **out);

/*
 * A trace kept in memory only: read it with tracec_trace_file_data().
 */
tracec_status_t tracec_trace_file_open_memory(tracec_trace_file **out);

/* Starts a TracePacket; `packet` is the `msg` member of a generated TracePacket writer. */
void tracec_trace_file_begin_packet(tracec_trace_file *f, tracec_msg *packet);

/*
 * Finishes the packet begun last.  SUCCESS if it was accepted; otherwise the
 * packet was dropped (counted in tracec_trace_file_dropped) and the status
 * says why.
 */
tracec_status_t tracec_trace_file_end_packet(tracec_trace_file *f, tracec_msg *packet);

/* Appends `size` bytes that are already whole Trace records (0x0A, length, packet). */
tracec_status_t tracec_trace_file_append_raw(tracec_trace_file *f, const void *data, size_t size);

/* Writes every accepted packet to the file (no-op for memory traces). */
tracec_status_t tracec_trace_file_flush(tracec_trace_file *f);

/*
 * The accepted bytes of a memory trace; *size receives their count.  The
 * pointer stays valid until the next write or close.  NULL for file traces.
 */
const uint8_t *tracec_trace_file_data(const tracec_trace_file *f, size_t *size);

/* Number of packets accepted / dropped so far. */
uint64_t tracec_trace_file_packets(const tracec_trace_file *f);
uint64_t tracec_trace_file_dropped(const tracec_trace_file *f);

/* Flushes, closes and frees `f` (NULL is fine); returns the first error of the flush or close. */
tracec_status_t tracec_trace_file_close(tracec_trace_file *f);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TRACE_FILE_H */
