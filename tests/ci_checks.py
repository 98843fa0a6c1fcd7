#!/usr/bin/env python3
"""The CI checks of vat's walls, and that each would catch a breach.

.ci/layers (every include against the layering) and .ci/limits (file and
function sizes) pass on the tree as it is; on a copy of the tree each
fails on one deliberate breach and names it: an upward include (core
including the template contract, the builder including the command's
header), a function one line over 150, a file of core, verifiers or
generators one line over 1,500.  With --cc and the include directories
CMake gives each layer's target, the compiler also refuses an include of
a layer above: a probe that includes its own layer's header compiles, one
that includes a header from above does not.

usage: ci_checks.py --source DIR [--cc CC --layer NAME=DIR:DIR ...]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

FOLDERS = ["core", "verifiers", "lib", "include", "generators", "templates", "src", "bench",
           "fuzz", ".ci"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(script, root):
    p = subprocess.run([sys.executable, script, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def fresh_copy(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    for f in FOLDERS:
        if os.path.isdir(os.path.join(src, f)):
            shutil.copytree(os.path.join(src, f), os.path.join(dst, f))


def append(path, text):
    with open(path, "a") as fh:
        fh.write(text)


def insert_after_first_include(path, line):
    with open(path) as fh:
        lines = fh.read().split("\n")
    at = next(i for i, x in enumerate(lines) if x.startswith("#include"))
    lines.insert(at + 1, line)
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def a_function(name, body_lines):
    """A function whose braces enclose body_lines lines: body_lines + 2 in all."""
    body = "".join(f"    x += {i};\n" for i in range(body_lines - 1))
    return f"\nint {name}(int x);\nint {name}(int x)\n{{\n{body}    return x;\n}}\n"


def layers_checks(src, tmp):
    layers = os.path.join(src, ".ci", "layers")
    rc, out = run(layers, src)
    check(rc == 0, "layers: the tree holds no include against the layering")
    copy = os.path.join(tmp, "tree")
    for f, inc, where in [("core/vat.c", "template.h", "core includes \"template.h\""),
                          ("verifiers/value.c", "rng.h", "checkers includes \"rng.h\""),
                          ("src/build.c", "cli.h", "builder includes \"cli.h\"")]:
        fresh_copy(src, copy)
        insert_after_first_include(os.path.join(copy, f), f'#include "{inc}"')
        rc, out = run(layers, copy)
        check(rc == 1 and f + ":" in out and where in out,
              f"layers: a deliberate upward include in {f} fails and is named")


def limits_checks(src, tmp):
    limits = os.path.join(src, ".ci", "limits")
    rc, out = run(limits, src)
    check(rc == 0, "limits: no file or function of the tree is over the limits")
    if rc:
        print(out)
    copy = os.path.join(tmp, "tree")
    fresh_copy(src, copy)
    append(os.path.join(copy, "verifiers", "value.c"), a_function("at_the_limit", 148))
    rc, out = run(limits, copy)
    check(rc == 0, "limits: a function of exactly 150 lines passes")
    append(os.path.join(copy, "templates", "top_n.c"), a_function("one_over", 149))
    rc, out = run(limits, copy)
    check(rc == 1 and "function one_over is 151 lines" in out,
          "limits: a deliberate function of 151 lines fails and is named")
    fresh_copy(src, copy)
    path = os.path.join(copy, "generators", "rng.c")
    with open(path) as fh:
        n = fh.read().count("\n")
    append(path, "\n" * (1501 - n))
    rc, out = run(limits, copy)
    check(rc == 1 and "generators/rng.c: 1501 lines" in out,
          "limits: a deliberate file of 1501 lines in generators/ fails and is named")


# Per layer: a header of its own (must compile) and one of a layer above
# (must not), with the defines its target compiles with.
PROBES = {
    "core": ("vat.h", "template.h", []),
    "checkers": ("verifiers.h", "rng.h", []),
    "generators": ("rng.h", "verifiers.h", []),
    "templates": ("template.h", "admit.h", []),
    "builder": ("admit.h", "cli.h", ["-DVAT_LAYER_BUILDER"]),
}


def compiler_checks(cc, dirs, tmp):
    for layer, (own, above, defs) in PROBES.items():
        if layer not in dirs:
            check(False, f"compiler: no include directories given for {layer}")
            continue
        flags = ["-std=c11", "-D_POSIX_C_SOURCE=200809L", '-DVAT_VERSION="0"', "-fsyntax-only"]
        flags += defs
        flags += [f"-I{d}" for d in dirs[layer]]
        flags += subprocess.run(["pkg-config", "--cflags", "jansson", "libpcre2-8"],
                                capture_output=True, text=True).stdout.split()
        for inc, want in [(own, True), (above, False)]:
            probe = os.path.join(tmp, f"probe_{layer}.c")
            with open(probe, "w") as fh:
                fh.write(f'#include "{inc}"\nint vat_probe(void);\nint vat_probe(void) {{ return 0; }}\n')
            p = subprocess.run([cc] + flags + [probe], capture_output=True, text=True)
            ok = (p.returncode == 0) == want
            check(ok, f"compiler: {layer} {'compiles' if want else 'refuses'} "
                      f"#include \"{inc}\"")
            if not ok:
                print(p.stderr[-600:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--cc")
    ap.add_argument("--layer", action="append", default=[])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vat-ci-checks-")
    try:
        layers_checks(a.source, tmp)
        limits_checks(a.source, tmp)
        if a.cc:
            dirs = {}
            for spec in a.layer:
                name, _, paths = spec.partition("=")
                dirs[name] = [p for p in paths.split(":") if p]
            compiler_checks(a.cc, dirs, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"ci_checks: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
