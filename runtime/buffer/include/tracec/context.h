/*
 * tracec/context.h - contexts, their start/stop lifecycle and categories.
 *
 * A context groups buffers and the tracing services configured on them, in
 * the shape of rocprofiler-sdk's contexts, with the lifecycle of a Fuchsia
 * trace provider:
 *
 *     tracec_create_context(&ctx);                         // once
 *     tracec_initialize_context(ctx, &provider_config);    // name + categories
 *     tracec_start_context(ctx);                           // or _with_options
 *     ... records are accepted ...
 *     tracec_stop_context(ctx);                            // delivers everything
 *     tracec_start_context_with_options(ctx, &opts);       // another run
 *     tracec_stop_context(ctx);
 *     tracec_terminate_context(ctx);                       // end of the session
 *
 * Buffers of a context accept records only while it is started; otherwise
 * emits return TRACEC_STATUS_CLOSED.  tracec_finalize() (also run at process
 * exit) stops every context, delivers everything and ends the callback
 * threads; it is idempotent.
 *
 * Ids are structs with a non-zero `handle` once created; a zero handle is
 * never valid.  Every call checks its ids and returns a status, never
 * crashes on a stale or made-up id.
 */
#ifndef TRACEC_CONTEXT_H
#define TRACEC_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/status.h"
#include "tracec/abi/attributes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of the Fuchsia provider protocol. */
#define TRACEC_MAX_PROVIDER_NAME_LENGTH 100u
#define TRACEC_MAX_NUM_CATEGORIES 100u
#define TRACEC_MAX_CATEGORY_NAME_LENGTH 100u

/* Limits of this implementation. */
#define TRACEC_MAX_CONTEXTS 64u

typedef struct tracec_context_id_t {
    uint64_t handle;
} tracec_context_id_t;

/* What to do with a buffer's contents when a run starts (Fuchsia's BufferDisposition). */
typedef enum tracec_buffer_disposition_t {
    TRACEC_BUFFER_DISPOSITION_NONE = 0,
    /* Clear everything, durable part included; interned indices become stale
       (the buffer's epoch changes, see tracec_buffer_epoch). */
    TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE = 1,
    /* Clear the non-durable part; the durable part and its indices stay valid. */
    TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE = 2,
    /* Keep everything; the new run continues where the last one left off. */
    TRACEC_BUFFER_DISPOSITION_RETAIN = 3,
    TRACEC_BUFFER_DISPOSITION_LAST
} tracec_buffer_disposition_t;

/* Initialize's configuration (Fuchsia's ProviderConfig, minus the buffer). */
typedef struct tracec_provider_config_t {
    const char *name;               /* provider name, <= 100 chars; NULL for none */
    const char *const *categories;  /* enabled categories; none = every category */
    size_t num_categories;          /* <= 100; each name 1..100 chars */
} tracec_provider_config_t;

#define TRACEC_PROVIDER_CONFIG_INIT {NULL, NULL, 0}

/* Start's options (Fuchsia's StartOptions). */
typedef struct tracec_start_options_t {
    tracec_buffer_disposition_t disposition;  /* NONE means RETAIN */
    const char *const *additional_categories; /* added to the initial set for this run */
    size_t num_additional_categories;         /* initial + additional <= 100 */
} tracec_start_options_t;

#define TRACEC_START_OPTIONS_INIT {TRACEC_BUFFER_DISPOSITION_RETAIN, NULL, 0}

/* Creates a context (stopped, not initialized).  INVALID_ARGUMENT if id is
   NULL, LIMIT_EXCEEDED after TRACEC_MAX_CONTEXTS, BAD_STATE after finalize. */
tracec_status_t tracec_create_context(tracec_context_id_t *context_id) TRACEC_I_WARN_UNUSED;

/*
 * Sets the provider name and initial categories.  Ignored (SUCCESS, nothing
 * changes) while already initialized, as the Fuchsia protocol requires.
 * LIMIT_EXCEEDED for names over 100 chars or more than 100 categories;
 * INVALID_ARGUMENT for NULL/empty category names.
 */
tracec_status_t tracec_initialize_context(tracec_context_id_t context_id,
                                          const tracec_provider_config_t *config);

/* Starts with the default options (RETAIN, no extra categories). */
tracec_status_t tracec_start_context(tracec_context_id_t context_id);

/*
 * Starts a run: applies the disposition to every buffer of the context and
 * enables the additional categories.  Starting a started context is a no-op
 * (SUCCESS).  A context that was never initialized is initialized with all
 * categories enabled.
 */
tracec_status_t tracec_start_context_with_options(tracec_context_id_t context_id,
                                                  const tracec_start_options_t *options);

/*
 * Stops the run: the buffers stop accepting records and everything accepted
 * is delivered before this returns (asynchronously when called from a
 * callback thread).  Stopping a stopped context is a no-op.
 */
tracec_status_t tracec_stop_context(tracec_context_id_t context_id);

/* Stops if needed and ends the session (categories forgotten).  Idempotent. */
tracec_status_t tracec_terminate_context(tracec_context_id_t context_id);

/* Terminates and destroys the context and its buffers.  Later use of the id: CONTEXT_NOT_FOUND. */
tracec_status_t tracec_destroy_context(tracec_context_id_t context_id);

/* *active = whether the context is started. */
tracec_status_t tracec_context_is_active(tracec_context_id_t context_id, int *active) TRACEC_I_WARN_UNUSED;

/* *enabled = whether `category` is enabled in the current run (false while stopped). */
tracec_status_t tracec_context_category_enabled(tracec_context_id_t context_id,
                                                const char *category, bool *enabled) TRACEC_I_WARN_UNUSED;

/*
 * The cheap check: a category object the application keeps (usually static)
 * and registers once; the runtime updates its flag at every start/stop, so
 * asking costs one relaxed load:
 *
 *     static tracec_category_t gfx = TRACEC_CATEGORY_INIT("gfx");
 *     tracec_register_category(ctx, &gfx);
 *     if (tracec_category_is_enabled(&gfx)) { ... }
 *
 * The object must stay alive (and registered) until the context is destroyed.
 */
typedef struct tracec_category_t {
    const char *name;                 /* set by TRACEC_CATEGORY_INIT; <= 100 chars */
    uint32_t enabled;                 /* read with tracec_category_is_enabled() */
    uint64_t i_context;               /* private */
    struct tracec_category_t *i_next; /* private */
} tracec_category_t;

#define TRACEC_CATEGORY_INIT(name) {(name), 0u, 0u, NULL}

/* INVALID_ARGUMENT (NULL, empty name, already registered elsewhere), LIMIT_EXCEEDED (name too long). */
tracec_status_t tracec_register_category(tracec_context_id_t context_id, tracec_category_t *category);

static inline bool tracec_category_is_enabled(const tracec_category_t *category) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&category->enabled, __ATOMIC_RELAXED) != 0u;
#else
    return category->enabled != 0u;
#endif
}

/*
 * Stops every context (delivering everything), ends the callback threads.
 * Idempotent; registered with atexit() the first time the runtime is used.
 * Afterwards emits return CLOSED and creations BAD_STATE.
 */
tracec_status_t tracec_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_CONTEXT_H */
