/*
 * clock.c - event timestamps from the CPU's cycle counter between clock
 * readings (te_internal.h, tracec_i_te_clk).
 *
 * The rate.  The process keeps, per clock, a reference reading (counter,
 * clock) and the rate from it to a later reading: first after 4 ms, then
 * refined every 250 ms over a baseline of up to 2 s (the reference moves
 * on after that, so the rate follows the clock's slewing).  A reading is
 * taken between two counter reads and placed at their midpoint; only a
 * pair about as tight as the tightest seen is used (read_pair), and each
 * reading that finds none raises that bound a step, so a clock that became
 * slower to read is used again after a few readings (tracec_i_te_clk_tight).
 * Measured
 * on a KVM guest with kvm-clock: such readings lie on one line with the
 * counter within a few nanoseconds.  A reading off the rate's
 * prediction by more than 100 ppm plus 50 us means the counter jumped (a
 * virtual machine restored or migrated): the rate is dropped and measured
 * again, and meanwhile every event reads the clock.
 *
 * The thread.  Within a window of its last reading (0.5 ms with the first
 * rate, 2 ms once refined) a thread extrapolates; past it (or when its
 * counter went back) it reads the clock again.  An extrapolated value errs
 * by the reading's placement (half the slack below: <= 8 ns where reading
 * the clock is fast) plus the rate's error over one window (about 2 ns with
 * the first rate, less once refined).  A thread's values never go back:
 * one below the last given is given as the last.
 *
 * The counter is used only where it runs at a constant rate in every
 * power state (x86-64's invariant TSC, CPUID 0x80000007 EDX bit 8), and not
 * when the environment sets TRACEC_TE_CLOCK=read: then every event reads
 * the clock.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "te_internal.h"

enum {
    CAL_FIRST_NS = 4000000,     /* the first rate: from a baseline of 4 ms */
    CAL_REFINE_NS = 250000000,  /* then refined every 250 ms */
    CAL_MOVE_NS = 2000000000,   /* the reference moves on past 2 s */
    WINDOW_FIRST_NS = 500000,   /* a thread reads the clock every 0.5 ms with the first rate, */
    WINDOW_REFINED_NS = 2000000, /* every 2 ms with a refined one */
    READ_TRIES = 4,  /* readings tried for one anchor */
    READ_WARMUP = 16, /* readings tried the first time */
    /* counts a pair may be longer than the tightest seen (its midpoint then errs by half that): 32, or a
       quarter of the tightest where reading the clock is slow (under valgrind, thousands of counts) */
    READ_SLACK = 32,
};

/* A reading of the clock: the counter at it (the midpoint of the pair around it), the clock, the pair's length. */
typedef struct reading {
    uint64_t cyc, ns, span;
} reading;

/* Per clock (0 CLOCK_MONOTONIC, 1 CLOCK_BOOTTIME): the reference reading and the rate, under `busy`. */
static struct cal {
    int busy;
    reading ref;
    uint64_t mult_ns; /* the clock's advance over the baseline the rate was measured on */
    uint64_t mult;    /* 0: not measured (atomic: read without `busy`) */
    int refined;      /* mult measured over CAL_REFINE_NS at least (atomic) */
} cal[2];

static uint64_t tightest = UINT64_MAX; /* the process's tightest pair, in counts (atomic) */

static int usable; /* 1: the counter can be used */

/* A fork child: a thread of the parent may have held `busy`; it does not exist there. */
static void clock_child(void) {
    cal[0].busy = 0;
    cal[1].busy = 0;
}

__attribute__((constructor)) static void clock_init(void) {
    const char *env = getenv("TRACEC_TE_CLOCK");
    int ok = 0;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d))
        ok = (d >> 8) & 1u;
#endif
    if (env != NULL && strcmp(env, "read") == 0) ok = 0;
    usable = ok;
    if (ok) (void)pthread_atfork(NULL, NULL, clock_child);
}

int tracec_i_te_clk_extrapolates(int clk) { return usable && (clk == CLOCK_MONOTONIC || clk == CLOCK_BOOTTIME); }

static uint64_t clock_ns(int clk) {
    struct timespec ts;
    clock_gettime((clockid_t)clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t slack(uint64_t tight) { return tight / 4u > READ_SLACK ? tight / 4u : READ_SLACK; }

/*
 * The process's rate for `c` after reading `r`; 0 when not known yet.
 * *win_ns: how long a thread may extrapolate with it.  A reference whose
 * pair turned out loose against the tightest seen since (the first
 * readings of a process are slow) is replaced, not measured from.
 */
static uint64_t calibrate(struct cal *c, const reading *r, uint64_t *win_ns) {
    uint64_t m = __atomic_load_n(&c->mult, __ATOMIC_RELAXED);
    uint64_t tight = __atomic_load_n(&tightest, __ATOMIC_RELAXED);
    *win_ns = __atomic_load_n(&c->refined, __ATOMIC_RELAXED) ? WINDOW_REFINED_NS : WINDOW_FIRST_NS;
    if (__atomic_exchange_n(&c->busy, 1, __ATOMIC_ACQUIRE)) return m; /* another thread is at it */
    m = c->mult; /* written under busy only */
    if (c->ref.cyc == 0 || r->cyc <= c->ref.cyc || r->ns <= c->ref.ns) {
        c->ref = *r, c->mult_ns = 0, m = 0; /* the first reading, or the counter went back */
        __atomic_store_n(&c->refined, 0, __ATOMIC_RELAXED);
    } else {
        uint64_t dc = r->cyc - c->ref.cyc, dn = r->ns - c->ref.ns;
        if (m != 0) {
            uint64_t want = (uint64_t)(((unsigned __int128)dc * m) >> 32), off = want > dn ? want - dn : dn - want;
            if (off > dn / 10000u + 50000u) { /* the counter jumped: measure again */
                c->ref = *r, c->mult_ns = 0, m = 0;
                __atomic_store_n(&c->refined, 0, __ATOMIC_RELAXED);
                dn = 0;
            }
        }
        if (c->ref.span > tight + slack(tight)) {
            c->ref = *r, c->mult_ns = 0; /* a loose reference: start the baseline again from this reading */
        } else if ((m == 0 && dn >= CAL_FIRST_NS) || (m != 0 && dn >= c->mult_ns + CAL_REFINE_NS)) {
            uint64_t q = (uint64_t)(((unsigned __int128)dn << 32) / dc);
            /* a counter between 10 MHz and 20 GHz; anything else is not a counter to trust */
            m = q >= (1ull << 32) / 20u && q <= (1ull << 32) * 100u ? q : 0;
            c->mult_ns = dn;
            if (dn >= CAL_REFINE_NS) __atomic_store_n(&c->refined, m != 0, __ATOMIC_RELAXED);
            if (dn >= CAL_MOVE_NS) c->ref = *r, c->mult_ns = 0;
        }
    }
    __atomic_store_n(&c->mult, m, __ATOMIC_RELAXED);
    __atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
    return m;
}

int tracec_i_te_clk_tight(uint64_t *tight, uint64_t span) {
    uint64_t lim = __atomic_load_n(tight, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t to;
        if (span < lim || lim == UINT64_MAX) {
            to = span; /* the tightest yet, or the first */
        } else if (span <= lim + slack(lim)) {
            return 1;
        } else { /* loose: not used, and the bound goes up a step toward it */
            to = lim + slack(lim) < span ? lim + slack(lim) : span;
        }
        if (__atomic_compare_exchange_n(tight, &lim, to, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return to == span;
    }
}

/*
 * Reads clock `clk` into `r`: the tightest pair of a few tries.  Returns
 * whether the pair is tight enough to place the reading
 * (tracec_i_te_clk_tight: a pair stretched by an interrupt or a cache miss
 * says little about where in it the clock was read); r->ns is the clock
 * either way.
 */
static int read_pair(int clk, reading *r) {
    uint64_t lim = __atomic_load_n(&tightest, __ATOMIC_RELAXED);
    /* the process's first reading: the first calls are slow (cold caches, the vDSO's pages), so warm up */
    int tries = lim == UINT64_MAX ? READ_WARMUP : READ_TRIES;
    r->span = UINT64_MAX;
    for (int i = 0; i < tries; i++) {
        uint64_t c0 = tracec_i_te_cycles(), v = clock_ns(clk), c1 = tracec_i_te_cycles(), d = c1 - c0;
        if (d < r->span) r->span = d, r->cyc = c0 + d / 2u, r->ns = v;
        if (d <= lim + slack(lim) && lim != UINT64_MAX) break;
    }
    return tracec_i_te_clk_tight(&tightest, r->span);
}

uint64_t tracec_i_te_clk_read(tracec_i_te_clk *k, int clk) {
    reading r;
    uint64_t ns, m, win_ns;
    if (!tracec_i_te_clk_extrapolates(clk)) {
        k->win = 0;
        return clock_ns(clk);
    }
    k->win = 0;
    if (read_pair(clk, &r) && (m = calibrate(&cal[clk == CLOCK_BOOTTIME], &r, &win_ns)) != 0) {
        k->cyc = r.cyc;
        k->ns = r.ns;
        k->mult = m;
        k->win = (win_ns << 32) / m;
    }
    ns = r.ns > k->hi ? r.ns : k->hi;
    k->hi = ns;
    return ns;
}
