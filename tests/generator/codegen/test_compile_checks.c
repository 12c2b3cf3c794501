/*
 * test_compile_checks.c - what the compiler says about generated code (gcc
 * and clang, -std=c11 -pedantic -Wall -Wextra -Werror):
 *   asm:        at -O2 a setter sequence, with a nested message begun and
 *               ended, inlines to straight-line stores: from the function's
 *               entry to its first `ret` there is no call and no jump (only
 *               the bounds checks' and the nested length's conditional
 *               branches to the out-of-line slow paths), and the only calls
 *               anywhere are tracec_writer_slowpath and
 *               tracec_writer_widen_length (x86-64 only);
 *   types:      opening a TrackEvent as the wrong wrapper, or passing a wrapper
 *               where its base is expected, does not compile;
 *               enum setters take int32_t, so under -fshort-enums 1000 and -1
 *               are written as protoc writes them; a newer copy of
 *               Perfetto's TrackEvent and libtracec's compile together in
 *               either order with every setter and constant of both, and a
 *               copy that changes a field's type does not compile;
 *   deprecated: deprecated fields, messages, enums and enum values warn where
 *               user code uses them (and -Werror fails), while including the
 *               header alone is clean.
 * The 32-bit byte check is codegen_bytes_m32 (test_bytes.c).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "generator_util.h"

TestSuite(codegen_asm, .init = cg_tmp_setup, .fini = cg_tmp_teardown);
TestSuite(codegen_types, .init = cg_tmp_setup, .fini = cg_tmp_teardown);
TestSuite(codegen_deprecated, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

#define STRICT "-std=c11 -pedantic -Wall -Wextra -Werror"
#define INC "-I" CG_GEN_DIR " -I" CG_SCHEMA_DIR " -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR

/* Writes `src` to cg_tmp/NAME and compiles it with `cc` and `flags`; returns the diagnostics. */
static char *compile(const char *cc, const char *flags, const char *name, const char *src, int *st) {
    if (!cg_have(cc)) cg_skip_test("%s is not installed", cc);
    char *path = cg_fmt("%s/%s", cg_tmp, name);
    cg_write_text(path, src);
    char *out = cg_run(st, "cd '%s' && LC_ALL=C %s " STRICT " %s " INC " '%s' 2>&1", cg_tmp, cc, flags, path);
    free(path);
    return out;
}

/* ---- asm ----------------------------------------------------------------- */

static const char k_asm_src[] =
    "#include \"perfetto/trace/track_event/track_event.tracec.h\"\n"
    "void write_event(perfetto_protos_TrackEvent *ev);\n"
    "void write_event(perfetto_protos_TrackEvent *ev) {\n"
    "    perfetto_protos_TrackEvent_set_track_uuid(ev, 0x1234);\n"
    "    perfetto_protos_TrackEvent_set_type(ev, perfetto_protos_TrackEvent_TYPE_INSTANT);\n"
    "    perfetto_protos_TrackEvent_set_double_counter_value(ev, 1.5);\n"
    "    perfetto_protos_DebugAnnotation arg;\n"
    "    perfetto_protos_TrackEvent_begin_debug_annotations(ev, &arg);\n"
    "    perfetto_protos_DebugAnnotation_set_name_iid(&arg, 5);\n"
    "    perfetto_protos_TrackEvent_end_debug_annotations(ev, &arg);\n"
    "}\n";

/* `line` (instruction text, leading blanks skipped) starts with `mnemonic` followed by [a-z]*. */
static const char *after_mnemonic(const char *line, const char *mnemonic) {
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(mnemonic);
    if (strncmp(line, mnemonic, n) != 0) return NULL;
    line += n;
    while (islower((unsigned char)*line)) line++;
    return line;
}

static void check_asm(const char *cc) {
    struct utsname u;
    if (uname(&u) != 0 || strcmp(u.machine, "x86_64") != 0) cg_skip_test("the asm check needs x86-64");
    int st = -1;
    char *out = compile(cc, "-O2 -S -o asm.s", "asm.c", k_asm_src, &st);
    cr_assert_eq(st, 0, "%s -O2 -S failed:\n%s", cc, out);
    cr_expect_str_eq(out, "", "%s printed diagnostics:\n%s", cc, out);
    free(out);
    char *path = cg_fmt("%s/asm.s", cg_tmp);
    char *s = cg_read(path, NULL);
    cr_assert_not_null(s);

    /* write_event's instructions: from its label to `.size write_event`, without directives and labels. */
    const char *start = strstr(s, "\nwrite_event:"); /* clang adds a comment after the label */
    cr_assert_not_null(start, "no write_event in the %s assembly:\n%s", cc, s);
    start += strcspn(start + 1, "\n") + 2;
    char *body = malloc(strlen(start) + 1), *b = body;
    const char *line = start;
    while (*line) {
        size_t len = strcspn(line, "\n");
        const char *t = line;
        while (*t == ' ' || *t == '\t') t++;
        if (strncmp(t, ".size", 5) == 0 && strstr(t, "write_event") && (size_t)(strstr(t, "write_event") - line) < len)
            break;
        if (*t != '.' && *t != '#') {
            memcpy(b, line, len);
            b += len;
            *b++ = '\n';
        }
        line += len + (line[len] == '\n');
    }
    *b = '\0';

    /* The fast path: up to the first ret. */
    size_t fast_lines = 0;
    int fast_ok = 1, saw_ret = 0;
    for (const char *p = body; *p && !saw_ret; p += strcspn(p, "\n") + 1, fast_lines++) {
        const char *w = p + strspn(p, " \t");
        size_t wl = strcspn(w, " \t\n");
        saw_ret = (wl == 3 && strncmp(w, "ret", 3) == 0) || (wl == 4 && strncmp(w, "retq", 4) == 0);
        if (after_mnemonic(p, "call") || after_mnemonic(p, "jmp")) fast_ok = 0;
    }
    cr_expect(saw_ret, "%s -O2: no ret in write_event:\n%s", cc, body);
    cr_expect(fast_ok, "%s -O2: the fast path (entry to first ret) is not straight-line:\n%s", cc, body);

    /* Calls and direct jumps to a named symbol anywhere: only the slow paths. */
    for (const char *p = body; *p; p += strcspn(p, "\n") + 1) {
        const char *r = after_mnemonic(p, "call");
        if (!r) r = after_mnemonic(p, "jmp");
        if (!r || (*r != ' ' && *r != '\t')) continue;
        while (*r == ' ' || *r == '\t') r++;
        size_t len = strcspn(p, "\n");
        int named = isalpha((unsigned char)*r) || *r == '_';
        char *l = strndup(p, len);
        if (named)
            cr_expect(strstr(l, "tracec_writer_slowpath") || strstr(l, "tracec_writer_widen_length") || strstr(l, ".L"),
                      "%s -O2: write_event calls something else than the slow paths: %s\n%s", cc, l, body);
        free(l);
    }
    cr_log_info("asm (%s -O2): %zu instructions up to ret", cc, fast_lines);
    free(body);
    free(s);
    free(path);
}

Test(codegen_asm, gcc_setters_are_straight_line) { check_asm("gcc"); }
Test(codegen_asm, clang_setters_are_straight_line) { check_asm("clang"); }

/* ---- wrapper types ------------------------------------------------------- */

static const char k_right[] =
    "#include \"stress/perfetto_ext.tracec.h\"\n"
    "void f(perfetto_protos_TracePacket *pkt);\n"
    "void f(perfetto_protos_TracePacket *pkt) {\n"
    "    tracec_stress_pf_TeWrapper ev;\n"
    "    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);\n"
    "    perfetto_protos_TrackEvent_set_track_uuid(&ev.base, 1);\n"
    "    perfetto_protos_TracePacket_end_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);\n"
    "}\n";

static const char k_wrong_wrapper[] =
    "#include \"stress/perfetto_ext.tracec.h\"\n"
    "#include \"stress/te_only.tracec.h\"\n"
    "void f(perfetto_protos_TracePacket *pkt);\n"
    "void f(perfetto_protos_TracePacket *pkt) {\n"
    "    tracec_stress_teonly_Ev ev;\n"
    "    perfetto_protos_TracePacket_begin_track_event_as_tracec_stress_pf_TeWrapper(pkt, &ev);\n"
    "}\n";

static const char k_wrapper_as_base[] =
    "#include \"stress/perfetto_ext.tracec.h\"\n"
    "void f(perfetto_protos_TracePacket *pkt);\n"
    "void f(perfetto_protos_TracePacket *pkt) {\n"
    "    tracec_stress_pf_TeWrapper ev;\n"
    "    perfetto_protos_TracePacket_begin_track_event(pkt, &ev);\n"
    "}\n";

/* The right wrapper, and &wrapper.base as the base writer, compile cleanly. */
static void right_wrapper(const char *cc) {
    int st = -1;
    char *out = compile(cc, "-fsyntax-only", "right.c", k_right, &st);
    cr_expect_eq(st, 0, "%s: the right wrapper does not compile:\n%s\n---- right.c ----\n%s", cc, out, k_right);
    cr_expect_str_eq(out, "", "%s printed diagnostics:\n%s", cc, out);
    free(out);
}

/* `src` must be rejected for an incompatible pointer type. */
static void rejected(const char *cc, const char *name, const char *src) {
    int st = -1;
    char *out = compile(cc, "-fsyntax-only", name, src, &st);
    cr_expect_neq(st, 0, "%s: %s compiled but must not:\n%s", cc, name, src);
    cr_expect(strstr(out, "incompatible pointer type") != NULL,
              "%s: %s failed, but not for an incompatible pointer type:\n%s", cc, name, out);
    free(out);
}

Test(codegen_types, gcc_right_wrapper_compiles) { right_wrapper("gcc"); }
Test(codegen_types, clang_right_wrapper_compiles) { right_wrapper("clang"); }
Test(codegen_types, gcc_wrong_wrapper_rejected) { rejected("gcc", "wrong_wrapper.c", k_wrong_wrapper); }
Test(codegen_types, clang_wrong_wrapper_rejected) { rejected("clang", "wrong_wrapper.c", k_wrong_wrapper); }
Test(codegen_types, gcc_wrapper_as_base_rejected) { rejected("gcc", "wrapper_as_base.c", k_wrapper_as_base); }
Test(codegen_types, clang_wrapper_as_base_rejected) { rejected("clang", "wrapper_as_base.c", k_wrapper_as_base); }

/* ---- deprecated ------------------------------------------------------------ */

static void include_is_clean(const char *cc) {
    int st = -1;
    char *out = compile(cc, "-fsyntax-only", "dep_include.c", "#include \"stress/all_types.tracec.h\"\nint dummy;\n",
                        &st);
    cr_expect_eq(st, 0, "%s: the header alone fails:\n%s", cc, out);
    cr_expect_str_eq(out, "", "%s: the header alone warns:\n%s", cc, out);
    free(out);
}

/* `src` uses `what`: -Werror fails on "'WHAT' is deprecated". */
static void warns(const char *cc, const char *name, const char *what, const char *src) {
    int st = -1;
    char *out = compile(cc, "-fsyntax-only", name, src, &st);
    char *msg = cg_fmt("'%s' is deprecated", what);
    cr_expect_neq(st, 0, "%s: %s compiled without a warning:\n%s", cc, name, src);
    cr_expect(strstr(out, msg) != NULL, "%s: %s does not say \"%s\":\n%s", cc, name, msg, out);
    free(msg);
    free(out);
}

#define DEP_FIELD                                                   \
    "#include \"stress/all_types.tracec.h\"\n"                      \
    "void f(tracec_stress_UsesDeprecated *u);\n"                    \
    "void f(tracec_stress_UsesDeprecated *u) { tracec_stress_UsesDeprecated_set_gone(u, 1); }\n"
#define DEP_MESSAGE                                                 \
    "#include \"stress/all_types.tracec.h\"\n"                      \
    "void f(void);\n"                                               \
    "void f(void) { tracec_stress_Deprecated d; (void)d; }\n"
#define DEP_ENUM                                                    \
    "#include \"stress/all_types.tracec.h\"\n"                      \
    "int f(void);\n"                                                \
    "int f(void) { tracec_stress_OldEnum e = tracec_stress_OLD_A; return (int)e; }\n"
#define DEP_VALUE                                                   \
    "#include \"stress/all_types.tracec.h\"\n"                      \
    "int f(void);\n"                                                \
    "int f(void) { return (int)tracec_stress_OLD_B; }\n"
#define DEP_WRAPPER                                                 \
    "#include \"stress/perfetto_ext.tracec.h\"\n"                   \
    "void f(tracec_stress_pf_TeWrapper *w);\n"                      \
    "void f(tracec_stress_pf_TeWrapper *w) { tracec_stress_pf_TeWrapper_set_flow_ids_old(w, 1); }\n"

Test(codegen_deprecated, gcc_header_alone_is_clean) { include_is_clean("gcc"); }
Test(codegen_deprecated, clang_header_alone_is_clean) { include_is_clean("clang"); }
Test(codegen_deprecated, gcc_field) { warns("gcc", "dep_field.c", "tracec_stress_UsesDeprecated_set_gone", DEP_FIELD); }
Test(codegen_deprecated, clang_field) {
    warns("clang", "dep_field.c", "tracec_stress_UsesDeprecated_set_gone", DEP_FIELD);
}
Test(codegen_deprecated, gcc_message) { warns("gcc", "dep_message.c", "tracec_stress_Deprecated", DEP_MESSAGE); }
Test(codegen_deprecated, clang_message) { warns("clang", "dep_message.c", "tracec_stress_Deprecated", DEP_MESSAGE); }
Test(codegen_deprecated, gcc_enum) { warns("gcc", "dep_enum.c", "tracec_stress_OldEnum", DEP_ENUM); }
Test(codegen_deprecated, clang_enum) { warns("clang", "dep_enum.c", "tracec_stress_OldEnum", DEP_ENUM); }
Test(codegen_deprecated, gcc_enum_value) { warns("gcc", "dep_value.c", "tracec_stress_OLD_B", DEP_VALUE); }
Test(codegen_deprecated, clang_enum_value) { warns("clang", "dep_value.c", "tracec_stress_OLD_B", DEP_VALUE); }
Test(codegen_deprecated, gcc_wrapper_field) {
    warns("gcc", "dep_wrapper.c", "tracec_stress_pf_TeWrapper_set_flow_ids_old", DEP_WRAPPER);
}
Test(codegen_deprecated, clang_wrapper_field) {
    warns("clang", "dep_wrapper.c", "tracec_stress_pf_TeWrapper_set_flow_ids_old", DEP_WRAPPER);
}

/* ---- enum setters under -fshort-enums -------------------------------------- */

/*
 * An open enum whose constants fit in one byte, as a field, a map value and
 * an unpacked repeated field: with -fshort-enums the C enum type is one byte
 * wide, yet 1000 and -1 (values only the wire knows) reach it whole, because
 * enum setters take int32_t.  The bytes equal protoc --encode's.
 */
static const char k_short_proto[] = "syntax = \"proto3\";\npackage se;\n"
                                    "enum Small { SMALL_ZERO = 0; SMALL_ONE = 1; }\n"
                                    "message M {\n"
                                    "  Small e = 1;\n"
                                    "  map<int32, Small> map_int32_enum = 2;\n"
                                    "  repeated Small r = 3 [packed = false];\n"
                                    "}\n";
static const char k_short_text[] = "e: 1000\nmap_int32_enum { key: 1 value: 1000 }\n"
                                   "map_int32_enum { key: 2 value: -1 }\nr: -1\nr: 1000\n";
static const char k_short_main[] =
    "#include <stdio.h>\n"
    "#include \"se.tracec.h\"\n"
    "int main(void) {\n"
    "    unsigned char buf[256];\n"
    "    tracec_writer w;\n"
    "    se_M m;\n"
    "    se_M_MapInt32EnumEntry e;\n"
    "    if (sizeof(se_Small) != 1) return 3; /* -fshort-enums took effect */\n"
    "    tracec_writer_init_array(&w, buf, sizeof buf);\n"
    "    tracec_writer_begin_root(&w, &m.msg);\n"
    "    se_M_set_e(&m, 1000);\n"
    "    se_M_begin_map_int32_enum(&m, &e);\n"
    "    se_M_MapInt32EnumEntry_set_key(&e, 1);\n"
    "    se_M_MapInt32EnumEntry_set_value(&e, 1000);\n"
    "    se_M_end_map_int32_enum(&m, &e);\n"
    "    se_M_begin_map_int32_enum(&m, &e);\n"
    "    se_M_MapInt32EnumEntry_set_key(&e, 2);\n"
    "    se_M_MapInt32EnumEntry_set_value(&e, -1);\n"
    "    se_M_end_map_int32_enum(&m, &e);\n"
    "    se_M_set_r(&m, -1);\n"
    "    se_M_set_r(&m, 1000);\n"
    "    if (tracec_writer_end_root(&w, &m.msg) != TRACEC_STATUS_SUCCESS) return 2;\n"
    "    for (size_t i = 0; i < tracec_writer_size(&w); i++) printf(\"%02x\", buf[i]);\n"
    "    return 0;\n"
    "}\n";

/* Writes `text` as cg_tmp/`name`. */
static void write_tmp(const char *name, const char *text) {
    char *path = cg_fmt("%s/%s", cg_tmp, name);
    cg_write_text(path, text);
    free(path);
}

static void short_enums(const char *cc) {
    if (!cg_have(cc)) cg_skip_test("%s is not installed", cc);
    write_tmp("se.proto", k_short_proto);
    write_tmp("main.c", k_short_main);
    write_tmp("se.txt", k_short_text);
    int st = -1;
    char *out = cg_run(&st, "cd '%s' && " CG_PROTOC_WITH_PLUGIN " --tracec_out=. -I. se.proto 2>&1", cg_tmp);
    cr_assert_eq(st, 0, "protoc-gen-tracec failed:\n%s", out);
    free(out);
    out = cg_run(&st,
                 "cd '%s' && %s " STRICT " -fshort-enums -I. " INC " main.c se.tracec.c " TRACEC_SOURCE_DIR
                 "/runtime/core/src/writer.c " TRACEC_SOURCE_DIR "/runtime/core/src/registry.c " TRACEC_SOURCE_DIR
                 "/runtime/core/src/status.c -o main 2>&1",
                 cg_tmp, cc);
    cr_assert_eq(st, 0, "%s -fshort-enums does not build the program:\n%s", cc, out);
    free(out);
    char *ours = cg_run(&st, "'%s/main'", cg_tmp);
    cr_assert_eq(st, 0, "the program failed (exit %d; 3: the enum is not one byte wide)", st);
    char *theirs = cg_run(&st, "cd '%s' && " TRACEC_PROTOC " --encode=se.M -I. se.proto < se.txt | od -An -v -tx1 | tr -d ' \\n'",
                          cg_tmp);
    cr_assert_eq(st, 0, "protoc --encode failed");
    cr_expect_str_eq(ours, theirs, "%s -fshort-enums: ours, then protoc's:\n%s\n%s", cc, ours, theirs);
    free(ours);
    free(theirs);
}

Test(codegen_types, gcc_short_enums_keep_every_value) { short_enums("gcc"); }
Test(codegen_types, clang_short_enums_keep_every_value) { short_enums("clang"); }

/* ---- a user's copy of Perfetto's schema next to libtracec's ------------------ */

/*
 * A newer copy of TrackEvent (a field and an enum value libtracec's lacks)
 * and libtracec's own in one translation unit, in both include orders: one
 * definition of each type, and every setter and constant of both.
 */
static const char k_newer_proto[] = "syntax = \"proto2\";\npackage perfetto.protos;\n"
                                    "message TrackEvent {\n"
                                    "  enum Type { TYPE_UNSPECIFIED = 0; TYPE_SLICE_BEGIN = 1; TYPE_SLICE_END = 2;\n"
                                    "              TYPE_INSTANT = 3; TYPE_COUNTER = 4; TYPE_NEWER_FOR_TESTING = 99; }\n"
                                    "  optional Type type = 9;\n"
                                    "  optional uint64 track_uuid = 11;\n"
                                    "  optional uint64 newer_field_for_testing = 200;\n"
                                    "}\n";
#define NEWER_BODY                                                                          \
    "void f(perfetto_protos_TrackEvent *ev);\n"                                             \
    "void f(perfetto_protos_TrackEvent *ev) {\n"                                            \
    "    perfetto_protos_TrackEvent_set_type(ev, perfetto_protos_TrackEvent_TYPE_NEWER_FOR_TESTING);\n" \
    "    perfetto_protos_TrackEvent_set_newer_field_for_testing(ev, 1);\n"                   \
    "    perfetto_protos_TrackEvent_set_track_uuid(ev, 2);\n"                                \
    "    perfetto_protos_TrackEvent_set_cstr_name(ev, \"libtracec's field\");\n"              \
    "}\n"
#define BUILTIN_TE "#include \"perfetto/trace/track_event/track_event.tracec.h\"\n"
#define USER_TE "#include \"pf/track_event.tracec.h\"\n"

/* Generates `proto` as cg_tmp/pf/track_event.proto into cg_tmp (its header: pf/track_event.tracec.h). */
static void generate_user_copy(const char *proto) {
    write_tmp("pf/track_event.proto", proto);
    int st = -1;
    char *out = cg_run(&st, "cd '%s' && " CG_PROTOC_WITH_PLUGIN " --tracec_out=. -I. pf/track_event.proto 2>&1", cg_tmp);
    cr_assert_eq(st, 0, "protoc-gen-tracec failed:\n%s", out);
    cr_expect_str_eq(out, "", "protoc-gen-tracec printed:\n%s", out);
    free(out);
}

static void newer_copy(const char *cc) {
    generate_user_copy(k_newer_proto);
    int st = -1;
    char *out = compile(cc, "-fsyntax-only -I.", "builtin_first.c", BUILTIN_TE USER_TE NEWER_BODY, &st);
    cr_expect(st == 0 && out[0] == '\0', "%s, libtracec's header first (exit %d):\n%s", cc, st, out);
    free(out);
    out = compile(cc, "-fsyntax-only -I.", "user_first.c", USER_TE BUILTIN_TE NEWER_BODY, &st);
    cr_expect(st == 0 && out[0] == '\0', "%s, the user's header first (exit %d):\n%s", cc, st, out);
    free(out);
}

/* A copy whose field has one of libtracec's names with another type: a compile error, not a silent choice. */
static void conflicting_copy(const char *cc) {
    generate_user_copy("syntax = \"proto2\";\npackage perfetto.protos;\n"
                       "message TrackEvent { optional string track_uuid = 11; }\n");
    int st = -1;
    char *out = compile(cc, "-fsyntax-only -I.", "conflict.c", BUILTIN_TE USER_TE "int dummy;\n", &st);
    cr_expect_neq(st, 0, "%s: two setters perfetto_protos_TrackEvent_set_track_uuid compiled", cc);
    cr_expect(strstr(out, "perfetto_protos_TrackEvent_set_track_uuid") != NULL, "%s:\n%s", cc, out);
    free(out);
}

Test(codegen_types, gcc_newer_copy_of_perfetto_schema) { newer_copy("gcc"); }
Test(codegen_types, clang_newer_copy_of_perfetto_schema) { newer_copy("clang"); }
Test(codegen_types, gcc_conflicting_copy_does_not_compile) { conflicting_copy("gcc"); }
Test(codegen_types, clang_conflicting_copy_does_not_compile) { conflicting_copy("clang"); }
