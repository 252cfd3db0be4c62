#include "wgmma_run.h"

#include <stdio.h>
#include <stdlib.h>

#include "host/bf16.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"

int wgmma_run(int on_gpu, const wgmma_conf_opts *o, const uint8_t *img, uint32_t bytes,
              const uint64_t *descs, int ksteps, float *out)
{
    const int plain = !o->a_regs && o->init_value == 0.0f && !o->scale_d_first;
    if (on_gpu)
        return plain ? wgmma_conf_launch(o->n, o->trans_a, o->trans_b, 0, img, bytes, descs, ksteps, out)
                     : wgmma_conf_launch_opts(o, img, bytes, descs, ksteps, out);
    const int regs = o->n / 2;
    for (int i = 0; i < 128 * regs; i++) out[i] = o->init_value;
    smem_image im = {img, 0, bytes};
    for (int s = 0; s < ksteps; s++) {
        emu_status st = {0};
        const int scale_d = s > 0 || o->scale_d_first;
        emu_err e = o->a_regs
            ? emu_wgmma_rs(out, o->a_regs + (size_t)s * 128 * 4, &im, descs[2 * s + 1], o->n, FMT_BF16, o->trans_b,
                           scale_d, &st)
            : emu_wgmma_ss(out, &im, descs[2 * s], descs[2 * s + 1], o->n, MMA_KIND_F16, FMT_BF16, o->trans_a,
                           o->trans_b, scale_d, &st);
        if (e) {
            fprintf(stderr, "wgmma_run (emulator), step %d: %s\n", s, st.msg);
            return 3;
        }
    }
    return 0;
}

void wgmma_acc_to_matrix(const float *regs, int n, double *d)
{
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < n / 2; i++) {
            int row, col;
            wgmma_acc_map(t, i, &row, &col);
            d[row * n + col] = regs[t * (n / 2) + i];
        }
}

void wgmma_a_fragments(const double *a, int k, int swap_pairs, uint32_t *out)
{
    for (int s = 0; s < k / 16; s++)
        for (int t = 0; t < 128; t++)
            for (int v = 0; v < 8; v += 2) {
                int row, kk;
                wgmma_a_map(t, v, &row, &kk); /* v even: the even k of the pair; v + 1 is k + 1 */
                const uint16_t even = f32_to_bf16((float)a[row * k + 16 * s + kk]);
                const uint16_t odd = f32_to_bf16((float)a[row * k + 16 * s + kk + 1]);
                out[((size_t)s * 128 + t) * 4 + v / 2] = swap_pairs ? pack_bf16_pair(odd, even) : pack_bf16_pair(even, odd);
            }
}
