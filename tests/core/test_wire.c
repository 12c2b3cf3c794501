/*
 * test_wire.c - tracec/wire.h: the field reader reads back what the writers
 * write (every wire type, groups nested in groups), and every malformed input
 * is an error at the right offset, never a read past the end.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tracec/wire.h"
#include "tracec/writer.h"

Test(wire, varint_sizes_and_reads) {
    const uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t buf[16];
        uint8_t *e = tracec_put_varint64(buf, vals[i]);
        cr_assert_eq((size_t)(e - buf), tracec_varint_size(vals[i]));
        const uint8_t *p = buf;
        uint64_t v = 0;
        cr_assert_eq(tracec_wire_read_varint(&p, e, &v), TRACEC_VARINT_OK);
        cr_assert_eq(v, vals[i]);
        cr_assert_eq(p, e);
        /* Every shorter input is truncated and leaves the cursor alone. */
        for (const uint8_t *cut = buf; cut < e; cut++) {
            p = buf;
            cr_assert_eq(tracec_wire_read_varint(&p, cut, &v), TRACEC_VARINT_TRUNCATED);
            cr_assert_eq(p, buf);
        }
    }
    uint8_t eleven[11];
    memset(eleven, 0x80, sizeof eleven);
    const uint8_t *p = eleven;
    uint64_t v;
    cr_assert_eq(tracec_wire_read_varint(&p, eleven + 11, &v), TRACEC_VARINT_TOO_LONG);
}

Test(wire, reads_every_wire_type) {
    /* 1: varint 300; 2: fixed64; 3: "abc"; 4: group { 5: 7, 6: group { 8: "x" } }; 9: fixed32 */
    static const uint8_t msg[] = {0x08, 0xac, 0x02, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1a, 3, 'a', 'b', 'c',
                                  0x23, 0x28, 0x07, 0x33, 0x42, 0x01, 'x', 0x34, 0x24, 0x4d, 9, 0, 0, 0};
    tracec_wire_reader r;
    tracec_wire_field f;
    tracec_wire_reader_init(&r, msg, sizeof msg);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    cr_assert(f.number == 1 && f.type == TRACEC_WIRE_VARINT && f.value == 300);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    cr_assert(f.number == 2 && f.type == TRACEC_WIRE_FIXED64 && f.value == 0x0807060504030201ull);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    cr_assert(f.number == 3 && f.type == TRACEC_WIRE_LEN && f.size == 3 && memcmp(f.data, "abc", 3) == 0);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    cr_assert(f.number == 4 && f.type == TRACEC_WIRE_SGROUP);
    cr_assert_eq(f.data, msg + 18);
    cr_assert_eq(f.size, 7u); /* 28 07 33 42 01 78 34, then the end tag 24 */
    /* The group's body reads on its own, its inner group too. */
    tracec_wire_reader g;
    tracec_wire_field gf;
    tracec_wire_reader_init(&g, f.data, f.size);
    cr_assert_eq(tracec_wire_next(&g, &gf), 1);
    cr_assert(gf.number == 5 && gf.value == 7);
    cr_assert_eq(tracec_wire_next(&g, &gf), 1);
    cr_assert(gf.number == 6 && gf.type == TRACEC_WIRE_SGROUP && gf.size == 3);
    cr_assert_eq(tracec_wire_next(&g, &gf), 0);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    cr_assert(f.number == 9 && f.type == TRACEC_WIRE_FIXED32 && f.value == 9);
    cr_assert_eq(f.end, msg + sizeof msg);
    cr_assert_eq(tracec_wire_next(&r, &f), 0);
}

/* Each malformed input fails with `tracec decode`'s message at the offending byte. */
Test(wire, malformed_inputs_fail_where_they_are) {
    static const struct {
        uint8_t bytes[12];
        size_t len;
        size_t at;
        const char *what;
    } cases[] = {
        /* bytes, length, offset of the offending byte, the message */
        {{0x08, 0x01, 0x08}, 3, 3, "truncated varint"},
        {{0x08, 0x01, 0x80}, 3, 2, "truncated tag"},
        {{0x00, 0x01}, 2, 0, "invalid field number 0"},
        {{0x0e, 0x01}, 2, 0, "invalid wire type"},
        {{0x0f}, 1, 0, "invalid wire type"},
        {{0x12, 0x05, 'a'}, 3, 1, "length runs past the end of the enclosing message"},
        {{0x11, 1, 2, 3}, 4, 1, "truncated fixed64 value"},
        {{0x0d, 1, 2, 3}, 4, 1, "truncated fixed32 value"},
        {{0x0b, 0x08, 0x01}, 3, 3, "group not terminated by its end-group tag"},
        {{0x0b, 0x08, 0x01, 0x80}, 4, 3, "group not terminated by its end-group tag"},
        {{0x0b, 0x14}, 2, 1, "end-group tag does not match its start-group tag"},
        {{0x08, 0x01, 0x0b, 0x13, 0x0c}, 5, 4, "end-group tag does not match its start-group tag"},
        {{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 11, 1, "varint longer than 10 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Heap copies of exactly `len` bytes: ASan catches any read past the end. */
        uint8_t *b = malloc(cases[i].len);
        memcpy(b, cases[i].bytes, cases[i].len);
        tracec_wire_reader r;
        tracec_wire_field f;
        tracec_wire_reader_init(&r, b, cases[i].len);
        int rc;
        while ((rc = tracec_wire_next(&r, &f)) > 0) {
        }
        cr_assert_eq(rc, -1, "case %zu: accepted", i);
        cr_assert_not_null(r.error);
        cr_assert_eq((size_t)(r.error_at - b), cases[i].at, "case %zu: error at %td (%s)", i, r.error_at - b, r.error);
        cr_assert_str_eq(r.error, cases[i].what, "case %zu", i);
        /* Sticky: the reader stays at the bad field. */
        cr_assert_eq(tracec_wire_next(&r, &f), -1);
        free(b);
    }
}

Test(wire, deep_groups_stop_at_the_limit) {
    size_t n = TRACEC_WIRE_MAX_GROUP_DEPTH + 1;
    uint8_t *b = calloc(2 * n, 1); /* zeroed, so gcc sees no read of unset bytes */
    for (size_t i = 0; i < n; i++) b[i] = 0x0b, b[2 * n - 1 - i] = 0x0c;
    tracec_wire_reader r;
    tracec_wire_field f;
    tracec_wire_reader_init(&r, b, 2 * n);
    cr_assert_eq(tracec_wire_next(&r, &f), -1);
    cr_assert_str_eq(r.error, "groups nested deeper than the limit");
    tracec_wire_reader_init(&r, b + 1, 2 * n - 2);
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    /* A reader may allow more (the decoder's --max-depth). */
    tracec_wire_reader_init(&r, b, 2 * n);
    r.max_group_depth = (int)n;
    cr_assert_eq(tracec_wire_next(&r, &f), 1);
    free(b);
}

/* Wire types by descriptor type, as the protobuf encoding guide lists them. */
Test(wire, wire_type_of_each_descriptor_type) {
    static const int expected[19] = {
        [1] = TRACEC_WIRE_FIXED64, [2] = TRACEC_WIRE_FIXED32, [3] = TRACEC_WIRE_VARINT, [4] = TRACEC_WIRE_VARINT,
        [5] = TRACEC_WIRE_VARINT,  [6] = TRACEC_WIRE_FIXED64, [7] = TRACEC_WIRE_FIXED32, [8] = TRACEC_WIRE_VARINT,
        [9] = TRACEC_WIRE_LEN,     [10] = TRACEC_WIRE_SGROUP, [11] = TRACEC_WIRE_LEN,    [12] = TRACEC_WIRE_LEN,
        [13] = TRACEC_WIRE_VARINT, [14] = TRACEC_WIRE_VARINT, [15] = TRACEC_WIRE_FIXED32, [16] = TRACEC_WIRE_FIXED64,
        [17] = TRACEC_WIRE_VARINT, [18] = TRACEC_WIRE_VARINT,
    };
    for (int t = 1; t <= 18; t++) cr_assert_eq(tracec_wire_type_of(t), expected[t], "descriptor type %d", t);
}
