#!/usr/bin/env bash
# pack_verify.sh — a packed dataset proves itself and fits a dataset hub.
#
# Builds a corpus (the repository's seeds.toml, or COUNT tasks of one
# TEMPLATE with --count/--template), packs it, and checks that:
#   - `vat verify --root PACK` passes (the pack's manifest lists its own
#     layout: tables, fixtures, README.md, .gitattributes);
#   - no folder of the pack holds more than 10,000 entries (the most a hub
#     takes in one folder); the largest is printed;
#   - every binary file of the pack (one holding a NUL byte) and every file
#     over 10 MB matches a Git LFS line of .gitattributes;
#   - a table changed in the pack, and a card removed from it, are named by
#     `vat verify`, which exits 1.
#
# usage: pack_verify.sh --vat VAT [--config seeds.toml] [--count N --template NAME]
set -euo pipefail

vat= config= count= template=
while [ $# -gt 0 ]; do
  case "$1" in
    --vat) vat=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --template) template=$2; shift 2 ;;
    *) echo "pack_verify.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$vat" ] || { echo "usage: pack_verify.sh --vat VAT [--config F] [--count N --template T]" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pack_verify: FAIL $*"; exit 1; }

if [ -n "$template" ]; then
  config=$tmp/seeds.toml
  printf '[corpus]\nmaster_seed = 20261130\n[templates.%s]\ncount = %s\n' "$template" "$count" >"$config"
  "$vat" build --config "$config" --root "$tmp/corpus" --only "$template" --quiet >/dev/null
else
  "$vat" build --config "${config:-seeds.toml}" --root "$tmp/corpus" --quiet >/dev/null
fi
"$vat" pack --root "$tmp/corpus" --to "$tmp/pack" >/dev/null
pack=$tmp/pack

"$vat" verify --root "$pack" >"$tmp/verify.out" 2>"$tmp/verify.err" ||
  fail "vat verify on the pack: $(cat "$tmp/verify.out" "$tmp/verify.err")"
grep -q 'README.md' "$pack/out/manifest.json" || fail "the pack's manifest does not list README.md"

# Entries per folder.
most=0 where=
while IFS= read -r -d '' d; do
  n=$(find "$d" -mindepth 1 -maxdepth 1 | wc -l)
  if [ "$n" -gt "$most" ]; then most=$n where=${d#"$pack"/}; fi
done < <(find "$pack" -type d -print0)
[ "$most" -le 10000 ] || fail "'$where' holds $most entries (a hub takes 10,000 per folder)"

# Binary files and large files go through Git LFS.
lfs() { # whether path (relative to the pack) matches an LFS line
  local rel=$1 pat
  while read -r pat rest; do
    case "$pat" in ''|'#'*) continue ;; esac
    [[ "$rest" == *filter=lfs* ]] || continue
    if [[ "$pat" == */* ]]; then [ "$rel" = "$pat" ] && return 0
    else case "${rel##*/}" in $pat) return 0 ;; esac
    fi
  done <"$pack/.gitattributes"
  return 1
}
# Binary as git judges it (a NUL byte early on): grep -I skips those.
find "$pack" -type f | sort >"$tmp/all"
LC_ALL=C grep -rIl '' "$pack" | sort >"$tmp/text"
comm -23 "$tmp/all" "$tmp/text" >"$tmp/binary"
binaries=$(wc -l <"$tmp/binary")
kinds=$(sed 's/.*\.//' "$tmp/binary" | sort -u | paste -sd' ')
for ext in $kinds; do # one file of each kind stands for its kind (the lines match by name)
  f=$(grep -m1 "\.$ext\$" "$tmp/binary")
  lfs "${f#"$pack"/}" || fail "binary file '${f#"$pack"/}' is not sent through Git LFS by .gitattributes"
done
while IFS= read -r -d '' f; do
  lfs "${f#"$pack"/}" || fail "'${f#"$pack"/}' is over 10 MB and not sent through Git LFS"
done < <(find "$pack" -type f -size +10000000c -print0)

# Tampering is named.
table=out/verifiers/train.jsonl
cp "$pack/$table" "$tmp/t" && mv "$tmp/t" "$pack/$table" # a copy of its own, not the build's link
echo '{}' >>"$pack/$table"
if "$vat" verify --root "$pack" >"$tmp/v2" 2>&1; then fail "a changed table verified clean"; fi
grep -q "changed file '$table'" "$tmp/v2" || fail "verify did not name the changed table: $(cat "$tmp/v2")"
rm "$pack/README.md"
"$vat" verify --root "$pack" >"$tmp/v3" 2>&1 || true
grep -q "missing file 'README.md'" "$tmp/v3" || fail "verify did not name the missing card: $(cat "$tmp/v3")"

files=$(find "$pack" -type f | wc -l)
echo "pack_verify: $(tail -n 1 "$tmp/verify.err" | sed 's/^verify: //'); $files files," \
  "largest folder '$where' with $most entries; $binaries binary files ($kinds) all through LFS"
