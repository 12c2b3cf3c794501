/*
 * registry.c - the list of descriptors compiled into the program.
 *
 * A singly linked list, most recent first.  Readers never lock: an entry's
 * `next` is written once, before the entry is published by the release
 * store of the head, and never again, so a reader that loads the head with
 * acquire sees every entry it reaches fully linked.  Adds are serialised by
 * a spin lock (they happen in constructors, a handful per program): the
 * "already registered?" check and the push are one step, so the same
 * descriptor added from several threads at once is linked exactly once and
 * no entry's `next` is ever rewritten (which could close a cycle).  The
 * core links no thread library, hence a C11 atomic_flag, not a mutex.
 */
#define _POSIX_C_SOURCE 200809L /* sched_yield() */
#include "tracec/registry.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sched.h>
#define TRACEC_I_YIELD() sched_yield()
#else
#define TRACEC_I_YIELD() ((void)0)
#endif

static _Atomic(tracec_file_descriptor *) list_head;
static atomic_flag add_lock = ATOMIC_FLAG_INIT;

/* Under add_lock: `next` pointers of published entries are never written. */
static bool contains(const tracec_file_descriptor *d) {
    for (const tracec_file_descriptor *it = atomic_load_explicit(&list_head, memory_order_relaxed); it;
         it = it->next)
        if (it == d) return true;
    return false;
}

void tracec_registry_add(tracec_file_descriptor *d) {
    if (d == NULL) return;
    while (atomic_flag_test_and_set_explicit(&add_lock, memory_order_acquire)) TRACEC_I_YIELD();
    if (!contains(d)) {
        d->next = atomic_load_explicit(&list_head, memory_order_relaxed);
        atomic_store_explicit(&list_head, d, memory_order_release);
    }
    atomic_flag_clear_explicit(&add_lock, memory_order_release);
}

const tracec_file_descriptor *tracec_registry_first(void) {
    return atomic_load_explicit(&list_head, memory_order_acquire);
}

const tracec_file_descriptor *tracec_registry_next(const tracec_file_descriptor *d) {
    return d ? d->next : NULL;
}

const tracec_file_descriptor *tracec_registry_find(const char *file_name) {
    if (file_name == NULL) return NULL;
    for (const tracec_file_descriptor *it = tracec_registry_first(); it; it = it->next)
        if (strcmp(it->file_name, file_name) == 0) return it;
    return NULL;
}

void tracec_write_extension_descriptor(tracec_msg *packet, const tracec_file_descriptor *d) {
    tracec_msg ext;
    tracec_msg_begin_nested(packet, TRACEC_TAG(72, TRACEC_WIRE_LEN), &ext);
    /* ExtensionDescriptor.extension_set = 1: the set's bytes are the message body. */
    tracec_msg_put_bytes(&ext, TRACEC_TAG(1, TRACEC_WIRE_LEN), d->set, d->set_size);
    tracec_msg_put_cstr(&ext, TRACEC_TAG(3, TRACEC_WIRE_LEN), d->file_name);
    tracec_msg_end_nested(packet, &ext);
}
