#!/usr/bin/env bash
# make plots: the figures in plots/ and the README perf table, from the newest plots/data/*.csv of
# each GPU that `make bench` wrote (plots/plot.py). Prefers /usr/bin/python3 (Debian's
# python3-matplotlib, what `make deps` installs), else the first python3 on PATH that imports
# matplotlib. Arguments go to plot.py (--csv FILE, --selftest). With no benchmark CSV yet it says
# "nothing to plot" and exits 0.
set -u
cd "$(dirname "$0")/.." || exit 1
py=""
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import matplotlib' >/dev/null 2>&1; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "make plots: no python3 that imports matplotlib (make deps installs python3-matplotlib)" >&2
  exit 1
fi
exec "$py" plots/plot.py "$@"
