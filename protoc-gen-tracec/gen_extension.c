/*
 * gen_extension.c - extensions.
 *
 * Three shapes, decided by where the `extend` block stands:
 *
 * 1. A wrapper: a message that holds only `extend X { ... }` blocks (one
 *    extendee, no fields of its own; nested types are fine).  It becomes a
 *    subclass writer named after the wrapper:
 *
 *        typedef struct my_app_MyEvent { perfetto_protos_TrackEvent base; } my_app_MyEvent;
 *
 *    with every setter of X (on the wrapper type) plus the extension's
 *    setters, and typed functions that open it wherever an X is opened:
 *
 *        perfetto_protos_TracePacket_begin_track_event_as_my_app_MyEvent(&packet, &event);
 *
 *    `&event.base` is an X writer, for code that takes the base type.
 *
 * 2. File-scope extensions (`extend X { ... }` outside any message): setters
 *    on X's writer, the extension name prefixed by the file's package:
 *        perfetto_protos_TrackEvent_set_my_pkg_my_field(&track_event, ...)
 *
 * 3. Extensions declared in a message that also has fields or extension
 *    ranges, or that extends several messages: like 2, prefixed by the
 *    declaring message's C name:
 *        X_set_my_pkg_Holder_my_field(&x, ...)
 *
 * Wrapper setters whose names are taken (an extension called `name` on a
 * TrackEvent wrapper) get '_' appended, like every other field (names.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

/*
 * Where Perfetto's schema opens the messages applications extend, for files
 * that do not import the parent (a user's proto that imports only
 * track_event.proto still gets TracePacket_begin_track_event_as_...).  The
 * parent's header is found by tc_perfetto_parent (schema.c): the request's
 * file that defines it, or the path beside the extendee's in the user's
 * Perfetto tree.
 */
typedef struct builtin_parent {
    const char *extendee;
    const char *parent;
    const char *field;
    int number;
} builtin_parent;

static const builtin_parent k_builtin_parents[] = {
    {"perfetto.protos.TrackEvent", "perfetto.protos.TracePacket", "track_event", 11},
    {"perfetto.protos.InternedData", "perfetto.protos.TracePacket", "interned_data", 12},
    {"perfetto.protos.TracePacket", "perfetto.protos.Trace", "packet", 1},
    {"perfetto.protos.DebugAnnotation", "perfetto.protos.TrackEvent", "debug_annotations", 4},
};

static const char *extendee_of(const tc_field_proto *f) {
    return f->extendee[0] == '.' ? f->extendee + 1 : f->extendee;
}

bool tc_check_wrappers(tc_ctx *ctx, const tc_file_proto *file) {
    /* Every extendee must be known; everything else has a defined shape. */
    for (size_t i = 0; i < file->n_extension; i++)
        if (!tc_index_find(ctx, file->extension[i]->extendee))
            tc_error(ctx, file->name, "extendee %s of extension %s not found", file->extension[i]->extendee,
                     file->extension[i]->name);
    return ctx->error == NULL;
}

/* ---- where a wrapper can be opened -------------------------------------- */

/* One place a wrapper's extendee is opened: message field `field` of `parent`. */
typedef struct open_site {
    const char *parent_full; /* for sorting */
    char *parent_c;
    char *field;
    int number;
    char *header; /* a header to include (parents outside the file's imports), or NULL */
} open_site;

typedef struct open_sites {
    open_site *v;
    size_t n, cap;
} open_sites;

static void add_site(open_sites *s, const char *parent_full, const char *parent_c, const char *field,
                     int number, char *header) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        open_site *nv = realloc(s->v, s->cap * sizeof *nv);
        if (nv == NULL) exit(1);
        s->v = nv;
    }
    s->v[s->n++] = (open_site){parent_full, tc_strdup(parent_c), tc_strdup(field), number, header};
}

static int cmp_site(const void *a, const void *b) {
    const open_site *x = a, *y = b;
    int c = strcmp(x->parent_full, y->parent_full);
    return c ? c : (x->number > y->number) - (x->number < y->number);
}

static void free_sites(open_sites *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].parent_c);
        free(s->v[i].field);
        free(s->v[i].header);
    }
    free(s->v);
}

/* The fields of type `x` in parent `pt`, opened with `header` included (copied; may be NULL). */
static void add_fields_of(open_sites *out, const tc_ctx *ctx, const tc_type *pt, const tc_type *x,
                          const char *header) {
    for (size_t i = 0; i < pt->msg->n_field; i++) {
        const tc_field_proto *f = pt->msg->field[i];
        if (f->type != GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_MESSAGE) continue;
        if (tc_index_find(ctx, f->type_name) != x) continue;
        add_site(out, pt->full_name, pt->c_name, pt->field_ident ? pt->field_ident[i] : f->name, f->number,
                 header ? tc_strdup(header) : NULL);
    }
}

/*
 * Every message field of type X that the wrapper's file can see (its own
 * file and its imports, transitively), then the Perfetto parents of
 * k_builtin_parents it cannot see, found by tc_perfetto_parent: the request's
 * definition (its fields of type X) or the header beside the user's Perfetto
 * tree (the table's field).  Sorted by parent full name, then field number.
 */
static void collect_sites(tc_ctx *ctx, const tc_type *w, open_sites *out) {
    const tc_type *x = w->extendee;
    bool *seen = tc_imports_of(ctx, w->file);
    for (size_t s = 0; s < ctx->index.cap; s++) {
        const tc_type *pt = ctx->index.slots[s];
        if (pt == NULL || pt->kind != TC_MESSAGE || pt->is_wrapper || !tc_file_in(ctx, seen, pt->file))
            continue;
        add_fields_of(out, ctx, pt, x, NULL);
    }
    for (size_t i = 0; i < sizeof k_builtin_parents / sizeof k_builtin_parents[0]; i++) {
        const builtin_parent *b = &k_builtin_parents[i];
        if (strcmp(b->extendee, x->full_name) != 0) continue;
        const tc_type *pt = tc_index_find(ctx, b->parent);
        if (pt && tc_file_in(ctx, seen, pt->file)) continue; /* found above */
        char *header = NULL;
        if (!tc_perfetto_parent(ctx, w->file, b->parent, &header)) continue;
        if (pt && pt->kind == TC_MESSAGE) {
            add_fields_of(out, ctx, pt, x, header);
            free(header);
        } else {
            char *pc = tc_c_name(b->parent);
            add_site(out, b->parent, pc, b->field, b->number, header);
            free(pc);
        }
    }
    free(seen);
    if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, cmp_site);
}

static void collect_includes(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)p;
    if (!t->is_wrapper || t->extendee == NULL) return;
    open_sites s = {0};
    collect_sites(ctx, t, &s);
    for (size_t i = 0; i < s.n; i++)
        if (s.v[i].header) tc_include_add(ctx, s.v[i].header);
    free_sites(&s);
}

void tc_gen_wrapper_includes(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    tc_for_each_message(ctx, p, file, collect_includes);
}

/* ---- wrappers ----------------------------------------------------------- */

void tc_gen_wrapper_struct(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)ctx;
    if (!t->is_wrapper || t->extendee == NULL) return;
    tc_emit(p,
            "\n/*\n"
            " * Writer of $extendee$ with the extensions of $full$: every setter of\n"
            " * $extendee_type$ plus the extension setters.  `base` is the plain $extendee_type$ writer.\n"
            " */\n"
            "typedef struct $wrapper$ {\n"
            "    $extendee_type$ base;\n"
            "} $wrapper$;\n",
            "extendee", t->extendee->full_name, "extendee_type", t->extendee->c_name, "full", t->full_name,
            "wrapper", t->c_name, NULL);
}

static void gen_open_as(tc_printer *p, const open_site *s, const tc_type *w) {
    char num[16];
    snprintf(num, sizeof num, "%d", s->number);
    tc_emit(p,
            "\n/* Opens $parent$.$field$ as a $wrapper$. */\n"
            "static inline void $parent$_begin_$field$_as_$wrapper$($parent$ *m, $wrapper$ *child) {\n"
            "    tracec_msg_begin_nested(&m->msg, TRACEC_TAG($num$, TRACEC_WIRE_LEN), &child->base.msg);\n"
            "}\n"
            "static inline void $parent$_end_$field$_as_$wrapper$($parent$ *m, $wrapper$ *child) {\n"
            "    tracec_msg_end_nested(&m->msg, &child->base.msg);\n"
            "}\n",
            "parent", s->parent_c, "field", s->field, "wrapper", w->c_name, "num", num, NULL);
}

void tc_gen_wrapper_functions(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    if (!t->is_wrapper) return;
    const tc_type *x = t->extendee;
    if (x == NULL || x->kind != TC_MESSAGE) {
        tc_error(ctx, t->file->name, "wrapper %s: extendee %s not found", t->full_name,
                 t->msg->extension[0]->extendee);
        return;
    }
    tc_emit(p, "\n/* ---- $wrapper$: $extendee$ setters ---- */\n", "wrapper", t->full_name, "extendee", x->full_name, NULL);
    for (size_t i = 0; i < x->msg->n_field && ctx->error == NULL; i++)
        tc_gen_field(ctx, p, x->file, t->c_name, "&m->base.msg", x->msg->field[i], t->base_ident[i], false, NULL);
    tc_emit(p, "\n/* ---- $wrapper$: extensions ---- */\n", "wrapper", t->full_name, NULL);
    for (size_t i = 0; i < t->msg->n_extension && ctx->error == NULL; i++)
        tc_gen_field(ctx, p, t->file, t->c_name, "&m->base.msg", t->msg->extension[i], t->ext_ident[i], true, NULL);

    /* Typed open functions wherever the extendee is a field type. */
    open_sites s = {0};
    collect_sites(ctx, t, &s);
    for (size_t i = 0; i < s.n; i++) gen_open_as(p, &s.v[i], t);
    free_sites(&s);
}

/* ---- extensions outside wrappers ---------------------------------------- */

static void gen_scoped(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const tc_field_proto *f) {
    const tc_type *x = tc_index_find(ctx, extendee_of(f));
    if (x == NULL) {
        tc_error(ctx, file->name, "extendee %s of extension %s not found", f->extendee, f->name);
        return;
    }
    char *msg_expr = tc_strcat3("&m->", tc_msg_member(x), "");
    tc_gen_field(ctx, p, file, x->c_name, msg_expr, f, tc_scoped_ident(ctx, f), true, NULL);
    free(msg_expr);
}

static void scoped_in_message(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    if (t->is_wrapper || t->msg->n_extension == 0) return;
    tc_emit(p, "\n/* ---- extensions declared in $full$ ---- */\n", "full", t->full_name, NULL);
    for (size_t i = 0; i < t->msg->n_extension && ctx->error == NULL; i++)
        gen_scoped(ctx, p, t->file, t->msg->extension[i]);
}

void tc_gen_file_extensions(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    if (file->n_extension > 0) tc_emit(p, "\n/* ---- file-scope extensions ---- */\n", NULL);
    for (size_t i = 0; i < file->n_extension && ctx->error == NULL; i++)
        gen_scoped(ctx, p, file, file->extension[i]);
    tc_for_each_message(ctx, p, file, scoped_in_message);
}
