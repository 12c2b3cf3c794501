/*
 * schema.c - a decoding-oriented cache over a tracec_pool.
 *
 * The decoder asks "which field is number N of message M" for every field
 * of the input.  This cache answers from a dense array for small numbers (a
 * single load), from a per-message hash for extensions, and keeps the facts
 * the decoder needs per field (expected wire type, printed name, packability,
 * closed enum) precomputed.  Entries are created on first use.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Open-addressing map from a pointer to a value. */
typedef struct ptrmap {
    const void **keys;
    void **vals;
    size_t cap, n;
} ptrmap;

struct tracec_i_schema {
    const tracec_pool *pool;
    ptrmap msgs;  /* tracec_msgdef* -> tracec_i_msg* */
    ptrmap enums; /* tracec_enumdef* -> tracec_i_enum* */
    tracec_i_field **ext_fields; /* extension fields, owned */
    size_t n_ext_fields, cap_ext_fields;
};

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static void *ptrmap_get(const ptrmap *m, const void *key) {
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash_ptr(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) return m->vals[i];
        if (!m->keys[i]) return NULL;
    }
}

static bool ptrmap_put(ptrmap *m, const void *key, void *val) {
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        const void **nk = calloc(ncap, sizeof *nk);
        void **nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            size_t j = hash_ptr(m->keys[i]) & (ncap - 1);
            while (nk[j]) j = (j + 1) & (ncap - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    size_t mask = m->cap - 1;
    size_t i = hash_ptr(key) & mask;
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & mask;
    if (!m->keys[i]) m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

tracec_i_schema *tracec_i_schema_new(const tracec_pool *pool) {
    tracec_i_schema *s = calloc(1, sizeof *s);
    if (s) s->pool = pool;
    return s;
}

const tracec_pool *tracec_i_schema_pool(const tracec_i_schema *s) { return s->pool; }

static void field_free_names(tracec_i_field *f) {
    if (f->is_ext || f->is_group) free((char *)f->pname);
}

void tracec_i_schema_free(tracec_i_schema *s) {
    if (!s) return;
    for (size_t i = 0; i < s->msgs.cap; i++) {
        tracec_i_msg *mi = s->msgs.vals[i];
        if (!s->msgs.keys[i] || !mi) continue;
        for (size_t k = 0; k < mi->nfields; k++) field_free_names(&mi->fields[k]);
        free(mi->fields);
        free(mi->dense);
        free(mi->ext);
        free(mi);
    }
    for (size_t i = 0; i < s->enums.cap; i++) {
        tracec_i_enum *e = s->enums.vals[i];
        if (!s->enums.keys[i] || !e) continue;
        free(e->numbers);
        free(e->names);
        free(e->name_lens);
        free(e);
    }
    for (size_t i = 0; i < s->n_ext_fields; i++) {
        field_free_names(s->ext_fields[i]);
        free(s->ext_fields[i]);
    }
    free(s->ext_fields);
    free(s->msgs.keys);
    free(s->msgs.vals);
    free(s->enums.keys);
    free(s->enums.vals);
    free(s);
}

typedef struct {
    int32_t number;
    size_t idx;
} enum_pair;

static int cmp_enum_pair(const void *a, const void *b) {
    const enum_pair *x = a, *y = b;
    if (x->number != y->number) return x->number < y->number ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static tracec_i_enum *schema_enum(tracec_i_schema *s, const tracec_enumdef *e) {
    tracec_i_enum *te = ptrmap_get(&s->enums, e);
    if (te) return te;
    te = calloc(1, sizeof *te);
    if (!te) return NULL;
    size_t n = tracec_enumdef_value_count(e);
    enum_pair *pairs = malloc((n ? n : 1) * sizeof *pairs);
    te->numbers = malloc((n ? n : 1) * sizeof *te->numbers);
    te->names = malloc((n ? n : 1) * sizeof *te->names);
    te->name_lens = malloc((n ? n : 1) * sizeof *te->name_lens);
    if (!pairs || !te->numbers || !te->names || !te->name_lens) {
        free(pairs);
        free(te->numbers);
        free(te->names);
        free(te->name_lens);
        free(te);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        pairs[i].number = tracec_enumdef_value_number(e, i);
        pairs[i].idx = i;
    }
    qsort(pairs, n, sizeof *pairs, cmp_enum_pair);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && te->numbers[k - 1] == pairs[i].number) continue; /* alias: first name wins */
        te->numbers[k] = pairs[i].number;
        te->names[k] = tracec_enumdef_value_name(e, pairs[i].idx);
        te->name_lens[k] = (uint32_t)strlen(te->names[k]);
        k++;
    }
    free(pairs);
    te->n = k;
    te->def = e;
    if (!ptrmap_put(&s->enums, e, te)) {
        free(te->numbers);
        free(te->names);
        free(te->name_lens);
        free(te);
        return NULL;
    }
    return te;
}

const char *tracec_i_enum_name(const tracec_i_enum *e, int32_t number, uint32_t *len) {
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->numbers[mid] == number) {
            if (len) *len = e->name_lens[mid];
            return e->names[mid];
        }
        if (e->numbers[mid] < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Fills `f` from `def`; `parent` is the message being parsed (for enum closedness). */
static bool field_init(tracec_i_schema *s, tracec_i_field *f, const tracec_fielddef *def, const tracec_i_msg *parent) {
    memset(f, 0, sizeof *f);
    f->def = def;
    f->number = tracec_fielddef_number(def);
    f->type = (uint8_t)tracec_fielddef_type(def);
    f->wt = (uint8_t)tracec_wire_type_of(f->type);
    f->repeated = tracec_fielddef_is_repeated(def);
    f->is_ext = tracec_fielddef_is_extension(def);
    f->is_group = f->type == TRACEC_TYPE_GROUP;
    f->is_msg = f->type == TRACEC_TYPE_MESSAGE || f->is_group;
    f->packable = f->repeated && f->type != TRACEC_TYPE_STRING && f->type != TRACEC_TYPE_BYTES &&
                  !f->is_msg;
    f->oneof = f->is_ext ? -1 : tracec_fielddef_oneof_index(def);
    f->short_name = tracec_fielddef_name(def);
    f->sub = f->is_msg ? tracec_fielddef_message(def) : NULL;
    /* protoc prints a map entry's key and value even when they hold the default. */
    f->implicit = !tracec_fielddef_has_presence(def) && !f->repeated && !f->is_msg && !parent->map_entry;
    f->is_map = f->repeated && f->sub && tracec_msgdef_is_map_entry(f->sub);
    if (f->type == TRACEC_TYPE_ENUM) {
        const tracec_enumdef *e = tracec_fielddef_enum(def);
        if (e) {
            f->en = schema_enum(s, e);
            if (!f->en) return false;
        }
        /* protoc 3.21 keeps unknown enum values as such only in proto3 messages. */
        f->closed_enum = !parent->proto3;
    }
    if (f->is_ext) {
        const char *fn = tracec_fielddef_full_name(def);
        size_t n = strlen(fn);
        char *p = malloc(n + 3);
        if (!p) return false;
        p[0] = '[';
        memcpy(p + 1, fn, n);
        p[n + 1] = ']';
        p[n + 2] = 0;
        f->pname = p;
        f->pname_len = (uint32_t)(n + 2);
    } else if (f->is_group && f->sub) {
        /* Groups print under their type's name. */
        const char *tn = tracec_msgdef_name(f->sub);
        size_t n = strlen(tn);
        char *p = malloc(n + 1);
        if (!p) return false;
        memcpy(p, tn, n + 1);
        f->pname = p;
        f->pname_len = (uint32_t)n;
    } else {
        if (f->is_group) f->is_group = false, f->is_msg = false; /* unresolved group: treat as unknown */
        f->pname = f->short_name;
        f->pname_len = (uint32_t)strlen(f->short_name);
    }
    if ((f->type == TRACEC_TYPE_MESSAGE || f->type == TRACEC_TYPE_GROUP) && !f->sub) {
        /* An unresolved message type: the field cannot be decoded, so it is
         * shown as an unknown field (no wire type matches 0xff). */
        f->is_msg = false;
        f->wt = 0xff;
    }
    return true;
}

static int cmp_field(const void *a, const void *b) {
    const tracec_i_field *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number;
}

tracec_i_msg *tracec_i_schema_msg(tracec_i_schema *s, const tracec_msgdef *m) {
    tracec_i_msg *mi = ptrmap_get(&s->msgs, m);
    if (mi) return mi;
    mi = calloc(1, sizeof *mi);
    if (!mi) return NULL;
    mi->def = m;
    mi->full_name = tracec_msgdef_full_name(m);
    mi->proto3 = tracec_msgdef_is_proto3(m);
    mi->map_entry = tracec_msgdef_is_map_entry(m);
    mi->noneofs = tracec_msgdef_oneof_count(m);
    size_t n = tracec_msgdef_field_count(m);
    mi->fields = calloc(n ? n : 1, sizeof *mi->fields);
    if (!mi->fields) goto oom;
    /* Register before filling fields so recursive types resolve to this entry. */
    if (!ptrmap_put(&s->msgs, m, mi)) goto oom;
    uint32_t maxnum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!field_init(s, &mi->fields[i], tracec_msgdef_field(m, i), mi)) {
            mi->nfields = i + 1;
            return mi; /* partially filled: lookups of the rest fall back to unknown */
        }
        mi->nfields = i + 1;
    }
    qsort(mi->fields, n, sizeof *mi->fields, cmp_field);
    for (size_t i = 0; i < n; i++)
        if (mi->fields[i].number < 4096 && mi->fields[i].number > maxnum) maxnum = mi->fields[i].number;
    mi->ndense = maxnum + 1;
    mi->dense = calloc(mi->ndense, sizeof *mi->dense);
    if (!mi->dense) {
        mi->ndense = 0;
        return mi;
    }
    for (size_t i = 0; i < n; i++)
        if (mi->fields[i].number < mi->ndense) mi->dense[mi->fields[i].number] = &mi->fields[i];
    return mi;
oom:
    free(mi->fields);
    free(mi);
    return NULL;
}

static tracec_i_field *make_ext(tracec_i_schema *s, tracec_i_msg *mi, const tracec_fielddef *def) {
    tracec_i_field *f = malloc(sizeof *f);
    if (!f) return NULL;
    if (!field_init(s, f, def, mi)) {
        free(f);
        return NULL;
    }
    if (s->n_ext_fields == s->cap_ext_fields) {
        size_t ncap = s->cap_ext_fields ? s->cap_ext_fields * 2 : 16;
        tracec_i_field **nf = realloc(s->ext_fields, ncap * sizeof *nf);
        if (!nf) {
            field_free_names(f);
            free(f);
            return NULL;
        }
        s->ext_fields = nf;
        s->cap_ext_fields = ncap;
    }
    s->ext_fields[s->n_ext_fields++] = f;
    return f;
}

tracec_i_field *tracec_i_msg_ext_lookup(tracec_i_schema *s, tracec_i_msg *mi, uint32_t number) {
    /* Regular fields beyond the dense range. */
    if (number >= mi->ndense && mi->nfields) {
        size_t lo = 0, hi = mi->nfields;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (mi->fields[mid].number == number) return &mi->fields[mid];
            if (mi->fields[mid].number < number)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    if (number == 0 || !tracec_msgdef_in_extension_range(mi->def, number)) return NULL;
    if (mi->ext_cap) {
        size_t mask = mi->ext_cap - 1;
        for (size_t i = (number * 2654435761u) & mask;; i = (i + 1) & mask) {
            if (mi->ext[i].number == number) return mi->ext[i].f;
            if (!mi->ext[i].number) break;
        }
    }
    const tracec_fielddef *def = tracec_pool_find_extension_by_number(s->pool, mi->def, number);
    tracec_i_field *f = def ? make_ext(s, mi, def) : NULL;
    /* Cache the answer (also a negative one). */
    if ((mi->ext_n + 1) * 2 > mi->ext_cap) {
        size_t ncap = mi->ext_cap ? mi->ext_cap * 2 : 16;
        tracec_i_ext_slot *ns = calloc(ncap, sizeof *ns);
        if (!ns) return f;
        for (size_t i = 0; i < mi->ext_cap; i++) {
            if (!mi->ext[i].number) continue;
            size_t j = (mi->ext[i].number * 2654435761u) & (ncap - 1);
            while (ns[j].number) j = (j + 1) & (ncap - 1);
            ns[j] = mi->ext[i];
        }
        free(mi->ext);
        mi->ext = ns;
        mi->ext_cap = ncap;
    }
    size_t mask = mi->ext_cap - 1;
    size_t i = (number * 2654435761u) & mask;
    while (mi->ext[i].number) i = (i + 1) & mask;
    mi->ext[i].number = number;
    mi->ext[i].f = f;
    mi->ext_n++;
    return f;
}
