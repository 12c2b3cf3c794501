/*
 * extdesc.c - loading the ExtensionDescriptor packets of a trace into a pool.
 *
 * A Perfetto trace may carry the descriptors of its extension fields in
 * TracePacket.extension_descriptor (field 72): an ExtensionDescriptor with a
 * FileDescriptorSet (field 1) or a gzipped one (field 2).  They are loaded
 * before decoding, so descriptors placed after the events that use them are
 * found too (the trace processor tolerates that order).
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Field numbers from the generated writers of protos/ (build/gen/schema). */
#include "perfetto/trace/extension_descriptor.tracec.h"
#include "perfetto/trace/trace.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"

enum {
    PACKET_FIELD = perfetto_protos_Trace_packet_field_number,
    EXTENSION_DESCRIPTOR_FIELD = perfetto_protos_TracePacket_extension_descriptor_field_number,
    EXTENSION_SET_FIELD = perfetto_protos_ExtensionDescriptor_extension_set_field_number,
    EXTENSION_SET_GZIP_FIELD = perfetto_protos_ExtensionDescriptor_extension_set_gzip_field_number
};
/* text_packet looks for the tag bytes of extension_descriptor with memchr. */
_Static_assert(TRACEC_TAG(EXTENSION_DESCRIPTOR_FIELD, TRACEC_WIRE_LEN) == (0xC2 & 0x7F) + (0x04 << 7),
               "extension_descriptor's tag is 0xC2 0x04");
/* Descriptor sets are small; this bounds a decompression bomb. */
#define GUNZIP_LIMIT ((size_t)64 << 20)

/* Calls fn for each LEN field numbered `number` in [p, end); stops quietly at malformed data. */
typedef bool (*len_fn)(void *ctx, const uint8_t *data, size_t len, size_t index);

static void each_len(const uint8_t *p, const uint8_t *end, uint32_t number, len_fn fn, void *ctx) {
    size_t index = 0;
    tracec_wire_reader r;
    tracec_wire_field f;
    tracec_wire_reader_init(&r, p, (size_t)(end - p));
    while (tracec_wire_next(&r, &f) > 0 && f.type != TRACEC_WIRE_EGROUP)
        if (f.type == TRACEC_WIRE_LEN && f.number == number && !fn(ctx, f.data, f.size, index++)) return;
}

typedef struct load_ctx {
    tracec_pool *pool;
    const uint8_t *input;
    size_t n_sets;
    tracec_status_t status;
    tracec_error *err;
    size_t packet_index;
    const uint8_t *packet;
    const char *origin; /* names the sets in conflicts; NULL: "<trace packet N at byte offset B>" */
} load_ctx;

static void add(load_ctx *c, const uint8_t *set, size_t len, const char *how) {
    char origin[320];
    if (c->origin)
        snprintf(origin, sizeof origin, "%s", c->origin);
    else
        snprintf(origin, sizeof origin, "<trace packet %zu at byte offset %zu>", c->packet_index,
                 (size_t)(c->packet - c->input));
    tracec_error e;
    e.msg[0] = 0;
    if (tracec_pool_add_set(c->pool, set, len, origin, &e) == TRACEC_STATUS_SUCCESS) {
        c->n_sets++;
        return;
    }
    if (c->status == TRACEC_STATUS_SUCCESS) {
        c->status = TRACEC_STATUS_CORRUPT_DATA;
        tracec_i_set_error(c->err, "%s: %s: %s", origin, how, e.msg);
    }
}

static bool on_set(void *ctx, const uint8_t *data, size_t len, size_t index) {
    (void)index;
    add(ctx, data, len, "extension_set");
    return true;
}

static bool on_gzip(void *ctx, const uint8_t *data, size_t len, size_t index) {
    (void)index;
    load_ctx *c = ctx;
    uint8_t *set = NULL;
    size_t set_len = 0;
    const char *e = tracec_i_gunzip(data, len, GUNZIP_LIMIT, &set, &set_len);
    if (e) {
        if (c->status == TRACEC_STATUS_SUCCESS) {
            c->status = TRACEC_STATUS_CORRUPT_DATA;
            tracec_i_set_error(c->err, "<trace packet %zu at byte offset %zu>: extension_set_gzip: %s",
                         c->packet_index, (size_t)(c->packet - c->input), e);
        }
        return true;
    }
    add(c, set, set_len, "extension_set_gzip");
    free(set);
    return true;
}

static bool on_ext_desc(void *ctx, const uint8_t *data, size_t len, size_t index) {
    (void)index;
    each_len(data, data + len, EXTENSION_SET_FIELD, on_set, ctx);
    each_len(data, data + len, EXTENSION_SET_GZIP_FIELD, on_gzip, ctx);
    return true;
}

static bool on_packet(void *ctx, const uint8_t *data, size_t len, size_t index) {
    load_ctx *c = ctx;
    c->packet_index = index;
    c->packet = data;
    each_len(data, data + len, EXTENSION_DESCRIPTOR_FIELD, on_ext_desc, ctx);
    return true;
}

static tracec_status_t load(tracec_pool *pool, const void *data, size_t size, const char *type_name,
                                     const char *origin, size_t *n_sets, tracec_error *err) {
    load_ctx c;
    memset(&c, 0, sizeof c);
    c.origin = origin;
    c.pool = pool;
    c.input = data;
    c.err = err;
    c.status = TRACEC_STATUS_SUCCESS;
    if (n_sets) *n_sets = 0;
    if (!pool || (!data && size)) return TRACEC_STATUS_INVALID_ARGUMENT;
    if (!type_name) type_name = TRACEC_DEFAULT_TYPE;
    const uint8_t *p = data;
    if (strcmp(type_name, "perfetto.protos.Trace") == 0)
        each_len(p, p + size, PACKET_FIELD, on_packet, &c);
    else if (strcmp(type_name, "perfetto.protos.TracePacket") == 0)
        on_packet(&c, p, size, 0);
    if (n_sets) *n_sets = c.n_sets;
    return c.status;
}

tracec_status_t tracec_load_extension_descriptors(tracec_pool *pool, const void *data,
                                                  size_t size, const char *type_name,
                                                  size_t *n_sets, tracec_error *err) {
    return load(pool, data, size, type_name, NULL, n_sets, err);
}

/* ---- Descriptors from the text being encoded -------------------------------- */

/* The text being encoded: its descriptors are named "<FILE, packet N>" (N from 0) in conflicts. */
typedef struct text_ctx {
    tracec_pool *pool;
    const char *file_name;
    size_t packet;
} text_ctx;

static bool text_packet(void *ctx, uint32_t number, const uint8_t *data, size_t size, char *msg,
                                 size_t msg_cap) {
    if (number != PACKET_FIELD) return true;
    text_ctx *t = ctx;
    size_t index = t->packet++;
    /* Most packets have no field 72 (tag bytes 0xC2 0x04): skip them without parsing. */
    const uint8_t *q = data, *end = data + size;
    while ((q = memchr(q, 0xC2, (size_t)(end - q))) != NULL && q + 1 < end && q[1] != 0x04) q++;
    if (q == NULL || q + 1 >= end) return true;
    tracec_error e;
    e.msg[0] = 0;
    char origin[300];
    snprintf(origin, sizeof origin, "<%s, packet %zu>", t->file_name, index);
    if (load(t->pool, data, size, "perfetto.protos.TracePacket", origin, NULL, &e) == TRACEC_STATUS_SUCCESS)
        return true;
    snprintf(msg, msg_cap, "extension_descriptor of this packet: %s", e.msg);
    return false;
}

tracec_status_t tracec_text_encode_trace(tracec_pool *pool, const char *type_name, const char *text,
                                         size_t len, const tracec_text_options *opts, tracec_bytes *out,
                                         tracec_error *err) {
    tracec_text_options o = TRACEC_TEXT_OPTIONS_INIT;
    if (opts) o = *opts;
    text_ctx t = {pool, o.file_name ? o.file_name : "<input>", 0};
    if (pool && type_name && strcmp(type_name, TRACEC_DEFAULT_TYPE) == 0) {
        o.on_top_message = text_packet;
        o.on_top_message_ctx = &t;
    }
    return tracec_text_encode(pool, type_name, text, len, &o, out, err);
}
