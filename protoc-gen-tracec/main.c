/*
 * protoc-gen-tracec - a protoc plugin that generates zero-copy C writers.
 *
 *   protoc --plugin=protoc-gen-tracec --tracec_out=OUT [--tracec_opt=OPTS] FILE.proto
 *
 * Reads a CodeGeneratorRequest on stdin and writes a CodeGeneratorResponse
 * on stdout (both through protobuf-c bindings generated at build time).
 * Problems are reported through the response's `error` field, so protoc
 * prints them with the file name and exits non-zero.
 *
 * Options (comma-separated, --tracec_opt=a=b,c=d):
 *   include_style=quote|angle   #include "x.tracec.h" (default) or <x.tracec.h>
 *   include_prefix=DIR/         prepended to the paths of included generated headers
 *                               (not to the Perfetto schema's, which libtracec ships)
 *   guard_prefix=PFX_           prepended to include guards
 *   name_prefix=pfx_            prepended to every C name from files outside the Perfetto schema
 *   descriptors=none|file|deps  what the embedded FileDescriptorSet holds (default deps)
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static const char k_usage[] =
    "protoc-gen-tracec " TC_VERSION " - protoc plugin generating zero-copy C trace writers\n"
    "\n"
    "Run it through protoc:\n"
    "  protoc --plugin=protoc-gen-tracec=PATH --tracec_out=OUTDIR [--tracec_opt=OPTIONS] FILE.proto\n"
    "\n"
    "Options (comma-separated):\n"
    "  include_style=quote|angle   how generated headers include each other (default quote)\n"
    "  include_prefix=DIR/         prefix for the paths of included generated headers\n"
    "                              (not the Perfetto schema's: libtracec ships those)\n"
    "  guard_prefix=PREFIX_        prefix for include guards\n"
    "  name_prefix=prefix_         prefix for every C name (types, enum values, setters,\n"
    "                              descriptor symbols) of files outside the Perfetto schema\n"
    "  descriptors=none|file|deps  embedded descriptors: none, this file, or this file and its\n"
    "                              non-Perfetto imports (default deps)\n";

static uint8_t *read_all(FILE *in, size_t *size) {
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) return NULL;
    for (;;) {
        if (len == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, in);
        len += n;
        if (n == 0) break;
    }
    if (ferror(in)) {
        free(buf);
        return NULL;
    }
    *size = len;
    return buf;
}

static bool is_c_prefix(const char *s) {
    if (s[0] == '\0' || isdigit((unsigned char)s[0])) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

/* Parses "k=v,k=v".  Unknown keys and bad values are errors. */
static void parse_options(tc_ctx *ctx, const char *param) {
    ctx->opt.descriptors = TC_DESC_DEPS;
    if (param == NULL || param[0] == '\0') return;
    char *copy = tc_strdup(param);
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        const char *val = eq ? eq + 1 : "";
        if (eq) *eq = '\0';
        if (strcmp(item, "include_style") == 0) {
            if (strcmp(val, "quote") == 0)
                ctx->opt.angle_includes = false;
            else if (strcmp(val, "angle") == 0)
                ctx->opt.angle_includes = true;
            else
                tc_error(ctx, NULL, "--tracec_opt: include_style must be quote or angle, not '%s'", val);
        } else if (strcmp(item, "include_prefix") == 0) {
            free(ctx->opt.include_prefix);
            ctx->opt.include_prefix = tc_strdup(val);
        } else if (strcmp(item, "guard_prefix") == 0) {
            free(ctx->opt.guard_prefix);
            ctx->opt.guard_prefix = tc_strdup(val);
        } else if (strcmp(item, "name_prefix") == 0) {
            free(ctx->opt.name_prefix);
            ctx->opt.name_prefix = tc_strdup(val);
            if (!is_c_prefix(val))
                tc_error(ctx, NULL,
                         "--tracec_opt: name_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*), "
                         "not '%s'",
                         val);
        } else if (strcmp(item, "descriptors") == 0) {
            if (strcmp(val, "none") == 0)
                ctx->opt.descriptors = TC_DESC_NONE;
            else if (strcmp(val, "file") == 0)
                ctx->opt.descriptors = TC_DESC_FILE;
            else if (strcmp(val, "deps") == 0)
                ctx->opt.descriptors = TC_DESC_DEPS;
            else
                tc_error(ctx, NULL, "--tracec_opt: descriptors must be none, file or deps, not '%s'", val);
        } else {
            tc_error(ctx, NULL,
                     "--tracec_opt: unknown option '%s' (known: include_style, include_prefix, "
                     "guard_prefix, name_prefix, descriptors)",
                     item);
        }
        if (ctx->error) break;
    }
    free(copy);
}

static Google__Protobuf__Compiler__CodeGeneratorResponse__File *new_file(char *name, char *content) {
    Google__Protobuf__Compiler__CodeGeneratorResponse__File *f = malloc(sizeof *f);
    if (f == NULL) exit(1);
    google__protobuf__compiler__code_generator_response__file__init(f);
    f->name = name;
    f->content = content;
    return f;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "--version") == 0) {
            printf("protoc-gen-tracec %s\n", TC_VERSION);
            return 0;
        }
        fputs(k_usage, strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        return strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    size_t size = 0;
    uint8_t *in = read_all(stdin, &size);
    if (in == NULL) {
        fprintf(stderr, "protoc-gen-tracec: cannot read the request from stdin\n");
        return 1;
    }
    Google__Protobuf__Compiler__CodeGeneratorRequest *req =
        google__protobuf__compiler__code_generator_request__unpack(NULL, size, in);
    free(in);
    if (req == NULL) {
        fprintf(stderr,
                "protoc-gen-tracec: stdin is not a CodeGeneratorRequest (run me through protoc: "
                "protoc --plugin=protoc-gen-tracec=PATH --tracec_out=DIR FILE.proto)\n");
        return 1;
    }

    tc_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.req = req;
    parse_options(&ctx, req->parameter);
    if (ctx.error == NULL) tc_index_build(&ctx);
    if (ctx.error == NULL) tc_resolve_names(&ctx);

    Google__Protobuf__Compiler__CodeGeneratorResponse resp =
        GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__INIT;
    resp.has_supported_features = 1;
    resp.supported_features = GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__FEATURE__FEATURE_PROTO3_OPTIONAL;
    size_t nfiles = req->n_file_to_generate * 2;
    resp.file = calloc(nfiles ? nfiles : 1, sizeof *resp.file);
    for (size_t i = 0; i < req->n_file_to_generate && ctx.error == NULL; i++) {
        const tc_file_proto *file = tc_find_file(&ctx, req->file_to_generate[i]);
        if (file == NULL) {
            tc_error(&ctx, req->file_to_generate[i], "not in the request's proto_file list");
            break;
        }
        tc_output out;
        memset(&out, 0, sizeof out);
        if (!tc_gen_file(&ctx, file, &out)) {
            free(out.h_name); free(out.h_text); free(out.c_name); free(out.c_text);
            break;
        }
        resp.file[resp.n_file++] = new_file(out.h_name, out.h_text);
        resp.file[resp.n_file++] = new_file(out.c_name, out.c_text);
    }
    if (ctx.error) {
        for (size_t i = 0; i < resp.n_file; i++) {
            free(resp.file[i]->name);
            free(resp.file[i]->content);
            free(resp.file[i]);
        }
        resp.n_file = 0;
        resp.error = ctx.error;
    }

    size_t out_size = google__protobuf__compiler__code_generator_response__get_packed_size(&resp);
    uint8_t *out = malloc(out_size ? out_size : 1);
    google__protobuf__compiler__code_generator_response__pack(&resp, out);
    int rc = fwrite(out, 1, out_size, stdout) == out_size && fflush(stdout) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "protoc-gen-tracec: cannot write the response to stdout\n");

    free(out);
    for (size_t i = 0; i < resp.n_file; i++) {
        free(resp.file[i]->name);
        free(resp.file[i]->content);
        free(resp.file[i]);
    }
    free(resp.file);
    free(ctx.error);
    free(ctx.opt.include_prefix);
    free(ctx.opt.guard_prefix);
    free(ctx.opt.name_prefix);
    for (size_t i = 0; i < ctx.n_scoped; i++) free(ctx.scoped[i].ident);
    free(ctx.scoped);
    tc_sym_free(&ctx.syms);
    tc_index_free(&ctx.index);
    google__protobuf__compiler__code_generator_request__free_unpacked(req, NULL);
    return rc;
}
