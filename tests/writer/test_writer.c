/*
 * test_writer.c - the writer core and the trace file writer: bounds, the
 * sticky first error, nesting checks, packets dropped whole, growth.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

Test(writer, nested_length_is_four_byte_redundant_varint) {
    uint8_t buf[64];
    tracec_writer w;
    tracec_msg root, child;
    tracec_writer_init_array(&w, buf, sizeof buf);
    tracec_writer_begin_root(&w, &root);
    tracec_msg_begin_nested(&root, TRACEC_TAG(3, TRACEC_WIRE_LEN), &child);
    tracec_msg_put_varint(&child, TRACEC_TAG(1, TRACEC_WIRE_VARINT), 150);
    tracec_msg_end_nested(&root, &child);
    cr_assert_eq(tracec_writer_end_root(&w, &root), TRACEC_STATUS_SUCCESS);
    static const uint8_t want[] = {0x1a, 0x83, 0x80, 0x80, 0x00, 0x08, 0x96, 0x01};
    cr_assert_eq(tracec_writer_size(&w), sizeof want);
    cr_assert_arr_eq(buf, want, sizeof want);
}

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
    uint8_t buf[64];
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
    /* Two packets of 0x0A, 4-byte length, 0x40 varint. */
    static const uint8_t want[] = {0x0a, 0x82, 0x80, 0x80, 0x00, 0x40, 0x01,
                                   0x0a, 0x82, 0x80, 0x80, 0x00, 0x40, 0x03};
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
        expected += 1 + 4 + 1 + tracec_varint_size(i) + 2 + tracec_varint_size(pad) + pad;
    }
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    FILE *in = fopen(path, "rb");
    cr_assert_not_null(in);
    fseek(in, 0, SEEK_END);
    long got = ftell(in);
    /* Walk the records: each is 0x0A, a 4-byte length, and a packet whose timestamp is its index. */
    fseek(in, 0, SEEK_SET);
    uint8_t *all = malloc((size_t)got);
    cr_assert_eq(fread(all, 1, (size_t)got, in), (size_t)got);
    fclose(in);
    unlink(path);
    cr_assert_eq((size_t)got, expected);
    size_t off = 0;
    for (uint64_t i = 0; i < 200; i++) {
        cr_assert_eq(all[off], 0x0a);
        uint32_t len = (uint32_t)(all[off + 1] & 0x7f) | (uint32_t)(all[off + 2] & 0x7f) << 7 |
                       (uint32_t)(all[off + 3] & 0x7f) << 14 | (uint32_t)all[off + 4] << 21;
        cr_assert_eq(all[off + 5], 0x40);
        uint64_t ts = 0;
        int shift = 0;
        size_t p = off + 6;
        do {
            ts |= (uint64_t)(all[p] & 0x7f) << shift;
            shift += 7;
        } while (all[p++] & 0x80);
        cr_assert_eq(ts, i, "packet %llu out of order", (unsigned long long)i);
        off += 5 + len;
    }
    cr_assert_eq(off, (size_t)got);
    free(all);
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
