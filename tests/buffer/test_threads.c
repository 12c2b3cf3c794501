/*
 * test_threads.c - the guarantees that need threads: LOSSLESS
 * exactly-once under N producers and a slow callback (emits and packets),
 * DISCARD accounting, no torn records, flush(wait) completeness, callbacks
 * only on their assigned thread, emit/flush inside a callback, the
 * streaming handshake, and shutdown racing with producers.
 */
#include "buffer_util.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define NPROD 4

typedef struct prod {
    tracec_buffer_id_t b;
    uint32_t id;
    uint64_t count;      /* records to produce (0: until CLOSED) */
    int packets;         /* write through a tracec_buffer_writer */
    size_t max_len;      /* payload sizes cycle in [sizeof(trec), max_len] */
    unsigned big_every;  /* != 0: every big_every-th record is big, in [big_min, max_len]; */
    size_t big_min;      /*        the others are small, in [sizeof(trec), small_max] */
    size_t small_max;
    size_t fixed_len;    /* != 0: every record has this payload size */
    uint64_t ok_after_full; /* accepted after a refusal (ONESHOT: must stay 0 with a fixed size) */
    uint64_t accepted, full, closed, other;
    _Atomic uint64_t last_ok; /* seq + 1 of the last accepted record */
} prod;

/* A packet carrying a trec in field 900 (bytes). */
static tracec_status_t put_packet(tracec_buffer_writer *bw, const uint8_t *rec, size_t len) {
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 9, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 12345);
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), rec, len);
    return tracec_buffer_end_packet(bw, &pw, &pkt);
}

/* The trec inside a delivered packet, or inside a plain record. */
static bool unwrap(const delivered_rec *r, const uint8_t **p, size_t *len) {
    if (r->kind != 9) {
        *p = r->data;
        *len = r->size;
        return true;
    }
    const uint8_t *d = r->data, *e = r->data + r->size;
    if (r->size < 2 || d[0] != 0x0A) return false;
    uint64_t plen = 0; /* a minimal varint */
    int psh = 0;
    for (d++; d < e && (*d & 0x80) && psh < 28; d++, psh += 7) plen |= (uint64_t)(*d & 0x7f) << psh;
    if (d >= e || (*d == 0 && psh > 0)) return false;
    plen |= (uint64_t)*d++ << psh;
    if (plen != (uint64_t)(e - d)) return false;
    if (d + 4 > e || d[0] != 0x40) return false; /* field 8 varint 12345 = 0xB9 0x60 */
    d += 3;
    if (d + 3 > e || d[0] != 0xA2 || d[1] != 0x38) return false; /* tag of field 900, LEN */
    d += 2;
    uint64_t n = 0;
    int sh = 0;
    while (d < e && (*d & 0x80)) n |= (uint64_t)(*d++ & 0x7f) << sh, sh += 7;
    if (d >= e) return false;
    n |= (uint64_t)*d++ << sh;
    if (d + n != e) return false;
    *p = d;
    *len = (size_t)n;
    return true;
}

static void *producer(void *arg) {
    prod *p = (prod *)arg;
    tls_is_producer = 1;
    static _Thread_local uint8_t buf[8192];
    tracec_buffer_writer bw;
    if (p->packets) cr_assert_eq(tracec_buffer_writer_init(&bw, p->b, 0), TRACEC_STATUS_SUCCESS);
    size_t span = p->max_len - sizeof(trec) + 1;
    for (uint64_t seq = 0; p->count == 0 || seq < p->count; seq++) {
        size_t len = sizeof(trec) + (size_t)((seq * 7 + p->id) % span);
        if (p->big_every != 0)
            len = seq % p->big_every == 0
                      ? p->big_min + (size_t)((seq / p->big_every * 613 + p->id * 97) % (p->max_len - p->big_min + 1))
                      : sizeof(trec) + (size_t)((seq * 7 + p->id) % (p->small_max - sizeof(trec) + 1));
        if (p->fixed_len != 0) len = p->fixed_len;
        trec_make(buf, len, p->id, seq);
        tracec_status_t s = p->packets ? put_packet(&bw, buf, len)
                                       : tracec_buffer_emit(p->b, TRACEC_BUFFER_CATEGORY_USER, 1, buf, len);
        if (s == TRACEC_STATUS_SUCCESS) {
            p->accepted++;
            if (p->full != 0) p->ok_after_full++;
            atomic_store(&p->last_ok, seq + 1);
        } else if (s == TRACEC_STATUS_BUFFER_FULL) {
            p->full++;
        } else if (s == TRACEC_STATUS_CLOSED || s == TRACEC_STATUS_BUFFER_NOT_FOUND) {
            p->closed++;
            if (p->count == 0) break;
        } else {
            p->other++;
        }
    }
    if (p->packets) tracec_buffer_writer_release(&bw);
    return NULL;
}

/*
 * n producers into `b`, ids 0..n-1, `count` records each (0: until
 * CLOSED), payloads up to max_len, each emitting (packets 0) or writing
 * packets (1); a test mixing the two sets .packets per producer afterwards.
 */
static void prods_init(prod *ps, int n, tracec_buffer_id_t b, uint64_t count, int packets, size_t max_len) {
    memset(ps, 0, (size_t)n * sizeof *ps);
    for (int i = 0; i < n; i++) {
        ps[i].b = b;
        ps[i].id = (uint32_t)i;
        ps[i].count = count;
        ps[i].packets = packets;
        ps[i].max_len = max_len;
    }
}

static void start_producers(prod *ps, int n, pthread_t *t) {
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, producer, &ps[i]);
}

static void join_producers(pthread_t *t, int n) {
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

/* Until each producer has had `n_ok` records accepted. */
static void wait_accepted(prod *ps, int n, uint64_t n_ok) {
    for (int i = 0; i < n; i++)
        while (atomic_load(&ps[i].last_ok) < n_ok) sched_yield();
}

static void run_producers(prod *ps, int n) {
    pthread_t t[NPROD * 2];
    start_producers(ps, n, t);
    join_producers(t, n);
}

/* LOSSLESS, count-limited producers: every record accepted, none refused. */
static void assert_all_accepted(const prod *ps, int n) {
    for (int i = 0; i < n; i++) {
        cr_assert_eq(ps[i].accepted, ps[i].count, "thread %d: LOSSLESS accepted %llu of %llu (%llu full, %llu other)",
                     i, (unsigned long long)ps[i].accepted, (unsigned long long)ps[i].count,
                     (unsigned long long)ps[i].full, (unsigned long long)ps[i].other);
        cr_assert_eq(ps[i].full + ps[i].other + ps[i].closed, 0);
    }
}

/* What the callbacks of a LOSSLESS run saw: no drop, never two at once, never on a producer. */
static void assert_clean_callbacks(const collector *c) {
    cr_assert_eq(c->last_drop, 0);
    cr_assert_eq(c->concurrent, 0);
    cr_assert_eq(c->on_producer, 0, "callbacks never run on a producer");
}

/*
 * Count-limited producers into a buffer that refuses when full: every
 * record accepted or refused as BUFFER_FULL, every refusal counted
 * (dropped, and the callback's drop count), delivered = accepted and
 * delivered + dropped = produced.  Returns the refusals.
 */
static uint64_t assert_refusals_counted(const collector *c, const prod *ps, int n, const tracec_buffer_stats_t *st) {
    uint64_t full = 0, acc = 0, produced = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(ps[i].accepted + ps[i].full, ps[i].count);
        cr_assert_eq(ps[i].other + ps[i].closed, 0);
        full += ps[i].full;
        acc += ps[i].accepted;
        produced += ps[i].count;
    }
    cr_assert_eq(st->dropped, full, "dropped (%llu) = refusals (%llu)", (unsigned long long)st->dropped,
                 (unsigned long long)full);
    cr_assert_eq(c->n + st->dropped, produced, "delivered + dropped = produced");
    cr_assert_eq(c->n, acc);
    cr_assert_eq(c->last_drop, st->dropped);
    return full;
}

/* Checks every delivered record; fills per-thread counts; asserts per-thread order. */
static void verify(collector *c, prod *ps, int n, bool exactly_once) {
    uint64_t next[NPROD * 2] = {0}, got[NPROD * 2] = {0};
    for (size_t i = 0; i < c->n; i++) {
        const uint8_t *p;
        size_t len;
        cr_assert(unwrap(&c->recs[i], &p, &len), "record %zu: packet framing", i);
        trec r;
        cr_assert(trec_check(p, len, &r), "record %zu is torn or corrupt", i);
        cr_assert_lt(r.thread, (uint32_t)n);
        if (exactly_once)
            cr_assert_eq(r.seq, next[r.thread], "thread %u: got seq %llu, expected %llu", r.thread,
                         (unsigned long long)r.seq, (unsigned long long)next[r.thread]);
        else
            cr_assert_geq(r.seq, next[r.thread], "thread %u: seq went back (duplicate or reordering)", r.thread);
        next[r.thread] = r.seq + 1;
        got[r.thread]++;
    }
    for (int i = 0; i < n; i++)
        cr_assert_eq(got[i], ps[i].accepted, "thread %d: delivered %llu, accepted %llu", i,
                     (unsigned long long)got[i], (unsigned long long)ps[i].accepted);
}

static void lossless_run(int packets) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 16384, 8192, TRACEC_BUFFER_POLICY_LOSSLESS);
    c.slow_us = 300;
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 15000, packets, packets ? 200 : 120);
    run_producers(ps, NPROD);
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.dropped, 0);
    assert_all_accepted(ps, NPROD);
    assert_clean_callbacks(&c);
    verify(&c, ps, NPROD, true);
    cr_assert_gt(st.half_switches, 5, "halves switched under load");
    cr_assert_gt(st.producer_waits, 0, "a slow callback made LOSSLESS producers wait (and the stats say so)");
    collector_free(&c);
    test_end();
}

Test(buffer_threads, lossless_exactly_once_emit, .timeout = 60) { lossless_run(0); }

Test(buffer_threads, lossless_exactly_once_packets, .timeout = 60) { lossless_run(1); }

/*
 * Guarantee 1 for packets far bigger than the writer's `reserve` (256
 * bytes): such a packet outgrows its chunk, and grow() needs a new chunk at
 * a moment when, with a slow callback, both halves are often full.  grow()
 * must then copy the partial packet aside, give its chunk back (the half
 * holding it may be the one the delivery must finish) and wait for room like
 * an emit, never drop.  4 producers, one packet in three big (300 bytes up
 * to a quarter of a half), the others small, into a 16 KiB LOSSLESS buffer
 * (2 KiB chunks) whose callback sleeps: every packet exactly once, in order
 * per producer, whole (checksum), no drop, and the runtime's count of such
 * waits shows the path was taken.
 */
uint64_t tracec_i_buffer_grow_waits(void); /* runtime test hook (runtime/buffer/src/fence.c) */

Test(buffer_threads, lossless_big_packets_wait_never_drop, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 16384, 8192, TRACEC_BUFFER_POLICY_LOSSLESS);
    c.slow_us = 300;
    uint64_t waits0 = tracec_i_buffer_grow_waits();
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 3000, 1, 16384 / 4 - 64); /* the whole record: a quarter of a half */
    for (int i = 0; i < NPROD; i++) {
        ps[i].big_every = 3;
        ps[i].big_min = 300;
        ps[i].small_max = 200;
    }
    run_producers(ps, NPROD);
    tracec_buffer_stats_t st = flush_and_stats(b);
    uint64_t waits = tracec_i_buffer_grow_waits() - waits0;
    cr_assert_eq(st.dropped, 0, "LOSSLESS dropped %llu big packets", (unsigned long long)st.dropped);
    assert_all_accepted(ps, NPROD);
    assert_clean_callbacks(&c);
    verify(&c, ps, NPROD, true);
    cr_assert_eq(st.delivered, (uint64_t)NPROD * 3000u);
    cr_assert_gt(waits, 0, "grow() had to wait for room (%llu half switches)", (unsigned long long)st.half_switches);
    collector_free(&c);
    test_end();
}

/*
 * A packet that can never fit a half is RECORD_TOO_LARGE in LOSSLESS too:
 * not counted, and refused at once even when grow() would otherwise wait
 * (both halves full, the delivery held by a gate).
 */
Test(buffer_threads, lossless_packet_larger_than_a_half_is_an_error, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    gate g;
    gate_init(&g);
    tracec_callback_thread_t thr;
    OK(tracec_create_callback_thread(&thr));
    OK(tracec_assign_callback_thread(b, thr));
    gate_block_thread(ctx, thr, &g);
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *big = calloc(1, (size_t)page * 2);
    OK(tracec_buffer_emit(b, 1, 1, big, (size_t)page));     /* the first half, full */
    OK(tracec_buffer_emit(b, 1, 1, big, (size_t)page / 2)); /* the second, half full */
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    assert_too_large_then_writer_works(b, &bw, big, (size_t)page * 2);
    gate_open(&g);
    tracec_buffer_writer_release(&bw);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 3);
    cr_assert_eq(c.recs[2].size, 4, "0x0A, 1-byte length, field 8 = 5");
    free(big);
    test_end();
}

/*
 * Guarantees 2 and 8 with concurrent producers, through the lock-free
 * "ONESHOT is full" check: 4 producers (two emitting, two writing packets,
 * each with its own fixed record size) fill a small ONESHOT buffer and keep
 * going long after it is full.  A running ONESHOT half only fills up, so
 * for one size the accepted records must be a prefix (nothing accepted after
 * the first refusal), delivered exactly once, in order, whole; every refusal
 * is BUFFER_FULL and counted: delivered + dropped = produced.
 */
Test(buffer_threads, oneshot_full_concurrent_drops_are_exact, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_ONESHOT, 16384, 0);
    static const size_t lens[NPROD] = {32, 56, 40, 120};
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 20000, 0, 0);
    for (int i = 0; i < NPROD; i++) {
        ps[i].packets = i >= 2;
        ps[i].max_len = lens[i];
        ps[i].fixed_len = lens[i];
    }
    run_producers(ps, NPROD);
    tracec_buffer_stats_t st = flush_and_stats(b);
    for (int i = 0; i < NPROD; i++)
        cr_assert_eq(ps[i].ok_after_full, 0, "thread %d: accepted a record after a refusal", i);
    (void)assert_refusals_counted(&c, ps, NPROD, &st);
    cr_assert_gt(c.n, 0);
    verify(&c, ps, NPROD, true);
    collector_free(&c);
    test_end();
}

/* DISCARD: delivered + dropped = produced, exactly; each emit's status says
   whether it was counted.  Big packets exercise grow() moving a partial packet. */
static void discard_run(int packets, size_t max_len) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 16384, 12288, TRACEC_BUFFER_POLICY_DISCARD);
    c.slow_us = 2000;
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 20000, packets, max_len);
    run_producers(ps, NPROD);
    tracec_buffer_stats_t st = flush_and_stats(b);
    uint64_t full = assert_refusals_counted(&c, ps, NPROD, &st);
    cr_assert_gt(full, 0, "a slow callback makes DISCARD drop");
    cr_assert_eq(st.producer_waits, 0, "DISCARD never makes a producer wait");
    cr_assert_eq(c.concurrent, 0);
    verify(&c, ps, NPROD, false);
    collector_free(&c);
    test_end();
}

Test(buffer_threads, discard_accounting_emit, .timeout = 60) { discard_run(0, 100); }

Test(buffer_threads, discard_accounting_packets_with_grow, .timeout = 60) { discard_run(1, 1500); }

/* ---- flush(wait) completeness ------------------------------------------------ */

typedef struct maxseen {
    pthread_mutex_t mu;
    uint64_t upto[NPROD]; /* seq + 1 of the highest record delivered per thread */
} maxseen;

static void track_hook(collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n) {
    (void)id;
    maxseen *m = (maxseen *)c->hook_data;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        trec r;
        if (trec_check(h[i]->payload, h[i]->size, &r) && r.seq + 1 > m->upto[r.thread]) m->upto[r.thread] = r.seq + 1;
    }
    pthread_mutex_unlock(&m->mu);
}

Test(buffer_threads, flush_wait_delivers_everything_emitted_before, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS);
    c.keep = 0;
    maxseen m;
    memset(&m, 0, sizeof m);
    pthread_mutex_init(&m.mu, NULL);
    c.hook = track_hook;
    c.hook_data = &m;
    prod ps[2];
    prods_init(ps, 2, b, 40000, 0, 64);
    pthread_t t[2];
    start_producers(ps, 2, t);
    for (int round = 0; round < 50; round++) {
        uint64_t before[2] = {atomic_load(&ps[0].last_ok), atomic_load(&ps[1].last_ok)};
        OK(tracec_flush_buffer(b));
        pthread_mutex_lock(&m.mu);
        for (int i = 0; i < 2; i++)
            cr_assert_geq(m.upto[i], before[i], "round %d thread %d: %llu accepted before the flush, %llu delivered",
                          round, i, (unsigned long long)before[i], (unsigned long long)m.upto[i]);
        pthread_mutex_unlock(&m.mu);
    }
    join_producers(t, 2);
    test_end();
}

/* ---- callback threads --------------------------------------------------------- */

Test(buffer_threads, callbacks_run_only_on_their_assigned_thread, .timeout = 60) {
    tracec_context_id_t ctx = started_context();
    tracec_callback_thread_t t1, t2;
    OK(tracec_create_callback_thread(&t1));
    OK(tracec_create_callback_thread(&t2));
    cr_assert_neq(t1.handle, 0);
    cr_assert_neq(t1.handle, t2.handle);
    collector c[3];
    tracec_buffer_id_t b[3];
    for (int i = 0; i < 3; i++) {
        collector_init(&c[i]);
        c[i].keep = 0;
        OK(tracec_create_buffer(ctx, 8192, 1024, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c[i], &b[i]));
    }
    OK(tracec_assign_callback_thread(b[1], t1));
    OK(tracec_assign_callback_thread(b[2], t2));
    prod ps[3];
    memset(ps, 0, sizeof ps);
    for (int i = 0; i < 3; i++) {
        ps[i].b = b[i];
        ps[i].id = 0;
        ps[i].count = 5000;
        ps[i].packets = i == 2;
        ps[i].max_len = 64;
    }
    run_producers(ps, 3);
    for (int i = 0; i < 3; i++) {
        OK(tracec_flush_buffer(b[i]));
        cr_assert_eq(c[i].n, 5000);
        cr_assert_eq(c[i].wrong_thread, 0, "buffer %d: every callback on one thread", i);
        cr_assert_eq(c[i].on_producer, 0);
        cr_assert(!pthread_equal(c[i].cb_thread, pthread_self()));
    }
    cr_assert(!pthread_equal(c[0].cb_thread, c[1].cb_thread));
    cr_assert(!pthread_equal(c[1].cb_thread, c[2].cb_thread));
    cr_assert(!pthread_equal(c[0].cb_thread, c[2].cb_thread));
    test_end();
}

/* ---- re-entrancy: emit and flush from inside a callback ------------------------ */

typedef struct reenter {
    atomic_int ran;
    uint64_t ok, refused, other;
    tracec_status_t flush_sync, flush_async, destroy, emit_full_status, big_packet_status;
    tracec_buffer_id_t other_buf;
    tracec_status_t emit_other;
} reenter;

static void reenter_hook(collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n) {
    (void)h, (void)n;
    reenter *r = (reenter *)c->hook_data;
    if (atomic_exchange(&r->ran, 1)) return;
    /* Fill the buffer from its own callback: must never block. */
    uint64_t v[4] = {0};
    /*
     * A big packet that outgrows its chunk when both halves are full (the
     * active one filled here, the other being delivered by this very
     * callback): grow() must not wait on a callback thread, it refuses with
     * WOULD_DEADLOCK and counts.  The active half is empty at this point
     * (the flush switched halves); 112 records of 32 bytes leave 512 bytes,
     * room for one chunk (reserve 280) but not for the packet.
     */
    for (int i = 0; i < 112; i++) {
        tracec_status_t s = tracec_buffer_emit(id, TRACEC_BUFFER_CATEGORY_USER, 77, v, sizeof v);
        if (s == TRACEC_STATUS_SUCCESS) r->ok++;
        else r->other++;
    }
    tracec_buffer_writer bbw;
    if (tracec_buffer_writer_init(&bbw, id, 0) == TRACEC_STATUS_SUCCESS) {
        static uint8_t big[1500];
        r->big_packet_status = put_bytes_packet(&bbw, 1, 1, big, sizeof big);
        tracec_buffer_writer_release(&bbw);
    }
    for (int i = 0; i < 5000; i++) {
        tracec_status_t s = tracec_buffer_emit(id, TRACEC_BUFFER_CATEGORY_USER, 77, v, sizeof v);
        if (s == TRACEC_STATUS_SUCCESS) r->ok++;
        else if (s == TRACEC_STATUS_WOULD_DEADLOCK) r->refused++;
        else r->other++;
    }
    r->flush_sync = tracec_flush_buffer(id);
    r->flush_async = tracec_flush_buffer_async(id);
    r->destroy = tracec_destroy_buffer(id);
    r->emit_other = tracec_buffer_emit(r->other_buf, 1, 1, v, 8);
    tracec_buffer_writer bw;
    if (tracec_buffer_writer_init(&bw, id, 0) == TRACEC_STATUS_SUCCESS) {
        tracec_writer pw;
        tracec_msg pkt;
        tracec_buffer_begin_packet(&bw, &pw, 1, 1, &pkt);
        tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 1);
        r->emit_full_status = tracec_buffer_end_packet(&bw, &pw, &pkt);
        tracec_buffer_writer_release(&bw);
    }
}

Test(buffer_threads, emit_and_flush_inside_callback_never_deadlock, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c, c2;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    collector_init(&c2);
    reenter r;
    memset(&r, 0, sizeof r);
    c.hook = reenter_hook;
    c.hook_data = &r;
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c2, &r.other_buf));
    uint64_t v = 1;
    OK(tracec_buffer_emit(b, 1, 1, &v, 8));
    OK(tracec_flush_buffer(b));
    cr_assert_eq(atomic_load(&r.ran), 1);
    cr_assert_gt(r.ok, 0, "a callback can emit into free space");
    cr_assert_gt(r.refused, 0, "with no space it is refused, not blocked");
    cr_assert_eq(r.other, 0);
    cr_assert_eq(r.flush_sync, TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(r.flush_async, TRACEC_STATUS_SUCCESS);
    cr_assert_eq(r.destroy, TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(r.emit_other, TRACEC_STATUS_SUCCESS);
    cr_assert_eq(r.emit_full_status, TRACEC_STATUS_WOULD_DEADLOCK);
    cr_assert_eq(r.big_packet_status, TRACEC_STATUS_WOULD_DEADLOCK, "grow() in a callback: %s",
                 ST(r.big_packet_status));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, r.refused + 2, "each refusal was counted");
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 1 + r.ok, "what the callback emitted is delivered");
    test_end();
}

/* ---- the streaming handshake --------------------------------------------------- */

typedef struct handshake {
    atomic_int changed;
} handshake;

static uint64_t digest(tracec_record_header_t **h, size_t n) {
    uint64_t d = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = (const uint8_t *)h[i]->payload;
        for (size_t k = 0; k < h[i]->size; k++) d = (d ^ p[k]) * 1099511628211ull;
    }
    return d;
}

static void handshake_hook(collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n) {
    (void)id;
    handshake *hs = (handshake *)c->hook_data;
    uint64_t before = digest(h, n);
    usleep(1000); /* producers keep writing meanwhile */
    if (digest(h, n) != before) atomic_store(&hs->changed, 1);
}

Test(buffer_threads, streaming_half_is_stable_while_delivered, .timeout = 60) {
    for (int policy = TRACEC_BUFFER_POLICY_DISCARD; policy <= TRACEC_BUFFER_POLICY_LOSSLESS; policy++) {
        tracec_context_id_t ctx;
        collector c;
        tracec_buffer_id_t b = collected_buffer(&ctx, &c, 8192, 4096, (tracec_buffer_policy_t)policy);
        c.keep = 0;
        handshake hs;
        atomic_init(&hs.changed, 0);
        c.hook = handshake_hook;
        c.hook_data = &hs;
        prod ps[2];
        prods_init(ps, 2, b, 20000, 0, 100);
        ps[1].packets = 1;
        run_producers(ps, 2);
        tracec_buffer_stats_t st = flush_and_stats(b);
        cr_assert_eq(atomic_load(&hs.changed), 0, "a half changed between save request and saved reply");
        cr_assert_eq(c.concurrent, 0, "one outstanding save at a time");
        if (policy == TRACEC_BUFFER_POLICY_DISCARD) {
            cr_assert_gt(st.dropped, 0, "both halves full: records dropped and counted");
            cr_assert_eq(c.n + st.dropped, 40000u);
        } else {
            cr_assert_eq(st.dropped, 0);
            cr_assert_eq(c.n, 40000u);
        }
        OK(tracec_destroy_context(ctx));
        collector_forget(&c);
    }
    test_end();
}

/* ---- the chunk handover under fire ---------------------------------------------- */

/* Runtime test hook (buffer.c): the handover protocol of buffers created next. */
int tracec_i_buffer_membarrier(int want);

typedef struct flusher {
    tracec_buffer_id_t b;
    atomic_int stop;
    uint64_t flushes, failed; /* checked by the test's thread (Criterion asserts leak off it) */
    atomic_int done;          /* at least one flush returned */
} flusher;

static void *flusher_main(void *arg) {
    flusher *f = (flusher *)arg;
    while (!atomic_load(&f->stop)) {
        tracec_status_t s = (f->flushes & 1) ? tracec_flush_buffer(f->b) : tracec_flush_buffer_async(f->b);
        if (s != TRACEC_STATUS_SUCCESS) f->failed++;
        f->flushes++;
        atomic_store(&f->done, 1);
    }
    return NULL;
}

/*
 * The steal/commit race (writer: busy = 1, then look at stolen; delivery:
 * stolen = 1, then wait for busy == 0), hammered: 4 producers write small
 * packets through the inline fast path while the delivery steals their
 * chunks again and again (a one-page buffer with watermark 0, so every chunk
 * requests a delivery and every delivery switches halves, plus a thread
 * flushing in a loop).  A lost race shows up as a packet written into a
 * chunk already delivered or reset: lost, duplicated, or torn.  Every
 * accepted packet must arrive exactly once, in order, whole.  Run with the
 * asymmetric fence (membarrier) and with the seq_cst fallback.
 */
static void handover_hammer(int asym) {
    int mode = tracec_i_buffer_membarrier(asym);
    if (!asym) cr_assert_eq(mode, 0, "the seq_cst fallback can always be chosen");
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS);
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 20000, 1, 64);
    flusher f = {b, 0, 0, 0, 0};
    pthread_t ft;
    pthread_create(&ft, NULL, flusher_main, &f);
    run_producers(ps, NPROD);
    while (atomic_load(&f.done) == 0) sched_yield(); /* on a loaded machine the flusher may start late */
    atomic_store(&f.stop, 1);
    pthread_join(ft, NULL);
    cr_assert_eq(f.failed, 0, "every flush succeeded");
    cr_assert_gt(f.flushes, 0);
    tracec_buffer_stats_t st = flush_and_stats(b);
    cr_assert_eq(st.dropped, 0);
    assert_all_accepted(ps, NPROD);
    verify(&c, ps, NPROD, true);
    cr_assert_eq(st.delivered, (uint64_t)NPROD * 20000u);
    cr_assert_gt(st.half_switches, 100, "chunks were stolen again and again (%llu switches)",
                 (unsigned long long)st.half_switches);
    collector_free(&c);
    test_end();
}

Test(buffer_threads, handover_hammer_asymmetric_fence, .timeout = 60) { handover_hammer(1); }

Test(buffer_threads, handover_hammer_seq_cst_fallback, .timeout = 60) { handover_hammer(0); }

/*
 * CIRCULAR under load: 4 producers (half emit, half packets, one packet in
 * four big enough to outgrow its chunk) wrap a small CIRCULAR buffer while
 * a thread flushes in a loop and the callback is slow.  No record is
 * refused (the oldest are overwritten; a producer that meets a delivery
 * locating records waits, or parks its open packet, briefly), every
 * delivered record is whole and in order per producer, nothing is delivered
 * twice, and delivered + overwritten = produced.
 */
Test(buffer_threads, circular_wraps_under_producers_and_flushes, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 8192, 0);
    c.slow_us = 100;
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 20000, 0, 1200);
    for (int i = 0; i < NPROD; i++) {
        ps[i].packets = i % 2;
        ps[i].big_every = 4;
        ps[i].big_min = 400;
        ps[i].small_max = 120;
    }
    flusher f = {b, 0, 0, 0, 0};
    pthread_t ft;
    pthread_create(&ft, NULL, flusher_main, &f);
    run_producers(ps, NPROD);
    atomic_store(&f.stop, 1);
    pthread_join(ft, NULL);
    cr_assert_eq(f.failed, 0, "every flush succeeded");
    tracec_buffer_stats_t st = flush_and_stats(b);
    assert_all_accepted(ps, NPROD);
    cr_assert_eq(st.dropped, 0, "CIRCULAR refused %llu records", (unsigned long long)st.dropped);
    cr_assert_gt(st.overwritten, 0, "the buffer wrapped over undelivered records");
    uint64_t next[NPROD] = {0};
    for (size_t i = 0; i < c.n; i++) {
        const uint8_t *p;
        size_t len;
        cr_assert(unwrap(&c.recs[i], &p, &len), "record %zu: packet framing", i);
        trec r;
        cr_assert(trec_check(p, len, &r), "record %zu is torn or corrupt", i);
        cr_assert_lt(r.thread, (uint32_t)NPROD);
        cr_assert_geq(r.seq, next[r.thread], "thread %u: seq %llu again or out of order", r.thread,
                      (unsigned long long)r.seq);
        next[r.thread] = r.seq + 1;
    }

    cr_assert_eq(c.n + st.overwritten, (uint64_t)NPROD * 20000u, "delivered %zu + overwritten %llu = produced",
                 c.n, (unsigned long long)st.overwritten);
    cr_assert_eq(c.concurrent, 0);
    collector_free(&c);
    test_end();
}

/* ---- shutdown ------------------------------------------------------------------ */

Test(buffer_threads, finalize_racing_with_producers_loses_no_accepted_record, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 8192, 8192, TRACEC_BUFFER_POLICY_LOSSLESS);
    c.slow_us = 200;
    prod ps[NPROD];
    prods_init(ps, NPROD, b, 0 /* until CLOSED */, 0, 80);
    for (int i = 0; i < NPROD; i++) ps[i].packets = i % 2;
    pthread_t t[NPROD];
    start_producers(ps, NPROD, t);
    /* Let them run until each has some records accepted. */
    wait_accepted(ps, NPROD, 500);
    OK(tracec_finalize());
    join_producers(t, NPROD);
    for (int i = 0; i < NPROD; i++) {
        cr_assert_eq(ps[i].closed, 1, "each producer saw CLOSED");
        cr_assert_eq(ps[i].full + ps[i].other, 0);
    }
    verify(&c, ps, NPROD, true);
    uint64_t v = 1;
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &v, 8), TRACEC_STATUS_CLOSED);
    cr_assert_eq(tracec_flush_buffer(b), TRACEC_STATUS_CLOSED);
    OK(tracec_finalize()); /* idempotent */
    tracec_context_id_t c2;
    cr_assert_eq(tracec_create_context(&c2), TRACEC_STATUS_BAD_STATE);
    test_end();
}

/*
 * A stop counts every loss of its run before it returns: LOSSLESS with a
 * 1 ms cap, a slow delivery, big packets that grow() parks, and producers
 * writing until CLOSED.  The counters read right after the stop are the
 * final ones (a recorder publishes them to its trace then): a capped wait
 * that ran out as the stop woke it, or a parked packet the stop closed,
 * was counted after the stop had returned.
 */
Test(buffer_threads, stop_counts_every_loss_before_it_returns, .timeout = 60) {
    tracec_context_id_t ctx = started_context();
    collector c;
    collector_init(&c);
    c.keep = 0;
    c.slow_us = 1000; /* about the cap: some waits run out, some are woken */
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.size = 16384;
    cfg.watermark = 8192;
    cfg.policy = TRACEC_BUFFER_POLICY_LOSSLESS;
    cfg.max_wait_ms = 1;
    cfg.callback = collect_cb;
    cfg.callback_data = &c;
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    uint64_t parks0 = tracec_i_buffer_grow_waits(), losses = 0;
    for (int round = 0; round < 40; round++) {
        prod ps[NPROD];
        prods_init(ps, NPROD, b, 0 /* until CLOSED */, 1, 16384 / 4 - 64);
        for (int i = 0; i < NPROD; i++) {
            ps[i].big_every = 2;
            ps[i].big_min = 1500;
            ps[i].small_max = 200;
        }
        pthread_t t[NPROD];
        start_producers(ps, NPROD, t);
        wait_accepted(ps, NPROD, 20);
        OK(tracec_stop_context(ctx));
        tracec_buffer_stats_t s1, s2;
        OK(tracec_query_buffer_stats(b, &s1));
        join_producers(t, NPROD);
        OK(tracec_query_buffer_stats(b, &s2));
        cr_assert(s1.accepted == s2.accepted && s1.dropped == s2.dropped && s1.refused == s2.refused &&
                      s1.overwritten == s2.overwritten,
                  "round %d: counted after the stop returned: accepted %llu -> %llu, dropped %llu -> %llu, "
                  "refused %llu -> %llu",
                  round, (unsigned long long)s1.accepted, (unsigned long long)s2.accepted,
                  (unsigned long long)s1.dropped, (unsigned long long)s2.dropped, (unsigned long long)s1.refused,
                  (unsigned long long)s2.refused);
        cr_assert_eq(s2.delivered, s2.accepted, "round %d: the stop delivered every accepted packet", round);
        losses = s2.dropped + s2.refused;
        OK(tracec_start_context(ctx));
    }
    cr_assert_gt(tracec_i_buffer_grow_waits() - parks0, 0, "grow() parked packets");
    cr_assert_gt(losses, 0, "the 1 ms cap dropped packets");
    OK(tracec_stop_context(ctx));
    collector_free(&c);
    test_end();
}

Test(buffer_threads, destroy_racing_with_producers, .timeout = 60) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 8192, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    prod ps[2];
    prods_init(ps, 2, b, 0 /* until CLOSED */, 0, 64);
    ps[1].packets = 1;
    pthread_t t[2];
    start_producers(ps, 2, t);
    wait_accepted(ps, 2, 300);
    OK(tracec_destroy_buffer(b));
    pthread_mutex_lock(&c.mu);
    c.after_destroy = 1;
    pthread_mutex_unlock(&c.mu);
    join_producers(t, 2);
    cr_assert_eq(c.called_after_destroy, 0, "no callback after destroy returned");
    verify(&c, ps, 2, true);
    test_end();
}

/* ---- the callback thread's scheduling hint ----------------------------------- */

/* sched_getattr(2)'s result (glibc has no wrapper). */
struct sched_attr_t {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

static bool my_sched(struct sched_attr_t *a) {
    memset(a, 0, sizeof *a);
    return syscall(SYS_sched_getattr, 0, a, (unsigned)sizeof *a, 0u) == 0;
}

static void slice_hook(collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n) {
    (void)id, (void)h, (void)n;
    (void)my_sched((struct sched_attr_t *)c->hook_data);
}

/*
 * A callback thread asks the scheduler for a 100 us slice (docs/buffers.md:
 * it must run soon after a producer kicks it, or LOSSLESS producers wait),
 * and changes nothing else: started from a thread with nice 5, it keeps
 * nice 5 and SCHED_OTHER.  On a kernel that reports a fair-share slice
 * (EEVDF, Linux 6.6+), the callback runs with 100 us while this thread
 * keeps the default.
 */
Test(buffer_threads, callback_thread_asks_for_a_short_slice, .timeout = 30) {
    cr_assert_eq(setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5), 0);
    struct sched_attr_t mine;
    cr_assert(my_sched(&mine));
    cr_assert_eq(mine.sched_nice, 5);
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS);
    struct sched_attr_t seen;
    memset(&seen, 0xff, sizeof seen);
    c.hook = slice_hook;
    c.hook_data = &seen;
    uint64_t v = 1;
    OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 7, &v, sizeof v));
    OK(tracec_flush_buffer(b));
    cr_assert(collector_wait(&c, 1));
    cr_assert_eq(seen.sched_policy, (uint32_t)SCHED_OTHER);
    cr_assert_eq(seen.sched_nice, 5, "the callback thread kept its nice value (%d)", seen.sched_nice);
    if (mine.sched_runtime == 0) {
        fprintf(stderr, "note: this kernel reports no fair-share slice; the hint cannot be checked\n");
    } else {
        cr_assert_eq(seen.sched_runtime, 100000u, "callback thread slice %llu ns (this thread: %llu ns)",
                     (unsigned long long)seen.sched_runtime, (unsigned long long)mine.sched_runtime);
        cr_assert_neq(mine.sched_runtime, 100000u);
    }
    collector_free(&c);
    test_end();
}
