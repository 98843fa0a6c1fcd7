#!/usr/bin/python3
"""doc_paths.py -- every repository path written in the docs and the code's
comments resolves to a file.

A reader told "see generators/csvio.h" must find generators/csvio.h.  This
scans every text file of the repository (the files git tracks, or every
file outside build folders when there is no git) for words of the form
TOP/.../NAME.EXT whose first folder is one of the repository's top folders
(TOP_FOLDERS below) and fails, naming each file and line, when one does
not name a file of the repository.

Left alone, because they name no file of this repository:
  - words inside a longer path (/srv/x/src/a.c, ../y/docs/b.md,
    $BUILD/src/c.c, build/src/d.c): a character of a path before TOP;
  - patterns and placeholders: a word followed by one of < * { $ % [ or
    holding an upper-case placeholder component (NAME, X, T.c, ...);
  - anything under out/ or fixtures/ (a built corpus's files, not the
    repository's), whatever the top folder;
  - the fuzzers' seed inputs (fuzz/corpus/), which are data, and
    CHANGELOG.md, whose job is to name files that were moved or removed.

usage: doc_paths.py [REPO_ROOT]     (default: this file's repository)
Exit 0 when every path resolves, 1 when some do not (each listed), 2 on a
usage error.  Standard library only."""
import os
import re
import subprocess
import sys

TOP_FOLDERS = ("core", "src", "lib", "include", "verifiers", "generators", "templates",
               "tests", "bench", "fuzz", "python", "docs", "contrib", "cmake", ".ci")

# TOP/ then path characters, ending in .EXT; the look-behind keeps a word
# that continues a longer path (or a variable, or a URL) out.
PATH_RE = re.compile(
    r"(?<![\w./$}~:@-])((?:%s)/[\w./+-]*\.[A-Za-z0-9]+)" %
    "|".join(re.escape(t) for t in TOP_FOLDERS))
# A character right after the word that makes it a pattern, not a path.
PATTERN_NEXT = set("<*{$%[")
# A component that stands for a name: NAME, N, X, T.c, TEMPLATE_x.
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.[A-Za-z0-9]+)?$")
REAL_UPPER = {"README.md", "LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "CMakeLists.txt"}
SKIP_PREFIXES = ("fuzz/corpus/", "CHANGELOG.md")


def repo_files(root):
    """Relative paths of the repository's files: git's list when the root
    is a work tree (tracked, or new and not ignored), else a walk that
    skips build folders and dot folders other than .ci."""
    try:
        # tracked files and new ones not yet added (but not ignored ones)
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        files = [f for f in out.decode("utf-8", "surrogateescape").split("\0") if f]
        if files:
            return [f for f in files if os.path.isfile(os.path.join(root, f))
                    and not f.startswith("build")]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs
                   if not x.startswith("build") and (x == ".ci" or not x.startswith("."))
                   and not (rel == "." and x in ("out", "fixtures"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return files


def is_placeholder(path):
    for part in path.split("/")[1:]:
        if part in REAL_UPPER:
            continue
        stem = part.split(".", 1)[0]
        if PLACEHOLDER.match(part) or (stem and PLACEHOLDER.match(stem) and len(stem) <= 2):
            return True
        # test_NAME.c, fuzz_NAME.c: an upper-case word after a lower-case prefix
        if re.search(r"_[A-Z][A-Z0-9]*(\.|$)", part):
            return True
        # the reader's own file: templates/my_template.c
        if stem.startswith(("my_", "your_")):
            return True
    return False


# A path broken at a '/' at the end of a comment line ("(generators/" then
# " * progform.h);"): the word's start, and the next line's leader.
BROKEN_TAIL = re.compile(r"(?<![\w./$}~:@-])(?:%s)/(?:[\w.+-]+/)*$" %
                         "|".join(re.escape(t) for t in TOP_FOLDERS))
LEADER = re.compile(r"^\s*(?:\*|#|//|--)?\s*")


def candidates(text):
    """(line number, path) for every path word of text that names a file."""
    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        tail = BROKEN_TAIL.search(line)
        if tail and n < len(lines):
            # the broken word, completed from the next line
            rest = LEADER.sub("", lines[n], count=1)
            line = line[:tail.start()] + " " + tail.group(0) + rest
        for m in PATH_RE.finditer(line):
            path = m.group(1)
            nxt = line[m.end():m.end() + 1]
            if nxt in PATTERN_NEXT or (nxt and (nxt.isalnum() or nxt == "_")):
                continue
            parts = path.split("/")
            if "out" in parts or "fixtures" in parts or ".." in parts:
                continue
            if is_placeholder(path):
                continue
            yield n, path


def self_check():
    """The rules above on known lines, so a change to them that lets a
    stale path through, or flags a pattern, fails here first."""
    text = "\n".join([
        "see docs/limits.md. and `core/vat.h`, (src/build.c:120)",    # 1: three paths
        "cp templates/skeleton.c templates/my_template.c",            # 2: one, one placeholder
        "fuzz/fuzz_<name>.c tests/test_NAME.c docs/schemas/*.json",   # 3: patterns
        "/srv/x/src/a.c ../y/docs/b.md $BUILD/src/c.c build/lib/d.c",# 4: longer paths
        "out/experience/train.jsonl tests/fixtures/x.csv",           # 5: built files
        "/* the program form (templates/",                           # 6: broken
        " * progform.h); NULL */",
    ])
    got = [(n, p) for n, p in candidates(text)]
    want = [(1, "docs/limits.md"), (1, "core/vat.h"), (1, "src/build.c"),
            (2, "templates/skeleton.c"), (6, "templates/progform.h")]
    if got != want:
        print(f"doc_paths: self-check failed: found {got}, expected {want}", file=sys.stderr)
        return False
    return True


def main():
    if not self_check():
        return 1
    if len(sys.argv) > 2:
        print("usage: doc_paths.py [REPO_ROOT]", file=sys.stderr)
        return 2
    root = sys.argv[1] if len(sys.argv) == 2 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"doc_paths: '{root}' is not the repository root (no docs/)", file=sys.stderr)
        return 2
    files = repo_files(root)
    have = set(files)
    missing, seen = [], 0
    for rel in sorted(files):
        if rel.startswith(SKIP_PREFIXES):
            continue
        try:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data:
            continue  # a binary file
        text = data.decode("utf-8", "replace")
        for n, path in candidates(text):
            seen += 1
            clean = os.path.normpath(path)
            if clean not in have and not os.path.isfile(os.path.join(root, clean)):
                missing.append(f"{rel}:{n}: '{path}' names no file of the repository")
    for m in missing:
        print(m)
    print(f"doc_paths: {seen} paths in {len(files)} files, {len(missing)} unresolved")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
