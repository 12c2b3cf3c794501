/*
 * tracec/protoc.h - .proto files into a descriptor pool, by running protoc.
 *
 * The pool (tracec/descpool.h, tracec_schema) reads descriptor sets only and
 * never runs a program; running protoc lives here, in tracec_decode, the
 * library that the `tracec` command and the test assertions
 * (tracec/testing.h) link.  tracec/decode.h and tracec/testing.h include
 * this header.
 */
#ifndef TRACEC_PROTOC_H
#define TRACEC_PROTOC_H

#include <stddef.h>

#include "tracec/descpool.h"
#include "tracec/status.h"
#include "tracec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Compiles `protos` (paths as protoc takes them) with protoc, with the given
 * -I directories, into a FileDescriptorSet (with imports) in a temporary
 * file, and adds it to `pool` (tracec_pool_add_set_file()).  protoc's own
 * error text is passed on in `err` (status ERROR); IO_ERROR if protoc cannot
 * be run.  The protoc run is $TRACEC_PROTOC if set, else the one found when
 * tracec was built, else `protoc` from PATH.
 */
tracec_status_t tracec_pool_add_proto_files(tracec_pool *pool, const char *const *include_dirs,
                                            size_t n_include_dirs, const char *const *protos,
                                            size_t n_protos, tracec_error *err) TRACEC_I_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_PROTOC_H */
