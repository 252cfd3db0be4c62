#!/usr/bin/env python3
"""Fetch cuobjdump for `make sass` where the CUDA toolkit came without it (a compiler-only
install: nvcc and ptxas, no binary utilities). NVIDIA publishes cuobjdump and nvdisasm (which
cuobjdump runs to print SASS, found on PATH) on PyPI as the wheels nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm; this script downloads one pinned version of each with the standard library
only (no pip), checks each file's SHA-256 against the one pinned below, and unpacks the two
programs into .tools/cuobjdump/bin/ (ignored by git), where scripts/sass_check.sh looks after PATH
and $CUDA_HOME/bin.

  fetch_cuobjdump.py [DEST]     DEST defaults to .tools/cuobjdump
Exit 0 with the path printed when cuobjdump is there (fetched now or before); 1 with the reason
when it could not be fetched (no network, no wheel for this machine)."""
import hashlib
import http.client
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
# program -> (package, {machine: SHA-256 of its manylinux wheel}): the hashes are pinned here, so a
# file PyPI changed or a transfer that went wrong is refused, not unpacked.
PROGRAMS = {
    "nvdisasm": ("nvidia-cuda-nvdisasm", {
        "x86_64": "d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca",
        "aarch64": "a3a8248074edb9fba63b74c38a5416b712a91ab09e70b8ab37186c3d293fc605"}),
    "cuobjdump": ("nvidia-cuda-cuobjdump", {
        "x86_64": "38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58",
        "aarch64": "f48e3148535365161a268547b285fd01d92c80e4b457275375933825b5fc26b2"}),
}


def fail(msg: str) -> int:
    print(f"fetch_cuobjdump: {msg}", file=sys.stderr)
    return 1


def fetch(package: str, sha256: str, program: str, target: str) -> int:
    member = f"nvidia/cu13/bin/{program}"
    machine = platform.machine()
    url = f"https://pypi.org/pypi/{package}/json"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            files = json.load(r)["releases"][VERSION]
        wheels = [f for f in files if f["filename"].endswith(f"{machine}.whl") and "manylinux" in f["filename"]]
        if not wheels:
            return fail(f"PyPI lists no {machine} wheel of {package} {VERSION}")
        # urljoin: the listing may give the file's address relative to the JSON's
        with urllib.request.urlopen(urllib.parse.urljoin(url, wheels[0]["url"]), timeout=120) as r:
            data = r.read()
    except (OSError, ValueError, KeyError, TypeError, http.client.HTTPException) as e:
        return fail(f"could not download {package} {VERSION}: {e!r}")
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        return fail(f"{wheels[0]['filename']}: SHA-256 {got}, expected {sha256}")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            body = z.read(member)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = target + ".part"
        with open(tmp, "wb") as f:
            f.write(body)
        os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(tmp, target)
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        return fail(f"could not unpack {member} from {wheels[0]['filename']} into {target}: {e!r}")
    return 0


def main() -> int:
    dest = sys.argv[1] if len(sys.argv) > 1 else ".tools/cuobjdump"
    machine = platform.machine()
    if sys.platform != "linux" or machine not in ("x86_64", "aarch64"):
        return fail(f"NVIDIA publishes these wheels for Linux x86_64 and aarch64, not {sys.platform}/{machine}")
    # cuobjdump last: its presence says the pair is complete
    for program, (package, sha256) in PROGRAMS.items():
        target = os.path.join(dest, "bin", program)
        if not os.access(target, os.X_OK) and fetch(package, sha256[machine], program, target) != 0:
            return 1
    print(os.path.join(dest, "bin", "cuobjdump"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
