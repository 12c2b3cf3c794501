/* doc-sample: compile - file-scope code (declarations, definitions) after every public header. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "my_events.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"
#include "tracec/buffer.h"
#include "tracec/registry.h"
#include "tracec/trace_file.h"
#include "tracec/writer.h"

@SAMPLE@
