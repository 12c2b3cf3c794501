/*
 * service.c - the registry of buffer tracing kinds and their operations,
 * and the per-context routing of kinds to buffers.
 *
 * Kinds are append-only: an entry is complete before g_nkinds counts it,
 * so readers need no lock.  Service routes change rarely (at setup) and
 * are kept under a mutex.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "buffer_internal.h"

typedef struct kind_entry {
    const char *name;
    uint32_t flags;
    size_t nops;
    const char *ops[TRACEC_MAX_TRACING_OPERATIONS];
} kind_entry;

static kind_entry g_kinds[TRACEC_MAX_BUFFER_TRACING_KINDS] = {
    [TRACEC_BUFFER_TRACING_NONE] = {"NONE", 0, 0, {NULL}},
    [TRACEC_BUFFER_TRACING_TRACK_EVENT] = {"TRACK_EVENT", 0, 4, {"SLICE_BEGIN", "SLICE_END", "INSTANT", "COUNTER"}},
    [TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR] =
        {"TRACK_DESCRIPTOR", TRACEC_BUFFER_TRACING_KIND_DURABLE, 3, {"PROCESS", "THREAD", "CUSTOM"}},
    [TRACEC_BUFFER_TRACING_EXTENSION_DESCRIPTOR] =
        {"EXTENSION_DESCRIPTOR", TRACEC_BUFFER_TRACING_KIND_DURABLE, 1, {"DESCRIPTOR"}},
    [TRACEC_BUFFER_TRACING_INTERNED_DATA] =
        {"INTERNED_DATA",
         TRACEC_BUFFER_TRACING_KIND_DURABLE,
         4,
         {"EVENT_CATEGORY", "EVENT_NAME", "DEBUG_ANNOTATION_NAME", "SOURCE_LOCATION"}},
    [TRACEC_BUFFER_TRACING_USER] = {"USER", 0, 1, {"RECORD"}},
};
static _Atomic uint32_t g_nkinds = TRACEC_BUFFER_TRACING_LAST;
static pthread_mutex_t g_kinds_mu = PTHREAD_MUTEX_INITIALIZER;

static const kind_entry *kind_get(uint32_t kind) {
    if (kind == TRACEC_BUFFER_TRACING_NONE || kind >= atomic_load_explicit(&g_nkinds, memory_order_acquire))
        return NULL;
    return &g_kinds[kind];
}

bool tracec_i_kind_durable(uint32_t kind) {
    const kind_entry *k = kind_get(kind);
    return k != NULL && (k->flags & TRACEC_BUFFER_TRACING_KIND_DURABLE) != 0;
}

static char *dup_name(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool name_ok(const char *s, tracec_status_t *st) {
    if (s == NULL || s[0] == '\0') {
        *st = TRACEC_STATUS_INVALID_ARGUMENT;
        return false;
    }
    if (strnlen(s, TRACEC_MAX_KIND_NAME_LENGTH + 1u) > TRACEC_MAX_KIND_NAME_LENGTH) {
        *st = TRACEC_STATUS_LIMIT_EXCEEDED;
        return false;
    }
    return true;
}

tracec_status_t tracec_register_buffer_tracing_kind(const char *name, const char *const *operation_names,
                                                    size_t num_operations, uint32_t flags,
                                                    tracec_buffer_tracing_kind_t *kind) {
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (kind == NULL || (num_operations > 0 && operation_names == NULL) ||
        (flags & ~TRACEC_BUFFER_TRACING_KIND_DURABLE) != 0)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    if (!name_ok(name, &st)) return st;
    if (num_operations > TRACEC_MAX_TRACING_OPERATIONS) return TRACEC_STATUS_LIMIT_EXCEEDED;
    for (size_t i = 0; i < num_operations; i++)
        if (!name_ok(operation_names[i], &st)) return st;
    pthread_mutex_lock(&g_kinds_mu);
    uint32_t n = atomic_load_explicit(&g_nkinds, memory_order_relaxed);
    for (uint32_t k = 1; k < n; k++) {
        if (strcmp(g_kinds[k].name, name) == 0) {
            pthread_mutex_unlock(&g_kinds_mu);
            return TRACEC_STATUS_INVALID_ARGUMENT;
        }
    }
    if (n >= TRACEC_MAX_BUFFER_TRACING_KINDS) {
        pthread_mutex_unlock(&g_kinds_mu);
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    kind_entry *e = &g_kinds[n];
    memset(e, 0, sizeof *e);
    e->name = dup_name(name);
    bool ok = e->name != NULL;
    for (size_t i = 0; ok && i < num_operations; i++) ok = (e->ops[i] = dup_name(operation_names[i])) != NULL;
    if (!ok) {
        free((void *)e->name);
        for (size_t i = 0; i < num_operations; i++) free((void *)e->ops[i]);
        memset(e, 0, sizeof *e);
        pthread_mutex_unlock(&g_kinds_mu);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    e->nops = num_operations;
    e->flags = flags;
    atomic_store_explicit(&g_nkinds, n + 1u, memory_order_release);
    pthread_mutex_unlock(&g_kinds_mu);
    *kind = n;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_query_buffer_tracing_kind_name(tracec_buffer_tracing_kind_t kind, const char **name,
                                                      uint64_t *name_len) {
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (name) *name = k->name;
    if (name_len) *name_len = strlen(k->name);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_query_buffer_tracing_kind_operation_name(tracec_buffer_tracing_kind_t kind,
                                                                tracec_tracing_operation_t operation,
                                                                const char **name, uint64_t *name_len) {
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (operation < 0 || (size_t)operation >= k->nops) return TRACEC_STATUS_OPERATION_NOT_FOUND;
    if (name) *name = k->ops[operation];
    if (name_len) *name_len = strlen(k->ops[operation]);
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_iterate_buffer_tracing_kinds(tracec_buffer_tracing_kind_cb_t callback, void *data) {
    if (callback == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    uint32_t n = atomic_load_explicit(&g_nkinds, memory_order_acquire);
    for (uint32_t k = 1; k < n; k++)
        if (callback(k, data) != 0) break;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_iterate_buffer_tracing_kind_operations(tracec_buffer_tracing_kind_t kind,
                                                              tracec_buffer_tracing_kind_operation_cb_t callback,
                                                              void *data) {
    if (callback == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    for (size_t i = 0; i < k->nops; i++)
        if (callback(kind, (tracec_tracing_operation_t)i, data) != 0) break;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_query_buffer_tracing_kind_durable(tracec_buffer_tracing_kind_t kind, int *durable) {
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (durable == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    *durable = (k->flags & TRACEC_BUFFER_TRACING_KIND_DURABLE) != 0;
    return TRACEC_STATUS_SUCCESS;
}

/* ---- routing ------------------------------------------------------------------ */

typedef struct route {
    uint64_t ctx;    /* context handle, 0 = unused */
    uint64_t buffer; /* buffer handle */
    uint64_t ops;    /* operation bitmask */
} route;

static route g_routes[TRACEC_MAX_CONTEXTS][TRACEC_MAX_BUFFER_TRACING_KINDS];
static pthread_mutex_t g_routes_mu = PTHREAD_MUTEX_INITIALIZER;

static route *route_of(uint64_t ctx, uint32_t kind) {
    uint64_t slot = ctx & 0xffu;
    if (slot == 0 || slot > TRACEC_MAX_CONTEXTS || kind >= TRACEC_MAX_BUFFER_TRACING_KINDS) return NULL;
    return &g_routes[slot - 1][kind];
}

tracec_status_t tracec_configure_buffer_tracing_service(tracec_context_id_t context_id,
                                                        tracec_buffer_tracing_kind_t kind,
                                                        const tracec_tracing_operation_t *operations,
                                                        size_t operations_count, tracec_buffer_id_t buffer_id) {
    if (!tracec_i_context_exists(context_id.handle)) return TRACEC_STATUS_CONTEXT_NOT_FOUND;
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (operations == NULL && operations_count != 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    uint64_t mask = 0;
    if (operations_count == 0) {
        mask = k->nops >= 64 ? ~0ull : ((1ull << k->nops) - 1ull);
        if (k->nops == 0) mask = ~0ull;
    }
    for (size_t i = 0; i < operations_count; i++) {
        if (operations[i] < 0 || (size_t)operations[i] >= k->nops) return TRACEC_STATUS_OPERATION_NOT_FOUND;
        mask |= 1ull << operations[i];
    }
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    if (b->ctx_handle != context_id.handle) return TRACEC_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_routes_mu);
    route *r = route_of(context_id.handle, kind);
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (r->ctx == context_id.handle) {
        st = TRACEC_STATUS_SERVICE_ALREADY_CONFIGURED;
    } else {
        r->ctx = context_id.handle;
        r->buffer = buffer_id.handle;
        r->ops = mask;
    }
    pthread_mutex_unlock(&g_routes_mu);
    return st;
}

tracec_status_t tracec_query_buffer_tracing_service(tracec_context_id_t context_id,
                                                    tracec_buffer_tracing_kind_t kind,
                                                    tracec_tracing_operation_t operation,
                                                    tracec_buffer_id_t *buffer_id) {
    if (buffer_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    const kind_entry *k = kind_get(kind);
    if (k == NULL) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (operation >= 0 && (size_t)operation >= k->nops && k->nops > 0) return TRACEC_STATUS_OPERATION_NOT_FOUND;
    pthread_mutex_lock(&g_routes_mu);
    route *r = route_of(context_id.handle, kind);
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (r == NULL || r->ctx != context_id.handle) {
        st = TRACEC_STATUS_KIND_NOT_FOUND;
    } else if (operation >= 0 && operation < 64 && !(r->ops & (1ull << operation))) {
        st = TRACEC_STATUS_OPERATION_NOT_FOUND;
    } else {
        buffer_id->handle = r->buffer;
    }
    pthread_mutex_unlock(&g_routes_mu);
    if (st == TRACEC_STATUS_SUCCESS && !tracec_i_context_exists(context_id.handle))
        st = TRACEC_STATUS_CONTEXT_NOT_FOUND;
    return st;
}

tracec_status_t tracec_service_emit(tracec_context_id_t context_id, tracec_buffer_tracing_kind_t kind,
                                    tracec_tracing_operation_t operation, const void *payload, size_t size) {
    tracec_buffer_id_t id;
    tracec_status_t st = tracec_query_buffer_tracing_service(context_id, kind, operation, &id);
    if (st != TRACEC_STATUS_SUCCESS) return st;
    return tracec_buffer_emit(id, TRACEC_BUFFER_CATEGORY_TRACING, kind, payload, size);
}

void tracec_i_services_forget_context(uint64_t ctx_handle) {
    pthread_mutex_lock(&g_routes_mu);
    uint64_t slot = ctx_handle & 0xffu;
    if (slot >= 1 && slot <= TRACEC_MAX_CONTEXTS)
        for (size_t k = 0; k < TRACEC_MAX_BUFFER_TRACING_KINDS; k++)
            if (g_routes[slot - 1][k].ctx == ctx_handle) g_routes[slot - 1][k].ctx = 0;
    pthread_mutex_unlock(&g_routes_mu);
}
