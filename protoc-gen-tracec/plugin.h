/*
 * plugin.h - shared state of protoc-gen-tracec.
 *
 * All generator state lives in one tc_ctx passed down explicitly.  The
 * generator is split by concept:
 *   main.c           stdin to tc_run to stdout, --help and --version
 *   run.c            one run in-process: parse options, validate, generate, respond
 *   validate.c       the request's shape, checked before anything else reads it
 *   printer.c        a growable text buffer with $var$ templates and indentation
 *   names.c          every C name the generator emits is built here
 *   index.c          full proto name -> type, for messages and enums of all files
 *   schema.c         which files are Perfetto's schema; where its messages are declared
 *   warn.c           warnings on stderr: schemas the trace processor reads badly
 *   gen_file.c       one .h and one .c per .proto file
 *   gen_message.c    writer structs, field setters, enums
 *   gen_extension.c  wrapper writers and file-scope extensions
 *   gen_descriptor.c the embedded FileDescriptorSet and its registration
 */
#ifndef TRACEC_PLUGIN_H
#define TRACEC_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "google/protobuf/compiler/plugin.pb-c.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "tracec/version.h"

typedef Google__Protobuf__FileDescriptorProto tc_file_proto;
typedef Google__Protobuf__DescriptorProto tc_msg_proto;
typedef Google__Protobuf__FieldDescriptorProto tc_field_proto;
typedef Google__Protobuf__EnumDescriptorProto tc_enum_proto;

/* The version and generated-code ABI, from tracec/version.h (the one place they are set). */
#define TC_VERSION TRACEC_VERSION_STRING
#define TC_ABI_STR_(x) #x
#define TC_ABI_STR(x) TC_ABI_STR_(x)
#define TC_ABI_VERSION TC_ABI_STR(TRACEC_GENERATED_ABI_VERSION) /* as a string: "1" */

/*
 * One plugin run (run.c): decodes the serialized CodeGeneratorRequest `req`
 * and stores the serialized CodeGeneratorResponse in *resp (malloc'd, the
 * caller frees it) and its size in *resp_size.  Every problem of the request
 * is reported through the response's `error`.  False (and *resp NULL) only
 * when `req` is not a CodeGeneratorRequest at all.  Frees everything else it
 * allocates; exits only when out of memory.
 */
bool tc_run(const uint8_t *req, size_t size, uint8_t **resp, size_t *resp_size);

/* ---- printer.c ---------------------------------------------------------- */

typedef struct tc_printer {
    char *buf;
    size_t len;
    size_t cap;
    int indent;      /* current indentation, in levels of 4 spaces */
    bool line_start; /* the next character starts a line */
} tc_printer;

void tc_printer_init(tc_printer *p);
void tc_printer_free(tc_printer *p);
/* Takes the text (NUL-terminated, caller frees) and resets the printer. */
char *tc_printer_take(tc_printer *p);
/*
 * Appends `tmpl`, replacing each $name$ by the value of the matching
 * ("name", value) pair of the NULL-terminated variadic list.  Each line is
 * indented by the current level.  An unknown $name$ aborts (a generator bug).
 */
void tc_emit(tc_printer *p, const char *tmpl, ...);
void tc_indent(tc_printer *p);
void tc_outdent(tc_printer *p);

/* ---- small helpers (names.c) -------------------------------------------- */

char *tc_strdup(const char *s);
char *tc_strcat3(const char *a, const char *b, const char *c);
char *tc_sprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/*
 * `s` for an error message (malloc'd): bytes outside printable ASCII, '"' and
 * '\\' as octal escapes, as protoc prints strings ("\\377"), so the `error`
 * of the response is valid UTF-8 whatever the request held.
 */
char *tc_escape(const char *s);
/* True when `s` is valid UTF-8 (protoc's file names are). */
bool tc_is_utf8(const char *s);
/* "a.b.C" -> "a_b_C" (dots become underscores). */
char *tc_c_name(const char *full_name);
/* "dir/my-file.proto" -> "dir_my_file_proto" (a C identifier). */
char *tc_file_ident(const char *proto_path);
/* "dir/x.proto" -> "dir/x" + suffix. */
char *tc_output_name(const char *proto_path, const char *suffix);
/* Include guard for a generated header. */
char *tc_guard(const char *prefix, const char *proto_path);
/*
 * True when `id` cannot be used as a generated C identifier as it is: a C11
 * or C++17 keyword, a standard macro or typedef a generated header sees
 * (NULL, bool, uint32_t, ...), a parameter name of the generated setters, or
 * a type name of the runtime (tracec_msg, ...).
 */
bool tc_is_reserved(const char *id);
/*
 * Paths of the files whose generated headers libtracec ships (perfetto/,
 * google/protobuf/): include_prefix does not apply to their headers.
 */
bool tc_is_builtin_path(const char *proto_path);

/* A set of generated C identifiers with who owns each (for collision checks). */
typedef struct tc_symtab {
    char **keys;
    char **owners;
    size_t cap;
    size_t count;
} tc_symtab;

/* The owner of `name` if it is taken; otherwise NULL. */
const char *tc_sym_owner(const tc_symtab *s, const char *name);
/* Takes `name` for `owner` (both copied); the name must be free. */
void tc_sym_add(tc_symtab *s, const char *name, const char *owner);
void tc_sym_free(tc_symtab *s);

/* ---- index.c ------------------------------------------------------------ */

typedef enum tc_kind { TC_MESSAGE, TC_ENUM } tc_kind;

typedef struct tc_type {
    tc_kind kind;
    char *full_name; /* "perfetto.protos.TrackEvent" (no leading dot) */
    char *c_name;    /* "perfetto_protos_TrackEvent" */
    char *scope_c;   /* C prefix of the enclosing scope: enum values live there */
    const tc_msg_proto *msg;
    const tc_enum_proto *enm;
    const tc_file_proto *file;
    /* Wrapper messages (extend blocks inside): the single extendee. */
    const struct tc_type *extendee;
    bool is_wrapper;
    /*
     * The name part of each setter (names.c, tc_resolve_names): the field's
     * name, with '_' appended while a generated name collides.  Messages:
     * one per msg->field.  Wrappers: base_ident per extendee field, ext_ident
     * per msg->extension.  Each array is NULL-terminated.
     */
    char **field_ident;
    char **base_ident;
    char **ext_ident;
    bool deprecated; /* option deprecated = true on the message or enum */
} tc_type;

typedef struct tc_index {
    tc_type **slots; /* open addressing on full_name */
    size_t cap;
    size_t count;
} tc_index;

/* ---- the context -------------------------------------------------------- */

typedef enum tc_descriptors { TC_DESC_NONE, TC_DESC_FILE, TC_DESC_DEPS } tc_descriptors;

typedef struct tc_options {
    bool angle_includes;       /* include_style=angle: #include <...> */
    char *include_prefix;      /* prepended to every generated include path */
    char *guard_prefix;        /* prefix of include guards */
    char *name_prefix;         /* prepended to C names from files outside the Perfetto schema */
    tc_descriptors descriptors;
} tc_options;

/* The C name part of an extension declared outside a wrapper, by field. */
typedef struct tc_scoped_ext {
    const tc_field_proto *field;
    char *ident;
} tc_scoped_ext;

typedef struct tc_ctx {
    const Google__Protobuf__Compiler__CodeGeneratorRequest *req;
    tc_options opt;
    tc_index index;
    tc_symtab syms;            /* every generated C identifier of the request */
    tc_scoped_ext *scoped;     /* extensions outside wrappers, in request order */
    size_t n_scoped;
    bool *schema;              /* per proto_file: part of Perfetto's schema (schema.c) */
    Google__Protobuf__FileDescriptorSet *builtin; /* libtracec's Perfetto schema (NULL if unreadable) */
    char **includes;           /* extra headers of the file being generated (deduplicated) */
    size_t n_includes;
    char *error; /* first error; generation stops when set */
} tc_ctx;

/* Records an error (the first one wins) in protoc's "file: message" form. */
void tc_error(tc_ctx *ctx, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * Checks what protoc guarantees and the generator relies on (validate.c):
 * names present and well-formed, types and labels known, field numbers in
 * range, imports present, no type defined twice, ...  False (and ctx->error
 * naming the file and the problem) on the first violation.
 */
bool tc_validate(tc_ctx *ctx);

bool tc_index_build(tc_ctx *ctx);
/*
 * Decides every setter name of the request (names.c): type and enum value
 * names must be unique (an error names both owners); a field whose setter
 * names are taken gets '_' appended to its name part.
 */
bool tc_resolve_names(tc_ctx *ctx);
/* The C name of value i of enum `t` (caller frees). */
char *tc_enum_value_c(const tc_type *t, size_t i);
/* The name part of extension `f` declared outside a wrapper. */
const char *tc_scoped_ident(const tc_ctx *ctx, const tc_field_proto *f);
/* C name prefix of `file`'s package: name_prefix (unless a schema file) + package, "_"-joined. */
char *tc_package_c(const tc_ctx *ctx, const tc_file_proto *file);
/* The C identifier of a file: name_prefix (unless a schema file) + the path's identifier. */
char *tc_file_c(const tc_ctx *ctx, const tc_file_proto *file, bool with_ext);
void tc_index_free(tc_index *index);
/* Looks up ".a.b.C" or "a.b.C". */
const tc_type *tc_index_find(const tc_ctx *ctx, const char *name);
const tc_file_proto *tc_find_file(const tc_ctx *ctx, const char *name);

/* ---- schema.c ----------------------------------------------------------- */

/* Decides ctx->schema, before the index is built (names depend on it). */
void tc_mark_schema(tc_ctx *ctx);
/*
 * True when `file` is part of Perfetto's schema: package perfetto.protos and
 * imported (directly or not) by the files that define TracePacket or
 * TrackEvent, or those files themselves; libtracec's built-in files; package
 * google.protobuf.  A decoder of Perfetto traces knows these, so they are not
 * embedded, and name_prefix does not apply to them.
 */
bool tc_is_perfetto_schema(const tc_ctx *ctx, const tc_file_proto *file);
/*
 * Whether code generated for `from` can use the writer of Perfetto message
 * `message` ("perfetto.protos.TracePacket"), and which header declares it:
 * *header is NULL when `from`'s imports declare it already, else the header
 * to include (malloc'd).  In order: `from`'s imports; the file of the request
 * that defines it (unless that file imports `from`); for the messages of
 * k_perfetto_files, the same path below the root of the Perfetto tree `from`
 * imports ("protos/" for protos/perfetto/trace/...; "" for the built-in
 * schema or when it imports none).  False when none applies.
 */
bool tc_perfetto_parent(const tc_ctx *ctx, const tc_file_proto *from, const char *message, char **header);

typedef bool (*tc_file_filter_fn)(const tc_ctx *ctx, const tc_file_proto *file);
/* Marks `file` and the imports it reaches through files `follow` accepts (NULL: all) in seen[]. */
void tc_mark_imports(const tc_ctx *ctx, const tc_file_proto *file, bool *seen, tc_file_filter_fn follow);
/* `file` and every file it imports, directly or not, as a calloc'd flag per proto_file. */
bool *tc_imports_of(const tc_ctx *ctx, const tc_file_proto *file);
/* True when `file` is flagged in `set` (one flag per proto_file). */
bool tc_file_in(const tc_ctx *ctx, const bool *set, const tc_file_proto *file);

/* ---- warn.c ------------------------------------------------------------- */

/*
 * Prints on standard error the warnings for `file` (a file to generate):
 * packed sint32/sint64/bool fields in TrackEvent extensions, and names of
 * Perfetto's schema redefined in package perfetto.protos.  Never an error.
 */
void tc_warn_file(const tc_ctx *ctx, const tc_file_proto *file);
/*
 * libtracec's Perfetto schema (ctx->builtin, embedded in the plugin): its
 * definition of "perfetto.protos.X" (nested names too), a message in *msg or
 * an enum in *enm; false when it has none.
 */
Google__Protobuf__FileDescriptorSet *tc_builtin_unpack(void);
bool tc_builtin_find(const tc_ctx *ctx, const char *full, const tc_msg_proto **msg, const tc_enum_proto **enm);

/* ---- generators --------------------------------------------------------- */

typedef struct tc_output {
    char *h_name, *h_text;
    char *c_name, *c_text;
} tc_output;

/* Generates the .h and .c of `file`; false (and ctx->error) on failure. */
bool tc_gen_file(tc_ctx *ctx, const tc_file_proto *file, tc_output *out);

/* gen_message.c */
void tc_gen_enum(tc_ctx *ctx, tc_printer *p, const tc_type *t);
void tc_gen_struct(tc_ctx *ctx, tc_printer *p, const tc_type *t);
void tc_gen_message_functions(tc_ctx *ctx, tc_printer *p, const tc_type *t);
/*
 * Emits the setters of `f` (of `file`) for writer type `writer_c`, named
 * `<writer_c>_set_<field_ident>` etc.; the generated functions take the
 * writer as `m` and reach its tracec_msg as `msg_expr` ("&m->msg",
 * "&m->base.msg").  `field_ident` is the setters' name part
 * (tc_type.field_ident / base_ident / ext_ident, tc_scoped_ident).
 * `constant`: also emit `<writer_c>_<field_ident>_field_number`.  A non-NULL
 * `guard` brackets the constant and the setters in #ifndef/#define `guard`
 * (fields of messages of Perfetto's packages: gen_message.c).
 */
void tc_gen_field(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, const char *writer_c,
                  const char *msg_expr, const tc_field_proto *f, const char *field_ident,
                  bool constant, const char *guard);
/* Whether `t` is a message or enum of Perfetto's packages, whose definitions carry guards. */
bool tc_type_shared(const tc_type *t);
/* How a writer type reaches its tracec_msg: "msg", or "base.msg" for wrappers. */
const char *tc_msg_member(const tc_type *t);
bool tc_field_is_packed(const tc_file_proto *file, const tc_field_proto *f);
bool tc_field_deprecated(const tc_field_proto *f);

/* gen_extension.c */
bool tc_check_wrappers(tc_ctx *ctx, const tc_file_proto *file);
void tc_gen_wrapper_struct(tc_ctx *ctx, tc_printer *p, const tc_type *t);
void tc_gen_wrapper_functions(tc_ctx *ctx, tc_printer *p, const tc_type *t);
void tc_gen_file_extensions(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file);
/* Adds the headers the wrappers of `file` need beyond its imports (built-in parents). */
void tc_gen_wrapper_includes(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file);
/* Adds a generated header (a path like "a/b.tracec.h") to the file's includes, once. */
void tc_include_add(tc_ctx *ctx, const char *header);

/* gen_descriptor.c */
void tc_gen_descriptor_decl(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file);
void tc_gen_descriptor_def(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file);

/* Calls fn for every message type of `file`, nested ones included, parents first. */
typedef void (*tc_msg_visit_fn)(tc_ctx *ctx, tc_printer *p, const tc_type *t);
void tc_for_each_message(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, tc_msg_visit_fn fn);
void tc_for_each_enum(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file, tc_msg_visit_fn fn);

#endif /* TRACEC_PLUGIN_H */
