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
#include "tracec/abi/shm_layout.h"
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
    uint32_t clock_id;             /* the session's clock, a BuiltinClock: 6 BOOTTIME (default, 0 too),
                                      3 MONOTONIC, 1 REALTIME; the trace clock, and the clock of every
                                      track event (docs/record.md, "Clocks") */
    uint64_t max_file_size;        /* bytes the trace may reach (0: no limit; else at least
                                      TRACEC_RECORDER_MIN_FILE_SIZE): past it the trace takes no more of
                                      the providers' packets, each counted lost in its provider's
                                      `dropped` and `over_size`, and the summary and trace_stats still
                                      go in, in room kept for them (docs/record.md, "A size limit") */
} tracec_recorder_config;

#define TRACEC_RECORDER_CONFIG_INIT {NULL, NULL, TRACEC_BUFFERING_MODE_STREAMING, 0, NULL, 0, NULL, 0, 0, 0}

/* The smallest max_file_size: the room kept for the summary (64 KiB) and some data besides. */
#define TRACEC_RECORDER_MIN_FILE_SIZE (UINT64_C(1) << 20)

/*
 * Creates the socket (its directory made 0700 if missing; it must belong to
 * us and not be group/world accessible) and the trace.  BAD_STATE when
 * another recorder is listening on the path; INVALID_ARGUMENT (a bad mode,
 * a too-long path, more than 100 categories or one over 100 chars, a clock
 * other than those above);
 * IO_ERROR with errno set.
 */
tracec_status_t tracec_recorder_open(const tracec_recorder_config *config, tracec_recorder **out) TRACEC_I_WARN_UNUSED;

/* The socket path providers connect to. */
const char *tracec_recorder_socket_path(const tracec_recorder *r) TRACEC_I_WARN_UNUSED;

/* SUCCESS while every write to the trace succeeded; else IO_ERROR with errno that of the first failed write (the
   recorder then saves nothing more: its providers' later packets are lost to it). */
tracec_status_t tracec_recorder_trace_status(const tracec_recorder *r) TRACEC_I_WARN_UNUSED;

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
    uint64_t over_size;   /* of dropped: packets the trace had no room for (max_file_size) */
    bool unstarted;       /* it went away after registering, before the recorder could start it: nothing it wrote
                             is in the trace, and how much that was is not known */
    bool no_buffer;       /* never started because the recorder could not create its buffer (out of fds or memory;
                             retried every 100 ms) before it went or the recording stopped: the recorder's fault */
    bool refused_session; /* it refused the session (all its session slots were taken): never started */
    bool started_late;    /* started after its program had stopped waiting for the recorder (it says so): its
                             events before that are not in the trace, and how many is not known */
} tracec_recorder_provider_info;

size_t tracec_recorder_provider_count(const tracec_recorder *r) TRACEC_I_WARN_UNUSED;
bool tracec_recorder_provider(const tracec_recorder *r, size_t i,
                              tracec_recorder_provider_info *out) TRACEC_I_WARN_UNUSED;

/*
 * Stops if needed, writes a summary packet per provider and a trace_stats
 * packet, closes the trace and the socket, frees `r`.  Returns the first
 * error of the trace file (IO_ERROR: with its errno, as
 * tracec_trace_file_close).
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

/* ---- the shared layout of the buffer engine (tracec/abi/shm_layout.h): the reading side ---- */

/*
 * A writing process's buffer in a memfd, as the recorder reads it: a header
 * page, its halves, its durable part.  The recorder copies the header, checks
 * the copy against the geometry it agreed on (tracec_recorder_check_shm_header),
 * copies a region as one consistent snapshot (tracec_recorder_copy_region), and
 * walks the copy (tracec_recorder_read_region).  Every byte is hostile: no
 * value read from the memfd is used before it is checked or clamped, and no
 * walk reads outside the copy or takes more than extent / 16 steps.
 * docs/record.md, "Reading the buffer engine's regions".
 */

/* Regions of a shared buffer: half 0, half 1, then the durable part. */
#define TRACEC_RECORDER_REGION_DURABLE 2u
#define TRACEC_RECORDER_REGIONS 3u

/* The geometry a recorder chose for a writer and told it out of band. */
typedef struct tracec_recorder_shm_geometry {
    uint32_t mode;          /* tracec_buffering_mode_t: ONESHOT, CIRCULAR or STREAMING */
    uint32_t halves;        /* 1 (ONESHOT) or 2 */
    uint64_t size;          /* payload bytes per half */
    uint64_t half_bytes;    /* bytes of a half's region (at most UINT32_MAX) */
    uint64_t durable_bytes; /* bytes of the durable part (0: none; at most UINT32_MAX) */
} tracec_recorder_shm_geometry;

/* Bytes of a shared buffer of geometry `g`: the header page, the halves, the durable part; 0 if `g` is bad. */
uint64_t tracec_recorder_shm_bytes(const tracec_recorder_shm_geometry *g) TRACEC_I_WARN_UNUSED;

/* A header copy, checked: every value clamped to the geometry. */
typedef struct tracec_recorder_shm_state {
    uint32_t active;  /* the half the writers fill: 0 or 1 (0 with one half) */
    uint32_t handed;  /* bit r set: region r is HANDED (handed == TRACEC_SHM_REGION_HANDED exactly) */
    uint32_t clamped; /* bit r set: a word of region r was out of range; bit 3: `active` was */
    /* per region: gen as written; handed 0 or 1; extent <= the region's bytes, a multiple of 8;
       blocks <= extent / 16; reserved <= the region's bytes, a multiple of 8.  A region the geometry does not have
       (half 1 of ONESHOT, the durable part of STREAMING) is all 0. */
    tracec_shm_region region[TRACEC_RECORDER_REGIONS];
    uint64_t accepted, dropped, overwritten, refused; /* the writer's counters, as it wrote them */
} tracec_recorder_shm_state;

/*
 * Checks `copy` (a copy of the header, not the live mapping) against `g`:
 * magic, version, header_bytes, and the geometry echo (mode, halves, size,
 * half_bytes, durable_bytes) must equal; then fills *out, clamped.
 * INVALID_ARGUMENT: a NULL pointer or a bad `g`; VERSION_MISMATCH: the
 * magic is right, the version is not; CORRUPT_DATA: anything else differs
 * (*why, static text, says what; `why` may be NULL).
 */
tracec_status_t tracec_recorder_check_shm_header(const tracec_shm_header *copy, const tracec_recorder_shm_geometry *g,
                                                 tracec_recorder_shm_state *out, const char **why) TRACEC_I_WARN_UNUSED;

/* One copy of a region (tracec_recorder_copy_region). */
typedef struct tracec_recorder_region_copy {
    uint64_t gen;    /* the region's generation, the same before and after the copy */
    uint32_t from;   /* the copy starts at this byte of the region: `from`, or 0 when gen changed */
    uint32_t extent; /* ... and ends at this one (the extent, or with salvage the reserved hint; clamped) */
    size_t len;      /* extent - from bytes copied into dst */
    uint32_t open;   /* a salvage of the durable part: 1 if the record header at `extent` is marked open (a
                        durable packet its writer had begun and not ended: lost), else 0 */
} tracec_recorder_region_copy;

/*
 * Copies region `r` (0, 1 or TRACEC_RECORDER_REGION_DURABLE) of the live
 * mapping `map` (map_size bytes, read only; a buffer of geometry `g`) into
 * dst[cap]: the bytes from `from` (when the region's gen is still
 * `from_gen`; else from 0) to its extent, as one snapshot: the copy counts
 * only when the region's gen is the same after it as before (a writer bumps
 * gen before it rewrites a byte).  Up to 16 tries.  `salvage`: up to the
 * region's `reserved` hint instead of its extent (the writer died: what it
 * reserved past the extent may be half written, which the walk tells
 * apart; in the durable part, a packet begun at the hint is out->open).
 * BAD_STATE: the region was reused during every try (nothing
 * copied; out->len = 0); CORRUPT_DATA: with gen unchanged the end went
 * below `from`; INVALID_ARGUMENT: NULL pointers, a bad `g` or `r`, a map
 * smaller than tracec_recorder_shm_bytes(g), or cap below the region's
 * bytes.
 */
tracec_status_t tracec_recorder_copy_region(const void *map, size_t map_size, const tracec_recorder_shm_geometry *g,
                                            uint32_t r, bool salvage, uint64_t from_gen, uint32_t from, void *dst,
                                            size_t cap, tracec_recorder_region_copy *out) TRACEC_I_WARN_UNUSED;

/*
 * Called with each record of a region, in order: `packet` is its payload,
 * one TracePacket (without the Trace.packet tag and length) that passed the
 * record check of tracec_recorder_read_records; `category` and `kind` are
 * the record header's.  Valid during the call only.  A status other than
 * SUCCESS ends the walk and is returned by tracec_recorder_read_region.
 */
typedef tracec_status_t (*tracec_recorder_packet_fn)(void *data, const uint8_t *packet, size_t size,
                                                     uint32_t category, uint32_t kind);

/* What a walk of a region found. */
typedef struct tracec_recorder_region_result {
    uint64_t records; /* records handed to the callback */
    uint64_t bytes;   /* their payload bytes */
    uint64_t blocks;  /* blocks walked (a chunk counts once) */
    uint64_t empty;   /* records of 0 bytes, skipped */
    uint64_t stale;   /* 1: the walk ended at a chunk of another generation (left over, not corrupt) */
    uint64_t unwritten; /* 1: the walk ended at a block header of 16 zero bytes (never written, not corrupt) */
    uint64_t corrupt; /* 1: the walk ended at a bad block or record */
    uint64_t open;    /* chunks whose record header after their committed bytes is marked open: a packet begun and
                         not ended (its writer was writing it when the region was copied) */
    size_t end;       /* the byte where the walk ended: the extent when the region was read whole */
    const char *why;  /* stale, unwritten or corrupt: what was found at `end` (static text); else NULL */
} tracec_recorder_region_result;

/*
 * Walks region[0..extent), a copy of a region's blocks (the bytes of
 * tracec_recorder_copy_region from a block boundary), and calls fn(data,
 * ...) for each record.  `gen` is the region's generation (a chunk's tag
 * must be TRACEC_SHM_CHUNK_TAG(gen)); `durable`: the region is the durable
 * part, which holds records only.  A block needs body % 8 == 0 and
 * 16 + body <= the bytes left; a record size <= body and a payload that
 * passes the record check; a chunk committed <= body and records that pass
 * the same tests.  SUCCESS: the region was read whole, or the walk ended at
 * a chunk of another generation (out->stale) or at a zero header
 * (out->unwritten): what follows is lost, not corrupt.  CORRUPT_DATA: the
 * walk ended at a bad block or record (out->corrupt, out->end, out->why);
 * the records before it were handed.  INVALID_ARGUMENT: NULL region with
 * extent > 0, NULL fn or out.  Or the callback's status.
 */
tracec_status_t tracec_recorder_read_region(const void *region, size_t extent, uint64_t gen, bool durable,
                                            tracec_recorder_packet_fn fn, void *data,
                                            tracec_recorder_region_result *out) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_RECORDER_H */
