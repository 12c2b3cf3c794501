/*
 * encode.c - the textproto encoder: the parser's actions (tracec_i_tp_*), value
 * conversion with the spec's range rules, string unescaping, error
 * formatting with a caret, and the public entry point tracec_text_encode().
 *
 * Output goes straight into the caller's tracec_bytes.  Each nested message
 * (and each packed run) reserves one length byte; when it is closed and its
 * body is 128 bytes or more, the body is moved up to make room for the
 * longer varint, so lengths are always minimal.
 */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textproto_internal.h"
#include "textproto.tab.h"
#define YY_DECL int tracec_tp_lex(TRACEC_TP_STYPE *lval, yyscan_t yyscanner)
#include "textproto.lex.h"

#include "tracec/wire.h" /* TRACEC_WIRE_*, tracec_varint_size */

/* ---- Errors ------------------------------------------------------------- */

static size_t utf8_check(const unsigned char *s, size_t len);

/* The offset of `at` and the start of its line, and its line number. */
static size_t locate(const tracec_i_tp_ctx *P, const char *at, size_t *line, size_t *line_start) {
    if (at == NULL || at < P->base || at > P->base + P->len) at = P->base + P->len;
    size_t off = (size_t)(at - P->base);
    *line = 1;
    *line_start = 0;
    for (size_t i = 0; i < off; i++)
        if (P->orig[i] == '\n') {
            ++*line;
            *line_start = i + 1;
        }
    return off;
}

void tracec_i_tp_line_col(const tracec_i_tp_ctx *P, const char *at, size_t *line, size_t *col) {
    size_t line_start;
    size_t off = locate(P, at, line, &line_start);
    *col = off - line_start + 1;
}

bool tracec_i_tp_error(tracec_i_tp_ctx *P, const char *at, const char *fmt, ...) {
    if (P->failed) return false;
    P->failed = true;
    if (P->err == NULL) return false;
    if (P->held) *P->held = P->held_c; /* the line shown may hold it (in-place parses) */
    const char *text = P->orig;
    size_t line, line_start;
    size_t off = locate(P, at, &line, &line_start);
    size_t line_end = off;
    while (line_end < P->len && text[line_end] != '\n') line_end++;
    size_t col = off - line_start + 1;

    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    /* Show at most ~70 bytes either side of the column. */
    size_t show_from = line_start, show_to = line_end;
    bool cut_left = false, cut_right = false;
    if (off - show_from > 70) {
        show_from = off - 60;
        cut_left = true;
    }
    if (show_to - off > 70) {
        show_to = off + 60;
        cut_right = true;
    }
    /* Invalid UTF-8 is shown as \xNN (4 columns), so the message stays valid UTF-8. */
    char shown[600], caret[600];
    size_t t = 0, c = 0;
    if (cut_left) {
        memcpy(shown, "...", 3);
        memcpy(caret, "   ", 3);
        t = c = 3;
    }
    for (size_t i = show_from; i < show_to; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\t') {
            shown[t++] = '\t';
        } else if (ch == '\r') {
            shown[t++] = ' ';
        } else if (ch < 0x20 || ch == 0x7f) {
            shown[t++] = '?';
        } else if (ch >= 0x80) {
            size_t n = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
            if (utf8_check((const unsigned char *)text + i, show_to - i) == 0 || i + n > show_to) {
                t += (size_t)snprintf(shown + t, 5, "\\x%02X", ch);
                if (i < off) memcpy(caret + c, "    ", 4), c += 4;
                continue;
            }
            memcpy(shown + t, text + i, n);
            t += n;
            if (i < off) caret[c++] = ' ';
            i += n - 1;
            continue;
        } else {
            shown[t++] = (char)ch;
        }
        if (i < off) caret[c++] = ch == '\t' ? '\t' : ' ';
    }
    if (cut_right) {
        memcpy(shown + t, "...", 3);
        t += 3;
    }
    shown[t] = '\0';
    caret[c++] = '^';
    caret[c] = '\0';
    int n = snprintf(P->err->msg, sizeof P->err->msg, "%s:%zu:%zu: %s\n %s\n %s", P->file_name, line, col,
                     msg, shown, caret);
    /* A message cut to the buffer (a very long file name) says so. */
    if (n >= (int)sizeof P->err->msg) memcpy(P->err->msg + sizeof P->err->msg - 4, "...", 4);
    return false;
}

/* ---- Suggestions ---------------------------------------------------------- */

/* Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
    if (la > 200 || lb > 200) return (size_t)-1;
    size_t r0[201], r1[201], r2[201];
    size_t *prev2 = r0, *prev = r1, *cur = r2;
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        char ca = (char)tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            char cb = (char)tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca == cb ? 0 : 1);
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

typedef struct suggest {
    const char *name, *best;
    size_t len, dist;
} suggest;

static void suggest_try(suggest *s, const char *cand) {
    size_t d = edit_distance(s->name, s->len, cand, strlen(cand));
    size_t limit = s->len / 3 > 2 ? s->len / 3 : 2;
    if (d <= limit && (s->best == NULL || d < s->dist)) {
        s->best = cand;
        s->dist = d;
    }
}

static void suggestion_text(const suggest *s, char *buf, size_t size, bool brackets) {
    if (s->best)
        snprintf(buf, size, "; did you mean %s%s%s?", brackets ? "[" : "\"", s->best,
                 brackets ? "]" : "\"");
    else
        buf[0] = '\0';
}

/* ---- Output --------------------------------------------------------------- */

static bool grow(tracec_i_tp_ctx *P, size_t n) {
    tracec_bytes *o = P->out;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap - o->size < n) {
        if (cap > SIZE_MAX / 2) return tracec_i_tp_error(P, P->tok_p, "out of memory");
        cap *= 2;
    }
    uint8_t *d = realloc(o->data, cap);
    if (d == NULL) return tracec_i_tp_error(P, P->tok_p, "out of memory");
    o->data = d;
    o->cap = cap;
    return true;
}

static inline bool reserve(tracec_i_tp_ctx *P, size_t n) {
    return P->out->cap - P->out->size >= n || grow(P, n);
}

static inline void put_varint(tracec_i_tp_ctx *P, uint64_t v) {
    uint8_t *p = P->out->data + P->out->size;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    P->out->size = (size_t)(p - P->out->data);
}

static inline bool w_varint(tracec_i_tp_ctx *P, uint64_t v) {
    if (!reserve(P, 10)) return false;
    put_varint(P, v);
    return true;
}

static inline bool w_tag(tracec_i_tp_ctx *P, uint32_t number, int wt) {
    return w_varint(P, ((uint64_t)number << 3) | (uint64_t)wt);
}

static inline bool w_fixed(tracec_i_tp_ctx *P, uint64_t v, int bytes) {
    if (!reserve(P, 8)) return false;
    uint8_t *p = P->out->data + P->out->size;
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
    P->out->size += (size_t)bytes;
    return true;
}

/* Reserves a one-byte length; returns its position. */
static inline bool open_len(tracec_i_tp_ctx *P, size_t *pos) {
    if (!reserve(P, 1)) return false;
    *pos = P->out->size++;
    return true;
}

static bool close_len(tracec_i_tp_ctx *P, size_t pos) {
    tracec_bytes *o = P->out;
    size_t body = o->size - pos - 1;
    if (body < 0x80) {
        o->data[pos] = (uint8_t)body;
        return true;
    }
    size_t k = tracec_varint_size(body);
    if (!reserve(P, k - 1)) return false;
    memmove(o->data + pos + k, o->data + pos + 1, body);
    uint8_t *p = o->data + pos;
    uint64_t v = body;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
    o->size += k - 1;
    return true;
}

static inline tracec_i_tp_frame *top(tracec_i_tp_ctx *P) { return &P->frames[P->depth]; }

static bool close_packed(tracec_i_tp_ctx *P, tracec_i_tp_frame *F) {
    if (F->packed == NULL) return true;
    F->packed = NULL;
    return close_len(P, F->packed_pos);
}

/* Writes what precedes a scalar of field `f`: a tag, or (packed) a run header. */
static inline bool begin_value(tracec_i_tp_ctx *P, const tracec_fielddef *f) {
    tracec_i_tp_frame *F = top(P);
    if (F->packed == f) return true;
    if (F->packed && !close_packed(P, F)) return false;
    if (f->packed) {
        if (!w_tag(P, f->number, TRACEC_WIRE_LEN) || !open_len(P, &F->packed_pos)) return false;
        F->packed = f;
        return true;
    }
    return w_tag(P, f->number, tracec_wire_type_of(f->type));
}

/* ---- Frames --------------------------------------------------------------- */

static size_t seen_bits(const tracec_msgdef *m) { return m ? m->n_fields + m->n_oneofs : 0; }

static bool push_frame(tracec_i_tp_ctx *P, const tracec_msgdef *m, const char *open) {
    if (P->depth + 1 >= P->cap_frames) {
        int cap = P->cap_frames ? P->cap_frames * 2 : 16;
        tracec_i_tp_frame *n = realloc(P->frames, (size_t)cap * sizeof *n);
        if (n == NULL) return tracec_i_tp_error(P, open, "out of memory");
        P->frames = n;
        P->cap_frames = cap;
    }
    size_t words = (seen_bits(m) + 63) / 64;
    if (P->n_words + words > P->cap_words) {
        size_t cap = P->cap_words ? P->cap_words * 2 : 64;
        while (cap < P->n_words + words) cap *= 2;
        uint64_t *n = realloc(P->words, cap * sizeof *n);
        if (n == NULL) return tracec_i_tp_error(P, open, "out of memory");
        P->words = n;
        P->cap_words = cap;
    }
    tracec_i_tp_frame *F = &P->frames[++P->depth];
    memset(F, 0, sizeof *F);
    F->msg = m;
    F->prev = m;
    F->words = P->n_words;
    F->n_exts = P->n_exts;
    F->open = open;
    memset(P->words + P->n_words, 0, words * sizeof(uint64_t));
    P->n_words += words;
    return true;
}

static inline bool test_set(tracec_i_tp_ctx *P, tracec_i_tp_frame *F, size_t bit) {
    uint64_t *w = &P->words[F->words + bit / 64];
    uint64_t mask = (uint64_t)1 << (bit % 64);
    bool was = (*w & mask) != 0;
    *w |= mask;
    return was;
}

static inline bool is_set(tracec_i_tp_ctx *P, const tracec_i_tp_frame *F, size_t bit) {
    return (P->words[F->words + bit / 64] >> (bit % 64)) & 1;
}

/* Marks `f` as given in frame F; errors for a second value of a singular field or oneof. */
static bool mark_seen(tracec_i_tp_ctx *P, tracec_i_tp_frame *F, const tracec_fielddef *f, const char *at) {
    if (f->repeated) return true;
    const tracec_msgdef *m = F->msg;
    if (f->is_extension) {
        for (size_t i = F->n_exts; i < P->n_exts; i++)
            if (P->exts[i] == f)
                return tracec_i_tp_error(P, at, "non-repeated extension [%s] is specified more than once",
                                f->full_name);
        if (P->n_exts == P->cap_exts) {
            size_t cap = P->cap_exts ? P->cap_exts * 2 : 16;
            const tracec_fielddef **n = realloc(P->exts, cap * sizeof *n);
            if (n == NULL) return tracec_i_tp_error(P, at, "out of memory");
            P->exts = n;
            P->cap_exts = cap;
        }
        P->exts[P->n_exts++] = f;
        return true;
    }
    if (test_set(P, F, f->index))
        return tracec_i_tp_error(P, at, "non-repeated field \"%s\" is specified more than once", f->name);
    if (f->oneof_index >= 0 && test_set(P, F, m->n_fields + (size_t)f->oneof_index)) {
        const char *other = "another field";
        for (size_t i = 0; i < m->n_fields; i++)
            if (&m->fields[i] != f && m->fields[i].oneof_index == f->oneof_index &&
                is_set(P, F, i))
                other = m->fields[i].name;
        return tracec_i_tp_error(P, at, "field \"%s\" conflicts with \"%s\": both are in oneof \"%s\"",
                        f->name, other, m->oneof_names[f->oneof_index]);
    }
    return true;
}

static bool check_required(tracec_i_tp_ctx *P, tracec_i_tp_frame *F, const char *at) {
    const tracec_msgdef *m = F->msg;
    if (m == NULL || !m->has_required) return true;
    for (size_t i = 0; i < m->n_fields; i++)
        if (m->fields[i].required && !is_set(P, F, i))
            return tracec_i_tp_error(P, at, "missing required field \"%s\" in %s", m->fields[i].name,
                            m->full_name);
    return true;
}

/* ---- Field names ---------------------------------------------------------- */

static inline tracec_i_tp_predict *predict_slot(tracec_i_tp_ctx *P, const void *key) {
    uintptr_t k = (uintptr_t)key;
    return &P->predict[((k >> 4) ^ (k >> 12)) & (TRACEC_I_TP_PREDICT_SLOTS - 1)];
}

static inline uint64_t load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t load4(const char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Whether the n bytes at a and b are equal: a short compare, inlined, that
 * reads no byte outside the two ranges (the last word overlaps the one before). */
static inline bool bytes_eq(const char *a, const char *b, size_t n) {
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (load8(a + i) != load8(b + i)) return false;
        return load8(a + n - 8) == load8(b + n - 8);
    }
    if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
    for (; n; a++, b++, n--)
        if (*a != *b) return false;
    return true;
}

bool tracec_i_tp_field(tracec_i_tp_ctx *P, const tracec_i_tp_tok *name) {
    tracec_i_tp_frame *F = top(P);
    P->cur_name = name->p;
    P->cur_name_len = name->len;
    P->cur_any = NULL;
    P->cur = NULL;
    P->cur_skip = false;
    if (F->msg == NULL) {
        P->cur_skip = true;
        return true;
    }
    /* The field that followed the previous one last time, else the hash table.
     * Only fields found by their own name are predicted, so a hit is what the
     * table would return. */
    tracec_i_tp_predict *pr = predict_slot(P, F->prev);
    const tracec_fielddef *f;
    if (pr->key == F->prev && pr->len == name->len && bytes_eq(pr->next->name, name->p, name->len)) {
        f = pr->next;
    } else {
        f = tracec_i_field_by_name_n(F->msg, name->p, name->len);
        if (f && f->name[name->len] == '\0' && memcmp(f->name, name->p, name->len) == 0)
            *pr = (tracec_i_tp_predict){F->prev, f, name->len};
    }
    if (f == NULL) {
        if (tracec_i_is_reserved_name(F->msg, name->p, name->len)) {
            P->cur_skip = true;
            return true;
        }
        suggest s = {name->p, NULL, name->len, 0};
        for (size_t i = 0; i < F->msg->n_fields; i++) suggest_try(&s, F->msg->fields[i].name);
        char hint[300];
        suggestion_text(&s, hint, sizeof hint, false);
        return tracec_i_tp_error(P, name->p, "unknown field \"%.*s\" in %s%s", (int)name->len, name->p,
                        F->msg->full_name, hint);
    }
    P->cur = f;
    F->prev = f;
    if (f->repeated) return true;
    /* mark_seen's common case inline: the field (and its oneof) not seen yet. */
    uint64_t *w = &P->words[F->words + f->index / 64];
    uint64_t mask = (uint64_t)1 << (f->index % 64);
    if (!(*w & mask)) {
        if (f->oneof_index < 0) {
            *w |= mask;
            return true;
        }
        size_t bit = F->msg->n_fields + (size_t)f->oneof_index;
        uint64_t *wo = &P->words[F->words + bit / 64];
        uint64_t mask_o = (uint64_t)1 << (bit % 64);
        if (!(*wo & mask_o)) {
            *w |= mask;
            *wo |= mask_o;
            return true;
        }
    }
    return mark_seen(P, F, f, name->p);
}

static bool name_put(tracec_i_tp_ctx *P, const char *s, size_t n) {
    if (P->name_len + n + 1 > P->name_cap) {
        size_t cap = P->name_cap ? P->name_cap * 2 : 128;
        while (cap < P->name_len + n + 1) cap *= 2;
        char *b = realloc(P->name, cap);
        if (b == NULL) return tracec_i_tp_error(P, s, "out of memory");
        P->name = b;
        P->name_cap = cap;
    }
    memcpy(P->name + P->name_len, s, n);
    P->name_len += n;
    P->name[P->name_len] = '\0';
    return true;
}

bool tracec_i_tp_name_first(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    P->name_len = 0;
    P->name_has_slash = false;
    P->name_tok = t->p;
    return name_put(P, t->p, t->len);
}

bool tracec_i_tp_name_append(tracec_i_tp_ctx *P, char sep, const tracec_i_tp_tok *t) {
    if (sep) {
        if (sep == '/') P->name_has_slash = true;
        if (!name_put(P, &sep, 1)) return false;
    }
    return t == NULL || name_put(P, t->p, t->len);
}

bool tracec_i_tp_ext_name(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    const char *p = t->p + 1, *end = t->p + t->len - 1; /* inside the brackets */
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    P->name_len = 0;
    P->name_has_slash = false;
    P->name_tok = p;
    const char *q = end;
    while (q > p && (q[-1] == ' ' || (q[-1] >= '\t' && q[-1] <= '\r'))) q--;
    if (memchr(p, ' ', (size_t)(q - p)) == NULL && memchr(p, '\n', (size_t)(q - p)) == NULL &&
        memchr(p, '\t', (size_t)(q - p)) == NULL && memchr(p, '\r', (size_t)(q - p)) == NULL &&
        memchr(p, '\v', (size_t)(q - p)) == NULL && memchr(p, '\f', (size_t)(q - p)) == NULL)
        return name_put(P, p, (size_t)(q - p)); /* the common case: no whitespace inside */
    for (; p < q; p++)
        if (!(*p == ' ' || (*p >= '\t' && *p <= '\r')) && !name_put(P, p, 1)) return false;
    return true;
}

static bool is_any(const tracec_msgdef *m) {
    return m && strcmp(m->full_name, "google.protobuf.Any") == 0;
}

bool tracec_i_tp_ext_field(tracec_i_tp_ctx *P) {
    tracec_i_tp_frame *F = top(P);
    const char *at = P->name_tok;
    P->cur_name = P->name_tok;
    P->cur_name_len = 0;
    P->cur_any = NULL;
    P->cur = NULL;
    P->cur_skip = false;
    if (F->msg == NULL) {
        P->cur_skip = true;
        return true;
    }
    if (P->name_has_slash) {
        if (!is_any(F->msg))
            return tracec_i_tp_error(P, at,
                            "[%s] is an Any expansion, allowed only in google.protobuf.Any, not in %s",
                            P->name, F->msg->full_name);
        const char *type = strrchr(P->name, '/') + 1;
        const tracec_msgdef *m = tracec_pool_find_message(P->pool, type);
        if (m == NULL) return tracec_i_tp_error(P, at, "unknown message type \"%s\" in Any expansion", type);
        const tracec_fielddef *url = tracec_msgdef_field_by_number(F->msg, 1);
        const tracec_fielddef *val = tracec_msgdef_field_by_number(F->msg, 2);
        if (url == NULL || val == NULL)
            return tracec_i_tp_error(P, at, "google.protobuf.Any lacks type_url or value");
        bool had_url = test_set(P, F, url->index);
        bool had_value = test_set(P, F, val->index);
        if (had_url || had_value)
            return tracec_i_tp_error(P, at, "this google.protobuf.Any already has a value");
        P->cur_any = m;
        return true;
    }
    const tracec_fielddef *f = tracec_pool_find_extension(P->pool, P->name);
    if (f == NULL || f->containing != F->msg) {
        suggest s = {P->name, NULL, P->name_len, 0};
        for (size_t i = 0; i < F->msg->n_ext; i++) suggest_try(&s, F->msg->ext[i]->full_name);
        char hint[300];
        suggestion_text(&s, hint, sizeof hint, true);
        if (f)
            return tracec_i_tp_error(P, at, "extension [%s] extends %s, not %s%s", P->name,
                            f->containing->full_name, F->msg->full_name, hint);
        return tracec_i_tp_error(P, at, "unknown extension [%s] of %s%s", P->name, F->msg->full_name, hint);
    }
    P->cur = f;
    return mark_seen(P, F, f, at);
}

/* ---- Lists and messages ------------------------------------------------- */

static const char *cur_label(tracec_i_tp_ctx *P, char *buf, size_t size) {
    if (P->cur && P->cur->is_extension)
        snprintf(buf, size, "[%s]", P->cur->full_name);
    else if (P->cur)
        snprintf(buf, size, "\"%s\"", P->cur->name);
    else
        snprintf(buf, size, "this field");
    return buf;
}

bool tracec_i_tp_list_begin(tracec_i_tp_ctx *P, const char *at, bool colon) {
    if (P->cur_skip) return true;
    if (P->cur_any) return tracec_i_tp_error(P, at, "an Any expansion takes one message value, not a list");
    const tracec_fielddef *f = P->cur;
    char l[300];
    if (!f->repeated)
        return tracec_i_tp_error(P, at, "field %s is not repeated: the list syntax [...] is for repeated fields",
                        cur_label(P, l, sizeof l));
    if (!colon && f->type != TRACEC_TYPE_MESSAGE && f->type != TRACEC_TYPE_GROUP)
        return tracec_i_tp_error(P, at, "expected ':' between the scalar field %s and its list",
                        cur_label(P, l, sizeof l));
    P->in_list = true;
    return true;
}

void tracec_i_tp_list_end(tracec_i_tp_ctx *P) { P->in_list = false; }

bool tracec_i_tp_push(tracec_i_tp_ctx *P, const char *at, char close) {
    (void)close;
    if (P->depth >= P->max_depth)
        return tracec_i_tp_error(P, at, "messages nested deeper than the limit of %d", P->max_depth);
    tracec_i_tp_frame *F = top(P);
    const tracec_fielddef *f = P->cur;
    bool skip = P->cur_skip, in_list = P->in_list;
    if (skip) {
        if (!push_frame(P, NULL, at)) return false;
    } else if (P->cur_any) {
        const tracec_msgdef *m = P->cur_any;
        if (!close_packed(P, F)) return false;
        size_t url_len = P->name_len;
        size_t pos;
        if (!w_tag(P, 1, TRACEC_WIRE_LEN) || !w_varint(P, url_len) || !reserve(P, url_len)) return false;
        memcpy(P->out->data + P->out->size, P->name, url_len);
        P->out->size += url_len;
        if (!w_tag(P, 2, TRACEC_WIRE_LEN) || !open_len(P, &pos)) return false;
        if (!push_frame(P, m, at)) return false;
        top(P)->len_pos = pos;
    } else {
        char l[300];
        if (f->type != TRACEC_TYPE_MESSAGE && f->type != TRACEC_TYPE_GROUP)
            return tracec_i_tp_error(P, at, "field %s is %s, not a message: expected a value after ':'",
                            cur_label(P, l, sizeof l), tracec_field_type_name(f->type));
        if (f->msg == NULL)
            return tracec_i_tp_error(P, at, "the type %s of field %s is not in the descriptor pool",
                            f->type_name ? f->type_name : "?", cur_label(P, l, sizeof l));
        if (!close_packed(P, F)) return false;
        size_t pos = 0;
        bool group = f->type == TRACEC_TYPE_GROUP;
        if (group) {
            if (!w_tag(P, f->number, TRACEC_WIRE_SGROUP)) return false;
        } else if (!w_tag(P, f->number, TRACEC_WIRE_LEN) || !open_len(P, &pos)) {
            return false;
        }
        if (!push_frame(P, f->msg, at)) return false;
        top(P)->len_pos = pos;
        top(P)->group = group;
    }
    tracec_i_tp_frame *N = top(P);
    N->field = f;
    N->parent_skip = skip;
    N->parent_in_list = in_list;
    P->in_list = false;
    return true;
}

/* The on_top_message hook, for the message of frame F (just closed). */
static bool call_on_top(tracec_i_tp_ctx *P, const tracec_i_tp_frame *F, const char *at) {
    const uint8_t *o = P->out->data;
    size_t body = P->out->size - F->len_pos - 1, pos = F->len_pos;
    while (o[pos] & 0x80) { /* the length, widened by close_len */
        pos++;
        body--;
    }
    char msg[512];
    msg[0] = 0;
    if (P->on_top(P->on_top_ctx, F->field->number, o + pos + 1, body, msg, sizeof msg)) return true;
    return tracec_i_tp_error(P, at, "%s", msg[0] ? msg : "rejected");
}

bool tracec_i_tp_pop(tracec_i_tp_ctx *P, const char *at) {
    tracec_i_tp_frame *F = top(P);
    if (F->msg) {
        if (!close_packed(P, F) || !check_required(P, F, at)) return false;
        if (F->group) {
            if (!w_tag(P, F->field->number, TRACEC_WIRE_EGROUP)) return false;
        } else if (!close_len(P, F->len_pos)) {
            return false;
        } else if (P->depth == 1 && P->on_top && !call_on_top(P, F, at)) {
            return false;
        }
    }
    P->cur = F->field;
    P->cur_skip = F->parent_skip;
    P->in_list = F->parent_in_list;
    P->cur_any = NULL;
    P->n_words = F->words;
    P->n_exts = F->n_exts;
    P->depth--;
    return true;
}

bool tracec_i_tp_finish(tracec_i_tp_ctx *P) {
    tracec_i_tp_frame *F = top(P);
    return close_packed(P, F) && check_required(P, F, P->base + P->len);
}

/* ---- Strings ---------------------------------------------------------- */

static bool scratch_put(tracec_i_tp_ctx *P, const char *s, size_t n) {
    if (n == 0) return true;
    if (P->scratch_len + n > P->scratch_cap) {
        size_t cap = P->scratch_cap ? P->scratch_cap * 2 : 256;
        while (cap < P->scratch_len + n) cap *= 2;
        char *b = realloc(P->scratch, cap);
        if (b == NULL) return tracec_i_tp_error(P, P->tok_p, "out of memory");
        P->scratch = b;
        P->scratch_cap = cap;
    }
    memcpy(P->scratch + P->scratch_len, s, n);
    P->scratch_len += n;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t utf8_put(char *b, uint32_t cp) {
    if (cp < 0x80) {
        b[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Appends the unescaped body of string token `t` (quotes included) to scratch. */
static bool unescape_into_scratch(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    const char *s = t->p + 1, *end = t->p + t->len - 1;
    while (s < end) {
        const char *bs = memchr(s, '\\', (size_t)(end - s));
        if (bs == NULL) return scratch_put(P, s, (size_t)(end - s));
        if (bs > s && !scratch_put(P, s, (size_t)(bs - s))) return false;
        const char *e = bs + 1; /* the scanner guarantees a character after '\' */
        char buf[4];
        size_t n = 1;
        switch (*e) {
        case 'a': buf[0] = '\a'; e++; break;
        case 'b': buf[0] = '\b'; e++; break;
        case 'f': buf[0] = '\f'; e++; break;
        case 'n': buf[0] = '\n'; e++; break;
        case 'r': buf[0] = '\r'; e++; break;
        case 't': buf[0] = '\t'; e++; break;
        case 'v': buf[0] = '\v'; e++; break;
        case '?': buf[0] = '?'; e++; break;
        case '\\': buf[0] = '\\'; e++; break;
        case '\'': buf[0] = '\''; e++; break;
        case '"': buf[0] = '"'; e++; break;
        case 'x': {
            e++;
            int v = 0, digits = 0;
            while (digits < 2 && e < end && hexval(*e) >= 0) v = v * 16 + hexval(*e++), digits++;
            if (digits == 0) return tracec_i_tp_error(P, bs, "\\x must be followed by a hexadecimal digit");
            buf[0] = (char)v;
            break;
        }
        case 'u':
        case 'U': {
            int want = *e == 'u' ? 4 : 8;
            e++;
            uint32_t cp = 0;
            for (int i = 0; i < want; i++, e++) {
                if (e >= end || hexval(*e) < 0)
                    return tracec_i_tp_error(P, bs, "\\%c must be followed by exactly %d hexadecimal digits",
                                    want == 4 ? 'u' : 'U', want);
                cp = cp * 16 + (uint32_t)hexval(*e);
            }
            if (cp > 0x10FFFF)
                return tracec_i_tp_error(P, bs, "\\U%08X is beyond the last Unicode code point U+10FFFF",
                                (unsigned)cp);
            if (cp >= 0xD800 && cp <= 0xDFFF)
                return tracec_i_tp_error(P, bs, "U+%04X is a surrogate, not a Unicode scalar value",
                                (unsigned)cp);
            n = utf8_put(buf, cp);
            break;
        }
        default:
            if (*e >= '0' && *e <= '7') {
                int v = 0, digits = 0;
                while (digits < 3 && e < end && *e >= '0' && *e <= '7') v = v * 8 + (*e++ - '0'), digits++;
                if (v > 255) return tracec_i_tp_error(P, bs, "octal escape \\%.3s is larger than \\377", bs + 1);
                buf[0] = (char)v;
                break;
            }
            return tracec_i_tp_error(P, bs, "invalid escape sequence \\%c", *e);
        }
        if (!scratch_put(P, buf, n)) return false;
        s = e;
    }
    return true;
}

bool tracec_i_tp_str_first(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    P->str_tok = t->p;
    if (memchr(t->p + 1, '\\', t->len - 2) == NULL) {
        P->str_p = t->p + 1;
        P->str_len = t->len - 2;
        P->str_in_scratch = false;
        return true;
    }
    P->scratch_len = 0;
    if (!unescape_into_scratch(P, t)) return false;
    P->str_in_scratch = true;
    P->str_p = P->scratch;
    P->str_len = P->scratch_len;
    return true;
}

bool tracec_i_tp_str_more(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    if (!P->str_in_scratch) {
        P->scratch_len = 0;
        if (!scratch_put(P, P->str_p, P->str_len)) return false;
        P->str_in_scratch = true;
    }
    if (!unescape_into_scratch(P, t)) return false;
    P->str_p = P->scratch;
    P->str_len = P->scratch_len;
    return true;
}

/* Offset of the first invalid UTF-8 byte, or `len` if the text is valid. */
static size_t utf8_check(const unsigned char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        if (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (i + n > len) return i;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return i;
        i += n;
    }
    return len;
}

static bool type_mismatch(tracec_i_tp_ctx *P, const char *at, const char *what) {
    const tracec_fielddef *f = P->cur;
    char l[300];
    const char *expected;
    switch (f->type) {
    case TRACEC_TYPE_DOUBLE:
    case TRACEC_TYPE_FLOAT: expected = "a number, inf or nan"; break;
    case TRACEC_TYPE_BOOL: expected = "true, false, 1 or 0"; break;
    case TRACEC_TYPE_STRING:
    case TRACEC_TYPE_BYTES: expected = "a quoted string"; break;
    case TRACEC_TYPE_ENUM: expected = "an enum value name or number"; break;
    case TRACEC_TYPE_MESSAGE:
    case TRACEC_TYPE_GROUP: expected = "'{' or '<'"; break;
    default: expected = "an integer"; break;
    }
    return tracec_i_tp_error(P, at, "field %s (%s) expects %s, found %s", cur_label(P, l, sizeof l),
                    tracec_field_type_name(f->type), expected, what);
}

bool tracec_i_tp_value_string(tracec_i_tp_ctx *P) {
    if (P->cur_skip) return true;
    if (P->cur_any) return tracec_i_tp_error(P, P->str_tok, "an Any expansion takes a message value: expected '{'");
    const tracec_fielddef *f = P->cur;
    if (f->type != TRACEC_TYPE_STRING && f->type != TRACEC_TYPE_BYTES)
        return type_mismatch(P, P->str_tok, "a string");
    if (f->type == TRACEC_TYPE_STRING && !P->allow_invalid_utf8) {
        size_t bad = utf8_check((const unsigned char *)P->str_p, P->str_len);
        if (bad != P->str_len)
            return tracec_i_tp_error(P, P->str_tok,
                            "string field \"%s\" holds invalid UTF-8 (byte %zu of the value); "
                            "use \\u escapes, or a bytes field",
                            f->name, bad);
    }
    if (!begin_value(P, f) || !reserve(P, 10 + P->str_len)) return false;
    put_varint(P, P->str_len);
    if (P->str_len) memcpy(P->out->data + P->out->size, P->str_p, P->str_len);
    P->out->size += P->str_len;
    return true;
}

/* ---- Numbers ------------------------------------------------------------ */

/* Parses an integer token; *overflow when it does not fit in 64 bits. */
static uint64_t parse_uint(const tracec_i_tp_tok *t, char kind, bool *overflow) {
    const char *s = t->p, *end = t->p + t->len;
    uint64_t v = 0;
    *overflow = false;
    if (kind == 'x') {
        for (s += 2; s < end; s++) {
            if (v >> 60) *overflow = true;
            v = v * 16 + (uint64_t)hexval(*s);
        }
    } else if (kind == 'o') {
        for (s += 1; s < end; s++) {
            if (v >> 61) *overflow = true;
            v = v * 8 + (uint64_t)(*s - '0');
        }
    } else {
        for (; s < end; s++) {
            uint64_t d = (uint64_t)(*s - '0');
            if (v > (UINT64_MAX - d) / 10) *overflow = true;
            v = v * 10 + d;
        }
    }
    return v;
}

/* A float token of the form DIGITS[.DIGITS][(e|E)[+-]DIGITS] with at most 15
 * significant digits and a decimal exponent (after the fraction) within
 * +-22: the digits are exact in a double, and so is 10^k for k <= 22, so one
 * multiplication or division gives the correctly rounded value, the same as
 * strtod's (Clinger's fast path). */
static bool parse_double_fast(const tracec_i_tp_tok *t, double *out) {
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
    /* x87 arithmetic divides in extended precision and rounds twice: strtod only. */
    (void)t, (void)out;
    return false;
#else
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (t->len > 24) return false;
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    size_t i = 0;
    for (; i < t->len; i++) {
        char c = t->p[i];
        if (c >= '0' && c <= '9') {
            m = m * 10 + (uint64_t)(c - '0');
            digits++;
            frac += dot;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    if (digits == 0 || digits > 15) return false;
    int e10 = -frac;
    if (i < t->len) {
        if (t->p[i] != 'e' && t->p[i] != 'E') return false;
        i++;
        bool neg = false;
        if (i < t->len && (t->p[i] == '-' || t->p[i] == '+')) neg = t->p[i++] == '-';
        if (i == t->len || t->len - i > 3) return false;
        int x = 0;
        for (; i < t->len; i++) {
            if (t->p[i] < '0' || t->p[i] > '9') return false;
            x = x * 10 + (t->p[i] - '0');
        }
        e10 += neg ? -x : x;
    }
    if (e10 < -22 || e10 > 22) return false;
    *out = e10 < 0 ? (double)m / pow10[-e10] : (double)m * pow10[e10];
    return true;
#endif
}

static double parse_double(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) {
    double fast;
    if (parse_double_fast(t, &fast)) return fast;
    char small[64];
    char *buf = small;
    size_t n = t->len;
    if (n && (t->p[n - 1] == 'f' || t->p[n - 1] == 'F')) n--;
    if (n >= sizeof small) {
        buf = malloc(n + 1);
        if (buf == NULL) {
            tracec_i_tp_error(P, t->p, "out of memory");
            return 0;
        }
    }
    memcpy(buf, t->p, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    return v;
}

static bool write_double(tracec_i_tp_ctx *P, const tracec_fielddef *f, double v) {
    if (!begin_value(P, f)) return false;
    if (f->type == TRACEC_TYPE_FLOAT) {
        float fv = (float)v;
        uint32_t bits;
        memcpy(&bits, &fv, 4);
        return w_fixed(P, bits, 4);
    }
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return w_fixed(P, bits, 8);
}

static bool write_int(tracec_i_tp_ctx *P, const tracec_fielddef *f, int64_t sv, uint64_t uv) {
    if (!begin_value(P, f)) return false;
    switch (f->type) {
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_INT64:
    case TRACEC_TYPE_ENUM: return w_varint(P, (uint64_t)sv);
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_UINT64:
    case TRACEC_TYPE_BOOL: return w_varint(P, uv);
    case TRACEC_TYPE_SINT32:
        return w_varint(P, (uint32_t)(((uint32_t)sv << 1) ^ (uint32_t)((int32_t)sv >> 31)));
    case TRACEC_TYPE_SINT64: return w_varint(P, ((uint64_t)sv << 1) ^ (uint64_t)(sv >> 63));
    case TRACEC_TYPE_FIXED32: return w_fixed(P, uv, 4);
    case TRACEC_TYPE_SFIXED32: return w_fixed(P, (uint32_t)(int32_t)sv, 4);
    case TRACEC_TYPE_FIXED64: return w_fixed(P, uv, 8);
    case TRACEC_TYPE_SFIXED64: return w_fixed(P, (uint64_t)sv, 8);
    default: return false;
    }
}

static const char *kind_name(char kind) {
    switch (kind) {
    case 'o': return "an octal integer";
    case 'x': return "a hexadecimal integer";
    case 'f': return "a float";
    default: return "an integer";
    }
}

bool tracec_i_tp_value_number(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t, char kind, bool neg, const char *minus) {
    if (P->cur_skip) return true;
    const char *at = minus ? minus : t->p;
    if (P->cur_any) return tracec_i_tp_error(P, at, "an Any expansion takes a message value: expected '{'");
    const tracec_fielddef *f = P->cur;
    char l[300];
    tracec_field_type ty = f->type;
    if (ty == TRACEC_TYPE_DOUBLE || ty == TRACEC_TYPE_FLOAT) {
        if (kind == 'o' || kind == 'x')
            return tracec_i_tp_error(P, t->p, "field %s (%s) takes decimal numbers only, found %s",
                            cur_label(P, l, sizeof l), tracec_field_type_name(ty), kind_name(kind));
        double v = parse_double(P, t);
        if (P->failed) return false;
        return write_double(P, f, neg ? -v : v);
    }
    if (kind == 'd' && t->len <= 18) {
        /* The common case: a decimal into an int32/int64/uint32/uint64 field.
         * At most 18 digits cannot overflow; anything out of range, and the
         * other types, take the general path below. */
        uint64_t mag = 0;
        for (size_t i = 0; i < t->len; i++) mag = mag * 10 + (uint64_t)(t->p[i] - '0');
        bool fits;
        switch (ty) {
        case TRACEC_TYPE_INT64: fits = true; break;
        case TRACEC_TYPE_INT32: fits = mag <= (uint64_t)INT32_MAX + neg; break;
        case TRACEC_TYPE_UINT64: fits = !neg; break;
        case TRACEC_TYPE_UINT32: fits = !neg && mag <= UINT32_MAX; break;
        default: fits = false; break;
        }
        if (fits) {
            if (!begin_value(P, f) || !reserve(P, 10)) return false;
            put_varint(P, neg ? 0 - mag : mag);
            return true;
        }
    }
    if (ty == TRACEC_TYPE_STRING || ty == TRACEC_TYPE_BYTES || ty == TRACEC_TYPE_MESSAGE ||
        ty == TRACEC_TYPE_GROUP)
        return type_mismatch(P, at, kind_name(kind));
    if (kind == 'f') return type_mismatch(P, at, "a float");
    bool ovf;
    uint64_t mag = parse_uint(t, kind, &ovf);
    uint64_t max_pos, max_neg; /* magnitude limits */
    bool is_unsigned = false;
    switch (ty) {
    case TRACEC_TYPE_INT32:
    case TRACEC_TYPE_SINT32:
    case TRACEC_TYPE_SFIXED32:
    case TRACEC_TYPE_ENUM:
        max_pos = INT32_MAX;
        max_neg = (uint64_t)INT32_MAX + 1;
        break;
    case TRACEC_TYPE_INT64:
    case TRACEC_TYPE_SINT64:
    case TRACEC_TYPE_SFIXED64:
        max_pos = INT64_MAX;
        max_neg = (uint64_t)INT64_MAX + 1;
        break;
    case TRACEC_TYPE_UINT32:
    case TRACEC_TYPE_FIXED32:
        max_pos = UINT32_MAX;
        max_neg = 0;
        is_unsigned = true;
        break;
    case TRACEC_TYPE_BOOL:
        max_pos = 1;
        max_neg = 0;
        is_unsigned = true;
        break;
    default:
        max_pos = UINT64_MAX;
        max_neg = 0;
        is_unsigned = true;
        break;
    }
    if (neg && is_unsigned)
        return tracec_i_tp_error(P, at, "field %s (%s) takes no sign, found '-'", cur_label(P, l, sizeof l),
                        tracec_field_type_name(ty));
    if (ovf || mag > (neg ? max_neg : max_pos)) {
        if (ty == TRACEC_TYPE_BOOL)
            return tracec_i_tp_error(P, at, "field %s (bool) expects true, false, 1 or 0, found %.*s",
                            cur_label(P, l, sizeof l), (int)t->len, t->p);
        return tracec_i_tp_error(P, at, "value %s%.*s is out of range for field %s (%s)", neg ? "-" : "",
                        (int)t->len, t->p, cur_label(P, l, sizeof l), tracec_field_type_name(ty));
    }
    int64_t sv = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    if (ty == TRACEC_TYPE_ENUM && f->enm && f->enm->closed && !tracec_i_enum_has_number(f->enm, (int32_t)sv))
        return tracec_i_tp_error(P, at, "%s%.*s is not a value of the closed enum %s (field %s)",
                        neg ? "-" : "", (int)t->len, t->p, f->enm->full_name,
                        cur_label(P, l, sizeof l));
    return write_int(P, f, sv, mag);
}

static bool ieq(const tracec_i_tp_tok *t, const char *s) {
    size_t n = strlen(s);
    if (t->len != n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)t->p[i]) != s[i]) return false;
    return true;
}

static bool eq(const tracec_i_tp_tok *t, const char *s) {
    return t->len == strlen(s) && memcmp(t->p, s, t->len) == 0;
}

bool tracec_i_tp_value_ident(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t, bool neg, const char *minus) {
    if (P->cur_skip) return true;
    const char *at = minus ? minus : t->p;
    if (P->cur_any) return tracec_i_tp_error(P, at, "an Any expansion takes a message value: expected '{'");
    const tracec_fielddef *f = P->cur;
    char l[300];
    switch (f->type) {
    case TRACEC_TYPE_DOUBLE:
    case TRACEC_TYPE_FLOAT: {
        double v;
        if (ieq(t, "inf") || ieq(t, "infinity"))
            v = INFINITY;
        else if (ieq(t, "nan"))
            v = NAN;
        else
            return type_mismatch(P, at, "an identifier");
        return write_double(P, f, neg ? -v : v);
    }
    case TRACEC_TYPE_BOOL: {
        uint64_t v;
        if (neg) return tracec_i_tp_error(P, at, "field %s (bool) takes no sign", cur_label(P, l, sizeof l));
        if (eq(t, "true") || eq(t, "True") || eq(t, "t"))
            v = 1;
        else if (eq(t, "false") || eq(t, "False") || eq(t, "f"))
            v = 0;
        else
            return tracec_i_tp_error(P, at, "field %s (bool) expects true, false, 1 or 0, found %.*s",
                            cur_label(P, l, sizeof l), (int)t->len, t->p);
        return begin_value(P, f) && w_varint(P, v);
    }
    case TRACEC_TYPE_ENUM: {
        if (neg) return tracec_i_tp_error(P, at, "an enum value name cannot be negated");
        int32_t n;
        if (f->enm == NULL)
            return tracec_i_tp_error(P, at, "the enum type of field %s is not in the descriptor pool",
                            cur_label(P, l, sizeof l));
        if (!tracec_i_enum_number_of_n(f->enm, t->p, t->len, &n)) {
            suggest s = {t->p, NULL, t->len, 0};
            for (size_t i = 0; i < f->enm->n_values; i++) suggest_try(&s, f->enm->value_names[i]);
            char hint[300];
            suggestion_text(&s, hint, sizeof hint, false);
            return tracec_i_tp_error(P, at, "unknown value \"%.*s\" of enum %s (field %s)%s", (int)t->len,
                            t->p, f->enm->full_name, cur_label(P, l, sizeof l), hint);
        }
        return write_int(P, f, n, (uint64_t)(int64_t)n);
    }
    default: return type_mismatch(P, at, "an identifier");
    }
}

/* ---- Entry point ---------------------------------------------------------- */

void tracec_bytes_free(tracec_bytes *b) {
    if (b == NULL) return;
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

tracec_status_t tracec_text_encode(const tracec_pool *pool, const char *type_name_,
                                   const char *text, size_t len,
                                   const tracec_text_options *opts, tracec_bytes *out,
                                   tracec_error *err) {
    tracec_text_options defaults = TRACEC_TEXT_OPTIONS_INIT;
    if (opts == NULL) opts = &defaults;
    if (pool == NULL || type_name_ == NULL || out == NULL || (text == NULL && len > 0)) {
        if (err) snprintf(err->msg, sizeof err->msg, "tracec_text_encode: NULL argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    const tracec_msgdef *root = tracec_pool_find_message(pool, type_name_);
    if (root == NULL) {
        if (err) snprintf(err->msg, sizeof err->msg, "unknown message type \"%s\"", type_name_);
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    /* The scanner needs a writable copy ending with two NULs, unless the caller's text is one. */
    bool in_place = opts->text_in_place && text != NULL && text[len] == '\0' && text[len + 1] == '\0';
    char *buf = in_place ? (char *)(uintptr_t)text : malloc(len + 2);
    if (buf == NULL) {
        if (err) snprintf(err->msg, sizeof err->msg, "out of memory");
        return TRACEC_STATUS_OUT_OF_MEMORY;
    }
    if (!in_place) {
        if (len) memcpy(buf, text, len);
        buf[len] = buf[len + 1] = '\0';
    }

    tracec_i_tp_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    tracec_i_tp_ctx *P = &ctx;
    P->pool = pool;
    P->out = out;
    P->out_start = out->size;
    P->base = buf;
    P->orig = len ? text : buf;
    P->len = len;
    P->file_name = opts->file_name ? opts->file_name : "<input>";
    P->max_depth = opts->max_depth > 0 ? opts->max_depth : 100;
    P->allow_invalid_utf8 = opts->allow_invalid_utf8;
    P->on_top = opts->on_top_message;
    P->on_top_ctx = opts->on_top_message_ctx;
    P->err = err;
    P->depth = -1;

    yyscan_t scanner = NULL;
    int rc = 1;
    if (push_frame(P, root, buf) && tracec_tp_lex_init_extra(P, &scanner) == 0) {
        tracec_tp__scan_buffer(buf, len + 2, scanner);
        rc = tracec_tp_parse(scanner, P);
        tracec_tp_lex_destroy(scanner);
    }
    if (rc != 0 && !P->failed) tracec_i_tp_error(P, P->tok_p, "parser stack exhausted (input nested too deeply)");
    if (P->held) *P->held = P->held_c; /* the text as it was */

    free(P->frames);
    free(P->words);
    free(P->exts);
    free(P->scratch);
    free(P->name);
    bool failed = P->failed;
    if (failed) out->size = P->out_start;
    if (!in_place) free(buf);
    return failed ? TRACEC_STATUS_CORRUPT_DATA : TRACEC_STATUS_SUCCESS;
}
