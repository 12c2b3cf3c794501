/* doc-sample: run - Criterion tests; `trace` is a memory trace, example_trace.h the example's writers. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "example_trace.h"
#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "tracec/testing.h"
#include "tracec/trace_file.h"

static tracec_trace_file *trace;

__attribute__((constructor)) static void doc_open_trace(void) {
    if (tracec_trace_file_open_memory(&trace) != TRACEC_STATUS_SUCCESS) abort();
}

@SAMPLE@
