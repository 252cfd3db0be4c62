/* The per-CTA timeline's summary (common/host/cta_timeline.c) on stamps built by hand, whose
 * answers are counted here: the span, the first tile's median wait, the exits' quantiles, the
 * resident average and the waves; and the checks that refuse a launch some CTA did not stamp. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/decode_core.h"
#include "host/cta_timeline.h"

/* CTA c: entry, first tile, exit in us from 1000 us (the %globaltimer is never 0), its SM */
static void stamp(uint64_t *w, int c, double entry, double first, double exit_, int sm)
{
    uint64_t *x = w + (size_t)c * DEC_TL_WORDS;
    x[DEC_TL_ENTRY] = (uint64_t)((1000.0 + entry) * 1000.0);
    x[DEC_TL_FIRST_TILE] = first < 0 ? 0 : (uint64_t)((1000.0 + first) * 1000.0);
    x[DEC_TL_EXIT] = (uint64_t)((1000.0 + exit_) * 1000.0);
    x[DEC_TL_SM] = (uint64_t)sm;
}

Test(cta_timeline, one_wave_counted_by_hand)
{
    uint64_t w[4 * DEC_TL_WORDS];
    stamp(w, 0, 0.0, 10.0, 100.0, 0); /* first tile after 10, 12, 14 us; the fourth has none */
    stamp(w, 1, 0.5, 12.5, 110.0, 1);
    stamp(w, 2, 1.0, 15.0, 120.0, 0);
    stamp(w, 3, 1.0, -1.0, 2.0, 1); /* an empty split: entry and exit only */
    cta_timeline_summary s;
    char why[128] = "";
    cr_assert_eq(cta_timeline_summarise(w, 4, &s, why, sizeof why), 0, "%s", why);
    cr_expect_eq(s.ctas, 4);
    cr_expect_eq(s.waves, 1, "every CTA entered before the first exit (2 us)? got %d waves", s.waves);
    cr_expect_float_eq(s.span_us, 120.0, 1e-9);
    cr_expect_float_eq(s.first_tile_us, 12.0, 1e-9); /* the median of 10, 12, 14 */
    cr_expect_float_eq(s.end_last_us, 120.0, 1e-9);
    cr_expect_float_eq(s.end_median_us, (100.0 + 110.0) / 2, 1e-9); /* ends 2, 100, 110, 120 */
    cr_expect_float_eq(s.end_p10_us, 2.0, 1e-9);
    cr_expect_float_eq(s.mean_active, (100.0 + 109.5 + 119.0 + 1.0) / 120.0, 1e-9);
    char line[256];
    cta_timeline_describe(&s, line, sizeof line);
    cr_expect(strstr(line, "4 CTAs, 1 wave, span 120.0 us, first tile 12.0 us") != NULL, "%s", line);
}

Test(cta_timeline, a_second_wave_starts_in_freed_slots)
{
    /* two slots: CTAs 0, 1 at once; 2 enters when 0 exits, 3 when 1 exits (out of launch order) */
    uint64_t w[4 * DEC_TL_WORDS];
    stamp(w, 0, 0.0, 5.0, 50.0, 0);
    stamp(w, 1, 0.0, 5.0, 60.0, 1);
    stamp(w, 2, 61.0, 64.0, 120.0, 1);
    stamp(w, 3, 50.5, 55.0, 100.0, 0);
    cta_timeline_summary s;
    char why[128];
    cr_assert_eq(cta_timeline_summarise(w, 4, &s, why, sizeof why), 0, "%s", why);
    cr_expect_eq(s.waves, 2);
    cr_expect_float_eq(s.first_tile_us, (4.5 + 5.0) / 2, 1e-9); /* waits 5, 5, 3, 4.5 */
    cr_expect_float_eq(s.mean_active, (50.0 + 60.0 + 59.0 + 49.5) / 120.0, 1e-9);
}

Test(cta_timeline, a_cta_that_did_not_stamp_is_refused)
{
    uint64_t w[3 * DEC_TL_WORDS];
    stamp(w, 0, 0.0, 1.0, 10.0, 0);
    stamp(w, 1, 0.0, 1.0, 10.0, 0);
    stamp(w, 2, 0.0, 1.0, 10.0, 0);
    cta_timeline_summary s;
    char why[128];
    w[1 * DEC_TL_WORDS + DEC_TL_ENTRY] = 0; /* CTA 1 never wrote its entry */
    cr_expect_eq(cta_timeline_summarise(w, 3, &s, why, sizeof why), 2);
    cr_expect(strstr(why, "CTA 1: no entry stamp") != NULL, "%s", why);
    stamp(w, 1, 0.0, 1.0, 10.0, 0);
    w[2 * DEC_TL_WORDS + DEC_TL_FIRST_TILE] = w[2 * DEC_TL_WORDS + DEC_TL_EXIT] + 1; /* first tile after the exit */
    cr_expect_eq(cta_timeline_summarise(w, 3, &s, why, sizeof why), 3);
    cr_expect(strstr(why, "outside [entry, exit]") != NULL, "%s", why);
    stamp(w, 2, 5.0, -1.0, 4.0, 0); /* exit before entry */
    cr_expect_eq(cta_timeline_summarise(w, 3, &s, why, sizeof why), 3);
    cr_expect(strstr(why, "exit stamp is before its entry") != NULL, "%s", why);
}

Test(cta_timeline, the_csv_has_a_row_a_cta_in_us_from_the_first_entry)
{
    uint64_t w[2 * DEC_TL_WORDS];
    stamp(w, 0, 2.0, 4.0, 10.0, 7);
    stamp(w, 1, 0.0, -1.0, 1.5, 3);
    char path[] = "/tmp/test_cta_timeline_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cta_timeline_write_csv(path, w, 2), 0);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL);
    char all[512] = "";
    const size_t n = fread(all, 1, sizeof all - 1, f);
    all[n] = '\0';
    fclose(f);
    remove(path);
    cr_expect_str_eq(all, "cta,sm,entry_us,first_tile_us,exit_us\n0,7,2.000,4.000,10.000\n1,3,0.000,,1.500\n");
}
