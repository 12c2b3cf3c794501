/*
 * te_internal.h - what track_event.c and session.c share: the session
 * slots as the producers see them (published with release stores, read
 * with acquire loads), and the packets a session asks a thread to write.
 *
 * Up to TRACEC_TE_MAX_SESSIONS sessions are active at once, each in a slot.
 * A category's `enabled` word is the mask of the slots whose session
 * enables it; an event goes to every slot of the mask.  A slot is filled
 * from a context and a buffer made by the caller (tracec_i_te_slot_open),
 * so a session of another kind than tracec_session can take one.
 */
#ifndef TRACEC_TE_INTERNAL_H
#define TRACEC_TE_INTERNAL_H

#include <stdint.h>

#include "tracec/track_event.h"

typedef struct tracec_i_te_slot {
    /* 0: free.  A new value for every session start (the buffer and clock below are published before it). */
    uint64_t gen;
    uint64_t buf;      /* the session's buffer handle (valid once gen is seen) */
    uint32_t clock_id; /* its timestamp clock (a BuiltinClock) and the clockid_t */
    int clk;
    /*
     * 1 when the buffer delivers packets in the order they are written
     * (STREAMING): a lost packet then restarts the sequence's incremental
     * state (see track_event.c).  0 for ONESHOT and CIRCULAR.
     */
    int in_order;
    /*
     * 1 when the session's sequences write timestamps as deltas on an
     * incremental clock (ONESHOT, STREAMING); 0 for CIRCULAR, whose wraps
     * overwrite the packets a delta would be counted from.
     */
    int incremental;
    /* Events the layer dropped for this slot (re-entered from a signal handler, misuse, the run stopped
       under them, paused); the session adds them to its trace's data-loss statistics.  Atomic. */
    uint64_t lost;
    uint64_t run;        /* bumped before each resume starts a run (with ver, which a thread sees first) */
    uint64_t run_end_ts; /* when the last run stopped, on the slot's clock: slices open then end there */
    uint32_t paused;     /* paused: its categories stay on and the layer drops and counts their events */
    uint64_t pause;      /* bumped by each pause before it sets `paused` (release): which pause a thread saw */
    uint64_t cats;       /* bumped when a category's enabled bit for the slot changes (atomic): a thread keeps
                            its lost slice levels across a run boundary only when the categories stayed */
    /*
     * `publish` 1 (the recorder's session): `lost` also goes into the
     * buffer's own counters, which the recorder reads from shared memory,
     * as it grows (at every 64th, tracec_i_te_slot_publish_lost) and when
     * the session stops, so a program killed meanwhile leaves at most 63
     * of them out.  `published`: the value of `lost` counted there so far.
     * Atomic.
     */
    uint64_t published;
    int publish;
} tracec_i_te_slot;

extern tracec_i_te_slot tracec_i_te_slots[TRACEC_TE_MAX_SESSIONS];
/*
 * Per slot, bumped whenever a thread must look at the slot again (a start,
 * a stop, a resume, a pause, a fork child): a thread's sequence compares it
 * with the value it last looked at, one load per event.  An array of its
 * own: one indexed load.
 */
extern uint64_t tracec_i_te_ver[TRACEC_TE_MAX_SESSIONS];

/*
 * Fills slot `i` (free, caller-serialised) for a started buffer `buf` of
 * `mode` with timestamps on `clock_id`, and publishes it: after this the
 * calling thread can write the session packets to it.  The categories'
 * bits are set by the caller afterwards (tracec_i_te_slot_set_categories).
 * `publish`: the slot's losses from now on go into the buffer's counters
 * (see `publish` above: the recorder's session).
 */
void tracec_i_te_slot_open(int i, uint64_t buf, tracec_buffering_mode_t mode, uint32_t clock_id, int publish);
/* Sets (on) or clears slot `i`'s bit in every registered category that `ctx` enables (clears: all of them). */
void tracec_i_te_slot_set_categories(int i, tracec_context_id_t ctx, int on);
/* The slot is free again (after its bits were cleared). */
void tracec_i_te_slot_close(int i);
/*
 * Slot `i` publishing (see `publish`): counts in its buffer what `lost` has
 * grown by since the last call that did (one caller gets each part).
 */
void tracec_i_te_slot_publish_lost(int i);
/* A thread must look at slot `i` again (ver bumped, release). */
void tracec_i_te_slot_bump(int i);

/*
 * Writes to slot `slot`, through the calling thread's sequence there: with
 * `durable`, the extension descriptors of the registered files, the process
 * track and the declared tracks; with `clocks`, a ClockSnapshot of the
 * global clocks (not in a recorder's session: several processes' snapshots
 * would not be in time order in its trace; the recorder writes one).
 * `process_name` may be NULL.  Returns the first failing status.
 */
tracec_status_t tracec_i_te_write_session_packets(int slot, int durable, int clocks, const char *process_name);

/* Bytes of the ExtensionDescriptor packets a session writes at start. */
size_t tracec_i_te_descriptor_bytes(void);

/* Every registered category (the process-wide list, through i_next); session.c owns it under its lock. */
extern tracec_te_category *tracec_i_te_all_cats;

/*
 * Session calls hold the calling thread's guard, so a signal handler's
 * event that interrupts them is dropped instead of re-entering.  Returns
 * whether it set it (not inside a typed block); leave with that value.
 */
int tracec_i_te_session_enter(void);
void tracec_i_te_session_leave(int entered);

/* The calling thread looks at its name again at its next event. */
void tracec_i_te_recheck_name(void);

/* Slot `slot`'s clock now. */
uint64_t tracec_i_te_now(int slot);

/*
 * A typed event the calling thread left open in slot `slot` (a block left
 * with break or return) is given up: its packet is refused and counted, so
 * the stop or pause that follows does not wait for it.
 */
void tracec_i_te_thread_abandon(int slot);
/* The calling thread writes the ENDs it owes in `slot` (its sequence there current): at the session's stop. */
void tracec_i_te_thread_owed(int slot);

/*
 * Slots for a session of another kind than tracec_session (the recorder
 * client's).  claim: a free slot taken (no tracec_session takes it until
 * released), or -1 when all TRACEC_TE_MAX_SESSIONS are in use.  enable:
 * sets (on) or clears slot `i`'s bits as tracec_i_te_slot_set_categories
 * does, and remembers `ctx` so that categories registered later are
 * matched against it too.  release: the slot is free for any session
 * again (its bits cleared and the slot closed before).
 */
int tracec_i_te_slot_claim(void);
void tracec_i_te_slot_enable(int i, tracec_context_id_t ctx, int on);
void tracec_i_te_slot_release(int i);

/* Whether any category is registered. */
int tracec_i_te_have_categories(void);
/* The registered categories' names, comma-separated, into out[cap] (at most TRACEC_MAX_NUM_CATEGORIES); how many. */
size_t tracec_i_te_category_names(char *out, size_t cap);

/* A new trusted_packet_sequence_id, local to the process (the te sequences' and the raw packet writers'). */
uint32_t tracec_i_te_new_sequence_id(void);

/*
 * The recorder client (recorder_client.c): started once per process, the
 * first time this is called with $TRACEC_RECORDER_SOCKET set (the
 * categories' constructor, tracec_session_start).  Does nothing otherwise.
 */
void tracec_i_te_recorder_auto(void);

/*
 * A thread's clock between readings (clock.c).  Reading CLOCK_BOOTTIME or
 * CLOCK_MONOTONIC costs 20-35 ns where the vDSO goes through a hypervisor's
 * clock; the CPU's invariant cycle counter costs a third of that.  A thread
 * reads the clock for real at least every 0.5 ms (2 ms once the rate is
 * refined) and in between extrapolates it from the counter with the
 * process's calibrated rate; its values never go back.  `win` is 0 while the rate is not known
 * (the first few milliseconds) or the counter cannot be used: every call
 * reads the clock.
 */
typedef struct tracec_i_te_clk {
    uint64_t cyc;  /* the counter at the last reading */
    uint64_t ns;   /* the clock then */
    uint64_t mult; /* nanoseconds per count, << 32 */
    uint64_t win;  /* counts after `cyc` the extrapolation holds for (0: read the clock each time) */
    uint64_t hi;   /* the last value given */
} tracec_i_te_clk;

/* Whether clockid `clk` is extrapolated (a monotonic clock, and a counter the process can use). */
int tracec_i_te_clk_extrapolates(int clk);
/*
 * Whether a clock reading between two counter reads `span` counts apart is
 * tight enough to place it (at the pair's midpoint), against `*tight`, the
 * tightest pair the process has seen (UINT64_MAX: none yet): within a
 * quarter of it (or 32 counts) above.  A tighter pair lowers `*tight` to
 * its span and is used; a looser one is not, and raises `*tight` a quarter
 * (or 32 counts) toward its span, so that when reading the clock became
 * slower for good (the hypervisor's clock source changed; valgrind) a
 * thread places a reading again after a few tries instead of reading the
 * clock for every event.  `*tight` is read and written atomically.
 */
int tracec_i_te_clk_tight(uint64_t *tight, uint64_t span);
/* Reads clock `clk` for real, makes it `k`'s new anchor and returns it (no earlier than k->hi). */
uint64_t tracec_i_te_clk_read(tracec_i_te_clk *k, int clk);

static inline uint64_t tracec_i_te_cycles(void) {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

/* Clock `clk` now, as `k` extrapolates it (the slow path when outside its window). */
static inline __attribute__((always_inline)) uint64_t tracec_i_te_clk_now(tracec_i_te_clk *k, int clk) {
    uint64_t d = tracec_i_te_cycles() - k->cyc;
    if (__builtin_expect(d < k->win, 1)) {
        uint64_t ns = k->ns + ((d * k->mult) >> 32);
        if (__builtin_expect(ns < k->hi, 0)) ns = k->hi;
        k->hi = ns;
        return ns;
    }
    return tracec_i_te_clk_read(k, clk);
}

#endif /* TRACEC_TE_INTERNAL_H */
