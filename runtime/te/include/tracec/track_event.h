/*
 * tracec/track_event.h - track events in one line: categories, per-thread
 * sequences, interning, tracks, clocks and sessions on top of the buffers
 * and the generated Perfetto writers.  docs/track-events.md has the whole
 * API and a table from Perfetto SDK concepts to these.
 *
 *     #define MY_CATEGORIES(C) C(gfx, "gfx") C(io, "io")
 *     TRACEC_TE_DECLARE_CATEGORIES(MY_CATEGORIES)    // in a header
 *     TRACEC_TE_DEFINE_CATEGORIES(MY_CATEGORIES)     // in one .c file
 *
 *     tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
 *     cfg.path = "out.pftrace";
 *     tracec_session *s;
 *     tracec_session_start(&cfg, &s);
 *     TRACEC_SLICE_BEGIN(gfx, "draw");
 *     TRACEC_TE(io, TRACEC_TE_INSTANT("read"), TRACEC_TE_ARG_INT("bytes", n));
 *     TRACEC_COUNTER(gfx, "fps", 60);
 *     TRACEC_EVENT_AS(gfx, my_app_MyEvent, ev, "typed") {
 *         my_app_MyEvent_set_custom_counter(&ev, 1);
 *     }
 *     TRACEC_SLICE_END(gfx);
 *     tracec_session_stop(s);                        // or at exit
 *
 * A disabled category costs one relaxed load and a branch; the arguments of
 * a disabled event are not evaluated.  Event and annotation names must be
 * string literals: they are interned by address per thread (a literal
 * lives as long as the program).  TRACEC_TE_DYNAMIC_NAME takes any string
 * and writes it inline.
 *
 * Each thread writes its own packet sequence: its own buffer writer,
 * trusted_packet_sequence_id and interning dictionary, created on its first
 * event of a session and released by the runtime at thread exit.
 *
 * Events are async-signal-safe: one from a signal handler that interrupted
 * its thread inside this layer or the buffer runtime is dropped and counted
 * (never a crash or a deadlock); otherwise it is written.  The session calls
 * are not async-signal-safe.  Every loss is in the trace: the session's
 * TraceStats (trace processor stat traced_buf_trace_writer_packet_loss,
 * severity data_loss).  Slices nest as the program meant for the events
 * kept: an END whose BEGIN was lost is not written, a lost END is written
 * later, slices open when a run stops end there.  docs/track-events.md.
 */
#ifndef TRACEC_TRACK_EVENT_H
#define TRACEC_TRACK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- categories ------------------------------------------------------------ */

/* A category: the runtime's tracec_category_t plus its place in the process-wide list. */
typedef struct tracec_te_category {
    tracec_category_t c;
    struct tracec_te_category *i_next; /* private */
} tracec_te_category;

/* Adds `cats` (a NULL-terminated array of statics) to the process-wide list;
   sessions register every listed category with their context.  Idempotent. */
void tracec_te_register_categories(tracec_te_category *const *cats);

#define TRACEC_I_TE_DECL_CAT(id, name) extern tracec_te_category tracec_te_cat_##id;
#define TRACEC_I_TE_DEF_CAT(id, name) tracec_te_category tracec_te_cat_##id = {TRACEC_CATEGORY_INIT(name), NULL};
#define TRACEC_I_TE_ADDR_CAT(id, name) &tracec_te_cat_##id,

/* In a header: `extern` declarations of every category of LIST (an X-macro: LIST(C) is C(id, "name") ...). */
#define TRACEC_TE_DECLARE_CATEGORIES(LIST) LIST(TRACEC_I_TE_DECL_CAT)

/* In one .c file: the category objects, registered before main() runs. */
#define TRACEC_TE_DEFINE_CATEGORIES(LIST)                                                     \
    LIST(TRACEC_I_TE_DEF_CAT)                                                                 \
    static tracec_te_category *const tracec_i_te_cat_list[] = {LIST(TRACEC_I_TE_ADDR_CAT) NULL}; \
    __attribute__((constructor)) static void tracec_i_te_cat_register(void) {                 \
        tracec_te_register_categories(tracec_i_te_cat_list);                                  \
    }

/* The category object of `id`, and whether it is enabled now (one relaxed load). */
#define TRACEC_TE_CATEGORY(id) (&tracec_te_cat_##id)
#if defined(__GNUC__) || defined(__clang__)
#define TRACEC_TE_ENABLED(id) __builtin_expect(!!tracec_category_is_enabled(&tracec_te_cat_##id.c), 0)
#else
#define TRACEC_TE_ENABLED(id) tracec_category_is_enabled(&tracec_te_cat_##id.c)
#endif

/* ---- event descriptions ------------------------------------------------------ */

enum {
    TRACEC_I_TE_SLICE_BEGIN = 1,
    TRACEC_I_TE_SLICE_END,
    TRACEC_I_TE_INSTANT,
    TRACEC_I_TE_COUNTER_INT,
    TRACEC_I_TE_COUNTER_DOUBLE,
    TRACEC_I_TE_ARG_INT,
    TRACEC_I_TE_ARG_UINT,
    TRACEC_I_TE_ARG_DOUBLE,
    TRACEC_I_TE_ARG_BOOL,
    TRACEC_I_TE_ARG_STRING,
    TRACEC_I_TE_ARG_POINTER,
    TRACEC_I_TE_ARG_JSON,
    TRACEC_I_TE_FLOW,
    TRACEC_I_TE_TERMINATING_FLOW,
    TRACEC_I_TE_TRACK,
    TRACEC_I_TE_TIMESTAMP,
    TRACEC_I_TE_DYNAMIC_NAME,
    TRACEC_I_TE_ARG_DICT,
    TRACEC_I_TE_ARG_ARRAY,
    TRACEC_I_TE_ARG_END
};

/* One part of an event (its type, a debug annotation, a flow, ...); built by the macros below. */
typedef struct tracec_te_arg {
    uint32_t kind;
    const char *name;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
    } v;
} tracec_te_arg;

/* Event types (exactly one per TRACEC_TE); names are string literals. */
#define TRACEC_TE_SLICE_BEGIN(name) {TRACEC_I_TE_SLICE_BEGIN, "" name "", {0}}
#define TRACEC_TE_SLICE_END() {TRACEC_I_TE_SLICE_END, NULL, {0}}
#define TRACEC_TE_INSTANT(name) {TRACEC_I_TE_INSTANT, "" name "", {0}}
/* A counter on the process's counter track called `name` (or on TRACEC_TE_TRACK's track). */
#define TRACEC_TE_COUNTER_INT(name, value) {TRACEC_I_TE_COUNTER_INT, "" name "", {.i = (int64_t)(value)}}
#define TRACEC_TE_COUNTER_DOUBLE(name, value) {TRACEC_I_TE_COUNTER_DOUBLE, "" name "", {.d = (double)(value)}}

/*
 * Debug annotations (shown as debug.<key> args); keys are string literals.
 * A NULL STRING or JSON value leaves its annotation out (the rest of the
 * event is written).
 */
#define TRACEC_TE_ARG_INT(key, value) {TRACEC_I_TE_ARG_INT, "" key "", {.i = (int64_t)(value)}}
#define TRACEC_TE_ARG_UINT(key, value) {TRACEC_I_TE_ARG_UINT, "" key "", {.u = (uint64_t)(value)}}
#define TRACEC_TE_ARG_DOUBLE(key, value) {TRACEC_I_TE_ARG_DOUBLE, "" key "", {.d = (double)(value)}}
#define TRACEC_TE_ARG_BOOL(key, value) {TRACEC_I_TE_ARG_BOOL, "" key "", {.u = (value) ? 1u : 0u}}
#define TRACEC_TE_ARG_STRING(key, value) {TRACEC_I_TE_ARG_STRING, "" key "", {.s = (value)}}
#define TRACEC_TE_ARG_POINTER(key, value) {TRACEC_I_TE_ARG_POINTER, "" key "", {.u = (uint64_t)(uintptr_t)(value)}}
#define TRACEC_TE_ARG_JSON(key, value) {TRACEC_I_TE_ARG_JSON, "" key "", {.s = (value)}}
/*
 * Nested values: a dict or an array holds the parts up to its
 * TRACEC_TE_ARG_END() (at most 8 levels).  Entries of a dict are named by
 * their keys (debug.<key>.<entry>); the keys of array elements are ignored
 * (debug.<key>[i]), write "".
 */
#define TRACEC_TE_ARG_DICT(key) {TRACEC_I_TE_ARG_DICT, "" key "", {0}}
#define TRACEC_TE_ARG_ARRAY(key) {TRACEC_I_TE_ARG_ARRAY, "" key "", {0}}
#define TRACEC_TE_ARG_END() {TRACEC_I_TE_ARG_END, NULL, {0}}

/* Flows (ids shared by the events they connect), track, timestamp, a non-literal name. */
#define TRACEC_TE_FLOW(id) {TRACEC_I_TE_FLOW, NULL, {.u = (uint64_t)(id)}}
#define TRACEC_TE_TERMINATING_FLOW(id) {TRACEC_I_TE_TERMINATING_FLOW, NULL, {.u = (uint64_t)(id)}}
#define TRACEC_TE_TRACK(uuid) {TRACEC_I_TE_TRACK, NULL, {.u = (uint64_t)(uuid)}}
#define TRACEC_TE_TIMESTAMP(ns) {TRACEC_I_TE_TIMESTAMP, NULL, {.u = (uint64_t)(ns)}}
#define TRACEC_TE_DYNAMIC_NAME(str) {TRACEC_I_TE_DYNAMIC_NAME, NULL, {.s = (str)}}

/* Out of line: writes the event (the category was found enabled). */
void tracec_i_te_emit(tracec_te_category *cat, const tracec_te_arg *args, size_t n);

/*
 * The general form: TRACEC_TE(cat, TYPE, parts...), e.g.
 *     TRACEC_TE(io, TRACEC_TE_INSTANT("read"), TRACEC_TE_ARG_INT("bytes", n), TRACEC_TE_FLOW(7));
 * Nothing after `cat` is evaluated when the category is disabled.
 */
#define TRACEC_TE(cat, ...)                                                                    \
    do {                                                                                       \
        if (TRACEC_TE_ENABLED(cat)) {                                                          \
            const tracec_te_arg tracec_i_te_a_[] = {__VA_ARGS__};                              \
            tracec_i_te_emit(&tracec_te_cat_##cat, tracec_i_te_a_,                             \
                             sizeof tracec_i_te_a_ / sizeof tracec_i_te_a_[0]);                \
        }                                                                                      \
    } while (0)

/* Shorthands. */
#define TRACEC_SLICE_BEGIN(cat, name) TRACEC_TE(cat, TRACEC_TE_SLICE_BEGIN(name))
#define TRACEC_SLICE_END(cat) TRACEC_TE(cat, TRACEC_TE_SLICE_END())
#define TRACEC_INSTANT(cat, name) TRACEC_TE(cat, TRACEC_TE_INSTANT(name))
#define TRACEC_COUNTER(cat, name, value) TRACEC_TE(cat, TRACEC_TE_COUNTER_INT(name, value))
#define TRACEC_COUNTER_DOUBLE(cat, name, value) TRACEC_TE(cat, TRACEC_TE_COUNTER_DOUBLE(name, value))

/* ---- the typed form ------------------------------------------------------------- */

/* A TracePacket opened by the typed form (internal; a local of the macro). */
typedef struct tracec_te_packet {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    void *i_thread;
    const char *i_name;
    tracec_te_category *i_cat;
    uint64_t i_name_iid, i_cat_iid; /* 0: written inline */
    uint32_t i_type;
    uint32_t i_state; /* 0 to open, 1 open, 2 done */
} tracec_te_packet;

int tracec_i_te_open(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type);
void tracec_i_te_fill(tracec_te_packet *p, perfetto_protos_TrackEvent *ev);
void tracec_i_te_close(tracec_te_packet *p);

/*
 * A TrackEvent written as the user's generated wrapper writer `Wrapper`
 * (a `message W { extend perfetto.protos.TrackEvent { ... } }` of a file
 * generated by protoc-gen-tracec): the block runs with `ev` open, so the
 * wrapper's setters (extension fields and every TrackEvent setter) apply.
 * Type, name (interned), category, track and timestamp are already set.
 *
 *     TRACEC_EVENT_AS(gfx, my_app_MyEvent, ev, "frame") {
 *         my_app_MyEvent_set_custom_counter(&ev, 42);
 *     }
 *
 * The block runs once, or never when the category is disabled (or no
 * session is active, or an event is already open on this thread: that one
 * is counted in tracec_te_thread_misuse()).  Do not leave the block with
 * break, goto or return: the packet would stay open (refused and counted by
 * the runtime at thread exit or session end, never written half) and the
 * thread's later events of the session are dropped as misuse.
 */
#define TRACEC_I_EVENT_AS(cat, Wrapper, ev, name, type)                                                  \
    for (tracec_te_packet tracec_i_te_p_ = {.i_state = 0};                                               \
         tracec_i_te_p_.i_state == 0 && TRACEC_TE_ENABLED(cat) &&                                        \
         tracec_i_te_open(&tracec_i_te_p_, &tracec_te_cat_##cat, name, type);)                           \
        for (Wrapper ev, *tracec_i_te_once_ =                                                            \
                             (perfetto_protos_TracePacket_begin_track_event_as_##Wrapper(&tracec_i_te_p_.pkt, &ev), \
                              tracec_i_te_fill(&tracec_i_te_p_, &ev.base), &ev);                        \
             tracec_i_te_once_ != NULL;                                                                  \
             perfetto_protos_TracePacket_end_track_event_as_##Wrapper(&tracec_i_te_p_.pkt, &ev),         \
             tracec_i_te_close(&tracec_i_te_p_), tracec_i_te_once_ = NULL)

#define TRACEC_EVENT_AS(cat, Wrapper, ev, name) \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, "" name "", (uint32_t)perfetto_protos_TrackEvent_TYPE_INSTANT)
#define TRACEC_SLICE_BEGIN_AS(cat, Wrapper, ev, name) \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, "" name "", (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN)

/* ---- tracks --------------------------------------------------------------------- */

/* The uuids of this process's track and of the calling thread's track. */
uint64_t tracec_te_process_track_uuid(void);
uint64_t tracec_te_thread_track_uuid(void);

/*
 * Declares a custom track (`counter` 0) or a counter track (`counter` 1)
 * with a user uuid (non-zero, unique in the trace) and name, child of the
 * process track.  Its TrackDescriptor is written (durable) now if a session
 * is active and at the start of every later session.  INVALID_ARGUMENT
 * (uuid 0, NULL name), LIMIT_EXCEEDED (more than 256 tracks).
 */
tracec_status_t tracec_te_define_track(uint64_t uuid, const char *name, int counter);

/* Events dropped on the calling thread for misuse (an event opened while another is open). */
uint64_t tracec_te_thread_misuse(void);

/* ---- sessions ------------------------------------------------------------------ */

/*
 * A session's handle, opaque: not the address of an object the program may
 * look into.  Each tracec_session_start gives a new one, valid until that
 * session's stop: after it, every call with it (stop, flush, pause, resume,
 * tracec_session_buffer) refuses it with BAD_STATE (tracec_session_buffer:
 * handle 0), also once a later session has started.
 */
typedef struct tracec_session tracec_session;

/* Receives the trace bytes (whole Trace.packet records) when no path is given; on the callback thread.
   A test appends them to a memory trace with tracec_trace_file_append_raw (docs/testing.md). */
typedef void (*tracec_session_write_fn)(const void *data, size_t size, void *user);

typedef struct tracec_session_config {
    const char *path;               /* .pftrace to create; or NULL and `write` */
    tracec_session_write_fn write;  /* used when path is NULL */
    void *write_data;
    tracec_buffering_mode_t mode;   /* STREAMING (default), ONESHOT, CIRCULAR */
    tracec_buffer_policy_t policy;  /* STREAMING: LOSSLESS (default) or DISCARD */
    size_t buffer_size;             /* bytes per half; 0 = 1 MiB */
    size_t durable_size;            /* ONESHOT/CIRCULAR durable part; 0 = size/16, at least the
                                       extension descriptors + 64 KiB */
    const char *const *categories;  /* enabled categories; NULL = all */
    size_t num_categories;
    uint32_t clock_id;              /* a BuiltinClock: 6 BOOTTIME (default, 0 too), 3 MONOTONIC, 1 REALTIME */
    const char *process_name;       /* NULL = /proc/self/comm */
    /*
     * A flush every this many milliseconds, from a thread of the session:
     * delivered packets and the statistics are written out (write(2)), so a
     * crash, _exit() or SIGKILL loses at most the last period.  0: the
     * default, TRACEC_SESSION_FLUSH_PERIOD_DEFAULT_MS for a file, none for a
     * callback; TRACEC_SESSION_FLUSH_NEVER: none.
     */
    uint32_t flush_period_ms;
    /*
     * Non-zero: SIGINT and SIGTERM stop the session cleanly (docs/track-
     * events.md, "Signals and abnormal ends"): when the program's own
     * disposition would end the process, the session is stopped and the
     * signal's action then runs; when the program has a handler, the session
     * is flushed and the handler runs.
     */
    int stop_on_signals;
} tracec_session_config;

#define TRACEC_SESSION_FLUSH_PERIOD_DEFAULT_MS 1000u
#define TRACEC_SESSION_FLUSH_NEVER UINT32_MAX

#define TRACEC_SESSION_CONFIG_INIT \
    {NULL, NULL, NULL, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0, 0, NULL, 0, 0, NULL, 0, 0}

/*
 * Creates a context and a buffer, registers every category, starts, and
 * writes the session's durable packets: the extension descriptors of every
 * registered generated file (the runtime's own schema excepted), the
 * process track, the declared tracks, a ClockSnapshot.  One session at a
 * time: BAD_STATE while one is active.  IO_ERROR (errno set) when the file
 * cannot be created; BUFFER_FULL when those packets do not fit (an explicit
 * durable_size too small); any status of the context and buffer calls.
 * INVALID_ARGUMENT: no path and no callback, an unsupported clock_id.
 */
tracec_status_t tracec_session_start(const tracec_session_config *config, tracec_session **out) TRACEC_I_WARN_UNUSED;

/*
 * Delivers everything written so far (to the file or the callback), then the
 * TraceStats; a file is written out.  BAD_STATE: NULL or an ended session's
 * handle (as for pause and resume).
 */
tracec_status_t tracec_session_flush(tracec_session *s);

/*
 * Stops the run (events are dropped until resumed) and delivers everything,
 * then the TraceStats.  Slices open on a thread now end here (written
 * before the thread's first event of the next run).
 */
tracec_status_t tracec_session_pause(tracec_session *s);

/*
 * Starts another run with `disposition` (NONE means RETAIN) and writes a
 * ClockSnapshot; after CLEAR_ENTIRE the durable packets are written again
 * and every thread re-emits its sequence state.  Once the run has started,
 * a packet of these that the buffer refuses as full (other threads may
 * fill it first) is a counted loss and the resume still succeeds.
 */
tracec_status_t tracec_session_resume(tracec_session *s, tracec_buffer_disposition_t disposition);

/* As above with the context's start options: a disposition and categories added for this run. */
tracec_status_t tracec_session_resume_with_options(tracec_session *s, const tracec_start_options_t *options);

/*
 * Stops, delivers everything, writes the TraceStats, closes the file and
 * ends the session (also done at process exit).  NULL or an ended session's
 * handle (also after a later start): BAD_STATE.  In a fork child: ends the child's copy, leaving the parent's
 * file and callback untouched.
 */
tracec_status_t tracec_session_stop(tracec_session *s);

/* The session's buffer (for tracec_query_buffer_stats); handle 0 for NULL or an ended session's handle. */
tracec_buffer_id_t tracec_session_buffer(const tracec_session *s);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TRACK_EVENT_H */
