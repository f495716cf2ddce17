"""A PEP 517 build backend in the standard library only: it packs
src/countersign into a wheel or an sdist, so the package builds offline
with any Python 3.11+ (no setuptools, no network)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    readme = (ROOT / p["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines + ["Description-Content-Type: text/markdown", "", readme])


def _package_files() -> list[Path]:
    src = ROOT / "src"
    return sorted(f for f in (src / "countersign").rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: ANN001, ANN201
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    p = _project()
    name, version = p["name"], p["version"]
    dist = f"{name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = [(str(f.relative_to(ROOT / "src")).replace(os.sep, "/"), f.read_bytes())
                                      for f in _package_files()]
    files.append((f"{dist}/METADATA", _metadata().encode("utf-8")))
    files.append((f"{dist}/WHEEL", b"Wheel-Version: 1.0\nGenerator: countersign_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for n, d in files) + f"{dist}/RECORD,,\n"
    files.append((f"{dist}/RECORD", record.encode("utf-8")))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            info = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, d, zipfile.ZIP_DEFLATED)
    return filename


def build_sdist(sdist_directory, config_settings=None):  # noqa: ANN001, ANN201
    p = _project()
    base = f"{p['name']}-{p['version']}"
    members = [ROOT / "pyproject.toml", ROOT / p["readme"], *_package_files(),
               *sorted((ROOT / "_backend").glob("*.py")), *sorted((ROOT / "tests").glob("*.py"))]
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as t:
        for f in members:
            info = t.gettarinfo(str(f), arcname=f"{base}/{f.relative_to(ROOT).as_posix()}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with open(f, "rb") as fh:
                t.addfile(info, fh)
        pkg = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg)
        t.addfile(info, io.BytesIO(pkg))
    return filename
