#include "host/lse_merge.h"

#include <math.h>

void lse_merge_row(int nsplit, int d, const float *o_parts, const float *lse_parts, double *o, double *lse)
{
    double m = -INFINITY;
    for (int s = 0; s < nsplit; s++)
        if (lse_parts[s] > m) m = lse_parts[s];
    for (int c = 0; c < d; c++) o[c] = 0.0;
    if (m == -INFINITY) { /* no split saw a key */
        *lse = -INFINITY;
        return;
    }
    double wsum = 0.0;
    for (int s = 0; s < nsplit; s++) {
        if (lse_parts[s] == -INFINITY) continue; /* an empty split: w = 0, its O unread */
        const double w = exp2(((double)lse_parts[s] - m) * 1.4426950408889634);
        wsum += w;
        for (int c = 0; c < d; c++) o[c] += w * (double)o_parts[(long)s * d + c];
    }
    for (int c = 0; c < d; c++) o[c] /= wsum;
    *lse = m + log(wsum);
}
