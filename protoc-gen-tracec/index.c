/*
 * index.c - every message and enum of every file in the request (the files
 * to generate and all their imports), by full name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

void tc_error(tc_ctx *ctx, const char *file, const char *fmt, ...) {
    if (ctx->error) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = malloc((size_t)n + 1);
    if (msg == NULL) exit(1);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ctx->error = file ? tc_sprintf("%s: %s", file, msg) : tc_strdup(msg);
    free(msg);
}

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void insert(tc_index *ix, tc_type *t) {
    if ((ix->count + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 256;
        tc_type **slots = calloc(cap, sizeof *slots);
        if (slots == NULL) exit(1);
        for (size_t i = 0; i < ix->cap; i++) {
            tc_type *o = ix->slots[i];
            if (o == NULL) continue;
            size_t j = hash(o->full_name) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = o;
        }
        free(ix->slots);
        ix->slots = slots;
        ix->cap = cap;
    }
    size_t j = hash(t->full_name) & (ix->cap - 1);
    while (ix->slots[j]) j = (j + 1) & (ix->cap - 1);
    ix->slots[j] = t;
    ix->count++;
}

const tc_type *tc_index_find(const tc_ctx *ctx, const char *name) {
    const tc_index *ix = &ctx->index;
    if (name == NULL || ix->cap == 0) return NULL;
    if (name[0] == '.') name++;
    size_t j = hash(name) & (ix->cap - 1);
    while (ix->slots[j]) {
        if (strcmp(ix->slots[j]->full_name, name) == 0) return ix->slots[j];
        j = (j + 1) & (ix->cap - 1);
    }
    return NULL;
}

const tc_file_proto *tc_find_file(const tc_ctx *ctx, const char *name) {
    for (size_t i = 0; i < ctx->req->n_proto_file; i++)
        if (strcmp(ctx->req->proto_file[i]->name, name) == 0) return ctx->req->proto_file[i];
    return NULL;
}

/* "PFX" + C name of `full` when `file` is outside the Perfetto schema. */
static char *prefixed_c(const tc_ctx *ctx, const tc_file_proto *file, const char *full) {
    char *c = tc_c_name(full);
    const char *pfx = ctx->opt.name_prefix;
    if (pfx && pfx[0] && !tc_is_perfetto_schema(ctx, file)) {
        char *t = tc_strcat3(pfx, c, "");
        free(c);
        c = t;
    }
    return c;
}

static tc_type *new_type(const tc_ctx *ctx, tc_kind kind, const char *scope_full, const char *name,
                         const tc_file_proto *file) {
    tc_type *t = calloc(1, sizeof *t);
    if (t == NULL) exit(1);
    t->kind = kind;
    t->full_name = scope_full[0] ? tc_strcat3(scope_full, ".", name) : tc_strdup(name);
    t->c_name = prefixed_c(ctx, file, t->full_name);
    if (tc_is_reserved(t->c_name)) {
        char *e = tc_strcat3(t->c_name, "_", "");
        free(t->c_name);
        t->c_name = e;
    }
    char *scope_c = prefixed_c(ctx, file, scope_full);
    t->scope_c = scope_c[0] ? tc_strcat3(scope_c, "_", "") : tc_strdup("");
    free(scope_c);
    t->file = file;
    return t;
}

/* Two types with one full name: lookups would find either (protoc rejects it). */
static bool defined_twice(tc_ctx *ctx, const tc_type *t) {
    const tc_type *other = tc_index_find(ctx, t->full_name);
    if (other == NULL) return false;
    tc_error(ctx, t->file->name, "%s %s is defined twice (the other one is a%s in %s)",
             t->kind == TC_ENUM ? "enum" : "message", t->full_name, other->kind == TC_ENUM ? "n enum" : " message",
             other->file->name);
    return true;
}

static void free_type(tc_type *t) {
    free(t->full_name);
    free(t->c_name);
    free(t->scope_c);
    free(t);
}

static void add_enum(tc_ctx *ctx, const char *scope, const tc_enum_proto *e,
                     const tc_file_proto *file) {
    tc_type *t = new_type(ctx, TC_ENUM, scope, e->name, file);
    t->enm = e;
    t->deprecated = e->options && e->options->has_deprecated && e->options->deprecated;
    if (defined_twice(ctx, t)) {
        free_type(t);
        return;
    }
    insert(&ctx->index, t);
}

static void add_message(tc_ctx *ctx, const char *scope, const tc_msg_proto *m,
                        const tc_file_proto *file) {
    tc_type *t = new_type(ctx, TC_MESSAGE, scope, m->name, file);
    t->msg = m;
    t->deprecated = m->options && m->options->has_deprecated && m->options->deprecated;
    /*
     * A wrapper holds extend blocks of one extendee and nothing a writer of
     * its own would need: no fields and no extension ranges (a message that
     * can be extended is a real message).  Nested types are fine.
     */
    t->is_wrapper = m->n_extension > 0 && m->n_field == 0 && m->n_extension_range == 0;
    for (size_t i = 1; t->is_wrapper && i < m->n_extension; i++)
        if (strcmp(m->extension[i]->extendee, m->extension[0]->extendee) != 0) t->is_wrapper = false;
    if (defined_twice(ctx, t)) {
        free_type(t);
        return;
    }
    insert(&ctx->index, t);
    for (size_t i = 0; i < m->n_enum_type && ctx->error == NULL; i++)
        add_enum(ctx, t->full_name, m->enum_type[i], file);
    for (size_t i = 0; i < m->n_nested_type && ctx->error == NULL; i++)
        add_message(ctx, t->full_name, m->nested_type[i], file);
}

bool tc_index_build(tc_ctx *ctx) {
    for (size_t f = 0; f < ctx->req->n_proto_file; f++) {
        const tc_file_proto *file = ctx->req->proto_file[f];
        const char *pkg = file->package ? file->package : ""; /* syntax: checked by tc_validate */
        for (size_t i = 0; i < file->n_enum_type && ctx->error == NULL; i++)
            add_enum(ctx, pkg, file->enum_type[i], file);
        for (size_t i = 0; i < file->n_message_type && ctx->error == NULL; i++)
            add_message(ctx, pkg, file->message_type[i], file);
    }
    if (ctx->error) return false;
    /* Resolve the extendee of every wrapper. */
    for (size_t i = 0; i < ctx->index.cap; i++) {
        tc_type *t = ctx->index.slots[i];
        if (t == NULL || !t->is_wrapper) continue;
        t->extendee = tc_index_find(ctx, t->msg->extension[0]->extendee);
        if (t->extendee == NULL || t->extendee->kind != TC_MESSAGE)
            tc_error(ctx, t->file->name, "wrapper %s: extendee %s not found in the request", t->full_name,
                     t->msg->extension[0]->extendee);
    }
    return ctx->error == NULL;
}

void tc_index_free(tc_index *ix) {
    for (size_t i = 0; i < ix->cap; i++) {
        tc_type *t = ix->slots[i];
        if (t == NULL) continue;
        free(t->full_name);
        free(t->c_name);
        free(t->scope_c);
        /* The ident arrays are NULL-terminated. */
        for (size_t k = 0; t->field_ident && t->field_ident[k]; k++) free(t->field_ident[k]);
        for (size_t k = 0; t->base_ident && t->base_ident[k]; k++) free(t->base_ident[k]);
        for (size_t k = 0; t->ext_ident && t->ext_ident[k]; k++) free(t->ext_ident[k]);
        free(t->field_ident);
        free(t->base_ident);
        free(t->ext_ident);
        free(t);
    }
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

static void visit_msgs(tc_ctx *ctx, tc_printer *p, const char *scope, const tc_msg_proto *m,
                       tc_msg_visit_fn fn, bool enums) {
    char *full = scope[0] ? tc_strcat3(scope, ".", m->name) : tc_strdup(m->name);
    /* tc_validate and tc_index_build make every lookup succeed, with the right kind. */
    const tc_type *t = tc_index_find(ctx, full);
    if (!enums && t && t->kind == TC_MESSAGE) fn(ctx, p, t);
    for (size_t i = 0; enums && i < m->n_enum_type; i++) {
        char *en = tc_strcat3(full, ".", m->enum_type[i]->name);
        const tc_type *e = tc_index_find(ctx, en);
        if (e && e->kind == TC_ENUM) fn(ctx, p, e);
        free(en);
    }
    for (size_t i = 0; i < m->n_nested_type; i++) visit_msgs(ctx, p, full, m->nested_type[i], fn, enums);
    free(full);
}

void tc_for_each_message(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, tc_msg_visit_fn fn) {
    const char *pkg = file->package ? file->package : "";
    for (size_t i = 0; i < file->n_message_type; i++)
        visit_msgs(ctx, p, pkg, file->message_type[i], fn, false);
}

void tc_for_each_enum(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, tc_msg_visit_fn fn) {
    const char *pkg = file->package ? file->package : "";
    for (size_t i = 0; i < file->n_enum_type; i++) {
        char *en = pkg[0] ? tc_strcat3(pkg, ".", file->enum_type[i]->name)
                          : tc_strdup(file->enum_type[i]->name);
        const tc_type *e = tc_index_find(ctx, en);
        if (e && e->kind == TC_ENUM) fn(ctx, p, e);
        free(en);
    }
    for (size_t i = 0; i < file->n_message_type; i++)
        visit_msgs(ctx, p, pkg, file->message_type[i], fn, true);
}
