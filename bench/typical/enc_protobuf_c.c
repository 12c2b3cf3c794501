/*
 * enc_protobuf_c.c - the typical packet through protobuf-c 1.4.1 (generated
 * by protoc-c from peer/typical_flat.proto).  The message structs live in a
 * reusable context; each call fills them from the input and packs into the
 * caller's buffer.  pack() has no capacity argument: the buffer is known to
 * be large enough (checked once before timing), so no get_packed_size()
 * call is paid here -- the peer's best case.
 */
#include <stdlib.h>

#include "typical.h"
#include "typical_flat.pb-c.h"

typedef struct pc_ctx {
    Benchflat__TracePacket pkt;
    Benchflat__TrackEvent ev;
    Benchflat__DebugAnnotation arg;
    Benchflat__DebugAnnotation *args[1];
    uint64_t cats[1];
} pc_ctx;

void *bench_protobuf_c_new(void) {
    pc_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    benchflat__trace_packet__init(&c->pkt);
    benchflat__track_event__init(&c->ev);
    benchflat__debug_annotation__init(&c->arg);
    c->args[0] = &c->arg;
    return c;
}

void bench_protobuf_c_free(void *ctx) { free(ctx); }

BENCH_NOINLINE size_t bench_encode_protobuf_c(void *ctx, const bench_input *in, uint8_t *buf,
                                              size_t cap) {
    pc_ctx *c = ctx;
    (void)cap;
    c->pkt.has_timestamp = 1;
    c->pkt.timestamp = in->timestamp;
    c->pkt.optional_trusted_packet_sequence_id_case =
        BENCHFLAT__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
    c->pkt.trusted_packet_sequence_id = in->sequence_id;
    c->pkt.data_case = BENCHFLAT__TRACE_PACKET__DATA_TRACK_EVENT;
    c->pkt.track_event = &c->ev;
    c->ev.has_type = 1;
    c->ev.type = (Benchflat__TrackEvent__Type)in->type;
    c->ev.has_track_uuid = 1;
    c->ev.track_uuid = in->track_uuid;
    c->ev.name_field_case = BENCHFLAT__TRACK_EVENT__NAME_FIELD_NAME_IID;
    c->ev.name_iid = in->name_iid;
    c->cats[0] = in->category_iid;
    c->ev.n_category_iids = 1;
    c->ev.category_iids = c->cats;
    c->arg.name_field_case = BENCHFLAT__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
    c->arg.name_iid = in->annotation_name_iid;
    c->arg.value_case = BENCHFLAT__DEBUG_ANNOTATION__VALUE_INT_VALUE;
    c->arg.int_value = in->annotation_int;
    c->ev.n_debug_annotations = 1;
    c->ev.debug_annotations = c->args;
    c->ev.has_bench_counter = 1;
    c->ev.bench_counter = in->counter;
    c->ev.bench_label = (char *)in->label;
    return benchflat__trace_packet__pack(&c->pkt, buf);
}
