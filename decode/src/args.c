/*
 * args.c - the trace processor's args view of track events.
 *
 * Walks Trace.packet in order, keeps the interned debug annotation names and
 * string values of each packet sequence (cleared by
 * SEQ_INCREMENTAL_STATE_CLEARED), and for each TrackEvent reports:
 *   - debug annotations (field 4) as `debug.<name>`, dictionaries as
 *     `.<key>`, arrays as `[N]`, legacy NestedValues likewise, and typed
 *     proto values (proto_type_name + proto_value) flattened by their fields;
 *   - extension fields by their short name, `.` into messages, `[N]` for
 *     repeated elements; a DebugAnnotation field inside them is flattened
 *     by the annotation's name under the parent's key (no field name, no index).
 * Extension fields the pool cannot explain are counted, not reported.
 * Interned strings point into the input: nothing is copied.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "tracec/args.h"

/* Field numbers and enum values from the generated writers of protos/ (build/gen/schema). */
#include "perfetto/trace/interned_data/interned_data.tracec.h"
#include "perfetto/trace/trace.tracec.h"
#include "perfetto/trace/trace_packet.tracec.h"
#include "perfetto/trace/track_event/debug_annotation.tracec.h"
#include "perfetto/trace/track_event/track_event.tracec.h"

/* Short names for this file. */
enum {
    TRACE_PACKET = perfetto_protos_Trace_packet_field_number,
    PKT_TRACK_EVENT = perfetto_protos_TracePacket_track_event_field_number,
    PKT_INTERNED_DATA = perfetto_protos_TracePacket_interned_data_field_number,
    PKT_SEQ_ID = perfetto_protos_TracePacket_trusted_packet_sequence_id_field_number,
    PKT_SEQ_FLAGS = perfetto_protos_TracePacket_sequence_flags_field_number,
    PKT_INCREMENTAL_CLEARED = perfetto_protos_TracePacket_incremental_state_cleared_field_number,
    SEQ_FLAG_CLEARED = perfetto_protos_TracePacket_SEQ_INCREMENTAL_STATE_CLEARED,
    ID_DEBUG_ANNOTATION_NAMES = perfetto_protos_InternedData_debug_annotation_names_field_number,
    ID_DEBUG_ANNOTATION_STRING_VALUES = perfetto_protos_InternedData_debug_annotation_string_values_field_number,
    /* DebugAnnotationName and InternedString: both (iid = 1, name/str = 2) */
    INTERNED_IID = perfetto_protos_DebugAnnotationName_iid_field_number,
    INTERNED_NAME = perfetto_protos_DebugAnnotationName_name_field_number,
    TE_DEBUG_ANNOTATIONS = perfetto_protos_TrackEvent_debug_annotations_field_number,
    DA_NAME_IID = perfetto_protos_DebugAnnotation_name_iid_field_number,
    DA_BOOL = perfetto_protos_DebugAnnotation_bool_value_field_number,
    DA_UINT = perfetto_protos_DebugAnnotation_uint_value_field_number,
    DA_INT = perfetto_protos_DebugAnnotation_int_value_field_number,
    DA_DOUBLE = perfetto_protos_DebugAnnotation_double_value_field_number,
    DA_STRING = perfetto_protos_DebugAnnotation_string_value_field_number,
    DA_POINTER = perfetto_protos_DebugAnnotation_pointer_value_field_number,
    DA_NESTED = perfetto_protos_DebugAnnotation_nested_value_field_number,
    DA_LEGACY_JSON = perfetto_protos_DebugAnnotation_legacy_json_value_field_number,
    DA_NAME = perfetto_protos_DebugAnnotation_name_field_number,
    DA_DICT_ENTRIES = perfetto_protos_DebugAnnotation_dict_entries_field_number,
    DA_ARRAY_VALUES = perfetto_protos_DebugAnnotation_array_values_field_number,
    DA_PROTO_VALUE = perfetto_protos_DebugAnnotation_proto_value_field_number,
    DA_PROTO_TYPE_NAME = perfetto_protos_DebugAnnotation_proto_type_name_field_number,
    DA_STRING_IID = perfetto_protos_DebugAnnotation_string_value_iid_field_number,
    NV_TYPE = perfetto_protos_DebugAnnotation_NestedValue_nested_type_field_number,
    NV_DICT = perfetto_protos_DebugAnnotation_NestedValue_DICT,
    NV_ARRAY = perfetto_protos_DebugAnnotation_NestedValue_ARRAY,
    NV_DICT_KEYS = perfetto_protos_DebugAnnotation_NestedValue_dict_keys_field_number,
    NV_DICT_VALUES = perfetto_protos_DebugAnnotation_NestedValue_dict_values_field_number,
    NV_ARRAY_VALUES = perfetto_protos_DebugAnnotation_NestedValue_array_values_field_number,
    NV_INT = perfetto_protos_DebugAnnotation_NestedValue_int_value_field_number,
    NV_DOUBLE = perfetto_protos_DebugAnnotation_NestedValue_double_value_field_number,
    NV_BOOL = perfetto_protos_DebugAnnotation_NestedValue_bool_value_field_number,
    NV_STRING = perfetto_protos_DebugAnnotation_NestedValue_string_value_field_number
};
_Static_assert((int)perfetto_protos_InternedString_iid_field_number == (int)INTERNED_IID &&
                   (int)perfetto_protos_InternedString_str_field_number == (int)INTERNED_NAME,
               "InternedString and DebugAnnotationName share one reader");

typedef struct span {
    const uint8_t *p;
    size_t n;
} span;

/* iid -> string, open addressing; iid 0 marks an empty slot (iids start at 1). */
typedef struct intern {
    uint64_t *iids;
    span *vals;
    size_t cap, n;
} intern;

typedef struct sequence {
    uint32_t id;
    bool used;
    intern names, strings;
} sequence;

typedef struct walker {
    tracec_i_schema *s;
    const uint8_t *input;
    const char *file_name;
    int max_depth;
    tracec_arg_fn fn;
    void *ctx;
    tracec_args_stats st;
    tracec_error *err;
    tracec_status_t status;
    sequence *seqs;
    size_t nseqs, capseqs;
    sequence *cur;
    uint64_t event;
    char *key;
    size_t keylen, keycap;
    char *flat;
    size_t flatcap;
    tracec_i_msg *track_event;
    bool lenient; /* conflicting definitions: a field that does not parse under the winner is skipped */
} walker;

static void args_fail(walker *a, const uint8_t *at, const char *what) {
    if (a->status != TRACEC_STATUS_SUCCESS) return;
    a->status = TRACEC_STATUS_CORRUPT_DATA;
    tracec_i_set_error(a->err, "%s: byte offset %zu: %s", a->file_name, (size_t)(at - a->input), what);
}

static void args_oom(walker *a) {
    if (a->status != TRACEC_STATUS_SUCCESS) return;
    a->status = TRACEC_STATUS_OUT_OF_MEMORY;
    tracec_i_set_error(a->err, "%s: out of memory", a->file_name);
}

/* ---- Field iteration ------------------------------------------------------ */

typedef struct field_it {
    const uint8_t *p, *end;
    uint32_t number;
    int wt;
    uint64_t v;
    const uint8_t *data;
    size_t len;
} field_it;

/* 1: a field; 0: the end; -1: malformed (reported, with the decoder's words and offsets). */
static int it_next(walker *a, field_it *it) {
    tracec_wire_field f;
    const char *what;
    const uint8_t *at;
    int k = tracec_wire_read_field(&it->p, it->end, a->max_depth, &f, &what, &at);
    if (k > 0 && f.type == TRACEC_WIRE_EGROUP) {
        what = "unexpected end-group tag";
        at = f.start;
        k = -1;
    }
    if (k < 0) {
        args_fail(a, at, what);
        return -1;
    }
    if (k == 0) return 0;
    it->number = f.number;
    it->wt = f.type;
    it->v = f.value;
    it->data = f.type == TRACEC_WIRE_LEN ? f.data : NULL;
    it->len = f.type == TRACEC_WIRE_LEN ? f.size : 0;
    return 1;
}

static void it_init(field_it *it, const uint8_t *p, size_t n) {
    memset(it, 0, sizeof *it);
    it->p = p;
    it->end = p + n;
}

/* ---- Interning ------------------------------------------------------------ */

static size_t hash64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return (size_t)x;
}

static bool intern_put(intern *t, uint64_t iid, span v) {
    if (iid == 0) return true;
    if ((t->n + 1) * 2 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        uint64_t *ni = calloc(ncap, sizeof *ni);
        span *nv = calloc(ncap, sizeof *nv);
        if (!ni || !nv) {
            free(ni);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->iids[i]) continue;
            size_t j = hash64(t->iids[i]) & (ncap - 1);
            while (ni[j]) j = (j + 1) & (ncap - 1);
            ni[j] = t->iids[i];
            nv[j] = t->vals[i];
        }
        free(t->iids);
        free(t->vals);
        t->iids = ni;
        t->vals = nv;
        t->cap = ncap;
    }
    size_t mask = t->cap - 1, i = hash64(iid) & mask;
    while (t->iids[i] && t->iids[i] != iid) i = (i + 1) & mask;
    if (!t->iids[i]) t->n++;
    t->iids[i] = iid;
    t->vals[i] = v;
    return true;
}

static const span *intern_get(const intern *t, uint64_t iid) {
    if (!t->cap || !iid) return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = hash64(iid) & mask;; i = (i + 1) & mask) {
        if (t->iids[i] == iid) return &t->vals[i];
        if (!t->iids[i]) return NULL;
    }
}

static void intern_clear(intern *t) {
    if (t->cap) memset(t->iids, 0, t->cap * sizeof *t->iids);
    t->n = 0;
}

static sequence *seq_get(walker *a, uint32_t id) {
    for (size_t i = 0; i < a->nseqs; i++)
        if (a->seqs[i].id == id) return &a->seqs[i];
    if (a->nseqs == a->capseqs) {
        size_t ncap = a->capseqs ? a->capseqs * 2 : 8;
        sequence *ns = realloc(a->seqs, ncap * sizeof *ns);
        if (!ns) return NULL;
        a->seqs = ns;
        a->capseqs = ncap;
    }
    sequence *s = &a->seqs[a->nseqs++];
    memset(s, 0, sizeof *s);
    s->id = id;
    return s;
}

/* Reads the (iid, string) pairs of a repeated interned entry: iid = 1, string = 2. */
static bool intern_entry(walker *a, intern *t, const uint8_t *p, size_t n) {
    field_it it;
    it_init(&it, p, n);
    uint64_t iid = 0;
    span v = {p, 0};
    int k;
    while ((k = it_next(a, &it)) > 0) {
        if (it.number == INTERNED_IID && it.wt == TRACEC_WIRE_VARINT) iid = it.v;
        if (it.number == INTERNED_NAME && it.wt == TRACEC_WIRE_LEN) v = (span){it.data, it.len};
    }
    if (k < 0) return false;
    if (!intern_put(t, iid, v)) {
        args_oom(a);
        return false;
    }
    return true;
}

/* ---- Keys ------------------------------------------------------------------ */

static bool key_reserve(walker *a, size_t extra) {
    if (a->keycap - a->keylen > extra) return true;
    size_t ncap = a->keycap ? a->keycap : 256;
    while (ncap - a->keylen <= extra) ncap *= 2;
    char *nk = realloc(a->key, ncap);
    if (!nk) return false;
    a->key = nk;
    a->keycap = ncap;
    return true;
}

/* Appends [sep] name to the key; returns the previous length (to restore). */
static size_t key_push(walker *a, const char *sep, const char *name, size_t n) {
    size_t old = a->keylen;
    size_t sl = (sep && a->keylen) ? strlen(sep) : 0;
    if (!key_reserve(a, sl + n + 1)) {
        args_oom(a);
        return old;
    }
    if (sl) memcpy(a->key + a->keylen, sep, sl);
    a->keylen += sl;
    if (n) memcpy(a->key + a->keylen, name, n);
    a->keylen += n;
    a->key[a->keylen] = 0;
    return old;
}

static size_t key_index(walker *a, uint64_t i) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "[%llu]", (unsigned long long)i);
    return key_push(a, NULL, tmp, (size_t)n);
}

static void key_pop(walker *a, size_t old) {
    a->keylen = old;
    if (a->key) a->key[old] = 0;
}

/* ---- Emitting ------------------------------------------------------------- */

static void emit(walker *a, tracec_arg *arg) {
    if (a->status != TRACEC_STATUS_SUCCESS) return;
    if (!key_reserve(a, 1)) {
        args_oom(a);
        return;
    }
    a->key[a->keylen] = 0;
    if (a->flatcap < a->keylen + 1) {
        char *nf = realloc(a->flat, a->keylen + 1);
        if (!nf) {
            args_oom(a);
            return;
        }
        a->flat = nf;
        a->flatcap = a->keylen + 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < a->keylen; i++) {
        if (a->key[i] == '[') {
            size_t j = i + 1;
            while (j < a->keylen && a->key[j] >= '0' && a->key[j] <= '9') j++;
            if (j > i + 1 && j < a->keylen && a->key[j] == ']') {
                i = j;
                continue;
            }
        }
        a->flat[k++] = a->key[i];
    }
    a->flat[k] = 0;
    arg->event = a->event;
    arg->key = a->key;
    arg->flat_key = a->flat;
    a->st.args++;
    if (!a->fn(a->ctx, arg)) {
        a->status = TRACEC_STATUS_ERROR;
        tracec_i_set_error(a->err, "%s: stopped by the args callback", a->file_name);
    }
}

static void emit_int(walker *a, int64_t v) {
    tracec_arg arg;
    memset(&arg, 0, sizeof arg);
    arg.type = TRACEC_ARG_INT;
    arg.int_value = v;
    emit(a, &arg);
}

static void emit_real(walker *a, double v) {
    tracec_arg arg;
    memset(&arg, 0, sizeof arg);
    arg.type = TRACEC_ARG_REAL;
    arg.real_value = v;
    emit(a, &arg);
}

static void emit_str(walker *a, const uint8_t *s, size_t n, bool is_bytes) {
    tracec_arg arg;
    memset(&arg, 0, sizeof arg);
    arg.type = TRACEC_ARG_STRING;
    arg.is_bytes = is_bytes;
    arg.string_value = n ? (const char *)s : "";
    arg.string_len = n;
    emit(a, &arg);
}

/* A scalar of field `f` (any type but message). */
static void emit_scalar(walker *a, const tracec_i_field *f, uint64_t v) {
    switch ((tracec_field_type)f->type) {
    case TRACEC_TYPE_DOUBLE: {
        double x;
        memcpy(&x, &v, 8);
        emit_real(a, x);
        return;
    }
    case TRACEC_TYPE_FLOAT: {
        float x;
        uint32_t b = (uint32_t)v;
        memcpy(&x, &b, 4);
        emit_real(a, (double)x);
        return;
    }
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_SFIXED32:
        emit_int(a, (int32_t)(uint32_t)v);
        return;
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_FIXED32:
        emit_int(a, (int64_t)(uint32_t)v);
        return;
    case TRACEC_TYPE_BOOL:
        emit_int(a, v != 0);
        return;
    case TRACEC_TYPE_SINT32: {
        uint32_t u = (uint32_t)v;
        emit_int(a, (int32_t)(u >> 1) ^ -(int32_t)(u & 1));
        return;
    }
    case TRACEC_TYPE_SINT64:
        emit_int(a, (int64_t)(v >> 1) ^ -(int64_t)(v & 1));
        return;
    case TRACEC_TYPE_ENUM: {
        uint32_t n;
        const char *name = f->en ? tracec_i_enum_name(f->en, (int32_t)v, &n) : NULL;
        if (name)
            emit_str(a, (const uint8_t *)name, n, false);
        else
            emit_int(a, (int32_t)(uint32_t)v);
        return;
    }
    default: /* int64, uint64, fixed64, sfixed64 */
        emit_int(a, (int64_t)v);
        return;
    }
}

/* ---- Debug annotations ---------------------------------------------------- */

static void message_args(walker *a, tracec_i_msg *mi, const uint8_t *p, size_t n, int depth);

static void nested_value(walker *a, const uint8_t *p, size_t n, int depth) {
    if (depth > a->max_depth) {
        args_fail(a, p, "debug annotations nested deeper than the limit");
        return;
    }
    field_it it;
    it_init(&it, p, n);
    uint64_t type = 0;
    int k;
    while ((k = it_next(a, &it)) > 0)
        if (it.number == NV_TYPE && it.wt == TRACEC_WIRE_VARINT) type = it.v;
    if (k < 0) return;
    it_init(&it, p, n);
    if (type == NV_DICT) { /* keys[i] -> values[i] */
        field_it kit;
        it_init(&kit, p, n);
        while (it_next(a, &it) > 0) {
            if (it.number != NV_DICT_VALUES || it.wt != TRACEC_WIRE_LEN) continue;
            bool found = false;
            while (it_next(a, &kit) > 0) {
                if (kit.number == NV_DICT_KEYS && kit.wt == TRACEC_WIRE_LEN) {
                    found = true;
                    break;
                }
            }
            if (!found) break;
            size_t old = key_push(a, ".", (const char *)kit.data, kit.len);
            nested_value(a, it.data, it.len, depth + 1);
            key_pop(a, old);
        }
    } else if (type == NV_ARRAY) {
        uint64_t i = 0;
        while (it_next(a, &it) > 0) {
            if (it.number != NV_ARRAY_VALUES || it.wt != TRACEC_WIRE_LEN) continue;
            size_t old = key_index(a, i++);
            nested_value(a, it.data, it.len, depth + 1);
            key_pop(a, old);
        }
    } else {
        while (it_next(a, &it) > 0) {
            if (it.number == NV_INT && it.wt == TRACEC_WIRE_VARINT)
                emit_int(a, (int64_t)it.v);
            else if (it.number == NV_DOUBLE && it.wt == TRACEC_WIRE_FIXED64) {
                double x;
                memcpy(&x, &it.v, 8);
                emit_real(a, x);
            } else if (it.number == NV_BOOL && it.wt == TRACEC_WIRE_VARINT)
                emit_int(a, it.v != 0);
            else if (it.number == NV_STRING && it.wt == TRACEC_WIRE_LEN)
                emit_str(a, it.data, it.len, false);
        }
    }
}

static void annotation_value(walker *a, const uint8_t *p, size_t n, int depth);

/* Adds the annotation's name to the key (with `sep`), then its value. */
static void named_annotation(walker *a, const char *sep, const uint8_t *p, size_t n, int depth) {
    field_it it;
    it_init(&it, p, n);
    span name = {p, 0};
    bool has_name = false;
    int k;
    while ((k = it_next(a, &it)) > 0) {
        if (it.number == DA_NAME && it.wt == TRACEC_WIRE_LEN) {
            name = (span){it.data, it.len};
            has_name = true;
        } else if (it.number == DA_NAME_IID && it.wt == TRACEC_WIRE_VARINT) {
            const span *s = a->cur ? intern_get(&a->cur->names, it.v) : NULL;
            if (s) {
                name = *s;
                has_name = true;
            } else {
                has_name = false;
            }
        }
    }
    if (k < 0) return;
    char tmp[40];
    if (!has_name) {
        /* An unresolvable interned name: keep the arg, say why in its key. */
        int m = snprintf(tmp, sizeof tmp, "<unknown name>");
        name = (span){(const uint8_t *)tmp, (size_t)m};
    }
    size_t old = key_push(a, sep, (const char *)name.p, name.n);
    annotation_value(a, p, n, depth);
    key_pop(a, old);
}

static void annotation_value(walker *a, const uint8_t *p, size_t n, int depth) {
    if (depth > a->max_depth) {
        args_fail(a, p, "debug annotations nested deeper than the limit");
        return;
    }
    field_it it;
    it_init(&it, p, n);
    span type_name = {p, 0};
    bool has_type = false;
    int k;
    uint64_t array_i = 0;
    while ((k = it_next(a, &it)) > 0 && a->status == TRACEC_STATUS_SUCCESS) {
        switch (it.number) {
        case DA_BOOL:
            if (it.wt == TRACEC_WIRE_VARINT) emit_int(a, it.v != 0);
            break;
        case DA_UINT:
        case DA_INT:
        case DA_POINTER:
            if (it.wt == TRACEC_WIRE_VARINT) emit_int(a, (int64_t)it.v);
            break;
        case DA_DOUBLE:
            if (it.wt == TRACEC_WIRE_FIXED64) {
                double x;
                memcpy(&x, &it.v, 8);
                emit_real(a, x);
            }
            break;
        case DA_STRING:
        case DA_LEGACY_JSON:
            if (it.wt == TRACEC_WIRE_LEN) emit_str(a, it.data, it.len, false);
            break;
        case DA_STRING_IID:
            if (it.wt == TRACEC_WIRE_VARINT) {
                const span *s = a->cur ? intern_get(&a->cur->strings, it.v) : NULL;
                if (s)
                    emit_str(a, s->p, s->n, false);
                else
                    emit_str(a, (const uint8_t *)"", 0, false);
            }
            break;
        case DA_NESTED:
            if (it.wt == TRACEC_WIRE_LEN) nested_value(a, it.data, it.len, depth + 1);
            break;
        case DA_DICT_ENTRIES:
            if (it.wt == TRACEC_WIRE_LEN) named_annotation(a, ".", it.data, it.len, depth + 1);
            break;
        case DA_ARRAY_VALUES:
            if (it.wt == TRACEC_WIRE_LEN) {
                size_t old = key_index(a, array_i++);
                annotation_value(a, it.data, it.len, depth + 1);
                key_pop(a, old);
            }
            break;
        case DA_PROTO_TYPE_NAME:
            if (it.wt == TRACEC_WIRE_LEN) {
                type_name = (span){it.data, it.len};
                has_type = true;
            }
            break;
        default:
            break;
        }
    }
    if (k < 0 || !has_type) return;
    /* A typed proto value: flatten it with the pool's descriptor of its type. */
    char name[512];
    size_t tl = type_name.n;
    if (tl && type_name.p[0] == '.') type_name.p++, tl--;
    if (tl >= sizeof name) return;
    memcpy(name, type_name.p, tl);
    name[tl] = 0;
    const tracec_msgdef *m = tracec_pool_find_message(tracec_i_schema_pool(a->s), name);
    if (!m) return;
    tracec_i_msg *mi = tracec_i_schema_msg(a->s, m);
    if (!mi) return;
    it_init(&it, p, n);
    while (it_next(a, &it) > 0)
        if (it.number == DA_PROTO_VALUE && it.wt == TRACEC_WIRE_LEN)
            message_args(a, mi, it.data, it.len, depth + 1);
}

/* ---- Messages ------------------------------------------------------------- */

static bool is_debug_annotation(const tracec_i_field *f) {
    return f->sub && strcmp(tracec_msgdef_full_name(f->sub), "perfetto.protos.DebugAnnotation") == 0;
}

/* Repeated-element counters of one message instance. */
typedef struct repeat_counts {
    uint32_t num[16];
    uint64_t cnt[16];
    size_t n;
    uint32_t *xnum;
    uint64_t *xcnt;
    size_t xn, xcap;
} repeat_counts;

static uint64_t count_next(repeat_counts *c, uint32_t number) {
    for (size_t i = 0; i < c->n; i++)
        if (c->num[i] == number) return c->cnt[i]++;
    for (size_t i = 0; i < c->xn; i++)
        if (c->xnum[i] == number) return c->xcnt[i]++;
    if (c->n < 16) {
        c->num[c->n] = number;
        c->cnt[c->n++] = 1;
        return 0;
    }
    if (c->xn == c->xcap) {
        size_t ncap = c->xcap ? c->xcap * 2 : 16;
        uint32_t *nn = realloc(c->xnum, ncap * sizeof *nn);
        if (!nn) return 0;
        c->xnum = nn;
        uint64_t *nc = realloc(c->xcnt, ncap * sizeof *nc);
        if (!nc) return 0;
        c->xcnt = nc;
        c->xcap = ncap;
    }
    c->xnum[c->xn] = number;
    c->xcnt[c->xn++] = 1;
    return 0;
}

/* The value(s) of field `f` found in `it`, under the current key + f's name. */
static void field_args(walker *a, tracec_i_field *f, const field_it *it, repeat_counts *counts, int depth) {
    if (f->is_msg && it->wt == f->wt && is_debug_annotation(f)) {
        named_annotation(a, ".", it->data, it->len, depth + 1);
        return;
    }
    if (a->lenient && it->wt == TRACEC_WIRE_LEN &&
        (f->is_msg ? !tracec_i_wire_parses(it->data, it->len, a->max_depth - depth)
                   : f->packable && it->wt != f->wt && !tracec_i_packed_parses(f->wt, it->data, it->len))) {
        a->st.unknown_nested_fields++; /* written under another definition of its number */
        return;
    }
    size_t old = key_push(a, ".", f->short_name, strlen(f->short_name));
    if (it->wt == f->wt) {
        size_t old2 = a->keylen;
        if (f->repeated) old2 = key_index(a, count_next(counts, f->number));
        if (f->is_msg) {
            tracec_i_msg *sub = tracec_i_field_sub(a->s, f);
            if (depth + 1 > a->max_depth)
                args_fail(a, it->data, "messages nested deeper than the limit");
            else if (sub)
                message_args(a, sub, it->data, it->len, depth + 1);
        } else if (f->type == TRACEC_TYPE_STRING || f->type == TRACEC_TYPE_BYTES) {
            emit_str(a, it->data, it->len, f->type == TRACEC_TYPE_BYTES);
        } else {
            emit_scalar(a, f, it->v);
        }
        key_pop(a, old2);
    } else if (f->packable && it->wt == TRACEC_WIRE_LEN) {
        const uint8_t *q = it->data, *qe = it->data + it->len;
        while (q < qe && a->status == TRACEC_STATUS_SUCCESS) {
            uint64_t v;
            const char *what = tracec_i_packed_next(&q, qe, f->wt, &v);
            if (what) {
                args_fail(a, q, what);
                break;
            }
            size_t old2 = key_index(a, count_next(counts, f->number));
            emit_scalar(a, f, v);
            key_pop(a, old2);
        }
    } else {
        a->st.unknown_nested_fields++;
    }
    key_pop(a, old);
}

static void message_args(walker *a, tracec_i_msg *mi, const uint8_t *p, size_t n, int depth) {
    field_it it;
    it_init(&it, p, n);
    repeat_counts counts;
    memset(&counts, 0, sizeof counts);
    while (it_next(a, &it) > 0 && a->status == TRACEC_STATUS_SUCCESS) {
        tracec_i_field *f = tracec_i_msg_field(a->s, mi, it.number);
        if (!f || f->wt == 0xff) {
            a->st.unknown_nested_fields++;
            continue;
        }
        field_args(a, f, &it, &counts, depth);
    }
    free(counts.xnum);
    free(counts.xcnt);
}

static void visit_track_event(walker *a, const uint8_t *p, size_t n) {
    field_it it;
    it_init(&it, p, n);
    repeat_counts counts;
    memset(&counts, 0, sizeof counts);
    while (it_next(a, &it) > 0 && a->status == TRACEC_STATUS_SUCCESS) {
        if (it.number == TE_DEBUG_ANNOTATIONS && it.wt == TRACEC_WIRE_LEN) {
            size_t old = key_push(a, NULL, "debug", 5);
            named_annotation(a, ".", it.data, it.len, 1);
            key_pop(a, old);
            continue;
        }
        tracec_i_field *f = a->track_event ? tracec_i_msg_field(a->s, a->track_event, it.number) : NULL;
        if (f && f->is_ext && f->wt != 0xff) {
            field_args(a, f, &it, &counts, 1);
        } else if (!f || f->is_ext) {
            if (a->track_event && tracec_msgdef_in_extension_range(a->track_event->def, it.number))
                a->st.unknown_extension_fields++;
        }
    }
    free(counts.xnum);
    free(counts.xcnt);
}

static void visit_packet(walker *a, const uint8_t *p, size_t n) {
    field_it it;
    it_init(&it, p, n);
    uint32_t seq = 0;
    bool cleared = false;
    int k;
    while ((k = it_next(a, &it)) > 0) {
        if (it.number == PKT_SEQ_ID && it.wt == TRACEC_WIRE_VARINT) seq = (uint32_t)it.v;
        if (it.number == PKT_SEQ_FLAGS && it.wt == TRACEC_WIRE_VARINT && (it.v & SEQ_FLAG_CLEARED))
            cleared = true;
        if (it.number == PKT_INCREMENTAL_CLEARED && it.wt == TRACEC_WIRE_VARINT && it.v) cleared = true;
    }
    if (k < 0) return;
    a->cur = seq_get(a, seq);
    if (!a->cur) {
        args_oom(a);
        return;
    }
    if (cleared) {
        intern_clear(&a->cur->names);
        intern_clear(&a->cur->strings);
    }
    it_init(&it, p, n);
    while (it_next(a, &it) > 0) {
        if (it.number != PKT_INTERNED_DATA || it.wt != TRACEC_WIRE_LEN) continue;
        field_it id;
        it_init(&id, it.data, it.len);
        while (it_next(a, &id) > 0) {
            if (id.wt != TRACEC_WIRE_LEN) continue;
            if (id.number == ID_DEBUG_ANNOTATION_NAMES)
                intern_entry(a, &a->cur->names, id.data, id.len);
            else if (id.number == ID_DEBUG_ANNOTATION_STRING_VALUES)
                intern_entry(a, &a->cur->strings, id.data, id.len);
        }
    }
    it_init(&it, p, n);
    while (it_next(a, &it) > 0 && a->status == TRACEC_STATUS_SUCCESS) {
        if (it.number != PKT_TRACK_EVENT || it.wt != TRACEC_WIRE_LEN) continue;
        a->st.track_events++;
        visit_track_event(a, it.data, it.len);
        a->event++;
    }
}

tracec_status_t tracec_args_visit(tracec_pool *pool, const void *trace, size_t size,
                                  const tracec_decode_options *opts, tracec_arg_fn fn, void *ctx,
                                  tracec_args_stats *stats, tracec_error *err) {
    tracec_decode_options o;
    if (opts)
        o = *opts;
    else
        tracec_decode_options_init(&o);
    if (!o.file_name) o.file_name = "<input>";
    if (o.max_depth <= 0) o.max_depth = 100;
    if (err) err->msg[0] = 0;
    if (o.max_depth > TRACEC_DECODE_MAX_DEPTH_LIMIT) {
        tracec_i_set_error(err, "tracec_args_visit: max_depth %d is above the limit of %d", o.max_depth,
                           TRACEC_DECODE_MAX_DEPTH_LIMIT);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (stats) memset(stats, 0, sizeof *stats);
    if (!pool || !fn || (!trace && size)) {
        tracec_i_set_error(err, "tracec_args_visit: invalid argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (o.type_name && strcmp(o.type_name, TRACEC_DEFAULT_TYPE) != 0) {
        tracec_i_set_error(err, "args: the input must be a %s, not %s", TRACEC_DEFAULT_TYPE, o.type_name);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (o.extension_descriptors)
        (void)tracec_load_extension_descriptors(pool, trace, size, TRACEC_DEFAULT_TYPE, NULL, NULL);
    walker a;
    memset(&a, 0, sizeof a);
    a.input = trace;
    a.file_name = o.file_name;
    a.max_depth = o.max_depth;
    a.lenient = tracec_pool_conflict_count(pool) > 0;
    a.fn = fn;
    a.ctx = ctx;
    a.err = err;
    a.status = TRACEC_STATUS_SUCCESS;
    a.s = tracec_i_schema_new(pool);
    if (!a.s) {
        args_oom(&a);
    } else {
        const tracec_msgdef *te = tracec_pool_find_message(pool, "perfetto.protos.TrackEvent");
        a.track_event = te ? tracec_i_schema_msg(a.s, te) : NULL;
        static const uint8_t empty[1];
        field_it it;
        it_init(&it, size ? trace : empty, size);
        while (a.status == TRACEC_STATUS_SUCCESS && it_next(&a, &it) > 0) {
            if (it.number != TRACE_PACKET || it.wt != TRACEC_WIRE_LEN) continue;
            a.st.packets++;
            visit_packet(&a, it.data, it.len);
        }
    }
    for (size_t i = 0; i < a.nseqs; i++) {
        free(a.seqs[i].names.iids);
        free(a.seqs[i].names.vals);
        free(a.seqs[i].strings.iids);
        free(a.seqs[i].strings.vals);
    }
    free(a.seqs);
    free(a.key);
    free(a.flat);
    tracec_i_schema_free(a.s);
    if (stats) *stats = a.st;
    return a.status;
}

/* ---- CSV -------------------------------------------------------------------- */

typedef struct csv {
    tracec_i_out o;
    char *esc; /* escaped cells */
    size_t esc_cap;
} csv;

static void csv_field(tracec_i_out *o, const char *s, size_t n) {
    bool quote = false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') {
            quote = true;
            break;
        }
    if (!quote) {
        tracec_i_out_put(o, s, n);
        return;
    }
    tracec_i_out_putc(o, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') tracec_i_out_putc(o, '"');
        tracec_i_out_putc(o, s[i]);
    }
    tracec_i_out_putc(o, '"');
}

/* A cell of text: as is when it is valid UTF-8 without NULs (and not `bytes`), else C-escaped. */
static void csv_text(csv *c, const char *s, size_t n, bool is_bytes) {
    if (!is_bytes && tracec_i_utf8_text((const uint8_t *)s, n)) {
        csv_field(&c->o, s, n);
        return;
    }
    if (n > (SIZE_MAX - 1) / 4) {
        c->o.failed = true;
        return;
    }
    if (c->esc_cap < 4 * n + 1) {
        char *ne = realloc(c->esc, 4 * n + 1);
        if (!ne) {
            c->o.failed = true;
            return;
        }
        c->esc = ne;
        c->esc_cap = 4 * n + 1;
    }
    csv_field(&c->o, c->esc, tracec_i_escape(c->esc, (const uint8_t *)s, n));
}

static bool csv_row(void *ctx, const tracec_arg *arg) {
    csv *c = ctx;
    tracec_i_out *o = &c->o;
    tracec_i_out_u64(o, arg->event);
    tracec_i_out_putc(o, ',');
    csv_text(c, arg->flat_key, strlen(arg->flat_key), false);
    tracec_i_out_putc(o, ',');
    csv_text(c, arg->key, strlen(arg->key), false);
    tracec_i_out_putc(o, ',');
    if (arg->type == TRACEC_ARG_INT) tracec_i_out_i64(o, arg->int_value);
    tracec_i_out_putc(o, ',');
    if (arg->type == TRACEC_ARG_STRING) csv_text(c, arg->string_value, arg->string_len, arg->is_bytes);
    tracec_i_out_putc(o, ',');
    if (arg->type == TRACEC_ARG_REAL) tracec_i_out_double(o, arg->real_value);
    tracec_i_out_putc(o, '\n');
    return !o->failed;
}

tracec_status_t tracec_args_csv(tracec_pool *pool, const void *trace, size_t size,
                                const tracec_decode_options *opts, tracec_write_fn write,
                                void *write_ctx, tracec_args_stats *stats, tracec_error *err) {
    csv c;
    memset(&c, 0, sizeof c);
    tracec_i_out_init(&c.o, write, write_ctx);
    tracec_i_out_puts(&c.o, "event,flat_key,key,int_value,string_value,real_value\n");
    tracec_status_t s = tracec_args_visit(pool, trace, size, opts, csv_row, &c, stats, err);
    tracec_i_out_flush(&c.o);
    if (c.o.failed && (s == TRACEC_STATUS_SUCCESS || s == TRACEC_STATUS_ERROR)) {
        s = TRACEC_STATUS_IO_ERROR;
        tracec_i_set_error(err, "cannot write the CSV output");
    }
    tracec_i_out_free(&c.o);
    free(c.esc);
    return s;
}
