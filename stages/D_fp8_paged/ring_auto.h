/* Stage D's --ring auto (the default), the rule stage_d.c applies before validating and running,
 * here so that a host test can check it without a GPU (tests/stages/test_stage_d_emu.c).
 *
 * The pipelined decode past 32 packed rows (MQA; decode_ring_sm90.cu) where
 * it was measured faster, else none. On sm90, more than 32 packed rows a KV head, D <= 128, and
 * none of the switches the ring refuses or that pick a gather (--fault, --prefetch, --kv-tma,
 * --m64-groups, --timeline): ring 3 when each split of the longest sequence holds at least
 * DEC_RING_AUTO_MIN_TILES tiles (with the split the ring's one CTA an SM gets). Measured on an H100
 * with P's codes in registers (MQA B32 Hq128 Hkv1 D128, split 4, ms, unpipelined against ring 3,
 * notes/device-runs.md run 97): 8 tiles a split 0.0498 / 0.0485, 16 tiles 0.0717 / 0.0657, 32
 * tiles 0.118 / 0.104, 64 tiles 0.211 / 0.180; D 64, 32 tiles: 0.096 / 0.081. Below 8 tiles a
 * split it is not measured, so the unpipelined kernel keeps those.
 */
#ifndef FMHA_STAGE_D_RING_AUTO_H
#define FMHA_STAGE_D_RING_AUTO_H

#include "host/options.h"

enum { DEC_RING_AUTO_SLOTS = 3, DEC_RING_AUTO_MIN_TILES = 8 };

/* The ring --ring auto picks for options o when `slots` CTAs of the ring kernel are resident at
 * once (SMs x its CTAs an SM): DEC_RING_AUTO_SLOTS or 0 (the unpipelined kernel); *tiles_per_split
 * gets the tiles each split of the longest sequence holds (0 where the rule does not apply). An
 * explicit --ring, another backend than sm90, or lengths the stage refuses give 0. */
int stage_d_ring_auto(const fmha_opts *o, int slots, int *tiles_per_split);

#endif
