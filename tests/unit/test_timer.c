/* The host part of the timer (the GPU part is tested in tests/gpu/test_smoke.c). */
#include <criterion/criterion.h>

#include "host/timer.h"

Test(timer, median_odd_and_even)
{
    double odd[5] = {5, 1, 4, 2, 3};
    double even[4] = {10, 1, 3, 2};
    cr_expect_eq(timer_median(odd, 5), 3.0);
    cr_expect_eq(timer_median(even, 4), 2.5);
    cr_expect_eq(odd[0], 5.0, "the input is not reordered");
}
