/*
 * tracec/abi/hints.h - branch hints scoped to one header (or source file):
 * TRACEC_I_LIKELY, TRACEC_I_UNLIKELY, TRACEC_I_NOINLINE.
 *
 * NOT a user API.  A header that uses them includes this file after its
 * other includes and "tracec/abi/hints_end.h" at its end, which undefines
 * them, so they never reach the code that includes the header.  No include
 * guard on purpose: each use defines them again.
 */
#ifndef TRACEC_I_LIKELY
#if defined(__GNUC__) || defined(__clang__)
#define TRACEC_I_LIKELY(x) __builtin_expect(!!(x), 1)
#define TRACEC_I_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TRACEC_I_NOINLINE __attribute__((noinline))
#else
#define TRACEC_I_LIKELY(x) (x)
#define TRACEC_I_UNLIKELY(x) (x)
#define TRACEC_I_NOINLINE
#endif
#endif
