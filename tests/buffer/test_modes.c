/*
 * test_modes.c - Fuchsia's buffering modes and dispositions: ONESHOT
 * keeps exactly the first records; CIRCULAR keeps the durable part and
 * every reference resolves after many wraps; the three start dispositions;
 * several start/stop runs in one session.
 */
#include "buffer_util.h"

/* An interned string: durable record {id, name}. */
typedef struct interned {
    uint64_t id;
    char name[16];
} interned;

/* An event referencing an interned id. */
typedef struct event {
    uint64_t seq;
    uint64_t name_id;
    uint64_t epoch;
} event;

Test(buffer_modes, oneshot_keeps_exactly_the_first_records, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_ONESHOT, 4096, 0);
    long page = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)page / 8u;
    uint64_t accepted = 0, refused = 0;
    for (uint64_t i = 0; i < cap + 300; i++) {
        tracec_status_t s = tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &i, 8);
        if (s == TRACEC_STATUS_SUCCESS) {
            cr_assert_eq(refused, 0, "once full, ONESHOT never accepts again");
            accepted++;
        } else {
            cr_assert_eq(s, TRACEC_STATUS_BUFFER_FULL);
            refused++;
        }
    }
    cr_assert_eq(accepted, cap);
    cr_assert_eq(refused, 300);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), cap);
    for (size_t i = 0; i < cap; i++) {
        uint64_t v;
        memcpy(&v, c.recs[i].data, 8);
        cr_assert_eq(v, i, "kept record %zu is the %zu-th produced", i, i);
    }
    cr_assert_eq(c.last_drop, 300);
    /* A second flush delivers nothing new; the space stays used. */
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), cap);
    uint64_t x = 1;
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &x, 8), TRACEC_STATUS_BUFFER_FULL);
    OK(tracec_stop_context(ctx));
    cr_assert_eq(collector_count(&c), cap);
    test_end();
}

Test(buffer_modes, oneshot_packets_keep_the_first, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_ONESHOT, 8192, 0);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    uint64_t accepted = 0, first_refused = 0;
    for (uint64_t i = 0; i < 2000; i++) {
        tracec_writer pw;
        tracec_msg pkt;
        tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 1, &pkt);
        tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), i);
        tracec_status_t s = tracec_buffer_end_packet(&bw, &pw, &pkt);
        if (s == TRACEC_STATUS_SUCCESS) {
            cr_assert_eq(first_refused, 0);
            accepted++;
        } else {
            cr_assert_eq(s, TRACEC_STATUS_BUFFER_FULL);
            if (!first_refused) first_refused = i;
        }
    }
    cr_assert_gt(accepted, 100);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 2000 - accepted);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), accepted);
    for (size_t i = 0; i < accepted; i++) {
        /* 0x0A, 1-byte length, then field 8 varint i */
        const uint8_t *p = c.recs[i].data;
        cr_assert_eq(p[0], 0x0A);
        cr_assert_eq(p[2], 0x40);
        uint64_t v = 0;
        int sh = 0;
        const uint8_t *q = p + 3;
        do {
            v |= (uint64_t)(*q & 0x7f) << sh;
            sh += 7;
        } while (*q++ & 0x80);
        cr_assert_eq(v, i);
    }
    tracec_buffer_writer_release(&bw);
    test_end();
}

/*
 * CIRCULAR: intern 16 names in the durable part, then write many events
 * referencing them so the non-durable part wraps many times.  The kept
 * events are the newest ones, contiguous, every reference resolves, and
 * kept + overwritten = produced.
 */
static void circular_run(bool packets) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    for (uint64_t i = 0; i < 16; i++) {
        interned in = {i, {0}};
        snprintf(in.name, sizeof in.name, "name%llu", (unsigned long long)i);
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &in, sizeof in));
    }
    const uint64_t produced = 20000;
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    for (uint64_t i = 0; i < produced; i++) {
        event e = {i, i % 16, 0};
        if (packets) {
            OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &e, sizeof e));
        } else {
            OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &e, sizeof e));
        }
    }
    OK(tracec_flush_buffer(b));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_gt(st.half_switches, 10, "the buffer wrapped many times (%llu)", (unsigned long long)st.half_switches);
    size_t n = collector_count(&c);
    bool names[16] = {false};
    size_t events = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        delivered_rec *r = &c.recs[i];
        if (r->kind == TRACEC_BUFFER_TRACING_INTERNED_DATA) {
            cr_assert_eq(events, 0, "durable records come first");
            interned in;
            memcpy(&in, r->data, sizeof in);
            names[in.id] = true;
            continue;
        }
        event e;
        if (packets) {
            /* 0x0A, 1-byte length, 2-byte tag of field 900, 1-byte length, the event */
            cr_assert_eq(r->size, 2 + 2 + 1 + sizeof e);
            memcpy(&e, r->data + 5, sizeof e);
        } else {
            memcpy(&e, r->data, sizeof e);
        }
        cr_assert(names[e.name_id], "event %llu references an interned name that is kept",
                  (unsigned long long)e.seq);
        if (events > 0) cr_assert_eq(e.seq, prev + 1, "kept events are contiguous");
        prev = e.seq;
        events++;
    }
    for (int i = 0; i < 16; i++) cr_assert(names[i], "durable record %d survived the wraps", i);
    cr_assert_eq(prev, produced - 1, "the newest event is kept");
    cr_assert_eq(events + st.overwritten, produced, "kept %zu + overwritten %llu = produced", events,
                 (unsigned long long)st.overwritten);
    cr_assert_eq(st.dropped, 0);
    tracec_buffer_writer_release(&bw);
    test_end();
}

Test(buffer_modes, circular_keeps_durable_and_references_resolve, .timeout = 30) { circular_run(false); }

Test(buffer_modes, circular_packets_keep_durable_and_references_resolve, .timeout = 30) { circular_run(true); }

/* Holds the first callback call of a collector until the test opens the gate. */
static void hold_first_call(collector *c, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n) {
    (void)id, (void)h, (void)n;
    gate *g = (gate *)c->hook_data;
    pthread_mutex_lock(&g->mu);
    int first = !g->entered;
    g->entered = 1;
    pthread_cond_broadcast(&g->cv);
    while (first && !g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static event make_event(uint64_t seq) {
    event e = {seq, seq % 16, seq * 0x9E3779B97F4A7C15ull};
    return e;
}

/*
 * CIRCULAR while a callback is slow: a flush delivers the first 1,000
 * events and its callback is held; meanwhile 20,000 more events wrap the
 * halves many times.  Every one is accepted (the oldest are overwritten,
 * none is refused), the held callback still reads its records whole (they
 * were copied out before it ran), and the second delivery ends with the
 * newest event: delivered + overwritten = produced.
 */
static void circular_slow_callback_run(bool packets) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    gate g;
    gate_init(&g);
    c.hook = hold_first_call;
    c.hook_data = &g;
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    const uint64_t first = 1000, produced = 21000;
    for (uint64_t i = 0; i < produced; i++) {
        if (i == first) {
            OK(tracec_flush_buffer_async(b));
            gate_wait_entered(&g);
        }
        event e = make_event(i);
        if (packets)
            OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &e, sizeof e));
        else
            OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &e, sizeof e));
    }
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_gt(st.half_switches, 20, "the halves wrapped while the callback was held (%llu)",
                 (unsigned long long)st.half_switches);
    gate_open(&g);
    OK(tracec_flush_buffer(b));
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0, "CIRCULAR refused %llu records", (unsigned long long)st.dropped);
    size_t n = collector_count(&c);
    cr_assert_gt(n, 0);
    uint64_t prev = 0;
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        event e;
        size_t off = packets ? 5 : 0; /* 0x0A, 1-byte length, 2-byte tag, 1-byte length */
        cr_assert_eq(c.recs[i].size, off + sizeof e);
        memcpy(&e, c.recs[i].data + off, sizeof e);
        event want = make_event(e.seq);
        cr_assert(e.seq < produced && e.name_id == want.name_id && e.epoch == want.epoch,
                  "record %zu is torn (seq %llu)", i, (unsigned long long)e.seq);
        if (i == 0 || e.seq != prev + 1) {
            runs++;
            cr_assert(i == 0 || e.seq > prev, "records go forward");
            if (i > 0) cr_assert_eq(prev, first - 1, "the held delivery ends with the last event before it");
        }
        prev = e.seq;
    }
    cr_assert_leq(runs, 2, "two deliveries, each a contiguous run (%zu runs)", runs);
    cr_assert_eq(prev, produced - 1, "the newest event is kept");
    cr_assert_eq(n + st.overwritten, produced, "delivered %zu + overwritten %llu = produced", n,
                 (unsigned long long)st.overwritten);
    tracec_buffer_writer_release(&bw);
    test_end();
}

Test(buffer_modes, circular_overwrites_while_a_callback_is_slow, .timeout = 30) {
    circular_slow_callback_run(false);
}

Test(buffer_modes, circular_packets_overwrite_while_a_callback_is_slow, .timeout = 30) {
    circular_slow_callback_run(true);
}

/*
 * CIRCULAR, a packet that outgrows its chunk when the active half is full
 * and its own chunk sits in the other half (the one a wrap would
 * overwrite): grow() cannot wrap over its own partial packet, so it parks
 * it (copies it aside, gives the chunk back), wraps, and goes on in a new
 * chunk.  The packet is accepted and delivered whole; nothing is dropped.
 */
uint64_t tracec_i_buffer_grow_waits(void); /* runtime test hook (runtime/buffer/src/fence.c) */

Test(buffer_modes, circular_packet_outgrowing_a_chunk_in_the_other_half_parks, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    /* P opens in a chunk of half 0. */
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt);
    /* 8-byte records fill half 0 and wrap into half 1 ... */
    tracec_buffer_stats_t st;
    uint64_t v = 0;
    do {
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &v, sizeof v));
        v++;
        OK(tracec_query_buffer_stats(b, &st));
    } while (st.half_switches == 0);
    /* ... and fill half 1 exactly (4096 bytes: 512 records), without a second wrap. */
    for (int i = 1; i < 512; i++, v++) OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &v, sizeof v));
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.half_switches, 1);
    /* P now outgrows its chunk: no room in half 1, and its chunk is in half 0. */
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 3);
    uint64_t parks0 = tracec_i_buffer_grow_waits();
    tracec_msg_put_bytes(&pkt, TRACEC_TAG(900, TRACEC_WIRE_LEN), data, sizeof data);
    OK(tracec_buffer_end_packet(&bw, &pw, &pkt));
    cr_assert_eq(tracec_i_buffer_grow_waits() - parks0, 1, "grow() parked the packet once");
    OK(tracec_flush_buffer(b));
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0);
    cr_assert_eq(st.half_switches, 2, "the park wrapped over half 0");
    size_t n = collector_count(&c);
    cr_assert_gt(n, 0);
    delivered_rec *last = &c.recs[n - 1];
    /* 0x0A, 2-byte length (1004), tag of field 900 (2 bytes), length 1000 (2 bytes), the data */
    cr_assert_eq(last->size, 3 + 2 + 2 + sizeof data);
    cr_assert_eq(last->data[0], 0x0A);
    cr_assert_eq(last->data[1], 0x80 | (1004 & 0x7f));
    cr_assert_eq(last->data[2], 1004 >> 7);
    cr_assert_eq(memcmp(last->data + 7, data, sizeof data), 0, "the parked packet arrived whole");
    cr_assert_eq(n + st.overwritten, (size_t)v + 1, "delivered %zu + overwritten %llu = produced %llu", n,
                 (unsigned long long)st.overwritten, (unsigned long long)v + 1);
    tracec_buffer_writer_release(&bw);
    test_end();
}

/* A durable packet written through the writer goes to the durable part. */
Test(buffer_modes, durable_packets, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 64));
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &pkt);
    tracec_msg_put_cstr(&pkt, TRACEC_TAG(12, TRACEC_WIRE_LEN), "interned-name");
    OK(tracec_buffer_end_packet(&bw, &pw, &pkt));
    for (uint64_t i = 0; i < 5000; i++) {
        tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, &pkt);
        tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), i);
        OK(tracec_buffer_end_packet(&bw, &pw, &pkt));
    }
    OK(tracec_flush_buffer(b));
    cr_assert_gt(collector_count(&c), 1);
    cr_assert_eq(c.recs[0].kind, TRACEC_BUFFER_TRACING_INTERNED_DATA);
    cr_assert_eq(memcmp(c.recs[0].data + 4, "interned-name", 13), 0); /* 0x0A, length, tag 12, length */
    tracec_buffer_writer_release(&bw);
    test_end();
}

/* ---- dispositions -------------------------------------------------------------- */

static size_t fill(tracec_buffer_id_t b, uint64_t base) {
    size_t n = 0;
    for (uint64_t i = base;; i++) {
        tracec_status_t s = tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &i, 8);
        if (s != TRACEC_STATUS_SUCCESS) {
            cr_assert_eq(s, TRACEC_STATUS_BUFFER_FULL);
            return n;
        }
        n++;
    }
}

static size_t fill_durable(tracec_buffer_id_t b) {
    size_t n = 0;
    for (uint64_t i = 10000;; i++) {
        tracec_status_t s =
            tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &i, 8);
        if (s != TRACEC_STATUS_SUCCESS) return n;
        n++;
    }
}

Test(buffer_modes, dispositions_oneshot, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_ONESHOT, 4096, 4096);
    long page = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)page / 8u;
    size_t dcap = (size_t)page / 24u; /* 16-byte header + 8-byte payload */
    uint64_t epoch0, epoch;
    OK(tracec_buffer_epoch(b, &epoch0));

    /* Run 1: one durable record, three events. */
    uint64_t d = 99;
    OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &d, 8));
    for (uint64_t i = 0; i < 3; i++) OK(tracec_buffer_emit(b, 1, 1, &i, 8));
    OK(tracec_stop_context(ctx));
    cr_assert_eq(collector_count(&c), 4, "stop delivers");

    /* RETAIN: old records stay (not re-delivered); new ones go after them. */
    tracec_start_options_t so = {TRACEC_BUFFER_DISPOSITION_RETAIN, NULL, 0};
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert_eq(fill(b, 100), cap - 3, "RETAIN keeps the old records' space");
    OK(tracec_stop_context(ctx));
    cr_assert_eq(collector_count(&c), 4 + cap - 3, "old and new delivered, each once");
    OK(tracec_buffer_epoch(b, &epoch));
    cr_assert_eq(epoch, epoch0);

    /* CLEAR_NONDURABLE: events cleared, the durable record and its epoch stay. */
    so.disposition = TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE;
    OK(tracec_start_context_with_options(ctx, &so));
    OK(tracec_buffer_epoch(b, &epoch));
    cr_assert_eq(epoch, epoch0, "cached interned indices stay valid");
    cr_assert_eq(fill(b, 1000), cap);
    cr_assert_eq(fill_durable(b), dcap - 1, "the durable part still holds run 1's record");
    OK(tracec_stop_context(ctx));
    size_t before = collector_count(&c);
    cr_assert_eq(before, 4 + cap - 3 + cap + dcap - 1);
    for (size_t i = 4 + cap - 3; i < before; i++) {
        uint64_t v;
        memcpy(&v, c.recs[i].data, 8);
        cr_assert_neq(v, 99, "no stale durable record re-delivered");
    }

    /* CLEAR_ENTIRE: everything cleared, the epoch changes. */
    so.disposition = TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE;
    OK(tracec_start_context_with_options(ctx, &so));
    OK(tracec_buffer_epoch(b, &epoch));
    cr_assert_neq(epoch, epoch0, "interned indices are stale after CLEAR_ENTIRE");
    cr_assert_eq(fill_durable(b), dcap, "the durable part is empty");
    cr_assert_eq(fill(b, 5000), cap);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), before + dcap + cap, "only the new run's records");
    OK(tracec_terminate_context(ctx));
    test_end();
}

/* Interning with an epoch: after CLEAR_ENTIRE the producer notices and
   re-interns, so every reference resolves in what is delivered. */
Test(buffer_modes, clear_entire_leaves_no_stale_index, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_mode_buffer(&ctx, &c, TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 4096);
    uint64_t cached_epoch = UINT64_MAX;
    for (int run = 0; run < 3; run++) {
        for (uint64_t i = 0; i < 3000; i++) {
            uint64_t ep;
            OK(tracec_buffer_epoch(b, &ep));
            if (ep != cached_epoch) {
                interned in = {7, "seven"};
                OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, &in,
                                      sizeof in));
                cached_epoch = ep;
            }
            event e = {i, 7, ep};
            OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &e, sizeof e));
        }
        OK(tracec_stop_context(ctx));
        /* Every delivery of this run must contain the interned record before its events. */
        size_t n = collector_count(&c);
        bool seen = false;
        for (size_t i = 0; i < n; i++) {
            if (c.recs[i].category == TRACEC_BUFFER_CATEGORY_TRACING) seen = true;
            else cr_assert(seen, "event before its interned name (run %d)", run);
        }
        collector_free(&c);
        tracec_start_options_t so = {TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE, NULL, 0};
        OK(tracec_start_context_with_options(ctx, &so));
    }
    test_end();
}

Test(buffer_modes, streaming_runs_deliver_old_and_new, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS);
    uint64_t epoch0, epoch;
    OK(tracec_buffer_epoch(b, &epoch0));
    for (uint64_t run = 0; run < 5; run++) {
        for (uint64_t i = 0; i < 3; i++) {
            uint64_t v = run * 10 + i;
            OK(tracec_buffer_emit(b, 1, 1, &v, 8));
        }
        OK(tracec_stop_context(ctx));
        cr_assert_eq(collector_count(&c), (run + 1) * 3);
        tracec_start_options_t so = {run % 2 ? TRACEC_BUFFER_DISPOSITION_RETAIN
                                             : TRACEC_BUFFER_DISPOSITION_CLEAR_NONDURABLE,
                                     NULL, 0};
        OK(tracec_start_context_with_options(ctx, &so));
    }
    OK(tracec_buffer_epoch(b, &epoch));
    cr_assert_eq(epoch, epoch0);
    for (uint64_t i = 0; i < 15; i++) {
        uint64_t v;
        memcpy(&v, c.recs[i].data, 8);
        cr_assert_eq(v, (i / 3) * 10 + i % 3);
    }
    test_end();
}
