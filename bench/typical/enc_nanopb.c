/*
 * enc_nanopb.c - the typical packet through nanopb 0.4.7 (generated from
 * peer/typical_flat.proto with peer/typical_flat.options: static arrays,
 * no callbacks).  The message struct lives in a reusable context; each call
 * fills it from the input and pb_encode()s it into a buffer stream.
 */
#include <pb_encode.h>
#include <stdlib.h>
#include <string.h>

#include "typical.h"
#include "typical_flat.pb.h"

void *bench_nanopb_new(void) {
    benchflat_TracePacket *pkt = calloc(1, sizeof *pkt);
    return pkt;
}

void bench_nanopb_free(void *ctx) { free(ctx); }

BENCH_NOINLINE size_t bench_encode_nanopb(void *ctx, const bench_input *in, uint8_t *buf,
                                          size_t cap) {
    benchflat_TracePacket *pkt = ctx;
    benchflat_TrackEvent *ev = &pkt->data.track_event;
    if (in->label_len >= sizeof ev->bench_label) return 0;
    pkt->has_timestamp = true;
    pkt->timestamp = in->timestamp;
    pkt->which_optional_trusted_packet_sequence_id =
        benchflat_TracePacket_trusted_packet_sequence_id_tag;
    pkt->optional_trusted_packet_sequence_id.trusted_packet_sequence_id = in->sequence_id;
    pkt->which_data = benchflat_TracePacket_track_event_tag;
    ev->has_type = true;
    ev->type = (benchflat_TrackEvent_Type)in->type;
    ev->has_track_uuid = true;
    ev->track_uuid = in->track_uuid;
    ev->which_name_field = benchflat_TrackEvent_name_iid_tag;
    ev->name_field.name_iid = in->name_iid;
    ev->category_iids_count = 1;
    ev->category_iids[0] = in->category_iid;
    ev->debug_annotations_count = 1;
    ev->debug_annotations[0].which_name_field = benchflat_DebugAnnotation_name_iid_tag;
    ev->debug_annotations[0].name_field.name_iid = in->annotation_name_iid;
    ev->debug_annotations[0].which_value = benchflat_DebugAnnotation_int_value_tag;
    ev->debug_annotations[0].value.int_value = in->annotation_int;
    ev->has_bench_counter = true;
    ev->bench_counter = in->counter;
    ev->has_bench_label = true;
    memcpy(ev->bench_label, in->label, in->label_len + 1);
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    if (!pb_encode(&s, benchflat_TracePacket_fields, pkt)) return 0;
    return s.bytes_written;
}
