/*
 * registry.c - the list of descriptors compiled into the program.
 * A lock-free singly linked list: registration happens in constructors, and
 * readers only ever see fully linked entries.
 */
#include "tracec/registry.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

static _Atomic(tracec_file_descriptor *) list_head;

static bool contains(const tracec_file_descriptor *d) {
    for (const tracec_file_descriptor *it = atomic_load(&list_head); it; it = it->next)
        if (it == d) return true;
    return false;
}

void tracec_registry_add(tracec_file_descriptor *d) {
    if (d == NULL || contains(d)) return;
    tracec_file_descriptor *head = atomic_load(&list_head);
    do {
        d->next = head;
    } while (!atomic_compare_exchange_weak(&list_head, &head, d));
}

const tracec_file_descriptor *tracec_registry_first(void) { return atomic_load(&list_head); }

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
