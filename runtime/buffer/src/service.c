/*
 * service.c - the per-context routing of buffer tracing kinds to buffers
 * (tracec/service.h).  Routes change rarely (at setup) and are kept under a
 * mutex.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "buffer_internal.h"

/* ---- routing ------------------------------------------------------------------ */

typedef struct route {
    uint64_t ctx;    /* context handle, 0 = unused */
    uint64_t buffer; /* buffer handle */
    uint64_t ops;    /* operation bitmask */
} route;

static route routes[TRACEC_MAX_CONTEXTS][TRACEC_MAX_BUFFER_TRACING_KINDS];
static pthread_mutex_t routes_mu = PTHREAD_MUTEX_INITIALIZER;

static route *route_of(uint64_t ctx, uint32_t kind) {
    uint64_t slot = ctx & 0xffu;
    if (slot == 0 || slot > TRACEC_MAX_CONTEXTS || kind >= TRACEC_MAX_BUFFER_TRACING_KINDS) return NULL;
    return &routes[slot - 1][kind];
}

tracec_status_t tracec_configure_buffer_tracing_service(tracec_context_id_t context_id,
                                                        tracec_buffer_tracing_kind_t kind,
                                                        const tracec_tracing_operation_t *operations,
                                                        size_t operations_count, tracec_buffer_id_t buffer_id) {
    if (!tracec_i_context_exists(context_id.handle)) return TRACEC_STATUS_CONTEXT_NOT_FOUND;
    size_t nops;
    if (!tracec_i_kind_ops(kind, &nops)) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (operations == NULL && operations_count != 0) return TRACEC_STATUS_INVALID_ARGUMENT;
    uint64_t mask = 0;
    if (operations_count == 0) {
        mask = nops >= 64 ? ~0ull : ((1ull << nops) - 1ull);
        if (nops == 0) mask = ~0ull;
    }
    for (size_t i = 0; i < operations_count; i++) {
        if (operations[i] < 0 || (size_t)operations[i] >= nops) return TRACEC_STATUS_OPERATION_NOT_FOUND;
        mask |= 1ull << operations[i];
    }
    tracec_i_buffer *b = tracec_i_buffer_get(buffer_id.handle);
    if (b == NULL) return TRACEC_STATUS_BUFFER_NOT_FOUND;
    bool other_context = b->ctx_handle != context_id.handle;
    tracec_i_buffer_put(b);
    if (other_context) return TRACEC_STATUS_INVALID_ARGUMENT;
    tracec_i_lock(&routes_mu);
    route *r = route_of(context_id.handle, kind);
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (r->ctx == context_id.handle) {
        st = TRACEC_STATUS_SERVICE_ALREADY_CONFIGURED;
    } else {
        r->ctx = context_id.handle;
        r->buffer = buffer_id.handle;
        r->ops = mask;
    }
    tracec_i_unlock(&routes_mu);
    return st;
}

tracec_status_t tracec_query_buffer_tracing_service(tracec_context_id_t context_id,
                                                    tracec_buffer_tracing_kind_t kind,
                                                    tracec_tracing_operation_t operation,
                                                    tracec_buffer_id_t *buffer_id) {
    if (buffer_id == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    size_t nops;
    if (!tracec_i_kind_ops(kind, &nops)) return TRACEC_STATUS_KIND_NOT_FOUND;
    if (operation >= 0 && (size_t)operation >= nops && nops > 0) return TRACEC_STATUS_OPERATION_NOT_FOUND;
    tracec_i_lock(&routes_mu);
    route *r = route_of(context_id.handle, kind);
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    if (r == NULL || r->ctx != context_id.handle) {
        st = TRACEC_STATUS_KIND_NOT_FOUND;
    } else if (operation >= 0 && operation < 64 && !(r->ops & (1ull << operation))) {
        st = TRACEC_STATUS_OPERATION_NOT_FOUND;
    } else {
        buffer_id->handle = r->buffer;
    }
    tracec_i_unlock(&routes_mu);
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
    tracec_i_lock(&routes_mu);
    uint64_t slot = ctx_handle & 0xffu;
    if (slot >= 1 && slot <= TRACEC_MAX_CONTEXTS)
        for (size_t k = 0; k < TRACEC_MAX_BUFFER_TRACING_KINDS; k++)
            if (routes[slot - 1][k].ctx == ctx_handle) routes[slot - 1][k].ctx = 0;
    tracec_i_unlock(&routes_mu);
}
