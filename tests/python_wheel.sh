#!/usr/bin/env bash
# python_wheel.sh — the Python package installs as a real package, offline,
# with Debian's python3-setuptools, python3-wheel and python3-venv:
#   - `pip wheel` builds vat-<version>-py3-none-linux_<arch>.whl (a platform
#     wheel, not py3-none-any) carrying vat/libvat.so, whose version is
#     CMakeLists.txt's project(VERSION);
#   - `pip install --no-build-isolation ./python` into a venv made with
#     --system-site-packages, then `import vat` works from anywhere with no
#     VAT_LIBRARY, PYTHONPATH or LD_LIBRARY_PATH, loads the bundled library,
#     and scores a gold answer of a built corpus 1.0;
#   - the bundled library links only to the runtime libraries README.md
#     names (and libc, libm).
# usage: python_wheel.sh SOURCE_DIR VAT_BINARY
set -euo pipefail
src=$1 vat=$2
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "python_wheel: FAIL $*"; exit 1; }
# the sanitizer build's environment must not reach the interpreter
unset VAT_LIBRARY PYTHONPATH LD_PRELOAD LD_LIBRARY_PATH ASAN_OPTIONS

version=$(sed -n 's/^project(vat VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
"$py" -m venv --system-site-packages "$tmp/venv" || fail "python3 -m venv (install python3-venv)"
pip="$tmp/venv/bin/pip --disable-pip-version-check --no-input"
$pip wheel --no-build-isolation --no-index --no-deps -w "$tmp/dist" "$src/python" \
  >"$tmp/wheel.log" 2>&1 || fail "pip wheel: $(tail -n 20 "$tmp/wheel.log")"
whl=$(ls "$tmp/dist")
case "$whl" in
  "vat-$version-py3-none-linux_"*.whl) ;;
  *) fail "the wheel is '$whl', not vat-$version-py3-none-linux_<arch>.whl" ;;
esac
"$py" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print("\n".join(z.namelist()))
print(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))).decode())' \
  "$tmp/dist/$whl" >"$tmp/wheel.txt"
grep -qx 'vat/libvat.so' "$tmp/wheel.txt" || fail "$whl carries no vat/libvat.so"
grep -qx 'Root-Is-Purelib: false' "$tmp/wheel.txt" || fail "$whl says it is pure Python"

$pip install --no-build-isolation --no-index "$src/python" >"$tmp/install.log" 2>&1 ||
  fail "pip install --no-build-isolation ./python: $(tail -n 20 "$tmp/install.log")"

printf '[templates.sql_paid_revenue]\ncount = 2\n[templates.grouped_sum]\ncount = 2\n' >"$tmp/seeds.toml"
"$vat" build --config "$tmp/seeds.toml" --root "$tmp/corpus" --only sql_paid_revenue,grouped_sum \
  --quiet >/dev/null
cd "$tmp" # nowhere near the source tree
out=$("$tmp/venv/bin/python" - "$tmp/corpus" "$version" <<'PY'
import importlib.metadata, json, os, sys
import vat, vat._lib
root, version = sys.argv[1], sys.argv[2]
lib = vat._lib.load()
site = os.path.dirname(vat.__file__)
assert os.path.dirname(lib._name) == site, f"loaded {lib._name}, not the bundled library in {site}"
assert vat.version() == version == importlib.metadata.version("vat"), (
    vat.version(), version, importlib.metadata.version("vat"))
golds = {}
for split in ("train", "test"):
    for line in open(os.path.join(root, "out", "rollouts", split + ".jsonl")):
        r = json.loads(line)
        if r["role"] == "gold":
            golds[r["task_id"]] = r["answer"]
with vat.Corpus(root) as c:
    scores = [c.score(t, a, extract="raw").score for t, a in sorted(golds.items())]
assert scores == [1.0] * len(golds), scores
print(f"{lib._name} {len(golds)}")
PY
) || fail "import vat from the installed package: $out"
so=${out% *}
# the runtime libraries the bundled library links to (README.md names them)
deps=$(ldd "$so" | awk '/=>/ {print $1}' | sed 's/\.so.*//' | sort -u | paste -sd' ')
for d in $deps; do
  case "$d" in
    libc|libm|libjansson|libpcre2-8|libcrypto|libsqlite3) ;;
    libzip|libexpat|libxlsxwriter|libminizip|libz|libbz2) ;;
    *) fail "the bundled library links to $d, which README.md does not name" ;;
  esac
done
echo "python_wheel: $whl ($(stat -c %s "$tmp/dist/$whl") bytes) built offline, installed with" \
  "--no-build-isolation; import vat loads $(basename "$so") from site-packages and scores" \
  "${out##* } golds 1.0; links to: $deps"
