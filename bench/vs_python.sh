#!/bin/sh
# bench/vs_python.sh — vat's build beside a plain-Python pipeline of the
# same work, by CPU seconds, one job.
#
#   bench/vs_python.sh [--vat PATH] [--pypeer PATH] [--per-template M] [--rounds K] [N]
#
# Runs `/usr/bin/python3 PYPEER ROOT N` (default bench/pypeer.py: the
# work of the two templates below scripted with Python's standard library)
# and `vat build`
# with a generated seeds file holding only grouped_sum and sql_paid_revenue
# at N each (default 500) set to the peer's work (grouped_sum value answers
# over CSV, sql_paid_revenue with two variant databases), once with
# strength_target = 0 and once with the default mutation admission, the
# three taking K turns (default 3, the order turning each round; the
# means are compared); each is timed by the CPU seconds (user + system)
# of the child (getrusage).  Prints both ratios against the
# targets (>= 10x with strength_target = 0, >= 4x with the default), the
# same two builds at the templates' own defaults (more work than the peer
# does, for reference), then every template's tasks per CPU second over a
# build of M tasks (default 50) of that template alone.  Exit 0 when both
# targets hold, 1 when not, 2 on a usage or run error.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
vat="$repo/build/vat"
pypeer="$here/pypeer.py"
per=50
n=500
rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
    --vat) vat=$2; shift 2 ;;
    --pypeer) pypeer=$2; shift 2 ;;
    --per-template) per=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -*) echo "usage: $0 [--vat PATH] [--pypeer PATH] [--per-template M] [--rounds K] [N]" >&2; exit 2 ;;
    *) n=$1; shift ;;
    esac
done
[ -x "$vat" ] || { echo "vs_python: no vat at '$vat' (make build first)" >&2; exit 2; }
[ -f "$pypeer" ] || { echo "vs_python: no Python peer at '$pypeer' (--pypeer PATH)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# cpu CMD... : runs CMD with stdout and stderr dropped, prints its CPU
# seconds: "total user system".
cpu() {
    # the child's user and system seconds from getrusage (Python's standard
    # library: no dependency on the time(1) package)
    /usr/bin/python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as err:
    rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime, u.ru_stime)
sys.exit(rc)' "$work/err" "$@" >"$work/time" || {
        rc=$?
        # vat exits 1 when a template fell short: still a timed build
        if [ "$rc" -ne 1 ]; then cat "$work/err" >&2; exit 2; fi
    }
    awk '{ printf "%.2f %.2f %.2f", $1 + $2, $1, $2 }' "$work/time"
}

# seeds FILE STRENGTH COUNT SAME TEMPLATE...: SAME=same gives each template
# the settings of the peer's work (grouped_sum: value answers over CSV;
# sql_paid_revenue: two variant databases), SAME=default the template's own
# defaults (grouped_sum then also writes workbooks and program-form tasks
# with three variant CSVs each, sql_paid_revenue three variants).
seeds() {
    f=$1 st=$2 c=$3 same=$4
    shift 4
    { echo "[corpus]"; echo "master_seed = 20261130"
      [ "$st" = default ] || echo "strength_target = $st"
      for t in "$@"; do
          printf '[templates.%s]\ncount = %s\n' "$t" "$c"
          if [ "$same" = same ]; then
              case "$t" in
              grouped_sum) printf 'answer_form = "value"\nfixture_format = "csv"\n' ;;
              sql_paid_revenue) printf 'variants = 2\n' ;;
              esac
          fi
      done; } >"$f"
}

only=grouped_sum,sql_paid_revenue
seeds "$work/s0.toml" 0 "$n" same grouped_sum sql_paid_revenue
seeds "$work/sd.toml" default "$n" same grouped_sum sql_paid_revenue
seeds "$work/x0.toml" 0 "$n" default grouped_sum sql_paid_revenue
seeds "$work/xd.toml" default "$n" default grouped_sum sql_paid_revenue

# add "T U S" "T U S": the sum, field by field
add() {
    echo "$1 $2" | awk '{ printf "%.2f %.2f %.2f", $1 + $4, $2 + $5, $3 + $6 }'
}

# The three builds the targets judge take turns, ROUNDS times, each into a
# fresh folder kept to the end: the machine's file system (whose system
# time swings with recent deletions and with the writeback of the build
# before) and a shared host's speed then weigh on Python and vat alike.
# The order turns with each round (Python first, then second, then
# third), so no build always runs right after the same other one.
py="0 0 0" v0="0 0 0" vd="0 0 0"
run_py() { py=$(add "$py" "$(cpu /usr/bin/python3 "$pypeer" "$work/py$r" "$n")"); }
run_v0() { v0=$(add "$v0" "$(cpu "$vat" build --config "$work/s0.toml" --root "$work/v0$r" --only "$only" --jobs 1 --quiet)"); }
run_vd() { vd=$(add "$vd" "$(cpu "$vat" build --config "$work/sd.toml" --root "$work/vd$r" --only "$only" --jobs 1 --quiet)"); }
r=0
while [ "$r" -lt "$rounds" ]; do
    r=$((r + 1))
    case $(( (r - 1) % 3 )) in
    0) run_py; run_v0; run_vd ;;
    1) run_v0; run_py; run_vd ;;
    *) run_v0; run_vd; run_py ;;
    esac
done
x0=$(cpu "$vat" build --config "$work/x0.toml" --root "$work/x0" --only "$only" --jobs 1 --quiet)
xd=$(cpu "$vat" build --config "$work/xd.toml" --root "$work/xd" --only "$only" --jobs 1 --quiet)

# The floor under any builder of this output on this file system: the
# CPU seconds of writing vat's files (same names, same sizes, nothing
# computed) into a fresh directory.
floor=$(cpu /usr/bin/python3 -c '
import os, sys
src, dst = sys.argv[1], sys.argv[2]
for d, _, names in os.walk(src):
    rel = os.path.relpath(d, src)
    os.makedirs(os.path.join(dst, rel), exist_ok=True)
    for f in names:
        size = os.path.getsize(os.path.join(d, f))
        with open(os.path.join(dst, rel, f), "wb") as out:
            out.write(b"x" * size)
' "$work/v01" "$work/floor")
nfiles=$(find "$work/v01" -type f | wc -l)
mb=$(du -sm "$work/v01" | cut -f1)

echo "vat vs Python, $n grouped_sum + $n sql_paid_revenue, one job, CPU seconds (user+sys) of one build, the mean of $rounds taken in turns, $(nproc) cores online"
echo "  (the peer's work: grouped_sum value answers over CSV, sql_paid_revenue with two variants)"
awk -v P="$py" -v V0="$v0" -v VD="$vd" -v X0="$x0" -v XD="$xd" -v FL="$floor" -v nf="$nfiles" -v mb="$mb" -v R="$rounds" '
# show LABEL "T U S" TARGET RUNS: the mean CPU of one build over RUNS
# builds, and the ratio of the mean Python run to it
function show(label, t, target, runs) {
    split(t, a, " ")
    r = a[1] > 0 ? (py / R) / (a[1] / runs) : 0
    printf "  %-30s %7.2f s (user %.2f + sys %.2f)", label, a[1] / runs, a[2] / runs, a[3] / runs
    if (target > 0)
        printf "  ratio %5.2fx  (target >= %dx: %s)", r, target, (r >= target ? "met" : "NOT met")
    else if (label != "python pipeline")
        printf "  ratio %5.2fx", r
    printf "\n"
    return r
}
BEGIN {
    split(P, p, " "); py = p[1]
    show("python pipeline", P, 0, R)
    r0 = show("vat, strength_target = 0", V0, 10, R)
    rd = show("vat, default admission", VD, 4, R)
    split(FL, f, " ")
    printf "  floor: writing the %d files (%d MB) of one vat build afresh, nothing computed: %.2f s,\n", nf, mb, f[1]
    printf "         so vat, which must write them, cannot exceed %.2fx in this run\n", (f[1] > 0 ? py / (R * f[1]) : 0)
    printf "  at the templates defaults (more work than the peer: workbooks, program forms, a third variant; one build each):\n"
    show("vat, strength_target = 0", X0, 0, 1)
    show("vat, default admission", XD, 0, 1)
    exit !(r0 >= 10 && rd >= 4)
}' && ok=0 || ok=1

echo "per template, $per tasks each, default settings, one job"
printf '  %-22s %8s %10s\n' template cpu_s tasks/cpu_s
"$vat" list | awk 'NR > 1 { print $1 }' | while read -r t; do
    seeds "$work/t.toml" default "$per" default "$t"
    s=$(cpu "$vat" build --config "$work/t.toml" --root "$work/t-$t" --only "$t" --jobs 1 --quiet | cut -d' ' -f1)
    awk -v t="$t" -v s="$s" -v n="$per" 'BEGIN { printf "  %-22s %8.2f %10.1f\n", t, s, (s > 0 ? n / s : 0) }'
    # kept to the end, as the builds above: a deletion here would tax the
    # next template's file creations on a file system that checks
    # recently deleted inodes
done
exit $ok
