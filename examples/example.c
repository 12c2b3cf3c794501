/*
 * example.c - writes a small Perfetto trace with typed custom fields.
 *
 *   ./example [OUT.pftrace]     (default: example.pftrace)
 *
 * The trace holds: the ExtensionDescriptor of my_events.proto (first, so a
 * decoder that was never compiled with it can still show the custom
 * fields), a track descriptor, a slice begin/end pair with a name and debug
 * annotations, and an instant `MyEvent` with its custom fields.
 */
#include <stdio.h>
#include <string.h>

#include "example_trace.h"
#include "tracec/version.h"

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "example.pftrace";
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("example (tracec %s)\n", TRACEC_VERSION_STRING);
        return 0;
    }
    tracec_trace_file *f;
    tracec_status_t s = tracec_trace_file_open(path, &f);
    if (s != TRACEC_STATUS_SUCCESS) {
        perror(path);
        return 1;
    }
    example_write_trace(f);
    uint64_t packets = tracec_trace_file_packets(f);
    s = tracec_trace_file_close(f);
    if (s != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", path, tracec_status_str(s));
        return 1;
    }
    printf("wrote %llu packets to %s\n", (unsigned long long)packets, path);
    return 0;
}
