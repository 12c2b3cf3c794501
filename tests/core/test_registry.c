/*
 * test_registry.c - tracec_registry_add from many threads at once: the same
 * descriptor and different ones, while other threads walk the list.  Every
 * descriptor is linked exactly once and a walk always ends.  Runs under
 * ThreadSanitizer too (label tsan).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracec/registry.h"

#define THREADS 8
#define ROUNDS 300
#define OWN 4 /* descriptors of its own a thread adds per round */

/* Round r: every thread adds shared[r] (at the same moment, after a barrier)
   and its own own[r][t][0..OWN). */
static tracec_file_descriptor shared[ROUNDS];
static tracec_file_descriptor own[ROUNDS][THREADS][OWN];
static char names[ROUNDS][THREADS + 1][OWN][32];

static _Atomic unsigned arrived;
static _Atomic int stop_walkers;

/* A barrier that lets all adders go at about the same instant. */
static void barrier(unsigned round) {
    unsigned target = (round + 1u) * THREADS;
    atomic_fetch_add(&arrived, 1u);
    while (atomic_load(&arrived) < target) sched_yield();
}

static void *adder(void *arg) {
    size_t t = (size_t)(uintptr_t)arg;
    for (unsigned r = 0; r < ROUNDS; r++) {
        barrier(r);
        tracec_registry_add(&shared[r]);
        for (size_t k = 0; k < OWN; k++) tracec_registry_add(&own[r][t][k]);
        tracec_registry_add(&shared[r]); /* again: a no-op */
    }
    return NULL;
}

/* Counts entries, giving up after `limit` (a cycle). */
static size_t walk(size_t limit) {
    size_t n = 0;
    for (const tracec_file_descriptor *d = tracec_registry_first(); d != NULL && n <= limit;
         d = tracec_registry_next(d))
        n++;
    return n;
}

static void *walker(void *arg) {
    (void)arg;
    size_t total = (size_t)ROUNDS * (1u + THREADS * OWN) + 16u;
    while (!atomic_load(&stop_walkers)) {
        sched_yield();
        size_t n = walk(total);
        if (n > total) return (void *)1;
        (void)tracec_registry_find("registry_test/missing.proto");
    }
    return NULL;
}

Test(core_registry, concurrent_adds_of_the_same_and_different_descriptors, .timeout = 30) {
    static const uint8_t set[1] = {0};
    for (unsigned r = 0; r < ROUNDS; r++) {
        snprintf(names[r][THREADS][0], sizeof names[r][THREADS][0], "shared_%u.proto", r);
        shared[r] = (tracec_file_descriptor){names[r][THREADS][0], "", set, 0, NULL};
        for (size_t t = 0; t < THREADS; t++)
            for (size_t k = 0; k < OWN; k++) {
                snprintf(names[r][t][k], sizeof names[r][t][k], "own_%u_%zu_%zu.proto", r, t, k);
                own[r][t][k] = (tracec_file_descriptor){names[r][t][k], "", set, 0, NULL};
            }
    }
    size_t before = walk(SIZE_MAX);
    pthread_t th[THREADS], wk[2];
    for (size_t i = 0; i < 2; i++) cr_assert_eq(pthread_create(&wk[i], NULL, walker, NULL), 0);
    for (size_t t = 0; t < THREADS; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, adder, (void *)(uintptr_t)t), 0);
    for (size_t t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    atomic_store(&stop_walkers, 1);
    for (size_t i = 0; i < 2; i++) {
        void *cycle;
        pthread_join(wk[i], &cycle);
        cr_assert_null(cycle, "a concurrent walk did not end (a cycle in the list)");
    }

    size_t expect = before + (size_t)ROUNDS * (1u + THREADS * OWN);
    size_t n = walk(expect + 16u);
    cr_assert_eq(n, expect, "%zu entries, expected %zu (a duplicate or a cycle)", n, expect);
    /* Each descriptor once: mark them while walking. */
    static unsigned char seen_shared[ROUNDS], seen_own[ROUNDS][THREADS][OWN];
    for (const tracec_file_descriptor *d = tracec_registry_first(); d != NULL; d = tracec_registry_next(d)) {
        if (d >= &shared[0] && d < &shared[ROUNDS]) {
            cr_assert_eq(seen_shared[d - shared]++, 0, "shared descriptor %s linked twice", d->file_name);
        } else if (d >= &own[0][0][0] && d < &own[0][0][0] + (size_t)ROUNDS * THREADS * OWN) {
            size_t i = (size_t)(d - &own[0][0][0]);
            cr_assert_eq((&seen_own[0][0][0])[i]++, 0, "descriptor %s linked twice", d->file_name);
        }
    }
    for (unsigned r = 0; r < ROUNDS; r++) cr_assert_eq(seen_shared[r], 1, "shared_%u.proto missing", r);
    for (size_t i = 0; i < (size_t)ROUNDS * THREADS * OWN; i++)
        cr_assert_eq((&seen_own[0][0][0])[i], 1, "descriptor %zu missing", i);
    cr_assert_not_null(tracec_registry_find("shared_0.proto"));
    cr_assert_eq(tracec_registry_find("shared_0.proto"), &shared[0]);
}
