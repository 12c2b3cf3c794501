/*
 * gen_message.c - writer structs, enums and field setters.
 *
 * Every writer type is a struct holding the tracec_msg it writes through;
 * every setter is a static inline function that appends one field with the
 * tag folded to a constant.  The setter shapes, by field kind:
 *
 *   scalar, singular or repeated  void W_set_f(W *m, T value)            (repeated: appends one;
 *                                                                         enums: int32_t value)
 *   packed repeated scalar        void W_set_f(W *m, const T *values, size_t count)
 *   string                        void W_set_f(W *m, const char *data, size_t size)
 *                                 void W_set_cstr_f(W *m, const char *value)
 *   bytes                         void W_set_f(W *m, const void *data, size_t size)
 *   message / group               void W_begin_f(W *m, C *child), W_end_f(W *m, C *child)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define T(x) GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__TYPE__TYPE_##x

const char *tc_msg_member(const tc_type *t) { return t && t->is_wrapper ? "base.msg" : "msg"; }

bool tc_field_deprecated(const tc_field_proto *f) {
    return f->options && f->options->has_deprecated && f->options->deprecated;
}

static bool is_scalar_numeric(const tc_field_proto *f) {
    switch (f->type) {
        case T(STRING):
        case T(BYTES):
        case T(MESSAGE):
        case T(GROUP):
            return false;
        default:
            return true;
    }
}

bool tc_field_is_packed(const tc_file_proto *file, const tc_field_proto *f) {
    if (f->label != GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED) return false;
    if (!is_scalar_numeric(f)) return false;
    if (f->options && f->options->has_packed) return f->options->packed;
    return file->syntax && strcmp(file->syntax, "proto3") == 0;
}

static const char *label_name(const tc_field_proto *f) {
    switch (f->label) {
        case GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED:
            return "repeated";
        case GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REQUIRED:
            return "required";
        default:
            return "optional";
    }
}

static const char *type_name(const tc_field_proto *f) {
    switch (f->type) {
        case T(DOUBLE): return "double";
        case T(FLOAT): return "float";
        case T(INT64): return "int64";
        case T(UINT64): return "uint64";
        case T(INT32): return "int32";
        case T(FIXED64): return "fixed64";
        case T(FIXED32): return "fixed32";
        case T(BOOL): return "bool";
        case T(STRING): return "string";
        case T(GROUP): return "group";
        case T(MESSAGE): return "message";
        case T(BYTES): return "bytes";
        case T(UINT32): return "uint32";
        case T(ENUM): return "enum";
        case T(SFIXED32): return "sfixed32";
        case T(SFIXED64): return "sfixed64";
        case T(SINT32): return "sint32";
        case T(SINT64): return "sint64";
        default: return "?";
    }
}

/* The C parameter type of a scalar and the put call that writes `value`. */
typedef struct scalar_shape {
    const char *ctype;
    const char *put;        /* tracec_msg_put_X */
    const char *wire;       /* TRACEC_WIRE_X */
    const char *conv;       /* expression of `value` */
    const char *packed;     /* tracec_msg_put_packed_X */
    const char *packed_ctype;
    const char *packed_cast; /* cast of `values` for the packed call ("" if none) */
} scalar_shape;

static scalar_shape shape_of(const tc_field_proto *f) {
    scalar_shape s = {0};
    switch (f->type) {
        case T(DOUBLE):
            s = (scalar_shape){"double", "tracec_msg_put_fixed64", "TRACEC_WIRE_FIXED64",
                               "tracec_double_bits(value)", "double", "double", ""};
            break;
        case T(FLOAT):
            s = (scalar_shape){"float", "tracec_msg_put_fixed32", "TRACEC_WIRE_FIXED32",
                               "tracec_float_bits(value)", "float", "float", ""};
            break;
        case T(INT64):
            s = (scalar_shape){"int64_t", "tracec_msg_put_varint", "TRACEC_WIRE_VARINT",
                               "(uint64_t)value", "int64", "int64_t", ""};
            break;
        case T(UINT64):
            s = (scalar_shape){"uint64_t", "tracec_msg_put_varint", "TRACEC_WIRE_VARINT", "value",
                               "uint64", "uint64_t", ""};
            break;
        case T(INT32):
            s = (scalar_shape){"int32_t", "tracec_msg_put_int32", "TRACEC_WIRE_VARINT", "value",
                               "int32", "int32_t", ""};
            break;
        case T(FIXED64):
            s = (scalar_shape){"uint64_t", "tracec_msg_put_fixed64", "TRACEC_WIRE_FIXED64", "value",
                               "fixed64", "uint64_t", ""};
            break;
        case T(FIXED32):
            s = (scalar_shape){"uint32_t", "tracec_msg_put_fixed32", "TRACEC_WIRE_FIXED32", "value",
                               "fixed32", "uint32_t", ""};
            break;
        case T(BOOL):
            s = (scalar_shape){"bool", "tracec_msg_put_varint32", "TRACEC_WIRE_VARINT",
                               "value ? 1u : 0u", "bool", "bool", ""};
            break;
        case T(UINT32):
            s = (scalar_shape){"uint32_t", "tracec_msg_put_varint32", "TRACEC_WIRE_VARINT", "value",
                               "uint32", "uint32_t", ""};
            break;
        case T(ENUM):
            /* int32_t, not the C enum: an open enum's unknown values and -fshort-enums ABIs keep every value. */
            s = (scalar_shape){"int32_t", "tracec_msg_put_int32", "TRACEC_WIRE_VARINT", "value", "int32",
                               "int32_t", ""};
            break;
        case T(SFIXED32):
            s = (scalar_shape){"int32_t", "tracec_msg_put_fixed32", "TRACEC_WIRE_FIXED32",
                               "(uint32_t)value", "fixed32", "int32_t", "(const uint32_t *)"};
            break;
        case T(SFIXED64):
            s = (scalar_shape){"int64_t", "tracec_msg_put_fixed64", "TRACEC_WIRE_FIXED64",
                               "(uint64_t)value", "fixed64", "int64_t", "(const uint64_t *)"};
            break;
        case T(SINT32):
            s = (scalar_shape){"int32_t", "tracec_msg_put_varint32", "TRACEC_WIRE_VARINT",
                               "tracec_zigzag32(value)", "sint32", "int32_t", ""};
            break;
        case T(SINT64):
            s = (scalar_shape){"int64_t", "tracec_msg_put_varint", "TRACEC_WIRE_VARINT",
                               "tracec_zigzag64(value)", "sint64", "int64_t", ""};
            break;
        default:
            break;
    }
    return s;
}

/*
 * One definition per full name.  Messages and enums of Perfetto's packages
 * (perfetto.protos, google.protobuf) may be generated twice into one
 * translation unit: libtracec's built-in copy (which tracec/track_event.h
 * includes) and the user's own copy of Perfetto's schema.  Their definitions
 * are guarded by macros named after what they define, so whichever header
 * comes first defines a type, and each field's constant and setters are
 * guarded by the field's name, number and kind: a newer schema's fields get
 * their setters whichever header comes first.  (A field that has one name
 * but another number or kind in the two copies is defined twice: a
 * compile error rather than a silent choice.)
 */
bool tc_type_shared(const tc_type *t) {
    return !t->is_wrapper && (strncmp(t->full_name, "perfetto.protos.", 16) == 0 ||
                              strncmp(t->full_name, "google.protobuf.", 16) == 0);
}

static void guard_open(tc_printer *p, const char *macro) {
    tc_emit(p, "#ifndef $m$\n#define $m$\n", "m", macro, NULL);
}

static void guard_close(tc_printer *p, const char *macro) { tc_emit(p, "#endif  /* $m$ */\n", "m", macro, NULL); }

static char *type_guard(const tc_type *t) { return tc_sprintf("TRACEC_I_T_%s", t->c_name); }

static size_t trailing_underscores(const char *s) {
    size_t n = strlen(s), k = 0;
    while (k < n && s[n - 1 - k] == '_') k++;
    return k;
}

static void gen_field_body(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const char *writer,
                           const char *msg, const tc_field_proto *f, const char *field, bool constant,
                           const char *guard);

void tc_gen_field(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const char *writer, const char *msg,
                  const tc_field_proto *f, const char *field, bool constant, const char *guard) {
    gen_field_body(ctx, p, file, writer, msg, f, field, constant, guard);
    if (guard) guard_close(p, guard);
}

static void gen_field_body(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const char *writer,
                           const char *msg, const tc_field_proto *f, const char *field, bool constant,
                           const char *guard) {
    char num[16];
    snprintf(num, sizeof num, "%d", (int)f->number);
    const char *dep = tc_field_deprecated(f) ? "TRACEC_I_DEPRECATED " : "";
    /* A renamed field has more trailing '_' than its proto name (names.c). */
    bool renamed = trailing_underscores(field) > trailing_underscores(f->name);
    char *what = tc_sprintf("%s %s %s = %d%s%s%s%s", label_name(f),
                            f->type_name ? f->type_name + (f->type_name[0] == '.') : type_name(f),
                            f->name, (int)f->number, tc_field_is_packed(file, f) ? " [packed]" : "",
                            tc_field_deprecated(f) ? " [deprecated]" : "",
                            renamed ? "; setters named after " : "", renamed ? field : "");

    tc_emit(p, "\n/* $what$ */\n", "what", what, NULL);
    if (guard) guard_open(p, guard);
    if (constant) tc_emit(p, "enum { $writer$_$field$_field_number = $num$ };\n", "writer", writer, "field", field, "num", num, NULL);

    if (f->type == T(MESSAGE) || f->type == T(GROUP)) {
        const tc_type *child = tc_index_find(ctx, f->type_name);
        if (child == NULL) {
            tc_error(ctx, file->name, "field %s: type %s not found in the request", f->name,
                     f->type_name);
            free(what);
            return;
        }
        if (child->kind != TC_MESSAGE) {
            tc_error(ctx, file->name, "field %s: type %s is an enum, not a message", f->name, f->type_name);
            free(what);
            return;
        }
        const char *child_type = child->c_name;
        const char *child_msg = tc_msg_member(child);
        if (f->type == T(MESSAGE)) {
            tc_emit(p,
                    "static inline $dep$void $writer$_begin_$field$($writer$ *m, $child_type$ *child) {\n"
                    "    tracec_msg_begin_nested($msg$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), &child->$child_msg$);\n"
                    "}\n"
                    "static inline $dep$void $writer$_end_$field$($writer$ *m, $child_type$ *child) {\n"
                    "    tracec_msg_end_nested($msg$, &child->$child_msg$);\n"
                    "}\n",
                    "dep", dep, "writer", writer, "field", field, "child_type", child_type, "msg", msg, "child_msg", child_msg, "num", num, NULL);
        } else {
            tc_emit(p,
                    "static inline $dep$void $writer$_begin_$field$($writer$ *m, $child_type$ *child) {\n"
                    "    tracec_msg_begin_group($msg$, $num$, &child->$child_msg$);\n"
                    "}\n"
                    "static inline $dep$void $writer$_end_$field$($writer$ *m, $child_type$ *child) {\n"
                    "    tracec_msg_end_group($msg$, $num$, &child->$child_msg$);\n"
                    "}\n",
                    "dep", dep, "writer", writer, "field", field, "child_type", child_type, "msg", msg, "child_msg", child_msg, "num", num, NULL);
        }
    } else if (f->type == T(STRING)) {
        tc_emit(p,
                "static inline $dep$void $writer$_set_$field$($writer$ *m, const char *data, size_t size) {\n"
                "    tracec_msg_put_bytes($msg$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), data, size);\n"
                "}\n"
                "static inline $dep$void $writer$_set_cstr_$field$($writer$ *m, const char *value) {\n"
                "    tracec_msg_put_cstr($msg$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), value);\n"
                "}\n",
                "dep", dep, "writer", writer, "field", field, "msg", msg, "num", num, NULL);
    } else if (f->type == T(BYTES)) {
        tc_emit(p,
                "static inline $dep$void $writer$_set_$field$($writer$ *m, const void *data, size_t size) {\n"
                "    tracec_msg_put_bytes($msg$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), data, size);\n"
                "}\n",
                "dep", dep, "writer", writer, "field", field, "msg", msg, "num", num, NULL);
    } else {
        scalar_shape s = shape_of(f);
        const tc_type *e = NULL;
        if (f->type == T(ENUM)) {
            e = tc_index_find(ctx, f->type_name);
            if (e == NULL) {
                tc_error(ctx, file->name, "field %s: enum %s not found in the request", f->name,
                         f->type_name);
                free(what);
                return;
            }
            if (e->kind != TC_ENUM) {
                tc_error(ctx, file->name, "field %s: type %s is a message, not an enum", f->name, f->type_name);
                free(what);
                return;
            }
        }
        if (tc_field_is_packed(file, f)) {
            tc_emit(p,
                    "static inline $dep$void $writer$_set_$field$($writer$ *m, const $pt$ *values, size_t count) {\n"
                    "    tracec_msg_put_packed_$packed$($msg$, TRACEC_TAG($num$, TRACEC_WIRE_LEN), $cast$values, count);\n"
                    "}\n",
                    "dep", dep, "writer", writer, "field", field, "msg", msg, "num", num, "pt", s.packed_ctype, "packed",
                    s.packed, "cast", s.packed_cast, NULL);
        } else {
            tc_emit(p,
                    "static inline $dep$void $writer$_set_$field$($writer$ *m, $ctype$ value) {\n"
                    "    $put$($msg$, TRACEC_TAG($num$, $wire$), $conv$);\n"
                    "}\n",
                    "dep", dep, "writer", writer, "field", field, "msg", msg, "num", num, "ctype", s.ctype, "put", s.put,
                    "wire", s.wire, "conv", s.conv, NULL);
        }
    }
    free(what);
}

/* Whether libtracec's definition `ref` of this enum has value `v` (NULL `ref`: there is none to compare). */
static bool builtin_has_value(const tc_enum_proto *ref, const Google__Protobuf__EnumValueDescriptorProto *v) {
    if (ref == NULL) return true;
    for (size_t i = 0; i < ref->n_value; i++)
        if (ref->value[i]->number == v->number && strcmp(ref->value[i]->name, v->name) == 0) return true;
    return false;
}

static void enum_value(tc_printer *p, const tc_type *t, size_t i, const char *fmt) {
    const Google__Protobuf__EnumValueDescriptorProto *v = t->enm->value[i];
    char num[24];
    if (v->number == INT32_MIN)
        snprintf(num, sizeof num, "(-2147483647 - 1)");
    else
        snprintf(num, sizeof num, "%d", (int)v->number);
    bool dep = v->options && v->options->has_deprecated && v->options->deprecated;
    char *name = tc_enum_value_c(t, i);
    tc_emit(p, fmt, "name", name, "dep", dep ? " TRACEC_I_DEPRECATED" : "", "num", num, NULL);
    free(name);
}

/*
 * An enum of Perfetto's packages is guarded like a message (one definition
 * per full name), and each of its values is marked with a macro where the
 * enum is defined.  Values libtracec's own copy lacks (the user's schema is
 * newer) are also declared on their own, each under its macro, when another
 * copy defined the enum first, so every constant of the user's schema exists
 * in either include order.
 */
void tc_gen_enum(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    const tc_enum_proto *e = t->enm;
    char *guard = tc_type_shared(t) ? type_guard(t) : NULL;
    const tc_msg_proto *ref_msg = NULL;
    const tc_enum_proto *ref = NULL;
    if (guard) tc_builtin_find(ctx, t->full_name, &ref_msg, &ref);
    size_t n_newer = 0;
    for (size_t i = 0; ref && i < e->n_value; i++) n_newer += !builtin_has_value(ref, e->value[i]);
    tc_emit(p, "\n/* enum $full$$dep$ */\n", "full", t->full_name, "dep", t->deprecated ? " [deprecated]" : "", NULL);
    if (guard) guard_open(p, guard);
    tc_emit(p, "typedef enum $attr$$enum$ {\n", "enum", t->c_name, "attr", t->deprecated ? "TRACEC_I_DEPRECATED " : "",
            NULL);
    tc_indent(p);
    for (size_t i = 0; i < e->n_value; i++) enum_value(p, t, i, "$name$$dep$ = $num$,\n");
    tc_outdent(p);
    tc_emit(p, "} $enum$$tattr$;\n", "enum", t->c_name, "tattr", t->deprecated ? " TRACEC_I_DEPRECATED" : "", NULL);
    for (size_t i = 0; guard && i < e->n_value; i++) enum_value(p, t, i, "#define TRACEC_I_V_$name$\n");
    if (n_newer > 0) {
        tc_emit(p, "#else  /* values newer than libtracec's copy of $full$ */\n", "full", t->full_name, NULL);
        for (size_t i = 0; i < e->n_value; i++)
            if (!builtin_has_value(ref, e->value[i]))
                enum_value(p, t, i,
                           "#ifndef TRACEC_I_V_$name$\n#define TRACEC_I_V_$name$\nenum { $name$$dep$ = $num$ };\n#endif\n");
    }
    if (guard) guard_close(p, guard);
    free(guard);
}

void tc_gen_struct(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    (void)ctx;
    if (t->is_wrapper) return;
    char *guard = tc_type_shared(t) ? type_guard(t) : NULL;
    tc_emit(p, "\n/* Writer of message $full$$dep$. */\n", "full", t->full_name, "dep",
            t->deprecated ? " [deprecated]" : "", NULL);
    if (guard) guard_open(p, guard);
    tc_emit(p,
            "typedef struct $attr$$writer$ {\n"
            "    tracec_msg msg;\n"
            "} $writer$$tattr$;\n",
            "writer", t->c_name, "attr", t->deprecated ? "TRACEC_I_DEPRECATED " : "", "tattr",
            t->deprecated ? " TRACEC_I_DEPRECATED" : "", NULL);
    if (guard) guard_close(p, guard);
    free(guard);
}

void tc_gen_message_functions(tc_ctx *ctx, tc_printer *p, const tc_type *t) {
    if (t->is_wrapper) return;
    const tc_msg_proto *m = t->msg;
    tc_emit(p, "\n/* ---- $full$ ---- */\n", "full", t->full_name, NULL);
    bool shared = tc_type_shared(t);
    for (size_t i = 0; i < m->n_field && ctx->error == NULL; i++) {
        const tc_field_proto *f = m->field[i];
        char *guard = shared ? tc_sprintf("TRACEC_I_F_%s_%s_%d_%s%s", t->c_name, t->field_ident[i], (int)f->number,
                                          type_name(f), tc_field_is_packed(t->file, f) ? "_packed" : "")
                             : NULL;
        tc_gen_field(ctx, p, t->file, t->c_name, "&m->msg", f, t->field_ident[i], true, guard);
        free(guard);
    }
}
