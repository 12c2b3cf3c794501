/*
 * match.c - partial comparisons for the test assertions: keep only the
 * packets that have some fields, and leave named fields out, on the
 * decoder's normalized text of both sides (tracec/testing.h,
 * tracec_testing_check_trace_match).
 *
 * The decoder's text is regular: one field per line, two spaces per level,
 * `name: value` or `name {` ... `}` with the `}` at the opener's indentation.
 * A field path ("track_event.name", "[my_app.MyEvent.custom_string]") names
 * fields inside a top-level message (a packet); its parts are split at dots
 * outside brackets.
 */
#include <stdlib.h>

#include "internal.h"
#include "tracec/testing.h"

typedef struct line {
    const char *p;
    size_t len;    /* without the newline */
    size_t indent; /* leading spaces */
    bool opens;    /* ends with " {" */
    bool closes;   /* is "}" */
    bool newline;  /* ended by a newline */
    bool drop;
} line;

/* The field name of a line: up to the first ':' or ' ' after the indentation. */
static size_t line_name(const line *l, const char **name) {
    const char *s = l->p + l->indent, *e = l->p + l->len;
    size_t n = 0;
    if (s < e && *s == '[') { /* an extension or Any name: up to the ']' */
        while (s + n < e && s[n] != ']') n++;
        if (s + n < e) n++;
    } else {
        while (s + n < e && s[n] != ':' && s[n] != ' ') n++;
    }
    *name = s;
    return n;
}

/* Index of the line closing the block opened at line i (or n when the text is cut). */
static size_t block_end(const line *lines, size_t n, size_t i) {
    for (size_t j = i + 1; j < n; j++)
        if (lines[j].closes && lines[j].indent == lines[i].indent) return j;
    return n;
}

/* The part of `path` starting at *pos, advancing *pos past it and its dot; its length. */
static size_t path_part(const char *path, size_t *pos, const char **part) {
    const char *s = path + *pos;
    size_t n = 0;
    int depth = 0;
    while (s[n] && (s[n] != '.' || depth > 0)) {
        if (s[n] == '[') depth++;
        if (s[n] == ']') depth--;
        n++;
    }
    *part = s;
    *pos += n + (s[n] == '.');
    return n;
}

/*
 * Walks the fields at `indent` in lines [from, to) that match `path` from
 * *pos on; with `drop`, marks each match (and its block) dropped, else
 * returns true at the first match.
 */
static bool path_walk(line *lines, size_t n, size_t from, size_t to, size_t indent,
                               const char *path, size_t pos, bool drop) {
    const char *part;
    size_t next = pos;
    size_t plen = path_part(path, &next, &part);
    bool last = next == pos + plen; /* no dot after this part */
    bool found = false;
    for (size_t i = from; i < to; i++) {
        if (lines[i].indent != indent || lines[i].closes) continue;
        size_t end = lines[i].opens ? block_end(lines, n, i) : i;
        const char *name;
        size_t nlen = line_name(&lines[i], &name);
        if (nlen == plen && memcmp(name, part, plen) == 0) {
            if (last) {
                if (!drop) return true;
                for (size_t j = i; j <= end && j < n; j++) lines[j].drop = true;
                found = true;
            } else if (lines[i].opens &&
                       path_walk(lines, n, i + 1, end, indent + 2, path, next, drop)) {
                if (!drop) return true;
                found = true;
            }
        }
        if (end > i) i = end;
    }
    return found;
}

bool tracec_i_match_filter(const void *ctx, bool actual, tracec_bytes *text) {
    const tracec_match *m = ctx;
    size_t n = 0, cap = 0;
    line *lines = NULL;
    const char *p = text->size ? (const char *)text->data : "", *end = p + text->size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            line *nlines = realloc(lines, cap * sizeof *nlines);
            if (!nlines) {
                free(lines);
                return false;
            }
            lines = nlines;
        }
        line *l = &lines[n++];
        l->p = p;
        l->len = len;
        l->indent = 0;
        while (l->indent < len && p[l->indent] == ' ') l->indent++;
        l->opens = len >= 2 && p[len - 1] == '{' && p[len - 2] == ' ';
        l->closes = len == l->indent + 1 && p[len - 1] == '}';
        l->newline = nl != NULL;
        l->drop = false;
        p += len + (nl != NULL);
    }
    for (size_t i = 0; i < n; i++) {
        if (lines[i].indent != 0 || !lines[i].opens) continue;
        size_t e = block_end(lines, n, i);
        bool keep = !actual || !m->with || !m->with[0];
        for (const char *const *w = m->with; !keep && w && *w; w++)
            keep = path_walk(lines, n, i + 1, e, 2, *w, 0, false);
        if (!keep) {
            for (size_t j = i; j <= e && j < n; j++) lines[j].drop = true;
        } else {
            bool ignored = false;
            for (const char *const *g = m->ignore; g && *g; g++)
                ignored |= path_walk(lines, n, i + 1, e, 2, *g, 0, true);
            /* A packet that only held ignored fields is left out as a whole. */
            bool empty = ignored;
            for (size_t j = i + 1; empty && j < e; j++) empty = lines[j].drop;
            if (empty)
                for (size_t j = i; j <= e && j < n; j++) lines[j].drop = true;
        }
        i = e;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (lines[i].drop) continue;
        memmove(text->data + w, lines[i].p, lines[i].len); /* never ahead of the reading point */
        w += lines[i].len;
        if (lines[i].newline) text->data[w++] = '\n';
    }
    text->size = w;
    free(lines);
    return true;
}

