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
 * 3. Extensions declared in a message that also has fields, or that extends
 *    several messages: like 2, prefixed by the declaring message's C name:
 *        X_set_my_pkg_Holder_my_field(&x, ...)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

/*
 * Where Perfetto's schema opens the messages applications extend, for files
 * whose request does not contain the parent (a user's proto that imports
 * only track_event.proto still gets TracePacket_begin_track_event_as_...).
 */
typedef struct builtin_parent {
    const char *extendee;
    const char *parent;
    const char *field;
    int number;
    const char *header; /* generated header that declares the parent */
} builtin_parent;

static const builtin_parent k_builtin_parents[] = {
    {"perfetto.protos.TrackEvent", "perfetto.protos.TracePacket", "track_event", 11,
     "perfetto/trace/trace_packet.tracec.h"},
    {"perfetto.protos.InternedData", "perfetto.protos.TracePacket", "interned_data", 12,
     "perfetto/trace/trace_packet.tracec.h"},
    {"perfetto.protos.TracePacket", "perfetto.protos.Trace", "packet", 1,
     "perfetto/trace/trace.tracec.h"},
    {"perfetto.protos.DebugAnnotation", "perfetto.protos.TrackEvent", "debug_annotations", 4,
     "perfetto/trace/track_event/track_event.tracec.h"},
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

static void include_line(tc_ctx *ctx, tc_printer *p, const char *header) {
    char *path = tc_strcat3(ctx->opt.include_prefix ? ctx->opt.include_prefix : "", header, "");
    if (ctx->opt.angle_includes)
        tc_emit(p, "#include <$h$>\n", "h", path, NULL);
    else
        tc_emit(p, "#include \"$h$\"\n", "h", path, NULL);
    free(path);
}

static bool file_has_wrapper_of(tc_ctx *ctx, const tc_file_proto *file, const char *extendee);

void tc_gen_wrapper_includes(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    const char *done[8];
    size_t ndone = 0;
    for (size_t i = 0; i < sizeof k_builtin_parents / sizeof k_builtin_parents[0]; i++) {
        const builtin_parent *b = &k_builtin_parents[i];
        if (tc_index_find(ctx, b->parent)) continue;
        if (!file_has_wrapper_of(ctx, file, b->extendee)) continue;
        bool seen = false;
        for (size_t k = 0; k < ndone; k++) seen |= strcmp(done[k], b->header) == 0;
        if (seen) continue;
        done[ndone++] = b->header;
        include_line(ctx, p, b->header);
    }
}

/* ---- wrappers ----------------------------------------------------------- */

typedef struct wrapper_scan {
    const char *extendee;
    bool found;
} wrapper_scan;

static bool msg_has_wrapper_of(tc_ctx *ctx, const char *scope, const tc_msg_proto *m,
                               const char *extendee) {
    char *full = scope[0] ? tc_strcat3(scope, ".", m->name) : tc_strdup(m->name);
    const tc_type *t = tc_index_find(ctx, full);
    bool yes = t && t->is_wrapper && t->extendee && strcmp(t->extendee->full_name, extendee) == 0;
    for (size_t i = 0; !yes && i < m->n_nested_type; i++)
        yes = msg_has_wrapper_of(ctx, full, m->nested_type[i], extendee);
    free(full);
    return yes;
}

static bool file_has_wrapper_of(tc_ctx *ctx, const tc_file_proto *file, const char *extendee) {
    const char *pkg = file->package ? file->package : "";
    for (size_t i = 0; i < file->n_message_type; i++)
        if (msg_has_wrapper_of(ctx, pkg, file->message_type[i], extendee)) return true;
    return false;
}

void tc_gen_wrapper_struct(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)ctx;
    if (!t->is_wrapper || t->extendee == NULL) return;
    tc_emit(p,
            "\n/*\n"
            " * Writer of $X$ with the extensions of $full$: every setter of\n"
            " * $XC$ plus the extension setters.  `base` is the plain $XC$ writer.\n"
            " */\n"
            "typedef struct $W$ {\n"
            "    $XC$ base;\n"
            "} $W$;\n",
            "X", t->extendee->full_name, "XC", t->extendee->c_name, "full", t->full_name, "W",
            t->c_name, NULL);
}

static void gen_open_as(tc_printer *p, const char *parent_c, const char *parent_member,
                        const char *field, int number, const tc_type *w) {
    char num[16];
    snprintf(num, sizeof num, "%d", number);
    tc_emit(p,
            "\n/* Opens $P$.$f$ as a $W$. */\n"
            "static inline void $P$_begin_$f$_as_$W$($P$ *m, $W$ *child) {\n"
            "    tracec_msg_begin_nested(&m->$PM$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), &child->base.msg);\n"
            "}\n"
            "static inline void $P$_end_$f$_as_$W$($P$ *m, $W$ *child) {\n"
            "    tracec_msg_end_nested(&m->$PM$, &child->base.msg);\n"
            "}\n",
            "P", parent_c, "PM", parent_member, "f", field, "W", w->c_name, "num", num, NULL);
}

void tc_gen_wrapper_functions(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    if (!t->is_wrapper) return;
    const tc_type *x = t->extendee;
    if (x == NULL || x->kind != TC_MESSAGE) {
        tc_error(ctx, t->file->name, "wrapper %s: extendee %s not found", t->full_name,
                 t->msg->extension[0]->extendee);
        return;
    }
    tc_emit(p, "\n/* ---- $W$: $X$ setters ---- */\n", "W", t->full_name, "X", x->full_name, NULL);
    for (size_t i = 0; i < x->msg->n_field && ctx->error == NULL; i++)
        tc_gen_field(ctx, p, x->file, t->c_name, "&m->base.msg", x->msg->field[i], x->msg->field[i]->name,
                     false);
    tc_emit(p, "\n/* ---- $W$: extensions ---- */\n", "W", t->full_name, NULL);
    for (size_t i = 0; i < t->msg->n_extension && ctx->error == NULL; i++)
        tc_gen_field(ctx, p, t->file, t->c_name, "&m->base.msg", t->msg->extension[i],
                     t->msg->extension[i]->name, true);

    /* Typed open functions wherever the extendee is a field type. */
    bool any = false;
    for (size_t s = 0; s < ctx->index.cap; s++) {
        const tc_type *pt = ctx->index.slots[s];
        if (pt == NULL || pt->kind != TC_MESSAGE || pt->is_wrapper) continue;
        for (size_t i = 0; i < pt->msg->n_field; i++) {
            const tc_field_proto *f = pt->msg->field[i];
            if (f->type != GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_MESSAGE) continue;
            if (tc_index_find(ctx, f->type_name) != x) continue;
            gen_open_as(p, pt->c_name, "msg", f->name, f->number, t);
            any = true;
        }
    }
    for (size_t i = 0; i < sizeof k_builtin_parents / sizeof k_builtin_parents[0]; i++) {
        const builtin_parent *b = &k_builtin_parents[i];
        if (strcmp(b->extendee, x->full_name) != 0 || tc_index_find(ctx, b->parent)) continue;
        char *pc = tc_c_name(b->parent);
        gen_open_as(p, pc, "msg", b->field, b->number, t);
        free(pc);
        any = true;
    }
    (void)any;
}

/* ---- extensions outside wrappers ---------------------------------------- */

static void gen_scoped(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const char *scope_c,
                       const tc_field_proto *f) {
    const tc_type *x = tc_index_find(ctx, extendee_of(f));
    if (x == NULL) {
        tc_error(ctx, file->name, "extendee %s of extension %s not found", f->extendee, f->name);
        return;
    }
    char *ident = scope_c[0] ? tc_strcat3(scope_c, "_", f->name) : tc_strdup(f->name);
    char *msg_expr = tc_strcat3("&m->", tc_msg_member(x), "");
    tc_gen_field(ctx, p, file, x->c_name, msg_expr, f, ident, true);
    free(msg_expr);
    free(ident);
}

static void scoped_in_message(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    if (t->is_wrapper) return;
    for (size_t i = 0; i < t->msg->n_extension && ctx->error == NULL; i++)
        gen_scoped(ctx, p, t->file, t->c_name, t->msg->extension[i]);
}

void tc_gen_file_extensions(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    if (file->n_extension > 0) tc_emit(p, "\n/* ---- file-scope extensions ---- */\n", NULL);
    char *pkg_c = tc_c_name(file->package ? file->package : "");
    for (size_t i = 0; i < file->n_extension && ctx->error == NULL; i++)
        gen_scoped(ctx, p, file, pkg_c, file->extension[i]);
    free(pkg_c);
    tc_for_each_message(ctx, p, file, scoped_in_message);
}
