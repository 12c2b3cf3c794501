/*
 * tracec/recorder.h - the trace manager of `tracec record`: listens for
 * providers (tracec/provider.h) on a Unix socket, gives each a shared
 * buffer and a fifo, drives Initialize / Start / Stop / Terminate, and
 * writes every provider's packets into one Perfetto trace.  docs/record.md.
 *
 *     tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
 *     cfg.output_path = "out.pftrace";
 *     tracec_recorder *r;
 *     if (tracec_recorder_open(&cfg, &r) != TRACEC_STATUS_SUCCESS) return;
 *     if (tracec_recorder_start(r) != TRACEC_STATUS_SUCCESS) ...;
 *     while (...) tracec_recorder_poll(r, 50);
 *     tracec_recorder_stop(r);
 *     tracec_recorder_close(r);
 *
 * One thread drives a recorder.  Every shared buffer is treated as hostile:
 * lengths and offsets are checked, every record is checked against tracec's
 * schema (nested messages too), a provider whose buffer is corrupt (or that
 * replays a save) has the rest of its data dropped with a message.  Only
 * this user and root may connect; a connection that does not register in
 * `timeout_ms` is closed; a provider's buffers are freed when it leaves.
 * docs/record.md, "Threat model", has every bound.
 */
#ifndef TRACEC_RECORDER_H
#define TRACEC_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracec/buffer.h"
#include "tracec/abi/attributes.h"
#include "tracec/status.h"
#include "tracec/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_recorder tracec_recorder;

typedef struct tracec_recorder_config {
    const char *socket_path;       /* NULL: the well-known /tmp/tracec-UID/recorder.sock */
    const char *output_path;       /* the trace to write (NULL: kept in memory, which no call reads, and freed at close) */
    tracec_buffering_mode_t mode;  /* STREAMING (default), ONESHOT, CIRCULAR */
    size_t buffer_size;            /* bytes of each provider's shared buffer; 0 = 1 MiB */
    const char *categories;        /* comma-separated; NULL or "" = all */
    int timeout_ms;                /* how long a provider may take to answer Start/Stop; 0 = 2000 */
    FILE *log;                     /* messages about providers (NULL: stderr) */
    int wait_ms;                   /* STREAMING: a provider whose other half is not saved yet waits up to
                                      this long before dropping (0: drops at once; max 10000) */
} tracec_recorder_config;

#define TRACEC_RECORDER_CONFIG_INIT {NULL, NULL, TRACEC_BUFFERING_MODE_STREAMING, 0, NULL, 0, NULL, 0}

/*
 * Creates the socket (its directory made 0700 if missing; it must belong to
 * us and not be group/world accessible) and the trace.  BAD_STATE when
 * another recorder is listening on the path; INVALID_ARGUMENT (a bad mode,
 * a too-long path, more than 100 categories or one over 100 chars);
 * IO_ERROR with errno set.
 */
tracec_status_t tracec_recorder_open(const tracec_recorder_config *config, tracec_recorder **out) TRACEC_I_WARN_UNUSED;

/* The socket path providers connect to. */
const char *tracec_recorder_socket_path(const tracec_recorder *r) TRACEC_I_WARN_UNUSED;

/*
 * Initializes and starts every registered provider, and every later one.
 * BAD_STATE if started.  After tracec_recorder_stop, starts another run in
 * the same trace (each provider gets a new buffer).
 */
tracec_status_t tracec_recorder_start(tracec_recorder *r) TRACEC_I_WARN_UNUSED;

/* Serves the socket and the providers for up to `timeout_ms` (one poll round). */
tracec_status_t tracec_recorder_poll(tracec_recorder *r, int timeout_ms);

/*
 * Stops every provider, waits for their STOPPED (each up to the timeout;
 * one that does not answer is reported and its finished data saved
 * anyway), saves their buffers and terminates them.
 */
tracec_status_t tracec_recorder_stop(tracec_recorder *r);

/* What the recorder knows of one provider. */
typedef struct tracec_recorder_provider_info {
    char name[101];       /* as it registered, invalid UTF-8 and control characters replaced by '?' */
    int32_t pid;          /* from SO_PEERCRED */
    uint32_t sequence_id; /* its packets' trusted_packet_sequence_id */
    uint64_t produced;    /* as the provider counted them (its buffer headers), for this recorder only */
    uint64_t dropped;     /* as the provider counted them */
    uint64_t delivered;   /* packets written to the trace */
    uint64_t corrupt;     /* bad records found (the rest of its data was dropped), replays included */
    bool ended_early;     /* it went away while tracing */
    bool timed_out;       /* it did not answer Start or Stop in time */
    int32_t uid;          /* from SO_PEERCRED */
    uint64_t replayed;    /* saves refused because they held the very data of its previous save of that half */
} tracec_recorder_provider_info;

size_t tracec_recorder_provider_count(const tracec_recorder *r) TRACEC_I_WARN_UNUSED;
bool tracec_recorder_provider(const tracec_recorder *r, size_t i,
                              tracec_recorder_provider_info *out) TRACEC_I_WARN_UNUSED;

/*
 * Stops if needed, writes a summary packet per provider and a trace_stats
 * packet, closes the trace and the socket, frees `r`.  Returns the first
 * error of the trace file.
 */
tracec_status_t tracec_recorder_close(tracec_recorder *r);

/*
 * Asks the recorder listening at `socket_path` (NULL: the well-known path)
 * for its providers and prints them to `out`, one per line.  IO_ERROR when
 * there is none.
 */
tracec_status_t tracec_recorder_list(const char *socket_path, FILE *out) TRACEC_I_WARN_UNUSED;

/*
 * The reader of a provider's records (fuzzed): appends each whole record
 * of `data` (0x0A, varint length, a TracePacket that every decoder reads:
 * each message field tracec's schema knows checked recursively, up to 32
 * levels deep; docs/record.md) to `out` with trusted_packet_sequence_id =
 * `seq`, trusted_pid = `pid` and trusted_uid = `uid` added.  *packets
 * counts the records appended.  CORRUPT_DATA at the first bad record
 * (*bad_offset says where and *why what is wrong, static text; the records
 * before it are appended), or any status of the trace file.  `packets`,
 * `bad_offset` and `why` may be NULL.
 */
tracec_status_t tracec_recorder_read_records(const void *data, size_t size, tracec_trace_file *out, uint32_t seq,
                                             int32_t pid, int32_t uid, uint64_t *packets, size_t *bad_offset,
                                             const char **why) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_RECORDER_H */
