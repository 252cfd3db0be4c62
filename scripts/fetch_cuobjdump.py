#!/usr/bin/env python3
"""Fetch cuobjdump for `make sass` where the CUDA toolkit came without it (a compiler-only
install: nvcc and ptxas, no binary utilities). NVIDIA publishes cuobjdump and nvdisasm (which
cuobjdump runs to print SASS, found on PATH) on PyPI as the wheels nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm; this script downloads one pinned version of each with the standard library
only (no pip), checks the SHA-256 that PyPI lists for each file, and unpacks the two programs into
.tools/cuobjdump/bin/ (ignored by git), where scripts/sass_check.sh looks after PATH and
$CUDA_HOME/bin.

  fetch_cuobjdump.py [DEST]     DEST defaults to .tools/cuobjdump
Exit 0 with the path printed when cuobjdump is there (fetched now or before); 1 with the reason
when it could not be fetched (no network, no wheel for this machine)."""
import hashlib
import io
import json
import os
import platform
import stat
import sys
import urllib.parse
import urllib.request
import zipfile

# 13.5 reads the cubins nvcc 13.0 writes for sm_90a and sm_100a (make sass checked every stage
# with it); a newer cuobjdump reads older cubins, not the reverse.
VERSION = "13.5.37"
PROGRAMS = {"nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump"}


def fetch(package: str, program: str, target: str) -> int:
    member = f"nvidia/cu13/bin/{program}"
    machine = platform.machine()
    if sys.platform != "linux" or machine not in ("x86_64", "aarch64"):
        print(f"fetch_cuobjdump: no {package} wheel for {sys.platform}/{machine}", file=sys.stderr)
        return 1
    url = f"https://pypi.org/pypi/{package}/json"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            files = json.load(r)["releases"][VERSION]
        wheel = next(f for f in files if f["filename"].endswith(f"{machine}.whl")
                     and "manylinux" in f["filename"])
        # urljoin: a PyPI mirror may list the file relative to the JSON's address
        with urllib.request.urlopen(urllib.parse.urljoin(url, wheel["url"]), timeout=120) as r:
            data = r.read()
    except StopIteration:
        print(f"fetch_cuobjdump: PyPI lists no {machine} wheel of {package} {VERSION}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as e:
        print(f"fetch_cuobjdump: could not download {package} {VERSION}: {e}", file=sys.stderr)
        return 1
    got = hashlib.sha256(data).hexdigest()
    if got != wheel["digests"]["sha256"]:
        print(f"fetch_cuobjdump: {wheel['filename']}: SHA-256 {got}, PyPI lists "
              f"{wheel['digests']['sha256']}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        try:
            body = z.read(member)
        except KeyError:
            print(f"fetch_cuobjdump: {wheel['filename']} holds no {member}", file=sys.stderr)
            return 1
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + ".part"
    with open(tmp, "wb") as f:
        f.write(body)
    os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, target)
    return 0


def main() -> int:
    dest = sys.argv[1] if len(sys.argv) > 1 else ".tools/cuobjdump"
    # cuobjdump last: its presence says the pair is complete
    for program, package in PROGRAMS.items():
        target = os.path.join(dest, "bin", program)
        if not os.access(target, os.X_OK) and fetch(package, program, target) != 0:
            return 1
    print(os.path.join(dest, "bin", "cuobjdump"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
