/*
 * kinds.c - the registry of buffer tracing kinds and their operations
 * (tracec/service.h).  The buffers ask it which kinds are durable.
 *
 * Kinds are append-only: an entry is complete before the kind count
 * includes it, so readers need no lock.
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

static kind_entry kind_table[TRACEC_MAX_BUFFER_TRACING_KINDS] = {
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
static _Atomic uint32_t nkinds = TRACEC_BUFFER_TRACING_LAST;
static pthread_mutex_t kinds_mu = PTHREAD_MUTEX_INITIALIZER;

static const kind_entry *kind_get(uint32_t kind) {
    if (kind == TRACEC_BUFFER_TRACING_NONE || kind >= atomic_load_explicit(&nkinds, memory_order_acquire))
        return NULL;
    return &kind_table[kind];
}

bool tracec_i_kind_ops(uint32_t kind, size_t *nops) {
    const kind_entry *k = kind_get(kind);
    if (k != NULL) *nops = k->nops;
    return k != NULL;
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
    tracec_i_lock(&kinds_mu);
    uint32_t n = atomic_load_explicit(&nkinds, memory_order_relaxed);
    for (uint32_t k = 1; k < n; k++) {
        if (strcmp(kind_table[k].name, name) == 0) {
            tracec_i_unlock(&kinds_mu);
            return TRACEC_STATUS_INVALID_ARGUMENT;
        }
    }
    if (n >= TRACEC_MAX_BUFFER_TRACING_KINDS) {
        tracec_i_unlock(&kinds_mu);
        return TRACEC_STATUS_LIMIT_EXCEEDED;
    }
    kind_entry *e = &kind_table[n];
    memset(e, 0, sizeof *e);
    e->name = dup_name(name);
    bool ok = e->name != NULL;
    for (size_t i = 0; ok && i < num_operations; i++) ok = (e->ops[i] = dup_name(operation_names[i])) != NULL;
    if (!ok) {
        free((void *)e->name);
        for (size_t i = 0; i < num_operations; i++) free((void *)e->ops[i]);
        memset(e, 0, sizeof *e);
        tracec_i_unlock(&kinds_mu);
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    e->nops = num_operations;
    e->flags = flags;
    atomic_store_explicit(&nkinds, n + 1u, memory_order_release);
    tracec_i_unlock(&kinds_mu);
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
    uint32_t n = atomic_load_explicit(&nkinds, memory_order_acquire);
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
