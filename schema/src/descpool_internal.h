/*
 * descpool_internal.h - the layout of the descriptor pool's defs, shared by
 * descpool.c and the textproto encoder (which reads fields on its hot path
 * without going through accessor calls).  Not installed.  The one internal
 * header of schema/ that another module reads: grammar/ has schema/src on
 * its private include path for it (grammar/CMakeLists.txt).
 */
#ifndef TRACEC_DESCPOOL_INTERNAL_H
#define TRACEC_DESCPOOL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/descpool.h"

/* A string-keyed open-addressing hash table (keys are not owned). */
typedef struct tracec_i_hent {
    const char *key;
    uint32_t len;
    uint32_t hash;
    void *val;
} tracec_i_hent;

typedef struct tracec_i_htab {
    tracec_i_hent *e;
    size_t cap; /* power of two, or 0 */
    size_t n;
} tracec_i_htab;

uint32_t tracec_i_hash(const char *s, size_t len);
void *tracec_i_htab_get(const tracec_i_htab *t, const char *key, size_t len);
void *tracec_i_htab_get_h(const tracec_i_htab *t, const char *key, size_t len, uint32_t h);

struct tracec_fielddef {
    const char *name;
    const char *full_name;
    const char *type_name;      /* reference as written in the descriptor, or NULL */
    const char *extendee_name;  /* extensions: reference to the extendee */
    const char *scope;          /* extensions: declaring scope */
    const char *origin;         /* where the def came from (error messages) */
    uint32_t number;
    tracec_field_type type;
    bool repeated;
    bool packed;
    bool is_extension;
    bool proto3_optional;
    bool proto3;                /* declared in a proto3 file */
    bool required;
    int oneof_index;            /* -1 if none (synthetic oneofs excluded) */
    uint32_t index;             /* position in its message's field list */
    tracec_msgdef *containing;  /* message / extendee (NULL while unresolved) */
    const tracec_msgdef *msg;   /* resolved message/group type */
    const tracec_enumdef *enm;  /* resolved enum type */
};

typedef struct tracec_i_range {
    uint32_t start, end; /* [start, end) */
} tracec_i_range;

struct tracec_msgdef {
    const char *full_name;
    const char *name;
    const char *file;
    bool proto3;
    bool map_entry;
    bool has_required;
    size_t n_fields;
    tracec_fielddef *fields;        /* declaration order */
    tracec_fielddef **by_number;    /* sorted by number */
    tracec_i_htab by_name;          /* name -> fielddef (groups also by type name) */
    size_t n_oneofs;
    const char **oneof_names;
    size_t n_ranges;
    tracec_i_range *ranges;
    size_t n_reserved_names;
    const char **reserved_names;
    /* Extensions of this message, sorted by number. */
    size_t n_ext, cap_ext;
    const tracec_fielddef **ext;
};

struct tracec_enumdef {
    const char *full_name;
    bool closed;
    size_t n_values;
    const char **value_names;
    int32_t *value_numbers;
    tracec_i_htab by_name; /* name -> (value index + 1) */
};

/* A field of `m` by name given as (ptr, len); also finds a group by its type name. */
const tracec_fielddef *tracec_i_field_by_name_n(const tracec_msgdef *m, const char *name,
                                                size_t len);
/* Whether `name` (ptr, len) is a reserved field name of `m`. */
bool tracec_i_is_reserved_name(const tracec_msgdef *m, const char *name, size_t len);
const tracec_msgdef *tracec_i_find_message_n(const tracec_pool *pool, const char *name, size_t len);
const tracec_fielddef *tracec_i_find_extension_n(const tracec_pool *pool, const char *name,
                                                 size_t len);
/* Enum value by name (ptr, len). */
bool tracec_i_enum_number_of_n(const tracec_enumdef *e, const char *name, size_t len,
                               int32_t *number);
bool tracec_i_enum_has_number(const tracec_enumdef *e, int32_t number);

#endif /* TRACEC_DESCPOOL_INTERNAL_H */
