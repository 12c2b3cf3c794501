/*
 * te_internal.h - what track_event.c and session.c share: the active
 * session as the producers see it (published with release stores, read
 * with acquire loads), and the packets the session asks a thread to write.
 */
#ifndef TRACEC_TE_INTERNAL_H
#define TRACEC_TE_INTERNAL_H

#include <stdint.h>

#include "tracec/track_event.h"

/* 0: no session.  A new value for every session start. */
extern uint64_t tracec_i_te_gen;
/* The active session's buffer handle and timestamp clock (valid once gen is seen). */
extern uint64_t tracec_i_te_buf;
extern uint32_t tracec_i_te_clock_id;
extern int tracec_i_te_clk; /* clockid_t */
/*
 * 1 when the session's buffer delivers packets in the order they are
 * written (STREAMING): a lost packet then restarts the sequence's
 * incremental state (see track_event.c).  0 for ONESHOT and CIRCULAR.
 */
extern int tracec_i_te_in_order;
/*
 * 1 when the session's sequences write timestamps as deltas on an
 * incremental clock (ONESHOT, STREAMING); 0 for CIRCULAR, whose wraps
 * overwrite the packets a delta would be counted from (see track_event.c).
 */
extern int tracec_i_te_incremental;
/*
 * Bumped whenever the buffer's epoch may have changed (a resume, a fork
 * child), so producers read the epoch only then: one load per event.
 */
extern uint64_t tracec_i_te_epoch_hint;

/*
 * Writes, through the calling thread's sequence: with `durable`, the
 * extension descriptors of the registered files, the process track and
 * the declared tracks; always a ClockSnapshot.  `process_name` may be NULL.
 * Returns the first failing status.
 */
tracec_status_t tracec_i_te_write_session_packets(int durable, const char *process_name);

/* Bytes of the ExtensionDescriptor packets a session writes at start. */
size_t tracec_i_te_descriptor_bytes(void);

/*
 * Events the layer dropped in this process (re-entered from a signal
 * handler, misuse, the run stopped under them); the session adds them to
 * the trace's data-loss statistics.  Atomic.
 */
extern uint64_t tracec_i_te_lost;
/* Bumped before each resume starts a run (with the epoch hint, which a thread sees first). */
extern uint64_t tracec_i_te_run;
/* When the last run stopped, on the session's clock: slices open then are ended there. */
extern uint64_t tracec_i_te_run_end_ts;
/* The session is paused: its categories stay on and the layer drops and counts their events. */
extern uint32_t tracec_i_te_paused;
/* Bumped by each pause before it sets tracec_i_te_paused (release): which pause a thread saw. */
extern uint64_t tracec_i_te_pause;

/*
 * Session calls hold the calling thread's guard, so a signal handler's
 * event that interrupts them is dropped instead of re-entering.  Returns
 * whether it set it (not inside a typed block); leave with that value.
 */
int tracec_i_te_session_enter(void);
void tracec_i_te_session_leave(int entered);

/* The calling thread looks at its name again at its next event. */
void tracec_i_te_recheck_name(void);

/* The session's clock now. */
uint64_t tracec_i_te_now(void);

/*
 * A typed event the calling thread left open (a block left with break or
 * return) is given up: its packet is refused and counted, so the stop or
 * pause that follows does not wait for it.
 */
void tracec_i_te_thread_abandon(void);

#endif /* TRACEC_TE_INTERNAL_H */
