/*
 * gen_descriptor.c - the embedded FileDescriptorSet of each file and its
 * registration in the compile-time registry (tracec/registry.h).
 *
 * The set holds, per --tracec_opt=descriptors=:
 *   none  nothing (no descriptor object, no registration);
 *   file  this file only;
 *   deps  (default) this file and every file it imports, directly or not,
 *         that is not part of Perfetto's schema (schema.c: recognised by
 *         package and by what imports it, not by path; a decoder has those
 *         already), in dependency order (the request's).  A user's copy
 *         of Perfetto's schema itself (a file of it at a path other than
 *         libtracec's perfetto/... and google/protobuf/...) gets nothing:
 *         registered, it would be written into every trace the track-event
 *         layer records (which leaves out only libtracec's own paths), and
 *         the one-file perfetto_trace.proto is some 340 KB.
 * Source info is stripped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

/* Imports followed for descriptors=deps: a decoder of Perfetto traces has Perfetto's schema already. */
static bool outside_schema(const tc_ctx *ctx, const tc_file_proto *f) { return !tc_is_perfetto_schema(ctx, f); }

/* Whether `file` gets no descriptor object and no registration. */
static bool no_descriptor(const tc_ctx *ctx, const tc_file_proto *file) {
    if (ctx->opt.descriptors == TC_DESC_NONE) return true;
    return ctx->opt.descriptors == TC_DESC_DEPS && tc_is_perfetto_schema(ctx, file) && !tc_is_builtin_path(file->name);
}

static char *descriptor_symbol(const tc_ctx *ctx, const tc_file_proto *file) {
    char *id = tc_file_c(ctx, file, true);
    char *s = tc_strcat3("tracec_fd_", id, "");
    free(id);
    return s;
}

void tc_gen_descriptor_decl(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    if (no_descriptor(ctx, file)) return;
    char *sym = descriptor_symbol(ctx, file);
    tc_emit(p,
            "\n/*\n"
            " * The FileDescriptorSet of $file$, registered with the compile-time\n"
            " * registry.  The `used` reference below pulls the .c file that defines it\n"
            " * (and its registration) into every program that includes this header,\n"
            " * even from a static library.\n"
            " */\n"
            "extern tracec_file_descriptor $sym$;\n"
            "static tracec_file_descriptor *const $sym$_ref TRACEC_I_USED = &$sym$;\n",
            "file", file->name, "sym", sym, NULL);
    free(sym);
}

void tc_gen_descriptor_def(tc_ctx *ctx, tc_printer *p, const tc_file_proto *file) {
    if (no_descriptor(ctx, file)) return;
    size_t n = ctx->req->n_proto_file;
    bool *keep = calloc(n ? n : 1, sizeof *keep);
    if (ctx->opt.descriptors == TC_DESC_FILE) {
        for (size_t i = 0; i < n; i++) keep[i] = ctx->req->proto_file[i] == file;
    } else {
        tc_mark_imports(ctx, file, keep, outside_schema);
    }
    Google__Protobuf__FileDescriptorSet set = GOOGLE__PROTOBUF__FILE_DESCRIPTOR_SET__INIT;
    Google__Protobuf__FileDescriptorProto **files = calloc(n ? n : 1, sizeof *files);
    Google__Protobuf__SourceCodeInfo **saved = calloc(n ? n : 1, sizeof *saved);
    for (size_t i = 0; i < n; i++) {
        if (!keep[i]) continue;
        Google__Protobuf__FileDescriptorProto *f = ctx->req->proto_file[i];
        saved[set.n_file] = f->source_code_info;
        f->source_code_info = NULL;
        files[set.n_file++] = f;
    }
    set.file = files;
    size_t size = google__protobuf__file_descriptor_set__get_packed_size(&set);
    uint8_t *bytes = malloc(size ? size : 1);
    google__protobuf__file_descriptor_set__pack(&set, bytes);
    for (size_t i = 0; i < set.n_file; i++) files[i]->source_code_info = saved[i];

    char *sym = descriptor_symbol(ctx, file);
    char sz[32];
    snprintf(sz, sizeof sz, "%zu", size);
    tc_emit(p,
            "\n/* google.protobuf.FileDescriptorSet of $file$ ($size$ bytes). */\n"
            "static const uint8_t $sym$_set[$size$] = {\n",
            "file", file->name, "sym", sym, "size", sz, NULL);
    tc_indent(p);
    char line[16 * 6 + 1];
    for (size_t i = 0; i < size; i += 16) {
        size_t k = 0;
        for (size_t j = i; j < size && j < i + 16; j++)
            k += (size_t)snprintf(line + k, sizeof line - k, "%s0x%02x,", j == i ? "" : " ", bytes[j]);
        tc_emit(p, "$line$\n", "line", line, NULL);
    }
    tc_outdent(p);
    tc_emit(p,
            "};\n"
            "\n"
            "tracec_file_descriptor $sym$ = {\n"
            "    \"$file$\", \"$pkg$\", $sym$_set, sizeof $sym$_set, NULL};\n"
            "\n"
            "static void $sym$_register(void) __attribute__((constructor));\n"
            "static void $sym$_register(void) { tracec_registry_add(&$sym$); }\n",
            "sym", sym, "file", file->name, "pkg", file->package ? file->package : "", NULL);
    free(sym);
    free(bytes);
    free(files);
    free(saved);
    free(keep);
}
