/*
 * textproto_internal.h - state shared by the flex scanner (textproto.l), the
 * bison parser (textproto.y) and the encoder (encode.c).
 *
 * The parser's actions call the tp_* functions below; they look fields up
 * and encode values straight into the caller's output buffer.  Nested
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
typedef struct tp_tok {
    const char *p;
    size_t len;
} tp_tok;

typedef struct tp_frame {
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
} tp_frame;

/* Field-name prediction: text of one message type repeats its field sequence,
 * so the field named after `key` (a fielddef, or a msgdef for the first field)
 * is most likely the one named after it last time. */
#define TP_PREDICT_SLOTS 256
typedef struct tp_predict {
    const void *key;
    const tracec_fielddef *next;
    size_t len; /* strlen(next->name) */
} tp_predict;

typedef struct tp_ctx {
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

    tp_frame *frames;
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
    tp_predict predict[TP_PREDICT_SLOTS];

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
} tp_ctx;

/* The actions' entry points, kept in the tracec_ namespace of the archive. */
#define tp_error tracec_i_tp_error
#define tp_line_col tracec_i_tp_line_col
#define tp_field tracec_i_tp_field
#define tp_name_first tracec_i_tp_name_first
#define tp_name_append tracec_i_tp_name_append
#define tp_ext_field tracec_i_tp_ext_field
#define tp_list_begin tracec_i_tp_list_begin
#define tp_list_end tracec_i_tp_list_end
#define tp_push tracec_i_tp_push
#define tp_pop tracec_i_tp_pop
#define tp_finish tracec_i_tp_finish
#define tp_str_first tracec_i_tp_str_first
#define tp_str_more tracec_i_tp_str_more
#define tp_value_string tracec_i_tp_value_string
#define tp_value_number tracec_i_tp_value_number
#define tp_value_ident tracec_i_tp_value_ident

/* Records an error at `at` (a pointer into the input copy) and returns false. */
bool tp_error(tp_ctx *P, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The 1-based line and byte column of `at` (a pointer into the input copy). */
void tp_line_col(const tp_ctx *P, const char *at, size_t *line, size_t *col);

bool tp_field(tp_ctx *P, const tp_tok *name);
bool tp_name_first(tp_ctx *P, const tp_tok *t);
bool tp_name_append(tp_ctx *P, char sep, const tp_tok *t);
bool tp_ext_field(tp_ctx *P);
bool tp_list_begin(tp_ctx *P, const char *at, bool colon);
void tp_list_end(tp_ctx *P);
bool tp_push(tp_ctx *P, const char *at, char close);
bool tp_pop(tp_ctx *P, const char *at);
bool tp_finish(tp_ctx *P);
bool tp_str_first(tp_ctx *P, const tp_tok *t);
bool tp_str_more(tp_ctx *P, const tp_tok *t);
bool tp_value_string(tp_ctx *P);
/* A number token; kind is 'd' (decimal), 'o', 'x' or 'f' (float). */
bool tp_value_number(tp_ctx *P, const tp_tok *t, char kind, bool neg, const char *minus);
bool tp_value_ident(tp_ctx *P, const tp_tok *t, bool neg, const char *minus);

#endif /* TRACEC_TEXTPROTO_INTERNAL_H */
