/*
 * warn.c - warnings: schemas protoc accepts and tracec generates code for,
 * but that Perfetto's trace processor reads differently than the user
 * expects.  Each is one line on standard error (protoc passes a plugin's
 * standard error through), never an error:
 *
 *   a packed sint32, sint64 or bool field in a TrackEvent extension (or in a
 *   message such an extension carries): the trace processor drops every arg
 *   of the event (stat track_event_parser_errors);
 *   a message or enum of package perfetto.protos, in a file outside
 *   Perfetto's schema, whose full name Perfetto's schema already uses, and
 *   which does not keep every field (value) of Perfetto's definition (the
 *   built-in schema in protos/, embedded at build time, is the reference):
 *   the trace processor refuses a trace whose descriptors define one name
 *   twice differently.  A copy of Perfetto's schema, the same version or a
 *   newer superset, is not warned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define FT(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_##x
#define FL(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_##x

/* The built-in schema as a FileDescriptorSet (tracec_schema, schema/CMakeLists.txt). */
extern const unsigned char tracec_i_builtin_schema[];
extern const size_t tracec_i_builtin_schema_size;

static void tc_warn(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tc_warn(const char *file, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "protoc-gen-tracec: warning: %s: ", file);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- packed sint32 / sint64 / bool in TrackEvent extensions --------------- */

static bool is_packed(const tc_file_proto *file, const tc_field_proto *f) {
    if (f->label != FL(REPEATED)) return false;
    if (f->options && f->options->has_packed) return f->options->packed;
    return file->syntax && strcmp(file->syntax, "proto3") == 0; /* proto3 packs repeated scalars by default */
}

static bool is_dropped_type(const tc_field_proto *f) {
    return f->type == FT(SINT32) || f->type == FT(SINT64) || f->type == FT(BOOL);
}

static const char *type_word(const tc_field_proto *f) {
    return f->type == FT(SINT32) ? "sint32" : f->type == FT(SINT64) ? "sint64" : "bool";
}

/* Checks the fields of message `t` (reached from a TrackEvent extension), once per message. */
static void check_carried(const tc_ctx *ctx, const tc_type *t, const char *ext, const tc_type **seen, size_t *n,
                          size_t cap) {
    if (t == NULL || t->kind != TC_MESSAGE) return;
    for (size_t i = 0; i < *n; i++)
        if (seen[i] == t) return;
    if (*n == cap) return;
    seen[(*n)++] = t;
    for (size_t i = 0; i < t->msg->n_field; i++) {
        const tc_field_proto *f = t->msg->field[i];
        if (is_dropped_type(f) && is_packed(t->file, f))
            tc_warn(t->file->name,
                    "%s.%s is a packed repeated %s carried by TrackEvent extension %s: the trace processor drops "
                    "every arg of an event that has it (stat track_event_parser_errors); use [packed = false]",
                    t->full_name, f->name, type_word(f), ext);
        if (f->type == FT(MESSAGE) && f->type_name) check_carried(ctx, tc_index_find(ctx, f->type_name), ext, seen, n, cap);
    }
}

static void check_extensions(const tc_ctx *ctx, const tc_file_proto *file, const char *scope,
                             tc_field_proto *const *ext, size_t n_ext, const tc_type **seen, size_t *n, size_t cap) {
    for (size_t i = 0; i < n_ext; i++) {
        const tc_field_proto *f = ext[i];
        if (f->extendee == NULL || strcmp(f->extendee, ".perfetto.protos.TrackEvent") != 0) continue;
        char *full = scope[0] ? tc_sprintf("%s.%s", scope, f->name) : tc_sprintf("%s", f->name);
        if (is_dropped_type(f) && is_packed(file, f))
            tc_warn(file->name,
                    "TrackEvent extension %s is a packed repeated %s: the trace processor drops every arg of an "
                    "event that has it (stat track_event_parser_errors); use [packed = false]",
                    full, type_word(f));
        if (f->type == FT(MESSAGE) && f->type_name) check_carried(ctx, tc_index_find(ctx, f->type_name), full, seen, n, cap);
        free(full);
    }
}

static void check_messages_extensions(const tc_ctx *ctx, const tc_file_proto *file, const char *scope,
                                      tc_msg_proto *const *msgs, size_t n_msgs, const tc_type **seen, size_t *n,
                                      size_t cap) {
    for (size_t i = 0; i < n_msgs; i++) {
        char *full = scope[0] ? tc_sprintf("%s.%s", scope, msgs[i]->name) : tc_sprintf("%s", msgs[i]->name);
        check_extensions(ctx, file, full, msgs[i]->extension, msgs[i]->n_extension, seen, n, cap);
        check_messages_extensions(ctx, file, full, msgs[i]->nested_type, msgs[i]->n_nested_type, seen, n, cap);
        free(full);
    }
}

/* ---- names of Perfetto's schema reused ------------------------------------ */

/* The proto name of a scalar field's type. */
static const char *type_word_any(const tc_field_proto *f) {
    static const char *const k_names[] = {"?",      "double",  "float",   "int64",   "uint64", "int32", "fixed64",
                                          "fixed32", "bool",   "string",  "group",   "message", "bytes", "uint32",
                                          "enum",   "sfixed32", "sfixed64", "sint32", "sint64"};
    return (size_t)f->type < sizeof k_names / sizeof k_names[0] ? k_names[f->type] : "?";
}

/*
 * The built-in schema's definition of `full` ("perfetto.protos.X", nested
 * names too): its message in *msg or its enum in *enm; false if it has none.
 */
Google__Protobuf__FileDescriptorSet *tc_builtin_unpack(void) {
    return google__protobuf__file_descriptor_set__unpack(NULL, tracec_i_builtin_schema_size, tracec_i_builtin_schema);
}

bool tc_builtin_find(const tc_ctx *ctx, const char *full, const tc_msg_proto **msg, const tc_enum_proto **enm) {
    const Google__Protobuf__FileDescriptorSet *set = ctx->builtin;
    *msg = NULL;
    *enm = NULL;
    if (set == NULL || strncmp(full, "perfetto.protos.", 16) != 0) return false;
    for (size_t i = 0; i < set->n_file; i++) {
        const tc_file_proto *f = set->file[i];
        if (f->package == NULL || strcmp(f->package, "perfetto.protos") != 0) continue;
        const char *rest = full + strlen("perfetto.protos.");
        /* Top-level and nested names: walk "A.B.C" down the file's messages. */
        for (size_t m = 0; m < f->n_enum_type; m++)
            if (strcmp(f->enum_type[m]->name, rest) == 0) return (*enm = f->enum_type[m]) != NULL;
        tc_msg_proto *const *msgs = f->message_type;
        size_t n_msgs = f->n_message_type;
        for (;;) {
            const char *dot = strchr(rest, '.');
            size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
            const tc_msg_proto *hit = NULL;
            for (size_t m = 0; m < n_msgs && !hit; m++)
                if (strlen(msgs[m]->name) == len && strncmp(msgs[m]->name, rest, len) == 0) hit = msgs[m];
            if (hit == NULL) break;
            if (dot == NULL) return (*msg = hit) != NULL;
            rest = dot + 1;
            if (strchr(rest, '.') == NULL)
                for (size_t e = 0; e < hit->n_enum_type; e++)
                    if (strcmp(hit->enum_type[e]->name, rest) == 0) return (*enm = hit->enum_type[e]) != NULL;
            msgs = hit->nested_type;
            n_msgs = hit->n_nested_type;
        }
    }
    return false;
}

static bool same_str(const char *a, const char *b) { return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0); }

/*
 * The first field of the built-in `ref` that `mine` lacks or defines
 * otherwise (another name, type, label or message/enum type at that
 * number), or NULL when `mine` has every field of `ref` as it is: the same
 * message or a newer superset of it.
 */
static const tc_field_proto *first_field_not_kept(const tc_msg_proto *ref, const tc_msg_proto *mine) {
    for (size_t i = 0; i < ref->n_field; i++) {
        const tc_field_proto *r = ref->field[i], *hit = NULL;
        for (size_t k = 0; k < mine->n_field && !hit; k++)
            if (mine->field[k]->number == r->number) hit = mine->field[k];
        if (hit == NULL || !same_str(hit->name, r->name) || hit->type != r->type || hit->label != r->label ||
            !same_str(hit->type_name, r->type_name))
            return r;
    }
    return NULL;
}

/* The first value of the built-in `ref` that `mine` lacks (by name and number), or NULL. */
static const Google__Protobuf__EnumValueDescriptorProto *first_value_not_kept(const tc_enum_proto *ref,
                                                                             const tc_enum_proto *mine) {
    for (size_t i = 0; i < ref->n_value; i++) {
        bool kept = false;
        for (size_t k = 0; k < mine->n_value && !kept; k++)
            kept = mine->value[k]->number == ref->value[i]->number && same_str(mine->value[k]->name, ref->value[i]->name);
        if (!kept) return ref->value[i];
    }
    return NULL;
}

/*
 * Messages and enums of package perfetto.protos that Perfetto's schema
 * (as the built-in one knows it) also defines: fine when they keep every
 * field or value of it (a copy of Perfetto's schema, the same version or a
 * newer one); warned when they do not.
 */
static void check_reused(const tc_ctx *ctx, const tc_file_proto *file, const char *scope,
                         tc_msg_proto *const *msgs, size_t n_msgs, Google__Protobuf__EnumDescriptorProto *const *enums,
                         size_t n_enums) {
    const tc_msg_proto *ref_msg;
    const tc_enum_proto *ref_enum;
    for (size_t i = 0; i < n_enums; i++) {
        char *full = tc_sprintf("%s.%s", scope, enums[i]->name);
        const Google__Protobuf__EnumValueDescriptorProto *v;
        if (tc_builtin_find(ctx, full, &ref_msg, &ref_enum) && ref_enum && (v = first_value_not_kept(ref_enum, enums[i])))
            tc_warn(file->name,
                    "enum %s has the full name of an enum of Perfetto's schema but lacks its value %s = %d: the "
                    "trace processor refuses a trace that describes it differently; use a package of your own",
                    full, v->name, (int)v->number);
        free(full);
    }
    for (size_t i = 0; i < n_msgs; i++) {
        char *full = tc_sprintf("%s.%s", scope, msgs[i]->name);
        const tc_field_proto *f;
        if (tc_builtin_find(ctx, full, &ref_msg, &ref_enum) && ref_msg && (f = first_field_not_kept(ref_msg, msgs[i])))
            tc_warn(file->name,
                    "message %s has the full name of a message of Perfetto's schema but not its field %d (%s %s): "
                    "the trace processor refuses a trace that describes it differently (\"Field ... is "
                    "re-introduced with different type\"); use a package of your own",
                    full, (int)f->number, f->type_name ? f->type_name + (f->type_name[0] == '.') : type_word_any(f),
                    f->name);
        else
            check_reused(ctx, file, full, msgs[i]->nested_type, msgs[i]->n_nested_type, msgs[i]->enum_type,
                         msgs[i]->n_enum_type);
        free(full);
    }
}

void tc_warn_file(const tc_ctx *ctx, const tc_file_proto *file) {
    if (tc_is_perfetto_schema(ctx, file)) return;
    size_t cap = ctx->index.count + 1, n = 0;
    const tc_type **seen = calloc(cap, sizeof *seen);
    if (seen == NULL) exit(1);
    const char *pkg = file->package ? file->package : "";
    check_extensions(ctx, file, pkg, file->extension, file->n_extension, seen, &n, cap);
    check_messages_extensions(ctx, file, pkg, file->message_type, file->n_message_type, seen, &n, cap);
    free(seen);
    if (strcmp(pkg, "perfetto.protos") == 0) {
        check_reused(ctx, file, pkg, file->message_type, file->n_message_type, file->enum_type, file->n_enum_type);
    }
}
