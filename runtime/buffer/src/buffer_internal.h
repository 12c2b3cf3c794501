/*
 * buffer_internal.h - the buffer module's one internal header (not
 * installed): the state and the functions its files share, one section a
 * file:
 *
 *   context.c, service.c        contexts, the lifecycle, service routes
 *   lifecycle.c                 flush/stop/start, create/destroy, memory, fork
 *   delivery.c                  delivery passes: callback, handoff
 *   packet_writer.c             the out-of-line writer, chunks, grow()
 *   reserve.c                   blocks, halves, switch/wrap, waits, emit; the memfd header
 *   writers.c                   writer states
 *   fence.c                     the asymmetric fence, small helpers
 *   buffer_thread.c, kinds.c    callback threads; the kind registry
 *   handles.c                   the global lock, handle tables, process hooks
 *
 * The fast path's layout is tracec/abi/buffer_abi.h.
 *
 * Who may touch what:
 *   - half.state / half.published: atomics, any thread.
 *   - half.phase, gen, cursors, pinned, the writer list, flush tickets:
 *     under b->mu.
 *   - A writer's chunk fields (blk, body, body_size, half): written only by
 *     the writer under b->mu, read by the writer without it and by
 *     deliverers under b->mu (half: atomically, also without it).
 *   - Chunk handover (a Dekker pair): the writer sets busy then checks
 *     stolen; a deliverer sets stolen (under mu) then waits for busy == 0.
 *     Either the writer sees stolen and leaves the chunk, or the deliverer
 *     sees busy and waits for the packet to end.  The store-load order on
 *     both sides is either symmetric (seq_cst store on the writer, per
 *     packet) or asymmetric: the writer's store is plain (a compiler fence
 *     only) and the deliverer, after setting stolen, runs
 *     membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), a full barrier on every
 *     running thread of the process.  Asymmetric is used when membarrier
 *     can be registered at the first buffer creation (and
 *     TRACEC_BUFFER_MEMBARRIER is not "0"); a buffer keeps its choice.
 *
 * Memory of one half (docs/buffers.md has the long version):
 *
 *   mem                                                   mem + phys
 *    | blk | payload..pad | blk | chunk body .......... | blk | ...     |
 *    `-16-'                `-16-' rec|payload|rec|.. tail
 *
 *   - A block is a TRACEC_I_BLK_HDR (16) byte header and a body whose
 *     length is a multiple of TRACEC_I_BLK_ALIGN (8).
 *     RECORD block: one record, body = payload rounded up to 8.
 *     CHUNK block: a writer's chunk; body = records (16-byte header each,
 *     payload rounded up to 8) up to `used`, then an unused tail.
 *   - The half's state word is SEALED(bit 63) | blocks(bits 32..62) |
 *     charged bytes (bits 0..31).  A producer reserves a block with one CAS;
 *     its offset is charged + 16 * blocks.  `published` counts blocks whose
 *     header is written; a sealed half is complete when published == blocks.
 *   - A half is unsealed only while it is the active half of a running
 *     buffer, so a successful CAS always lands in the live generation.
 *   - In a memfd, a header page comes first, then the halves and the
 *     durable part (tracec/abi/shm_layout.h); b->hdr points at it.
 */
#ifndef TRACEC_BUFFER_INTERNAL_H
#define TRACEC_BUFFER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/service.h"
#include "tracec/abi/shm_layout.h"
#include "tracec/abi/hints.h" /* last: the branch hints */

#define TRACEC_I_SEALED (1ull << 63)
#define TRACEC_I_CHARGED(s) ((uint32_t)((s) & 0xffffffffull))
#define TRACEC_I_BLOCKS(s) ((uint32_t)(((s) >> 32) & 0x7fffffffull))
#define TRACEC_I_ONE_BLOCK (1ull << 32)
_Static_assert(sizeof(tracec_i_blk) == TRACEC_I_BLK_HDR && TRACEC_I_BLK_HDR % TRACEC_I_BLK_ALIGN == 0,
               "a block header keeps bodies aligned");
#define TRACEC_I_BATCH 1024u
#define TRACEC_I_DEFAULT_RESERVE 256u

/* A half's phase.  HANDED: a STREAMING half given to the reader (handoff), free once it saved it. */
enum { TRACEC_I_FREE = 0, TRACEC_I_ACTIVE, TRACEC_I_FULL, TRACEC_I_WRAPPING, TRACEC_I_HANDED };

typedef struct tracec_i_half {
    _Atomic uint64_t state;
    _Atomic uint32_t published;
    uint8_t *mem;
    /* under the buffer mutex: */
    int phase;
    uint64_t gen;      /* advanced by 2 at each reset (so consecutive gens have distinct chunk tags); the memfd header's */
    uint32_t cur_blk;  /* blocks already delivered (ONESHOT/CIRCULAR) */
    size_t cur_off;    /* their bytes */
    int pinned;        /* a delivery is reading it */
} tracec_i_half;

struct tracec_i_thread;

enum { TRACEC_I_REQ_WATERMARK = 1, TRACEC_I_REQ_FLUSH = 2, TRACEC_I_REQ_FULL = 4 };

/*
 * A buffer.  The struct belongs to its slot of tracec_i_buffers[] and is
 * never freed: a destroyed buffer's struct is reused by a later create
 * (handles.c, "Buffer handles"), so a stale pointer is always safe to read
 * and `live` tells whether it still names the buffer its reader meant.
 */
typedef struct tracec_i_buffer {
    _Atomic uint64_t handle; /* this incarnation's handle (kept after destroy) */
    /* The handle while the buffer is alive; 0 from the moment its destroy
       begins.  Written under mu and dmu (and tracec_i_global_mu). */
    _Atomic uint64_t live;
    /* Calls between tracec_i_buffer_get() and tracec_i_buffer_put(), and
       writer states attached to it (until detached or reaped): while not 0,
       the struct is not reused. */
    _Atomic uint32_t users;
    uint64_t slot_gen; /* incarnations of this slot (under tracec_i_global_mu) */
    uint64_t ctx_handle;
    int mode, policy;
    size_t size, watermark, phys, durable_cap, chunk;
    tracec_buffer_tracing_cb_t callback;
    void *callback_data;
    tracec_buffer_handoff_cb_t handoff; /* non-NULL: handoff delivery (memfd only) */
    void *handoff_data;
    uint32_t max_wait_ms; /* LOSSLESS waits for room: 0 = no cap */
    int asym; /* chunk handover: asymmetric fence (membarrier) instead of a seq_cst store per packet */

    _Atomic int accepting;   /* the context is started and the buffer alive */
    _Atomic int destroyed;
    /* ONESHOT: set (under mu) once a record was refused because the half is
       full, cleared (under mu) when a start empties the half.  While set, a
       record that does not fit is dropped without the mutex (tracec_i_full_drop()),
       counted by its writer state when it has one (tracec_i_dropped()). */
    _Atomic int full;
    _Atomic uint32_t active; /* index of the active half */
    tracec_i_half half[2];

    /* Durable part (ONESHOT, CIRCULAR): bump-only, written under dmu. */
    pthread_mutex_t dmu;
    uint8_t *dmem;
    /* A memfd's mapping that holds the header page, both halves and dmem (NULL: they are process memory),
       and its header (tracec/abi/shm_layout.h; NULL in process memory).  The engine only writes the
       header: nothing read back from the memfd steers it. */
    uint8_t *map;
    size_t map_size;
    tracec_shm_header *hdr;
    uint64_t dgen; /* the durable part's generation (under dmu and mu), advanced by 2 at each clear */
    _Atomic size_t doff; /* committed bytes */
    size_t dcur;         /* delivered (handoff: walked) bytes (deliverer only) */
    uint32_t dcur_blocks; /* handoff: blocks in [0, dcur) (deliverer only) */
    uint8_t *snap;       /* CIRCULAR: the copy a delivery hands out (deliverer only) */
    size_t snap_cap;

    pthread_mutex_t mu; /* slow paths, delivery bookkeeping */
    pthread_cond_t cv;  /* space freed, delivery done, steal done */
    _Atomic uint32_t pending;
    uint64_t flush_req, flush_done;
    int delivering;
    int stealing;
    int parked; /* writers in grow_parked(), under mu: a stop waits until their packets are counted */
    /* Handoff bookkeeping of each region (halves 0, 1; 2 the durable part), under mu: handoffs
       not saved yet, and the gen and extent of the last one (a region is handed again only with
       something new).  `stalled`: a capped wait ran out; writers drop at once until a half is freed. */
    uint32_t owed[3], last_extent[3];
    uint64_t last_gen[3];
    int stalled;
    struct tracec_i_wstate *writers;
    _Atomic(struct tracec_i_thread *) thread;

    _Atomic uint64_t accepted, dropped, overwritten, delivered, deliveries, wm_requests, switches, waits, refused;
    _Atomic uint64_t saves_ignored;
    _Atomic uint64_t epoch;
} tracec_i_buffer;

/* A tracec_buffer_writer's state, tracec_i_wstate, is in tracec/abi/buffer_abi.h
   (the inline begin/end of tracec/buffer.h use it). */

typedef struct tracec_i_thread {
    uint64_t handle;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running; /* the OS thread exists */
    _Atomic int up; /* the OS thread has started running thread_main */
    int stop;
    uint64_t kick;
    tracec_record_header_t hdrs[TRACEC_I_BATCH];
    tracec_record_header_t *ptrs[TRACEC_I_BATCH];
} tracec_i_thread;

/*
 * The runtime's mutexes are taken through these: they count the locks the
 * thread holds in tracec_i_tls_locks (tracec/abi/buffer_abi.h), so a track
 * event from a signal handler never waits for a lock its own thread holds.
 * A count, not a lock: a thread-local increment around a slow path.
 */
static inline void tracec_i_lock(pthread_mutex_t *m) {
    tracec_i_tls_locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(m);
}
static inline bool tracec_i_trylock(pthread_mutex_t *m) {
    tracec_i_tls_locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (pthread_mutex_trylock(m) == 0) return true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tracec_i_tls_locks--;
    return false;
}
static inline void tracec_i_unlock(pthread_mutex_t *m) {
    pthread_mutex_unlock(m);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tracec_i_tls_locks--;
}

/* ---- handles.c --------------------------------------------------------------- */
/* A live context as the files other than context.c see it (under tracec_i_global_mu). */
typedef struct tracec_i_ctx_slot {
    uint64_t handle; /* 0: free slot */
    int started;
} tracec_i_ctx_slot;
extern pthread_mutex_t tracec_i_global_mu;
extern _Atomic(tracec_i_buffer *) tracec_i_buffers[TRACEC_MAX_BUFFERS];
extern _Atomic(tracec_i_thread *) tracec_i_threads[TRACEC_MAX_CALLBACK_THREADS];
extern tracec_i_ctx_slot tracec_i_contexts[TRACEC_MAX_CONTEXTS]; /* context.c writes them */
extern _Atomic int tracec_i_finalized;
/* 1 started, 0 stopped, -1 unknown context.  Caller holds tracec_i_global_mu. */
int tracec_i_context_started(uint64_t ctx_handle);
bool tracec_i_context_exists(uint64_t ctx_handle);

/*
 * Buffer handles: (incarnation << TRACEC_I_SLOT_BITS) | (slot + 1).  A slot's
 * struct is reused once its buffer is destroyed and no call holds it, with
 * the next incarnation, so an old handle never names the new buffer.
 */
#define TRACEC_I_SLOT_BITS 16u
#define TRACEC_I_SLOT_MASK ((1ull << TRACEC_I_SLOT_BITS) - 1u)
_Static_assert(TRACEC_MAX_BUFFERS < (1u << TRACEC_I_SLOT_BITS), "slot numbers fit their bits");

/* Ends a use begun by a successful tracec_i_buffer_get(). */
static inline void tracec_i_buffer_put(tracec_i_buffer *b) {
    atomic_fetch_sub_explicit(&b->users, 1, memory_order_release);
}

/*
 * The live buffer with this handle, held (give it back with
 * tracec_i_buffer_put()), or NULL: unknown, destroyed, or a handle of an
 * earlier buffer of the slot.  Held, the struct is not reused, and its
 * handle stays this one (it may be destroyed meanwhile: `live` becomes 0).
 * The increment and the check of `live` pair with the create that reuses a
 * slot (the check of `users`, then the store of `live`): both seq_cst.
 */
static inline tracec_i_buffer *tracec_i_buffer_get(uint64_t handle) {
    uint64_t slot = handle & TRACEC_I_SLOT_MASK;
    if (slot == 0 || slot > TRACEC_MAX_BUFFERS) return NULL;
    tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[slot - 1], memory_order_acquire);
    if (b == NULL) return NULL;
    atomic_fetch_add_explicit(&b->users, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&b->live, memory_order_seq_cst) != handle) {
        tracec_i_buffer_put(b);
        return NULL;
    }
    return b;
}

/* Registers the process hooks (handles.c) with atexit and pthread_atfork, once. */
void tracec_i_runtime_init(void);
/*
 * What each part does at exit() and around fork(); handles.c calls them:
 * at exit the contexts' hook; before a fork, after taking
 * tracec_i_global_mu, the buffers' then the threads'; after it, in the
 * parent and the child, the contexts' (child only), the threads' then the
 * buffers', then tracec_i_global_mu is released.
 */
void tracec_i_contexts_at_exit(void);        /* context.c */
void tracec_i_contexts_fork_child(void);     /* context.c */
void tracec_i_threads_fork_prepare(void);    /* buffer_thread.c */
void tracec_i_threads_fork_parent(void);
void tracec_i_threads_fork_child(void);
void tracec_i_buffers_fork_prepare(void);    /* lifecycle.c */
void tracec_i_buffers_fork_parent(void);
void tracec_i_buffers_fork_child(void);

/* ---- kinds.c: the registry of buffer tracing kinds -------------------------- */
bool tracec_i_kind_durable(uint32_t kind);
/* True if `kind` is registered; its number of operations in *nops. */
bool tracec_i_kind_ops(uint32_t kind, size_t *nops);

/* ---- buffer_thread.c ----------------------------------------------------- */
extern _Thread_local tracec_i_thread *tracec_i_current_thread;
/* The default thread (started on first use). NULL after finalize. */
tracec_i_thread *tracec_i_default_thread(void);
/* Wakes (starting if needed) the thread that delivers `b`. */
void tracec_i_kick(tracec_i_buffer *b);
/* Tests only: non-zero makes every buffer asked for process memory use a sealed memfd of its own
   (the buffer suites run over both memories; set before the first create). */
extern uint32_t tracec_i_buffer_test_memfd;
/* Starts `t` if it is not running: when a buffer is created or assigned to
   it, so that a kick from a signal handler's event only signals it (starting
   a thread allocates, which a handler must not). */
void tracec_i_thread_start(tracec_i_thread *t);
void tracec_i_threads_stop_all(void);

#define WS(bw) ((bw)->i_ws)

/* make_room / acquire_chunk outcomes besides a status: try again; grow() must give its chunk back and wait. */
enum { TRACEC_I_RETRY = -1, TRACEC_I_PARK = -2 };

/* ---- fence.c ----------------------------------------------------------------- */
/*
 * Test hook: the chunk-handover protocol of buffers created from now on,
 * 1 asymmetric (membarrier; only if it can be registered), 0 the seq_cst
 * fallback.  Returns the protocol in effect.  Call it before creating
 * buffers, from one thread.
 */
int tracec_i_buffer_membarrier(int want);
/* Test hook: how many times grow() gave its chunk back and waited for room (LOSSLESS). */
uint64_t tracec_i_buffer_grow_waits(void);
extern _Atomic uint64_t tracec_i_grow_waits;
extern int tracec_i_membarrier;
extern pthread_once_t tracec_i_membarrier_once;
void tracec_i_heavy_barrier(void);
void tracec_i_membarrier_init(void);
int tracec_i_membarrier_register(void);
void tracec_i_spin_pause(unsigned *n);

/* ---- writers.c --------------------------------------------------------------- */
/* True when the calling thread has a packet open on some writer: it must not wait for a delivery. */
bool tracec_i_thread_has_open_packet(void);
/* Releases the calling thread's writers (exit() from a thread that may have a packet open). */
void tracec_i_release_calling_thread_writers(void);
void tracec_i_abandon_packet(tracec_i_wstate *ws);
extern tracec_i_wstate tracec_i_no_writer;
extern pthread_mutex_t tracec_i_pool_mu;
void tracec_i_reap(tracec_i_buffer *b);
void tracec_i_refuse(tracec_i_buffer *b);
tracec_i_wstate *tracec_i_state_alloc(void);
void tracec_i_state_bind(tracec_i_wstate *ws);
bool tracec_i_state_detach(tracec_i_wstate *ws);
void tracec_i_state_free(tracec_i_wstate *ws);
bool tracec_i_thread_open_packet_blocks(const tracec_i_buffer *b, int h, const tracec_i_wstate *except);

/* ---- reserve.c --------------------------------------------------------------- */
void tracec_i_do_switch(tracec_i_buffer *b, int x);
tracec_status_t tracec_i_drop(tracec_i_buffer *b, tracec_status_t why);
bool tracec_i_full_drop(tracec_i_buffer *b, tracec_i_wstate *ws, uint32_t body, tracec_status_t *st);
uint64_t tracec_i_dropped(tracec_i_buffer *b);
bool tracec_i_is_durable(const tracec_i_buffer *b, uint32_t category, uint32_t kind);
/* `deadline`: the caller's, zeroed before its first call for a record or packet (a capped wait sets it). */
int tracec_i_make_room(tracec_i_buffer *b, int h, uint32_t body, const tracec_i_wstate *ws, bool in_grow,
                       struct timespec *deadline);
void tracec_i_publish(tracec_i_half *hf);
void tracec_i_reset_half(tracec_i_buffer *b, int h, bool unseal);
/* The memfd header (no-ops in process memory): the active half; the counters (under mu). */
void tracec_i_shm_set_active(tracec_i_buffer *b, uint32_t h);
void tracec_i_shm_publish_counters(tracec_i_buffer *b);
/* The shared header's loss counters, under mu (nothing for heap memory). */
void tracec_i_shm_publish_losses(tracec_i_buffer *b);
/* The durable part's salvage hint: its bytes committed so far (under dmu). */
void tracec_i_shm_note_durable(tracec_i_buffer *b, size_t end);
/* The durable packet begun at doff (under dmu): its record header marked open (`open`), or the mark
   cleared, when the part has room for a header there (buffer_abi.h, tracec_i_mark_open). */
void tracec_i_durable_mark(tracec_i_buffer *b, bool open);
/* The durable part is cleared: its generation advances before any byte is rewritten.  Under dmu and mu. */
void tracec_i_reset_durable(tracec_i_buffer *b);
/* Handoff: a region's words in the memfd header: extent, blocks, then handed (release).  Under mu. */
void tracec_i_shm_hand(tracec_i_buffer *b, uint32_t region, uint32_t extent, uint32_t blocks);
/* Handoff: the region's handed word back to FREE (all its handoffs were saved).  Under mu. */
void tracec_i_shm_unhand(tracec_i_buffer *b, uint32_t region);
void tracec_i_steal_half(tracec_i_buffer *b, int h, bool barrier);
tracec_i_blk *tracec_i_try_reserve(tracec_i_buffer *b, tracec_i_half *hf, uint32_t body, uint32_t min_body, uint64_t *old, bool *sealed);
uint64_t tracec_i_wait_published(tracec_i_half *hf);
void tracec_i_wait_writers(const tracec_i_buffer *b, tracec_i_wstate *list, int h, const tracec_i_wstate *self);
void tracec_i_watermark_check(tracec_i_buffer *b, uint64_t before, uint64_t after);

/* ---- delivery.c ------------------------------------------------------------- */
void tracec_i_deliver_pass(tracec_i_buffer *b);

/* ---- lifecycle.c ------------------------------------------------------------ */
void tracec_i_buffer_start(tracec_i_buffer *b, tracec_buffer_disposition_t disposition);
/* Stops accepting and delivers everything (sync unless on a callback thread). */
void tracec_i_buffer_stop(tracec_i_buffer *b);

/* ---- service.c ----------------------------------------------------------- */
void tracec_i_services_forget_context(uint64_t ctx_handle);

#endif /* TRACEC_BUFFER_INTERNAL_H */
