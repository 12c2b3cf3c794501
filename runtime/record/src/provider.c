/*
 * provider.c - the provider side of `tracec record` (tracec/provider.h):
 * registration, the control thread that obeys Initialize / Start / Stop /
 * Terminate, and the packet writer over the shared buffer (record_wire.h).
 *
 * Locks: `lock` is held by a writer from begin_packet to end_packet and by
 * the control thread while it changes the mapping or the started state, so
 * Stop returns (and STOPPED is sent) only after the packets in flight are
 * finished.  `mu`/`cv` carry registration and start notifications.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/process_descriptor.tracec.h"
#include "perfetto/trace/track_event/thread_descriptor.tracec.h"
#include "perfetto/trace/track_event/track_descriptor.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "record_check.h"
#include "record_wire.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/provider.h"
#include "tracec/registry.h"

struct tracec_provider {
    char name[TRACEC_I_NAME_MAX + 1];
    pthread_t thread;
    int wake[2]; /* a pipe: unregister wakes the control thread */
    int quit;
    int forked; /* this is a fork child of the process that registered */

    pthread_mutex_t lock; /* packets, mapping, started */
    int started;          /* atomic; cleared before taking the lock, set under it */
    uint64_t run;         /* atomic; a new value (next_id) at each start */
    uint64_t conn;        /* atomic; a new value (next_id) at each connection to a recorder (a new sequence) */
    uint64_t stop_run, stop_ts; /* atomic; the last run stopped and when (slices open then end there) */

    /* the mapping (under lock) */
    int initialized;
    int fifo, memfd;
    uint8_t *map;
    size_t map_size;
    tracec_i_shm_header *hdr;
    uint8_t *data;
    uint32_t mode, half_size, halves, active;
    uint32_t wait_ms; /* STREAMING: how long a writer waits for the other half to be saved before dropping */
    uint32_t max_wait_ms; /* the application's cap on wait_ms */
    int stalled;          /* a wait ran out: drop at once until the other half is seen saved */
    int lost_pending;     /* a packet of this sequence was dropped: the next one written says so (under lock) */
    uint64_t base_produced, base_dropped; /* the counters at Initialize: the header counts this recording only */
    uint32_t fill[2];
    uint64_t packets[2];
    uint32_t durable_size, dfill; /* the durable area (after the halves; 0: none) and its fill */
    char categories[TRACEC_I_TEXT_MAX + 1]; /* enabled by Initialize ("" = all, unless no_categories) */
    int no_categories;                      /* none of the declared categories is enabled */
    char extra[TRACEC_I_TEXT_MAX + 1];
    char declared[TRACEC_I_MAX_CATEGORIES * (TRACEC_I_CATEGORY_MAX + 1u)]; /* the categories given at registration */

    /* registration (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int want_sync, reg_answered, reg_started, no_recorder;
    int first_start_done; /* under mu: the first Start was handled (run header written): register_sync waits for it */

    /* counters (atomic) */
    uint64_t produced, dropped, runs, saved, lost, refused;
    char last_refusal[256]; /* control thread only: the last refusal said on stderr (said once) */
};

static tracec_provider *the_provider; /* one per process */
static pthread_mutex_t provider_mu = PTHREAD_MUTEX_INITIALIZER;
/* The run this thread's descriptor was written in (read under the provider's lock at every packet:
   initial-exec, so the read is not a __tls_get_addr call in the PIC library). */
static __thread uint64_t thread_run __attribute__((tls_model("initial-exec")));

/* Runs and connections are numbered across the process's providers (one registered after another
   unregistered included), so a thread's state of an earlier one never passes for the current one's. */
static uint64_t id_counter;
static uint64_t next_id(void) { return __atomic_add_fetch(&id_counter, 1u, __ATOMIC_RELAXED); }

/*
 * The calling thread's slices on its own track (tracec_provider_slice_begin
 * / _end), so that they nest as the program meant whatever was lost
 * (docs/record.md, "Nesting after losses").  Thread-local, touched by its
 * thread only, no allocation.
 */
enum { OWED_GROUPS = 4 };
typedef struct nest_state {
    uint64_t conn;     /* the connection (sequence) the levels below belong to; 0: none yet */
    uint64_t run;      /* the run the thread last wrote in (its written levels are in it); 0: none */
    uint64_t last_ts;  /* the thread's last event written */
    uint64_t written;  /* a bit per open level, the innermost in bit 0: is its BEGIN in the trace? */
    uint32_t nlive;    /* open levels (from 64 up not tracked: they count as written) */
    uint32_t phantoms; /* levels ended at a run boundary: the program's ENDs for them are not written */
    uint32_t nowed;    /* groups of owed ENDs, oldest first */
    struct {
        uint64_t ts, n;
    } owed[OWED_GROUPS];
} nest_state;
static __thread nest_state nest __attribute__((tls_model("initial-exec")));

static void *control_main(void *arg);
static void stop_self(tracec_provider *p);

/* Notes when the current run stops, before `started` is cleared: the slices open then end there. */
static void note_stop(tracec_provider *p) {
    __atomic_store_n(&p->stop_ts, tracec_i_rec_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&p->stop_run, __atomic_load_n(&p->run, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
}

/* At exit the provider stops itself (STOPPED on the fifo), so the recorder
   does not count a program that simply ended as a provider that died. */
static void provider_at_exit(void) {
    pthread_mutex_lock(&provider_mu);
    tracec_provider *p = the_provider;
    pthread_mutex_unlock(&provider_mu);
    if (p && !p->forked) stop_self(p);
}
/* A fork child shares the parent's buffer but not its lock or its control
   thread: its provider is off for good (it may not write into the parent's
   buffer), and unregister in the child only forgets it. */
static void provider_after_fork_child(void) {
    tracec_provider *p = the_provider;
    if (p) {
        __atomic_store_n(&p->started, 0, __ATOMIC_RELAXED);
        p->forked = 1;
    }
}
static void install_at_exit(void) {
    atexit(provider_at_exit);
    pthread_atfork(NULL, NULL, provider_after_fork_child);
}
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;

/* ---- registration ------------------------------------------------------------ */

static tracec_status_t do_register(const char *name, const char *categories, int sync, int max_wait_ms,
                                   bool *started, tracec_provider **out) {
    if (out) *out = NULL;
    if (name == NULL || out == NULL || name[0] == '\0' || strlen(name) > TRACEC_I_NAME_MAX ||
        !tracec_i_rec_text_ok(name, strlen(name)) || max_wait_ms < -1 || max_wait_ms > 10000)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (categories == NULL) categories = "";
    if (!tracec_i_rec_categories_ok(categories)) return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&provider_mu);
    if (the_provider != NULL) {
        pthread_mutex_unlock(&provider_mu);
        return TRACEC_STATUS_BAD_STATE;
    }
    tracec_provider *p = calloc(1, sizeof *p);
    if (p == NULL) {
        pthread_mutex_unlock(&provider_mu);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->declared, sizeof p->declared, "%s", categories);
    p->fifo = p->memfd = -1;
    p->want_sync = sync;
    p->max_wait_ms = max_wait_ms == 0 ? TRACEC_PROVIDER_MAX_WAIT_DEFAULT_MS : max_wait_ms < 0 ? 0u : (uint32_t)max_wait_ms;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) != 0 || pthread_create(&p->thread, NULL, control_main, p) != 0) {
        if (p->wake[0] > 0) {
            close(p->wake[0]);
            close(p->wake[1]);
        }
        free(p);
        pthread_mutex_unlock(&provider_mu);
        return TRACEC_STATUS_ERROR;
    }
    the_provider = p;
    pthread_mutex_unlock(&provider_mu);
    pthread_once(&at_exit_once, install_at_exit);
    if (sync) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 1;
        pthread_mutex_lock(&p->mu);
        while (!p->reg_answered && !p->no_recorder)
            if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) break;
        /* The recorder is tracing: its Initialize and Start follow the answer.  Report "started" only once
           this provider has handled them, so the caller's first event is written, not refused. */
        if (p->reg_answered && p->reg_started) {
            dl.tv_sec += 1;
            while (!p->first_start_done && !p->no_recorder)
                if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) break;
        }
        if (started) *started = p->first_start_done && tracec_provider_started(p);
        pthread_mutex_unlock(&p->mu);
    }
    *out = p;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_provider_register(const char *name, tracec_provider **out) {
    return do_register(name, NULL, 0, 0, NULL, out);
}

tracec_status_t tracec_provider_register_sync(const char *name, bool *started, tracec_provider **out) {
    if (started) *started = false;
    return do_register(name, NULL, 1, 0, started, out);
}

tracec_status_t tracec_provider_register_with(const tracec_provider_registration *config, bool *started,
                                              tracec_provider **out) {
    if (started) *started = false;
    if (out) *out = NULL;
    /* the fields up to `synchronous` are in every version of the struct */
    if (config == NULL || config->struct_size < sizeof(tracec_provider_registration)) return TRACEC_STATUS_INVALID_ARGUMENT;
    int max_wait = config->struct_size >= offsetof(tracec_provider_registration, max_wait_ms) + sizeof(int)
                       ? config->max_wait_ms
                       : 0;
    return do_register(config->name, config->categories, config->synchronous, max_wait, started, out);
}

bool tracec_provider_started(const tracec_provider *p) {
    return p != NULL && __atomic_load_n(&p->started, __ATOMIC_RELAXED) != 0;
}

bool tracec_provider_wait_started(tracec_provider *p, int timeout_ms) {
    if (p == NULL) return false;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    while (!tracec_provider_started(p))
        if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) break;
    pthread_mutex_unlock(&p->mu);
    return tracec_provider_started(p);
}

bool tracec_provider_category_enabled(tracec_provider *p, const char *category) {
    if (!tracec_provider_started(p) || category == NULL) return false;
    pthread_mutex_lock(&p->lock);
    size_t n = strlen(category);
    bool on = tracec_provider_started(p) &&
              ((!p->no_categories && (p->categories[0] == '\0' || tracec_i_rec_list_has(p->categories, category, n))) ||
               tracec_i_rec_list_has(p->extra, category, n));
    pthread_mutex_unlock(&p->lock);
    return on;
}

/* ---- the packet writer -------------------------------------------------------- */

/* A writer with no room and an error: every setter is a no-op.  Its window
   is a real address (the small-reserve check computes end - n). */
static void dead_writer(tracec_writer *w, tracec_msg *packet) {
    static __thread uint8_t nowhere[16];
    w->base = w->ptr = w->end = nowhere;
    w->grow = NULL;
    w->sink = NULL;
    w->status = TRACEC_STATUS_CLOSED;
    tracec_writer_begin_packet(w, packet);
}

/*
 * Empties half `h` (lock held).  `gen` is bumped before anything of the
 * half is rewritten (the fence keeps the later fill and data stores after
 * it): a recorder copying the half meanwhile sees gen change and does not
 * take the copy for the provider's records (recorder.c, copy_region).
 */
static void reset_half(tracec_provider *p, uint32_t h) {
    __atomic_add_fetch(&p->hdr->half[h].gen, 1u, __ATOMIC_RELAXED);
    TRACEC_I_REC_FENCE(__ATOMIC_RELEASE);
    p->fill[h] = 0;
    p->packets[h] = 0;
    __atomic_store_n(&p->hdr->half[h].fill, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&p->hdr->half[h].packets, (uint64_t)0, __ATOMIC_RELAXED);
}

/* Empties the durable area (lock held), gen first as reset_half. */
static void reset_durable(tracec_provider *p) {
    __atomic_add_fetch(&p->hdr->durable.gen, 1u, __ATOMIC_RELAXED);
    TRACEC_I_REC_FENCE(__ATOMIC_RELEASE);
    p->dfill = 0;
    __atomic_store_n(&p->hdr->durable.fill, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&p->hdr->durable.packets, (uint64_t)0, __ATOMIC_RELAXED);
}

/* The provider's counters into the header, for the recorder (lock held). */
static void publish_counters(tracec_provider *p) {
    /* since this buffer's Initialize: a recorder accounts only for what was written for it */
    __atomic_store_n(&p->hdr->produced, __atomic_load_n(&p->produced, __ATOMIC_RELAXED) - p->base_produced,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&p->hdr->dropped, __atomic_load_n(&p->dropped, __ATOMIC_RELAXED) - p->base_dropped,
                     __ATOMIC_RELAXED);
}

/*
 * The recorder has not saved half `b` yet: wait up to wait_ms for it (0:
 * drop at once).  Gives up at once when tracing stops
 * (Stop and the recorder's death clear `started` before taking the lock
 * this writer holds).
 */
static bool wait_saved(tracec_provider *p, uint32_t b) {
    uint32_t ms = p->wait_ms < p->max_wait_ms ? p->wait_ms : p->max_wait_ms; /* the application's cap */
    if (ms == 0 || p->stalled) return false;
    uint64_t deadline = tracec_i_rec_now_ns() + (uint64_t)ms * 1000000u;
    struct timespec nap = {0, 20000};
    while (__atomic_load_n(&p->hdr->half[b].state, __ATOMIC_ACQUIRE) != TRACEC_I_HALF_FREE) {
        if (!tracec_provider_started(p)) return false;
        if (tracec_i_rec_now_ns() > deadline) {
            p->stalled = 1; /* no more waits until the recorder has saved it */
            return false;
        }
        nanosleep(&nap, NULL);
    }
    return true;
}

/* The writer ran out of room in the active half: switch halves (moving the
   packet begun so far) or refuse.  Lock held (by the writing thread). */
static bool shm_grow(tracec_writer *w, size_t need) {
    tracec_provider *p = w->sink;
    size_t used = (size_t)(w->ptr - w->base);
    uint32_t a = p->active, b = a ^ 1u;
    if (used + need > p->half_size || p->fill[a] == 0 || p->halves < 2) return false;
    if (p->mode == TRACEC_BUFFERING_MODE_STREAMING) {
        if (__atomic_load_n(&p->hdr->half[b].state, __ATOMIC_ACQUIRE) != TRACEC_I_HALF_FREE && !wait_saved(p, b))
            return false;
        p->stalled = 0;
        __atomic_store_n(&p->hdr->half[a].state, (uint32_t)TRACEC_I_HALF_FULL, __ATOMIC_RELEASE);
        (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_SAVE_BUFFER, a);
    } else { /* CIRCULAR: the older half's packets are overwritten */
        __atomic_add_fetch(&p->dropped, p->packets[b], __ATOMIC_RELAXED);
        __atomic_add_fetch(&p->hdr->overwritten, p->packets[b], __ATOMIC_RELAXED);
    }
    reset_half(p, b);
    p->active = b;
    __atomic_store_n(&p->hdr->active, b, __ATOMIC_RELEASE);
    uint8_t *nb = p->data + (size_t)b * p->half_size;
    memmove(nb, w->base, used);
    w->base = nb;
    w->ptr = nb + used;
    w->end = nb + p->half_size;
    return true;
}

/* Starts a packet at the active half's fill (lock held, tracing on). */
static void half_begin(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    uint8_t *hb = p->data + (size_t)p->active * p->half_size;
    w->base = hb + p->fill[p->active];
    w->ptr = w->base;
    w->end = hb + p->half_size;
    w->grow = shm_grow;
    w->sink = p;
    w->status = TRACEC_STATUS_SUCCESS;
    __atomic_add_fetch(&p->produced, 1u, __ATOMIC_RELAXED);
    tracec_writer_begin_packet(w, packet);
}

/* Finishes a packet of half_begin: publishes it or counts it dropped (lock held, kept). */
static tracec_status_t half_end(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    /* The first packet after a dropped one carries previous_packet_dropped, as Perfetto's trace writers
       mark it (appended: it wins over anything the caller set).  If this packet is dropped too, the mark
       waits for the next. */
    if (p->lost_pending)
        perfetto_protos_TracePacket_set_previous_packet_dropped((perfetto_protos_TracePacket *)(void *)packet, true);
    tracec_status_t st = tracec_writer_end_packet(w, packet);
    uint32_t a = p->active;
    if (st == TRACEC_STATUS_SUCCESS) {
        p->lost_pending = 0;
        p->fill[a] = (uint32_t)(w->ptr - (p->data + (size_t)a * p->half_size));
        p->packets[a]++;
        __atomic_store_n(&p->hdr->half[a].packets, p->packets[a], __ATOMIC_RELAXED);
        __atomic_store_n(&p->hdr->half[a].fill, p->fill[a], __ATOMIC_RELEASE);
    } else {
        __atomic_add_fetch(&p->dropped, 1u, __ATOMIC_RELAXED);
        p->lost_pending = 1;
    }
    publish_counters(p);
    w->sink = NULL;
    return st;
}

/* What a descriptor packet holds: `fn` writes it into `pkt`. */
typedef void (*descriptor_fn)(tracec_provider *p, perfetto_protos_TracePacket *pkt, const void *arg);

/*
 * Writes one packet that describes the provider (lock held; tracing on or
 * being started): into the durable area, which no switch or wrap
 * overwrites, so the recorder has every descriptor whatever happened to
 * the halves.  With no durable area (or no room left in it) it goes into
 * the active half like any packet.  Counted produced (and dropped) as any.
 */
static tracec_status_t put_descriptor(tracec_provider *p, descriptor_fn fn, const void *arg) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_msg root;
    if (p->dfill < p->durable_size) {
        uint8_t *db = p->data + (size_t)p->halves * p->half_size;
        tracec_writer_init_array(&w, db + p->dfill, p->durable_size - p->dfill);
        tracec_writer_begin_root(&w, &root);
        tracec_msg_begin_nested(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), &pkt.msg);
        fn(p, &pkt, arg);
        if (tracec_writer_end_packet(&w, &pkt.msg) == TRACEC_STATUS_SUCCESS) {
            p->dfill = (uint32_t)(w.ptr - db);
            __atomic_add_fetch(&p->produced, 1u, __ATOMIC_RELAXED);
            __atomic_add_fetch(&p->hdr->durable.packets, 1u, __ATOMIC_RELAXED);
            __atomic_store_n(&p->hdr->durable.fill, p->dfill, __ATOMIC_RELEASE);
            publish_counters(p);
            return TRACEC_STATUS_SUCCESS;
        }
    }
    half_begin(p, &w, &pkt.msg);
    fn(p, &pkt, arg);
    return half_end(p, &w, &pkt.msg);
}

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

/* The calling thread's TrackDescriptor (a child of the process's track). */
static void thread_descriptor(tracec_provider *p, perfetto_protos_TracePacket *pkt, const void *arg) {
    (void)arg;
    perfetto_protos_TrackDescriptor td;
    perfetto_protos_ThreadDescriptor th;
    char name[32] = "";
    (void)pthread_getname_np(pthread_self(), name, sizeof name);
    perfetto_protos_TracePacket_set_timestamp(pkt, tracec_i_rec_now_ns());
    perfetto_protos_TracePacket_begin_track_descriptor(pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, tracec_provider_thread_track_uuid(p));
    perfetto_protos_TrackDescriptor_set_parent_uuid(&td, tracec_i_rec_process_uuid((uint32_t)getpid()));
    perfetto_protos_TrackDescriptor_begin_thread(&td, &th);
    perfetto_protos_ThreadDescriptor_set_pid(&th, (int32_t)getpid());
    perfetto_protos_ThreadDescriptor_set_tid(&th, (int32_t)my_tid());
    if (name[0]) perfetto_protos_ThreadDescriptor_set_cstr_thread_name(&th, name);
    perfetto_protos_TrackDescriptor_end_thread(&td, &th);
    perfetto_protos_TracePacket_end_track_descriptor(pkt, &td);
}

/* Starts a packet (lock held, tracing on). */
static void begin_locked(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    /* A thread's first packet of a run describes the thread first (whoever writes the packet: the
       helpers or the caller by hand), so its events land on its named track.  Retried if dropped. */
    uint64_t run = __atomic_load_n(&p->run, __ATOMIC_RELAXED);
    if (thread_run != run && put_descriptor(p, thread_descriptor, NULL) == TRACEC_STATUS_SUCCESS) thread_run = run;
    half_begin(p, w, packet);
}

void tracec_provider_begin_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    if (!tracec_provider_started(p)) {
        dead_writer(w, packet);
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (!__atomic_load_n(&p->started, __ATOMIC_RELAXED)) {
        pthread_mutex_unlock(&p->lock);
        dead_writer(w, packet);
        return;
    }
    begin_locked(p, w, packet);
}

tracec_status_t tracec_provider_end_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    if (w->sink != p || p == NULL) return w->status != TRACEC_STATUS_SUCCESS ? w->status : TRACEC_STATUS_CLOSED;
    tracec_status_t st = half_end(p, w, packet);
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* ---- track events ---------------------------------------------------------------- */

uint64_t tracec_provider_thread_track_uuid(tracec_provider *p) {
    (void)p;
    return tracec_i_rec_thread_uuid((uint32_t)getpid(), my_tid());
}

/* ---- nesting after losses (nest_state above; docs/record.md, "Nesting after losses") ---- */

/*
 * Owes `n` ENDs at `ts` (after the ones owed already).  A BEGIN is never
 * written while ENDs are owed, so every owed END closes a slice begun
 * before the oldest of them: when the groups are full the newest takes the
 * later timestamp, which moves only the instants written between the two,
 * never a slice.
 */
static void owe(nest_state *t, uint64_t ts, uint64_t n) {
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
 * A run boundary: the slices open on the thread's track ended at `end_ts`
 * (their ENDs are owed when `write_ends`: their BEGINs are on this
 * sequence), and the program's own ENDs for them are not written (phantom
 * levels).  Without `write_ends` (a new sequence: the BEGINs are in
 * another trace) the owed ENDs go too.
 */
static void nest_boundary(nest_state *t, uint64_t end_ts, int write_ends) {
    uint32_t n = t->nlive;
    if (write_ends) {
        uint32_t w = (n > 64u ? n - 64u : 0u) + (uint32_t)__builtin_popcountll(t->written);
        if (end_ts < t->last_ts) end_ts = t->last_ts; /* an event that raced the stop */
        owe(t, end_ts, w);
    } else {
        t->nowed = 0;
    }
    t->phantoms += n;
    t->nlive = 0;
    t->written = 0;
}

static void nest_push(nest_state *t, bool written) {
    if (t->nlive < 64u) t->written = (t->written << 1) | (uint64_t)written;
    t->nlive++;
}

/* An END on the thread's track: true when it must be written (its BEGIN is in the trace). */
static bool nest_pop(nest_state *t) {
    if (t->nlive == 0) {
        if (t->phantoms == 0) return true; /* more ENDs than BEGINs: the program's own imbalance */
        t->phantoms--;
        return false;
    }
    if (--t->nlive >= 64u) return true;
    bool w = (t->written & 1u) != 0;
    t->written >>= 1;
    return w;
}

/*
 * Brings the thread's levels up to the provider's state (`on`: tracing is
 * on, read under the lock).  A new connection is another sequence (or
 * trace): the open levels become phantoms and nothing is owed.  The end of
 * the run the thread wrote in (stopped, or another run started since):
 * its open slices end at that stop.
 */
static void nest_sync(tracec_provider *p, nest_state *t, int on) {
    uint64_t conn = __atomic_load_n(&p->conn, __ATOMIC_ACQUIRE);
    uint64_t run = __atomic_load_n(&p->run, __ATOMIC_ACQUIRE);
    if (t->conn != conn) {
        nest_boundary(t, 0, 0);
        t->conn = conn;
        t->run = 0;
    } else if (t->run != 0 && (t->run != run || !on)) {
        uint64_t end_ts = t->last_ts; /* the stop's time if known, else the thread's last event in that run */
        if (__atomic_load_n(&p->stop_run, __ATOMIC_ACQUIRE) == t->run)
            end_ts = __atomic_load_n(&p->stop_ts, __ATOMIC_RELAXED);
        nest_boundary(t, end_ts, 1);
        t->run = 0;
    }
    if (on) t->run = run;
}

/* One track event on the thread's track at `ts` (lock held, tracing on); the packet's status. */
static tracec_status_t put_event(tracec_provider *p, uint32_t type, const char *name, uint64_t ts) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    begin_locked(p, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, ts);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, (perfetto_protos_TrackEvent_Type)type);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(p));
    if (name) perfetto_protos_TrackEvent_set_cstr_name(&ev, name);
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    return half_end(p, &w, &pkt.msg);
}

/*
 * Writes the ENDs the thread owes (lock held, tracing on), oldest first,
 * each with its own, earlier timestamp: the reader sorts by time, so each
 * closes its slice where it ended.  Stops at the first one refused; SUCCESS
 * when none is owed any more.
 */
static tracec_status_t write_owed(tracec_provider *p, nest_state *t) {
    while (t->nowed != 0) {
        tracec_status_t st = put_event(p, perfetto_protos_TrackEvent_TYPE_SLICE_END, NULL, t->owed[0].ts);
        if (st != TRACEC_STATUS_SUCCESS) return st;
        if (--t->owed[0].n == 0) {
            t->nowed--;
            memmove(&t->owed[0], &t->owed[1], t->nowed * sizeof t->owed[0]);
        }
    }
    return TRACEC_STATUS_SUCCESS;
}

static tracec_status_t write_event(tracec_provider *p, uint32_t type, const char *name) {
    nest_state *t = &nest;
    bool slice = type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN || type == perfetto_protos_TrackEvent_TYPE_SLICE_END;
    if (p == NULL) return TRACEC_STATUS_CLOSED;
    if (tracec_provider_started(p)) {
        pthread_mutex_lock(&p->lock);
        if (__atomic_load_n(&p->started, __ATOMIC_RELAXED)) goto on;
        pthread_mutex_unlock(&p->lock);
    }
    /* off: the event is not written, its level is kept so the ENDs after the next start match */
    if (slice) {
        nest_sync(p, t, 0);
        if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN)
            nest_push(t, false);
        else
            (void)nest_pop(t);
    }
    return TRACEC_STATUS_CLOSED;
on:;
    tracec_status_t st;
    nest_sync(p, t, 1);
    if (type == perfetto_protos_TrackEvent_TYPE_SLICE_END && !nest_pop(t)) {
        st = TRACEC_STATUS_SUCCESS; /* its BEGIN is not in the trace (that loss is counted): nor is it */
        goto out;
    }
    if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN && t->nowed != 0) {
        /* the owed ENDs first: one written after this BEGIN would close it instead of its own slice */
        st = write_owed(p, t);
        if (st != TRACEC_STATUS_SUCCESS) { /* the refused END is counted and stands for this BEGIN */
            nest_push(t, false);
            goto out;
        }
    }
    uint64_t ts = tracec_i_rec_now_ns();
    st = put_event(p, type, name, ts);
    if (st == TRACEC_STATUS_SUCCESS) {
        t->last_ts = ts;
        if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) nest_push(t, true);
        if (t->nowed != 0) (void)write_owed(p, t); /* after a written event: a full buffer is not asked again */
    } else if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) {
        nest_push(t, false);
    } else if (type == perfetto_protos_TrackEvent_TYPE_SLICE_END) {
        owe(t, ts, 1); /* its slice is open in the trace: ended after the thread's next written event */
    }
out:
    pthread_mutex_unlock(&p->lock);
    return st;
}

tracec_status_t tracec_provider_slice_begin(tracec_provider *p, const char *name) {
    return write_event(p, perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN, name);
}
tracec_status_t tracec_provider_slice_end(tracec_provider *p) {
    return write_event(p, perfetto_protos_TrackEvent_TYPE_SLICE_END, NULL);
}
tracec_status_t tracec_provider_instant(tracec_provider *p, const char *name) {
    return write_event(p, perfetto_protos_TrackEvent_TYPE_INSTANT, name);
}

tracec_provider_stats tracec_provider_get_stats(tracec_provider *p) {
    tracec_provider_stats s;
    memset(&s, 0, sizeof s);
    if (p == NULL) return s;
    s.produced = __atomic_load_n(&p->produced, __ATOMIC_RELAXED);
    s.dropped = __atomic_load_n(&p->dropped, __ATOMIC_RELAXED);
    s.runs = __atomic_load_n(&p->runs, __ATOMIC_RELAXED);
    s.saved = __atomic_load_n(&p->saved, __ATOMIC_RELAXED);
    s.recorder_lost = __atomic_load_n(&p->lost, __ATOMIC_RELAXED);
    s.refused = __atomic_load_n(&p->refused, __ATOMIC_RELAXED);
    return s;
}

/* ---- the control thread --------------------------------------------------------- */

static bool is_own_schema(const tracec_file_descriptor *d) {
    return strncmp(d->file_name, "perfetto/", 9) == 0 || strncmp(d->file_name, "google/protobuf/", 16) == 0;
}

static void extension_descriptor(tracec_provider *p, perfetto_protos_TracePacket *pkt, const void *arg) {
    (void)p;
    tracec_write_extension_descriptor(&pkt->msg, arg);
}

static void process_descriptor(tracec_provider *p, perfetto_protos_TracePacket *pkt, const void *arg) {
    (void)arg;
    perfetto_protos_TrackDescriptor td;
    perfetto_protos_ProcessDescriptor pd;
    perfetto_protos_TracePacket_set_timestamp(pkt, tracec_i_rec_now_ns());
    perfetto_protos_TracePacket_set_sequence_flags(pkt, 1u); /* SEQ_INCREMENTAL_STATE_CLEARED */
    perfetto_protos_TracePacket_begin_track_descriptor(pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, tracec_i_rec_process_uuid((uint32_t)getpid()));
    perfetto_protos_TrackDescriptor_begin_process(&td, &pd);
    perfetto_protos_ProcessDescriptor_set_pid(&pd, (int32_t)getpid());
    perfetto_protos_ProcessDescriptor_set_cstr_process_name(&pd, p->name);
    perfetto_protos_TrackDescriptor_end_process(&td, &pd);
    perfetto_protos_TracePacket_end_track_descriptor(pkt, &td);
}

/* The packets every run starts with, before any event (lock held, not started yet): extension
   descriptors, the process track.  In the durable area when there is one. */
static void write_run_header(tracec_provider *p) {
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d))
        if (!is_own_schema(d)) (void)put_descriptor(p, extension_descriptor, d);
    (void)put_descriptor(p, process_descriptor, NULL);
}

/* Says once on stderr why a recorder (or what it sent) was refused, and counts it (control thread). */
static void refuse(tracec_provider *p, const char *path, const char *why) {
    __atomic_add_fetch(&p->refused, 1u, __ATOMIC_RELAXED);
    char text[sizeof p->last_refusal];
    if (snprintf(text, sizeof text, "%s: %s", path, why) < 0) return; /* a long path is cut: fine for a message */
    if (strcmp(text, p->last_refusal) == 0) return; /* said already (it retries every 50 ms) */
    snprintf(p->last_refusal, sizeof p->last_refusal, "%s", text);
    fprintf(stderr, "tracec provider %s: refused the recorder at %s\n", p->name, text);
}

/* How long a connect() may take (a recorder whose accept queue is full: EAGAIN at once, retried later). */
#define CONNECT_TIMEOUT_MS 100

static int connect_recorder(tracec_provider *p, char *path, size_t cap) {
    const char *env = getenv(TRACEC_RECORDER_SOCKET_ENV);
    if (env && env[0])
        snprintf(path, cap, "%s", env);
    else
        tracec_i_rec_default_socket(path, cap, NULL, 0);
    char why[200];
    struct stat st;
    if (lstat(path, &st) != 0) return -1; /* no recorder (yet) */
    if (!tracec_i_rec_socket_dir_ok(path, why, sizeof why)) {
        refuse(p, path, why);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int ok = 0;
        if (errno == EINPROGRESS) { /* never blocks: waits up to the timeout, or until unregister */
            struct pollfd pf[2] = {{fd, POLLOUT, 0}, {p->wake[0], POLLIN, 0}};
            int err = 0;
            socklen_t el = sizeof err;
            ok = poll(pf, 2, CONNECT_TIMEOUT_MS) > 0 && pf[0].revents != 0 &&
                 getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
        }
        if (!ok) { /* EAGAIN: its accept queue is full; ENOENT, ECONNREFUSED: none listens */
            close(fd);
            return -1;
        }
    }
    if (!tracec_i_rec_peer_ok(fd, NULL, NULL, why, sizeof why)) { /* before anything is sent */
        refuse(p, path, why);
        close(fd);
        return -1;
    }
    p->last_refusal[0] = '\0';
    return fd;
}

/* Drops the mapping and the fifo (lock taken here); `lost`: the recorder vanished. */
static void teardown(tracec_provider *p, int lost) {
    /* off first, then the lock: no new packet begins, so the lock is only
       waited for by the packet in flight (a writer in a tight loop would
       otherwise keep retaking it) */
    if (tracec_provider_started(p)) note_stop(p);
    int was = __atomic_exchange_n(&p->started, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&p->lock);
    if (was && lost) __atomic_add_fetch(&p->lost, 1u, __ATOMIC_RELAXED);
    if (p->map) munmap(p->map, p->map_size);
    if (p->memfd >= 0) close(p->memfd);
    if (p->fifo >= 0) close(p->fifo);
    p->map = NULL;
    p->hdr = NULL;
    p->data = NULL;
    p->memfd = p->fifo = -1;
    p->initialized = 0;
    pthread_mutex_unlock(&p->lock);
}

static void on_initialize(tracec_provider *p, const tracec_i_msg *m, const int *fds, int nfds) {
    struct stat st;
    if (p->initialized || nfds != 2) goto ignore; /* a second Initialize before Terminate is ignored */
    uint32_t mode = m->a & 0xffu, halves = (uint32_t)m->c, wait_ms = (m->a >> 8) & TRACEC_I_INIT_WAIT_MASK;
    uint64_t hs = m->b;
    if (mode < TRACEC_BUFFERING_MODE_ONESHOT || mode > TRACEC_BUFFERING_MODE_STREAMING) goto ignore;
    if (halves != (mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1u : 2u) || hs < 64 || hs > (1u << 30)) goto ignore;
    size_t need = TRACEC_I_SHM_HEADER + (size_t)hs * halves;
    char why[160];
    /* its size sealed before it is mapped: a recorder that could shrink it would kill us with SIGBUS */
    if (!tracec_i_rec_buffer_sealed(fds[0], need, why, sizeof why)) {
        refuse(p, "its Initialize", why);
        goto ignore;
    }
    if (fstat(fds[0], &st) != 0) goto ignore;
    void *map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    if (map == MAP_FAILED) goto ignore;
    tracec_i_shm_header *h = map;
    /* the durable area after the halves (0: none); the recorder sized the memfd for it */
    uint32_t durable = __atomic_load_n(&h->durable_size, __ATOMIC_RELAXED);
    if (h->magic != TRACEC_I_SHM_MAGIC || durable > (1u << 30) || (uint64_t)st.st_size < need + durable) {
        munmap(map, need);
        goto ignore;
    }
    if (durable > 0) {
        munmap(map, need);
        need += durable;
        map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
        if (map == MAP_FAILED) goto ignore;
        h = map;
    }
    pthread_mutex_lock(&p->lock);
    p->map = map;
    p->map_size = need;
    p->hdr = h;
    p->data = (uint8_t *)map + TRACEC_I_SHM_HEADER;
    p->memfd = fds[0];
    p->fifo = fds[1];
    p->mode = mode;
    p->wait_ms = wait_ms > 10000u ? 10000u : wait_ms;
    p->stalled = 0;
    p->base_produced = __atomic_load_n(&p->produced, __ATOMIC_RELAXED);
    p->base_dropped = __atomic_load_n(&p->dropped, __ATOMIC_RELAXED);
    p->half_size = (uint32_t)hs;
    p->halves = halves;
    p->active = 0;
    p->fill[0] = p->fill[1] = 0;
    p->packets[0] = p->packets[1] = 0;
    p->durable_size = durable;
    p->dfill = 0;
    snprintf(p->categories, sizeof p->categories, "%s", m->text);
    p->no_categories = (m->a & TRACEC_I_INIT_NO_CATEGORIES) != 0;
    p->extra[0] = '\0';
    p->initialized = 1;
    pthread_mutex_unlock(&p->lock);
    return;
ignore:
    for (int i = 0; i < nfds; i++) close(fds[i]);
}

static void on_start(tracec_provider *p, const tracec_i_msg *m) {
    if (!p->initialized || tracec_provider_started(p)) return; /* Start while started is ignored */
    pthread_mutex_lock(&p->lock);
    if (m->a == TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE || m->a == TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE) {
        for (uint32_t h = 0; h < p->halves; h++) {
            reset_half(p, h);
            __atomic_store_n(&p->hdr->half[h].state, (uint32_t)TRACEC_I_HALF_FREE, __ATOMIC_RELEASE);
        }
        p->active = 0;
        __atomic_store_n(&p->hdr->active, 0u, __ATOMIC_RELEASE);
        reset_durable(p);
    }
    snprintf(p->extra, sizeof p->extra, "%s", m->text);
    __atomic_store_n(&p->run, next_id(), __ATOMIC_RELEASE);
    __atomic_add_fetch(&p->runs, 1u, __ATOMIC_RELAXED);
    write_run_header(p); /* before any event of the run: writers wait for the lock */
    __atomic_store_n(&p->started, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&p->lock);
    (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STARTED, 0);
    pthread_mutex_lock(&p->mu);
    p->first_start_done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void on_stop(tracec_provider *p) {
    if (!p->initialized || !tracec_provider_started(p)) return; /* Stop while stopped is ignored */
    note_stop(p);
    __atomic_store_n(&p->started, 0, __ATOMIC_SEQ_CST); /* no new packet begins */
    pthread_mutex_lock(&p->lock);                        /* the one in flight is finished */
    pthread_mutex_unlock(&p->lock);
    (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STOPPED, 0);
}

/* Serves one connection until it ends (returns 1: the recorder went away) or quit (0). */
static int serve(tracec_provider *p, int conn) {
    for (;;) {
        struct pollfd pf[3] = {{conn, POLLIN, 0}, {p->wake[0], POLLIN, 0}, {p->fifo, POLLIN, 0}};
        int n = poll(pf, p->fifo >= 0 ? 3 : 2, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || __atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) return 0;
        if (p->fifo >= 0 && pf[2].revents) {
            tracec_i_fifo_packet pk;
            ssize_t k = recv(p->fifo, &pk, sizeof pk, MSG_DONTWAIT);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) return 1; /* peer closed the fifo */
            if (k == (ssize_t)sizeof pk && pk.type == TRACEC_I_FIFO_BUFFER_SAVED)
                __atomic_add_fetch(&p->saved, 1u, __ATOMIC_RELAXED);
        }
        if (pf[0].revents == 0) continue;
        tracec_i_msg *m = malloc(sizeof *m);
        if (m == NULL) return 1;
        int fds[2], nfds = 2;
        ssize_t k = tracec_i_rec_recv(conn, m, fds, &nfds);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EPROTO)) {
            free(m);
            return 1;
        }
        if (k > 0) {
            switch (m->type) {
            case TRACEC_I_MSG_REGISTERED:
                pthread_mutex_lock(&p->mu);
                p->reg_answered = 1;
                p->reg_started = m->a != 0;
                pthread_cond_broadcast(&p->cv);
                pthread_mutex_unlock(&p->mu);
                break;
            case TRACEC_I_MSG_INITIALIZE:
                on_initialize(p, m, fds, nfds);
                nfds = 0;
                break;
            case TRACEC_I_MSG_START:
                on_start(p, m);
                break;
            case TRACEC_I_MSG_STOP:
                on_stop(p);
                break;
            case TRACEC_I_MSG_TERMINATE:
                if (p->initialized) {
                    on_stop(p); /* Terminate stops first */
                    teardown(p, 0);
                }
                break;
            default:
                break;
            }
        }
        for (int i = 0; i < nfds; i++) close(fds[i]);
        free(m);
    }
}

static void *control_main(void *arg) {
    tracec_provider *p = arg;
    while (!__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) {
        char path[sizeof ((struct sockaddr_un *)0)->sun_path];
        int conn = connect_recorder(p, path, sizeof path);
        if (conn < 0) {
            pthread_mutex_lock(&p->mu);
            p->no_recorder = 1;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
            struct pollfd pf = {p->wake[0], POLLIN, 0};
            (void)poll(&pf, 1, 50);
            continue;
        }
        tracec_i_msg *m = calloc(1, sizeof *m);
        if (m == NULL) {
            close(conn);
            break;
        }
        m->type = p->want_sync ? TRACEC_I_MSG_REGISTER_SYNC : TRACEC_I_MSG_REGISTER;
        m->a = (uint32_t)getpid();
        if (p->declared[0])
            snprintf(m->text, sizeof m->text, "%s\n%s", p->name, p->declared);
        else
            snprintf(m->text, sizeof m->text, "%s", p->name);
        /* a new connection, a new sequence: losses of the previous one are not this one's, nor are the
           slices its threads left open (nest_sync) */
        pthread_mutex_lock(&p->lock);
        p->lost_pending = 0;
        __atomic_store_n(&p->conn, next_id(), __ATOMIC_RELEASE);
        pthread_mutex_unlock(&p->lock);
        int ok = tracec_i_rec_send(conn, m, NULL, 0) == 0;
        free(m);
        int lost = ok ? serve(p, conn) : 1;
        teardown(p, lost);
        close(conn);
        if (lost) {
            struct pollfd pf = {p->wake[0], POLLIN, 0};
            (void)poll(&pf, 1, 50);
        }
    }
    return NULL;
}

/* Stops tracing from the program's side and tells the recorder (lock taken here). */
static void stop_self(tracec_provider *p) {
    if (tracec_provider_started(p)) note_stop(p);
    int was = __atomic_exchange_n(&p->started, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&p->lock);
    if (was && p->fifo >= 0) (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STOPPED, 0);
    pthread_mutex_unlock(&p->lock);
}

void tracec_provider_unregister(tracec_provider *p) {
    if (p == NULL || p->forked) return;
    stop_self(p);
    __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
    char c = 1;
    ssize_t w = write(p->wake[1], &c, 1);
    (void)w;
    pthread_join(p->thread, NULL);
    teardown(p, 0);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_lock(&provider_mu);
    if (the_provider == p) the_provider = NULL;
    pthread_mutex_unlock(&provider_mu);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
