/*
 * fence.c - the asymmetric fence of the chunk handover (membarrier), and
 * small helpers the other buffer files share.  The writer's side of the
 * handover is tracec_i_announce() in tracec/abi/buffer_abi.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* syscall() */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

#include "buffer_internal.h"

/* ---- the asymmetric fence ------------------------------------------------ */

pthread_once_t tracec_i_membarrier_once = PTHREAD_ONCE_INIT;
int tracec_i_membarrier; /* 1: registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED */

int tracec_i_membarrier_register(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) || !(q & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
        return 0;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return 0;
#endif
}

void tracec_i_membarrier_init(void) {
    const char *e = getenv("TRACEC_BUFFER_MEMBARRIER");
    tracec_i_membarrier = (e != NULL && e[0] == '0') ? 0 : tracec_i_membarrier_register();
}

/*
 * The heavy side of the asymmetric fence: after it returns, every store a
 * running thread of this process made before it is visible, and every load
 * such a thread makes after it sees the caller's earlier stores.  Cannot
 * fail once registered (the only errors are "not registered" and "not
 * supported"); if it ever did, continuing would break the handover, so stop.
 */
void tracec_i_heavy_barrier(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    if (tracec_i_membarrier_register() && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
    fputs("tracec: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration\n", stderr);
    abort();
}

/* Times grow() gave its chunk back and waited for room (LOSSLESS); a test hook. */
_Atomic uint64_t tracec_i_grow_waits;

uint64_t tracec_i_buffer_grow_waits(void) { return atomic_load_explicit(&tracec_i_grow_waits, memory_order_relaxed); }

/* Test hook (buffer_internal.h). */
int tracec_i_buffer_membarrier(int want) {
    pthread_once(&tracec_i_membarrier_once, tracec_i_membarrier_init);
    if (!want) tracec_i_membarrier = 0;
    else if (!tracec_i_membarrier) tracec_i_membarrier = tracec_i_membarrier_register();
    return tracec_i_membarrier;
}

/* ---- small helpers ------------------------------------------------------ */

void tracec_i_spin_pause(unsigned *n) {
    if (++*n > 64u) sched_yield();
}
