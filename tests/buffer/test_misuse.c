/*
 * test_misuse.c - mistakes real programs make with the buffer
 * runtime: each one is a clear status, a counted drop or a
 * documented automatic behaviour, never a crash, a hang or a packet lost
 * uncounted.  docs/buffers.md, "Misuse", lists them with these tests.
 * Runs under ASan+UBSan and TSan like the other buffer tests.
 */
#include "buffer_util.h"

/* The counters' closing equation (buffer.h): everything offered is accounted for. */
static uint64_t accounted(const tracec_buffer_stats_t *st) {
    return st->delivered + st->dropped + st->overwritten + st->refused;
}

/* A packet record: field 900 = a trec of `len` bytes. */
static tracec_status_t put_trec_packet(tracec_buffer_writer *bw, uint32_t thread, uint64_t seq, size_t len) {
    uint8_t rec[512];
    trec_make(rec, len, thread, seq);
    return put_bytes_packet(bw, TRACEC_BUFFER_CATEGORY_USER, 1, rec, len);
}

/* Reads a varint of at most 4 bytes at *p (< end); 0 if there is none. */
static size_t small_varint(const uint8_t *p, const uint8_t *end, size_t *v) {
    size_t x = 0;
    for (size_t i = 0; i < 4 && p + i < end; i++) {
        x |= (size_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* The trec of one delivered payload: one Trace.packet record holding field 900 (tag 0xA2 0x38) and nothing else.
   Lengths may be minimal or padded (TRACEC_FIXED_NESTED_LENGTHS). NULL if the record is not that. */
static const uint8_t *trec_payload(const delivered_rec *d, size_t *len) {
    const uint8_t *p = d->data, *end = d->data + d->size;
    size_t plen, k;
    if (d->size < 2 || p[0] != 0x0A || !(k = small_varint(p + 1, end, &plen)) || 1 + k + plen != d->size) return NULL;
    p += 1 + k;
    if (end - p < 3 || p[0] != 0xA2 || p[1] != 0x38 || !(k = small_varint(p + 2, end, len)) || 2 + k + *len != plen)
        return NULL;
    return p + 2 + k;
}

/* True when every delivered payload is one Trace.packet record holding field 900 with a whole trec. */
static bool packets_whole(collector *c, size_t *bad_at) {
    for (size_t i = 0; i < c->n; i++) {
        size_t len = 0;
        const uint8_t *t = trec_payload(&c->recs[i], &len);
        trec r;
        if (t == NULL || !trec_check(t, len, &r)) {
            *bad_at = i;
            return false;
        }
    }
    return true;
}

/* ---- 1. a thread that exits without tracec_buffer_writer_release ------- */

typedef struct exit_arg {
    tracec_buffer_id_t b;
    uint32_t id;
    int packets;
    int leave_open; /* return with a packet begun and not ended */
} exit_arg;

static void *write_and_exit(void *p) {
    exit_arg *a = (exit_arg *)p;
    tracec_buffer_writer bw; /* on this thread's stack, never released */
    if (tracec_buffer_writer_init(&bw, a->b, 0) != TRACEC_STATUS_SUCCESS) return (void *)1;
    for (int i = 0; i < a->packets; i++)
        if (put_trec_packet(&bw, a->id, (uint64_t)i, 40) != TRACEC_STATUS_SUCCESS) return (void *)2;
    if (a->leave_open) {
        tracec_writer w;
        tracec_msg pkt;
        tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
        tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 1);
    }
    return NULL;
}

/* Asserts that thread t's packets 0..n-1 arrived once each, in order (one assertion: a failure names the first fault). */
static void assert_each_thread_in_order(collector *c, uint32_t threads, int n) {
    uint64_t *next = calloc(threads, sizeof *next);
    size_t bad = 0;
    cr_assert(packets_whole(c, &bad), "record %zu is torn", bad);
    char why[160] = "";
    for (size_t i = 0; i < c->n && !why[0]; i++) {
        trec r = {0, 0, 0, 0};
        size_t len = 0;
        const uint8_t *t = trec_payload(&c->recs[i], &len);
        if (t != NULL) (void)trec_check(t, len, &r);
        if (r.thread >= threads)
            snprintf(why, sizeof why, "record %zu: thread %u", i, r.thread);
        else if (r.seq != next[r.thread])
            snprintf(why, sizeof why, "thread %u: got %llu, expected %llu", r.thread, (unsigned long long)r.seq,
                     (unsigned long long)next[r.thread]);
        else
            next[r.thread]++;
    }
    for (uint32_t t = 0; t < threads && !why[0]; t++)
        if (next[t] != (uint64_t)n)
            snprintf(why, sizeof why, "thread %u: %llu packets", t, (unsigned long long)next[t]);
    free(next);
    cr_assert(!why[0], "%s", why);
}

/* The report: 8 threads write 10 packets each and return; main flushes. */
Test(buffer_misuse, thread_exit_without_release_delivers_committed_packets, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    pthread_t t[8];
    exit_arg a[8];
    for (uint32_t i = 0; i < 8; i++) {
        a[i] = (exit_arg){b, i, 10, 0};
        pthread_create(&t[i], NULL, write_and_exit, &a[i]);
    }
    for (int i = 0; i < 8; i++) {
        void *rv;
        pthread_join(t[i], &rv);
        cr_assert_null(rv, "thread %d failed", i);
    }
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(collector_count(&c), 80);
    cr_assert_eq(st.delivered, 80);
    cr_assert_eq(st.accepted, 80);
    cr_assert_eq(st.refused, 0);
    assert_each_thread_in_order(&c, 8, 10);
    test_end();
}

/* 256 short-lived threads, 8 at a time, each leaving its last packet open, while deliveries run. */
Test(buffer_misuse, many_short_lived_threads_lose_only_their_open_packet, .timeout = 120) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 2048, TRACEC_BUFFER_POLICY_LOSSLESS);
    enum { WAVES = 32, PER = 8, N = 5 };
    exit_arg a[WAVES * PER];
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[PER];
        for (int i = 0; i < PER; i++) {
            uint32_t id = (uint32_t)(w * PER + i);
            a[id] = (exit_arg){b, id, N, 1};
            pthread_create(&t[i], NULL, write_and_exit, &a[id]);
        }
        if (w % 4 == 0) OK(tracec_flush_buffer_async(b));
        for (int i = 0; i < PER; i++) {
            void *rv;
            pthread_join(t[i], &rv);
            cr_assert_null(rv, "thread %d failed", w * PER + i);
        }
    }
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, (uint64_t)WAVES * PER * N);
    cr_assert_eq(st.accepted, (uint64_t)WAVES * PER * N);
    cr_assert_eq(st.refused, (uint64_t)WAVES * PER, "one open packet per thread");
    cr_assert_eq(st.dropped, 0);
    assert_each_thread_in_order(&c, WAVES * PER, N);
    test_end();
}

/* A writer whose thread exited gets a fresh state at its next begin (a static writer used by a new thread). */
static tracec_buffer_writer g_static_bw;

static void *begin_once(void *p) {
    (void)p;
    return (void *)(uintptr_t)put_trec_packet(&g_static_bw, 0, 0, 40);
}

Test(buffer_misuse, writer_of_an_exited_thread_is_rearmed_at_next_begin, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    OK(tracec_buffer_writer_init(&g_static_bw, b, 0));
    pthread_t t;
    void *rv;
    pthread_create(&t, NULL, begin_once, NULL);
    pthread_join(t, &rv);
    cr_assert_eq((tracec_status_t)(uintptr_t)rv, TRACEC_STATUS_SUCCESS);
    OK(put_trec_packet(&g_static_bw, 0, 1, 40)); /* the state went with the thread: a new one */
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2);
    cr_assert_eq(st.accepted, 2);
    assert_each_thread_in_order(&c, 1, 2);
    tracec_buffer_writer_release(&g_static_bw);
    test_end();
}

/* ---- 2. flush, destroy, lifecycle with a packet open ------------------- */

Test(buffer_misuse, calls_that_wait_return_would_deadlock_with_a_packet_open, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c, c2;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    collector_init(&c2);
    tracec_buffer_id_t b2;
    OK(tracec_create_buffer(ctx, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c2, &b2));
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    OK(put_trec_packet(&bw, 0, 0, 40));
    tracec_writer w;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    uint8_t rec[40];
    trec_make(rec, sizeof rec, 0, 1);
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
    cr_assert_eq(tracec_flush_buffer(b), TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(tracec_flush_buffer(b2), TRACEC_STATUS_WOULD_DEADLOCK, "another buffer: same callback thread");
    cr_assert_eq(tracec_destroy_buffer(b), TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(tracec_stop_context(ctx), TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(tracec_terminate_context(ctx), TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(tracec_destroy_context(ctx), TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(tracec_finalize(), TRACEC_STATUS_WOULD_DEADLOCK);
    OK(tracec_flush_buffer_async(b)); /* never waits */
    OK(tracec_buffer_end_packet(&bw, &w, &pkt));
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2);
    cr_assert_eq(st.refused, 0);
    assert_each_thread_in_order(&c, 1, 2);
    OK(tracec_stop_context(ctx));
    tracec_buffer_writer_release(&bw);
    test_end();
}

/*
 * Emits into the buffer that holds this thread's open packet until it is
 * full twice: the second switch would wait for the delivery of the half
 * holding the open packet, which waits for that packet to end.  It is
 * refused with WOULD_DEADLOCK and counted instead of hanging.
 */
Test(buffer_misuse, emit_that_would_wait_for_own_open_packet_is_refused, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    c.keep = 0;
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    tracec_writer w;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 7);
    uint8_t rec[64] = {0};
    uint64_t ok = 0, wd = 0;
    for (int i = 0; i < 400; i++) {
        tracec_status_t s = tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 2, rec, sizeof rec);
        if (s == TRACEC_STATUS_SUCCESS) ok++;
        else if (s == TRACEC_STATUS_WOULD_DEADLOCK) wd++;
        else cr_assert(0, "emit %d: %s", i, ST(s));
    }
    cr_assert_gt(wd, 0, "some emits had to be refused");
    OK(tracec_buffer_end_packet(&bw, &w, &pkt));
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.dropped, wd);
    cr_assert_eq(st.accepted, ok + 1);
    cr_assert_eq(st.delivered, ok + 1);
    tracec_buffer_writer_release(&bw);
    test_end();
}

/* ---- 4. double begin, ends that do not match, writer errors ------------ */

/* A second begin through another tracec_writer: the first is abandoned too (the runtime cannot
   tell the two cases apart); an end through the first window is BAD_STATE and touches nothing. */
Test(buffer_misuse, double_begin_with_another_writer_abandons_the_first, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    uint8_t rec[40];
    for (uint64_t i = 0; i < 2; i++) {
        tracec_writer w1, w2;
        tracec_msg p1, p2;
        tracec_buffer_begin_packet(&bw, &w1, TRACEC_BUFFER_CATEGORY_USER, 1, &p1);
        trec_make(rec, sizeof rec, 0, 100 + i);
        tracec_msg_put_bytes(&p1, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
        tracec_buffer_begin_packet(&bw, &w2, TRACEC_BUFFER_CATEGORY_USER, 1, &p2);
        cr_assert_eq(w2.status, TRACEC_STATUS_SUCCESS);
        trec_make(rec, sizeof rec, 0, i);
        tracec_msg_put_bytes(&p2, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
        if (i == 0) { /* the abandoned one ended first, then the open one */
            cr_assert_eq(tracec_buffer_end_packet(&bw, &w1, &p1), TRACEC_STATUS_BAD_STATE);
            OK(tracec_buffer_end_packet(&bw, &w2, &p2));
        } else {
            OK(tracec_buffer_end_packet(&bw, &w2, &p2));
            cr_assert_eq(tracec_buffer_end_packet(&bw, &w1, &p1), TRACEC_STATUS_BAD_STATE);
        }
    }
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2);
    cr_assert_eq(st.accepted, 2);
    cr_assert_eq(st.refused, 2, "the first packets");
    assert_each_thread_in_order(&c, 1, 2);
    tracec_buffer_writer_release(&bw);
    test_end();
}

/* One tracec_writer begun twice (a missing end): the first packet's window is gone, so it is abandoned. */
static void double_begin_same_writer(tracec_buffering_mode_t mode, uint32_t category, uint32_t kind) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = mode == TRACEC_BUFFERING_MODE_STREAMING
                               ? collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS)
                               : collected_mode_buffer(&ctx, &c, mode, 65536, 0);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    uint8_t rec[40];
    tracec_writer w;
    tracec_msg pkt;
    for (uint64_t i = 0; i < 3; i++) {
        tracec_buffer_begin_packet(&bw, &w, category, kind, &pkt);
        trec_make(rec, sizeof rec, 0, 100 + i);
        tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
        /* no end */
        tracec_buffer_begin_packet(&bw, &w, category, kind, &pkt);
        cr_assert_eq(w.status, TRACEC_STATUS_SUCCESS);
        trec_make(rec, sizeof rec, 0, i);
        tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
        OK(tracec_buffer_end_packet(&bw, &w, &pkt));
    }
    tracec_buffer_stats_t st = flush_and_stats(b); /* never hangs on the abandoned packet */
    cr_assert_eq(st.delivered, 3);
    cr_assert_eq(st.accepted, 3);
    cr_assert_eq(st.refused, 3);
    assert_each_thread_in_order(&c, 1, 3);
    tracec_buffer_writer_release(&bw);
    test_end();
}

Test(buffer_misuse, double_begin_with_the_same_writer_abandons_the_first, .timeout = 30) {
    double_begin_same_writer(TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_CATEGORY_USER, 1);
}

Test(buffer_misuse, double_begin_of_a_durable_packet_abandons_the_first, .timeout = 30) {
    double_begin_same_writer(TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_CATEGORY_TRACING,
                             TRACEC_BUFFER_TRACING_INTERNED_DATA);
}

Test(buffer_misuse, ending_a_packet_twice_leaves_the_open_one_alone, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    uint8_t rec[40];
    tracec_writer w1, w2;
    tracec_msg p1, p2;
    tracec_buffer_begin_packet(&bw, &w1, TRACEC_BUFFER_CATEGORY_USER, 1, &p1);
    trec_make(rec, sizeof rec, 0, 0);
    tracec_msg_put_bytes(&p1, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
    OK(tracec_buffer_end_packet(&bw, &w1, &p1));
    tracec_buffer_begin_packet(&bw, &w2, TRACEC_BUFFER_CATEGORY_USER, 1, &p2);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w1, &p1), TRACEC_STATUS_BAD_STATE, "ended twice");
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w2, &p1), TRACEC_STATUS_BAD_STATE, "a packet of another writer");
    trec_make(rec, sizeof rec, 0, 1);
    tracec_msg_put_bytes(&p2, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
    OK(tracec_buffer_end_packet(&bw, &w2, &p2));
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w2, &p2), TRACEC_STATUS_BAD_STATE, "no packet open");
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2);
    cr_assert_eq(st.refused, 0);
    assert_each_thread_in_order(&c, 1, 2);
    tracec_buffer_writer_release(&bw);
    test_end();
}

/*
 * A packet that grow() parked (copied aside into the writer's scratch buffer)
 * and that then failed to get a chunk keeps the scratch copy as its window.
 * Once a later begin opened another packet in a chunk, that window is stale:
 * an end through it (the packet abandoned, or ended a second time) is
 * BAD_STATE and leaves the open packet alone.  (The flake of
 * random_call_sequences_from_threads_account_for_every_packet under TSan:
 * the stale scratch window was taken for the open packet's, so the end
 * returned the parked packet's WOULD_DEADLOCK and ended the new packet.)
 * CIRCULAR, as in buffer_modes' park test: P's chunk is in half 0, half 1
 * is full, so grow() parks P; Q, another writer's packet open in half 0,
 * makes the wrap over half 0 refuse the parked P with WOULD_DEADLOCK.
 */
uint64_t tracec_i_buffer_grow_waits(void); /* runtime test hook (runtime/buffer/src/fence.c) */

static void parked_then_failed(int abandoned) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    tracec_buffer_writer bw, qbw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    OK(tracec_buffer_writer_init(&qbw, b, 64));
    tracec_writer pw, qw, w2;
    tracec_msg pkt, q, p2;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    tracec_buffer_begin_packet(&qbw, &qw, TRACEC_BUFFER_CATEGORY_USER, 1, &q);
    cr_assert_eq(pw.status, TRACEC_STATUS_SUCCESS);
    cr_assert_eq(qw.status, TRACEC_STATUS_SUCCESS);
    tracec_buffer_stats_t st;
    uint64_t v = 0;
    do { /* 8-byte records fill half 0 and wrap into half 1 ... */
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 2, &v, sizeof v));
        v++;
        OK(tracec_query_buffer_stats(b, &st));
    } while (st.half_switches == 0);
    for (int i = 1; i < 512; i++, v++) /* ... and fill half 1 exactly */
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 2, &v, sizeof v));
    static uint8_t data[1000];
    uint64_t parks0 = tracec_i_buffer_grow_waits();
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), data, sizeof data);
    cr_assert_eq(tracec_i_buffer_grow_waits() - parks0, 1, "grow() parked P");
    cr_assert_eq(pw.status, TRACEC_STATUS_WOULD_DEADLOCK, "the wrap over Q's half: %s", ST(pw.status));
    OK(tracec_buffer_end_packet(&qbw, &qw, &q));
    if (!abandoned) cr_assert_eq(tracec_buffer_end_packet(&bw, &pw, &pkt), TRACEC_STATUS_WOULD_DEADLOCK);
    /* P2 begins (abandoning P if it is still open) in a chunk: the wrap over half 0 is allowed now. */
    tracec_buffer_begin_packet(&bw, &w2, TRACEC_BUFFER_CATEGORY_USER, 1, &p2);
    cr_assert_eq(w2.status, TRACEC_STATUS_SUCCESS, "%s", ST(w2.status));
    uint8_t rec[40];
    trec_make(rec, sizeof rec, 0, 0);
    tracec_msg_put_bytes(&p2, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &pw, &pkt), TRACEC_STATUS_BAD_STATE, "%s",
                 abandoned ? "an end through the abandoned, parked window" : "the parked packet ended twice");
    OK(tracec_buffer_end_packet(&bw, &w2, &p2));
    st = flush_and_stats(b);
    cr_assert_eq(st.dropped, 1, "P, refused once (not counted again when abandoned)");
    cr_assert_eq(st.refused, 0);
    size_t n = collector_count(&c);
    cr_assert_gt(n, 0);
    const delivered_rec *last = &c.recs[n - 1];
    size_t len;
    const uint8_t *t = trec_payload(last, &len);
    cr_assert(t != NULL && len == sizeof rec && memcmp(t, rec, sizeof rec) == 0, "P2 delivered whole, last");
    cr_assert_eq(accounted(&st), v + 3, "the emits, Q, P2 and P");
    tracec_buffer_writer_release(&qbw);
    tracec_buffer_writer_release(&bw);
    test_end();
}

Test(buffer_misuse, end_through_a_parked_failed_window_after_a_new_begin_is_bad_state, .timeout = 30) {
    parked_then_failed(1);
}

Test(buffer_misuse, parked_failed_packet_ended_twice_leaves_the_open_one_alone, .timeout = 30) {
    parked_then_failed(0);
}

/* Each writer error drops its packet and counts it in `refused`, not `dropped`; the writer goes on. */
Test(buffer_misuse, writer_errors_are_counted_as_refused, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    tracec_writer w;
    tracec_msg pkt, child, never, other;
    /* A nested message that was never begun (a zeroed child), as in the issue. */
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    memset(&never, 0, sizeof never);
    tracec_msg_end_nested(&pkt, &never);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt), TRACEC_STATUS_NESTING_MISMATCH);
    /* Ending the outer child while an inner one is open. */
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    tracec_msg_begin_nested(&pkt, TRACEC_TAG(11, TRACEC_WIRE_LEN), &child);
    tracec_msg_begin_nested(&child, TRACEC_TAG(1, TRACEC_WIRE_LEN), &other);
    tracec_msg_end_nested(&pkt, &child);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt), TRACEC_STATUS_NESTING_MISMATCH);
    /* The packet's own end while a child is open. */
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    tracec_msg_begin_nested(&pkt, TRACEC_TAG(11, TRACEC_WIRE_LEN), &child);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt), TRACEC_STATUS_NESTING_MISMATCH);
    /* Bigger than a half. */
    static uint8_t big[8192];
    cr_assert_eq(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_USER, 1, big, sizeof big),
                 TRACEC_STATUS_RECORD_TOO_LARGE);
    OK(put_trec_packet(&bw, 0, 0, 40));
    /* Released with a packet open. */
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    tracec_buffer_writer_release(&bw);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt), TRACEC_STATUS_BAD_STATE, "its writer is gone");
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.refused, 5);
    cr_assert_eq(st.dropped, 0);
    cr_assert_eq(st.delivered, 1);
    cr_assert_eq(accounted(&st), 6);
    assert_each_thread_in_order(&c, 1, 1);
    test_end();
}

/* The context stops while a packet is open; the packet then needs a new chunk: CLOSED, counted. */
static void *stop_ctx(void *p) { return (void *)(uintptr_t)tracec_stop_context(*(tracec_context_id_t *)p); }

Test(buffer_misuse, packet_closed_by_a_stop_is_counted, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    OK(put_trec_packet(&bw, 0, 0, 40));
    tracec_writer w;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
    pthread_t t; /* the stop waits for this packet, so it runs on another thread */
    pthread_create(&t, NULL, stop_ctx, &ctx);
    uint64_t v = 0;
    tracec_status_t es;
    while ((es = tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 2, &v, sizeof v)) != TRACEC_STATUS_CLOSED) {
        cr_assert_eq(es, TRACEC_STATUS_SUCCESS, "%s", ST(es));
        v++;
        usleep(200);
    }
    static uint8_t big[20000]; /* outgrows the chunk: no new chunk once closed */
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), big, sizeof big);
    cr_assert_eq(tracec_buffer_end_packet(&bw, &w, &pkt), TRACEC_STATUS_CLOSED);
    void *rv;
    pthread_join(t, &rv);
    cr_assert_eq((tracec_status_t)(uintptr_t)rv, TRACEC_STATUS_SUCCESS);
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.refused, 1);
    cr_assert_eq(st.delivered, 1 + v);
    cr_assert_eq(accounted(&st), 2 + v);
    tracec_buffer_writer_release(&bw);
    test_end();
}

/* ---- 5. accepted counts every path ------------------------------------- */

Test(buffer_misuse, accepted_counts_emits_and_packets_on_every_path, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_ONESHOT, 65536, 0);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    uint64_t v = 1;
    for (int i = 0; i < 10; i++) OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &v, sizeof v));
    for (int i = 0; i < 10; i++) OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, 4, &v, sizeof v));
    for (uint64_t i = 0; i < 10; i++) OK(put_trec_packet(&bw, 0, i, 40)); /* the first takes the slow path */
    for (int i = 0; i < 10; i++) /* durable packets: the out-of-line path */
        OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &v, 8));
    static uint8_t big[3000]; /* outgrows its chunk: grow() */
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_USER, 1, big, sizeof big));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.accepted, 41, "before any delivery, packets still in the writer's chunk included");
    st = flush_and_stats(b);
    cr_assert_eq(st.accepted, 41);
    cr_assert_eq(st.delivered, 41);
    tracec_buffer_writer_release(&bw);
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.accepted, 41, "a released writer's packets stay counted");
    test_end();
}

/* ---- 6. random sequences of calls from several threads ----------------- */

enum { FZ_BUFS = 3, FZ_WORKERS = 4, FZ_ROUNDS = 6, FZ_OPS = 1200 };

typedef struct fz_shared {
    tracec_context_id_t ctx;
    tracec_buffer_id_t b[FZ_BUFS];
    atomic_ullong offered[FZ_BUFS]; /* records emitted (not CLOSED) + packets begun */
    atomic_int done;
    atomic_int bad; /* a status that contradicts the documentation */
    char why[256];
    pthread_mutex_t mu;
} fz_shared;

typedef struct fz_writer {
    tracec_buffer_writer bw;
    tracec_writer w, w2;
    tracec_msg pkt, pkt2, child;
    int inited, open; /* open: begun with SUCCESS and not ended */
} fz_writer;

typedef struct fz_worker {
    fz_shared *sh;
    uint64_t rng;
    fz_writer wr[FZ_BUFS];
} fz_worker;

static uint64_t fz_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fz_fail(fz_shared *sh, const char *what, tracec_status_t st) {
    pthread_mutex_lock(&sh->mu);
    if (!atomic_load(&sh->bad)) snprintf(sh->why, sizeof sh->why, "%s: %s", what, ST(st));
    atomic_store(&sh->bad, 1);
    pthread_mutex_unlock(&sh->mu);
}

static int fz_any_open(const fz_worker *k) {
    for (int i = 0; i < FZ_BUFS; i++)
        if (k->wr[i].open) return 1;
    return 0;
}

/* A packet began when its status is anything but "the buffer was not accepting". */
static void fz_count_begin(fz_worker *k, int i, tracec_status_t st) {
    if (st != TRACEC_STATUS_CLOSED && st != TRACEC_STATUS_BUFFER_NOT_FOUND) atomic_fetch_add(&k->sh->offered[i], 1);
}

static void fz_begin(fz_worker *k, int i) {
    fz_writer *x = &k->wr[i];
    tracec_buffer_begin_packet(&x->bw, &x->w, TRACEC_BUFFER_CATEGORY_USER, 1, &x->pkt);
    fz_count_begin(k, i, x->w.status);
    x->open = x->w.status == TRACEC_STATUS_SUCCESS;
}

static void fz_end(fz_worker *k, int i) {
    fz_writer *x = &k->wr[i];
    tracec_status_t st = tracec_buffer_end_packet(&x->bw, &x->w, &x->pkt);
    if (!x->open && st == TRACEC_STATUS_SUCCESS) fz_fail(k->sh, "end of a packet that was not open", st);
    x->open = 0;
}

static void fz_op(fz_worker *k) {
    fz_shared *sh = k->sh;
    uint64_t r = fz_next(&k->rng);
    int i = (int)((r >> 8) % FZ_BUFS);
    fz_writer *x = &k->wr[i];
    static const uint8_t filler[3000];
    if (!x->inited) {
        tracec_status_t st = tracec_buffer_writer_init(&x->bw, sh->b[i], (r >> 20) % 2 ? 0 : 64);
        if (st != TRACEC_STATUS_SUCCESS) fz_fail(sh, "writer_init", st);
        x->inited = 1;
    }
    switch (r % 16) {
        case 0:
        case 1: /* begin */
            if (!x->open) fz_begin(k, i);
            break;
        case 2:
        case 3: /* a small field */
            if (x->open) tracec_msg_put_varint(&x->pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), r);
            break;
        case 4: /* a big field: grow() */
            if (x->open) tracec_msg_put_bytes(&x->pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), filler, 200 + (r >> 32) % 2800);
            break;
        case 5: /* a nested message, well formed */
            if (x->open) {
                tracec_msg_begin_nested(&x->pkt, TRACEC_TAG(11, TRACEC_WIRE_LEN), &x->child);
                tracec_msg_put_varint(&x->child, TRACEC_TAG(1, TRACEC_WIRE_VARINT), r);
                tracec_msg_end_nested(&x->pkt, &x->child);
            }
            break;
        case 6: /* a nested message ended wrongly: never begun, or the packet ended under it */
            if (x->open) {
                tracec_msg never;
                memset(&never, 0, sizeof never);
                if ((r >> 16) & 1) tracec_msg_end_nested(&x->pkt, &never);
                else tracec_msg_begin_nested(&x->pkt, TRACEC_TAG(11, TRACEC_WIRE_LEN), &x->child);
            }
            break;
        case 7:
        case 8: /* end */
            fz_end(k, i);
            break;
        case 9: /* begin again, through the same writer or another one: the open packet is abandoned */
            if (!x->open) break;
            if ((r >> 16) & 1) {
                fz_begin(k, i);
            } else {
                tracec_buffer_begin_packet(&x->bw, &x->w2, TRACEC_BUFFER_CATEGORY_USER, 1, &x->pkt2);
                fz_count_begin(k, i, x->w2.status);
                tracec_status_t st1 = TRACEC_STATUS_BAD_STATE, st2;
                if ((r >> 17) & 1) st1 = tracec_buffer_end_packet(&x->bw, &x->w, &x->pkt);
                st2 = tracec_buffer_end_packet(&x->bw, &x->w2, &x->pkt2);
                if (!((r >> 17) & 1)) st1 = tracec_buffer_end_packet(&x->bw, &x->w, &x->pkt);
                if (st1 != TRACEC_STATUS_BAD_STATE) fz_fail(sh, "end through the abandoned window", st1);
                if (x->w2.status == TRACEC_STATUS_SUCCESS && st2 == TRACEC_STATUS_BAD_STATE)
                    fz_fail(sh, "end of the second packet", st2);
                x->open = 0;
            }
            break;
        case 10: { /* emit */
            uint64_t v[4] = {r, r, r, r};
            tracec_status_t st = tracec_buffer_emit(sh->b[i], TRACEC_BUFFER_CATEGORY_USER, 2, v, 8 + (r >> 40) % 24);
            if (st != TRACEC_STATUS_CLOSED) atomic_fetch_add(&sh->offered[i], 1);
            break;
        }
        case 11: { /* flush: refused while this thread has a packet open */
            tracec_status_t st = (r >> 16) & 1 ? tracec_flush_buffer(sh->b[i]) : tracec_flush_buffer_async(sh->b[i]);
            if ((r >> 16) & 1) {
                tracec_status_t want = fz_any_open(k) ? TRACEC_STATUS_WOULD_DEADLOCK : TRACEC_STATUS_SUCCESS;
                if (st != want) fz_fail(sh, "flush", st);
            } else if (st != TRACEC_STATUS_SUCCESS) {
                fz_fail(sh, "flush_async", st);
            }
            break;
        }
        case 12: /* destroy / stop with a packet open: refused */
            if (fz_any_open(k)) {
                tracec_status_t st = (r >> 16) & 1 ? tracec_destroy_buffer(sh->b[i]) : tracec_stop_context(sh->ctx);
                if (st != TRACEC_STATUS_WOULD_DEADLOCK) fz_fail(sh, "destroy/stop with a packet open", st);
            }
            break;
        case 13: /* release (maybe with a packet open) */
            if ((r >> 16) % 4 == 0) {
                tracec_buffer_writer_release(&x->bw);
                x->inited = 0;
                x->open = 0;
            }
            break;
        default: /* end, or begin, so that packets complete often */
            if (x->open) fz_end(k, i);
            else fz_begin(k, i);
            break;
    }
}

static void *fz_worker_main(void *p) {
    fz_worker *k = (fz_worker *)p;
    for (int n = 0; n < FZ_OPS; n++) fz_op(k);
    /* Leave: release some writers, keep others (the thread exit releases them, open packets included). */
    for (int i = 0; i < FZ_BUFS; i++)
        if (k->wr[i].inited && fz_next(&k->rng) % 2) tracec_buffer_writer_release(&k->wr[i].bw);
    return NULL;
}

static void *fz_controller(void *p) {
    fz_shared *sh = (fz_shared *)p;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    while (!atomic_load(&sh->done)) {
        uint64_t r = fz_next(&rng);
        switch (r % 4) {
            case 0: {
                tracec_status_t st = tracec_stop_context(sh->ctx);
                if (st != TRACEC_STATUS_SUCCESS) fz_fail(sh, "stop", st);
                usleep(200);
                st = tracec_start_context(sh->ctx);
                if (st != TRACEC_STATUS_SUCCESS) fz_fail(sh, "start", st);
                break;
            }
            case 1: {
                tracec_status_t st = tracec_flush_buffer(sh->b[(r >> 8) % FZ_BUFS]);
                if (st != TRACEC_STATUS_SUCCESS) fz_fail(sh, "controller flush", st);
                break;
            }
            default: {
                tracec_buffer_stats_t stats;
                tracec_status_t st = tracec_query_buffer_stats(sh->b[(r >> 8) % FZ_BUFS], &stats);
                if (st != TRACEC_STATUS_SUCCESS && st != TRACEC_STATUS_BUFFER_NOT_FOUND)
                    fz_fail(sh, "controller stats", st);
                break;
            }
        }
        usleep(1000 + (r >> 32) % 2000);
    }
    return NULL;
}

Test(buffer_misuse, random_call_sequences_from_threads_account_for_every_packet, .timeout = 240) {
    static fz_shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    static collector c[FZ_BUFS];
    sh.ctx = started_context();
    tracec_buffer_config_t cfg[FZ_BUFS];
    for (int i = 0; i < FZ_BUFS; i++) {
        collector_init(&c[i]);
        c[i].keep = 0;
        cfg[i] = (tracec_buffer_config_t)TRACEC_BUFFER_CONFIG_INIT;
        cfg[i].callback = collect_cb;
        cfg[i].callback_data = &c[i];
        cfg[i].size = 8192;
        cfg[i].watermark = 4096;
    }
    cfg[0].mode = TRACEC_BUFFERING_MODE_STREAMING;
    cfg[0].policy = TRACEC_BUFFER_POLICY_LOSSLESS;
    cfg[1].mode = TRACEC_BUFFERING_MODE_STREAMING;
    cfg[1].policy = TRACEC_BUFFER_POLICY_DISCARD;
    cfg[1].size = 4096;
    cfg[1].watermark = 4096;
    cfg[2].mode = TRACEC_BUFFERING_MODE_CIRCULAR;
    cfg[2].policy = TRACEC_BUFFER_POLICY_NONE;
    cfg[2].watermark = 0;
    for (int i = 0; i < FZ_BUFS; i++) OK(tracec_create_buffer_with_config(sh.ctx, &cfg[i], &sh.b[i]));
    pthread_t ctl;
    pthread_create(&ctl, NULL, fz_controller, &sh);
    static fz_worker k[FZ_WORKERS];
    for (int round = 0; round < FZ_ROUNDS && !atomic_load(&sh.bad); round++) {
        pthread_t t[FZ_WORKERS];
        for (int j = 0; j < FZ_WORKERS; j++) {
            memset(&k[j], 0, sizeof k[j]);
            k[j].sh = &sh;
            k[j].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(round * FZ_WORKERS + j + 1);
            pthread_create(&t[j], NULL, fz_worker_main, &k[j]);
        }
        for (int j = 0; j < FZ_WORKERS; j++) pthread_join(t[j], NULL);
    }
    atomic_store(&sh.done, 1);
    pthread_join(ctl, NULL);
    cr_assert(!atomic_load(&sh.bad), "%s", sh.why);
    for (int i = 0; i < FZ_BUFS; i++) {
        tracec_buffer_stats_t st = flush_and_stats(sh.b[i]);
        uint64_t offered = atomic_load(&sh.offered[i]);
        cr_assert_eq(accounted(&st), offered,
                     "buffer %d: delivered %llu + dropped %llu + overwritten %llu + refused %llu != offered %llu", i,
                     (unsigned long long)st.delivered, (unsigned long long)st.dropped,
                     (unsigned long long)st.overwritten, (unsigned long long)st.refused,
                     (unsigned long long)offered);
        cr_assert_eq(collector_count(&c[i]), st.delivered, "buffer %d", i);
        cr_assert_eq(st.accepted, st.delivered + st.overwritten, "buffer %d", i);
        cr_assert_gt(st.refused, 0, "buffer %d: misuse happened", i);
        OK(tracec_destroy_buffer(sh.b[i]));
    }
    test_end();
}

/* The header of the record whose window begins at `base`, as a reader of the chunk finds it. */
static tracec_i_blk header_at_base(const uint8_t *base) {
    tracec_i_blk h;
    memcpy(&h, base, sizeof h);
    return h;
}

/* A packet of (cat, kind) begun through bw is marked open; ended, its real header is back-filled.  Its base. */
static uint8_t *ended_packet_is_back_filled(tracec_buffer_writer *bw, uint32_t cat, uint32_t kind) {
    uint8_t rec[40];
    trec_make(rec, sizeof rec, 0, 0);
    tracec_writer w;
    tracec_msg p;
    tracec_buffer_begin_packet(bw, &w, cat, kind, &p);
    uint8_t *base = w.base;
    cr_assert_eq(header_at_base(base).size, TRACEC_I_OPEN_MARK);
    cr_assert_eq(header_at_base(base).body, 0);
    tracec_msg_put_bytes(&p, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, sizeof rec);
    OK(tracec_buffer_end_packet(bw, &w, &p));
    cr_assert(header_at_base(base).size != TRACEC_I_OPEN_MARK && header_at_base(base).body != 0,
              "the record header back-filled");
    return base;
}

/* The same packet failed (a nested message never ended): marked while open, no mark after.  Its base. */
static uint8_t *failed_packet_leaves_no_mark(tracec_buffer_writer *bw, uint32_t cat, uint32_t kind) {
    tracec_writer w;
    tracec_msg p, child;
    tracec_buffer_begin_packet(bw, &w, cat, kind, &p);
    uint8_t *base = w.base;
    cr_assert_eq(header_at_base(base).size, TRACEC_I_OPEN_MARK);
    tracec_msg_begin_nested(&p, TRACEC_TAG(901, TRACEC_WIRE_LEN), &child);
    cr_assert_eq(tracec_buffer_end_packet(bw, &w, &p), TRACEC_STATUS_NESTING_MISMATCH);
    cr_assert_neq(header_at_base(base).size, TRACEC_I_OPEN_MARK, "a failed packet left its mark");
    return base;
}

/* A packet open in a chunk has its record header marked open (what a recorder's salvage counts lost when the
   writer died); ending it writes the real header; a packet that fails, or is abandoned, leaves no mark; one
   that outgrows its chunk takes its mark along. */
Test(buffer_misuse, an_open_packet_is_marked_in_its_chunk_until_it_ends, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    (void)ended_packet_is_back_filled(&bw, TRACEC_BUFFER_CATEGORY_USER, 1);
    (void)failed_packet_leaves_no_mark(&bw, TRACEC_BUFFER_CATEGORY_USER, 1);
    /* abandoned by a second begin: no mark where it was; the new one is marked */
    tracec_writer w, w2;
    tracec_msg p, p2;
    uint8_t *base;
    tracec_buffer_begin_packet(&bw, &w, TRACEC_BUFFER_CATEGORY_USER, 1, &p);
    base = w.base;
    tracec_buffer_begin_packet(&bw, &w2, TRACEC_BUFFER_CATEGORY_USER, 1, &p2);
    cr_assert_neq(header_at_base(base).size, TRACEC_I_OPEN_MARK, "an abandoned packet left its mark");
    cr_assert_eq(header_at_base(w2.base).size, TRACEC_I_OPEN_MARK);
    /* outgrows its chunk: the mark moves with it */
    uint8_t big[8192];
    memset(big, 'x', sizeof big);
    base = w2.base;
    for (int i = 0; i < 4 && w2.base == base; i++)
        tracec_msg_put_bytes(&p2, TRACEC_TAG(902, TRACEC_WIRE_LEN), big, sizeof big);
    cr_assert_neq(w2.base, base, "the packet moved to a chunk of its own");
    cr_assert_neq(header_at_base(base).size, TRACEC_I_OPEN_MARK, "the mark stayed behind");
    cr_assert_eq(header_at_base(w2.base).size, TRACEC_I_OPEN_MARK);
    OK(tracec_buffer_end_packet(&bw, &w2, &p2));
    cr_assert_neq(header_at_base(w2.base).size, TRACEC_I_OPEN_MARK);
    tracec_buffer_writer_release(&bw);
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.delivered, 2, "the first packet and the one that moved");
    test_end();
}

/* A durable packet (ONESHOT, CIRCULAR) is marked open at the durable part's end while it is written; ending it
   writes the real header, failing or abandoning it clears the mark, and a packet begun with no room left for a
   header marks nothing (nothing is written past the part). */
Test(buffer_misuse, an_open_durable_packet_is_marked_until_it_ends, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 65536, 4096);
    const uint32_t dcat = TRACEC_BUFFER_CATEGORY_TRACING, dkind = TRACEC_BUFFER_TRACING_INTERNED_DATA;
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    tracec_writer w, w2;
    tracec_msg p, p2;
    /* ended, then failed: the failed one begins after the ended one */
    uint8_t *first = ended_packet_is_back_filled(&bw, dcat, dkind);
    uint8_t *base = failed_packet_leaves_no_mark(&bw, dcat, dkind);
    cr_assert_gt(base, first);
    /* abandoned by a second begin (of an event): no mark where it was; the event is marked in its chunk */
    tracec_buffer_begin_packet(&bw, &w, dcat, dkind, &p);
    cr_assert_eq(w.base, base);
    cr_assert_eq(header_at_base(base).size, TRACEC_I_OPEN_MARK);
    tracec_buffer_begin_packet(&bw, &w2, TRACEC_BUFFER_CATEGORY_USER, 1, &p2);
    cr_assert_neq(header_at_base(base).size, TRACEC_I_OPEN_MARK, "an abandoned packet left its mark");
    cr_assert_eq(header_at_base(w2.base).size, TRACEC_I_OPEN_MARK);
    OK(tracec_buffer_end_packet(&bw, &w2, &p2));
    /* too large for what is left: fails (BUFFER_FULL), no mark */
    uint8_t big[8192];
    memset(big, 'x', sizeof big);
    tracec_buffer_begin_packet(&bw, &w, dcat, dkind, &p);
    cr_assert_eq(w.base, base);
    tracec_msg_put_bytes(&p, TRACEC_TAG(902, TRACEC_WIRE_LEN), big, sizeof big);
    cr_assert_neq(tracec_buffer_end_packet(&bw, &w, &p), TRACEC_STATUS_SUCCESS);
    cr_assert_neq(header_at_base(base).size, TRACEC_I_OPEN_MARK, "a packet too large left its mark");
    /* the part filled to its last byte (64-byte records), then a begin: no room for a header, nothing marked */
    uint8_t pad[48] = {0};
    tracec_status_t st = TRACEC_STATUS_SUCCESS;
    while (st == TRACEC_STATUS_SUCCESS) st = tracec_buffer_emit(b, dcat, dkind, pad, sizeof pad);
    cr_assert_eq(st, TRACEC_STATUS_BUFFER_FULL);
    tracec_buffer_begin_packet(&bw, &w, dcat, dkind, &p);
    cr_assert_eq(w.ptr, w.end, "no room at the end of the durable part");
    tracec_msg_put_varint(&p, TRACEC_TAG(903, TRACEC_WIRE_VARINT), 1);
    cr_assert_neq(tracec_buffer_end_packet(&bw, &w, &p), TRACEC_STATUS_SUCCESS);
    tracec_buffer_writer_release(&bw);
    test_end();
}
