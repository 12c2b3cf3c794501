/*
 * recorder_client.c - the provider side of `tracec record`: the recorder
 * client of the track-event layer (tracec_te_recorder_connect, started by
 * itself under $TRACEC_RECORDER_SOCKET) and tracec/provider.h over it:
 * registration, the control thread that obeys Initialize / Start / Stop /
 * Terminate, and the raw packet writers.
 *
 * The recorder's session is one of the te session slots (te_internal.h):
 * Initialize claims a slot (none free: the session is refused, and the
 * recorder is told why), Start opens it on the shared buffer, writes the
 * session packets (descriptors, process track, ClockSnapshot) and sets the
 * slot's bit in the categories the recorder enables (a context holds its
 * list and Start's extras); Stop clears them and closes the slot before
 * the buffer stops; Terminate, the recorder's death or the program's own
 * stop release it.  So every track event goes to the recorder's session as
 * well as to the program's own sessions.
 *
 * The shared buffer is a buffer of the buffer engine placed in the
 * recorder's memfd (TRACEC_BUFFER_MEMORY_MEMFD) with handoff delivery: a
 * handed region becomes a SAVE_BUFFER on the fifo, a BUFFER_SAVED becomes
 * tracec_buffer_region_saved.  Each writing thread writes with its own
 * buffer writer (thread-local, lock-free) and its own packet sequence: its
 * packets carry a trusted_packet_sequence_id local to this process, which
 * the recorder maps to one of the trace's (record_seq.h).  Stop stops the
 * buffer's context, which waits for the packets in flight and hands what
 * is left, before STOPPED is sent.
 *
 * Locks: none on the write path.  `ctl` is taken by the control thread
 * while it creates or tears down the buffer and the fifo, and by the
 * program's own stop (unregister, exit); `mu`/`cv` carry registration and
 * start notifications, the categories and the counters of earlier buffers.
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
#include "te_internal.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/provider.h"
#include "tracec/registry.h"
#include "tracec/track_event.h"

struct tracec_provider {
    /* The control thread's receive buffer (a message is about 10 KiB): here, not on its stack or the heap per
       message, so a fork child, which has no control thread, still reaches it (no leak reported at its exit). */
    tracec_i_msg rx;
    char name[TRACEC_I_NAME_MAX + 1];
    pthread_t thread;
    int wake[2]; /* a pipe: unregister wakes the control thread */
    int quit;
    int forked; /* this is a fork child of the process that registered */
    int te_owned; /* started by the track-event layer (tracec_te_recorder_connect): declares its categories */
    char socket_path[sizeof ((struct sockaddr_un *)0)->sun_path]; /* "": $TRACEC_RECORDER_SOCKET, else the well-known */
    int slot;     /* the te slot of the recorder's session (-1: none; claimed at Initialize, control thread) */
    int slot_open; /* the slot is open on the buffer (a run is on; changed under ctl) */
    tracec_buffering_mode_t mode; /* the buffer's */
    uint32_t clock_id;            /* the session's clock (a BuiltinClock): BOOTTIME, then Initialize's */
    int te_packets; /* the run's te session packets are written (categories are registered: te events may come) */

    int started;          /* atomic; set after the run's first packets, cleared before the buffer stops */
    uint64_t run;         /* atomic; a new value (next_id) at each start */
    uint64_t conn;        /* atomic; a new value (next_id) at each connection to a recorder (new sequences) */
    uint64_t stop_run, stop_ts; /* atomic; the last run stopped and when (slices open then end there) */

    /* the recording (control thread; changed under ctl) */
    pthread_mutex_t ctl;
    int initialized;
    int fifo;
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    uint64_t buf_handle;  /* atomic: the buffer the writers write (0: none) */
    uint32_t max_wait_ms; /* the application's cap on the recorder's wait */

    /* categories (under mu) */
    char categories[TRACEC_I_TEXT_MAX + 1]; /* enabled by Initialize ("" = all, unless no_categories) */
    int no_categories;                      /* none of the declared categories is enabled */
    char extra[TRACEC_I_TEXT_MAX + 1];
    char declared[TRACEC_I_MAX_CATEGORIES * (TRACEC_I_CATEGORY_MAX + 1u)]; /* the categories given at registration */

    /* registration (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int want_sync, reg_answered, reg_started, no_recorder;
    int said_unanswered; /* under mu: the exit said that the recorder never answered */
    int waiters;         /* under mu: threads in a synchronous registration's wait */
    int quitting;        /* under mu: unregister began; the waits end */
    int start_refused;   /* under mu: this provider refused the recorder's session (no free slot) */
    int gave_up;         /* under mu: a synchronous registration stopped waiting for a recorder it found */
    int recorder_seen;   /* under mu: a recorder listened (connected, or its queue was full) ... */
    char seen_path[sizeof ((struct sockaddr_un *)0)->sun_path]; /* ... at this socket (under mu) */
    int first_start_done; /* under mu: the first Start was handled (run header written): register_sync waits for it */

    /* counters: of the buffers torn down (under mu), and atomics */
    uint64_t old_produced, old_dropped;
    uint64_t runs, saved, lost, refused;
    char last_refusal[256]; /* control thread only: the last refusal said on stderr (said once) */
};

static tracec_provider *the_provider; /* one per process */
static pthread_mutex_t provider_mu = PTHREAD_MUTEX_INITIALIZER;
/*
 * A writing thread's state (initial-exec, so a read is not a __tls_get_addr
 * call in the PIC library): its buffer writer, the buffer it is bound to,
 * its sequence, the run its TrackDescriptor was written in, and whether its
 * last packet was lost.
 */
typedef struct thread_state {
    tracec_buffer_writer bw;
    uint64_t handle;  /* the buffer bw is bound to (0: none) */
    uint64_t seq;     /* its trusted_packet_sequence_id, local to the process (0: none yet) */
    uint64_t conn;    /* the connection `run` and `lost` belong to */
    uint64_t run;     /* the run its descriptor was written in */
    int lost;         /* a packet of its sequence was lost: the next one written says so */
} thread_state;
static __thread thread_state tstate __attribute__((tls_model("initial-exec")));

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

/* Now on the recorder's session clock: the trace's, which a timestamp without a clock id is on. */
static uint64_t session_now_ns(const tracec_provider *p) {
    return tracec_i_rec_clock_ns(__atomic_load_n(&p->clock_id, __ATOMIC_RELAXED));
}

/* Notes when the current run stops, before `started` is cleared: the slices open then end there. */
static void note_stop(tracec_provider *p) {
    __atomic_store_n(&p->stop_ts, session_now_ns(p), __ATOMIC_RELAXED);
    __atomic_store_n(&p->stop_run, __atomic_load_n(&p->run, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
}

/* A recorder was there but never answered (it was busy with many programs at once, or stopped): nothing this
   process wrote reached it, and the recorder may not know of it at all.  Said once, at exit or unregister. */
static void say_if_unanswered(tracec_provider *p) {
    pthread_mutex_lock(&p->mu);
    if (p->recorder_seen && !p->reg_answered && !p->said_unanswered) {
        p->said_unanswered = 1;
        fprintf(stderr,
                "tracec provider %s (pid %d): the recorder at %s did not answer it before it ended: none of its "
                "events are in that recorder's trace\n",
                p->name, (int)getpid(), p->seen_path);
    }
    pthread_mutex_unlock(&p->mu);
}

/* At exit the provider stops itself (STOPPED on the fifo), so the recorder
   does not count a program that simply ended as a provider that died. */
static void provider_at_exit(void) {
    pthread_mutex_lock(&provider_mu);
    tracec_provider *p = the_provider;
    pthread_mutex_unlock(&provider_mu);
    if (p == NULL || p->forked) return;
    stop_self(p);
    say_if_unanswered(p);
}
/* A fork child has no mapping of the parent's buffer (the engine does not
   map a memfd buffer into fork children) and no control thread: its
   provider is off for good, and unregister in the child only forgets it. */
static void provider_after_fork_child(void) {
    tracec_provider *p = the_provider;
    if (p) {
        __atomic_store_n(&p->started, 0, __ATOMIC_RELAXED);
        p->forked = 1;
        if (p->slot >= 0 && p->slot_open) { /* the recorder's session is off in the child */
            tracec_i_te_slot_set_categories(p->slot, p->ctx, 0);
            tracec_i_te_slot_close(p->slot);
        }
    }
}
static void install_at_exit(void) {
    atexit(provider_at_exit);
    pthread_atfork(NULL, NULL, provider_after_fork_child);
}
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;
/*
 * The same hook again once the buffer runtime has its own (made by the first
 * context of the process): exit handlers run last-registered first, so this
 * one stops the session while its buffer still accepts, and the events the
 * te layer dropped reach the buffer's counters (slot_off) and the trace.  A
 * hook registered at registration only would run after the runtime had
 * stopped the buffer.  Stopping twice is stopping once.
 */
static void install_at_exit_after_runtime(void) { atexit(provider_at_exit); }
static pthread_once_t at_exit_after_runtime_once = PTHREAD_ONCE_INIT;

/* ---- registration ------------------------------------------------------------ */

/* How long a synchronous registration waits for the answer of a recorder it found (with none, it returns at once):
   one that many programs connect to at once (`tracec record -- make -j`) answers each in turn, and a program that
   goes on before its answer is not recorded; then up to 1 s more for Start. */
#define REGISTER_ANSWER_WAIT_S 5

static tracec_status_t do_register(const char *name, const char *categories, int sync, int max_wait_ms,
                                   const char *socket_path, int te_owned, bool *started, tracec_provider **out) {
    if (out) *out = NULL;
    if (name == NULL || out == NULL || name[0] == '\0' || strlen(name) > TRACEC_I_NAME_MAX ||
        !tracec_i_rec_text_ok(name, strlen(name)) || max_wait_ms < -1 || max_wait_ms > 10000)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (categories == NULL) categories = "";
    if (!tracec_i_rec_categories_ok(categories)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (socket_path != NULL && (socket_path[0] == '\0' || strlen(socket_path) >= sizeof ((struct sockaddr_un *)0)->sun_path))
        return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&provider_mu);
    if (the_provider != NULL && the_provider->te_owned && !te_owned && !the_provider->forked) {
        /* the track-event layer's client runs: it is this process's provider, now the caller's */
        tracec_provider *p = the_provider;
        p->te_owned = 0;
        pthread_mutex_unlock(&provider_mu);
        bool on = sync ? tracec_provider_wait_started(p, 1000) : tracec_provider_started(p);
        if (started) *started = on;
        *out = p;
        return TRACEC_STATUS_SUCCESS;
    }
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
    p->clock_id = 6u; /* BOOTTIME until a recorder's session names its clock */
    snprintf(p->declared, sizeof p->declared, "%s", categories);
    if (socket_path != NULL) snprintf(p->socket_path, sizeof p->socket_path, "%s", socket_path);
    p->te_owned = te_owned;
    p->slot = -1;
    p->fifo = -1;
    p->want_sync = sync;
    p->max_wait_ms = max_wait_ms == 0 ? TRACEC_PROVIDER_MAX_WAIT_DEFAULT_MS : max_wait_ms < 0 ? 0u : (uint32_t)max_wait_ms;
    pthread_mutex_init(&p->ctl, NULL);
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
    p->waiters = sync; /* before another thread can see p (provider_mu): its unregister waits for this wait */
    the_provider = p;
    pthread_mutex_unlock(&provider_mu);
    pthread_once(&at_exit_once, install_at_exit);
    if (sync) {
        /* p stays allocated while this waits: an unregister from another thread ends the wait (quitting) and
           waits for `waiters` to leave before it frees p */
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += REGISTER_ANSWER_WAIT_S;
        pthread_mutex_lock(&p->mu);
        while (!p->reg_answered && !p->no_recorder && !p->quitting)
            if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) break;
        /* The recorder is tracing: its Initialize and Start follow the answer.  Report "started" only once
           this provider has handled them, so the caller's first event is written, not refused: up to 1 s
           from the answer, less if this provider refuses the session. */
        if (p->reg_answered && p->reg_started) {
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += 1;
            while (!p->first_start_done && !p->no_recorder && !p->quitting && !p->start_refused)
                if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) break;
        }
        if (started) *started = p->first_start_done && tracec_provider_started(p);
        /* A recorder it found (one that is tracing, or that has not answered yet) has not started it: the program
           goes on, and its events until the Start are not recorded.  Said now; the Start, if it comes, tells the
           recorder it came late. */
        if (!p->first_start_done && !p->quitting && !p->start_refused && !p->no_recorder &&
            (p->reg_answered ? p->reg_started : p->recorder_seen)) {
            p->gave_up = 1;
            fprintf(stderr,
                    "tracec provider %s (pid %d): the recorder at %s has not started it after %d s: its events until "
                    "then are not recorded\n",
                    p->name, (int)getpid(), p->seen_path, p->reg_answered ? 1 : REGISTER_ANSWER_WAIT_S);
        }
        if (--p->waiters == 0 && p->quitting) pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    *out = p;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_provider_register(const char *name, tracec_provider **out) {
    return do_register(name, NULL, 0, 0, NULL, 0, NULL, out);
}

tracec_status_t tracec_provider_register_sync(const char *name, bool *started, tracec_provider **out) {
    if (started) *started = false;
    return do_register(name, NULL, 1, 0, NULL, 0, started, out);
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
    return do_register(config->name, config->categories, config->synchronous, max_wait, NULL, 0, started, out);
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
    pthread_mutex_lock(&p->mu);
    size_t n = strlen(category);
    bool on = tracec_provider_started(p) &&
              ((!p->no_categories && (p->categories[0] == '\0' || tracec_i_rec_list_has(p->categories, category, n))) ||
               tracec_i_rec_list_has(p->extra, category, n));
    pthread_mutex_unlock(&p->mu);
    return on;
}

/* ---- the packet writers -------------------------------------------------------- */

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

/* Binds the thread's writer to the current buffer, and its sequence state to the current connection;
   false: there is no buffer to write. */
static bool writer_ready(tracec_provider *p, thread_state *t) {
    uint64_t h = __atomic_load_n(&p->buf_handle, __ATOMIC_ACQUIRE);
    if (h == 0) return false;
    if (t->handle != h) {
        if (t->handle != 0) tracec_buffer_writer_release(&t->bw); /* its buffer is gone: only forgotten */
        t->handle = 0;
        tracec_buffer_id_t id = {h};
        if (tracec_buffer_writer_init(&t->bw, id, 0) != TRACEC_STATUS_SUCCESS) {
            tracec_buffer_writer_release(&t->bw);
            return false;
        }
        t->handle = h;
    }
    uint64_t conn = __atomic_load_n(&p->conn, __ATOMIC_ACQUIRE);
    if (t->conn != conn) { /* a new connection, new sequences: losses of the previous one are not theirs */
        t->conn = conn;
        t->lost = 0;
        t->run = 0;
    }
    if (t->seq == 0) t->seq = tracec_i_te_new_sequence_id(); /* the te sequences' ids: one space per process */
    return true;
}

/* Ends a packet begun on the thread's writer: its sequence id and the loss mark appended (they win over
   anything the caller set), the loss noted for the next packet. */
static tracec_status_t end_on(thread_state *t, tracec_writer *w, tracec_msg *packet) {
    perfetto_protos_TracePacket *pkt = (perfetto_protos_TracePacket *)(void *)packet;
    /* The first packet after a dropped one carries previous_packet_dropped, as Perfetto's trace writers
       mark it.  If this packet is dropped too, the mark waits for the next. */
    if (t->lost) perfetto_protos_TracePacket_set_previous_packet_dropped(pkt, true);
    perfetto_protos_TracePacket_set_trusted_packet_sequence_id(pkt, (uint32_t)t->seq);
    tracec_status_t st = tracec_buffer_end_packet(&t->bw, w, packet);
    if (st == TRACEC_STATUS_SUCCESS)
        t->lost = 0;
    else if (st != TRACEC_STATUS_CLOSED && st != TRACEC_STATUS_BUFFER_NOT_FOUND)
        t->lost = 1;
    return st;
}

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

/* The calling thread's TrackDescriptor (a child of the process's track), on its own sequence: durable
   where the buffer has a durable part, so no switch or wrap loses it. */
static tracec_status_t put_thread_descriptor(tracec_provider *p, thread_state *t) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackDescriptor td;
    perfetto_protos_ThreadDescriptor th;
    char name[32] = "";
    (void)pthread_getname_np(pthread_self(), name, sizeof name);
    tracec_buffer_begin_packet(&t->bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR,
                               &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, session_now_ns(p));
    perfetto_protos_TracePacket_begin_track_descriptor(&pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, tracec_provider_thread_track_uuid(p));
    perfetto_protos_TrackDescriptor_set_parent_uuid(&td, tracec_te_process_track_uuid());
    perfetto_protos_TrackDescriptor_begin_thread(&td, &th);
    perfetto_protos_ThreadDescriptor_set_pid(&th, (int32_t)getpid());
    perfetto_protos_ThreadDescriptor_set_tid(&th, (int32_t)my_tid());
    if (name[0]) perfetto_protos_ThreadDescriptor_set_cstr_thread_name(&th, name);
    perfetto_protos_TrackDescriptor_end_thread(&td, &th);
    perfetto_protos_TracePacket_end_track_descriptor(&pkt, &td);
    return end_on(t, &w, &pkt.msg);
}

/* Starts a packet on the thread's writer (tracing on, writer ready). */
static void begin_on(tracec_provider *p, thread_state *t, tracec_writer *w, tracec_msg *packet) {
    /* A thread's first packet of a run describes the thread first (whoever writes the packet: the
       helpers or the caller by hand), so its events land on its named track.  Retried if dropped. */
    uint64_t run = __atomic_load_n(&p->run, __ATOMIC_ACQUIRE);
    if (t->run != run && put_thread_descriptor(p, t) == TRACEC_STATUS_SUCCESS) t->run = run;
    tracec_buffer_begin_packet(&t->bw, w, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, packet);
}

void tracec_provider_begin_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    thread_state *t = &tstate;
    if (!tracec_provider_started(p) || !writer_ready(p, t)) {
        dead_writer(w, packet);
        return;
    }
    begin_on(p, t, w, packet);
}

tracec_status_t tracec_provider_end_packet(tracec_provider *p, tracec_writer *w, tracec_msg *packet) {
    thread_state *t = &tstate;
    if (p == NULL || w == NULL || packet == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (w->sink != (void *)&t->bw) return w->status != TRACEC_STATUS_SUCCESS ? w->status : TRACEC_STATUS_CLOSED;
    return end_on(t, w, packet);
}

/* ---- track events ---------------------------------------------------------------- */

uint64_t tracec_provider_thread_track_uuid(tracec_provider *p) {
    (void)p;
    return tracec_te_thread_track_uuid(); /* the thread's one track: its track events' too */
}

uint32_t tracec_provider_clock_id(tracec_provider *p) {
    return p != NULL ? __atomic_load_n(&p->clock_id, __ATOMIC_RELAXED) : 6u;
}

uint64_t tracec_provider_now_ns(tracec_provider *p) { return tracec_i_rec_clock_ns(tracec_provider_clock_id(p)); }

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
 * on).  A new connection is another sequence (or
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

/* One track event on the thread's track at `ts` (tracing on, writer ready); the packet's status. */
static tracec_status_t put_event(tracec_provider *p, thread_state *ts_, uint32_t type, const char *name, uint64_t ts) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TrackEvent ev;
    begin_on(p, ts_, &w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, ts);
    perfetto_protos_TracePacket_begin_track_event(&pkt, &ev);
    perfetto_protos_TrackEvent_set_type(&ev, (perfetto_protos_TrackEvent_Type)type);
    perfetto_protos_TrackEvent_set_track_uuid(&ev, tracec_provider_thread_track_uuid(p));
    if (name) perfetto_protos_TrackEvent_set_cstr_name(&ev, name);
    perfetto_protos_TracePacket_end_track_event(&pkt, &ev);
    return end_on(ts_, &w, &pkt.msg);
}

/*
 * Writes the ENDs the thread owes (tracing on), oldest first,
 * each with its own, earlier timestamp: the reader sorts by time, so each
 * closes its slice where it ended.  Stops at the first one refused; SUCCESS
 * when none is owed any more.
 */
static tracec_status_t write_owed(tracec_provider *p, thread_state *ws, nest_state *t) {
    while (t->nowed != 0) {
        tracec_status_t st = put_event(p, ws, perfetto_protos_TrackEvent_TYPE_SLICE_END, NULL, t->owed[0].ts);
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
    thread_state *ws = &tstate;
    if (p == NULL) return TRACEC_STATUS_CLOSED;
    if (tracec_provider_started(p) && writer_ready(p, ws)) goto on;
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
    if (type != perfetto_protos_TrackEvent_TYPE_SLICE_END && t->nlive != 0 && t->nlive <= 64u && (t->written & 1u) == 0) {
        /* inside a slice whose BEGIN is not in the trace: it would land at another depth, so it is not
           written either, and counted lost; a BEGIN is a level not written (its END is not written) */
        if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) nest_push(t, false);
        (void)tracec_buffer_count_lost(p->buf, 1u);
        st = TRACEC_STATUS_SUCCESS;
        goto out;
    }
    if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN && t->nowed != 0) {
        /* the owed ENDs first: one written after this BEGIN would close it instead of its own slice */
        st = write_owed(p, ws, t);
        if (st != TRACEC_STATUS_SUCCESS) { /* the refused END is counted and stands for this BEGIN */
            nest_push(t, false);
            goto out;
        }
    }
    uint64_t ts = session_now_ns(p);
    st = put_event(p, ws, type, name, ts);
    if (st == TRACEC_STATUS_SUCCESS) {
        t->last_ts = ts;
        if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) nest_push(t, true);
        if (t->nowed != 0) (void)write_owed(p, ws, t); /* after a written event: a full buffer is not asked again */
    } else if (type == perfetto_protos_TrackEvent_TYPE_SLICE_BEGIN) {
        nest_push(t, false);
    } else if (type == perfetto_protos_TrackEvent_TYPE_SLICE_END) {
        owe(t, ts, 1); /* its slice is open in the trace: ended after the thread's next written event */
    }
out:
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

/* The counters of the current buffer (p->mu held): packets begun, and of them lost. */
static void buffer_counts(tracec_provider *p, uint64_t *produced, uint64_t *dropped) {
    *produced = *dropped = 0;
    tracec_buffer_stats_t bs;
    if (__atomic_load_n(&p->buf_handle, __ATOMIC_ACQUIRE) == 0 ||
        tracec_query_buffer_stats(p->buf, &bs) != TRACEC_STATUS_SUCCESS)
        return;
    *produced = bs.accepted + bs.dropped + bs.refused;
    *dropped = bs.dropped + bs.refused + bs.overwritten;
}

tracec_provider_stats tracec_provider_get_stats(tracec_provider *p) {
    tracec_provider_stats s;
    memset(&s, 0, sizeof s);
    if (p == NULL) return s;
    uint64_t produced, dropped, layer = 0;
    pthread_mutex_lock(&p->ctl);
    if (p->slot >= 0 && p->slot_open) /* the events the te layer dropped in this run (slot_off() adds them) */
        layer = __atomic_load_n(&tracec_i_te_slots[p->slot].lost, __ATOMIC_RELAXED) -
                __atomic_load_n(&tracec_i_te_slots[p->slot].published, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&p->mu);
    buffer_counts(p, &produced, &dropped);
    s.produced = p->old_produced + produced + layer;
    s.dropped = p->old_dropped + dropped + layer;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->ctl);
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
    perfetto_protos_TracePacket_set_timestamp(pkt, session_now_ns(p));
    perfetto_protos_TracePacket_set_sequence_flags(pkt, 1u); /* SEQ_INCREMENTAL_STATE_CLEARED */
    perfetto_protos_TracePacket_begin_track_descriptor(pkt, &td);
    perfetto_protos_TrackDescriptor_set_uuid(&td, tracec_te_process_track_uuid());
    perfetto_protos_TrackDescriptor_begin_process(&td, &pd);
    perfetto_protos_ProcessDescriptor_set_pid(&pd, (int32_t)getpid());
    perfetto_protos_ProcessDescriptor_set_cstr_process_name(&pd, p->name);
    perfetto_protos_TrackDescriptor_end_process(&td, &pd);
    perfetto_protos_TracePacket_end_track_descriptor(pkt, &td);
}

/* What a descriptor packet holds: `fn` writes it into `pkt`. */
typedef void (*descriptor_fn)(tracec_provider *p, perfetto_protos_TracePacket *pkt, const void *arg);

/* One packet that describes the provider, on the provider's own sequence (no sequence id: the recorder
   gives such packets the provider's default sequence); durable where the buffer has a durable part. */
static void put_descriptor(tracec_provider *p, tracec_buffer_writer *bw, uint32_t kind, descriptor_fn fn,
                           const void *arg) {
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    tracec_buffer_begin_packet(bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, kind, &pkt.msg);
    fn(p, &pkt, arg);
    (void)tracec_buffer_end_packet(bw, &w, &pkt.msg); /* a loss is counted by the buffer */
}

/* The packets every run starts with, before any event (the context started, `started` not set yet):
   extension descriptors, the process track. */
static void write_run_header(tracec_provider *p) {
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, p->buf, 0) != TRACEC_STATUS_SUCCESS) {
        tracec_buffer_writer_release(&bw);
        return;
    }
    if (!p->te_packets) /* else the te session packets hold them */
        for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d))
            if (!is_own_schema(d))
                put_descriptor(p, &bw, TRACEC_BUFFER_TRACING_EXTENSION_DESCRIPTOR, extension_descriptor, d);
    put_descriptor(p, &bw, TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR, process_descriptor, NULL);
    tracec_buffer_writer_release(&bw);
}

/* The buffer handed a region: the recorder is told on the fifo (the buffer's callback thread). */
static void on_handoff(tracec_buffer_id_t buffer_id, uint32_t region, uint64_t gen, uint32_t extent, void *data) {
    (void)buffer_id;
    tracec_provider *p = data;
    (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_SAVE_BUFFER, region, gen, extent);
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

/* How long a connect() may take (a recorder whose accept queue is full: EAGAIN at once, retried soon). */
#define CONNECT_TIMEOUT_MS 100
/* connect_recorder's answers besides a socket */
#define CONNECT_NONE (-1) /* no recorder there (no socket, none listening, or refused) */
#define CONNECT_BUSY (-2) /* a recorder listens but its queue of connections is full: it is not "none" */

static int connect_recorder(tracec_provider *p, char *path, size_t cap) {
    const char *env = p->socket_path[0] ? p->socket_path : getenv(TRACEC_RECORDER_SOCKET_ENV);
    if (env && env[0] && strcmp(env, "default") != 0)
        snprintf(path, cap, "%s", env);
    else
        tracec_i_rec_default_socket(path, cap, NULL, 0);
    char why[200];
    struct stat st;
    if (lstat(path, &st) != 0) return CONNECT_NONE; /* no recorder (yet) */
    if (!tracec_i_rec_socket_dir_ok(path, why, sizeof why)) {
        refuse(p, path, why);
        return CONNECT_NONE;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return CONNECT_NONE;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int ok = 0, busy = errno == EAGAIN;
        if (errno == EINPROGRESS) { /* never blocks: waits up to the timeout, or until unregister */
            struct pollfd pf[2] = {{fd, POLLOUT, 0}, {p->wake[0], POLLIN, 0}};
            int err = 0;
            socklen_t el = sizeof err;
            int k = poll(pf, 2, CONNECT_TIMEOUT_MS);
            ok = k > 0 && pf[0].revents != 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
            busy = k == 0 || err == EAGAIN;
        }
        if (!ok) { /* EAGAIN: its accept queue is full; ENOENT, ECONNREFUSED: none listens */
            close(fd);
            return busy ? CONNECT_BUSY : CONNECT_NONE;
        }
    }
    if (!tracec_i_rec_peer_ok(fd, NULL, NULL, why, sizeof why)) { /* before anything is sent */
        refuse(p, path, why);
        close(fd);
        return CONNECT_NONE;
    }
    p->last_refusal[0] = '\0';
    return fd;
}

/*
 * The recorder's session leaves the te slot (ctl held): its categories'
 * bits first, then the slot closes (a thread that raced the bits drops
 * its event), then the control thread's own open typed event, if any, is
 * given up.  The buffer is stopped by the caller afterwards.
 */
static void slot_off(tracec_provider *p) {
    if (p->slot < 0 || !p->slot_open) return;
    int entered = tracec_i_te_session_enter();
    tracec_i_te_slot_enable(p->slot, p->ctx, 0);
    tracec_i_te_slot_close(p->slot);
    tracec_i_te_thread_abandon(p->slot);
    tracec_i_te_session_leave(entered);
    p->slot_open = 0;
    /* the events the te layer dropped in this run (misuse, no memory) are losses of the recorder's session:
       counted in the shared buffer, whose counters the recorder's trace_stats show (the part not counted
       there as they grew) */
    tracec_i_te_slot_publish_lost(p->slot);
}

/* This provider refused the recorder's Initialize or session: a synchronous registration waits no longer for its
   Start. */
static void end_start_wait(tracec_provider *p) {
    pthread_mutex_lock(&p->mu);
    p->start_refused = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* A recorder refused at its Initialize. */
static void refuse_initialize(tracec_provider *p, const char *why) {
    refuse(p, "its Initialize", why);
    end_start_wait(p);
}

/* Says on stderr and to the recorder why its session is refused (control thread). */
static void refuse_session(tracec_provider *p, int conn, const char *why) {
    __atomic_add_fetch(&p->refused, 1u, __ATOMIC_RELAXED);
    end_start_wait(p);
    fprintf(stderr, "tracec provider %s: refused the recorder's session: %s\n", p->name, why);
    tracec_i_msg *m = calloc(1, sizeof *m);
    if (m == NULL) return;
    m->type = TRACEC_I_MSG_REFUSED;
    snprintf(m->text, sizeof m->text, "%s", why);
    (void)tracec_i_rec_send(conn, m, NULL, 0);
    free(m);
}

/* Drops the buffer and the fifo; `lost`: the recorder vanished. */
static void teardown(tracec_provider *p, int lost) {
    /* off first: no new packet begins; stopping the context waits for the packets in flight */
    if (tracec_provider_started(p)) note_stop(p);
    int was = __atomic_exchange_n(&p->started, 0, __ATOMIC_SEQ_CST);
    if (was && lost) __atomic_add_fetch(&p->lost, 1u, __ATOMIC_RELAXED);
    pthread_mutex_lock(&p->ctl);
    if (p->initialized) {
        slot_off(p);
        (void)tracec_stop_context(p->ctx); /* releases writers waiting for room, whatever the recorder does */
        pthread_mutex_lock(&p->mu);
        uint64_t produced, dropped;
        buffer_counts(p, &produced, &dropped);
        p->old_produced += produced;
        p->old_dropped += dropped;
        __atomic_store_n(&p->buf_handle, (uint64_t)0, __ATOMIC_RELEASE); /* writers rebind to nothing */
        pthread_mutex_unlock(&p->mu);
        (void)tracec_destroy_buffer(p->buf);
        (void)tracec_destroy_context(p->ctx);
    }
    if (p->slot >= 0) tracec_i_te_slot_release(p->slot);
    p->slot = -1;
    if (p->fifo >= 0) close(p->fifo);
    p->fifo = -1;
    p->initialized = 0;
    pthread_mutex_unlock(&p->ctl);
}

/*
 * Initializes the buffer's context with the categories the recorder
 * enables for this session: all (ALL_CATEGORIES), its list, or none but
 * Start's extras (NO_CATEGORIES: a name no category has stands for the
 * empty list).
 */
static tracec_status_t init_categories(tracec_provider *p, const tracec_i_msg *m) {
    static const char *const nothing[] = {"\x1f"};
    tracec_provider_config_t pc = TRACEC_PROVIDER_CONFIG_INIT;
    const char *names[TRACEC_I_MAX_CATEGORIES];
    char *list = NULL;
    size_t n = 0;
    pc.name = p->name;
    if (m->a & TRACEC_I_INIT_ALL_CATEGORIES) {
        /* every category: the context's empty list (categories not declared included) */
    } else if (m->a & TRACEC_I_INIT_NO_CATEGORIES) {
        pc.categories = nothing;
        pc.num_categories = 1;
    } else if (m->text[0] != '\0') {
        if ((list = strdup(m->text)) == NULL) return TRACEC_STATUS_OUT_OF_MEMORY;
        for (char *save = NULL, *c = strtok_r(list, ",", &save); c != NULL && n < TRACEC_I_MAX_CATEGORIES;
             c = strtok_r(NULL, ",", &save))
            names[n++] = c;
        pc.categories = names;
        pc.num_categories = n;
    }
    tracec_status_t st = tracec_initialize_context(p->ctx, &pc);
    free(list);
    return st;
}

static void on_initialize(tracec_provider *p, int conn, const tracec_i_msg *m, const int *fds, int nfds) {
    char why[160];
    if (p->initialized) goto ignore; /* a second Initialize before Terminate is ignored */
    if (nfds != 2) {
        snprintf(why, sizeof why, "%d file descriptors, not a buffer and a fifo", nfds);
        refuse_initialize(p, why);
        goto ignore;
    }
    uint64_t version = m->c >> TRACEC_I_INIT_VERSION_SHIFT;
    if (version != TRACEC_I_PROTOCOL_VERSION) {
        snprintf(why, sizeof why, "it speaks protocol version %llu, this provider %u",
                 (unsigned long long)(version ? version : 1u), TRACEC_I_PROTOCOL_VERSION);
        refuse_initialize(p, why);
        goto ignore;
    }
    uint32_t mode = m->a & 0xffu, wait_ms = (m->a >> 8) & TRACEC_I_INIT_WAIT_MASK;
    uint32_t policy = (m->a >> TRACEC_I_INIT_POLICY_SHIFT) & 0xfu;
    uint64_t size = m->b, durable = m->c & TRACEC_I_INIT_DURABLE_MASK;
    uint32_t clock_id = (uint32_t)(m->c >> TRACEC_I_INIT_CLOCK_SHIFT) & 0xffu;
    if (clock_id == 0) clock_id = 6u; /* as in a session's config: BOOTTIME */
    why[0] = '\0';
    if (mode < TRACEC_BUFFERING_MODE_ONESHOT || mode > TRACEC_BUFFERING_MODE_STREAMING)
        snprintf(why, sizeof why, "a buffering mode (%u) out of range", mode);
    else if (tracec_i_te_clockid_of(clock_id) < 0)
        snprintf(why, sizeof why, "a session clock (%u) that is not BOOTTIME (6), MONOTONIC (3) or REALTIME (1)",
                 clock_id);
    else if (size == 0 || size > TRACEC_MAX_BUFFER_SIZE || durable > TRACEC_MAX_BUFFER_SIZE ||
             policy >= TRACEC_BUFFER_POLICY_LAST)
        snprintf(why, sizeof why, "a buffer size (%llu), durable size (%llu) or policy (%u) out of range",
                 (unsigned long long)size, (unsigned long long)durable, policy);
    if (why[0] != '\0') {
        refuse_initialize(p, why);
        goto ignore;
    }
    size_t need = tracec_buffer_memory_size((tracec_buffering_mode_t)mode, (size_t)size, (size_t)durable);
    /* its size sealed before it is mapped: a recorder that could shrink it would kill us with SIGBUS */
    if (need == 0 || !tracec_i_rec_buffer_sealed(fds[0], need, why, sizeof why)) {
        refuse_initialize(p, need == 0 ? "a buffer geometry out of range" : why);
        goto ignore;
    }
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = (tracec_buffering_mode_t)mode;
    cfg.size = (size_t)size;
    cfg.durable_size = (size_t)durable;
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = fds[0];
    cfg.handoff = on_handoff;
    cfg.handoff_data = p;
    if (mode == TRACEC_BUFFERING_MODE_STREAMING) {
        /* the recorder's wait, capped by the application's: 0 drops at once */
        uint32_t ms = wait_ms < p->max_wait_ms ? wait_ms : p->max_wait_ms;
        cfg.policy = policy == TRACEC_BUFFER_POLICY_LOSSLESS && ms > 0 ? TRACEC_BUFFER_POLICY_LOSSLESS
                                                                       : TRACEC_BUFFER_POLICY_DISCARD;
        cfg.max_wait_ms = ms > 0 ? ms : 1u;
        cfg.watermark = cfg.size; /* a half is handed when it is full (or at a flush, a stop) */
    } else {
        cfg.policy = TRACEC_BUFFER_POLICY_NONE;
    }
    /* the recorder's session is one of the te sessions: a slot of its own, or no session */
    int slot = tracec_i_te_slot_claim();
    if (slot < 0) {
        snprintf(why, sizeof why, "no free session slot (%d active)", TRACEC_TE_MAX_SESSIONS);
        refuse_session(p, conn, why);
        /* connected, without a buffer: the fifo stays open (closing it would say the provider died, and
           it would connect and be refused again) until the recorder ends the session */
        close(fds[0]);
        pthread_mutex_lock(&p->ctl);
        if (p->fifo < 0) p->fifo = fds[1];
        else close(fds[1]);
        pthread_mutex_unlock(&p->ctl);
        return;
    }
    pthread_mutex_lock(&p->ctl);
    p->fifo = fds[1]; /* before the buffer exists: its handoffs use it */
    tracec_status_t st = tracec_create_context(&p->ctx);
    if (st == TRACEC_STATUS_SUCCESS) {
        pthread_once(&at_exit_after_runtime_once, install_at_exit_after_runtime);
        st = init_categories(p, m);
        if (st == TRACEC_STATUS_SUCCESS) st = tracec_create_buffer_with_config(p->ctx, &cfg, &p->buf);
        if (st != TRACEC_STATUS_SUCCESS) (void)tracec_destroy_context(p->ctx);
    }
    if (st != TRACEC_STATUS_SUCCESS) {
        tracec_i_te_slot_release(slot);
        p->fifo = -1;
        pthread_mutex_unlock(&p->ctl);
        snprintf(why, sizeof why, "its buffer: %s", tracec_status_str(st));
        refuse_initialize(p, why);
        goto ignore;
    }
    close(fds[0]); /* the buffer keeps its mapping */
    pthread_mutex_lock(&p->mu);
    snprintf(p->categories, sizeof p->categories, "%s", m->text);
    p->no_categories = (m->a & TRACEC_I_INIT_NO_CATEGORIES) != 0;
    p->extra[0] = '\0';
    __atomic_store_n(&p->buf_handle, p->buf.handle, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&p->mu);
    p->slot = slot;
    p->mode = (tracec_buffering_mode_t)mode;
    __atomic_store_n(&p->clock_id, clock_id, __ATOMIC_RELAXED); /* read by writers after `started` */
    p->initialized = 1;
    pthread_mutex_unlock(&p->ctl);
    return;
ignore:
    for (int i = 0; i < nfds; i++) close(fds[i]);
}

static void on_start(tracec_provider *p, const tracec_i_msg *m) {
    if (!p->initialized || tracec_provider_started(p)) return; /* Start while started is ignored */
    tracec_start_options_t opts = TRACEC_START_OPTIONS_INIT;
    const char *extra[TRACEC_I_MAX_CATEGORIES];
    size_t nextra = 0;
    char *list = m->text[0] && tracec_i_rec_categories_ok(m->text) ? strdup(m->text) : NULL;
    for (char *save = NULL, *c = list ? strtok_r(list, ",", &save) : NULL; c != NULL && nextra < TRACEC_I_MAX_CATEGORIES;
         c = strtok_r(NULL, ",", &save))
        extra[nextra++] = c;
    if (m->a > TRACEC_BUFFER_DISPOSITION_NONE && m->a < TRACEC_BUFFER_DISPOSITION_LAST)
        opts.disposition = (tracec_buffer_disposition_t)m->a;
    opts.additional_categories = nextra ? extra : NULL;
    opts.num_additional_categories = nextra;
    tracec_status_t sst = tracec_start_context_with_options(p->ctx, &opts);
    if (sst != TRACEC_STATUS_SUCCESS && nextra) { /* too many with the initial ones: the extras go */
        opts.additional_categories = NULL;
        opts.num_additional_categories = 0;
        sst = tracec_start_context_with_options(p->ctx, &opts);
    }
    free(list);
    if (sst != TRACEC_STATUS_SUCCESS) return;
    pthread_mutex_lock(&p->mu);
    snprintf(p->extra, sizeof p->extra, "%s", m->text);
    pthread_mutex_unlock(&p->mu);
    __atomic_store_n(&p->run, next_id(), __ATOMIC_RELEASE);
    __atomic_add_fetch(&p->runs, 1u, __ATOMIC_RELAXED);
    /* A process with no track-event category writes no te event: no te session packets either, so a
       provider.h program's trace holds only its own packets. */
    p->te_packets = p->slot >= 0 && tracec_i_te_have_categories();
    write_run_header(p); /* before any event of the run: `started` is set after it */
    if (p->slot >= 0) {
        /* the recorder's session in its te slot: its session packets, then its categories' bits */
        pthread_mutex_lock(&p->ctl);
        int entered = tracec_i_te_session_enter();
        /* its losses go into the shared buffer's counters as they grow: a killed program leaves few out */
        tracec_i_te_slot_open(p->slot, p->buf.handle, p->mode, p->clock_id, 1);
        p->slot_open = 1;
        if (p->te_packets) /* a loss is counted by the buffer */
            (void)tracec_i_te_write_session_packets(p->slot, 1, 0, p->name);
        tracec_i_te_slot_enable(p->slot, p->ctx, 1);
        tracec_i_te_session_leave(entered);
        pthread_mutex_unlock(&p->ctl);
    }
    __atomic_store_n(&p->started, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&p->mu);
    uint32_t late = p->gave_up && !p->first_start_done; /* the program went on without this Start */
    p->first_start_done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STARTED, late, 0, 0);
}

static void on_stop(tracec_provider *p) {
    if (!p->initialized || !tracec_provider_started(p)) return; /* Stop while stopped is ignored */
    note_stop(p);
    __atomic_store_n(&p->started, 0, __ATOMIC_SEQ_CST); /* no new packet begins */
    pthread_mutex_lock(&p->ctl);
    slot_off(p);
    pthread_mutex_unlock(&p->ctl);
    (void)tracec_stop_context(p->ctx); /* the packets in flight are finished, what is left is handed */
    (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STOPPED, 0, 0, 0);
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
            if (k == (ssize_t)sizeof pk && pk.type == TRACEC_I_FIFO_BUFFER_SAVED && p->initialized) {
                __atomic_add_fetch(&p->saved, 1u, __ATOMIC_RELAXED);
                (void)tracec_buffer_region_saved(p->buf, pk.region, pk.gen); /* a bad one is ignored, counted */
            }
        }
        if (pf[0].revents == 0) continue;
        tracec_i_msg *m = &p->rx;
        int fds[2], nfds = 2;
        ssize_t k = tracec_i_rec_recv(conn, m, fds, &nfds);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EPROTO)) return 1;
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
                on_initialize(p, conn, m, fds, nfds);
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
    }
}

static void *control_main(void *arg) {
    tracec_provider *p = arg;
    while (!__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) {
        char path[sizeof ((struct sockaddr_un *)0)->sun_path];
        int conn = connect_recorder(p, path, sizeof path);
        if (conn >= 0 || conn == CONNECT_BUSY) {
            pthread_mutex_lock(&p->mu);
            p->recorder_seen = 1;
            snprintf(p->seen_path, sizeof p->seen_path, "%s", path);
            pthread_mutex_unlock(&p->mu);
        }
        if (conn == CONNECT_BUSY) { /* a recorder that many programs connect to at once: soon again, and a
                                       synchronous registration goes on waiting for it */
            struct pollfd pf = {p->wake[0], POLLIN, 0};
            (void)poll(&pf, 1, 5);
            continue;
        }
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
        m->b = TRACEC_I_PROTOCOL_VERSION;
        if (p->te_owned) /* the registered categories, as they are now (later ones are matched at Start) */
            (void)tracec_i_te_category_names(p->declared, sizeof p->declared);
        if (p->declared[0])
            snprintf(m->text, sizeof m->text, "%s\n%s", p->name, p->declared);
        else
            snprintf(m->text, sizeof m->text, "%s", p->name);
        /* a new connection, new sequences: losses of the previous one are not theirs, nor are the
           slices its threads left open (nest_sync) */
        __atomic_store_n(&p->conn, next_id(), __ATOMIC_RELEASE);
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

/* Stops tracing from the program's side: what was written is handed, then the recorder is told. */
static void stop_self(tracec_provider *p) {
    if (tracec_provider_started(p)) note_stop(p);
    int was = __atomic_exchange_n(&p->started, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&p->ctl);
    if (was && p->initialized) {
        slot_off(p);
        (void)tracec_stop_context(p->ctx);
        if (p->fifo >= 0) (void)tracec_i_rec_fifo_send(p->fifo, TRACEC_I_FIFO_STOPPED, 0, 0, 0);
    }
    pthread_mutex_unlock(&p->ctl);
}

/* Unregisters p and frees it; with `final`, its counters once everything it wrote was handed over. */
static void unregister_counting(tracec_provider *p, tracec_provider_stats *final) {
    stop_self(p);
    say_if_unanswered(p);
    __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
    char c = 1;
    ssize_t w = write(p->wake[1], &c, 1);
    (void)w;
    pthread_join(p->thread, NULL);
    /* a synchronous registration still waiting on another thread leaves before p goes */
    pthread_mutex_lock(&p->mu);
    p->quitting = 1;
    pthread_cond_broadcast(&p->cv);
    while (p->waiters > 0) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    teardown(p, 0);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_lock(&provider_mu);
    if (the_provider == p) the_provider = NULL;
    pthread_mutex_unlock(&provider_mu);
    if (final != NULL) *final = tracec_provider_get_stats(p);
    pthread_mutex_destroy(&p->ctl);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

void tracec_provider_unregister(tracec_provider *p) {
    if (p == NULL || p->forked) return;
    unregister_counting(p, NULL);
}

/* ---- the track-event layer's recorder client (tracec/track_event.h) ---------------- */

/* The counters of the client that ended last (under provider_mu), in the process that ran it. */
static tracec_te_recorder_stats_t last_stats;
static pid_t last_stats_pid;

tracec_status_t tracec_te_recorder_connect(const tracec_te_recorder_config *cfg) {
    tracec_te_recorder_config c = TRACEC_TE_RECORDER_CONFIG_INIT;
    char comm[TRACEC_I_NAME_MAX + 1] = "";
    if (cfg != NULL) {
        if (cfg->struct_size < sizeof(tracec_te_recorder_config)) return TRACEC_STATUS_INVALID_ARGUMENT;
        c = *cfg;
    }
    pthread_mutex_lock(&provider_mu);
    int running = the_provider != NULL;
    pthread_mutex_unlock(&provider_mu);
    if (running) return TRACEC_STATUS_SUCCESS;
    if (c.name == NULL) {
        FILE *f = fopen("/proc/self/comm", "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL) comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        if (comm[0] == '\0' || !tracec_i_rec_text_ok(comm, strlen(comm))) snprintf(comm, sizeof comm, "pid-%d", (int)getpid());
        c.name = comm;
    }
    tracec_provider *p;
    bool started;
    tracec_status_t st = do_register(c.name, NULL, c.synchronous, c.max_wait_ms, c.socket_path, 1, &started, &p);
    if (st == TRACEC_STATUS_BAD_STATE) return TRACEC_STATUS_SUCCESS; /* another thread started it meanwhile */
    return st;
}

void tracec_te_recorder_disconnect(void) {
    pthread_mutex_lock(&provider_mu);
    tracec_provider *p = the_provider != NULL && the_provider->te_owned && !the_provider->forked ? the_provider : NULL;
    if (p != NULL) the_provider = NULL; /* one caller gets it; the exit handler no longer sees it */
    pthread_mutex_unlock(&provider_mu);
    if (p == NULL) return;
    tracec_provider_stats s;
    unregister_counting(p, &s);
    pthread_mutex_lock(&provider_mu);
    memset(&last_stats, 0, sizeof last_stats);
    last_stats.produced = s.produced;
    last_stats.dropped = s.dropped;
    last_stats.runs = s.runs;
    last_stats.refused = s.refused;
    last_stats_pid = getpid();
    pthread_mutex_unlock(&provider_mu);
}

tracec_te_recorder_stats_t tracec_te_recorder_stats(void) {
    tracec_te_recorder_stats_t r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&provider_mu);
    tracec_provider *p = the_provider;
    if (p != NULL && !p->forked) {
        tracec_provider_stats s = tracec_provider_get_stats(p);
        r.connected = true;
        r.tracing = tracec_provider_started(p);
        r.produced = s.produced;
        r.dropped = s.dropped;
        r.runs = s.runs;
        r.refused = s.refused;
    } else if (p == NULL && last_stats_pid == getpid()) {
        r = last_stats;
    }
    pthread_mutex_unlock(&provider_mu);
    return r;
}

static pthread_once_t auto_once = PTHREAD_ONCE_INIT;

/* $TRACEC_RECORDER_SOCKET set: the client starts, and waits for a running recorder's answer and Start
   (REGISTER_ANSWER_WAIT_S, then 1 s). */
static void auto_connect(void) {
    const char *env = getenv(TRACEC_RECORDER_SOCKET_ENV);
    if (env == NULL || env[0] == '\0') return;
    tracec_te_recorder_config c = TRACEC_TE_RECORDER_CONFIG_INIT;
    c.synchronous = true;
    if (tracec_te_recorder_connect(&c) != TRACEC_STATUS_SUCCESS)
        fprintf(stderr, "tracec: could not start the recorder client for %s=%s\n", TRACEC_RECORDER_SOCKET_ENV, env);
}

void tracec_i_te_recorder_auto(void) { pthread_once(&auto_once, auto_connect); }
