"""Checks an installed luminamoon-data wheel from inside the virtualenv it is installed in.

Run with that venv's interpreter, from outside the source tree. Fails (exit 1) unless:

* ``luminamoon.data`` imports from the venv's site-packages (not the build tree) with the
  native backend;
* every shared library ``ldd`` lists for the native module is either allowed by the manylinux
  policy (glibc, libstdc++, libgcc_s, zlib, ...) or resolves inside the wheel's own
  ``luminamoon_data.libs`` folder, and none is missing;
* ``build_info()`` reports the versions of the libraries the module links.

Prints one line per library so the CI log shows where each one came from.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import luminamoon.data as lmd
from luminamoon.data import _native

# The libraries every manylinux policy lets a wheel take from the system (PEP 600 / auditwheel's
# policy whitelist): glibc's parts, the GCC runtime and zlib.
SYSTEM_LIBRARIES = (
    "linux-vdso.so",
    "ld-linux",
    "libc.so",
    "libm.so",
    "libdl.so",
    "libpthread.so",
    "librt.so",
    "libutil.so",
    "libresolv.so",
    "libstdc++.so",
    "libgcc_s.so",
    "libz.so",
)


def main() -> int:
    site = Path(sysconfig.get_paths()["platlib"]).resolve()
    module = Path(_native.__file__).resolve()
    problems: list[str] = []
    if lmd.BACKEND != "native":
        problems.append(f"backend is {lmd.BACKEND}, expected native")
    if site not in module.parents:
        problems.append(f"native module {module} is not inside the venv's {site}")
    libs_dir = site / "luminamoon_data.libs"
    print(f"module   {module}")
    print(f"libs dir {libs_dir} ({len(list(libs_dir.glob('*.so*')))} libraries)")

    ldd = subprocess.run(["ldd", str(module)], capture_output=True, text=True, check=True).stdout
    bundled = 0
    for line in ldd.splitlines():
        name, _, target = line.strip().partition(" => ")
        name = Path(name.split(" (")[0]).name  # the loader is listed by path
        path = target.split(" (")[0].strip()
        if "not found" in target:
            problems.append(f"{name}: not found")
            continue
        if any(name.startswith(prefix) for prefix in SYSTEM_LIBRARIES):
            print(f"  system  {name} -> {path or '(kernel/loader)'}")
            continue
        resolved = Path(path).resolve() if path else None
        if resolved is not None and libs_dir in resolved.parents:
            bundled += 1
            print(f"  bundled {name} -> {resolved.relative_to(site)}")
        else:
            problems.append(f"{name} -> {path}: neither allowed by the policy nor in {libs_dir}")
    if bundled == 0:
        problems.append("no library resolved inside the wheel's .libs folder")

    info = lmd.build_info()
    print("build    " + json.dumps(info))
    for library in ("simdjson", "abseil", "utf8proc", "xxhash", "zstd", "zlib"):
        if not info.get(library):
            problems.append(f"build_info() lacks {library}")

    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
