/*
 * decode.c - binary protobuf to protoc-style text.
 *
 * Each message is read twice at its own level (never re-reading nested
 * bodies, which are skipped by length):
 *   1. a scan classifies every field (known / extension / unknown, plain or
 *      packed) and checks whether the message is already in the form protoc
 *      would print: known fields in non-decreasing number order, no singular
 *      field twice, at most one member per oneof, unknown fields last, no
 *      unknown value of a closed enum.  The scan also finds where the valid
 *      part of the message ends.
 *   2. canonical messages (nearly all of them) are printed straight from
 *      the bytes; others are collected, sorted by field number, and reduced
 *      with protobuf's merge rules (last value of a singular field wins,
 *      repeated occurrences of a singular message merge, a oneof keeps its
 *      last member), then printed, unknown fields last in wire order.
 * A malformed field ends its message: what came before is printed, braces
 * are closed on the way out, and the first error is reported with its byte
 * offset in the input.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

enum { REC_VALUE = 0, REC_PACKED = 1, REC_UNKNOWN = 2 };

/* Nested unknown fields are shown as messages at most this deep (as protoc does). */
#define UNKNOWN_BUDGET 10

typedef struct rec {
    tracec_i_field *f; /* NULL for unknown fields */
    uint32_t number;
    uint8_t wt;
    uint8_t kind;
    uint64_t v;          /* varint / fixed value */
    const uint8_t *data; /* LEN payload or group body */
    size_t len;
    const uint8_t *at;   /* the tag */
    size_t idx;          /* wire order */
} rec;

typedef struct scratch_level {
    rec *recs;
    size_t n, cap;
    size_t *order;
    size_t order_cap;
} scratch_level;

typedef struct dec {
    tracec_i_schema *s;
    tracec_i_out *o;
    const uint8_t *input;
    size_t input_size;
    const char *file_name;
    int max_depth;
    bool hide_unknown;
    /*
     * The pool holds conflicting definitions (tracec_pool_conflict_count): a
     * message or packed field that does not parse under the winning
     * definition is shown as an unknown field instead of failing.
     */
    bool lenient;
    tracec_error *err;
    tracec_status_t status;
    size_t merged_off; /* offset reported for errors inside merged message bodies */
    scratch_level *scratch;
    int nscratch;
} dec;

static bool print_msg(dec *d, tracec_i_msg *mi, const uint8_t *buf, size_t len, int depth);

static size_t off(const dec *d, const uint8_t *p) {
    if (p >= d->input && p <= d->input + d->input_size) return (size_t)(p - d->input);
    return d->merged_off;
}

static void fail(dec *d, const uint8_t *at, const tracec_i_msg *mi, uint32_t number, const char *what) {
    if (d->status != TRACEC_STATUS_SUCCESS) return;
    d->status = TRACEC_STATUS_CORRUPT_DATA;
    const char *type = mi ? mi->full_name : "unknown fields";
    if (number)
        tracec_i_set_error(d->err, "%s: byte offset %zu: %s (field %u of %s)", d->file_name, off(d, at),
                     what, number, type);
    else
        tracec_i_set_error(d->err, "%s: byte offset %zu: %s (in %s)", d->file_name, off(d, at), what,
                     type);
}

static void oom(dec *d) {
    if (d->status != TRACEC_STATUS_SUCCESS) return;
    d->status = TRACEC_STATUS_OUT_OF_MEMORY;
    tracec_i_set_error(d->err, "%s: out of memory", d->file_name);
}

/* ---- Reading one field ---------------------------------------------------- */

/*
 * Reads the field at *pp into r and classifies it against `mi` (NULL: all
 * fields unknown).  Returns 1, 0 at the end, -1 on a malformed field (the
 * error is reported through *what / *at and not yet recorded).
 */
static int next_field(dec *d, tracec_i_msg *mi, const uint8_t **pp, const uint8_t *end, int depth,
                   rec *r, const char **what, const uint8_t **at) {
    tracec_wire_field wf;
    int k = tracec_wire_read_field(pp, end, d->max_depth - depth - 1, &wf, what, at);
    if (k == 0) return 0;
    r->at = wf.start;
    r->number = wf.number;
    r->wt = wf.type;
    if (k < 0) return -1;
    if (wf.type == TRACEC_WIRE_EGROUP) {
        *what = "unexpected end-group tag";
        *at = wf.start;
        *pp = wf.start;
        return -1;
    }
    r->v = wf.value;
    /* Every field of the record is set: a payload only for LEN and group fields. */
    r->data = NULL;
    r->len = 0;
    if (wf.type == TRACEC_WIRE_LEN || wf.type == TRACEC_WIRE_SGROUP) {
        r->data = wf.data;
        r->len = wf.size;
    }

    tracec_i_field *f = mi ? tracec_i_msg_field(d->s, mi, r->number) : NULL;
    r->f = f;
    if (f && r->wt == f->wt) {
        r->kind = REC_VALUE;
        if (f->closed_enum && f->en && !tracec_i_enum_name(f->en, (int32_t)r->v, NULL)) {
            /* protoc keeps the int32 value, sign-extended, among the unknown fields */
            r->v = (uint64_t)(int64_t)(int32_t)r->v;
            r->kind = REC_UNKNOWN;
            r->f = NULL;
        }
    } else if (f && f->packable && r->wt == TRACEC_WIRE_LEN) {
        r->kind = REC_PACKED;
    } else {
        r->kind = REC_UNKNOWN;
        r->f = NULL;
    }
    return 1;
}

/* Whether a packed closed-enum payload holds a value the enum lacks (or is malformed). */
static bool packed_has_unknown_enum(const rec *r) {
    const uint8_t *p = r->data, *end = r->data + r->len;
    while (p < end) {
        uint64_t v;
        if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return true;
        if (!tracec_i_enum_name(r->f->en, (int32_t)v, NULL)) return true;
    }
    return false;
}

/* ---- Printing values ------------------------------------------------------ */

static void print_scalar(dec *d, const tracec_i_field *f, uint64_t v) {
    tracec_i_out *o = d->o;
    switch ((tracec_field_type)f->type) {
    case TRACEC_TYPE_DOUBLE: {
        double x;
        memcpy(&x, &v, 8);
        tracec_i_out_double(o, x);
        break;
    }
    case TRACEC_TYPE_FLOAT: {
        float x;
        uint32_t b = (uint32_t)v;
        memcpy(&x, &b, 4);
        tracec_i_out_float(o, x);
        break;
    }
    case TRACEC_TYPE_INT64:
    case TRACEC_TYPE_SFIXED64:
        tracec_i_out_i64(o, (int64_t)v);
        break;
    case TRACEC_TYPE_UINT64:
    case TRACEC_TYPE_FIXED64:
        tracec_i_out_u64(o, v);
        break;
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_SFIXED32:
        tracec_i_out_i64(o, (int32_t)(uint32_t)v);
        break;
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_FIXED32:
        tracec_i_out_u64(o, (uint32_t)v);
        break;
    case TRACEC_TYPE_BOOL:
        if (v)
            tracec_i_out_put(o, "true", 4);
        else
            tracec_i_out_put(o, "false", 5);
        break;
    case TRACEC_TYPE_ENUM: {
        uint32_t n;
        const char *name = f->en ? tracec_i_enum_name(f->en, (int32_t)v, &n) : NULL;
        if (name)
            tracec_i_out_put(o, name, n);
        else
            tracec_i_out_i64(o, (int32_t)(uint32_t)v);
        break;
    }
    case TRACEC_TYPE_SINT32: {
        uint32_t u = (uint32_t)v;
        tracec_i_out_i64(o, (int32_t)(u >> 1) ^ -(int32_t)(u & 1));
        break;
    }
    case TRACEC_TYPE_SINT64:
        tracec_i_out_i64(o, (int64_t)(v >> 1) ^ -(int64_t)(v & 1));
        break;
    default:
        tracec_i_out_u64(o, v);
    }
}

static inline void print_name(dec *d, const tracec_i_field *f, int indent) {
    tracec_i_out_indent(d->o, indent);
    tracec_i_out_put(d->o, f->pname, f->pname_len);
}

static void print_unknown(dec *d, uint32_t number, int wt, uint64_t v, const uint8_t *data,
                             size_t len, int indent, int budget);

/*
 * With conflicting definitions in the pool, a LEN field that does not parse
 * under the winner (a message, a packed run) is printed as an unknown field;
 * returns true when it was.
 */
static bool print_as_unknown(dec *d, const rec *r, const uint8_t *body, size_t len,
                                      int depth) {
    if (!d->lenient) return false;
    if (r->f->is_msg ? tracec_i_wire_parses(body, len, d->max_depth - depth)
                     : tracec_i_packed_parses(r->f->wt, body, len))
        return false;
    if (!d->hide_unknown) print_unknown(d, r->number, TRACEC_WIRE_LEN, len, body, len, depth, UNKNOWN_BUDGET);
    return true;
}

static bool print_packed(dec *d, tracec_i_msg *mi, const rec *r, int indent) {
    const tracec_i_field *f = r->f;
    const uint8_t *p = r->data, *end = r->data + r->len;
    if (print_as_unknown(d, r, p, r->len, indent)) return true;
    while (p < end) {
        uint64_t v;
        const uint8_t *at = p;
        const char *what = tracec_i_packed_next(&p, end, f->wt, &v);
        if (what) {
            fail(d, at, mi, r->number, what);
            return false;
        }
        print_name(d, f, indent);
        tracec_i_out_put(d->o, ": ", 2);
        print_scalar(d, f, v);
        tracec_i_out_putc(d->o, '\n');
    }
    return true;
}

static bool print_sub(dec *d, tracec_i_msg *mi, const rec *r, const uint8_t *body, size_t len,
                         int depth) {
    tracec_i_field *f = r->f;
    if (depth + 1 > d->max_depth) {
        fail(d, r->at, mi, r->number, "messages nested deeper than the limit");
        return false;
    }
    if (print_as_unknown(d, r, body, len, depth)) return true;
    tracec_i_msg *sub = tracec_i_field_sub(d->s, f);
    if (!sub) {
        oom(d);
        return false;
    }
    print_name(d, f, depth);
    tracec_i_out_put(d->o, " {\n", 3);
    bool ok = print_msg(d, sub, body, len, depth + 1);
    tracec_i_out_indent(d->o, depth);
    tracec_i_out_put(d->o, "}\n", 2);
    return ok;
}

/* ---- Unknown fields ------------------------------------------------------- */

static void print_unknown_set(dec *d, const uint8_t *p, size_t len, int indent, int budget);

static void print_unknown(dec *d, uint32_t number, int wt, uint64_t v, const uint8_t *data,
                             size_t len, int indent, int budget) {
    tracec_i_out *o = d->o;
    tracec_i_out_indent(o, indent);
    tracec_i_out_u64(o, number);
    switch (wt) {
    case TRACEC_WIRE_VARINT:
        tracec_i_out_put(o, ": ", 2);
        tracec_i_out_u64(o, v);
        break;
    case TRACEC_WIRE_FIXED32:
        tracec_i_out_put(o, ": ", 2);
        tracec_i_out_hex(o, v, 8);
        break;
    case TRACEC_WIRE_FIXED64:
        tracec_i_out_put(o, ": ", 2);
        tracec_i_out_hex(o, v, 16);
        break;
    case TRACEC_WIRE_LEN:
        if (len > 0 && budget > 0 && tracec_i_wire_parses(data, len, budget)) {
            tracec_i_out_put(o, " {\n", 3);
            print_unknown_set(d, data, len, indent + 1, budget - 1);
            tracec_i_out_indent(o, indent);
            tracec_i_out_putc(o, '}');
        } else {
            tracec_i_out_put(o, ": \"", 3);
            tracec_i_out_escaped(o, data, len);
            tracec_i_out_putc(o, '"');
        }
        break;
    case TRACEC_WIRE_SGROUP:
        tracec_i_out_put(o, " {\n", 3);
        print_unknown_set(d, data, len, indent + 1, budget - 1);
        tracec_i_out_indent(o, indent);
        tracec_i_out_putc(o, '}');
        break;
    }
    tracec_i_out_putc(o, '\n');
}

/* Prints an already validated run of unknown fields. */
static void print_unknown_set(dec *d, const uint8_t *p, size_t len, int indent, int budget) {
    const uint8_t *end = p + len, *at;
    const char *what;
    tracec_wire_field f;
    while (tracec_wire_read_field(&p, end, INT_MAX, &f, &what, &at) > 0 && f.type != TRACEC_WIRE_EGROUP)
        print_unknown(d, f.number, f.type, f.value, f.data, f.size, indent, budget);
}

/* ---- Printing fields ------------------------------------------------------ */

/* Whether a plain value holds its type's default (what protoc's HasField tests for proto3 scalars). */
static bool is_default(const tracec_i_field *f, const rec *r) {
    switch ((tracec_field_type)f->type) {
    case TRACEC_TYPE_STRING:
    case TRACEC_TYPE_BYTES:
        return r->len == 0;
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_SINT32:
    case TRACEC_TYPE_ENUM:
    case TRACEC_TYPE_FIXED32:
    case TRACEC_TYPE_SFIXED32:
    case TRACEC_TYPE_FLOAT: /* by bits: -0 is printed */
        return (uint32_t)r->v == 0;
    default: /* 64-bit types, double (by bits), bool (any non-zero varint is true) */
        return r->v == 0;
    }
}

/* Prints the default value of `f` (a map entry's missing key or value), as protoc does. */
static void print_default(dec *d, const tracec_i_field *f, int depth) {
    print_name(d, f, depth);
    if (f->is_msg || f->type == TRACEC_TYPE_MESSAGE || f->type == TRACEC_TYPE_GROUP) {
        tracec_i_out_put(d->o, " {\n", 3);
        tracec_i_out_indent(d->o, depth);
        tracec_i_out_put(d->o, "}\n", 2);
        return;
    }
    tracec_i_out_put(d->o, ": ", 2);
    if (f->type == TRACEC_TYPE_STRING || f->type == TRACEC_TYPE_BYTES) {
        tracec_i_out_put(d->o, "\"\"", 2);
    } else {
        uint64_t v = 0;
        /* An enum's default is its first declared value (0 in proto3). */
        if (f->type == TRACEC_TYPE_ENUM && f->en && tracec_enumdef_value_count(f->en->def))
            v = (uint64_t)(int64_t)tracec_enumdef_value_number(f->en->def, 0);
        print_scalar(d, f, v);
    }
    tracec_i_out_putc(d->o, '\n');
}

static bool print_rec(dec *d, tracec_i_msg *mi, const rec *r, int depth) {
    if (r->kind == REC_UNKNOWN) {
        if (!d->hide_unknown)
            print_unknown(d, r->number, r->wt, r->v, r->data, r->len, depth, UNKNOWN_BUDGET);
        return true;
    }
    if (r->kind == REC_PACKED) return print_packed(d, mi, r, depth);
    const tracec_i_field *f = r->f;
    if (f->is_msg) return print_sub(d, mi, r, r->data, r->len, depth);
    if (f->implicit && is_default(f, r)) return true; /* proto3: default == absent */
    print_name(d, f, depth);
    tracec_i_out_put(d->o, ": ", 2);
    if (f->type == TRACEC_TYPE_STRING || f->type == TRACEC_TYPE_BYTES) {
        tracec_i_out_putc(d->o, '"');
        tracec_i_out_escaped(d->o, r->data, r->len);
        tracec_i_out_putc(d->o, '"');
    } else {
        print_scalar(d, f, r->v);
    }
    tracec_i_out_putc(d->o, '\n');
    return true;
}

/* ---- The non-canonical path ----------------------------------------------- */

static bool scratch_push(scratch_level *sc, const rec *r) {
    if (sc->n == sc->cap) {
        size_t ncap = sc->cap ? sc->cap * 2 : 64;
        rec *nr = realloc(sc->recs, ncap * sizeof *nr);
        if (!nr) return false;
        sc->recs = nr;
        sc->cap = ncap;
    }
    sc->recs[sc->n] = *r;
    sc->recs[sc->n].idx = sc->n;
    sc->n++;
    return true;
}

/* Sorts `order[0..n)` (indices into recs) by (number, wire order); merge sort, no globals. */
static void sort_order(const rec *recs, size_t *order, size_t *tmp, size_t n) {
    if (n < 2) return;
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            size_t k = order[i], j = i;
            while (j > 0 && (recs[order[j - 1]].number > recs[k].number)) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = k;
        }
        return;
    }
    size_t h = n / 2;
    sort_order(recs, order, tmp, h);
    sort_order(recs, order + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (recs[order[j]].number < recs[order[i]].number)
            tmp[k++] = order[j++];
        else
            tmp[k++] = order[i++];
    }
    while (i < h) tmp[k++] = order[i++];
    while (j < n) tmp[k++] = order[j++];
    memcpy(order, tmp, n * sizeof *order);
}

/* Prints the singular message field recs[order[i..j)] merged (only those after `cutoff`). */
static bool print_merged(dec *d, tracec_i_msg *mi, const rec *recs, const size_t *order,
                            size_t i, size_t j, size_t cutoff, bool has_cutoff, int depth) {
    size_t total = 0, count = 0, first = SIZE_MAX;
    for (size_t k = i; k < j; k++) {
        const rec *r = &recs[order[k]];
        if (has_cutoff && r->idx <= cutoff) continue;
        total += r->len;
        count++;
        if (first == SIZE_MAX) first = k;
    }
    if (count == 0) return true;
    const rec *fr = &recs[order[first]];
    if (count == 1) return print_sub(d, mi, fr, fr->data, fr->len, depth);
    uint8_t *buf = malloc(total ? total : 1);
    if (!buf) {
        oom(d);
        return false;
    }
    size_t pos = 0;
    for (size_t k = first; k < j; k++) {
        const rec *r = &recs[order[k]];
        if (has_cutoff && r->idx <= cutoff) continue;
        memcpy(buf + pos, r->data, r->len);
        pos += r->len;
    }
    size_t saved = d->merged_off;
    d->merged_off = off(d, fr->data);
    bool ok = print_sub(d, mi, fr, buf, total, depth);
    d->merged_off = saved;
    free(buf);
    return ok;
}

/* ---- Maps ---------------------------------------------------------------- */

/* A map entry's key, in a form that sorts as protoc sorts map keys. */
typedef struct mkey {
    const uint8_t *s; /* string keys */
    size_t len;
    uint64_t u;       /* integer keys; signed ones biased so that unsigned order is numeric order */
    size_t pos;       /* wire position among the entries (the sort is stable) */
} mkey;

static int mkey_cmp(const mkey *a, const mkey *b, bool str) {
    if (str) {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = n ? memcmp(a->s, b->s, n) : 0;
        if (c) return c;
        if (a->len != b->len) return a->len < b->len ? -1 : 1;
    } else if (a->u != b->u) {
        return a->u < b->u ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void mkey_sort(mkey *k, mkey *tmp, size_t n, bool str) {
    if (n < 2) return;
    size_t h = n / 2;
    mkey_sort(k, tmp, h, str);
    mkey_sort(k + h, tmp, n - h, str);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) tmp[o++] = mkey_cmp(&k[j], &k[i], str) < 0 ? k[j++] : k[i++];
    while (i < h) tmp[o++] = k[i++];
    while (j < n) tmp[o++] = k[j++];
    memcpy(k, tmp, n * sizeof *k);
}

static uint64_t mkey_int(const tracec_i_field *kf, uint64_t v) {
    const uint64_t bias = (uint64_t)1 << 63;
    switch ((tracec_field_type)kf->type) {
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_SFIXED32:
        return (uint64_t)(int64_t)(int32_t)(uint32_t)v ^ bias;
    case TRACEC_TYPE_SINT32: {
        uint32_t u = (uint32_t)v;
        return (uint64_t)(int64_t)((int32_t)(u >> 1) ^ -(int32_t)(u & 1)) ^ bias;
    }
    case TRACEC_TYPE_INT64:
    case TRACEC_TYPE_SFIXED64:
        return v ^ bias;
    case TRACEC_TYPE_SINT64:
        return (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1)) ^ bias;
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_FIXED32:
        return (uint32_t)v;
    case TRACEC_TYPE_BOOL:
        return v != 0;
    default:
        return v;
    }
}

/*
 * Prints the entries recs[order[0..n)] of a map field sorted by key, as
 * protoc 3.21 does: a stable sort, so entries with equal keys (protoc keeps
 * them all) stay in wire order; an entry without a key sorts as the default.
 */
static bool print_map(dec *d, tracec_i_msg *mi, const rec *recs, const size_t *order, size_t n,
                         int depth) {
    tracec_i_field *f = recs[order[0]].f;
    tracec_i_msg *entry = tracec_i_field_sub(d->s, f);
    if (!entry) {
        oom(d);
        return false;
    }
    tracec_i_field *kf = tracec_i_msg_field(d->s, entry, 1);
    bool str = kf && (kf->type == TRACEC_TYPE_STRING || kf->type == TRACEC_TYPE_BYTES);
    mkey *keys = malloc(2 * n * sizeof *keys);
    if (!keys) {
        oom(d);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const rec *r = &recs[order[i]];
        mkey *k = &keys[i];
        k->s = NULL;
        k->len = 0;
        k->u = kf && !str ? mkey_int(kf, 0) : 0;
        k->pos = i;
        const uint8_t *p = r->data, *end = r->data + r->len;
        rec e;
        const char *what;
        const uint8_t *at;
        /* The last key in the entry wins; a malformed entry keeps what came before (its error is
         * reported when it is printed). */
        while (kf && next_field(d, entry, &p, end, depth + 1, &e, &what, &at) > 0) {
            if (e.f != kf || e.kind != REC_VALUE) continue;
            if (str) {
                k->s = e.data;
                k->len = e.len;
            } else {
                k->u = mkey_int(kf, e.v);
            }
        }
    }
    mkey_sort(keys, keys + n, n, str);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) ok = print_rec(d, mi, &recs[order[keys[i].pos]], depth);
    free(keys);
    return ok;
}

static bool print_slow(dec *d, tracec_i_msg *mi, const uint8_t *buf, const uint8_t *valid_end,
                          int depth, const uint8_t **err_at, const char **err_what, uint32_t *err_num) {
    scratch_level *sc = &d->scratch[depth];
    sc->n = 0;
    const uint8_t *p = buf;
    rec r;
    const char *what;
    const uint8_t *at;
    while (p < valid_end && next_field(d, mi, &p, valid_end, depth, &r, &what, &at) > 0) {
        if (r.kind == REC_PACKED && r.f->closed_enum && r.f->en && packed_has_unknown_enum(&r)) {
            /* Expand: known values stay with the field, others become unknown varints. */
            const uint8_t *q = r.data, *qe = r.data + r.len;
            while (q < qe) {
                uint64_t v;
                const uint8_t *vat = q;
                if (tracec_wire_read_varint(&q, qe, &v) != TRACEC_VARINT_OK) {
                    /* The valid part ends before this field. */
                    *err_at = vat;
                    *err_what = "malformed varint in packed field";
                    *err_num = r.number;
                    p = valid_end;
                    break;
                }
                rec e = r;
                e.wt = TRACEC_WIRE_VARINT;
                e.v = v;
                e.kind = REC_VALUE;
                if (!tracec_i_enum_name(r.f->en, (int32_t)v, NULL)) {
                    e.kind = REC_UNKNOWN;
                    e.f = NULL;
                    e.v = (uint64_t)(int64_t)(int32_t)v;
                }
                if (!scratch_push(sc, &e)) {
                    oom(d);
                    return false;
                }
            }
            continue;
        }
        if (!scratch_push(sc, &r)) {
            oom(d);
            return false;
        }
    }
    size_t n = sc->n;
    if (sc->order_cap < 2 * n) {
        size_t *no = realloc(sc->order, 2 * n * sizeof *no);
        if (!no) {
            oom(d);
            return false;
        }
        sc->order = no;
        sc->order_cap = 2 * n;
    }
    size_t *order = sc->order, nk = 0;
    for (size_t i = 0; i < n; i++)
        if (sc->recs[i].f) order[nk++] = i;
    if (nk > 1) sort_order(sc->recs, order, order + n, nk);

    /* Oneofs: the member seen last wins; a winning message merges the
     * occurrences after the last occurrence of any other member. */
    size_t no = mi->noneofs;
    uint32_t *winner = NULL;
    size_t *cutoff = NULL;
    bool *has_cut = NULL;
    if (no) {
        winner = calloc(no, sizeof *winner);
        cutoff = calloc(no, sizeof *cutoff);
        has_cut = calloc(no, sizeof *has_cut);
        if (!winner || !cutoff || !has_cut) {
            free(winner);
            free(cutoff);
            free(has_cut);
            oom(d);
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            const rec *x = &sc->recs[i];
            if (x->f && x->f->oneof >= 0 && (size_t)x->f->oneof < no) winner[x->f->oneof] = x->number;
        }
        for (size_t i = 0; i < n; i++) {
            const rec *x = &sc->recs[i];
            if (x->f && x->f->oneof >= 0 && (size_t)x->f->oneof < no &&
                x->number != winner[x->f->oneof]) {
                cutoff[x->f->oneof] = x->idx;
                has_cut[x->f->oneof] = true;
            }
        }
    }

    /* Printing recurses, and deeper levels may move d->scratch: use `recs` and
     * `order` (which stay put), not `sc`, from here on. */
    const rec *recs = sc->recs;
    size_t next_default = 0; /* map entries: the next of key/value that may need its default */
    bool ok = true;
    for (size_t i = 0; i < nk && ok;) {
        size_t j = i + 1;
        uint32_t num = recs[order[i]].number;
        while (j < nk && recs[order[j]].number == num) j++;
        const tracec_i_field *f = recs[order[i]].f;
        if (mi->map_entry) {
            for (; next_default < mi->nfields && mi->fields[next_default].number <= num; next_default++)
                if (mi->fields[next_default].number < num) print_default(d, &mi->fields[next_default], depth);
        }
        if (f->repeated) {
            if (f->is_map && j - i > 1)
                ok = print_map(d, mi, recs, order + i, j - i, depth);
            else
                for (size_t k = i; k < j && ok; k++) ok = print_rec(d, mi, &recs[order[k]], depth);
        } else {
            int oi = f->oneof >= 0 && (size_t)f->oneof < no ? f->oneof : -1;
            if (oi >= 0 && winner[oi] != num) {
                /* cleared by a later member of its oneof */
            } else if (f->is_msg) {
                ok = print_merged(d, mi, recs, order, i, j, oi >= 0 ? cutoff[oi] : 0,
                                     oi >= 0 && has_cut[oi], depth);
            } else {
                ok = print_rec(d, mi, &recs[order[j - 1]], depth);
            }
        }
        i = j;
    }
    if (mi->map_entry && ok)
        for (; next_default < mi->nfields; next_default++) print_default(d, &mi->fields[next_default], depth);
    free(winner);
    free(cutoff);
    free(has_cut);
    for (size_t i = 0; i < n && ok; i++)
        if (!recs[i].f) ok = print_rec(d, mi, &recs[i], depth);
    return ok;
}

/* ---- Messages ------------------------------------------------------------- */

static bool print_msg(dec *d, tracec_i_msg *mi, const uint8_t *buf, size_t len, int depth) {
    if (depth >= d->nscratch) {
        int n = d->nscratch ? d->nscratch * 2 : 16;
        while (n <= depth) n *= 2;
        scratch_level *ns = realloc(d->scratch, (size_t)n * sizeof *ns);
        if (!ns) {
            oom(d);
            return false;
        }
        memset(ns + d->nscratch, 0, (size_t)(n - d->nscratch) * sizeof *ns);
        d->scratch = ns;
        d->nscratch = n;
    }
    const uint8_t *end = buf + len, *p = buf;
    const uint8_t *valid_end = end;
    const char *err_what = NULL;
    const uint8_t *err_at = NULL;
    uint32_t err_num = 0;

    /* 1. Scan. */
    bool canon = !mi->map_entry, seen_unknown = false;
    uint32_t last = 0;
    uint64_t oneofs = 0;
    rec r;
    for (;;) {
        const uint8_t *start = p;
        int k = next_field(d, mi, &p, end, depth, &r, &err_what, &err_at);
        if (k == 0) break;
        if (k < 0) {
            valid_end = start;
            err_num = r.number;
            if (start == err_at) err_num = 0;
            break;
        }
        if (!canon) continue;
        if (!r.f) {
            seen_unknown = true;
            continue;
        }
        if (seen_unknown || r.number < last || (r.number == last && (!r.f->repeated || r.f->is_map))) {
            canon = false;
            continue;
        }
        if (r.f->oneof >= 0 && r.number != last) {
            if (r.f->oneof >= 64 || (oneofs >> r.f->oneof & 1)) {
                canon = false;
                continue;
            }
            oneofs |= (uint64_t)1 << r.f->oneof;
        }
        if (r.kind == REC_PACKED && r.f->closed_enum && r.f->en && packed_has_unknown_enum(&r))
            canon = false;
        last = r.number;
    }

    /* 2. Print. */
    bool ok = true;
    if (canon) {
        p = buf;
        const char *w;
        const uint8_t *a;
        while (ok && p < valid_end && next_field(d, mi, &p, valid_end, depth, &r, &w, &a) > 0) {
            ok = print_rec(d, mi, &r, depth);
            if (d->o->failed) ok = false;
        }
    } else {
        ok = print_slow(d, mi, buf, valid_end, depth, &err_at, &err_what, &err_num);
    }
    if (ok && err_what) {
        fail(d, err_at, mi, err_num, err_what);
        ok = false;
    }
    return ok;
}

/* ---- Entry points --------------------------------------------------------- */

void tracec_decode_options_init(tracec_decode_options *opts) {
    const tracec_decode_options init = TRACEC_DECODE_OPTIONS_INIT;
    *opts = init;
}

tracec_status_t tracec_decode_text(tracec_pool *pool, const void *data, size_t size,
                                   const tracec_decode_options *opts, tracec_write_fn write,
                                   void *write_ctx, tracec_error *err) {
    tracec_decode_options o;
    if (opts)
        o = *opts;
    else
        tracec_decode_options_init(&o);
    if (!o.type_name) o.type_name = TRACEC_DEFAULT_TYPE;
    if (!o.file_name) o.file_name = "<input>";
    if (o.max_depth <= 0) o.max_depth = 100;
    if (err) err->msg[0] = 0;
    if (o.max_depth > TRACEC_DECODE_MAX_DEPTH_LIMIT) {
        tracec_i_set_error(err, "tracec_decode_text: max_depth %d is above the limit of %d", o.max_depth,
                           TRACEC_DECODE_MAX_DEPTH_LIMIT);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (!pool || (!data && size) || !write) {
        tracec_i_set_error(err, "tracec_decode_text: invalid argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (o.extension_descriptors)
        (void)tracec_load_extension_descriptors(pool, data, size, o.type_name, NULL, NULL);
    const tracec_msgdef *m = tracec_pool_find_message(pool, o.type_name);
    if (!m) {
        tracec_i_set_error(err, "unknown message type '%s'", o.type_name);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    tracec_i_out out;
    tracec_i_out_init(&out, write, write_ctx);
    dec d;
    memset(&d, 0, sizeof d);
    d.o = &out;
    d.input = data;
    d.input_size = size;
    d.file_name = o.file_name;
    d.max_depth = o.max_depth;
    d.hide_unknown = o.hide_unknown;
    d.lenient = tracec_pool_conflict_count(pool) > 0;
    d.err = err;
    d.status = TRACEC_STATUS_SUCCESS;
    d.s = tracec_i_schema_new(pool);
    tracec_i_msg *mi = d.s ? tracec_i_schema_msg(d.s, m) : NULL;
    if (!mi) {
        oom(&d);
    } else {
        static const uint8_t empty[1];
        print_msg(&d, mi, size ? data : empty, size, 0);
    }
    tracec_i_out_flush(&out);
    if (out.failed && d.status == TRACEC_STATUS_SUCCESS) {
        d.status = TRACEC_STATUS_IO_ERROR;
        tracec_i_set_error(err, "%s: cannot write the text output", o.file_name);
    }
    tracec_i_out_free(&out);
    for (int i = 0; i < d.nscratch; i++) {
        free(d.scratch[i].recs);
        free(d.scratch[i].order);
    }
    free(d.scratch);
    tracec_i_schema_free(d.s);
    return d.status;
}

tracec_status_t tracec_decode_text_bytes(tracec_pool *pool, const void *data, size_t size,
                                         const tracec_decode_options *opts, tracec_bytes *out,
                                         tracec_error *err) {
    return tracec_decode_text(pool, data, size, opts, tracec_i_write_bytes, out, err);
}
