/*
 * tracec/descpool.h - a pool of protobuf descriptors, gathered from anywhere.
 *
 * The text tools (textproto parser, binary decoder, `tracec`, the test
 * assertions) look message types, fields, enums and extensions up here.  A
 * pool is filled, in any combination, from:
 *   - serialized FileDescriptorSets (files written by
 *     `protoc --include_imports --descriptor_set_out=F`, or bytes in memory);
 *   - .proto files, compiled to a descriptor set by running protoc
 *     (tracec_pool_add_proto_files(), tracec/protoc.h in tracec_decode: the
 *     pool itself never runs a program);
 *   - the compile-time registry of generated code (tracec/registry.h);
 *   - tracec's built-in Perfetto-compatible schema;
 *   - ExtensionDescriptor packets found in a trace being decoded.
 *
 * Precedence: the first definition of a full name wins.  Add the sets the
 * user named first, then the built-in schema (so a user's newer Perfetto
 * schema replaces our subset); sets added later that define a name again
 * are skipped for that name, except that extensions are always merged in;
 * for an extension's number too, the first extension added with that
 * extendee and number wins.  Clashing extensions are recorded as conflicts
 * (tracec_pool_conflict_count()).
 *
 * Names are resolved lazily: a set may refer to types defined in another set
 * (an extension set refers to `.perfetto.protos.TrackEvent` without bundling
 * it).  A reference that cannot be resolved is reported by
 * tracec_pool_check() and by the lookups that need it.
 *
 * Ownership: the pool owns every def it returns; defs live as long as the
 * pool.  A pool is not thread-safe while it is being filled; lookups on a
 * pool that is no longer being filled may run on several threads.
 */
#ifndef TRACEC_DESCPOOL_H
#define TRACEC_DESCPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracec/status.h"
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracec_pool tracec_pool;
typedef struct tracec_msgdef tracec_msgdef;
typedef struct tracec_fielddef tracec_fielddef;
typedef struct tracec_enumdef tracec_enumdef;

/* Field types, numbered as google.protobuf.FieldDescriptorProto.Type. */
typedef enum tracec_field_type {
    TRACEC_TYPE_DOUBLE = 1,
    TRACEC_TYPE_FLOAT = 2,
    TRACEC_TYPE_INT64 = 3,
    TRACEC_TYPE_UINT64 = 4,
    TRACEC_TYPE_INT32 = 5,
    TRACEC_TYPE_FIXED64 = 6,
    TRACEC_TYPE_FIXED32 = 7,
    TRACEC_TYPE_BOOL = 8,
    TRACEC_TYPE_STRING = 9,
    TRACEC_TYPE_GROUP = 10,
    TRACEC_TYPE_MESSAGE = 11,
    TRACEC_TYPE_BYTES = 12,
    TRACEC_TYPE_UINT32 = 13,
    TRACEC_TYPE_ENUM = 14,
    TRACEC_TYPE_SFIXED32 = 15,
    TRACEC_TYPE_SFIXED64 = 16,
    TRACEC_TYPE_SINT32 = 17,
    TRACEC_TYPE_SINT64 = 18
} tracec_field_type;

/* ---- Building a pool ---------------------------------------------------- */

tracec_pool *tracec_pool_new(void); /* NULL only when out of memory */
void tracec_pool_free(tracec_pool *pool); /* NULL is fine */

/*
 * Adds a serialized FileDescriptorSet.  `origin` names it in error messages
 * (a file path, "<registry>", "<trace packet 3>").  CORRUPT_DATA if the bytes
 * are not a FileDescriptorSet.  The bytes are copied.
 */
tracec_status_t tracec_pool_add_set(tracec_pool *pool, const void *data, size_t size,
                                    const char *origin, tracec_error *err) TRACEC_I_WARN_UNUSED;

/* Reads and adds a FileDescriptorSet file (IO_ERROR if it cannot be read). */
tracec_status_t tracec_pool_add_set_file(tracec_pool *pool, const char *path, tracec_error *err) TRACEC_I_WARN_UNUSED;

/* Adds every descriptor of the compile-time registry (tracec/registry.h). */
tracec_status_t tracec_pool_add_registry(tracec_pool *pool, tracec_error *err);

/* Adds tracec's built-in Perfetto-compatible schema (protos/). */
tracec_status_t tracec_pool_add_builtin_schema(tracec_pool *pool, tracec_error *err) TRACEC_I_WARN_UNUSED;

/* Checks that every type reference resolves; the first that does not is reported. */
tracec_status_t tracec_pool_check(const tracec_pool *pool, tracec_error *err) TRACEC_I_WARN_UNUSED;

/*
 * Conflicting extension definitions met while filling the pool, in the
 * order found, each once (adding the same set again adds none):
 *   - two extensions of one message with the same number and different
 *     full names or types ("extensions A (...) and B (...) have the same
 *     number; A is used");
 *   - one extension full name defined twice with different definitions
 *     (number, type, label or extendee).
 * The first definition added wins (see Precedence above): the pool keeps
 * working, and the text names the sources of both.  `tracec` prints each on
 * standard error; tracec/testing.h adds them to a failure's report.
 */
size_t tracec_pool_conflict_count(const tracec_pool *pool);
const char *tracec_pool_conflict(const tracec_pool *pool, size_t i); /* NULL when i is out of range */

/* "int64", "string", "message", ...: the proto name of a field type. */
const char *tracec_field_type_name(tracec_field_type t);

/* ---- Lookups (full names without a leading dot: "perfetto.protos.TrackEvent") ---- */

const tracec_msgdef *tracec_pool_find_message(const tracec_pool *pool, const char *full_name);
const tracec_enumdef *tracec_pool_find_enum(const tracec_pool *pool, const char *full_name);
/* An extension by its full name ("my_app.MyEvent.custom_string"). */
const tracec_fielddef *tracec_pool_find_extension(const tracec_pool *pool, const char *full_name);
/* The extension of `extendee` with field number `number`, or NULL. */
const tracec_fielddef *tracec_pool_find_extension_by_number(const tracec_pool *pool,
                                                            const tracec_msgdef *extendee,
                                                            uint32_t number);
/* All extensions of `extendee`: index 0 .. count-1. */
size_t tracec_pool_extension_count(const tracec_pool *pool, const tracec_msgdef *extendee);
const tracec_fielddef *tracec_pool_extension_at(const tracec_pool *pool,
                                                const tracec_msgdef *extendee, size_t i);
/* All messages of the pool, in the order they were added: index 0 .. count-1. */
size_t tracec_pool_message_count(const tracec_pool *pool);
const tracec_msgdef *tracec_pool_message_at(const tracec_pool *pool, size_t i);

/* ---- Messages ----------------------------------------------------------- */

const char *tracec_msgdef_full_name(const tracec_msgdef *m);
const char *tracec_msgdef_name(const tracec_msgdef *m); /* short name */
const char *tracec_msgdef_file(const tracec_msgdef *m); /* .proto file that defines it */
bool tracec_msgdef_is_proto3(const tracec_msgdef *m);
bool tracec_msgdef_is_map_entry(const tracec_msgdef *m);
/* Fields in declaration order. */
size_t tracec_msgdef_field_count(const tracec_msgdef *m);
const tracec_fielddef *tracec_msgdef_field(const tracec_msgdef *m, size_t i);
const tracec_fielddef *tracec_msgdef_field_by_name(const tracec_msgdef *m, const char *name);
const tracec_fielddef *tracec_msgdef_field_by_number(const tracec_msgdef *m, uint32_t number);
/* Whether `number` lies in one of the message's extension ranges. */
bool tracec_msgdef_in_extension_range(const tracec_msgdef *m, uint32_t number);
/* Oneofs: count, name, and the oneof a field belongs to (-1 if none; synthetic proto3 optional oneofs excluded). */
size_t tracec_msgdef_oneof_count(const tracec_msgdef *m);
const char *tracec_msgdef_oneof_name(const tracec_msgdef *m, size_t i);

/* ---- Fields (and extensions) -------------------------------------------- */

const char *tracec_fielddef_name(const tracec_fielddef *f);      /* short name */
const char *tracec_fielddef_full_name(const tracec_fielddef *f); /* package-qualified */
uint32_t tracec_fielddef_number(const tracec_fielddef *f);
tracec_field_type tracec_fielddef_type(const tracec_fielddef *f);
bool tracec_fielddef_is_repeated(const tracec_fielddef *f);
bool tracec_fielddef_is_packed(const tracec_fielddef *f); /* [packed=true] or proto3 default */
bool tracec_fielddef_is_extension(const tracec_fielddef *f);
int tracec_fielddef_oneof_index(const tracec_fielddef *f);
const tracec_msgdef *tracec_fielddef_containing(const tracec_fielddef *f); /* extendee for extensions */
/* Message / group type, or NULL for other types (NULL also if unresolved). */
const tracec_msgdef *tracec_fielddef_message(const tracec_fielddef *f);
const tracec_enumdef *tracec_fielddef_enum(const tracec_fielddef *f);
/* For extensions: the scope they were declared in ("my_app.MyEvent" or the package). */
const char *tracec_fielddef_scope(const tracec_fielddef *f);
/*
 * Whether the field tracks presence (has a "has" bit): true for proto2
 * optional and required fields, message and group fields, oneof members,
 * extensions and proto3 `optional` fields; false for proto3 scalars without
 * `optional` (implicit presence: the default value is not distinguished from
 * absence, and is not serialized or printed) and for repeated fields.
 */
bool tracec_fielddef_has_presence(const tracec_fielddef *f);

/* ---- Enums -------------------------------------------------------------- */

const char *tracec_enumdef_full_name(const tracec_enumdef *e);
bool tracec_enumdef_is_closed(const tracec_enumdef *e); /* proto2 enums are closed */
size_t tracec_enumdef_value_count(const tracec_enumdef *e);
const char *tracec_enumdef_value_name(const tracec_enumdef *e, size_t i);
int32_t tracec_enumdef_value_number(const tracec_enumdef *e, size_t i);
/* Lookups; `found` receives whether it exists.  By number returns the first name declared. */
const char *tracec_enumdef_name_of(const tracec_enumdef *e, int32_t number);
bool tracec_enumdef_number_of(const tracec_enumdef *e, const char *name, int32_t *number);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_DESCPOOL_H */
