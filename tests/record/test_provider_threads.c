/*
 * test_provider_threads.c - the threaded parts of the provider library
 * (tracec/provider.h) under ThreadSanitizer (label tsan): writer threads
 * on the shared buffer while the control thread obeys Start, Stop and
 * Terminate, half switches answered by a recorder, category checks during
 * a run, and a Stop that races the writers.  The recorder runs in this
 * process on the main thread (tracec/recorder.h), so the provider talks to
 * the real thing.  Only Test and cr_assert*: the TSan build compiles this
 * against tests/common/tsan_runner (Criterion cannot start under TSan).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record_util.h"
#include "tracec/provider.h"
#include "tracec/recorder.h"

enum { WRITERS = 4 };

typedef struct shared {
    tracec_provider *p;
    int quit;       /* atomic */
    uint64_t loops; /* atomic: events written while started */
    int bad_category; /* atomic: a category answer that contradicts the declared/enabled sets */
} shared;

static void *writer(void *arg) {
    shared *s = arg;
    while (!__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE)) {
        bool on = tracec_provider_started(s->p);
        /* declared gfx,io; the recorder enables gfx,net: gfx only */
        if (tracec_provider_category_enabled(s->p, "io") || tracec_provider_category_enabled(s->p, "net"))
            __atomic_store_n(&s->bad_category, 1, __ATOMIC_RELAXED);
        if (tracec_provider_category_enabled(s->p, "gfx")) {
            tracec_provider_slice_begin(s->p, "work");
            tracec_provider_instant(s->p, "step");
            tracec_provider_slice_end(s->p);
        } else {
            tracec_provider_instant(s->p, "off"); /* tracing off: CLOSED, nothing written */
        }
        if (on) __atomic_add_fetch(&s->loops, 1u, __ATOMIC_RELAXED);
        tracec_provider_stats racing = tracec_provider_get_stats(s->p); /* read while the others write */
        (void)racing;
    }
    return NULL;
}

static void poll_until_started(tracec_recorder *r, tracec_provider *p) {
    for (int i = 0; i < 1000 && !tracec_provider_started(p); i++) tracec_recorder_poll(r, 5);
    cr_assert(tracec_provider_started(p), "the provider never started");
}

Test(provider_threads, writers_race_switches_stop_and_restart) {
    char dir[] = "/tmp/tracec-provthreads-XXXXXX", sock[96];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/r.sock", dir);
    setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.buffer_size = 16384; /* halves switch (and drop) all the time */
    cfg.categories = "gfx,net";
    cfg.wait_ms = 1; /* writers also wait for a save: the wait path runs too */
    tracec_recorder *r;
    cr_assert_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_SUCCESS);

    shared s;
    memset(&s, 0, sizeof s);
    tracec_provider_registration reg = TRACEC_PROVIDER_REGISTRATION_INIT;
    reg.name = "threads";
    reg.categories = "gfx,io";
    cr_assert_eq(tracec_provider_register_with(&reg, NULL, &s.p), TRACEC_STATUS_SUCCESS);
    pthread_t t[WRITERS];
    for (int i = 0; i < WRITERS; i++) cr_assert_eq(pthread_create(&t[i], NULL, writer, &s), 0);

    for (int run = 0; run < 2; run++) { /* the writers keep going across Stop and the next Start */
        cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
        poll_until_started(r, s.p);
        poll_for(r, 150);
        cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS); /* races the writers */
        /* the next Start at once: the provider may not have seen Terminate yet (regression: the recorder
           closed the old fifo under it, and it took that for the recorder's death and registered again) */
    }
    poll_for(r, 20);
    __atomic_store_n(&s.quit, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < WRITERS; i++) pthread_join(t[i], NULL);

    tracec_recorder_provider_info in;
    cr_assert(tracec_recorder_provider(r, 0, &in));
    tracec_provider_stats st = tracec_provider_get_stats(s.p);
    cr_assert_eq(__atomic_load_n(&s.bad_category, __ATOMIC_RELAXED), 0, "a category outside gfx was enabled");
    cr_assert_gt(__atomic_load_n(&s.loops, __ATOMIC_RELAXED), 0u);
    cr_assert_eq(st.runs, 2u);
    cr_assert_eq(st.recorder_lost, 0u, "the provider thought the recorder had gone");
    cr_assert_eq(tracec_recorder_provider_count(r), 1u, "the provider registered again");
    cr_assert_gt(in.delivered, 0u);
    cr_assert_eq(in.produced, st.produced, "recorder %llu (delivered %llu dropped %llu timed out %d ended early %d), "
                 "provider %llu (runs %llu)", (unsigned long long)in.produced, (unsigned long long)in.delivered,
                 (unsigned long long)in.dropped, (int)in.timed_out, (int)in.ended_early,
                 (unsigned long long)st.produced, (unsigned long long)st.runs);
    cr_assert_eq(in.delivered + in.dropped, in.produced, "%llu + %llu != %llu", (unsigned long long)in.delivered,
                 (unsigned long long)in.dropped, (unsigned long long)in.produced);
    cr_assert(in.corrupt == 0 && !in.timed_out && !in.ended_early);
    tracec_provider_unregister(s.p);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    rmdir(dir);
}

typedef struct open_packet {
    tracec_provider *p;
    int opened; /* atomic: the packet is begun */
    int release; /* atomic: end it now */
    tracec_status_t st;
} open_packet;

/* Begins a packet, keeps it open until told, then ends it. */
static void *hold_packet(void *arg) {
    open_packet *o = arg;
    tracec_writer w;
    tracec_msg pkt;
    tracec_provider_begin_packet(o->p, &w, &pkt);
    __atomic_store_n(&o->opened, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&o->release, __ATOMIC_ACQUIRE)) usleep(1000);
    o->st = tracec_provider_end_packet(o->p, &w, &pkt);
    return NULL;
}

typedef struct writes {
    tracec_provider *p;
    int done; /* atomic */
    int ok;
} writes;

static void *write_many(void *arg) {
    writes *x = arg;
    for (int i = 0; i < 1000; i++) x->ok += tracec_provider_instant(x->p, "meanwhile") == TRACEC_STATUS_SUCCESS;
    __atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * Two threads write without a lock between them: while one holds a packet
 * open (between begin_packet and end_packet), the other writes 1000
 * instants to the end; then the open packet ends with SUCCESS.  Every
 * packet reaches the recorder, each thread's on its own sequence.
 */
Test(provider_threads, writers_take_no_lock) {
    char dir[] = "/tmp/tracec-provthreads-XXXXXX", sock[96];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/r.sock", dir);
    setenv(TRACEC_RECORDER_SOCKET_ENV, sock, 1);
    tracec_recorder_config cfg = TRACEC_RECORDER_CONFIG_INIT;
    cfg.socket_path = sock;
    cfg.buffer_size = 4u << 20;
    tracec_recorder *r;
    cr_assert_eq(tracec_recorder_open(&cfg, &r), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_start(r), TRACEC_STATUS_SUCCESS);
    tracec_provider *p;
    cr_assert_eq(tracec_provider_register("nolock", &p), TRACEC_STATUS_SUCCESS);
    poll_until_started(r, p);

    open_packet o = {p, 0, 0, TRACEC_STATUS_ERROR};
    writes x = {p, 0, 0};
    pthread_t a, b;
    cr_assert_eq(pthread_create(&a, NULL, hold_packet, &o), 0);
    while (!__atomic_load_n(&o.opened, __ATOMIC_ACQUIRE)) usleep(1000);
    cr_assert_eq(pthread_create(&b, NULL, write_many, &x), 0);
    for (int i = 0; i < 5000 && !__atomic_load_n(&x.done, __ATOMIC_ACQUIRE); i++) tracec_recorder_poll(r, 1);
    int done = __atomic_load_n(&x.done, __ATOMIC_ACQUIRE);
    __atomic_store_n(&o.release, 1, __ATOMIC_RELEASE);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    cr_assert(done, "the second writer waited for the first one's open packet");
    cr_assert_eq(x.ok, 1000);
    cr_assert_eq(o.st, TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_recorder_stop(r), TRACEC_STATUS_SUCCESS);
    tracec_recorder_provider_info in;
    cr_assert(tracec_recorder_provider(r, 0, &in));
    /* the process's descriptor, each thread's descriptor, the held packet, the instants */
    cr_assert_eq(in.produced, 1u + 2u + 1u + 1000u, "produced %llu", (unsigned long long)in.produced);
    cr_assert_eq(in.delivered, in.produced, "delivered %llu", (unsigned long long)in.delivered);
    cr_assert_eq(in.dropped, 0u);
    tracec_provider_unregister(p);
    cr_assert_eq(tracec_recorder_close(r), TRACEC_STATUS_SUCCESS);
    rmdir(dir);
}
