/*
 * test_region_seq.c - the recorder's sequence ids (record_seq.h): each
 * (peer, local trusted_packet_sequence_id) gets a global id of its own, a
 * packet without one (or with 0) goes to the peer's default sequence, a peer
 * gets at most 4096 ids (past them its packets are refused and counted), and
 * the packet written carries exactly one field 10, the global id (checked
 * with protoc --decode).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_check.h"
#include "record_seq.h"
#include "region_util.h"
#include "test_util.h"
#include "tracec/trace_file.h"

/* The global id the map gives the packet `name` with local id `local` (has_seq: whether it carries one). */
static uint32_t rewrite(tracec_i_rec_seqmap *m, uint32_t *next, int has_seq, uint64_t local, uint8_t *out,
                        size_t *n) {
    uint8_t pk[128];
    size_t k = ru_packet(pk, 5, "x", has_seq, local);
    uint32_t g = 0;
    if (!tracec_i_rec_seq_rewrite(m, next, pk, k, out, 128 + TRACEC_I_REC_SEQ_EXTRA, n, &g)) return 0;
    return g;
}

/* `path` (a trace file) as protoc --decode shows it; the test fails when protoc does. */
static tt_buf decode_trace(const char *path) {
    char cmd[1024];
    tt_buf b = {0};
    snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I %s/protos perfetto/trace/trace.proto < %s",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, path);
    cr_assert_eq(tt_capture(cmd, &b), 0, "%s", b.data ? b.data : "");
    return b;
}

/* A trace file in a directory of its own, for the tests that decode what the recorder wrote. */
typedef struct trace_dir {
    char dir[32], path[64];
} trace_dir;

static tracec_trace_file *trace_dir_open(trace_dir *t) {
    tracec_trace_file *f;
    snprintf(t->dir, sizeof t->dir, "/tmp/tracec-seq-XXXXXX");
    cr_assert_not_null(mkdtemp(t->dir));
    snprintf(t->path, sizeof t->path, "%s/t.pftrace", t->dir);
    cr_assert_eq(tracec_trace_file_open(t->path, &f), TRACEC_STATUS_SUCCESS);
    return f;
}

/* Closes f and returns what protoc --decode shows of it; the directory goes. */
static tt_buf trace_dir_decode(trace_dir *t, tracec_trace_file *f) {
    char cmd[64];
    cr_assert_eq(tracec_trace_file_close(f), TRACEC_STATUS_SUCCESS);
    tt_buf b = decode_trace(t->path);
    snprintf(cmd, sizeof cmd, "rm -rf %s", t->dir);
    (void)system(cmd);
    return b;
}

/* Appends to w[n] what protoc --decode shows of ru_packet(ts, name) as the recorder writes it. */
static void want_packet(char *w, size_t n, long long uid, int ts, int seq, const char *name, bool dropped,
                        long long pid) {
    size_t used = strlen(w);
    snprintf(w + used, n - used,
             "packet {\n  trusted_uid: %lld\n  timestamp: %d\n  trusted_packet_sequence_id: %d\n  track_event {\n"
             "    type: TYPE_INSTANT\n    name: \"%s\"\n  }\n%s  trusted_pid: %lld\n}\n",
             uid, ts, seq, name, dropped ? "  previous_packet_dropped: true\n" : "", pid);
}

Test(record_seq, local_ids_map_to_global_ids_per_peer) {
    uint32_t next = 2;
    tracec_i_rec_seqmap a, b;
    tracec_i_rec_seqmap_init(&a, next++);
    tracec_i_rec_seqmap_init(&b, next++);
    uint8_t out[160];
    size_t n;
    cr_expect_eq(rewrite(&a, &next, 1, 1, out, &n), 4);
    cr_expect_eq(rewrite(&a, &next, 1, 2, out, &n), 5);
    cr_expect_eq(rewrite(&b, &next, 1, 1, out, &n), 6, "another peer's local id 1 is another sequence");
    cr_expect_eq(rewrite(&a, &next, 1, 1, out, &n), 4, "the same id again");
    cr_expect_eq(rewrite(&a, &next, 0, 0, out, &n), 2, "no id: the peer's default sequence");
    cr_expect_eq(rewrite(&b, &next, 0, 0, out, &n), 3);
    cr_expect_eq(rewrite(&a, &next, 1, 0, out, &n), 2, "id 0: the default sequence too");
    cr_expect_eq(a.count, 2);
    cr_expect_eq(a.refused + b.refused, 0);
    tracec_i_rec_seqmap_free(&a);
    tracec_i_rec_seqmap_free(&b);
}

Test(record_seq, huge_varints_are_ids_of_their_own) {
    uint32_t next = 10;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 9);
    uint8_t out[160];
    size_t n;
    uint32_t small = rewrite(&m, &next, 1, 5, out, &n);
    uint32_t wide = rewrite(&m, &next, 1, (UINT64_C(1) << 32) + 5, out, &n); /* a uint32 reader would see 5 */
    uint32_t max = rewrite(&m, &next, 1, UINT64_MAX, out, &n);               /* a 10-byte varint */
    cr_expect(small != 0 && wide != 0 && max != 0);
    cr_expect_neq(small, wide);
    cr_expect_neq(wide, max);
    cr_expect_eq(rewrite(&m, &next, 1, UINT64_MAX, out, &n), max);
    tracec_i_rec_seqmap_free(&m);
}

Test(record_seq, a_peer_gets_at_most_4096_ids) {
    uint32_t next = 2;
    tracec_i_rec_seqmap m, other;
    tracec_i_rec_seqmap_init(&m, next++);
    tracec_i_rec_seqmap_init(&other, next++);
    uint8_t out[160];
    size_t n;
    uint32_t first = 0;
    for (uint64_t i = 1; i <= 5000; i++) {
        uint32_t g = rewrite(&m, &next, 1, i * 7919u, out, &n);
        if (i == 1) first = g;
        if (i <= TRACEC_I_REC_SEQ_MAX)
            cr_assert_eq(g, 4 + i - 1, "id %llu", (unsigned long long)i);
        else
            cr_assert_eq(g, 0, "id %llu refused", (unsigned long long)i);
    }
    cr_expect_eq(m.count, TRACEC_I_REC_SEQ_MAX);
    cr_expect_eq(m.refused, 5000 - TRACEC_I_REC_SEQ_MAX);
    cr_expect_leq(m.cap, 2 * TRACEC_I_REC_SEQ_MAX, "the map stays bounded");
    cr_expect_eq(next, 4 + TRACEC_I_REC_SEQ_MAX, "refused ids take no global id");
    /* the ids it has keep working, its default sequence too; the other peer is not affected */
    cr_expect_eq(rewrite(&m, &next, 1, 7919u, out, &n), first);
    cr_expect_eq(rewrite(&m, &next, 0, 0, out, &n), 2);
    cr_expect_eq(rewrite(&other, &next, 1, 1, out, &n), 4 + TRACEC_I_REC_SEQ_MAX);
    tracec_i_rec_seqmap_free(&m);
    tracec_i_rec_seqmap_free(&other);
}

Test(record_seq, global_ids_run_out_at_uint32_max) {
    uint32_t next = UINT32_MAX - 1;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 2);
    uint8_t out[160];
    size_t n;
    cr_expect_eq(rewrite(&m, &next, 1, 1, out, &n), UINT32_MAX - 1);
    cr_expect_eq(rewrite(&m, &next, 1, 2, out, &n), 0);
    cr_expect_eq(m.refused, 1);
    cr_expect_eq(rewrite(&m, &next, 0, 0, out, &n), 2);
    tracec_i_rec_seqmap_free(&m);
}

/* The rewritten packet keeps every other field and holds one field 10, the global id, whatever the peer
   put there: several ids (the last wins, as for any reader), an id with another wire type. */
Test(record_seq, the_packet_written_holds_only_the_global_id) {
    char dir[] = "/tmp/tracec-seq-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    uint8_t pk[128], *p;
    size_t k = ru_packet(pk, 77, "evt", 1, 3);
    p = pk + k;
    *p++ = 0x50; /* field 10 again: 9 (the last one wins) */
    *p++ = 9;
    *p++ = 0x52; /* field 10 as LEN: not an id; dropped all the same */
    *p++ = 2;
    *p++ = 'h';
    *p++ = 'i';
    *p++ = 0x55; /* field 10 as FIXED32 */
    memset(p, 0xee, 4);
    p += 4;
    k = (size_t)(p - pk);
    const char *why;
    cr_assert(tracec_i_rec_packet_ok(pk, k, &why), "%s", why);
    uint32_t next = 40;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 39);
    uint8_t out[128 + TRACEC_I_REC_SEQ_EXTRA];
    size_t n = 0;
    uint32_t g = 0;
    cr_assert(tracec_i_rec_seq_rewrite(&m, &next, pk, k, out, sizeof out, &n, &g));
    cr_expect_eq(g, 40);
    cr_expect_eq(m.count, 1);
    cr_expect_eq(rewrite(&m, &next, 1, 9, out + 0, &n), 40, "the last id (9) was the one mapped");
    cr_assert(tracec_i_rec_seq_rewrite(&m, &next, pk, k, out, sizeof out, &n, &g));
    cr_expect(tracec_i_rec_packet_ok(out, n, &why));
    /* too little room: refused before anything is written, not counted as the peer's fault */
    cr_expect_not(tracec_i_rec_seq_rewrite(&m, &next, pk, k, out, k, &n, &g));
    /* the independent reader's view: the fields it had, and one trusted_packet_sequence_id */
    char path[64], cmd[512];
    snprintf(path, sizeof path, "%s/packet.bin", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(out, 1, n, f), n);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s --decode=perfetto.protos.TracePacket -I %s/protos perfetto/trace/trace_packet.proto < %s",
             TRACEC_PROTOC, TRACEC_SOURCE_DIR, path);
    tt_buf b = {0};
    cr_assert_eq(tt_capture(cmd, &b), 0, "%s", b.data ? b.data : "");
    cr_expect_str_eq(b.data, "timestamp: 77\n"
                             "trusted_packet_sequence_id: 40\n"
                             "track_event {\n"
                             "  type: TYPE_INSTANT\n"
                             "  name: \"evt\"\n"
                             "}\n");
    tt_buf_free(&b);
    tracec_i_rec_seqmap_free(&m);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

/* The packet as the recorder writes it into the trace: the global id, then trusted_pid, trusted_uid and the
   loss mark appended; a packet the map refuses writes nothing. */
Test(record_seq, write_packet_appends_the_trusted_fields) {
    trace_dir t;
    tracec_trace_file *f = trace_dir_open(&t);
    uint32_t next = 5;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 4);
    uint8_t pk[128];
    int mark = 1;
    size_t k = ru_packet(pk, 1, "first", 1, 77);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, 321, 1000, &mark), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(mark, 0, "the mark went on the first packet");
    k = ru_packet(pk, 2, "second", 0, 0);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, 321, 1000, &mark), TRACEC_STATUS_SUCCESS);
    /* a full map refuses, and writes nothing */
    for (uint32_t i = 1; m.count < TRACEC_I_REC_SEQ_MAX; i++) (void)tracec_i_rec_seqmap_get(&m, 1000 + i, &next);
    k = ru_packet(pk, 3, "refused", 1, 99);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, 321, 1000, &mark), TRACEC_STATUS_LIMIT_EXCEEDED);
    cr_expect_eq(m.refused, 1);
    cr_expect_eq(tracec_trace_file_packets(f), 2);
    tt_buf b = trace_dir_decode(&t, f);
    char want[1024] = "";
    want_packet(want, sizeof want, 1000, 1, 5, "first", true, 321);
    want_packet(want, sizeof want, 1000, 2, 4, "second", false, 321);
    cr_expect_str_eq(b.data, want);
    tt_buf_free(&b);
    tracec_i_rec_seqmap_free(&m);
}

/* The trusted fields are the pid and uid given with each packet, at their longest too (a negative int32 takes
   10 bytes), on both ways a packet is written (its id in place; no id of its own, so one is appended). */
Test(record_seq, trusted_fields_follow_the_pid_and_uid_given) {
    trace_dir t;
    tracec_trace_file *f = trace_dir_open(&t);
    uint32_t next = 5;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 4);
    uint8_t pk[128];
    int mark = 1;
    size_t k = ru_packet(pk, 1, "a", 1, 77);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, INT32_MIN, -1, &mark), TRACEC_STATUS_SUCCESS);
    k = ru_packet(pk, 2, "b", 1, 77);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, 321, 0, &mark), TRACEC_STATUS_SUCCESS);
    mark = 1;
    k = ru_packet(pk, 3, "c", 0, 0);
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, pk, k, -7, INT32_MAX, &mark), TRACEC_STATUS_SUCCESS);
    tt_buf b = trace_dir_decode(&t, f);
    char want[1024] = "";
    want_packet(want, sizeof want, -1, 1, 5, "a", true, INT32_MIN);
    want_packet(want, sizeof want, 0, 2, 5, "b", false, 321);
    want_packet(want, sizeof want, INT32_MAX, 3, 4, "c", true, -7);
    cr_expect_str_eq(b.data, want);
    tt_buf_free(&b);
    tracec_i_rec_seqmap_free(&m);
}

/* The one pass that checks and writes a packet: more field-10 fields than it locates on the way (six, of
   three wire types), and trusted_pid / trusted_uid forged by the peer.  The trace holds one field 10 (the
   global id of the last VARINT one) and the recorder's pid and uid, which win for any reader. */
Test(record_seq, save_packet_replaces_every_id_and_wins_over_forged_trusted_fields) {
    uint8_t pk[256], *p;
    size_t k = ru_packet(pk, 5, "forged", 1, 11);
    p = pk + k;
    for (int i = 0; i < 3; i++) {
        *p++ = 0x52; /* field 10 as LEN */
        *p++ = 1;
        *p++ = 'x';
        *p++ = 0x55; /* field 10 as FIXED32 */
        memset(p, 0xab, 4);
        p += 4;
    }
    *p++ = 0x50; /* field 10: 12, the last VARINT one */
    *p++ = 12;
    *p++ = 0xf8; /* trusted_pid (79) = 1, forged */
    *p++ = 0x04;
    *p++ = 1;
    *p++ = 0x18; /* trusted_uid (3) = 0, forged */
    *p++ = 0;
    k = (size_t)(p - pk);
    tracec_i_rec_scan sc;
    const char *why = NULL;
    cr_assert(tracec_i_rec_packet_scan(pk, k, &sc, &why), "%s", why);
    cr_expect_eq(sc.seq_fields, 8);
    cr_expect_eq(sc.local, 12);
    trace_dir t;
    tracec_trace_file *f = trace_dir_open(&t);
    uint32_t next = 7;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 6);
    cr_expect_eq(tracec_i_rec_save_packet(f, &m, &next, pk, k, 4242, 1000, NULL, &why), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(m.count, 1);
    tt_buf b = trace_dir_decode(&t, f);
    char want[512] = "";
    want_packet(want, sizeof want, 1000, 5, 7, "forged", false, 4242);
    cr_expect_str_eq(b.data, want);
    tt_buf_free(&b);
    tracec_i_rec_seqmap_free(&m);
}

/* The pass checks before it writes or maps anything: a packet malformed inside a nested message is
   CORRUPT_DATA with a reason, nothing is written and its id takes no global id. */
Test(record_seq, save_packet_refuses_a_nested_malformed_packet_before_writing) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    static const uint8_t bad[] = {0x50, 0x09, 0x5a, 0x02, 0x4f, 0x01}; /* id 9, then a track_event with wire type 7 */
    uint32_t next = 3;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 2);
    const char *why = NULL;
    int mark = 1;
    cr_expect_eq(tracec_i_rec_save_packet(f, &m, &next, bad, sizeof bad, 1, 1, &mark, &why), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_str_eq(why, "invalid wire type");
    cr_expect_eq(tracec_i_rec_write_packet(f, &m, &next, bad, sizeof bad, 1, 1, &mark), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(mark, 1, "the loss mark waits for a packet that is written");
    cr_expect_eq(m.count, 0);
    cr_expect_eq(next, 3);
    cr_expect_eq(tracec_trace_file_packets(f), 0);
    cr_expect_eq(tracec_trace_file_dropped(f), 0);
    size_t n = 1;
    (void)tracec_trace_file_data(f, &n);
    cr_expect_eq(n, 0);
    tracec_trace_file_close(f);
}

/* The scans of one packet agree (the cuts that were located). */
static void expect_same_scan(const tracec_i_rec_scan *a, const tracec_i_rec_scan *b, const char *what, size_t k) {
    cr_expect_eq(a->seq_fields, b->seq_fields, "%s, case %zu", what, k);
    cr_expect_eq(a->local, b->local, "%s, case %zu", what, k);
    for (uint32_t i = 0; i < a->seq_fields && i < TRACEC_I_REC_SCAN_CUTS; i++)
        cr_expect(a->cut[2 * i] == b->cut[2 * i] && a->cut[2 * i + 1] == b->cut[2 * i + 1], "%s, case %zu", what, k);
}

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A packet that agrees with a checked packet's shape takes the check's path of that packet: it passes, with the
   same scan (its own sequence id).  Checked against the whole check, for every bit the shape leaves free and for
   random changes anywhere. */
Test(record_seq, a_packet_of_a_checked_shape_passes_as_it_did) {
    static const struct {
        const char *what;
        uint8_t bytes[64];
        size_t n;
    } cases[] = {
        {"a track-event instant with an interned name and one int arg",
         {0x40, 0xe8, 0x8c, 0x01, 0x5a, 0x0a, 0x48, 0x03, 0x50, 0x01, 0x22, 0x04, 0x08, 0x01, 0x20, 0x2a, 0x50, 0x07,
          0x68, 0x02},
         20},
        {"a slice begin: 9-byte timestamp, track uuid, name, extension varint and fixed64, a double arg",
         {0x40, 0x80, 0x80, 0xd0, 0xc6, 0x85, 0xc4, 0x97, 0x97, 0x17, 0x5a, 0x31, 0x48, 0x01, 0x58, 0x90, 0xcf, 0xd6,
          0xa3, 0x12, 0xba, 0x01, 0x0c, 'f',  'r',  'a',  'm',  'e',  '-',  'r',  'e',  'n',  'd',  'e',  'r',  0x80,
          0xc8, 0x01, 0x07, 0x81, 0xc8, 0x01, 1,    2,    3,    4,    5,    6,    7,    8,    0x22, 0x09, 0x29, 1,
          2,    3,    4,    5,    6,    7,    8,    0x50, 0x01},
         63},
        {"packed category_iids", {0x40, 0x85, 0x01, 0x5a, 0x06, 0x1a, 0x02, 0x01, 0x02, 0x48, 0x01, 0x50, 0x03}, 13},
        {"the sequence id as fixed32, then as a varint", {0x55, 1, 2, 3, 4, 0x50, 0x81, 0x01, 0x40, 0x05}, 10},
        {"a 10-byte timestamp",
         {0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x50, 0x02}, 13},
        {"an unknown field holding bytes that would be a group", {0x5a, 0x06, 0x8a, 0xc8, 0x01, 0x02, 0x0b, 0x0c, 0x50, 0x04}, 10},
    };
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const uint8_t *p = cases[k].bytes;
        size_t n = cases[k].n;
        tracec_i_rec_scan whole, s, t;
        tracec_i_rec_shape sh;
        const char *why = NULL;
        cr_assert(tracec_i_rec_packet_scan(p, n, &whole, &why), "%s: %s", cases[k].what, why);
        cr_assert(tracec_i_rec_packet_shape(p, n, &s, &sh, &why), "%s", cases[k].what);
        cr_assert_eq(sh.n, n, "%s", cases[k].what);
        expect_same_scan(&s, &whole, cases[k].what, k);
        cr_assert(tracec_i_rec_shape_match(&sh, p, n, &t), "%s", cases[k].what);
        expect_same_scan(&t, &whole, cases[k].what, k);
        uint8_t q[64];
        unsigned free_bits = 0, matched = 0, refused = 0;
        for (size_t i = 0; i < n; i++) free_bits += (unsigned)__builtin_popcount((uint8_t)~sh.mask[i]);
        /* any value in the bits the shape leaves free */
        for (int r = 0; r < 2000; r++) {
            for (size_t i = 0; i < n; i++) q[i] = (uint8_t)((p[i] & sh.mask[i]) | (next_random(&rng) & ~sh.mask[i]));
            cr_assert(tracec_i_rec_shape_match(&sh, q, n, &t), "%s", cases[k].what);
            cr_assert(tracec_i_rec_packet_scan(q, n, &whole, &why), "%s: %s", cases[k].what, why);
            expect_same_scan(&t, &whole, cases[k].what, k);
        }
        /* a byte or two changed anywhere: a packet that still matches passes the whole check alike */
        for (int r = 0; r < 4000; r++) {
            memcpy(q, p, n);
            for (int c = 0; c <= r % 2; c++) q[next_random(&rng) % n] ^= (uint8_t)(1u + next_random(&rng) % 255u);
            if (!tracec_i_rec_shape_match(&sh, q, n, &t)) {
                refused++;
                continue;
            }
            matched++;
            cr_assert(tracec_i_rec_packet_scan(q, n, &whole, &why), "%s: %s", cases[k].what, why);
            expect_same_scan(&t, &whole, cases[k].what, k);
        }
        cr_expect_gt(refused, 0, "%s: a changed tag or length leaves the shape", cases[k].what);
        if (k < 3) { /* packets with values: some of their bits are free */
            cr_expect_gt(free_bits, 0, "%s", cases[k].what);
            cr_expect_gt(matched, 0, "%s", cases[k].what);
        }
    }
}

/* What the instant's shape keeps: a value's bits but its continuation bits are free, a tag, a length and a
   continuation bit are not; the sequence id's value is read from each packet. */
Test(record_seq, a_shape_keeps_tags_lengths_and_varint_lengths) {
    static const uint8_t p[] = {0x40, 0xe8, 0x8c, 0x01, 0x5a, 0x0a, 0x48, 0x03, 0x50, 0x01,
                                0x22, 0x04, 0x08, 0x01, 0x20, 0x2a, 0x50, 0x07, 0x68, 0x02};
    tracec_i_rec_scan s, t;
    tracec_i_rec_shape sh;
    cr_assert(tracec_i_rec_packet_shape(p, sizeof p, &s, &sh, NULL));
    uint8_t q[sizeof p];
    static const struct {
        size_t at;
        uint8_t value;
        bool matches;
    } edits[] = {
        {1, 0x81, true},  /* the timestamp's value */
        {3, 0x7f, true},
        {1, 0x01, false}, /* its continuation bit: a shorter timestamp */
        {0, 0x41, false}, /* a tag's wire type */
        {5, 0x0b, false}, /* track_event's length */
        {15, 0x7f, true}, /* the int arg's value */
        {15, 0x80, false},
        {17, 0x09, true}, /* the sequence id */
        {16, 0x51, false}, /* field 10 as fixed64 */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        memcpy(q, p, sizeof p);
        q[edits[i].at] = edits[i].value;
        cr_expect_eq(tracec_i_rec_shape_match(&sh, q, sizeof q, &t), edits[i].matches, "edit %zu", i);
        if (edits[i].matches) {
            const char *why = NULL;
            cr_expect(tracec_i_rec_packet_scan(q, sizeof q, &s, &why), "edit %zu: %s", i, why);
            cr_expect_eq(t.local, s.local, "edit %zu", i);
        }
    }
    cr_expect_eq(sh.scan.local, 7);
    memcpy(q, p, sizeof p);
    q[17] = 0x09;
    cr_assert(tracec_i_rec_shape_match(&sh, q, sizeof q, &t));
    cr_expect_eq(t.local, 9, "the id is the packet's own");
}

/* Through the recorder's save: a packet of a shape seen before is written with its own values; one that differs
   in its structure is checked whole and refused. */
Test(record_seq, save_packet_by_shape_writes_each_packets_values_and_refuses_what_differs) {
    tracec_trace_file *f;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    uint8_t p[] = {0x40, 0xe8, 0x8c, 0x01, 0x5a, 0x0a, 0x48, 0x03, 0x50, 0x01,
                   0x22, 0x04, 0x08, 0x01, 0x20, 0x2a, 0x50, 0x07, 0x68, 0x02};
    uint32_t next = 3;
    tracec_i_rec_seqmap m;
    tracec_i_rec_seqmap_init(&m, 2);
    const char *why = NULL;
    cr_assert_eq(tracec_i_rec_save_packet(f, &m, &next, p, sizeof p, 1, 1, NULL, &why), TRACEC_STATUS_SUCCESS);
    p[15] = 0x2b; /* int arg 43 */
    p[17] = 0x08; /* sequence 8 */
    cr_assert_eq(tracec_i_rec_save_packet(f, &m, &next, p, sizeof p, 1, 1, NULL, &why), TRACEC_STATUS_SUCCESS);
    cr_expect_eq(m.count, 2, "sequences 7 and 8 have ids of their own");
    p[12] = 0x0f; /* debug annotation's name_iid with an invalid wire type */
    cr_expect_eq(tracec_i_rec_save_packet(f, &m, &next, p, sizeof p, 1, 1, NULL, &why), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_str_eq(why, "invalid wire type");
    p[12] = 0x08;
    p[11] = 0x05; /* the annotation's length runs into the next field */
    cr_expect_eq(tracec_i_rec_save_packet(f, &m, &next, p, sizeof p, 1, 1, NULL, &why), TRACEC_STATUS_CORRUPT_DATA);
    cr_expect_eq(tracec_trace_file_packets(f), 2);
    size_t n = 0;
    const uint8_t *d = tracec_trace_file_data(f, &n);
    /* the second packet: its arg 43 and the global id of sequence 8 (4) */
    static const uint8_t second[] = {0x20, 0x2b, 0x50, 0x04};
    cr_expect(memmem(d, n, second, sizeof second) != NULL);
    tracec_i_rec_seqmap_free(&m);
    tracec_trace_file_close(f);
}

/* A peer whose packets rarely repeat a shape: shapes are made for few of them (making one costs about another
   check), and every packet is written as a peer without shapes writes it. */
Test(record_seq, a_peer_of_many_shapes_makes_few) {
    tracec_trace_file *f, *g;
    cr_assert_eq(tracec_trace_file_open_memory(&f), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_trace_file_open_memory(&g), TRACEC_STATUS_SUCCESS);
    tracec_i_rec_seqmap m, plain;
    tracec_i_rec_seqmap_init(&m, 2);
    tracec_i_rec_seqmap_init(&plain, 2);
    plain.no_shapes = 1;
    uint32_t next = 3, pnext = 3;
    for (int i = 0; i < 6000; i++) {
        uint8_t pk[128];
        char name[64];
        int k = i % 200 < 190 ? i % 200 : 0; /* 190 shapes in turn, and one that comes back */
        snprintf(name, sizeof name, "%.*s", 4 + k % 50, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
        size_t n = ru_packet(pk, 1000 + (uint64_t)i * (k < 50 ? 1u : k < 100 ? 200u : 20000u), name, 1, 1);
        cr_assert_eq(tracec_i_rec_save_packet(f, &m, &next, pk, n, 1, 1, NULL, NULL), TRACEC_STATUS_SUCCESS);
        cr_assert_eq(tracec_i_rec_save_packet(g, &plain, &pnext, pk, n, 1, 1, NULL, NULL), TRACEC_STATUS_SUCCESS);
        /* nearly every one of the first 1000 misses the 32 shapes kept: without the rule about 950 are made */
        if (i == 999) cr_expect_lt(m.shapes->made, 200u, "made %u", m.shapes->made);
    }
    cr_assert_not_null(m.shapes);
    cr_expect_null(plain.shapes);
    size_t a = 0, b = 0;
    const uint8_t *da = tracec_trace_file_data(f, &a), *db = tracec_trace_file_data(g, &b);
    cr_assert_eq(a, b);
    cr_expect(memcmp(da, db, a) == 0);
    tracec_i_rec_seqmap_free(&m);
    tracec_i_rec_seqmap_free(&plain);
    tracec_trace_file_close(f);
    tracec_trace_file_close(g);
}

/* The record check's verdicts and its view of field 10, for tags of one, two and three bytes (the check reads a
   one-byte tag through a table of its message type, the others field by field: both must say the same). */
Test(record_seq, the_record_check_reads_every_tag_width_alike) {
    static const struct {
        const char *what;
        uint8_t bytes[24];
        size_t n;
        const char *why; /* NULL: well formed */
        uint32_t seq_fields;
        uint64_t local;
    } cases[] = {
        {"timestamp (one-byte tag) cut short", {0x40, 0x80}, 2, "truncated varint", 0, 0},
        {"a varint of 11 bytes", {0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 12,
         "varint longer than 10 bytes", 0, 0},
        {"a fixed64 of 7 bytes", {0x41, 1, 2, 3, 4, 5, 6, 7}, 8, "truncated fixed64 value", 0, 0},
        {"a fixed32 of 3 bytes", {0x45, 1, 2, 3}, 4, "truncated fixed32 value", 0, 0},
        {"field number 0", {0x02, 0x00}, 2, "invalid field number 0", 0, 0},
        {"a length past the end", {0x5a, 0x05, 0x48}, 3, "length runs past the end of the enclosing message", 0, 0},
        {"category_iids packed, cut inside a varint", {0x5a, 0x04, 0x1a, 0x02, 0x80, 0x80}, 6,
         "a packed field that does not split into whole elements", 0, 0},
        {"category_iids packed", {0x5a, 0x04, 0x1a, 0x02, 0x01, 0x02}, 6, NULL, 0, 0},
        {"flow_ids (two-byte tag) packed, 2 bytes", {0x5a, 0x05, 0xfa, 0x02, 0x02, 0x01, 0x02}, 7,
         "a packed field that does not split into whole elements", 0, 0},
        {"debug_annotations with a group inside", {0x5a, 0x04, 0x22, 0x02, 0x0b, 0x0c}, 6, "a group", 0, 0},
        {"an extension (three-byte tag) cut inside its tag", {0x5a, 0x02, 0x80, 0xc8}, 4, "truncated tag", 0, 0},
        {"an extension (three-byte tag)", {0x5a, 0x04, 0x80, 0xc8, 0x01, 0x05}, 6, NULL, 0, 0},
        {"an extension varint (three-byte tag) cut short of its value", {0x5a, 0x03, 0x80, 0xc8, 0x01}, 5,
         "truncated varint", 0, 0},
        {"track_descriptor (two-byte tag) with an invalid wire type inside", {0xe2, 0x03, 0x02, 0x0f, 0x01}, 5,
         "invalid wire type", 0, 0},
        {"track_event's field 1, a tag padded to two bytes", {0x5a, 0x03, 0x88, 0x00, 0x01}, 5, NULL, 0, 0},
        {"field number 0 in a two-byte tag", {0x5a, 0x03, 0x80, 0x00, 0x01}, 5, "invalid field number 0", 0, 0},
        /* a varint is looked at up to the packet's end, but must end inside its own message */
        {"a varint that runs past its message, more of the packet after it",
         {0x5a, 0x02, 0x08, 0x81, 0x40, 0x01, 0x40, 0x01, 0x40, 0x01, 0x40, 0x01, 0x40, 0x01}, 14, "truncated varint", 0,
         0},
        {"a varint of 11 bytes in track_event, more of the packet after it",
         {0x5a, 0x0c, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x40, 0x01}, 16,
         "varint longer than 10 bytes", 0, 0},
        {"the sequence id", {0x50, 0x07}, 2, NULL, 1, 7},
        {"the sequence id, a tag padded to two bytes", {0xd0, 0x00, 0x07}, 3, NULL, 1, 7},
        {"the sequence id as fixed32, then as a varint", {0x55, 1, 2, 3, 4, 0x50, 0x81, 0x01}, 8, NULL, 2, 129},
        {"the sequence id cut short", {0x50, 0x81}, 2, "truncated varint", 0, 0},
        {"field 10 of track_event is not the packet's", {0x5a, 0x02, 0x50, 0x05}, 4, NULL, 0, 0},
        /* a field numbered past the type's table: followed where the schema has a message there
           (FileOptions.uninterpreted_option, 999, inside extension_descriptor), opaque where it has none */
        {"an unknown extension of track_event holding a group: bytes", {0x5a, 0x06, 0x8a, 0xc8, 0x01, 0x02, 0x0b, 0x0c},
         8, NULL, 0, 0},
        {"uninterpreted_option (999) of a file's options", {0xc2, 0x04, 0x0b, 0x0a, 0x09, 0x0a, 0x07, 0x42, 0x05, 0xba,
                                                             0x3e, 0x02, 0x18, 0x01},
         14, NULL, 0, 0},
        {"uninterpreted_option (999) holding a group", {0xc2, 0x04, 0x0b, 0x0a, 0x09, 0x0a, 0x07, 0x42, 0x05, 0xba, 0x3e,
                                                        0x02, 0x0b, 0x0c},
         14, "a group", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tracec_i_rec_scan s;
        const char *why = NULL;
        bool ok = tracec_i_rec_packet_scan(cases[i].bytes, cases[i].n, &s, &why);
        if (cases[i].why == NULL) {
            cr_expect(ok, "%s: %s", cases[i].what, why);
            if (!ok) continue;
            cr_expect_eq(s.seq_fields, cases[i].seq_fields, "%s", cases[i].what);
            cr_expect_eq(s.local, cases[i].local, "%s", cases[i].what);
        } else {
            cr_expect_not(ok, "%s", cases[i].what);
            cr_expect_str_eq(why ? why : "(none)", cases[i].why, "%s", cases[i].what);
        }
    }
}
