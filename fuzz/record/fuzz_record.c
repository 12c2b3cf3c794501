/*
 * fuzz_record.c - libFuzzer target: hostile bytes as the contents of a
 * provider's shared-buffer half, through the recorder's record reader
 * (tracec_recorder_read_records), the code that sees whatever a provider
 * wrote.  Every record it accepts must come out as one whole Trace.packet
 * with the trusted fields added; anything else is CORRUPT_DATA with the
 * records before it kept.  Crashes, leaks, sanitizer reports and hangs are
 * bugs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tracec/recorder.h"
#include "tracec/trace_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tracec_trace_file *f;
    if (tracec_trace_file_open_memory(&f) != TRACEC_STATUS_SUCCESS) return 0;
    uint64_t n = 0;
    size_t bad = 0;
    tracec_status_t st = tracec_recorder_read_records(data, size, f, 7, 1234, 1000, &n, &bad, NULL);
    if (st != TRACEC_STATUS_SUCCESS && st != TRACEC_STATUS_CORRUPT_DATA) abort();
    if (st == TRACEC_STATUS_CORRUPT_DATA && bad >= size) abort();
    if (tracec_trace_file_packets(f) != n) abort();
    /* what came out is whole Trace fields: appending it to another trace must be accepted */
    tracec_trace_file *g;
    if (tracec_trace_file_open_memory(&g) == TRACEC_STATUS_SUCCESS) {
        size_t k = 0;
        const uint8_t *d = tracec_trace_file_data(f, &k);
        if (k > 0 && tracec_trace_file_append_raw(g, d, k) != TRACEC_STATUS_SUCCESS) abort();
        if (tracec_trace_file_packets(g) != n) abort();
        tracec_trace_file_close(g);
    }
    tracec_trace_file_close(f);
    return 0;
}
