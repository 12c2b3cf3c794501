/*
 * buffer_exit_helper.c - emits records below the watermark (and a packet)
 * and ends the process without flushing: the runtime's exit handler must
 * deliver them.  Prints "delivered N" from the callback.
 *
 *   (no argument)   returns from main.
 *   open            begins a packet and calls exit(0) with it open: the
 *                   flush first returns WOULD_DEADLOCK, then exit finishes,
 *                   the open packet dropped and counted in `refused`.
 *   thread-open     the same from a second thread while main waits in
 *                   pthread_join.
 * With an argument it also prints "flush S" and, after the runtime's exit
 * handler ran, "stats accepted A delivered D dropped P refused R".
 * A hang is killed by alarm() (exit status: signal).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracec/buffer.h"
#include "tracec/context.h"

static unsigned long delivered;
static tracec_buffer_id_t g_buf;

static void on_records(tracec_context_id_t ctx, tracec_buffer_id_t id, tracec_record_header_t **h, size_t n,
                       void *data, uint64_t drops) {
    (void)ctx, (void)id, (void)h, (void)data, (void)drops;
    delivered += n;
    printf("delivered %lu\n", delivered);
    fflush(stdout);
}

/* Registered before the runtime's handler, so it runs after it. */
static void print_stats(void) {
    tracec_buffer_stats_t st;
    if (tracec_query_buffer_stats(g_buf, &st) != TRACEC_STATUS_SUCCESS) return;
    printf("stats accepted %llu delivered %llu dropped %llu refused %llu\n", (unsigned long long)st.accepted,
           (unsigned long long)st.delivered, (unsigned long long)st.dropped, (unsigned long long)st.refused);
    fflush(stdout);
}

static tracec_buffer_writer bw; /* never released: the exit handler must cope */

/* Begins a packet, checks that a flush refuses to wait for it, and exits with it open. */
static void *exit_with_packet_open(void *unused) {
    (void)unused;
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 3, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 100);
    printf("flush %s\n", tracec_status_str(tracec_flush_buffer(g_buf)));
    fflush(stdout);
    exit(0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    alarm(20);
    if (*mode) atexit(print_stats);
    tracec_context_id_t ctx;
    tracec_buffer_id_t b;
    if (tracec_create_context(&ctx) != TRACEC_STATUS_SUCCESS) return 1;
    if (tracec_create_buffer(ctx, 65536, 65536, TRACEC_BUFFER_POLICY_LOSSLESS, on_records, NULL, &b) !=
        TRACEC_STATUS_SUCCESS)
        return 1;
    g_buf = b;
    if (tracec_start_context(ctx) != TRACEC_STATUS_SUCCESS) return 1;
    for (unsigned long i = 0; i < 10; i++)
        if (tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_USER, 1, &i, sizeof i) != TRACEC_STATUS_SUCCESS) return 1;
    if (tracec_buffer_writer_init(&bw, b, 0) != TRACEC_STATUS_SUCCESS) return 1;
    tracec_writer pw;
    tracec_msg pkt;
    tracec_buffer_begin_packet(&bw, &pw, TRACEC_BUFFER_CATEGORY_USER, 2, &pkt);
    tracec_msg_put_varint(&pkt, TRACEC_TAG(8, TRACEC_WIRE_VARINT), 99);
    if (tracec_buffer_end_packet(&bw, &pw, &pkt) != TRACEC_STATUS_SUCCESS) return 1;
    if (strcmp(mode, "open") == 0) exit_with_packet_open(NULL);
    if (strcmp(mode, "thread-open") == 0) {
        tracec_buffer_writer_release(&bw); /* the thread's own writer */
        if (tracec_buffer_writer_init(&bw, b, 0) != TRACEC_STATUS_SUCCESS) return 1;
        pthread_t t;
        if (pthread_create(&t, NULL, exit_with_packet_open, NULL) != 0) return 1;
        pthread_join(t, NULL);
        return 2; /* never reached: the thread exits the process */
    }
    return 0; /* no flush, no stop */
}
