/*
 * typical.h - the typical-packet benchmark: one input, one encoder per
 * implementation.
 *
 * Every encoder writes the same TracePacket from a bench_input (protobuf-c,
 * nanopb and libprotobuf_flat from the flattened schema peer/typical_flat.proto,
 * where the two extensions are plain TrackEvent fields with the same numbers):
 *
 *   TracePacket { timestamp, trusted_packet_sequence_id,
 *     track_event { type, track_uuid, name_iid, category_iids[1],
 *       debug_annotations[1] { name_iid, int_value },
 *       bench_counter (ext 3200), bench_label (ext 3201) } }
 *
 * An encoder serializes the whole packet into buf (capacity cap) and returns
 * the number of bytes written, 0 on failure.  It fills its implementation's
 * message from `in` on every call: the timed cost is "values in hand to
 * bytes in a buffer".  `ctx` is the encoder's reusable state (made once by
 * its _new function; NULL for encoders that need none).
 */
#ifndef BENCH_TYPICAL_H
#define BENCH_TYPICAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_input {
    uint64_t timestamp;
    uint32_t sequence_id;
    int32_t type; /* TrackEvent.Type */
    uint64_t track_uuid;
    uint64_t name_iid;
    uint64_t category_iid;
    uint64_t annotation_name_iid;
    int64_t annotation_int;
    uint64_t counter;   /* extension field 3200 */
    const char *label;  /* extension field 3201, NUL-terminated */
    size_t label_len;   /* strlen(label) */
} bench_input;

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#else
#define BENCH_NOINLINE
#endif

/* The encoders.  Each is out of line (noinline), so each pays one call. */
size_t bench_encode_tracec(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_direct(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_protobuf_c(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_nanopb(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_libprotobuf(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_libprotobuf_flat(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
/* Extra rows: tracec built with TRACEC_FIXED_NESTED_LENGTHS and its floor (4-byte nested lengths). */
size_t bench_encode_tracec_len4(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);
size_t bench_encode_direct_len4(void *ctx, const bench_input *in, uint8_t *buf, size_t cap);

void *bench_protobuf_c_new(void);
void bench_protobuf_c_free(void *ctx);
void *bench_nanopb_new(void);
void bench_nanopb_free(void *ctx);
void *bench_libprotobuf_new(void);
void bench_libprotobuf_free(void *ctx);
void *bench_libprotobuf_flat_new(void);
void bench_libprotobuf_flat_free(void *ctx);

/*
 * The oracle (libprotobuf C++, on the flattened peer schema): parses
 * [data, data + size) as benchflat.TracePacket and writes its canonical
 * serialization (field-number order, minimal lengths) to out (capacity cap)
 * and its text format to text (capacity text_cap, NUL-terminated).
 * Returns the canonical size, 0 if the bytes do not parse, leave unknown
 * fields, or do not fit.
 */
size_t bench_canonical(const uint8_t *data, size_t size, uint8_t *out, size_t cap, char *text,
                       size_t text_cap);

/*
 * The real-schema check (libprotobuf C++, protos/ + bench_events.proto):
 * true if [data, data + size) parses as perfetto.protos.TracePacket whose
 * TrackEvent holds both bench.BenchEvent extensions, with no unknown field
 * anywhere; then writes its text format to text (as bench_canonical).
 */
bool bench_real_schema(const uint8_t *data, size_t size, char *text, size_t text_cap);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_TYPICAL_H */
