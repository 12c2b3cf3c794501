/*
 * tracec/provider.h - a trace provider in another process than the
 * recorder (`tracec record`): the Fuchsia provider protocol on Linux.
 * docs/record.md has the protocol and the shared buffer's layout.
 *
 *     tracec_provider *p;
 *     bool started;
 *     if (tracec_provider_register_sync("my-service", &started, &p) != TRACEC_STATUS_SUCCESS)
 *         return;                             // p is NULL: nothing to trace with
 *     ...
 *     tracec_provider_slice_begin(p, "draw");
 *     tracec_provider_slice_end(p);
 *     ...
 *     tracec_provider_unregister(p);          // or leave it to exit
 *
 * Registering starts one background thread that connects to the recorder's
 * socket ($TRACEC_RECORDER_SOCKET, else /tmp/tracec-UID/recorder.sock),
 * retrying every 50 ms while there is none, and answers the recorder:
 * Initialize maps the shared buffer the recorder sends, Start/Stop/Terminate
 * follow the provider rules of docs/record.md.  When the recorder goes away
 * the thread stops tracing, discards what was not saved, and waits for the
 * next recorder.
 *
 * Packets are written straight into the shared buffer (a buffer of the
 * buffer engine in the recorder's memfd) with the generated writers
 * (tracec_provider_begin_packet / end_packet); nothing is copied in the
 * provider.  Each thread writes with its own buffer writer, without a lock
 * shared with the other threads, and is its own packet sequence in the
 * trace (a process-local trusted_packet_sequence_id, appended to each of
 * its packets; the recorder maps it to one of the trace's).  While tracing
 * is off, begin costs one relaxed load and the packet's setters write
 * nothing.
 *
 * The provider is also the process's track-event recorder client
 * (tracec/track_event.h): while the recorder traces, track events go to
 * the recorder's session, one of the track-event session slots, in the
 * same shared buffer, each thread on sequences of its own.
 *
 * fork() without exec: the child's provider is off for good (the child has
 * no mapping of the parent's buffer); the child may not register again.
 */
#ifndef TRACEC_PROVIDER_H
#define TRACEC_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/abi/attributes.h"
#include "tracec/status.h"
#include "tracec/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_provider tracec_provider;

/* Environment variable naming the recorder's socket. */
#define TRACEC_RECORDER_SOCKET_ENV "TRACEC_RECORDER_SOCKET"

/*
 * RegisterProvider: returns at once with *out (owned by the caller, release
 * with tracec_provider_unregister); registration happens on the provider's
 * thread.  `name`: 1..100 chars of UTF-8 without control characters
 * (INVALID_ARGUMENT otherwise); one provider per process (BAD_STATE for a
 * second); OUT_OF_MEMORY, ERROR (no thread).  When the track-event layer's
 * recorder client runs already (tracec/track_event.h,
 * tracec_te_recorder_connect), it is that provider, under the name it
 * registered with, and *out is it (then the caller owns it).
 *
 * The thread connects only to a recorder it trusts: the socket's directory
 * must belong to this user (or root) and not be writable by group or
 * others, and the listening process must run as this user (or root,
 * SO_PEERCRED); a shared buffer must have its size sealed.  Anything else
 * is refused before a byte is sent, with one message on stderr, and counted
 * (tracec_provider_stats.refused).
 */
tracec_status_t tracec_provider_register(const char *name, tracec_provider **out) TRACEC_I_WARN_UNUSED;

/*
 * RegisterProviderSynchronously: also waits (up to 5 s) until a running
 * recorder has registered the provider, then sets *started to whether
 * tracing has already started (up to 1 s more for its Start).  With no
 * recorder, *started is false at once and the provider keeps trying to
 * connect in the background.  A recorder whose queue of connections is
 * full is busy, not absent: the wait goes on.  A provider that exits before
 * a recorder it found answered says so on stderr (none of its events
 * reached it).
 */
tracec_status_t tracec_provider_register_sync(const char *name, bool *started,
                                              tracec_provider **out) TRACEC_I_WARN_UNUSED;

/*
 * Registration with a configuration (tracec_provider_register and _sync are
 * this with only a name): the name, the categories the provider
 * writes (`tracec record --list` shows them; with `--categories` the
 * provider gets only the enabled ones), and whether to wait like
 * tracec_provider_register_sync (then *started is set; `started` may be
 * NULL otherwise).  Start from TRACEC_PROVIDER_REGISTRATION_INIT: `struct_size`
 * lets the struct grow.  INVALID_ARGUMENT: a bad name (also one with a
 * newline), or a bad category list (more than 100, one empty or over 100
 * chars, or with whitespace); otherwise as tracec_provider_register.
 */
typedef struct tracec_provider_registration {
    size_t struct_size;     /* sizeof(tracec_provider_registration) */
    const char *name;       /* 1..100 chars of UTF-8 without control characters, copied */
    const char *categories; /* comma-separated, copied; NULL or "": none declared (gets what the recorder enables) */
    bool synchronous;       /* wait (up to 5 s) for a running recorder to register it */
    /*
     * The longest a writer may wait for the recorder to save a half before
     * dropping its packet (STREAMING, when the recorder asks for a wait:
     * `tracec record --wait`): the recorder's wait is capped by this.  0:
     * TRACEC_PROVIDER_MAX_WAIT_DEFAULT_MS; -1: never wait; at most 10000.
     * Once a wait ran out, writers drop at once until the recorder has saved
     * that half, so a recorder that never saves costs one wait, not one per
     * packet.
     */
    int max_wait_ms;
} tracec_provider_registration;

#define TRACEC_PROVIDER_MAX_WAIT_DEFAULT_MS 10

#define TRACEC_PROVIDER_REGISTRATION_INIT {sizeof(tracec_provider_registration), NULL, NULL, false, 0}

tracec_status_t tracec_provider_register_with(const tracec_provider_registration *config, bool *started,
                                              tracec_provider **out) TRACEC_I_WARN_UNUSED;

/* Whether tracing is started now (one relaxed load). */
bool tracec_provider_started(const tracec_provider *p) TRACEC_I_WARN_UNUSED;

/* Waits up to `timeout_ms` for tracing to start; true if it is started. */
bool tracec_provider_wait_started(tracec_provider *p, int timeout_ms) TRACEC_I_WARN_UNUSED;

/*
 * Whether `category` is enabled (false while not started).  The recorder
 * enables, of the categories this provider declared, those it was asked
 * for; a provider that declared none gets the recorder's list (none = all).
 */
bool tracec_provider_category_enabled(tracec_provider *p, const char *category) TRACEC_I_WARN_UNUSED;

/* ---- writing packets ---------------------------------------------------------- */

/*
 * Starts a TracePacket written through `w` (caller-owned) into `packet`,
 * the `msg` member of a generated TracePacket writer.  While tracing is off
 * the writer is dead (every setter is a no-op) and end returns CLOSED.
 * The calling thread's first packet of a run is preceded by the thread's
 * TrackDescriptor (tracec_provider_thread_track_uuid, named after the
 * thread), written here.  Begin and end on the same thread; one packet
 * open per thread at a time.
 */
void tracec_provider_begin_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet);

/*
 * Finishes the packet.  SUCCESS: it is in the shared buffer.  BUFFER_FULL
 * (or the writer's error): dropped and counted.  CLOSED: tracing was off
 * (or stopped under the packet).  The thread's trusted_packet_sequence_id
 * is appended, and the thread's first packet finished after a dropped one
 * gets previous_packet_dropped = true appended (both win over a value the
 * caller set): docs/record.md, "Losses".
 */
tracec_status_t tracec_provider_end_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet);

/*
 * Track events on the calling thread's track (its descriptor is written at
 * its first packet of a run).  SUCCESS: written.  CLOSED: tracing is off.
 * BUFFER_FULL (or the writer's error): dropped and counted.
 *
 * The thread's slices nest in the trace as the program meant whatever was
 * lost (docs/record.md, "Nesting after losses"); each thread keeps its open
 * levels (thread-local, the first 64 tracked):
 * - a BEGIN not written (dropped, tracing off) makes its END not written
 *   either: slice_end then returns SUCCESS (the loss was counted at the
 *   BEGIN);
 * - an instant inside a slice whose BEGIN was not written is not written
 *   either (it would land at another depth): instant returns SUCCESS;
 * - an END lost for a slice that is in the trace is owed: written with its
 *   own timestamp after the thread's next event written by these helpers,
 *   and before any later BEGIN; while the buffer still refuses it, a BEGIN
 *   is not written (it returns the refusal) and its END is not written;
 * - when tracing stops (the recorder's Stop, its going away) the thread's
 *   open slices end at the stop: their ENDs are owed at the stop's time on
 *   the same sequence (none after a new connection: another trace), and
 *   the program's own ENDs for them are not written.
 * Packets written by hand with begin_packet / end_packet are the program's
 * business: they do not take part in this.
 */
tracec_status_t tracec_provider_slice_begin(tracec_provider *p, const char *name);
tracec_status_t tracec_provider_slice_end(tracec_provider *p);
tracec_status_t tracec_provider_instant(tracec_provider *p, const char *name);

/*
 * The calling thread's track uuid, for TrackEvent.track_uuid of packets
 * written by hand: tracec_provider_begin_packet describes the thread before
 * its first packet of a run, so such events land on its named track.  It is
 * the thread's track of the track-event macros too
 * (tracec_te_thread_track_uuid), so hand-written events and TRACEC_SLICE_*
 * nest on one track; the process track is tracec_te_process_track_uuid.
 * A packet written by hand sets `timestamp` from tracec_provider_now_ns()
 * and no clock id: the trace's clock.
 */
uint64_t tracec_provider_thread_track_uuid(tracec_provider *p) TRACEC_I_WARN_UNUSED;

/*
 * The clock of the recorder's session, the trace's clock (a BuiltinClock):
 * 6 BOOTTIME, unless `tracec record --clock` chose 3 MONOTONIC or 1
 * REALTIME; BOOTTIME before the first session.  Every timestamp of the
 * trace without a clock id is on it, and the track-event macros' events too.
 */
uint32_t tracec_provider_clock_id(tracec_provider *p) TRACEC_I_WARN_UNUSED;

/* Now on that clock, in nanoseconds: the `timestamp` of a packet written by hand. */
uint64_t tracec_provider_now_ns(tracec_provider *p) TRACEC_I_WARN_UNUSED;

typedef struct tracec_provider_stats {
    uint64_t produced;       /* packets begun while tracing was on */
    uint64_t dropped;        /* of which refused (no room, a writer error) */
    uint64_t runs;           /* Start requests obeyed */
    uint64_t saved;          /* BUFFER_SAVED packets received */
    uint64_t recorder_lost;  /* times the recorder went away while tracing */
    uint64_t refused;        /* recorders (or their buffers) refused as untrusted: docs/record.md, "Threat model" */
} tracec_provider_stats;

/* Counters since registration. */
tracec_provider_stats tracec_provider_get_stats(tracec_provider *p) TRACEC_I_WARN_UNUSED;

/*
 * Closes the connection (the recorder sees the provider end: it saves what
 * the provider finished), ends the thread and frees `p`.  NULL is fine.
 * Returns within the registration's max_wait_ms plus 100 ms (a writer in
 * its wait, a connect in progress), whatever the recorder does; so does
 * the handler that stops the provider at exit.
 */
void tracec_provider_unregister(tracec_provider *p);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_PROVIDER_H */
