/*
 * session.c - tracec_session: a context and a buffer made, started and
 * written to a .pftrace file (or a callback) in one call, stopped at
 * tracec_session_stop or at process exit; and the process-wide list of
 * track-event categories, whose bits each session sets for itself.
 *
 * Up to TRACEC_TE_MAX_SESSIONS sessions at a time, each a static object in
 * its track-event slot (te_internal.h), so producers that race with a stop
 * never touch freed memory (the buffer's handle goes stale and the runtime
 * refuses it, also once a later session's buffer has taken its slot:
 * handles carry the slot's generation).  The program holds a handle, not
 * its address: a `tracec_session *` whose value is the session's number
 * (times 16), so the handle of an ended session never names a later one
 * and every call refuses it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfetto/common/trace_stats.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "te_internal.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/trace_file.h"

struct tracec_session {
    int active;
    int slot;    /* its index in sessions[] and in tracec_i_te_slots */
    uintptr_t token; /* the handle the program holds (0: none) */
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    tracec_trace_file *file;
    tracec_session_write_fn write;
    void *write_data;
    char process_name[64];
    size_t buffer_size;
    int has_process_name;
    pid_t pid; /* the process that started the session: a fork child never writes the parent's output */
    int paused; /* tracec_session_pause kept the run's categories on */
    uint64_t lost_base; /* its slot's lost count when the session started */
    uint64_t max_file_size; /* 0: none */
    int stats_past_full;    /* a TraceStats was written since the file reached its size limit */
    uint64_t file_lost;     /* packets max_file_size kept out (atomic: tracec_session_lost reads it unlocked) */
    uint32_t flush_period_ms;
    int stop_on_signals;
    int flusher_running;
    int ctl[2];  /* to the flusher: 'q' end, 'f' flush, 's' stop (a signal handler asks) */
    int done[2]; /* from the flusher: the request is done */
    pthread_t flusher;
    /* Its categories (of the config, or added by a resume) that no registered category had then (malloc'd):
       those still without one at the stop are named there (note_unmatched, warn_unmatched). */
    char **unmatched;
    size_t nunmatched;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* The output (file or callback): deliveries on the callback thread and the statistics packets take turns. */
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_int, old_term; /* the program's, chained to */
static int sig_installed;
static tracec_session sessions[TRACEC_TE_MAX_SESSIONS];
static uint64_t gen;
/* Each slot's active session's handle; 0 when none.  Atomic: session calls check it without the lock. */
static uintptr_t cur_token[TRACEC_TE_MAX_SESSIONS];
static int exit_hooked;
tracec_te_category *tracec_i_te_all_cats; /* every registered category, through i_next */
/* Slots held by a session of another kind (the recorder client's), and the context whose categories it
   enables there (0: none enabled); under mu. */
static int claimed[TRACEC_TE_MAX_SESSIONS];
static tracec_context_id_t claimed_ctx[TRACEC_TE_MAX_SESSIONS];

int tracec_i_te_slot_claim(void) {
    int slot;
    pthread_mutex_lock(&mu);
    for (slot = 0; slot < TRACEC_TE_MAX_SESSIONS; slot++)
        if (!claimed[slot] && !sessions[slot].active && __atomic_load_n(&tracec_i_te_slots[slot].gen, __ATOMIC_RELAXED) == 0)
            break;
    if (slot == TRACEC_TE_MAX_SESSIONS) {
        pthread_mutex_unlock(&mu);
        return -1;
    }
    claimed[slot] = 1;
    claimed_ctx[slot].handle = 0;
    pthread_mutex_unlock(&mu);
    return slot;
}

void tracec_i_te_slot_enable(int i, tracec_context_id_t ctx, int on) {
    pthread_mutex_lock(&mu);
    claimed_ctx[i].handle = on ? ctx.handle : 0;
    tracec_i_te_slot_set_categories(i, ctx, on);
    pthread_mutex_unlock(&mu);
}

void tracec_i_te_slot_release(int i) {
    pthread_mutex_lock(&mu);
    claimed[i] = 0;
    claimed_ctx[i].handle = 0;
    pthread_mutex_unlock(&mu);
}

int tracec_i_te_have_categories(void) {
    pthread_mutex_lock(&mu);
    int have = tracec_i_te_all_cats != NULL;
    pthread_mutex_unlock(&mu);
    return have;
}

/*
 * The registered categories' names, comma-separated, in out[0..cap) (under
 * mu); how many.  `protocol`: only the names the recorder protocol can
 * carry (not a comma, whitespace, bad UTF-8: such a category is matched at
 * Start) and at most its number of them.  A name that does not fit is left
 * out; *full says one was.
 */
static size_t join_names(char *out, size_t cap, bool protocol, bool *full) {
    size_t used = 0, n = 0;
    *full = false;
    if (cap == 0) return 0;
    out[0] = '\0';
    for (tracec_te_category *c = tracec_i_te_all_cats; c != NULL && (!protocol || n < TRACEC_MAX_NUM_CATEGORIES);
         c = c->i_next) {
        size_t len = strlen(c->c.name);
        if (protocol && (len == 0 || len > TRACEC_MAX_CATEGORY_NAME_LENGTH || strchr(c->c.name, ',') != NULL ||
                         !tracec_i_rec_categories_ok(c->c.name)))
            continue;
        if (used + len + 2u > cap) {
            *full = true;
            continue;
        }
        if (used) out[used++] = ',';
        memcpy(out + used, c->c.name, len);
        used += len;
        out[used] = '\0';
        n++;
    }
    return n;
}

size_t tracec_i_te_category_names(char *out, size_t cap) {
    bool full;
    pthread_mutex_lock(&mu);
    size_t n = join_names(out, cap, true, &full);
    pthread_mutex_unlock(&mu);
    return n;
}

void tracec_te_register_categories(tracec_te_category *const *cats) {
    if (cats == NULL) return;
    pthread_mutex_lock(&mu);
    for (; *cats != NULL; cats++) {
        tracec_te_category *c = *cats, *k;
        for (k = tracec_i_te_all_cats; k != NULL && k != c; k = k->i_next) {
        }
        if (k != NULL) continue;
        c->i_next = tracec_i_te_all_cats;
        tracec_i_te_all_cats = c;
        for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) { /* the active sessions that enable it */
            bool en = false;
            tracec_context_id_t ctx = sessions[i].active ? sessions[i].ctx : claimed_ctx[i];
            if (ctx.handle != 0 && tracec_context_category_enabled(ctx, c->c.name, &en) == TRACEC_STATUS_SUCCESS && en) {
                __atomic_fetch_or(&c->c.enabled, 1u << i, __ATOMIC_RELAXED);
                __atomic_fetch_add(&tracec_i_te_slots[i].cats, 1u, __ATOMIC_RELEASE); /* nest_boundary */
            }
        }
    }
    pthread_mutex_unlock(&mu);
    tracec_i_te_recorder_auto(); /* $TRACEC_RECORDER_SOCKET: the recorder client starts here */
}

static void on_records(tracec_context_id_t context, tracec_buffer_id_t buffer_id, tracec_record_header_t **headers,
                       size_t num_headers, void *data, uint64_t drop_count) {
    tracec_session *s = (tracec_session *)data;
    (void)context, (void)buffer_id, (void)drop_count;
    if (getpid() != s->pid) return; /* a fork child's records: the output belongs to the parent */
    pthread_mutex_lock(&out_mu);
    for (size_t i = 0; i < num_headers; i++) {
        if (headers[i]->category != TRACEC_BUFFER_CATEGORY_TRACING) continue;
        if (s->file != NULL) {
            if (tracec_trace_file_append_raw(s->file, headers[i]->payload, headers[i]->size) == TRACEC_STATUS_LIMIT_EXCEEDED)
                __atomic_store_n(&s->file_lost, tracec_trace_file_dropped(s->file), __ATOMIC_RELAXED);
        } else if (s->write != NULL)
            s->write(headers[i]->payload, headers[i]->size, s->write_data);
    }
    pthread_mutex_unlock(&out_mu);
}

/*
 * The session's TraceStats: one BufferStats whose trace_writer_packet_loss
 * (severity data_loss in the trace processor) is every packet lost in the
 * buffer (dropped, overwritten, refused), every event the track-event
 * layer dropped and every packet max_file_size kept out of the file;
 * chunks_discarded / chunks_overwritten split the buffer's
 * policy losses (counted in records).  Cumulative: the trace processor keeps
 * the last one.  Then the file is written out (write(2)), so what was
 * delivered survives the process.
 */
static void write_stats(tracec_session *s, const tracec_buffer_stats_t *bs, size_t buffer_size, bool final) {
    uint8_t mem[256];
    tracec_writer w;
    perfetto_protos_TracePacket pkt;
    perfetto_protos_TraceStats ts;
    perfetto_protos_TraceStats_BufferStats b;
    uint64_t te_lost = __atomic_load_n(&tracec_i_te_slots[s->slot].lost, __ATOMIC_RELAXED) - s->lost_base;
    uint32_t clock_id = __atomic_load_n(&tracec_i_te_slots[s->slot].clock_id, __ATOMIC_RELAXED);
    if (getpid() != s->pid) return;
    pthread_mutex_lock(&out_mu);
    if (s->file != NULL && tracec_i_trace_file_full(s->file)) {
        /* past max_file_size: the first TraceStats after it and the stop's go into the room kept for them */
        if (s->stats_past_full && !final) {
            pthread_mutex_unlock(&out_mu);
            return;
        }
        s->stats_past_full = 1;
    }
    uint64_t file_lost = s->file != NULL ? tracec_trace_file_dropped(s->file) : 0;
    tracec_writer_init_array(&w, mem, sizeof mem);
    tracec_writer_begin_packet(&w, &pkt.msg);
    perfetto_protos_TracePacket_set_timestamp(&pkt, tracec_i_te_now(s->slot));
    if (clock_id != 6u) perfetto_protos_TracePacket_set_timestamp_clock_id(&pkt, clock_id);
    perfetto_protos_TracePacket_begin_trace_stats(&pkt, &ts);
    perfetto_protos_TraceStats_begin_buffer_stats(&ts, &b);
    perfetto_protos_TraceStats_BufferStats_set_buffer_size(&b, (uint64_t)buffer_size);
    perfetto_protos_TraceStats_BufferStats_set_chunks_discarded(&b, bs->dropped);
    perfetto_protos_TraceStats_BufferStats_set_chunks_overwritten(&b, bs->overwritten);
    perfetto_protos_TraceStats_BufferStats_set_trace_writer_packet_loss(&b, bs->dropped + bs->overwritten + bs->refused + te_lost + file_lost);
    perfetto_protos_TraceStats_end_buffer_stats(&ts, &b);
    perfetto_protos_TraceStats_set_tracing_sessions(&ts, 1);
    perfetto_protos_TraceStats_set_total_buffers(&ts, 1);
    perfetto_protos_TracePacket_end_trace_stats(&pkt, &ts);
    if (tracec_writer_end_packet(&w, &pkt.msg) != TRACEC_STATUS_SUCCESS) {
        pthread_mutex_unlock(&out_mu);
        return;
    }
    if (s->file != NULL) {
        tracec_i_trace_file_tail(s->file, true);
        (void)tracec_trace_file_append_raw(s->file, mem, tracec_writer_size(&w));
        tracec_i_trace_file_tail(s->file, false);
        /* a TraceStats that took some of the room kept made the file full: later events are refused, and
           only the stop's TraceStats goes in after it */
        if (tracec_i_trace_file_full(s->file)) s->stats_past_full = 1;
        (void)tracec_trace_file_flush(s->file);
    } else if (s->write != NULL) {
        s->write(mem, tracec_writer_size(&w), s->write_data);
    }
    pthread_mutex_unlock(&out_mu);
}

/* The room max_file_size keeps for the TraceStats written after the file reached it: two (write_stats). */
#define STATS_ROOM 512u

static void session_stats(tracec_session *s) {
    tracec_buffer_stats_t bs;
    if (tracec_query_buffer_stats(s->buf, &bs) == TRACEC_STATUS_SUCCESS) write_stats(s, &bs, s->buffer_size, false);
}

static tracec_status_t session_stop(uintptr_t token);

/* The session `h` names: the active one when `h` is its handle; NULL for NULL or the handle of an ended session. */
static tracec_session *resolve(const tracec_session *h) {
    uintptr_t tok = (uintptr_t)h;
    if (tok == 0) return NULL;
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++)
        if (tok == __atomic_load_n(&cur_token[i], __ATOMIC_ACQUIRE)) return &sessions[i];
    return NULL;
}

/* Under `mu`: whether `s`, resolved from the handle `h` before `mu` was taken, is still that active session
   (a stop, and a start that reused its slot, may have run in between). */
static bool still_active(const tracec_session *h, const tracec_session *s) {
    return s->active && __atomic_load_n(&cur_token[s->slot], __ATOMIC_ACQUIRE) == (uintptr_t)h;
}

/*
 * The session's thread: a flush every flush_period_ms (what was written
 * survives a crash, _exit or SIGKILL but the last period), and the
 * requests of the SIGINT/SIGTERM handler.  Every signal is blocked in it.
 */
static void *flusher_main(void *p) {
    tracec_session *s = (tracec_session *)p;
    int period = s->flush_period_ms == 0 || s->flush_period_ms == TRACEC_SESSION_FLUSH_NEVER
                     ? -1
                     : (s->flush_period_ms > (uint32_t)INT32_MAX ? INT32_MAX : (int)s->flush_period_ms);
    (void)!write(s->done[1], "u", 1); /* up: flusher_start waits for this */
    for (;;) {
        struct pollfd pf = {s->ctl[0], POLLIN, 0};
        char c = 0;
        int r = poll(&pf, 1, period);
        if (r < 0 && errno == EINTR) continue;
        if (r > 0 && read(s->ctl[0], &c, 1) != 1) continue;
        if (c == 'q') break;
        if (c == 's') { /* the signal ends the process: stop the session from here (it cannot join us) */
            s->flusher_running = 0;
            pthread_detach(pthread_self());
            (void)session_stop(s->token);
            (void)!write(s->done[1], &c, 1);
            return NULL;
        }
        if (tracec_flush_buffer(s->buf) == TRACEC_STATUS_SUCCESS) session_stats(s);
        if (c == 'f') (void)!write(s->done[1], &c, 1);
    }
    return NULL;
}

/*
 * SIGINT / SIGTERM with stop_on_signals: when the program's own disposition
 * would end the process, the session is stopped (by its thread; at most 2 s
 * of waiting) and the signal is raised again with that disposition; when
 * the program has a handler, the session is flushed and the handler runs.
 * Only async-signal-safe calls here: getpid, write, poll, read, sigaction,
 * raise.
 */
static void on_stop_signal(int sig, siginfo_t *info, void *uctx) {
    int e = errno;
    struct sigaction *old = sig == SIGINT ? &old_int : &old_term;
    int dies = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) { /* every session that asked for it, one after the other */
        tracec_session *s = &sessions[i];
        if (__atomic_load_n(&s->active, __ATOMIC_ACQUIRE) && s->stop_on_signals && s->flusher_running &&
            s->pid == getpid()) {
            char c = dies ? 's' : 'f';
            struct pollfd pf = {s->done[0], POLLIN, 0};
            if (write(s->ctl[1], &c, 1) == 1 && poll(&pf, 1, 2000) == 1) (void)!read(s->done[0], &c, 1);
        }
    }
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction != NULL) old->sa_sigaction(sig, info, uctx);
    } else if (old->sa_handler == SIG_DFL) {
        (void)sigaction(sig, old, NULL);
        (void)raise(sig); /* blocked until this handler returns, then the default action */
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
    errno = e;
}

/* Whether `sig` is ignored now (SIG_IGN): it stays so, with no handler of the session, since the programs the
   process execs inherit SIG_IGN but not a handler (they would get the default, and die of it). */
static int ignored(int sig) {
    struct sigaction cur;
    return sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN;
}

static void signals_install(void) {
    struct sigaction sa;
    if (sig_installed) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    memset(&old_int, 0, sizeof old_int);
    memset(&old_term, 0, sizeof old_term);
    old_int.sa_handler = old_term.sa_handler = SIG_IGN; /* the session's handler never runs for an ignored one */
    int int_ours = !ignored(SIGINT);
    if (int_ours && sigaction(SIGINT, &sa, &old_int) != 0) return;
    if (!ignored(SIGTERM) && sigaction(SIGTERM, &sa, &old_term) != 0) {
        if (int_ours) (void)sigaction(SIGINT, &old_int, NULL);
        return;
    }
    sig_installed = 1;
}

/* The program's handlers back, unless it installed others since. */
static void signals_restore(void) {
    struct sigaction cur;
    if (!sig_installed) return;
    if (sigaction(SIGINT, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_stop_signal)
        (void)sigaction(SIGINT, &old_int, NULL);
    if (sigaction(SIGTERM, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_stop_signal)
        (void)sigaction(SIGTERM, &old_term, NULL);
    sig_installed = 0;
}

static void flusher_start(tracec_session *s) {
    sigset_t all, old;
    int periodic = s->flush_period_ms != 0 && s->flush_period_ms != TRACEC_SESSION_FLUSH_NEVER;
    if (!periodic && !s->stop_on_signals) return;
    if (pipe2(s->ctl, O_CLOEXEC) != 0) return;
    if (pipe2(s->done, O_CLOEXEC) != 0) {
        close(s->ctl[0]), close(s->ctl[1]);
        return;
    }
    sigfillset(&all); /* the program's signals go to its own threads */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    s->flusher_running = pthread_create(&s->flusher, NULL, flusher_main, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!s->flusher_running) {
        close(s->ctl[0]), close(s->ctl[1]), close(s->done[0]), close(s->done[1]);
        return;
    }
    /* The start returns once the thread runs: a fork right after it never copies a thread caught
       halfway through its start-up (under a sanitizer that start-up holds the allocator's locks). */
    char up;
    while (read(s->done[0], &up, 1) < 0 && errno == EINTR) {
    }
    if (s->stop_on_signals) signals_install();
}

/* Whether another active session than `s` stops on signals. */
static int others_stop_on_signals(const tracec_session *s) {
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++)
        if (&sessions[i] != s && sessions[i].active && sessions[i].stop_on_signals && sessions[i].flusher_running)
            return 1;
    return 0;
}

static void flusher_stop(tracec_session *s) {
    char q = 'q';
    if (!s->flusher_running) return;
    s->flusher_running = 0;
    if (getpid() != s->pid) return; /* a fork child has no flusher */
    if (!others_stop_on_signals(s)) signals_restore();
    (void)!write(s->ctl[1], &q, 1);
    pthread_join(s->flusher, NULL);
    close(s->ctl[0]), close(s->ctl[1]), close(s->done[0]), close(s->done[1]);
}

static void at_exit(void) {
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) {
        pthread_mutex_lock(&mu);
        uintptr_t token = sessions[i].active && sessions[i].pid == getpid() ? sessions[i].token : 0;
        pthread_mutex_unlock(&mu);
        if (token != 0) (void)tracec_session_stop((tracec_session *)token);
    }
}

static void fork_child(void) {
    pthread_mutex_init(&out_mu, NULL);
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++) tracec_i_te_slot_bump(i);
}

/* ---- categories no registered category has ------------------------------------ */

/* Whether a registered category is named `name` (under mu). */
static bool registered_name(const char *name) {
    for (tracec_te_category *c = tracec_i_te_all_cats; c != NULL; c = c->i_next)
        if (strcmp(c->c.name, name) == 0) return true;
    return false;
}

/* Notes the names no registered category has yet (under mu): a library may register its own later. */
static void note_unmatched(tracec_session *s, const char *const *names, size_t n) {
    for (size_t i = 0; names != NULL && i < n; i++) {
        size_t k;
        if (registered_name(names[i])) continue;
        for (k = 0; k < s->nunmatched && strcmp(s->unmatched[k], names[i]) != 0; k++) {
        }
        if (k < s->nunmatched) continue;
        char **more = realloc(s->unmatched, (s->nunmatched + 1u) * sizeof *more);
        if (more == NULL) return; /* out of memory: no warning, nothing else lost */
        s->unmatched = more;
        if ((s->unmatched[s->nunmatched] = strdup(names[i])) == NULL) return;
        s->nunmatched++;
    }
}

/* Forgets them; with `warn`, first names on stderr each one no category registered by now (under mu). */
static void warn_unmatched(tracec_session *s, bool warn) {
    char all[256];
    bool full;
    if (warn && s->nunmatched != 0) join_names(all, sizeof all, false, &full);
    for (size_t i = 0; i < s->nunmatched; i++) {
        if (warn && !registered_name(s->unmatched[i]))
            fprintf(stderr,
                    "tracec: the session category '%s' names no registered category, so it enabled nothing "
                    "(registered: %s%s)\n",
                    s->unmatched[i], all[0] ? all : "none", full ? ",..." : "");
        free(s->unmatched[i]);
    }
    free(s->unmatched);
    s->unmatched = NULL;
    s->nunmatched = 0;
}

/* Undoes a start that failed half-way (mu held). */
static void teardown(tracec_session *s) {
    int slot = s->slot;
    warn_unmatched(s, false);
    tracec_i_te_slot_set_categories(slot, s->ctx, 0);
    tracec_i_te_slot_close(slot);
    flusher_stop(s);
    if (s->ctx.handle != 0) (void)tracec_destroy_context(s->ctx);
    if (s->file != NULL) (void)tracec_trace_file_close(s->file);
    memset(s, 0, sizeof *s);
    s->slot = slot;
}

static tracec_status_t session_start(const tracec_session_config *config, tracec_session **out);

tracec_status_t tracec_session_start(const tracec_session_config *config, tracec_session **out) {
    tracec_i_te_recorder_auto();
    int entered = tracec_i_te_session_enter();
    tracec_status_t st = session_start(config, out);
    tracec_i_te_session_leave(entered);
    tracec_i_te_recheck_name(); /* the thread's name is read again at its first event */
    return st;
}

static tracec_status_t session_start(const tracec_session_config *config, tracec_session **out) {
    tracec_session *s = NULL;
    tracec_status_t st;
    int slot;
    if (config == NULL || out == NULL || (config->path == NULL && config->write == NULL))
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (tracec_i_te_clockid_of(config->clock_id) < 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (config->max_file_size != 0 && (config->path == NULL || config->max_file_size < TRACEC_SESSION_MIN_FILE_SIZE))
        return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&mu);
    for (slot = 0; slot < TRACEC_TE_MAX_SESSIONS; slot++) /* a slot no session holds (a fork child's copies included) */
        if (!sessions[slot].active && !claimed[slot] && __atomic_load_n(&tracec_i_te_slots[slot].gen, __ATOMIC_RELAXED) == 0) break;
    if (slot == TRACEC_TE_MAX_SESSIONS) {
        pthread_mutex_unlock(&mu);
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    s = &sessions[slot];
    memset(s, 0, sizeof *s);
    s->slot = slot;
    s->pid = getpid();
    s->lost_base = __atomic_load_n(&tracec_i_te_slots[slot].lost, __ATOMIC_RELAXED);
    s->flush_period_ms = config->flush_period_ms;
    s->stop_on_signals = config->stop_on_signals;
    if (s->flush_period_ms == 0 && config->path != NULL) s->flush_period_ms = TRACEC_SESSION_FLUSH_PERIOD_DEFAULT_MS;
    if (config->path != NULL) {
        st = tracec_trace_file_open(config->path, &s->file);
        if (st == TRACEC_STATUS_IO_ERROR && errno == EBUSY) /* a likely slip, which the program may not report */
            fprintf(stderr,
                    "tracec: %s is being written by another trace writer (tracec record -o the same file?), so "
                    "this session is not started: give each its own file\n",
                    config->path);
        if (st != TRACEC_STATUS_SUCCESS) goto fail;
        s->max_file_size = config->max_file_size;
        tracec_i_trace_file_limit(s->file, s->max_file_size, STATS_ROOM);
    } else {
        s->write = config->write;
        s->write_data = config->write_data;
    }
    if (config->process_name != NULL) {
        strncpy(s->process_name, config->process_name, sizeof s->process_name - 1u);
        s->has_process_name = 1;
    }
    if ((st = tracec_create_context(&s->ctx)) != TRACEC_STATUS_SUCCESS) goto fail;
    if (!exit_hooked) {
        atexit(at_exit); /* after the runtime's own: runs before tracec_finalize() */
        (void)pthread_atfork(NULL, NULL, fork_child);
        exit_hooked = 1;
    }
    {
        tracec_provider_config_t pc = TRACEC_PROVIDER_CONFIG_INIT;
        pc.name = "tracec_session";
        pc.categories = config->categories;
        pc.num_categories = config->categories ? config->num_categories : 0;
        if ((st = tracec_initialize_context(s->ctx, &pc)) != TRACEC_STATUS_SUCCESS) goto fail;
        note_unmatched(s, pc.categories, pc.num_categories);
    }
    {
        tracec_buffer_config_t bc = TRACEC_BUFFER_CONFIG_INIT;
        bc.mode = config->mode;
        bc.policy = config->policy;
        if (bc.mode == TRACEC_BUFFERING_MODE_ONESHOT || bc.mode == TRACEC_BUFFERING_MODE_CIRCULAR)
            bc.policy = TRACEC_BUFFER_POLICY_NONE;
        bc.size = config->buffer_size ? config->buffer_size : (size_t)1 << 20;
        s->buffer_size = bc.size;
        bc.watermark = bc.size / 2; /* STREAMING: deliver a half-full half without waiting for it to fill */
        bc.durable_size = config->durable_size;
        if (bc.durable_size == 0 && bc.mode != TRACEC_BUFFERING_MODE_STREAMING) {
            /* the buffer's default (size/16), but room for the descriptors and 64 KiB of sequence state */
            size_t need = tracec_i_te_descriptor_bytes() + ((size_t)64 << 10);
            bc.durable_size = bc.size / 16u > need ? bc.size / 16u : need;
        }
        bc.callback = on_records;
        bc.callback_data = s;
        if ((st = tracec_create_buffer_with_config(s->ctx, &bc, &s->buf)) != TRACEC_STATUS_SUCCESS) goto fail;
    }
    tracec_i_te_slot_open(slot, s->buf.handle, config->mode, config->clock_id ? config->clock_id : 6u, 0);
    ++gen;
    if ((st = tracec_start_context(s->ctx)) != TRACEC_STATUS_SUCCESS) goto fail;
    __atomic_store_n(&s->active, 1, __ATOMIC_RELEASE);
    st = tracec_i_te_write_session_packets(slot, 1, 1, s->has_process_name ? s->process_name : NULL);
    if (st != TRACEC_STATUS_SUCCESS) {
        __atomic_store_n(&s->active, 0, __ATOMIC_RELEASE);
        goto fail;
    }
    tracec_i_te_slot_set_categories(slot, s->ctx, 1); /* after the session packets: the events follow them */
    /* the session's number, times 16 (a pointer's alignment); on a 32-bit system the numbers wrap after 2^28 */
    s->token = (uintptr_t)(gen << 4) != 0 ? (uintptr_t)(gen << 4) : (uintptr_t)16u;
    __atomic_store_n(&cur_token[slot], s->token, __ATOMIC_RELEASE);
    flusher_start(s);
    *out = (tracec_session *)s->token;
    pthread_mutex_unlock(&mu);
    return TRACEC_STATUS_SUCCESS;
fail:
    teardown(s);
    pthread_mutex_unlock(&mu);
    return st;
}

tracec_status_t tracec_session_flush(tracec_session *h) {
    tracec_session *s = resolve(h);
    tracec_status_t st;
    int entered;
    if (s == NULL || !__atomic_load_n(&s->active, __ATOMIC_ACQUIRE)) return TRACEC_STATUS_BAD_STATE;
    entered = tracec_i_te_session_enter();
    st = tracec_flush_buffer(s->buf);
    if (st == TRACEC_STATUS_SUCCESS) session_stats(s);
    else if (__atomic_load_n(&cur_token[s->slot], __ATOMIC_ACQUIRE) != (uintptr_t)h)
        st = TRACEC_STATUS_BAD_STATE; /* a stop ran meanwhile: its buffer is gone */
    tracec_i_te_session_leave(entered);
    return st;
}

tracec_status_t tracec_session_pause(tracec_session *h) {
    tracec_session *s = resolve(h);
    tracec_status_t st;
    int entered;
    if (s == NULL || !__atomic_load_n(&s->active, __ATOMIC_ACQUIRE)) return TRACEC_STATUS_BAD_STATE;
    tracec_i_te_slot *slot = &tracec_i_te_slots[s->slot];
    entered = tracec_i_te_session_enter();
    pthread_mutex_lock(&mu);
    if (!still_active(h, s)) { /* a stop ran meanwhile */
        pthread_mutex_unlock(&mu);
        tracec_i_te_session_leave(entered);
        return TRACEC_STATUS_BAD_STATE;
    }
    tracec_i_te_thread_abandon(s->slot);
    st = tracec_stop_context(s->ctx);
    /* Slices open now end here: after the stop, so after every event the run took (their timestamps were
       read before their packets began, and the stop waited for those). */
    __atomic_store_n(&slot->run_end_ts, tracec_i_te_now(s->slot), __ATOMIC_RELAXED);
    if (st == TRACEC_STATUS_SUCCESS) {
        /* The run's categories stay on: their events reach the layer, which drops and counts them (a
           pause loses them; the trace says so).  Paused first, then the bump that makes threads look. */
        __atomic_fetch_add(&slot->pause, 1u, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->paused, 1u, __ATOMIC_RELEASE);
        tracec_i_te_slot_bump(s->slot);
        s->paused = 1;
        session_stats(s);
    }
    pthread_mutex_unlock(&mu);
    tracec_i_te_session_leave(entered);
    return st;
}

tracec_status_t tracec_session_resume_with_options(tracec_session *h, const tracec_start_options_t *options) {
    tracec_session *s = resolve(h);
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    uint64_t before = 0, after = 0;
    tracec_status_t st;
    if (s == NULL || !__atomic_load_n(&s->active, __ATOMIC_ACQUIRE)) return TRACEC_STATUS_BAD_STATE;
    if (options != NULL) o = *options;
    if (o.disposition == TRACEC_BUFFER_DISPOSITION_NONE) o.disposition = TRACEC_BUFFER_DISPOSITION_RETAIN;
    int entered = tracec_i_te_session_enter();
    pthread_mutex_lock(&mu);
    if (!still_active(h, s)) { /* a stop ran meanwhile */
        pthread_mutex_unlock(&mu);
        tracec_i_te_session_leave(entered);
        return TRACEC_STATUS_BAD_STATE;
    }
    /* An epoch that cannot be read counts as changed: the session packets are written again. */
    bool same = tracec_buffer_epoch(s->buf, &before) == TRACEC_STATUS_SUCCESS;
    tracec_i_te_slot *slot = &tracec_i_te_slots[s->slot];
    __atomic_fetch_add(&slot->run, 1u, __ATOMIC_RELEASE); /* a new run: seen with the bump */
    tracec_i_te_slot_bump(s->slot);                    /* before and after: no thread keeps */
    st = tracec_start_context_with_options(s->ctx, &o); /* an epoch read in between */
    same = tracec_buffer_epoch(s->buf, &after) == TRACEC_STATUS_SUCCESS && same && before == after;
    /* This run's categories (the options may add some), while still paused as the old run's were: the threads
       take the run's boundary after the change, so the levels they track match the events they see. */
    if (st == TRACEC_STATUS_SUCCESS) {
        tracec_i_te_slot_set_categories(s->slot, s->ctx, 1);
        note_unmatched(s, o.additional_categories, o.num_additional_categories);
    }
    if (st == TRACEC_STATUS_SUCCESS && s->paused) {
        s->paused = 0;
        __atomic_store_n(&slot->paused, 0u, __ATOMIC_RELEASE); /* before the bump below */
    }
    tracec_i_te_slot_bump(s->slot);
    if (st == TRACEC_STATUS_SUCCESS) {
        /* The run has started: a packet a full buffer refused (the producers may have filled it since the
           start) is a loss the buffer counts, not a failed resume. */
        tracec_status_t pst =
            tracec_i_te_write_session_packets(s->slot, !same, 1, s->has_process_name ? s->process_name : NULL);
        if (pst != TRACEC_STATUS_BUFFER_FULL) st = pst;
    }
    pthread_mutex_unlock(&mu);
    tracec_i_te_session_leave(entered);
    tracec_i_te_recheck_name();
    return st;
}

tracec_status_t tracec_session_resume(tracec_session *s, tracec_buffer_disposition_t disposition) {
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    o.disposition = disposition;
    return tracec_session_resume_with_options(s, &o);
}

/* Stops the session whose handle is `token` (BAD_STATE when that is not the active one). */
static tracec_status_t session_stop(uintptr_t token) {
    tracec_session *s = NULL;
    tracec_status_t st, st2;
    tracec_buffer_stats_t bs;
    int have_stats;
    if (token == 0) return TRACEC_STATUS_BAD_STATE;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < TRACEC_TE_MAX_SESSIONS; i++)
        if (sessions[i].active && sessions[i].token == token) s = &sessions[i];
    if (s == NULL) {
        pthread_mutex_unlock(&mu);
        return TRACEC_STATUS_BAD_STATE;
    }
    __atomic_store_n(&cur_token[s->slot], 0, __ATOMIC_RELEASE); /* every call with the handle is refused from now on */
    if (getpid() == s->pid) tracec_i_te_thread_owed(s->slot); /* the stopping thread's last lost ENDs */
    tracec_i_te_slot_set_categories(s->slot, s->ctx, 0); /* its events stop here */
    flusher_stop(s);
    tracec_i_te_slot_close(s->slot);
    tracec_i_te_thread_abandon(s->slot);
    if (s->paused) {
        s->paused = 0;
        __atomic_store_n(&tracec_i_te_slots[s->slot].paused, 0u, __ATOMIC_RELEASE);
    }
    st = tracec_stop_context(s->ctx); /* delivers everything */
    have_stats = tracec_query_buffer_stats(s->buf, &bs) == TRACEC_STATUS_SUCCESS;
    st2 = tracec_destroy_context(s->ctx); /* delivers what is left; no callback runs after it */
    if (st == TRACEC_STATUS_SUCCESS) st = st2;
    s->ctx.handle = 0;
    warn_unmatched(s, getpid() == s->pid); /* a fork child's copy is the parent's to name */
    if (getpid() != s->pid) {
        /* A fork child: the file and the callback are the parent's.  The file's unwritten bytes are the
           parent's too (it writes them itself): the child drops its copy of them, unwritten, and closes
           its copy of the fd (the parent's stays open), so a session it starts later reuses the slot
           without leaking the copy. */
        tracec_i_trace_file_forget(s->file);
        s->file = NULL;
        __atomic_store_n(&s->active, 0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&mu);
        return st;
    }
    if (have_stats) write_stats(s, &bs, s->buffer_size, true);
    if (s->file != NULL && tracec_i_trace_file_full(s->file))
        fprintf(stderr,
                "tracec: the trace reached its max_file_size (%llu bytes), so the session's %llu later packets "
                "were not written (its TraceStats count them as lost)\n",
                (unsigned long long)s->max_file_size, (unsigned long long)tracec_trace_file_dropped(s->file));
    if (s->file != NULL) {
        st2 = tracec_trace_file_close(s->file);
        if (st == TRACEC_STATUS_SUCCESS) st = st2;
        s->file = NULL;
    }
    __atomic_store_n(&s->active, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    return st;
}

tracec_status_t tracec_session_stop(tracec_session *h) {
    int entered = tracec_i_te_session_enter();
    tracec_status_t st = session_stop((uintptr_t)h);
    tracec_i_te_session_leave(entered);
    return st;
}

tracec_buffer_id_t tracec_session_buffer(const tracec_session *h) {
    tracec_buffer_id_t none = {0};
    const tracec_session *s = resolve(h);
    return s != NULL && __atomic_load_n(&s->active, __ATOMIC_ACQUIRE) ? s->buf : none;
}

uint64_t tracec_session_lost(const tracec_session *h) {
    const tracec_session *s = resolve(h);
    tracec_buffer_stats_t bs;
    if (s == NULL || !__atomic_load_n(&s->active, __ATOMIC_ACQUIRE) || tracec_query_buffer_stats(s->buf, &bs) != TRACEC_STATUS_SUCCESS) return 0;
    return bs.dropped + bs.overwritten + bs.refused + __atomic_load_n(&s->file_lost, __ATOMIC_RELAXED) +
           (__atomic_load_n(&tracec_i_te_slots[s->slot].lost, __ATOMIC_RELAXED) - s->lost_base);
}
