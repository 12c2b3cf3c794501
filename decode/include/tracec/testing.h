/*
 * tracec/testing.h - Criterion assertions for traces.
 *
 *     #include <criterion/criterion.h>
 *     #include "tracec/testing.h"
 *
 *     Test(my_app, writes_one_slice) {
 *         ... write a trace into memory (tracec_trace_file_open_memory) ...
 *         tracec_assert_trace_eq_text(data, size,
 *             "packet { timestamp: 10 track_event { type: TYPE_SLICE_BEGIN name: \"work\" } }",
 *             NULL);
 *     }
 *
 * The comparison is by meaning (field order in the text, packed/unpacked
 * encodings do not matter).  On a failure the message is a unified diff of
 * the expected and actual textprotos (as `protoc --decode` would print
 * them), or the parse / decode error with its line:column or byte offset.
 *
 * `pool` may be NULL: the default pool holds the descriptors compiled into
 * the test program (generated writers register theirs) and the built-in
 * Perfetto-compatible schema.  Extensions described by ExtensionDescriptor
 * packets of the trace are resolved too.  The `_type` variants take the
 * root message type; the others compare perfetto.protos.Trace.
 *
 * The helpers that return reports (tracec_testing_check_*) can be used
 * without Criterion.  Not thread-safe: Criterion runs each test in its own
 * process, which is what this is written for.
 */
#ifndef TRACEC_TESTING_H
#define TRACEC_TESTING_H

#include <stddef.h>

#include "tracec/decode.h"
#include "tracec/descpool.h"
#include "tracec/protoc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The pool used when NULL is passed: compile-time registry + built-in
 * schema, created on first use and kept for the life of the process.
 * NULL only if it cannot be built (out of memory).
 */
tracec_pool *tracec_testing_default_pool(void);

/*
 * Compares `size` bytes at `data` (a binary `type_name`, NULL meaning
 * perfetto.protos.Trace) with `expected_text`.  Returns NULL when they mean
 * the same; otherwise a report (diff or error) that stays valid until the
 * next call of a tracec_testing_check_* function (do not free it).
 */
const char *tracec_testing_check_trace(const void *data, size_t size, const char *expected_text,
                                       tracec_pool *pool, const char *type_name);

/*
 * What a partial comparison looks at (tracec_testing_check_trace_match).
 * Field paths name fields inside a top-level message (a packet of a Trace):
 * "timestamp", "track_event.track_uuid", "[my_app.MyEvent.custom_string]",
 * "track_event.[my_app.MyEvent.request].url"; unknown fields by number.
 */
typedef struct tracec_match {
    /*
     * Compare only the packets of the trace that have at least one of these
     * fields (the others are left out); NULL-terminated, NULL or empty:
     * every packet.  {"track_event", NULL}: the track events only.  The
     * expected text is taken whole: write the packets you expect.
     */
    const char *const *with;
    /*
     * Fields left out of both sides, wherever the path leads (every
     * occurrence); NULL-terminated, may be NULL.  {"timestamp",
     * "trusted_packet_sequence_id", "extension_descriptor", NULL}: what a
     * test rarely wants to spell out.  A packet that held nothing but
     * ignored fields is left out as a whole.
     */
    const char *const *ignore;
} tracec_match;

/* A NULL-terminated list for tracec_match: TRACEC_FIELDS("timestamp", "track_event.track_uuid"). */
#define TRACEC_FIELDS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * tracec_testing_check_trace() on part of the trace: both sides are
 * normalized (decoded) as there, then only the packets `match` selects are
 * kept and its ignored fields dropped, then compared; the report is the
 * same unified diff, of what was compared.  `match` NULL compares all.
 */
const char *tracec_testing_check_trace_match(const void *data, size_t size, const char *expected_text,
                                             tracec_pool *pool, const char *type_name,
                                             const tracec_match *match);

/* The same for a trace file read from `path`. */
const char *tracec_testing_check_file(const char *path, const char *expected_text,
                                      tracec_pool *pool, const char *type_name);

/*
 * The descriptor conflicts of `pool` (NULL: the default pool), one
 * "descriptor conflict: ..." line each (tracec_pool_conflict()), or NULL
 * when there are none.  Valid until the next call.  The check functions
 * print each conflict once on standard error and append them to a
 * failure's report: two extensions with one number show under the name of
 * the first one added, which may not be the one the test expects.
 */
const char *tracec_testing_conflicts(const tracec_pool *pool);

/* Compares two textprotos of `type_name` by meaning. */
const char *tracec_testing_check_text(const char *actual_text, const char *expected_text,
                                      tracec_pool *pool, const char *type_name);

#ifdef __cplusplus
}
#endif

/* Criterion assertions (need <criterion/criterion.h> in the including file). */
#define tracec_assert_trace_eq_text_type(data, size, expected_text, pool, type_name)                  \
    do {                                                                                          \
        const char *tracec_i_report_ =                                                            \
            tracec_testing_check_trace((data), (size), (expected_text), (pool), (type_name));    \
        if (tracec_i_report_) cr_assert_fail("trace differs from the expected textproto:\n%s",    \
                                             tracec_i_report_);                                   \
    } while (0)

#define tracec_expect_trace_eq_text_type(data, size, expected_text, pool, type_name)                  \
    do {                                                                                          \
        const char *tracec_i_report_ =                                                            \
            tracec_testing_check_trace((data), (size), (expected_text), (pool), (type_name));    \
        if (tracec_i_report_) cr_expect_fail("trace differs from the expected textproto:\n%s",    \
                                             tracec_i_report_);                                   \
    } while (0)

#define tracec_assert_trace_eq_text(data, size, expected_text, pool)                                  \
    tracec_assert_trace_eq_text_type(data, size, expected_text, pool, NULL)
#define tracec_expect_trace_eq_text(data, size, expected_text, pool)                                  \
    tracec_expect_trace_eq_text_type(data, size, expected_text, pool, NULL)

/*
 * Partial assertions: the trailing arguments initialise a tracec_match:
 *     tracec_assert_trace_match(data, size, "packet { track_event { name: \"work\" } }", NULL,
 *                               .with = TRACEC_FIELDS("track_event"),
 *                               .ignore = TRACEC_FIELDS("timestamp", "trusted_packet_sequence_id"));
 */
#define tracec_assert_trace_match(data, size, expected_text, pool, ...)                               \
    do {                                                                                          \
        const char *tracec_i_report_ = tracec_testing_check_trace_match(                          \
            (data), (size), (expected_text), (pool), NULL, &(const tracec_match){__VA_ARGS__});   \
        if (tracec_i_report_) cr_assert_fail("trace differs from the expected textproto:\n%s",    \
                                             tracec_i_report_);                                   \
    } while (0)

#define tracec_expect_trace_match(data, size, expected_text, pool, ...)                               \
    do {                                                                                          \
        const char *tracec_i_report_ = tracec_testing_check_trace_match(                          \
            (data), (size), (expected_text), (pool), NULL, &(const tracec_match){__VA_ARGS__});   \
        if (tracec_i_report_) cr_expect_fail("trace differs from the expected textproto:\n%s",    \
                                             tracec_i_report_);                                   \
    } while (0)

#define tracec_assert_file_eq_text(path, expected_text, pool)                                         \
    do {                                                                                          \
        const char *tracec_i_report_ =                                                            \
            tracec_testing_check_file((path), (expected_text), (pool), NULL);                     \
        if (tracec_i_report_) cr_assert_fail("trace file %s differs from the expected textproto:\n%s", \
                                             (path), tracec_i_report_);                           \
    } while (0)

#define tracec_assert_text_eq(actual_text, expected_text, pool, type_name)                            \
    do {                                                                                          \
        const char *tracec_i_report_ =                                                            \
            tracec_testing_check_text((actual_text), (expected_text), (pool), (type_name));       \
        if (tracec_i_report_) cr_assert_fail("textprotos differ:\n%s", tracec_i_report_);        \
    } while (0)

#endif /* TRACEC_TESTING_H */
