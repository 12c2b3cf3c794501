/*
 * protoc-gen-tracec - a protoc plugin that generates zero-copy C writers.
 *
 *   protoc --plugin=protoc-gen-tracec --tracec_out=OUT [--tracec_opt=OPTS] FILE.proto
 *
 * Reads a CodeGeneratorRequest on stdin and writes a CodeGeneratorResponse
 * on stdout (both through protobuf-c bindings generated at build time); the
 * generation itself is tc_run (run.c).
 * Problems are reported through the response's `error` field, so protoc
 * prints them with the file name and exits non-zero.
 *
 * Options (comma-separated, --tracec_opt=a=b,c=d):
 *   include_style=quote|angle   #include "x.tracec.h" (default) or <x.tracec.h>
 *   include_prefix=DIR/         prepended to the paths of included generated headers
 *                               (not to libtracec's built-in perfetto/ and google/protobuf/ ones)
 *   guard_prefix=PFX_           prepended to include guards
 *   name_prefix=pfx_            prepended to every C name from files outside Perfetto's schema
 *                               (recognised by package and imports, not by path: schema.c)
 *   descriptors=none|file|deps  what the embedded FileDescriptorSet holds (default deps)
 */
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
    "                              (not libtracec's built-in perfetto/, google/protobuf/ ones)\n"
    "  guard_prefix=PREFIX_        prefix for include guards\n"
    "  name_prefix=prefix_         prefix for every C name (types, enum values, setters,\n"
    "                              descriptor symbols) of files outside Perfetto's schema\n"
    "                              (package perfetto.protos and imported by TracePacket or\n"
    "                              TrackEvent's files, in any layout; google.protobuf)\n"
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
    uint8_t *out = NULL;
    size_t out_size = 0;
    bool ok = tc_run(in, size, &out, &out_size);
    free(in);
    if (!ok) {
        fprintf(stderr,
                "protoc-gen-tracec: stdin is not a CodeGeneratorRequest (run me through protoc: "
                "protoc --plugin=protoc-gen-tracec=PATH --tracec_out=DIR FILE.proto)\n");
        return 1;
    }
    int rc = fwrite(out, 1, out_size, stdout) == out_size && fflush(stdout) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "protoc-gen-tracec: cannot write the response to stdout\n");
    free(out);
    return rc;
}
