/*
 * byte_writer.c - writes, with the generated writers, the messages that
 * cases/NAME.txtpb describe, one binary file per case:
 *
 *   byte_writer OUTDIR   -> OUTDIR/byte_cases.bin  (tracec.stress.ByteCases)
 *                           OUTDIR/p3_cases.bin    (tracec.stress.p3.P3Cases)
 *                           OUTDIR/pf_trace.bin    (perfetto.protos.Trace)
 *                           OUTDIR/nopkg.bin       (NoPkg)
 *
 * test_bytes.c (generator_bytes) encodes each .txtpb with protoc --encode and compares the
 * bytes (exactly: our nested lengths are minimal, as libprotobuf's) and
 * the protoc --decode text of both.  Fields are written in field-number
 * order, as protoc serializes them.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress/all_types.tracec.h"
#include "stress/nopkg.tracec.h"
#include "stress/p3.tracec.h"
#include "stress/perfetto_ext.tracec.h"
#include "stress/te_only.tracec.h"

#define S(lit) lit, sizeof(lit) - 1u

static uint8_t g_buf[1 << 20];

typedef struct scalar_vals {
    double d;
    float f;
    int64_t i64;
    uint64_t u64;
    int32_t i32;
    uint64_t x64;
    uint32_t x32;
    bool b;
    const char *str;
    size_t str_len;
    const char *bytes;
    size_t bytes_len;
    uint32_t u32;
    tracec_stress_Sign e;
    int32_t sx32;
    int64_t sx64;
    int32_t s32;
    int64_t s64;
    int32_t req;
    uint32_t big;
} scalar_vals;

static void write_scalars(tracec_stress_Scalars *m, const scalar_vals *v, bool extras) {
    tracec_stress_Scalars_set_f_double(m, v->d);
    tracec_stress_Scalars_set_f_float(m, v->f);
    tracec_stress_Scalars_set_f_int64(m, v->i64);
    tracec_stress_Scalars_set_f_uint64(m, v->u64);
    tracec_stress_Scalars_set_f_int32(m, v->i32);
    tracec_stress_Scalars_set_f_fixed64(m, v->x64);
    tracec_stress_Scalars_set_f_fixed32(m, v->x32);
    tracec_stress_Scalars_set_f_bool(m, v->b);
    tracec_stress_Scalars_set_f_string(m, v->str, v->str_len);
    tracec_stress_Scalars_set_f_bytes(m, v->bytes, v->bytes_len);
    tracec_stress_Scalars_set_f_uint32(m, v->u32);
    tracec_stress_Scalars_set_f_enum(m, v->e);
    tracec_stress_Scalars_set_f_sfixed32(m, v->sx32);
    tracec_stress_Scalars_set_f_sfixed64(m, v->sx64);
    tracec_stress_Scalars_set_f_sint32(m, v->s32);
    tracec_stress_Scalars_set_f_sint64(m, v->s64);
    tracec_stress_Scalars_set_f_required(m, v->req);
    if (extras) {
        tracec_shared_SharedMsg shared;
        tracec_other_OtherMsg other;
        tracec_stress_Scalars_set_f_default(m, -5);
        tracec_stress_Scalars_set_cstr_s_default(m, "");
        tracec_stress_Scalars_set_e_default(m, tracec_stress_SIGN_NOUGHT);
        tracec_stress_Scalars_set_d_default(m, -INFINITY);
        tracec_stress_Scalars_set_b_default(m, S("\x01\xff"));
        tracec_stress_Scalars_begin_shared(m, &shared);
        tracec_shared_SharedMsg_set_id(&shared, 1);
        tracec_shared_SharedMsg_set_cstr_label(&shared, "s");
        tracec_stress_Scalars_end_shared(m, &shared);
        tracec_stress_Scalars_begin_other(m, &other);
        tracec_other_OtherMsg_set_stamp(&other, 0x0102030405060708ull);
        tracec_stress_Scalars_end_other(m, &other);
        tracec_stress_Scalars_set_kind(m, tracec_shared_SHARED_KIND_B);
    }
    tracec_stress_Scalars_set_f_tag_2047(m, v->big);
    tracec_stress_Scalars_set_f_tag_2048(m, v->big);
    tracec_stress_Scalars_set_f_big_number(m, v->big);
}

static void case_scalars(tracec_stress_ByteCases *c) {
    const scalar_vals zeros = {0, 0, 0, 0, 0, 0, 0, false, S(""), S(""), 0, tracec_stress_SIGN_ZERO,
                               0, 0, 0, 0, 0, 0};
    const scalar_vals ones = {1.0, 1.0f, 1, 1, 1, 1, 1, true, S("a"), S("\x01"), 1, tracec_stress_SIGN_NEG,
                              1, 1, 1, 1, 1, 1};
    const scalar_vals maxes = {DBL_MAX, FLT_MAX, INT64_MAX, UINT64_MAX, INT32_MAX, UINT64_MAX,
                               UINT32_MAX, true, S("\x7f"), S("\xff\xfe"), UINT32_MAX,
                               tracec_stress_SIGN_MAX, INT32_MAX, INT64_MAX, INT32_MAX, INT64_MAX,
                               INT32_MAX, UINT32_MAX};
    const scalar_vals mins = {-DBL_MAX, -FLT_MAX, INT64_MIN, 0, INT32_MIN, 0, 0, false, S(""), S(""), 0,
                              tracec_stress_SIGN_MIN, INT32_MIN, INT64_MIN, INT32_MIN, INT64_MIN,
                              INT32_MIN, 0};
    const scalar_vals specials = {(double)NAN, -INFINITY, -1, 1ull << 63, -1, 0x0102030405060708ull,
                                  0x01020304u, true, S("h\xc3\xa9llo \"q\" \\ \n\t\x01"),
                                  S("\x00\xff\x80"), 128, tracec_stress_SIGN_NEG, -2, -2, -1, -64, -1,
                                  16383};
    const scalar_vals *cases[] = {&zeros, &ones, &maxes, &mins, &specials};
    tracec_stress_Scalars s;
    for (size_t i = 0; i < 5; i++) {
        /* Fields 1..5 of ByteCases. */
        tracec_msg_begin_nested(&c->msg, TRACEC_TAG((uint32_t)i + 1u, TRACEC_WIRE_LEN), &s.msg);
        write_scalars(&s, cases[i], i == 4);
        tracec_msg_end_nested(&c->msg, &s.msg);
    }
}

static void case_repeated(tracec_stress_ByteCases *c) {
    static const double ds[] = {0.0, -1.5, 4.9406564584124654e-324, DBL_MAX};
    static const float fs[] = {0.0f, 2.5f, 1.40129846e-45f, -FLT_MAX};
    static const int64_t i64s[] = {0, -1, INT64_MIN, INT64_MAX, 300};
    static const uint64_t u64s[] = {0, 1, 127, 128, UINT64_MAX};
    static const int32_t i32s[] = {0, -1, INT32_MIN, INT32_MAX, 150};
    static const uint64_t x64s[] = {0, UINT64_MAX, 0x0102030405060708ull};
    static const uint32_t x32s[] = {0, UINT32_MAX, 0x01020304u};
    static const bool bs[] = {true, false, true};
    static const uint32_t u32s[] = {0, 1, 16383, 16384, UINT32_MAX};
    static const int32_t es[] = {tracec_stress_SIGN_ZERO, tracec_stress_SIGN_NEG, tracec_stress_SIGN_MIN,
                                 tracec_stress_SIGN_MAX};
    static const int32_t sx32s[] = {0, -1, INT32_MIN, INT32_MAX};
    static const int64_t sx64s[] = {0, -1, INT64_MIN, INT64_MAX};
    static const int32_t s32s[] = {0, -1, 1, INT32_MIN, INT32_MAX, -64, 64};
    static const int64_t s64s[] = {0, -1, 1, INT64_MIN, INT64_MAX, -8192, 8191};
    tracec_stress_Repeated r;
    tracec_stress_Scalars s;
    tracec_stress_ByteCases_begin_repeated(c, &r);
    for (size_t i = 0; i < 4; i++) tracec_stress_Repeated_set_r_double(&r, ds[i]);
    for (size_t i = 0; i < 4; i++) tracec_stress_Repeated_set_r_float(&r, fs[i]);
    for (size_t i = 0; i < 5; i++) tracec_stress_Repeated_set_r_int64(&r, i64s[i]);
    for (size_t i = 0; i < 5; i++) tracec_stress_Repeated_set_r_uint64(&r, u64s[i]);
    for (size_t i = 0; i < 5; i++) tracec_stress_Repeated_set_r_int32(&r, i32s[i]);
    for (size_t i = 0; i < 3; i++) tracec_stress_Repeated_set_r_fixed64(&r, x64s[i]);
    for (size_t i = 0; i < 3; i++) tracec_stress_Repeated_set_r_fixed32(&r, x32s[i]);
    for (size_t i = 0; i < 3; i++) tracec_stress_Repeated_set_r_bool(&r, bs[i]);
    tracec_stress_Repeated_set_cstr_r_string(&r, "");
    tracec_stress_Repeated_set_cstr_r_string(&r, "two");
    tracec_stress_Repeated_set_r_bytes(&r, S("\x00"));
    for (size_t i = 0; i < 5; i++) tracec_stress_Repeated_set_r_uint32(&r, u32s[i]);
    for (size_t i = 0; i < 4; i++) tracec_stress_Repeated_set_r_enum(&r, (tracec_stress_Sign)es[i]);
    for (size_t i = 0; i < 4; i++) tracec_stress_Repeated_set_r_sfixed32(&r, sx32s[i]);
    for (size_t i = 0; i < 4; i++) tracec_stress_Repeated_set_r_sfixed64(&r, sx64s[i]);
    for (size_t i = 0; i < 7; i++) tracec_stress_Repeated_set_r_sint32(&r, s32s[i]);
    for (size_t i = 0; i < 7; i++) tracec_stress_Repeated_set_r_sint64(&r, s64s[i]);
    tracec_stress_Repeated_begin_r_msg(&r, &s);
    tracec_stress_Scalars_set_f_required(&s, 1);
    tracec_stress_Repeated_end_r_msg(&r, &s);
    tracec_stress_Repeated_begin_r_msg(&r, &s);
    tracec_stress_Scalars_set_f_required(&s, 2);
    tracec_stress_Repeated_end_r_msg(&r, &s);
    tracec_stress_Repeated_set_p_double(&r, ds, 4);
    tracec_stress_Repeated_set_p_float(&r, fs, 4);
    tracec_stress_Repeated_set_p_int64(&r, i64s, 5);
    tracec_stress_Repeated_set_p_uint64(&r, u64s, 5);
    tracec_stress_Repeated_set_p_int32(&r, i32s, 5);
    tracec_stress_Repeated_set_p_fixed64(&r, x64s, 3);
    tracec_stress_Repeated_set_p_fixed32(&r, x32s, 3);
    tracec_stress_Repeated_set_p_bool(&r, bs, 3);
    tracec_stress_Repeated_set_p_uint32(&r, u32s, 5);
    tracec_stress_Repeated_set_p_enum(&r, es, 4);
    tracec_stress_Repeated_set_p_sfixed32(&r, sx32s, 4);
    tracec_stress_Repeated_set_p_sfixed64(&r, sx64s, 4);
    tracec_stress_Repeated_set_p_sint32(&r, s32s, 7);
    tracec_stress_Repeated_set_p_sint64(&r, s64s, 7);
    tracec_stress_Repeated_set_u_int32(&r, -1);
    tracec_stress_Repeated_set_u_int32(&r, 2);
    tracec_stress_ByteCases_end_repeated(c, &r);

    /* Empty packed arrays write nothing, as protoc writes nothing for an empty repeated field. */
    tracec_stress_ByteCases_begin_empty_packed(c, &r);
    tracec_stress_Repeated_set_p_double(&r, ds, 0);
    tracec_stress_Repeated_set_p_sint64(&r, s64s, 0);
    tracec_stress_ByteCases_end_empty_packed(c, &r);
}

static void case_groups_nesting(tracec_stress_ByteCases *c) {
    tracec_stress_Groups g, inner;
    tracec_stress_Groups_OptGroup og;
    tracec_stress_Groups_RepGroup rg;
    tracec_stress_Groups_RepGroup_Deeper deeper;
    tracec_stress_ByteCases_begin_groups(c, &g);
    tracec_stress_Groups_begin_optgroup(&g, &og);
    tracec_stress_Groups_OptGroup_set_a(&og, 1);
    tracec_stress_Groups_OptGroup_begin_inner(&og, &inner);
    tracec_stress_Groups_set_after(&inner, 2);
    tracec_stress_Groups_OptGroup_end_inner(&og, &inner);
    tracec_stress_Groups_end_optgroup(&g, &og);
    tracec_stress_Groups_begin_repgroup(&g, &rg);
    tracec_stress_Groups_RepGroup_set_cstr_s(&rg, "x");
    tracec_stress_Groups_RepGroup_set_cstr_s(&rg, "y");
    tracec_stress_Groups_RepGroup_begin_deeper(&rg, &deeper);
    tracec_stress_Groups_RepGroup_Deeper_set_z(&deeper, -5);
    tracec_stress_Groups_RepGroup_end_deeper(&rg, &deeper);
    tracec_stress_Groups_end_repgroup(&g, &rg);
    tracec_stress_Groups_begin_repgroup(&g, &rg);
    tracec_stress_Groups_end_repgroup(&g, &rg);
    tracec_stress_Groups_set_after(&g, 3);
    tracec_stress_ByteCases_end_groups(c, &g);

    tracec_stress_Nesting n;
    tracec_stress_Nesting_L1 l1, back;
    tracec_stress_Nesting_L1_L2 l2;
    tracec_stress_Nesting_L1_L2_L3 l3;
    tracec_stress_ByteCases_begin_nesting(c, &n);
    tracec_stress_Nesting_begin_l1(&n, &l1);
    tracec_stress_Nesting_L1_begin_l2(&l1, &l2);
    tracec_stress_Nesting_L1_L2_begin_l3(&l2, &l3);
    tracec_stress_Nesting_L1_L2_L3_set_d(&l3, tracec_stress_Nesting_L1_L2_L3_DEEP_B);
    tracec_stress_Nesting_L1_L2_L3_begin_back(&l3, &back);
    tracec_stress_Nesting_L1_L2_L3_end_back(&l3, &back);
    tracec_stress_Nesting_L1_L2_end_l3(&l2, &l3);
    tracec_stress_Nesting_L1_end_l2(&l1, &l2);
    tracec_stress_Nesting_end_l1(&n, &l1);
    tracec_stress_Nesting_begin_l3(&n, &l3);
    tracec_stress_Nesting_L1_L2_L3_set_d(&l3, tracec_stress_Nesting_L1_L2_L3_DEEP_A);
    tracec_stress_Nesting_end_l3(&n, &l3);
    tracec_stress_Nesting_set_deep(&n, tracec_stress_Nesting_L1_L2_L3_DEEP_B);
    tracec_stress_ByteCases_end_nesting(c, &n);
}

static void case_oneofs_maps(tracec_stress_ByteCases *c) {
    tracec_stress_Oneofs o;
    tracec_stress_Scalars s;
    tracec_stress_ByteCases_begin_oneof_a(c, &o);
    tracec_stress_Oneofs_set_a(&o, 7);
    tracec_stress_Oneofs_set_e(&o, tracec_stress_SIGN_MIN);
    tracec_stress_ByteCases_end_oneof_a(c, &o);
    tracec_stress_ByteCases_begin_oneof_c(c, &o);
    tracec_stress_Oneofs_begin_c(&o, &s);
    tracec_stress_Scalars_set_f_required(&s, 9);
    tracec_stress_Oneofs_end_c(&o, &s);
    tracec_stress_Oneofs_set_d(&o, S("\x00\x01"));
    tracec_stress_ByteCases_end_oneof_c(c, &o);

    tracec_stress_Maps m;
    tracec_stress_Maps_S2iEntry s2i;
    tracec_stress_Maps_I2mEntry i2m;
    tracec_stress_Maps_U2eEntry u2e;
    tracec_stress_Maps_B2bEntry b2b;
    tracec_stress_Maps_ZzEntry zz;
    tracec_stress_Maps_F2dEntry f2d;
    tracec_stress_ByteCases_begin_maps(c, &m);
    tracec_stress_Maps_begin_s2i(&m, &s2i);
    tracec_stress_Maps_S2iEntry_set_cstr_key(&s2i, "k");
    tracec_stress_Maps_S2iEntry_set_value(&s2i, -3);
    tracec_stress_Maps_end_s2i(&m, &s2i);
    tracec_stress_Maps_begin_i2m(&m, &i2m);
    tracec_stress_Maps_I2mEntry_set_key(&i2m, INT64_MIN);
    tracec_stress_Maps_I2mEntry_begin_value(&i2m, &s);
    tracec_stress_Scalars_set_f_required(&s, 4);
    tracec_stress_Maps_I2mEntry_end_value(&i2m, &s);
    tracec_stress_Maps_end_i2m(&m, &i2m);
    tracec_stress_Maps_begin_u2e(&m, &u2e);
    tracec_stress_Maps_U2eEntry_set_key(&u2e, 0);
    tracec_stress_Maps_U2eEntry_set_value(&u2e, tracec_stress_SIGN_NEG);
    tracec_stress_Maps_end_u2e(&m, &u2e);
    tracec_stress_Maps_begin_b2b(&m, &b2b);
    tracec_stress_Maps_B2bEntry_set_key(&b2b, true);
    tracec_stress_Maps_B2bEntry_set_value(&b2b, S("\xff"));
    tracec_stress_Maps_end_b2b(&m, &b2b);
    tracec_stress_Maps_begin_zz(&m, &zz);
    tracec_stress_Maps_ZzEntry_set_key(&zz, -1);
    tracec_stress_Maps_ZzEntry_set_cstr_value(&zz, "minus one");
    tracec_stress_Maps_end_zz(&m, &zz);
    tracec_stress_Maps_begin_f2d(&m, &f2d);
    tracec_stress_Maps_F2dEntry_set_key(&f2d, 0xdeadbeefu);
    tracec_stress_Maps_F2dEntry_set_value(&f2d, 0.5);
    tracec_stress_Maps_end_f2d(&m, &f2d);
    tracec_stress_ByteCases_end_maps(c, &m);
}

static void case_names(tracec_stress_ByteCases *c) {
    tracec_stress_Keywords k, kc;
    tracec_stress_ByteCases_begin_keywords(c, &k);
    tracec_stress_Keywords_set_int(&k, 1);
    tracec_stress_Keywords_set_cstr_struct(&k, "s");
    tracec_stress_Keywords_set_default(&k, true);
    tracec_stress_Keywords_set_class(&k, 4);
    tracec_stress_Keywords_set_register(&k, 5);
    tracec_stress_Keywords_set_m(&k, 6);
    tracec_stress_Keywords_set_cstr_value(&k, "v");
    tracec_stress_Keywords_set_size(&k, S("\x08"));
    tracec_stress_Keywords_begin_child(&k, &kc);
    tracec_stress_Keywords_set_int(&kc, -1);
    tracec_stress_Keywords_end_child(&k, &kc);
    tracec_stress_Keywords_set_NULL(&k, 10);
    tracec_stress_Keywords_set_template(&k, 11);
    tracec_stress_Keywords_set_errno(&k, 12);
    tracec_stress_Keywords_set_values(&k, 13);
    tracec_stress_Keywords_set_count(&k, 14);
    tracec_stress_Keywords_set_data(&k, 15);
    tracec_stress_Keywords_set_msg(&k, 16);
    tracec_stress_Keywords_set_base(&k, 17);
    tracec_stress_ByteCases_end_keywords(c, &k);

    /* Renamed setters: cstr_name -> cstr_name_, x -> x_ (type Collide_set_x), z -> z_ (enum value). */
    tracec_stress_Collide col, cz;
    tracec_stress_Collide_set_x sx;
    tracec_stress_ByteCases_begin_collide(c, &col);
    tracec_stress_Collide_set_cstr_name(&col, "name");
    tracec_stress_Collide_set_cstr_cstr_name_(&col, "cstr_name");
    tracec_stress_Collide_set_x_(&col, 3);
    tracec_stress_Collide_set_y(&col, 4);
    tracec_stress_Collide_set_y_field_number(&col, 5);
    tracec_stress_Collide_begin_z_(&col, &cz);
    tracec_stress_Collide_end_z_(&col, &cz);
    tracec_stress_Collide_begin_sx(&col, &sx);
    tracec_stress_Collide_end_sx(&col, &sx);
    tracec_stress_ByteCases_end_collide(c, &col);
    (void)tracec_stress_Collide_begin_z; /* the enum value that took the name */

    tracec_stress_Recursive r, r2;
    tracec_stress_MutualB b;
    tracec_stress_ByteCases_begin_recursive(c, &r);
    tracec_stress_Recursive_begin_self(&r, &r2);
    tracec_stress_Recursive_set_depth(&r2, 2);
    tracec_stress_Recursive_end_self(&r, &r2);
    tracec_stress_Recursive_begin_b(&r, &b);
    tracec_stress_MutualB_begin_a(&b, &r2);
    tracec_stress_Recursive_set_depth(&r2, 3);
    tracec_stress_MutualB_end_a(&b, &r2);
    tracec_stress_Recursive_end_b(&r, &b);
    tracec_stress_Recursive_set_depth(&r, 1);
    tracec_stress_ByteCases_end_recursive(c, &r);
}

static void case_extensions(tracec_stress_ByteCases *c) {
    static const int32_t packed[] = {-1, 0, 1, INT32_MIN};
    static const double wpacked[] = {1.0, -2.0};
    tracec_stress_Wrapper w;
    tracec_stress_Info info;
    tracec_stress_FileGroup fg;
    /* The wrapper, opened with its typed function; file-scope setters through `base`. */
    tracec_stress_ByteCases_begin_extended_as_tracec_stress_Wrapper(c, &w);
    tracec_stress_Wrapper_set_plain(&w, 1);
    tracec_stress_Wrapper_set_cstr_label(&w, "base label");
    tracec_stress_Extendable_set_tracec_stress_file_ext(&w.base, 7);
    tracec_stress_Extendable_set_tracec_stress_file_packed(&w.base, packed, 4);
    tracec_stress_Extendable_begin_tracec_stress_file_msg(&w.base, &info);
    tracec_stress_Info_set_cstr_text(&info, "file msg");
    tracec_stress_Extendable_end_tracec_stress_file_msg(&w.base, &info);
    tracec_stress_Extendable_begin_tracec_stress_filegroup(&w.base, &fg);
    tracec_stress_FileGroup_set_g(&fg, 8);
    tracec_stress_Extendable_end_tracec_stress_filegroup(&w.base, &fg);
    tracec_stress_Extendable_set_cstr_tracec_stress_file_rep_str(&w.base, "r1");
    tracec_stress_Extendable_set_cstr_tracec_stress_file_rep_str(&w.base, "r2");
    tracec_stress_Extendable_begin_tracec_stress_file_rep_msg(&w.base, &info);
    tracec_stress_Info_set_code(&info, -9);
    tracec_stress_Extendable_end_tracec_stress_file_rep_msg(&w.base, &info);
    tracec_stress_Wrapper_set_cstr_w_str(&w, "wrapped");
    tracec_stress_Wrapper_set_cstr_label_(&w, "extension label");
    tracec_stress_Wrapper_begin_w_info(&w, &info);
    tracec_stress_Info_set_code(&info, 12);
    tracec_stress_Wrapper_end_w_info(&w, &info);
    tracec_stress_Wrapper_set_w_packed(&w, wpacked, 2);
    tracec_stress_Extendable_set_tracec_stress_HolderWithFields_held(&w.base, 130);
    tracec_stress_Extendable_set_tracec_stress_MultiExtendee_multi_a(&w.base, 140);
    tracec_stress_Extendable_set_tracec_stress_ExtendableHolder_from_extendable_holder(&w.base, 150);
    tracec_stress_Extendable_set_tracec_stress_file_max(&w.base, UINT64_MAX);
    tracec_stress_ByteCases_end_extended_as_tracec_stress_Wrapper(c, &w);

    /* A nested wrapper, opened from another parent; a plain writer of the extendee too. */
    tracec_stress_Parent p;
    tracec_stress_Wrapper_Inner inner;
    tracec_stress_Extendable e;
    tracec_stress_ByteCases_begin_parent(c, &p);
    tracec_stress_Parent_begin_e_as_tracec_stress_Wrapper_Inner(&p, &inner);
    tracec_stress_Wrapper_Inner_set_plain(&inner, 2);
    tracec_stress_Wrapper_Inner_set_inner_ext(&inner, 120);
    tracec_stress_Parent_end_e_as_tracec_stress_Wrapper_Inner(&p, &inner);
    tracec_stress_Parent_begin_es_as_tracec_stress_Wrapper(&p, &w);
    tracec_stress_Wrapper_set_cstr_w_str(&w, "first");
    tracec_stress_Parent_end_es_as_tracec_stress_Wrapper(&p, &w);
    tracec_stress_Parent_begin_es(&p, &e);
    tracec_stress_Extendable_set_tracec_stress_file_ext(&e, -1);
    tracec_stress_Parent_end_es(&p, &e);
    tracec_stress_ByteCases_end_parent(c, &p);

    tracec_stress_Extendable2 e2;
    tracec_stress_ByteCases_begin_extended2(c, &e2);
    tracec_stress_Extendable2_set_two(&e2, 2);
    tracec_stress_Extendable2_set_tracec_stress_MultiExtendee_multi_b(&e2, 10);
    tracec_stress_ByteCases_end_extended2(c, &e2);
}

static void case_deprecated_and_long(tracec_stress_ByteCases *c) {
    static const char long_str[] =
        "0123456789012345678901234567890123456789012345678901234567890123456789"
        "0123456789012345678901234567890123456789012345678901234567890123456789"
        "0123456789012345678901234567890123456789012345678901234567890123456789";
    tracec_stress_UsesDeprecated u;
    tracec_stress_ByteCases_begin_deprecated(c, &u);
    /* Using deprecated setters warns (and with -Werror fails): the test shows it can be silenced. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    tracec_stress_UsesDeprecated_set_gone(&u, 4);
    tracec_stress_UsesDeprecated_set_cstr_gone_str(&u, "old");
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    tracec_stress_ByteCases_end_deprecated(c, &u);

    /* Long strings and bytes: 2-byte lengths; the message itself > 127 bytes. */
    tracec_stress_Scalars s;
    tracec_stress_ByteCases_begin_long_strings(c, &s);
    tracec_stress_Scalars_set_f_string(&s, long_str, sizeof long_str - 1u);
    tracec_stress_Scalars_set_f_bytes(&s, long_str, 128);
    tracec_stress_Scalars_set_f_required(&s, 20);
    tracec_stress_ByteCases_end_long_strings(c, &s);
}

static void case_p3(tracec_stress_p3_P3Cases *c) {
    static const int32_t ints[] = {1, -1, 300};
    static const double ds[] = {0.25};
    static const bool bs[] = {false, true};
    static const int32_t es[] = {tracec_stress_p3_P3_E_NEG, tracec_stress_p3_P3_E_BIG};
    static const int64_t zs[] = {-1, 1};
    static const uint32_t fs[] = {7};
    tracec_stress_p3_P3 p, child;
    tracec_stress_p3_P3_MEntry me;
    tracec_stress_Scalars s;
    tracec_shared_SharedMsg sh;
    tracec_stress_p3_P3Cases_begin_full(c, &p);
    tracec_stress_p3_P3_set_a(&p, 1);
    tracec_stress_p3_P3_set_opt(&p, 0);
    tracec_stress_p3_P3_set_packed_default(&p, ints, 3);
    tracec_stress_p3_P3_set_unpacked(&p, 5);
    tracec_stress_p3_P3_set_unpacked(&p, -5);
    tracec_stress_p3_P3_begin_m(&p, &me);
    tracec_stress_p3_P3_MEntry_set_cstr_key(&me, "k");
    tracec_stress_p3_P3_MEntry_set_cstr_value(&me, "v");
    tracec_stress_p3_P3_end_m(&p, &me);
    tracec_stress_p3_P3_begin_child(&p, &child);
    tracec_stress_p3_P3_set_a(&child, 2);
    tracec_stress_p3_P3_end_child(&p, &child);
    tracec_stress_p3_P3_set_ds(&p, ds, 1);
    tracec_stress_p3_P3_set_bs(&p, bs, 2);
    tracec_stress_p3_P3_set_cstr_ostr(&p, "");
    tracec_stress_p3_P3_set_es(&p, es, 2);
    tracec_stress_p3_P3_begin_proto2_msg(&p, &s);
    tracec_stress_Scalars_set_f_required(&s, 12);
    tracec_stress_p3_P3_end_proto2_msg(&p, &s);
    tracec_stress_p3_P3_begin_via_public_import(&p, &sh);
    tracec_shared_SharedMsg_set_id(&sh, 13);
    tracec_stress_p3_P3_end_via_public_import(&p, &sh);
    tracec_stress_p3_P3_set_cstr_strs(&p, "a");
    tracec_stress_p3_P3_set_cstr_strs(&p, "b");
    tracec_stress_p3_P3_begin_children(&p, &child);
    tracec_stress_p3_P3_end_children(&p, &child);
    tracec_stress_p3_P3_set_oe(&p, tracec_stress_p3_P3_E_ZERO);
    tracec_stress_p3_P3_set_b(&p, S("\x11"));
    tracec_stress_p3_P3_set_zs(&p, zs, 2);
    tracec_stress_p3_P3_set_fs(&p, fs, 1);
    tracec_stress_p3_P3Cases_end_full(c, &p);
    /* proto3 `optional` keeps explicit zeros: opt and oe are written and read back. */
    tracec_stress_p3_P3Cases_begin_zeros_present(c, &p);
    tracec_stress_p3_P3_set_opt(&p, 0);
    tracec_stress_p3_P3_set_cstr_ostr(&p, "");
    tracec_stress_p3_P3_set_oe(&p, tracec_stress_p3_P3_E_ZERO);
    tracec_stress_p3_P3Cases_end_zeros_present(c, &p);
}

static void case_perfetto(perfetto_protos_Trace *t) {
    static const int64_t vals[] = {-1, 2};
    static const uint32_t pkt_vals[] = {1, 0xffffffffu};
    perfetto_protos_TracePacket pkt;
    tracec_stress_pf_TeWrapper ev;
    tracec_stress_pf_PfInfo info;
    perfetto_protos_DebugAnnotation ann;
    /* Packet 1: a TrackEvent wrapper with every kind of extension. */
    perfetto_protos_Trace_begin_packet(t, &pkt);
    perfetto_protos_TracePacket_set_timestamp(&pkt, 10);
    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_pf_TeWrapper(&pkt, &ev);
    tracec_stress_pf_TeWrapper_set_type(&ev, perfetto_protos_TrackEvent_TYPE_INSTANT);
    tracec_stress_pf_TeWrapper_set_cstr_name(&ev, "base name");
    tracec_stress_pf_TeWrapper_set_cstr_name_(&ev, "extension name");
    tracec_stress_pf_TeWrapper_begin_info(&ev, &info);
    tracec_stress_pf_PfInfo_set_cstr_text(&info, "info");
    tracec_stress_pf_PfInfo_begin_annotations(&info, &ann);
    perfetto_protos_DebugAnnotation_set_int_value(&ann, -7);
    perfetto_protos_DebugAnnotation_set_cstr_name(&ann, "k");
    tracec_stress_pf_PfInfo_end_annotations(&info, &ann);
    tracec_stress_pf_TeWrapper_end_info(&ev, &info);
    tracec_stress_pf_TeWrapper_set_vals(&ev, vals, 2);
    tracec_stress_pf_TeWrapper_begin_infos(&ev, &info);
    tracec_stress_pf_TeWrapper_end_infos(&ev, &info);
    tracec_stress_pf_TeWrapper_begin_infos(&ev, &info);
    tracec_stress_pf_PfInfo_set_cstr_text(&info, "second");
    tracec_stress_pf_TeWrapper_end_infos(&ev, &info);
    tracec_stress_pf_TeWrapper_set_te_type(&ev, perfetto_protos_TrackEvent_TYPE_COUNTER);
    perfetto_protos_TrackEvent_set_tracec_stress_pf_file_flag(&ev.base, true);
    perfetto_protos_TracePacket_end_track_event_as_tracec_stress_pf_TeWrapper(&pkt, &ev);
    perfetto_protos_Trace_end_packet(t, &pkt);

    /* Packet 2: InternedData wrapper and file-scope extension. */
    tracec_stress_pf_InternedWrapper in;
    perfetto_protos_EventName name;
    perfetto_protos_Trace_begin_packet(t, &pkt);
    perfetto_protos_TracePacket_begin_interned_data_as_tracec_stress_pf_InternedWrapper(&pkt, &in);
    tracec_stress_pf_InternedWrapper_begin_event_names(&in, &name);
    perfetto_protos_EventName_set_iid(&name, 1);
    perfetto_protos_EventName_set_cstr_name(&name, "n1");
    tracec_stress_pf_InternedWrapper_end_event_names(&in, &name);
    tracec_stress_pf_InternedWrapper_begin_my_names(&in, &name);
    perfetto_protos_EventName_set_iid(&name, 2);
    tracec_stress_pf_InternedWrapper_end_my_names(&in, &name);
    perfetto_protos_InternedData_set_cstr_tracec_stress_pf_file_interned(&in.base, "fi");
    perfetto_protos_TracePacket_end_interned_data_as_tracec_stress_pf_InternedWrapper(&pkt, &in);
    perfetto_protos_Trace_end_packet(t, &pkt);

    /* Packet 3: a TracePacket wrapper, opened from Trace (a built-in parent). */
    tracec_stress_pf_PacketWrapper pw;
    perfetto_protos_Trace_begin_packet_as_tracec_stress_pf_PacketWrapper(t, &pw);
    tracec_stress_pf_PacketWrapper_set_timestamp(&pw, 30);
    tracec_stress_pf_PacketWrapper_set_pkt_x(&pw, 1500);
    tracec_stress_pf_PacketWrapper_begin_pkt_info(&pw, &info);
    tracec_stress_pf_PfInfo_set_cstr_text(&info, "pkt");
    tracec_stress_pf_PacketWrapper_end_pkt_info(&pw, &info);
    perfetto_protos_TracePacket_set_tracec_stress_pf_file_pkt_vals(&pw.base, pkt_vals, 2);
    perfetto_protos_Trace_end_packet_as_tracec_stress_pf_PacketWrapper(t, &pw);

    /* Packet 4: a wrapper whose file sees only track_event.proto (built-in TracePacket parent). */
    tracec_stress_teonly_Ev te;
    perfetto_protos_Trace_begin_packet(t, &pkt);
    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_teonly_Ev(&pkt, &te);
    tracec_stress_teonly_Ev_set_track_uuid(&te, 5);
    tracec_stress_teonly_Ev_set_teonly_x(&te, 3400);
    perfetto_protos_TracePacket_end_track_event_as_tracec_stress_teonly_Ev(&pkt, &te);
    perfetto_protos_Trace_end_packet(t, &pkt);
}

/* No package: escaped names (struct_, size_, bool_); the wrapper as the root message. */
static void case_nopkg(NoPkgWrapper *n) {
    struct_ s;
    NoPkgWrapper_set_c(n, size_);
    NoPkgWrapper_begin_s(n, &s);
    struct__set_int(&s, bool_);
    NoPkgWrapper_end_s(n, &s);
    NoPkg_set_top(&n->base, 10);
    NoPkgWrapper_set_cstr_wrapped(n, "w");
}

static int emit(const char *dir, const char *name, tracec_writer *w, tracec_msg *root) {
    tracec_status_t st = tracec_writer_end_root(w, root);
    if (st != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "byte_writer: %s: %s\n", name, tracec_status_str(st));
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t n = tracec_writer_size(w);
    int rc = fwrite(w->base, 1, n, f) == n ? 0 : 1;
    return fclose(f) == 0 ? rc : 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: byte_writer OUTDIR\n");
        return 2;
    }
    int rc = 0;
    tracec_writer w;

    tracec_stress_ByteCases cases;
    tracec_writer_init_array(&w, g_buf, sizeof g_buf);
    tracec_writer_begin_root(&w, &cases.msg);
    case_scalars(&cases);
    case_repeated(&cases);
    case_groups_nesting(&cases);
    case_oneofs_maps(&cases);
    case_names(&cases);
    case_extensions(&cases);
    case_deprecated_and_long(&cases);
    rc |= emit(argv[1], "byte_cases.bin", &w, &cases.msg);

    tracec_stress_p3_P3Cases p3;
    tracec_writer_init_array(&w, g_buf, sizeof g_buf);
    tracec_writer_begin_root(&w, &p3.msg);
    case_p3(&p3);
    rc |= emit(argv[1], "p3_cases.bin", &w, &p3.msg);

    perfetto_protos_Trace trace;
    tracec_writer_init_array(&w, g_buf, sizeof g_buf);
    tracec_writer_begin_root(&w, &trace.msg);
    case_perfetto(&trace);
    rc |= emit(argv[1], "pf_trace.bin", &w, &trace.msg);

    NoPkgWrapper np;
    tracec_writer_init_array(&w, g_buf, sizeof g_buf);
    tracec_writer_begin_root(&w, &np.base.msg);
    case_nopkg(&np);
    rc |= emit(argv[1], "nopkg.bin", &w, &np.base.msg);
    return rc;
}
