/*
 * record_util.h - helpers the `tracec record` tests share (Criterion
 * and the TSan build's minimal runner alike).
 */
#ifndef TRACEC_RECORD_TEST_UTIL_H
#define TRACEC_RECORD_TEST_UTIL_H

#include <time.h>

#include "tracec/recorder.h"

/* Serves the recorder `r` (one poll round after another) for `ms` milliseconds. */
static inline void poll_for(tracec_recorder *r, int ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        tracec_recorder_poll(r, 5);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

#endif /* TRACEC_RECORD_TEST_UTIL_H */
