#!/usr/bin/env python3
"""The unsequenced-draw check as a test of `make test`: .ci/unsequenced-draws
finds no two random draws in one expression whose evaluation order C leaves
unspecified (gcc and clang would then build different corpora) in
templates/ and generators/, and it does find every such expression of the
deliberate cases in tests/data/unsequenced/draws.c (the lines marked
"unsequenced"), and nothing else there.

    tests/unsequenced_draws.py [--source DIR]

Needs clang (make deps installs it)."""
import argparse
import glob
import os
import shutil
import subprocess
import sys


def run(check, files):
    out = subprocess.run([sys.executable, check] + files, capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    if not shutil.which('clang'):
        print('unsequenced_draws: no clang on PATH; run make deps (as root) to install it')
        return 1
    check = os.path.join(a.source, '.ci', 'unsequenced-draws')
    files = sorted(glob.glob(os.path.join(a.source, 'templates', '*.c')) +
                   glob.glob(os.path.join(a.source, 'generators', '*.c')))
    rc, out, err = run(check, files)
    sys.stdout.write(out)
    sys.stderr.write(err)
    if rc != 0:
        print('unsequenced_draws: FAILED: two draws in one unsequenced expression above; give '
              'each draw its own statement (docs/determinism.md)')
        return 1

    case = os.path.join(a.source, 'tests', 'data', 'unsequenced', 'draws.c')
    want = {i + 1 for i, line in enumerate(open(case)) if line.rstrip().endswith('/* unsequenced */')}
    rc, out, err = run(check, [case])
    got = set()
    for line in out.splitlines():
        parts = line.split(':')
        if len(parts) > 2 and parts[1].isdigit():
            got.add(int(parts[1]))
    if rc != 1 or got != want:
        print(out + err)
        print('unsequenced_draws: FAILED: on the deliberate cases the check exited %d and '
              'reported lines %s, not exit 1 and lines %s' % (rc, sorted(got), sorted(want)))
        return 1
    print('unsequenced_draws: %d template and generator files clean; the %d deliberate cases '
          'found, nothing else' % (len(files), len(want)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
