/* The one GPU timer (README, "How speed is measured").
 *
 * warmup launches first (module load, first-touch and clocks settle outside the numbers), then with
 * warmup_ms > 0 more launches until that much wall time has passed (long rows reach the power cap's
 * steady state before the samples, whatever ran before them: notes/device-runs.md, runs 57-58); then
 * `iters` samples, each: optional L2 flush (a memset of a buffer twice the L2 size, outside the
 * timed region) -> event -> one launch -> event. Reports the median and the min; the median is the
 * number to quote, the min says how noisy the run was. */
#ifndef FMHA_TIMER_H
#define FMHA_TIMER_H

typedef int (*timer_launch_fn)(void *ctx); /* enqueue one run on the default stream; 0 = ok */

typedef struct {
    int warmup;
    int warmup_ms; /* then launches, 8 between syncs, until this many ms have passed (0: none) */
    int iters;
    int flush_l2;
} timer_cfg;

typedef struct {
    double median_ms, min_ms, max_ms;
    int samples;
} timer_result;

/* Returns 0, or 1 after printing the CUDA error (a failed launch aborts the measurement). */
int timer_measure(timer_launch_fn launch, void *ctx, const timer_cfg *cfg, timer_result *out);

/* Median of n doubles (sorts a copy); exposed for tests. */
double timer_median(const double *v, int n);

#endif
