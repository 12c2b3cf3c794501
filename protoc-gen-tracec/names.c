/*
 * names.c - every C name protoc-gen-tracec emits is built here, so the rules
 * can be read (and changed) in one place:
 *
 *   message a.b.Outer.Inner      -> a_b_Outer_Inner       (writer type)
 *   field f of it                -> a_b_Outer_Inner_set_f / _set_cstr_f /
 *                                   _begin_f / _end_f / _f_field_number
 *   enum a.b.Outer.Kind          -> a_b_Outer_Kind        (C enum type)
 *   value K_X of it              -> a_b_Outer_K_X         (the enum's scope, as in C++)
 *   file dir/x.proto             -> dir/x.tracec.h, dir/x.tracec.c
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "protoc-gen-tracec: out of memory\n");
        exit(1);
    }
    return p;
}

char *tc_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

char *tc_strcat3(const char *a, const char *b, const char *c) {
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *d = xmalloc(na + nb + nc + 1);
    memcpy(d, a, na);
    memcpy(d + na, b, nb);
    memcpy(d + na + nb, c, nc + 1);
    return d;
}

char *tc_sprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *tc_escape(const char *s) {
    char *out = xmalloc(strlen(s) * 4 + 1), *o = out;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c < 0x20 || *c >= 0x7f || *c == '"' || *c == '\\')
            o += sprintf(o, "\\%03o", *c);
        else
            *o++ = (char)*c;
    }
    *o = '\0';
    return out;
}

bool tc_is_utf8(const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        size_t n = *c < 0x80 ? 0 : (*c & 0xe0) == 0xc0 ? 1 : (*c & 0xf0) == 0xe0 ? 2 : (*c & 0xf8) == 0xf0 ? 3 : 4;
        if (n == 4 || (n == 1 && *c < 0xc2) || (n == 3 && *c > 0xf4)) return false;
        uint32_t cp = n == 0 ? *c : n == 1 ? *c & 0x1fu : n == 2 ? *c & 0x0fu : *c & 0x07u;
        for (size_t k = 1; k <= n; k++) {
            if ((c[k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (c[k] & 0x3fu);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        c += n + 1;
    }
    return true;
}

char *tc_c_name(const char *full_name) {
    if (full_name[0] == '.') full_name++;
    char *s = tc_strdup(full_name);
    for (char *c = s; *c; c++)
        if (*c == '.') *c = '_';
    return s;
}

char *tc_file_ident(const char *proto_path) {
    char *s = tc_strdup(proto_path);
    for (char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c)) *c = '_';
    if (isdigit((unsigned char)s[0])) {
        char *t = tc_strcat3("_", s, "");
        free(s);
        s = t;
    }
    return s;
}

char *tc_output_name(const char *proto_path, const char *suffix) {
    size_t n = strlen(proto_path);
    if (n > 6 && strcmp(proto_path + n - 6, ".proto") == 0) n -= 6;
    char *s = xmalloc(n + strlen(suffix) + 1);
    memcpy(s, proto_path, n);
    strcpy(s + n, suffix);
    return s;
}

char *tc_guard(const char *prefix, const char *proto_path) {
    char *id = tc_file_ident(proto_path);
    char *g = tc_strcat3(prefix ? prefix : "", id, "_TRACEC_H_");
    for (char *c = g; *c; c++) *c = (char)toupper((unsigned char)*c);
    free(id);
    return g;
}

/* ---- reserved identifiers ------------------------------------------------ */

/* Sorted, for bsearch. */
static const char *const k_reserved[] = {
    "EOF", "NULL", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
    "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local", "alignas", "alignof", "and",
    "and_eq", "asm", "assert", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char16_t", "char32_t", "child", "class", "compl", "const", "const_cast",
    "constexpr", "continue", "count", "data", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "errno", "explicit", "export", "extern", "false", "float",
    "for", "friend", "goto", "if", "inline", "int", "int16_t", "int32_t", "int64_t", "int8_t",
    "intmax_t", "intptr_t", "long", "m", "memcpy", "mutable", "namespace", "new", "noexcept",
    "not", "not_eq", "nullptr", "offsetof", "operator", "or", "or_eq", "private", "protected",
    "ptrdiff_t", "public", "register", "reinterpret_cast", "restrict", "return", "short",
    "signed", "size", "size_t", "sizeof", "static", "static_assert", "static_cast", "stderr",
    "stdin", "stdout", "strlen", "struct", "switch", "template", "this", "thread_local",
    "throw", "tracec_file_descriptor", "tracec_msg", "tracec_status_t", "tracec_trace_file",
    "tracec_writer", "tracec_writer_grow_fn", "true", "try", "typedef", "typeid", "typename", "uint16_t", "uint32_t",
    "uint64_t", "uint8_t", "uintmax_t", "uintptr_t", "union", "unsigned", "using", "value",
    "values", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
};

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool tc_is_reserved(const char *id) {
    return bsearch(&id, k_reserved, sizeof k_reserved / sizeof k_reserved[0], sizeof k_reserved[0],
                   cmp_str) != NULL;
}

bool tc_is_builtin_path(const char *proto_path) {
    return strncmp(proto_path, "perfetto/", 9) == 0 || strncmp(proto_path, "google/protobuf/", 16) == 0;
}

char *tc_package_c(const tc_ctx *ctx, const tc_file_proto *file) {
    char *pkg = tc_c_name(file->package ? file->package : "");
    const char *pfx = ctx->opt.name_prefix;
    if (pfx && pfx[0] && !tc_is_perfetto_schema(ctx, file)) {
        char *t = tc_strcat3(pfx, pkg, "");
        free(pkg);
        pkg = t;
        /* "acme_" + "" -> "acme" (no doubled separator when there is no package). */
        size_t n = strlen(pkg);
        if (file->package == NULL || file->package[0] == '\0') {
            while (n > 0 && pkg[n - 1] == '_') pkg[--n] = '\0';
        }
    }
    return pkg;
}

char *tc_file_c(const tc_ctx *ctx, const tc_file_proto *file, bool with_ext) {
    char *stem = with_ext ? tc_strdup(file->name) : tc_output_name(file->name, "");
    char *id = tc_file_ident(stem);
    free(stem);
    const char *pfx = ctx->opt.name_prefix;
    if (pfx && pfx[0] && !tc_is_perfetto_schema(ctx, file)) {
        char *t = tc_strcat3(pfx, id, "");
        free(id);
        id = t;
    }
    return id;
}

/* ---- the symbol table ----------------------------------------------------- */

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

const char *tc_sym_owner(const tc_symtab *s, const char *name) {
    if (s->cap == 0) return NULL;
    for (size_t j = str_hash(name) & (s->cap - 1); s->keys[j]; j = (j + 1) & (s->cap - 1))
        if (strcmp(s->keys[j], name) == 0) return s->owners[j];
    return NULL;
}

static void sym_put(char **keys, char **owners, size_t cap, char *key, char *owner) {
    size_t j = str_hash(key) & (cap - 1);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = key;
    owners[j] = owner;
}

void tc_sym_add(tc_symtab *s, const char *name, const char *owner) {
    if ((s->count + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        char **keys = calloc(cap, sizeof *keys);
        char **owners = calloc(cap, sizeof *owners);
        if (keys == NULL || owners == NULL) exit(1);
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i]) sym_put(keys, owners, cap, s->keys[i], s->owners[i]);
        free(s->keys);
        free(s->owners);
        s->keys = keys;
        s->owners = owners;
        s->cap = cap;
    }
    sym_put(s->keys, s->owners, s->cap, tc_strdup(name), tc_strdup(owner));
    s->count++;
}

void tc_sym_free(tc_symtab *s) {
    for (size_t i = 0; i < s->cap; i++) {
        free(s->keys[i]);
        free(s->owners[i]);
    }
    free(s->keys);
    free(s->owners);
    memset(s, 0, sizeof *s);
}

/* ---- deciding every name of the request ---------------------------------- */

#define FT(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_##x

char *tc_enum_value_c(const tc_type *t, size_t i) {
    char *v = tc_strcat3(t->scope_c, t->enm->value[i]->name, "");
    if (tc_is_reserved(v)) {
        char *e = tc_strcat3(v, "_", "");
        free(v);
        v = e;
    }
    return v;
}

/* A type-level name (writer type, enum, enum value, file symbol): must be free. */
static void claim_fixed(tc_ctx *ctx, const tc_file_proto *file, const char *name, const char *owner) {
    const char *other = tc_sym_owner(&ctx->syms, name);
    if (other) {
        tc_error(ctx, file->name,
                 "the C name %s of %s is also the C name of %s; rename one of them, or generate "
                 "with --tracec_opt=name_prefix=...",
                 name, owner, other);
        return;
    }
    tc_sym_add(&ctx->syms, name, owner);
}

static void claim_types(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)p;
    if (ctx->error) return;
    char *owner = tc_sprintf("%s %s", t->kind == TC_ENUM ? "enum" : "message", t->full_name);
    claim_fixed(ctx, t->file, t->c_name, owner);
    free(owner);
    if (t->kind != TC_ENUM) return;
    for (size_t i = 0; i < t->enm->n_value && ctx->error == NULL; i++) {
        char *v = tc_enum_value_c(t, i);
        char *o = tc_sprintf("enum value %s.%s", t->full_name, t->enm->value[i]->name);
        claim_fixed(ctx, t->file, v, o);
        free(v);
        free(o);
    }
}

/* The names field `f` with name part `ident` has on writer `W`; returns how many (<= 3). */
static size_t field_names(const char *W, const tc_field_proto *f, const char *ident, bool constant,
                          char *out[3]) {
    size_t n = 0;
    if (constant) out[n++] = tc_sprintf("%s_%s_field_number", W, ident);
    if (f->type == FT(MESSAGE) || f->type == FT(GROUP)) {
        out[n++] = tc_sprintf("%s_begin_%s", W, ident);
        out[n++] = tc_sprintf("%s_end_%s", W, ident);
    } else {
        out[n++] = tc_sprintf("%s_set_%s", W, ident);
        if (f->type == FT(STRING)) out[n++] = tc_sprintf("%s_set_cstr_%s", W, ident);
    }
    return n;
}

/* Appends '_' to `start` until no name of the field is taken, then takes them. */
static char *claim_field(tc_ctx *ctx, const char *W, const char *what, const tc_field_proto *f,
                         const char *start, bool constant) {
    char *ident = tc_strdup(start);
    for (;;) {
        char *names[3];
        size_t n = field_names(W, f, ident, constant, names);
        bool free_all = true;
        for (size_t i = 0; i < n; i++) free_all = free_all && tc_sym_owner(&ctx->syms, names[i]) == NULL;
        if (free_all) {
            char *owner = tc_sprintf("%s %s", what, f->name);
            for (size_t i = 0; i < n; i++) tc_sym_add(&ctx->syms, names[i], owner);
            free(owner);
        }
        for (size_t i = 0; i < n; i++) free(names[i]);
        if (free_all) return ident;
        char *t = tc_strcat3(ident, "_", "");
        free(ident);
        ident = t;
    }
}

static char **new_idents(size_t n) {
    char **a = calloc(n + 1, sizeof *a);
    if (a == NULL) exit(1);
    return a;
}

static void claim_fields(tc_ctx *ctx, tc_printer *p, const tc_type *ct) {
    (void)p;
    tc_type *t = (tc_type *)ct;
    if (t->is_wrapper || ctx->error) return;
    char *what = tc_sprintf("field of %s:", t->full_name);
    t->field_ident = new_idents(t->msg->n_field);
    for (size_t i = 0; i < t->msg->n_field; i++)
        t->field_ident[i] = claim_field(ctx, t->c_name, what, t->msg->field[i], t->msg->field[i]->name, true);
    free(what);
}

static void claim_wrapper(tc_ctx *ctx, tc_printer *p, const tc_type *ct) {
    (void)p;
    tc_type *t = (tc_type *)ct;
    if (!t->is_wrapper || ctx->error || t->extendee == NULL) return;
    const tc_type *x = t->extendee;
    char *what = tc_sprintf("setter of wrapper %s for %s field", t->full_name, x->full_name);
    t->base_ident = new_idents(x->msg->n_field);
    for (size_t i = 0; i < x->msg->n_field; i++)
        t->base_ident[i] = claim_field(ctx, t->c_name, what, x->msg->field[i],
                                       x->field_ident ? x->field_ident[i] : x->msg->field[i]->name, false);
    free(what);
    what = tc_sprintf("extension of wrapper %s:", t->full_name);
    t->ext_ident = new_idents(t->msg->n_extension);
    for (size_t i = 0; i < t->msg->n_extension; i++)
        t->ext_ident[i] = claim_field(ctx, t->c_name, what, t->msg->extension[i],
                                      t->msg->extension[i]->name, true);
    free(what);
}

static void claim_scoped(tc_ctx *ctx, const tc_file_proto *file, const char *scope_c,
                         const tc_field_proto *f) {
    const tc_type *x = tc_index_find(ctx, f->extendee);
    if (x == NULL || x->kind != TC_MESSAGE) {
        tc_error(ctx, file->name, "extendee %s of extension %s not found in the request", f->extendee,
                 f->name);
        return;
    }
    char *start = scope_c[0] ? tc_strcat3(scope_c, "_", f->name) : tc_strdup(f->name);
    char *what = tc_sprintf("extension of %s declared in %s:", x->full_name, file->name);
    tc_scoped_ext *e = &ctx->scoped[ctx->n_scoped++];
    e->field = f;
    e->ident = claim_field(ctx, x->c_name, what, f, start, true);
    free(what);
    free(start);
}

static void claim_scoped_in_message(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)p;
    if (t->is_wrapper) return;
    for (size_t i = 0; i < t->msg->n_extension && ctx->error == NULL; i++)
        claim_scoped(ctx, t->file, t->c_name, t->msg->extension[i]);
}

static size_t count_exts(const tc_msg_proto *m) {
    size_t n = m->n_extension;
    for (size_t i = 0; i < m->n_nested_type; i++) n += count_exts(m->nested_type[i]);
    return n;
}

bool tc_resolve_names(tc_ctx *ctx) {
    const Google__Protobuf__Compiler__CodeGeneratorRequest *req = ctx->req;
    size_t n_ext = 0;
    for (size_t f = 0; f < req->n_proto_file; f++) {
        const tc_file_proto *file = req->proto_file[f];
        n_ext += file->n_extension;
        for (size_t i = 0; i < file->n_message_type; i++) n_ext += count_exts(file->message_type[i]);
    }
    ctx->scoped = calloc(n_ext ? n_ext : 1, sizeof *ctx->scoped);
    if (ctx->scoped == NULL) exit(1);
    /* 1. Types, enum values and file symbols: fixed, must be unique. */
    for (size_t f = 0; f < req->n_proto_file && ctx->error == NULL; f++) {
        const tc_file_proto *file = req->proto_file[f];
        char *id = tc_file_c(ctx, file, true);
        char *sym = tc_strcat3("tracec_fd_", id, "");
        char *owner = tc_sprintf("the descriptor of %s", file->name);
        claim_fixed(ctx, file, sym, owner);
        free(id);
        free(sym);
        free(owner);
        tc_for_each_enum(ctx, NULL, file, claim_types);
        tc_for_each_message(ctx, NULL, file, claim_types);
    }
    /* 2. Fields of plain messages, then wrappers (which start from their extendee's names). */
    for (size_t f = 0; f < req->n_proto_file && ctx->error == NULL; f++)
        tc_for_each_message(ctx, NULL, req->proto_file[f], claim_fields);
    for (size_t f = 0; f < req->n_proto_file && ctx->error == NULL; f++)
        tc_for_each_message(ctx, NULL, req->proto_file[f], claim_wrapper);
    /* 3. Extensions outside wrappers: setters on the extendee's writer. */
    for (size_t f = 0; f < req->n_proto_file && ctx->error == NULL; f++) {
        const tc_file_proto *file = req->proto_file[f];
        char *pkg = tc_package_c(ctx, file);
        for (size_t i = 0; i < file->n_extension && ctx->error == NULL; i++)
            claim_scoped(ctx, file, pkg, file->extension[i]);
        free(pkg);
        tc_for_each_message(ctx, NULL, file, claim_scoped_in_message);
    }
    return ctx->error == NULL;
}

const char *tc_scoped_ident(const tc_ctx *ctx, const tc_field_proto *f) {
    for (size_t i = 0; i < ctx->n_scoped; i++)
        if (ctx->scoped[i].field == f) return ctx->scoped[i].ident;
    return f->name;
}
