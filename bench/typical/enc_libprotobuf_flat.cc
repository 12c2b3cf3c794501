/*
 * enc_libprotobuf_flat.cc - the libprotobuf-flat row: the typical packet
 * through libprotobuf 3.21 C++ on the flattened schema (protoc --cpp_out of
 * peer/typical_flat.proto, where the two extension fields are plain
 * TrackEvent fields -- a best case, not how a C++ user of Perfetto's schema
 * writes them; that is enc_libprotobuf.cc), and the oracle that checks
 * every implementation's bytes.
 *
 * The message object is reused: each call sets every field again (repeated
 * fields are cleared and re-added, which reuses their storage), so after
 * the first packet nothing is allocated -- the peer's best case -- and then
 * SerializeToArray()s into the caller's buffer (which sizes the message
 * once, then writes it).
 */
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <string>

#include "typical.h"
#include "typical_flat.pb.h"

extern "C" void *bench_libprotobuf_flat_new(void) { return new benchflat::TracePacket(); }

extern "C" void bench_libprotobuf_flat_free(void *ctx) { delete static_cast<benchflat::TracePacket *>(ctx); }

extern "C" BENCH_NOINLINE size_t bench_encode_libprotobuf_flat(void *ctx, const bench_input *in,
                                                               uint8_t *buf, size_t cap) {
    auto *pkt = static_cast<benchflat::TracePacket *>(ctx);
    pkt->set_timestamp(in->timestamp);
    pkt->set_trusted_packet_sequence_id(in->sequence_id);
    benchflat::TrackEvent *ev = pkt->mutable_track_event();
    ev->set_type(static_cast<benchflat::TrackEvent_Type>(in->type));
    ev->set_track_uuid(in->track_uuid);
    ev->set_name_iid(in->name_iid);
    ev->clear_category_iids();
    ev->add_category_iids(in->category_iid);
    ev->clear_debug_annotations();
    benchflat::DebugAnnotation *arg = ev->add_debug_annotations();
    arg->set_name_iid(in->annotation_name_iid);
    arg->set_int_value(in->annotation_int);
    ev->set_bench_counter(in->counter);
    ev->set_bench_label(in->label, in->label_len);
    if (!pkt->SerializeToArray(buf, static_cast<int>(cap))) return 0;
    return static_cast<size_t>(pkt->GetCachedSize()); // sized by SerializeToArray
}

extern "C" size_t bench_canonical(const uint8_t *data, size_t size, uint8_t *out, size_t cap,
                                  char *text, size_t text_cap) {
    benchflat::TracePacket pkt;
    if (!pkt.ParseFromArray(data, static_cast<int>(size))) return 0;
    // Every field of every implementation's packet must be a known field.
    if (!pkt.unknown_fields().empty() || !pkt.track_event().unknown_fields().empty()) return 0;
    for (const auto &arg : pkt.track_event().debug_annotations())
        if (!arg.unknown_fields().empty()) return 0;
    std::string s;
    {
        google::protobuf::io::StringOutputStream sos(&s);
        google::protobuf::io::CodedOutputStream cos(&sos);
        cos.SetSerializationDeterministic(true);
        if (!pkt.SerializeToCodedStream(&cos)) return 0;
    }
    if (s.size() > cap) return 0;
    s.copy(reinterpret_cast<char *>(out), s.size());
    if (text != nullptr && text_cap > 0) {
        std::string t = pkt.ShortDebugString();
        size_t n = t.size() < text_cap - 1 ? t.size() : text_cap - 1;
        t.copy(text, n);
        text[n] = '\0';
    }
    return s.size();
}
