/*
 * names.c - every C name protoc-gen-tracec emits is built here, so the rules
 * can be read (and changed) in one place:
 *
 *   message a.b.Outer.Inner      -> a_b_Outer_Inner       (writer type)
 *   field f of it                -> a_b_Outer_Inner_set_f / _set_cstr_f /
 *                                   _begin_f / _end_f / _f_field_number
 *   enum a.b.Outer.Kind          -> a_b_Outer_Kind        (C enum type)
 *   value K_X of it              -> a_b_Outer_K_X         (the enum's scope, as in C++)
 *   file dir/x.proto             -> dir/x.tracec.h, dir/x.tracec.c
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "protoc-gen-tracec: out of memory\n");
        exit(1);
    }
    return p;
}

char *tc_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

char *tc_strcat3(const char *a, const char *b, const char *c) {
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *d = xmalloc(na + nb + nc + 1);
    memcpy(d, a, na);
    memcpy(d + na, b, nb);
    memcpy(d + na + nb, c, nc + 1);
    return d;
}

char *tc_sprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *tc_c_name(const char *full_name) {
    if (full_name[0] == '.') full_name++;
    char *s = tc_strdup(full_name);
    for (char *c = s; *c; c++)
        if (*c == '.') *c = '_';
    return s;
}

char *tc_file_ident(const char *proto_path) {
    char *s = tc_strdup(proto_path);
    for (char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c)) *c = '_';
    if (isdigit((unsigned char)s[0])) {
        char *t = tc_strcat3("_", s, "");
        free(s);
        s = t;
    }
    return s;
}

char *tc_output_name(const char *proto_path, const char *suffix) {
    size_t n = strlen(proto_path);
    if (n > 6 && strcmp(proto_path + n - 6, ".proto") == 0) n -= 6;
    char *s = xmalloc(n + strlen(suffix) + 1);
    memcpy(s, proto_path, n);
    strcpy(s + n, suffix);
    return s;
}

char *tc_guard(const char *prefix, const char *proto_path) {
    char *id = tc_file_ident(proto_path);
    char *g = tc_strcat3(prefix ? prefix : "", id, "_TRACEC_H_");
    for (char *c = g; *c; c++) *c = (char)toupper((unsigned char)*c);
    free(id);
    return g;
}
