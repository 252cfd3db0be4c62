/* A kernel's per-CTA timeline (stage D's --timeline): each CTA's entry, first KV tile ready and
 * exit in %globaltimer ns and the SM it ran on, as the kernel stamped them (DEC_TL_* in
 * attn/decode_core.h), turned into a CSV and a summary of where the launch's time went:
 *   - how long a CTA waits for its first tile (the prologue: the first copies, Q's quantisation);
 *   - how far apart the CTAs end (the tail: from the first exit on, a launch runs on fewer CTAs);
 *   - how many CTAs are resident on average over the launch.
 * The CSV's times are microseconds from the first CTA's entry, one row a CTA in launch order. */
#ifndef FMHA_HOST_CTA_TIMELINE_H
#define FMHA_HOST_CTA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ctas;              /* rows */
    int waves;             /* CTAs that entered after the first CTA's exit start a new wave: 1 + those groups */
    double span_us;        /* first entry to last exit */
    double first_tile_us;  /* median, entry to first tile ready (CTAs with a tile) */
    double end_p10_us, end_median_us, end_last_us; /* exits, from the first entry */
    double mean_active;    /* CTAs resident on average over the span */
} cta_timeline_summary;

/* words: DEC_TL_WORDS (4) a CTA: entry, first tile (0: none), exit, SM. Fails (returns the index of
 * the first bad CTA + 1, and says which rule in why) when a CTA was not stamped (entry 0, exit
 * before entry, a first tile outside [entry, exit]): every CTA of the launch must have written. */
int cta_timeline_summarise(const uint64_t *words, int ctas, cta_timeline_summary *s, char *why, size_t len);

/* The CSV "cta,sm,entry_us,first_tile_us,exit_us" (first_tile_us empty for a CTA with no tile).
 * Returns 0, or 1 when the file cannot be written. */
int cta_timeline_write_csv(const char *path, const uint64_t *words, int ctas);

/* One line: "timeline: 512 CTAs, 1 wave, span 284.3 us, first tile 13.3 us (median), ends p10 256.5 /
 * median 265.6 / last 284.3 us, 477 CTAs resident on average". */
void cta_timeline_describe(const cta_timeline_summary *s, char *out, size_t len);

#endif
