#include "model/role_sim.h"

#include <stdio.h>
#include <string.h>

struct role_sim {
    const role_def *roles;
    int n;
    struct {
        mbar_model *bar; /* the wait it stopped at (NULL: none, it can run) */
        int parity;
        const char *what;
        int done, yielded;
    } st[ROLE_SIM_MAX_ROLES];
    char *report;
    size_t len;
    int failed;
};

void role_wait_on(role_sim *sim, int role, mbar_model *bar, int parity, const char *what)
{
    sim->st[role].bar = bar;
    sim->st[role].parity = parity;
    sim->st[role].what = what;
}

void role_yield(role_sim *sim, int role) { sim->st[role].yielded = 1; }

role_step role_sim_fail(role_sim *sim, const char *msg)
{
    if (!sim->failed) snprintf(sim->report, sim->len, "%s", msg);
    sim->failed = 1;
    return ROLE_STEP_FAILED;
}

static uint64_t next_rand(uint64_t *x) /* xorshift64 */
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The deadlock report: every role that has not finished, at its wait. */
static void deadlock_report(role_sim *sim)
{
    int w = snprintf(sim->report, sim->len, "deadlock: no role can run;");
    for (int r = 0; r < sim->n && w > 0 && (size_t)w < sim->len; r++) {
        if (sim->st[r].done) continue;
        char diag[256];
        mbar_model_diagnose(sim->st[r].bar, diag, sizeof diag);
        w += snprintf(sim->report + w, sim->len - (size_t)w, " %s waits on %s, parity %d (%s);", sim->roles[r].name,
                      sim->st[r].what ? sim->st[r].what : "?", sim->st[r].parity, diag);
    }
}

int role_sim_run(const role_def *roles, int n, uint64_t seed, char *report, size_t len, long *steps)
{
    role_sim sim;
    memset(&sim, 0, sizeof sim);
    sim.roles = roles;
    sim.n = n;
    sim.report = report;
    sim.len = len;
    report[0] = '\0';
    if (n < 1 || n > ROLE_SIM_MAX_ROLES) {
        snprintf(report, len, "role_sim: %d roles (1..%d)", n, ROLE_SIM_MAX_ROLES);
        return 1;
    }
    uint64_t rng = seed ? seed : 0, rr = 0;
    long count = 0;
    int rc = 0;
    for (;;) {
        int runnable[ROLE_SIM_MAX_ROLES], nr = 0, left = 0;
        for (int r = 0; r < n; r++) {
            if (sim.st[r].done) continue;
            left++;
            /* a waiting role polls its barrier, as its threads would */
            if (!sim.st[r].bar || mbar_model_try_wait_parity(sim.st[r].bar, sim.st[r].parity)) runnable[nr++] = r;
        }
        if (!left) break;
        if (!nr) {
            deadlock_report(&sim);
            rc = 1;
            break;
        }
        if (++count > ROLE_SIM_MAX_STEPS) {
            snprintf(report, len, "livelock: %ld steps and the roles have not finished", ROLE_SIM_MAX_STEPS);
            rc = 1;
            break;
        }
        const int r = seed ? runnable[next_rand(&rng) % (uint64_t)nr] : runnable[rr++ % (uint64_t)nr];
        sim.st[r].bar = NULL;
        sim.st[r].yielded = 0;
        const role_step s = roles[r].step(&sim, r, roles[r].state);
        if (s == ROLE_STEP_DONE) {
            sim.st[r].done = 1;
        } else if (s == ROLE_STEP_FAILED || sim.failed) {
            rc = 1;
            break;
        } else if (!sim.st[r].bar && !sim.st[r].yielded) {
            snprintf(report, len, "role_sim: %s returned ROLE_STEP_WAIT without a wait (role_wait_on, role_yield)",
                     roles[r].name);
            rc = 1;
            break;
        }
    }
    if (steps) *steps = count;
    return rc;
}
