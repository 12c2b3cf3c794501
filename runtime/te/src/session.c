/*
 * session.c - tracec_session: a context and a buffer made, started and
 * written to a .pftrace file (or a callback) in one call, stopped at
 * tracec_session_stop or at process exit; and the process-wide list of
 * track-event categories every session registers with its context.
 *
 * One session at a time: it is a static object, so producers that race
 * with a stop never touch freed memory (the buffer's handle goes stale and
 * the runtime refuses it, also once a later session's buffer has taken its
 * slot: handles carry the slot's generation).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "te_internal.h"
#include "tracec/trace_file.h"

struct tracec_session {
    int active;
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    tracec_trace_file *file;
    tracec_session_write_fn write;
    void *write_data;
    char process_name[64];
    int has_process_name;
    pid_t pid; /* the process that started the session: a fork child never writes the parent's output */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tracec_session the_session;
static uint64_t gen;
static int exit_hooked;
static tracec_te_category *all_cats; /* every registered category, through i_next */

void tracec_te_register_categories(tracec_te_category *const *cats) {
    if (cats == NULL) return;
    pthread_mutex_lock(&mu);
    for (; *cats != NULL; cats++) {
        tracec_te_category *c = *cats, *k;
        for (k = all_cats; k != NULL && k != c; k = k->i_next) {
        }
        if (k != NULL) continue;
        c->i_next = all_cats;
        all_cats = c;
        if (the_session.active) (void)tracec_register_category(the_session.ctx, &c->c);
    }
    pthread_mutex_unlock(&mu);
}

static void on_records(tracec_context_id_t context, tracec_buffer_id_t buffer_id, tracec_record_header_t **headers,
                       size_t num_headers, void *data, uint64_t drop_count) {
    tracec_session *s = (tracec_session *)data;
    (void)context, (void)buffer_id, (void)drop_count;
    if (getpid() != s->pid) return; /* a fork child's records: the output belongs to the parent */
    for (size_t i = 0; i < num_headers; i++) {
        if (headers[i]->category != TRACEC_BUFFER_CATEGORY_TRACING) continue;
        if (s->file != NULL)
            (void)tracec_trace_file_append_raw(s->file, headers[i]->payload, headers[i]->size);
        else if (s->write != NULL)
            s->write(headers[i]->payload, headers[i]->size, s->write_data);
    }
}

static void at_exit(void) {
    pthread_mutex_lock(&mu);
    int active = the_session.active && the_session.pid == getpid();
    pthread_mutex_unlock(&mu);
    if (active) (void)tracec_session_stop(&the_session);
}

static void fork_child(void) { __atomic_fetch_add(&tracec_i_te_epoch_hint, 1u, __ATOMIC_RELEASE); }

static clockid_t clock_of(uint32_t id) {
    switch (id) {
    case 1: return CLOCK_REALTIME;
    case 3: return CLOCK_MONOTONIC;
    default: return CLOCK_BOOTTIME;
    }
}

/* Undoes a start that failed half-way (mu held). */
static void teardown(tracec_session *s) {
    __atomic_store_n(&tracec_i_te_gen, 0, __ATOMIC_RELEASE);
    if (s->ctx.handle != 0) (void)tracec_destroy_context(s->ctx);
    if (s->file != NULL) (void)tracec_trace_file_close(s->file);
    memset(s, 0, sizeof *s);
}

tracec_status_t tracec_session_start(const tracec_session_config *config, tracec_session **out) {
    tracec_session *s = &the_session;
    tracec_status_t st;
    if (config == NULL || out == NULL || (config->path == NULL && config->write == NULL))
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (config->clock_id != 0 && config->clock_id != 1 && config->clock_id != 3 && config->clock_id != 6)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&mu);
    if (s->active) {
        pthread_mutex_unlock(&mu);
        return TRACEC_STATUS_BAD_STATE;
    }
    memset(s, 0, sizeof *s);
    s->pid = getpid();
    if (config->path != NULL) {
        st = tracec_trace_file_open(config->path, &s->file);
        if (st != TRACEC_STATUS_SUCCESS) goto fail;
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
    }
    {
        tracec_buffer_config_t bc = TRACEC_BUFFER_CONFIG_INIT;
        bc.mode = config->mode;
        bc.policy = config->policy;
        if (bc.mode == TRACEC_BUFFERING_MODE_ONESHOT || bc.mode == TRACEC_BUFFERING_MODE_CIRCULAR)
            bc.policy = TRACEC_BUFFER_POLICY_NONE;
        bc.size = config->buffer_size ? config->buffer_size : (size_t)1 << 20;
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
    for (tracec_te_category *c = all_cats; c != NULL; c = c->i_next)
        if ((st = tracec_register_category(s->ctx, &c->c)) != TRACEC_STATUS_SUCCESS) goto fail;
    tracec_i_te_clock_id = config->clock_id ? config->clock_id : 6u;
    tracec_i_te_clk = (int)clock_of(tracec_i_te_clock_id);
    __atomic_store_n(&tracec_i_te_in_order,
                     config->mode != TRACEC_BUFFERING_MODE_ONESHOT && config->mode != TRACEC_BUFFERING_MODE_CIRCULAR,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&tracec_i_te_buf, s->buf.handle, __ATOMIC_RELEASE);
    __atomic_store_n(&tracec_i_te_gen, ++gen, __ATOMIC_RELEASE);
    if ((st = tracec_start_context(s->ctx)) != TRACEC_STATUS_SUCCESS) goto fail;
    s->active = 1;
    st = tracec_i_te_write_session_packets(1, s->has_process_name ? s->process_name : NULL);
    if (st != TRACEC_STATUS_SUCCESS) {
        s->active = 0;
        goto fail;
    }
    *out = s;
    pthread_mutex_unlock(&mu);
    return TRACEC_STATUS_SUCCESS;
fail:
    teardown(s);
    pthread_mutex_unlock(&mu);
    return st;
}

tracec_status_t tracec_session_flush(tracec_session *s) {
    if (s == NULL || !s->active) return TRACEC_STATUS_BAD_STATE;
    return tracec_flush_buffer(s->buf);
}

tracec_status_t tracec_session_pause(tracec_session *s) {
    if (s == NULL || !s->active) return TRACEC_STATUS_BAD_STATE;
    tracec_i_te_thread_abandon();
    return tracec_stop_context(s->ctx);
}

tracec_status_t tracec_session_resume_with_options(tracec_session *s, const tracec_start_options_t *options) {
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    uint64_t before = 0, after = 0;
    tracec_status_t st;
    if (s == NULL || !s->active) return TRACEC_STATUS_BAD_STATE;
    if (options != NULL) o = *options;
    if (o.disposition == TRACEC_BUFFER_DISPOSITION_NONE) o.disposition = TRACEC_BUFFER_DISPOSITION_RETAIN;
    pthread_mutex_lock(&mu);
    /* An epoch that cannot be read counts as changed: the session packets are written again. */
    bool same = tracec_buffer_epoch(s->buf, &before) == TRACEC_STATUS_SUCCESS;
    __atomic_fetch_add(&tracec_i_te_epoch_hint, 1u, __ATOMIC_RELEASE); /* before and after: no thread keeps */
    st = tracec_start_context_with_options(s->ctx, &o);                /* an epoch read in between */
    same = tracec_buffer_epoch(s->buf, &after) == TRACEC_STATUS_SUCCESS && same && before == after;
    __atomic_fetch_add(&tracec_i_te_epoch_hint, 1u, __ATOMIC_RELEASE);
    if (st == TRACEC_STATUS_SUCCESS)
        st = tracec_i_te_write_session_packets(!same, s->has_process_name ? s->process_name : NULL);
    pthread_mutex_unlock(&mu);
    return st;
}

tracec_status_t tracec_session_resume(tracec_session *s, tracec_buffer_disposition_t disposition) {
    tracec_start_options_t o = TRACEC_START_OPTIONS_INIT;
    o.disposition = disposition;
    return tracec_session_resume_with_options(s, &o);
}

tracec_status_t tracec_session_stop(tracec_session *s) {
    tracec_status_t st, st2;
    if (s == NULL) return TRACEC_STATUS_BAD_STATE;
    pthread_mutex_lock(&mu);
    if (!s->active) {
        pthread_mutex_unlock(&mu);
        return TRACEC_STATUS_BAD_STATE;
    }
    __atomic_store_n(&tracec_i_te_gen, 0, __ATOMIC_RELEASE);
    tracec_i_te_thread_abandon();
    st = tracec_stop_context(s->ctx);
    st2 = tracec_destroy_context(s->ctx); /* delivers what is left; no callback runs after it */
    if (st == TRACEC_STATUS_SUCCESS) st = st2;
    s->ctx.handle = 0;
    if (s->file != NULL) {
        st2 = tracec_trace_file_close(s->file);
        if (st == TRACEC_STATUS_SUCCESS) st = st2;
        s->file = NULL;
    }
    s->active = 0;
    pthread_mutex_unlock(&mu);
    return st;
}

tracec_buffer_id_t tracec_session_buffer(const tracec_session *s) {
    tracec_buffer_id_t none = {0};
    return s != NULL && s->active ? s->buf : none;
}
