/*
 * bench_te_sdk.h - the Perfetto C SDK peer of bench_te (bench_te_sdk.c).
 *
 * The SDK's side lives in its own translation unit: its headers define
 * perfetto_protos_* names, as tracec's generated headers do.  This header
 * names no SDK type.  Built only when the SDK is found (BENCH_TE_SDK).
 */
#ifndef BENCH_TE_SDK_H
#define BENCH_TE_SDK_H

#include <stddef.h>
#include <stdint.h>

/* The producer (in-process backend, 32 MB shared memory hint), the track
 * event data source and the categories "on" and "off".  0 on success. */
int bench_sdk_init(void);

/* Starts a session: one ring buffer of `buffer_kb`, track events with
 * only "on" enabled.  Returns once "on" is enabled.  0 on success. */
int bench_sdk_start(uint32_t buffer_kb);

/* Stops the session and reads its whole trace back.  With `keep`, *data
 * gets a malloc'd copy (the caller frees it); *size gets its length either
 * way.  0 on success. */
int bench_sdk_stop(int keep, uint8_t **data, size_t *size);

/* The loops, each under its own symbol (callgrind counts by symbol); each
 * writes `n` events (the slice loop: n/2 begin and end pairs). */
void bench_sdk_loop_disabled(uint64_t n);
void bench_sdk_loop_instant(uint64_t n);
void bench_sdk_loop_instant_2t(uint64_t n);
void bench_sdk_loop_slice(uint64_t n);
void bench_sdk_loop_typed(uint64_t n);

#endif
