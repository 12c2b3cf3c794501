/*
 * textproto.y - the pure bison grammar of the protobuf text format.
 *
 * The grammar follows the Text Format Language Specification; the actions
 * look each field up and encode each value at once (encode.c), so no tree
 * is built.  Syntax errors say what was expected; semantic errors (unknown
 * field, wrong value, out of range, ...) are recorded by the tracec_i_tp_* calls,
 * which return false and make the parse abort.
 */
%define api.pure full
%define api.prefix {tracec_tp_}
%define api.value.type {tracec_i_tp_tok}
%define parse.error custom
%param {void *scanner}
%parse-param {tracec_i_tp_ctx *P}

%code requires {
#include "textproto_internal.h"
}

%code provides {
int tracec_tp_lex(TRACEC_TP_STYPE *lval, void *scanner);
}

%code {
#include <stdio.h>
#include <string.h>
#define YYMAXDEPTH 10000000
#define CHECK(x) do { if (!(x)) YYABORT; } while (0)
static void tracec_tp_error(void *scanner, tracec_i_tp_ctx *P, const char *msg);

/* The ':' or '{' after the identifier of a T_NAME_COLON / T_NAME_BRACE token. */
static inline const char *after_name(const tracec_i_tp_tok *t) {
    const char *p = t->p + t->len;
    while (*p != ':' && *p != '{') p++;
    return p;
}

/* Takes the identifier of a T_NAME_COLON / T_NAME_BRACE token as a value: the
 * scanner returns its ':' or '{' next. */
static inline void split_name(tracec_i_tp_ctx *P, const tracec_i_tp_tok *t) { P->pending = after_name(t); }
}

%token T_IDENT "identifier"
%token T_DEC "integer"
%token T_OCT "octal integer"
%token T_HEX "hexadecimal integer"
%token T_FLOAT "float"
%token T_STRING "string"
%token T_LEXERR "invalid token"
/* "name:" and "name {" in one token: the value is the identifier. */
%token T_NAME_COLON "identifier ':'"
%token T_NAME_BRACE "identifier '{'"
/* "[pkg.ext_name]" in one token (see textproto.l). */
%token T_EXT_NAME "'['"

%%

input
    : fields                        { CHECK(tracec_i_tp_finish(P)); }
    ;

/* Flattened (no field/value/sep nonterminals): fewer reductions per field. */
fields
    : %empty
    | fields fname ':' scalar
    | fields fname ':' scalar ','
    | fields fname ':' scalar ';'
    | fields fname ':' msgval
    | fields fname ':' msgval ','
    | fields fname ':' msgval ';'
    | fields fname ':' list_c
    | fields fname ':' list_c ','
    | fields fname ':' list_c ';'
    | fields fname msgval
    | fields fname msgval ','
    | fields fname msgval ';'
    | fields fname list_nc
    | fields fname list_nc ','
    | fields fname list_nc ';'
    | fields fname_c scalar_x
    | fields fname_c scalar_x ','
    | fields fname_c scalar_x ';'
    /* The commonest values encoded by the field-list reduction itself. */
    | fields fname_c T_DEC          { CHECK(tracec_i_tp_value_number(P, &$3, 'd', false, NULL)); }
    | fields fname_c T_DEC ','      { CHECK(tracec_i_tp_value_number(P, &$3, 'd', false, NULL)); }
    | fields fname_c T_DEC ';'      { CHECK(tracec_i_tp_value_number(P, &$3, 'd', false, NULL)); }
    | fields fname_c strings        { CHECK(tracec_i_tp_value_string(P)); }
    | fields fname_c strings ','    { CHECK(tracec_i_tp_value_string(P)); }
    | fields fname_c strings ';'    { CHECK(tracec_i_tp_value_string(P)); }
    | fields fname_c T_IDENT        { CHECK(tracec_i_tp_value_ident(P, &$3, false, NULL)); }
    | fields fname_c T_IDENT ','    { CHECK(tracec_i_tp_value_ident(P, &$3, false, NULL)); }
    | fields fname_c T_IDENT ';'    { CHECK(tracec_i_tp_value_ident(P, &$3, false, NULL)); }
    | fields fname_c msgval
    | fields fname_c msgval ','
    | fields fname_c msgval ';'
    | fields fname_c list_c
    | fields fname_c list_c ','
    | fields fname_c list_c ';'
    | fields msg_b
    | fields msg_b ','
    | fields msg_b ';'
    ;

fname
    : T_IDENT                       { CHECK(tracec_i_tp_field(P, &$1)); }
    | '[' ext_name ']'              { CHECK(tracec_i_tp_ext_field(P)); }
    | T_EXT_NAME                    { CHECK(tracec_i_tp_ext_name(P, &$1) && tracec_i_tp_ext_field(P)); }
    ;

ext_name
    : dotted
    | dotted '/' { CHECK(tracec_i_tp_name_append(P, '/', NULL)); } dotted_more
    ;

dotted
    : ident                         { CHECK(tracec_i_tp_name_first(P, &$1)); }
    | dotted '.' ident              { CHECK(tracec_i_tp_name_append(P, '.', &$3)); }
    ;

dotted_more
    : ident                         { CHECK(tracec_i_tp_name_append(P, 0, &$1)); }
    | dotted_more '.' ident         { CHECK(tracec_i_tp_name_append(P, '.', &$3)); }
    ;

list_nc
    : '[' { CHECK(tracec_i_tp_list_begin(P, $1.p, false)); } list_body ']' { tracec_i_tp_list_end(P); }
    ;

list_c
    : '[' { CHECK(tracec_i_tp_list_begin(P, $1.p, true)); } list_body ']' { tracec_i_tp_list_end(P); }
    ;

list_body
    : %empty
    | elems
    ;

elems
    : elem
    | elems ',' elem
    ;

elem
    : scalar
    | msgval
    ;

msgval
    : '{' { CHECK(tracec_i_tp_push(P, $1.p, '}')); } fields '}' { CHECK(tracec_i_tp_pop(P, $4.p)); }
    | '<' { CHECK(tracec_i_tp_push(P, $1.p, '>')); } fields '>' { CHECK(tracec_i_tp_pop(P, $4.p)); }
    ;

scalar
    : strings                       { CHECK(tracec_i_tp_value_string(P)); }
    | T_DEC                         { CHECK(tracec_i_tp_value_number(P, &$1, 'd', false, NULL)); }
    | T_IDENT                       { CHECK(tracec_i_tp_value_ident(P, &$1, false, NULL)); }
    | scalar_x
    ;

/* The scalars other than a decimal, a string or an identifier. */
scalar_x
    : T_OCT                         { CHECK(tracec_i_tp_value_number(P, &$1, 'o', false, NULL)); }
    | T_HEX                         { CHECK(tracec_i_tp_value_number(P, &$1, 'x', false, NULL)); }
    | T_FLOAT                       { CHECK(tracec_i_tp_value_number(P, &$1, 'f', false, NULL)); }
    | T_NAME_COLON                  { split_name(P, &$1); CHECK(tracec_i_tp_value_ident(P, &$1, false, NULL)); }
    | T_NAME_BRACE                  { split_name(P, &$1); CHECK(tracec_i_tp_value_ident(P, &$1, false, NULL)); }
    | '-' T_DEC                     { CHECK(tracec_i_tp_value_number(P, &$2, 'd', true, $1.p)); }
    | '-' T_OCT                     { CHECK(tracec_i_tp_value_number(P, &$2, 'o', true, $1.p)); }
    | '-' T_HEX                     { CHECK(tracec_i_tp_value_number(P, &$2, 'x', true, $1.p)); }
    | '-' T_FLOAT                   { CHECK(tracec_i_tp_value_number(P, &$2, 'f', true, $1.p)); }
    | '-' T_IDENT                   { CHECK(tracec_i_tp_value_ident(P, &$2, true, $1.p)); }
    | '-' T_NAME_COLON              { split_name(P, &$2); CHECK(tracec_i_tp_value_ident(P, &$2, true, $1.p)); }
    | '-' T_NAME_BRACE              { split_name(P, &$2); CHECK(tracec_i_tp_value_ident(P, &$2, true, $1.p)); }
    ;

strings
    : T_STRING                      { CHECK(tracec_i_tp_str_first(P, &$1)); }
    | strings T_STRING              { CHECK(tracec_i_tp_str_more(P, &$2)); }
    ;

/* The common cases in fewer steps: "name:" and "name {" are single tokens. */
fname_c
    : T_NAME_COLON                  { CHECK(tracec_i_tp_field(P, &$1)); }
    ;

msg_b
    : T_NAME_BRACE { CHECK(tracec_i_tp_field(P, &$1) && tracec_i_tp_push(P, after_name(&$1), '}')); }
      fields '}'                    { CHECK(tracec_i_tp_pop(P, $4.p)); }
    ;

/* Where an identifier is a value or part of a name, a T_NAME_COLON or
 * T_NAME_BRACE is that identifier and its ':' or '{' is the next token, as
 * if they had been scanned apart (same errors, in the same order). */
ident
    : T_IDENT
    | T_NAME_COLON                  { split_name(P, &$1); }
    | T_NAME_BRACE                  { split_name(P, &$1); }
    ;

%%

/* "expected X, Y or Z, found W" at the lookahead token. */
static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, tracec_i_tp_ctx *P) {
    (void)scanner;
    if (P->failed) return 0;
    yysymbol_kind_t found = yypcontext_token(ctx);
    const char *at = P->tok_p ? P->tok_p : P->base + P->len;
    if (found == YYSYMBOL_T_LEXERR && P->lex_error) {
        tracec_i_tp_error(P, at, "%s", P->lex_error);
        return 0;
    }
    if (found == YYSYMBOL_YYEOF) at = P->base + P->len;
    yysymbol_kind_t exp[32];
    int n = yypcontext_expected_tokens(ctx, exp, 32);
    char list[512];
    size_t used = 0;
    list[0] = '\0';
    /* T_NAME_COLON and T_NAME_BRACE are expected wherever an identifier is, T_EXT_NAME
     * wherever '[' is: not listed. */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (exp[i] != YYSYMBOL_T_NAME_COLON && exp[i] != YYSYMBOL_T_NAME_BRACE && exp[i] != YYSYMBOL_T_EXT_NAME)
            exp[kept++] = exp[i];
    n = kept;
    for (int i = 0; i < n && used < sizeof list - 64; i++) {
        const char *name = exp[i] == YYSYMBOL_YYEOF ? "end of input" : yysymbol_name(exp[i]);
        size_t nl = strlen(name);
        if (nl >= 2 && name[0] == '"' && name[nl - 1] == '"') {
            name++;
            nl -= 2;
        }
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%.*s",
                                 i == 0 ? "" : (i == n - 1 ? " or " : ", "), (int)nl, name);
    }
    char found_text[80];
    if (found == YYSYMBOL_T_EXT_NAME) /* a whole "[a.b]": the '[' is what was not expected */
        snprintf(found_text, sizeof found_text, "'['");
    else if (found == YYSYMBOL_YYEOF)
        snprintf(found_text, sizeof found_text, "end of input");
    else
        snprintf(found_text, sizeof found_text, "'%.*s'",
                 (int)(P->tok_len > 40 ? 40 : P->tok_len), P->tok_p);
    /* At the end of input inside a message, also say where that message opened. */
    char opened[96] = "";
    if (found == YYSYMBOL_YYEOF && P->depth > 0) {
        const tracec_i_tp_frame *F = &P->frames[P->depth];
        size_t line, col;
        tracec_i_tp_line_col(P, F->open, &line, &col);
        snprintf(opened, sizeof opened, " (the '%c' at %zu:%zu is not closed)", *F->open, line, col);
    }
    if (n > 0)
        tracec_i_tp_error(P, at, "expected %s, found %s%s", list, found_text, opened);
    else
        tracec_i_tp_error(P, at, "unexpected %s%s", found_text, opened);
    return 0;
}

/* Bison's own errors (its stack exhausted). */
static void tracec_tp_error(void *scanner, tracec_i_tp_ctx *P, const char *msg) {
    (void)scanner;
    tracec_i_tp_error(P, P->tok_p, "%s (input nested too deeply)", msg);
}
