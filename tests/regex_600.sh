#!/bin/bash
# regex_600.sh — the regex templates fill 600 tasks each at the default
# settings (they once stopped at 432, 192 and 256 with "gold program
# repeats"), with distinct gold programs by construction; and a count past
# a level's class of the question space fails the build naming two tasks,
# as soon as the first repeat is drawn (exit 1).
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

# regex_amounts asks level 1 (the default) from the easiest 6,221 of its
# 15,552 questions: task 6221 asks question 0's again.  Shard 1 of 6221
# builds tasks 0 and 6221 alone, so the repeat shows without building the
# 6,220 tasks in between.
config 0 6222 0 >"$WORK/over.toml"
"$VAT" build --config "$WORK/over.toml" --root "$WORK/cover" --only regex_amounts \
  --shard 1/6221 >/dev/null 2>"$WORK/err"
rc=$?
[ $rc -eq 1 ] || fail "6222 regex_amounts tasks: exit $rc, not 1"
grep -q "'regex_amounts-00000' and 'regex_amounts-06221' have the same gold program" "$WORK/err" \
  || fail "the repeat is not named: $(cat "$WORK/err")"
[ ! -e "$WORK/cover/out" ] || fail "a refused build wrote out/"
# The build stops at the first repeat instead of drawing on to the end:
# regex_iso_dates asks level 1 from 7,440 questions; shard 1 of 16 of
# 19,888 tasks holds 1,243, and its 466th (task 7440) repeats task 0; the
# 777 after it are never drawn.
config 19888 0 0 >"$WORK/far.toml"
"$VAT" build --config "$WORK/far.toml" --root "$WORK/cfar" --only regex_iso_dates \
  --shard 1/16 --jobs 2 >/dev/null 2>"$WORK/err"
rc=$?
[ $rc -eq 1 ] || fail "19888 regex_iso_dates tasks: exit $rc, not 1"
grep -q "build failed at task 466 of 1243 (stopped there): tasks 'regex_iso_dates-00000' and 'regex_iso_dates-07440'" "$WORK/err" \
  || fail "the build did not stop at the repeat: $(cat "$WORK/err")"
[ ! -e "$WORK/cfar/out" ] || fail "a refused build wrote out/"
echo "regex_600: 1800 distinct golds; a count past the question space is refused at its first repeat"
