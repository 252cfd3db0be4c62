/* An event simulation of a warp-specialised CTA on the mbarrier model (stage F's emu flow): each
 * role (the load warp, the MMA warp, the softmax warps, ...) is a step function that runs from
 * where it stopped until it reaches an mbarrier wait, finishes, or breaks a rule. The scheduler
 * resumes a waiting role only once its wait can pass, choosing among the roles that can run in a
 * seeded pseudo-random order, so one seed is one interleaving and many seeds explore many. When
 * no role can run and some have not finished, that is the deadlock the GPU would hang in: the
 * report names every blocked role, what it waits for, the parity and what the phase still misses.
 *
 * A role's step function:
 *   - does its work (reads and writes the simulated SMEM, arrives on barriers), then either
 *   - calls role_wait_on(sim, role, bar, parity, what) and returns ROLE_STEP_WAIT: the scheduler
 *     calls it again, at the point after the wait, once try_wait(parity) answers true;
 *   - returns ROLE_STEP_DONE when the role is finished;
 *   - returns role_sim_fail(sim, message) when a rule was broken (a read of a slot whose full
 *     barrier has not completed, a torn operand, ...): the run stops with that message. */
#ifndef FMHA_MODEL_ROLE_SIM_H
#define FMHA_MODEL_ROLE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "model/mbar_model.h"

#define ROLE_SIM_MAX_ROLES 16
#define ROLE_SIM_MAX_STEPS 10000000L /* past this many steps the run is reported as a livelock */

typedef enum { ROLE_STEP_WAIT = 0, ROLE_STEP_DONE, ROLE_STEP_FAILED } role_step;

typedef struct role_sim role_sim;
typedef role_step (*role_fn)(role_sim *sim, int role, void *state);

typedef struct {
    const char *name; /* "load warp" */
    role_fn step;
    void *state;      /* the role's own program counter and data */
} role_def;

/* The wait a role stops at (call it, then return ROLE_STEP_WAIT). */
void role_wait_on(role_sim *sim, int role, mbar_model *bar, int parity, const char *what);

/* A role that pauses without waiting (an MMA still reading its operands, a long copy): it can run
 * again at once, but the scheduler may run the others first (call it, then return
 * ROLE_STEP_WAIT). */
void role_yield(role_sim *sim, int role);

/* Stop the run with msg (the first one is kept); returns ROLE_STEP_FAILED. */
role_step role_sim_fail(role_sim *sim, const char *msg);

/* Run the n roles to the end. seed 0: round robin; else a pseudo-random runnable role each step.
 * Returns 0 when every role finished; 1 on a deadlock, a livelock or a failure, with the report
 * in `report`. *steps (may be NULL) gets the number of steps run. */
int role_sim_run(const role_def *roles, int n, uint64_t seed, char *report, size_t len, long *steps);

#endif
