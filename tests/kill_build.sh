#!/bin/bash
# kill_build.sh — `vat build` killed with SIGKILL at any instant leaves
# the corpus exactly the old one or exactly the new one, as `vat verify`
# proves, and the next command leaves no stage, journal or temporary file.
#
# Two small configs A and B (different master seeds, so every file
# differs) are built alternately into one root; each build is killed
# either at a named swap step (VAT_TEST_ABORT_AT, src/store.h: between
# the journal and the first exchange, between the two exchanges, ...) or
# after a random delay spread over the whole build.  After every kill,
# `vat verify` must exit 0 and the live manifest must be A's or B's
# byte for byte; then no .vat-stage, .vat-swap* or *.tmp may remain.
#
# usage: kill_build.sh --vat PATH [--kills N] [--seed S]
set -u
VAT=""
KILLS=24
SEED=${RANDOM}
while [ $# -gt 0 ]; do
  case "$1" in
    --vat) VAT=$2; shift 2 ;;
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    *) echo "kill_build.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$VAT" ] || { echo "kill_build.sh: --vat PATH required" >&2; exit 2; }
RANDOM=$SEED

WORK=$(mktemp -d "${TMPDIR:-/tmp}/vat-kill.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ONLY=grouped_sum,regex_order_ids,sql_order_counts
for s in A B; do
  seed=11; [ $s = B ] && seed=12
  cat >"$WORK/$s.toml" <<EOF
[corpus]
master_seed = $seed
test_fraction = 0.25
[templates.grouped_sum]
count = 3
[templates.regex_order_ids]
count = 3
[templates.sql_order_counts]
count = 2
EOF
done

fail() { echo "kill_build.sh: FAIL: $*" >&2; exit 1; }

# Reference corpora: the manifests a complete A and B build write.
for s in A B; do
  "$VAT" build --config "$WORK/$s.toml" --root "$WORK/ref$s" --only $ONLY --jobs 1 >/dev/null 2>&1 ||
    fail "reference build $s"
  cp "$WORK/ref$s/out/manifest.json" "$WORK/$s.manifest"
done
cmp -s "$WORK/A.manifest" "$WORK/B.manifest" && fail "A and B must differ"

# How long one build takes, to spread random kills over all of it.
t0=$(date +%s%N)
"$VAT" build --config "$WORK/A.toml" --root "$WORK/timing" --only $ONLY --jobs 1 >/dev/null 2>&1
t1=$(date +%s%N)
BUILD_MS=$(( (t1 - t0) / 1000000 ))
[ "$BUILD_MS" -lt 20 ] && BUILD_MS=20

ROOT="$WORK/root"
STEPS=(staged journal-tmp journal swap1 swap2 swapped cleanup)
n_old=0 n_new=0 n_none=0 kills=0 i=0 steps_seen=""
current=none # what the root holds: none, A or B

check_root() { # $1: what the killed build was building
  out=$("$VAT" verify --root "$ROOT" 2>&1); rc=$?
  if [ $rc = 2 ] && [ "$current" = none ] && [ ! -e "$ROOT/out" ]; then
    n_none=$((n_none + 1)) # the very first build died: still no corpus
  else
    [ $rc = 0 ] || fail "kill $kills (${how}): vat verify exit $rc: $out"
    if cmp -s "$ROOT/out/manifest.json" "$WORK/$1.manifest"; then
      [ "$current" = "$1" ] && n_old=$((n_old + 1)) || n_new=$((n_new + 1))
      current=$1
    elif [ "$current" != none ] && cmp -s "$ROOT/out/manifest.json" "$WORK/$current.manifest"; then
      n_old=$((n_old + 1))
    else
      fail "kill $kills (${how}): the corpus is neither the old ($current) nor the new ($1) one"
    fi
  fi
  left=$(cd "$ROOT" && find . \( -name .vat-stage -o -name '.vat-swap*' -o -name '*.tmp' \) -print)
  [ -z "$left" ] || fail "kill $kills (${how}): leftovers after vat verify: $left"
}

while [ $kills -lt "$KILLS" ]; do
  i=$((i + 1))
  # Always build the other corpus, so every kill interrupts a real change.
  case $current in A) target=B ;; B) target=A ;; *) target=A; [ $((i % 2)) = 0 ] && target=B ;; esac
  if [ $((i % 3)) = 0 ] && [ $kills -lt $((KILLS - 1)) ]; then
    step=${STEPS[$(( (i / 3) % ${#STEPS[@]} ))]}
    how="at $step"
    # In a command substitution, so bash's "Killed" notice goes nowhere.
    rc=$({ VAT_TEST_ABORT_AT=$step "$VAT" build --config "$WORK/$target.toml" --root "$ROOT" \
      --only $ONLY --jobs 1 >/dev/null 2>&1; echo $?; } 2>/dev/null)
    [ $rc = 137 ] || fail "VAT_TEST_ABORT_AT=$step: build exit $rc, not killed"
  else
    delay=$(( RANDOM % (BUILD_MS + BUILD_MS / 5) ))
    how="after ${delay} ms"
    "$VAT" build --config "$WORK/$target.toml" --root "$ROOT" --only $ONLY --jobs 1 \
      >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '0.%03d' "$delay")" 2>/dev/null || sleep "$((delay / 1000))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
  fi
  kills=$((kills + 1))
  before=$current
  check_root $target
  case $how in at*) steps_seen="$steps_seen ${how#at }:$([ "$current" = "$before" ] && echo old || echo new)" ;; esac
done

# A last, uninterrupted build must still work on the recovered root.
"$VAT" build --config "$WORK/A.toml" --root "$ROOT" --only $ONLY --jobs 1 >/dev/null 2>&1 ||
  fail "the build after the kills"
cmp -s "$ROOT/out/manifest.json" "$WORK/A.manifest" || fail "the final build is not A"
"$VAT" verify --root "$ROOT" >/dev/null 2>&1 || fail "verify after the final build"

echo "kill_build.sh: $kills kills (seed $SEED, build ${BUILD_MS} ms): old corpus kept $n_old," \
     "new corpus complete $n_new, still empty $n_none; every survivor verified, no leftovers"
echo "kill_build.sh: named steps (what survived):$steps_seen"
