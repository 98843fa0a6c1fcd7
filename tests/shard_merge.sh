#!/bin/bash
# shard_merge.sh — 4 shards built through GNU parallel and joined with
# `vat merge` are byte for byte the direct build (diff -r of out/ and
# fixtures/), the merged corpus passes `vat verify`, the shards audit clean
# against each other from their prints alone (`vat audit --shards`,
# counting every task of the direct build), and merge refuses a missing
# shard, a duplicate, a shard of another config, one of another N and a
# shard edited after its build (a row edited under a stale manifest, a
# gold answer broken under a rewritten one) with one line and exit 2
# (docs/scale.md).
#
# usage: shard_merge.sh --vat PATH --config SEEDS.toml
set -u
VAT="" CONFIG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --vat) VAT=$2; shift 2 ;;
    --config) CONFIG=$2; shift 2 ;;
    *) echo "shard_merge.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$VAT" ] && [ -f "$CONFIG" ] || { echo "shard_merge.sh: --vat PATH --config FILE" >&2; exit 2; }
command -v parallel >/dev/null || { echo "shard_merge.sh: GNU parallel is not installed (make deps)"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vat-shard.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$VAT" build --config "$CONFIG" --root "$WORK/direct" --jobs 1 >/dev/null 2>&1 || fail "direct build"
# The recipe of docs/scale.md, on local cores.
parallel --halt now,fail=1 -j 2 "$VAT" build --config "$CONFIG" --root "$WORK/shard-{}" \
  --jobs 1 --shard {}/4 ">/dev/null" "2>&1" ::: 1 2 3 4 || fail "a shard build failed"
for k in 1 2 3 4; do
  [ -f "$WORK/shard-$k/out/shard.json" ] || fail "shard $k has no out/shard.json"
done
# the shard audit, from the shards' fingerprints alone
"$VAT" audit --shards "$WORK"/shard-{1,2,3,4} >"$WORK/shard-audit" 2>/dev/null \
  || fail "vat audit --shards exited $?: $(tail -c 400 "$WORK/shard-audit")"
grep -q '"summary":"shard_audit","clean":true' "$WORK/shard-audit" || fail "shard audit not clean"
"$VAT" audit --root "$WORK/direct" >"$WORK/direct-audit" 2>/dev/null || fail "direct audit"
tasks() { grep -o '"tasks":{[^}]*}' "$1"; }
[ "$(tasks "$WORK/shard-audit")" = "$(tasks "$WORK/direct-audit")" ] \
  || fail "the shard audit counts $(tasks "$WORK/shard-audit"), the direct audit $(tasks "$WORK/direct-audit")"
# shards given in any order
"$VAT" merge --config "$CONFIG" --to "$WORK/merged" "$WORK"/shard-{3,1,4,2} >/dev/null \
  || fail "merge exited $?"
for tree in out fixtures; do
  diff -r "$WORK/direct/$tree" "$WORK/merged/$tree" >/dev/null || fail "merged $tree differs from the direct build"
done
[ -s "$WORK/merged/out/README.md" ] || fail "no card"
"$VAT" verify --root "$WORK/merged" >/dev/null 2>&1 || fail "vat verify on the merged corpus"

# refusals: exit 2, one line on stderr, nothing written
refuse() { # what, expected stderr substring, merge args...
  local what=$1 want=$2; shift 2
  "$VAT" merge --config "$CONFIG" --to "$WORK/refused" "$@" >/dev/null 2>"$WORK/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "$what: merge exited $rc, not 2"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$WORK/err")"
  grep -q "$want" "$WORK/err" || fail "$what: stderr '$(cat "$WORK/err")' lacks '$want'"
  [ ! -e "$WORK/refused/out" ] || fail "$what: a refused merge wrote out/"
}
refuse "into a shard" "is one of the shards" --to "$WORK/shard-1" "$WORK"/shard-{1,2,3,4}
refuse "missing shard" "shard 2 of 4 is missing" "$WORK"/shard-{1,3,4}
refuse "duplicate shard" "given twice" "$WORK"/shard-{1,2,3,3}
sed 's/^master_seed = .*/master_seed = 7/' "$CONFIG" >"$WORK/other.toml"
"$VAT" build --config "$WORK/other.toml" --root "$WORK/other-1" --only grouped_sum --shard 1/4 \
  >/dev/null 2>&1 || fail "other-seed shard build"
refuse "another config" "another config" "$WORK/other-1" "$WORK"/shard-{2,3,4}
"$VAT" build --config "$CONFIG" --root "$WORK/half-1" --only grouped_sum --shard 1/2 \
  >/dev/null 2>&1 || fail "1/2 shard build"
refuse "another N" "one of 2 shards" "$WORK"/shard-{1,2,3} "$WORK/half-1"
refuse "not a shard" "holds no shard" "$WORK/direct" "$WORK"/shard-{2,3,4}
# A shard edited after its build is proven as `vat verify` proves a
# corpus: an experience row edited with the manifest left stale ...
cp -r "$WORK/shard-2" "$WORK/edited-2"
python3 - "$WORK/edited-2" <<'PY' || fail "editing a shard"
import json, sys
p = sys.argv[1] + "/out/experience/train.jsonl"
lines = open(p).read().splitlines(True)
row = json.loads(lines[0])
row["prompt"] = row["prompt"] + " (edited)"
lines[0] = json.dumps(row) + "\n"
open(p, "w").write("".join(lines))
PY
refuse "edited shard" "changed file 'out/experience/train.jsonl'" "$WORK"/shard-{1,3,4} "$WORK/edited-2"
# ... and a gold answer made wrong with the manifest hashed again
cp -r "$WORK/shard-3" "$WORK/forged-3"
python3 - "$WORK/forged-3" <<'PY' || fail "forging a shard"
import hashlib, json, sys
root = sys.argv[1]
rel = "out/rollouts/train.jsonl"
lines = open(f"{root}/{rel}").read().splitlines(True)
for i, l in enumerate(lines):
    row = json.loads(l)
    if row["role"] == "gold":
        row["answer"] = "SELECT 1" if row["answer"].lstrip().upper().startswith(("SELECT", "WITH")) else "0"
        lines[i] = json.dumps(row) + "\n"
        break
open(f"{root}/{rel}", "w").write("".join(lines))
m = json.load(open(f"{root}/out/manifest.json"))
m["files"][rel] = hashlib.sha256(open(f"{root}/{rel}", "rb").read()).hexdigest()
open(f"{root}/out/manifest.json", "w").write(json.dumps(m, indent=1, sort_keys=True) + "\n")
PY
refuse "forged shard" "the gold answer does not score 1" "$WORK"/shard-{1,2,4} "$WORK/forged-3"
"$VAT" build --config "$CONFIG" --root "$WORK/x" --shard 5/4 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--shard 5/4 was accepted"
echo "shard_merge: 4 shards audit clean and merged equal the direct build; 8 refusals"
