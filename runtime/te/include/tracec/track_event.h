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
 * a disabled event are not evaluated.  In the literal forms, event names,
 * annotation keys and counter names must be string literals: they are
 * interned by address per thread (a literal lives as long as the program);
 * anything else is a compile error that names the _DYN form to use.  The
 * _DYN forms (TRACEC_INSTANT_DYN, TRACEC_TE_INSTANT_DYN, TRACEC_EVENT_AS_DYN,
 * ...) take any string and intern it by content.  An event without exactly
 * one type does not compile either.  The macros work in C11 and C++17.
 *
 * Up to TRACEC_TE_MAX_SESSIONS sessions are active at once; each event goes
 * to every active session whose categories enable it.  In each session,
 * each thread writes its own packet sequence: its own buffer writer,
 * trusted_packet_sequence_id, interning dictionary and thread descriptor,
 * created on its first event of that session and released at thread exit.
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

#include <stdbool.h>
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

/* At most this many sessions are active at once; an event goes to each one that enables its category. */
#define TRACEC_TE_MAX_SESSIONS 4

/*
 * A category: a name and the bit mask (c.enabled) of the active sessions
 * that enable it, plus its place in the process-wide list.  The sessions
 * set and clear their own bits (the categories are not registered with a
 * context); a disabled category's mask is 0.
 */
typedef struct tracec_te_category {
    tracec_category_t c;
    struct tracec_te_category *i_next; /* private */
} tracec_te_category;

/* Adds `cats` (a NULL-terminated array of statics) to the process-wide list;
   every active and later session enables the listed categories its configuration names.  Idempotent. */
void tracec_te_register_categories(tracec_te_category *const *cats);

#define TRACEC_I_TE_DECL_CAT(id, name) extern tracec_te_category tracec_te_cat_##id;
#define TRACEC_I_TE_DEF_CAT(id, name) tracec_te_category tracec_te_cat_##id = {TRACEC_CATEGORY_INIT(name), NULL};
#define TRACEC_I_TE_ADDR_CAT(id, name) &tracec_te_cat_##id,

/* In a header: `extern` declarations of every category of LIST (an X-macro: LIST(C) is C(id, "name") ...). */
#define TRACEC_TE_DECLARE_CATEGORIES(LIST) LIST(TRACEC_I_TE_DECL_CAT)

/* In one .c file: the category objects, registered before main() runs.  Several lists may be defined in
   one file (the registration is named after the list). */
#define TRACEC_TE_DEFINE_CATEGORIES(LIST)                                                   \
    LIST(TRACEC_I_TE_DEF_CAT)                                                               \
    static tracec_te_category *const tracec_i_te_cats_##LIST[] = {LIST(TRACEC_I_TE_ADDR_CAT) NULL}; \
    __attribute__((constructor)) static void tracec_i_te_register_##LIST(void) {            \
        tracec_te_register_categories(tracec_i_te_cats_##LIST);                             \
    }

/* The category object of `id`, and whether any session enables it now (one relaxed load). */
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

/*
 * One part of an event (its type, a debug annotation, a flow, ...), as the
 * runtime reads it.  A SLICE_BEGIN or INSTANT whose v.u is 1 has a name
 * known at run time (interned by content).
 */
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

/*
 * Each part macro below expands to a description (kind, is_type, name_rule,
 * name, member, value) that TRACEC_TE turns into a tracec_te_arg and checks
 * at compile time: exactly one type per event, literal names where a literal
 * is required, at most 32 parts.  is_type: TRACEC_I_TE_T1 a type,
 * TRACEC_I_TE_TD a type whose name is known at run time, TRACEC_I_TE_T0 not
 * a type.  name_rule: TRACEC_I_TE_RULE_0 no check, _N an event name, _K an
 * annotation key, _C a counter name (string literals: interned by address).
 * member: TRACEC_I_TE_M_z (no value), _i, _u, _d, _s (the union member).
 */
#define TRACEC_I_TE_PART(kind, is_type, rule, name, member, value) (kind, is_type, rule, name, member, value)

/* Event types (exactly one per TRACEC_TE). */
#define TRACEC_TE_SLICE_BEGIN(name) \
    TRACEC_I_TE_PART(TRACEC_I_TE_SLICE_BEGIN, TRACEC_I_TE_T1, TRACEC_I_TE_RULE_N, name, TRACEC_I_TE_M_z, 0)
#define TRACEC_TE_SLICE_END() \
    TRACEC_I_TE_PART(TRACEC_I_TE_SLICE_END, TRACEC_I_TE_T1, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_z, 0)
#define TRACEC_TE_INSTANT(name) \
    TRACEC_I_TE_PART(TRACEC_I_TE_INSTANT, TRACEC_I_TE_T1, TRACEC_I_TE_RULE_N, name, TRACEC_I_TE_M_z, 0)
/*
 * A name known only at run time (any NUL-terminated string, read during the
 * call): interned by content on the thread's sequence (docs/track-events.md,
 * "Dynamic names"), or written inline.
 */
#define TRACEC_TE_SLICE_BEGIN_DYN(str) \
    TRACEC_I_TE_PART(TRACEC_I_TE_SLICE_BEGIN, TRACEC_I_TE_TD, TRACEC_I_TE_RULE_0, (str), TRACEC_I_TE_M_u, 1)
#define TRACEC_TE_INSTANT_DYN(str) \
    TRACEC_I_TE_PART(TRACEC_I_TE_INSTANT, TRACEC_I_TE_TD, TRACEC_I_TE_RULE_0, (str), TRACEC_I_TE_M_u, 1)
/* A counter on the process's counter track called `name` (or on TRACEC_TE_TRACK's track). */
#define TRACEC_TE_COUNTER_INT(name, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_COUNTER_INT, TRACEC_I_TE_T1, TRACEC_I_TE_RULE_C, name, TRACEC_I_TE_M_i, value)
#define TRACEC_TE_COUNTER_DOUBLE(name, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_COUNTER_DOUBLE, TRACEC_I_TE_T1, TRACEC_I_TE_RULE_C, name, TRACEC_I_TE_M_d, value)

/*
 * Debug annotations (shown as debug.<key> args); keys are string literals.
 * A NULL STRING or JSON value leaves its annotation out (the rest of the
 * event is written).
 */
#define TRACEC_TE_ARG_INT(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_INT, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_i, value)
#define TRACEC_TE_ARG_UINT(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_UINT, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_u, value)
#define TRACEC_TE_ARG_DOUBLE(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_DOUBLE, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_d, value)
#define TRACEC_TE_ARG_BOOL(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_BOOL, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_u, (value) ? 1u : 0u)
#define TRACEC_TE_ARG_STRING(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_STRING, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_s, value)
#define TRACEC_TE_ARG_POINTER(key, value)                                                                  \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_POINTER, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_u, \
                     (uintptr_t)(value))
#define TRACEC_TE_ARG_JSON(key, value) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_JSON, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_s, value)
/*
 * Nested values: a dict or an array holds the parts up to its
 * TRACEC_TE_ARG_END() (at most 8 levels).  Entries of a dict are named by
 * their keys (debug.<key>.<entry>); the keys of array elements are ignored
 * (debug.<key>[i]), write "".
 */
#define TRACEC_TE_ARG_DICT(key) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_DICT, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_z, 0)
#define TRACEC_TE_ARG_ARRAY(key) \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_ARRAY, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_K, key, TRACEC_I_TE_M_z, 0)
#define TRACEC_TE_ARG_END() \
    TRACEC_I_TE_PART(TRACEC_I_TE_ARG_END, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_z, 0)

/* Flows (ids shared by the events they connect), track, timestamp. */
#define TRACEC_TE_FLOW(id) \
    TRACEC_I_TE_PART(TRACEC_I_TE_FLOW, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_u, id)
#define TRACEC_TE_TERMINATING_FLOW(id) \
    TRACEC_I_TE_PART(TRACEC_I_TE_TERMINATING_FLOW, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_u, id)
#define TRACEC_TE_TRACK(uuid) \
    TRACEC_I_TE_PART(TRACEC_I_TE_TRACK, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_u, uuid)
#define TRACEC_TE_TIMESTAMP(ns) \
    TRACEC_I_TE_PART(TRACEC_I_TE_TIMESTAMP, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_u, ns)
/* Replaces the literal name of the event's type with `str`, written inline (the _DYN types intern it). */
#define TRACEC_TE_DYNAMIC_NAME(str) \
    TRACEC_I_TE_PART(TRACEC_I_TE_DYNAMIC_NAME, TRACEC_I_TE_T0, TRACEC_I_TE_RULE_0, NULL, TRACEC_I_TE_M_s, str)

/* Out of line: writes the event (the category was found enabled); _dyn: its type is a _DYN one. */
void tracec_i_te_emit(tracec_te_category *cat, const tracec_te_arg *args, size_t n);
void tracec_i_te_emit_dyn(tracec_te_category *cat, const tracec_te_arg *args, size_t n);

/* ---- compile-time checks and the description -> tracec_te_arg mapping (internal) ---- */

#define TRACEC_I_TE_CAT_(a, b) a##b
#define TRACEC_I_TE_CAT(a, b) TRACEC_I_TE_CAT_(a, b)

#define TRACEC_I_TE_MSG_TYPE                                                                                 \
    "tracec: a track event needs exactly one type among its parts: TRACEC_TE_INSTANT, TRACEC_TE_SLICE_BEGIN, " \
    "TRACEC_TE_SLICE_END, TRACEC_TE_COUNTER_INT, TRACEC_TE_COUNTER_DOUBLE (or TRACEC_TE_INSTANT_DYN, "         \
    "TRACEC_TE_SLICE_BEGIN_DYN)"
#define TRACEC_I_TE_MSG_N                                                                                    \
    "tracec: this event name is not a string literal (literal names are interned by address); for a name "   \
    "known at run time use the _DYN form: TRACEC_INSTANT_DYN, TRACEC_SLICE_BEGIN_DYN, TRACEC_TE_INSTANT_DYN, " \
    "TRACEC_TE_SLICE_BEGIN_DYN, TRACEC_EVENT_AS_DYN, TRACEC_SLICE_BEGIN_AS_DYN"
#define TRACEC_I_TE_MSG_K                                                                                    \
    "tracec: a debug annotation key must be a string literal (keys are interned by address); a value "       \
    "known at run time goes in the value: TRACEC_TE_ARG_STRING(\"key\", str)"
#define TRACEC_I_TE_MSG_C \
    "tracec: a counter name must be a string literal (it names the counter track, interned by address)"
#define TRACEC_I_TE_MSG_MANY "tracec: a track event has at most 32 parts (its type included)"

#ifdef __cplusplus
#define TRACEC_I_TE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
extern "C++" { /* templates, also when the header is included inside an extern "C" block */
/* Whether `s` is a string literal: an array of const char whose address is a constant. */
template <typename T> struct tracec_i_te_is_literal_t {
    static const bool value = false;
};
template <size_t N> struct tracec_i_te_is_literal_t<const char (&)[N]> {
    static const bool value = true;
};
#define TRACEC_I_TE_IS_LITERAL(s) (tracec_i_te_is_literal_t<decltype((s))>::value && __builtin_constant_p(s))
/* The check as an expression (the typed forms' names). */
template <bool Literal> inline int tracec_i_te_check_name(void) {
    static_assert(Literal, TRACEC_I_TE_MSG_N);
    return 1;
}
}
#define TRACEC_I_TE_CHECK_NAME_EXPR(s) tracec_i_te_check_name<TRACEC_I_TE_IS_LITERAL(s)>()
#else
#define TRACEC_I_TE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define TRACEC_I_TE_IS_LITERAL(s) \
    (__builtin_types_compatible_p(__typeof__(s), char[sizeof(s)]) && __builtin_constant_p(s))
#define TRACEC_I_TE_CHECK_NAME_EXPR(s) \
    sizeof(struct { _Static_assert(TRACEC_I_TE_IS_LITERAL(s), TRACEC_I_TE_MSG_N); int tracec_i_te_ok_; })
#endif

/* Part descriptions -> tracec_te_arg initializers (each followed by a comma). */
#ifdef __cplusplus
static inline tracec_te_arg tracec_i_te_arg_z(uint32_t k, const char *n) {
    tracec_te_arg a = {k, n, {0}};
    return a;
}
static inline tracec_te_arg tracec_i_te_arg_i(uint32_t k, const char *n, int64_t v) {
    tracec_te_arg a = {k, n, {0}};
    a.v.i = v;
    return a;
}
static inline tracec_te_arg tracec_i_te_arg_u(uint32_t k, const char *n, uint64_t v) {
    tracec_te_arg a = {k, n, {0}};
    a.v.u = v;
    return a;
}
static inline tracec_te_arg tracec_i_te_arg_d(uint32_t k, const char *n, double v) {
    tracec_te_arg a = {k, n, {0}};
    a.v.d = v;
    return a;
}
static inline tracec_te_arg tracec_i_te_arg_s(uint32_t k, const char *n, const char *v) {
    tracec_te_arg a = {k, n, {0}};
    a.v.s = v;
    return a;
}
#define TRACEC_I_TE_M_z(kind, name, value) tracec_i_te_arg_z(kind, name)
#define TRACEC_I_TE_M_i(kind, name, value) tracec_i_te_arg_i(kind, name, (int64_t)(value))
#define TRACEC_I_TE_M_u(kind, name, value) tracec_i_te_arg_u(kind, name, (uint64_t)(value))
#define TRACEC_I_TE_M_d(kind, name, value) tracec_i_te_arg_d(kind, name, (double)(value))
#define TRACEC_I_TE_M_s(kind, name, value) tracec_i_te_arg_s(kind, name, (value))
#else
#define TRACEC_I_TE_M_z(kind, name, value) {kind, name, {0}}
#define TRACEC_I_TE_M_i(kind, name, value) {kind, name, {.i = (int64_t)(value)}}
#define TRACEC_I_TE_M_u(kind, name, value) {kind, name, {.u = (uint64_t)(value)}}
#define TRACEC_I_TE_M_d(kind, name, value) {kind, name, {.d = (double)(value)}}
#define TRACEC_I_TE_M_s(kind, name, value) {kind, name, {.s = (value)}}
#endif
#define TRACEC_I_TE_INIT_(kind, is_type, rule, name, member, value) member(kind, name, value),
#define TRACEC_I_TE_INIT(part) TRACEC_I_TE_INIT_ part

/* Part descriptions -> `+ is_type` (the number of types), and the name checks (statements). */
#define TRACEC_I_TE_T0(types, dyns) 0
#define TRACEC_I_TE_T1(types, dyns) (types)
#define TRACEC_I_TE_TD(types, dyns) ((types) + (dyns))
#define TRACEC_I_TE_TYPES_(kind, is_type, rule, name, member, value) +is_type(1, 0)
#define TRACEC_I_TE_TYPES(part) TRACEC_I_TE_TYPES_ part
#define TRACEC_I_TE_DYNS_(kind, is_type, rule, name, member, value) +is_type(0, 1)
#define TRACEC_I_TE_DYNS(part) TRACEC_I_TE_DYNS_ part
#define TRACEC_I_TE_RULE_0(name)
#define TRACEC_I_TE_RULE_N(name) TRACEC_I_TE_STATIC_ASSERT(TRACEC_I_TE_IS_LITERAL(name), TRACEC_I_TE_MSG_N);
#define TRACEC_I_TE_RULE_K(name) TRACEC_I_TE_STATIC_ASSERT(TRACEC_I_TE_IS_LITERAL(name), TRACEC_I_TE_MSG_K);
#define TRACEC_I_TE_RULE_C(name) TRACEC_I_TE_STATIC_ASSERT(TRACEC_I_TE_IS_LITERAL(name), TRACEC_I_TE_MSG_C);
#define TRACEC_I_TE_NAMES_(kind, is_type, rule, name, member, value) rule(name)
#define TRACEC_I_TE_NAMES(part) TRACEC_I_TE_NAMES_ part

/* The number of arguments, 1 to 32; 99 for 33 to 40. */
#define TRACEC_I_TE_NARGS(...)                                                                                   \
    TRACEC_I_TE_NARGS_(__VA_ARGS__, 99, 99, 99, 99, 99, 99, 99, 99, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, \
                       21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TRACEC_I_TE_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, \
                           a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35, a36,  \
                           a37, a38, a39, a40, n, ...)                                                          \
    n

/* m(part) for every part. */
#define TRACEC_I_TE_MAP(m, ...) TRACEC_I_TE_CAT(TRACEC_I_TE_MAP_, TRACEC_I_TE_NARGS(__VA_ARGS__))(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_99(m, ...)
#define TRACEC_I_TE_MAP_1(m, x) m(x)
#define TRACEC_I_TE_MAP_2(m, x, ...) m(x) TRACEC_I_TE_MAP_1(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_3(m, x, ...) m(x) TRACEC_I_TE_MAP_2(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_4(m, x, ...) m(x) TRACEC_I_TE_MAP_3(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_5(m, x, ...) m(x) TRACEC_I_TE_MAP_4(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_6(m, x, ...) m(x) TRACEC_I_TE_MAP_5(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_7(m, x, ...) m(x) TRACEC_I_TE_MAP_6(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_8(m, x, ...) m(x) TRACEC_I_TE_MAP_7(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_9(m, x, ...) m(x) TRACEC_I_TE_MAP_8(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_10(m, x, ...) m(x) TRACEC_I_TE_MAP_9(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_11(m, x, ...) m(x) TRACEC_I_TE_MAP_10(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_12(m, x, ...) m(x) TRACEC_I_TE_MAP_11(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_13(m, x, ...) m(x) TRACEC_I_TE_MAP_12(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_14(m, x, ...) m(x) TRACEC_I_TE_MAP_13(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_15(m, x, ...) m(x) TRACEC_I_TE_MAP_14(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_16(m, x, ...) m(x) TRACEC_I_TE_MAP_15(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_17(m, x, ...) m(x) TRACEC_I_TE_MAP_16(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_18(m, x, ...) m(x) TRACEC_I_TE_MAP_17(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_19(m, x, ...) m(x) TRACEC_I_TE_MAP_18(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_20(m, x, ...) m(x) TRACEC_I_TE_MAP_19(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_21(m, x, ...) m(x) TRACEC_I_TE_MAP_20(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_22(m, x, ...) m(x) TRACEC_I_TE_MAP_21(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_23(m, x, ...) m(x) TRACEC_I_TE_MAP_22(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_24(m, x, ...) m(x) TRACEC_I_TE_MAP_23(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_25(m, x, ...) m(x) TRACEC_I_TE_MAP_24(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_26(m, x, ...) m(x) TRACEC_I_TE_MAP_25(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_27(m, x, ...) m(x) TRACEC_I_TE_MAP_26(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_28(m, x, ...) m(x) TRACEC_I_TE_MAP_27(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_29(m, x, ...) m(x) TRACEC_I_TE_MAP_28(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_30(m, x, ...) m(x) TRACEC_I_TE_MAP_29(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_31(m, x, ...) m(x) TRACEC_I_TE_MAP_30(m, __VA_ARGS__)
#define TRACEC_I_TE_MAP_32(m, x, ...) m(x) TRACEC_I_TE_MAP_31(m, __VA_ARGS__)

/*
 * The general form: TRACEC_TE(cat, TYPE, parts...), e.g.
 *     TRACEC_TE(io, TRACEC_TE_INSTANT("read"), TRACEC_TE_ARG_INT("bytes", n), TRACEC_TE_FLOW(7));
 * Nothing after `cat` is evaluated when the category is disabled.  Exactly
 * one type, at most 32 parts and literal names and keys are checked at
 * compile time (a static assertion says what is wrong).
 */
#define TRACEC_TE(cat, ...)                                                                                \
    do {                                                                                                   \
        TRACEC_I_TE_STATIC_ASSERT(TRACEC_I_TE_NARGS(__VA_ARGS__) <= 32, TRACEC_I_TE_MSG_MANY);             \
        TRACEC_I_TE_STATIC_ASSERT(TRACEC_I_TE_NARGS(__VA_ARGS__) > 32 ||                                   \
                                      (0 TRACEC_I_TE_MAP(TRACEC_I_TE_TYPES, __VA_ARGS__)) == 1,            \
                                  TRACEC_I_TE_MSG_TYPE);                                                   \
        TRACEC_I_TE_MAP(TRACEC_I_TE_NAMES, __VA_ARGS__)                                                    \
        if (TRACEC_TE_ENABLED(cat)) {                                                                      \
            const tracec_te_arg tracec_i_te_a_[] = {TRACEC_I_TE_MAP(TRACEC_I_TE_INIT, __VA_ARGS__)};       \
            if ((0 TRACEC_I_TE_MAP(TRACEC_I_TE_DYNS, __VA_ARGS__)) == 0)                                   \
                tracec_i_te_emit(&tracec_te_cat_##cat, tracec_i_te_a_,                                     \
                                 sizeof tracec_i_te_a_ / sizeof tracec_i_te_a_[0]);                        \
            else                                                                                           \
                tracec_i_te_emit_dyn(&tracec_te_cat_##cat, tracec_i_te_a_,                                 \
                                     sizeof tracec_i_te_a_ / sizeof tracec_i_te_a_[0]);                    \
        }                                                                                                  \
    } while (0)

/* Shorthands (the ones without parts have entry points of their own: the same events, fewer instructions). */
void tracec_i_te_slice_begin(tracec_te_category *cat, const char *name);
void tracec_i_te_slice_end(tracec_te_category *cat);
void tracec_i_te_instant(tracec_te_category *cat, const char *name);
#define TRACEC_I_TE_CALL(cat, call)                                                                        \
    do {                                                                                                   \
        if (TRACEC_TE_ENABLED(cat)) call;                                                                  \
    } while (0)
#define TRACEC_SLICE_BEGIN(cat, name) \
    TRACEC_I_TE_CALL(cat, tracec_i_te_slice_begin(&tracec_te_cat_##cat, TRACEC_I_TE_LITERAL_NAME(name)))
#define TRACEC_SLICE_BEGIN_DYN(cat, str) TRACEC_TE(cat, TRACEC_TE_SLICE_BEGIN_DYN(str))
#define TRACEC_SLICE_END(cat) TRACEC_I_TE_CALL(cat, tracec_i_te_slice_end(&tracec_te_cat_##cat))
#define TRACEC_INSTANT(cat, name) \
    TRACEC_I_TE_CALL(cat, tracec_i_te_instant(&tracec_te_cat_##cat, TRACEC_I_TE_LITERAL_NAME(name)))
#define TRACEC_INSTANT_DYN(cat, str) TRACEC_TE(cat, TRACEC_TE_INSTANT_DYN(str))
#define TRACEC_COUNTER(cat, name, value) TRACEC_TE(cat, TRACEC_TE_COUNTER_INT(name, value))
#define TRACEC_COUNTER_DOUBLE(cat, name, value) TRACEC_TE(cat, TRACEC_TE_COUNTER_DOUBLE(name, value))

/* ---- the typed form ------------------------------------------------------------- */

/* A TracePacket opened by the typed form (internal; a local of the macro). */
typedef struct tracec_te_packet {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    void *i_thread;
    uint64_t i_name_iid, i_cat_iid; /* 0: written inline */
    uint32_t i_type;
    tracec_msg i_ev;  /* the TrackEvent open in pkt, its type, category and name written */
    uint32_t i_more;  /* when i_thread is tagged: the other sessions, whose packets copy the block's bytes */
    uint32_t i_fill;  /* where the block's bytes start in pkt */
} tracec_te_packet;

/*
 * `type`: a TrackEvent.Type.  _dyn: `name` is interned by content; _end: an
 * END (no name).  Opens the packet and its TrackEvent (i_ev) with the type,
 * category and name written.
 */
int tracec_i_te_open(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type);
int tracec_i_te_open_dyn(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type);
int tracec_i_te_open_end(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type);
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
 * thread's later events of the session are dropped as misuse.  With several
 * sessions enabling the category the block still runs once: each other
 * session gets its own packet (its sequence, clock and interned names) with
 * a copy of the fields the block wrote.
 */
/* (The begin function is named, not called: only a TrackEvent wrapper has one.) */
/* (The packet is left uninitialised: open sets what close reads; the state says whether it ran.) */
#define TRACEC_I_EVENT_AS(cat, Wrapper, ev, name, type, open, close)                                   \
    for (int tracec_i_te_s_ = 0; tracec_i_te_s_ == 0 && TRACEC_TE_ENABLED(cat); tracec_i_te_s_ = 1)      \
        for (tracec_te_packet tracec_i_te_p_;                                                            \
             tracec_i_te_s_ == 0 && (tracec_i_te_s_ = 1, open(&tracec_i_te_p_, &tracec_te_cat_##cat, name, type));) \
        for (Wrapper ev, *tracec_i_te_once_ =                                                            \
                             ((void)&perfetto_protos_TracePacket_begin_track_event_as_##Wrapper,        \
                              ev.base.msg = tracec_i_te_p_.i_ev, &ev);                                   \
             tracec_i_te_once_ != NULL;                                                                  \
             perfetto_protos_TracePacket_end_track_event_as_##Wrapper(&tracec_i_te_p_.pkt, &ev),         \
             close(&tracec_i_te_p_), tracec_i_te_once_ = NULL)

/* A literal name, checked at compile time. */
#define TRACEC_I_TE_LITERAL_NAME(name) (TRACEC_I_TE_CHECK_NAME_EXPR(name) ? (name) : (name))

#define TRACEC_EVENT_AS(cat, Wrapper, ev, name)                                                          \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, TRACEC_I_TE_LITERAL_NAME(name),                                  \
                      (uint32_t)perfetto_protos_TrackEvent_TYPE_INSTANT, tracec_i_te_open, tracec_i_te_close)
#define TRACEC_SLICE_BEGIN_AS(cat, Wrapper, ev, name)                                                    \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, TRACEC_I_TE_LITERAL_NAME(name),                                  \
                      (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN, tracec_i_te_open, tracec_i_te_close)
/*
 * The same with a name known at run time (any NUL-terminated string, read
 * before the block runs), interned by content like TRACEC_TE_INSTANT_DYN.
 */
#define TRACEC_EVENT_AS_DYN(cat, Wrapper, ev, str)                                                       \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, (str), (uint32_t)perfetto_protos_TrackEvent_TYPE_INSTANT,         \
                      tracec_i_te_open_dyn, tracec_i_te_close)
#define TRACEC_SLICE_BEGIN_AS_DYN(cat, Wrapper, ev, str)                                                 \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, (str), (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN,     \
                      tracec_i_te_open_dyn, tracec_i_te_close)
/*
 * The END of the innermost slice of the thread's track, written as
 * `Wrapper`: fields known only at the end (a status, a size) go on it, and
 * the trace processor merges them into the slice's args.
 *
 *     TRACEC_SLICE_END_AS(gfx, my_app_MyEvent, ev) { my_app_MyEvent_set_custom_counter(&ev, bytes); }
 *
 * As with TRACEC_SLICE_END, an END whose BEGIN is not in the trace is not
 * written (its block does not run).
 */
#define TRACEC_SLICE_END_AS(cat, Wrapper, ev)                                                            \
    TRACEC_I_EVENT_AS(cat, Wrapper, ev, (const char *)NULL, (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_END, \
                      tracec_i_te_open_end, tracec_i_te_close)

/* ---- tracks --------------------------------------------------------------------- */

/* The uuids of this process's track and of the calling thread's track: distinct for every thread, whatever its
   tid, and derived from the pid (a fork child's are new).  A track of your own needs a uuid of its own. */
uint64_t tracec_te_process_track_uuid(void);
uint64_t tracec_te_thread_track_uuid(void);

/*
 * Declares a custom track (`counter` 0) or a counter track (`counter` 1)
 * with a user uuid (non-zero, unique in the trace) and name, child of the
 * process track.  Its TrackDescriptor is written (durable) now if a session
 * is active and at the start of every later session.  Declaring the same
 * uuid again with the same name and kind does nothing (SUCCESS).
 * INVALID_ARGUMENT: uuid 0 or the process track's, a NULL name, a uuid
 * declared before with another name or kind.  LIMIT_EXCEEDED: more than
 * 256 tracks.
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
    const char *const *categories;  /* enabled categories; NULL or num_categories 0 = all.  A name no
                                       registered category has by the stop is named on stderr there */
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
     * is flushed and the handler runs.  A signal ignored at the start
     * (SIG_IGN) stays ignored, with no handler.
     */
    int stop_on_signals;
    /*
     * A file session: the trace never grows past this many bytes (0: no
     * limit; else at least TRACEC_SESSION_MIN_FILE_SIZE).  The packets
     * delivered after it is reached are not written: they count as lost in
     * the trace's TraceStats (the trace processor's stats, severity
     * data_loss), and the stop says so on stderr.  The last 512 bytes are
     * kept for those statistics.
     */
    uint64_t max_file_size;
} tracec_session_config;

#define TRACEC_SESSION_MIN_FILE_SIZE 4096u

#define TRACEC_SESSION_FLUSH_PERIOD_DEFAULT_MS 1000u
#define TRACEC_SESSION_FLUSH_NEVER UINT32_MAX

#define TRACEC_SESSION_CONFIG_INIT \
    {NULL, NULL, NULL, TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, 0, 0, NULL, 0, 0, NULL, 0, 0, 0}

/*
 * Creates a context and a buffer, registers every category, starts, and
 * writes the session's durable packets: the extension descriptors of every
 * registered generated file (the runtime's own schema excepted), the
 * process track, the declared tracks, a ClockSnapshot; then the session's
 * categories are on.  Up to TRACEC_TE_MAX_SESSIONS sessions at once, each
 * with its own buffer, clock, categories, sequences and interning:
 * LIMIT_EXCEEDED when that many are active.  IO_ERROR (errno set) when the file
 * cannot be created, errno EBUSY when another trace writer has it open (a
 * `tracec record -o` of the same file: said on stderr); BUFFER_FULL when those packets do not fit (an explicit
 * durable_size too small); any status of the context and buffer calls.
 * INVALID_ARGUMENT: no path and no callback, an unsupported clock_id, a
 * max_file_size below TRACEC_SESSION_MIN_FILE_SIZE or without a path.
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

/*
 * The packets the session has lost so far, as its TraceStats count them
 * (traced_buf_trace_writer_packet_loss): its buffer's dropped, overwritten
 * and refused packets, and the events the layer dropped (misuse, a pause,
 * an event inside a slice whose BEGIN is not in the trace: docs/track-
 * events.md, "Nesting after losses"), and the packets max_file_size kept
 * out of the file.  0 for NULL or an ended session's handle.
 */
uint64_t tracec_session_lost(const tracec_session *s);

/* ---- the recorder's session (`tracec record`) -------------------------------------- */

/*
 * A recorder (`tracec record`, docs/record.md) can be one of the process's
 * sessions: while it traces, every event also goes to its session, whose
 * categories are the recorder's (`--categories`; none given: all).  The
 * recorder client is one background thread that connects to the
 * recorder's socket, retrying every 50 ms while there is none.
 *
 * It starts by itself when the environment variable TRACEC_RECORDER_SOCKET
 * is set (`tracec record -- PROGRAM` sets it for PROGRAM): at the first
 * TRACEC_TE_DEFINE_CATEGORIES constructor or tracec_session_start, and it
 * then waits for a running recorder to start tracing it (up to 5 s for
 * its answer, 1 s more for its Start), so the events that follow are
 * recorded; a process that exits before a recorder it found answered says
 * so on stderr.  The value `default` names the
 * well-known socket /tmp/tracec-UID/recorder.sock (`tracec record
 * --attach`).  Without the variable or a call below, no thread starts.
 *
 * The recorder's session takes one of the TRACEC_TE_MAX_SESSIONS slots
 * while it traces; with none free the client refuses it, and the recorder
 * says why.  A fork child (without exec) writes nothing to the recorder.
 * The process writes as one provider: tracec/provider.h's provider when
 * the program registered one, else a provider named after the process
 * that declares every registered category (`tracec record --list`).
 */
typedef struct tracec_te_recorder_config {
    size_t struct_size;      /* sizeof(tracec_te_recorder_config) */
    const char *socket_path; /* NULL: $TRACEC_RECORDER_SOCKET, else /tmp/tracec-UID/recorder.sock */
    const char *name;        /* the provider's name (1..100 chars, copied); NULL: /proc/self/comm */
    bool synchronous;        /* wait (as above) for a running recorder to start tracing this process */
    int max_wait_ms;         /* as tracec_provider_registration.max_wait_ms (0: its default) */
} tracec_te_recorder_config;

#define TRACEC_TE_RECORDER_CONFIG_INIT {sizeof(tracec_te_recorder_config), NULL, NULL, false, 0}

/*
 * Starts the recorder client (`cfg` NULL: the defaults).  SUCCESS; also
 * when it runs already (then `cfg` is ignored).  INVALID_ARGUMENT: a bad
 * name, path or wait; ERROR: no thread.  With `synchronous`, SUCCESS says
 * nothing about a recorder: tracec_te_recorder_stats does.
 */
tracec_status_t tracec_te_recorder_connect(const tracec_te_recorder_config *cfg) TRACEC_I_WARN_UNUSED;

/*
 * Stops the recorder client: what was written is handed to the recorder,
 * the connection closes, the thread ends.  Returns within max_wait_ms
 * plus 100 ms whatever the recorder does.  Nothing to do: returns.
 */
void tracec_te_recorder_disconnect(void);

typedef struct tracec_te_recorder_stats_t {
    bool connected;     /* the client runs (tracec_te_recorder_connect or the environment) */
    bool tracing;       /* a recorder's session is active now */
    uint64_t produced;  /* packets begun in the recorder's buffers */
    uint64_t dropped;   /* of which lost (no room, a writer error) */
    uint64_t runs;      /* Start requests obeyed */
    uint64_t refused;   /* recorders refused as untrusted, and sessions refused (no free slot) */
} tracec_te_recorder_stats_t;

/*
 * The client's counters since it started.  After tracec_te_recorder_disconnect,
 * the final counters of the client that ended (connected and tracing false:
 * what the last hand-over lost is in them); all zero when no client ran in
 * this process (a fork child's client is its own).
 */
tracec_te_recorder_stats_t tracec_te_recorder_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TRACK_EVENT_H */
