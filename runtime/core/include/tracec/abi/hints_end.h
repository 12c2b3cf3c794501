/*
 * tracec/abi/hints_end.h - undefines the branch hints of tracec/abi/hints.h
 * at the end of a header that used them.  NOT a user API.  No include guard
 * on purpose.
 */
#undef TRACEC_I_LIKELY
#undef TRACEC_I_UNLIKELY
#undef TRACEC_I_NOINLINE
