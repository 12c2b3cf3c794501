/*
 * validate.c - the shape of the request, checked before the generator reads
 * it.
 *
 * protoc only sends requests it built from .proto files it accepted, but a
 * request is plain bytes on stdin: anybody can hand-make one (the error
 * tests do, and so does the fuzzer, fuzz/plugin).  Everything the generator
 * takes for granted is checked here, in request order, and the first
 * violation becomes the response's `error`, naming the file:
 *
 *   every file, message, field, enum and enum value has a name, and it is an
 *   identifier (packages and type names: dotted identifiers; file names: no
 *   quote, backslash, control character or comment end, as they are written
 *   into generated comments and strings);
 *   no file is listed twice, in proto_file or in file_to_generate;
 *   every import is in the request, and imports have no cycle;
 *   fields have a known type and label, a number in 1..2^29-1, a type_name
 *   when they are messages, groups or enums, an oneof_index of their message;
 *   extensions have an extendee; enums have at least one value;
 *   no message has two fields with one name or one number;
 *   no message is extended twice with one number in the request (protoc
 *   only warns; the generated writers and decoders would clash).
 *
 * What needs the type index (type names that resolve to the right kind, no
 * type defined twice, extendees that exist) is checked where it is built or
 * used (index.c, names.c, gen_*.c).
 */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define FT(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_##x
#define FL(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_##x

/* The largest field number protobuf allows (2^29 - 1). */
#define TC_MAX_FIELD_NUMBER 536870911

#define NOT_A_FILE_NAME " (empty, not UTF-8, or with a control character, quote, backslash or \"*/\")"

static bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static bool is_ident(const char *s) {
    if (!is_ident_start(s[0])) return false;
    for (s++; *s; s++)
        if (!is_ident_char(*s)) return false;
    return true;
}

/* "a.b.C" (and ".a.b.C" when `leading_dot`): identifiers joined by single dots. */
static bool is_dotted(const char *s, bool leading_dot) {
    if (leading_dot && s[0] == '.') s++;
    for (;;) {
        if (!is_ident_start(*s)) return false;
        while (is_ident_char(*s)) s++;
        if (*s == '\0') return true;
        if (*s++ != '.') return false;
    }
}

/* A path generated code can quote and mention in comments, and an error can name. */
static bool is_file_name(const char *s) {
    if (s[0] == '\0' || !tc_is_utf8(s)) return false;
    for (const char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\' || (c[0] == '*' && c[1] == '/'))
            return false;
    return true;
}

/* `what` #i in `scope`: present and an identifier. */
static bool check_name(tc_ctx *ctx, const tc_file_proto *file, const char *what, size_t i, const char *scope,
                       const char *name) {
    if (name == NULL) {
        tc_error(ctx, file->name, "%s #%zu in %s has no name", what, i, scope);
        return false;
    }
    if (!is_ident(name)) {
        char *e = tc_escape(name);
        tc_error(ctx, file->name, "%s #%zu in %s: name \"%s\" is not an identifier", what, i, scope, e);
        free(e);
        return false;
    }
    return true;
}

static char *scoped(const char *scope, const char *name) {
    return scope[0] ? tc_strcat3(scope, ".", name) : tc_strdup(name);
}

/* "<what> <full>: <key> "<value>" is not <is_not>", the value escaped. */
static void bad_string(tc_ctx *ctx, const tc_file_proto *file, const char *what, const char *full, const char *key,
                       const char *value, const char *is_not) {
    char *e = tc_escape(value);
    tc_error(ctx, file->name, "%s %s: %s \"%s\" is not %s", what, full, key, e, is_not);
    free(e);
}

static bool valid_type(int t) { return t >= FT(DOUBLE) && t <= FT(SINT64); }

/* A field or (extension) an extension of `scope` (a message, or the file's package). */
static void check_field(tc_ctx *ctx, const tc_file_proto *file, const tc_msg_proto *m, const char *scope,
                        size_t i, const tc_field_proto *f, bool extension) {
    const char *what = extension ? "extension" : "field";
    const char *where = scope[0] ? scope : "the file";
    if (!check_name(ctx, file, what, i, where, f->name)) return;
    char *full = scoped(scope, f->name);
    if (!f->has_number || f->number < 1 || f->number > TC_MAX_FIELD_NUMBER)
        tc_error(ctx, file->name, "%s %s: number %d is not a field number (1 to %d)", what, full,
                 f->has_number ? (int)f->number : 0, TC_MAX_FIELD_NUMBER);
    else if (!f->has_type)
        tc_error(ctx, file->name, "%s %s has no type", what, full);
    else if (!valid_type((int)f->type))
        tc_error(ctx, file->name, "%s %s: type %d is not a field type", what, full, (int)f->type);
    else if (f->has_label && f->label != FL(OPTIONAL) && f->label != FL(REQUIRED) && f->label != FL(REPEATED))
        tc_error(ctx, file->name, "%s %s: label %d is not a field label", what, full, (int)f->label);
    else if ((f->type == FT(MESSAGE) || f->type == FT(GROUP) || f->type == FT(ENUM)) && f->type_name == NULL)
        tc_error(ctx, file->name, "%s %s: a %s field needs a type_name", what, full,
                 f->type == FT(ENUM) ? "enum" : f->type == FT(GROUP) ? "group" : "message");
    else if (f->type_name != NULL && !is_dotted(f->type_name, true))
        bad_string(ctx, file, what, full, "type_name", f->type_name, "a type name");
    else if (extension && f->extendee == NULL)
        tc_error(ctx, file->name, "extension %s has no extendee", full);
    else if (f->extendee != NULL && !is_dotted(f->extendee, true))
        bad_string(ctx, file, what, full, "extendee", f->extendee, "a type name");
    else if (f->has_oneof_index && (m == NULL || f->oneof_index < 0 || (size_t)f->oneof_index >= m->n_oneof_decl))
        tc_error(ctx, file->name, "%s %s: oneof_index %d is out of range (%zu oneofs)", what, full,
                 (int)f->oneof_index, m ? m->n_oneof_decl : (size_t)0);
    free(full);
}

static void check_enum(tc_ctx *ctx, const tc_file_proto *file, const char *scope, size_t i,
                       const tc_enum_proto *e) {
    if (!check_name(ctx, file, "enum", i, scope[0] ? scope : "the file", e->name)) return;
    char *full = scoped(scope, e->name);
    if (e->n_value == 0) tc_error(ctx, file->name, "enum %s has no values", full);
    for (size_t v = 0; v < e->n_value && ctx->error == NULL; v++)
        check_name(ctx, file, "value", v, full, e->value[v]->name);
    free(full);
}

static void check_message(tc_ctx *ctx, const tc_file_proto *file, const char *scope, size_t i,
                          const tc_msg_proto *m) {
    if (!check_name(ctx, file, "message", i, scope[0] ? scope : "the file", m->name)) return;
    char *full = scoped(scope, m->name);
    for (size_t k = 0; k < m->n_field && ctx->error == NULL; k++)
        check_field(ctx, file, m, full, k, m->field[k], false);
    /* Two fields with one name or one number (the names would be renamed forever, the numbers clash). */
    for (size_t a = 0; a < m->n_field && ctx->error == NULL; a++)
        for (size_t b = a + 1; b < m->n_field && ctx->error == NULL; b++) {
            if (strcmp(m->field[a]->name, m->field[b]->name) == 0)
                tc_error(ctx, file->name, "message %s: two fields are named %s", full, m->field[a]->name);
            else if (m->field[a]->number == m->field[b]->number)
                tc_error(ctx, file->name, "message %s: fields %s and %s have one number, %d", full,
                         m->field[a]->name, m->field[b]->name, (int)m->field[a]->number);
        }
    for (size_t k = 0; k < m->n_extension && ctx->error == NULL; k++)
        check_field(ctx, file, NULL, full, k, m->extension[k], true);
    for (size_t k = 0; k < m->n_enum_type && ctx->error == NULL; k++)
        check_enum(ctx, file, full, k, m->enum_type[k]);
    for (size_t k = 0; k < m->n_nested_type && ctx->error == NULL; k++)
        check_message(ctx, file, full, k, m->nested_type[k]);
    free(full);
}

/* The extensions of the request, for the one-number-per-extendee check. */
typedef struct ext_seen {
    const char *extendee; /* without the leading dot */
    int32_t number;
    char *full;
    const char *file;
} ext_seen;

typedef struct ext_list {
    ext_seen *e;
    size_t n, cap;
} ext_list;

static void note_extensions(tc_ctx *ctx, ext_list *l, const tc_file_proto *file, const char *scope,
                            tc_field_proto *const *exts, size_t n_exts) {
    for (size_t k = 0; k < n_exts && ctx->error == NULL; k++) {
        const tc_field_proto *x = exts[k];
        const char *extendee = x->extendee[0] == '.' ? x->extendee + 1 : x->extendee;
        char *full = scoped(scope, x->name);
        for (size_t i = 0; i < l->n && ctx->error == NULL; i++)
            if (l->e[i].number == x->number && strcmp(l->e[i].extendee, extendee) == 0)
                tc_error(ctx, file->name, "extensions %s (in %s) and %s extend %s with one number, %d", l->e[i].full,
                         l->e[i].file, full, extendee, (int)x->number);
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 16;
            l->e = realloc(l->e, l->cap * sizeof *l->e);
            if (l->e == NULL) exit(1);
        }
        l->e[l->n++] = (ext_seen){extendee, x->number, full, file->name};
    }
}

static void note_message_extensions(tc_ctx *ctx, ext_list *l, const tc_file_proto *file, const char *scope,
                                    const tc_msg_proto *m) {
    char *full = scoped(scope, m->name);
    note_extensions(ctx, l, file, full, m->extension, m->n_extension);
    for (size_t k = 0; k < m->n_nested_type && ctx->error == NULL; k++)
        note_message_extensions(ctx, l, file, full, m->nested_type[k]);
    free(full);
}

/* No two extensions of the request give one extendee the same number. */
static void check_extension_numbers(tc_ctx *ctx) {
    const Google__Protobuf__Compiler__CodeGeneratorRequest *req = ctx->req;
    ext_list l = {NULL, 0, 0};
    for (size_t f = 0; f < req->n_proto_file && ctx->error == NULL; f++) {
        const tc_file_proto *file = req->proto_file[f];
        const char *pkg = file->package ? file->package : "";
        note_extensions(ctx, &l, file, pkg, file->extension, file->n_extension);
        for (size_t i = 0; i < file->n_message_type && ctx->error == NULL; i++)
            note_message_extensions(ctx, &l, file, pkg, file->message_type[i]);
    }
    for (size_t i = 0; i < l.n; i++) free(l.e[i].full);
    free(l.e);
}

/* Depth-first over imports: state 1 on the current path, 2 done.  Reports the first cycle. */
static void check_cycles(tc_ctx *ctx, size_t f, unsigned char *state, size_t *path, size_t depth) {
    const Google__Protobuf__Compiler__CodeGeneratorRequest *req = ctx->req;
    state[f] = 1;
    path[depth] = f;
    const tc_file_proto *file = req->proto_file[f];
    for (size_t d = 0; d < file->n_dependency && ctx->error == NULL; d++) {
        size_t g = 0;
        while (g < req->n_proto_file && strcmp(req->proto_file[g]->name, file->dependency[d]) != 0) g++;
        if (g == req->n_proto_file || state[g] == 2) continue;
        if (state[g] == 1) {
            /* The cycle: from g's place on the path back to g. */
            size_t start = 0;
            while (path[start] != g) start++;
            char *chain = tc_strdup(req->proto_file[g]->name);
            for (size_t k = start + 1; k <= depth; k++) {
                char *t = tc_strcat3(chain, " -> ", req->proto_file[path[k]]->name);
                free(chain);
                chain = t;
            }
            tc_error(ctx, req->proto_file[g]->name, "import cycle: %s -> %s", chain, req->proto_file[g]->name);
            free(chain);
            return;
        }
        check_cycles(ctx, g, state, path, depth + 1);
    }
    state[f] = 2;
}

bool tc_validate(tc_ctx *ctx) {
    const Google__Protobuf__Compiler__CodeGeneratorRequest *req = ctx->req;
    size_t n = req->n_proto_file;
    /* File names first: every later message names its file. */
    for (size_t f = 0; f < n && ctx->error == NULL; f++) {
        const char *name = req->proto_file[f]->name;
        if (name == NULL) {
            tc_error(ctx, NULL, "proto_file #%zu of the request has no name", f);
        } else if (!is_file_name(name)) {
            char *e = tc_escape(name);
            tc_error(ctx, NULL, "proto_file #%zu of the request: \"%s\" is not a file name" NOT_A_FILE_NAME, f, e);
            free(e);
        }
        for (size_t g = 0; g < f && ctx->error == NULL; g++)
            if (strcmp(req->proto_file[g]->name, name) == 0)
                tc_error(ctx, name, "in the request's proto_file list twice");
    }
    for (size_t i = 0; i < req->n_file_to_generate && ctx->error == NULL; i++) {
        if (!is_file_name(req->file_to_generate[i])) {
            char *e = tc_escape(req->file_to_generate[i]);
            tc_error(ctx, NULL, "file_to_generate #%zu of the request: \"%s\" is not a file name" NOT_A_FILE_NAME,
                     i, e);
            free(e);
        }
        for (size_t k = 0; k < i && ctx->error == NULL; k++)
            if (strcmp(req->file_to_generate[i], req->file_to_generate[k]) == 0)
                tc_error(ctx, req->file_to_generate[i], "in the request's file_to_generate list twice");
    }
    for (size_t f = 0; f < n && ctx->error == NULL; f++) {
        const tc_file_proto *file = req->proto_file[f];
        if (file->syntax && file->syntax[0] && strcmp(file->syntax, "proto2") != 0 &&
            strcmp(file->syntax, "proto3") != 0) {
            char *e = tc_escape(file->syntax);
            tc_error(ctx, file->name,
                     "syntax \"%s\" is not supported: protoc-gen-tracec generates proto2 and proto3 files", e);
            free(e);
            break;
        }
        const char *pkg = file->package ? file->package : "";
        if (pkg[0] && !is_dotted(pkg, false)) {
            char *e = tc_escape(pkg);
            tc_error(ctx, file->name, "package \"%s\" is not a dotted name of identifiers", e);
            free(e);
            break;
        }
        for (size_t d = 0; d < file->n_dependency && ctx->error == NULL; d++) {
            size_t g = 0;
            while (g < n && strcmp(req->proto_file[g]->name, file->dependency[d]) != 0) g++;
            if (g == n) {
                char *e = tc_escape(file->dependency[d]);
                tc_error(ctx, file->name, "import \"%s\" is not in the request", e);
                free(e);
            }
        }
        for (size_t i = 0; i < file->n_enum_type && ctx->error == NULL; i++)
            check_enum(ctx, file, pkg, i, file->enum_type[i]);
        for (size_t i = 0; i < file->n_message_type && ctx->error == NULL; i++)
            check_message(ctx, file, pkg, i, file->message_type[i]);
        for (size_t i = 0; i < file->n_extension && ctx->error == NULL; i++)
            check_field(ctx, file, NULL, pkg, i, file->extension[i], true);
    }
    if (ctx->error == NULL && n > 0) {
        unsigned char *state = calloc(n, 1);
        size_t *path = calloc(n, sizeof *path);
        if (state == NULL || path == NULL) exit(1);
        for (size_t f = 0; f < n && ctx->error == NULL; f++)
            if (state[f] == 0) check_cycles(ctx, f, state, path, 0);
        free(state);
        free(path);
    }
    if (ctx->error == NULL) check_extension_numbers(ctx);
    return ctx->error == NULL;
}
