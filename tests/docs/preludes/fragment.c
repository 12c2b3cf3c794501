/* doc-sample: compile - statements, inside a function with the variables the docs use
 * (leading #define lines and declaration macros of the block go to @FILE_SCOPE@). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "test_extensions.tracec.h"
#include "tracec/args.h"
#include "tracec/buffer.h"
#include "tracec/decode.h"
#include "tracec/descpool.h"
#include "tracec/diff.h"
#include "tracec/registry.h"
#include "tracec/textproto.h"
#include "tracec/trace_file.h"
#include "tracec/track_event.h"
#include "tracec/writer.h"

@FILE_SCOPE@
static void on_records(tracec_context_id_t context, tracec_buffer_id_t buffer_id,
                       tracec_record_header_t **headers, size_t count, void *user_data, uint64_t drop_count) {
    (void)context, (void)buffer_id, (void)headers, (void)count, (void)user_data, (void)drop_count;
}

int doc_sample(tracec_trace_file *file, tracec_trace_file *trace, uint64_t ts, void *user_data,
                const char *text, size_t len);
int doc_sample(tracec_trace_file *file, tracec_trace_file *trace, uint64_t ts, void *user_data,
                const char *text, size_t len) {
    tracec_writer w;
    tracec_error err;
    perfetto_protos_TracePacket pkt, packet;
    perfetto_protos_TrackEvent event;
    my_app_MyEvent ev;
    int n = 0;
    (void)n, (void)file, (void)trace, (void)ts, (void)user_data, (void)text, (void)len, (void)on_records;
    (void)w, (void)err, (void)pkt, (void)packet, (void)event, (void)ev;
    {
@SAMPLE@
    }
    return 0;
}
