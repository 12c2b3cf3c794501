/*
 * tracec/trace_file.h - write a Perfetto trace file (or a trace in memory).
 *
 * A trace file is a sequence of `Trace.packet` records: 0x0A, a length, and
 * the TracePacket bytes.  Packets are written with the generated writers:
 *
 *     tracec_trace_file *f;
 *     if (tracec_trace_file_open("out.pftrace", &f) != TRACEC_STATUS_SUCCESS) ...
 *
 *     tracec_writer w;                      // the packet's writer, on your stack
 *     perfetto_protos_TracePacket pkt;
 *     tracec_trace_file_begin_packet(f, &w, &pkt.msg);
 *     perfetto_protos_TracePacket_set_timestamp(&pkt, 42);
 *     ...
 *     tracec_status_t s = tracec_trace_file_end_packet(f, &w, &pkt.msg);
 *     ...
 *     tracec_trace_file_close(f);
 *
 * Keep the writer a local variable of the function that writes the packet:
 * the compiler then holds its write pointer in a register and each field
 * costs a bounds check and its stores.
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
 * set if the file cannot be created; errno EBUSY when another trace writer
 * (of any process: an flock) has the regular file `path` open, which is
 * then left as it is.
 */
tracec_status_t tracec_trace_file_open(const char *path, tracec_trace_file **out) TRACEC_I_WARN_UNUSED;

/*
 * A trace kept in memory only: read it with tracec_trace_file_data().
 */
tracec_status_t tracec_trace_file_open_memory(tracec_trace_file **out) TRACEC_I_WARN_UNUSED;

/* ---- internals the inline packet functions call (do not use directly) ---- */
uint8_t *tracec_i_trace_file_window(tracec_trace_file *f, uint8_t **end);
bool tracec_i_trace_file_grow(tracec_writer *w, size_t need);
tracec_status_t tracec_i_trace_file_commit(tracec_trace_file *f, uint8_t *base, uint8_t *ptr,
                                           tracec_status_t status);
/* The room for whole records written by hand one after the other, [return, *end), when no packet is open
   (else NULL: then the writer path).  Ended by tracec_i_trace_file_append_n(). */
uint8_t *tracec_i_trace_file_span(tracec_trace_file *f, uint8_t **end);
/* Accepts the `n` whole records written from tracec_i_trace_file_span()'s pointer up to `end`. */
tracec_status_t tracec_i_trace_file_append_n(tracec_trace_file *f, uint8_t *end, uint64_t n);
/* Frees `f` and closes its fd without writing what it holds: a fork child's copy of its parent's trace
   (the parent writes those bytes itself). */
void tracec_i_trace_file_forget(tracec_trace_file *f);
/* The trace's size limit (a session's max_file_size): a write that would take the trace past
   max_size - reserve bytes is refused (LIMIT_EXCEEDED; its packets count in tracec_trace_file_dropped) and
   makes the file full: every later write is refused too, so the trace has no hole, until
   tracec_i_trace_file_tail(f, true) lets the writes that follow (the statistics) use the reserve, up to
   max_size, until tracec_i_trace_file_tail(f, false); a tail write that takes some of the reserve makes
   the file full too. */
void tracec_i_trace_file_limit(tracec_trace_file *f, uint64_t max_size, uint64_t reserve);
void tracec_i_trace_file_tail(tracec_trace_file *f, bool on);
bool tracec_i_trace_file_full(const tracec_trace_file *f);
/* errno of the first write to the file that failed (every later write fails too); 0 while none did. */
int tracec_i_trace_file_errno(const tracec_trace_file *f);

/* Opens a record on `w` for whole Trace fields written by hand (no message open), ended with
   tracec_i_trace_file_commit(f, w->base, w->ptr, w->status). */
static inline void tracec_i_trace_file_begin_raw(tracec_trace_file *f, tracec_writer *w) {
    uint8_t *end;
    uint8_t *p = tracec_i_trace_file_window(f, &end);
    w->base = p;
    w->ptr = p;
    w->end = end;
    w->grow = tracec_i_trace_file_grow;
    w->sink = f;
    w->status = p ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_CLOSED;
    w->top = TRACEC_I_ROOT;
}

/*
 * Starts a TracePacket written through `w` (caller-owned, uninitialised)
 * into `packet`, the `msg` member of a generated TracePacket writer.
 */
static inline void tracec_trace_file_begin_packet(tracec_trace_file *f, tracec_writer *w,
                                                  tracec_msg *packet) {
    tracec_i_trace_file_begin_raw(f, w);
    tracec_writer_begin_packet(w, packet);
}

/*
 * Finishes the packet begun last on `w`.  SUCCESS if it was accepted;
 * otherwise the packet was dropped (counted in tracec_trace_file_dropped)
 * and the status says why.
 */
static inline tracec_status_t tracec_trace_file_end_packet(tracec_trace_file *f, tracec_writer *w,
                                                          tracec_msg *packet) {
    tracec_status_t st = tracec_writer_end_packet(w, packet); /* first: widening a length moves ptr */
    return tracec_i_trace_file_commit(f, w->base, w->ptr, st);
}

/*
 * Appends `size` bytes that are already whole Trace fields (normally
 * records 0x0A, length, packet: a buffer delivery's payloads); each
 * Trace.packet among them counts in tracec_trace_file_packets().  Data
 * that is not a sequence of whole fields (truncated, a bad tag or wire
 * type) is INVALID_ARGUMENT and nothing is appended; BAD_STATE while a
 * packet is open; OUT_OF_MEMORY, IO_ERROR.
 */
tracec_status_t tracec_trace_file_append_raw(tracec_trace_file *f, const void *data, size_t size);

/* Writes every accepted packet to the file (no-op for memory traces). */
tracec_status_t tracec_trace_file_flush(tracec_trace_file *f);

/*
 * The accepted bytes of a memory trace; *size receives their count.  The
 * pointer stays valid until the next write or close.  NULL for file traces.
 */
const uint8_t *tracec_trace_file_data(const tracec_trace_file *f, size_t *size);

/* Packets accepted so far (ended with SUCCESS, and those appended by
   tracec_trace_file_append_raw) / packets begun and dropped. */
uint64_t tracec_trace_file_packets(const tracec_trace_file *f);
uint64_t tracec_trace_file_dropped(const tracec_trace_file *f);

/* Flushes, closes and frees `f` (NULL is fine); returns the first error of the flush or close (IO_ERROR: errno
   is that of the first write that failed, e.g. EPIPE for a pipe whose reader went away, or of the close). */
tracec_status_t tracec_trace_file_close(tracec_trace_file *f);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TRACE_FILE_H */
