/*
 * recorder.c - the trace manager of `tracec record` (tracec/recorder.h):
 * the listening socket, one state machine per provider, saving shared
 * buffers (the buffer engine's layout in a memfd, mapped read-only and read
 * with region.c: hostile, every word checked) into one trace, each packet
 * on its global sequence (record_seq.c), and the summary and stats packets
 * at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "perfetto/common/trace_stats.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/debug_annotation.tracec.h"
#include "perfetto/trace/track_event/track_descriptor.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "record_check.h"
#include "record_seq.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/abi/shm_layout.h"
#include "tracec/buffer.h"
#include "tracec/wire.h"
#include "tracec/context.h"
#include "tracec/recorder.h"

enum { PV_NEW, PV_REGISTERED, PV_STARTING, PV_STARTED, PV_STOPPING, PV_STOPPED, PV_TERMINATED, PV_GONE };

typedef struct peer {
    int conn, fifo, memfd;
    int old_fifo; /* a terminated run's fifo, kept until the provider closes its end */
    const uint8_t *map; /* the buffer, mapped read-only */
    size_t map_size;
    tracec_recorder_provider_info info;
    int state;
    int bad;
    int closing;
    int ever_started;       /* it said STARTED once in this recorder's life */
    int no_buffer;          /* its last Initialize failed on our side (out of fds or memory): retried ... */
    uint64_t init_retry_at; /* ... from then */
    uint64_t deadline;
    uint64_t gen[3];      /* per region: half 0, half 1, the durable part */
    uint32_t consumed[3]; /* bytes of the region (of generation gen) saved */
    uint64_t bytes;
    char *declared; /* the categories it declared at registration ("" none; malloc'd) */
    uint64_t base_produced, base_dropped; /* its counts in the buffers it had before the current one */
    uint64_t open_lost; /* packets a salvage found begun and never ended, in the current buffer */
    uint64_t saved_hash[3], saved_gen[3]; /* per region: the last save that began at the region's start */
    size_t saved_len[3];
    int loss_pending;           /* packets of its sequences were lost: the next half record saved is marked */
    tracec_i_rec_seqmap seq;    /* its sequence ids to the trace's (default: info.sequence_id) */
    uint32_t owed;              /* ONESHOT, CIRCULAR: regions handed and not answered yet (a bit each) */
    uint64_t owed_gen[3];       /* ... and the gen each was handed with */
} peer;

struct tracec_recorder {
    tracec_recorder_config cfg;
    char path[108];
    int listen_fd;
    int lock_fd; /* <socket>.lock, flock()ed while this recorder lives: one recorder per socket */
    tracec_trace_file *file;
    int started;
    uint32_t halves;
    size_t size, durable_size;        /* INITIALIZE's: payload bytes per half, durable part asked for */
    tracec_recorder_shm_geometry geo; /* the buffer engine's geometry for them */
    size_t shm_bytes;                 /* the memfd's size: tracec_buffer_memory_size() */
    peer **pv;
    size_t n_pv, cap_pv;
    uint32_t next_seq;
    FILE *log;
    char lock_path[sizeof ((struct sockaddr_un *)0)->sun_path + 8];
    int file_failed;           /* a write to the trace failed (said) */
    int said_fds;              /* "out of file descriptors" was said since the last accept that succeeded */
    int accept_paused;         /* accept() ran out of fds: the listener is left out of poll until one is freed */
    uint64_t accept_retry_at;  /* ... or until then */
    uint64_t idle_closed;      /* connections closed because they did not register in time */
    /* the copies a save walks (one provider is saved at a time): a half's and the durable part's, mapped at
       the first buffer, with their pages, and kept until the recorder closes */
    uint8_t *scratch, *dscratch;
    size_t scratch_bytes, dscratch_bytes;
    /* for the warning at close about enabled categories no provider declared (warn_undeclared): the
       providers registered, those that declared none, which of cfg.categories some provider declared (in
       their order), and the names declared (as many as fit) */
    size_t registered, undeclared;
    uint8_t wanted_declared[TRACEC_I_MAX_CATEGORIES];
    char declared_names[512];
};

#define RECORDER_SEQ 1u
/* Of max_file_size, what the summary at the close may take once the providers' packets have filled the rest: a
   provider's summary instant and stats take about 300 bytes (the trace_stats go first when the trace is full). */
#define SUMMARY_ROOM (64u * 1024u)
#define DURABLE TRACEC_RECORDER_REGION_DURABLE
#define RECORDER_TRACK_UUID UINT64_C(0x7472616365637200)

static void say(tracec_recorder *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tracec record: ", r->log);
    vfprintf(r->log, fmt, ap);
    fputc('\n', r->log);
    va_end(ap);
}

/* ---- the hostile record reader ------------------------------------------------------ */

/* tracec_recorder_read_records, and when *mark is set, the first record written carries
   previous_packet_dropped (appended with the trusted fields) and *mark is cleared. */
static tracec_status_t read_records(const void *data, size_t size, tracec_trace_file *out, uint32_t seq,
                                    int32_t pid, int32_t uid, uint64_t *packets, size_t *bad_offset,
                                    const char **why, int *mark) {
    const uint8_t *base = data, *p = base, *end = base + size;
    uint64_t n = 0;
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (bad_offset) *bad_offset = 0;
    if (why) *why = NULL;
    while (p < end) {
        const uint8_t *rec = p;
        uint64_t len = 0;
        const char *what = "not a Trace.packet record (tag 0x0A)";
        bool ok = *p++ == 0x0A;
        if (ok) {
            ok = tracec_wire_read_varint(&p, end, &len) == TRACEC_VARINT_OK && len <= (uint64_t)(end - p) &&
                 len <= TRACEC_MAX_NESTED_SIZE;
            if (!ok) what = "a record length that runs past the data";
        }
        if (ok) ok = tracec_i_rec_packet_ok(p, (size_t)len, &what);
        if (!ok) {
            if (bad_offset) *bad_offset = (size_t)(rec - base);
            if (why) *why = what;
            st = TRACEC_STATUS_CORRUPT_DATA;
            break;
        }
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        tracec_trace_file_begin_packet(out, &w, &pkt.msg);
        if (tracec_writer_reserve(&w, (size_t)len)) {
            memcpy(w.ptr, p, (size_t)len);
            w.ptr += len;
        }
        /* appended last, so they win over anything the provider wrote */
        perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, seq);
        perfetto_protos_TracePacket_set_trusted_pid(&pkt, pid);
        perfetto_protos_TracePacket_set_trusted_uid(&pkt, uid);
        if (mark && *mark) perfetto_protos_TracePacket_set_previous_packet_dropped(&pkt, true);
        tracec_status_t s = tracec_trace_file_end_packet(out, &w, &pkt.msg);
        if (s != TRACEC_STATUS_SUCCESS) {
            st = s;
            break;
        }
        if (mark) *mark = 0;
        n++;
        p += len;
    }
    if (packets) *packets = n;
    return st;
}

tracec_status_t tracec_recorder_read_records(const void *data, size_t size, tracec_trace_file *out, uint32_t seq,
                                             int32_t pid, int32_t uid, uint64_t *packets, size_t *bad_offset,
                                             const char **why) {
    return read_records(data, size, out, seq, pid, uid, packets, bad_offset, why, NULL);
}

/* ---- providers ------------------------------------------------------------------- */

/* A copy of the live header, word by word (relaxed loads: the provider writes it meanwhile). */
static void read_header(const peer *pv, tracec_shm_header *out) {
    uint32_t words[sizeof(tracec_shm_header) / 4];
    const uint32_t *live = (const uint32_t *)(const void *)pv->map;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) words[i] = __atomic_load_n(&live[i], __ATOMIC_RELAXED);
    memcpy(out, words, sizeof *out);
}

/* Drops the provider's remaining data: its buffer is corrupt (`what` and `why` say where and how). */
static void corrupt(tracec_recorder *r, peer *pv, const char *what, const char *why) {
    say(r, "provider %s (pid %d): corrupt %s (%s); its remaining data is dropped", pv->info.name, (int)pv->info.pid,
        what, why ? why : "malformed");
    pv->bad = 1;
    pv->loss_pending = 1;
    pv->info.corrupt++;
}

/* The checked state of the provider's buffer header; false: nothing to read (no buffer yet, or corrupt). */
static bool header_state(tracec_recorder *r, peer *pv, tracec_recorder_shm_state *st) {
    if (pv->map == NULL || pv->bad) return false;
    tracec_shm_header h;
    read_header(pv, &h);
    if (h.magic == 0) return false; /* the provider has not created its buffer (yet) */
    const char *why = NULL;
    tracec_status_t s = tracec_recorder_check_shm_header(&h, &r->geo, st, &why);
    if (s == TRACEC_STATUS_SUCCESS) return true;
    corrupt(r, pv, "buffer header", why);
    return false;
}

static void snapshot_counters(tracec_recorder *r, peer *pv) {
    tracec_recorder_shm_state st;
    uint64_t refused = pv->seq.refused;
    if (pv->map != NULL && !pv->bad && header_state(r, pv, &st)) {
        /* packets begun = accepted + dropped + refused; lost = dropped + refused + overwritten */
        pv->info.produced = pv->base_produced + st.accepted + st.dropped + st.refused + pv->open_lost;
        pv->info.dropped =
            pv->base_dropped + st.dropped + st.refused + st.overwritten + refused + pv->open_lost + pv->info.over_size;
    }
}

/* A 64-bit hash of n bytes (replay detection; not cryptographic: the provider gains nothing by a collision but
   the loss of a save of its own).  Four independent lanes of 8 bytes, so a region's bytes cost little more
   than reading them (scalar: GCC's vectors of 64-bit multiplies are slower). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static uint64_t hash_mul(const uint8_t *p, size_t n) {
    const uint64_t k = UINT64_C(0xff51afd7ed558ccd);
    uint64_t h0 = UINT64_C(0x9e3779b97f4a7c15) ^ n, h1 = UINT64_C(0xc2b2ae3d27d4eb4f),
             h2 = UINT64_C(0x165667b19e3779f9), h3 = UINT64_C(0x27d4eb2f165667c5), v[4];
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        memcpy(v, p + i, 32);
        h0 = (h0 ^ v[0]) * k;
        h1 = (h1 ^ v[1]) * k;
        h2 = (h2 ^ v[2]) * k;
        h3 = (h3 ^ v[3]) * k;
        h0 ^= h0 >> 29;
        h1 ^= h1 >> 29;
        h2 ^= h2 >> 29;
        h3 ^= h3 >> 29;
    }
    for (; i + 8 <= n; i += 8) {
        memcpy(v, p + i, 8);
        h0 = (h0 ^ v[0]) * k;
        h0 ^= h0 >> 29;
    }
    for (; i < n; i++) h1 = (h1 ^ p[i]) * UINT64_C(0x100000001b3);
    uint64_t x = h0;
    x = (x ^ (h1 + (x << 6) + (x >> 2))) * k;
    x = (x ^ (h2 + (x << 6) + (x >> 2))) * k;
    x = (x ^ (h3 + (x << 6) + (x >> 2))) * k;
    x ^= x >> 33; /* finalised: every input bit reaches every output bit */
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HASH_CRC 1
/* The same job with the CPU's CRC-32C instruction (SSE 4.2): three lanes of 8 bytes (its latency is 3 cycles,
   one issued a cycle), about half of hash_mul's instructions. */
__attribute__((target("sse4.2"))) static uint64_t hash_crc(const uint8_t *p, size_t n) {
    unsigned long long a = n, b = 0x9e3779b9u, c = 0x85ebca6bu, v[3];
    size_t i = 0;
    for (; i + 24 <= n; i += 24) {
        memcpy(v, p + i, 24);
        a = __builtin_ia32_crc32di(a, v[0]);
        b = __builtin_ia32_crc32di(b, v[1]);
        c = __builtin_ia32_crc32di(c, v[2]);
    }
    for (; i + 8 <= n; i += 8) {
        memcpy(v, p + i, 8);
        a = __builtin_ia32_crc32di(a, v[0]);
    }
    for (; i < n; i++) b = __builtin_ia32_crc32qi((unsigned)b, p[i]);
    uint64_t x = ((uint64_t)a << 32 | (uint32_t)b) ^ ((uint64_t)c * UINT64_C(0x9e3779b97f4a7c15));
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}
#endif

/* One of the two, the same for the whole run (a save is compared with the previous save of that half). */
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
#ifdef HAVE_HASH_CRC
    static int crc = -1; /* relaxed: every thread that looks finds the same answer */
    int c = __atomic_load_n(&crc, __ATOMIC_RELAXED);
    if (c < 0) __atomic_store_n(&crc, c = __builtin_cpu_supports("sse4.2") ? 1 : 0, __ATOMIC_RELAXED);
    if (c) return hash_crc(p, n);
#endif
    return hash_mul(p, n);
}

/*
 * Saves what region `reg` (a half, or DURABLE) holds and was not saved
 * yet: copied as one snapshot (tracec_recorder_copy_region: a provider
 * still writing may reuse the half meanwhile), then walked, each record
 * checked and written on its global sequence in one pass
 * (tracec_i_rec_save_region: the buffer writers write each packet as one
 * Trace.packet record, which is unwrapped and the packet inside checked;
 * any other payload is checked as a TracePacket as it is; a packet the
 * sequence map refuses is counted there and skipped).  `salvage`: up to
 * the reserved hint of a provider that died or did not stop (the walk ends
 * at the first block never written or of another generation: lost, not
 * corrupt).  false: the region is corrupt, and so the provider's remaining
 * data is dropped.
 */
static bool save_region(tracec_recorder *r, peer *pv, uint32_t reg, bool salvage) {
    const char *what = reg == DURABLE ? "the durable part" : reg == 0 ? "half 0" : "half 1";
    uint64_t cap = reg == DURABLE ? r->geo.durable_bytes : reg < r->geo.halves ? r->geo.half_bytes : 0;
    if (cap == 0 || pv->map == NULL || pv->bad) return true;
    uint8_t *dst = reg == DURABLE ? r->dscratch : r->scratch;
    tracec_recorder_region_copy c;
    tracec_status_t st = tracec_recorder_copy_region(pv->map, pv->map_size, &r->geo, reg, salvage, pv->gen[reg],
                                                     pv->consumed[reg], dst, (size_t)cap, &c);
    if (st == TRACEC_STATUS_BAD_STATE) { /* it kept reusing the region under us: what it rewrote is lost */
        pv->loss_pending = 1;
        return true;
    }
    if (st == TRACEC_STATUS_CORRUPT_DATA) {
        char why[96];
        snprintf(why, sizeof why, "its extent %u is below what was saved of it", (unsigned)c.extent);
        corrupt(r, pv, what, why);
        return false;
    }
    if (st != TRACEC_STATUS_SUCCESS) return true;
    if (c.gen != pv->gen[reg]) {
        pv->gen[reg] = c.gen;
        pv->consumed[reg] = 0;
    }
    pv->open_lost += c.open; /* a salvage's durable packet its writer had begun: lost */
    if (c.len == 0) return true;
    if (c.from == 0) {
        /* The region was reset (gen changed) and holds, from its start, exactly what its previous save
           held: a provider replaying a save, not new records.  Refused and counted. */
        uint64_t hash = hash_bytes(dst, c.len);
        if (pv->saved_len[reg] == c.len && pv->saved_hash[reg] == hash && pv->saved_gen[reg] != c.gen) {
            say(r, "provider %s (pid %d): %s was saved again with the same data; its remaining data is dropped",
                pv->info.name, (int)pv->info.pid, what);
            pv->bad = 1;
            pv->loss_pending = 1;
            pv->info.corrupt++;
            pv->info.replayed++;
            return false;
        }
        pv->saved_len[reg] = c.len;
        pv->saved_hash[reg] = hash;
        pv->saved_gen[reg] = c.gen;
    }
    /* the first record of a half saved after a loss is marked; the durable part's records (descriptors,
       never lost to a switch or a wrap) are not */
    tracec_i_rec_saver sv = {r->file, &pv->seq, &r->next_seq, pv->info.pid, pv->info.uid,
                             reg == DURABLE ? NULL : &pv->loss_pending, 0, NULL, 0};
    tracec_recorder_region_result res;
    st = tracec_i_rec_save_region(dst, c.len, c.gen, reg == DURABLE, &sv, &res);
    pv->info.delivered += sv.delivered;
    pv->info.over_size += sv.over_size;
    if (sv.why) res.why = sv.why;
    /* a salvage: the packets its writers had begun are lost (in a handed region none is open) */
    if (salvage) pv->open_lost += res.open;
    pv->bytes += res.end;
    pv->consumed[reg] = c.from + (uint32_t)res.end;
    if (st == TRACEC_STATUS_CORRUPT_DATA) {
        char where[96];
        snprintf(where, sizeof where, "record at byte %zu of %s", (size_t)c.from + res.end, what);
        corrupt(r, pv, where, res.why);
        return false;
    }
    if (res.stale || res.unwritten) {
        pv->consumed[reg] = c.extent; /* what follows was never finished: lost */
        if (!salvage) pv->loss_pending = 1;
    }
    return st == TRACEC_STATUS_SUCCESS;
}

/*
 * Saves everything finished: the durable part first (it describes the
 * tracks and extensions the halves' events use), then the older half, then
 * the active one; with `salvage` (a provider that died or did not stop),
 * each up to its reserved hint: the older half too, which a provider that
 * died right after a switch had not handed yet.
 */
static void save_all(tracec_recorder *r, peer *pv, bool salvage) {
    tracec_recorder_shm_state st;
    if (!header_state(r, pv, &st)) return;
    /* A CIRCULAR wrap's overwritten packets are counted (trace_stats), not marked on the oldest packet kept:
       losing the oldest packets is what the mode does, and a mark would make the reader drop every later
       packet of a sequence that interns (its interned data is in the durable part, which no wrap loses). */
    uint32_t a = r->halves < 2 ? 0u : st.active;
    if (!save_region(r, pv, DURABLE, salvage)) return;
    if (r->halves == 2 && !save_region(r, pv, a ^ 1u, salvage)) return;
    (void)save_region(r, pv, a, salvage);
    snapshot_counters(r, pv);
    int e = tracec_i_trace_file_errno(r->file);
    if (e != 0 && !r->file_failed) { /* said once, when it happens: the losses that follow are the file's */
        r->file_failed = 1;
        say(r, "writing the trace failed: %s; nothing more is written", strerror(e));
    }
}

/* Unmaps the buffer; the fifo too unless `keep_fifo` (after Terminate the
   provider closes its end first: closing ours would look like our death). */
static void release_buffer_keep_fifo(tracec_recorder *r, peer *pv, int keep_fifo) {
    snapshot_counters(r, pv);
    if (pv->map != NULL) {
        /* Nothing of this buffer is in flight any more.  Counters it did not publish since (the engine
           publishes them at each handoff: a provider that died) are at least what was saved; packets it
           accepted that were never saved (in the chunk of a writer that died, in a half it rewrote under
           the copy) are lost, and counted dropped so that the trace's stats show them. */
        uint64_t out = pv->info.delivered + pv->info.dropped;
        if (pv->info.produced < out)
            pv->info.produced = out;
        else
            pv->info.dropped = pv->info.produced - pv->info.delivered;
    }
    pv->base_produced = pv->info.produced; /* the next buffer's header counts from 0 */
    pv->base_dropped = pv->info.dropped - pv->seq.refused - pv->info.over_size; /* both are added anew */
    pv->open_lost = 0;
    if (pv->map) munmap((void *)pv->map, pv->map_size);
    if (pv->memfd >= 0) close(pv->memfd);
    if (pv->fifo >= 0 && !keep_fifo) {
        close(pv->fifo);
        pv->fifo = -1;
    }
    pv->map = NULL;
    pv->memfd = -1;
}

static void release_buffer(tracec_recorder *r, peer *pv) { release_buffer_keep_fifo(r, pv, 0); }

static bool tracing(const peer *pv) {
    return pv->state == PV_STARTING || pv->state == PV_STARTED || pv->state == PV_STOPPING;
}

static void on_fifo(tracec_recorder *r, peer *pv);

static void on_refused(tracec_recorder *r, peer *pv, tracec_i_msg *m);

static void provider_gone(tracec_recorder *r, peer *pv) {
    if (pv->state == PV_GONE || pv->closing) return;
    pv->closing = 1;
    /* what it said last on its connection (a REFUSED just before it went) comes first; a peer that closed with
       our messages unread makes the first read ECONNRESET, and what it sent is read after it */
    tracec_i_msg *m = pv->conn >= 0 && pv->state != PV_NEW ? malloc(sizeof *m) : NULL;
    for (int i = 0; m != NULL && i < 4; i++) {
        int fds[2], nfds = 2;
        ssize_t k = tracec_i_rec_recv(pv->conn, m, fds, &nfds);
        for (int j = 0; j < nfds; j++) close(fds[j]);
        if (k < 0 && errno == ECONNRESET) continue;
        if (k <= 0) break;
        if (m->type == TRACEC_I_MSG_REFUSED) on_refused(r, pv, m);
    }
    free(m);
    if (pv->fifo >= 0) on_fifo(r, pv); /* its last packets (a STOPPED) still count */
    int state = pv->state;
    save_all(r, pv, true); /* what it finished, and what it was writing when it went */
    /* never started: no STARTED and nothing in its buffer (its writers may begin before the STARTED is sent) */
    bool never = !pv->ever_started && pv->info.produced == 0 && pv->info.delivered == 0 &&
                 (state == PV_STARTING || (state == PV_REGISTERED && r->started));
    if (tracing(pv) && !never) {
        pv->info.ended_early = true;
        say(r, "provider %s (pid %d) ended early, while tracing", pv->info.name, (int)pv->info.pid);
    } else if (pv->state == PV_REGISTERED && r->started && pv->no_buffer) { /* said when it failed */
        pv->info.no_buffer = true;
    } else if (never) {
        /* e.g. a short program, with many others at once: gone before its first STARTED (its fifo, read above,
           holds everything it sent), so it wrote nothing for this recording */
        pv->info.unstarted = true;
        say(r, "provider %s (pid %d) ended before it could be started: nothing it wrote is in the trace",
            pv->info.name, (int)pv->info.pid);
    }
    release_buffer(r, pv);
    if (pv->conn >= 0) close(pv->conn);
    if (pv->old_fifo >= 0) close(pv->old_fifo);
    pv->conn = pv->old_fifo = -1;
    pv->state = PV_GONE;
    /* what it had in memory goes with it: only its summary (info) stays */
    free(pv->declared);
    pv->declared = NULL;
    r->accept_paused = 0; /* fds were freed */
}

static void send_simple(peer *pv, uint32_t type, uint32_t a, const char *text) {
    tracec_i_msg *m = calloc(1, sizeof *m);
    if (m == NULL) return;
    m->type = type;
    m->a = a;
    if (text) snprintf(m->text, sizeof m->text, "%s", text);
    (void)tracec_i_rec_send(pv->conn, m, NULL, 0);
    free(m);
}

/* Notes the categories a registered provider declared (NULL or "": none), for warn_undeclared(). */
static void note_declared(tracec_recorder *r, const char *cats) {
    r->registered++;
    if (cats == NULL || cats[0] == '\0') {
        r->undeclared++;
        return;
    }
    const char *s = r->cfg.categories ? r->cfg.categories : "", *name;
    size_t len;
    for (size_t i = 0; (name = tracec_i_rec_next_name(&s, &len)) != NULL && i < TRACEC_I_MAX_CATEGORIES; i++)
        if (tracec_i_rec_list_has(cats, name, len)) r->wanted_declared[i] = 1;
    char *all = r->declared_names;
    for (s = cats; (name = tracec_i_rec_next_name(&s, &len)) != NULL;) {
        size_t used = strlen(all);
        if (!tracec_i_rec_list_has(all, name, len) && used + len + 2 < sizeof r->declared_names) {
            if (used) all[used++] = ',';
            memcpy(all + used, name, len);
            all[used + len] = '\0';
        }
    }
}

/*
 * Enabled categories that no provider declared, when every provider
 * declared its own: such a category enables nothing, and is most likely
 * misspelt.  One line each.
 */
static void warn_undeclared(tracec_recorder *r) {
    const char *s = r->cfg.categories, *name;
    size_t len;
    if (s == NULL || r->registered == 0 || r->undeclared != 0) return;
    for (size_t i = 0; (name = tracec_i_rec_next_name(&s, &len)) != NULL && i < TRACEC_I_MAX_CATEGORIES; i++)
        if (!r->wanted_declared[i])
            say(r, "no provider declared the enabled category '%.*s', so it enabled nothing (they declared: %s)",
                (int)len, name, r->declared_names);
}

/* The categories `pv` gets (its declared ones that are enabled); false: none. */
static bool enabled_categories(const tracec_recorder *r, const peer *pv, char *out, size_t cap) {
    return tracec_i_rec_categories_enabled(pv->declared ? pv->declared : "", r->cfg.categories ? r->cfg.categories : "",
                                           out, cap);
}

/* Initialize (a new buffer and fifo) and Start. */
/* Fresh memory of n bytes with its pages (one call: no page fault per page of the first copy); NULL if none. */
static uint8_t *map_scratch(size_t n) {
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return m == MAP_FAILED ? NULL : (uint8_t *)m;
}

/* The copy buffers of save_region, once for the recorder's geometry; false: no memory. */
static bool scratch_ready(tracec_recorder *r) {
    if (r->scratch == NULL) {
        r->scratch_bytes = (size_t)r->geo.half_bytes;
        r->scratch = map_scratch(r->scratch_bytes);
    }
    if (r->dscratch == NULL) {
        r->dscratch_bytes = r->geo.durable_bytes ? (size_t)r->geo.durable_bytes : 8u;
        r->dscratch = map_scratch(r->dscratch_bytes);
    }
    return r->scratch != NULL && r->dscratch != NULL;
}

/* How long a provider whose buffer could not be created waits before the next try. */
#define INIT_RETRY_NS UINT64_C(100000000)

static void initialize_and_start(tracec_recorder *r, peer *pv) {
    size_t size = r->shm_bytes;
    int sp[2] = {-1, -1};
    if (pv->state == PV_TERMINATED && pv->fifo >= 0) {
        /* the provider has not closed its end after Terminate yet: closing ours would look like our
           death to it (it would drop the connection and register again), so keep it until it does */
        if (pv->old_fifo >= 0) close(pv->old_fifo);
        pv->old_fifo = pv->fifo;
        pv->fifo = -1;
    }
    release_buffer(r, pv);
    pv->memfd = memfd_create("tracec-provider", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    /* sealed at its size: a provider that shrank it would make our reads fault (SIGBUS) */
    if (pv->memfd < 0 || ftruncate(pv->memfd, (off_t)size) != 0 ||
        fcntl(pv->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
        if (!pv->no_buffer) /* said once; tried again every INIT_RETRY_NS */
            say(r, "provider %s (pid %d): cannot create its buffer: %s (trying again)", pv->info.name,
                (int)pv->info.pid, strerror(errno));
        goto fail;
    }
    /* read-only: nothing the recorder does can change what the provider's writers see */
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, pv->memfd, 0);
    if (map == MAP_FAILED) goto fail;
    pv->map = map;
    pv->map_size = size;
    memset(pv->gen, 0, sizeof pv->gen);
    memset(pv->consumed, 0, sizeof pv->consumed);
    memset(pv->saved_len, 0, sizeof pv->saved_len); /* a new buffer: nothing of it was saved yet */
    pv->owed = 0;
    pv->bad = 0; /* a loss of the previous buffer stays pending: its next run's first saved record says so */
    if (!scratch_ready(r)) goto fail;
    pv->fifo = sp[0];
    tracec_i_msg *m = calloc(1, sizeof *m);
    if (m == NULL) goto fail;
    uint32_t policy = r->cfg.mode != TRACEC_BUFFERING_MODE_STREAMING ? TRACEC_BUFFER_POLICY_NONE
                      : r->cfg.wait_ms > 0                          ? TRACEC_BUFFER_POLICY_LOSSLESS
                                                                    : TRACEC_BUFFER_POLICY_DISCARD;
    m->type = TRACEC_I_MSG_INITIALIZE;
    m->a = (uint32_t)r->cfg.mode | (uint32_t)r->cfg.wait_ms << 8 | policy << TRACEC_I_INIT_POLICY_SHIFT;
    m->b = r->size;
    m->c = (uint64_t)r->durable_size | (uint64_t)r->cfg.clock_id << TRACEC_I_INIT_CLOCK_SHIFT |
           (uint64_t)TRACEC_I_PROTOCOL_VERSION << TRACEC_I_INIT_VERSION_SHIFT;
    if (!enabled_categories(r, pv, m->text, sizeof m->text)) m->a |= TRACEC_I_INIT_NO_CATEGORIES;
    if (r->cfg.categories == NULL || r->cfg.categories[0] == '\0') m->a |= TRACEC_I_INIT_ALL_CATEGORIES;
    int fds[2] = {pv->memfd, sp[1]};
    int ok = tracec_i_rec_send(pv->conn, m, fds, 2) == 0;
    free(m);
    close(sp[1]);
    if (!ok) {
        provider_gone(r, pv);
        return;
    }
    send_simple(pv, TRACEC_I_MSG_START, TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL);
    pv->no_buffer = 0;
    pv->state = PV_STARTING;
    pv->deadline = tracec_i_rec_now_ns() + (uint64_t)r->cfg.timeout_ms * 1000000u;
    return;
fail:
    if (sp[0] >= 0) close(sp[0]);
    if (sp[1] >= 0) close(sp[1]);
    pv->fifo = -1;
    release_buffer(r, pv);
    /* the provider waits, registered: tried again once fds or memory may have been freed */
    pv->no_buffer = 1;
    pv->init_retry_at = tracec_i_rec_now_ns() + INIT_RETRY_NS;
}

/* How long the listener rests after accept() ran out of fds, unless an fd is freed sooner. */
#define ACCEPT_PAUSE_NS UINT64_C(100000000)

static void on_accept(tracec_recorder *r) {
    int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* the pending connection stays queued: polling the listener again would spin */
            if (!r->said_fds) say(r, "out of file descriptors (%s): new connections wait", strerror(errno));
            r->said_fds = 1; /* again only after an accept succeeds */
            r->accept_paused = 1;
            r->accept_retry_at = tracec_i_rec_now_ns() + ACCEPT_PAUSE_NS;
        }
        return;
    }
    r->said_fds = 0;
    uid_t uid = 0;
    pid_t pid = 0;
    char why[160];
    if (!tracec_i_rec_peer_ok(fd, &uid, &pid, why, sizeof why)) {
        say(r, "refused a connection from uid %u", (unsigned)uid);
        close(fd);
        return;
    }
    if (r->n_pv == r->cap_pv) {
        size_t nc = r->cap_pv ? r->cap_pv * 2 : 8;
        peer **np = realloc(r->pv, nc * sizeof *np);
        if (np == NULL) {
            close(fd);
            return;
        }
        r->pv = np;
        r->cap_pv = nc;
    }
    peer *pv = calloc(1, sizeof *pv);
    if (pv == NULL) {
        close(fd);
        return;
    }
    pv->conn = fd;
    pv->fifo = pv->memfd = pv->old_fifo = -1;
    pv->info.pid = (int32_t)pid;
    pv->info.uid = (int32_t)uid;
    pv->state = PV_NEW;
    pv->deadline = tracec_i_rec_now_ns() + (uint64_t)r->cfg.timeout_ms * 1000000u; /* to register */
    r->pv[r->n_pv++] = pv;
}

static void list_reply(tracec_recorder *r, peer *client) {
    static const char *const names[] = {"new", "registered", "starting", "started",
                                        "stopping", "stopped", "terminated", "gone"};
    tracec_i_msg *m = calloc(1, sizeof *m);
    if (m == NULL) return;
    char *enabled = malloc(TRACEC_I_TEXT_MAX + 1);
    m->type = TRACEC_I_MSG_LIST_REPLY;
    size_t used = 0;
    for (size_t i = 0; enabled && i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv == client || pv->state == PV_NEW || pv->info.name[0] == '\0') continue;
        /* categories: what it declared ("-": none); enabled: what it gets ("*": all, "-": none) */
        bool some = enabled_categories(r, pv, enabled, TRACEC_I_TEXT_MAX + 1);
        int k = snprintf(m->text + used, sizeof m->text - used, "%d\t%s\t%s\tcategories=%s\tenabled=%s\n",
                         (int)pv->info.pid, pv->info.name, names[pv->state],
                         pv->declared && pv->declared[0] ? pv->declared : "-",
                         !some ? "-" : enabled[0] ? enabled : "*");
        if (k < 0 || (size_t)k >= sizeof m->text - used) break;
        used += (size_t)k;
    }
    free(enabled);
    (void)tracec_i_rec_send(client->conn, m, NULL, 0);
    free(m);
}

/* The provider refused the session it was started for (no free session slot): said, and it is not tracing (its
   Start and Stop are not waited for); the stop terminates it like the others. */
static void on_refused(tracec_recorder *r, peer *pv, tracec_i_msg *m) {
    char why[200];
    tracec_i_rec_sanitize(m->text, why, sizeof why);
    say(r, "provider %s (pid %d) refused the session: %s", pv->info.name, (int)pv->info.pid, why);
    pv->info.refused_session = true;
    if (tracing(pv)) {
        pv->state = PV_STOPPED;
        pv->deadline = UINT64_MAX;
    }
}

static void on_conn(tracec_recorder *r, peer *pv) {
    tracec_i_msg *m = malloc(sizeof *m);
    if (m == NULL) return;
    int fds[2], nfds = 2;
    ssize_t k = tracec_i_rec_recv(pv->conn, m, fds, &nfds);
    for (int i = 0; i < nfds; i++) close(fds[i]); /* providers send no fds */
    if (k == 0 || (k < 0 && errno != EAGAIN && errno != EPROTO)) {
        free(m);
        provider_gone(r, pv);
        return;
    }
    if (k > 0 && pv->state != PV_NEW && m->type == TRACEC_I_MSG_REFUSED) on_refused(r, pv, m);
    if (k > 0 && pv->state == PV_NEW) {
        if (m->type == TRACEC_I_MSG_LIST) {
            list_reply(r, pv);
            close(pv->conn);
            pv->conn = -1;
            pv->state = PV_GONE;
            pv->info.name[0] = '\0';
        } else if ((m->type == TRACEC_I_MSG_REGISTER || m->type == TRACEC_I_MSG_REGISTER_SYNC) &&
                   m->b != TRACEC_I_PROTOCOL_VERSION) {
            say(r, "refused a provider (pid %d): it speaks protocol version %llu, this recorder %u (link it with "
                   "this release's libtracec)",
                (int)pv->info.pid, (unsigned long long)(m->b ? m->b : 1u), TRACEC_I_PROTOCOL_VERSION);
            close(pv->conn);
            pv->conn = -1;
            pv->state = PV_GONE;
        } else if (m->type == TRACEC_I_MSG_REGISTER || m->type == TRACEC_I_MSG_REGISTER_SYNC) {
            /* text: the name, then optionally '\n' and its categories */
            char *cats = strchr(m->text, '\n');
            if (cats) *cats++ = '\0';
            size_t nl = strlen(m->text);
            const char *why = nl == 0 || nl > TRACEC_I_NAME_MAX                 ? "a name of 0 or over 100 chars"
                              : cats && !tracec_i_rec_categories_ok(cats)             ? "a bad category list"
                              : cats && cats[0] && !(pv->declared = strdup(cats))     ? "no memory for its categories"
                                                                                      : NULL;
            if (why) {
                say(r, "refused a provider (pid %d): %s", (int)pv->info.pid, why);
                free(m);
                close(pv->conn);
                pv->conn = -1;
                pv->state = PV_GONE;
                return;
            }
            tracec_i_rec_sanitize(m->text, pv->info.name, sizeof pv->info.name);
            pv->info.sequence_id = r->next_seq++;
            tracec_i_rec_seqmap_init(&pv->seq, pv->info.sequence_id);
            pv->state = PV_REGISTERED;
            note_declared(r, cats);
            if (m->type == TRACEC_I_MSG_REGISTER_SYNC) send_simple(pv, TRACEC_I_MSG_REGISTERED, r->started != 0, NULL);
            if (r->started) initialize_and_start(r, pv);
        }
    }
    free(m);
}

static void on_fifo_packet(tracec_recorder *r, peer *pv, const tracec_i_fifo_packet *pk);

/* ONESHOT, CIRCULAR: saves everything, then answers the regions handed so far. */
static void answer_owed(tracec_recorder *r, peer *pv) {
    if (pv->owed == 0) return;
    save_all(r, pv, false);
    for (uint32_t k = 0; k < 3; k++)
        if (pv->owed & (1u << k))
            (void)tracec_i_rec_fifo_send(pv->fifo, TRACEC_I_FIFO_BUFFER_SAVED, k, pv->owed_gen[k], 0);
    pv->owed = 0;
}

/* Reads every packet waiting on the fifo. */
static void on_fifo(tracec_recorder *r, peer *pv) {
    for (int i = 0; i < 1024 && pv->fifo >= 0; i++) {
        tracec_i_fifo_packet pk;
        ssize_t k = recv(pv->fifo, &pk, sizeof pk, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (k <= 0) { /* the provider closed it: after Terminate, as it should */
            if (pv->state == PV_TERMINATED) {
                close(pv->fifo);
                pv->fifo = -1;
            } else if (pv->state != PV_GONE) {
                provider_gone(r, pv);
            }
            return;
        }
        if (k == (ssize_t)sizeof pk) on_fifo_packet(r, pv, &pk);
    }
}

static void on_fifo_packet(tracec_recorder *r, peer *pv, const tracec_i_fifo_packet *pkp) {
    tracec_i_fifo_packet pk = *pkp;
    switch (pk.type) {
    case TRACEC_I_FIFO_STARTED:
        if (pv->state == PV_STARTING) pv->state = PV_STARTED;
        pv->ever_started = 1;
        if (pk.region == 1 && !pv->info.started_late) { /* its word only: it concerns its own events */
            pv->info.started_late = true;
            say(r, "provider %s (pid %d) was started after its program had stopped waiting for it: what it wrote "
                   "before is not in the trace",
                pv->info.name, (int)pv->info.pid);
        }
        break;
    case TRACEC_I_FIFO_STOPPED:
        if (pv->state == PV_STOPPING || pv->state == PV_STARTED || pv->state == PV_STARTING) pv->state = PV_STOPPED;
        answer_owed(r, pv);
        break;
    case TRACEC_I_FIFO_SAVE_BUFFER:
        /* the region named is read as the header says (the packet's extent is only a hint); STREAMING saves
           that half, the other modes everything in order (their halves are handed at a flush or stop) */
        if (pv->map && (pk.region < r->halves || (pk.region == DURABLE && r->geo.durable_bytes > 0))) {
            if (r->cfg.mode == TRACEC_BUFFERING_MODE_STREAMING) {
                tracec_recorder_shm_state st;
                if (header_state(r, pv, &st)) (void)save_region(r, pv, pk.region, false);
                snapshot_counters(r, pv);
                (void)tracec_i_rec_fifo_send(pv->fifo, TRACEC_I_FIFO_BUFFER_SAVED, pk.region, pk.gen, 0);
            } else {
                /* ONESHOT, CIRCULAR: handed at a stop (no writer waits for them); saved in order, with the
                   counters the stop published, once the provider says it stopped (answer_owed) */
                pv->owed |= 1u << pk.region;
                pv->owed_gen[pk.region] = pk.gen;
            }
        }
        break;
    default:
        break;
    }
}

/* A terminated run's fifo: its last packets mean nothing now; closed once the provider closed its end. */
static void drain_old_fifo(peer *pv) {
    for (int i = 0; i < 64; i++) {
        tracec_i_fifo_packet pk;
        ssize_t k = recv(pv->old_fifo, &pk, sizeof pk, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (k <= 0) {
            close(pv->old_fifo);
            pv->old_fifo = -1;
            return;
        }
    }
}

static void check_timeouts(tracec_recorder *r) {
    uint64_t now = tracec_i_rec_now_ns();
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->state == PV_NEW && now > pv->deadline) { /* connected, never registered */
            close(pv->conn);
            pv->conn = -1;
            pv->state = PV_GONE;
            r->idle_closed++;
            r->accept_paused = 0;
            continue;
        }
        if (pv->no_buffer && r->started && (pv->state == PV_REGISTERED || pv->state == PV_TERMINATED) &&
            now >= pv->init_retry_at) {
            initialize_and_start(r, pv);
            continue;
        }
        if ((pv->state == PV_STARTING || pv->state == PV_STOPPING) && now > pv->deadline) {
            pv->info.timed_out = true;
            say(r, "provider %s (pid %d) did not answer %s within %d ms", pv->info.name, (int)pv->info.pid,
                pv->state == PV_STARTING ? "Start" : "Stop", r->cfg.timeout_ms);
            if (pv->state == PV_STOPPING) pv->state = PV_STOPPED;
            else pv->deadline = UINT64_MAX; /* still STARTING: its Stop will time out too */
        }
    }
}

static void free_peer(tracec_recorder *r, peer *pv) {
    release_buffer(r, pv);
    tracec_i_rec_seqmap_free(&pv->seq);
    if (pv->conn >= 0) close(pv->conn);
    if (pv->old_fifo >= 0) close(pv->old_fifo);
    free(pv->declared);
    free(pv);
}

/* Drops the connections that ended without registering (list clients, refused or idle ones): nothing of
   them goes into the trace, so nothing of them is kept. */
static void forget_unnamed(tracec_recorder *r) {
    size_t k = 0;
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->state == PV_GONE && pv->info.name[0] == '\0')
            free_peer(r, pv);
        else
            r->pv[k++] = pv;
    }
    r->n_pv = k;
}

tracec_status_t tracec_recorder_poll(tracec_recorder *r, int timeout_ms) {
    if (r == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    size_t cap = 1 + 3 * r->n_pv, n = 0;
    struct pollfd *pf = malloc(cap * sizeof *pf);
    peer **who = malloc(cap * sizeof *who);
    int *kind = malloc(cap * sizeof *kind);
    if (pf == NULL || who == NULL || kind == NULL) {
        free(pf);
        free(who);
        free(kind);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    if (r->accept_paused && tracec_i_rec_now_ns() >= r->accept_retry_at) r->accept_paused = 0;
    if (!r->accept_paused) {
        pf[n] = (struct pollfd){r->listen_fd, POLLIN, 0};
        who[n] = NULL;
        kind[n++] = 0;
    }
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->fifo >= 0) {
            pf[n] = (struct pollfd){pv->fifo, POLLIN, 0};
            who[n] = pv;
            kind[n++] = 2;
        }
        if (pv->conn >= 0) {
            pf[n] = (struct pollfd){pv->conn, POLLIN, 0};
            who[n] = pv;
            kind[n++] = 1;
        }
        if (pv->old_fifo >= 0) {
            pf[n] = (struct pollfd){pv->old_fifo, POLLIN, 0};
            who[n] = pv;
            kind[n++] = 3;
        }
    }
    int k = poll(pf, (nfds_t)n, timeout_ms);
    for (size_t i = 0; k > 0 && i < n; i++) {
        if (pf[i].revents == 0) continue;
        if (kind[i] == 0)
            on_accept(r);
        else if (kind[i] == 2 && who[i]->fifo == pf[i].fd)
            on_fifo(r, who[i]);
        else if (kind[i] == 1 && who[i]->conn == pf[i].fd)
            on_conn(r, who[i]);
        else if (kind[i] == 3 && who[i]->old_fifo == pf[i].fd)
            drain_old_fifo(who[i]);
    }
    free(pf);
    free(who);
    free(kind);
    check_timeouts(r);
    forget_unnamed(r);
    return TRACEC_STATUS_SUCCESS;
}

/* ---- lifecycle ----------------------------------------------------------------------- */

static tracec_status_t check_dir(const char *dir) {
    struct stat st;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return TRACEC_STATUS_IO_ERROR;
    if (lstat(dir, &st) != 0) return TRACEC_STATUS_IO_ERROR;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        errno = EACCES;
        return TRACEC_STATUS_IO_ERROR;
    }
    return TRACEC_STATUS_SUCCESS;
}

/*
 * The trace's one ClockSnapshot of the global clocks (BOOTTIME, MONOTONIC
 * and REALTIME; the trace clock, primary_trace_clock, is the session's
 * clock), on the recorder's sequence at the start: the providers' sessions
 * write none (theirs, saved process after process, would not be in time
 * order, which the trace processor counts as invalid_clock_snapshots);
 * their sequences' incremental clocks are defined on the session's clock.
 * Timestamps without a clock id (the recorder's own, the providers'
 * descriptors and hand-written packets) are on the trace clock too: the
 * trace processor takes them as they are.
 */
static void write_clock_snapshot(tracec_recorder *r) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_trace_file_begin_packet(r->file, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, RECORDER_SEQ);
    tracec_i_te_put_clock_snapshot(&pkt, r->cfg.clock_id);
    (void)tracec_trace_file_end_packet(r->file, &w, &pkt.msg);
}

static void write_recorder_track(tracec_recorder *r) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor td;
    tracec_trace_file_begin_packet(r->file, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, tracec_i_rec_clock_ns(r->cfg.clock_id));
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, RECORDER_SEQ);
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, RECORDER_TRACK_UUID);
    perfetto_protos_TrackDescriptor_set_cstr_name(&td, "tracec record");
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &td);
    (void)tracec_trace_file_end_packet(r->file, &w, &pkt.msg);
    write_clock_snapshot(r);
}

static size_t round_up(size_t v, size_t to) { return (v + to - 1u) / to * to; }

/*
 * The geometry the buffer engine gives a buffer of the recorder's mode,
 * size and durable size (tracec/abi/shm_layout.h: the size rounded up to
 * the page size; a half three times that, rounded up; the durable part, of
 * ONESHOT and CIRCULAR only, at least a page), checked against the
 * engine's own tracec_buffer_memory_size().  false: they disagree.
 */
static bool shm_geometry(tracec_recorder *r) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096u;
    tracec_recorder_shm_geometry *g = &r->geo;
    g->mode = (uint32_t)r->cfg.mode;
    g->halves = r->halves;
    g->size = round_up(r->size, page);
    g->half_bytes = round_up((size_t)g->size * 3u, page);
    g->durable_bytes = 0;
    if (r->cfg.mode != TRACEC_BUFFERING_MODE_STREAMING) {
        size_t d = r->durable_size ? r->durable_size : (size_t)g->size / 16u;
        g->durable_bytes = round_up(d < page ? page : d, page);
    }
    r->shm_bytes = tracec_buffer_memory_size(r->cfg.mode, r->size, r->durable_size);
    return r->shm_bytes != 0 && r->shm_bytes == tracec_recorder_shm_bytes(g);
}

tracec_status_t tracec_recorder_open(const tracec_recorder_config *config, tracec_recorder **out) {
    if (out) *out = NULL;
    if (config == NULL || out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_recorder_config cfg = *config;
    if (cfg.mode == TRACEC_BUFFERING_MODE_DEFAULT) cfg.mode = TRACEC_BUFFERING_MODE_STREAMING;
    if (cfg.mode < TRACEC_BUFFERING_MODE_ONESHOT || cfg.mode > TRACEC_BUFFERING_MODE_STREAMING)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg.buffer_size == 0) cfg.buffer_size = 1u << 20;
    if (cfg.buffer_size < 8192 || cfg.buffer_size > (1u << 30)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg.timeout_ms <= 0) cfg.timeout_ms = 2000;
    if (cfg.wait_ms < 0 || cfg.wait_ms > 10000) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg.categories && !tracec_i_rec_categories_ok(cfg.categories)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (tracec_i_te_clockid_of(cfg.clock_id) < 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg.max_file_size != 0 && cfg.max_file_size < TRACEC_RECORDER_MIN_FILE_SIZE) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg.clock_id == 0) cfg.clock_id = perfetto_protos_BUILTIN_CLOCK_BOOTTIME;
    tracec_recorder *r = calloc(1, sizeof *r);
    if (r == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
    r->cfg = cfg;
    r->log = cfg.log ? cfg.log : stderr;
    r->listen_fd = -1;
    r->lock_fd = -1;
    r->next_seq = RECORDER_SEQ + 1;
    r->halves = cfg.mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1u : 2u;
    r->size = cfg.buffer_size / r->halves;
    /* the durable part (descriptors) of ONESHOT and CIRCULAR: 1/8 of the buffer's size, 16 KiB .. 1 MiB */
    size_t durable = cfg.buffer_size / 8;
    r->durable_size = cfg.mode == TRACEC_BUFFERING_MODE_STREAMING ? 0
                      : durable < 16384                          ? 16384
                      : durable > (1u << 20)                     ? (1u << 20)
                                                                 : durable;
    if (!shm_geometry(r)) {
        free(r);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    char dir[108];
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (cfg.socket_path) {
        if (strlen(cfg.socket_path) >= sizeof r->path) {
            free(r);
            return TRACEC_STATUS_INVALID_ARGUMENT;
        }
        snprintf(r->path, sizeof r->path, "%s", cfg.socket_path);
        snprintf(dir, sizeof dir, "%s", cfg.socket_path);
        char *slash = strrchr(dir, '/');
        if (slash == NULL)
            snprintf(dir, sizeof dir, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
    } else {
        tracec_i_rec_default_socket(r->path, sizeof r->path, dir, sizeof dir);
    }
    st = check_dir(dir);
    int locked = 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", r->path);
    /*
     * One recorder per socket, decided by a lock rather than by probing the
     * socket: between another recorder's bind and listen a probe is refused
     * and would take its socket for a stale one.
     */
    if (st == TRACEC_STATUS_SUCCESS) {
        snprintf(r->lock_path, sizeof r->lock_path, "%s.lock", r->path);
        /* The holder unlinks the file when it closes: a lock taken on a file that is no longer at the path
           is worthless (another recorder may lock the new one), so it is taken again on the path's file. */
        for (int attempt = 0;; attempt++) {
            struct stat a, b;
            r->lock_fd = open(r->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (r->lock_fd < 0) {
                st = TRACEC_STATUS_IO_ERROR;
                break;
            }
            if (flock(r->lock_fd, LOCK_EX | LOCK_NB) != 0) {
                st = errno == EWOULDBLOCK ? TRACEC_STATUS_BAD_STATE : TRACEC_STATUS_IO_ERROR;
                break;
            }
            if (fstat(r->lock_fd, &a) == 0 && stat(r->lock_path, &b) == 0 && a.st_ino == b.st_ino &&
                a.st_dev == b.st_dev) {
                locked = 1; /* locked, and still the path's file */
                break;
            }
            close(r->lock_fd);
            r->lock_fd = -1;
            if (attempt == 7) {
                st = TRACEC_STATUS_BAD_STATE;
                break;
            }
        }
    }
    if (st == TRACEC_STATUS_SUCCESS) {
        r->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (r->listen_fd < 0) st = TRACEC_STATUS_IO_ERROR;
    }
    if (st == TRACEC_STATUS_SUCCESS && bind(r->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int probe = errno == EADDRINUSE ? socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0) : -1;
        if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
            st = TRACEC_STATUS_BAD_STATE; /* another recorder is listening */
        } else if (probe >= 0) { /* a stale socket */
            unlink(r->path);
            if (bind(r->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0) st = TRACEC_STATUS_IO_ERROR;
        } else {
            st = TRACEC_STATUS_IO_ERROR;
        }
        if (probe >= 0) close(probe);
    }
    if (st == TRACEC_STATUS_SUCCESS && (chmod(r->path, 0600) != 0 || listen(r->listen_fd, SOMAXCONN) != 0))
        st = TRACEC_STATUS_IO_ERROR;
    int bound = st == TRACEC_STATUS_SUCCESS;
    if (st == TRACEC_STATUS_SUCCESS)
        st = cfg.output_path ? tracec_trace_file_open(cfg.output_path, &r->file) : tracec_trace_file_open_memory(&r->file);
    if (st != TRACEC_STATUS_SUCCESS) {
        int e = errno;
        if (bound) unlink(r->path);
        if (locked) unlink(r->lock_path);
        if (r->listen_fd >= 0) close(r->listen_fd);
        if (r->lock_fd >= 0) close(r->lock_fd);
        free(r);
        errno = e;
        return st;
    }
    tracec_i_trace_file_limit(r->file, cfg.max_file_size, SUMMARY_ROOM);
    write_recorder_track(r);
    *out = r;
    return TRACEC_STATUS_SUCCESS;
}

const char *tracec_recorder_socket_path(const tracec_recorder *r) { return r ? r->path : NULL; }

tracec_status_t tracec_recorder_trace_status(const tracec_recorder *r) {
    if (r == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    int e = tracec_i_trace_file_errno(r->file);
    if (e == 0) return TRACEC_STATUS_SUCCESS;
    errno = e;
    return TRACEC_STATUS_IO_ERROR;
}

tracec_status_t tracec_recorder_start(tracec_recorder *r) {
    if (r == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (r->started) return TRACEC_STATUS_BAD_STATE;
    r->started = 1;
    for (size_t i = 0; i < r->n_pv; i++) /* a provider terminated by an earlier stop gets a new buffer */
        if (r->pv[i]->state == PV_REGISTERED || r->pv[i]->state == PV_TERMINATED) initialize_and_start(r, r->pv[i]);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_recorder_stop(tracec_recorder *r) {
    if (r == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (!r->started) return TRACEC_STATUS_SUCCESS;
    uint64_t dl = tracec_i_rec_now_ns() + (uint64_t)r->cfg.timeout_ms * 1000000u;
    for (size_t i = 0; i < r->n_pv; i++) /* still waiting for a buffer: never started in this recording */
        if (r->pv[i]->no_buffer && r->pv[i]->state == PV_REGISTERED) r->pv[i]->info.no_buffer = true;
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->state == PV_STARTED || pv->state == PV_STARTING) {
            send_simple(pv, TRACEC_I_MSG_STOP, 0, NULL);
            pv->state = PV_STOPPING;
            pv->deadline = dl;
        }
    }
    for (;;) {
        bool waiting = false;
        for (size_t i = 0; i < r->n_pv; i++) waiting |= r->pv[i]->state == PV_STOPPING;
        if (!waiting) break;
        tracec_recorder_poll(r, 20);
    }
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->state != PV_STOPPED) continue;
        save_all(r, pv, pv->info.timed_out); /* one that did not stop in time: what it was writing too */
        send_simple(pv, TRACEC_I_MSG_TERMINATE, 0, NULL);
        release_buffer_keep_fifo(r, pv, 1);
        pv->state = PV_TERMINATED;
    }
    r->started = 0;
    return TRACEC_STATUS_SUCCESS;
}

size_t tracec_recorder_provider_count(const tracec_recorder *r) {
    size_t n = 0;
    for (size_t i = 0; r && i < r->n_pv; i++) n += r->pv[i]->info.name[0] != '\0';
    return n;
}

bool tracec_recorder_provider(const tracec_recorder *r, size_t i, tracec_recorder_provider_info *out) {
    for (size_t k = 0; r && k < r->n_pv; k++) {
        if (r->pv[k]->info.name[0] == '\0') continue;
        if (i-- == 0) {
            *out = r->pv[k]->info;
            return true;
        }
    }
    return false;
}

static void annotate(perfetto_protos_TrackEvent *ev, const char *name, int64_t v) {
    perfetto_protos_DebugAnnotation da;
    perfetto_protos_TrackEvent_begin_debug_annotations(ev, &da);
    perfetto_protos_DebugAnnotation_set_cstr_name(&da, name);
    perfetto_protos_DebugAnnotation_set_int_value(&da, v);
    perfetto_protos_TrackEvent_end_debug_annotations(ev, &da);
}

/* Each provider's summary: an instant on the recorder's track at now, now + 1, ...  Returns how many the
   trace had no room for (max_file_size). */
static size_t write_provider_summaries(tracec_recorder *r, uint64_t now) {
    size_t k = 0, refused = 0;
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->info.name[0] == '\0') continue;
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        char title[240];
        const char *unstarted = pv->info.unstarted         ? " (ended before it was started)"
                                : pv->info.no_buffer       ? " (not started: the recorder had no buffer for it)"
                                : pv->info.refused_session ? " (refused the session)"
                                : pv->info.started_late    ? " (started late)"
                                                           : "";
        snprintf(title, sizeof title, "provider %s%s%s%s%s", pv->info.name, pv->info.ended_early ? " (ended early)" : "",
                 unstarted, pv->info.timed_out ? " (timed out)" : "", pv->info.corrupt ? " (corrupt buffer)" : "");
        tracec_trace_file_begin_packet(r->file, &w, &pkt.msg);
        perfetto_protos_TracePacket_set_timestamp(&pkt, now + k++);
        perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, RECORDER_SEQ);
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
        perfetto_protos_TrackEvent_set_track_uuid(&ev, RECORDER_TRACK_UUID);
        perfetto_protos_TrackEvent_set_cstr_name(&ev, title);
        annotate(&ev, "pid", pv->info.pid);
        annotate(&ev, "sequence_id", pv->info.sequence_id);
        annotate(&ev, "produced", (int64_t)pv->info.produced);
        annotate(&ev, "dropped", (int64_t)pv->info.dropped);
        annotate(&ev, "delivered", (int64_t)pv->info.delivered);
        annotate(&ev, "corrupt", (int64_t)pv->info.corrupt);
        annotate(&ev, "ended_early", pv->info.ended_early);
        annotate(&ev, "timed_out", pv->info.timed_out);
        annotate(&ev, "uid", pv->info.uid);
        annotate(&ev, "replayed", (int64_t)pv->info.replayed);
        if (pv->info.over_size) annotate(&ev, "over_size", (int64_t)pv->info.over_size);
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        refused += tracec_trace_file_end_packet(r->file, &w, &pkt.msg) == TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    return refused;
}

/* The trace_stats packet, at `at`; false when the trace refused it. */
static bool write_trace_stats(tracec_recorder *r, uint64_t at) {
    /* trace_stats (protos/perfetto/common/trace_stats.proto): per provider one BufferStats, which the
       trace processor shows as traced_buf_* rows of its stats table, indexed by provider */
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TraceStats ts;
    tracec_trace_file_begin_packet(r->file, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, at);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(&pkt, RECORDER_SEQ);
    perfetto_protos_TracePacket_begin_trace_stats(&pkt, &ts);
    uint32_t connected = 0;
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->info.name[0] == '\0') continue;
        connected += pv->state != PV_GONE;
        perfetto_protos_TraceStats_BufferStats bs;
        perfetto_protos_TraceStats_begin_buffer_stats(&ts, &bs);
        perfetto_protos_TraceStats_BufferStats_set_buffer_size(&bs, (uint64_t)r->geo.size * r->halves);
        perfetto_protos_TraceStats_BufferStats_set_bytes_written(&bs, pv->bytes);
        perfetto_protos_TraceStats_BufferStats_set_abi_violations(&bs, pv->info.corrupt);
        perfetto_protos_TraceStats_BufferStats_set_chunks_discarded(&bs, pv->info.dropped);
        /* the trace processor shows this one at severity data_loss (traced_buf_trace_writer_packet_loss) */
        perfetto_protos_TraceStats_BufferStats_set_trace_writer_packet_loss(&bs, pv->info.dropped);
        perfetto_protos_TraceStats_end_buffer_stats(&ts, &bs);
    }
    /* each provider's sequence and its buffer: the trace processor counts the packets marked
       previous_packet_dropped on it as traced_buf_sequence_packet_loss (data_loss) of that buffer */
    uint32_t index = 0;
    for (size_t i = 0; i < r->n_pv; i++) {
        peer *pv = r->pv[i];
        if (pv->info.name[0] == '\0') continue;
        /* its default sequence, then one per writing thread */
        for (uint32_t q = 0; q <= pv->seq.cap; q++) {
            uint32_t id = q == 0 ? pv->info.sequence_id : pv->seq.slot[q - 1].global;
            if (id == 0) continue;
            perfetto_protos_TraceStats_WriterStats ws;
            perfetto_protos_TraceStats_begin_writer_stats(&ts, &ws);
            perfetto_protos_TraceStats_WriterStats_set_sequence_id(&ws, id);
            perfetto_protos_TraceStats_WriterStats_set_buffer(&ws, index);
            perfetto_protos_TraceStats_end_writer_stats(&ts, &ws);
        }
        index++;
    }
    perfetto_protos_TraceStats_set_producers_connected(&ts, connected);
    perfetto_protos_TraceStats_set_producers_seen(&ts, tracec_recorder_provider_count(r));
    perfetto_protos_TracePacket_end_trace_stats(&pkt, &ts);
    return tracec_trace_file_end_packet(r->file, &w, &pkt.msg) == TRACEC_STATUS_SUCCESS;
}

/* The summary at the close.  Under max_file_size it takes the room kept for it, the trace_stats first (its
   losses matter most); the providers' summaries that do not fit are said. */
static void write_summary(tracec_recorder *r) {
    uint64_t now = tracec_i_rec_clock_ns(r->cfg.clock_id);
    size_t named = 0, refused;
    bool stats = true;
    for (size_t i = 0; i < r->n_pv; i++) named += r->pv[i]->info.name[0] != '\0';
    bool limited = r->cfg.max_file_size != 0;
    tracec_i_trace_file_tail(r->file, true);
    if (limited) stats = write_trace_stats(r, now + named);
    refused = write_provider_summaries(r, now);
    if (!limited) stats = write_trace_stats(r, now + named);
    tracec_i_trace_file_tail(r->file, false);
    if (refused)
        say(r, "%zu of the %zu providers' summary instants did not fit in --max-size %llu (their trace_stats %s)",
            refused, named, (unsigned long long)r->cfg.max_file_size, stats ? "did" : "did not either");
}

tracec_status_t tracec_recorder_close(tracec_recorder *r) {
    if (r == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_recorder_stop(r);
    for (size_t i = 0; i < r->n_pv; i++) snapshot_counters(r, r->pv[i]);
    write_summary(r);
    warn_undeclared(r);
    if (tracec_i_trace_file_full(r->file)) {
        uint64_t over = 0;
        for (size_t i = 0; i < r->n_pv; i++) over += r->pv[i]->info.over_size;
        say(r, "the trace reached its max_file_size (%llu bytes): %llu later packets of the providers were not "
               "written (counted as lost in its trace_stats)",
            (unsigned long long)r->cfg.max_file_size, (unsigned long long)over);
    }
    tracec_status_t st = tracec_trace_file_close(r->file);
    int file_errno = errno;
    if (r->idle_closed)
        say(r, "closed %llu connections that did not register within %d ms", (unsigned long long)r->idle_closed,
            r->cfg.timeout_ms);
    for (size_t i = 0; i < r->n_pv; i++) free_peer(r, r->pv[i]);
    free(r->pv);
    if (r->scratch != NULL) munmap(r->scratch, r->scratch_bytes);
    if (r->dscratch != NULL) munmap(r->dscratch, r->dscratch_bytes);
    if (r->listen_fd >= 0) close(r->listen_fd);
    unlink(r->path);
    /* the lock file goes too, while still locked (a recorder that opened it meanwhile sees it unlinked and
       opens the path again: tracec_recorder_open), then the lock: the next recorder binds a free path */
    unlink(r->lock_path);
    if (r->lock_fd >= 0) close(r->lock_fd);
    free(r);
    if (st == TRACEC_STATUS_IO_ERROR) errno = file_errno;
    return st;
}

tracec_status_t tracec_recorder_list(const char *socket_path, FILE *out) {
    char path[108];
    if (socket_path)
        snprintf(path, sizeof path, "%s", socket_path);
    else
        tracec_i_rec_default_socket(path, sizeof path, NULL, 0);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0) close(fd);
        return TRACEC_STATUS_IO_ERROR;
    }
    tracec_i_msg *m = calloc(1, sizeof *m);
    tracec_status_t st = TRACEC_STATUS_IO_ERROR;
    if (m) {
        m->type = TRACEC_I_MSG_LIST;
        if (tracec_i_rec_send(fd, m, NULL, 0) == 0) {
            struct pollfd pf = {fd, POLLIN, 0};
            if (poll(&pf, 1, 2000) > 0 && tracec_i_rec_recv(fd, m, NULL, NULL) > 0 &&
                m->type == TRACEC_I_MSG_LIST_REPLY) {
                fputs(m->text, out);
                st = TRACEC_STATUS_SUCCESS;
            }
        }
        free(m);
    }
    close(fd);
    return st;
}
