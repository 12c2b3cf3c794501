/*
 * test_options.c - every --tracec_opt, checked on what it generates, and each
 * result compiled with gcc -std=c11 -pedantic -Wall -Wextra -Werror -Wshadow.
 *
 * Generates tests/generator/codegen/protos/opts/{base,user}.proto once per option set.
 * The schema headers are libtracec's (CG_SCHEMA_DIR), at their plain paths:
 * include_prefix and name_prefix leave the Perfetto schema alone.  The
 * FileDescriptorSet embedded in a generated .c is decoded by `protoc --decode`.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator_util.h"

TestSuite(codegen_options, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

#define CFLAGS "-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -O1"

typedef struct generated {
    char *out;    /* the --tracec_out root */
    char *user_h; /* opts/user.tracec.h */
    char *user_c;
    char *base_h;
} generated;

static char *read_gen(const char *dir, const char *name) {
    char *p = cg_fmt("%s/opts/%s", dir, name);
    char *text = cg_read(p, NULL);
    cr_assert_not_null(text, "%s was not generated", p);
    free(p);
    return text;
}

/* Generates opts/base.proto and opts/user.proto with `opt` into cg_tmp/out/SUBDIR. */
static generated generate(const char *opt, const char *subdir) {
    generated g;
    g.out = cg_fmt("%s/out", cg_tmp);
    char *dir = cg_fmt("%s/%s", g.out, subdir);
    int st = -1;
    char *msg = cg_run(&st,
                       "mkdir -p '%s' && " CG_PROTOC_WITH_PLUGIN " --tracec_out='%s' -I" TRACEC_SOURCE_DIR
                       "/tests/generator/codegen/protos " CG_PROTO_INCLUDES " %s%s opts/base.proto opts/user.proto 2>&1",
                       dir, dir, *opt ? "--tracec_opt=" : "", opt);
    cr_assert_eq(st, 0, "protoc --tracec_opt=%s failed:\n%s", opt, msg);
    cr_expect_str_eq(msg, "", "protoc --tracec_opt=%s printed:\n%s", opt, msg);
    free(msg);
    g.user_h = read_gen(dir, "user.tracec.h");
    g.user_c = read_gen(dir, "user.tracec.c");
    g.base_h = read_gen(dir, "base.tracec.h");
    free(dir);
    return g;
}

static void release(generated *g) {
    free(g->out);
    free(g->user_h);
    free(g->user_c);
    free(g->base_h);
}

/* Expects `needle` in `text` (the generated file `what`), printing the file otherwise. */
#define expect_has(text, what, needle) \
    cr_expect(strstr((text), (needle)) != NULL, "%s lacks:\n  %s\n---- %s (first 4000 bytes) ----\n%.4000s", what, \
              needle, what, text)
#define expect_lacks(text, what, needle) \
    cr_expect(strstr((text), (needle)) == NULL, "%s holds:\n  %s\n---- %s (first 4000 bytes) ----\n%.4000s", what, \
              needle, what, text)

/*
 * The files of the FileDescriptorSet embedded in a generated .c (the first
 * `..._set[N] = { 0x.. };` array), as "a.proto,b.proto", decoded by protoc;
 * "<source info not stripped>" when a file carries source_code_info,
 * "<no descriptor set>" when the .c has none (malloc'd).
 */
static char *embedded_files(const char *c_text) {
    const char *p = c_text;
    const char *body = NULL;
    while ((p = strstr(p, "_set[")) != NULL) {
        const char *q = p + 5;
        while (isdigit((unsigned char)*q)) q++;
        if (q > p + 5 && strncmp(q, "] = {", 5) == 0) {
            body = q + 5;
            break;
        }
        p += 5;
    }
    if (body == NULL) return strdup("<no descriptor set>");
    const char *end = strstr(body, "};");
    cr_assert_not_null(end, "unterminated descriptor array");
    size_t cap = (size_t)(end - body) / 5 + 1, n = 0;
    uint8_t *data = malloc(cap);
    for (const char *h = body; (h = strstr(h, "0x")) != NULL && h < end; h += 2) {
        unsigned v;
        cr_assert(sscanf(h + 2, "%2x", &v) == 1 && n < cap);
        data[n++] = (uint8_t)v;
    }
    int st = -1;
    char *text = oracle_decode(TRACEC_PROTOBUF_INCLUDE, "google/protobuf/descriptor.proto",
                               "google.protobuf.FileDescriptorSet", data, n, &st);
    free(data);
    cr_assert_eq(st, 0, "protoc cannot decode the embedded set:\n%s", text);
    /* Top-level fields of each `file {` are indented by two spaces. */
    char *names = calloc(1, strlen(text) + 1);
    bool source_info = false;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "  name: \"", 9) == 0) {
            if (*names) strcat(names, ",");
            size_t len = strlen(names), k = strlen(line + 9) - 1; /* without the closing quote */
            memcpy(names + len, line + 9, k);
            names[len + k] = '\0';
        }
        if (strncmp(line, "  source_code_info {", 20) == 0) source_info = true;
    }
    free(text);
    if (source_info) {
        free(names);
        return strdup("<source info not stripped>");
    }
    return names;
}

/* Compiles use.c (`snippet`) with every generated .c under g->out. */
static void compiles(const generated *g, const char *snippet) {
    char *use = cg_fmt("%s/use.c", g->out);
    cg_write_text(use, snippet);
    size_t n = 0;
    char *list = cg_list_files(g->out, ".tracec.c", &n);
    cr_assert_gt(n, 0, "no .tracec.c under %s", g->out);
    for (char *c = list; *c; c++)
        if (*c == '\n') *c = ' ';
    int st = -1;
    char *out = cg_run(&st,
                       "cd '%s' && gcc " CFLAGS " -I. -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR " -I" CG_SCHEMA_DIR
                       " -c use.c %s 2>&1",
                       g->out, list);
    cr_expect_eq(st, 0, "gcc " CFLAGS " failed:\n%s\n---- use.c ----\n%s", out, snippet);
    cr_expect_str_eq(out, "", "gcc " CFLAGS " printed diagnostics:\n%s", out);
    free(out);
    free(list);
    free(use);
}

/* User code of opts/user.proto's default names; INCLUDE names the header. */
#define USE_DEFAULT(INCLUDE, DESCRIPTOR_CALL)                                          \
    "#include " INCLUDE "\n"                                                          \
    "void use(perfetto_protos_TracePacket *pkt);\n"                                   \
    "void use(perfetto_protos_TracePacket *pkt) {\n"                                  \
    "    opts_user_UserEvent ev;\n"                                                   \
    "    opts_base_Detail d;\n"                                                       \
    "    perfetto_protos_TracePacket_begin_track_event_as_opts_user_UserEvent(pkt, &ev);\n" \
    "    opts_user_UserEvent_begin_detail(&ev, &d);\n"                                \
    "    opts_base_Detail_set_level(&d, opts_base_LEVEL_HIGH);\n"                     \
    "    opts_user_UserEvent_end_detail(&ev, &d);\n"                                  \
    "    perfetto_protos_TrackEvent_set_opts_user_user_code(&ev.base, 1);\n"          \
    "    perfetto_protos_TracePacket_end_track_event_as_opts_user_UserEvent(pkt, &ev);\n" \
    DESCRIPTOR_CALL                                                                    \
    "}\n"
#define WRITE_DESCRIPTOR "    opts_user_write_extension_descriptor(pkt);\n"

/* Defaults: quote includes, no prefixes, descriptors=deps. */
Test(codegen_options, defaults) {
    generated g = generate("", "");
    expect_has(g.user_h, "user.tracec.h", "#include \"opts/base.tracec.h\"");
    expect_has(g.user_h, "user.tracec.h", "#include \"perfetto/trace/track_event/track_event.tracec.h\"");
    expect_has(g.user_h, "user.tracec.h", "#ifndef OPTS_USER_PROTO_TRACEC_H_");
    char *files = embedded_files(g.user_c);
    cr_expect_str_eq(files, "opts/base.proto,opts/user.proto",
                     "descriptors=deps must embed the file and its non-Perfetto imports; embedded: %s", files);
    free(files);
    expect_has(g.user_c, "user.tracec.c", "tracec_registry_add(&tracec_fd_opts_user_proto)");
    expect_has(g.user_h, "user.tracec.h", "opts_user_write_extension_descriptor(perfetto_protos_TracePacket *packet)");
    expect_has(g.user_h, "user.tracec.h", "#if TRACEC_GENERATED_ABI_VERSION != 1");
    expect_has(g.user_h, "user.tracec.h", "DO NOT EDIT");
    expect_has(g.user_c, "user.tracec.c", "DO NOT EDIT");
    compiles(&g, USE_DEFAULT("\"opts/user.tracec.h\"", WRITE_DESCRIPTOR));
    release(&g);
}

/* include_style=angle,include_prefix=gen/ (generated into out/gen/). */
Test(codegen_options, include_style_angle_include_prefix) {
    generated g = generate("include_style=angle,include_prefix=gen/", "gen");
    expect_has(g.user_h, "user.tracec.h", "#include <gen/opts/base.tracec.h>");
    expect_has(g.user_h, "user.tracec.h", "#include <perfetto/trace/track_event/track_event.tracec.h>");
    expect_has(g.user_c, "user.tracec.c", "#include <gen/opts/user.tracec.h>");
    const char *after = strstr(g.user_h, "#include <stdint.h>");
    cr_expect_not_null(after, "user.tracec.h does not include <stdint.h>:\n%s", g.user_h);
    if (after) expect_lacks(after, "user.tracec.h (after <stdint.h>)", "#include \"");
    compiles(&g, USE_DEFAULT("<gen/opts/user.tracec.h>", WRITE_DESCRIPTOR));
    release(&g);
}

Test(codegen_options, guard_prefix) {
    generated g = generate("guard_prefix=ACME_", "");
    expect_has(g.user_h, "user.tracec.h", "#ifndef ACME_OPTS_USER_PROTO_TRACEC_H_");
    expect_has(g.user_h, "user.tracec.h", "#endif  /* ACME_OPTS_USER_PROTO_TRACEC_H_ */");
    release(&g);
}

/* name_prefix: every name from a non-Perfetto file, and only those. */
Test(codegen_options, name_prefix) {
    generated g = generate("name_prefix=acme_", "");
    /* Types, enum values, setters prefixed. */
    expect_has(g.base_h, "base.tracec.h", "typedef struct acme_opts_base_Detail");
    expect_has(g.base_h, "base.tracec.h", "acme_opts_base_LEVEL_HIGH = 1");
    expect_has(g.user_h, "user.tracec.h", "static inline void acme_opts_user_UserEvent_set_track_uuid(");
    expect_has(g.user_h, "user.tracec.h",
               "perfetto_protos_TrackEvent_set_acme_opts_user_user_code(perfetto_protos_TrackEvent *m");
    /* Perfetto types untouched; descriptor symbols prefixed. */
    expect_has(g.user_h, "user.tracec.h",
               "perfetto_protos_TracePacket_begin_track_event_as_acme_opts_user_UserEvent(perfetto_protos_TracePacket");
    expect_has(g.user_c, "user.tracec.c", "tracec_fd_acme_opts_user_proto");
    expect_has(g.user_h, "user.tracec.h",
               "acme_opts_user_write_extension_descriptor(perfetto_protos_TracePacket *packet)");
    compiles(&g, "#include \"opts/user.tracec.h\"\n"
                 "void use(perfetto_protos_TracePacket *pkt);\n"
                 "void use(perfetto_protos_TracePacket *pkt) {\n"
                 "    acme_opts_user_UserEvent ev;\n"
                 "    acme_opts_base_Detail d;\n"
                 "    perfetto_protos_TracePacket_begin_track_event_as_acme_opts_user_UserEvent(pkt, &ev);\n"
                 "    acme_opts_user_UserEvent_begin_detail(&ev, &d);\n"
                 "    acme_opts_base_Detail_set_level(&d, acme_opts_base_LEVEL_HIGH);\n"
                 "    acme_opts_user_UserEvent_end_detail(&ev, &d);\n"
                 "    perfetto_protos_TrackEvent_set_acme_opts_user_user_code(&ev.base, 1);\n"
                 "    perfetto_protos_TracePacket_end_track_event_as_acme_opts_user_UserEvent(pkt, &ev);\n"
                 "    acme_opts_user_write_extension_descriptor(pkt);\n"
                 "}\n");
    release(&g);
}

Test(codegen_options, descriptors_file) {
    generated g = generate("descriptors=file", "");
    char *files = embedded_files(g.user_c);
    cr_expect_str_eq(files, "opts/user.proto", "descriptors=file must embed this file only; embedded: %s", files);
    free(files);
    release(&g);
}

Test(codegen_options, descriptors_none) {
    generated g = generate("descriptors=none", "");
    expect_lacks(g.user_h, "user.tracec.h", "tracec_fd_");
    expect_lacks(g.user_c, "user.tracec.c", "tracec_fd_");
    expect_lacks(g.user_h, "user.tracec.h", "write_extension_descriptor");
    compiles(&g, USE_DEFAULT("\"opts/user.tracec.h\"", ""));
    release(&g);
}
