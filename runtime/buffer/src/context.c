/*
 * context.c - contexts, the initialize/start/stop/terminate lifecycle,
 * categories, tracec_finalize() (also at exit: handles.c calls
 * tracec_i_contexts_at_exit()).
 *
 * Context state lives in a static table guarded by tracec_i_global_mu (the
 * handle and started flag in tracec_i_contexts[], handles.c); a handle is
 * (generation << 8) | (slot + 1), so a destroyed context's id
 * never names a new one.  Lifecycle calls are serialised by life_mu, which
 * is held while stop waits for deliveries; callback threads only try it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "buffer_internal.h"

static pthread_mutex_t life_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int finalizing;

#define NAME_CAP (TRACEC_MAX_CATEGORY_NAME_LENGTH + 1u)

/* A context; its handle and started flag are tracec_i_contexts[] (handles.c), LIVE(c). */
typedef struct ctx {
    uint32_t gen;
    int initialized;
    char name[TRACEC_MAX_PROVIDER_NAME_LENGTH + 1u];
    size_t ncats, nextra;
    char cats[TRACEC_MAX_NUM_CATEGORIES][NAME_CAP];
    char extra[TRACEC_MAX_NUM_CATEGORIES][NAME_CAP];
    tracec_category_t *registered;
} ctx;

static ctx ctx_table[TRACEC_MAX_CONTEXTS];
#define LIVE(c) (tracec_i_contexts[(c) - ctx_table])

/* ---- process hooks: exit, fork (handles.c calls them) ----------------------- */

/* exit() from a thread with a packet open: that packet is abandoned (counted), so the
   final delivery does not wait for it. */
void tracec_i_contexts_at_exit(void) {
    tracec_i_release_calling_thread_writers();
    (void)tracec_finalize();
}

/* The threads' and buffers' fork hooks run after this one (handles.c). */
void tracec_i_contexts_fork_child(void) { pthread_mutex_init(&life_mu, NULL); }

/* ---- lookup ------------------------------------------------------------------ */

/* The live context with this handle, or NULL.  Under global_mu. */
static ctx *find(uint64_t handle) {
    uint64_t slot = handle & 0xffu;
    if (slot == 0 || slot > TRACEC_MAX_CONTEXTS) return NULL;
    ctx *c = &ctx_table[slot - 1];
    return LIVE(c).handle == handle ? c : NULL;
}

/* Handles of context h's live buffers, into out[] (TRACEC_MAX_BUFFERS entries).  Under
   global_mu; the caller looks each up again (tracec_i_buffer_get), since a buffer may be
   destroyed, and its struct reused, once global_mu is released. */
static size_t buffers_of(uint64_t h, uint64_t *out) {
    size_t n = 0;
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL || b->ctx_handle != h) continue;
        uint64_t live = atomic_load_explicit(&b->live, memory_order_acquire);
        if (live != 0) out[n++] = live;
    }
    return n;
}

/* Starts (disp >= 0) or stops each of the n buffers in list that is still alive. */
static void start_or_stop(const uint64_t *list, size_t n, int disp) {
    for (size_t i = 0; i < n; i++) {
        tracec_i_buffer *b = tracec_i_buffer_get(list[i]);
        if (b == NULL) continue;
        if (disp >= 0)
            tracec_i_buffer_start(b, (tracec_buffer_disposition_t)disp);
        else
            tracec_i_buffer_stop(b);
        tracec_i_buffer_put(b);
    }
}

/* ---- categories ---------------------------------------------------------------- */

static bool enabled_in(const ctx *c, const char *name) {
    if (!LIVE(c).started) return false;
    if (c->ncats + c->nextra == 0) return true;
    for (size_t i = 0; i < c->ncats; i++)
        if (strcmp(c->cats[i], name) == 0) return true;
    for (size_t i = 0; i < c->nextra; i++)
        if (strcmp(c->extra[i], name) == 0) return true;
    return false;
}

static void refresh_categories(ctx *c) {
    for (tracec_category_t *k = c->registered; k; k = k->i_next)
        __atomic_store_n(&k->enabled, enabled_in(c, k->name) ? 1u : 0u, __ATOMIC_RELAXED);
}

static tracec_status_t check_names(const char *const *names, size_t n, size_t max_n) {
    if (n > max_n) return TRACEC_STATUS_LIMIT_EXCEEDED;
    if (n > 0 && names == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++) {
        if (names[i] == NULL || names[i][0] == '\0') return TRACEC_STATUS_INVALID_ARGUMENT;
        if (strnlen(names[i], NAME_CAP) > TRACEC_MAX_CATEGORY_NAME_LENGTH) return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_register_category(tracec_context_id_t context_id, tracec_category_t *category) {
    if (category == NULL || category->name == NULL || category->name[0] == '\0')
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (strnlen(category->name, NAME_CAP) > TRACEC_MAX_CATEGORY_NAME_LENGTH) return TRACEC_STATUS_LIMIT_EXCEEDED;
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (c == NULL) {
        st = TRACEC_STATUS_CONTEXT_NOT_FOUND;
    } else if (category->i_context != 0) {
        st = category->i_context == LIVE(c).handle ? TRACEC_STATUS_SUCCESS : TRACEC_STATUS_INVALID_ARGUMENT;
    } else {
        category->i_context = LIVE(c).handle;
        category->i_next = c->registered;
        c->registered = category;
        __atomic_store_n(&category->enabled, enabled_in(c, category->name) ? 1u : 0u, __ATOMIC_RELAXED);
    }
    tracec_i_unlock(&tracec_i_global_mu);
    return st;
}

tracec_status_t tracec_context_category_enabled(tracec_context_id_t context_id, const char *category,
                                                bool *enabled) {
    if (category == NULL || enabled == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    if (c != NULL) *enabled = enabled_in(c, category);
    tracec_i_unlock(&tracec_i_global_mu);
    return c == NULL ? TRACEC_STATUS_CONTEXT_NOT_FOUND : TRACEC_STATUS_SUCCESS;
}

/* ---- lifecycle ------------------------------------------------------------------- */

tracec_status_t tracec_create_context(tracec_context_id_t *context_id) {
    if (context_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_runtime_init();
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_BAD_STATE;
    tracec_i_lock(&tracec_i_global_mu);
    for (size_t i = 0; i < TRACEC_MAX_CONTEXTS; i++) {
        ctx *c = &ctx_table[i];
        if (LIVE(c).handle != 0) continue;
        uint32_t gen = c->gen + 1u;
        memset(c, 0, sizeof *c);
        c->gen = gen;
        LIVE(c).started = 0;
        LIVE(c).handle = ((uint64_t)gen << 8) | (uint64_t)(i + 1);
        context_id->handle = LIVE(c).handle;
        tracec_i_unlock(&tracec_i_global_mu);
        return TRACEC_STATUS_SUCCESS;
    }
    tracec_i_unlock(&tracec_i_global_mu);
    return TRACEC_STATUS_LIMIT_EXCEEDED;
}

tracec_status_t tracec_initialize_context(tracec_context_id_t context_id, const tracec_provider_config_t *config) {
    if (config == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (config->name != NULL && strnlen(config->name, TRACEC_MAX_PROVIDER_NAME_LENGTH + 1u) >
                                    TRACEC_MAX_PROVIDER_NAME_LENGTH)
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    tracec_status_t st = check_names(config->categories, config->num_categories, TRACEC_MAX_NUM_CATEGORIES);
    if (st != TRACEC_STATUS_SUCCESS) return st;
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    if (c == NULL) {
        st = TRACEC_STATUS_CONTEXT_NOT_FOUND;
    } else if (!c->initialized) {
        c->initialized = 1;
        strcpy(c->name, config->name ? config->name : "");
        c->ncats = config->num_categories;
        for (size_t i = 0; i < c->ncats; i++) strcpy(c->cats[i], config->categories[i]);
        refresh_categories(c);
    }
    tracec_i_unlock(&tracec_i_global_mu);
    return st;
}

/* Locks life_mu; a callback thread only tries (it may be what the holder waits for). */
/* False (WOULD_DEADLOCK) where waiting could deadlock: the caller has a packet open, or
   is a callback thread and another lifecycle call is in progress. */
static bool life_lock(void) {
    if (tracec_i_thread_has_open_packet()) return false;
    if (tracec_i_current_thread == NULL) {
        tracec_i_lock(&life_mu);
        return true;
    }
    return tracec_i_trylock(&life_mu);
}

tracec_status_t tracec_start_context_with_options(tracec_context_id_t context_id,
                                                  const tracec_start_options_t *options) {
    tracec_start_options_t def = TRACEC_START_OPTIONS_INIT;
    if (options == NULL) options = &def;
    tracec_buffer_disposition_t disp = options->disposition;
    if (disp == TRACEC_BUFFER_DISPOSITION_NONE) disp = TRACEC_BUFFER_DISPOSITION_RETAIN;
    if ((int)disp < 0 || disp >= TRACEC_BUFFER_DISPOSITION_LAST) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_status_t st = check_names(options->additional_categories, options->num_additional_categories,
                                     TRACEC_MAX_NUM_CATEGORIES);
    if (st != TRACEC_STATUS_SUCCESS) return st;
    if (atomic_load_explicit(&tracec_i_finalized, memory_order_acquire)) return TRACEC_STATUS_BAD_STATE;
    if (!life_lock()) return TRACEC_STATUS_WOULD_DEADLOCK;
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    if (c == NULL || LIVE(c).started) {
        tracec_i_unlock(&tracec_i_global_mu);
        tracec_i_unlock(&life_mu);
        return c == NULL ? TRACEC_STATUS_CONTEXT_NOT_FOUND : TRACEC_STATUS_SUCCESS;
    }
    if (c->ncats + options->num_additional_categories > TRACEC_MAX_NUM_CATEGORIES) {
        tracec_i_unlock(&tracec_i_global_mu);
        tracec_i_unlock(&life_mu);
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    c->initialized = 1;
    c->nextra = options->num_additional_categories;
    for (size_t i = 0; i < c->nextra; i++) strcpy(c->extra[i], options->additional_categories[i]);
    LIVE(c).started = 1;
    refresh_categories(c);
    static uint64_t list[TRACEC_MAX_BUFFERS]; /* under life_mu */
    size_t n = buffers_of(LIVE(c).handle, list);
    tracec_i_unlock(&tracec_i_global_mu);
    start_or_stop(list, n, (int)disp);
    tracec_i_unlock(&life_mu);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_start_context(tracec_context_id_t context_id) {
    return tracec_start_context_with_options(context_id, NULL);
}

/* Stops c's buffers.  Under life_mu. */
static tracec_status_t stop_locked(uint64_t handle) {
    static uint64_t list[TRACEC_MAX_BUFFERS]; /* under life_mu */
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(handle);
    if (c == NULL || !LIVE(c).started) {
        tracec_i_unlock(&tracec_i_global_mu);
        return c == NULL ? TRACEC_STATUS_CONTEXT_NOT_FOUND : TRACEC_STATUS_SUCCESS;
    }
    LIVE(c).started = 0;
    c->nextra = 0;
    refresh_categories(c);
    size_t n = buffers_of(handle, list);
    tracec_i_unlock(&tracec_i_global_mu);
    start_or_stop(list, n, -1);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_stop_context(tracec_context_id_t context_id) {
    if (!life_lock()) return TRACEC_STATUS_WOULD_DEADLOCK;
    tracec_status_t st = stop_locked(context_id.handle);
    tracec_i_unlock(&life_mu);
    return st;
}

tracec_status_t tracec_terminate_context(tracec_context_id_t context_id) {
    if (!life_lock()) return TRACEC_STATUS_WOULD_DEADLOCK;
    tracec_status_t st = stop_locked(context_id.handle);
    if (st == TRACEC_STATUS_SUCCESS) {
        tracec_i_lock(&tracec_i_global_mu);
        ctx *c = find(context_id.handle);
        if (c != NULL) {
            c->initialized = 0;
            c->ncats = 0;
            c->name[0] = '\0';
            refresh_categories(c);
        }
        tracec_i_unlock(&tracec_i_global_mu);
    }
    tracec_i_unlock(&life_mu);
    return st;
}

tracec_status_t tracec_destroy_context(tracec_context_id_t context_id) {
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    tracec_status_t st = tracec_terminate_context(context_id);
    if (st != TRACEC_STATUS_SUCCESS) return st;
    static uint64_t list[TRACEC_MAX_BUFFERS];
    tracec_i_lock(&life_mu);
    tracec_i_lock(&tracec_i_global_mu);
    size_t n = buffers_of(context_id.handle, list);
    tracec_i_unlock(&tracec_i_global_mu);
    for (size_t i = 0; i < n; i++) (void)tracec_destroy_buffer((tracec_buffer_id_t){list[i]});
    tracec_i_services_forget_context(context_id.handle);
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    if (c != NULL) {
        for (tracec_category_t *k = c->registered; k; k = k->i_next) k->i_context = 0;
        c->registered = NULL;
        LIVE(c).handle = 0;
    }
    tracec_i_unlock(&tracec_i_global_mu);
    tracec_i_unlock(&life_mu);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_context_is_active(tracec_context_id_t context_id, int *active) {
    if (active == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_lock(&tracec_i_global_mu);
    ctx *c = find(context_id.handle);
    if (c != NULL) *active = LIVE(c).started;
    tracec_i_unlock(&tracec_i_global_mu);
    return c == NULL ? TRACEC_STATUS_CONTEXT_NOT_FOUND : TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_finalize(void) {
    if (tracec_i_current_thread != NULL || tracec_i_thread_has_open_packet()) return TRACEC_STATUS_WOULD_DEADLOCK;
    if (atomic_exchange_explicit(&finalizing, 1, memory_order_acq_rel)) return TRACEC_STATUS_SUCCESS;
    tracec_i_lock(&life_mu);
    for (size_t i = 0; i < TRACEC_MAX_CONTEXTS; i++) {
        tracec_i_lock(&tracec_i_global_mu);
        uint64_t h = tracec_i_contexts[i].handle;
        tracec_i_unlock(&tracec_i_global_mu);
        if (h != 0) (void)stop_locked(h);
    }
    /* Buffers of stopped contexts may still hold flush requests: deliver them. */
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        uint64_t live = atomic_load_explicit(&b->live, memory_order_acquire);
        start_or_stop(&live, live != 0, -1);
    }
    atomic_store_explicit(&tracec_i_finalized, 1, memory_order_release);
    tracec_i_threads_stop_all();
    for (size_t i = 0; i < TRACEC_MAX_BUFFERS; i++) {
        tracec_i_buffer *b = atomic_load_explicit(&tracec_i_buffers[i], memory_order_acquire);
        if (b == NULL) continue;
        tracec_i_lock(&b->mu);
        pthread_cond_broadcast(&b->cv);
        tracec_i_unlock(&b->mu);
    }
    tracec_i_unlock(&life_mu);
    return TRACEC_STATUS_SUCCESS;
}
