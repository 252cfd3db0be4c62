/* plots/plot.py --selftest: the figures and the README perf table made from a synthetic bench CSV
 * in a temporary folder (never plots/data): newest full run chosen over older and quick runs,
 * runner-format CSVs ignored, rows sorted by stage then shape, missing stages shown as missing,
 * the README section added once and left unchanged by a second run, "nothing to plot" without a
 * CSV. Skips when /usr/bin/python3 cannot import matplotlib (make deps installs it). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

Test(plots, selftest_passes, .timeout = 300)
{
    if (access("plots/plot.py", R_OK) != 0)
        cr_skip_test("plots/plot.py not found: run from the repository root (make test does)");
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
        cr_skip_test("/usr/bin/python3 cannot import matplotlib (make deps installs python3-matplotlib)");
    int st = system("/usr/bin/python3 plots/plot.py --selftest");
    cr_assert(WIFEXITED(st), "plot.py --selftest did not exit normally (status %d)", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "plot.py --selftest exit %d: see the FAIL lines above", WEXITSTATUS(st));
}
