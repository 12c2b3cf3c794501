/* doc-sample: compile - assertions inside a Criterion test: `data`/`size` are a trace in memory, `trace` its file. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "tracec/testing.h"
#include "tracec/trace_file.h"

Test(doc, sample) {
    tracec_trace_file *trace;
    cr_assert_eq(tracec_trace_file_open_memory(&trace), TRACEC_STATUS_SUCCESS);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(trace, &size);
    (void)data, (void)size;
    {
@SAMPLE@
    }
    tracec_trace_file_close(trace);
}
