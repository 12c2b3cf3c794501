/*
 * test_clock.c - which clock readings a thread anchors its extrapolation
 * on (tracec_i_te_clk_tight, clock.c).  A reading lies between two counter
 * reads; the pair's span in counts bounds how well it is placed.  The
 * process keeps its tightest span; these tests feed spans as a program
 * meets them: tight ones, an interrupt's, and a clock that became slower
 * to read for good (its source changed, or the program runs under
 * valgrind), after which every event used to read the clock.
 * te_timestamps checks the timestamps themselves in the trace processor.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "te_internal.h"

Test(te_clock, the_first_and_tighter_pairs_set_the_bound) {
    uint64_t tight = UINT64_MAX;
    cr_assert(tracec_i_te_clk_tight(&tight, 400), "the first reading is used");
    cr_assert_eq(tight, 400);
    cr_assert(tracec_i_te_clk_tight(&tight, 500), "a quarter above the tightest is used");
    cr_assert_eq(tight, 400, "and leaves the bound");
    cr_assert(tracec_i_te_clk_tight(&tight, 90));
    cr_assert_eq(tight, 90);
    /* below 128 counts the slack is 32 counts, not a quarter */
    cr_assert(tracec_i_te_clk_tight(&tight, 122));
    cr_assert_not(tracec_i_te_clk_tight(&tight, 123));
}

Test(te_clock, one_loose_pair_is_not_used_and_moves_the_bound_one_step) {
    uint64_t tight = 400;
    cr_assert_not(tracec_i_te_clk_tight(&tight, 100000), "an interrupt inside the pair");
    cr_assert_eq(tight, 500, "a quarter up, not to the interrupt's span");
    cr_assert_not(tracec_i_te_clk_tight(&tight, 700), "still loose against the raised bound (625)");
    cr_assert(tracec_i_te_clk_tight(&tight, 400), "the usual pair again");
    cr_assert_eq(tight, 400, "brings the bound back down");
}

Test(te_clock, a_clock_slower_to_read_for_good_is_used_again_after_a_few_readings) {
    /* 30 times slower: a vDSO read of 10 ns that became a system call (a clock source the vDSO cannot
       read), each pair now 3000-3400 counts against a tightest of 100 */
    uint64_t tight = 100;
    int refused = 0;
    for (int i = 0; i < 100 && !tracec_i_te_clk_tight(&tight, 3000u + (uint64_t)(i % 5) * 100u); i++) refused++;
    cr_assert_lt(refused, 20, "%d readings refused before one was used", refused);
    cr_assert_leq(tight, 3400);
    int used = 0;
    for (int i = 0; i < 100; i++) used += tracec_i_te_clk_tight(&tight, 3000u + (uint64_t)(i % 5) * 100u);
    cr_assert_eq(used, 100, "then every such reading is used (%d of 100)", used);
    cr_assert_leq(tight, 3000, "the bound is the new tightest");
}

Test(te_clock, the_bound_never_rises_above_the_span_that_raised_it) {
    uint64_t tight = 100;
    cr_assert_not(tracec_i_te_clk_tight(&tight, 140));
    cr_assert_eq(tight, 132, "one step of 32 counts");
    cr_assert(tracec_i_te_clk_tight(&tight, 140));
    cr_assert_eq(tight, 132);
}
