/*
 * run.c - one plugin run in-process: a serialized CodeGeneratorRequest in, a
 * serialized CodeGeneratorResponse out (main.c does stdin/stdout; the fuzzer
 * and the corpus replay test call tc_run directly).
 *
 * The request is untrusted: protoc sends well-formed ones, but anybody can
 * hand-make one.  validate.c checks its shape before anything else reads it,
 * so a bad request gets a response with `error` set, never a crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static bool is_c_prefix(const char *s) {
    if (s[0] == '\0' || isdigit((unsigned char)s[0])) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

/* What goes between the quotes or brackets of an #include. */
static bool is_include_path(const char *s) {
    if (!tc_is_utf8(s)) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\\' || *s == '<' || *s == '>')
            return false;
    return true;
}

/* "--tracec_opt: <what>, not '<value>'", the value escaped. */
static void bad_option(tc_ctx *ctx, const char *what, const char *val) {
    char *e = tc_escape(val);
    tc_error(ctx, NULL, "--tracec_opt: %s, not '%s'", what, e);
    free(e);
}

/* Parses "k=v,k=v".  Unknown keys and bad values are errors. */
static void parse_options(tc_ctx *ctx, const char *param) {
    ctx->opt.descriptors = TC_DESC_DEPS;
    if (param == NULL || param[0] == '\0') return;
    char *copy = tc_strdup(param);
    static const char *const known[] = {"include_style", "include_prefix", "guard_prefix", "name_prefix",
                                        "descriptors"};
    bool seen[sizeof known / sizeof *known] = {false};
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        const char *val = eq ? eq + 1 : "";
        if (eq) *eq = '\0';
        /* A repeated option is an error: silently keeping the last value hides a mistake. */
        for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
            if (strcmp(item, known[k]) != 0) continue;
            if (seen[k]) tc_error(ctx, NULL, "--tracec_opt: option '%s' is given more than once", known[k]);
            seen[k] = true;
        }
        if (ctx->error) break;
        if (strcmp(item, "include_style") == 0) {
            if (strcmp(val, "quote") == 0)
                ctx->opt.angle_includes = false;
            else if (strcmp(val, "angle") == 0)
                ctx->opt.angle_includes = true;
            else
                bad_option(ctx, "include_style must be quote or angle", val);
        } else if (strcmp(item, "include_prefix") == 0) {
            free(ctx->opt.include_prefix);
            ctx->opt.include_prefix = tc_strdup(val);
            if (!is_include_path(val))
                bad_option(ctx, "include_prefix must be a path without quotes, '<', '>', backslashes or control "
                                "characters", val);
        } else if (strcmp(item, "guard_prefix") == 0) {
            free(ctx->opt.guard_prefix);
            ctx->opt.guard_prefix = tc_strdup(val);
            if (val[0] && !is_c_prefix(val))
                bad_option(ctx, "guard_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*)", val);
        } else if (strcmp(item, "name_prefix") == 0) {
            free(ctx->opt.name_prefix);
            ctx->opt.name_prefix = tc_strdup(val);
            if (!is_c_prefix(val))
                bad_option(ctx, "name_prefix must be the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*)", val);
        } else if (strcmp(item, "descriptors") == 0) {
            if (strcmp(val, "none") == 0)
                ctx->opt.descriptors = TC_DESC_NONE;
            else if (strcmp(val, "file") == 0)
                ctx->opt.descriptors = TC_DESC_FILE;
            else if (strcmp(val, "deps") == 0)
                ctx->opt.descriptors = TC_DESC_DEPS;
            else
                bad_option(ctx, "descriptors must be none, file or deps", val);
        } else {
            char *e = tc_escape(item);
            tc_error(ctx, NULL,
                     "--tracec_opt: unknown option '%s' (known: include_style, include_prefix, "
                     "guard_prefix, name_prefix, descriptors)",
                     e);
            free(e);
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


static void free_files(Google__Protobuf__Compiler__CodeGeneratorResponse *resp) {
    for (size_t i = 0; i < resp->n_file; i++) {
        free(resp->file[i]->name);
        free(resp->file[i]->content);
        free(resp->file[i]);
    }
    resp->n_file = 0;
}

/*
 * protobuf-c decodes nested messages by recursion, without a limit: a request
 * nesting messages some ten thousand deep (a few hundred KB) overflows the
 * stack.  The wire bytes are scanned first, by the message descriptors, and a
 * request nesting deeper than protobuf's own default limit is refused.
 */
#define TC_MAX_DEPTH 100
#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)

static bool read_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v) {
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *i < n; shift += 7) {
        uint8_t b = p[(*i)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) return true;
    }
    return false;
}

/* True when message `d` in p[0..n) nests deeper than TC_MAX_DEPTH; bad wire data is left to the decoder. */
static bool too_deep(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, int depth) {
    if (depth > TC_MAX_DEPTH) return true;
    for (size_t i = 0; i < n;) {
        uint64_t key, v;
        if (!read_varint(p, n, &i, &key)) return false;
        switch (key & 7) {
            case 0:
                if (!read_varint(p, n, &i, &v)) return false;
                break;
            case 1:
                if (n - i < 8) return false;
                i += 8;
                break;
            case 5:
                if (n - i < 4) return false;
                i += 4;
                break;
            case 2: {
                if (!read_varint(p, n, &i, &v) || v > n - i) return false;
                const ProtobufCFieldDescriptor *f =
                    key >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3)) : NULL;
                if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && too_deep(f->descriptor, p + i, (size_t)v, depth + 1))
                    return true;
                i += (size_t)v;
                break;
            }
            default:
                return false; /* groups: protobuf-c does not decode them */
        }
    }
    return false;
}

static void pack_response(const Google__Protobuf__Compiler__CodeGeneratorResponse *resp, uint8_t **out,
                          size_t *size) {
    *size = google__protobuf__compiler__code_generator_response__get_packed_size(resp);
    *out = malloc(*size ? *size : 1);
    if (*out == NULL) exit(1);
    google__protobuf__compiler__code_generator_response__pack(resp, *out);
}

bool tc_run(const uint8_t *in, size_t size, uint8_t **resp_out, size_t *resp_size) {
    *resp_out = NULL;
    *resp_size = 0;
    if (too_deep(&google__protobuf__compiler__code_generator_request__descriptor, in, size, 1)) {
        Google__Protobuf__Compiler__CodeGeneratorResponse resp =
            GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__INIT;
        char error[] = "the request nests messages more than " TC_STR(TC_MAX_DEPTH) " levels deep";
        resp.error = error;
        resp.has_supported_features = 1;
        resp.supported_features = GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__FEATURE__FEATURE_PROTO3_OPTIONAL;
        pack_response(&resp, resp_out, resp_size);
        return true;
    }
    Google__Protobuf__Compiler__CodeGeneratorRequest *req =
        google__protobuf__compiler__code_generator_request__unpack(NULL, size, in);
    if (req == NULL) return false;

    tc_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.req = req;
    parse_options(&ctx, req->parameter);
    if (ctx.error == NULL) tc_validate(&ctx);
    if (ctx.error == NULL) tc_mark_schema(&ctx);
    ctx.builtin = tc_builtin_unpack();
    if (ctx.error == NULL) tc_index_build(&ctx);
    if (ctx.error == NULL) tc_resolve_names(&ctx);

    Google__Protobuf__Compiler__CodeGeneratorResponse resp =
        GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__INIT;
    resp.has_supported_features = 1;
    resp.supported_features = GOOGLE__PROTOBUF__COMPILER__CODE_GENERATOR_RESPONSE__FEATURE__FEATURE_PROTO3_OPTIONAL;
    size_t nfiles = req->n_file_to_generate * 2;
    resp.file = calloc(nfiles ? nfiles : 1, sizeof *resp.file);
    if (resp.file == NULL) exit(1);
    for (size_t i = 0; i < req->n_file_to_generate && ctx.error == NULL; i++) {
        const tc_file_proto *file = tc_find_file(&ctx, req->file_to_generate[i]);
        if (file == NULL) {
            tc_error(&ctx, req->file_to_generate[i], "not in the request's proto_file list");
            break;
        }
        tc_warn_file(&ctx, file);
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
        free_files(&resp);
        resp.error = ctx.error;
    }

    pack_response(&resp, resp_out, resp_size);

    free_files(&resp);
    free(resp.file);
    free(ctx.error);
    free(ctx.opt.include_prefix);
    free(ctx.opt.guard_prefix);
    free(ctx.opt.name_prefix);
    for (size_t i = 0; i < ctx.n_scoped; i++) free(ctx.scoped[i].ident);
    free(ctx.scoped);
    free(ctx.schema);
    if (ctx.builtin) google__protobuf__file_descriptor_set__free_unpacked(ctx.builtin, NULL);
    for (size_t i = 0; i < ctx.n_includes; i++) free(ctx.includes[i]);
    free(ctx.includes);
    tc_sym_free(&ctx.syms);
    tc_index_free(&ctx.index);
    google__protobuf__compiler__code_generator_request__free_unpacked(req, NULL);
    return true;
}
