/*
 * schema.c - which files of a request are Perfetto's schema, and where the
 * Perfetto messages that wrappers open and descriptor writers take are
 * declared, whatever path the user keeps Perfetto's schema under.
 *
 * Users hold Perfetto's schema in three layouts: our built-in one
 * (perfetto/trace/...), Perfetto's own tree (protos/perfetto/trace/...), or
 * the one file protos/perfetto/trace/perfetto_trace.proto.  So a file is
 * recognised by what it is, never by its path alone:
 *
 *   Perfetto's schema = files in package perfetto.protos that define
 *                       Trace, TracePacket or TrackEvent or that those files import
 *                       (directly or not), the files libtracec ships
 *                       (perfetto/... in package perfetto.protos), and
 *                       package google.protobuf.
 *
 * Chrome's wrapper (package perfetto.protos, its own file, importing
 * track_event.proto) is not: nothing in Perfetto's schema imports it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static size_t file_pos(const tc_ctx *ctx, const tc_file_proto *file) {
    for (size_t i = 0; i < ctx->req->n_proto_file; i++)
        if (ctx->req->proto_file[i] == file) return i;
    return ctx->req->n_proto_file;
}

void tc_mark_imports(const tc_ctx *ctx, const tc_file_proto *file, bool *seen, tc_file_filter_fn follow) {
    size_t i = file_pos(ctx, file);
    if (i == ctx->req->n_proto_file || seen[i]) return;
    seen[i] = true;
    for (size_t d = 0; d < file->n_dependency; d++) {
        const tc_file_proto *dep = tc_find_file(ctx, file->dependency[d]);
        if (dep && (follow == NULL || follow(ctx, dep))) tc_mark_imports(ctx, dep, seen, follow);
    }
}

bool *tc_imports_of(const tc_ctx *ctx, const tc_file_proto *file) {
    size_t n = ctx->req->n_proto_file;
    bool *seen = calloc(n ? n : 1, sizeof *seen);
    if (seen == NULL) exit(1);
    tc_mark_imports(ctx, file, seen, NULL);
    return seen;
}

bool tc_file_in(const tc_ctx *ctx, const bool *set, const tc_file_proto *file) {
    size_t i = file_pos(ctx, file);
    return i < ctx->req->n_proto_file && set[i];
}

static bool has_package(const tc_file_proto *f, const char *pkg) {
    return f->package != NULL && strcmp(f->package, pkg) == 0;
}

static bool defines_root(const tc_file_proto *f) {
    if (!has_package(f, "perfetto.protos")) return false;
    for (size_t i = 0; i < f->n_message_type; i++) {
        const char *n = f->message_type[i]->name;
        if (strcmp(n, "Trace") == 0 || strcmp(n, "TracePacket") == 0 || strcmp(n, "TrackEvent") == 0) return true;
    }
    return false;
}

static bool is_perfetto_package(const tc_ctx *ctx, const tc_file_proto *f) {
    (void)ctx;
    return has_package(f, "perfetto.protos") || has_package(f, "google.protobuf");
}

void tc_mark_schema(tc_ctx *ctx) {
    size_t n = ctx->req->n_proto_file;
    ctx->schema = calloc(n ? n : 1, sizeof *ctx->schema);
    if (ctx->schema == NULL) exit(1);
    for (size_t i = 0; i < n; i++) {
        const tc_file_proto *f = ctx->req->proto_file[i];
        if (defines_root(f)) tc_mark_imports(ctx, f, ctx->schema, is_perfetto_package);
    }
    for (size_t i = 0; i < n; i++) {
        const tc_file_proto *f = ctx->req->proto_file[i];
        if (has_package(f, "google.protobuf") || (has_package(f, "perfetto.protos") && tc_is_builtin_path(f->name)))
            ctx->schema[i] = true;
    }
}

bool tc_is_perfetto_schema(const tc_ctx *ctx, const tc_file_proto *file) {
    return ctx->schema != NULL && tc_file_in(ctx, ctx->schema, file);
}

/* ---- where Perfetto's messages are declared ------------------------------ */

/*
 * The files of Perfetto's tree that define the messages wrappers are opened
 * in, relative to the tree's root (Perfetto's own paths below protos/, our
 * built-in paths below protos/ of this repository).
 */
static const struct {
    const char *message;
    const char *path;
} k_perfetto_files[] = {
    {"perfetto.protos.Trace", "perfetto/trace/trace.proto"},
    {"perfetto.protos.TracePacket", "perfetto/trace/trace_packet.proto"},
    {"perfetto.protos.TrackEvent", "perfetto/trace/track_event/track_event.proto"},
    {"perfetto.protos.DebugAnnotation", "perfetto/trace/track_event/debug_annotation.proto"},
    {"perfetto.protos.InternedData", "perfetto/trace/interned_data/interned_data.proto"},
};
#define N_PERFETTO_FILES (sizeof k_perfetto_files / sizeof k_perfetto_files[0])

/* The length of the root `name` has when it ends with "/" + `path` (or is `path`); -1 if it does not. */
static long root_len(const char *name, const char *path) {
    size_t n = strlen(name), k = strlen(path);
    if (n < k || strcmp(name + n - k, path) != 0) return -1;
    if (n > k && name[n - k - 1] != '/') return -1;
    return (long)(n - k);
}

/*
 * The root of Perfetto's tree as `file` sees it: the part before
 * "perfetto/trace/..." of a file it imports (directly or not) that defines
 * one of k_perfetto_files' messages at that file's path; for a file of
 * package perfetto.protos that sees none, the part of its own path before
 * "perfetto/".  "" otherwise (libtracec's built-in schema).  Malloc'd.
 */
static char *tree_root(const tc_ctx *ctx, const tc_file_proto *file) {
    bool *seen = tc_imports_of(ctx, file);
    char *root = NULL;
    for (size_t i = 0; i < N_PERFETTO_FILES && root == NULL; i++) {
        const tc_type *t = tc_index_find(ctx, k_perfetto_files[i].message);
        if (t == NULL || !tc_file_in(ctx, seen, t->file)) continue;
        long n = root_len(t->file->name, k_perfetto_files[i].path);
        if (n >= 0) root = strndup(t->file->name, (size_t)n);
    }
    free(seen);
    /*
     * A file of package perfetto.protos that imports none of them (a
     * field_options.proto that imports only descriptor.proto) is in the tree
     * its own path names: ROOT + "perfetto/...".
     */
    if (root == NULL && file->package && strcmp(file->package, "perfetto.protos") == 0) {
        const char *at = strncmp(file->name, "perfetto/", 9) == 0 ? file->name : strstr(file->name, "/perfetto/");
        if (at) root = strndup(file->name, (size_t)(at - file->name) + (at != file->name));
    }
    return root ? root : tc_strdup("");
}

bool tc_perfetto_parent(const tc_ctx *ctx, const tc_file_proto *from, const char *message, char **header) {
    *header = NULL;
    const tc_type *t = tc_index_find(ctx, message);
    if (t != NULL && t->kind == TC_MESSAGE) {
        /* In the request: visible through the imports, or its own file's header ... */
        bool *seen = tc_imports_of(ctx, from);
        bool visible = tc_file_in(ctx, seen, t->file);
        free(seen);
        if (visible) return true;
        /* ... unless that file imports `from` (the headers would include each other). */
        seen = tc_imports_of(ctx, t->file);
        bool cycle = tc_file_in(ctx, seen, from);
        free(seen);
        if (cycle) return false;
        *header = tc_output_name(t->file->name, ".tracec.h");
        return true;
    }
    for (size_t i = 0; i < N_PERFETTO_FILES; i++) {
        if (strcmp(k_perfetto_files[i].message, message) != 0) continue;
        char *root = tree_root(ctx, from);
        char *proto = tc_strcat3(root, k_perfetto_files[i].path, "");
        *header = tc_output_name(proto, ".tracec.h");
        free(root);
        free(proto);
        return true;
    }
    return false;
}
