/*
 * lifecycle.c - flush, stop and start; creating, destroying and querying
 * buffers; what a buffer does around fork().
 */
#define _GNU_SOURCE 1 /* F_GET_SEALS */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffer_internal.h"

/* ---- flush, stop, start --------------------------------------------------- */

/* Requests a full delivery; returns the ticket to wait for.  Not under mu. */
static uint64_t flush_request(tracec_i_buffer *b) {
    tracec_i_lock(&b->mu);
    uint64_t ticket = ++b->flush_req;
    tracec_i_unlock(&b->mu);
    atomic_fetch_or_explicit(&b->pending, TRACEC_I_REQ_FLUSH, memory_order_acq_rel);
    tracec_i_kick(b);
    return ticket;
}

static void flush_wait(tracec_i_buffer *b, uint64_t ticket) {
    tracec_i_lock(&b->mu);
    while (b->flush_done < ticket && !atomic_load_explicit(&tracec_i_finalized, memory_order_acquire))
        pthread_cond_wait(&b->cv, &b->mu);
    tracec_i_unlock(&b->mu);
}

tracec_status_t tracec_flush_buffer(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet())
        st = TRACEC_STATUS_WOULD_DEADLOCK;
    else if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire))
        st = TRACEC_STATUS_CLOSED;
    else
        flush_wait(b, flush_request(b));
    tracec_i_buffer_put(b);
    return st;
}

tracec_status_t tracec_buffer_count_lost(tracec_buffer_id_t buffer_id, uint64_t n) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    /* Under mu, as make_room()'s drops: a stop takes mu after it stops accepting, so a loss counted
       here is in the counters the stop's delivery publishes, and one of a stopped buffer is not. */
    tracec_i_lock(&b->mu);
    if (atomic_load_explicit(&b->accepting, memory_order_acquire)) {
        atomic_fetch_add_explicit(&b->refused, n, memory_order_relaxed);
        tracec_i_shm_publish_losses(b);
    } else {
        st = TRACEC_STATUS_CLOSED;
    }
    tracec_i_unlock(&b->mu);
    tracec_i_buffer_put(b);
    return st;
}

tracec_status_t tracec_flush_buffer_async(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire))
        st = TRACEC_STATUS_CLOSED;
    else
        (void)flush_request(b);
    tracec_i_buffer_put(b);
    return st;
}

/*
 * Wakes every writer waiting for room: they find the buffer not accepting
 * (CLOSED).  Waits for those that parked a packet in progress
 * (grow_parked()) to count it lost, so the counters a stop's delivery
 * publishes include every packet of the run.
 */
static void release_waiters(tracec_i_buffer *b) {
    tracec_i_lock(&b->mu);
    pthread_cond_broadcast(&b->cv);
    while (b->parked > 0) pthread_cond_wait(&b->cv, &b->mu);
    tracec_i_unlock(&b->mu);
}

void tracec_i_buffer_stop(tracec_i_buffer *b) {
    atomic_store_explicit(&b->accepting, 0, memory_order_seq_cst);
    release_waiters(b);
    uint64_t ticket = flush_request(b);
    if (tracec_i_current_thread == NULL) flush_wait(b, ticket);
}

void tracec_i_buffer_start(tracec_i_buffer *b, tracec_buffer_disposition_t disposition) {
    tracec_i_lock(&b->dmu);
    tracec_i_lock(&b->mu);
    while (b->delivering || b->stealing) pthread_cond_wait(&b->cv, &b->mu);
    if (atomic_load_explicit(&b->accepting, memory_order_acquire) ||
        atomic_load_explicit(&b->destroyed, memory_order_acquire)) {
        tracec_i_unlock(&b->mu);
        tracec_i_unlock(&b->dmu);
        return;
    }
    tracec_i_steal_half(b, 0, true);
    tracec_i_steal_half(b, 1, true);
    if (disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE) {
        tracec_i_reset_durable(b);
        atomic_store_explicit(&b->doff, 0, memory_order_relaxed);
        b->dcur = 0;
        atomic_fetch_add_explicit(&b->epoch, 1, memory_order_relaxed);
    }
    bool clear = disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE ||
                 disposition == TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE;
    int x = (int)atomic_load_explicit(&b->active, memory_order_relaxed);
    tracec_i_half *X = &b->half[x];
    b->stalled = 0;
    if (b->mode == TRACEC_BUFFERING_MODE_STREAMING) {
        /* Stop delivered and freed both halves, or handed them (handoff): the run starts in a
           free one; if the reader still owes both, the active one is taken back (its gen
           advances first, so a reader that copies it late sees the change). */
        if (X->phase != TRACEC_I_FREE && b->half[1 - x].phase == TRACEC_I_FREE) {
            x = 1 - x;
            X = &b->half[x];
            atomic_store_explicit(&b->active, (uint32_t)x, memory_order_release);
        }
        if (X->phase == TRACEC_I_HANDED) tracec_i_shm_unhand(b, (uint32_t)x);
        X->phase = TRACEC_I_ACTIVE;
        tracec_i_reset_half(b, x, true);
        tracec_i_shm_set_active(b, (uint32_t)x);
    } else if (clear) {
        atomic_store_explicit(&b->full, 0, memory_order_relaxed); /* published by the state's release below */
        for (int i = 0; i < 2; i++) {
            if (b->half[i].mem == NULL) continue;
            b->half[i].phase = TRACEC_I_FREE;
            tracec_i_reset_half(b, i, false);
        }
        atomic_store_explicit(&b->active, 0, memory_order_release);
        tracec_i_shm_set_active(b, 0);
        b->half[0].phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&b->half[0].state, 0, memory_order_release);
    } else {
        uint64_t s = atomic_load_explicit(&X->state, memory_order_relaxed);
        X->phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&X->state, s & ~TRACEC_I_SEALED, memory_order_release);
    }
    atomic_store_explicit(&b->accepting, 1, memory_order_seq_cst);
    tracec_i_unlock(&b->mu);
    tracec_i_unlock(&b->dmu);
}

/* ---- creation, destruction, queries ---------------------------------------- */

/*
 * The buffer mutex guards short sections (a chunk, a switch, delivery
 * bookkeeping): a thread that finds it taken spins a little before it
 * sleeps (glibc's adaptive mutex), since waking a sleeper costs far more
 * than the section it waited for.
 */
static void init_buffer_mutex(pthread_mutex_t *mu) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/*
 * Makes `b` (a fresh struct, or a destroyed one no call holds) the buffer
 * `t` describes: its plain fields and memory come from `t`; everything else
 * starts as a new buffer's.  The mutexes, `users` and `slot_gen` are the
 * slot's and stay.  Atomics are stored, not copied: a stale reader (a
 * writer state of the previous incarnation) may load them meanwhile and
 * then finds `live` different from its handle.  Under
 * tracec_i_global_mu, b->dmu and b->mu; `live` is stored last, by the caller.
 */
static void adopt(tracec_i_buffer *b, const tracec_i_buffer *t, tracec_i_thread *thread, bool started) {
    b->ctx_handle = t->ctx_handle;
    b->mode = t->mode;
    b->policy = t->policy;
    b->size = t->size;
    b->watermark = t->watermark;
    b->phys = t->phys;
    b->durable_cap = t->durable_cap;
    b->chunk = t->chunk;
    b->callback = t->callback;
    b->callback_data = t->callback_data;
    b->handoff = t->handoff;
    b->handoff_data = t->handoff_data;
    b->max_wait_ms = t->max_wait_ms;
    b->stalled = 0;
    b->dcur_blocks = 0;
    b->asym = t->asym;
    atomic_store_explicit(&b->accepting, 0, memory_order_relaxed);
    atomic_store_explicit(&b->destroyed, 0, memory_order_relaxed);
    atomic_store_explicit(&b->full, 0, memory_order_relaxed);
    atomic_store_explicit(&b->active, 0, memory_order_relaxed);
    b->dmem = t->dmem;
    b->map = t->map;
    b->map_size = t->map_size;
    b->hdr = t->hdr;
    for (int i = 0; i < 2; i++) {
        tracec_i_half *hf = &b->half[i];
        hf->mem = t->half[i].mem;
        hf->phase = TRACEC_I_FREE;
        hf->pinned = 0;
        hf->gen = 0;
        tracec_i_reset_half(b, i, false);
    }
    b->dgen = 0;
    tracec_i_reset_durable(b);
    atomic_store_explicit(&b->doff, 0, memory_order_relaxed);
    b->dcur = 0;
    b->snap = NULL;
    b->snap_cap = 0;
    atomic_store_explicit(&b->pending, 0, memory_order_relaxed);
    b->flush_req = b->flush_done = 0;
    b->delivering = 0;
    b->stealing = 0;
    b->writers = NULL; /* empty: a state holds its buffer until it is detached */
    atomic_store_explicit(&b->thread, thread, memory_order_relaxed);
    _Atomic uint64_t *counters[] = {&b->accepted,    &b->dropped,  &b->overwritten, &b->delivered,
                                    &b->deliveries,  &b->wm_requests, &b->switches, &b->waits,
                                    &b->refused,     &b->saves_ignored};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        atomic_store_explicit(counters[i], 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&b->epoch, 1, memory_order_relaxed); /* never an earlier incarnation's */
    if (started) {
        b->half[0].phase = TRACEC_I_ACTIVE;
        atomic_store_explicit(&b->half[0].state, 0, memory_order_relaxed);
        atomic_store_explicit(&b->accepting, 1, memory_order_relaxed);
    }
}

/* A slot's struct, made on its first use and kept for good. */
static tracec_i_buffer *new_slot_struct(void) {
    tracec_i_buffer *b = (tracec_i_buffer *)calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    init_buffer_mutex(&b->mu);
    pthread_mutex_init(&b->dmu, NULL);
    pthread_cond_init(&b->cv, NULL);
    return b;
}

/* A destroyed struct that no call holds (its destroy is over: destroy holds it throughout). */
static bool reusable(tracec_i_buffer *b) {
    return atomic_load_explicit(&b->live, memory_order_seq_cst) == 0 &&
           atomic_load_explicit(&b->users, memory_order_seq_cst) == 0;
}

/* Frees the halves and the durable part (process memory or the memfd's mapping) and forgets them. */
static void free_memory(tracec_i_buffer *t) {
    if (t->map != NULL) {
        munmap(t->map, t->map_size);
    } else {
        free(t->half[0].mem);
        free(t->half[1].mem);
        free(t->dmem);
    }
    t->map = NULL;
    t->map_size = 0;
    t->hdr = NULL;
    t->half[0].mem = t->half[1].mem = NULL;
    t->dmem = NULL;
}

static size_t page_size(void) {
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096u;
}

/* The geometry of a buffer: bytes per half (charged headers included), halves, durable bytes. */
typedef struct geometry {
    size_t size, phys, half_bytes, durable_cap;
    int halves;
} geometry;

static bool geometry_of(int mode, size_t size, size_t durable_size, geometry *g) {
    size_t page = page_size();
    if (mode < TRACEC_BUFFERING_MODE_ONESHOT || mode >= TRACEC_BUFFERING_MODE_LAST || size == 0 ||
        size > TRACEC_MAX_BUFFER_SIZE || durable_size > TRACEC_MAX_BUFFER_SIZE)
        return false;
    g->size = round_up(size, page);
    /* Every block is charged at least 8 bytes, so headers need at most 2x the payload. */
    g->phys = g->size * 3u;
    g->half_bytes = round_up(g->phys, page);
    g->halves = mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1 : 2;
    g->durable_cap = 0;
    if (mode != TRACEC_BUFFERING_MODE_STREAMING) {
        size_t dsz = durable_size ? durable_size : g->size / 16u;
        if (dsz < page) dsz = page;
        g->durable_cap = round_up(dsz, page);
    }
    return true;
}

/* The bytes of a memfd that holds this geometry: the header page, the halves, the durable part. */
static size_t memfd_bytes(const geometry *g) {
    return (size_t)TRACEC_SHM_HEADER_BYTES + (size_t)g->halves * g->half_bytes + g->durable_cap;
}

size_t tracec_buffer_memory_size(tracec_buffering_mode_t mode, size_t size, size_t durable_size) {
    geometry g;
    int m = mode == TRACEC_BUFFERING_MODE_DEFAULT ? TRACEC_BUFFERING_MODE_STREAMING : (int)mode;
    if (!geometry_of(m, size, durable_size, &g)) return 0;
    return memfd_bytes(&g);
}

uint32_t tracec_i_buffer_test_memfd;

static tracec_status_t map_memfd(tracec_i_buffer *t, const geometry *g, int fd);

/* Tests: a memfd of the buffer's own, as a caller makes one (sized, sealed), mapped, then closed. */
static tracec_status_t own_memfd(tracec_i_buffer *t, const geometry *g) {
    size_t need = memfd_bytes(g);
    int fd = memfd_create("tracec-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return TRACEC_STATUS_OUT_OF_MEMORY;
    tracec_status_t st = TRACEC_STATUS_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)need) == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
        st = map_memfd(t, g, fd);
    close(fd);
    return st;
}

/* Places t's halves and durable part: in process memory, or in the caller's memfd (checked, mapped). */
static tracec_status_t place_memory(tracec_i_buffer *t, const geometry *g, const tracec_buffer_config_t *cfg) {
    if (cfg->memory == TRACEC_BUFFER_MEMORY_PROCESS && tracec_i_buffer_test_memfd) return own_memfd(t, g);
    if (cfg->memory == TRACEC_BUFFER_MEMORY_PROCESS) {
        bool ok = true;
        for (int i = 0; i < g->halves; i++) {
            t->half[i].mem = (uint8_t *)aligned_alloc(64, round_up(g->phys, 64));
            ok = ok && t->half[i].mem != NULL;
        }
        if (g->durable_cap) {
            t->dmem = (uint8_t *)aligned_alloc(64, g->durable_cap);
            ok = ok && t->dmem != NULL;
        }
        if (!ok) free_memory(t);
        return ok ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_OUT_OF_MEMORY;
    }
    if (cfg->memory != TRACEC_BUFFER_MEMORY_MEMFD || cfg->memory_fd < 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    return map_memfd(t, g, cfg->memory_fd);
}

/*
 * A memfd buffer (a recorder's session, made once per run): maps the pages
 * a half's first pass writes (its `size` bytes: each is written about once
 * per pass) and the durable part now, so the writers do not take a page
 * fault every 4 KiB of a new buffer (microseconds each in a virtual
 * machine).  Process memory is left to fault in: programs and tests may
 * make many short sessions.  A hint: where the kernel lacks
 * MADV_POPULATE_WRITE (Linux 5.14) the pages fault in as they are written.
 */
static void populate(const tracec_i_buffer *t, const geometry *g) {
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)page_size();
    for (int i = 0; i < g->halves + 1; i++) {
        uint8_t *m = i < g->halves ? t->half[i].mem : t->dmem;
        size_t n = i < g->halves ? g->size : g->durable_cap;
        if (m == NULL || n == 0) continue;
        uintptr_t a = ((uintptr_t)m + page - 1u) & ~(page - 1u), e = ((uintptr_t)m + n) & ~(page - 1u);
        if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
    }
#else
    (void)t, (void)g;
#endif
}

static tracec_status_t map_memfd(tracec_i_buffer *t, const geometry *g, int fd) {
    size_t need = memfd_bytes(g);
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS); /* fails (EINVAL) for anything but a memfd */
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) != 0 || st.st_size < 0 ||
        (uint64_t)st.st_size < (uint64_t)need)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    void *m = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return TRACEC_STATUS_OUT_OF_MEMORY;
    (void)madvise(m, need, MADV_DONTFORK); /* a fork child never writes into it (fork_child) */
    t->map = (uint8_t *)m;
    t->map_size = need;
    uint8_t *regions = t->map + TRACEC_SHM_HEADER_BYTES;
    for (int i = 0; i < g->halves; i++) t->half[i].mem = regions + (size_t)i * g->half_bytes;
    if (g->durable_cap) t->dmem = regions + (size_t)g->halves * g->half_bytes;
    /* The header (tracec/abi/shm_layout.h): whatever the memfd held is overwritten; the geometry
       now, the region words as the buffer runs (adopt() writes the first generations). */
    tracec_shm_header *hd = (tracec_shm_header *)(void *)t->map;
    memset(hd, 0, TRACEC_SHM_HEADER_BYTES);
    hd->version = TRACEC_SHM_VERSION;
    hd->header_bytes = TRACEC_SHM_HEADER_BYTES;
    hd->mode = (uint32_t)t->mode;
    hd->halves = (uint32_t)g->halves;
    hd->size = g->size;
    hd->half_bytes = g->half_bytes;
    hd->durable_bytes = g->durable_cap;
    __atomic_store_n(&hd->magic, TRACEC_SHM_MAGIC, __ATOMIC_RELEASE); /* last: the header is whole */
    t->hdr = hd;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_create_buffer_with_config(tracec_context_id_t context, const tracec_buffer_config_t *cfg,
                                                 tracec_buffer_id_t *buffer_id) {
    if (cfg == NULL || buffer_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_runtime_init();
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_BAD_STATE;
    int mode = cfg->mode == TRACEC_BUFFERING_MODE_DEFAULT ? TRACEC_BUFFERING_MODE_STREAMING : (int)cfg->mode;
    if (mode < TRACEC_BUFFERING_MODE_ONESHOT || mode >= TRACEC_BUFFERING_MODE_LAST)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if ((int)cfg->policy < 0 || cfg->policy >= TRACEC_BUFFER_POLICY_LAST) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (mode == TRACEC_BUFFERING_MODE_STREAMING && cfg->policy == TRACEC_BUFFER_POLICY_NONE)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (mode != TRACEC_BUFFERING_MODE_STREAMING && cfg->policy == TRACEC_BUFFER_POLICY_LOSSLESS)
        return TRACEC_STATUS_UNSUPPORTED;
    if (cfg->size == 0 || cfg->watermark > cfg->size) return TRACEC_STATUS_INVALID_ARGUMENT;
    /* One delivery: the callback, or a handoff of the memfd's regions to their reader. */
    if (cfg->handoff != NULL ? cfg->callback != NULL || cfg->memory != TRACEC_BUFFER_MEMORY_MEMFD
                             : cfg->callback == NULL)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (cfg->size > TRACEC_MAX_BUFFER_SIZE || cfg->durable_size > TRACEC_MAX_BUFFER_SIZE)
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    if (!tracec_i_context_exists(context.handle)) return TRACEC_STATUS_CONTEXT_NOT_FOUND;

    geometry g;
    if (!geometry_of(mode, cfg->size, cfg->durable_size, &g)) return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_once(&tracec_i_membarrier_once, tracec_i_membarrier_init);
    /* The new buffer's fields and memory, made before any lock is taken. */
    static const tracec_i_buffer zero;
    tracec_i_buffer t = zero;
    t.asym = tracec_i_membarrier;
    t.mode = mode;
    t.policy = mode == TRACEC_BUFFERING_MODE_STREAMING ? (int)cfg->policy : TRACEC_BUFFER_POLICY_DISCARD;
    t.size = g.size;
    t.watermark = cfg->watermark;
    t.phys = g.phys;
    size_t chunk = t.size / 8u;
    if (chunk > 16384u) chunk = 16384u;
    if (chunk < 512u) chunk = 512u;
    if (chunk > t.size) chunk = t.size;
    t.chunk = chunk & ~(size_t)7;
    t.callback = cfg->callback;
    t.callback_data = cfg->callback_data;
    t.handoff = cfg->handoff;
    t.handoff_data = cfg->handoff_data;
    t.max_wait_ms = cfg->max_wait_ms != 0 || cfg->handoff == NULL ? cfg->max_wait_ms : TRACEC_BUFFER_MAX_WAIT_DEFAULT_MS;
    t.ctx_handle = context.handle;
    t.durable_cap = g.durable_cap;
    tracec_status_t placed = place_memory(&t, &g, cfg);
    if (placed != TRACEC_STATUS_SUCCESS) return placed;
    if (t.map != NULL) populate(&t, &g);
    tracec_i_thread *thread = tracec_i_default_thread(); /* takes tracec_i_global_mu itself */

    /* A destroyed struct no call holds, else the first empty slot. */
    tracec_i_lock(&tracec_i_global_mu);
    size_t slot = TRACEC_MAX_BUFFERS, empty = TRACEC_MAX_BUFFERS;
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS && slot == TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *old = atomic_load_explicit(&tracec_i_buffers[i], memory_order_relaxed);
        if (old == NULL) {
            if (empty == TRACEC_MAX_BUFFERS) empty = i;
        } else if (reusable(old)) {
            slot = i;
        }
    }
    int started = tracec_i_context_started(context.handle);
    tracec_i_buffer *b = NULL;
    if (started >= 0 && slot == TRACEC_MAX_BUFFERS && empty < TRACEC_MAX_BUFFERS) {
        b = new_slot_struct();
        slot = empty;
    } else if (started >= 0 && slot < TRACEC_MAX_BUFFERS) {
        b = atomic_load_explicit(&tracec_i_buffers[slot], memory_order_relaxed);
    }
    if (b == NULL) {
        tracec_i_unlock(&tracec_i_global_mu);
        free_memory(&t);
        if (started < 0) return TRACEC_STATUS_CONTEXT_NOT_FOUND;
        return slot == TRACEC_MAX_BUFFERS && empty == TRACEC_MAX_BUFFERS ? TRACEC_STATUS_LIMIT_EXCEEDED
                                                                          : TRACEC_STATUS_OUT_OF_MEMORY;
    }
    uint64_t handle = (++b->slot_gen << TRACEC_I_SLOT_BITS) | (uint64_t)(slot + 1);
    tracec_i_lock(&b->dmu);
    tracec_i_lock(&b->mu);
    adopt(b, &t, thread, started > 0);
    atomic_store_explicit(&b->handle, handle, memory_order_relaxed);
    atomic_store_explicit(&b->live, handle, memory_order_seq_cst);
    tracec_i_unlock(&b->mu);
    tracec_i_unlock(&b->dmu);
    atomic_store_explicit(&tracec_i_buffers[slot], b, memory_order_release);
    tracec_i_unlock(&tracec_i_global_mu);
    if (thread != NULL) tracec_i_thread_start(thread);
    buffer_id->handle = handle;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_create_buffer(tracec_context_id_t context, size_t size, size_t watermark,
                                     tracec_buffer_policy_t policy, tracec_buffer_tracing_cb_t callback,
                                     void *callback_data, tracec_buffer_id_t *buffer_id) {
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = TRACEC_BUFFERING_MODE_STREAMING;
    cfg.policy = policy;
    cfg.size = size;
    cfg.watermark = watermark;
    cfg.callback = callback;
    cfg.callback_data = callback_data;
    if (policy == TRACEC_BUFFER_POLICY_NONE) return TRACEC_STATUS_INVALID_ARGUMENT;
    return tracec_create_buffer_with_config(context, &cfg, buffer_id);
}

/*
 * Destroys a held buffer; the caller puts it back.  Its struct stays in its
 * slot for a later create, which it can have only once this call is over.
 */
static tracec_status_t destroy(tracec_i_buffer *b, uint64_t handle) {
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    uint64_t expect = handle;
    if (!atomic_compare_exchange_strong_explicit(&b->live, &expect, 0, memory_order_seq_cst, memory_order_seq_cst))
        return TRACEC_STATUS_BUFFER_NOT_FOUND; /* another thread is destroying it */
    atomic_store_explicit(&b->destroyed, 1, memory_order_release);
    /* Deliver what is left while the buffer still looks alive to its thread. */
    atomic_store_explicit(&b->accepting, 0, memory_order_seq_cst);
    release_waiters(b);
    if (!atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) flush_wait(b, flush_request(b));
    tracec_i_lock(&b->dmu);
    tracec_i_lock(&b->mu);
    while (b->delivering || b->stealing) pthread_cond_wait(&b->cv, &b->mu);
    tracec_i_steal_half(b, 0, false);
    tracec_i_steal_half(b, 1, false);
    for (int i = 0; i < 2; i++) atomic_fetch_or_explicit(&b->half[i].state, TRACEC_I_SEALED, memory_order_acq_rel);
    b->stealing++;
    tracec_i_wstate *list = b->writers;
    tracec_i_unlock(&b->mu);
    for (int i = 0; i < 2; i++) {
        if (b->half[i].mem == NULL) continue;
        tracec_i_wait_published(&b->half[i]);
        tracec_i_wait_writers(b, list, i, NULL);
    }
    tracec_i_lock(&b->mu);
    b->stealing--;
    if (b->stealing == 0) tracec_i_reap(b);
    free_memory(b);
    b->durable_cap = 0;
    free(b->snap);
    b->snap = NULL;
    b->snap_cap = 0;
    pthread_cond_broadcast(&b->cv);
    tracec_i_unlock(&b->mu);
    tracec_i_unlock(&b->dmu);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_destroy_buffer(tracec_buffer_id_t buffer_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = destroy(b, buffer_id.handle);
    tracec_i_buffer_put(b);
    return st;
}


static tracec_status_t assign(tracec_i_buffer *b, tracec_callback_thread_t cb_thread_id) {
    if (cb_thread_id.handle == 0 || cb_thread_id.handle > TRACEC_MAX_CALLBACK_THREADS)
        return TRACEC_STATUS_THREAD_NOT_FOUND;
    tracec_i_thread *t = atomic_load_explicit(&tracec_i_threads[cb_thread_id.handle - 1], memory_order_acquire);
    if (t == NULL) return TRACEC_STATUS_THREAD_NOT_FOUND;
    if (tracec_i_current_thread == NULL && tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    tracec_i_lock(&b->mu);
    if (tracec_i_current_thread == NULL)
        while (b->delivering) pthread_cond_wait(&b->cv, &b->mu);
    atomic_store_explicit(&b->thread, t, memory_order_release);
    tracec_i_unlock(&b->mu);
    tracec_i_thread_start(t);
    if (atomic_load_explicit(&b->pending, memory_order_acquire)) tracec_i_kick(b);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_assign_callback_thread(tracec_buffer_id_t buffer_id, tracec_callback_thread_t cb_thread_id) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    tracec_status_t st = assign(b, cb_thread_id);
    tracec_i_buffer_put(b);
    return st;
}

tracec_status_t tracec_query_buffer_stats(tracec_buffer_id_t buffer_id, tracec_buffer_stats_t *st) {
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (st == NULL) {
        tracec_i_buffer_put(b);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    tracec_i_lock(&b->mu);
    uint64_t in_writers = 0;
    for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) in_writers += __atomic_load_n(&ws->packets, __ATOMIC_RELAXED);
    st->accepted = atomic_load(&b->accepted) + in_writers;
    st->dropped = tracec_i_dropped(b);
    tracec_i_unlock(&b->mu);
    st->overwritten = atomic_load(&b->overwritten);
    st->delivered = atomic_load(&b->delivered);
    st->deliveries = atomic_load(&b->deliveries);
    st->watermark_requests = atomic_load(&b->wm_requests);
    st->half_switches = atomic_load(&b->switches);
    st->producer_waits = atomic_load(&b->waits);
    st->refused = atomic_load(&b->refused);
    st->saves_ignored = atomic_load(&b->saves_ignored);
    tracec_i_buffer_put(b);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_buffer_epoch(tracec_buffer_id_t buffer_id, uint64_t *epoch) {
    if (epoch == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    *epoch = atomic_load_explicit(&b->epoch, memory_order_relaxed);
    tracec_i_buffer_put(b);
    return TRACEC_STATUS_SUCCESS;
}

/* ---- fork ------------------------------------------------------------------ */

void tracec_i_buffers_fork_prepare(void) {
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_lock(&tracec_i_pool_mu); /* after the buffers': tracec_i_make_room() takes it under b->mu */
}

void tracec_i_buffers_fork_parent(void) {
    pthread_mutex_unlock(&tracec_i_pool_mu);
    for (size_t i = TRACEC_MAX_BUFFERS; i-- > 0;) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_unlock(&b->mu);
    }
}

/* The child starts with empty buffers: it must never deliver the parent's records. */
void tracec_i_buffers_fork_child(void) {
    pthread_mutex_init(&tracec_i_pool_mu, NULL);
    /* The registration belongs to the process: make sure the child has one, or fall back. */
    if (tracec_i_membarrier && !tracec_i_membarrier_register()) {
        tracec_i_membarrier = 0;
        for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
            tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
            if (b == NULL) continue;
            b->asym = 0;
            for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) ws->asym = 0;
        }
    }
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        pthread_mutex_unlock(&b->mu);
        init_buffer_mutex(&b->mu);
        pthread_mutex_init(&b->dmu, NULL);
        pthread_cond_init(&b->cv, NULL);
        /* Its users: the writer states in its list; the calls that held it were on threads
           the child does not have. */
        uint32_t users = 0;
        for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) users++;
        atomic_store(&b->users, users);
        if (b->half[0].mem == NULL) continue;
        for (tracec_i_wstate *ws = b->writers; ws; ws = ws->next) {
            __atomic_store_n(&ws->stolen, 1u, __ATOMIC_SEQ_CST);
            __atomic_store_n(&ws->busy, 0u, __ATOMIC_SEQ_CST);
            ws->packets = 0;
            ws->drops = 0;
        }
        if (b->map != NULL) {
            /* A memfd's mapping is not in the child (MADV_DONTFORK): the buffer is gone here, as if
               destroyed (every call refuses its handle; its slot can be taken again). */
            b->map = NULL;
            b->map_size = 0;
            b->hdr = NULL;
            b->half[0].mem = b->half[1].mem = NULL;
            b->dmem = NULL;
            b->durable_cap = 0;
            atomic_store(&b->accepting, 0);
            atomic_store(&b->destroyed, 1);
            atomic_store(&b->live, 0);
            continue;
        }
        b->delivering = 0;
        b->stealing = 0;
        b->flush_req = b->flush_done = 0;
        atomic_store(&b->pending, 0);
        for (int h = 0; h < 2; h++) {
            b->half[h].phase = TRACEC_I_FREE;
            b->half[h].pinned = 0;
            tracec_i_reset_half(b, h, false);
        }
        atomic_store(&b->active, 0);
        atomic_store(&b->full, 0);
        atomic_store(&b->doff, 0);
        b->dcur = 0;
        atomic_fetch_add(&b->epoch, 1);
        atomic_store(&b->accepted, 0);
        atomic_store(&b->dropped, 0);
        atomic_store(&b->overwritten, 0);
        atomic_store(&b->delivered, 0);
        atomic_store(&b->deliveries, 0);
        atomic_store(&b->wm_requests, 0);
        atomic_store(&b->switches, 0);
        atomic_store(&b->waits, 0);
        atomic_store(&b->refused, 0);
        atomic_store(&b->saves_ignored, 0);
        if (atomic_load(&b->accepting)) {
            b->half[0].phase = TRACEC_I_ACTIVE;
            atomic_store(&b->half[0].state, 0);
        }
    }
}
