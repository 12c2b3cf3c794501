/*
 * test_writer.c - the writer core and the trace file writer: bounds, the
 * sticky first error, nesting checks, packets dropped whole, growth.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "tracec/trace_file.h"
#include "tracec/writer.h"

Test(writer, array_full_fails_without_overflow) {
    uint8_t buf[16 + 8];
    memset(buf, 0xAA, sizeof buf);
    tracec_writer w;
    tracec_msg root;
    tracec_writer_init_array(&w, buf, 16);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_put_varint(&root, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 1); /* 2 bytes */
    tracec_msg_put_bytes(&root, TRACEC_TAG(2, TRACEC_WIRE_LEN), "0123456789abcdef", 16);
    cr_assert_eq(w.status, TRACEC_STATUS_BUFFER_FULL);
    /* Later writes do nothing; the first error stays. */
    tracec_msg_put_varint(&root, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 1);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_BUFFER_FULL);
    cr_assert_eq(tracec_writer_size(&w), 2u);
    for (size_t i = 16; i < sizeof buf; i++) cr_assert_eq(buf[i], 0xAA, "byte %zu past the end written", i);
}

/* An array writer over NULL (any size) or over an empty array fails with BUFFER_FULL at the first setter. */
Test(writer, null_or_empty_array_is_buffer_full) {
    uint8_t one[1];
    struct {
        void *mem;
        size_t size;
    } cases[] = {{NULL, 0}, {NULL, 64}, {one, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tracec_writer w;
        tracec_msg root, child;
        tracec_writer_init_array(&w, cases[i].mem, cases[i].size);
        tracec_writer_begin_root(&w, &root);
        tracec_msg_put_varint(&root, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 1);
        cr_expect_eq(w.status, TRACEC_STATUS_BUFFER_FULL, "case %zu: status %d", i, (int)w.status);
        tracec_msg_put_fixed64(&root, TRACEC_TAG(2, TRACEC_WIRE_FIXED64), 2);
        tracec_msg_put_cstr(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), "x");
        tracec_msg_begin_nested(&root, TRACEC_TAG(4, TRACEC_WIRE_LEN), &child);
        tracec_msg_end_nested(&root, &child);
        cr_expect_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_BUFFER_FULL, "case %zu", i);
        cr_expect_eq(tracec_writer_size(&w), 0u, "case %zu", i);
    }
}

#ifdef TRACEC_FIXED_NESTED_LENGTHS
/* The bytes of a nested message's length field: always 4 (redundant varint). */
static size_t len_bytes(size_t len) {
    (void)len;
    return 4;
}
static const uint8_t k_nested_want[] = {0x1a, 0x83, 0x80, 0x80, 0x00, 0x08, 0x96, 0x01};
#else
/* The bytes of a nested message's length field: the minimal varint. */
static size_t len_bytes(size_t len) { return tracec_varint_size(len); }
static const uint8_t k_nested_want[] = {0x1a, 0x03, 0x08, 0x96, 0x01};
#endif

/* Field 3 { field 1 = 150 }: a minimal 1-byte length, or 4 redundant bytes. */
Test(writer, nested_length_field) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg root, child;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), &child);
    tracec_msg_put_varint(&child, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 150);
    tracec_msg_end_nested(&root, &child);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_writer_size(&w), sizeof k_nested_want);
    cr_assert_arr_eq(buf, k_nested_want, sizeof k_nested_want);
}

#ifndef TRACEC_FIXED_NESTED_LENGTHS
/* Writes field 3 { field 2: bytes of n 'x' } followed by field 4 = 1 into `w`. */
static void write_padded_child(tracec_writer *w, size_t n) {
    tracec_msg root, child;
    static char xs[20000];
    memset(xs, 'x', sizeof xs);
    tracec_writer_begin_root(w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), &child);
    tracec_msg_put_bytes(&child, TRACEC_TAG(2, TRACEC_WIRE_LEN), xs, n);
    tracec_msg_end_nested(&root, &child);
    tracec_msg_put_varint(&root, TRACEC_TAG(4, TRACEC_WIRE_VARINT), 1);
}

/* Bodies of 126..129 and 16382..16385 bytes: the length widens to 2 and 3
   bytes, the body moves forward intact, and later fields follow it. */
Test(writer, long_bodies_get_minimal_lengths) {
    static const size_t bodies[] = {126, 127, 128, 129, 16382, 16383, 16384, 16385};
    static uint8_t buf[17000];
    for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
        size_t body = bodies[k];
        size_t n = body - 1 - tracec_varint_size(body - 3); /* tag 0x12, its length, n bytes */
        if (1 + tracec_varint_size(n) + n != body) n--;
        cr_assert_eq(1 + tracec_varint_size(n) + n, body);
        tracec_writer w;
        tracec_writer_init_array(&w, buf, sizeof buf);
        write_padded_child(&w, n);
        cr_assert_eq(w.status, TRACEC_STATUS_SUCCESS);
        size_t lb = tracec_varint_size(body);
        cr_assert_eq(tracec_writer_size(&w), 1 + lb + body + 2, "body %zu", body);
        cr_assert_eq(buf[0], 0x1a);
        uint64_t got = 0;
        for (size_t i = 0; i < lb; i++) got |= (uint64_t)(buf[1 + i] & 0x7f) << (7 * i);
        cr_assert_eq(got, body);
        cr_assert_eq(buf[lb], got >> (7 * (lb - 1)), "minimal: the last length byte has no continuation");
        cr_assert_eq(buf[1 + lb], 0x12);
        for (size_t i = 1 + lb + 1 + tracec_varint_size(n); i < 1 + lb + body; i++)
            cr_assert_eq(buf[i], 'x', "body %zu: byte %zu", body, i);
        cr_assert_eq(buf[1 + lb + body], 0x20);
        cr_assert_eq(buf[1 + lb + body + 1], 0x01);
    }
}

/* A body that needs a longer length than the one byte reserved, in an array
   with no room for it: BUFFER_FULL, nothing written past the end.  Where the
   4-byte form's setters have room, the compact form has too. */
Test(writer, widening_without_room_fails_cleanly) {
    uint8_t buf[160];
    uint8_t xs[127];
    memset(xs, 'x', sizeof xs);
    memset(buf, 0xAA, sizeof buf);
    tracec_writer w;
    tracec_msg root, child;
    tracec_writer_init_array(&w, buf, 1 + 1 + 129); /* tag, 1-byte length, body: no room for a 2nd length byte */
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), &child);
    /* The body through the unchecked layer, to fill the window exactly: field 2, 127 bytes. */
    cr_assert(tracec_writer_reserve(&w, 129));
    w.ptr = tracec_put_varint32(tracec_put_tag(w.ptr, TRACEC_TAG(2, TRACEC_WIRE_LEN)), 127);
    memcpy(w.ptr, xs, 127);
    w.ptr += 127;
    cr_assert_eq(w.ptr, w.end);
    tracec_msg_end_nested(&root, &child);
    cr_assert_eq(w.status, TRACEC_STATUS_BUFFER_FULL);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_BUFFER_FULL);
    for (size_t i = 131; i < sizeof buf; i++) cr_assert_eq(buf[i], 0xAA, "byte %zu past the end written", i);
    /* Exactly the room the 4-byte form's setters need: tag, 4, and put_bytes' worst case. */
    tracec_writer_init_array(&w, buf, 1 + 4 + TRACEC_MAX_TAG_SIZE + 5 + 127);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), &child);
    tracec_msg_put_bytes(&child, TRACEC_TAG(2, TRACEC_WIRE_LEN), xs, sizeof xs);
    tracec_msg_end_nested(&root, &child);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_writer_size(&w), 1 + 2 + 129);
}

/* Depth 32, every level over 128 bytes: each end widens its length, in a
   trace file whose staging buffer grows (the record moves) while the
   innermost body is written. */
Test(trace_file, deep_long_nesting_through_grow) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    enum { kDepth = 32, kPad = 100000 };
    char *xs = malloc(kPad);
    memset(xs, 'y', kPad);
    tracec_writer w;
    tracec_msg m[kDepth + 1];
    tracec_trace_file_begin_packet(f, &w, &m[0]);
    for (int d = 1; d <= kDepth; d++) {
        tracec_msg_begin_nested(&m[d - 1], TRACEC_TAG(3, TRACEC_WIRE_LEN), &m[d]);
        tracec_msg_put_bytes(&m[d], TRACEC_TAG(2, TRACEC_WIRE_LEN), xs, 100);
    }
    tracec_msg_put_bytes(&m[kDepth], TRACEC_TAG(2, TRACEC_WIRE_LEN), xs, kPad); /* outgrows 64 KiB */
    for (int d = kDepth; d >= 1; d--) {
        tracec_msg_end_nested(&m[d - 1], &m[d]);
        tracec_msg_put_varint(&m[d - 1], TRACEC_TAG(4, TRACEC_WIRE_VARINT), (uint64_t)d);
    }
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &m[0]), TRACEC_STATUS_SUCCESS);
    /* The expected bytes, built from the inside out with minimal lengths. */
    size_t body = 1 + 1 + 100 + 1 + tracec_varint_size(kPad) + kPad; /* innermost */
    size_t bodies[kDepth + 1];
    bodies[kDepth] = body;
    for (int d = kDepth - 1; d >= 0; d--)
        bodies[d] = (d ? 1 + 1 + 100 : 0) + 1 + tracec_varint_size(bodies[d + 1]) + bodies[d + 1] + 2;
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    cr_assert_eq(size, 1 + tracec_varint_size(bodies[0]) + bodies[0]);
    size_t off = 0;
    for (int d = 0; d < kDepth; d++) {
        size_t start = off;
        cr_assert_eq(data[off++], d == 0 ? 0x0a : 0x1a, "depth %d", d);
        uint64_t len = 0;
        int shift = 0;
        do len |= (uint64_t)(data[off] & 0x7f) << shift, shift += 7;
        while (data[off++] & 0x80);
        cr_assert_eq(len, bodies[d], "depth %d", d);
        cr_assert_eq(off - start - 1, tracec_varint_size(len), "depth %d: minimal length", d);
        cr_assert_eq(data[off + len - 2], 0x20, "depth %d: the field after the child", d);
        if (d > 0) off += 1 + 1 + 100; /* the 100-byte pad */
    }
    free(xs);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
}
#endif

Test(writer, ending_out_of_order_is_a_nesting_error) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg root, a, b;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), &a);
    tracec_msg_begin_nested(&a, TRACEC_TAG(1, TRACEC_WIRE_LEN), &b);
    tracec_msg_end_nested(&root, &a); /* b is still open */
    cr_assert_eq(w.status, TRACEC_STATUS_NESTING_MISMATCH);
}

Test(writer, unended_child_is_reported_at_end_of_root) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg root, a;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), &a);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_NESTING_MISMATCH);
}

Test(writer, oversized_bytes_field_is_message_too_large) {
    uint8_t buf[64] = {0};
    tracec_writer w;
    tracec_msg root;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    /* The length is checked before any byte is read or written. */
    tracec_msg_put_bytes(&root, TRACEC_TAG(1, TRACEC_WIRE_LEN), buf, (size_t)TRACEC_MAX_NESTED_SIZE + 1);
    cr_assert_eq(w.status, TRACEC_STATUS_MESSAGE_TOO_LARGE);
}

Test(writer, status_strings) {
    cr_assert_str_eq(tracec_status_str(TRACEC_STATUS_SUCCESS), "TRACEC_STATUS_SUCCESS");
    cr_assert_str_eq(tracec_status_str(TRACEC_STATUS_NESTING_MISMATCH), "TRACEC_STATUS_NESTING_MISMATCH");
    cr_assert_str_eq(tracec_status_str((tracec_status_t)9999), "TRACEC_STATUS_UNKNOWN");
    for (int s = 0; s < TRACEC_STATUS_LAST; s++)
        cr_assert_str_neq(tracec_status_str((tracec_status_t)s), "TRACEC_STATUS_UNKNOWN", "status %d", s);
}

static void write_packet(tracec_trace_file *f, uint64_t value, size_t pad) {
    tracec_writer w;
    tracec_msg pkt;
    tracec_trace_file_begin_packet(f, &w, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), value);
    if (pad) {
        char *junk = malloc(pad);
        memset(junk, 'p', pad);
        tracec_msg_put_bytes(&pkt, TRACEC_TAG(36, TRACEC_WIRE_LEN), junk, pad);
        free(junk);
    }
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt), TRACEC_STATUS_SUCCESS);
}

Test(trace_file, failed_packet_is_dropped_and_earlier_ones_kept) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    write_packet(f, 1, 0);
    tracec_writer w;
    tracec_msg pkt, child;
    tracec_trace_file_begin_packet(f, &w, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 2);
    tracec_msg_begin_nested(&pkt, TRACEC_TAG(11, TRACEC_WIRE_LEN), &child); /* never ended */
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt), TRACEC_STATUS_NESTING_MISMATCH);
    write_packet(f, 3, 0);
    size_t size;
    const uint8_t *data = tracec_trace_file_data(f, &size);
    /* Two packets of 0x0A, the length, 0x40 varint. */
#ifdef TRACEC_FIXED_NESTED_LENGTHS
    static const uint8_t want[] = {0x0a, 0x82, 0x80, 0x80, 0x00, 0x40, 0x01,
                                   0x0a, 0x82, 0x80, 0x80, 0x00, 0x40, 0x03};
#else
    static const uint8_t want[] = {0x0a, 0x02, 0x40, 0x01, 0x0a, 0x02, 0x40, 0x03};
#endif
    cr_assert_eq(size, sizeof want);
    cr_assert_arr_eq(data, want, sizeof want);
    cr_assert_eq(tracec_trace_file_packets(f), 2u);
    cr_assert_eq(tracec_trace_file_dropped(f), 1u);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
}

Test(trace_file, file_grows_and_drains_across_large_packets) {
    char path[] = "/tmp/tracec_writer_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open(path, &f), TRACEC_STATUS_SUCCESS);
    size_t expected = 0;
    for (uint64_t i = 0; i < 200; i++) {
        size_t pad = (i % 7 == 0) ? 300000 : 1000; /* some packets larger than the staging buffer */
        write_packet(f, i, pad);
        size_t body = 1 + tracec_varint_size(i) + 2 + tracec_varint_size(pad) + pad;
        expected += 1 + len_bytes(body) + body;
    }
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    tt_buf file = {0};
    cr_assert(tt_read_file(path, &file), "%s", path);
    unlink(path);
    cr_assert_eq(file.size, expected);
    /* Walk the records: each is 0x0A, a length, and a packet whose timestamp is its index. */
    const uint8_t *all = (const uint8_t *)file.data;
    size_t off = 0;
    for (uint64_t i = 0; i < 200; i++) {
        cr_assert_eq(all[off], 0x0a);
        uint32_t len = 0;
        size_t h = 1; /* bytes of 0x0A and the length */
        int sh = 0;
        do len |= (uint32_t)(all[off + h] & 0x7f) << sh, sh += 7;
        while (all[off + h++] & 0x80);
        cr_assert_eq(h - 1, len_bytes(len));
        cr_assert_eq(all[off + h], 0x40);
        uint64_t ts = 0;
        int shift = 0;
        size_t p = off + h + 1;
        do {
            ts |= (uint64_t)(all[p] & 0x7f) << shift;
            shift += 7;
        } while (all[p++] & 0x80);
        cr_assert_eq(ts, i, "packet %llu out of order", (unsigned long long)i);
        off += h + len;
    }
    cr_assert_eq(off, file.size);
    tt_buf_free(&file);
}

/*
 * One writer per trace file: a second open of a file a writer has open (in
 * this process or another: an flock) is refused with IO_ERROR and errno
 * EBUSY, and the first one's bytes are not truncated; once the first is
 * closed the path opens again.  Two writers of /dev/null are fine.
 */
Test(trace_file, a_file_another_writer_has_open_is_refused_and_kept) {
    char path[] = "/tmp/tracec_writer_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    tracec_trace_file *f, *g = NULL;
    cr_assert_eq(tracec_trace_file_open(path, &f), TRACEC_STATUS_SUCCESS);
    for (uint64_t i = 0; i < 3; i++) write_packet(f, i, 10);
    cr_assert_eq(tracec_trace_file_flush(f), TRACEC_STATUS_SUCCESS);
    errno = 0;
    cr_assert_eq(tracec_trace_file_open(path, &g), TRACEC_STATUS_IO_ERROR, "a second writer");
    cr_assert_eq(errno, EBUSY);
    write_packet(f, 3, 10);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    tt_buf file = {0};
    cr_assert(tt_read_file(path, &file), "%s", path);
    tracec_trace_file *m;
    const uint8_t *want;
    size_t want_size;
    cr_assert_eq(tracec_trace_file_open_memory(&m), TRACEC_STATUS_SUCCESS);
    for (uint64_t i = 0; i < 4; i++) write_packet(m, i, 10);
    cr_assert_not_null(want = tracec_trace_file_data(m, &want_size));
    cr_assert_eq(file.size, want_size, "the first writer's 4 packets, whole");
    cr_assert_arr_eq(file.data, want, want_size);
    cr_assert_eq(tracec_trace_file_close(m), TRACEC_STATUS_SUCCESS);
    tt_buf_free(&file);
    cr_assert_eq(tracec_trace_file_open(path, &g), TRACEC_STATUS_SUCCESS, "free again once it is closed");
    cr_assert_eq(tracec_trace_file_close(g), TRACEC_STATUS_SUCCESS);
    cr_assert(tt_read_file(path, &file));
    cr_assert_eq(file.size, 0u, "truncated by the new writer");
    tt_buf_free(&file);
    unlink(path);
    cr_assert_eq(tracec_trace_file_open("/dev/null", &f), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_open("/dev/null", &g), TRACEC_STATUS_SUCCESS, "not a regular file: no lock");
    cr_assert_eq(tracec_trace_file_close(g), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
}

Test(trace_file, bad_calls) {
    tracec_trace_file *f = NULL;
    cr_assert_eq(tracec_trace_file_open(NULL, &f), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_open("/nonexistent-dir/x.pftrace", &f), TRACEC_STATUS_IO_ERROR);
    cr_assert_eq(tracec_trace_file_open_memory(NULL), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    tracec_writer w;
    tracec_msg pkt;
    memset(&w, 0, sizeof w);
    memset(&pkt, 0, sizeof pkt);
    pkt.w = &w;
    /* Ending a packet that was never begun. */
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt), TRACEC_STATUS_BAD_STATE);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_close(NULL), TRACEC_STATUS_SUCCESS);
}

/* Ending a child that was never begun (a zeroed tracec_msg, as a generated
   `end_x(&ev, &child)` with a `= {0}` child) is a sticky nesting error found
   through the parent, never a dereference of the child's NULL writer. */
Test(writer, ending_a_never_begun_child_is_a_nesting_error) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg root, never;
    memset(&never, 0, sizeof never);
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_put_varint(&root, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 1);
    tracec_msg_end_nested(&root, &never);
    cr_assert_eq(w.status, TRACEC_STATUS_NESTING_MISMATCH);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_NESTING_MISMATCH);
    /* Groups too. */
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_end_group(&root, 3, &never);
    cr_assert_eq(w.status, TRACEC_STATUS_NESTING_MISMATCH);
}

/* Ending a different open child than the innermost one, or a child begun on
   another writer, is caught too. */
Test(writer, ending_another_writers_child_is_a_nesting_error) {
    uint8_t b1[64], b2[64];
    tracec_writer w1, w2;
    tracec_msg r1, r2, c1, c2, g;
    tracec_writer_init_array(&w1, b1, sizeof b1);
    tracec_writer_init_array(&w2, b2, sizeof b2);
    tracec_writer_begin_root(&w1, &r1);
    tracec_writer_begin_root(&w2, &r2);
    tracec_msg_begin_nested(&r1, TRACEC_TAG(1, TRACEC_WIRE_LEN), &c1);
    tracec_msg_begin_nested(&r2, TRACEC_TAG(1, TRACEC_WIRE_LEN), &c2);
    tracec_msg_end_nested(&r1, &c2); /* c2 lives on w2 */
    cr_assert_eq(w1.status, TRACEC_STATUS_NESTING_MISMATCH);
    cr_assert_eq(w2.status, TRACEC_STATUS_SUCCESS, "the other writer is untouched");
    tracec_msg_end_nested(&r2, &c2);
    cr_assert_eq(tracec_writer_end_root(&w2, &r2), TRACEC_STATUS_SUCCESS);
    /* A group ended as a nested message, and a nested one ended as a group. */
    tracec_writer_init_array(&w1, b1, sizeof b1);
    tracec_writer_begin_root(&w1, &r1);
    tracec_msg_begin_group(&r1, 2, &g);
    tracec_msg_end_nested(&r1, &g);
    cr_assert_eq(w1.status, TRACEC_STATUS_NESTING_MISMATCH);
    tracec_writer_init_array(&w1, b1, sizeof b1);
    tracec_writer_begin_root(&w1, &r1);
    tracec_msg_begin_nested(&r1, TRACEC_TAG(1, TRACEC_WIRE_LEN), &c1);
    tracec_msg_end_group(&r1, 1, &c1);
    cr_assert_eq(w1.status, TRACEC_STATUS_NESTING_MISMATCH);
}

/* Every Trace.packet appended raw counts in tracec_trace_file_packets() (it read 0 before). */
Test(trace_file, append_raw_counts_its_packets) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    /* Two records as a buffer delivers them: 0x0A, a 4-byte padded length, the packet
       (field 8 = 1); a plain 1-byte length; and a Trace field other than packet (2). */
    static const uint8_t recs[] = {0x0A, 0x82, 0x80, 0x80, 0x00, 0x40, 0x01,
                                   0x0A, 0x02, 0x40, 0x02,
                                   0x10, 0x05};
    for (int i = 0; i < 100000; i++)
        cr_assert_eq(tracec_trace_file_append_raw(f, recs, sizeof recs), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_packets(f), 200000u);
    size_t size = 0;
    cr_assert_not_null(tracec_trace_file_data(f, &size));
    cr_assert_eq(size, 100000u * sizeof recs);
    /* Not whole fields: refused, nothing appended, not counted. */
    static const uint8_t truncated[] = {0x0A, 0x05, 0x40, 0x01};
    static const uint8_t long_varint[] = {0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    static const uint8_t group[] = {0x0B, 0x0C};
    static const uint8_t field0[] = {0x02, 0x00};
    cr_assert_eq(tracec_trace_file_append_raw(f, truncated, sizeof truncated), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_append_raw(f, long_varint, sizeof long_varint), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_append_raw(f, group, sizeof group), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_append_raw(f, field0, sizeof field0), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_append_raw(f, recs, 3), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_trace_file_append_raw(f, NULL, 0), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_packets(f), 200000u);
    cr_assert_not_null(tracec_trace_file_data(f, &size));
    cr_assert_eq(size, 100000u * sizeof recs);
    /* Packets written through the writer and appended raw are counted alike. */
    tracec_writer w;
    tracec_msg pkt;
    tracec_trace_file_begin_packet(f, &w, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 3);
    cr_assert_eq(tracec_trace_file_end_packet(f, &w, &pkt), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_packets(f), 200001u);
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
}

/* tracec_writer_begin_packet/end_packet: the framing every sink uses (Trace.packet = 1 around the packet). */
Test(writer, packet_framing_is_trace_field_1) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg packet, other;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_packet(&w, &packet);
    tracec_msg_put_varint(&packet, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 5); /* timestamp = 5 */
    cr_assert_eq(tracec_writer_end_packet(&w, &packet), TRACEC_STATUS_SUCCESS);
#ifdef TRACEC_FIXED_NESTED_LENGTHS
    static const uint8_t want[] = {0x0a, 0x82, 0x80, 0x80, 0x00, 0x40, 0x05};
#else
    static const uint8_t want[] = {0x0a, 0x02, 0x40, 0x05};
#endif
    cr_assert_eq(tracec_writer_size(&w), sizeof want);
    cr_assert_arr_eq(buf, want, sizeof want);
    /* A packet begun on another writer is refused, and the error sticks. */
    tracec_writer w2;
    uint8_t buf2[64];
    tracec_writer_init_array(&w2, buf2, sizeof buf2);
    tracec_writer_begin_packet(&w2, &other);
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_packet(&w, &packet);
    cr_assert_eq(tracec_writer_end_packet(&w, &other), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(w.status, TRACEC_STATUS_INVALID_ARGUMENT);
}
