/*
 * enc_libprotobuf.cc - the libprotobuf row: the typical packet through
 * libprotobuf 3.21 C++ on the real schema, the way a C++ user of Perfetto's
 * protos writes it: protoc --cpp_out of protos/ plus bench_events.proto,
 * perfetto::protos::TracePacket, and the two custom fields as true
 * extensions of perfetto.protos.TrackEvent, set with SetExtension().
 *
 * Same fairness rules as the other peers: one TracePacket (and so its
 * TrackEvent, DebugAnnotation and extension entries) is made once and
 * reused; each call sets every field again (repeated fields are cleared and
 * re-added, which reuses their storage; the label, 11 bytes, fits the
 * std::string's inline buffer), so after the first packet nothing is
 * allocated.  SerializeToArray() then writes into the caller's buffer (it
 * sizes the message once, then writes it).
 *
 * Also here: the real-schema half of the decode check (bench_real_schema).
 */
#include <string>

#include "bench_events.pb.h"
#include "perfetto/trace/trace_packet.pb.h"
#include "typical.h"

namespace pp = perfetto::protos;

extern "C" void *bench_libprotobuf_new(void) { return new pp::TracePacket(); }

extern "C" void bench_libprotobuf_free(void *ctx) { delete static_cast<pp::TracePacket *>(ctx); }

extern "C" BENCH_NOINLINE size_t bench_encode_libprotobuf(void *ctx, const bench_input *in,
                                                          uint8_t *buf, size_t cap) {
    auto *pkt = static_cast<pp::TracePacket *>(ctx);
    pkt->set_timestamp(in->timestamp);
    pkt->set_trusted_packet_sequence_id(in->sequence_id);
    pp::TrackEvent *ev = pkt->mutable_track_event();
    ev->set_type(static_cast<pp::TrackEvent_Type>(in->type));
    ev->set_track_uuid(in->track_uuid);
    ev->set_name_iid(in->name_iid);
    ev->clear_category_iids();
    ev->add_category_iids(in->category_iid);
    ev->clear_debug_annotations();
    pp::DebugAnnotation *arg = ev->add_debug_annotations();
    arg->set_name_iid(in->annotation_name_iid);
    arg->set_int_value(in->annotation_int);
    ev->SetExtension(bench::BenchEvent::bench_counter, in->counter);
    ev->SetExtension(bench::BenchEvent::bench_label, std::string(in->label, in->label_len));
    if (!pkt->SerializeToArray(buf, static_cast<int>(cap))) return 0;
    return static_cast<size_t>(pkt->GetCachedSize()); // sized by SerializeToArray
}

extern "C" bool bench_real_schema(const uint8_t *data, size_t size, char *text, size_t text_cap) {
    pp::TracePacket pkt;
    if (!pkt.ParseFromArray(data, static_cast<int>(size))) return false;
    if (!pkt.has_track_event()) return false;
    const pp::TrackEvent &ev = pkt.track_event();
    // Both custom fields must have been read as the extensions they are, and
    // nothing may be left unknown.
    if (!ev.HasExtension(bench::BenchEvent::bench_counter) ||
        !ev.HasExtension(bench::BenchEvent::bench_label))
        return false;
    if (!pkt.unknown_fields().empty() || !ev.unknown_fields().empty()) return false;
    for (const auto &arg : ev.debug_annotations())
        if (!arg.unknown_fields().empty()) return false;
    if (text != nullptr && text_cap > 0) {
        std::string t = pkt.ShortDebugString();
        size_t n = t.size() < text_cap - 1 ? t.size() : text_cap - 1;
        t.copy(text, n);
        text[n] = '\0';
    }
    return true;
}
