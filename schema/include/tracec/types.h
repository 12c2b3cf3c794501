/*
 * tracec/types.h - the basic types the text-side modules share: an error
 * message buffer, a growable byte string, and an output callback.
 *
 * tracec/descpool.h, tracec/textproto.h and tracec/decode.h include it, so
 * code that includes any of them has these types.
 */
#ifndef TRACEC_TYPES_H
#define TRACEC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An error message buffer: the first error of a call is written here, NUL-terminated. */
typedef struct tracec_error {
    char msg[1024];
} tracec_error;

/*
 * A growable byte string owned by the caller; free with tracec_bytes_free()
 * (tracec/textproto.h).
 */
typedef struct tracec_bytes {
    uint8_t *data;
    size_t size;
    size_t cap;
} tracec_bytes;
#define TRACEC_BYTES_INIT {NULL, 0, 0}

/*
 * Receives output; returns false on failure (the call then stops and
 * returns IO_ERROR).  `data` is only valid during the call.
 */
typedef bool (*tracec_write_fn)(void *ctx, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_TYPES_H */

/*
 * TRACEC_I_WARN_UNUSED marks a function whose result must be checked (a
 * status that carries an error): ignoring it is a compiler warning.  Outside
 * the include guard, so that every header that includes this one right
 * before using it has it, whatever another header undefined in between
 * (tracec/writer.h defines the same macro, with the same definition).
 */
#ifndef TRACEC_I_WARN_UNUSED
#if defined(__GNUC__) || defined(__clang__)
#define TRACEC_I_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define TRACEC_I_WARN_UNUSED
#endif
#endif
