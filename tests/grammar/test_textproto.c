/*
 * test_textproto.c - the text format, feature by feature and error by error.
 *
 * One table; each row is checked against protoc 3.21 as an oracle:
 *   SAME     our bytes == `protoc --encode` bytes (text in field-number order)
 *   MEANING  `protoc --decode` of ours == of protoc's (field order differs)
 *   DEV_OK   we accept what protoc rejects (a documented deviation): our bytes
 *            == protoc's encoding of `alt`, an equivalent text protoc takes
 *   ERR      we reject at line:col with `expect` in the message; protoc rejects too
 *   DEV_ERR  we reject (per the spec) what protoc accepts (documented deviation)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_util.h"

enum mode { SAME, MEANING, DEV_OK, ERR, DEV_ERR };

typedef struct row {
    enum mode mode;
    const char *type; /* NULL: tp.All */
    const char *text;
    const char *expect; /* ERR: substring of the message */
    int line, col;      /* ERR: position */
    const char *alt;    /* DEV_OK: what protoc is given instead */
} row;

#define A NULL
static const row kRows[] = {
    /* ---- Lexical: comments, separators, whitespace ---- */
    {SAME, A, "# leading\nf_int32: 1 # trailing\n# end", 0, 0, 0, 0},
    {SAME, A, "f_int64: 2; f_int32: 1,", 0, 0, 0, 0},
    {SAME, A, "f_int64: 2,f_int32: 1;", 0, 0, 0, 0},
    {SAME, A, "\t\v\f\r\n f_int32:\n1", 0, 0, 0, 0},
    {SAME, A, "", 0, 0, 0, 0},
    {SAME, A, "# only a comment", 0, 0, 0, 0},
    {SAME, A, "f_int32: 10[tp.ext_int]: 20", 0, 0, 0, 0},
    /* ---- Messages: ':' optional, {} and <> ---- */
    {SAME, A, "child { a: 1 }", 0, 0, 0, 0},
    {SAME, A, "child: { a: 1 }", 0, 0, 0, 0},
    {SAME, A, "child < a: 1 >", 0, 0, 0, 0},
    {SAME, A, "child: < s: 'x' child { child < a: 3 > } >", 0, 0, 0, 0},
    {SAME, A, "child {}", 0, 0, 0, 0},
    /* ---- Lists ---- */
    {SAME, A, "r_int32: [1, 2, 3]", 0, 0, 0, 0},
    {SAME, A, "r_int32: 1 r_int32: [2, 3] r_int32: 4", 0, 0, 0, 0},
    {SAME, A, "r_int32: []", 0, 0, 0, 0},
    {SAME, A, "r_string: ['a', \"b\" 'c']", 0, 0, 0, 0},
    {SAME, A, "r_child: [{a: 1}, <a: 2>]", 0, 0, 0, 0},
    {SAME, A, "r_child [{a: 1}, {}]", 0, 0, 0, 0},
    {SAME, A, "r_child: []", 0, 0, 0, 0},
    {SAME, A, "r_enum: [RED, 2, BLUE]", 0, 0, 0, 0},
    /* ---- Packed ---- */
    {SAME, A, "p_int32: [1, 2, 300]", 0, 0, 0, 0},
    {SAME, A, "p_int32: 1 p_int32: [2, 3] p_int32: -1", 0, 0, 0, 0},
    {SAME, A, "p_double: [1.5, -2, inf]", 0, 0, 0, 0},
    {SAME, A, "p_sint64: [-1, 1, -9223372036854775808]", 0, 0, 0, 0},
    {SAME, A, "p_bool: [true, f, 1, 0]", 0, 0, 0, 0},
    {SAME, A, "p_fixed32: [0xFFFFFFFF, 0]", 0, 0, 0, 0},
    {SAME, A, "p_int32: []", 0, 0, 0, 0},
    /* ---- Extensions ---- */
    {SAME, A, "[tp.ext_int]: 5", 0, 0, 0, 0},
    {SAME, A, "[ tp . ext_int ] : 5", 0, 0, 0, 0},
    {SAME, A, "[tp.Outer.scoped_ext]: \"s\" [tp.Outer.scoped_msg_ext] { a: 1 }", 0, 0, 0, 0},
    {SAME, A, "[tp.ext_packed]: [1, 2]", 0, 0, 0, 0},
    {SAME, A, "[tp.ext_children]: [{a: 1}, {a: 2}] [tp.ext_children] {a: 3}", 0, 0, 0, 0},
    {SAME, A, "[tp.ext_enum]: BLUE", 0, 0, 0, 0},
    /* ---- Any ---- */
    {SAME, A, "any { [type.googleapis.com/tp.Child] { a: 1 s: \"x\" } }", 0, 0, 0, 0},
    {SAME, A, "any { [type.googleapis.com/tp.Child]: < kids { a: 2 } > }", 0, 0, 0, 0},
    {SAME, A, "any { type_url: \"type.googleapis.com/tp.Child\" value: \"\\010\\001\" }", 0, 0, 0, 0},
    {SAME, A, "r_any { [type.googleapis.com/tp.All] { f_int32: 1 [tp.ext_int]: 2 } } r_any {}", 0, 0, 0, 0},
    /* ---- Strings ---- */
    {SAME, A, "f_string: 'it''s' \"x\"", 0, 0, 0, 0},
    {SAME, A, "f_bytes: \"\\a\\b\\f\\n\\r\\t\\v\\?\\\\\\'\\\"\"", 0, 0, 0, 0},
    {SAME, A, "f_bytes: '\\0\\12\\101\\1234\\377\\5x'", 0, 0, 0, 0},
    {SAME, A, "f_bytes: \"\\x0\\x41\\x213\\xfF\\x3world\"", 0, 0, 0, 0},
    {SAME, A, "f_string: \"\\u00e9\\u4e2d\\U0001F600\\U0010FFFF\\U000000e9\"", 0, 0, 0, 0},
    {SAME, A, "f_string: \"a\" 'b'\n  # c\n \"c\"\"d\"", 0, 0, 0, 0},
    {SAME, A, "f_string: \"h\xc3\xa9llo \xe4\xb8\xad\"", 0, 0, 0, 0},
    {SAME, A, "f_bytes: \"\\xff\\xfe\\200\"", 0, 0, 0, 0},
    {SAME, A, "f_string: \"\"", 0, 0, 0, 0},
    {SAME, A, "f_string: \"\" 'b' \"\" f_bytes: '' \"\\x01\"", 0, 0, 0, 0}, /* fuzz regression */
    {SAME, A, "f_string: \"\" \"\" f_bytes: '' ''", 0, 0, 0, 0}, /* fuzz regression */
    /* ---- Integers ---- */
    {SAME, A, "f_int64: 0x7FFFFFFFFFFFFFFF f_uint64: 01777777777777777777777 f_int32: -017", 0, 0, 0, 0},
    {SAME, A, "f_int32: -2147483648", 0, 0, 0, 0},
    {SAME, A, "f_int32: 2147483647", 0, 0, 0, 0},
    {SAME, A, "f_int32: -0x80000000", 0, 0, 0, 0},
    {SAME, A, "f_int32: 0x7fffffff", 0, 0, 0, 0},
    {SAME, A, "f_int32: -0", 0, 0, 0, 0},
    {SAME, A, "f_uint32: 4294967295", 0, 0, 0, 0},
    {SAME, A, "f_uint32: 0xFFFFFFFF", 0, 0, 0, 0},
    {SAME, A, "f_int64: -9223372036854775808", 0, 0, 0, 0},
    {SAME, A, "f_int64: -0x8000000000000000", 0, 0, 0, 0},
    {SAME, A, "f_uint64: 18446744073709551615", 0, 0, 0, 0},
    {SAME, A, "f_sint32: -2147483648 f_sint64: 9223372036854775807", 0, 0, 0, 0},
    {SAME, A, "f_fixed64: 0xFFFFFFFFFFFFFFFF f_fixed32: 1", 0, 0, 0, 0},
    {SAME, A, "f_sfixed32: -2147483648 f_sfixed64: -1", 0, 0, 0, 0},
    {SAME, A, "f_int32: - 5", 0, 0, 0, 0},
    {SAME, A, "f_int32: -\n  # comment\n  5", 0, 0, 0, 0},
    /* ---- Floats ---- */
    {SAME, A, "f_double: 1.5e-3 f_float: 3.25", 0, 0, 0, 0},
    {SAME, A, "f_double: .5", 0, 0, 0, 0},
    {SAME, A, "f_double: 1.", 0, 0, 0, 0},
    {SAME, A, "f_double: 1e5", 0, 0, 0, 0},
    {SAME, A, "f_double: 1E+5", 0, 0, 0, 0},
    {SAME, A, "f_double: 2.5e-1", 0, 0, 0, 0},
    {SAME, A, "f_float: 10f", 0, 0, 0, 0},
    {SAME, A, "f_double: 1.5F", 0, 0, 0, 0},
    {SAME, A, "f_double: -.5f", 0, 0, 0, 0},
    {SAME, A, "f_double: 10", 0, 0, 0, 0},
    {SAME, A, "f_double: -3", 0, 0, 0, 0},
    {SAME, A, "f_float: 1e40", 0, 0, 0, 0},
    {SAME, A, "f_double: 1e999", 0, 0, 0, 0},
    {SAME, A, "f_double: -1e999", 0, 0, 0, 0},
    {SAME, A, "f_double: inf", 0, 0, 0, 0},
    {SAME, A, "f_double: -Infinity", 0, 0, 0, 0},
    {SAME, A, "f_double: -INF", 0, 0, 0, 0},
    {SAME, A, "f_float: NaN", 0, 0, 0, 0},
    {SAME, A, "f_float: iNfInItY", 0, 0, 0, 0},
    {SAME, A, "f_double: 18446744073709551616", 0, 0, 0, 0},
    {SAME, A, "f_float: 0.1", 0, 0, 0, 0},
    /* ---- Bools ---- */
    {SAME, A, "f_bool: true", 0, 0, 0, 0},
    {SAME, A, "f_bool: True", 0, 0, 0, 0},
    {SAME, A, "f_bool: t", 0, 0, 0, 0},
    {SAME, A, "f_bool: false", 0, 0, 0, 0},
    {SAME, A, "f_bool: False", 0, 0, 0, 0},
    {SAME, A, "f_bool: f", 0, 0, 0, 0},
    {SAME, A, "f_bool: 1", 0, 0, 0, 0},
    {SAME, A, "f_bool: 0", 0, 0, 0, 0},
    {SAME, A, "f_bool: 0x1", 0, 0, 0, 0},
    {SAME, A, "f_bool: 00", 0, 0, 0, 0},
    /* ---- Enums ---- */
    {SAME, A, "f_enum: BLUE", 0, 0, 0, 0},
    {SAME, A, "f_enum: 2", 0, 0, 0, 0},
    {SAME, A, "f_enum: -5", 0, 0, 0, 0},
    {SAME, A, "f_enum: NEG", 0, 0, 0, 0},
    {SAME, A, "f_enum: true", 0, 0, 0, 0},
    {SAME, A, "f_enum: 0x1", 0, 0, 0, 0},
    {SAME, "tp3.Msg", "mode: 7", 0, 0, 0, 0},
    {SAME, "tp3.Msg", "mode: -7", 0, 0, 0, 0},
    /* ---- Groups, maps, oneofs, proto3 ---- */
    {SAME, A, "MyGroup { g_a: 1 g_s: \"x\" }", 0, 0, 0, 0},
    {SAME, A, "MyGroup: < >", 0, 0, 0, 0},
    {SAME, A, "RGroup { rg: 1 } RGroup [{ rg: 2 }, {}]", 0, 0, 0, 0},
    {SAME, A, "m_str_int { key: \"a\" value: 1 } m_str_int: [{ key: \"b\" value: 2 }]", 0, 0, 0, 0},
    {SAME, A, "m_int_child { key: 1 value { a: 2 } }", 0, 0, 0, 0},
    {SAME, A, "o_str: \"x\"", 0, 0, 0, 0},
    {SAME, A, "o_child { a: 1 }", 0, 0, 0, 0},
    {SAME, "tp3.Msg", "i: 1 mode: MODE_A packed_ints: [1, 2] modes: [MODE_A, 2] opt: \"\" s: \"x\" "
                      "b: \"\\xff\" unpacked: [1, 2] labels { key: \"k\" value: \"v\" }", 0, 0, 0, 0},
    {SAME, A, "req { x: 1 y: 2 }", 0, 0, 0, 0},
    /* ---- Reserved names are skipped, whatever their value ---- */
    {SAME, A, "old_field: 5 older_field { a: [1, 2] x < y: \"z\" > [a.b]: 1 } f_int32: 1", 0, 0, 0, 0},
    {SAME, A, "old_field: [\"a\", {}] f_int32: 1", 0, 0, 0, 0},
    /* ---- Order differs from protoc's field-number order: compare by meaning ---- */
    {MEANING, A, "f_int32: 1 f_int64: 2 child { s: \"x\" a: 1 }", 0, 0, 0, 0},
    {MEANING, A, "m_str_int { value: 1 key: \"a\" }", 0, 0, 0, 0},
    {MEANING, A, "p_int32: 1 f_int32: 2 p_int32: 3", 0, 0, 0, 0},
    {MEANING, A, "[tp.ext_int]: 1 f_int32: 2", 0, 0, 0, 0},

    /* ---- Where we follow the spec and protoc 3.21 does not ---- */
    {DEV_OK, A, "mygroup { g_a: 1 }", 0, 0, 0, "MyGroup { g_a: 1 }"},
    {DEV_OK, A, "any { [example.com/tp.Child] { a: 1 } }", 0, 0, 0,
     "any { type_url: \"example.com/tp.Child\" value: \"\\010\\001\" }"},
    {DEV_OK, A, "any { [type.example.com/tp.Child] { a: 1 } }", 0, 0, 0,
     "any { type_url: \"type.example.com/tp.Child\" value: \"\\010\\001\" }"},
    {DEV_ERR, A, "f_string: \"\\xff\"", "invalid UTF-8", 1, 11, 0},
    {DEV_ERR, A, "f_string: \"a\xc3\"", "invalid UTF-8", 1, 11, 0},
    {DEV_ERR, A, "f_string: \"\\ud800\"", "surrogate", 1, 12, 0},
    {DEV_ERR, A, "f_bytes: \"x\\udfff\"", "surrogate", 1, 12, 0},
    {DEV_ERR, A, "f_string: \"\\U00110000\"", "U+10FFFF", 1, 12, 0},
    {DEV_ERR, A, "f_bytes: \"\\777\"", "larger than", 1, 11, 0},

    /* ---- Errors (protoc rejects them too) ---- */
    {ERR, A, "f_int32: 1\nf_int23: 2", "unknown field \"f_int23\" in tp.All; did you mean \"f_int32\"?", 2, 1, 0},
    {ERR, A, "child { aa: 1 }", "unknown field \"aa\" in tp.Child; did you mean \"a\"?", 1, 9, 0},
    {ERR, A, "zzzzzz: 1", "unknown field \"zzzzzz\" in tp.All", 1, 1, 0},
    {ERR, A, "[tp.ext_in]: 1", "unknown extension [tp.ext_in] of tp.All; did you mean [tp.ext_int]?", 1, 2, 0},
    {ERR, A, "child { [tp.ext_int]: 1 }", "extension [tp.ext_int] extends tp.All, not tp.Child", 1, 10, 0},
    {ERR, A, "f_int32 5", "expected ':', '[', '{' or '<', found '5'", 1, 9, 0},
    {ERR, A, "r_int32 [1]", "expected ':'", 1, 9, 0},
    {ERR, A, "f_int32: [1]", "not repeated", 1, 10, 0},
    {ERR, A, "child: []", "not repeated", 1, 8, 0},
    {ERR, A, "f_int32: 1 f_int32: 2", "non-repeated field \"f_int32\" is specified more than once", 1, 12, 0},
    {ERR, A, "child {}\nchild {}", "more than once", 2, 1, 0},
    {ERR, A, "[tp.ext_int]: 1 [tp.ext_int]: 2", "more than once", 1, 18, 0},
    {ERR, A, "o_int: 1\no_str: \"x\"", "\"o_str\" conflicts with \"o_int\": both are in oneof \"choice\"", 2, 1, 0},
    {ERR, A, "o_child {} o_int: 1", "oneof \"choice\"", 1, 12, 0},
    {ERR, A, "f_int32: 2147483648", "out of range for field \"f_int32\" (int32)", 1, 10, 0},
    {ERR, A, "f_int32: -2147483649", "out of range", 1, 10, 0},
    {ERR, A, "f_int32: 0x80000000", "out of range", 1, 10, 0},
    {ERR, A, "f_sint32: 2147483648", "out of range", 1, 11, 0},
    {ERR, A, "f_sfixed32: -2147483649", "out of range", 1, 13, 0},
    {ERR, A, "f_uint32: 4294967296", "out of range", 1, 11, 0},
    {ERR, A, "f_fixed32: 0x100000000", "out of range", 1, 12, 0},
    {ERR, A, "f_uint32: -1", "takes no sign", 1, 11, 0},
    {ERR, A, "f_uint64: -0", "takes no sign", 1, 11, 0},
    {ERR, A, "f_fixed64: -1", "takes no sign", 1, 12, 0},
    {ERR, A, "f_uint64: 18446744073709551616", "out of range", 1, 11, 0},
    {ERR, A, "f_int64: 9223372036854775808", "out of range", 1, 10, 0},
    {ERR, A, "f_int64: -9223372036854775809", "out of range", 1, 10, 0},
    {ERR, A, "f_sfixed64: 0x8000000000000000", "out of range", 1, 13, 0},
    {ERR, A, "f_enum: 2147483648", "out of range", 1, 9, 0},
    {ERR, A, "f_int32: 1.0", "expects an integer, found a float", 1, 10, 0},
    {ERR, A, "f_int32: 1f", "found a float", 1, 10, 0},
    {ERR, A, "f_double: 0x10", "decimal numbers only", 1, 11, 0},
    {ERR, A, "f_double: 010", "decimal numbers only", 1, 11, 0},
    {ERR, A, "f_int32: 10bar", "separated from a following identifier", 1, 10, 0},
    {ERR, A, "f_double: 1e", "separated from a following identifier", 1, 11, 0},
    {ERR, A, "f_int32: 0x", "separated from a following identifier", 1, 10, 0},
    {ERR, A, "f_double: 1.5fx", "separated from a following identifier", 1, 11, 0},
    {ERR, A, "f_bool: 2", "expects true, false, 1 or 0, found 2", 1, 9, 0},
    {ERR, A, "f_bool: yes", "expects true, false, 1 or 0", 1, 9, 0},
    {ERR, A, "f_bool: TRUE", "expects true, false, 1 or 0", 1, 9, 0},
    {ERR, A, "f_bool: -1", "takes no sign", 1, 9, 0},
    {ERR, A, "f_bool: 1.0", "found a float", 1, 9, 0},
    {ERR, A, "f_enum: BLU", "unknown value \"BLU\" of enum tp.Color (field \"f_enum\"); did you mean \"BLUE\"?", 1, 9, 0},
    {ERR, A, "f_enum: 9", "not a value of the closed enum tp.Color", 1, 9, 0},
    {ERR, A, "f_enum: -BLUE", "cannot be negated", 1, 9, 0},
    {ERR, A, "f_enum: \"BLUE\"", "expects an enum value name or number, found a string", 1, 9, 0},
    {ERR, A, "f_enum: 1.5", "found a float", 1, 9, 0},
    {ERR, "tp3.Msg", "mode: MODE_C", "unknown value \"MODE_C\" of enum tp3.Mode", 1, 7, 0},
    {ERR, A, "f_int32: \"1\"", "expects an integer, found a string", 1, 10, 0},
    {ERR, A, "f_int32: nan", "expects an integer, found an identifier", 1, 10, 0},
    {ERR, A, "f_double: nanx", "expects a number, inf or nan", 1, 11, 0},
    {ERR, A, "f_double: \"1\"", "found a string", 1, 11, 0},
    {ERR, A, "f_string: 1", "expects a quoted string, found an integer", 1, 11, 0},
    {ERR, A, "f_bytes: abc", "expects a quoted string", 1, 10, 0},
    {ERR, A, "f_int32 { }", "is int32, not a message", 1, 9, 0},
    {ERR, A, "f_int32: < >", "is int32, not a message", 1, 10, 0},
    {ERR, A, "child: 1", "field \"child\" (message) expects '{' or '<', found an integer", 1, 8, 0},
    {ERR, A, "r_child: [1]", "expects '{' or '<'", 1, 11, 0},
    {ERR, A, "r_child: [{}, 1]", "expects '{' or '<'", 1, 15, 0},
    {ERR, A, "r_int32: [1, {}]", "not a message", 1, 14, 0},
    {ERR, A, "r_int32: [1 2]", "expected ']', found '2'", 1, 13, 0},
    {ERR, A, "r_int32: [1,]", "found ']'", 1, 13, 0},
    {ERR, A, "r_int32: [[1]]", "found '['", 1, 11, 0},
    {ERR, A, "f_string: \"abc\nf_int32: 1", "unterminated string", 1, 11, 0},
    {ERR, A, "f_string: 'abc", "unterminated string", 1, 11, 0},
    {ERR, A, "f_string: \"abc\\", "unterminated string", 1, 11, 0},
    {ERR, A, "f_string: \"a\\qb\"", "invalid escape sequence \\q", 1, 13, 0},
    {ERR, A, "f_bytes: \"\\xg\"", "\\x must be followed by a hexadecimal digit", 1, 11, 0},
    {ERR, A, "f_string: \"\\u12\"", "\\u must be followed by exactly 4 hexadecimal digits", 1, 12, 0},
    {ERR, A, "f_string: \"\\U0001F60\"", "\\U must be followed by exactly 8", 1, 12, 0},
    {ERR, A, "f_string: \"\\X41\"", "invalid escape", 1, 12, 0},
    {ERR, A, "child { a: 1 >", "expected identifier, '[' or '}', found '>'", 1, 14, 0},
    {ERR, A, "child < a: 1 }", "expected identifier, '[' or '>', found '}'", 1, 14, 0},
    {ERR, A, "child { a: 1", "expected identifier, '[' or '}', found end of input (the '{' at 1:7 is not closed)", 1, 13, 0},
    {ERR, A, "child {\n  kids <\n    a: 1\n  >\n", "found end of input (the '{' at 1:7 is not closed)", 5, 1, 0},
    {ERR, A, "child {\n  kids <\n    a: 1\n", "found end of input (the '<' at 2:8 is not closed)", 4, 1, 0},
    {ERR, A, "child{kids{}", "found end of input (the '{' at 1:6 is not closed)", 1, 13, 0},
    {ERR, A, "f_int32: 1\n}", "found '}'", 2, 1, 0},
    {ERR, A, "f_int32:", "found end of input", 1, 9, 0},
    {ERR, A, ": 1", "found ':'", 1, 1, 0},
    {ERR, A, "f_int32: 1 $", "unexpected character", 1, 12, 0},
    {ERR, A, "f_int32: 1 // no", "found '/'", 1, 12, 0},
    {ERR, A, "f_int32: +1", "unexpected character", 1, 10, 0},
    {ERR, A, "f_int32: 2 . 0", "found '.'", 1, 12, 0},
    {ERR, A, "[tp.ext_int: 1", "expected ']', found ':'", 1, 12, 0},
    {ERR, A, "any { [type.googleapis.com/tp.Nope] {} }", "unknown message type \"tp.Nope\" in Any expansion", 1, 8, 0},
    {ERR, A, "any { [type.googleapis.com/tp.Child]: 1 }", "Any expansion takes a message value", 1, 39, 0},
    {ERR, A, "[type.googleapis.com/tp.Child] {}", "allowed only in google.protobuf.Any", 1, 2, 0},
    {ERR, A, "any { [type.googleapis.com/tp.Child] {} [type.googleapis.com/tp.Child] {} }", "already has a value", 1, 42, 0},
    {ERR, A, "any { type_url: \"x\" [type.googleapis.com/tp.Child] {} }", "already has a value", 1, 22, 0},
    {ERR, A, "any { [type.googleapis.com/tp.Child] { b: 1 } }", "unknown field \"b\" in tp.Child", 1, 40, 0},
    {DEV_ERR, A, "req { y: 1 }", "missing required field \"x\" in tp.Req", 1, 12, 0},
    {ERR, A, "\tf_int23: 1", "unknown field", 1, 2, 0},
    {ERR, A, "child {\n  kids {\n    kids { a: \"x\" }\n  }\n}", "expects an integer", 3, 15, 0},
    {ERR, A, "MyGroup { g_a: 1 } MyGroup {}", "more than once", 1, 20, 0},
};
#undef A

static const char *proto_for(const char *type) {
    return strncmp(type, "tp3.", 4) == 0 ? "tp3.proto" : "tp2.proto";
}

static int check_row(size_t i) {
    const row *r = &kRows[i];
    const char *type = r->type ? r->type : "tp.All";
    char mode[128];
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err = {{0}};
    tracec_text_options opts = TRACEC_TEXT_OPTIONS_INIT;
    opts.file_name = "case.txtpb";
    tracec_status_t st = tracec_text_encode(tp_test_pool(), type, r->text, strlen(r->text), &opts,
                                            &out, &err);
    char *pout = NULL;
    size_t plen = 0;
    int fails = 0;
#define FAIL(...)                                                                  \
    do {                                                                           \
        cr_log_error("row %zu `%s`: ", i, r->text);                                \
        cr_log_error(__VA_ARGS__);                                                 \
        fails++;                                                                   \
    } while (0)
    snprintf(mode, sizeof mode, "--encode=%s", type);
    const char *ptext = r->mode == DEV_OK ? r->alt : r->text;
    int prc = tp_protoc(mode, proto_for(type), ptext, strlen(ptext), &pout, &plen);

    if (r->mode == ERR || r->mode == DEV_ERR) {
        if (st != TRACEC_STATUS_CORRUPT_DATA) FAIL("expected an error, got status %d", st);
        if (out.size != 0) FAIL("bytes appended on error");
        char pos[64];
        snprintf(pos, sizeof pos, "case.txtpb:%d:%d: ", r->line, r->col);
        if (strncmp(err.msg, pos, strlen(pos)) != 0) FAIL("expected position %s in:\n%s", pos, err.msg);
        if (!strstr(err.msg, r->expect)) FAIL("expected \"%s\" in:\n%s", r->expect, err.msg);
        if (!strchr(err.msg, '^')) FAIL("no caret in:\n%s", err.msg);
        if (r->mode == ERR && prc == 0) FAIL("protoc accepts this (mark it DEV_ERR?)");
        if (r->mode == DEV_ERR && prc != 0) FAIL("protoc rejects this too (mark it ERR): %s", pout);
    } else if (st != TRACEC_STATUS_SUCCESS) {
        FAIL("unexpected error:\n%s", err.msg);
    } else if (prc != 0) {
        FAIL("protoc rejects it: %s", pout);
    } else if (r->mode == MEANING) {
        char *d1 = NULL, *d2 = NULL;
        size_t l1, l2;
        snprintf(mode, sizeof mode, "--decode=%s", type);
        tp_protoc(mode, proto_for(type), out.data, out.size, &d1, &l1);
        tp_protoc(mode, proto_for(type), pout, plen, &d2, &l2);
        if (l1 != l2 || memcmp(d1, d2, l1) != 0) FAIL("decoded differently:\n%s---\n%s", d1, d2);
        free(d1);
        free(d2);
    } else if (out.size != plen || (plen && memcmp(out.data, pout, plen) != 0)) {
        FAIL("bytes differ:\n tracec %s", tp_hex(out.data, out.size));
        cr_log_error(" protoc %s", tp_hex(pout, plen));
    }
    free(pout);
    tracec_bytes_free(&out);
    return fails;
}

/* Rows are split over a few tests so that the two CPUs share them. */
#define N_ROWS (sizeof kRows / sizeof kRows[0])
#define SLICES 4
static void run_slice(int s) {
    int fails = 0;
    for (size_t i = (size_t)s; i < N_ROWS; i += SLICES) fails += check_row(i);
    cr_assert_eq(fails, 0, "%d failing checks (see the log above)", fails);
}
Test(textproto_table, slice0) { run_slice(0); }
Test(textproto_table, slice1) { run_slice(1); }
Test(textproto_table, slice2) { run_slice(2); }
Test(textproto_table, slice3) { run_slice(3); }
