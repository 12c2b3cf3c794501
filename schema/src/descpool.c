/*
 * descpool.c - the descriptor pool: FileDescriptorSets (decoded with the
 * protobuf-c bindings of descriptor.proto) turned into hash-indexed defs.
 *
 * Every def lives in the pool's arena and is freed with the pool.  Type
 * references are resolved eagerly at the end of each add: what cannot be
 * resolved yet stays on a pending list and is retried after every later add,
 * so lookups never write and may run on several threads once filling is over.
 */
#define _POSIX_C_SOURCE 200809L

#include "descpool_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "tracec/registry.h"

/* The built-in schema, embedded at build time (builtin_schema.c). */
extern const unsigned char tracec_i_builtin_schema[];
extern const size_t tracec_i_builtin_schema_size;

/* ---- Arena ---------------------------------------------------------------- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

typedef struct pending_set {
    struct pending_set *next;
    Google__Protobuf__FileDescriptorSet *set;
} kept_set;

struct tracec_pool {
    arena_block *arena;
    kept_set *sets;
    tracec_i_htab messages;   /* full name -> msgdef */
    tracec_i_htab enums;      /* full name -> enumdef */
    tracec_i_htab extensions; /* full name -> fielddef */
    /* Fields whose type, and extensions whose extendee, is not resolved yet. */
    tracec_fielddef **pending;
    size_t n_pending, cap_pending;
    /* All messages in the order they were added (iteration). */
    const tracec_msgdef **msg_list;
    size_t n_msgs, cap_msgs;
    /* Conflicting definitions found (tracec_pool_conflict), arena strings. */
    const char **conflicts;
    size_t n_conflicts, cap_conflicts;
    bool oom;
};

static void *arena_alloc(tracec_pool *p, size_t size) {
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    arena_block *b = p->arena;
    if (b == NULL || b->cap - b->used < size) {
        size_t cap = size > 64 * 1024 ? size : 64 * 1024;
        b = malloc(sizeof(arena_block) + cap);
        if (b == NULL) {
            p->oom = true;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = p->arena;
        p->arena = b;
    }
    void *r = (char *)b->data + b->used;
    b->used += size;
    memset(r, 0, size);
    return r;
}

static const char *arena_strcat(tracec_pool *p, const char *a, const char *b) {
    size_t la = a ? strlen(a) : 0, lb = strlen(b);
    char *s = arena_alloc(p, la + lb + 2);
    if (s == NULL) return NULL;
    if (la) {
        memcpy(s, a, la);
        s[la++] = '.';
    }
    memcpy(s + la, b, lb + 1);
    return s;
}

const char *tracec_field_type_name(tracec_field_type t) {
    switch (t) {
    case TRACEC_TYPE_DOUBLE: return "double";
    case TRACEC_TYPE_FLOAT: return "float";
    case TRACEC_TYPE_INT64: return "int64";
    case TRACEC_TYPE_UINT64: return "uint64";
    case TRACEC_TYPE_INT32: return "int32";
    case TRACEC_TYPE_FIXED64: return "fixed64";
    case TRACEC_TYPE_FIXED32: return "fixed32";
    case TRACEC_TYPE_BOOL: return "bool";
    case TRACEC_TYPE_STRING: return "string";
    case TRACEC_TYPE_GROUP: return "group";
    case TRACEC_TYPE_MESSAGE: return "message";
    case TRACEC_TYPE_BYTES: return "bytes";
    case TRACEC_TYPE_UINT32: return "uint32";
    case TRACEC_TYPE_ENUM: return "enum";
    case TRACEC_TYPE_SFIXED32: return "sfixed32";
    case TRACEC_TYPE_SFIXED64: return "sfixed64";
    case TRACEC_TYPE_SINT32: return "sint32";
    case TRACEC_TYPE_SINT64: return "sint64";
    }
    return "unknown";
}

/* ---- Hash table ------------------------------------------------------------ */

/* A word-at-a-time hash (names are hashed on the parser's hot path). */
uint32_t tracec_i_hash(const char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
        s += 8;
        len -= 8;
    }
    if (len) {
        /* The 1..7 tail bytes without a variable-length memcpy: two overlapping
         * loads (the length is mixed in above, so equal keys alone collide). */
        uint64_t w;
        if (len >= 4) {
            uint32_t a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + len - 4, 4);
            w = (uint64_t)a | (uint64_t)b << 32;
        } else {
            w = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
                (uint64_t)(unsigned char)s[len - 1] << 16;
        }
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
    }
    h *= 0xC4CEB9FE1A85EC53ull;
    return (uint32_t)(h ^ (h >> 32));
}

void *tracec_i_htab_get_h(const tracec_i_htab *t, const char *key, size_t len, uint32_t h) {
    if (t->cap == 0) return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const tracec_i_hent *e = &t->e[i];
        if (e->key == NULL) return NULL;
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) return e->val;
    }
}

void *tracec_i_htab_get(const tracec_i_htab *t, const char *key, size_t len) {
    return tracec_i_htab_get_h(t, key, len, tracec_i_hash(key, len));
}

static bool htab_grow(tracec_i_htab *t, size_t cap) {
    tracec_i_hent *e = calloc(cap, sizeof *e);
    if (e == NULL) return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->e[i].key == NULL) continue;
        size_t j = t->e[i].hash & (cap - 1);
        while (e[j].key) j = (j + 1) & (cap - 1);
        e[j] = t->e[i];
    }
    free(t->e);
    t->e = e;
    t->cap = cap;
    return true;
}

/* Inserts unless the key exists; returns false only when out of memory. */
static bool htab_put(tracec_i_htab *t, const char *key, void *val) {
    size_t len = strlen(key);
    if ((t->n + 1) * 4 > t->cap * 3 && !htab_grow(t, t->cap ? t->cap * 2 : 16)) return false;
    uint32_t h = tracec_i_hash(key, len);
    size_t mask = t->cap - 1;
    size_t i = h & mask;
    for (; t->e[i].key; i = (i + 1) & mask)
        if (t->e[i].hash == h && t->e[i].len == len && memcmp(t->e[i].key, key, len) == 0)
            return true;
    t->e[i] = (tracec_i_hent){key, (uint32_t)len, h, val};
    t->n++;
    return true;
}

/* ---- Errors --------------------------------------------------------------- */

static void set_err(tracec_error *err, const char *fmt, ...) {
    if (err == NULL) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* ---- Pool ----------------------------------------------------------------- */

tracec_pool *tracec_pool_new(void) { return calloc(1, sizeof(tracec_pool)); }

static void free_msg_tables(tracec_pool *p) {
    for (size_t i = 0; i < p->n_msgs; i++) {
        tracec_msgdef *m = (tracec_msgdef *)p->msg_list[i];
        free(m->by_name.e);
        free(m->ext);
    }
    for (size_t i = 0; i < p->enums.cap; i++) {
        if (p->enums.e[i].key == NULL) continue;
        tracec_enumdef *e = p->enums.e[i].val;
        free(e->by_name.e);
    }
}

void tracec_pool_free(tracec_pool *pool) {
    if (pool == NULL) return;
    free_msg_tables(pool);
    free(pool->messages.e);
    free(pool->enums.e);
    free(pool->extensions.e);
    free(pool->conflicts);
    free(pool->pending);
    free(pool->msg_list);
    for (kept_set *k = pool->sets, *n; k; k = n) {
        n = k->next;
        google__protobuf__file_descriptor_set__free_unpacked(k->set, NULL);
        free(k);
    }
    for (arena_block *b = pool->arena, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(pool);
}

/* Records a conflict (printf-style), once: the same text is not recorded twice. */
static void add_conflict(tracec_pool *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add_conflict(tracec_pool *p, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < p->n_conflicts; i++)
        if (strcmp(p->conflicts[i], msg) == 0) return;
    if (p->n_conflicts == p->cap_conflicts) {
        size_t cap = p->cap_conflicts ? p->cap_conflicts * 2 : 4;
        const char **n = realloc(p->conflicts, cap * sizeof *n);
        if (n == NULL) {
            p->oom = true;
            return;
        }
        p->conflicts = n;
        p->cap_conflicts = cap;
    }
    const char *s = arena_strcat(p, NULL, msg);
    if (s == NULL) return;
    p->conflicts[p->n_conflicts++] = s;
}

static bool push_pending(tracec_pool *p, tracec_fielddef *f) {
    if (p->n_pending == p->cap_pending) {
        size_t cap = p->cap_pending ? p->cap_pending * 2 : 64;
        tracec_fielddef **n = realloc(p->pending, cap * sizeof *n);
        if (n == NULL) return false;
        p->pending = n;
        p->cap_pending = cap;
    }
    p->pending[p->n_pending++] = f;
    return true;
}

static const char *strip_dot(const char *s) { return s && s[0] == '.' ? s + 1 : s; }

static bool is_scalar_numeric(tracec_field_type t) {
    return t != TRACEC_TYPE_STRING && t != TRACEC_TYPE_BYTES && t != TRACEC_TYPE_MESSAGE &&
           t != TRACEC_TYPE_GROUP && t != 0;
}

/* Fills `f` from a FieldDescriptorProto (message fields and extensions). */
static void fill_field(tracec_pool *p, tracec_fielddef *f, const Google__Protobuf__FieldDescriptorProto *fp,
                       const char *scope, bool proto3, const char *origin) {
    f->name = fp->name ? fp->name : "";
    f->full_name = arena_strcat(p, scope, f->name);
    f->number = fp->has_number ? (uint32_t)fp->number : 0;
    f->type = fp->has_type ? (tracec_field_type)fp->type : (tracec_field_type)0;
    f->repeated = fp->has_label && fp->label == GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED;
    f->required = fp->has_label && fp->label == GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REQUIRED;
    f->type_name = fp->type_name && fp->type_name[0] ? fp->type_name : NULL;
    f->proto3_optional = fp->has_proto3_optional && fp->proto3_optional;
    f->proto3 = proto3;
    f->oneof_index = (fp->has_oneof_index && !f->proto3_optional) ? fp->oneof_index : -1;
    f->origin = origin;
    f->scope = scope ? scope : "";
    if (f->repeated && is_scalar_numeric(f->type)) {
        if (fp->options && fp->options->has_packed)
            f->packed = fp->options->packed;
        else
            f->packed = proto3;
    }
}

static tracec_enumdef *build_enum(tracec_pool *p, const Google__Protobuf__EnumDescriptorProto *ep,
                                  const char *scope, bool proto3) {
    const char *full = arena_strcat(p, scope, ep->name ? ep->name : "");
    if (full == NULL) return NULL;
    if (tracec_i_htab_get(&p->enums, full, strlen(full))) return NULL; /* first wins */
    tracec_enumdef *e = arena_alloc(p, sizeof *e);
    if (e == NULL) return NULL;
    e->full_name = full;
    e->closed = !proto3;
    e->n_values = ep->n_value;
    e->value_names = arena_alloc(p, (ep->n_value + 1) * sizeof(char *));
    e->value_numbers = arena_alloc(p, (ep->n_value + 1) * sizeof(int32_t));
    if (e->value_names == NULL || e->value_numbers == NULL) return NULL;
    for (size_t i = 0; i < ep->n_value; i++) {
        const Google__Protobuf__EnumValueDescriptorProto *v = ep->value[i];
        e->value_names[i] = v->name ? v->name : "";
        e->value_numbers[i] = v->has_number ? v->number : 0;
        if (!htab_put(&e->by_name, e->value_names[i], (void *)(uintptr_t)(i + 1))) {
            p->oom = true;
            return NULL;
        }
    }
    if (!htab_put(&p->enums, full, e)) p->oom = true;
    return e;
}

static int cmp_field_number(const void *a, const void *b) {
    const tracec_fielddef *x = *(tracec_fielddef *const *)a, *y = *(tracec_fielddef *const *)b;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* "repeated int64 = 5000 extending perfetto.protos.TrackEvent": an extension's definition, for conflicts. */
static void describe_ext(char *buf, size_t cap, bool repeated, tracec_field_type type, const char *type_ref,
                         uint32_t number, const char *extendee) {
    snprintf(buf, cap, "%s%s = %u extending %s", repeated ? "repeated " : "",
             type_ref && type_ref[0] ? strip_dot(type_ref) : tracec_field_type_name(type), number,
             strip_dot(extendee));
}

/* A second definition of extension `f`'s full name: a conflict unless it is the same definition. */
static void check_same_extension(tracec_pool *p, const tracec_fielddef *f,
                                 const Google__Protobuf__FieldDescriptorProto *fp, const char *origin) {
    bool repeated = fp->has_label && fp->label == GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED;
    uint32_t number = fp->has_number ? (uint32_t)fp->number : 0;
    tracec_field_type type = fp->has_type ? (tracec_field_type)fp->type : (tracec_field_type)0;
    const char *type_ref = fp->type_name && fp->type_name[0] ? fp->type_name : NULL;
    const char *extendee = fp->extendee ? fp->extendee : "";
    bool same_ref = (type_ref == NULL) == (f->type_name == NULL) &&
                    (type_ref == NULL || strcmp(strip_dot(type_ref), strip_dot(f->type_name)) == 0);
    if (f->number == number && f->repeated == repeated && (type == 0 || f->type == type) && same_ref &&
        strcmp(strip_dot(f->extendee_name), strip_dot(extendee)) == 0)
        return;
    char a[400], b[400];
    describe_ext(a, sizeof a, f->repeated, f->type, f->type_name, f->number, f->extendee_name);
    describe_ext(b, sizeof b, repeated, type, type_ref, number, extendee);
    add_conflict(p, "extension %s is defined twice, differently: %s (from %s) and %s (from %s); the first is used",
                 f->full_name, a, f->origin, b, origin);
}

static void add_extension(tracec_pool *p, const Google__Protobuf__FieldDescriptorProto *fp,
                          const char *scope, bool proto3, const char *origin) {
    const char *full = arena_strcat(p, scope, fp->name ? fp->name : "");
    if (full == NULL) return;
    const tracec_fielddef *seen = tracec_i_htab_get(&p->extensions, full, strlen(full));
    if (seen) {
        check_same_extension(p, seen, fp, origin);
        return;
    }
    tracec_fielddef *f = arena_alloc(p, sizeof *f);
    if (f == NULL) return;
    fill_field(p, f, fp, scope, proto3, origin);
    f->is_extension = true;
    f->extendee_name = fp->extendee ? fp->extendee : "";
    if (!htab_put(&p->extensions, f->full_name, f) || !push_pending(p, f)) p->oom = true;
}

static void add_message(tracec_pool *p, const Google__Protobuf__DescriptorProto *mp, const char *scope,
                        const char *file, bool proto3, const char *origin) {
    const char *full = arena_strcat(p, scope, mp->name ? mp->name : "");
    if (full == NULL) return;
    /* Nested definitions and extensions are considered even if this name is taken. */
    for (size_t i = 0; i < mp->n_nested_type; i++)
        add_message(p, mp->nested_type[i], full, file, proto3, origin);
    for (size_t i = 0; i < mp->n_enum_type; i++) build_enum(p, mp->enum_type[i], full, proto3);
    for (size_t i = 0; i < mp->n_extension; i++)
        add_extension(p, mp->extension[i], full, proto3, origin);
    if (tracec_i_htab_get(&p->messages, full, strlen(full))) return; /* first wins */

    tracec_msgdef *m = arena_alloc(p, sizeof *m);
    if (m == NULL) return;
    m->full_name = full;
    m->name = mp->name ? mp->name : "";
    m->file = file;
    m->proto3 = proto3;
    m->map_entry = mp->options && mp->options->has_map_entry && mp->options->map_entry;
    m->n_fields = mp->n_field;
    m->fields = arena_alloc(p, (mp->n_field + 1) * sizeof *m->fields);
    m->by_number = arena_alloc(p, (mp->n_field + 1) * sizeof *m->by_number);
    if (m->fields == NULL || m->by_number == NULL) return;

    /* A oneof is synthetic when only proto3_optional fields refer to it. */
    bool *real = arena_alloc(p, (mp->n_oneof_decl + 1) * sizeof(bool));
    if (real == NULL) return;
    for (size_t i = 0; i < mp->n_field; i++) {
        const Google__Protobuf__FieldDescriptorProto *fp = mp->field[i];
        if (fp->has_oneof_index && !(fp->has_proto3_optional && fp->proto3_optional) &&
            fp->oneof_index >= 0 && (size_t)fp->oneof_index < mp->n_oneof_decl)
            real[fp->oneof_index] = true;
    }
    m->oneof_names = arena_alloc(p, (mp->n_oneof_decl + 1) * sizeof(char *));
    if (m->oneof_names == NULL) return;
    for (size_t i = 0; i < mp->n_oneof_decl; i++)
        if (real[i])
            m->oneof_names[m->n_oneofs++] =
                mp->oneof_decl[i]->name ? mp->oneof_decl[i]->name : "";

    for (size_t i = 0; i < mp->n_field; i++) {
        tracec_fielddef *f = &m->fields[i];
        fill_field(p, f, mp->field[i], full, proto3, origin);
        if (f->oneof_index >= (int)m->n_oneofs) f->oneof_index = -1;
        f->index = (uint32_t)i;
        f->containing = m;
        if (f->required) m->has_required = true;
        m->by_number[i] = f;
        if (!htab_put(&m->by_name, f->name, f)) p->oom = true;
        if (f->type_name && !push_pending(p, f)) p->oom = true;
    }
    qsort(m->by_number, m->n_fields, sizeof *m->by_number, cmp_field_number);
    m->ranges = arena_alloc(p, (mp->n_extension_range + 1) * sizeof *m->ranges);
    if (m->ranges == NULL) return;
    for (size_t i = 0; i < mp->n_extension_range; i++) {
        const Google__Protobuf__DescriptorProto__ExtensionRange *r = mp->extension_range[i];
        m->ranges[m->n_ranges++] = (tracec_i_range){(uint32_t)r->start, (uint32_t)r->end};
    }
    m->n_reserved_names = mp->n_reserved_name;
    m->reserved_names = (const char **)mp->reserved_name;

    if (p->n_msgs == p->cap_msgs) {
        size_t cap = p->cap_msgs ? p->cap_msgs * 2 : 64;
        const tracec_msgdef **n = realloc(p->msg_list, cap * sizeof *n);
        if (n == NULL) {
            p->oom = true;
            return;
        }
        p->msg_list = n;
        p->cap_msgs = cap;
    }
    p->msg_list[p->n_msgs++] = m;
    if (!htab_put(&p->messages, full, m)) p->oom = true;
}

/* Groups are also found by their type name (the spec's spelling). */
static void index_group_names(tracec_pool *p) {
    for (size_t i = 0; i < p->n_msgs; i++) {
        tracec_msgdef *m = (tracec_msgdef *)p->msg_list[i];
        for (size_t j = 0; j < m->n_fields; j++) {
            tracec_fielddef *f = &m->fields[j];
            if (f->type == TRACEC_TYPE_GROUP && f->msg &&
                !tracec_i_htab_get(&m->by_name, f->msg->name, strlen(f->msg->name)))
                if (!htab_put(&m->by_name, f->msg->name, f)) p->oom = true;
        }
    }
}

static bool attach_extension(tracec_pool *p, tracec_fielddef *f, tracec_msgdef *ext) {
    /* First definition of a number wins; another one is a conflict. */
    for (size_t i = 0; i < ext->n_ext; i++) {
        const tracec_fielddef *e = ext->ext[i];
        if (e->number != f->number) continue;
        char a[400], b[400];
        describe_ext(a, sizeof a, e->repeated, e->type, e->type_name, e->number, ext->full_name);
        describe_ext(b, sizeof b, f->repeated, f->type, f->type_name, f->number, ext->full_name);
        add_conflict(p, "extensions %s (%s, from %s) and %s (%s, from %s) have the same number; %s is used",
                     e->full_name, a, e->origin, f->full_name, b, f->origin, e->full_name);
        return true;
    }
    if (ext->n_ext == ext->cap_ext) {
        size_t cap = ext->cap_ext ? ext->cap_ext * 2 : 8;
        const tracec_fielddef **n = realloc(ext->ext, cap * sizeof *n);
        if (n == NULL) {
            p->oom = true;
            return false;
        }
        ext->ext = n;
        ext->cap_ext = cap;
    }
    size_t i = ext->n_ext++;
    while (i > 0 && ext->ext[i - 1]->number > f->number) {
        ext->ext[i] = ext->ext[i - 1];
        i--;
    }
    ext->ext[i] = f;
    return true;
}

/* Tries to resolve `f`; true when nothing is left to resolve. */
static bool resolve_field(tracec_pool *p, tracec_fielddef *f) {
    if (f->type_name && f->msg == NULL && f->enm == NULL) {
        const char *n = strip_dot(f->type_name);
        size_t len = strlen(n);
        const tracec_msgdef *m = tracec_i_htab_get(&p->messages, n, len);
        const tracec_enumdef *e = m ? NULL : tracec_i_htab_get(&p->enums, n, len);
        if (m && (f->type == 0 || f->type == TRACEC_TYPE_MESSAGE || f->type == TRACEC_TYPE_GROUP)) {
            f->msg = m;
            if (f->type == 0) f->type = TRACEC_TYPE_MESSAGE;
        } else if (e && (f->type == 0 || f->type == TRACEC_TYPE_ENUM)) {
            f->enm = e;
            if (f->type == 0) {
                f->type = TRACEC_TYPE_ENUM;
                if (f->repeated) f->packed = f->containing ? f->containing->proto3 : false;
            }
        }
    }
    if (f->is_extension && f->containing == NULL) {
        tracec_msgdef *m = tracec_i_htab_get(&p->messages, strip_dot(f->extendee_name),
                                             strlen(strip_dot(f->extendee_name)));
        if (m && attach_extension(p, f, m)) f->containing = m;
    }
    bool type_ok = f->type_name == NULL || f->msg || f->enm;
    return type_ok && (!f->is_extension || f->containing);
}

static void resolve_pending(tracec_pool *p) {
    size_t w = 0;
    for (size_t i = 0; i < p->n_pending; i++)
        if (!resolve_field(p, p->pending[i])) p->pending[w++] = p->pending[i];
    p->n_pending = w;
}

static void add_file(tracec_pool *p, const Google__Protobuf__FileDescriptorProto *fd, const char *origin) {
    bool proto3 = fd->syntax && strcmp(fd->syntax, "proto3") == 0;
    const char *pkg = fd->package && fd->package[0] ? fd->package : NULL;
    const char *file = fd->name ? fd->name : origin;
    for (size_t i = 0; i < fd->n_enum_type; i++) build_enum(p, fd->enum_type[i], pkg, proto3);
    for (size_t i = 0; i < fd->n_message_type; i++)
        add_message(p, fd->message_type[i], pkg, file, proto3, origin);
    for (size_t i = 0; i < fd->n_extension; i++)
        add_extension(p, fd->extension[i], pkg, proto3, origin);
}

tracec_status_t tracec_pool_add_set(tracec_pool *pool, const void *data, size_t size,
                                    const char *origin, tracec_error *err) {
    if (pool == NULL || (data == NULL && size > 0)) {
        set_err(err, "tracec_pool_add_set: NULL argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (origin == NULL) origin = "<descriptor set>";
    Google__Protobuf__FileDescriptorSet *set =
        google__protobuf__file_descriptor_set__unpack(NULL, size, data);
    if (set == NULL) {
        set_err(err, "%s: not a serialized google.protobuf.FileDescriptorSet", origin);
        return TRACEC_STATUS_CORRUPT_DATA;
    }
    kept_set *k = malloc(sizeof *k);
    char *origin_copy = arena_alloc(pool, strlen(origin) + 1);
    if (k == NULL || origin_copy == NULL) {
        free(k);
        google__protobuf__file_descriptor_set__free_unpacked(set, NULL);
        set_err(err, "out of memory");
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    strcpy(origin_copy, origin);
    k->set = set;
    k->next = pool->sets;
    pool->sets = k;
    for (size_t i = 0; i < set->n_file; i++) add_file(pool, set->file[i], origin_copy);
    resolve_pending(pool);
    index_group_names(pool);
    if (pool->oom) {
        set_err(err, "out of memory");
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    return TRACEC_STATUS_SUCCESS;
}

static tracec_status_t read_file(const char *path, uint8_t **data, size_t *size, tracec_error *err) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_err(err, "%s: %s", path, strerror(errno));
        return TRACEC_STATUS_IO_ERROR;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    bool bad = buf == NULL || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        set_err(err, "%s: read failed", path);
        return buf ? TRACEC_STATUS_IO_ERROR : TRACEC_STATUS_OUT_OF_MEMORY;
    }
    *data = buf;
    *size = n;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_pool_add_set_file(tracec_pool *pool, const char *path, tracec_error *err) {
    if (pool == NULL || path == NULL) {
        set_err(err, "tracec_pool_add_set_file: NULL argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    uint8_t *data;
    size_t size;
    tracec_status_t st = read_file(path, &data, &size, err);
    if (st != TRACEC_STATUS_SUCCESS) return st;
    st = tracec_pool_add_set(pool, data, size, path, err);
    free(data);
    return st;
}

tracec_status_t tracec_pool_add_registry(tracec_pool *pool, tracec_error *err) {
    if (pool == NULL) {
        set_err(err, "tracec_pool_add_registry: NULL pool");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    for (const tracec_file_descriptor *d = tracec_registry_first(); d; d = tracec_registry_next(d)) {
        tracec_status_t st = tracec_pool_add_set(pool, d->set, d->set_size,
                                                 d->file_name ? d->file_name : "<registry>", err);
        if (st != TRACEC_STATUS_SUCCESS) return st;
    }
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_pool_add_builtin_schema(tracec_pool *pool, tracec_error *err) {
    return tracec_pool_add_set(pool, tracec_i_builtin_schema, tracec_i_builtin_schema_size,
                               "<built-in schema>", err);
}

tracec_status_t tracec_pool_check(const tracec_pool *pool, tracec_error *err) {
    if (pool == NULL) {
        set_err(err, "tracec_pool_check: NULL pool");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (pool->oom) {
        set_err(err, "out of memory while building the pool");
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    if (pool->n_pending == 0) return TRACEC_STATUS_SUCCESS;
    const tracec_fielddef *f = pool->pending[0];
    if (f->is_extension && f->containing == NULL)
        set_err(err, "%s: extension %s extends unknown message %s", f->origin, f->full_name,
                strip_dot(f->extendee_name));
    else
        set_err(err, "%s: field %s refers to unknown type %s", f->origin, f->full_name,
                strip_dot(f->type_name));
    return TRACEC_STATUS_CORRUPT_DATA;
}

/* ---- Lookups -------------------------------------------------------------- */

const tracec_msgdef *tracec_i_find_message_n(const tracec_pool *pool, const char *name, size_t len) {
    if (pool == NULL || name == NULL) return NULL;
    return tracec_i_htab_get(&pool->messages, name, len);
}

const tracec_fielddef *tracec_i_find_extension_n(const tracec_pool *pool, const char *name,
                                                 size_t len) {
    if (pool == NULL || name == NULL) return NULL;
    const tracec_fielddef *f = tracec_i_htab_get(&pool->extensions, name, len);
    return f && f->containing ? f : NULL;
}

const tracec_msgdef *tracec_pool_find_message(const tracec_pool *pool, const char *full_name) {
    if (full_name == NULL) return NULL;
    full_name = strip_dot(full_name);
    return tracec_i_find_message_n(pool, full_name, strlen(full_name));
}

const tracec_enumdef *tracec_pool_find_enum(const tracec_pool *pool, const char *full_name) {
    if (pool == NULL || full_name == NULL) return NULL;
    full_name = strip_dot(full_name);
    return tracec_i_htab_get(&pool->enums, full_name, strlen(full_name));
}

const tracec_fielddef *tracec_pool_find_extension(const tracec_pool *pool, const char *full_name) {
    if (full_name == NULL) return NULL;
    full_name = strip_dot(full_name);
    return tracec_i_find_extension_n(pool, full_name, strlen(full_name));
}

const tracec_fielddef *tracec_pool_find_extension_by_number(const tracec_pool *pool,
                                                            const tracec_msgdef *extendee,
                                                            uint32_t number) {
    (void)pool;
    if (extendee == NULL) return NULL;
    size_t lo = 0, hi = extendee->n_ext;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t n = extendee->ext[mid]->number;
        if (n == number) return extendee->ext[mid];
        if (n < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t tracec_pool_extension_count(const tracec_pool *pool, const tracec_msgdef *extendee) {
    (void)pool;
    return extendee ? extendee->n_ext : 0;
}

const tracec_fielddef *tracec_pool_extension_at(const tracec_pool *pool,
                                                const tracec_msgdef *extendee, size_t i) {
    (void)pool;
    return extendee && i < extendee->n_ext ? extendee->ext[i] : NULL;
}

size_t tracec_pool_conflict_count(const tracec_pool *pool) { return pool ? pool->n_conflicts : 0; }

const char *tracec_pool_conflict(const tracec_pool *pool, size_t i) {
    return pool && i < pool->n_conflicts ? pool->conflicts[i] : NULL;
}

size_t tracec_pool_message_count(const tracec_pool *pool) { return pool ? pool->n_msgs : 0; }

const tracec_msgdef *tracec_pool_message_at(const tracec_pool *pool, size_t i) {
    return pool && i < pool->n_msgs ? pool->msg_list[i] : NULL;
}

/* ---- Messages ------------------------------------------------------------- */

const char *tracec_msgdef_full_name(const tracec_msgdef *m) { return m ? m->full_name : NULL; }
const char *tracec_msgdef_name(const tracec_msgdef *m) { return m ? m->name : NULL; }
const char *tracec_msgdef_file(const tracec_msgdef *m) { return m ? m->file : NULL; }
bool tracec_msgdef_is_proto3(const tracec_msgdef *m) { return m && m->proto3; }
bool tracec_msgdef_is_map_entry(const tracec_msgdef *m) { return m && m->map_entry; }
size_t tracec_msgdef_field_count(const tracec_msgdef *m) { return m ? m->n_fields : 0; }

const tracec_fielddef *tracec_msgdef_field(const tracec_msgdef *m, size_t i) {
    return m && i < m->n_fields ? &m->fields[i] : NULL;
}

const tracec_fielddef *tracec_i_field_by_name_n(const tracec_msgdef *m, const char *name, size_t len) {
    return tracec_i_htab_get(&m->by_name, name, len);
}

const tracec_fielddef *tracec_msgdef_field_by_name(const tracec_msgdef *m, const char *name) {
    if (m == NULL || name == NULL) return NULL;
    const tracec_fielddef *f = tracec_i_field_by_name_n(m, name, strlen(name));
    /* The type-name alias of a group is for the text format only. */
    return f && strcmp(f->name, name) == 0 ? f : NULL;
}

const tracec_fielddef *tracec_msgdef_field_by_number(const tracec_msgdef *m, uint32_t number) {
    if (m == NULL) return NULL;
    size_t lo = 0, hi = m->n_fields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t n = m->by_number[mid]->number;
        if (n == number) return m->by_number[mid];
        if (n < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool tracec_msgdef_in_extension_range(const tracec_msgdef *m, uint32_t number) {
    if (m == NULL) return false;
    for (size_t i = 0; i < m->n_ranges; i++)
        if (number >= m->ranges[i].start && number < m->ranges[i].end) return true;
    return false;
}

size_t tracec_msgdef_oneof_count(const tracec_msgdef *m) { return m ? m->n_oneofs : 0; }

const char *tracec_msgdef_oneof_name(const tracec_msgdef *m, size_t i) {
    return m && i < m->n_oneofs ? m->oneof_names[i] : NULL;
}

bool tracec_i_is_reserved_name(const tracec_msgdef *m, const char *name, size_t len) {
    for (size_t i = 0; i < m->n_reserved_names; i++)
        if (strlen(m->reserved_names[i]) == len && memcmp(m->reserved_names[i], name, len) == 0)
            return true;
    return false;
}

/* ---- Fields --------------------------------------------------------------- */

const char *tracec_fielddef_name(const tracec_fielddef *f) { return f ? f->name : NULL; }
const char *tracec_fielddef_full_name(const tracec_fielddef *f) { return f ? f->full_name : NULL; }
uint32_t tracec_fielddef_number(const tracec_fielddef *f) { return f ? f->number : 0; }
tracec_field_type tracec_fielddef_type(const tracec_fielddef *f) {
    return f ? f->type : (tracec_field_type)0;
}
bool tracec_fielddef_is_repeated(const tracec_fielddef *f) { return f && f->repeated; }
bool tracec_fielddef_is_packed(const tracec_fielddef *f) { return f && f->packed; }
bool tracec_fielddef_is_extension(const tracec_fielddef *f) { return f && f->is_extension; }
int tracec_fielddef_oneof_index(const tracec_fielddef *f) { return f ? f->oneof_index : -1; }
const tracec_msgdef *tracec_fielddef_containing(const tracec_fielddef *f) {
    return f ? f->containing : NULL;
}
const tracec_msgdef *tracec_fielddef_message(const tracec_fielddef *f) { return f ? f->msg : NULL; }
const tracec_enumdef *tracec_fielddef_enum(const tracec_fielddef *f) { return f ? f->enm : NULL; }
const char *tracec_fielddef_scope(const tracec_fielddef *f) { return f ? f->scope : NULL; }

bool tracec_fielddef_has_presence(const tracec_fielddef *f) {
    if (f == NULL || f->repeated) return false;
    if (!f->proto3 || f->is_extension || f->proto3_optional || f->oneof_index >= 0) return true;
    return f->type == TRACEC_TYPE_MESSAGE || f->type == TRACEC_TYPE_GROUP;
}

/* ---- Enums ---------------------------------------------------------------- */

const char *tracec_enumdef_full_name(const tracec_enumdef *e) { return e ? e->full_name : NULL; }
bool tracec_enumdef_is_closed(const tracec_enumdef *e) { return e && e->closed; }
size_t tracec_enumdef_value_count(const tracec_enumdef *e) { return e ? e->n_values : 0; }
const char *tracec_enumdef_value_name(const tracec_enumdef *e, size_t i) {
    return e && i < e->n_values ? e->value_names[i] : NULL;
}
int32_t tracec_enumdef_value_number(const tracec_enumdef *e, size_t i) {
    return e && i < e->n_values ? e->value_numbers[i] : 0;
}

const char *tracec_enumdef_name_of(const tracec_enumdef *e, int32_t number) {
    if (e == NULL) return NULL;
    for (size_t i = 0; i < e->n_values; i++)
        if (e->value_numbers[i] == number) return e->value_names[i];
    return NULL;
}

bool tracec_i_enum_has_number(const tracec_enumdef *e, int32_t number) {
    return tracec_enumdef_name_of(e, number) != NULL;
}

bool tracec_i_enum_number_of_n(const tracec_enumdef *e, const char *name, size_t len,
                               int32_t *number) {
    uintptr_t i = (uintptr_t)tracec_i_htab_get(&e->by_name, name, len);
    if (i == 0) return false;
    if (number) *number = e->value_numbers[i - 1];
    return true;
}

bool tracec_enumdef_number_of(const tracec_enumdef *e, const char *name, int32_t *number) {
    if (e == NULL || name == NULL) return false;
    return tracec_i_enum_number_of_n(e, name, strlen(name), number);
}
