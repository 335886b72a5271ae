#!/bin/bash
# interleave.sh - is one build faster than another? Timing runs that take
# turns, each after the machine sat idle a while.
#
#   contrib/compare/interleave.sh [-n PAIRS] [-s IDLE_S] LOGDIR PATH A/xprofs B/xprofs...
#
# Runs `xprofs cat LOGDIR PATH` with each build in turn, PAIRS times (default
# 5), sleeping IDLE_S seconds (default 5) before every run, and prints one
# line per run (build, wall seconds, peak RSS MB) and then each build's min /
# median / max wall time. Runs are timed by xprofs-timeit (BUILD, default
# build/), as `make bench` times them; outputs.sh checks the bytes. On this
# kind of virtual machine memory the guest freed a few seconds ago is fresh
# to the host again (2.5-3 s a GB to touch; see README, Performance), so a
# run right after another one pays much less for its pages than one a user
# starts: back-to-back runs compare the builds on borrowed memory, and the
# order of the runs decides who borrows. The idle wait puts every run on
# fresh pages.
set -eu
BUILD=${BUILD:-build}
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
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for ((i = 0; i < pairs; i++)); do
    for bin in "$@"; do
        sleep "$idle"
        read -r wall rss < <("$BUILD/xprofs-timeit" "$bin" cat "$logdir" "$path")
        printf '%s\twall %s s\tpeak %s MB\n' "$bin" "$wall" "$rss"
        printf '%s %s\n' "$bin" "$wall" >> "$times"
    done
done
for bin in "$@"; do
    # whole first field: one build's path may end another's
    awk -v b="$bin" '$1 == b {print $2}' "$times" | sort -n |
        awk -v b="$bin" '{t[NR] = $1} END {printf "%s\tmin %s\tmedian %s\tmax %s\n", b, t[1], t[int((NR + 1) / 2)], t[NR]}'
done
