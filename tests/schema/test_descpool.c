/*
 * test_descpool.c - the descriptor pool: sets from files, from protoc, the
 * built-in schema, precedence, lazy resolution across sets, extensions.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tracec/descpool.h"
#include "tracec/protoc.h"

static tracec_pool *test_pool(void) {
    tracec_pool *p = tracec_pool_new();
    cr_assert(p);
    tracec_error err = {{0}};
    cr_assert_eq(tracec_pool_add_set_file(p, TP_SET, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    return p;
}

Test(descpool, messages_and_fields) {
    tracec_pool *p = test_pool();
    const tracec_msgdef *m = tracec_pool_find_message(p, "tp.All");
    cr_assert(m);
    cr_assert_str_eq(tracec_msgdef_full_name(m), "tp.All");
    cr_assert_str_eq(tracec_msgdef_name(m), "All");
    cr_assert_str_eq(tracec_msgdef_file(m), "tp2.proto");
    cr_assert_not(tracec_msgdef_is_proto3(m));
    cr_assert(tracec_pool_find_message(p, ".tp.All") == m);

    const tracec_fielddef *f = tracec_msgdef_field_by_name(m, "f_sint64");
    cr_assert(f);
    cr_assert_eq(tracec_fielddef_number(f), 18);
    cr_assert_eq(tracec_fielddef_type(f), TRACEC_TYPE_SINT64);
    cr_assert(tracec_msgdef_field_by_number(m, 18) == f);
    cr_assert_str_eq(tracec_fielddef_full_name(f), "tp.All.f_sint64");
    cr_assert(tracec_fielddef_containing(f) == m);
    cr_assert_null(tracec_msgdef_field_by_number(m, 999));
    cr_assert_null(tracec_msgdef_field_by_name(m, "nope"));

    const tracec_fielddef *c = tracec_msgdef_field_by_name(m, "child");
    cr_assert(tracec_fielddef_message(c) == tracec_pool_find_message(p, "tp.Child"));
    const tracec_fielddef *e = tracec_msgdef_field_by_name(m, "f_enum");
    const tracec_enumdef *ed = tracec_fielddef_enum(e);
    cr_assert(ed == tracec_pool_find_enum(p, "tp.Color"));
    cr_assert(tracec_enumdef_is_closed(ed));
    cr_assert_eq(tracec_enumdef_value_count(ed), 5);
    cr_assert_str_eq(tracec_enumdef_name_of(ed, 2), "BLUE");
    int32_t n = 0;
    cr_assert(tracec_enumdef_number_of(ed, "NEG", &n));
    cr_assert_eq(n, -5);
    cr_assert_not(tracec_enumdef_number_of(ed, "PURPLE", &n));

    cr_assert(tracec_fielddef_is_packed(tracec_msgdef_field_by_name(m, "p_int32")));
    cr_assert_not(tracec_fielddef_is_packed(tracec_msgdef_field_by_name(m, "r_int32")));
    cr_assert(tracec_fielddef_is_repeated(tracec_msgdef_field_by_name(m, "r_int32")));

    /* Groups: field found by its field name through the public API. */
    const tracec_fielddef *g = tracec_msgdef_field_by_name(m, "mygroup");
    cr_assert(g);
    cr_assert_eq(tracec_fielddef_type(g), TRACEC_TYPE_GROUP);
    cr_assert_str_eq(tracec_msgdef_full_name(tracec_fielddef_message(g)), "tp.All.MyGroup");

    /* Oneofs and maps. */
    cr_assert_eq(tracec_msgdef_oneof_count(m), 1);
    cr_assert_str_eq(tracec_msgdef_oneof_name(m, 0), "choice");
    cr_assert_eq(tracec_fielddef_oneof_index(tracec_msgdef_field_by_name(m, "o_str")), 0);
    cr_assert_eq(tracec_fielddef_oneof_index(tracec_msgdef_field_by_name(m, "f_int32")), -1);
    const tracec_fielddef *mf = tracec_msgdef_field_by_name(m, "m_str_int");
    cr_assert(tracec_msgdef_is_map_entry(tracec_fielddef_message(mf)));

    cr_assert(tracec_msgdef_in_extension_range(m, 100));
    cr_assert(tracec_msgdef_in_extension_range(m, 199));
    cr_assert_not(tracec_msgdef_in_extension_range(m, 200));
    cr_assert_eq(tracec_pool_check(p, NULL), TRACEC_STATUS_SUCCESS);
    tracec_pool_free(p);
}

Test(descpool, proto3) {
    tracec_pool *p = test_pool();
    const tracec_msgdef *m = tracec_pool_find_message(p, "tp3.Msg");
    cr_assert(tracec_msgdef_is_proto3(m));
    cr_assert(tracec_fielddef_is_packed(tracec_msgdef_field_by_name(m, "packed_ints")));
    cr_assert(tracec_fielddef_is_packed(tracec_msgdef_field_by_name(m, "modes")));
    cr_assert_not(tracec_fielddef_is_packed(tracec_msgdef_field_by_name(m, "unpacked")));
    cr_assert_not(tracec_enumdef_is_closed(tracec_pool_find_enum(p, "tp3.Mode")));
    /* proto3 optional: synthetic oneof not counted. */
    cr_assert_eq(tracec_msgdef_oneof_count(m), 0);
    cr_assert_eq(tracec_fielddef_oneof_index(tracec_msgdef_field_by_name(m, "opt")), -1);
    tracec_pool_free(p);
}

Test(descpool, extensions) {
    tracec_pool *p = test_pool();
    const tracec_msgdef *m = tracec_pool_find_message(p, "tp.All");
    const tracec_fielddef *x = tracec_pool_find_extension(p, "tp.ext_int");
    cr_assert(x);
    cr_assert(tracec_fielddef_is_extension(x));
    cr_assert(tracec_fielddef_containing(x) == m);
    cr_assert_str_eq(tracec_fielddef_scope(x), "tp");
    const tracec_fielddef *s = tracec_pool_find_extension(p, "tp.Outer.scoped_ext");
    cr_assert(s);
    cr_assert_str_eq(tracec_fielddef_scope(s), "tp.Outer");
    cr_assert(tracec_pool_find_extension_by_number(p, m, 101) == s);
    cr_assert_null(tracec_pool_find_extension_by_number(p, m, 150));
    cr_assert_eq(tracec_pool_extension_count(p, m), 6);
    for (size_t i = 1; i < 6; i++)
        cr_assert_lt(tracec_fielddef_number(tracec_pool_extension_at(p, m, i - 1)),
                     tracec_fielddef_number(tracec_pool_extension_at(p, m, i)));
    cr_assert(tracec_fielddef_is_packed(tracec_pool_find_extension(p, "tp.ext_packed")));
    tracec_pool_free(p);
}

Test(descpool, builtin_schema) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err = {{0}};
    cr_assert_eq(tracec_pool_add_builtin_schema(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    const tracec_msgdef *te = tracec_pool_find_message(p, "perfetto.protos.TrackEvent");
    cr_assert(te);
    cr_assert(tracec_msgdef_in_extension_range(te, 9900));
    const tracec_msgdef *tp = tracec_pool_find_message(p, "perfetto.protos.TracePacket");
    const tracec_fielddef *f = tracec_msgdef_field_by_number(tp, 11);
    cr_assert_str_eq(tracec_fielddef_name(f), "track_event");
    cr_assert(tracec_fielddef_message(f) == te);
    cr_assert(tracec_pool_find_message(p, "google.protobuf.FileDescriptorSet"));
    cr_assert_eq(tracec_pool_check(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_gt(tracec_pool_message_count(p), 10);
    tracec_pool_free(p);
}

Test(descpool, proto_files_via_protoc) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err = {{0}};
    const char *inc[] = {TP_PROTO_DIR, TRACEC_PROTOBUF_INCLUDE};
    const char *protos[] = {"tp3.proto"};
    cr_assert_eq(tracec_pool_add_proto_files(p, inc, 2, protos, 1, &err), TRACEC_STATUS_SUCCESS,
                 "%s", err.msg);
    cr_assert(tracec_pool_find_message(p, "tp3.Msg"));
    const char *bad[] = {"does_not_exist.proto"};
    cr_assert_neq(tracec_pool_add_proto_files(p, inc, 2, bad, 1, &err), TRACEC_STATUS_SUCCESS);
    cr_assert(strstr(err.msg, "does_not_exist.proto"), "%s", err.msg);
    tracec_pool_free(p);
}

static bool presence(const tracec_msgdef *m, const char *field) {
    const tracec_fielddef *f = tracec_msgdef_field_by_name(m, field);
    cr_assert(f, "%s", field);
    return tracec_fielddef_has_presence(f);
}

Test(descpool, field_presence) {
    tracec_pool *p = test_pool();
    tracec_error err = {{0}};
    const char *inc[] = {TP_PROTO_DIR};
    const char *protos[] = {"tp3_presence.proto"};
    cr_assert_eq(tracec_pool_add_proto_files(p, inc, 1, protos, 1, &err), TRACEC_STATUS_SUCCESS,
                 "%s", err.msg);
    /* proto2: everything singular, repeated fields never. */
    const tracec_msgdef *all = tracec_pool_find_message(p, "tp.All");
    cr_assert(presence(all, "f_int32"));
    cr_assert(presence(all, "f_string"));
    cr_assert(presence(all, "child"));
    cr_assert(presence(all, "mygroup"));
    cr_assert(presence(all, "o_int"));
    cr_assert_not(presence(all, "r_int32"));
    cr_assert_not(presence(all, "r_child"));
    cr_assert_not(presence(all, "m_str_int"));
    cr_assert(presence(tracec_pool_find_message(p, "tp.Req"), "x")); /* required */
    cr_assert(tracec_fielddef_has_presence(tracec_pool_find_extension(p, "tp.ext_int")));
    cr_assert_not(tracec_fielddef_has_presence(tracec_pool_find_extension(p, "tp.ext_packed")));
    /* proto3: implicit presence for plain scalars only. */
    const tracec_msgdef *m = tracec_pool_find_message(p, "tp3p.P");
    cr_assert_not(presence(m, "implicit_int"));
    cr_assert_not(presence(m, "implicit_str"));
    cr_assert(presence(m, "opt_int"));
    cr_assert(presence(m, "sub"));
    cr_assert(presence(m, "o_int"));
    cr_assert(presence(m, "o_str"));
    cr_assert_not(presence(m, "rep"));
    cr_assert_not(presence(m, "rep_sub"));
    cr_assert_not(presence(m, "labels"));
    /* A proto3 map entry's key and value have no presence either. */
    const tracec_msgdef *entry = tracec_fielddef_message(tracec_msgdef_field_by_name(m, "labels"));
    cr_assert_not(presence(entry, "key"));
    cr_assert_not(presence(entry, "value"));
    const tracec_msgdef *m3 = tracec_pool_find_message(p, "tp3.Msg");
    cr_assert_not(presence(m3, "mode"));
    cr_assert(presence(m3, "opt"));
    cr_assert_not(tracec_fielddef_has_presence(NULL));
    tracec_pool_free(p);
}

Test(descpool, corrupt_and_missing) {
    tracec_pool *p = tracec_pool_new();
    tracec_error err = {{0}};
    const unsigned char junk[] = {0x0a, 0xff, 0xff, 0x01};
    cr_assert_eq(tracec_pool_add_set(p, junk, sizeof junk, "junk", &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "junk"));
    cr_assert_eq(tracec_pool_add_set_file(p, "/nonexistent/x.pb", &err), TRACEC_STATUS_IO_ERROR);
    cr_assert_eq(tracec_pool_add_set(p, "", 0, "empty", &err), TRACEC_STATUS_SUCCESS);
    tracec_pool_free(p);
}

/* An extension set that refers to a message defined only in a later set. */
Test(descpool, lazy_resolution_and_precedence) {
    char dir[] = "/tmp/tracec-dp-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/base.proto", dir);
    FILE *f = fopen(path, "w");
    fputs("syntax = \"proto2\"; package perfetto.protos;\n"
          "message TrackEvent { optional string name = 23; optional string mine = 5; extensions 1000 to 9999; }\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/ext.proto", dir);
    f = fopen(path, "w");
    fputs("syntax = \"proto2\"; package my_app; import \"base.proto\";\n"
          "message MyEvent { extend perfetto.protos.TrackEvent { optional string custom_string = 9900; } }\n",
          f);
    fclose(f);
    tracec_error err = {{0}};
    /* Compile ext.proto with its import, then keep only the file ext.proto itself:
       simulate it by building a pool from the user's set first (it has a TrackEvent
       with field `mine`), then the built-in schema (whose TrackEvent is skipped). */
    tracec_pool *p = tracec_pool_new();
    const char *inc[] = {dir};
    const char *protos[] = {"ext.proto"};
    cr_assert_eq(tracec_pool_add_proto_files(p, inc, 1, protos, 1, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_eq(tracec_pool_add_builtin_schema(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    const tracec_msgdef *te = tracec_pool_find_message(p, "perfetto.protos.TrackEvent");
    cr_assert(tracec_msgdef_field_by_name(te, "mine"), "the user's definition wins");
    cr_assert_null(tracec_msgdef_field_by_name(te, "track_uuid"));
    cr_assert(tracec_pool_find_extension(p, "my_app.MyEvent.custom_string"));
    cr_assert_eq(tracec_pool_check(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    tracec_pool_free(p);

    /* An unresolved extendee is reported by check() and resolved by a later add. */
    p = tracec_pool_new();
    tracec_pool *full = tracec_pool_new();
    cr_assert_eq(tracec_pool_add_proto_files(full, inc, 1, protos, 1, &err), TRACEC_STATUS_SUCCESS);
    tracec_pool_free(full);
    /* Build a set holding only ext.proto: protoc without --include_imports. */
    char cmd[2048], out[600];
    snprintf(out, sizeof out, "%s/ext.pb", dir);
    snprintf(cmd, sizeof cmd, "%s -I%s --descriptor_set_out=%s ext.proto", TRACEC_PROTOC, dir, out);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(tracec_pool_add_set_file(p, out, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert_null(tracec_pool_find_extension(p, "my_app.MyEvent.custom_string"));
    cr_assert_eq(tracec_pool_check(p, &err), TRACEC_STATUS_CORRUPT_DATA);
    cr_assert(strstr(err.msg, "perfetto.protos.TrackEvent"), "%s", err.msg);
    cr_assert_eq(tracec_pool_add_builtin_schema(p, &err), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_pool_check(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    const tracec_fielddef *x = tracec_pool_find_extension(p, "my_app.MyEvent.custom_string");
    cr_assert(x);
    cr_assert(tracec_fielddef_containing(x) == tracec_pool_find_message(p, "perfetto.protos.TrackEvent"));
    tracec_pool_free(p);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#include "tracec/registry.h"

Test(descpool, registry) {
    static tt_buf set; /* registered for the rest of the process */
    cr_assert(tt_read_file(TP_SET, &set), "%s", TP_SET);
    static tracec_file_descriptor d;
    d.file_name = "tp2.proto";
    d.package = "tp";
    d.set = (const uint8_t *)set.data;
    d.set_size = set.size;
    tracec_registry_add(&d);
    tracec_pool *p = tracec_pool_new();
    tracec_error err = {{0}};
    cr_assert_eq(tracec_pool_add_registry(p, &err), TRACEC_STATUS_SUCCESS, "%s", err.msg);
    cr_assert(tracec_pool_find_message(p, "tp.All"));
    cr_assert(tracec_pool_find_extension(p, "tp.ext_int"));
    tracec_pool_free(p);
}
