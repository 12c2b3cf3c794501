/*
 * printer.c - the generator's only way to produce text: templates that read
 * as the C they produce, with $name$ holes and indentation in one place.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

void tc_printer_init(tc_printer *p) {
    memset(p, 0, sizeof *p);
    p->line_start = true;
}

void tc_printer_free(tc_printer *p) {
    free(p->buf);
    tc_printer_init(p);
}

static void put(tc_printer *p, const char *s, size_t n) {
    if (p->len + n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (p->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(p->buf, cap);
        if (nb == NULL) {
            fprintf(stderr, "protoc-gen-tracec: out of memory\n");
            exit(1);
        }
        p->buf = nb;
        p->cap = cap;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

/* Writes text, indenting every non-empty line that starts. */
static void put_text(tc_printer *p, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (p->line_start && s[i] != '\n') {
            for (int k = 0; k < p->indent; k++) put(p, "    ", 4);
        }
        p->line_start = false;
        put(p, s + i, 1);
        if (s[i] == '\n') p->line_start = true;
    }
}

char *tc_printer_take(tc_printer *p) {
    char *s = p->buf ? p->buf : tc_strdup("");
    tc_printer_init(p);
    return s;
}

void tc_indent(tc_printer *p) { p->indent++; }

void tc_outdent(tc_printer *p) {
    if (p->indent > 0) p->indent--;
}

void tc_emit(tc_printer *p, const char *tmpl, ...) {
    const char *names[32];
    const char *values[32];
    size_t nvars = 0;
    va_list ap;
    va_start(ap, tmpl);
    for (;;) {
        const char *name = va_arg(ap, const char *);
        if (name == NULL) break;
        if (nvars == 32) {
            fprintf(stderr, "protoc-gen-tracec: internal error: too many template variables\n");
            abort();
        }
        names[nvars] = name;
        values[nvars] = va_arg(ap, const char *);
        nvars++;
    }
    va_end(ap);

    const char *s = tmpl;
    while (*s) {
        const char *dollar = strchr(s, '$');
        if (dollar == NULL) {
            put_text(p, s, strlen(s));
            break;
        }
        put_text(p, s, (size_t)(dollar - s));
        const char *close = strchr(dollar + 1, '$');
        if (close == NULL) {
            fprintf(stderr, "protoc-gen-tracec: internal error: unterminated $ in template\n");
            abort();
        }
        size_t n = (size_t)(close - dollar - 1);
        size_t i = 0;
        for (; i < nvars; i++)
            if (strlen(names[i]) == n && strncmp(names[i], dollar + 1, n) == 0) break;
        if (i == nvars) {
            fprintf(stderr, "protoc-gen-tracec: internal error: no value for $%.*s$\n", (int)n,
                    dollar + 1);
            abort();
        }
        put_text(p, values[i], strlen(values[i]));
        s = close + 1;
    }
}
