/*
 * test_errors.c - every error path of protoc-gen-tracec, and the message the
 * user sees for it.
 *
 * codegen_errors_protoc: errors a .proto file or an option can cause, through
 *   protoc: it exits non-zero, prints exactly `--tracec_out: MESSAGE` and
 *   writes no file.
 * codegen_errors_request: errors protoc never lets through (unknown types, a
 *   file_to_generate missing from the request, editions): hand-written
 *   CodeGeneratorRequests, encoded by `protoc --encode`, sent to the plugin;
 *   it exits 0 with a response (decoded by `protoc --decode`) whose `error`
 *   is exactly the message and which holds no file.
 * codegen_errors_cli: the plugin run by hand (bad stdin, unwritable stdout,
 *   the command line).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "generator_util.h"

TestSuite(codegen_errors_protoc, .init = cg_tmp_setup, .fini = cg_tmp_teardown);
TestSuite(codegen_errors_request, .init = cg_tmp_setup, .fini = cg_tmp_teardown);
TestSuite(codegen_errors_cli, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

/* ---- through protoc ------------------------------------------------------ */

static size_t count_entries(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/*
 * Writes `files` (NULL-terminated name, text pairs) to cg_tmp, runs protoc on
 * `gen` with `opt` (may be "") and expects exit != 0, exactly
 * "--tracec_out: <message>\n" and no file written.
 */
static void protoc_error(const char *const *files, const char *gen, const char *opt, const char *message) {
    for (const char *const *f = files; *f; f += 2) {
        char *p = cg_fmt("%s/%s", cg_tmp, f[0]);
        char *text = cg_fmt("%s\n", f[1]);
        cg_write_text(p, text);
        free(text);
        free(p);
    }
    int st = -1;
    char *out = cg_run(&st, "cd '%s' && mkdir out && " CG_PROTOC_WITH_PLUGIN " --tracec_out=out -I. %s%s %s 2>&1",
                       cg_tmp, *opt ? "--tracec_opt=" : "", opt, gen);
    char *want = cg_fmt("--tracec_out: %s\n", message);
    cr_expect_neq(st, 0, "protoc exited 0; it printed:\n%s", out);
    cr_expect_str_eq(out, want, "protoc printed:\n  %s\nexpected:\n  %s", out, want);
    char *outdir = cg_fmt("%s/out", cg_tmp);
    size_t n = count_entries(outdir);
    cr_expect_eq(n, 0, "%zu files written on error", n);
    free(outdir);
    free(want);
    free(out);
}

#define A_PROTO "a.proto", "syntax = \"proto2\"; message A {}"
#define KNOWN "(known: include_style, include_prefix, guard_prefix, name_prefix, descriptors)"

Test(codegen_errors_protoc, unknown_option) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "bogus=1", "--tracec_opt: unknown option 'bogus' " KNOWN);
}

/* name_prefix=a,name_prefix=b is an error, not b kept silently. */
Test(codegen_errors_protoc, repeated_option) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "name_prefix=a_,name_prefix=b_",
                 "--tracec_opt: option 'name_prefix' is given more than once");
}

Test(codegen_errors_protoc, repeated_option_with_the_same_value) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "descriptors=file,include_style=quote,descriptors=file",
                 "--tracec_opt: option 'descriptors' is given more than once");
}

Test(codegen_errors_protoc, option_without_a_value) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "descriptors", "--tracec_opt: descriptors must be none, file or deps, not ''");
}

Test(codegen_errors_protoc, bad_include_style) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "include_style=curly",
                 "--tracec_opt: include_style must be quote or angle, not 'curly'");
}

Test(codegen_errors_protoc, bad_descriptors) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "descriptors=all",
                 "--tracec_opt: descriptors must be none, file or deps, not 'all'");
}

Test(codegen_errors_protoc, bad_name_prefix) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "name_prefix=9x",
                 "--tracec_opt: name_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*), "
                 "not '9x'");
}

Test(codegen_errors_protoc, one_bad_option_among_good_ones) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "include_style=angle,guard_prefix=X_,nope",
                 "--tracec_opt: unknown option 'nope' " KNOWN);
}

Test(codegen_errors_protoc, two_messages_with_one_c_name) {
    const char *files[] = {"c.proto", "syntax = \"proto2\"; package p; message A { message B {} } message A_B {}",
                           NULL};
    protoc_error(files, "c.proto", "",
                 "c.proto: the C name p_A_B of message p.A_B is also the C name of message p.A.B; rename one of "
                 "them, or generate with --tracec_opt=name_prefix=...");
}

Test(codegen_errors_protoc, enum_value_and_message_with_one_c_name) {
    const char *files[] = {"e.proto", "syntax = \"proto2\"; package p; enum E { A_B = 0; } message A { message B {} }",
                           NULL};
    protoc_error(files, "e.proto", "",
                 "e.proto: the C name p_A_B of message p.A.B is also the C name of enum value p.E.A_B; rename one "
                 "of them, or generate with --tracec_opt=name_prefix=...");
}

Test(codegen_errors_protoc, type_in_another_file_with_the_same_c_name) {
    const char *files[] = {"x.proto", "syntax = \"proto2\"; package p.q; message R {}", "y.proto",
                           "syntax = \"proto2\"; package p; import \"x.proto\"; message q_R { optional q.R r = 1; }",
                           NULL};
    protoc_error(files, "y.proto", "",
                 "y.proto: the C name p_q_R of message p.q_R is also the C name of message p.q.R; rename one of "
                 "them, or generate with --tracec_opt=name_prefix=...");
}

/*
 * protoc only warns when two extensions give one message one number (its
 * warning comes first); the plugin refuses the request.
 */
static void duplicate_number(const char *const *files, const char *gen, const char *message) {
    for (const char *const *f = files; *f; f += 2) {
        char *p = cg_fmt("%s/%s", cg_tmp, f[0]);
        cg_write_text(p, f[1]);
        free(p);
    }
    int st = -1;
    char *out = cg_run(&st, "cd '%s' && rm -rf out && mkdir out && " CG_PROTOC_WITH_PLUGIN " --tracec_out=out -I. %s 2>&1",
                       cg_tmp, gen);
    char *want = cg_fmt("\n--tracec_out: %s\n", message);
    cr_expect_neq(st, 0, "protoc exited 0; it printed:\n%s", out);
    cr_expect(strstr(out, "warning: Extension number") != NULL && strstr(out, want) != NULL,
              "protoc printed:\n%s\nexpected its warning, then:%s", out, want);
    char *outdir = cg_fmt("%s/out", cg_tmp);
    cr_expect_eq(count_entries(outdir), 0, "files written on error");
    free(outdir);
    free(want);
    free(out);
}

#define BASE_PROTO "base.proto", "syntax = \"proto2\"; package b; message T { extensions 100 to 200; }"

Test(codegen_errors_protoc, one_extendee_extended_twice_with_one_number) {
    const char *files[] = {BASE_PROTO, "g.proto",
                           "syntax = \"proto2\"; package g; import \"base.proto\"; message E { extend b.T { "
                           "optional string kernel_name = 150; } }",
                           "o.proto",
                           "syntax = \"proto2\"; package o; import \"base.proto\"; extend b.T { optional int64 "
                           "other_name = 150; }",
                           NULL};
    duplicate_number(files, "g.proto o.proto",
                     "o.proto: extensions g.E.kernel_name (in g.proto) and o.other_name extend b.T with one number, 150");
}

Test(codegen_errors_protoc, two_files_with_one_descriptor_symbol) {
    const char *files[] = {"a-b.proto", "syntax = \"proto2\"; package one; message M {}", "a_b.proto",
                           "syntax = \"proto2\"; package two; message M {}", NULL};
    protoc_error(files, "a-b.proto a_b.proto", "",
                 "a_b.proto: the C name tracec_fd_a_b_proto of the descriptor of a_b.proto is also the C name of "
                 "the descriptor of a-b.proto; rename one of them, or generate with --tracec_opt=name_prefix=...");
}

/* ---- hand-written requests --------------------------------------------- */

#define PLUGIN_PROTO "-I" TRACEC_PROTOBUF_INCLUDE " google/protobuf/compiler/plugin.proto"

/* Encodes a CodeGeneratorRequest textproto with protoc into cg_tmp/req.bin. */
static char *encode_request(const char *textproto) {
    char *txt = cg_fmt("%s/req.txtpb", cg_tmp), *bin = cg_fmt("%s/req.bin", cg_tmp);
    cg_write_text(txt, textproto);
    int st = -1;
    char *out = cg_run(&st, "'%s' --encode=google.protobuf.compiler.CodeGeneratorRequest " PLUGIN_PROTO
                            " < '%s' 2>&1 > '%s'",
                       TRACEC_PROTOC, txt, bin);
    cr_assert_eq(st, 0, "protoc --encode of the request failed:\n%s\n%s", out, textproto);
    free(out);
    free(txt);
    return bin;
}

/* `s` as a text-format string body (the escapes protoc --decode prints). */
static char *text_escape(const char *s) {
    char *out = malloc(strlen(s) * 2 + 1), *o = out;
    for (; *s; s++) {
        if (*s == '"' || *s == '\'' || *s == '\\') *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

/*
 * Sends the request to the plugin: it exits 0, and its response, decoded by
 * protoc, has `error: "<message>"` and no file.
 */
static void request_error(const char *textproto, const char *message) {
    char *req = encode_request(textproto);
    char *resp = cg_fmt("%s/resp.bin", cg_tmp);
    int st = -1;
    char *err = cg_run(&st, "'%s' < '%s' 2>&1 > '%s'", CG_PLUGIN, req, resp);
    cr_expect_eq(st, 0, "the plugin exited %d:\n%s", st, err);
    cr_expect_str_eq(err, "", "the plugin printed to stderr:\n%s", err);
    char *dec = cg_run(&st, "'%s' --decode=google.protobuf.compiler.CodeGeneratorResponse " PLUGIN_PROTO
                            " < '%s' 2>&1",
                       TRACEC_PROTOC, resp);
    cr_assert_eq(st, 0, "the plugin's stdout is not a CodeGeneratorResponse:\n%s", dec);
    char *esc = text_escape(message);
    char *line = cg_fmt("error: \"%s\"\n", esc);
    const char *got = strstr(dec, "error: ");
    cr_expect(got == dec || (got && got[-1] == '\n'), "the response has no error; it is:\n%s", dec);
    cr_expect(got && strncmp(got, line, strlen(line)) == 0, "response:\n%s\nexpected the line:\n%s", dec, line);
    cr_expect(strstr(dec, "file {") == NULL, "the response holds files:\n%s", dec);
    free(line);
    free(esc);
    free(dec);
    free(err);
    free(resp);
    free(req);
}

Test(codegen_errors_request, file_to_generate_not_in_proto_file) {
    request_error("file_to_generate: \"missing.proto\"\n"
                  "proto_file { name: \"present.proto\" }\n",
                  "missing.proto: not in the request's proto_file list");
}

Test(codegen_errors_request, unsupported_syntax) {
    request_error("file_to_generate: \"ed.proto\"\n"
                  "proto_file { name: \"ed.proto\" package: \"p\" syntax: \"editions\" message_type { name: \"M\" } }\n",
                  "ed.proto: syntax \"editions\" is not supported: protoc-gen-tracec generates proto2 and proto3 "
                  "files");
}

Test(codegen_errors_request, message_type_not_found) {
    request_error("file_to_generate: \"t.proto\"\n"
                  "proto_file { name: \"t.proto\" package: \"p\" syntax: \"proto2\"\n"
                  "  message_type { name: \"M\" field { name: \"child\" number: 1 label: LABEL_OPTIONAL\n"
                  "    type: TYPE_MESSAGE type_name: \".p.Missing\" } } }\n",
                  "t.proto: field child: type .p.Missing not found in the request");
}

Test(codegen_errors_request, enum_type_not_found) {
    request_error("file_to_generate: \"u.proto\"\n"
                  "proto_file { name: \"u.proto\" package: \"p\" syntax: \"proto2\"\n"
                  "  message_type { name: \"M\" field { name: \"kind\" number: 1 label: LABEL_OPTIONAL\n"
                  "    type: TYPE_ENUM type_name: \".p.NoEnum\" } } }\n",
                  "u.proto: field kind: enum .p.NoEnum not found in the request");
}

Test(codegen_errors_request, wrapper_extendee_not_found) {
    request_error("file_to_generate: \"w.proto\"\n"
                  "proto_file { name: \"w.proto\" package: \"p\" syntax: \"proto2\"\n"
                  "  message_type { name: \"W\" extension { name: \"x\" number: 100 label: LABEL_OPTIONAL\n"
                  "    type: TYPE_INT32 extendee: \".p.Nowhere\" } } }\n",
                  "w.proto: wrapper p.W: extendee .p.Nowhere not found in the request");
}

Test(codegen_errors_request, file_scope_extendee_not_found) {
    request_error("file_to_generate: \"v.proto\"\n"
                  "proto_file { name: \"v.proto\" package: \"p\" syntax: \"proto2\"\n"
                  "  extension { name: \"y\" number: 100 label: LABEL_OPTIONAL type: TYPE_INT32\n"
                  "    extendee: \".p.Nowhere\" } }\n",
                  "v.proto: extendee .p.Nowhere of extension y not found in the request");
}

/* protoc refuses this shape itself (two extensions of one file with one number); a hand-made request is refused too. */
Test(codegen_errors_request, one_extendee_extended_twice_with_one_number_in_one_file) {
    request_error("file_to_generate: \"h.proto\"\n"
                  "proto_file { name: \"h.proto\" package: \"h\" syntax: \"proto2\"\n"
                  "  message_type { name: \"T\" extension_range { start: 100 end: 200 }\n"
                  "    nested_type { name: \"N\" extension { name: \"y\" number: 120 label: LABEL_OPTIONAL\n"
                  "      type: TYPE_INT32 extendee: \".h.T\" } } }\n"
                  "  extension { name: \"x\" number: 120 label: LABEL_OPTIONAL type: TYPE_INT32 extendee: \".h.T\" } }\n",
                  "h.proto: extensions h.x (in h.proto) and h.T.N.y extend h.T with one number, 120");
}

/*
 * Requests the plugin fuzzer (fuzz/plugin) showed the generator crashing on,
 * and their neighbours: shapes protoc never sends, each answered by an error
 * that names the file and the problem (protoc-gen-tracec/validate.c).  The
 * fuzzer's own inputs are replayed by test_fuzz_replay.c.
 */
#define MSG_A(field) \
    "  message_type { name: \"M\" field { " field " } }\n"

Test(codegen_errors_request, proto_file_without_name) {
    request_error("file_to_generate: \"a.proto\"\nproto_file { package: \"p\" }\n",
                  "proto_file #0 of the request has no name");
}

Test(codegen_errors_request, proto_file_name_with_a_quote) {
    request_error("file_to_generate: \"a.proto\"\nproto_file { name: \"a\\\"b.proto\" }\n",
                  "proto_file #0 of the request: \"a\\042b.proto\" is not a file name (empty, not UTF-8, or with a "
                  "control character, quote, backslash or \"*/\")");
}

Test(codegen_errors_request, proto_file_listed_twice) {
    request_error("file_to_generate: \"a.proto\"\nproto_file { name: \"a.proto\" }\nproto_file { name: \"a.proto\" }\n",
                  "a.proto: in the request's proto_file list twice");
}

Test(codegen_errors_request, file_to_generate_listed_twice) {
    request_error("file_to_generate: \"a.proto\"\nfile_to_generate: \"a.proto\"\nproto_file { name: \"a.proto\" }\n",
                  "a.proto: in the request's file_to_generate list twice");
}

Test(codegen_errors_request, package_with_a_leading_dot) {
    request_error("file_to_generate: \"d.proto\"\n"
                  "proto_file { name: \"d.proto\" package: \".p\" enum_type { name: \"E\" value { name: \"A\" number: 0 } } }\n",
                  "d.proto: package \".p\" is not a dotted name of identifiers");
}

Test(codegen_errors_request, message_without_name) {
    request_error("file_to_generate: \"m.proto\"\n"
                  "proto_file { name: \"m.proto\" package: \"p\" message_type { } }\n",
                  "m.proto: message #0 in p has no name");
}

Test(codegen_errors_request, message_name_that_is_not_an_identifier) {
    request_error("file_to_generate: \"m.proto\"\n"
                  "proto_file { name: \"m.proto\" message_type { name: \"a.b\" } }\n",
                  "m.proto: message #0 in the file: name \"a.b\" is not an identifier");
}

Test(codegen_errors_request, field_without_name) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("number: 1 label: LABEL_OPTIONAL type: TYPE_INT32") "}\n",
                  "f.proto: field #0 in p.M has no name");
}

Test(codegen_errors_request, field_without_type) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("name: \"a\" number: 1 label: LABEL_OPTIONAL") "}\n",
                  "f.proto: field p.M.a has no type");
}

Test(codegen_errors_request, message_field_without_type_name) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("name: \"a\" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE") "}\n",
                  "f.proto: field p.M.a: a message field needs a type_name");
}

Test(codegen_errors_request, field_number_too_big) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("name: \"a\" number: 536870912 label: LABEL_OPTIONAL type: TYPE_INT32") "}\n",
                  "f.proto: field p.M.a: number 536870912 is not a field number (1 to 536870911)");
}

Test(codegen_errors_request, field_without_number) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("name: \"a\" label: LABEL_OPTIONAL type: TYPE_INT32") "}\n",
                  "f.proto: field p.M.a: number 0 is not a field number (1 to 536870911)");
}

Test(codegen_errors_request, oneof_index_out_of_range) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\"\n"
                  MSG_A("name: \"a\" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 oneof_index: 3") "}\n",
                  "f.proto: field p.M.a: oneof_index 3 is out of range (0 oneofs)");
}

Test(codegen_errors_request, two_fields_with_one_name) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\" message_type { name: \"M\"\n"
                  "  field { name: \"a\" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }\n"
                  "  field { name: \"a\" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 } } }\n",
                  "f.proto: message p.M: two fields are named a");
}

Test(codegen_errors_request, two_fields_with_one_number) {
    request_error("file_to_generate: \"f.proto\"\n"
                  "proto_file { name: \"f.proto\" package: \"p\" message_type { name: \"M\"\n"
                  "  field { name: \"a\" number: 7 label: LABEL_OPTIONAL type: TYPE_INT32 }\n"
                  "  field { name: \"b\" number: 7 label: LABEL_OPTIONAL type: TYPE_INT32 } } }\n",
                  "f.proto: message p.M: fields a and b have one number, 7");
}

Test(codegen_errors_request, enum_without_values) {
    request_error("file_to_generate: \"e.proto\"\n"
                  "proto_file { name: \"e.proto\" package: \"p\" enum_type { name: \"E\" } }\n",
                  "e.proto: enum p.E has no values");
}

Test(codegen_errors_request, enum_value_without_name) {
    request_error("file_to_generate: \"e.proto\"\n"
                  "proto_file { name: \"e.proto\" package: \"p\" enum_type { name: \"E\" value { number: 0 } } }\n",
                  "e.proto: value #0 in p.E has no name");
}

Test(codegen_errors_request, wrapper_extension_without_extendee) {
    request_error("file_to_generate: \"w.proto\"\n"
                  "proto_file { name: \"w.proto\" package: \"p\"\n"
                  "  message_type { name: \"W\" extension { name: \"x\" number: 100 label: LABEL_OPTIONAL\n"
                  "    type: TYPE_INT32 } } }\n",
                  "w.proto: extension p.W.x has no extendee");
}

Test(codegen_errors_request, file_scope_extension_without_name) {
    request_error("file_to_generate: \"v.proto\"\n"
                  "proto_file { name: \"v.proto\" package: \"p\" message_type { name: \"M\" extension_range { start: 1 end: 9 } }\n"
                  "  extension { number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 extendee: \".p.M\" } }\n",
                  "v.proto: extension #0 in p has no name");
}

Test(codegen_errors_request, import_not_in_the_request) {
    request_error("file_to_generate: \"i.proto\"\n"
                  "proto_file { name: \"i.proto\" dependency: \"gone.proto\" }\n",
                  "i.proto: import \"gone.proto\" is not in the request");
}

Test(codegen_errors_request, import_cycle) {
    request_error("file_to_generate: \"a.proto\"\n"
                  "proto_file { name: \"c.proto\" }\n"
                  "proto_file { name: \"a.proto\" dependency: \"c.proto\" dependency: \"b.proto\" }\n"
                  "proto_file { name: \"b.proto\" dependency: \"a.proto\" }\n",
                  "a.proto: import cycle: a.proto -> b.proto -> a.proto");
}

Test(codegen_errors_request, message_defined_twice) {
    request_error("file_to_generate: \"b.proto\"\n"
                  "proto_file { name: \"a.proto\" package: \"p\" message_type { name: \"M\" } }\n"
                  "proto_file { name: \"b.proto\" package: \"p\" message_type { name: \"M\" } }\n",
                  "b.proto: message p.M is defined twice (the other one is a message in a.proto)");
}

Test(codegen_errors_request, message_and_enum_with_one_name) {
    request_error("file_to_generate: \"x.proto\"\n"
                  "proto_file { name: \"x.proto\" package: \"p\" message_type { name: \"X\" }\n"
                  "  enum_type { name: \"X\" value { name: \"A\" number: 0 } } }\n",
                  "x.proto: message p.X is defined twice (the other one is an enum in x.proto)");
}

Test(codegen_errors_request, message_field_of_an_enum_type) {
    request_error("file_to_generate: \"k.proto\"\n"
                  "proto_file { name: \"k.proto\" package: \"p\" enum_type { name: \"E\" value { name: \"A\" number: 0 } }\n"
                  MSG_A("name: \"e\" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: \".p.E\"") "}\n",
                  "k.proto: field e: type .p.E is an enum, not a message");
}

Test(codegen_errors_request, enum_field_of_a_message_type) {
    request_error("file_to_generate: \"k.proto\"\n"
                  "proto_file { name: \"k.proto\" package: \"p\"\n"
                  MSG_A("name: \"m\" number: 1 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: \".p.M\"") "}\n",
                  "k.proto: field m: type .p.M is a message, not an enum");
}

Test(codegen_errors_request, include_prefix_with_a_quote) {
    request_error("file_to_generate: \"a.proto\"\nparameter: \"include_prefix=a\\\"b/\"\n"
                  "proto_file { name: \"a.proto\" }\n",
                  "--tracec_opt: include_prefix must be a path without quotes, '<', '>', backslashes or control "
                  "characters, not 'a\\042b/'");
}

Test(codegen_errors_protoc, bad_guard_prefix) {
    const char *files[] = {A_PROTO, NULL};
    protoc_error(files, "a.proto", "guard_prefix=X-",
                 "--tracec_opt: guard_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*), not 'X-'");
}

/* ---- the plugin run by hand -------------------------------------------- */

/* Runs the plugin with `redirs`; returns stderr (malloc'd), stdout in *out (may be NULL). */
static char *run_plugin(const char *args, const char *redirs, int *st, char **out) {
    char *errp = cg_fmt("%s/stderr", cg_tmp);
    char *o = cg_run(st, "'%s' %s %s 2> '%s'", CG_PLUGIN, args, redirs, errp);
    char *err = cg_read(errp, NULL);
    cr_assert_not_null(err);
    free(errp);
    if (out)
        *out = o;
    else
        free(o);
    return err;
}

Test(codegen_errors_cli, stdin_that_is_not_a_request) {
    char *in = cg_fmt("%s/garbage", cg_tmp);
    cg_write(in, "\xff\xff\xff garbage", 11);
    char *redir = cg_fmt("< '%s'", in);
    int st = -1;
    char *err = run_plugin("", redir, &st, NULL);
    cr_expect_eq(st, 1, "exit %d, stderr:\n%s", st, err);
    cr_expect(strstr(err, "protoc-gen-tracec: stdin is not a CodeGeneratorRequest (run me through protoc") != NULL,
              "stderr:\n%s", err);
    free(err);
    free(redir);
    free(in);
}

Test(codegen_errors_cli, stdin_that_cannot_be_read) {
    int st = -1;
    char *err = run_plugin("", "< /", &st, NULL);
    cr_expect_eq(st, 1, "exit %d, stderr:\n%s", st, err);
    cr_expect(strstr(err, "protoc-gen-tracec: cannot read the request from stdin") != NULL, "stderr:\n%s", err);
    free(err);
}

Test(codegen_errors_cli, unknown_command_line_argument) {
    int st = -1;
    char *err = run_plugin("--bogus", "< /dev/null", &st, NULL);
    cr_expect_eq(st, 2, "exit %d, stderr:\n%s", st, err);
    cr_expect(strstr(err, "Run it through protoc") != NULL, "stderr:\n%s", err);
    free(err);
}

Test(codegen_errors_cli, help_lists_every_option) {
    int st = -1;
    char *out = NULL;
    char *err = run_plugin("--help", "< /dev/null", &st, &out);
    cr_expect_eq(st, 0, "exit %d, stderr:\n%s", st, err);
    static const char opts[][20] = {"include_style=", "include_prefix=", "guard_prefix=", "name_prefix=",
                                    "descriptors="};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        cr_expect(strstr(out, opts[i]) != NULL, "--help does not mention %s; stdout:\n%s", opts[i], out);
    free(out);
    free(err);
}

Test(codegen_errors_cli, version) {
    int st = -1;
    char *out = NULL;
    char *err = run_plugin("--version", "< /dev/null", &st, &out);
    cr_expect_eq(st, 0, "exit %d, stderr:\n%s", st, err);
    cr_expect(strncmp(out, "protoc-gen-tracec ", 18) == 0, "stdout:\n%s", out);
    free(out);
    free(err);
}

Test(codegen_errors_cli, stdout_that_cannot_be_written) {
    if (access("/dev/full", W_OK) != 0) cg_skip_test("no writable /dev/full here");
    char *req = encode_request("file_to_generate: \"ok.proto\"\nproto_file { name: \"ok.proto\" }\n");
    char *redir = cg_fmt("< '%s' > /dev/full", req);
    int st = -1;
    char *err = run_plugin("", redir, &st, NULL);
    cr_expect_eq(st, 1, "exit %d, stderr:\n%s", st, err);
    cr_expect(strstr(err, "protoc-gen-tracec: cannot write the response to stdout") != NULL, "stderr:\n%s", err);
    free(err);
    free(redir);
    free(req);
}

/* ---- warnings (exit 0, files written, one line each on stderr) ------------ */

TestSuite(codegen_warnings, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

/* Runs protoc on `gen` (written from `text`) with our schema on the path; returns stderr, expects success. */
static char *protoc_warnings(const char *gen, const char *text) {
    char *p = cg_fmt("%s/%s", cg_tmp, gen);
    cg_write_text(p, text);
    free(p);
    int st = -1;
    char *err = cg_run(&st, "cd '%s' && mkdir -p out && " CG_PROTOC_WITH_PLUGIN
                            " --tracec_out=out -I. -I" TRACEC_SOURCE_DIR "/protos %s 2>&1 >/dev/null",
                       cg_tmp, gen);
    cr_assert_eq(st, 0, "protoc failed:\n%s", err);
    char *h = cg_fmt("%s/out/%.*s.tracec.h", cg_tmp, (int)(strlen(gen) - 6), gen);
    size_t n = 0;
    char *gen_h = cg_read(h, &n);
    cr_expect_not_null(gen_h, "no %s written", h);
    free(gen_h);
    free(h);
    return err;
}

#define PACKED_WARNING(what, type) \
    "protoc-gen-tracec: warning: w.proto: " what " is a packed repeated " type
#define TP_DROPS ": the trace processor drops every arg of an event that has it (stat track_event_parser_errors); use [packed = false]\n"

/* A warning: the trace processor drops all args of an event with a packed sint32/sint64/bool extension field. */
Test(codegen_warnings, packed_zigzag_or_bool_in_track_event_extensions) {
    char *err = protoc_warnings("w.proto",
        "syntax = \"proto2\";\n"
        "package qa;\n"
        "import \"perfetto/trace/track_event/track_event.proto\";\n"
        "message Carried { repeated sint32 a = 1 [packed = true]; repeated bool unpacked = 2; }\n"
        "message E {\n"
        "  extend perfetto.protos.TrackEvent {\n"
        "    repeated sint64 deltas = 3200 [packed = true];\n"
        "    repeated bool flags = 3201 [packed = true];\n"
        "    repeated sint32 unpacked = 3202;\n"
        "    repeated int64 fine = 3204 [packed = true];\n"
        "    optional Carried carried = 3203;\n"
        "  }\n"
        "}\n"
        "extend perfetto.protos.TrackEvent { repeated sint32 top = 3205 [packed = true]; }\n");
    cr_expect_str_eq(err,
        PACKED_WARNING("TrackEvent extension qa.top", "sint32") TP_DROPS
        PACKED_WARNING("TrackEvent extension qa.E.deltas", "sint64") TP_DROPS
        PACKED_WARNING("TrackEvent extension qa.E.flags", "bool") TP_DROPS
        PACKED_WARNING("qa.Carried.a", "sint32 carried by TrackEvent extension qa.E.carried") TP_DROPS);
    free(err);
}

/* A warning: the trace processor refuses a trace that redefines a message of its schema differently. */
Test(codegen_warnings, perfetto_schema_names_redefined) {
    char *err = protoc_warnings("g.proto",
        "syntax = \"proto2\";\n"
        "package perfetto.protos;\n"
        "message DebugAnnotation { optional string device = 1; }\n"
        "message MyOwn { optional int32 a = 1; message SourceLocation {} }\n"
        "enum BuiltinClock { BUILTIN_CLOCK_UNKNOWN = 0; }\n");
    cr_expect_str_eq(err,
        "protoc-gen-tracec: warning: g.proto: enum perfetto.protos.BuiltinClock has the full name of an enum of "
        "Perfetto's schema but lacks its value BUILTIN_CLOCK_REALTIME = 1: the trace processor refuses a trace that "
        "describes it differently; use a package of your own\n"
        "protoc-gen-tracec: warning: g.proto: message perfetto.protos.DebugAnnotation has the full name of a "
        "message of Perfetto's schema but not its field 1 (uint64 name_iid): the trace processor refuses a trace "
        "that describes it differently (\"Field ... is re-introduced with different type\"); use a package of your "
        "own\n");
    free(err);
}

/*
 * A file outside Perfetto's schema (nothing here defines TracePacket) whose
 * perfetto.protos messages and enums are Perfetto's own, as tracec's schema
 * has them or a newer superset of them (more fields, more values, nested
 * types of their own): no warning.  One field of another type at a number
 * of Perfetto's is warned, by name.
 */
Test(codegen_warnings, perfetto_schema_copies_and_supersets) {
    char *err = protoc_warnings("copy.proto",
        "syntax = \"proto2\";\n"
        "package perfetto.protos;\n"
        "message SourceLocation {\n"
        "  optional uint64 iid = 1;\n"
        "  optional string file_name = 2;\n"
        "  optional string function_name = 3;\n"
        "  optional uint32 line_number = 4;\n"
        "}\n"
        "message LogMessageBody { optional uint64 iid = 1; optional string body = 2; optional string extra = 9; }\n"
        "enum BuiltinClock {\n"
        "  BUILTIN_CLOCK_UNKNOWN = 0; BUILTIN_CLOCK_REALTIME = 1; BUILTIN_CLOCK_REALTIME_COARSE = 2;\n"
        "  BUILTIN_CLOCK_MONOTONIC = 3; BUILTIN_CLOCK_MONOTONIC_COARSE = 4; BUILTIN_CLOCK_MONOTONIC_RAW = 5;\n"
        "  BUILTIN_CLOCK_BOOTTIME = 6; BUILTIN_CLOCK_TSC = 9; BUILTIN_CLOCK_PERF = 10;\n"
        "  BUILTIN_CLOCK_TRACE_FILE = 11; BUILTIN_CLOCK_NEWER = 12; BUILTIN_CLOCK_MAX_ID = 63;\n"
        "}\n");
    cr_expect_str_eq(err, "", "a copy or a newer superset of Perfetto's definitions was warned:\n%s", err);
    free(err);
    err = protoc_warnings("other.proto",
        "syntax = \"proto2\";\n"
        "package perfetto.protos;\n"
        "message SourceLocation {\n"
        "  optional uint64 iid = 1;\n"
        "  optional string file_name = 2;\n"
        "  optional bytes function_name = 3;\n"
        "  optional uint32 line_number = 4;\n"
        "  optional string newer = 5;\n"
        "}\n");
    cr_expect_str_eq(err,
        "protoc-gen-tracec: warning: other.proto: message perfetto.protos.SourceLocation has the full name of a "
        "message of Perfetto's schema but not its field 3 (string function_name): the trace processor refuses a "
        "trace that describes it differently (\"Field ... is re-introduced with different type\"); use a package "
        "of your own\n");
    free(err);
}

/* Files of Perfetto's schema, and names of other packages, give no warning. */
Test(codegen_warnings, none_for_the_schema_or_other_packages) {
    char *err = protoc_warnings("o.proto",
        "syntax = \"proto2\";\n"
        "package other;\n"
        "import \"perfetto/trace/track_event/track_event.proto\";\n"
        "message DebugAnnotation { repeated sint32 a = 1 [packed = true]; }\n"
        "extend perfetto.protos.TrackEvent { repeated sint32 plain = 3300; }\n");
    cr_expect_str_eq(err, "");
    free(err);
}
