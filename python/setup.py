"""setup.py -- the vat wheel: the package vat/ with libvat.so inside it.

pyproject.toml declares the package; this file adds what a declaration
cannot:
  - the version: CMakeLists.txt's project(VERSION), its one source;
  - libvat.so, copied into the package: from the vat build folder
    (VAT_BUILD_DIR while building, default ../build, what `make build`
    writes), configured and built there with CMake first when it holds no
    library yet; a sanitizer build is refused (its library loads only with
    the sanitizer's runtime preloaded);
  - the tag: py3-none-<platform> (linux_x86_64, ...), since the wheel
    carries native code that ctypes loads from any Python 3 of the
    platform.
Offline with Debian's python3-setuptools, python3-wheel and python3-venv:

    python3 -m venv --system-site-packages venv
    venv/bin/pip install --no-build-isolation ./python

vat/_lib.py finds the bundled library next to the package, so nothing
needs setting at run time.
"""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def version():
    path = os.path.join(SOURCE, "CMakeLists.txt")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SystemExit(f"setup.py: cannot read {path} (the version's source): {e}")
    m = re.search(r"^project\(\s*vat\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text, re.M)
    if not m:
        raise SystemExit(f"setup.py: no 'project(vat VERSION x.y.z)' in {path}")
    return m.group(1)


def library():
    """The path of the release libvat.so to bundle, built first if needed."""
    build = os.path.abspath(os.environ.get("VAT_BUILD_DIR") or os.path.join(SOURCE, "build"))
    lib = os.path.join(build, "libvat.so")
    if not os.path.isfile(lib):
        print(f"setup.py: no libvat.so in {build}; building it with CMake")
        subprocess.run(["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
                       check=True)
        subprocess.run(["cmake", "--build", build, "--target", "vat_shared", "-j",
                        str(os.cpu_count() or 2)], check=True)
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.isfile(cache):
        with open(cache, encoding="utf-8", errors="replace") as f:
            if re.search(r"^VAT_(SANITIZE|FUZZ):BOOL=(ON|1|TRUE)$", f.read(), re.M):
                raise SystemExit(f"setup.py: {build} is a sanitizer build; bundle a release "
                                 "build (make build, or VAT_BUILD_DIR=<release build folder>)")
    return os.path.realpath(lib)


class BuildWithLibrary(build_py):
    """build_py, then libvat.so copied into the package as vat/libvat.so."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "vat", "libvat.so")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(library(), dest)
        os.chmod(dest, 0o755)


class WithNativeCode(Distribution):
    """A distribution that carries native code (libvat.so): built into the
    platform's library folder, its wheel not pure."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A wheel of this platform, for any Python 3: py3-none-<platform>
    (the library is loaded by ctypes, not linked to an interpreter)."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(version=version(), distclass=WithNativeCode,
      cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
