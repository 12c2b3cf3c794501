/*
 * te_util.h - helpers of the track-event tests: a scratch directory, the
 * python3-protobuf checker (check_trace.py) and Perfetto's trace processor.
 */
#ifndef TRACEC_TESTS_TE_UTIL_H
#define TRACEC_TESTS_TE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/track_event.h"

/*
 * The backend the session driver below runs on, read once from the
 * environment variable TRACEC_TEST_BACKEND: unset or "local", the
 * program's own session (tracec_session_start); "record", the recorder's
 * session (`tracec record --attach`, a process of its own that reads the
 * program's shared buffer).
 */
int te_record_backend(void);

/* On the record backend: skips the test, which needs what only a session of the program's own has. */
#define TE_LOCAL_ONLY(reason)                                              \
    do {                                                                   \
        if (te_record_backend()) cr_skip_test("local backend only: " reason); \
    } while (0)

/*
 * Starts a session of `cfg` on the backend.  Local: tracec_session_start.
 * Record: runs `tracec record --attach` on a socket of the scratch
 * directory, writing cfg->path (mode, buffer size (at least 8 KiB),
 * categories and process name from `cfg`; a LOSSLESS STREAMING session
 * lets writers wait for the recorder, a DISCARD one drops at once), then
 * connects to it and waits until its session traces, so the events
 * written after the call are recorded; *out is then NULL.  Asserts
 * success.  One record session at a time.
 */
void te_start(const tracec_session_config *cfg, tracec_session **out);

/*
 * Stops what te_start started.  Record: disconnects (what was written is
 * handed to the recorder), then SIGINT to the recorder, which writes the
 * trace and exits; SUCCESS when it exited 0.  The recorder's summary
 * instant of each provider is then taken out of the trace
 * (check_trace.py --strip-recorder-summaries; tests/record check them), so
 * the trace processor shows the program's events only; its trace_stats
 * stay.
 */
tracec_status_t te_stop(tracec_session *s);

/*
 * Runs the shell command `cmd` (a program and its arguments) on the
 * backend and returns the program's exit status (128 + N: killed by
 * signal N), its stdout and stderr in *out (malloc'd).  Local: as it is.
 * Record: under `tracec record -o trace REC_OPTS --`, which connects the
 * program to the recorder (TRACEC_RECORDER_SOCKET, docs/record.md) and
 * writes `trace` when the program ends; the recorder's summaries are then
 * taken out of it as te_stop does.  `rec_opts` NULL: "--mode streaming
 * --wait 10000".
 */
int te_run_program(const char *trace, const char *rec_opts, const char *cmd, char **out);

/* Packets lost so far by the running session: tracec_session_lost (local), or the recorder client's
   dropped count (record). */
uint64_t te_lost_now(const tracec_session *s);

/* Record backend: what the last `tracec record` printed (malloc'd; "" when none, and for the local backend). */
char *te_recorder_log(void);

/*
 * A path `name` inside this process's scratch directory (static storage, one
 * per call slot 0..7).  The directory is removed at exit unless TE_KEEP is set.
 */
const char *te_path(const char *name);

/* Writes data[0..size) to te_path(name) (a trace a write callback collected); returns that path. */
const char *te_save(const char *name, const void *data, size_t size);

/* Runs `cmd` with /bin/sh; returns its exit status (-1 if abnormal) and its stdout in *out (malloc'd). */
int te_run(const char *cmd, char **out);

/*
 * check_trace.py on `trace` (`flags` may be NULL); exit status, its output
 * in *out (malloc'd).  A trace a recorder wrote (te_start, te_run_program
 * on the record backend) it reads with --recorder (the recorder's own
 * packets left out).
 */
int te_check(const char *trace, const char *flags, char **out);

/*
 * The trace processor's CSV answer to `sql` on `trace` in *out (malloc'd).
 * Returns 1; skips the test (tt_skip_without_trace_processor) when the trace
 * processor is absent.
 */
int te_tp(const char *trace, const char *sql, char **out);

/*
 * The trace processor's CSV answers to `n` queries (each one statement
 * ending in ';') on `trace` from one launch: answers[i] (malloc'd) is what
 * te_tp gives for sqls[i] alone.  Returns 1, or 0 (every answer NULL, the
 * output on stderr) when the output does not split into `n` answers; skips
 * the test like te_tp.
 */
int te_tp_many(const char *trace, const char *const *sqls, size_t n, char **answers);

/* The first value of a CSV answer as a number (-1 when it has no row). */
long te_tp_first_long(const char *answer);

/*
 * The rows of the `stats` table (value > 0) that are errors or data losses,
 * or whose name says events were skipped or a sequence's incremental state
 * was invalid (notices, but events the reader did not show); empty when none.
 * The session's own loss count is not among them: te_tp_packet_loss.
 */
char *te_tp_bad_stats(const char *trace);

/*
 * The session's own data-loss count (TraceStats' trace_writer_packet_loss,
 * which te_tp_bad_stats leaves out): -2 when the trace processor is absent.
 */
long te_tp_packet_loss(const char *trace);

/* At most this many queries besides the stats ones in one te_tp_losses_and. */
#define TE_TP_MAX_QUERIES 16

/*
 * te_tp_bad_stats (*bad, malloc'd), te_tp_packet_loss (*lost) and the
 * answers to sqls[0..n) (answers[i], malloc'd, as te_tp_many) of `trace`,
 * all from one launch of the trace processor (bad or lost may be NULL).
 * Returns 1, or 0 when the output did not split into the answers.
 */
int te_tp_losses_and(const char *trace, const char *const *sqls, size_t n, char **bad, long *lost, char **answers);

/* The line `key<TAB>value` of a check_trace.py summary: the value (malloc'd), or NULL. */
char *te_summary(const char *summary, const char *key);

/* The value of `key` in a check_trace.py summary as a number (0 when absent). */
long te_summary_long(const char *summary, const char *key);

/*
 * Whether the trace processor shows exactly the events check_trace.py's
 * `summary` counts in `trace`: each slice begin and instant a slice row,
 * each counter event a counter row.  NULL when it does (or the trace
 * processor is absent), else both sides (malloc'd).
 */
char *te_tp_shown_mismatch(const char *trace, const char *summary);

#endif
