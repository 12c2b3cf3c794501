/*
 * test_lengths.c - minimal nested lengths: for messages written in
 * field-number order, our bytes equal libprotobuf's serialization exactly.
 *
 * The message is tracec.stress.len.Cases (protos/stress/lengths.proto): one
 * `case` per (depth 1..32, size 126..129 / 16382..16385, variant), each a
 * chain of `depth` nested Nodes:
 *   - inner: the innermost Node holds every field kind (scalars, a string
 *     pad, bytes, packed and unpacked repeated, an enum, a group with a
 *     nested message inside, repeated messages) and its body is exactly
 *     `size` bytes; every enclosing Node adds `level` after its child, so
 *     the enclosing lengths cross the same boundaries on the way out;
 *   - outer: the outermost Node's body is exactly `size` bytes (the pad of
 *     the innermost one is chosen for it), when the depth allows.
 * protoc --encode of the same message as text is the expected bytes; the
 * target sizes are checked on protoc's bytes, not ours.  The same Cases
 * bytes come out of every sink that writes packets: an array writer, a
 * memory trace file (each case a Trace.packet: field 1 too) that grows, and
 * trace buffers in every mode (payloads concatenated), where the 16 KiB
 * cases outgrow their chunks (grow()).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator_util.h"
#include "stress/lengths.tracec.h"
#include "tracec/buffer.h"
#include "tracec/context.h"
#include "tracec/trace_file.h"

TestSuite(codegen_lengths, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

enum { kMaxDepth = 32, kVariants = 2 };
enum variant { INNER, OUTER };
static const size_t k_sizes[] = {126, 127, 128, 129, 16382, 16383, 16384, 16385};
#define N_SIZES (sizeof k_sizes / sizeof k_sizes[0])

typedef struct lcase {
    int depth;
    enum variant v;
    size_t size; /* the target body size */
    size_t pad;  /* bytes of the innermost Node's pad string */
} lcase;

static lcase g_cases[kMaxDepth * N_SIZES * kVariants];
static size_t g_n;
static char *g_pad; /* 'p' * 20000 */

static size_t vsize(size_t v) { return tracec_varint_size(v); }

static const int32_t k_packed[] = {1, -2, 300};
static const char k_bytes[] = "\001\377";

/* The innermost Node's fields (field-number order), pad aside: in an inner
   case every field kind, 107 bytes, so that 126-byte bodies are possible
   (test_bytes.c has the extreme values of each kind). */
static void write_leaf(tracec_stress_len_Node *m, const lcase *c) {
    tracec_stress_len_Node_set_level(m, c->depth);
    tracec_stress_len_Node_set_pad(m, g_pad, c->pad);
    if (c->v == OUTER) return;
    tracec_stress_len_Node_set_f_double(m, 1.5);
    tracec_stress_len_Node_set_f_float(m, -2.25f);
    tracec_stress_len_Node_set_f_int64(m, 5);
    tracec_stress_len_Node_set_f_uint64(m, UINT64_C(1) << 40);
    tracec_stress_len_Node_set_f_fixed64(m, UINT64_C(0x0123456789abcdef));
    tracec_stress_len_Node_set_f_fixed32(m, 0xdeadbeefu);
    tracec_stress_len_Node_set_f_bool(m, true);
    tracec_stress_len_Node_set_f_bytes(m, k_bytes, 2);
    tracec_stress_len_Node_set_f_uint32(m, 300);
    tracec_stress_len_Node_set_f_enum(m, tracec_stress_len_KIND_BIG);
    tracec_stress_len_Node_set_f_sfixed32(m, -7);
    tracec_stress_len_Node_set_f_sfixed64(m, -8);
    tracec_stress_len_Node_set_f_sint32(m, -9);
    tracec_stress_len_Node_set_f_sint64(m, -70000);
    tracec_stress_len_Node_set_p_sint32(m, k_packed, 3);
    tracec_stress_len_Node_set_r_uint32(m, 5);
    tracec_stress_len_Node_set_r_uint32(m, 70000);
    tracec_stress_len_Node_G g;
    tracec_stress_len_Node inside, kid;
    tracec_stress_len_Node_begin_g(m, &g);
    tracec_stress_len_Node_G_set_a(&g, 21);
    tracec_stress_len_Node_G_begin_inside(&g, &inside);
    tracec_stress_len_Node_set_level(&inside, 7);
    tracec_stress_len_Node_G_end_inside(&g, &inside);
    tracec_stress_len_Node_end_g(m, &g);
    for (int k = 0; k < 2; k++) {
        tracec_stress_len_Node_begin_kids(m, &kid);
        tracec_stress_len_Node_set_level(&kid, 100 + k);
        tracec_stress_len_Node_end_kids(m, &kid);
    }
}

static const char k_leaf_text[] =
    " f_double: 1.5 f_float: -2.25 f_int64: 5 f_uint64: 1099511627776"
    " f_fixed64: 81985529216486895 f_fixed32: 3735928559 f_bool: true f_bytes: \"\\001\\377\""
    " f_uint32: 300 f_enum: KIND_BIG f_sfixed32: -7 f_sfixed64: -8 f_sint32: -9"
    " f_sint64: -70000 p_sint32: 1 p_sint32: -2 p_sint32: 300 r_uint32: 5 r_uint32: 70000"
    " G { a: 21 inside { level: 7 } } kids { level: 100 } kids { level: 101 }";

/*
 * Writes case `c` as Node `top`, opened by the caller (Cases.case or a
 * Trace.packet) and closed by it.  m[1] is `top`; m[d] is level d.
 */
static void write_case(tracec_stress_len_Node *top, const lcase *c) {
    tracec_stress_len_Node m[kMaxDepth + 1];
    m[1] = *top;
    for (int d = 1; d < c->depth; d++) tracec_stress_len_Node_begin_child(&m[d], &m[d + 1]);
    write_leaf(&m[c->depth], c);
    for (int d = c->depth - 1; d >= 1; d--) {
        tracec_stress_len_Node_end_child(&m[d], &m[d + 1]);
        if (c->v == INNER) tracec_stress_len_Node_set_level(&m[d], d);
    }
}

/* ---- sizes (a model, checked against protoc's bytes) -------------------- */

static size_t g_leaf_fixed; /* the innermost Node of an INNER case without its pad field */

/* Body size of the innermost Node with a pad of p bytes. */
static size_t leaf_body(const lcase *c, size_t p) {
    size_t fixed = c->v == INNER ? g_leaf_fixed : 1 + vsize((size_t)c->depth);
    return fixed + 1 + vsize(p) + p;
}

/* Body size of level 1 (the case) with a pad of p bytes. */
static size_t top_body(const lcase *c, size_t p) {
    size_t b = leaf_body(c, p);
    for (int d = c->depth - 1; d >= 1; d--) b = 1 + vsize(b) + b + (c->v == INNER ? 1 + vsize((size_t)d) : 0);
    return b;
}

/* The pad that makes the target body exactly c->size; false when none does. */
static bool choose_pad(lcase *c) {
    size_t (*body)(const lcase *, size_t) = c->v == INNER ? leaf_body : top_body;
    size_t lo = 0, hi = c->size; /* the first p with body(p) >= size */
    if (body(c, 0) > c->size) return false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (body(c, mid) >= c->size) hi = mid;
        else lo = mid + 1;
    }
    c->pad = lo;
    return body(c, lo) == c->size;
}

/* ---- text for protoc ----------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
}

static void case_text(sbuf *b, const lcase *c) {
    sb_add(b, "case {");
    for (int d = 1; d < c->depth; d++) sb_add(b, " child {");
    sb_add(b, " level: %d pad: \"%.*s\"", c->depth, (int)c->pad, g_pad);
    if (c->v == INNER) sb_add(b, "%s", k_leaf_text);
    for (int d = c->depth - 1; d >= 1; d--) {
        sb_add(b, " }");
        if (c->v == INNER) sb_add(b, " level: %d", d);
    }
    sb_add(b, " }\n");
}

/* ---- reading protoc's bytes ---------------------------------------------- */

static size_t read_varint(const uint8_t *p, size_t len, size_t *i) {
    size_t v = 0;
    for (int sh = 0; *i < len && sh < 64; sh += 7) {
        uint8_t c = p[(*i)++];
        v |= (size_t)(c & 0x7f) << sh;
        if (c < 0x80) return v;
    }
    return SIZE_MAX;
}

/* Checks that protoc's Cases bytes have each case's target body size where the case says. */
static void check_targets(const uint8_t *want, size_t want_len) {
    size_t i = 0;
    for (size_t k = 0; k < g_n; k++) {
        const lcase *c = &g_cases[k];
        cr_assert_lt(i, want_len);
        cr_assert_eq(want[i++], 0x0a);
        size_t len = read_varint(want, want_len, &i), body = i;
        if (c->v == OUTER) cr_assert_eq(len, c->size, "case %zu (outer, depth %d): body %zu", k, c->depth, len);
        size_t j = body, blen = len;
        for (int d = 1; d < c->depth; d++) { /* child is field 1, first in each body */
            cr_assert_eq(want[j++], 0x0a);
            blen = read_varint(want, want_len, &j);
        }
        if (c->v == INNER)
            cr_assert_eq(blen, c->size, "case %zu (inner, depth %d): innermost body %zu", k, c->depth, blen);
        i = body + len;
    }
    cr_assert_eq(i, want_len);
}

/* ---- the sinks ----------------------------------------------------------- */

static void write_array(uint8_t *buf, size_t cap, size_t *len) {
    tracec_writer w;
    tracec_stress_len_Cases cs;
    tracec_writer_init_array(&w, buf, cap);
    tracec_writer_begin_root(&w, &cs.msg);
    for (size_t k = 0; k < g_n; k++) {
        tracec_stress_len_Node top;
        tracec_stress_len_Cases_begin_case(&cs, &top);
        write_case(&top, &g_cases[k]);
        tracec_stress_len_Cases_end_case(&cs, &top);
    }
    cr_assert_eq(tracec_writer_end_root(&w, &cs.msg), TRACEC_STATUS_SUCCESS);
    *len = tracec_writer_size(&w);
}

static void write_trace_file(tracec_trace_file *f) {
    for (size_t k = 0; k < g_n; k++) {
        tracec_writer w;
        tracec_stress_len_Node top;
        tracec_trace_file_begin_packet(f, &w, &top.msg);
        write_case(&top, &g_cases[k]);
        tracec_status_t st = tracec_trace_file_end_packet(f, &w, &top.msg);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "case %zu: %s", k, tracec_status_str(st));
    }
}

static sbuf g_delivered;

static void on_records(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                       void *data, uint64_t drops) {
    (void)ctx, (void)id, (void)data, (void)drops;
    for (size_t i = 0; i < n; i++) {
        if (g_delivered.len + h[i]->size > g_delivered.cap) {
            g_delivered.cap = (g_delivered.len + h[i]->size) * 2;
            g_delivered.p = realloc(g_delivered.p, g_delivered.cap);
        }
        memcpy(g_delivered.p + g_delivered.len, h[i]->payload, h[i]->size);
        g_delivered.len += h[i]->size;
    }
}

/* Writes every case as a packet of `kind` into a new buffer of `mode`; returns the payloads. */
static void write_buffer(const char *name, tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                         uint32_t kind, size_t total) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t buf;
    g_delivered.len = 0;
    cr_assert_eq(tracec_create_context(&ctx), TRACEC_STATUS_SUCCESS);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = policy;
    /* Room for every case in one half: a packet that outgrows its chunk leaves
       the rest of that chunk as padding, and its new chunk has headroom. */
    cfg.size = 4 * total + (1u << 20);
    cfg.durable_size = mode == TRACEC_BUFFERING_MODE_STREAMING ? 0 : total + total / 4 + (1u << 20);
    cfg.callback = on_records;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &buf), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_start_context(ctx), TRACEC_STATUS_SUCCESS);
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, buf, 0), TRACEC_STATUS_SUCCESS);
    for (size_t k = 0; k < g_n; k++) {
        tracec_writer w;
        tracec_stress_len_Node top;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_TRACING, kind, &top.msg);
        write_case(&top, &g_cases[k]);
        tracec_status_t st = tracec_buffer_end_packet(&bw, &w, &top.msg);
        cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "%s: case %zu: %s", name, k, tracec_status_str(st));
    }
    tracec_buffer_writer_release(&bw);
    cr_assert_eq(tracec_flush_buffer(buf), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_stop_context(ctx), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_destroy_buffer(buf), TRACEC_STATUS_SUCCESS);
}

/* The first differing case of two Cases serializations, as hex around it (malloc'd). */
static char *first_difference(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t i = 0, k = 0;
    while (i < alen && i < blen && a[i] == b[i]) i++;
    /* the case holding byte i, from protoc's framing */
    size_t at = 0, start = 0;
    while (at < blen && at <= i) {
        start = at;
        at++;
        size_t len = read_varint(b, blen, &at);
        if (len == SIZE_MAX) break;
        at += len;
        k++;
    }
    const lcase *c = k ? &g_cases[k - 1] : &g_cases[0];
    size_t from = i > 16 ? i - 16 : 0;
    char *ha = cg_hex(a + from, (alen > from ? alen - from : 0), 48);
    char *hb = cg_hex(b + from, (blen > from ? blen - from : 0), 48);
    char *s = cg_fmt("first difference at byte %zu, in case %zu (%s, depth %d, size %zu; it starts at %zu); "
                     "from byte %zu:\n    ours:   %s\n    protoc: %s",
                     i, k ? k - 1 : 0, c->v == INNER ? "inner" : "outer", c->depth, c->size, start, from, ha, hb);
    free(ha);
    free(hb);
    return s;
}

static void expect_same(const char *sink, const uint8_t *ours, size_t ours_len, const uint8_t *want,
                        size_t want_len) {
    if (ours_len == want_len && memcmp(ours, want, want_len) == 0) return;
    char *d = first_difference(ours, ours_len, want, want_len);
    cr_expect_fail("%s: our bytes (%zu) differ from libprotobuf's (%zu): %s", sink, ours_len, want_len, d);
    free(d);
}

Test(codegen_lengths, minimal_lengths_equal_libprotobuf_on_every_sink, .timeout = 120) {
#ifdef TRACEC_FIXED_NESTED_LENGTHS
    cg_skip_test("built with TRACEC_FIXED_NESTED_LENGTHS: nested lengths are 4 bytes, not libprotobuf's");
#endif
    g_pad = malloc(20000);
    memset(g_pad, 'p', 20000);

    /* The INNER leaf's size without its pad: measured on a scratch writer (protoc checks the result). */
    {
        static uint8_t scratch[1024];
        tracec_writer w;
        tracec_stress_len_Node leaf;
        lcase c = {1, INNER, 0, 0};
        tracec_writer_init_array(&w, scratch, sizeof scratch);
        tracec_writer_begin_root(&w, &leaf.msg);
        write_leaf(&leaf, &c);
        cr_assert_eq(tracec_writer_end_root(&w, &leaf.msg), TRACEC_STATUS_SUCCESS);
        g_leaf_fixed = tracec_writer_size(&w) - 2; /* without the empty pad's tag and length */
    }
    size_t skipped = 0;
    for (int v = 0; v < kVariants; v++)
        for (int d = 1; d <= kMaxDepth; d++)
            for (size_t s = 0; s < N_SIZES; s++) {
                lcase c = {d, (enum variant)v, k_sizes[s], 0};
                if (choose_pad(&c)) g_cases[g_n++] = c;
                else skipped++;
            }
    /* A case is skipped only when its fields and levels alone are over its size (none today). */
    cr_log_info("%zu cases (%zu skipped: the fields and levels alone are over the size)", g_n, skipped);
    cr_assert_lt(skipped, 64u, "the cases lost their point");

    /* libprotobuf's bytes. */
    sbuf text = {0};
    for (size_t k = 0; k < g_n; k++) case_text(&text, &g_cases[k]);
    char *text_path = cg_fmt("%s/cases.txtpb", cg_tmp), *want_path = cg_fmt("%s/cases.bin", cg_tmp);
    cg_write(text_path, text.p, text.len);
    int st = -1;
    char *err = cg_run(&st, "'%s' --encode=tracec.stress.len.Cases -I%s/tests/generator/codegen/protos stress/lengths.proto "
                            "< '%s' 2>&1 > '%s'",
                       TRACEC_PROTOC, TRACEC_SOURCE_DIR, text_path, want_path);
    cr_assert_eq(st, 0, "protoc --encode failed:\n%s", err);
    free(err);
    size_t want_len = 0;
    uint8_t *want = (uint8_t *)cg_read(want_path, &want_len);
    cr_assert_not_null(want);
    check_targets(want, want_len);

    /* 1. An array writer. */
    size_t cap = want_len + 4096, ours_len = 0;
    uint8_t *ours = malloc(cap);
    write_array(ours, cap, &ours_len);
    expect_same("array", ours, ours_len, want, want_len);
    free(ours);

    /* 2. A memory trace file (starts at 64 KiB and grows). */
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    write_trace_file(f);
    const uint8_t *data = tracec_trace_file_data(f, &ours_len);
    expect_same("trace file", data, ours_len, want, want_len);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);

    /* 3. Trace buffers, every mode; CIRCULAR also through its durable part. */
    static const struct {
        const char *name;
        tracec_buffering_mode_t mode;
        tracec_buffer_policy_t policy;
        uint32_t kind;
    } bufs[] = {
        {"buffer STREAMING LOSSLESS", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS,
         TRACEC_BUFFER_TRACING_TRACK_EVENT},
        {"buffer STREAMING DISCARD", TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD,
         TRACEC_BUFFER_TRACING_TRACK_EVENT},
        {"buffer ONESHOT", TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE, TRACEC_BUFFER_TRACING_TRACK_EVENT},
        {"buffer CIRCULAR", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE,
         TRACEC_BUFFER_TRACING_TRACK_EVENT},
        {"buffer CIRCULAR durable", TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE,
         TRACEC_BUFFER_TRACING_INTERNED_DATA},
    };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        write_buffer(bufs[i].name, bufs[i].mode, bufs[i].policy, bufs[i].kind, want_len);
        expect_same(bufs[i].name, (const uint8_t *)g_delivered.p, g_delivered.len, want, want_len);
    }
    cr_log_info("%zu cases, %zu bytes: equal on every sink", g_n, want_len);

    free(g_delivered.p);
    free(want);
    free(text.p);
    free(text_path);
    free(want_path);
    free(g_pad);
}
