#!/bin/bash
# regex_600.sh — the regex templates fill 600 tasks each at the default
# settings (they once stopped at 432, 192 and 256 with "gold program
# repeats"), with distinct gold programs by construction; and a count past
# a template's question space fails the build naming two tasks, as soon as
# the first repeat is drawn (exit 1).
#
# usage: regex_600.sh --vat PATH
set -u
VAT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --vat) VAT=$2; shift 2 ;;
    *) echo "regex_600.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$VAT" ] || { echo "regex_600.sh: --vat PATH required" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vat-rx600.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
RX=regex_iso_dates,regex_amounts,regex_order_ids

config() { # count_dates count_amounts count_ids
  printf '[corpus]\nmaster_seed = 20261130\n'
  printf '[templates.regex_iso_dates]\ncount = %s\n' "$1"
  printf '[templates.regex_amounts]\ncount = %s\n' "$2"
  printf '[templates.regex_order_ids]\ncount = %s\n' "$3"
}
config 600 600 600 >"$WORK/600.toml"
"$VAT" build --config "$WORK/600.toml" --root "$WORK/c600" --only $RX --jobs 2 >"$WORK/sum" 2>"$WORK/err" \
  || fail "build of 600 per regex template exited $?: $(cat "$WORK/err")"
for t in regex_iso_dates regex_amounts regex_order_ids; do
  grep -Eq "^$t +600 +600 +[0-9]+ +0\$" "$WORK/sum" || fail "$t did not admit 600: $(grep "^$t" "$WORK/sum")"
done
# every gold program distinct within its template (the rollouts' gold rows)
n=$(cat "$WORK"/c600/out/rollouts/*.jsonl | /usr/bin/python3 -c '
import json, sys
golds = set()
n = 0
for line in sys.stdin:
    r = json.loads(line)
    if r["role"] == "gold":
        n += 1
        golds.add((r["task_id"].rsplit("-", 1)[0], " ".join(r["answer"].split())))
print(n - len(golds), n)')
[ "$n" = "0 1800" ] || fail "repeated gold programs (repeats, golds): $n"

# regex_amounts has 15,552 questions: task 15552 asks question 0's again.
# Shard 1 of 15552 builds tasks 0 and 15552 alone, so the repeat shows
# without building the 15,551 tasks in between.
config 0 15553 0 >"$WORK/over.toml"
"$VAT" build --config "$WORK/over.toml" --root "$WORK/cover" --only regex_amounts \
  --shard 1/15552 >/dev/null 2>"$WORK/err"
rc=$?
[ $rc -eq 1 ] || fail "15553 regex_amounts tasks: exit $rc, not 1"
grep -q "'regex_amounts-00000' and 'regex_amounts-15552' have the same gold program" "$WORK/err" \
  || fail "the repeat is not named: $(cat "$WORK/err")"
[ ! -e "$WORK/cover/out" ] || fail "a refused build wrote out/"
# The build stops at the first repeat instead of drawing on to the end:
# shard 1 of 64 of 79,552 tasks holds 1,243, and its 244th (task 15552)
# repeats task 0; the 999 after it are never drawn.
config 0 79552 0 >"$WORK/far.toml"
"$VAT" build --config "$WORK/far.toml" --root "$WORK/cfar" --only regex_amounts \
  --shard 1/64 --jobs 2 >/dev/null 2>"$WORK/err"
rc=$?
[ $rc -eq 1 ] || fail "79552 regex_amounts tasks: exit $rc, not 1"
grep -q "build failed at task 244 of 1243 (stopped there): tasks 'regex_amounts-00000' and 'regex_amounts-15552'" "$WORK/err" \
  || fail "the build did not stop at the repeat: $(cat "$WORK/err")"
[ ! -e "$WORK/cfar/out" ] || fail "a refused build wrote out/"
echo "regex_600: 1800 distinct golds; a count past the question space is refused at its first repeat"
