/*
 * test_api.c - the API contract: bad calls return documented
 * statuses, limits, page rounding, worked examples of the watermark and
 * the policies, the kind registry and service configuration, lifecycle and
 * categories.
 */
#include "buffer_util.h"

static void nop_cb(tracec_context_id_t c, tracec_buffer_id_t b, tracec_record_header_t **h, size_t n, void *d,
                   uint64_t dc) {
    (void)c, (void)b, (void)h, (void)n, (void)d, (void)dc;
}

Test(buffer_api, bad_calls_return_documented_statuses, .timeout = 30) {
    tracec_context_id_t ctx = started_context();
    tracec_buffer_id_t b = {0};
    tracec_context_id_t nctx = {12345};
    cr_assert_eq(tracec_create_context(NULL), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 0, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, &b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 4097, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, &b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, NULL, NULL, &b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, NULL),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, (tracec_buffer_policy_t)77, nop_cb, NULL, &b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_NONE, nop_cb, NULL, &b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer(nctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, &b),
                 TRACEC_STATUS_CONTEXT_NOT_FOUND);
    cr_assert_eq(tracec_create_buffer(ctx, TRACEC_MAX_BUFFER_SIZE + 1, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb,
                                      NULL, &b),
                 TRACEC_STATUS_LIMIT_EXCEEDED);
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.size = 4096;
    cfg.callback = nop_cb;
    cfg.mode = TRACEC_BUFFERING_MODE_ONESHOT;
    cfg.policy = TRACEC_BUFFER_POLICY_LOSSLESS;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_UNSUPPORTED);
    cfg.mode = TRACEC_BUFFERING_MODE_CIRCULAR;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_UNSUPPORTED);
    cfg.mode = (tracec_buffering_mode_t)9;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_create_buffer_with_config(ctx, NULL, &b), TRACEC_STATUS_INVALID_ARGUMENT);

    /* Unknown ids. */
    tracec_buffer_id_t nb = {999999};
    tracec_buffer_id_t zb = {0};
    uint64_t v = 1;
    cr_assert_eq(tracec_buffer_emit(nb, 1, 1, &v, 8), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_buffer_emit(zb, 1, 1, &v, 8), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_flush_buffer(nb), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_flush_buffer_async(zb), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_destroy_buffer(nb), TRACEC_STATUS_BUFFER_NOT_FOUND);
    tracec_callback_thread_t nt = {77};
    cr_assert_eq(tracec_assign_callback_thread(nb, nt), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_start_context(nctx), TRACEC_STATUS_CONTEXT_NOT_FOUND);
    cr_assert_eq(tracec_stop_context(nctx), TRACEC_STATUS_CONTEXT_NOT_FOUND);
    tracec_buffer_writer bw;
    cr_assert_eq(tracec_buffer_writer_init(&bw, nb, 0), TRACEC_STATUS_BUFFER_NOT_FOUND);

    /* A real buffer, then bad calls on it. */
    OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, &b));
    cr_assert_neq(b.handle, 0);
    cr_assert_eq(tracec_assign_callback_thread(b, nt), TRACEC_STATUS_THREAD_NOT_FOUND);
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, NULL, 8), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &v, 0), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_query_buffer_stats(b, NULL), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_buffer_writer_init(&bw, b, 1u << 20), TRACEC_STATUS_RECORD_TOO_LARGE);
    cr_assert_eq(tracec_buffer_end_packet(&bw, NULL, NULL), TRACEC_STATUS_INVALID_ARGUMENT);

    /* Use after destroy. */
    OK(tracec_destroy_buffer(b));
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &v, 8), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_flush_buffer(b), TRACEC_STATUS_BUFFER_NOT_FOUND);
    cr_assert_eq(tracec_destroy_buffer(b), TRACEC_STATUS_BUFFER_NOT_FOUND);
    tracec_buffer_stats_t st;
    cr_assert_eq(tracec_query_buffer_stats(b, &st), TRACEC_STATUS_BUFFER_NOT_FOUND);
    OK(tracec_destroy_context(ctx));
    cr_assert_eq(tracec_start_context(ctx), TRACEC_STATUS_CONTEXT_NOT_FOUND);
    cr_assert_eq(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, nop_cb, NULL, &b),
                 TRACEC_STATUS_CONTEXT_NOT_FOUND);
    for (int i = 0; i < TRACEC_STATUS_LAST; i++) cr_assert_neq(tracec_status_str((tracec_status_t)i), NULL);
    test_end();
}

Test(buffer_api, emit_before_start_and_after_stop_is_closed, .timeout = 30) {
    tracec_context_id_t ctx;
    tracec_buffer_id_t b;
    collector c;
    collector_init(&c);
    OK(tracec_create_context(&ctx));
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &b));
    uint64_t v = 7;
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &v, 8), TRACEC_STATUS_CLOSED);
    OK(tracec_start_context(ctx));
    OK(tracec_buffer_emit(b, 1, 1, &v, 8));
    OK(tracec_stop_context(ctx));
    cr_assert_eq(collector_count(&c), 1, "stop delivers what is below the watermark");
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, &v, 8), TRACEC_STATUS_CLOSED);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0, "CLOSED is not a counted drop");
    OK(tracec_stop_context(ctx)); /* idempotent */
    OK(tracec_terminate_context(ctx));
    OK(tracec_terminate_context(ctx));
    test_end();
}

/* tracec/buffer.h's example: a buffer of 4096 bytes with a watermark of 48 bytes takes six
   8-byte records before the callback; every 64-byte record triggers a flush. */
Test(buffer_api, watermark_example, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 48, TRACEC_BUFFER_POLICY_LOSSLESS);
    tracec_buffer_stats_t st;
    uint64_t v = 0;
    for (int i = 0; i < 5; i++) OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &v, 8));
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.watermark_requests, 0, "five 8-byte records stay below 48 bytes");
    OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &v, 8));
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.watermark_requests, 1, "the sixth reaches the watermark");
    cr_assert(collector_wait(&c, 6), "the watermark delivers without an explicit flush");
    cr_assert_eq(c.first_call_n, 6);

    uint8_t big[64] = {0};
    for (int i = 0; i < 4; i++) {
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 2, big, sizeof big));
        OK(tracec_query_buffer_stats(b, &st));
        cr_assert_eq(st.watermark_requests, 2 + (uint64_t)i, "every 64-byte record triggers a flush");
        cr_assert(collector_wait(&c, 7 + (size_t)i));
    }
    cr_assert_eq(c.recs[6].size, 64);
    cr_assert_eq(c.recs[6].kind, 2);
    test_end();
}

/* Watermark 0 and watermark == size are both legal ("any value between zero and the size"). */
Test(buffer_api, watermark_bounds, .timeout = 30) {
    tracec_context_id_t ctx = started_context();
    collector c;
    collector_init(&c);
    tracec_buffer_id_t b0, bs;
    OK(tracec_create_buffer(ctx, 4096, 0, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &b0));
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_DISCARD, collect_cb, &c, &bs));
    uint64_t v = 0;
    OK(tracec_buffer_emit(b0, 1, 1, &v, 8));
    cr_assert(collector_wait(&c, 1), "watermark 0 delivers every record");
    test_end();
}

/* Sizes are rounded up to the page; DISCARD: a record
   larger than the free space is dropped until a flush, smaller ones fit. */
Test(buffer_api, policy_example_discard, .timeout = 30) {
    tracec_context_id_t ctx = started_context();
    tracec_callback_thread_t thr;
    OK(tracec_create_callback_thread(&thr));
    gate g;
    gate_init(&g);
    gate_block_thread(ctx, thr, &g); /* deliveries on thr wait: the test is deterministic */
    collector c;
    collector_init(&c);
    tracec_buffer_id_t b;
    long page = sysconf(_SC_PAGESIZE);
    OK(tracec_create_buffer(ctx, 4000, 4000, TRACEC_BUFFER_POLICY_DISCARD, collect_cb, &c, &b));
    OK(tracec_assign_callback_thread(b, thr));
    uint64_t v[2] = {0, 0};
    size_t fits = (size_t)page / 8u;
    for (size_t i = 0; i + 1 < fits; i++) OK(tracec_buffer_emit(b, 1, 1, v, 8));
    /* (page - 8) bytes used: a 16-byte record does not fit, an 8-byte one does. */
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, v, 16), TRACEC_STATUS_BUFFER_FULL);
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, v, 8), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, v, 8), TRACEC_STATUS_BUFFER_FULL);
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 2);
    cr_assert_eq(st.accepted, fits);
    gate_open(&g);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), fits);
    cr_assert_eq(c.last_drop, 2, "drop_count is cumulative");
    /* The flush freed space. */
    OK(tracec_buffer_emit(b, 1, 1, v, 16));
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), fits + 1);
    cr_assert_eq(c.last_drop, 2);
    test_end();
}

/* LOSSLESS: a record that does not fit swaps halves; with
   both halves full the producer waits until the first is delivered. */
typedef struct waiter_arg {
    tracec_buffer_id_t b;
    atomic_int done;
    tracec_status_t st;
} waiter_arg;

static void *emit_one(void *p) {
    waiter_arg *a = (waiter_arg *)p;
    uint64_t v = 42;
    a->st = tracec_buffer_emit(a->b, 1, 3, &v, 8);
    atomic_store(&a->done, 1);
    return NULL;
}

Test(buffer_api, policy_example_lossless, .timeout = 30) {
    tracec_context_id_t ctx = started_context();
    tracec_callback_thread_t thr;
    OK(tracec_create_callback_thread(&thr));
    gate g;
    gate_init(&g);
    gate_block_thread(ctx, thr, &g);
    collector c;
    collector_init(&c);
    tracec_buffer_id_t b;
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &b));
    OK(tracec_assign_callback_thread(b, thr));
    uint64_t v = 0;
    for (int i = 0; i < 512; i++) OK(tracec_buffer_emit(b, 1, 1, &v, 8));
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.half_switches, 0);
    OK(tracec_buffer_emit(b, 1, 2, &v, 8)); /* swaps halves */
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.half_switches, 1);
    for (int i = 0; i < 511; i++) OK(tracec_buffer_emit(b, 1, 2, &v, 8));
    waiter_arg a = {b, 0, TRACEC_STATUS_ERROR};
    pthread_t t;
    pthread_create(&t, NULL, emit_one, &a);
    usleep(20000);
    cr_assert_eq(atomic_load(&a.done), 0, "both halves full: the producer waits");
    gate_open(&g);
    pthread_join(t, NULL);
    cr_assert_eq(a.st, TRACEC_STATUS_SUCCESS);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 1025);
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0);
    cr_assert_eq(c.last_drop, 0);
    for (size_t i = 0; i < 1025; i++) cr_assert_eq(c.recs[i].kind, i < 512 ? 1u : (i < 1024 ? 2u : 3u));
    test_end();
}

Test(buffer_api, oversize_records_are_errors_not_drops, .timeout = 30) {
    tracec_context_id_t ctx;
    collector c;
    tracec_buffer_id_t b = collected_buffer(&ctx, &c, 4096, 4096, TRACEC_BUFFER_POLICY_DISCARD);
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *big = calloc(1, (size_t)page * 2);
    cr_assert_eq(tracec_buffer_emit(b, 1, 1, big, (size_t)page + 1), TRACEC_STATUS_RECORD_TOO_LARGE);
    OK(tracec_buffer_emit(b, 1, 1, big, (size_t)page)); /* exactly a half fits */
    tracec_buffer_stats_t st;
    OK(tracec_query_buffer_stats(b, &st));
    cr_assert_eq(st.dropped, 0);
    OK(tracec_flush_buffer(b)); /* frees the full half */

    /* A packet that can never fit fails with RECORD_TOO_LARGE. */
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    assert_too_large_then_writer_works(b, &bw, big, (size_t)page * 2);
    tracec_buffer_writer_release(&bw);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 2);
    cr_assert_eq(c.recs[1].size, 4, "0x0A, 1-byte length, field 8 = 5");
    free(big);
    test_end();
}

/* ---- the registry ---------------------------------------------------------- */

static int count_kind(tracec_buffer_tracing_kind_t k, void *d) {
    (void)k;
    ++*(int *)d;
    return 0;
}

static int count_op(tracec_buffer_tracing_kind_t k, tracec_tracing_operation_t op, void *d) {
    (void)k, (void)op;
    ++*(int *)d;
    return 0;
}

Test(buffer_api, kinds_and_operations, .timeout = 30) {
    const char *name;
    uint64_t len;
    OK(tracec_query_buffer_tracing_kind_name(TRACEC_BUFFER_TRACING_TRACK_EVENT, &name, &len));
    cr_assert_str_eq(name, "TRACK_EVENT");
    cr_assert_eq(len, strlen("TRACK_EVENT"));
    OK(tracec_query_buffer_tracing_kind_operation_name(TRACEC_BUFFER_TRACING_INTERNED_DATA,
                                                       TRACEC_INTERNED_DATA_OP_EVENT_NAME, &name, &len));
    cr_assert_str_eq(name, "EVENT_NAME");
    cr_assert_eq(tracec_query_buffer_tracing_kind_name(999, &name, &len), TRACEC_STATUS_KIND_NOT_FOUND);
    cr_assert_eq(tracec_query_buffer_tracing_kind_name(TRACEC_BUFFER_TRACING_NONE, &name, &len),
                 TRACEC_STATUS_KIND_NOT_FOUND);
    cr_assert_eq(tracec_query_buffer_tracing_kind_operation_name(TRACEC_BUFFER_TRACING_USER, 5, &name, &len),
                 TRACEC_STATUS_OPERATION_NOT_FOUND);
    int durable = -1;
    OK(tracec_query_buffer_tracing_kind_durable(TRACEC_BUFFER_TRACING_INTERNED_DATA, &durable));
    cr_assert_eq(durable, 1);
    OK(tracec_query_buffer_tracing_kind_durable(TRACEC_BUFFER_TRACING_TRACK_EVENT, &durable));
    cr_assert_eq(durable, 0);

    int nk = 0;
    OK(tracec_iterate_buffer_tracing_kinds(count_kind, &nk));
    cr_assert_eq(nk, TRACEC_BUFFER_TRACING_LAST - 1);
    const char *ops[] = {"OPEN", "CLOSE"};
    tracec_buffer_tracing_kind_t mine;
    OK(tracec_register_buffer_tracing_kind("MY_IO", ops, 2, 0, &mine));
    cr_assert_geq(mine, TRACEC_BUFFER_TRACING_LAST);
    cr_assert_eq(tracec_register_buffer_tracing_kind("MY_IO", ops, 2, 0, &mine), TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_register_buffer_tracing_kind("", ops, 2, 0, &mine), TRACEC_STATUS_INVALID_ARGUMENT);
    char longname[120];
    memset(longname, 'k', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_assert_eq(tracec_register_buffer_tracing_kind(longname, ops, 2, 0, &mine), TRACEC_STATUS_LIMIT_EXCEEDED);
    nk = 0;
    OK(tracec_iterate_buffer_tracing_kinds(count_kind, &nk));
    cr_assert_eq(nk, TRACEC_BUFFER_TRACING_LAST);
    int no = 0;
    OK(tracec_iterate_buffer_tracing_kind_operations(mine, count_op, &no));
    cr_assert_eq(no, 2);
    OK(tracec_query_buffer_tracing_kind_operation_name(mine, 1, &name, &len));
    cr_assert_str_eq(name, "CLOSE");
    cr_assert_eq(tracec_iterate_buffer_tracing_kind_operations(4242, count_op, &no), TRACEC_STATUS_KIND_NOT_FOUND);
    test_end();
}

/* The inline begin_packet decides "never durable" for the built-in kinds
   from a constant mask; it must agree with the kind registry. */
Test(buffer_api, inline_durable_mask_matches_the_kind_registry, .timeout = 30) {
    tracec_i_wstate ws;
    memset(&ws, 0, sizeof ws);
    for (uint32_t k = 0; k < TRACEC_BUFFER_TRACING_LAST; k++) {
        int durable = 0;
        tracec_status_t s = tracec_query_buffer_tracing_kind_durable((tracec_buffer_tracing_kind_t)k, &durable);
        if (s == TRACEC_STATUS_KIND_NOT_FOUND) durable = 0; /* NONE: never durable */
        else OK(s);
        cr_assert_eq(tracec_i_buffer_never_durable(&ws, TRACEC_BUFFER_CATEGORY_TRACING, k), !durable, "kind %u", k);
        cr_assert(tracec_i_buffer_never_durable(&ws, TRACEC_BUFFER_CATEGORY_USER, k));
    }
    /* Kinds beyond the built-in ones are left to the out-of-line path. */
    cr_assert(!tracec_i_buffer_never_durable(&ws, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_LAST));
    ws.streaming = 1;
    cr_assert(tracec_i_buffer_never_durable(&ws, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA));
    test_end();
}

Test(buffer_api, configure_service, .timeout = 30) {
    tracec_context_id_t ctx = started_context();
    tracec_context_id_t other = started_context();
    collector c;
    collector_init(&c);
    tracec_buffer_id_t b, ob;
    OK(tracec_create_buffer(ctx, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &b));
    OK(tracec_create_buffer(other, 4096, 4096, TRACEC_BUFFER_POLICY_LOSSLESS, collect_cb, &c, &ob));
    tracec_tracing_operation_t ops[] = {TRACEC_TRACK_EVENT_OP_INSTANT};
    OK(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT, ops, 1, b));
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT, NULL, 0, b),
                 TRACEC_STATUS_SERVICE_ALREADY_CONFIGURED);
    OK(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_USER, NULL, 0, b));
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, 999, NULL, 0, b), TRACEC_STATUS_KIND_NOT_FOUND);
    tracec_tracing_operation_t bad[] = {17};
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_INTERNED_DATA, bad, 1, b),
                 TRACEC_STATUS_OPERATION_NOT_FOUND);
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_INTERNED_DATA, NULL, 3, b),
                 TRACEC_STATUS_INVALID_ARGUMENT);
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_INTERNED_DATA, NULL, 0, ob),
                 TRACEC_STATUS_INVALID_ARGUMENT, "a buffer of another context");
    tracec_buffer_id_t nb = {4242};
    cr_assert_eq(tracec_configure_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_INTERNED_DATA, NULL, 0, nb),
                 TRACEC_STATUS_BUFFER_NOT_FOUND);
    tracec_context_id_t nctx = {4242};
    cr_assert_eq(tracec_configure_buffer_tracing_service(nctx, TRACEC_BUFFER_TRACING_USER, NULL, 0, b),
                 TRACEC_STATUS_CONTEXT_NOT_FOUND);
    /* The same kind on another context is fine. */
    OK(tracec_configure_buffer_tracing_service(other, TRACEC_BUFFER_TRACING_TRACK_EVENT, NULL, 0, ob));

    tracec_buffer_id_t q;
    OK(tracec_query_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT, TRACEC_TRACK_EVENT_OP_INSTANT, &q));
    cr_assert_eq(q.handle, b.handle);
    cr_assert_eq(tracec_query_buffer_tracing_service(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT,
                                                     TRACEC_TRACK_EVENT_OP_COUNTER, &q),
                 TRACEC_STATUS_OPERATION_NOT_FOUND);
    uint64_t v = 5;
    OK(tracec_service_emit(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT, TRACEC_TRACK_EVENT_OP_INSTANT, &v, 8));
    cr_assert_eq(tracec_service_emit(ctx, TRACEC_BUFFER_TRACING_TRACK_EVENT, TRACEC_TRACK_EVENT_OP_SLICE_BEGIN, &v, 8),
                 TRACEC_STATUS_OPERATION_NOT_FOUND);
    cr_assert_eq(tracec_service_emit(ctx, TRACEC_BUFFER_TRACING_INTERNED_DATA, 0, &v, 8), TRACEC_STATUS_KIND_NOT_FOUND);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 1);
    cr_assert_eq(c.recs[0].category, TRACEC_BUFFER_CATEGORY_TRACING);
    cr_assert_eq(c.recs[0].kind, TRACEC_BUFFER_TRACING_TRACK_EVENT);
    test_end();
}

/* ---- lifecycle limits and categories ------------------------------------------ */

Test(buffer_api, provider_and_category_limits, .timeout = 30) {
    tracec_context_id_t ctx;
    OK(tracec_create_context(&ctx));
    char name100[101], name101[102];
    memset(name100, 'a', 100);
    name100[100] = '\0';
    memset(name101, 'b', 101);
    name101[101] = '\0';
    tracec_provider_config_t cfg = TRACEC_PROVIDER_CONFIG_INIT;
    cfg.name = name101;
    cr_assert_eq(tracec_initialize_context(ctx, &cfg), TRACEC_STATUS_LIMIT_EXCEEDED);
    static char names[101][16];
    const char *cats[101];
    for (int i = 0; i < 101; i++) {
        snprintf(names[i], sizeof names[i], "cat%d", i);
        cats[i] = names[i];
    }
    cfg.name = name100;
    cfg.categories = cats;
    cfg.num_categories = 101;
    cr_assert_eq(tracec_initialize_context(ctx, &cfg), TRACEC_STATUS_LIMIT_EXCEEDED);
    const char *longcat[] = {name101};
    cfg.categories = longcat;
    cfg.num_categories = 1;
    cr_assert_eq(tracec_initialize_context(ctx, &cfg), TRACEC_STATUS_LIMIT_EXCEEDED);
    const char *empty[] = {""};
    cfg.categories = empty;
    cr_assert_eq(tracec_initialize_context(ctx, &cfg), TRACEC_STATUS_INVALID_ARGUMENT);
    /* 99 initial + 1 additional = 100 is fine, + 2 is not. */
    cfg.categories = cats;
    cfg.num_categories = 99;
    OK(tracec_initialize_context(ctx, &cfg));
    tracec_start_options_t so = TRACEC_START_OPTIONS_INIT;
    const char *extra2[] = {"x1", "x2"};
    so.additional_categories = extra2;
    so.num_additional_categories = 2;
    cr_assert_eq(tracec_start_context_with_options(ctx, &so), TRACEC_STATUS_LIMIT_EXCEEDED);
    const char *extra1[] = {name100};
    so.additional_categories = extra1;
    so.num_additional_categories = 1;
    so.disposition = (tracec_buffer_disposition_t)42;
    cr_assert_eq(tracec_start_context_with_options(ctx, &so), TRACEC_STATUS_INVALID_ARGUMENT);
    so.disposition = TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE;
    OK(tracec_start_context_with_options(ctx, &so));
    bool en = false;
    OK(tracec_context_category_enabled(ctx, "cat98", &en));
    cr_assert(en);
    OK(tracec_context_category_enabled(ctx, name100, &en));
    cr_assert(en, "additional categories are enabled for the run");
    OK(tracec_context_category_enabled(ctx, "cat99", &en));
    cr_assert(!en);
    test_end();
}

Test(buffer_api, categories_cheap_check_follows_lifecycle, .timeout = 30) {
    tracec_context_id_t ctx;
    OK(tracec_create_context(&ctx));
    static tracec_category_t gfx = TRACEC_CATEGORY_INIT("gfx");
    static tracec_category_t net = TRACEC_CATEGORY_INIT("net");
    static tracec_category_t io = TRACEC_CATEGORY_INIT("io");
    OK(tracec_register_category(ctx, &gfx));
    OK(tracec_register_category(ctx, &net));
    OK(tracec_register_category(ctx, &io));
    cr_assert(!tracec_category_is_enabled(&gfx), "nothing is enabled before start");
    const char *cats[] = {"gfx"};
    tracec_provider_config_t cfg = {"my-provider", cats, 1};
    OK(tracec_initialize_context(ctx, &cfg));
    OK(tracec_start_context(ctx));
    cr_assert(tracec_category_is_enabled(&gfx));
    cr_assert(!tracec_category_is_enabled(&net));
    OK(tracec_stop_context(ctx));
    cr_assert(!tracec_category_is_enabled(&gfx));
    const char *extra[] = {"net"};
    tracec_start_options_t so = {TRACEC_BUFFER_DISPOSITION_RETAIN, extra, 1};
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert(tracec_category_is_enabled(&gfx));
    cr_assert(tracec_category_is_enabled(&net));
    cr_assert(!tracec_category_is_enabled(&io));
    OK(tracec_stop_context(ctx));
    OK(tracec_start_context(ctx));
    cr_assert(!tracec_category_is_enabled(&net), "additional categories last one run");
    OK(tracec_terminate_context(ctx));
    /* After terminate, no category list: a new run enables everything. */
    OK(tracec_start_context(ctx));
    cr_assert(tracec_category_is_enabled(&io));
    tracec_context_id_t other;
    OK(tracec_create_context(&other));
    cr_assert_eq(tracec_register_category(other, &gfx), TRACEC_STATUS_INVALID_ARGUMENT);
    test_end();
}
