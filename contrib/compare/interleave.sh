#!/bin/bash
# interleave.sh - is one build faster than another? Timing runs that take
# turns, each after the machine sat idle a while.
#
#   contrib/compare/interleave.sh [-n PAIRS] [-s IDLE_S] LOGDIR PATH A/xprofs B/xprofs...
#
# Runs `xprofs cat LOGDIR PATH` with each build in turn, PAIRS times (default
# 5), sleeping IDLE_S seconds (default 5) before every run, and prints one
# line per run (build, wall, user and system seconds, peak RSS, md5 of the
# output) and then each build's min / median / max wall time. On this kind of
# virtual machine memory the guest freed a few seconds ago is fresh to the
# host again (2.5-3 s a GB to touch; see README, Performance), so a run right
# after another one pays much less for its pages than one a user starts:
# back-to-back runs compare the builds on borrowed memory, and the order of
# the runs decides who borrows. The idle wait puts every run on fresh pages.
set -eu
pairs=5
idle=5
while getopts n:s: opt; do
    case $opt in
    n) pairs=$OPTARG ;;
    s) idle=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 4 ]; then
    echo "usage: $0 [-n PAIRS] [-s IDLE_S] LOGDIR PATH A/xprofs B/xprofs..." >&2
    exit 2
fi
logdir=$1
path=$2
shift 2
out=$(mktemp)
times=$(mktemp)
trap 'rm -f "$out" "$times"' EXIT
for ((i = 0; i < pairs; i++)); do
    for bin in "$@"; do
        sleep "$idle"
        t=$({ /usr/bin/time -f "%e %U %S %M" "$bin" cat "$logdir" "$path" > "$out"; } 2>&1 | tail -1)
        sum=$(md5sum < "$out" | cut -c1-12)
        read -r wall user sys rss <<< "$t"
        printf '%s\twall %s\tuser %s\tsys %s\tpeak %d MB\tmd5 %s\n' "$bin" "$wall" "$user" "$sys" \
            $((rss / 1024)) "$sum"
        printf '%s %s\n' "$bin" "$wall" >> "$times"
    done
done
for bin in "$@"; do
    grep -F "$bin " "$times" | cut -d' ' -f2 | sort -n |
        awk -v b="$bin" '{t[NR] = $1} END {printf "%s\tmin %s\tmedian %s\tmax %s\n", b, t[1], t[int((NR + 1) / 2)], t[NR]}'
done
