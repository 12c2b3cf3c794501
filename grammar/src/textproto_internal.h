/*
 * textproto_internal.h - state shared by the flex scanner (textproto.l), the
 * bison parser (textproto.y) and the encoder (encode.c).
 *
 * The parser's actions call the tracec_i_tp_* functions below; they look
 * fields up and encode values straight into the caller's output buffer.  Nested
 * messages reserve a one-byte length that is widened (with a memmove of the
 * body) only when the body turns out to be 128 bytes or longer.
 */
#ifndef TRACEC_TEXTPROTO_INTERNAL_H
#define TRACEC_TEXTPROTO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "descpool_internal.h"
#include "tracec/textproto.h"

/* A token: a span of the (copied) input. */
typedef struct tracec_i_tp_tok {
    const char *p;
    size_t len;
} tracec_i_tp_tok;

typedef struct tracec_i_tp_frame {
    const tracec_msgdef *msg;     /* NULL when skipping a reserved field's value */
    const void *prev;             /* the last field named in this frame, or msg (prediction key) */
    const tracec_fielddef *field; /* the field whose value this frame is (restored on pop) */
    size_t len_pos;               /* position of the reserved length byte */
    size_t words;                 /* first word of this frame's "seen" bitset */
    size_t n_exts;                /* first entry of this frame's seen extensions */
    const tracec_fielddef *packed;/* open packed run, or NULL */
    size_t packed_pos;            /* its reserved length byte */
    const char *open;             /* the opening token ("{", "<", or the input start) */
    bool group;                   /* ends with an END_GROUP tag */
    bool parent_skip;             /* the parent's state, restored on pop */
    bool parent_in_list;
} tracec_i_tp_frame;

/* Field-name prediction: text of one message type repeats its field sequence,
 * so the field named after `key` (a fielddef, or a msgdef for the first field)
 * is most likely the one named after it last time. */
#define TRACEC_I_TP_PREDICT_SLOTS 256
typedef struct tracec_i_tp_predict {
    const void *key;
    const tracec_fielddef *next;
    size_t len; /* strlen(next->name) */
} tracec_i_tp_predict;

typedef struct tracec_i_tp_ctx {
    const tracec_pool *pool;
    tracec_bytes *out;
    size_t out_start;
    const char *base; /* start of the scanner's copy of the input (flex writes into it) */
    const char *orig; /* the caller's text, for showing lines in errors */
    size_t len;
    const char *file_name;
    int max_depth;
    bool allow_invalid_utf8;
    tracec_text_top_fn on_top;
    void *on_top_ctx;
    tracec_error *err;
    bool failed;

    tracec_i_tp_frame *frames;
    int depth; /* index of the top frame */
    int cap_frames;
    uint64_t *words; /* "seen" bits: fields, then oneofs, per frame */
    size_t n_words, cap_words;
    const tracec_fielddef **exts; /* extensions seen, per frame */
    size_t n_exts, cap_exts;

    /* The field being given a value. */
    const tracec_fielddef *cur;
    const tracec_msgdef *cur_any; /* Any expansion: the type inside */
    const char *cur_name;         /* the field name token (errors) */
    size_t cur_name_len;
    bool cur_skip;                /* reserved name, or inside a skipped value */
    bool in_list;
    tracec_i_tp_predict predict[TRACEC_I_TP_PREDICT_SLOTS];

    /* String concatenation and names in brackets. */
    char *scratch;
    size_t scratch_len, scratch_cap;
    const char *str_p; /* current string value (into the input or scratch) */
    size_t str_len;
    bool str_in_scratch;
    const char *str_tok; /* first token of the string (errors) */
    char *name;
    size_t name_len, name_cap;
    bool name_has_slash;
    const char *name_tok;

    /* The scanner: the last token, and a lexical error if any. */
    const char *tok_p;
    size_t tok_len;
    const char *lex_error; /* message of a lexical error at tok_p */
    const char *pending;   /* a ':' or '{' to return as the next token, or NULL */
    char *held;            /* where flex wrote the NUL ending the last match, or NULL */
    char held_c;           /* the character it replaced */
} tracec_i_tp_ctx;

/* The actions' entry points (cross-file internals: tracec_i_, docs/naming.md). */

/* Records an error at `at` (a pointer into the input copy) and returns false. */
bool tracec_i_tp_error(tracec_i_tp_ctx *P, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The 1-based line and byte column of `at` (a pointer into the input copy). */
void tracec_i_tp_line_col(const tracec_i_tp_ctx *P, const char *at, size_t *line, size_t *col);

bool tracec_i_tp_field(tracec_i_tp_ctx *P, const tracec_i_tp_tok *name);
bool tracec_i_tp_name_first(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t);
bool tracec_i_tp_name_append(tracec_i_tp_ctx *P, char sep, const tracec_i_tp_tok *t);
bool tracec_i_tp_ext_field(tracec_i_tp_ctx *P);
/* The name of a T_EXT_NAME token ("[a.b.c]", whitespace allowed around the parts) as tracec_i_tp_name_* build it. */
bool tracec_i_tp_ext_name(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t);
bool tracec_i_tp_list_begin(tracec_i_tp_ctx *P, const char *at, bool colon);
void tracec_i_tp_list_end(tracec_i_tp_ctx *P);
bool tracec_i_tp_push(tracec_i_tp_ctx *P, const char *at, char close);
bool tracec_i_tp_pop(tracec_i_tp_ctx *P, const char *at);
bool tracec_i_tp_finish(tracec_i_tp_ctx *P);
bool tracec_i_tp_str_first(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t);
bool tracec_i_tp_str_more(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t);
bool tracec_i_tp_value_string(tracec_i_tp_ctx *P);
/* A number token; kind is 'd' (decimal), 'o', 'x' or 'f' (float). */
bool tracec_i_tp_value_number(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t, char kind, bool neg, const char *minus);
bool tracec_i_tp_value_ident(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t, bool neg, const char *minus);

#endif /* TRACEC_TEXTPROTO_INTERNAL_H */
