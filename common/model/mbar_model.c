/* The mbarrier model: PTX phase / pending / tx-count arithmetic plus the reports the hardware
 * cannot give (use before init, over-arrival, what a stuck phase still waits for). */
#include "model/mbar_model.h"

#include <stdio.h>
#include <string.h>

static const char *const status_names[MBAR_STATUS_COUNT] = {
    [MBAR_OK] = "MBAR_OK",
    [MBAR_ERR_UNINIT] = "MBAR_ERR_UNINIT",
    [MBAR_ERR_REINIT] = "MBAR_ERR_REINIT",
    [MBAR_ERR_COUNT_RANGE] = "MBAR_ERR_COUNT_RANGE",
    [MBAR_ERR_PENDING_UNDERFLOW] = "MBAR_ERR_PENDING_UNDERFLOW",
    [MBAR_ERR_TX_RANGE] = "MBAR_ERR_TX_RANGE",
    [MBAR_ERR_PARITY] = "MBAR_ERR_PARITY",
    [MBAR_ERR_OVER_ARRIVAL] = "MBAR_ERR_OVER_ARRIVAL",
    [MBAR_DEADLOCK] = "MBAR_DEADLOCK",
    [MBAR_ERR_BAD_OP] = "MBAR_ERR_BAD_OP",
    [MBAR_ERR_RESULTS_FULL] = "MBAR_ERR_RESULTS_FULL",
};

const char *mbar_status_name(int status)
{
    if (status < 0 || status >= MBAR_STATUS_COUNT || !status_names[status]) return "MBAR_?";
    return status_names[status];
}

const char *mbar_op_name(int op)
{
    switch (op) {
    case MBAR_OP_INIT: return "INIT";
    case MBAR_OP_ARRIVE: return "ARRIVE";
    case MBAR_OP_ARRIVE_N: return "ARRIVE_N";
    case MBAR_OP_EXPECT_TX: return "EXPECT_TX";
    case MBAR_OP_COMPLETE_TX: return "COMPLETE_TX";
    case MBAR_OP_ARRIVE_EXPECT_TX: return "ARRIVE_EXPECT_TX";
    case MBAR_OP_TRY_WAIT: return "TRY_WAIT";
    default: return "?";
    }
}

static mbar_status note(mbar_model *m, mbar_status s)
{
    if (s != MBAR_OK && m->first_error == MBAR_OK) m->first_error = s;
    return s;
}

static mbar_status need_init(mbar_model *m)
{
    if (m->initialized) return MBAR_OK;
    m->uninit_uses++;
    return note(m, MBAR_ERR_UNINIT);
}

void mbar_model_reset(mbar_model *m)
{
    memset(m, 0, sizeof *m);
}

mbar_status mbar_model_init(mbar_model *m, int count)
{
    if (m->initialized) return note(m, MBAR_ERR_REINIT);
    if (count < 1 || count > MBAR_COUNT_MAX) return note(m, MBAR_ERR_COUNT_RANGE);
    m->initialized = 1;
    m->expected = m->pending = count;
    m->tx = 0;
    m->phase = 0;
    m->observed = 0;
    return MBAR_OK;
}

/* Only arrive-on and complete-tx have a "potentially completing the current phase" step. */
static void maybe_complete(mbar_model *m)
{
    if (m->pending == 0 && m->tx == 0) {
        m->phase++;
        m->pending = m->expected;
        m->observed = 0;
    }
}

static int tx_in_range(long long tx)
{
    return tx >= -MBAR_TX_MAX && tx <= MBAR_TX_MAX;
}

/* expect_bytes > 0 makes this arrive.expect_tx: both checks happen before either effect, so an
 * error leaves the barrier untouched, as one instruction would. */
static mbar_status arrive_common(mbar_model *m, int count, int expect_bytes)
{
    mbar_status s = need_init(m);
    if (s != MBAR_OK) return s;
    if (count < 1 || count > MBAR_COUNT_MAX) return note(m, MBAR_ERR_COUNT_RANGE);
    if (expect_bytes < 0 || expect_bytes > MBAR_TX_MAX ||
        !tx_in_range((long long)m->tx + expect_bytes))
        return note(m, MBAR_ERR_TX_RANGE);
    if (count > m->pending) return note(m, MBAR_ERR_PENDING_UNDERFLOW);
    mbar_status r = MBAR_OK;
    if (m->phase > 0 && !m->observed) {
        if (m->over_arrivals == 0) m->over_arrival_phase = m->phase;
        m->over_arrivals += count;
        r = note(m, MBAR_ERR_OVER_ARRIVAL);
    }
    m->tx += expect_bytes;
    m->pending -= count;
    maybe_complete(m);
    return r;
}

mbar_status mbar_model_arrive(mbar_model *m)
{
    return arrive_common(m, 1, 0);
}

mbar_status mbar_model_arrive_n(mbar_model *m, int count)
{
    return arrive_common(m, count, 0);
}

mbar_status mbar_model_arrive_expect_tx(mbar_model *m, int bytes)
{
    return arrive_common(m, 1, bytes);
}

mbar_status mbar_model_expect_tx(mbar_model *m, int bytes)
{
    mbar_status s = need_init(m);
    if (s != MBAR_OK) return s;
    if (bytes < 0 || bytes > MBAR_TX_MAX || !tx_in_range((long long)m->tx + bytes))
        return note(m, MBAR_ERR_TX_RANGE);
    m->tx += bytes; /* no completion step: see the header */
    return MBAR_OK;
}

mbar_status mbar_model_complete_tx(mbar_model *m, int bytes)
{
    mbar_status s = need_init(m);
    if (s != MBAR_OK) return s;
    if (bytes < 0 || bytes > MBAR_TX_MAX || !tx_in_range((long long)m->tx - bytes))
        return note(m, MBAR_ERR_TX_RANGE);
    m->tx -= bytes;
    maybe_complete(m);
    return MBAR_OK;
}

/* One probe with its status: the answer goes to *done (0 on an error). */
static mbar_status probe(mbar_model *m, int parity, int *done)
{
    *done = 0;
    mbar_status s = need_init(m);
    if (s != MBAR_OK) return s;
    if (parity != 0 && parity != 1) return note(m, MBAR_ERR_PARITY);
    if ((int)(m->phase & 1u) != parity) {
        m->observed = 1; /* the rule over-arrival checks against: see the header */
        *done = 1;
    }
    return MBAR_OK;
}

int mbar_model_try_wait_parity(mbar_model *m, int parity)
{
    int done;
    (void)probe(m, parity, &done);
    return done;
}

mbar_status mbar_model_wait(mbar_model *m, int parity)
{
    int done;
    mbar_status s = probe(m, parity, &done);
    if (s != MBAR_OK) return s;
    return done ? MBAR_OK : note(m, MBAR_DEADLOCK);
}

void mbar_model_diagnose(const mbar_model *m, char *buf, size_t len)
{
    if (len == 0) return;
    if (!m->initialized) {
        snprintf(buf, len, "barrier not initialised (%d operations before init)", m->uninit_uses);
        return;
    }
    int n = snprintf(buf, len, "phase %u: %d of %d arrivals and %d tx bytes outstanding",
                     m->phase, m->pending, m->expected, m->tx);
    if (m->tx < 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                      " (%d more bytes completed than this phase expects)", -m->tx);
    if (m->pending == 0 && m->tx == 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                      " (both counts are zero, but an expect-tx brought tx there and expect-tx "
                      "has no completion step)");
    if (m->over_arrivals > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "; %d over-arrival%s, the first in phase %u",
                      m->over_arrivals, m->over_arrivals == 1 ? "" : "s",
                      m->over_arrival_phase);
    if (m->uninit_uses > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; %d operations before init", m->uninit_uses);
}

int mbar_model_exec(mbar_model *m, const mbar_op *ops, int n, int *results, int max_results)
{
    int nres = 0;
    for (int i = 0; i < n; i++) {
        mbar_status s = MBAR_OK;
        switch (ops[i].op) {
        case MBAR_OP_INIT: s = mbar_model_init(m, ops[i].arg); break;
        case MBAR_OP_ARRIVE: s = mbar_model_arrive(m); break;
        case MBAR_OP_ARRIVE_N: s = mbar_model_arrive_n(m, ops[i].arg); break;
        case MBAR_OP_EXPECT_TX: s = mbar_model_expect_tx(m, ops[i].arg); break;
        case MBAR_OP_COMPLETE_TX: s = mbar_model_complete_tx(m, ops[i].arg); break;
        case MBAR_OP_ARRIVE_EXPECT_TX: s = mbar_model_arrive_expect_tx(m, ops[i].arg); break;
        case MBAR_OP_TRY_WAIT:
            if (nres >= max_results) {
                s = note(m, MBAR_ERR_RESULTS_FULL);
                break;
            }
            s = probe(m, ops[i].arg, &results[nres++]);
            break;
        default: s = note(m, MBAR_ERR_BAD_OP); break;
        }
        /* over-arrival is applied as the hardware would: the script goes on */
        if (s != MBAR_OK && s != MBAR_ERR_OVER_ARRIVAL) return -(int)s;
    }
    return nres;
}

int mbar_model_run(const mbar_op *ops, int n, int *results, int max_results)
{
    mbar_model m;
    mbar_model_reset(&m);
    return mbar_model_exec(&m, ops, n, results, max_results);
}
