/*
 * tracec/abi/attributes.h - compiler attributes of tracec's headers.
 *
 * NOT a user API: include tracec/writer.h (or the header you need), never
 * this file; the names here may change in any release.
 *
 * These stay defined in the code that includes a tracec header, because
 * generated code and the declarations of public functions use them:
 * TRACEC_I_ALWAYS_INLINE, TRACEC_I_DEPRECATED, TRACEC_I_USED,
 * TRACEC_I_WARN_UNUSED (on every function whose result must be checked),
 * TRACEC_I_LITTLE_ENDIAN.  The branch hints (TRACEC_I_LIKELY & co.) are
 * scoped to the headers that use them: tracec/abi/hints.h.
 */
#ifndef TRACEC_ABI_ATTRIBUTES_H
#define TRACEC_ABI_ATTRIBUTES_H

#if defined(__GNUC__) || defined(__clang__)
#define TRACEC_I_ALWAYS_INLINE __attribute__((always_inline))
#define TRACEC_I_WARN_UNUSED __attribute__((warn_unused_result))
#define TRACEC_I_DEPRECATED __attribute__((deprecated))
#define TRACEC_I_USED __attribute__((used))
#else
#define TRACEC_I_ALWAYS_INLINE
#define TRACEC_I_WARN_UNUSED
#define TRACEC_I_DEPRECATED
#define TRACEC_I_USED
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRACEC_I_LITTLE_ENDIAN 1
#else
#define TRACEC_I_LITTLE_ENDIAN 0
#endif

#endif /* TRACEC_ABI_ATTRIBUTES_H */
