/*
 * track_event.c - the write side of tracec/track_event.h: per-thread
 * sequences (writer, sequence id, interning dictionary), the packets an
 * event is made of, tracks and the session's durable packets.
 *
 * Sessions live in slots (te_internal.h).  An event reads its category's
 * mask of slots once: one slot whose sequence on this thread is current
 * (its hint equals the slot's version word) is the straight path; several
 * slots are written one after the other (tracec_i_te_emit_multi, and for
 * typed events open_multi / close_more, which copy the block's bytes).
 *
 * One sequence per thread and session:
 *
 *   first packet   durable TRACK_DESCRIPTOR: SEQ_INCREMENTAL_STATE_CLEARED,
 *                  first_packet_on_sequence, the thread's TrackDescriptor,
 *                  TracePacketDefaults with the thread's track
 *   new names      durable INTERNED_DATA: SEQ_NEEDS_INCREMENTAL_STATE and the
 *                  names an event is about to use for the first time
 *   new counters   durable TRACK_DESCRIPTOR: the counter track of a name
 *   each event     TRACK_EVENT: SEQ_NEEDS_INCREMENTAL_STATE, iids; no
 *                  track_uuid on the thread's track (the default)
 *
 * Durable packets survive a CIRCULAR wrap and are delivered before the
 * events that follow them, so every iid in a saved trace resolves.  When
 * the buffer's epoch changes (CLEAR_ENTIRE) the thread starts a new
 * sequence.  A name whose interning packet was refused (durable part full)
 * is written inline instead, never as a dangling iid.
 *
 * A lost packet (STREAMING: the buffer refused it) starts the incremental
 * state again, as Perfetto's SDK does: the reader holds a sequence's state
 * invalid after previous_packet_dropped until SEQ_INCREMENTAL_STATE_CLEARED,
 * and skips every packet that needs it meanwhile.  So the dictionary's
 * names are forgotten and the next packet of the sequence, whatever it is,
 * says both (previous_packet_dropped, CLEARED); names are interned again
 * from there.  Counter tracks are kept: a TrackDescriptor is not sequence
 * state.  ONESHOT and CIRCULAR deliver their durable part (all interning)
 * before the events: a loss there leaves every delivered iid valid, and a
 * CLEARED written after it would be read before the earlier events and
 * unresolve their iids, so those modes neither clear nor flag the loss (the
 * buffer's statistics count it).
 *
 * Timestamps.  In ONESHOT and STREAMING a sequence's packets carry their
 * timestamp as the delta from the previous delivered one, as Perfetto's SDK
 * does: the first packet's TracePacketDefaults name the sequence-scoped
 * incremental clock INC_CLOCK, and a ClockSnapshot right after it (durable,
 * so read before the events) sets that clock and the session's clock to the
 * same value.  Only a delivered packet moves the clock (the reader never
 * sees a refused one), so a drop costs nothing.  A packet whose time is
 * earlier than the clock's (an owed END, an explicit TRACEC_TE_TIMESTAMP in
 * the past) carries an absolute timestamp on the session's clock instead,
 * as does every packet while the clock is not declared: the first packet
 * after a STREAMING loss (it clears the state; the clock is declared again
 * after it) or a sequence whose ClockSnapshot was refused.  CIRCULAR keeps
 * absolute timestamps: a wrap overwrites the oldest packets, and a delta
 * from an overwritten packet would misplace every later event.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfetto/trace/clock_snapshot.tracec.h"
#include "perfetto/trace/extension_descriptor.tracec.h"
#include "perfetto/trace/interned_data/interned_data.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/trace_packet_defaults.tracec.h"
#include "perfetto/trace/track_event/counter_descriptor.tracec.h"
#include "perfetto/trace/track_event/debug_annotation.tracec.h"
#include "perfetto/trace/track_event/process_descriptor.tracec.h"
#include "perfetto/trace/track_event/thread_descriptor.tracec.h"
#include "perfetto/trace/track_event/track_descriptor.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "te_internal.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/registry.h"
#include "tracec/abi/hints.h" /* last: the branch hints */

/*
 * The entry points of events: every call in them is inlined (the buffer's
 * inline packet functions included, whatever the optimisation level's
 * limits), except the cold paths, which are TRACEC_I_NOINLINE.
 */
#if defined(__GNUC__) || defined(__clang__)
#define HOT_ENTRY __attribute__((flatten))
#else
#define HOT_ENTRY
#endif

enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { GUARD_EVENT = 1, GUARD_TYPED = 2, GUARD_SESSION = 4 };
enum { K_NAME = 1, K_CAT, K_DBG, K_CTRACK };
enum { INC_CLOCK = 64 };
enum { NEED_HEADER = 1, NEED_BASE = 2 }; /* the sequence's incremental clock (sequence-scoped ids are 64..127) */
enum { TABLE_SIZE = 512, TABLE_MAX = 384, MAX_PENDING = 32, MAX_TRACKS = 256, MAX_ARGS = 32, MAX_DEPTH = 8, OWED_GROUPS = 8 };

typedef struct entry {
    const void *key;
    uint64_t val; /* iid, or a counter track's uuid */
    uint32_t kind;
    /* K_NAME: the category last used with the name, and its iid (both in this dictionary): one lookup for two */
    const void *cat;
    uint64_t cat_iid;
} entry;

typedef struct pending {
    const void *key;
    const char *str;
    uint32_t kind;
    uint64_t iid;
} pending;

/*
 * Names known at run time (the _DYN forms), by content: each distinct name
 * is copied once per sequence, and the copy's address is the name's key in
 * the dictionary, as a literal's is.  At most DYN_MAX names of at most
 * DYN_MAX_LEN bytes in DYN_BYTES; others are written inline.  Cleared with
 * the dictionary's names (a new sequence, a loss).
 */
enum { DYN_SLOTS = 256, DYN_MAX = 128, DYN_MAX_LEN = 256, DYN_BYTES = 8192 };

typedef struct dyn_entry {
    uint32_t hash;
    uint16_t off, len;
    uint32_t used;
} dyn_entry;

typedef struct te_dyn {
    uint32_t n, bytes; /* entries, bytes of text used */
    dyn_entry slot[DYN_SLOTS];
    char text[DYN_BYTES];
} te_dyn;

/*
 * A thread's sequence in one session slot: made at the thread's first
 * event there (mmap: no lock, so also from a signal handler), kept while
 * the thread lives (a later session in the slot starts a new sequence in
 * it) and unmapped at thread exit.  The buffer writer's state is
 * runtime-owned and released by the runtime at thread exit.
 */
typedef struct te_seq {
    tracec_buffer_writer bw;
    uint32_t slot;
    uint64_t gen;   /* session the writer is bound to (0: none) */
    uint64_t buf;   /* its buffer */
    uint64_t epoch; /* the buffer's epoch the dictionary is valid for */
    uint64_t hint;  /* the slot's ver when the sequence last looked at it */
    uint64_t run;   /* the slot's run then */
    uint64_t pause_seen; /* the slot's pause whose boundary the sequence took */
    uint64_t files_gen;  /* the session for which it looked for descriptor files registered late */
    uint32_t clock_id; /* the session's timestamp clock, read when the thread bound to it */
    int clk;           /* its clockid_t */
    tracec_i_te_clk *ck; /* the thread's reading of it when extrapolated (clock.c), else NULL */
    uint32_t seq;
    /* NEED_HEADER: the sequence's first packet is to be written; NEED_BASE: its incremental clock declared */
    uint32_t need;
    /*
     * Timestamps as deltas ("Timestamps" above): `inc_mode` when the session
     * allows them (read at binding), `inc_ok` while the sequence's clock is
     * declared and may be used; `inc_last` is the clock's value as the reader
     * has it (the last delivered packet on it), `inc_pend` the value once the
     * open packet is delivered (equal to inc_last when it has no delta).
     */
    uint32_t inc_mode;
    uint32_t inc_ok;
    uint64_t inc_last;
    uint64_t inc_pend;
    uint32_t dropped;  /* a packet was lost (STREAMING): the next one says so and clears the state */
    uint32_t in_event; /* a typed event's packet is open on this sequence */
    uint32_t used;
    uint64_t next_iid;
    uint64_t uuid; /* the thread's track (0: not computed for this sequence) */
    const uint64_t *verp; /* the slot's ver */
    /*
     * Slices on the thread's track as the program opened them (docs/track-
     * events.md, "Nesting after losses"): `nlive` levels, a stack of bits in
     * `unwritten` (bit 0 the innermost) set when a level's BEGIN is not in
     * the trace, so bit 0 is clear at the top level and one test tells an
     * event inside a lost slice (levels from 64 up are not tracked and count
     * as written);
     * `phantoms` levels below them whose slices the runtime ended at a run
     * or session boundary (the program's END for them is not written).  At
     * a run boundary of the same track the innermost levels whose BEGINs
     * were lost stay live and unwritten (a slice begun in a pause: what the
     * program writes inside it after the resume is not written either).
     * `owed`: ENDs of written slices that could not be written yet, oldest
     * first, `nowed` groups of `n` ENDs at one timestamp each; they are
     * written after the thread's next written event, and before any BEGIN
     * on its track (a BEGIN that cannot follow them is not written).
     */
    uint32_t nlive;
    uint32_t nowed;
    uint64_t unwritten;
    uint64_t phantoms;
    uint64_t cats_seen; /* the slot's `cats` at the thread's last run boundary */
    struct {
        uint64_t ts;
        uint64_t n;
    } owed[OWED_GROUPS];
    uint64_t last_ts; /* the thread's last event: a boundary ends slices no earlier (it may have raced the stop) */
    char name[16]; /* the thread name in the last TrackDescriptor of the sequence */
    /*
     * A typed event written to several slots, when this slot is not the one
     * whose packet the block writes (open_multi, close_multi): its names and
     * timestamp, taken at the open, and its packet, written at the close.
     */
    uint64_t more_ts;
    uint64_t more_cat_iid, more_name_iid;
    const char *more_name; /* a literal name; NULL: the copy at more_name_off in the thread's scratch */
    size_t more_name_off;
    tracec_writer tw;
    perfetto_protos_TracePacket tpkt;
    tracec_msg tev;
    entry table[TABLE_SIZE];
    te_dyn dyn;
} te_seq;

/* The thread: what is the same for every slot, and its sequences. */
typedef struct te_thread {
    /* The sequence of slot i at [1 << i]; the other entries stay NULL: indexed by a category's mask, an
       entry is the one sequence of a single-slot mask. */
    te_seq *seq_of[1u << TRACEC_TE_MAX_SESSIONS];
    /*
     * The re-entrancy guard: set while the thread runs the track-event layer
     * (an event, a typed block, a session call).  An event that finds it set,
     * or finds the thread inside the buffer runtime (tracec_i_tls_locks), was
     * started by a signal handler that interrupted it: dropped and counted.
     * Bits: GUARD_EVENT, GUARD_TYPED, GUARD_SESSION.
     */
    uint32_t guard; /* written between compiler barriers (__atomic_signal_fence) */
    /* slots whose sequence dropped the event in seq_ready_slow (the session paused, its thread header or
       writer refused): a slice event keeps its level there (drop_nest) */
    uint32_t slow_drop;
    /*
     * Slice levels of events refused at the guard (an event inside a typed
     * block, or a handler's event while the thread was inside the layer),
     * in the order they came: REFUSED_BITS bits each (bit 0: 1 for a BEGIN,
     * 0 for an END; the next TRACEC_TE_MAX_SESSIONS bits: the slots the
     * event was for), the count in the top 4 bits.  Updated with a compare-
     * and-swap (a handler may interrupt an update) and applied to the
     * sequences' stacks at the thread's next entry, so the ENDs still match.
     */
    uint64_t refused;
    uint64_t misuse;
    int32_t tid;
    tracec_i_te_clk clk[2]; /* CLOCK_MONOTONIC, CLOCK_BOOTTIME between readings (clock.c) */
    /* A typed event written to several slots: its category and form, and the scratch (mmap'd: a signal
       handler may write one) holding the dynamic names the other slots write inline, then the block's bytes. */
    tracec_te_category *more_cat;
    int more_variant;
    uint8_t *scratch;
    size_t scratch_cap, scratch_used;
} te_thread;

#define SEQ(g, i) ((g)->seq_of[1u << (i)])

static _Thread_local te_thread te;
static uint32_t next_seq = 1;
static pthread_key_t seq_key;
static int seq_key_ok;

tracec_i_te_slot tracec_i_te_slots[TRACEC_TE_MAX_SESSIONS];
uint64_t tracec_i_te_ver[TRACEC_TE_MAX_SESSIONS];

static void owed_at_exit(te_thread *g);

/* At thread exit: the ENDs the thread still owes, then the sequences' memory (the writers' state is the buffer
   runtime's, released by it; a writer it released first gets a state again, released in the next round). */
static void seq_free(void *p) {
    te_thread *g = (te_thread *)p;
    owed_at_exit(g);
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        if (SEQ(g, i) == NULL) continue;
        munmap(SEQ(g, i), sizeof(te_seq));
        SEQ(g, i) = NULL;
    }
    if (g->scratch != NULL) munmap(g->scratch, g->scratch_cap);
    g->scratch = NULL;
    g->scratch_cap = 0;
}

__attribute__((constructor)) static void seq_key_init(void) { seq_key_ok = pthread_key_create(&seq_key, seq_free) == 0; }

/* A new sequence for slot `i` (zeroed); NULL when no memory. */
static TRACEC_I_NOINLINE te_seq *seq_alloc(te_thread *g, uint32_t i) {
    void *m = mmap(NULL, sizeof(te_seq), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    te_seq *t;
    if (m == MAP_FAILED) return NULL;
    t = (te_seq *)m;
    t->slot = i;
    t->hint = UINT64_MAX;
    t->verp = &tracec_i_te_ver[i];
    t->next_iid = 1;
    if (seq_key_ok) (void)pthread_setspecific(seq_key, g); /* a key below 32: no allocation */
    SEQ(g, i) = t;
    return t;
}

uint32_t tracec_i_te_new_sequence_id(void) { return __atomic_fetch_add(&next_seq, 1u, __ATOMIC_RELAXED); }

void tracec_i_te_slot_publish_lost(int i) {
    tracec_i_te_slot *sl = &tracec_i_te_slots[i];
    uint64_t pub = __atomic_load_n(&sl->published, __ATOMIC_ACQUIRE);
    uint64_t total = __atomic_load_n(&sl->lost, __ATOMIC_RELAXED);
    while (total > pub)
        if (__atomic_compare_exchange_n(&sl->published, &pub, total, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            tracec_buffer_id_t id = {__atomic_load_n(&sl->buf, __ATOMIC_ACQUIRE)};
            (void)tracec_buffer_count_lost(id, total - pub); /* a stopped buffer: too late, the stop counted */
            return;
        }
}

/* One event lost for slot i; a publishing slot's buffer counts them by 64 (not inside the runtime's locks:
   a signal handler may be running on a thread that holds one). */
static inline TRACEC_I_ALWAYS_INLINE void slot_lost(uint32_t i) {
    uint64_t n = __atomic_add_fetch(&tracec_i_te_slots[i].lost, 1u, __ATOMIC_RELAXED);
    if (TRACEC_I_UNLIKELY((n & 63u) == 0) && tracec_i_tls_locks == 0 &&
        __atomic_load_n(&tracec_i_te_slots[i].publish, __ATOMIC_ACQUIRE))
        tracec_i_te_slot_publish_lost((int)i);
}

/* Counts one event lost for each slot of `mask`. */
static TRACEC_I_NOINLINE void lost_add(uint32_t mask) {
    for (; mask != 0; mask &= mask - 1u) slot_lost((uint32_t)__builtin_ctz(mask));
}

/* ---- ids --------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A track of this process: `low` is a thread's tid for its track, or NO_TID for the process's own, which no
   tid can be (a tid is positive, below 2^31): the process's track is never one of its threads'. */
#define NO_TID 0xffffffffu
static uint64_t pid_track_uuid(uint32_t low) { return mix64(((uint64_t)(uint32_t)getpid() << 32) | low) | 1u; }

uint64_t tracec_te_process_track_uuid(void) { return pid_track_uuid(NO_TID); }

static int32_t thread_tid(void) {
    te_thread *g = &te;
    if (g->tid == 0) g->tid = (int32_t)syscall(SYS_gettid);
    return g->tid;
}

static uint64_t thread_uuid(te_seq *t) {
    if (TRACEC_I_UNLIKELY(t->uuid == 0))
        t->uuid = pid_track_uuid((uint32_t)thread_tid());
    return t->uuid;
}

uint64_t tracec_te_thread_track_uuid(void) { return pid_track_uuid((uint32_t)syscall(SYS_gettid)); }

static uint64_t counter_uuid(const char *name) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the name, mixed with the process */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
    return mix64(h ^ tracec_te_process_track_uuid()) | 1u;
}

static uint64_t clock_ns(int clk) {
    struct timespec ts;
    clock_gettime((clockid_t)clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The bound session's clock now (the thread's snapshot: a later session's
 * start does not race with it); monotonic clocks extrapolated between
 * readings (clock.c), the thread's values on one clock never going back.
 */
static inline TRACEC_I_ALWAYS_INLINE uint64_t now_ns(const te_seq *t) {
    if (TRACEC_I_LIKELY(t->ck != NULL)) return tracec_i_te_clk_now(t->ck, t->clk);
    return clock_ns(t->clk);
}

uint64_t tracec_te_thread_misuse(void) { return te.misuse; }

uint64_t tracec_i_te_now(int slot) { return clock_ns(__atomic_load_n(&tracec_i_te_slots[slot].clk, __ATOMIC_RELAXED)); }

/* ---- the dictionary ------------------------------------------------------------ */

static uint32_t slot_of(const void *key, uint32_t kind) {
    uint64_t h = ((uint64_t)(uintptr_t)key ^ kind) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 55); /* 9 bits: TABLE_SIZE */
}

static entry *lookup(te_seq *t, const void *key, uint32_t kind) {
    for (uint32_t i = slot_of(key, kind);; i = (i + 1u) & (TABLE_SIZE - 1u)) {
        entry *e = &t->table[i];
        if (e->key == key && e->kind == kind) return e;
        if (e->key == NULL) return NULL;
    }
}

static void insert(te_seq *t, const void *key, uint32_t kind, uint64_t val) {
    uint32_t i = slot_of(key, kind);
    while (t->table[i].key != NULL) i = (i + 1u) & (TABLE_SIZE - 1u);
    t->table[i] = (entry){key, val, kind, NULL, 0};
    t->used++;
}

/* ---- names known at run time ------------------------------------------------ */

static TRACEC_I_NOINLINE void dyn_clear(te_seq *t) {
    te_dyn *d = &t->dyn;
    if (d->n != 0) memset(d->slot, 0, sizeof d->slot);
    d->n = 0;
    d->bytes = 0;
}

/* The thread's copy of `s` (the name's key, NUL-terminated), added now if new; NULL when there is no room. */
static const char *dyn_key(te_seq *t, const char *s) {
    te_dyn *d = &t->dyn;
    size_t len = 0;
    uint32_t h = 2166136261u; /* FNV-1a, and the length, in one pass */
    for (; s[len] != '\0'; len++) {
        if (len == DYN_MAX_LEN) return NULL;
        h = (h ^ (unsigned char)s[len]) * 16777619u;
    }
    for (uint32_t i = h & (DYN_SLOTS - 1u);; i = (i + 1u) & (DYN_SLOTS - 1u)) {
        dyn_entry *e = &d->slot[i];
        if (!e->used) {
            if (d->n >= DYN_MAX || d->bytes + len + 1u > DYN_BYTES) return NULL;
            memcpy(d->text + d->bytes, s, len + 1u);
            *e = (dyn_entry){h, (uint16_t)d->bytes, (uint16_t)len, 1u};
            d->bytes += (uint32_t)len + 1u;
            d->n++;
            return d->text + e->off;
        }
        if (e->hash == h && e->len == len && memcmp(d->text + e->off, s, len) == 0) return d->text + e->off;
    }
}

/* The iid of `cat` used with the name entry `e` (looked up once, then kept in `e`); 0 when not interned. */
static inline TRACEC_I_ALWAYS_INLINE uint64_t cat_iid_with(te_seq *t, entry *e, const tracec_te_category *cat) {
    const entry *c;
    if (TRACEC_I_LIKELY(e->cat == cat)) return e->cat_iid;
    if ((c = lookup(t, cat, K_CAT)) == NULL) return 0;
    e->cat = cat;
    e->cat_iid = c->val;
    return c->val;
}

/*
 * After a lost packet: the names go (the next packet sets CLEARED), the
 * counter tracks stay (their descriptors were delivered, and tracks are
 * not sequence state).
 */
static TRACEC_I_NOINLINE void forget_names(te_seq *t) {
    struct {
        const void *key;
        uint64_t uuid;
    } keep[TABLE_MAX]; /* a counter track enters only while used < TABLE_MAX */
    uint32_t nk = 0;
    for (uint32_t i = 0; i < TABLE_SIZE && nk < TABLE_MAX; i++)
        if (t->table[i].key != NULL && t->table[i].kind == K_CTRACK) {
            keep[nk].key = t->table[i].key;
            keep[nk++].uuid = t->table[i].val;
        }
    memset(t->table, 0, sizeof t->table);
    t->used = 0;
    t->next_iid = 1;
    dyn_clear(t);
    for (uint32_t i = 0; i < nk; i++) insert(t, keep[i].key, K_CTRACK, keep[i].uuid);
}

static void nest_boundary(te_seq *t, uint64_t end_ts, int run);

static void reset_sequence(te_seq *t) {
    uint64_t old_uuid = t->uuid;
    memset(t->table, 0, sizeof t->table);
    dyn_clear(t);
    t->used = 0;
    t->next_iid = 1;
    t->seq = tracec_i_te_new_sequence_id();
    t->need = NEED_HEADER; /* the clock is declared after the header */
    t->inc_ok = 0;
    t->inc_last = t->inc_pend = 0;
    t->dropped = 0;
    te.tid = 0; /* a fork child changes the epoch: pid and tid are new */
    t->uuid = 0;
    /* The new sequence writes on the same thread track unless this is a fork child: the ENDs owed at a run
       boundary (their BEGINs were delivered by the stop) are still written there.  A child's track is new. */
    if (old_uuid == 0 || thread_uuid(t) != old_uuid) nest_boundary(t, 0, 0);
}

/* ---- packets ------------------------------------------------------------------ */

static inline TRACEC_I_ALWAYS_INLINE void begin(te_seq *t, tracec_writer *w, perfetto_protos_TracePacket *pkt, uint32_t kind) {
    tracec_buffer_begin_packet(&t->bw, w, TRACEC_BUFFER_CATEGORY_TRACING, kind, &pkt->msg);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(pkt, t->seq);
}

/* The same without the sequence id: put_header_raw writes it. */
static inline TRACEC_I_ALWAYS_INLINE void begin_raw(te_seq *t, tracec_writer *w, perfetto_protos_TracePacket *pkt,
                                                   uint32_t kind) {
    tracec_buffer_begin_packet(&t->bw, w, TRACEC_BUFFER_CATEGORY_TRACING, kind, &pkt->msg);
}

/*
 * Closes a packet.  The first one after a loss also says so and clears the
 * state (the dictionary was emptied when the packet was lost): written
 * last, its sequence_flags win over the ones the packet set (a scalar's
 * last occurrence is its value), so the common path costs one branch.
 */
/*
 * The sequence's TracePacketDefaults: events on the thread's own track omit
 * track_uuid (10 bytes each).  Defaults are incremental state, so every
 * packet that clears the state sets them again.
 */
static TRACEC_I_NOINLINE void put_defaults(te_seq *t, perfetto_protos_TracePacket *pkt) {
    perfetto_protos_TracePacketDefaults d;
    perfetto_protos_TrackEventDefaults ted;
    perfetto_protos_TracePacket_begin_trace_packet_defaults(pkt, &d);
    if (t->inc_mode) perfetto_protos_TracePacketDefaults_set_timestamp_clock_id(&d, INC_CLOCK);
    perfetto_protos_TracePacketDefaults_begin_track_event_defaults(&d, &ted);
    perfetto_protos_TrackEventDefaults_set_track_uuid(&ted, thread_uuid(t));
    perfetto_protos_TracePacketDefaults_end_track_event_defaults(&d, &ted);
    perfetto_protos_TracePacket_end_trace_packet_defaults(pkt, &d);
}

/* A packet that was not accepted: the clock stays; a loss in order (STREAMING) restarts the incremental state. */
static TRACEC_I_NOINLINE bool end_refused(te_seq *t, tracec_status_t st) {
    t->inc_pend = t->inc_last; /* the reader does not see it: the clock stays */
    if (st == TRACEC_STATUS_CLOSED) /* the run stopped under the event: the buffer does not count it */
        slot_lost(t->slot);
    if ((st == TRACEC_STATUS_BUFFER_FULL || st == TRACEC_STATUS_WOULD_DEADLOCK || st == TRACEC_STATUS_OUT_OF_MEMORY) &&
        __atomic_load_n(&tracec_i_te_slots[t->slot].in_order, __ATOMIC_RELAXED) && !t->dropped) {
        t->dropped = 1; /* until a packet lands nothing enters the dictionary: forgetting once is enough */
        t->inc_ok = 0;  /* the packet that clears the state carries an absolute timestamp */
        forget_names(t);
    }
    return false;
}

/* The first packet after a loss: it also says so and clears the state (see end). */
static TRACEC_I_NOINLINE bool end_after_loss(te_seq *t, tracec_writer *w, perfetto_protos_TracePacket *pkt) {
    tracec_status_t st;
    if (TRACEC_I_LIKELY(w->status == TRACEC_STATUS_SUCCESS)) { /* else it never began: refused below */
        perfetto_protos_TracePacket_set_previous_packet_dropped(pkt, true);
        perfetto_protos_TracePacket_set_sequence_flags(pkt, SEQ_CLEARED | SEQ_NEEDS);
        put_defaults(t, pkt);
    }
    st = tracec_buffer_end_packet(&t->bw, w, &pkt->msg);
    if (st != TRACEC_STATUS_SUCCESS) return end_refused(t, st);
    t->inc_last = t->inc_pend;
    t->dropped = 0; /* the state is cleared: the clock is declared again */
    if (t->inc_mode) {
        t->need |= NEED_BASE;
        t->hint = UINT64_MAX - 1u; /* the next event takes the slow path, which declares it */
    }
    return true;
}

static inline TRACEC_I_ALWAYS_INLINE bool end(te_seq *t, tracec_writer *w, perfetto_protos_TracePacket *pkt) {
    tracec_status_t st;
    if (TRACEC_I_UNLIKELY(t->dropped)) return end_after_loss(t, w, pkt);
    st = tracec_buffer_end_packet(&t->bw, w, &pkt->msg);
    if (TRACEC_I_LIKELY(st == TRACEC_STATUS_SUCCESS)) {
        t->inc_last = t->inc_pend;
        return true;
    }
    return end_refused(t, st);
}

static bool write_thread_header(te_seq *t) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor td;
    perfetto_protos_ThreadDescriptor th;
    char name[sizeof t->name] = "";
    (void)pthread_getname_np(pthread_self(), name, sizeof name); /* prctl(PR_GET_NAME): async-signal-safe */
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR);
    if (t->need & NEED_HEADER) {
        perfetto_protos_TracePacket_set_sequence_flags(&pkt, SEQ_CLEARED);
        perfetto_protos_TracePacket_set_first_packet_on_sequence(&pkt, true);
        put_defaults(t, &pkt);
    }
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, thread_uuid(t));
    perfetto_protos_TrackDescriptor_set_parent_uuid(&td, tracec_te_process_track_uuid());
    perfetto_protos_TrackDescriptor_begin_thread(&td, &th);
    perfetto_protos_ThreadDescriptor_set_pid(&th, (int32_t)getpid());
    perfetto_protos_ThreadDescriptor_set_tid(&th, thread_tid());
    if (name[0]) perfetto_protos_ThreadDescriptor_set_cstr_thread_name(&th, name);
    perfetto_protos_TrackDescriptor_end_thread(&td, &th);
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &td);
    if (!end(t, &w, &pkt)) return false;
    memcpy(t->name, name, sizeof name);
    return true;
}

/*
 * Declares the sequence's incremental clock: INC_CLOCK and the session's
 * clock at one value, now.  Durable, so in ONESHOT it is read before the
 * events (with the header).  Not retried when refused (the sequence keeps
 * absolute timestamps; a STREAMING loss declares it again once cleared).
 */
static TRACEC_I_NOINLINE void write_base(te_seq *t) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_ClockSnapshot cs;
    perfetto_protos_ClockSnapshot_Clock c;
    uint64_t now = now_ns(t);
    t->need &= ~(uint32_t)NEED_BASE;
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR);
    perfetto_protos_TracePacket_begin_clock_snapshot(&pkt, &cs);
    perfetto_protos_ClockSnapshot_begin_clocks(&cs, &c);
    perfetto_protos_ClockSnapshot_Clock_set_clock_id(&c, INC_CLOCK);
    perfetto_protos_ClockSnapshot_Clock_set_timestamp(&c, now);
    perfetto_protos_ClockSnapshot_Clock_set_is_incremental(&c, true);
    perfetto_protos_ClockSnapshot_end_clocks(&cs, &c);
    perfetto_protos_ClockSnapshot_begin_clocks(&cs, &c);
    perfetto_protos_ClockSnapshot_Clock_set_clock_id(&c, t->clock_id);
    perfetto_protos_ClockSnapshot_Clock_set_timestamp(&c, now);
    perfetto_protos_ClockSnapshot_end_clocks(&cs, &c);
    perfetto_protos_TracePacket_end_clock_snapshot(&pkt, &cs);
    t->inc_pend = now;
    t->inc_ok = end(t, &w, &pkt);
}

/* At a thread's first event of a run: a new TrackDescriptor when its name changed since the last one. */
static void refresh_thread_name(te_seq *t) {
    char name[sizeof t->name] = "";
    (void)pthread_getname_np(pthread_self(), name, sizeof name);
    if (memcmp(name, t->name, sizeof name) != 0) (void)write_thread_header(t);
}

/*
 * Owes `n` ENDs at `ts` (after the ones owed already).  A BEGIN is never
 * written while ENDs are owed (emit, tracec_i_te_open), so every owed END
 * closes a slice begun before the oldest of them: when the groups are full
 * the newest takes the later timestamp, which moves only the instants
 * written between the two, never a slice.
 */
static TRACEC_I_NOINLINE void owe(te_seq *t, uint64_t ts, uint64_t n) {
    if (n == 0) return;
    if (t->nowed != 0) {
        uint32_t top = t->nowed - 1u;
        if (ts <= t->owed[top].ts || t->nowed == OWED_GROUPS) {
            if (ts > t->owed[top].ts) t->owed[top].ts = ts;
            t->owed[top].n += n;
            return;
        }
    }
    t->owed[t->nowed].ts = ts;
    t->owed[t->nowed].n = n;
    t->nowed++;
}

/*
 * A boundary: the slices open on the thread's track end here, and the
 * program's own ENDs for them are swallowed (phantom levels).  `run`: a
 * run boundary of the same session and track (a pause, a resume, whatever
 * it clears): the slices ended when the run stopped (`end_ts`) and their
 * ENDs are owed; when the slot's categories stayed since the thread's last
 * one (`cats_seen`, which it updates), the innermost lost levels stay.
 * Else a new session, or a fork child's new track: the BEGINs are not on
 * it, so no END is owed (those owed go too) and every level is a phantom.
 */
static TRACEC_I_NOINLINE void nest_boundary(te_seq *t, uint64_t end_ts, int run) {
    uint32_t n = t->nlive;
    uint64_t cats = __atomic_load_n(&tracec_i_te_slots[t->slot].cats, __ATOMIC_ACQUIRE);
    bool same_cats = cats == t->cats_seen;
    if (run) t->cats_seen = cats;
    if (n == 0 && t->nowed == 0) return;
    if (run) {
        /* levels from 64 up count as written; `unwritten` holds the others (bits above them are 0) */
        uint32_t w = n - (uint32_t)__builtin_popcountll(t->unwritten);
        if (end_ts < t->last_ts) end_ts = t->last_ts; /* an event that raced the stop landed in the new run */
        owe(t, end_ts, w);
    } else {
        t->nowed = 0;
    }
    /* A run boundary of the same track: the innermost levels whose BEGINs were lost stay live and
       unwritten, so what the program writes inside them is not written either; the levels below them
       become phantoms, as every level does at a new session or track.  Only when the categories stayed:
       the levels are of the events the thread saw, and an END of a category now off never pops its own.
       (Bits above the live levels are 0, so the count of lost ones on top is at most n.) */
    uint32_t keep = 0;
    if (run && same_cats && n <= 64u) keep = ~t->unwritten == 0 ? 64u : (uint32_t)__builtin_ctzll(~t->unwritten);
    t->phantoms += n - keep;
    t->nlive = keep;
    t->unwritten = keep == 64u ? ~UINT64_C(0) : (UINT64_C(1) << keep) - 1u;
}

/* `unwritten` is a stack of bits, the innermost level in bit 0; levels from 64 up are not tracked (written). */
static inline TRACEC_I_ALWAYS_INLINE void nest_push(te_seq *t, bool written) {
    if (TRACEC_I_LIKELY(t->nlive < 64u)) t->unwritten = (t->unwritten << 1) | (uint64_t)!written;
    t->nlive++;
}

/* An END of the thread's track: true when it must be written (its BEGIN is in the trace). */
static inline TRACEC_I_ALWAYS_INLINE bool nest_pop(te_seq *t) {
    bool w;
    if (TRACEC_I_UNLIKELY(t->nlive == 0)) {
        if (t->phantoms == 0) return true; /* more ENDs than BEGINs: the program's own imbalance */
        t->phantoms--;
        return false;
    }
    if (TRACEC_I_UNLIKELY(--t->nlive >= 64u)) return true;
    w = (t->unwritten & 1u) == 0;
    t->unwritten >>= 1;
    return w;
}

/*
 * An event while the session is paused: dropped and counted (the hint is
 * not taken, so every event of the pause comes here).  The thread's first
 * one takes the pause's boundary, as its first event after the resume
 * would (the slices open at the stop end there), so that the slice events
 * of the pause can keep the nesting (drop_nest).
 */
static TRACEC_I_NOINLINE te_seq *paused(te_seq *t) {
    tracec_i_te_slot *s = &tracec_i_te_slots[t->slot];
    /* Which pause, not which run: a resume bumps the run before it ends the pause, and an event in
       between must not take this pause's boundary for the next one's. */
    uint64_t pause = __atomic_load_n(&s->pause, __ATOMIC_RELAXED);
    if (t->hint != UINT64_MAX && t->pause_seen != pause) {
        nest_boundary(t, __atomic_load_n(&s->run_end_ts, __ATOMIC_RELAXED), 1);
        t->pause_seen = pause;
    }
    __atomic_fetch_add(&s->lost, 1u, __ATOMIC_RELAXED);
    te.slow_drop |= 1u << t->slot;
    return NULL;
}

/* After seq_ready() returned NULL: a slice event dropped in a pause keeps its level (a BEGIN not
   written, an END popping one) on each paused slot's sequence, so the program's ENDs after the resume match. */
static TRACEC_I_NOINLINE void drop_nest(te_thread *g, uint32_t kind) {
    uint32_t m = g->slow_drop;
    g->slow_drop = 0;
    for (; m != 0; m &= m - 1u) {
        te_seq *t = SEQ(g, __builtin_ctz(m));
        if (kind == TRACEC_I_TE_SLICE_BEGIN)
            nest_push(t, false);
        else if (kind == TRACEC_I_TE_SLICE_END)
            (void)nest_pop(t);
    }
}

/*
 * The event is not written to slot `i` (its buffer refused the thread's
 * header or writer, a stop raced the event): its slice level is kept as in
 * a pause, so the program's END of a BEGIN dropped here is not written.
 */
static TRACEC_I_NOINLINE te_seq *dropped(te_thread *g, uint32_t i) {
    g->slow_drop |= 1u << i;
    return NULL;
}

/*
 * The calling thread's sequence in slot `i`, bound to its session, current
 * with the buffer's epoch and announced; NULL when the slot has no session
 * (or the sequence cannot be made or announced: the event is then not
 * written there).
 */
static void late_files(te_seq *t, uint32_t i);
static void write_owed(te_seq *t);

/* A ONESHOT slot: its buffer, once full, stays full, so an owed END is never written again (nor counted twice). */
static bool slot_oneshot(uint32_t i) {
    const tracec_i_te_slot *s = &tracec_i_te_slots[i];
    return !__atomic_load_n(&s->in_order, __ATOMIC_RELAXED) && __atomic_load_n(&s->incremental, __ATOMIC_RELAXED);
}

static TRACEC_I_NOINLINE te_seq *seq_ready_slow(te_thread *g, uint32_t i) {
    tracec_i_te_slot *s = &tracec_i_te_slots[i];
    te_seq *t = SEQ(g, i);
    uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
    uint64_t epoch, hint;
    if (TRACEC_I_UNLIKELY(gen == 0)) return NULL;
    if (TRACEC_I_UNLIKELY(t == NULL) && (t = seq_alloc(g, i)) == NULL) {
        __atomic_fetch_add(&s->lost, 1u, __ATOMIC_RELAXED); /* no memory for the sequence: counted */
        return NULL;
    }
    if (TRACEC_I_UNLIKELY(t->gen != gen)) {
        uint64_t buf = __atomic_load_n(&s->buf, __ATOMIC_ACQUIRE);
        if (t->gen != 0) tracec_buffer_writer_release(&t->bw);
        t->gen = 0;
        nest_boundary(t, 0, 0); /* the old session's slices stay in its trace */
        if (tracec_buffer_writer_init(&t->bw, (tracec_buffer_id_t){buf}, 0) != TRACEC_STATUS_SUCCESS) return dropped(g, i);
        t->gen = gen;
        t->buf = buf;
        t->in_event = 0; /* a typed block left with break/return in an earlier session */
        /* published before the generation (release): this session's clock, or a later one's (whose start made
           this binding stale: its packets are refused) */
        t->clock_id = __atomic_load_n(&s->clock_id, __ATOMIC_RELAXED);
        t->clk = __atomic_load_n(&s->clk, __ATOMIC_RELAXED);
        t->ck = tracec_i_te_clk_extrapolates(t->clk) ? &g->clk[t->clk == CLOCK_BOOTTIME] : NULL;
        t->inc_mode = (uint32_t)__atomic_load_n(&s->incremental, __ATOMIC_RELAXED);
        t->epoch = UINT64_MAX;
        t->hint = UINT64_MAX; /* look at the epoch now */
    }
    hint = __atomic_load_n(&tracec_i_te_ver[i], __ATOMIC_ACQUIRE);
    if (TRACEC_I_UNLIKELY(hint != t->hint)) { /* a start, a pause or a fork since this thread last looked */
        if (TRACEC_I_UNLIKELY(__atomic_load_n(&s->paused, __ATOMIC_ACQUIRE))) return paused(t);
        if (tracec_buffer_epoch((tracec_buffer_id_t){t->buf}, &epoch) != TRACEC_STATUS_SUCCESS) return dropped(g, i);
        uint64_t run = __atomic_load_n(&s->run, __ATOMIC_ACQUIRE);
        /* A new run (not the session's first): slices open at its stop end there.  Owed before a cleared
           buffer's new sequence starts: the stop delivered their BEGINs, whatever the start clears; also
           when that sequence has not started yet (its header refused before this boundary): it is the same
           session's, on the same track (only a new session or a fork child's track drops them). */
        if (run != t->run && t->hint != UINT64_MAX)
            nest_boundary(t, __atomic_load_n(&s->run_end_ts, __ATOMIC_RELAXED), 1);
        else if (t->hint == UINT64_MAX)
            t->cats_seen = __atomic_load_n(&s->cats, __ATOMIC_ACQUIRE); /* the categories its levels are of */
        t->run = run;
        if (epoch != t->epoch) {
            reset_sequence(t);
            t->epoch = epoch;
        }
        if (!(t->need & NEED_HEADER)) refresh_thread_name(t);
        t->hint = hint;
    }
    if (TRACEC_I_UNLIKELY(t->need != 0)) {
        if (t->need & NEED_HEADER) {
            if (!write_thread_header(t)) {
                t->hint = UINT64_MAX - 1u; /* tried again at the next event */
                return dropped(g, i);
            }
            t->need = t->inc_mode ? (uint32_t)NEED_BASE : 0u;
        }
        if (t->need & NEED_BASE) write_base(t);
    }
    if (TRACEC_I_UNLIKELY(t->files_gen != t->gen)) late_files(t, i);
    /* ENDs a run boundary owes are written as soon as the sequence is ready (here), not after a later written
       event: a thread whose next calls are the program's ENDs of those slices (swallowed, phantoms) and then
       nothing would leave them unfinished in the trace.  Not in ONESHOT, where a buffer that filled stays full
       (the attempt would be one more refusal counted): there they wait for a written event, as before. */
    if (TRACEC_I_UNLIKELY(t->nowed != 0) && !slot_oneshot(i)) write_owed(t);
    return t;
}

/* The slot's sequence is ready as it was at its last event: the hint is current (a sequence with a packet to
   write first, `need`, never keeps a current hint). */
static inline TRACEC_I_ALWAYS_INLINE bool seq_current(const te_seq *t) {
    return t->hint == __atomic_load_n(t->verp, __ATOMIC_ACQUIRE);
}

/* The same, inline while nothing changed in the slot since the sequence's last event: one load of the slot. */
static inline TRACEC_I_ALWAYS_INLINE te_seq *seq_ready(te_thread *g, uint32_t i) {
    te_seq *t = SEQ(g, i);
    if (TRACEC_I_LIKELY(t != NULL && seq_current(t))) return t;
    return seq_ready_slow(g, i);
}

/*
 * The sequence of a single-slot mask `m` when it is current (the straight
 * path); NULL otherwise.  A mask has only the slots' bits (the sessions set
 * them, a context registering the category writes 0 or 1): it indexes
 * seq_of as it is.
 */
static inline TRACEC_I_ALWAYS_INLINE te_seq *seq_fast(te_thread *g, uint32_t m) {
    te_seq *t = g->seq_of[m];
    return TRACEC_I_LIKELY(t != NULL && seq_current(t)) ? t : NULL;
}

/* Looks at the thread's name again at its next event (after the session's own packets). */
void tracec_i_te_recheck_name(void) {
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        te_seq *t = SEQ(&te, i);
        if (t != NULL && t->gen != 0) t->hint = UINT64_MAX - 1u;
    }
}

/*
 * The iid of `key` on this sequence; 0 when it is not interned yet, in which
 * case it is added to the names to intern before the event (unless already
 * pending, or the dictionary is full: it is then written inline).
 */
static inline TRACEC_I_ALWAYS_INLINE uint64_t want(te_seq *t, pending *p, size_t *np, const void *key,
                                                   const char *str, uint32_t kind) {
    entry *e = lookup(t, key, kind);
    if (TRACEC_I_LIKELY(e != NULL)) return e->val;
    for (size_t i = 0; i < *np; i++)
        if (p[i].key == key && p[i].kind == kind) return 0;
    if (*np >= MAX_PENDING || t->used + *np >= TABLE_MAX) return 0;
    p[*np] = (pending){key, str, kind, 0};
    ++*np;
    return 0;
}

/* After intern_pending: the iid of a name that was pending (0 if its packet was refused). */
static TRACEC_I_NOINLINE uint64_t iid_of(te_seq *t, const void *key, uint32_t kind) {
    entry *e = lookup(t, key, kind);
    return e != NULL ? e->val : 0;
}

/*
 * Writes the pending names in one durable packet; on success they enter the
 * dictionary.  Not while the sequence is dropping (STREAMING, until a packet
 * lands): the event carries its names inline then, so a full buffer loses
 * one packet per event, not an interning packet beside each.
 */
static TRACEC_I_NOINLINE void intern_pending(te_seq *t, pending *p, size_t np) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_InternedData id;
    if (np == 0 || t->dropped) return;
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_INTERNED_DATA);
    perfetto_protos_TracePacket_set_sequence_flags(&pkt, SEQ_NEEDS);
    perfetto_protos_TracePacket_begin_interned_data(&pkt, &id);
    for (size_t i = 0; i < np; i++) {
        p[i].iid = t->next_iid + i;
        if (p[i].kind == K_NAME) {
            perfetto_protos_EventName en;
            perfetto_protos_InternedData_begin_event_names(&id, &en);
            perfetto_protos_EventName_set_iid(&en, p[i].iid);
            perfetto_protos_EventName_set_cstr_name(&en, p[i].str);
            perfetto_protos_InternedData_end_event_names(&id, &en);
        } else if (p[i].kind == K_CAT) {
            perfetto_protos_EventCategory ec;
            perfetto_protos_InternedData_begin_event_categories(&id, &ec);
            perfetto_protos_EventCategory_set_iid(&ec, p[i].iid);
            perfetto_protos_EventCategory_set_cstr_name(&ec, p[i].str);
            perfetto_protos_InternedData_end_event_categories(&id, &ec);
        } else {
            perfetto_protos_DebugAnnotationName dn;
            perfetto_protos_InternedData_begin_debug_annotation_names(&id, &dn);
            perfetto_protos_DebugAnnotationName_set_iid(&dn, p[i].iid);
            perfetto_protos_DebugAnnotationName_set_cstr_name(&dn, p[i].str);
            perfetto_protos_InternedData_end_debug_annotation_names(&id, &dn);
        }
    }
    perfetto_protos_TracePacket_end_interned_data(&pkt, &id);
    if (!end(t, &w, &pkt)) return;
    t->next_iid += np;
    for (size_t i = 0; i < np; i++) insert(t, p[i].key, p[i].kind, p[i].iid);
}

static TRACEC_I_NOINLINE bool write_track_descriptor(te_seq *t, uint64_t uuid, const char *name, int counter) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor td;
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR);
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, uuid);
    perfetto_protos_TrackDescriptor_set_parent_uuid(&td, tracec_te_process_track_uuid());
    perfetto_protos_TrackDescriptor_set_cstr_name(&td, name);
    if (counter) {
        perfetto_protos_CounterDescriptor cd;
        perfetto_protos_TrackDescriptor_begin_counter(&td, &cd);
        perfetto_protos_TrackDescriptor_end_counter(&td, &cd);
    }
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &td);
    return end(t, &w, &pkt);
}

/* The counter track of `name` (a literal), its descriptor written once per sequence; 0 if it could not be. */
static TRACEC_I_NOINLINE uint64_t counter_track(te_seq *t, const char *name) {
    entry *e = lookup(t, name, K_CTRACK);
    uint64_t uuid;
    if (TRACEC_I_LIKELY(e != NULL)) return e->val;
    uuid = counter_uuid(name);
    if (t->used >= TABLE_MAX || !write_track_descriptor(t, uuid, name, 1)) return 0;
    insert(t, name, K_CTRACK, uuid);
    return uuid;
}

static inline TRACEC_I_ALWAYS_INLINE void put_packet_header(te_seq *t, perfetto_protos_TracePacket *pkt,
                                                             uint64_t ts) {
    if (TRACEC_I_LIKELY(t->inc_ok && ts >= t->inc_last)) {
        perfetto_protos_TracePacket_set_timestamp(pkt, ts - t->inc_last);
        t->inc_pend = ts;
    } else { /* absolute, on the session's clock (the defaults name the incremental one when inc_mode) */
        perfetto_protos_TracePacket_set_timestamp(pkt, ts);
        if (t->clock_id != 6u || t->inc_mode) perfetto_protos_TracePacket_set_timestamp_clock_id(pkt, t->clock_id);
    }
    perfetto_protos_TracePacket_set_sequence_flags(pkt, SEQ_NEEDS);
}

/* The value of a leaf annotation. */
static inline TRACEC_I_ALWAYS_INLINE void put_value(perfetto_protos_DebugAnnotation *da, const tracec_te_arg *a) {
    switch (a->kind) {
    case TRACEC_I_TE_ARG_INT: perfetto_protos_DebugAnnotation_set_int_value(da, a->v.i); break;
    case TRACEC_I_TE_ARG_UINT: perfetto_protos_DebugAnnotation_set_uint_value(da, a->v.u); break;
    case TRACEC_I_TE_ARG_DOUBLE: perfetto_protos_DebugAnnotation_set_double_value(da, a->v.d); break;
    case TRACEC_I_TE_ARG_BOOL: perfetto_protos_DebugAnnotation_set_bool_value(da, a->v.u != 0); break;
    case TRACEC_I_TE_ARG_STRING: perfetto_protos_DebugAnnotation_set_cstr_string_value(da, a->v.s); break;
    case TRACEC_I_TE_ARG_POINTER: perfetto_protos_DebugAnnotation_set_pointer_value(da, a->v.u); break;
    default: perfetto_protos_DebugAnnotation_set_cstr_legacy_json_value(da, a->v.s); break;
    }
}

/* Open debug annotations: [0] is a TrackEvent.debug_annotations entry, each next one nested in the previous. */
typedef struct nest {
    perfetto_protos_DebugAnnotation da[MAX_DEPTH + 1];
    uint8_t array[MAX_DEPTH + 1]; /* da[i] is an array (its children have no names) */
    int depth;                    /* open dicts and arrays */
} nest;

/* Opens an annotation for part `a` at the current depth and writes its name. */
static inline TRACEC_I_ALWAYS_INLINE perfetto_protos_DebugAnnotation *open_annotation(perfetto_protos_TrackEvent *ev, nest *n,
                                                        const tracec_te_arg *a, uint64_t name_iid) {
    perfetto_protos_DebugAnnotation *da = &n->da[n->depth];
    if (n->depth == 0) {
        perfetto_protos_TrackEvent_begin_debug_annotations(ev, da);
        if (TRACEC_I_LIKELY(name_iid != 0))
            perfetto_protos_DebugAnnotation_set_name_iid(da, name_iid);
        else
            perfetto_protos_DebugAnnotation_set_cstr_name(da, a->name);
    } else if (n->array[n->depth - 1]) {
        perfetto_protos_DebugAnnotation_begin_array_values(&n->da[n->depth - 1], da);
    } else {
        perfetto_protos_DebugAnnotation_begin_dict_entries(&n->da[n->depth - 1], da);
        perfetto_protos_DebugAnnotation_set_cstr_name(da, a->name);
    }
    return da;
}

/* Closes the annotation at the current depth (the generated end_* all close a nested message). */
static inline TRACEC_I_ALWAYS_INLINE void close_annotation(perfetto_protos_TrackEvent *ev, nest *n) {
    if (n->depth == 0)
        perfetto_protos_TrackEvent_end_debug_annotations(ev, &n->da[0]);
    else
        tracec_msg_end_nested(&n->da[n->depth - 1].msg, &n->da[n->depth].msg);
}

/* ---- events ------------------------------------------------------------------- */

/* The slice kind of an event on the thread's own track (0: an instant, a counter, or another track). */
static TRACEC_I_NOINLINE uint32_t own_slice_kind(const tracec_te_arg *a, size_t n) {
    uint32_t kind = 0;
    for (size_t i = 0; i < n && i < 64u; i++) {
        if (a[i].kind == TRACEC_I_TE_TRACK) return 0;
        if ((a[i].kind == TRACEC_I_TE_SLICE_BEGIN || a[i].kind == TRACEC_I_TE_SLICE_END) && kind == 0) kind = a[i].kind;
    }
    return kind;
}

/* An event the layer drops (misuse): counted; its slice level is kept so the ENDs still match. */
static TRACEC_I_NOINLINE void drop_event(te_seq *t, const tracec_te_arg *a, size_t n) {
    uint32_t kind = own_slice_kind(a, n);
    te.misuse++;
    slot_lost(t->slot);
    if (kind == TRACEC_I_TE_SLICE_BEGIN)
        nest_push(t, false);
    else if (kind == TRACEC_I_TE_SLICE_END)
        (void)nest_pop(t);
}

/* The thread's sequence in slot `i` when it is bound to the slot's session (NULL otherwise). */
static te_seq *seq_bound(te_thread *g, uint32_t i) {
    te_seq *t = SEQ(g, i);
    return t != NULL && t->gen != 0 && t->gen == __atomic_load_n(&tracec_i_te_slots[i].gen, __ATOMIC_ACQUIRE) ? t : NULL;
}

/* The same for an event meant for the slots of `mask`: one misuse, a loss and the level kept in each. */
static TRACEC_I_NOINLINE void drop_event_all(te_thread *g, uint32_t mask, const tracec_te_arg *a, size_t n) {
    uint32_t kind = own_slice_kind(a, n);
    g->misuse++;
    lost_add(mask);
    for (; mask != 0; mask &= mask - 1u) {
        te_seq *t = seq_bound(g, (uint32_t)__builtin_ctz(mask));
        if (t == NULL) continue;
        if (kind == TRACEC_I_TE_SLICE_BEGIN)
            nest_push(t, false);
        else if (kind == TRACEC_I_TE_SLICE_END)
            (void)nest_pop(t);
    }
}

/*
 * Writes the ENDs the thread owes the trace (lost, or of slices open when a
 * run stopped), oldest first, each with its own, earlier timestamp, so the
 * reader, which sorts by time, closes the slices where they ended.  Called
 * after a written event (a full ONESHOT buffer is not asked again and
 * again) and before a BEGIN on the thread's track.  Stops at the first one
 * the buffer refuses.
 */
static TRACEC_I_NOINLINE void write_owed(te_seq *t) {
    while (t->nowed != 0) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        perfetto_protos_TrackEvent ev;
        begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_EVENT);
        put_packet_header(t, &pkt, t->owed[0].ts);
        perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
        perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_SLICE_END);
        perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
        if (!end(t, &w, &pkt)) return;
        if (t->owed[0].ts > t->last_ts) t->last_ts = t->owed[0].ts;
        if (--t->owed[0].n == 0) {
            t->nowed--;
            memmove(&t->owed[0], &t->owed[1], t->nowed * sizeof t->owed[0]);
        }
    }
}

/*
 * Before a BEGIN on the thread's track: the owed ENDs are written first.
 * False when the buffer refused one: the BEGIN is then not written (its
 * level not written), since an END written after it would close it instead
 * of the slice the END is owed to.  The refused attempt is already counted
 * (by the buffer, or as CLOSED by end()) and stands for the lost BEGIN: the
 * END itself stays owed, so each lost event counts once.
 */
static inline TRACEC_I_ALWAYS_INLINE bool owed_written(te_seq *t) {
    if (TRACEC_I_LIKELY(t->nowed == 0)) return true;
    write_owed(t);
    if (t->nowed == 0) return true;
    nest_push(t, false);
    return false;
}

/*
 * An instant or a BEGIN on the thread's track inside a slice whose BEGIN is
 * not in the trace: it would land one level shallower than the program put
 * it, so it is not written either (false), and it is counted lost; a BEGIN
 * is a level not written, so its END is not written either.  Levels from 64
 * up count as written (true).
 */
static TRACEC_I_NOINLINE __attribute__((cold)) bool lost_around(te_seq *t, bool begin) {
    if (t->nlive > 64u) return true;
    slot_lost(t->slot);
    if (begin) nest_push(t, false);
    return false;
}

enum { REFUSED_BITS = 1 + TRACEC_TE_MAX_SESSIONS, REFUSED_MAX = 12, REFUSED_COUNT = 60 };

/* A slice level refused at the guard (TRACEC_I_TE_SLICE_BEGIN or _END; anything else is not queued), meant for the slots of `mask`. */
static TRACEC_I_NOINLINE void refused_push(te_thread *g, uint32_t kind, uint32_t mask) {
    uint64_t old = __atomic_load_n(&g->refused, __ATOMIC_RELAXED), nw;
    if (kind != TRACEC_I_TE_SLICE_BEGIN && kind != TRACEC_I_TE_SLICE_END) return;
    do {
        uint64_t n = old >> REFUSED_COUNT;
        if (n == REFUSED_MAX) return; /* more than a handler's worth of unbalanced levels: not tracked */
        uint64_t e = (uint64_t)(kind == TRACEC_I_TE_SLICE_BEGIN) | ((uint64_t)(mask & ((1u << TRACEC_TE_MAX_SESSIONS) - 1u)) << 1);
        nw = ((n + 1u) << REFUSED_COUNT) | (old & ((1ull << REFUSED_COUNT) - 1u)) | (e << (n * REFUSED_BITS));
    } while (!__atomic_compare_exchange_n(&g->refused, &old, nw, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/*
 * With the guard held: the refused events, in order, as lost ones on each
 * slot they were for: a BEGIN is a level not in the trace; an END pops its
 * level and, when that slice is in the trace, is owed (at the sequence's
 * last event's time: a refused event reads no clock).
 */
static TRACEC_I_NOINLINE void refused_apply(te_thread *g) {
    uint64_t q = __atomic_exchange_n(&g->refused, 0, __ATOMIC_RELAXED);
    uint32_t n = (uint32_t)(q >> REFUSED_COUNT);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = (uint32_t)(q >> (i * REFUSED_BITS)) & ((1u << REFUSED_BITS) - 1u);
        for (uint32_t m = e >> 1; m != 0; m &= m - 1u) {
            te_seq *t = seq_bound(g, (uint32_t)__builtin_ctz(m));
            if (t == NULL) continue;
            if (e & 1u)
                nest_push(t, false);
            else if (nest_pop(t))
                owe(t, t->last_ts, 1);
        }
    }
}

/* Every typed packet the thread has open is given up (refused and counted by the buffer). */
static TRACEC_I_NOINLINE void typed_abandon_all(te_thread *g) {
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        te_seq *t = SEQ(g, i);
        if (t == NULL || !t->in_event) continue;
        tracec_buffer_writer_release(&t->bw);
        t->inc_pend = t->inc_last;
        t->in_event = 0;
        t->gen = 0;
        t->hint = UINT64_MAX;
    }
}

/* Whether a typed packet the thread has open belongs to a session that has ended (a block left with break). */
static TRACEC_I_NOINLINE bool typed_stale(te_thread *g) {
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        te_seq *t = SEQ(g, i);
        if (t != NULL && t->in_event && t->gen != __atomic_load_n(&tracec_i_te_slots[i].gen, __ATOMIC_ACQUIRE))
            return true;
    }
    return false;
}

/*
 * The guard of every entry point: false (the event is dropped and counted
 * in the slots of `mask`) when the thread is already inside the layer or
 * the buffer runtime, which only a signal handler can make happen (or an
 * event inside a typed block: misuse).  A typed block left with
 * break/return in an earlier session does not hold the guard any more.
 */
static TRACEC_I_NOINLINE bool guard_enter_slow(te_thread *g, uint32_t bit, uint32_t mask) {
    if ((g->guard | tracec_i_tls_locks) == 0) { /* only refused levels to apply */
        g->guard = bit;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        refused_apply(g);
        return true;
    }
    if (g->guard == GUARD_TYPED && tracec_i_tls_locks == 0 && typed_stale(g)) {
        g->guard = 0;
        typed_abandon_all(g);
    } else {
        if (g->guard & GUARD_TYPED) g->misuse++;
        lost_add(mask);
        return false;
    }
    g->guard = bit;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (TRACEC_I_UNLIKELY(g->refused != 0)) refused_apply(g);
    return true;
}

static inline TRACEC_I_ALWAYS_INLINE bool guard_enter(te_thread *g, uint32_t bit, uint32_t mask) {
    if (TRACEC_I_UNLIKELY(g->guard | tracec_i_tls_locks | g->refused)) return guard_enter_slow(g, bit, mask);
    g->guard = bit;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return true;
}

static inline TRACEC_I_ALWAYS_INLINE void guard_leave(te_thread *g, uint32_t bit) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    g->guard &= ~bit;
}

static TRACEC_I_NOINLINE void emit_any(te_seq *t, tracec_te_category *cat, const tracec_te_arg *a, size_t n,
                                       uint64_t ts_in);

#define TAG_(msg, field, wt) TRACEC_TAG(perfetto_protos_##msg##_##field##_field_number, TRACEC_WIRE_##wt)

/*
 * The packet header of an event (sequence id, timestamp as put_packet_header,
 * sequence flags), unchecked: room is reserved.  After begin_raw.
 */
static inline TRACEC_I_ALWAYS_INLINE uint8_t *put_header_raw(te_seq *t, uint8_t *p, uint64_t ts) {
    p = tracec_put_varint32(tracec_put_tag(p, TAG_(TracePacket, trusted_packet_sequence_id, VARINT)), t->seq);
    p = tracec_put_tag(p, TAG_(TracePacket, timestamp, VARINT));
    if (TRACEC_I_LIKELY(t->inc_ok && ts >= t->inc_last)) {
        p = tracec_put_varint64(p, ts - t->inc_last);
        t->inc_pend = ts;
    } else {
        p = tracec_put_varint64(p, ts);
        if (t->clock_id != 6u || t->inc_mode)
            p = tracec_put_varint32(tracec_put_tag(p, TAG_(TracePacket, timestamp_clock_id, VARINT)), t->clock_id);
    }
    p = tracec_put_tag(p, TAG_(TracePacket, sequence_flags, VARINT));
    *p++ = SEQ_NEEDS;
    return p;
}

/*
 * The common event, written in one pass with one room check: a slice BEGIN
 * or END or an instant on the thread's track, at most FAST_ARGS scalar
 * annotations and a timestamp, every name already interned.  Anything else
 * (a name to intern, strings, dicts, flows, tracks, counters, misuse) is
 * left to emit_any: false, with nothing done but binding the thread.  The
 * packet is the one emit_any would write.
 */
enum { HEADER_MAX = 26, FAST_ARGS = 3, FAST_MAX = 128 }; /* header 6 + 20, TrackEvent 2 + 2 + 11 + 11, each annotation 2 + 11 + 11 */

static inline TRACEC_I_ALWAYS_INLINE bool emit_fast(te_seq *t, tracec_te_category *cat, const tracec_te_arg *a,
                                                    size_t n, uint64_t ts_in) {
    const tracec_te_arg *type = NULL;
    uint64_t iid[FAST_ARGS + 2], cat_iid = 0, ts = 0;
    uint32_t kind = 0;
    int have_ts = 0;
    entry *named = NULL;
    if (TRACEC_I_UNLIKELY(n > FAST_ARGS + 2u)) return false;
    for (size_t i = 0; i < n; i++) {
        entry *e;
        switch (a[i].kind) {
        case TRACEC_I_TE_SLICE_BEGIN:
        case TRACEC_I_TE_INSTANT:
            if (type != NULL || (e = lookup(t, a[i].name, K_NAME)) == NULL) return false;
            iid[i] = e->val;
            type = &a[i];
            named = e;
            break;
        case TRACEC_I_TE_SLICE_END:
            if (type != NULL) return false;
            type = &a[i];
            break;
        case TRACEC_I_TE_TIMESTAMP:
            if (have_ts) return false;
            ts = a[i].v.u, have_ts = 1;
            break;
        case TRACEC_I_TE_ARG_INT:
        case TRACEC_I_TE_ARG_UINT:
        case TRACEC_I_TE_ARG_DOUBLE:
        case TRACEC_I_TE_ARG_BOOL:
        case TRACEC_I_TE_ARG_POINTER:
            if ((e = lookup(t, a[i].name, K_DBG)) == NULL) return false;
            iid[i] = e->val;
            break;
        default: return false;
        }
    }
    if (type == NULL || n - (size_t)have_ts > FAST_ARGS + 1u) return false;
    kind = type->kind;
    if (kind != TRACEC_I_TE_SLICE_END) {
        if ((cat_iid = cat_iid_with(t, named, cat)) == 0) return false;
        if (TRACEC_I_UNLIKELY(t->unwritten & 1u)) return false; /* inside a lost slice: emit_any() decides */
    } else if (!nest_pop(t)) {
        return true; /* its BEGIN is not in the trace, or the runtime ended the slice at a boundary */
    }
    if (kind == TRACEC_I_TE_SLICE_BEGIN && !owed_written(t)) return true;
    if (!have_ts) ts = ts_in != 0 ? ts_in : now_ns(t);
    t->last_ts = ts;

    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    begin_raw(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_EVENT);
    if (TRACEC_I_LIKELY(tracec_writer_reserve(&w, FAST_MAX))) { /* false: the packet failed at its begin */
        uint8_t *p = put_header_raw(t, w.ptr, ts), *ev_len, *da_len;
        p = tracec_put_tag(p, TAG_(TracePacket, track_event, LEN));
        ev_len = p++;
        p = tracec_put_tag(p, TAG_(TrackEvent, type, VARINT));
        *p++ = (uint8_t)(kind == TRACEC_I_TE_SLICE_BEGIN ? perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN
                         : kind == TRACEC_I_TE_SLICE_END ? perfetto_protos_TrackEvent_TYPE_SLICE_END
                                                         : perfetto_protos_TrackEvent_TYPE_INSTANT);
        if (kind != TRACEC_I_TE_SLICE_END) {
            p = tracec_put_varint64(tracec_put_tag(p, TAG_(TrackEvent, category_iids, VARINT)), cat_iid);
            p = tracec_put_varint64(tracec_put_tag(p, TAG_(TrackEvent, name_iid, VARINT)), iid[type - a]);
        }
        for (size_t i = 0; i < n; i++) {
            const tracec_te_arg *x = &a[i];
            if (x == type || x->kind == TRACEC_I_TE_TIMESTAMP) continue;
            p = tracec_put_tag(p, TAG_(TrackEvent, debug_annotations, LEN));
            da_len = p++;
            p = tracec_put_varint64(tracec_put_tag(p, TAG_(DebugAnnotation, name_iid, VARINT)), iid[i]);
            switch (x->kind) {
            case TRACEC_I_TE_ARG_INT:
                p = tracec_put_varint64(tracec_put_tag(p, TAG_(DebugAnnotation, int_value, VARINT)), (uint64_t)x->v.i);
                break;
            case TRACEC_I_TE_ARG_UINT:
                p = tracec_put_varint64(tracec_put_tag(p, TAG_(DebugAnnotation, uint_value, VARINT)), x->v.u);
                break;
            case TRACEC_I_TE_ARG_DOUBLE:
                p = tracec_put_fixed64(tracec_put_tag(p, TAG_(DebugAnnotation, double_value, FIXED64)),
                                       tracec_double_bits(x->v.d));
                break;
            case TRACEC_I_TE_ARG_BOOL:
                p = tracec_put_tag(p, TAG_(DebugAnnotation, bool_value, VARINT));
                *p++ = x->v.u != 0;
                break;
            default:
                p = tracec_put_varint64(tracec_put_tag(p, TAG_(DebugAnnotation, pointer_value, VARINT)), x->v.u);
                break;
            }
            *da_len = (uint8_t)(p - da_len - 1);
        }
        *ev_len = (uint8_t)(p - ev_len - 1);
        w.ptr = p;
    }
    bool ok = end(t, &w, &pkt);
    if (kind == TRACEC_I_TE_SLICE_BEGIN)
        nest_push(t, ok);
    else if (kind == TRACEC_I_TE_SLICE_END && TRACEC_I_UNLIKELY(!ok))
        owe(t, ts, 1); /* the slice is open in the trace: ended after the thread's next written event */
    if (TRACEC_I_UNLIKELY(t->nowed != 0) && ok) write_owed(t);
    return true;
}

/* Whether emit_any writes the event (exactly one type, at most MAX_ARGS parts, dicts and arrays that match). */
static TRACEC_I_NOINLINE bool event_ok(const tracec_te_arg *a, size_t n, int dyn) {
    int types = 0, depth = 0;
    if (n > MAX_ARGS) return false;
    for (size_t i = 0; i < n; i++) {
        switch (a[i].kind) {
        case TRACEC_I_TE_SLICE_BEGIN:
        case TRACEC_I_TE_INSTANT:
            if (dyn && a[i].v.u != 0 && a[i].name == NULL) return false; /* a NULL run-time name: misuse */
            /* fall through */
        case TRACEC_I_TE_SLICE_END:
        case TRACEC_I_TE_COUNTER_INT:
        case TRACEC_I_TE_COUNTER_DOUBLE:
            if (types++ != 0) return false;
            break;
        case TRACEC_I_TE_TIMESTAMP:
        case TRACEC_I_TE_TRACK:
        case TRACEC_I_TE_DYNAMIC_NAME:
        case TRACEC_I_TE_FLOW:
        case TRACEC_I_TE_TERMINATING_FLOW: break;
        case TRACEC_I_TE_ARG_END:
            if (depth-- == 0) return false;
            break;
        default:
            if ((a[i].kind == TRACEC_I_TE_ARG_DICT || a[i].kind == TRACEC_I_TE_ARG_ARRAY) && ++depth > MAX_DEPTH)
                return false;
            break;
        }
    }
    return types == 1;
}

/* A fresh sequence (seq_ready_multi) cannot take `ts`: its last event, or the ENDs its boundary owes (the
   latest group is the last), are later.  Else it takes the event's one timestamp, as the other slots did: a
   thread's first event in two sessions has the same time in both, its setup in each notwithstanding. */
static inline TRACEC_I_ALWAYS_INLINE bool ts_behind(const te_seq *t, uint64_t ts) {
    return ts < t->last_ts || (t->nowed != 0 && ts < t->owed[t->nowed - 1u].ts);
}

/*
 * One reading of each clock per event written to several slots: slots on
 * one clock get one timestamp.  Indexed by the clockid_t (REALTIME 0,
 * MONOTONIC 1, BOOTTIME 7: the low 3 bits tell them apart).
 */
typedef struct ts_cache {
    uint32_t have; /* bit c: ts[c] read */
    uint64_t ts[8];
} ts_cache;

static inline TRACEC_I_ALWAYS_INLINE uint64_t ts_for(ts_cache *c, const te_seq *t, bool fresh) {
    uint32_t k = (uint32_t)t->clk & 7u;
    if ((c->have & (1u << k)) && (!fresh || !ts_behind(t, c->ts[k]))) return c->ts[k];
    c->have |= 1u << k;
    return c->ts[k] = now_ns(t);
}

/*
 * Slot `i`'s sequence for an event written to several slots, ready; *fresh
 * when it took the slow path: it may have just taken a run boundary whose
 * ENDs are owed at the stop's time, later than a timestamp read for an
 * earlier slot, so its event reads the clock again (ts_for).
 */
static inline TRACEC_I_ALWAYS_INLINE te_seq *seq_ready_multi(te_thread *g, uint32_t i, bool *fresh) {
    te_seq *t = SEQ(g, i);
    *fresh = false;
    if (TRACEC_I_LIKELY(t != NULL && seq_current(t))) return t;
    *fresh = true;
    return seq_ready_slow(g, i);
}

/*
 * An event whose type is a _DYN one (v.u 1), on sequence `t`: its name is
 * replaced by the sequence's copy of it (the dictionary then interns it
 * like a literal), or, with no room, written inline
 * (TRACEC_I_TE_DYNAMIC_NAME).  The event is valid (event_ok).
 */
static TRACEC_I_NOINLINE void emit_dyn_on(te_seq *t, tracec_te_category *cat, const tracec_te_arg *a, size_t n,
                                          uint64_t ts) {
    static const char no_name[] = "";
    tracec_te_arg c[MAX_ARGS + 1];
    size_t m = n;
    memcpy(c, a, n * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        if ((c[i].kind != TRACEC_I_TE_SLICE_BEGIN && c[i].kind != TRACEC_I_TE_INSTANT) || c[i].v.u == 0) continue;
        c[i].v.u = 0;
        const char *key = dyn_key(t, c[i].name);
        if (key == NULL) { /* no room: the name is written inline */
            c[m].kind = TRACEC_I_TE_DYNAMIC_NAME;
            c[m].name = NULL;
            c[m++].v.s = c[i].name;
            key = no_name;
        }
        c[i].name = key;
        break; /* one type per event: c holds n + 1 parts at most */
    }
    if (!emit_fast(t, cat, c, m, ts)) emit_any(t, cat, c, m, ts);
}

/*
 * An event for several slots (or none: a session stopped since the macro
 * looked): checked once (emit_fast takes only valid events; event_ok looks
 * at the others), then written to each slot's sequence, the slots on one
 * clock at one timestamp.
 */
static inline TRACEC_I_ALWAYS_INLINE void emit_multi_on(te_thread *g, tracec_te_category *cat, const tracec_te_arg *a,
                                                        size_t n, uint32_t mask, int dyn) {
    ts_cache tc;
    int checked = 0;
    if (mask == 0) return;
    if (dyn && !event_ok(a, n, dyn)) {
        drop_event_all(g, mask, a, n);
        return;
    }
    tc.have = 0;
    for (uint32_t m = mask; m != 0; m &= m - 1u) {
        bool fresh;
        te_seq *t = seq_ready_multi(g, (uint32_t)__builtin_ctz(m), &fresh);
        if (t == NULL) continue;
        uint64_t ts = ts_for(&tc, t, fresh);
        if (dyn) {
            emit_dyn_on(t, cat, a, n, ts);
        } else if (!emit_fast(t, cat, a, n, ts)) {
            if (!checked) { /* no slot took it yet when it is not valid: one misuse, dropped in every slot */
                if (!event_ok(a, n, 0)) {
                    drop_event_all(g, m, a, n);
                    break;
                }
                checked = 1;
            }
            emit_any(t, cat, a, n, ts);
        }
    }
    if (TRACEC_I_UNLIKELY(g->slow_drop)) drop_nest(g, own_slice_kind(a, n));
}

/* External, as the entry points are: flatten inlines the buffer's packet functions whole here too. */
void tracec_i_te_emit_multi(void *g, tracec_te_category *cat, const tracec_te_arg *a, size_t n, uint32_t mask);
TRACEC_I_NOINLINE HOT_ENTRY void tracec_i_te_emit_multi(void *g, tracec_te_category *cat, const tracec_te_arg *a,
                                                        size_t n, uint32_t mask) {
    emit_multi_on((te_thread *)g, cat, a, n, mask, 0);
}

static TRACEC_I_NOINLINE void emit_multi_dyn(te_thread *g, tracec_te_category *cat, const tracec_te_arg *a, size_t n,
                                             uint32_t mask) {
    emit_multi_on(g, cat, a, n, mask, 1);
}

/* The slots whose session enables `cat` now. */
static inline TRACEC_I_ALWAYS_INLINE uint32_t cat_mask(const tracec_te_category *cat) {
    return __atomic_load_n(&cat->c.enabled, __ATOMIC_RELAXED);
}

static inline TRACEC_I_ALWAYS_INLINE bool one_slot(uint32_t m) { return m != 0 && (m & (m - 1u)) == 0; }

/*
 * An event whose mask is not one current sequence's: the sequence of a
 * single slot made ready (returned: the caller writes the event), or the
 * event written to several slots (tracec_i_te_emit_multi; NULL), or nothing (NULL).
 */
static TRACEC_I_NOINLINE te_seq *entry_slow(te_thread *g, tracec_te_category *cat, const tracec_te_arg *a, size_t n,
                                            uint32_t m, int dyn) {
    te_seq *t;
    if (!one_slot(m)) {
        if (dyn)
            emit_multi_dyn(g, cat, a, n, m);
        else
            tracec_i_te_emit_multi(g, cat, a, n, m);
        return NULL;
    }
    if ((t = seq_ready_slow(g, (uint32_t)__builtin_ctz(m))) == NULL && g->slow_drop) drop_nest(g, own_slice_kind(a, n));
    return t;
}

static inline TRACEC_I_ALWAYS_INLINE void emit_entry(tracec_te_category *cat, const tracec_te_arg *a, size_t n) {
    te_thread *g = &te;
    te_seq *t;
    uint32_t m = cat_mask(cat);
    if (!guard_enter(g, GUARD_EVENT, m)) {
        refused_push(g, own_slice_kind(a, n), m);
        return;
    }
    /* one session, current: the straight path */
    if (TRACEC_I_UNLIKELY((t = seq_fast(g, m)) == NULL)) {
        if (one_slot(m)) {
            t = entry_slow(g, cat, a, n, m, 0);
        } else {
            emit_multi_on(g, cat, a, n, m, 0);
            t = NULL;
        }
    }
    if (t != NULL && !emit_fast(t, cat, a, n, 0)) emit_any(t, cat, a, n, 0);
    guard_leave(g, GUARD_EVENT);
}

HOT_ENTRY void tracec_i_te_emit(tracec_te_category *cat, const tracec_te_arg *a, size_t n) {
    emit_entry(cat, a, n);
}

static TRACEC_I_NOINLINE te_seq *plain_slow(te_thread *g, tracec_te_category *cat, uint32_t kind, const char *name,
                                            uint32_t m) {
    const tracec_te_arg a[1] = {{kind, name, {0}}};
    return entry_slow(g, cat, a, 1, m, 0);
}

/* The shorthands without parts: the same event, its one part known here (the compiler folds the part walk). */
static inline TRACEC_I_ALWAYS_INLINE void emit_plain(tracec_te_category *cat, uint32_t kind, const char *name) {
    te_thread *g = &te;
    te_seq *t;
    uint32_t m = cat_mask(cat);
    if (!guard_enter(g, GUARD_EVENT, m)) {
        refused_push(g, kind, m);
        return;
    }
    if (TRACEC_I_UNLIKELY((t = seq_fast(g, m)) == NULL)) t = plain_slow(g, cat, kind, name, m);
    if (t != NULL) {
        const tracec_te_arg a[1] = {{kind, name, {0}}};
        if (!emit_fast(t, cat, a, 1, 0)) emit_any(t, cat, a, 1, 0);
    }
    guard_leave(g, GUARD_EVENT);
}

HOT_ENTRY void tracec_i_te_slice_begin(tracec_te_category *cat, const char *name) {
    emit_plain(cat, TRACEC_I_TE_SLICE_BEGIN, name);
}

HOT_ENTRY void tracec_i_te_slice_end(tracec_te_category *cat) {
    emit_plain(cat, TRACEC_I_TE_SLICE_END, NULL);
}

HOT_ENTRY void tracec_i_te_instant(tracec_te_category *cat, const char *name) {
    emit_plain(cat, TRACEC_I_TE_INSTANT, name);
}

/* An event whose type is a _DYN one: the name is interned by content on each slot's sequence (emit_dyn_on). */
void tracec_i_te_emit_dyn(tracec_te_category *cat, const tracec_te_arg *a, size_t n) {
    te_thread *g = &te;
    te_seq *t;
    uint32_t m = cat_mask(cat);
    if (!guard_enter(g, GUARD_EVENT, m)) {
        refused_push(g, own_slice_kind(a, n), m);
        return;
    }
    if ((t = seq_fast(g, m)) == NULL) t = entry_slow(g, cat, a, n, m, 1);
    if (t != NULL) {
        if (event_ok(a, n, 1))
            emit_dyn_on(t, cat, a, n, 0);
        else
            drop_event(t, a, n);
    }
    guard_leave(g, GUARD_EVENT);
}

static TRACEC_I_NOINLINE void emit_any(te_seq *t, tracec_te_category *cat, const tracec_te_arg *a, size_t n,
                                       uint64_t ts_in) {
    pending p[MAX_PENDING];
    uint64_t iid[MAX_ARGS]; /* per part: its name's iid, 0 when written inline */
    size_t np = 0;
    const tracec_te_arg *type = NULL;
    const char *dyn = NULL;
    uint64_t ts = 0, track = 0, cat_iid = 0;
    int have_ts = 0, have_track = 0, named, depth = 0;
    /* While the sequence is dropping, its dictionary holds no name and takes none (intern_pending): every name
       is written inline, so none is looked up. */
    const bool inline_names = t->dropped != 0;
    if (TRACEC_I_UNLIKELY(n > MAX_ARGS)) {
        drop_event(t, a, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        iid[i] = 0;
        switch (a[i].kind) {
        case TRACEC_I_TE_SLICE_BEGIN:
        case TRACEC_I_TE_INSTANT:
            if (!inline_names) iid[i] = want(t, p, &np, a[i].name, a[i].name, K_NAME);
            /* fall through */
        case TRACEC_I_TE_SLICE_END:
        case TRACEC_I_TE_COUNTER_INT:
        case TRACEC_I_TE_COUNTER_DOUBLE:
            if (type != NULL) {
                drop_event(t, a, n); /* two types in one event */
                return;
            }
            type = &a[i];
            break;
        case TRACEC_I_TE_TIMESTAMP: ts = a[i].v.u, have_ts = 1; break;
        case TRACEC_I_TE_TRACK: track = a[i].v.u, have_track = 1; break;
        case TRACEC_I_TE_DYNAMIC_NAME: dyn = a[i].v.s; break;
        case TRACEC_I_TE_FLOW:
        case TRACEC_I_TE_TERMINATING_FLOW: break;
        case TRACEC_I_TE_ARG_END:
            if (depth-- == 0) {
                drop_event(t, a, n); /* an END without its DICT or ARRAY */
                return;
            }
            break;
        default: /* an annotation: only top-level keys are interned */
            if (depth == 0 && !inline_names) iid[i] = want(t, p, &np, a[i].name, a[i].name, K_DBG);
            if (a[i].kind == TRACEC_I_TE_ARG_DICT || a[i].kind == TRACEC_I_TE_ARG_ARRAY) {
                if (++depth > MAX_DEPTH) {
                    drop_event(t, a, n);
                    return;
                }
            }
            break;
        }
    }
    if (type == NULL) {
        drop_event(t, a, n);
        return;
    }
    if (type->kind == TRACEC_I_TE_SLICE_END && !have_track && !nest_pop(t))
        return; /* its BEGIN is not in the trace, or the runtime ended the slice at a boundary */
    if (TRACEC_I_UNLIKELY(t->unwritten & 1u) && !have_track &&
        (type->kind == TRACEC_I_TE_SLICE_BEGIN || type->kind == TRACEC_I_TE_INSTANT) &&
        !lost_around(t, type->kind == TRACEC_I_TE_SLICE_BEGIN))
        return; /* the slice around it is not in the trace */
    if (type->kind == TRACEC_I_TE_SLICE_BEGIN && !have_track && !owed_written(t)) return;
    named = type->kind == TRACEC_I_TE_SLICE_BEGIN || type->kind == TRACEC_I_TE_INSTANT;
    if (named && !inline_names) cat_iid = want(t, p, &np, cat, cat->c.name, K_CAT);
    if (!have_track) {
        if (type->kind == TRACEC_I_TE_COUNTER_INT || type->kind == TRACEC_I_TE_COUNTER_DOUBLE) {
            track = counter_track(t, type->name);
            if (track == 0) return; /* its descriptor was refused: the value would have no track */
        } else {
            track = 0; /* the thread's track: the sequence's default */
        }
    }
    if (TRACEC_I_UNLIKELY(np != 0)) {
        intern_pending(t, p, np);
        for (size_t i = 0; i < n; i++) /* all of them: a lost packet forgets the names looked up before */
            if (a[i].name != NULL)
                iid[i] = iid_of(t, a[i].name, &a[i] == type ? (uint32_t)K_NAME : (uint32_t)K_DBG);
        if (named) cat_iid = iid_of(t, cat, K_CAT);
    }
    if (!have_ts) ts = ts_in != 0 ? ts_in : now_ns(t);
    t->last_ts = ts;

    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_EVENT);
    /* A packet the buffer refused at its start (a STREAMING buffer dropping, while the sequence writes every name
       inline): nothing is built into its empty window, and end() counts it as any refused packet. */
    if (TRACEC_I_UNLIKELY(w.status != TRACEC_STATUS_SUCCESS)) goto ended;
    put_packet_header(t, &pkt, ts);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    switch (type->kind) {
    case TRACEC_I_TE_SLICE_BEGIN: perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN); break;
    case TRACEC_I_TE_SLICE_END: perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_SLICE_END); break;
    case TRACEC_I_TE_INSTANT: perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT); break;
    default: perfetto_protos_TrackEvent_set_type(&ev, perfetto_protos_TrackEvent_TYPE_COUNTER); break;
    }
    if (track != 0) perfetto_protos_TrackEvent_set_track_uuid(&ev, track);
    if (named) {
        if (cat_iid != 0)
            perfetto_protos_TrackEvent_set_category_iids(&ev, cat_iid);
        else
            perfetto_protos_TrackEvent_set_cstr_categories(&ev, cat->c.name);
        if (dyn != NULL)
            perfetto_protos_TrackEvent_set_cstr_name(&ev, dyn);
        else if (iid[type - a] != 0)
            perfetto_protos_TrackEvent_set_name_iid(&ev, iid[type - a]);
        else
            perfetto_protos_TrackEvent_set_cstr_name(&ev, type->name);
    } else if (type->kind == TRACEC_I_TE_COUNTER_INT) {
        perfetto_protos_TrackEvent_set_counter_value(&ev, type->v.i);
    } else if (type->kind == TRACEC_I_TE_COUNTER_DOUBLE) {
        perfetto_protos_TrackEvent_set_double_counter_value(&ev, type->v.d);
    }
    nest ns;
    ns.depth = 0;
    for (size_t i = 0; i < n; i++) {
        switch (a[i].kind) {
        case TRACEC_I_TE_ARG_STRING:
        case TRACEC_I_TE_ARG_JSON:
            if (a[i].v.s == NULL) break; /* no value: the annotation is left out (documented) */
            /* fall through */
        case TRACEC_I_TE_ARG_INT:
        case TRACEC_I_TE_ARG_UINT:
        case TRACEC_I_TE_ARG_DOUBLE:
        case TRACEC_I_TE_ARG_BOOL:
        case TRACEC_I_TE_ARG_POINTER:
            put_value(open_annotation(&ev, &ns, &a[i], iid[i]), &a[i]);
            close_annotation(&ev, &ns);
            break;
        case TRACEC_I_TE_ARG_DICT:
        case TRACEC_I_TE_ARG_ARRAY:
            (void)open_annotation(&ev, &ns, &a[i], iid[i]);
            ns.array[ns.depth++] = a[i].kind == TRACEC_I_TE_ARG_ARRAY;
            break;
        case TRACEC_I_TE_ARG_END:
            ns.depth--;
            close_annotation(&ev, &ns);
            break;
        case TRACEC_I_TE_FLOW: perfetto_protos_TrackEvent_set_flow_ids(&ev, a[i].v.u); break;
        case TRACEC_I_TE_TERMINATING_FLOW: perfetto_protos_TrackEvent_set_terminating_flow_ids(&ev, a[i].v.u); break;
        default: break;
        }
    }
    while (ns.depth > 0) { /* dicts and arrays left open by the caller are closed */
        ns.depth--;
        close_annotation(&ev, &ns);
    }
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
ended:;
    bool ok = end(t, &w, &pkt);
    if (!have_track) {
        if (type->kind == TRACEC_I_TE_SLICE_BEGIN) {
            nest_push(t, ok);
        } else if (type->kind == TRACEC_I_TE_SLICE_END && TRACEC_I_UNLIKELY(!ok)) {
            owe(t, ts, 1); /* the slice is open in the trace: ended after the thread's next written event */
        }
    }
    if (TRACEC_I_UNLIKELY(t->nowed != 0) && ok) write_owed(t);
}

void tracec_i_te_thread_abandon(int slot) {
    te_thread *g = &te;
    te_seq *t = SEQ(g, slot);
    if (t == NULL || !t->in_event) return;
    typed_abandon_all(g); /* the open packets are refused and counted */
    g->guard &= ~(uint32_t)GUARD_TYPED;
}

/*
 * ENDs owed (an END the buffer refused, written after the thread's next
 * written event) that no later event will write: at the thread's exit,
 * and for the calling thread at its session's stop.  Not from inside the
 * layer (a thread that exits from a handler or a typed block).
 */
static void owed_at_exit(te_thread *g) {
    if (g->guard != 0 || tracec_i_tls_locks != 0) return;
    g->guard = GUARD_EVENT;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        te_seq *t = SEQ(g, i);
        if (t == NULL || t->nowed == 0 || slot_oneshot(i)) continue;
        if ((t = seq_ready(g, i)) != NULL && t->nowed != 0) write_owed(t);
    }
    g->slow_drop = 0;
    guard_leave(g, GUARD_EVENT);
}

void tracec_i_te_thread_owed(int slot) {
    te_thread *g = &te;
    te_seq *t = SEQ(g, slot);
    /* current: bound to this session (a start bumps the slot's version), in its run */
    if (t != NULL && t->nowed != 0 && !slot_oneshot((uint32_t)slot) && seq_current(t)) write_owed(t);
}

int tracec_i_te_session_enter(void) {
    te_thread *g = &te;
    if (g->guard != 0) return 0; /* inside a typed block (or a handler that interrupted the layer) */
    g->guard = GUARD_SESSION;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return 1;
}

void tracec_i_te_session_leave(int entered) {
    if (entered) guard_leave(&te, GUARD_SESSION);
}

/* ---- the typed form ------------------------------------------------------------- */

enum { OPEN_LITERAL, OPEN_DYN, OPEN_END };

/* A named typed event's type, category and name, checked: names written inline, or a failed writer. */
static TRACEC_I_NOINLINE void fill_named_slow(tracec_te_packet *p, perfetto_protos_TrackEvent *ev,
                                              const tracec_te_category *cat, const char *name) {
    perfetto_protos_TrackEvent_set_type(ev, (perfetto_protos_TrackEvent_Type)p->i_type);
    if (TRACEC_I_LIKELY(p->i_cat_iid != 0))
        perfetto_protos_TrackEvent_set_category_iids(ev, p->i_cat_iid);
    else
        perfetto_protos_TrackEvent_set_cstr_categories(ev, cat->c.name);
    if (TRACEC_I_LIKELY(p->i_name_iid != 0))
        perfetto_protos_TrackEvent_set_name_iid(ev, p->i_name_iid);
    else
        perfetto_protos_TrackEvent_set_cstr_name(ev, name);
}

/* A typed event's name and category iids when they are not both interned yet (or the name is dynamic). */
static TRACEC_I_NOINLINE void open_names(te_seq *t, tracec_te_packet *p, tracec_te_category *cat, const char *name,
                                         int variant) {
    pending pend[2];
    size_t np = 0;
    const char *key;
    if (variant == OPEN_LITERAL) {
        p->i_name_iid = want(t, pend, &np, name, name, K_NAME);
        p->i_cat_iid = want(t, pend, &np, cat, cat->c.name, K_CAT);
        if (TRACEC_I_UNLIKELY(np != 0)) {
            intern_pending(t, pend, np);
            p->i_name_iid = iid_of(t, name, K_NAME);
            p->i_cat_iid = iid_of(t, cat, K_CAT);
        }
    } else { /* the thread's copy is the name's key; no room: written inline */
        key = dyn_key(t, name);
        p->i_name_iid = key != NULL ? want(t, pend, &np, key, key, K_NAME) : 0;
        p->i_cat_iid = want(t, pend, &np, cat, cat->c.name, K_CAT);
        if (TRACEC_I_UNLIKELY(np != 0)) {
            intern_pending(t, pend, np);
            p->i_name_iid = key != NULL ? iid_of(t, key, K_NAME) : 0;
            p->i_cat_iid = iid_of(t, cat, K_CAT);
        }
    }
}

/*
 * Whether a typed event is written on sequence `t` (the nesting rules: an
 * END whose BEGIN is not in the trace is not, nor an instant or BEGIN inside
 * such a slice, nor a BEGIN that cannot follow the owed ENDs).
 */
static inline TRACEC_I_ALWAYS_INLINE bool open_check(te_seq *t, uint32_t type, int variant) {
    if (variant == OPEN_END && !nest_pop(t)) return false; /* an END whose BEGIN is not in the trace: as emit */
    if (TRACEC_I_UNLIKELY(t->unwritten & 1u) &&
        (type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN ||
         type == (uint32_t)perfetto_protos_TrackEvent_TYPE_INSTANT) &&
        !lost_around(t, type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN))
        return false; /* the slice around it is not in the trace */
    if (type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN && !owed_written(t)) return false;
    return true;
}

/*
 * *out = m, the typed event's TrackEvent, in one 16-byte store where the
 * target has one.  The block's wrapper is a copy of it (TRACEC_I_EVENT_AS),
 * read back as soon as the open returns, in one 16-byte load with GCC; a
 * load is forwarded only from a store that covers it whole, and one that
 * spans the open's narrower stores waits for them to retire (measured: 10-15
 * ns per typed event on an AMD EPYC).
 */
static inline TRACEC_I_ALWAYS_INLINE void put_msg(tracec_msg *out, tracec_msg m) {
#if defined(__x86_64__) && defined(__SSE2__)
    typedef long long v2 __attribute__((vector_size(16)));
    _Static_assert(sizeof(tracec_msg) == 16 && offsetof(tracec_msg, size_off) == 8 && offsetof(tracec_msg, parent) == 12,
                   "tracec_msg: a pointer and two 32-bit fields");
    v2 v = {(long long)(uintptr_t)m.w, (long long)((uint64_t)m.size_off | (uint64_t)m.parent << 32)};
    memcpy(out, &v, sizeof v);
#else
    *out = m;
#endif
}

/*
 * Opens the typed event's packet on `t` through `w` and `pkt`, its header
 * and TrackEvent (in *ev_out) with the type, category and name written.
 * `p` holds the iids (and i_type); `ts` 0: now.
 */
static inline TRACEC_I_ALWAYS_INLINE bool names_on(te_seq *t, tracec_te_packet *p, tracec_te_category *cat,
                                                   const char *name, int variant) {
    entry *e;
    if (variant == OPEN_LITERAL && TRACEC_I_LIKELY((e = lookup(t, name, K_NAME)) != NULL) &&
        (p->i_cat_iid = cat_iid_with(t, e, cat)) != 0) {
        p->i_name_iid = e->val;
        return true;
    }
    if (variant != OPEN_END) {
        open_names(t, p, cat, name, variant);
    } else { /* an END has neither name nor category */
        p->i_name_iid = 0;
        p->i_cat_iid = 0;
    }
    return false;
}

/* The packet of open_on, its names known (names_on; `interned`: both iids from the straight lookup). */
static inline TRACEC_I_ALWAYS_INLINE void packet_on(te_seq *t, tracec_te_packet *p, tracec_writer *w,
                                                    perfetto_protos_TracePacket *pkt, tracec_msg *ev_out,
                                                    tracec_te_category *cat, const char *name, uint32_t type,
                                                    int variant, uint64_t ts, bool interned) {
    bool room;
    begin_raw(t, w, pkt, TRACEC_BUFFER_TRACING_TRACK_EVENT);
    t->last_ts = ts != 0 ? ts : now_ns(t);
    /* room for the header, the TrackEvent's tag and length and the named event's fields; false: the begin failed */
    room = tracec_writer_reserve(w, HEADER_MAX + TRACEC_MAX_TAG_SIZE + TRACEC_NESTED_SIZE_BYTES + 24u);
    if (TRACEC_I_LIKELY(room)) w->ptr = put_header_raw(t, w->ptr, t->last_ts);
    p->i_type = type;
    tracec_msg m; /* the TrackEvent the block writes into (put_msg) */
    tracec_msg_begin_nested(&pkt->msg, TAG_(TracePacket, track_event, LEN), &m);
    if (TRACEC_I_LIKELY(interned && room)) { /* its type, category and name; unchecked: reserved above */
        uint8_t *q = tracec_put_tag(w->ptr, TAG_(TrackEvent, type, VARINT));
        *q++ = (uint8_t)type;
        q = tracec_put_varint64(tracec_put_tag(q, TAG_(TrackEvent, category_iids, VARINT)), p->i_cat_iid);
        w->ptr = tracec_put_varint64(tracec_put_tag(q, TAG_(TrackEvent, name_iid, VARINT)), p->i_name_iid);
    } else {
        perfetto_protos_TrackEvent ev;
        ev.msg = m;
        if (variant == OPEN_END)
            perfetto_protos_TrackEvent_set_type(&ev, (perfetto_protos_TrackEvent_Type)type);
        else
            fill_named_slow(p, &ev, cat, name);
        m = ev.msg;
    }
    put_msg(ev_out, m);
    t->in_event = 1;
}

static inline TRACEC_I_ALWAYS_INLINE void open_on(te_seq *t, tracec_te_packet *p, tracec_writer *w,
                                                  perfetto_protos_TracePacket *pkt, tracec_msg *ev_out,
                                                  tracec_te_category *cat, const char *name, uint32_t type,
                                                  int variant, uint64_t ts) {
    bool interned = names_on(t, p, cat, name, variant);
    packet_on(t, p, w, pkt, ev_out, cat, name, type, variant, ts, interned);
}

/* The thread's scratch holds `n` bytes (grown, mmap'd); false: no memory. */
static TRACEC_I_NOINLINE bool scratch_room(te_thread *g, size_t n) {
    if (n <= g->scratch_cap) return true;
    size_t cap = g->scratch_cap != 0 ? g->scratch_cap : (size_t)16 << 10;
    while (cap < n) cap *= 2u;
    void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    if (g->scratch != NULL) {
        memcpy(m, g->scratch, g->scratch_used);
        munmap(g->scratch, g->scratch_cap);
    }
    g->scratch = (uint8_t *)m;
    g->scratch_cap = cap;
    return true;
}

/*
 * A typed event for several slots (or none): the first slot that takes it
 * runs the block in `p`; every other one gets its own packet, header and
 * TrackEvent (its iids, clock and sequence), written at the close after
 * the first one's with a copy of the bytes the block wrote (close_multi).
 * Nothing is begun on a slot while another slot's packet is open: a
 * LOSSLESS buffer's begin that would wait for a delivery while the thread
 * holds a packet of any buffer is refused (WOULD_DEADLOCK), which lost the
 * event there.  So every slot's checks, names (an interning packet) and
 * timestamp come first, then the first slot's packet.
 */
static TRACEC_I_NOINLINE int open_multi(te_thread *g, tracec_te_packet *p, tracec_te_category *cat, const char *name,
                                        uint32_t type, int variant, uint32_t mask, uint32_t kind) {
    te_seq *first = NULL;
    uint32_t more = 0;
    ts_cache tc;
    if (variant == OPEN_DYN && name == NULL && mask != 0) { /* a NULL name: dropped as misuse */
        const tracec_te_arg a[1] = {{kind, NULL, {0}}};
        drop_event_all(g, mask, a, 1);
        return 0;
    }
    uint64_t first_ts = 0;
    bool first_interned = false;
    tc.have = 0;
    g->scratch_used = 0;
    for (uint32_t m = mask; m != 0; m &= m - 1u) {
        uint32_t i = (uint32_t)__builtin_ctz(m);
        bool fresh;
        te_seq *t = seq_ready_multi(g, i, &fresh);
        if (t == NULL || !open_check(t, type, variant)) continue;
        uint64_t ts = ts_for(&tc, t, fresh);
        if (first == NULL) {
            first_interned = names_on(t, p, cat, name, variant);
            first_ts = ts;
            first = t;
            continue;
        }
        tracec_te_packet q;
        (void)names_on(t, &q, cat, name, variant);
        t->more_ts = ts;
        t->more_cat_iid = q.i_cat_iid;
        t->more_name_iid = q.i_name_iid;
        t->more_name = name;
        if (variant == OPEN_DYN && q.i_name_iid == 0) { /* written inline: the name as it is now */
            size_t len = strlen(name) + 1u;
            if (scratch_room(g, g->scratch_used + len)) {
                memcpy(g->scratch + g->scratch_used, name, len);
                t->more_name = NULL;
                t->more_name_off = g->scratch_used;
                g->scratch_used += len;
            } else {
                t->more_name = ""; /* no memory: an event without its name beats none */
            }
        }
        more |= 1u << i;
    }
    if (TRACEC_I_UNLIKELY(g->slow_drop)) drop_nest(g, kind);
    if (first == NULL) return 0;
    g->more_cat = cat;
    g->more_variant = variant;
    packet_on(first, p, &p->w, &p->pkt, &p->i_ev, cat, name, type, variant, first_ts, first_interned);
    /* the first sequence, tagged (bit 0) when other slots wait for the block's bytes */
    p->i_thread = (void *)((uintptr_t)first | (more != 0));
    p->i_more = more;
    p->i_fill = (uint32_t)(p->w.ptr - p->w.base); /* where the block's bytes start */
    return 1;
}

/* The slice kind of a typed event (a part's kind: TRACEC_I_TE_SLICE_BEGIN, _END or 0). */
static inline TRACEC_I_ALWAYS_INLINE uint32_t typed_kind(uint32_t type, int variant) {
    return variant == OPEN_END                                                ? TRACEC_I_TE_SLICE_END
           : type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN ? TRACEC_I_TE_SLICE_BEGIN
                                                                            : 0u;
}

static inline TRACEC_I_ALWAYS_INLINE int open_event(tracec_te_packet *p, tracec_te_category *cat, const char *name,
                                                    uint32_t type, int variant) {
    te_thread *g = &te;
    te_seq *t;
    uint32_t m = cat_mask(cat);
    if (!guard_enter(g, GUARD_TYPED, m)) {
        refused_push(g, typed_kind(type, variant), m);
        return 0;
    }
    if (TRACEC_I_UNLIKELY((t = seq_fast(g, m)) == NULL)) {
        if (!one_slot(m)) {
            if (open_multi(g, p, cat, name, type, variant, m, typed_kind(type, variant))) return 1;
            guard_leave(g, GUARD_TYPED);
            return 0;
        }
        t = seq_ready_slow(g, (uint32_t)__builtin_ctz(m));
        if (t == NULL && g->slow_drop) drop_nest(g, typed_kind(type, variant));
    }
    if (variant == OPEN_DYN && t != NULL && name == NULL) { /* a NULL name: dropped as misuse */
        g->misuse++;
        slot_lost(t->slot);
        if (type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) nest_push(t, false);
        t = NULL;
    }
    if (t == NULL || !open_check(t, type, variant)) {
        guard_leave(g, GUARD_TYPED);
        return 0;
    }
    open_on(t, p, &p->w, &p->pkt, &p->i_ev, cat, name, type, variant, 0);
    p->i_thread = t;
    return 1;
}

HOT_ENTRY int tracec_i_te_open(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type) {
    return open_event(p, cat, name, type, OPEN_LITERAL);
}

HOT_ENTRY int tracec_i_te_open_dyn(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type) {
    return open_event(p, cat, name, type, OPEN_DYN);
}

HOT_ENTRY int tracec_i_te_open_end(tracec_te_packet *p, tracec_te_category *cat, const char *name, uint32_t type) {
    (void)name;
    return open_event(p, cat, NULL, type, OPEN_END);
}

/* After a typed packet's end on `t`: the nesting, and the ENDs owed. */
static inline TRACEC_I_ALWAYS_INLINE void closed_on(te_seq *t, uint32_t type, bool ok) {
    if (type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN)
        nest_push(t, ok);
    else if (!ok && type == (uint32_t)perfetto_protos_TrackEvent_TYPE_SLICE_END)
        owe(t, t->last_ts, 1); /* as emit: the slice is open in the trace, ended after the next written event */
    if (TRACEC_I_UNLIKELY(t->nowed != 0) && ok) write_owed(t);
    t->in_event = 0;
}

/*
 * A typed event for several slots (open_multi): the bytes the block wrote
 * into the first slot's TrackEvent (after its type, category and name: from
 * i_fill to the TrackEvent's end, its length read back, a varint that may
 * have widened) are copied to the thread's scratch; the first slot's packet
 * ends; then each other slot's packet is written with a copy of them.
 */
static TRACEC_I_NOINLINE void close_multi(te_thread *g, te_seq *first, tracec_te_packet *p) {
    const uint8_t *body = NULL;
    size_t len = 0;
    tracec_status_t failed = p->w.status != TRACEC_STATUS_SUCCESS ? p->w.status : TRACEC_STATUS_NESTING_MISMATCH;
    if (p->w.status == TRACEC_STATUS_SUCCESS && p->i_ev.size_off < TRACEC_I_FAILED) {
        const uint8_t *q = p->w.base + p->i_ev.size_off;
        uint64_t total = 0;
        for (unsigned sh = 0; sh < 64u; sh += 7u) {
            uint8_t b = *q++;
            total |= (uint64_t)(b & 0x7fu) << sh;
            if (!(b & 0x80u)) break;
        }
        size_t fill = p->i_fill - (p->i_ev.size_off + TRACEC_NESTED_SIZE_BYTES);
        if (total >= fill) {
            if (scratch_room(g, g->scratch_used + (size_t)(total - fill))) {
                len = (size_t)(total - fill);
                memcpy(g->scratch + g->scratch_used, q + fill, len);
                body = g->scratch + g->scratch_used;
            } else {
                failed = TRACEC_STATUS_OUT_OF_MEMORY; /* the other slots lose the event, counted */
            }
        }
    }
    closed_on(first, p->i_type, end(first, &p->w, &p->pkt)); /* no packet open from here on */
    for (uint32_t m = p->i_more; m != 0; m &= m - 1u) {
        te_seq *t = SEQ(g, __builtin_ctz(m));
        tracec_te_packet q;
        q.i_type = p->i_type;
        q.i_cat_iid = t->more_cat_iid;
        q.i_name_iid = t->more_name_iid;
        const char *name = t->more_name != NULL ? t->more_name : (const char *)g->scratch + t->more_name_off;
        packet_on(t, &q, &t->tw, &t->tpkt, &t->tev, g->more_cat, name, p->i_type, g->more_variant, t->more_ts,
                  g->more_variant == OPEN_LITERAL && q.i_cat_iid != 0 && q.i_name_iid != 0);
        if (body == NULL)
            tracec_writer_fail(&t->tw, failed);
        else if (len != 0 && tracec_writer_reserve(&t->tw, len)) {
            memcpy(t->tw.ptr, body, len);
            t->tw.ptr += len;
        }
        tracec_msg_end_nested(&t->tpkt.msg, &t->tev);
        closed_on(t, p->i_type, end(t, &t->tw, &t->tpkt));
    }
}

HOT_ENTRY void tracec_i_te_close(tracec_te_packet *p) {
    te_thread *g = &te;
    te_seq *t = (te_seq *)p->i_thread;
    if (TRACEC_I_UNLIKELY((uintptr_t)t & 1u)) /* other slots: written after the first (close_multi) */
        close_multi(g, (te_seq *)((uintptr_t)t & ~(uintptr_t)1u), p);
    else
        closed_on(t, p->i_type, end(t, &p->w, &p->pkt));
    guard_leave(g, GUARD_TYPED);
}

/* ---- tracks and the session's packets ----------------------------------------- */

typedef struct track_def {
    uint64_t uuid;
    char *name;
    int counter;
} track_def;

static pthread_mutex_t tracks_mu = PTHREAD_MUTEX_INITIALIZER;
static track_def track_defs[MAX_TRACKS];
static size_t ntracks;

tracec_status_t tracec_te_define_track(uint64_t uuid, const char *name, int counter) {
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    te_seq *t;
    size_t k;
    counter = counter != 0;
    if (uuid == 0 || name == NULL || uuid == tracec_te_process_track_uuid()) return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&tracks_mu);
    for (k = 0; k < ntracks && track_defs[k].uuid != uuid; k++) {
    }
    if (k < ntracks) { /* defined before: the same track again is a no-op (its descriptor is in every session) */
        st = strcmp(track_defs[k].name, name) == 0 && track_defs[k].counter == counter ? TRACEC_STATUS_SUCCESS
                                                                                      : TRACEC_STATUS_INVALID_ARGUMENT;
        pthread_mutex_unlock(&tracks_mu);
        return st;
    }
    if (ntracks >= MAX_TRACKS) {
        st = TRACEC_STATUS_LIMIT_EXCEEDED;
    } else if ((track_defs[ntracks].name = strdup(name)) == NULL) {
        st = TRACEC_STATUS_OUT_OF_MEMORY;
    } else {
        track_defs[ntracks].uuid = uuid;
        track_defs[ntracks].counter = counter;
        ntracks++;
    }
    pthread_mutex_unlock(&tracks_mu);
    if (st == TRACEC_STATUS_SUCCESS && tracec_i_tls_locks == 0) {
        int entered = tracec_i_te_session_enter();
        for (uint32_t i = 0; entered && i < TRACEC_TE_MAX_SESSIONS; i++)
            if ((t = seq_ready(&te, i)) != NULL) (void)write_track_descriptor(t, uuid, name, counter);
        te.slow_drop = 0; /* paused: the descriptor is a lost packet (counted), not a slice event */
        tracec_i_te_session_leave(entered);
    }
    return st;
}

/* The runtime's own schema is known to every reader: only the application's files are embedded. */
static bool is_own_schema(const tracec_file_descriptor *d) {
    return strncmp(d->file_name, "perfetto/", 9) == 0 || strncmp(d->file_name, "google/protobuf/", 16) == 0;
}

size_t tracec_i_te_descriptor_bytes(void) {
    size_t n = 0;
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d))
        if (!is_own_schema(d)) n += d->set_size + 64u; /* the packet around the set */
    return n;
}

static tracec_status_t write_process_track(te_seq *t, const char *process_name) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor td;
    perfetto_protos_ProcessDescriptor pd;
    char comm[64] = "";
    if (process_name == NULL) {
        FILE *f = fopen("/proc/self/comm", "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL) comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        process_name = comm;
    }
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR);
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, tracec_te_process_track_uuid());
    perfetto_protos_TrackDescriptor_begin_process(&td, &pd);
    perfetto_protos_ProcessDescriptor_set_pid(&pd, (int32_t)getpid());
    if (process_name[0]) perfetto_protos_ProcessDescriptor_set_cstr_process_name(&pd, process_name);
    perfetto_protos_TrackDescriptor_end_process(&td, &pd);
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &td);
    return end(t, &w, &pkt) ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_BUFFER_FULL;
}

void tracec_i_te_put_clock_snapshot(struct perfetto_protos_TracePacket *pkt, uint32_t primary_clock) {
    static const struct {
        uint32_t id;
        clockid_t clk;
    } clocks[] = {{6, CLOCK_BOOTTIME}, {3, CLOCK_MONOTONIC}, {1, CLOCK_REALTIME}};
    perfetto_protos_ClockSnapshot cs;
    perfetto_protos_TracePacket_begin_clock_snapshot(pkt, &cs);
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        perfetto_protos_ClockSnapshot_Clock c;
        struct timespec ts;
        clock_gettime(clocks[i].clk, &ts);
        perfetto_protos_ClockSnapshot_begin_clocks(&cs, &c);
        perfetto_protos_ClockSnapshot_Clock_set_clock_id(&c, clocks[i].id);
        perfetto_protos_ClockSnapshot_Clock_set_timestamp(&c, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
        perfetto_protos_ClockSnapshot_end_clocks(&cs, &c);
    }
    perfetto_protos_ClockSnapshot_set_primary_trace_clock(&cs, (perfetto_protos_BuiltinClock)primary_clock);
    perfetto_protos_TracePacket_end_clock_snapshot(pkt, &cs);
}

static tracec_status_t write_clock_snapshot(te_seq *t) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR); /* durable: clocks outlive a wrap */
    tracec_i_te_put_clock_snapshot(&pkt, t->clock_id);
    return end(t, &w, &pkt) ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_BUFFER_FULL;
}

/* Per slot: how many of the application's descriptor files its session packets described. */
static size_t slot_files[TRACEC_TE_MAX_SESSIONS];

static size_t app_file_count(void) {
    size_t n = 0;
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d))
        if (!is_own_schema(d)) n++;
    return n;
}

/* The ExtensionDescriptor packets of the application's files; the first failing status. */
static tracec_status_t write_extension_descriptors(te_seq *t) {
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d)) {
        tracec_writer w;
        perfetto_protos_TracePacket pkt;
        if (is_own_schema(d)) continue;
        begin(t, &w, &pkt, TRACEC_BUFFER_TRACING_EXTENSION_DESCRIPTOR);
        tracec_write_extension_descriptor(&pkt.msg, d);
        if (!end(t, &w, &pkt) && st == TRACEC_STATUS_SUCCESS) st = TRACEC_STATUS_BUFFER_FULL;
    }
    return st;
}

/*
 * A thread's first event in a session: files registered after the
 * session's packets were written (a session started while the program's
 * constructors ran, before some of theirs registered their files) are
 * described now, once per session, before the event that may use them.
 */
static TRACEC_I_NOINLINE void late_files(te_seq *t, uint32_t i) {
    t->files_gen = t->gen;
    size_t n = app_file_count(), old = __atomic_load_n(&slot_files[i], __ATOMIC_RELAXED);
    if (n > old && __atomic_compare_exchange_n(&slot_files[i], &old, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        (void)write_extension_descriptors(t); /* a loss is counted by the buffer */
}

tracec_status_t tracec_i_te_write_session_packets(int slot, int durable, int clocks, const char *process_name) {
    tracec_status_t st = TRACEC_STATUS_SUCCESS, s2;
    /* the files described below: the sequence's first event in the slot (seq_ready) does not add them */
    if (durable) __atomic_store_n(&slot_files[slot], app_file_count(), __ATOMIC_RELAXED);
    te_seq *t = seq_ready(&te, (uint32_t)slot);
    te.slow_drop = 0; /* not an event: nothing nests */
    if (t == NULL) return TRACEC_STATUS_CLOSED;
    if (durable) {
        t->files_gen = t->gen;
        st = write_extension_descriptors(t);
        s2 = write_process_track(t, process_name);
        if (st == TRACEC_STATUS_SUCCESS) st = s2;
        pthread_mutex_lock(&tracks_mu);
        for (size_t i = 0; i < ntracks; i++)
            if (!write_track_descriptor(t, track_defs[i].uuid, track_defs[i].name, track_defs[i].counter) &&
                st == TRACEC_STATUS_SUCCESS)
                st = TRACEC_STATUS_BUFFER_FULL;
        pthread_mutex_unlock(&tracks_mu);
    }
    if (!clocks) return st;
    s2 = write_clock_snapshot(t);
    return st == TRACEC_STATUS_SUCCESS ? s2 : st;
}

/* ---- slots ----------------------------------------------------------------------- */

static uint64_t slot_gens;

void tracec_i_te_slot_bump(int i) { __atomic_fetch_add(&tracec_i_te_ver[i], 1u, __ATOMIC_RELEASE); }

void tracec_i_te_slot_open(int i, uint64_t buf, tracec_buffering_mode_t mode, uint32_t clock_id, int publish) {
    tracec_i_te_slot *s = &tracec_i_te_slots[i];
    /* relaxed: the generation's release publishes them */
    __atomic_store_n(&s->clock_id, clock_id, __ATOMIC_RELAXED);
    __atomic_store_n(&s->clk, tracec_i_te_clockid_of(clock_id), __ATOMIC_RELAXED); /* a checked clock */
    __atomic_store_n(&s->in_order, mode != TRACEC_BUFFERING_MODE_ONESHOT && mode != TRACEC_BUFFERING_MODE_CIRCULAR,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&s->incremental, mode != TRACEC_BUFFERING_MODE_CIRCULAR, __ATOMIC_RELAXED);
    __atomic_store_n(&s->paused, 0u, __ATOMIC_RELAXED);
    /* what the slot lost before this session is counted: published from here (the buffer's release below
       publishes both) */
    __atomic_store_n(&s->published, __atomic_load_n(&s->lost, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&s->publish, publish, __ATOMIC_RELAXED);
    __atomic_store_n(&s->buf, buf, __ATOMIC_RELEASE);
    __atomic_store_n(&s->gen, __atomic_add_fetch(&slot_gens, 1u, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
    tracec_i_te_slot_bump(i);
}

void tracec_i_te_slot_set_categories(int i, tracec_context_id_t ctx, int on) {
    uint32_t bit = 1u << i, old;
    bool changed = false;
    for (tracec_te_category *c = tracec_i_te_all_cats; c != NULL; c = c->i_next) {
        bool en = false;
        if (on && tracec_context_category_enabled(ctx, c->c.name, &en) != TRACEC_STATUS_SUCCESS) en = false;
        if (en)
            old = __atomic_fetch_or(&c->c.enabled, bit, __ATOMIC_RELAXED);
        else
            old = __atomic_fetch_and(&c->c.enabled, ~bit, __ATOMIC_RELAXED);
        changed = changed || ((old & bit) != 0) != en;
    }
    if (changed) __atomic_fetch_add(&tracec_i_te_slots[i].cats, 1u, __ATOMIC_RELEASE);
}

void tracec_i_te_slot_close(int i) {
    __atomic_store_n(&tracec_i_te_slots[i].publish, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&tracec_i_te_slots[i].gen, 0u, __ATOMIC_RELEASE);
    tracec_i_te_slot_bump(i);
}
