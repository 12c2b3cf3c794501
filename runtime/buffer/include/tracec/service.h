/*
 * tracec/service.h - buffer tracing services: kinds, operations, and their
 * routing to buffers (rocprofiler-sdk's buffer tracing services).
 *
 * A kind is a domain of records ("track_event", "interned_data", ...); an
 * operation is a subset of a kind.  The kinds this project produces are
 * built in; applications register their own with
 * tracec_register_buffer_tracing_kind().  A context routes a kind (all of
 * its operations, or a subset) to one buffer:
 *
 *     tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT,
 *                                             NULL, 0, buffer_id);
 *
 * Records of a service carry category TRACEC_BUFFER_CATEGORY_TRACING and the
 * kind.  Kinds flagged DURABLE (interned data, track and extension
 * descriptors) go to the durable part of ONESHOT and CIRCULAR buffers so
 * they outlive wrap-around.
 */
#ifndef TRACEC_SERVICE_H
#define TRACEC_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tracec/context.h"
#include "tracec/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_buffer_id_t {
    uint64_t handle;
} tracec_buffer_id_t;

/* The classification of a record (rocprofiler's rocprofiler_buffer_category_t). */
typedef enum tracec_buffer_category_t {
    TRACEC_BUFFER_CATEGORY_NONE = 0,
    /* Records of a configured tracing service; `kind` is a tracec_buffer_tracing_kind_t. */
    TRACEC_BUFFER_CATEGORY_TRACING = 1,
    /* Anything an application emits with its own kinds. */
    TRACEC_BUFFER_CATEGORY_USER = 2,
    TRACEC_BUFFER_CATEGORY_LAST
} tracec_buffer_category_t;

/* Kinds (domains).  Built-in values are fixed; registered kinds follow LAST. */
typedef uint32_t tracec_buffer_tracing_kind_t;
enum {
    TRACEC_BUFFER_TRACING_NONE = 0,
    TRACEC_BUFFER_TRACING_TRACK_EVENT = 1,          /* TracePackets with a TrackEvent */
    TRACEC_BUFFER_TRACING_TRACK_DESCRIPTOR = 2,     /* durable: TrackDescriptor packets */
    TRACEC_BUFFER_TRACING_EXTENSION_DESCRIPTOR = 3, /* durable: ExtensionDescriptor packets */
    TRACEC_BUFFER_TRACING_INTERNED_DATA = 4,        /* durable: InternedData packets */
    TRACEC_BUFFER_TRACING_USER = 5,                 /* application records */
    TRACEC_BUFFER_TRACING_LAST
};

/* Operations of the built-in kinds. */
typedef int32_t tracec_tracing_operation_t;
enum {
    TRACEC_TRACK_EVENT_OP_SLICE_BEGIN = 0,
    TRACEC_TRACK_EVENT_OP_SLICE_END = 1,
    TRACEC_TRACK_EVENT_OP_INSTANT = 2,
    TRACEC_TRACK_EVENT_OP_COUNTER = 3,
    TRACEC_TRACK_EVENT_OP_LAST
};
enum {
    TRACEC_TRACK_DESCRIPTOR_OP_PROCESS = 0,
    TRACEC_TRACK_DESCRIPTOR_OP_THREAD = 1,
    TRACEC_TRACK_DESCRIPTOR_OP_CUSTOM = 2,
    TRACEC_TRACK_DESCRIPTOR_OP_LAST
};
enum {
    TRACEC_EXTENSION_DESCRIPTOR_OP_DESCRIPTOR = 0,
    TRACEC_EXTENSION_DESCRIPTOR_OP_LAST
};
enum {
    TRACEC_INTERNED_DATA_OP_EVENT_CATEGORY = 0,
    TRACEC_INTERNED_DATA_OP_EVENT_NAME = 1,
    TRACEC_INTERNED_DATA_OP_DEBUG_ANNOTATION_NAME = 2,
    TRACEC_INTERNED_DATA_OP_SOURCE_LOCATION = 3,
    TRACEC_INTERNED_DATA_OP_LAST
};
enum {
    TRACEC_USER_OP_RECORD = 0,
    TRACEC_USER_OP_LAST
};

/* Limits of the registry. */
#define TRACEC_MAX_BUFFER_TRACING_KINDS 64u
#define TRACEC_MAX_TRACING_OPERATIONS 64u
#define TRACEC_MAX_KIND_NAME_LENGTH 100u

/* Flags of a registered kind. */
#define TRACEC_BUFFER_TRACING_KIND_DURABLE 1u

/*
 * Registers an application kind with `num_operations` operations named by
 * `operation_names` (0..64, each 1..100 chars; the strings are copied).
 * *kind receives its value.  LIMIT_EXCEEDED when the registry is full or a
 * name is too long, INVALID_ARGUMENT for NULL/empty names or a name already
 * registered.  Thread-safe.
 */
tracec_status_t tracec_register_buffer_tracing_kind(const char *name,
                                                    const char *const *operation_names,
                                                    size_t num_operations, uint32_t flags,
                                                    tracec_buffer_tracing_kind_t *kind) TRACEC_I_WARN_UNUSED;

/*
 * Routes `kind` to `buffer_id` in `context_id`: all operations if
 * operations == NULL and operations_count == 0, else only the listed ones.
 * SERVICE_ALREADY_CONFIGURED when the kind is already configured on this
 * context; CONTEXT_NOT_FOUND, KIND_NOT_FOUND, OPERATION_NOT_FOUND,
 * BUFFER_NOT_FOUND for unknown ids; INVALID_ARGUMENT for a buffer of another
 * context or operations == NULL with a non-zero count.
 */
tracec_status_t tracec_configure_buffer_tracing_service(tracec_context_id_t context_id,
                                                        tracec_buffer_tracing_kind_t kind,
                                                        const tracec_tracing_operation_t *operations,
                                                        size_t operations_count,
                                                        tracec_buffer_id_t buffer_id);

/*
 * The buffer that receives (kind, operation) in the context, or
 * KIND_NOT_FOUND (kind unknown or not configured) / OPERATION_NOT_FOUND
 * (configured, but not for this operation).  Pass operation -1 for "any".
 */
tracec_status_t tracec_query_buffer_tracing_service(tracec_context_id_t context_id,
                                                    tracec_buffer_tracing_kind_t kind,
                                                    tracec_tracing_operation_t operation,
                                                    tracec_buffer_id_t *buffer_id) TRACEC_I_WARN_UNUSED;

/*
 * Emits a record of a configured service: routed to its buffer with category
 * TRACEC_BUFFER_CATEGORY_TRACING.  Returns the emit's status (see
 * tracec_buffer_emit), KIND_NOT_FOUND / OPERATION_NOT_FOUND when the service
 * is not configured for it (nothing is counted).
 */
tracec_status_t tracec_service_emit(tracec_context_id_t context_id, tracec_buffer_tracing_kind_t kind,
                                    tracec_tracing_operation_t operation, const void *payload,
                                    size_t size) TRACEC_I_WARN_UNUSED;

/* The kind's name (static, NUL-terminated) and its length.  KIND_NOT_FOUND. */
tracec_status_t tracec_query_buffer_tracing_kind_name(tracec_buffer_tracing_kind_t kind,
                                                      const char **name, uint64_t *name_len) TRACEC_I_WARN_UNUSED;

/* An operation's name.  KIND_NOT_FOUND, OPERATION_NOT_FOUND. */
tracec_status_t tracec_query_buffer_tracing_kind_operation_name(tracec_buffer_tracing_kind_t kind,
                                                                tracec_tracing_operation_t operation,
                                                                const char **name, uint64_t *name_len) TRACEC_I_WARN_UNUSED;

/* Iteration callbacks: return 0 to continue, anything else to stop. */
typedef int (*tracec_buffer_tracing_kind_cb_t)(tracec_buffer_tracing_kind_t kind, void *data);
typedef int (*tracec_buffer_tracing_kind_operation_cb_t)(tracec_buffer_tracing_kind_t kind,
                                                         tracec_tracing_operation_t operation,
                                                         void *data);

/* Calls `callback` for every kind (NONE excluded), in increasing order. */
tracec_status_t tracec_iterate_buffer_tracing_kinds(tracec_buffer_tracing_kind_cb_t callback, void *data);

/* Calls `callback` for every operation of `kind`.  KIND_NOT_FOUND. */
tracec_status_t tracec_iterate_buffer_tracing_kind_operations(tracec_buffer_tracing_kind_t kind,
                                                              tracec_buffer_tracing_kind_operation_cb_t callback,
                                                              void *data);

/* *durable = whether the kind's records go to the durable part.  KIND_NOT_FOUND. */
tracec_status_t tracec_query_buffer_tracing_kind_durable(tracec_buffer_tracing_kind_t kind, int *durable) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_SERVICE_H */
