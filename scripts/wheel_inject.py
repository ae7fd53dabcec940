#!/usr/bin/env python3
"""Turn the pure lakehold wheel into a platform wheel that ships the catalog.

usage: wheel_inject.py PURE_WHEEL CATALOG_BINARY OUT_DIR

Adds the binary as lakehold/_bin/catalog (mode 755), marks the wheel
platlib with the host's platform tag, rewrites RECORD with the new hashes
and writes <name>-<version>-py3-none-<platform>.whl into OUT_DIR; prints
its path. Standard library only, so it runs offline in any Python 3.

The binary is built with CGO_ENABLED=0 (static, no glibc symbols), so on
Linux the manylinux_2_17 tag is an honest floor.
"""
from __future__ import annotations

import base64
import hashlib
import os
import platform
import sys
import sysconfig
import zipfile

BIN_PATH = "lakehold/_bin/catalog"


def platform_tag() -> str:
    """The tag of the host the Go binary was built for."""
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if plat.startswith("linux_"):
        return "manylinux_2_17_" + plat[len("linux_"):]
    if plat.startswith("macosx_"):
        arch = platform.machine()
        return f"macosx_11_0_{arch}"
    return plat


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def retag_wheel_file(text: str, tag: str) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith("Tag:"):
            continue
        if line.startswith("Root-Is-Purelib:"):
            line = "Root-Is-Purelib: false"
        out.append(line)
    out.append(f"Tag: py3-none-{tag}")
    return "\n".join(out) + "\n"


def main(pure: str, binary: str, out_dir: str) -> str:
    base = os.path.basename(pure)
    name, version = base.split("-")[:2]
    tag = platform_tag()
    dest = os.path.join(out_dir, f"{name}-{version}-py3-none-{tag}.whl")
    dist_info = f"{name}-{version}.dist-info"
    records: list[str] = []
    with zipfile.ZipFile(pure) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename in (f"{dist_info}/RECORD", BIN_PATH):
                continue
            data = src.read(info)
            if info.filename == f"{dist_info}/WHEEL":
                data = retag_wheel_file(data.decode(), tag).encode()
            dst.writestr(info, data)
            records.append(record_line(info.filename, data))
        with open(binary, "rb") as f:
            data = f.read()
        zi = zipfile.ZipInfo(BIN_PATH, date_time=(2020, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100755 << 16)  # regular file, rwxr-xr-x: pip keeps the x bit
        zi.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(zi, data)
        records.append(record_line(BIN_PATH, data))
        records.append(f"{dist_info}/RECORD,,")
        dst.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(main(*sys.argv[1:]))
