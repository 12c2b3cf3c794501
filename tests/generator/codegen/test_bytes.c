/*
 * test_bytes.c - the bytes our generated writers produce equal libprotobuf's.
 *
 * For each case (cases/NAME.txtpb, a message type, its protos) byte_writer
 * writes NAME.bin with the generated writers and `protoc --encode` encodes the
 * textproto.  Per case:
 *   1. our bytes equal protoc's bytes exactly: nested lengths are minimal
 *      varints, as libprotobuf writes them (on a mismatch: both sides' first
 *      differing top-level field, as hex; and whether shrinking redundant
 *      lengths would have made them equal);
 *   2. `protoc --decode` prints the same text for our raw bytes as for
 *      protoc's (on a mismatch: the diff).
 * Suite codegen_bytes runs the native byte_writer; codegen_bytes_m32 builds
 * byte_writer.c and the runtime with `gcc -m32` and checks every case again.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator_util.h"

TestSuite(codegen_bytes, .init = cg_tmp_setup, .fini = cg_tmp_teardown);
TestSuite(codegen_bytes_m32, .init = cg_tmp_setup, .fini = cg_tmp_teardown);

typedef struct byte_case {
    char name[16];
    char type[32];
    char protos[96]; /* space-separated, under the -I dirs of CASE_INCLUDES */
} byte_case;

enum { CASE_BYTE_CASES, CASE_P3, CASE_PF_TRACE, CASE_NOPKG, CASE_COUNT };

static const byte_case k_cases[CASE_COUNT] = {
    {"byte_cases", "tracec.stress.ByteCases", "stress/all_types.proto"},
    {"p3_cases", "tracec.stress.p3.P3Cases", "stress/p3.proto"},
    {"pf_trace", "perfetto.protos.Trace",
     "perfetto/trace/trace.proto stress/perfetto_ext.proto stress/te_only.proto"},
    {"nopkg", "NoPkg", "stress/nopkg.proto"},
};

#define CASE_DIR TRACEC_SOURCE_DIR "/tests/generator/codegen"
#define CASE_INCLUDES CASE_DIR "/protos:" TRACEC_SOURCE_DIR "/protos:" TRACEC_PROTOBUF_INCLUDE

/* ---- wire format: normalizing our redundant lengths ---------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

static void put(bytes *b, const uint8_t *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
}

static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static void put_varint(bytes *b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) tmp[n++] = (uint8_t)(v | 0x80), v >>= 7;
    tmp[n++] = (uint8_t)v;
    put(b, tmp, n);
}

/* Reads a varint at *i (< end); returns its encoded length, 0 when malformed. */
static size_t read_varint(const uint8_t *b, size_t end, size_t *i, uint64_t *v) {
    size_t start = *i;
    unsigned shift = 0;
    *v = 0;
    while (*i < end && shift < 64) {
        uint8_t c = b[(*i)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        shift += 7;
        if (c < 0x80) return *i - start;
    }
    return 0;
}

/*
 * Re-encodes the fields in b[*i, end), shrinking redundant (non-minimal)
 * lengths.  Only our nested messages carry redundant lengths (strings, bytes
 * and packed fields use minimal ones), so a redundant length marks a message
 * whose body is normalized recursively.  `group` is the field number of the
 * enclosing group, or -1.  Returns false (with `err`) on malformed input.
 */
static bool normalize(const uint8_t *b, size_t *i, size_t end, int64_t group, bytes *out, char *err,
                      size_t errlen) {
    while (*i < end) {
        uint64_t tag, v;
        size_t at = *i;
        if (!read_varint(b, end, i, &tag)) return snprintf(err, errlen, "bad tag at %zu", at), false;
        unsigned wt = (unsigned)(tag & 7);
        uint64_t num = tag >> 3;
        if (wt == 4) {
            if (group < 0 || (uint64_t)group != num)
                return snprintf(err, errlen, "unbalanced end group %llu at %zu", (unsigned long long)num, at), false;
            put_varint(out, tag);
            return true;
        }
        put_varint(out, tag);
        if (wt == 0) {
            if (!read_varint(b, end, i, &v)) return snprintf(err, errlen, "bad varint at %zu", *i), false;
            put_varint(out, v);
        } else if (wt == 1 || wt == 5) {
            size_t n = wt == 1 ? 8 : 4;
            if (end - *i < n) return snprintf(err, errlen, "truncated fixed field at %zu", *i), false;
            put(out, b + *i, n);
            *i += n;
        } else if (wt == 2) {
            size_t nlen = read_varint(b, end, i, &v);
            if (!nlen || v > end - *i) return snprintf(err, errlen, "bad length at %zu", at), false;
            size_t body = *i, n = (size_t)v;
            if (nlen > varint_len(v)) {
                bytes inner = {0};
                size_t j = body;
                if (!normalize(b, &j, body + n, -1, &inner, err, errlen)) return free(inner.p), false;
                put_varint(out, inner.len);
                put(out, inner.p, inner.len);
                free(inner.p);
            } else {
                put_varint(out, v);
                put(out, b + body, n);
            }
            *i = body + n;
        } else if (wt == 3) {
            if (!normalize(b, i, end, (int64_t)num, out, err, errlen)) return false;
        } else {
            return snprintf(err, errlen, "bad wire type %u at %zu", wt, at), false;
        }
    }
    if (group >= 0) return snprintf(err, errlen, "group %lld not closed", (long long)group), false;
    return true;
}

/* The end of the top-level field starting at `i` (minimal lengths assumed). */
static size_t field_end(const uint8_t *b, size_t len, size_t i, uint64_t *num) {
    uint64_t tag, v;
    if (!read_varint(b, len, &i, &tag)) return len;
    *num = tag >> 3;
    switch (tag & 7) {
    case 0: return read_varint(b, len, &i, &v) ? i : len;
    case 1: return i + 8 <= len ? i + 8 : len;
    case 5: return i + 4 <= len ? i + 4 : len;
    case 2: return read_varint(b, len, &i, &v) && v <= len - i ? i + (size_t)v : len;
    case 3: {
        bytes skip = {0};
        char err[128];
        bool ok = normalize(b, &i, len, (int64_t)*num, &skip, err, sizeof err);
        free(skip.p);
        return ok ? i : len;
    }
    default: return len;
    }
}

/* Both sides' first differing top-level field, as hex (malloc'd). */
static char *first_difference(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t i = 0, j = 0;
    for (unsigned k = 0;; k++) {
        uint64_t na = 0, nb = 0;
        size_t ea = i < alen ? field_end(a, alen, i, &na) : alen;
        size_t eb = j < blen ? field_end(b, blen, j, &nb) : blen;
        if (i >= alen && j >= blen) return strdup("  (no differing top-level field found)");
        if (ea - i != eb - j || memcmp(a + i, b + j, ea - i) != 0) {
            char *ha = cg_hex(a + i, ea - i, 256), *hb = cg_hex(b + j, eb - j, 256);
            char *s = cg_fmt("  first differing top-level field #%u (field %llu / %llu):\n    ours:   %s\n"
                             "    protoc: %s",
                             k, (unsigned long long)na, (unsigned long long)nb, ha, hb);
            free(ha);
            free(hb);
            return s;
        }
        i = ea;
        j = eb;
    }
}

/* ---- one case ----------------------------------------------------------- */

/* Checks OUTDIR/NAME.bin (written by a byte writer) against protoc. */
static void check_case(const char *outdir, int idx, const char *label) {
    const byte_case *c = &k_cases[idx];
    size_t ours_len = 0, want_len = 0;
    char *bin = cg_fmt("%s/%s.bin", outdir, c->name);
    uint8_t *ours = (uint8_t *)cg_read(bin, &ours_len);
    cr_assert_not_null(ours, "%s %s: the byte writer did not write %s", label, c->name, bin);

    /* protoc --encode of the textproto: the expected bytes. */
    char *want_path = cg_fmt("%s/%s.protoc.bin", cg_tmp, c->name);
    int st = -1;
    char *err = cg_run(&st, "'%s' --encode=%s -I%s/protos %s %s < '%s/cases/%s.txtpb' 2>&1 > '%s'",
                       TRACEC_PROTOC, c->type, CASE_DIR, CG_PROTO_INCLUDES, c->protos, CASE_DIR, c->name, want_path);
    cr_assert_eq(st, 0, "%s %s: protoc --encode failed:\n%s", label, c->name, err);
    free(err);
    uint8_t *want = (uint8_t *)cg_read(want_path, &want_len);
    cr_assert_not_null(want);
    cr_assert_gt(want_len, 0, "%s %s: protoc encoded nothing", label, c->name);

    /* 1. Bytes, exactly. */
    bytes norm = {0};
    size_t i = 0;
    char nerr[128] = "";
    bool parsed = normalize(ours, &i, ours_len, -1, &norm, nerr, sizeof nerr);
    if (!parsed) {
        char *h = cg_hex(ours, ours_len, 512);
        cr_expect_fail("%s %s: our bytes are not a valid message (%s):\n    ours: %s", label, c->name, nerr, h);
        free(h);
    } else if (ours_len != want_len || memcmp(ours, want, want_len) != 0) {
        char *d = first_difference(ours, ours_len, want, want_len);
        bool only_lengths = norm.len == want_len && memcmp(norm.p, want, want_len) == 0;
        cr_expect_fail("%s %s: bytes differ (ours %zu bytes, protoc %zu bytes%s)\n%s", label, c->name, ours_len,
                       want_len, only_lengths ? "; only in redundant nested lengths" : "", d);
        free(d);
    }

    /* 2. protoc --decode prints the same text for both. */
    int st_ours = -1, st_want = -1;
    char *dec_ours = oracle_decode(CASE_INCLUDES, c->protos, c->type, ours, ours_len, &st_ours);
    char *dec_want = oracle_decode(CASE_INCLUDES, c->protos, c->type, want, want_len, &st_want);
    cr_assert(dec_ours && dec_want);
    cr_expect_eq(st_ours, 0, "%s %s: protoc --decode of our bytes failed:\n%s", label, c->name, dec_ours);
    cr_expect_eq(st_want, 0, "%s %s: protoc --decode of protoc's bytes failed:\n%s", label, c->name, dec_want);
    if (strcmp(dec_ours, dec_want) != 0) {
        char *d = cg_diff("protoc", dec_want, "ours", dec_ours);
        cr_expect_fail("%s %s: protoc --decode differs:\n%s", label, c->name, d);
        free(d);
    }
    cr_log_info("%s %s: %zu bytes, ours %zu", label, c->name, want_len, ours_len);
    free(dec_ours);
    free(dec_want);
    free(norm.p);
    free(want);
    free(want_path);
    free(ours);
    free(bin);
}

/* Runs `writer OUTDIR` into cg_tmp/out; returns OUTDIR (malloc'd). */
static char *run_writer(const char *writer) {
    char *out = cg_fmt("%s/out", cg_tmp);
    int st = -1;
    char *msg = cg_run(&st, "mkdir -p '%s' && '%s' '%s' 2>&1", out, writer, out);
    cr_assert_eq(st, 0, "%s failed (exit %d):\n%s", writer, st, msg);
    free(msg);
    return out;
}

static void native_case(int idx) {
    char *out = run_writer(CG_BYTE_WRITER);
    check_case(out, idx, "native");
    free(out);
}

Test(codegen_bytes, byte_cases) { native_case(CASE_BYTE_CASES); }
Test(codegen_bytes, p3_cases) { native_case(CASE_P3); }
Test(codegen_bytes, pf_trace) { native_case(CASE_PF_TRACE); }
Test(codegen_bytes, nopkg) { native_case(CASE_NOPKG); }

/* ---- 32-bit ------------------------------------------------------------- */

/*
 * byte_writer.c, the generated code and the runtime built with gcc -m32
 * (strict flags, -O2) write the same bytes: every case in one test, so the
 * 32-bit build (about 3 s) runs once; each failure names its case.
 */
Test(codegen_bytes_m32, all_cases, .timeout = 120) {
    int st = -1;
    char *out = cg_run(&st,
                       "cd '%s' && echo 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }' > m32.c && "
                       "gcc -m32 m32.c -o m32 2>&1 && ./m32 2>&1",
                       cg_tmp);
    free(out);
    if (st != 0) cg_skip_test("gcc -m32 cannot build and run a program here (apt-get install gcc-multilib)");

#define GEN CG_GEN_DIR
#define SCHEMA CG_SCHEMA_DIR
    out = cg_run(&st,
                 "gcc -m32 -std=c11 -pedantic -Wall -Wextra -Werror -O2 -I" GEN " -I" SCHEMA
                 " -I" TRACEC_SOURCE_DIR "/runtime/core/include -I" TRACEC_CONFIG_DIR " " CASE_DIR "/byte_writer.c " GEN "/stress/*.tracec.c " GEN
                 "/stress/dir/*.tracec.c " SCHEMA "/perfetto/trace/*.tracec.c " SCHEMA
                 "/perfetto/trace/*/*.tracec.c " SCHEMA "/perfetto/common/*.tracec.c " SCHEMA
                 "/google/protobuf/descriptor.tracec.c " TRACEC_SOURCE_DIR
                 "/runtime/core/src/writer.c " TRACEC_SOURCE_DIR "/runtime/core/src/registry.c " TRACEC_SOURCE_DIR
                 "/runtime/core/src/status.c -lm -o '%s/byte_writer32' 2>&1",
                 cg_tmp);
#undef GEN
#undef SCHEMA
    cr_assert_eq(st, 0, "32-bit (gcc -m32) build of the byte writer failed:\n%s", out);
    cr_expect_str_eq(out, "", "32-bit (gcc -m32) build printed diagnostics:\n%s", out);
    free(out);

    char *writer = cg_fmt("%s/byte_writer32", cg_tmp);
    char *dir = run_writer(writer);
    for (int i = 0; i < CASE_COUNT; i++) check_case(dir, i, "32-bit (gcc -m32)");
    free(dir);
    free(writer);
}
