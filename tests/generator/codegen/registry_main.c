/*
 * registry_main.c - prints the file name of every descriptor in the
 * compile-time registry, one a line (the corpus and static-library tests
 * compare the list with the files they generated).
 */
#include <stdio.h>

#include "tracec/registry.h"

int main(void) {
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d))
        printf("%s %zu\n", d->file_name, d->set_size);
    return 0;
}
